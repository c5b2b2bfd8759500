"""The fast coins of the permutation masks are NumPy's own ``integers(0, 2)`` coins, bit for bit.

``xcorrstat._resampling.draws.coin`` reads the coins off the generator's raw 64-bit outputs; the
oracle is ``Generator.integers(0, 2, dtype=int8)`` on an identical generator, and the draws that
follow must be identical too (the generator is left in the state ``integers`` leaves).
"""

from __future__ import annotations

import numpy as np
import pytest

from xcorrstat._resampling.draws import DRAW_BLOCK, BlockMemo, coin, keyed_generator, permutation_masks


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 7, 8, 9, 13, 64, 1001, 14 * 1875])
@pytest.mark.parametrize("key", [0, 5])
def test_coins_and_the_following_draws_equal_integers(n, key):
    fast, slow = keyed_generator(11, key), keyed_generator(11, key)
    assert np.array_equal(coin(fast, (n,)), slow.integers(0, 2, size=n, dtype=np.int8).astype(bool))
    assert np.array_equal(coin(fast, (3, 5)), slow.integers(0, 2, size=(3, 5), dtype=np.int8).astype(bool))
    assert np.array_equal(fast.integers(0, 2, size=37, dtype=np.int8), slow.integers(0, 2, size=37, dtype=np.int8))
    assert np.array_equal(fast.random(4), slow.random(4))


def test_a_half_used_output_falls_back_to_integers():
    fast, slow = keyed_generator(2, 1), keyed_generator(2, 1)
    fast.integers(0, 2**32, dtype=np.uint32)  # leaves the high half of an output for the next 32-bit draw
    slow.integers(0, 2**32, dtype=np.uint32)
    assert np.array_equal(coin(fast, (9,)), slow.integers(0, 2, size=9, dtype=np.int8).astype(bool))
    assert fast.random() == slow.random()


@pytest.mark.parametrize("scheme", ["system", "input", "cells", "system-xor-input"])
def test_masks_equal_those_of_integers_coins(scheme):
    s, i = 4, 7
    draws = np.array([0, 3, DRAW_BLOCK + 2])
    masks = permutation_masks(5, draws, s, i, scheme)
    for row, d in zip(masks, draws):
        g = keyed_generator(5, d // DRAW_BLOCK)
        k = d % DRAW_BLOCK

        def flips(shape, g=g):
            return g.integers(0, 2, size=(DRAW_BLOCK, *shape), dtype=np.int8).astype(bool)[k]

        if scheme == "cells":
            expected = flips((s, i))
        elif scheme == "system":
            expected = np.repeat(flips((s,))[:, None], i, axis=1)
        elif scheme == "input":
            expected = np.repeat(flips((i,))[None, :], s, axis=0)
        else:
            rows = flips((s,))
            expected = rows[:, None] ^ flips((i,))[None, :]
        assert np.array_equal(row, expected)


@pytest.mark.parametrize("scheme", ["system", "input", "cells", "system-xor-input"])
def test_a_memo_and_the_batches_never_change_a_mask(scheme):
    """Batches that cut blocks of draw ids, in order and not, with a memo of the last block: the masks of
    one call over every draw id (each block drawn once, the shared block's rows read-only)."""
    s, i, n = 3, 5, 3 * DRAW_BLOCK + 10
    whole = permutation_masks(9, np.arange(n), s, i, scheme)
    memo = BlockMemo()
    cuts = [0, 100, DRAW_BLOCK, DRAW_BLOCK + 1, 700, n]
    parts = [permutation_masks(9, np.arange(a, b), s, i, scheme, memo=memo) for a, b in zip(cuts[:-1], cuts[1:])]
    assert np.array_equal(np.concatenate(parts), whole)
    ids = np.array([n - 1, 3, DRAW_BLOCK + 7, 2])  # out of order, two blocks
    assert np.array_equal(permutation_masks(9, ids, s, i, scheme, memo=memo), whole[ids])
    if scheme == "cells":  # one block's consecutive ids: its rows as they are, which no caller may change
        block = permutation_masks(9, np.arange(5, 9), s, i, scheme, memo=memo)
        assert not block.flags.writeable
