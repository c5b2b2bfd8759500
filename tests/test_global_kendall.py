"""Global-level Kendall of bootstrap and permutation draws from one sorted table
(:mod:`xcorrstat._kernels.rank.global_counts`, :mod:`xcorrstat._kernels.rank.global_swap`).

Every draw is checked against the statistic of the explicitly expanded resample or the
explicitly swapped matrices: :func:`scipy.stats.kendalltau` (tau-b, tau-c), a brute-force
count over all pairs (every variant, epsilon), and the plain kernel
:func:`xcorrstat._kernels.kendall` (bit for bit: the counts are exact integers). The package's
compiled loops are also checked draw by draw against the NumPy counting below (the oracle: the
same counts vectorised over entries and draws, with prefix sums per bucket instead of running
sums), bit for bit, with epsilon and with weights whose sums pass int32 too; the counts of a
table against a brute-force count of its entries.
"""

from __future__ import annotations

import itertools
import math
import zlib
from collections.abc import Callable
from functools import partial

import numpy as np
import pytest
import xarray as xr
from oracles import kendall_counts, kendall_from_counts
from scipy import stats

import xcorrstat
from xcorrstat._kernels.rank import global_counts as gk
from xcorrstat._kernels.rank import global_swap as gks
from xcorrstat._kernels import kendall
from xcorrstat._kernels.rank.global_swap import swap_global_kendall
from xcorrstat._kernels.weighted import wcorr
from xcorrstat._resampling.draws import (
    bootstrap_indices,
    counts_from_indices,
    permutation_masks,
)
from xcorrstat._resampling.statistics import resampled_level_correlation
from xcorrstat._resampling.swapstats import standardise

VARIANTS = ["b", "c", "a", "23", "acc23"]
# NumPy oracle: entries x lanes of one block of int64 temporaries
NUMPY_BLOCK = 1 << 20


def seed_of(*parts):
    """A seed fixed by the test's parameters."""
    return zlib.crc32(repr(parts).encode())


def scores(rng, shape, levels, nan_frac=0.0):
    """Integer scores with ties (``levels`` values), NaN in a fraction of the cells."""
    a = rng.integers(0, levels, size=shape).astype(float)
    if nan_frac:
        a[rng.random(shape) < nan_frac] = np.nan
    return a


def brute_tau(x, z, variant, epsilon=0.0, min_pairs=3):
    """Kendall's variant of two 1-D vectors by enumerating every pair (NaN by the library's rule)."""
    keep = ~np.isnan(x) & ~np.isnan(z)
    xs, zs = x[keep], z[keep]
    n = xs.size
    if n < max(min_pairs, 2):
        return math.nan
    if variant not in ("23", "acc23") and (np.all(xs == xs[0]) or np.all(zs == zs[0])):
        return math.nan
    pairs = [(xs[i] - xs[j], zs[i] - zs[j], epsilon) for i, j in itertools.combinations(range(n), 2)]
    counts = kendall_counts(pairs)
    if variant == "c":
        c, d = counts[:2]
        m = min(np.unique(xs).size, np.unique(zs).size)
        return 2.0 * (c - d) / (n * n * (m - 1) / m)
    return kendall_from_counts(*counts, variant)


def scipy_tau(x, z, variant):
    keep = ~np.isnan(x) & ~np.isnan(z)
    xs, zs = x[keep], z[keep]
    if xs.size < 3 or np.all(xs == xs[0]) or np.all(zs == zs[0]):
        return math.nan
    return float(stats.kendalltau(xs, zs, variant=variant).statistic)


def expanded(a, srow, irow):
    return a[..., srow, :][..., irow].reshape(a.shape[:-2] + (-1,))


# --------------------------------------------------------------------------- NumPy oracle


def bucket_index(bucket, look):
    """Entries by (bucket, position), and for each entry j the range ``[lo_j, hi_j)`` of that order
    holding the entries of its bucket before position ``look_j``."""
    e = bucket.size
    order = np.argsort(bucket, kind="stable")
    sb = bucket[order]
    return order, np.searchsorted(sb, bucket), np.searchsorted(sb * e + order, bucket * e + look)


def bucket_pairs(bucket, inserts, queries, look) -> Callable[[np.ndarray], np.ndarray]:
    """``sum_{j in queries} W_j sum_{i < look_j, bucket_i = bucket_j, i in inserts} W_i`` per lane,
    as a function of the weights (E, L); the sort by bucket is done once here."""
    e = bucket.size
    order, lo, hi = bucket_index(bucket, look)
    qj = np.flatnonzero(queries)
    lo, hi = lo[qj], hi[qj]
    keep = inserts[order]

    def run(w):
        csum = np.zeros((e + 1, w.shape[1]), dtype=np.int64)
        np.cumsum(np.where(keep[:, None], w[order], 0), axis=0, out=csum[1:])
        return np.einsum("jl,jl->l", w[qj], csum[hi] - csum[lo])

    return run


def group_pairs(w, runs):
    """Tie pairs ``sum T (T - 1) / 2`` and groups with weight, over the runs (bounds ``runs``)."""
    if not w.shape[0]:
        return np.zeros(w.shape[1], dtype=np.int64), np.zeros(w.shape[1], dtype=np.int64)
    total = np.add.reduceat(w, runs[:-1], axis=0)
    return np.sum(total * (total - 1) // 2, axis=0), np.sum(total > 0, axis=0)


def numpy_counts(t, lanes, weights, with_z=True):
    """The counts of :func:`gk.table_counts` by NumPy: ``weights(l0, l1)`` gives lanes l0..l1-1 as
    (E, l1 - l0) int64 in table order; returns (9, lanes). Without ``with_z`` the z rows are left 0."""
    e = t.zr.size
    zr = t.zr.astype(np.int64)
    look = t.lag if t.lag is not None else np.arange(e, dtype=np.int64)
    levels = []
    for k in range(t.nbits):  # one pass per bit of the target's rank
        bit = ((zr >> k) & 1).astype(bool)
        # a pair counts at the highest bit where the ranks differ: the earlier entry has it set
        levels.append(bucket_pairs(zr >> (k + 1), bit, ~bit, look))
    every = np.ones(e, dtype=bool)
    far_tz = bucket_pairs(zr, every, every, look) if t.lag is not None else None
    out = np.zeros((len(gk.COUNT_ROWS), lanes), dtype=np.int64)
    step = max(1, NUMPY_BLOCK // max(e, 1))
    for l0 in range(0, lanes, step):
        wb = weights(l0, min(l0 + step, lanes))
        col = out[:, l0:l0 + step]
        col[0] = wb.sum(axis=0)
        col[1] = sum((level(wb) for level in levels), np.zeros(wb.shape[1], dtype=np.int64))
        col[2], col[5] = group_pairs(wb, t.x_runs)
        col[3] = group_pairs(wb, t.xz_runs)[0]
        if with_z:
            col[4], col[6] = group_pairs(wb[t.zorder], t.z_runs)
        if far_tz is not None:
            csum = np.zeros((e + 1, wb.shape[1]), dtype=np.int64)
            np.cumsum(wb, axis=0, out=csum[1:])
            col[7] = np.einsum("jl,jl->l", wb, csum[t.lag])
            col[8] = far_tz(wb)
    return out


def numpy_table_counts(t, weights):
    """:func:`gk.table_counts` by the oracle."""
    w = np.ascontiguousarray(np.asarray(weights, dtype=np.int64)[:, t.order].T)
    return numpy_counts(t, w.shape[1], lambda l0, l1: w[:, l0:l1])


def cell_weights(wt, ct, sys_of, inp_of, l0, l1):
    """Weights ``w_s c_i`` of the table's entries (rows) in draws l0..l1-1 (columns)."""
    return wt[sys_of, l0:l1] * ct[inp_of, l0:l1]


def numpy_global_kendall(x, z, w=None, c=None, *, variant="b", min_pairs=3, epsilon=0.0):
    """:func:`gk.weighted_global_kendall` with its counts by the oracle."""
    (xf, zf), lead = gk.lead_rows(x, z)
    s, i = xf.shape[-2:]
    b = len(w) if w is not None else len(c)
    wt = np.asarray(np.ones((b, s), dtype=np.int64) if w is None else w, dtype=np.int64).T
    ct = np.asarray(np.ones((b, i), dtype=np.int64) if c is None else c, dtype=np.int64).T
    r, n = np.empty((xf.shape[0], b)), np.empty((xf.shape[0], b), dtype=np.int64)
    for row, table in enumerate(gk.cell_tables(xf, zf, epsilon=epsilon)):
        counts = numpy_counts(table.table, b, partial(cell_weights, wt, ct, table.sys_of, table.inp_of))
        r[row], n[row] = gk.tau_from_table(counts, variant=variant, min_pairs=min_pairs, epsilon=epsilon)
    return r.reshape(lead + (b,)), n.reshape(lead + (b,))


def numpy_swap_deltas(zx, zy, z, masks, variant="b", min_pairs=3):
    """:func:`swap_global_kendall` with the counts of X' and of Y' both by the oracle."""
    (xf, yf, zf), lead = gk.lead_rows(zx, zy, z)
    b = masks.shape[0]
    flat = np.ascontiguousarray(masks.reshape(b, -1)).view(np.uint8)
    out = np.empty((xf.shape[0], b))
    for p in range(xf.shape[0]):
        row = gks._swap_row(xf[p], yf[p], zf[p])
        flip = 1 - row.src.astype(np.int64)

        def weights(l0, l1, row=row, flip=flip):
            lane = np.arange(l0, l1)  # lanes 0..B-1 are X', B..2B-1 are Y'
            return (flat[lane % b][:, row.cell].T ^ flip[:, None]) ^ (lane >= b)[None, :]

        counts = numpy_counts(row.table, 2 * b, weights, with_z=row.fixed is None)
        if row.fixed is not None:
            counts[4], counts[6] = row.fixed
        r, _ = gk.tau_from_table(counts, variant=variant, min_pairs=min_pairs)
        out[p] = r[:b] - r[b:]
    return out.reshape(lead + (b,))


def test_oracle_bucket_index():
    order, lo, hi = bucket_index(np.array([1, 0, 1, 0]), np.arange(4))
    assert (order.tolist(), lo.tolist(), hi.tolist()) == ([1, 3, 0, 2], [2, 0, 2, 0], [2, 0, 3, 1])


# --------------------------------------------------------------------------- bootstrap draws


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("scheme", ["system", "input", "both"])
@pytest.mark.parametrize("shape,nan_frac", [((5, 7), 0.15), ((12, 20), 0.1)])  # 240 cells: the sorting kernel
def test_bootstrap_draws_equal_the_expanded_resample(variant, scheme, shape, nan_frac):
    rng = np.random.default_rng(seed_of(variant, scheme, shape))
    x = scores(rng, (2,) + shape, 4, nan_frac)
    z = scores(rng, shape, 3, nan_frac)
    s, i = shape
    sys_idx, inp_idx = bootstrap_indices(7, np.arange(6), [s, i])
    w = counts_from_indices(sys_idx, s) if scheme != "input" else None
    c = counts_from_indices(inp_idx, i) if scheme != "system" else None
    r, n = gk.weighted_global_kendall(x, z, w, c, variant=variant)
    r_np, n_np = numpy_global_kendall(x, z, w, c, variant=variant)
    np.testing.assert_array_equal(r, r_np)
    np.testing.assert_array_equal(n, n_np)
    for b in range(6):
        srow = sys_idx[b] if w is not None else np.arange(s)
        irow = inp_idx[b] if c is not None else np.arange(i)
        xe, ze = expanded(x, srow, irow), expanded(z, srow, irow)
        r_plain, n_plain = kendall(xe, ze, variant=variant)
        np.testing.assert_array_equal(r[:, b], r_plain)  # the same integer counts: the same bits
        np.testing.assert_array_equal(n[:, b], n_plain)
        if variant in ("b", "c"):
            expect = [scipy_tau(xe[m], ze, variant) for m in range(2)]
            np.testing.assert_allclose(r[:, b], expect, rtol=0, atol=1e-12)


@pytest.mark.parametrize("variant,epsilon", [("b", 0.0), ("c", 0.0), ("a", 1.0), ("b", 1.0), ("23", 1.5),
                                             ("acc23", 1.0)])
def test_bootstrap_draws_equal_a_brute_force_count(variant, epsilon):
    rng = np.random.default_rng(3)
    x = scores(rng, (4, 5), 6, 0.1)
    z = scores(rng, (4, 5), 3, 0.1)
    sys_idx, inp_idx = bootstrap_indices(11, np.arange(5), [4, 5])
    w, c = counts_from_indices(sys_idx, 4), counts_from_indices(inp_idx, 5)
    r, _ = gk.weighted_global_kendall(x, z, w, c, variant=variant, epsilon=epsilon)
    expect = [brute_tau(expanded(x, sys_idx[b], inp_idx[b]), expanded(z, sys_idx[b], inp_idx[b]), variant, epsilon)
              for b in range(5)]
    np.testing.assert_allclose(r, expect, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(r, numpy_global_kendall(x, z, w, c, variant=variant, epsilon=epsilon)[0])


@pytest.mark.parametrize("epsilon", [0.0, 1.0])
@pytest.mark.parametrize("low,high", [(0, 3000), (10000, 12000)])  # products past 2**31; sums too (int64 weights)
def test_large_counts_equal_the_weighted_pair_kernel(low, high, epsilon):
    """Counts whose products or sums pass 2**31 against :func:`wcorr`'s pair sums and the oracle."""
    rng = np.random.default_rng(4)
    x, z = scores(rng, (4, 5), 5), scores(rng, (4, 5), 3)
    w = rng.integers(low, high, size=(3, 4))
    c = rng.integers(low, high, size=(3, 5))
    r, n = gk.weighted_global_kendall(x, z, w, c, epsilon=epsilon)
    cells = (w[:, :, None] * c[:, None, :]).reshape(3, -1)
    assert (n.min() > 2**31 - 1) == (low > 0)
    r_pairs, n_pairs = wcorr(x.reshape(-1), z.reshape(-1), cells, method="kendall", epsilon=epsilon)
    np.testing.assert_array_equal(n, n_pairs)
    np.testing.assert_allclose(r, r_pairs, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(r, numpy_global_kendall(x, z, w, c, epsilon=epsilon)[0])


def test_engine_draws_take_the_table_route_and_equal_the_expanded_resample():
    rng = np.random.default_rng(5)
    x, z = scores(rng, (3, 6, 9), 5, 0.1), scores(rng, (6, 9), 4, 0.1)
    sys_idx, inp_idx = bootstrap_indices(2, np.arange(9), [6, 9])
    for variant, epsilon in (("b", 0.0), ("c", 0.0), ("b", 1.0)):
        r, n = resampled_level_correlation(x, z, level="global", method="kendall", variant=variant, epsilon=epsilon,
                                           sys_idx=sys_idx, inp_idx=inp_idx)
        for b in range(9):
            plain = kendall(expanded(x, sys_idx[b], inp_idx[b]), expanded(z, sys_idx[b], inp_idx[b]), variant=variant,
                            epsilon=epsilon)
            np.testing.assert_array_equal(r[:, b], plain[0])
            np.testing.assert_array_equal(n[:, b], plain[1])
    with pytest.raises(ValueError, match="tau-c"):  # the plain kernel's errors stay
        resampled_level_correlation(x, z, level="global", method="kendall", variant="c", epsilon=1.0, sys_idx=sys_idx)


# --------------------------------------------------------------------------- permutation draws


def swapped_oracle(zx, zy, z, masks, variant):
    """tau(X', Z) - tau(Y', Z) of the explicitly swapped matrices: plain kernel and scipy."""
    plain, ref = [], []
    for m in masks:
        xp, yp = np.where(m, zy, zx).reshape(-1), np.where(m, zx, zy).reshape(-1)
        zf = z.reshape(-1)
        plain.append(kendall(xp, zf, variant=variant)[0] - kendall(yp, zf, variant=variant)[0])
        if variant in ("b", "c"):
            ref.append(scipy_tau(xp, zf, variant) - scipy_tau(yp, zf, variant))
        else:
            ref.append(brute_tau(xp, zf, variant) - brute_tau(yp, zf, variant))
    return np.array(plain), np.array(ref)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("missing", ["none", "same", "different"])
@pytest.mark.parametrize("scheme", ["cells", "system", "input"])
def test_swap_draws_equal_the_swapped_matrices(variant, missing, scheme):
    rng = np.random.default_rng(seed_of(variant, missing, scheme))
    x, y, z = scores(rng, (5, 8), 5), scores(rng, (5, 8), 7), scores(rng, (5, 8), 3)
    if missing != "none":
        gone = rng.random((5, 8)) < 0.2
        x[gone] = np.nan
        y[gone if missing == "same" else rng.random((5, 8)) < 0.2] = np.nan
        z[rng.random((5, 8)) < 0.1] = np.nan
    zx, zy = standardise(x), standardise(y)  # as the permutation test swaps them
    masks = permutation_masks(9, np.arange(20), 5, 8, scheme)
    deltas = swap_global_kendall(zx, zy, z, variant=variant)(masks)
    plain, ref = swapped_oracle(zx, zy, z, masks, variant)
    np.testing.assert_array_equal(deltas, plain)
    np.testing.assert_allclose(deltas, ref, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(deltas, numpy_swap_deltas(zx, zy, z, masks, variant))


@pytest.mark.parametrize("missing", ["none", "different"])
def test_swaps_equal_numpy_counts_and_do_not_depend_on_the_batch(missing):
    """Longer vectors (600 cells, continuous target): the loops against the oracle, whole and in pieces."""
    rng = np.random.default_rng(8)
    latent = rng.normal(size=(12, 50))
    x, y, z = latent + rng.normal(size=latent.shape), latent + 2 * rng.normal(size=latent.shape), latent.round(1)
    if missing == "different":
        x[rng.random(x.shape) < 0.1] = np.nan
        y[rng.random(y.shape) < 0.1] = np.nan
    zx, zy = standardise(x), standardise(y)
    masks = permutation_masks(1, np.arange(70), 12, 50, "cells")
    whole = swap_global_kendall(zx, zy, z)(masks)
    np.testing.assert_array_equal(whole, numpy_swap_deltas(zx, zy, z, masks))
    pieces = swap_global_kendall(zx, zy, z)
    parts = [pieces(masks[a:b]) for a, b in ((0, 1), (1, 18), (18, 51), (51, 70))]
    np.testing.assert_array_equal(whole, np.concatenate(parts))
    np.testing.assert_array_equal(whole[:5], swapped_oracle(zx, zy, z, masks[:5], "b")[0])


def test_swap_draws_with_undefined_correlations():
    """A constant metric (no z-scores), a constant target and too few cells: NaN as on the swapped data."""
    rng = np.random.default_rng(2)
    zx = standardise(np.full((3, 4), 2.0))  # all NaN
    zy = standardise(rng.normal(size=(3, 4)))
    masks = permutation_masks(0, np.arange(6), 3, 4, "cells")
    for z in (rng.normal(size=(3, 4)), np.ones((3, 4))):
        for variant in ("b", "acc23"):
            got = swap_global_kendall(zx, zy, z, variant=variant)(masks)
            np.testing.assert_array_equal(got, swapped_oracle(zx, zy, z, masks, variant)[0])
    few = np.full((3, 4), np.nan)
    few[0, :2] = [1.0, 2.0]
    assert np.isnan(swap_global_kendall(few, few, rng.normal(size=(3, 4)))(masks)).all()


@pytest.mark.parametrize("variant", ["c", "23"])
def test_permutation_test_distribution_equals_the_swapped_matrices(variant):
    rng = np.random.default_rng(6)
    x, y, z = scores(rng, (6, 9), 5, 0.1), scores(rng, (6, 9), 5, 0.1), scores(rng, (6, 9), 3)
    dims = ("system", "input")
    ds = xr.Dataset({"x": (dims, x), "y": (dims, y), "h": (dims, z)})
    with xcorrstat.set_options(batch=16):
        res = xcorrstat.permutation_test(ds, x="x", y="y", target="h", level="global", method="kendall",
                                         variant=variant,
                                         test=xcorrstat.Permutation(n_resamples=40, rng=5, keep_distribution=True))
    masks = permutation_masks(int(res.attrs["rng"]), np.arange(40), 6, 9, "cells")
    plain, _ = swapped_oracle(standardise(x), standardise(y), z, masks, variant)
    np.testing.assert_array_equal(res["distribution"].values, plain)


# --------------------------------------------------------------------------- tables


def brute_counts(v, z, w, epsilon=0.0):
    """The rows of :func:`table_counts` for one weight vector, from every pair of the expanded entries."""
    ex = np.repeat(v, w)
    ez = np.repeat(z, w)
    n = ex.size
    dis = tx0 = txz0 = tz = far = far_tz = 0
    for i, j in itertools.combinations(range(n), 2):
        dx, dz = ex[j] - ex[i], ez[j] - ez[i]
        tx0 += dx == 0
        tz += dz == 0
        txz0 += (dx == 0) and (dz == 0)
        if abs(dx) > epsilon:
            far += 1
            far_tz += dz == 0
            dis += (dx > 0) != (dz > 0) and dz != 0
    far_rows = [far, far_tz] if epsilon else [0, 0]
    return [n, dis, tx0, txz0, tz, np.unique(ex).size, np.unique(ez).size] + far_rows


@pytest.mark.parametrize("epsilon", [0.0, 1.0])
def test_table_counts_equal_a_brute_force_count(epsilon):
    rng = np.random.default_rng(int(epsilon) + 10)
    v, z = rng.integers(0, 5, 14).astype(float), rng.integers(0, 4, 14).astype(float)
    w = rng.integers(0, 3, size=(9, 14))
    t = gk.tau_table(v, z, epsilon=epsilon)
    got = gk.table_counts(t, w)
    expect = np.array([brute_counts(v, z, row, epsilon) for row in w]).T
    np.testing.assert_array_equal(got, expect)
    np.testing.assert_array_equal(got, numpy_table_counts(t, w))


@pytest.mark.parametrize("epsilon", [0.0, 0.3])
@pytest.mark.parametrize("high,flavour", [(5, ("int32", "int32")), (2**16, ("int32", "int64")),
                                          (20_000_000, ("int64", "int64"))])  # weights and sums, partial sums
def test_table_counts_of_long_tables_equal_the_oracle(epsilon, high, flavour):
    """70 draws (blocks of 32 lanes and a short one), a target with 50 ranks, weights up to ``high``
    (the draws' sums stay below 2**32, so that every pair count fits int64)."""
    rng = np.random.default_rng(high)
    v, z = rng.normal(size=300).round(1), rng.integers(0, 50, 300).astype(float)
    w = rng.integers(0, high, size=(70, 300))
    w[3] = 0  # a draw without weight
    dtype, acc, _ = gk.accumulator(int(w.max()), int(w.sum(axis=1).max()), 300)
    assert (dtype.__name__, acc.dtype.name) == flavour
    t = gk.tau_table(v, z, epsilon=epsilon)
    got = gk.table_counts(t, w)
    np.testing.assert_array_equal(got, numpy_table_counts(t, w))
    assert not got[:, 3].any()
    assert (got[7:, :3] > 0).all() if epsilon else not got[7:].any()


def test_linear_terms_equal_a_brute_force_sum():
    """l_c = h(y_c) - h(x_c) and S(X) - S(Y) of the linear form of Y''s pairs."""
    from xcorrstat._kernels.rank import global_jit as jit

    rng = np.random.default_rng(12)
    x, y, z = rng.integers(0, 4, 9).astype(float), rng.integers(0, 4, 9).astype(float), rng.integers(0, 3, 9)
    values, zz = np.concatenate([x, y]), np.concatenate([z, z]).astype(float)
    t = gk.tau_table(values, zz)
    cell, src = np.tile(np.arange(9), 2)[t.order], np.repeat([0, 1], 9)[t.order].astype(np.uint8)
    lin, c0 = jit.linear_terms(t.zr, t.x_runs, src, cell.astype(np.int32), 9)

    def h(val, zc):
        return sum(np.sign(val - values[e]) * np.sign(zc - zz[e]) for e in range(18))

    def signed(u):
        return sum(np.sign(u[a] - u[b]) * np.sign(z[a] - z[b]) for a, b in itertools.combinations(range(9), 2))

    np.testing.assert_array_equal(lin, [h(y[c], z[c]) - h(x[c], z[c]) for c in range(9)])
    assert c0 == signed(x) - signed(y)


def test_the_numpy_oracle_gives_the_same_draws():
    rng = np.random.default_rng(13)
    x, y, z = rng.normal(size=(4, 6)), rng.normal(size=(4, 6)), scores(rng, (4, 6), 3)
    masks = permutation_masks(3, np.arange(10), 4, 6, "cells")
    w = counts_from_indices(bootstrap_indices(3, np.arange(10), [4])[0], 4)
    expect = swap_global_kendall(x, y, z)(masks), gk.weighted_global_kendall(x, z, w)
    np.testing.assert_array_equal(numpy_swap_deltas(x, y, z, masks), expect[0])
    np.testing.assert_array_equal(numpy_global_kendall(x, z, w)[0], expect[1][0])


def test_long_tables_keep_the_linear_terms_in_int64(monkeypatch):
    """Tables too long for int32 linear terms (here: every table) give the same draws."""
    rng = np.random.default_rng(15)
    x, y, z = rng.normal(size=(6, 30)), rng.normal(size=(6, 30)), scores(rng, (6, 30), 4)
    masks = permutation_masks(5, np.arange(40), 6, 30, "cells")
    expect = swap_global_kendall(x, y, z)(masks)
    monkeypatch.setattr(gks, "LINEAR_INT32_ENTRIES", 0)
    assert gks._swap_row(x, y, z).linear[0].dtype == np.int64
    np.testing.assert_array_equal(swap_global_kendall(x, y, z)(masks), expect)
    np.testing.assert_array_equal(numpy_swap_deltas(x, y, z, masks), expect)


def test_tables_sorted_once_give_the_same_draws_in_every_batch():
    from xcorrstat._resampling.statistics import global_tables

    rng = np.random.default_rng(14)
    x, z = scores(rng, (2, 5, 7), 4, 0.1), scores(rng, (5, 7), 3)
    kw = {"level": "global", "method": "kendall", "variant": "c"}
    sys_idx, inp_idx = bootstrap_indices(1, np.arange(12), [5, 7])
    whole = resampled_level_correlation(x, z, sys_idx=sys_idx, inp_idx=inp_idx, **kw)
    tables = global_tables(x, z, **kw)
    parts = [resampled_level_correlation(x, z, sys_idx=sys_idx[a:b], inp_idx=inp_idx[a:b], tables=tables, **kw)
             for a, b in ((0, 5), (5, 12))]
    for k in range(2):
        np.testing.assert_array_equal(whole[k], np.concatenate([p[k] for p in parts], axis=-1))
    assert global_tables(x, z, level="input", method="kendall") is None


def test_bad_counts_and_masks_are_named():
    x = np.zeros((3, 4))
    with pytest.raises(ValueError, match="w must be"):
        gk.weighted_global_kendall(x, x, w=np.ones((2, 4), dtype=int))
    with pytest.raises(ValueError, match="non-negative integer"):
        gk.weighted_global_kendall(x, x, c=-np.ones((2, 4), dtype=int))
    with pytest.raises(ValueError, match="needs w"):
        gk.weighted_global_kendall(x, x)
    with pytest.raises(ValueError, match="masks must be"):
        swap_global_kendall(x, x, x)(np.zeros((2, 4, 3), dtype=bool))
