"""Input-level Kendall means of swapped metrics missing in cells of their own (the kernels' gap mode).

Every pair's means are compared with scipy.stats.kendalltau (tau-b) and with counting every
pair of systems (all variants) on the explicitly swapped matrices, to 1e-12: metrics missing
in the same cells and in cells of their own, target ties (with systems changing validity on
both sides of a tied pair), metric ties within epsilon and a metric constant on an input. The
compiled loop that adds each draw's values equals, bit for bit, :func:`numpy_gap_add` (the
values formed by NumPy array operations and added input after input), and so do blocks of one
input and pair and batches of draws.
"""

from __future__ import annotations

import itertools
import warnings
from unittest import mock

import numpy as np
import pytest
from oracles import kendall_counts, kendall_from_counts
from test_swap_kendall import _scipy_means

from xcorrstat._kernels.rank import input_swap as swap_kendall
from xcorrstat._kernels.rank.input_gaps import gap_counts
from xcorrstat._kernels.rank.input_swap import input_kendall_swap_means
from xcorrstat._kernels.rank.input_gaps import _values
from xcorrstat._kernels.linear.forms import mask_products

VARIANTS = ["a", "b", "23", "acc23"]


def numpy_gap_add(v, c, totals, counts, variant, need):
    """``gap_add`` by NumPy array operations: each input's values, then the defined ones added input after
    input in input order, and counted."""
    out = np.empty(v[0].shape)
    for k in (0, 1):
        stat, defined = _values(k, v[k], c, variant, need, out)
        for j in range(stat.shape[0]):
            np.add(totals[k], stat[j], out=totals[k], where=defined[j])
        counts[k] += defined[0] if defined.shape[0] == 1 else defined.sum(axis=0)


def numpy_means(*args, **kw):
    """:func:`input_kendall_swap_means` with :func:`numpy_gap_add` in place of the compiled loop."""
    run = input_kendall_swap_means(*args, **kw)

    def numpy_run(m):
        with mock.patch.object(swap_kendall, "gap_add", numpy_gap_add):
            return run(m)

    return numpy_run


def _pairs(seed, s, i, n_masks):
    """Five pairs of metrics: missing in the same cells; in cells of their own, continuous (no metric tie),
    at integer levels (ties), with a metric constant on input 0, and with a tie-free target."""
    rng = np.random.default_rng(seed)
    x = np.stack([rng.integers(0, 4, (s, i)) / 2.0, rng.normal(size=(s, i)), rng.integers(0, 3, (s, i)) / 2.0,
                  rng.integers(0, 4, (s, i)) / 2.0, rng.normal(size=(s, i))])
    y = np.stack([rng.integers(0, 4, (s, i)) / 2.0 + 0.25, rng.normal(size=(s, i)), rng.integers(0, 3, (s, i)) / 2.0,
                  rng.integers(0, 4, (s, i)) / 2.0, rng.normal(size=(s, i))])
    shared = rng.random((s, i)) < 0.2
    x[0, shared], y[0, shared] = np.nan, np.nan
    x[1:][rng.random((4, s, i)) < 0.2] = np.nan
    y[1:][rng.random((4, s, i)) < 0.2] = np.nan
    x[3, :, 0] = 1.0  # X constant on input 0 (where it is there)
    z = np.broadcast_to(rng.integers(0, 3, (s, i)).astype(float), (5, s, i)).copy()  # target ties
    z[4] = rng.normal(size=(s, i))  # no target tie
    z[:, rng.random((s, i)) < 0.1] = np.nan
    return x, y, z, rng.random((n_masks, s, i)) < 0.5


def _counted_means(x, y, z, masks, eps, variant, min_pairs):
    """Every pair of systems counted on the explicitly swapped X' and Y', per input, then the mean over the
    inputs where the variant is defined: (2, B)."""
    s, i = x.shape
    out = np.full((2, len(masks)), np.nan)
    for b, m in enumerate(masks):
        for which in (0, 1):
            src = m.astype(int) if which == 0 else 1 - m.astype(int)  # 1: the cell comes from Y
            vals = np.where(src == 1, y, x)
            values = []
            for j in range(i):
                rows = [a for a in range(s) if not np.isnan(vals[a, j]) and not np.isnan(z[a, j])]
                if len(rows) < max(min_pairs, 2):
                    continue
                counts = kendall_counts((vals[a, j] - vals[c, j], z[a, j] - z[c, j], eps[src[a, j], src[c, j]])
                                        for a, c in itertools.combinations(rows, 2))
                value = kendall_from_counts(*counts, variant)
                if not np.isnan(value):
                    values.append(value)
            out[which, b] = np.mean(values) if values else np.nan
    return out


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("eps", [0.0, "mixed"])
def test_means_equal_pair_counting_on_explicit_swaps(variant, eps):
    x, y, z, masks = _pairs(4, 7, 10, 9)
    eps_m = np.array([[0.0, 0.3], [0.3, 0.25]]) if eps == "mixed" else np.zeros((2, 2))
    mx, my = input_kendall_swap_means(x, y, z, min_pairs=3, variant=variant, eps=eps_m)(masks)
    plain = numpy_means(x, y, z, min_pairs=3, variant=variant, eps=eps_m)(masks)
    np.testing.assert_array_equal(mx, plain[0])
    np.testing.assert_array_equal(my, plain[1])
    for p in range(x.shape[0]):
        expected = _counted_means(x[p], y[p], z[p], masks, eps_m, variant, 3)
        np.testing.assert_allclose(mx[p], expected[0], atol=1e-12, equal_nan=True)
        np.testing.assert_allclose(my[p], expected[1], atol=1e-12, equal_nan=True)


def test_tau_b_means_equal_scipy():
    x, y, z, masks = _pairs(5, 6, 12, 11)
    mx, my = input_kendall_swap_means(x, y, z, min_pairs=2, variant="b")(masks)
    for p in range(x.shape[0]):
        expected = _scipy_means(x[p], y[p], z[p], masks, 2)
        np.testing.assert_allclose(mx[p], expected[0], atol=1e-12, equal_nan=True)
        np.testing.assert_allclose(my[p], expected[1], atol=1e-12, equal_nan=True)


@pytest.mark.parametrize("variant", VARIANTS)
def test_loop_equals_the_numpy_oracle_bit_for_bit(variant):
    x, y, z, masks = _pairs(6, 8, 15, 13)
    # ties of every kind; target ties only; no tie at all (the loop without tied counts)
    for ps, eps in ((slice(None), 0.25), (slice(1, 2), 0.0), (slice(4, 5), 0.0)):
        args = (x[ps], y[ps], z[ps])
        compiled = input_kendall_swap_means(*args, min_pairs=3, variant=variant, eps=eps)(masks)
        plain = numpy_means(*args, min_pairs=3, variant=variant, eps=eps)(masks)
        for k in (0, 1):
            np.testing.assert_array_equal(compiled[k], plain[k])


@pytest.mark.parametrize("variant", ["b", "acc23"])
def test_blocks_and_batches_change_nothing(variant, monkeypatch):
    x, y, z, masks = _pairs(7, 6, 9, 10)
    whole = input_kendall_swap_means(x, y, z, min_pairs=3, variant=variant)(masks)
    run = input_kendall_swap_means(x, y, z, min_pairs=3, variant=variant)
    parts = [run(masks[b:b + 3]) for b in range(0, len(masks), 3)]
    monkeypatch.setattr(swap_kendall, "_RUN_CELLS", 1)
    monkeypatch.setattr(swap_kendall, "_PREP_CELLS", 1)
    small = input_kendall_swap_means(x, y, z, min_pairs=3, variant=variant)(masks)
    small_plain = numpy_means(x, y, z, min_pairs=3, variant=variant)(masks)  # the oracle, one input a block
    for k in (0, 1):
        np.testing.assert_array_equal(np.concatenate([part[k] for part in parts], axis=1), whole[k])
        np.testing.assert_array_equal(small[k], whole[k])
        np.testing.assert_array_equal(small_plain[k], whole[k])


def test_gap_counts_equal_counting_on_swapped_cells():
    # target ties where both systems of a tied pair change validity: the quadratic terms
    rng = np.random.default_rng(9)
    p, s, i, b = 3, 6, 5, 16
    vx, vy = rng.random((2, p, i, s)) < 0.7
    zt = rng.integers(0, 2, (1, i, s)).astype(float)
    zt[0, 0] = np.nan
    zt[0, 1, :2] = np.nan
    vx &= ~np.isnan(zt)
    vy &= ~np.isnan(zt)
    masks = rng.random((b, s, i)) < 0.5
    builder = gap_counts(p, s, i, np.dtype(np.float64))
    builder.add(slice(0, p), slice(0, i), vx, vy, zt)
    mt = np.ascontiguousarray(np.transpose(masks, (1, 2, 0)))
    a = mask_products(mt)[..., :s + 1]
    valid, total, tied = builder.finish().evaluate(a, mt, slice(0, i))
    assert tied is not None
    for q, j, d in itertools.product(range(p), range(i), range(b)):
        m = masks[d, :, j]
        for k, cells in enumerate((np.where(m, vy[q, j], vx[q, j]), np.where(m, vx[q, j], vy[q, j]))):
            n = valid[j, d, q] if k == 0 else total[j, 0, q] - valid[j, d, q]
            assert n == cells.sum()
            pairs = sum(cells[u] and cells[w] and zt[0, j, u] == zt[0, j, w]
                        for u, w in itertools.combinations(range(s), 2))
            assert tied[j, d, k * p + q] == pairs
