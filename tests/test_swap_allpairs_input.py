"""The all-pairs input- and global-level Pearson permutation kernel (:mod:`xcorrstat._kernels.linear.allpairs`).

Oracles: (1) every pair's draws equal those on the explicitly swapped z-scored matrices
(``tests/test_permutation.oracle_distribution``: plain loops and scipy), with the same
masks, to 1e-12: complete data, metrics missing in the same cells, in cells of their own,
a target with gaps, swapped metrics constant in some draws and inputs with too few systems;
(2) the kernel's compiled loop equals, bit for bit, :func:`numpy_allpairs`: the same sums
formed by NumPy array operations in the same order, blocks of inputs and pairs at a time.
Blocks of inputs and pairs change no value, bit for bit.
"""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
from oracles import assert_values_same
from test_permutation import PERMUTES, oracle_distribution, zscore

from xcorrstat._kernels.linear import allpairs as swap_allpairs_input
from xcorrstat._kernels.linear.allpairs import prepare_allpairs_input
from xcorrstat._kernels.linear.gaps import from_sums
from xcorrstat._resampling.draws import permutation_masks


class _NumpyOperands(swap_allpairs_input._InputOperands):
    """The kernel's operands, with the swapped sums and the per-pair r formed by NumPy array operations."""

    block_elems = 1 << 19  # float64 elements of one (inputs, draws, pairs) temporary

    def _sums(self, m):
        """Totals and counts of the defined r (2, Q, B), blocks of inputs and pairs at a time."""
        b, _, n_inp = m.shape
        q = self.lo.size
        step = max(1, min(q, self.block_elems // max(b, 1)))
        ib = max(1, min(n_inp, self.block_elems // max(b * max(step, 6 * self.x.shape[0]), 1)))
        totals = np.zeros((2, b, q))
        counts = np.zeros((2, b, q), dtype=np.int64)
        flagged = []
        for i0 in range(0, n_inp, ib):
            blk = slice(i0, min(i0 + ib, n_inp))
            mb = np.ascontiguousarray(np.transpose(m[:, :, blk], (2, 0, 1)))  # (ib, B, S)
            swapped = _swapped_sums(mb, self._terms(blk))  # (6, ib, B, M)
            for q0 in range(0, q, step):
                qs = slice(q0, q0 + step)
                r = self._block(swapped, blk, qs)  # (2, ib, B, Qb)
                for k in (0, 1):
                    i, d, p = np.nonzero(np.isinf(r[k]))
                    flagged.append(self._exact(m, np.full(i.size, k), i + i0, d, p + q0))
                    _add(np.where(np.isinf(r[k]), np.nan, r[k]), totals[k, :, qs], counts[k, :, qs])
        totals, counts = totals.transpose(0, 2, 1), counts.transpose(0, 2, 1)
        self._add_flagged(flagged, totals, counts)
        return totals, counts

    def _block(self, swapped, blk, qs):
        """Per-input r of X' and Y' of the unordered pairs ``qs`` on the inputs ``blk``: (2, ib, B, Qb)."""
        lo, hi = self.lo[qs], self.hi[qs]
        x_sums, y_sums = [], []
        for f in range(6):
            change = np.take(swapped[f], hi, axis=-1)
            change -= np.take(swapped[f], lo, axis=-1)  # (ib, B, Qb): F_hi - F_lo
            x_sums.append(self.totals[blk, f][:, None, lo] + change)
            y_sums.append(np.subtract(self.totals[blk, f][:, None, hi], change, out=change))
        return np.stack([from_sums(*x_sums, need=self.need), from_sums(*y_sums, need=self.need)])


def _add(r, totals, counts):
    """Add the defined values of r (ib, B, Qb) to ``totals`` (B, Qb) and count them, input after input
    (the order of a sum along the inputs); ``totals`` and ``counts`` are views, added to in place."""
    defined = ~np.isnan(r)
    counts += defined.sum(axis=0)
    for j in range(r.shape[0]):
        totals += np.where(defined[j], r[j], 0.0)


def _swapped_sums(mb, terms):
    """``F``: every metric's six sums over the swapped cells, (6, ib, B, M), added system after system."""
    ib, b, n_sys = mb.shape
    out = np.zeros((ib, b) + terms.shape[2:])
    for s in range(n_sys):  # the order of the compiled loop: the same floats
        out += mb[:, :, s, None, None] * terms[:, None, s]
    return np.ascontiguousarray(np.moveaxis(out, 2, 0))


def numpy_allpairs(zx, z, pairs, *, level, min_pairs):
    """:func:`prepare_allpairs_input` with the sums of :class:`_NumpyOperands` in place of the compiled loop."""
    with mock.patch.object(swap_allpairs_input, "_InputOperands", _NumpyOperands):
        return prepare_allpairs_input(zx, z, pairs, level=level, min_pairs=min_pairs)


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
def test_every_pair_equals_the_explicit_swap(level, missing, permute):
    x, z = _metrics(3, 4, 6, 9, missing)
    masks = permutation_masks(7, range(30), 6, 9, PERMUTES[permute][1])
    pairs = _pairs(4)
    zx = np.stack([zscore(a) for a in x])
    out = prepare_allpairs_input(zx, z, pairs, level=level, min_pairs=3)(masks)
    assert out.shape == (pairs[0].size, 30)
    np.testing.assert_array_equal(out, numpy_allpairs(zx, z, pairs, level=level, min_pairs=3)(masks))
    for p, (i, k) in enumerate(zip(*pairs)):
        expected = oracle_distribution(x[i], x[k], z, masks, level, "pearson", "b", min_pairs=3)
        assert_values_same(out[p], expected, f"{level} {missing} pair {i}-{k}")


def test_constant_swaps_and_min_pairs():
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
        np.testing.assert_array_equal(out, numpy_allpairs(zx, z, ([0], [1]), level="input",
                                                          min_pairs=min_pairs)(masks))
        assert_values_same(out[0], oracle_distribution(xs[0], xs[1], z, masks, "input", "pearson", "b",
                                                       min_pairs=min_pairs))


def test_blocks_change_nothing(monkeypatch):
    x, z = _metrics(5, 5, 7, 11, "own")
    masks = permutation_masks(2, range(16), 7, 11, "cells")
    zx = np.stack([zscore(a) for a in x])
    pairs = _pairs(5)
    whole = prepare_allpairs_input(zx, z, pairs, level="input", min_pairs=3)(masks)
    monkeypatch.setattr(swap_allpairs_input, "PAIR_BLOCK_ELEMS", 1)
    small = prepare_allpairs_input(zx, z, pairs, level="input", min_pairs=3)(masks)
    np.testing.assert_array_equal(small, whole)
    monkeypatch.setattr(_NumpyOperands, "block_elems", 1)  # the oracle's blocks of one input and pair
    np.testing.assert_array_equal(numpy_allpairs(zx, z, pairs, level="input", min_pairs=3)(masks), whole)
    # and a batch is the concatenation of its parts
    run = prepare_allpairs_input(zx, z, pairs, level="input", min_pairs=3)
    np.testing.assert_array_equal(np.concatenate([run(masks[:5]), run(masks[5:])], axis=1), whole)


def test_loop_equals_the_numpy_oracle_bit_for_bit():
    x, z = _metrics(6, 5, 7, 11, "own")
    x[2, :, 4] = x[3, :, 4]  # two metrics equal on an input: swaps there leave r unchanged
    masks = permutation_masks(4, range(24), 7, 11, "cells")
    zx = np.stack([zscore(a) for a in x])
    pairs = _pairs(5)
    for level in ("input", "global"):
        compiled = prepare_allpairs_input(zx, z, pairs, level=level, min_pairs=3)(masks)
        plain = numpy_allpairs(zx, z, pairs, level=level, min_pairs=3)(masks)
        np.testing.assert_array_equal(compiled, plain)


def test_compiled_draw_rows_and_flag_records_change_nothing(monkeypatch):
    """More draws than a row of the compiled loop, and flagged values beyond the room of one pass."""
    x, z = _metrics(7, 4, 6, 9, "own")
    masks = permutation_masks(8, range(150), 6, 9, "cells")
    zx = np.stack([zscore(a) for a in x])
    pairs = _pairs(4)
    plain = numpy_allpairs(zx, z, pairs, level="input", min_pairs=3)(masks)
    compiled = prepare_allpairs_input(zx, z, pairs, level="input", min_pairs=3)(masks)
    np.testing.assert_array_equal(compiled, plain)
    monkeypatch.setattr(swap_allpairs_input, "FLAG_ROOM", 1)
    np.testing.assert_array_equal(prepare_allpairs_input(zx, z, pairs, level="input", min_pairs=3)(masks), plain)
    for p, (i, k) in enumerate(zip(*pairs)):
        assert_values_same(plain[p, :3], oracle_distribution(x[i], x[k], z, masks[:3], "input", "pearson", "b",
                                                             min_pairs=3))
