"""The all-pairs input- and global-level Pearson permutation kernel (:mod:`xcorrstat._kernels.swap_allpairs_input`).

Every pair's draws are compared with the oracle on the explicitly swapped z-scored
matrices (``tests/test_permutation.oracle_distribution``: plain loops and scipy), with
the same masks, to 1e-12: complete data, metrics missing in the same cells, in cells of
their own, a target with gaps, swapped metrics constant in some draws and inputs with
too few systems; blocks of inputs and pairs change no value, bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest
from oracles import assert_values_same
from test_permutation import PERMUTES, oracle_distribution, zscore

from xcorrstat._kernels import swap_allpairs_input as swap_allpairs_input
from xcorrstat._kernels.swap_allpairs_input import prepare_allpairs_input
from xcorrstat._resampling.draws import permutation_masks


def _metrics(seed, m, s, i, missing):
    rng = np.random.default_rng(seed)
    latent = rng.integers(0, 5, (s, i)).astype(float)
    x = np.stack([latent + rng.integers(-2, 3, (s, i)) for _ in range(m)])
    z = latent + rng.integers(-1, 2, (s, i))
    if missing == "shared":
        x[:, rng.random((s, i)) < 0.15] = np.nan
    elif missing == "own":
        x[rng.random(x.shape) < 0.15] = np.nan
    if missing != "complete":
        z[rng.random((s, i)) < 0.1] = np.nan
    x[1, :, 0] = 2.0  # a metric constant on one input
    return x, z


def _pairs(m):
    pi, pk = np.triu_indices(m, 1)
    return np.concatenate([pi, pk]), np.concatenate([pk, pi])


@pytest.mark.parametrize("permute", list(PERMUTES))
@pytest.mark.parametrize("missing", ["complete", "shared", "own"])
@pytest.mark.parametrize("level", ["input", "global"])
def test_every_pair_equals_the_explicit_swap(level, missing, permute, path):
    x, z = _metrics(3, 4, 6, 9, missing)
    masks = permutation_masks(7, range(30), 6, 9, PERMUTES[permute][1])
    pairs = _pairs(4)
    zx = np.stack([zscore(a) for a in x])
    out = prepare_allpairs_input(zx, z, pairs, level=level, min_pairs=3)(masks)
    assert out.shape == (pairs[0].size, 30)
    for p, (i, k) in enumerate(zip(*pairs)):
        expected = oracle_distribution(x[i], x[k], z, masks, level, "pearson", "b", min_pairs=3)
        assert_values_same(out[p], expected, f"{level} {missing} pair {i}-{k}")


def test_constant_swaps_and_min_pairs(path):
    # X in {0, 1} and Y = 1 - X: a draw taking the same value over an input makes X' constant there
    rng = np.random.default_rng(8)
    x = rng.permutation(np.repeat([0.0, 1.0], 20)).reshape(4, 10)
    xs = np.stack([x, 1.0 - x])
    xs[0, 0, 3] = np.nan
    z = rng.integers(0, 3, (4, 10)).astype(float)
    z[:, 0] = 1.0  # a constant target on one input
    masks = permutation_masks(8, range(100), 4, 10, "cells")
    zx = np.stack([zscore(a) for a in xs])
    for min_pairs in (2, 4):
        out = prepare_allpairs_input(zx, z, ([0], [1]), level="input", min_pairs=min_pairs)(masks)
        assert_values_same(out[0], oracle_distribution(xs[0], xs[1], z, masks, "input", "pearson", "b",
                                                       min_pairs=min_pairs))


def test_blocks_change_nothing(monkeypatch, path):
    x, z = _metrics(5, 5, 7, 11, "own")
    masks = permutation_masks(2, range(16), 7, 11, "cells")
    zx = np.stack([zscore(a) for a in x])
    pairs = _pairs(5)
    whole = prepare_allpairs_input(zx, z, pairs, level="input", min_pairs=3)(masks)
    monkeypatch.setattr(swap_allpairs_input, "PAIR_BLOCK_ELEMS", 1)
    small = prepare_allpairs_input(zx, z, pairs, level="input", min_pairs=3)(masks)
    np.testing.assert_array_equal(small, whole)
    # and a batch is the concatenation of its parts
    run = prepare_allpairs_input(zx, z, pairs, level="input", min_pairs=3)
    np.testing.assert_array_equal(np.concatenate([run(masks[:5]), run(masks[5:])], axis=1), whole)


def test_compiled_and_numpy_paths_give_the_same_floats():
    pytest.importorskip("numba")
    from xcorrstat import set_options

    x, z = _metrics(6, 5, 7, 11, "own")
    x[2, :, 4] = x[3, :, 4]  # two metrics equal on an input: swaps there leave r unchanged
    masks = permutation_masks(4, range(24), 7, 11, "cells")
    zx = np.stack([zscore(a) for a in x])
    pairs = _pairs(5)
    for level in ("input", "global"):
        compiled = prepare_allpairs_input(zx, z, pairs, level=level, min_pairs=3)(masks)
        with set_options(compiled=False):
            plain = prepare_allpairs_input(zx, z, pairs, level=level, min_pairs=3)(masks)
        np.testing.assert_array_equal(compiled, plain)


def test_compiled_draw_rows_and_flag_records_change_nothing(monkeypatch):
    """More draws than a row of the compiled loop, and flagged values beyond the room of one pass."""
    pytest.importorskip("numba")
    from xcorrstat import set_options

    x, z = _metrics(7, 4, 6, 9, "own")
    masks = permutation_masks(8, range(150), 6, 9, "cells")
    zx = np.stack([zscore(a) for a in x])
    pairs = _pairs(4)
    with set_options(compiled=False):
        plain = prepare_allpairs_input(zx, z, pairs, level="input", min_pairs=3)(masks)
    compiled = prepare_allpairs_input(zx, z, pairs, level="input", min_pairs=3)(masks)
    np.testing.assert_array_equal(compiled, plain)
    monkeypatch.setattr(swap_allpairs_input, "FLAG_ROOM", 1)
    np.testing.assert_array_equal(prepare_allpairs_input(zx, z, pairs, level="input", min_pairs=3)(masks), plain)
    for p, (i, k) in enumerate(zip(*pairs)):
        assert_values_same(plain[p, :3], oracle_distribution(x[i], x[k], z, masks[:3], "input", "pearson", "b",
                                                             min_pairs=3))
