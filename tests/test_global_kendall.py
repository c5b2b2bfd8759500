"""Global-level Kendall of bootstrap and permutation draws from one sorted table
(:mod:`xcorrstat._kernels.global_kendall`, :mod:`xcorrstat._kernels.global_kendall_swap`).

Every draw is checked against the statistic of the explicitly expanded resample or the
explicitly swapped matrices: :func:`scipy.stats.kendalltau` (tau-b, tau-c), a brute-force
count over all pairs (every variant, epsilon), and the plain kernel
:func:`xcorrstat._kernels.kendall` (bit for bit: the counts are exact integers). The compiled
loops (numba, when installed) are checked against the NumPy loops draw by draw, and both
against the oracles; the counts of a table against a brute-force count of its entries.
"""

from __future__ import annotations

import itertools
import math
import zlib

import numpy as np
import pytest
import xarray as xr
from oracles import kendall_counts, kendall_from_counts
from scipy import stats

import xcorrstat
from xcorrstat._kernels import global_kendall as gk
from xcorrstat._kernels import kendall
from xcorrstat._kernels.global_kendall_swap import swap_global_kendall
from xcorrstat._kernels.weighted import wcorr
from xcorrstat._resampling.draws import (
    bootstrap_indices,
    counts_from_indices,
    permutation_masks,
)
from xcorrstat._resampling.statistics import resampled_level_correlation
from xcorrstat._resampling.swapstats import standardise

VARIANTS = ["b", "c", "a", "23", "acc23"]
COMPILED = [False, pytest.param(True, marks=pytest.mark.skipif(not gk.compiled_available(), reason="no numba"))]


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


# --------------------------------------------------------------------------- bootstrap draws


@pytest.mark.parametrize("compiled", COMPILED)
@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("scheme", ["system", "input", "both"])
@pytest.mark.parametrize("shape,nan_frac", [((5, 7), 0.15), ((12, 20), 0.1)])  # 240 cells: the sorting kernel
def test_bootstrap_draws_equal_the_expanded_resample(compiled, variant, scheme, shape, nan_frac):
    rng = np.random.default_rng(seed_of(variant, scheme, shape))
    x = scores(rng, (2,) + shape, 4, nan_frac)
    z = scores(rng, shape, 3, nan_frac)
    s, i = shape
    sys_idx, inp_idx = bootstrap_indices(7, np.arange(6), [s, i])
    w = counts_from_indices(sys_idx, s) if scheme != "input" else None
    c = counts_from_indices(inp_idx, i) if scheme != "system" else None
    r, n = gk.weighted_global_kendall(x, z, w, c, variant=variant, compiled=compiled)
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


@pytest.mark.parametrize("compiled", COMPILED)
@pytest.mark.parametrize("variant,epsilon", [("b", 0.0), ("c", 0.0), ("a", 1.0), ("b", 1.0), ("23", 1.5),
                                             ("acc23", 1.0)])
def test_bootstrap_draws_equal_a_brute_force_count(compiled, variant, epsilon):
    rng = np.random.default_rng(3)
    x = scores(rng, (4, 5), 6, 0.1)
    z = scores(rng, (4, 5), 3, 0.1)
    sys_idx, inp_idx = bootstrap_indices(11, np.arange(5), [4, 5])
    w, c = counts_from_indices(sys_idx, 4), counts_from_indices(inp_idx, 5)
    r, _ = gk.weighted_global_kendall(x, z, w, c, variant=variant, epsilon=epsilon, compiled=compiled)
    expect = [brute_tau(expanded(x, sys_idx[b], inp_idx[b]), expanded(z, sys_idx[b], inp_idx[b]), variant, epsilon)
              for b in range(5)]
    np.testing.assert_allclose(r, expect, rtol=0, atol=1e-12)


@pytest.mark.parametrize("compiled", COMPILED)
def test_large_counts_equal_the_weighted_pair_kernel(compiled):
    """Counts whose products pass 2**31 (64-bit partial sums) against :func:`wcorr`'s pair sums."""
    rng = np.random.default_rng(4)
    x, z = scores(rng, (4, 5), 5), scores(rng, (4, 5), 3)
    w = rng.integers(0, 3000, size=(3, 4))
    c = rng.integers(0, 3000, size=(3, 5))
    r, n = gk.weighted_global_kendall(x, z, w, c, compiled=compiled)
    cells = (w[:, :, None] * c[:, None, :]).reshape(3, -1)
    r_pairs, n_pairs = wcorr(x.reshape(-1), z.reshape(-1), cells, method="kendall")
    np.testing.assert_array_equal(n, n_pairs)
    np.testing.assert_allclose(r, r_pairs, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(r, gk.weighted_global_kendall(x, z, w, c, compiled=False)[0])


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


@pytest.mark.parametrize("compiled", COMPILED)
@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("missing", ["none", "same", "different"])
@pytest.mark.parametrize("scheme", ["cells", "system", "input"])
def test_swap_draws_equal_the_swapped_matrices(compiled, variant, missing, scheme):
    rng = np.random.default_rng(seed_of(variant, missing, scheme))
    x, y, z = scores(rng, (5, 8), 5), scores(rng, (5, 8), 7), scores(rng, (5, 8), 3)
    if missing != "none":
        gone = rng.random((5, 8)) < 0.2
        x[gone] = np.nan
        y[gone if missing == "same" else rng.random((5, 8)) < 0.2] = np.nan
        z[rng.random((5, 8)) < 0.1] = np.nan
    zx, zy = standardise(x), standardise(y)  # as the permutation test swaps them
    masks = permutation_masks(9, np.arange(20), 5, 8, scheme)
    deltas = swap_global_kendall(zx, zy, z, variant=variant, compiled=compiled)(masks)
    plain, ref = swapped_oracle(zx, zy, z, masks, variant)
    np.testing.assert_array_equal(deltas, plain)
    np.testing.assert_allclose(deltas, ref, rtol=0, atol=1e-12)


@pytest.mark.skipif(not gk.compiled_available(), reason="no numba")
@pytest.mark.parametrize("missing", ["none", "different"])
def test_compiled_swaps_equal_numpy_swaps_and_do_not_depend_on_the_batch(missing):
    """Longer vectors (600 cells, continuous target): compiled and NumPy loops, whole and in pieces."""
    rng = np.random.default_rng(8)
    latent = rng.normal(size=(12, 50))
    x, y, z = latent + rng.normal(size=latent.shape), latent + 2 * rng.normal(size=latent.shape), latent.round(1)
    if missing == "different":
        x[rng.random(x.shape) < 0.1] = np.nan
        y[rng.random(y.shape) < 0.1] = np.nan
    zx, zy = standardise(x), standardise(y)
    masks = permutation_masks(1, np.arange(70), 12, 50, "cells")
    whole = swap_global_kendall(zx, zy, z, compiled=True)(masks)
    np.testing.assert_array_equal(whole, swap_global_kendall(zx, zy, z, compiled=False)(masks))
    pieces = swap_global_kendall(zx, zy, z, compiled=True)
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


@pytest.mark.parametrize("compiled", COMPILED)
@pytest.mark.parametrize("epsilon", [0.0, 1.0])
def test_table_counts_equal_a_brute_force_count(compiled, epsilon):
    rng = np.random.default_rng(int(epsilon) + 10)
    v, z = rng.integers(0, 5, 14).astype(float), rng.integers(0, 4, 14).astype(float)
    w = rng.integers(0, 3, size=(9, 14))
    t = gk.tau_table(v, z, epsilon=epsilon)
    got = gk.table_counts(t, w, compiled=None if epsilon else compiled)
    expect = np.array([brute_counts(v, z, row, epsilon) for row in w]).T
    np.testing.assert_array_equal(got, expect)


@pytest.mark.skipif(not gk.compiled_available(), reason="no numba")
def test_linear_terms_equal_a_brute_force_sum():
    """l_c = h(y_c) - h(x_c) and S(X) - S(Y) of the linear form of Y''s pairs."""
    from xcorrstat._kernels import global_kendall_jit as jit

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


def test_without_numba_the_numpy_loops_give_the_same_draws(monkeypatch):
    rng = np.random.default_rng(13)
    x, y, z = rng.normal(size=(4, 6)), rng.normal(size=(4, 6)), scores(rng, (4, 6), 3)
    masks = permutation_masks(3, np.arange(10), 4, 6, "cells")
    w = counts_from_indices(bootstrap_indices(3, np.arange(10), [4])[0], 4)
    expect = swap_global_kendall(x, y, z)(masks), gk.weighted_global_kendall(x, z, w)
    monkeypatch.setattr(gk, "_jit", lambda: None)
    assert not gk.compiled_available()
    with pytest.raises(ImportError, match="numba"):
        gk.weighted_global_kendall(x, z, w, compiled=True)
    np.testing.assert_array_equal(swap_global_kendall(x, y, z)(masks), expect[0])
    np.testing.assert_array_equal(gk.weighted_global_kendall(x, z, w)[0], expect[1][0])


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
    assert global_tables(x, z, level="global", method="pearson") is None


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
