"""Weighted Kendall tau of fixed rows under bootstrap count vectors (:mod:`xcorrstat._kernels.rank.weighted_rows`).

Oracles: (1) :func:`gemm_kendall`, the former Kendall branch of the matrix-product kernel
(pair tables and one float32 GEMM with the pair weights, then the same formulas): its
counts are exact integers, so the compiled loop gives the same floats; (2)
scipy.stats.kendalltau on the explicitly expanded resample (each unit repeated its count
times) for tau-b and tau-c; (3) a brute-force count of the expanded pairs
(:func:`oracles.kendall_counts`) for tau-a, tau-b with epsilon, tau_eq and acc_eq, whose
pairs join distinct units only (tau-b's copies of one unit are tied with each other). A value
depends neither on the batch nor on the other rows.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from oracles import kendall_counts, kendall_from_counts
from conftest import weighted_rows
from scipy import stats

from xcorrstat._kernels.rank.tau import tau_from_counts
from xcorrstat._kernels.weighted import DISTINCT_PAIR_VARIANTS, _kendall_undefined, _signs
from xcorrstat._kernels.rank.weighted_rows import wkendall_rows

VARIANTS = ["a", "b", "c", "23", "acc23"]


def gemm_kendall(x, z, weights, *, variant="b", min_pairs=3, epsilon=0.0, exact_distinct=False):
    """Kendall tau of fixed rows (R, S) under B weight vectors (B, S) by matrix products.

    ``exact_distinct`` rounds tau-c's number of distinct values (a sum of reciprocals of
    group sizes, a few ulps off in some draws) to the integer it approximates.
    """
    x = np.asarray(x, dtype=np.float64)
    z = np.asarray(z, dtype=np.float64)
    W = np.asarray(weights, dtype=np.float64)
    valid = ~np.isnan(x) & ~np.isnan(z)
    V = valid.astype(np.float64)
    n = V @ W.T
    i, j = np.triu_indices(x.shape[-1], 1)
    pv = valid[:, i] & valid[:, j]
    wt = np.ascontiguousarray(W.T, dtype=np.float32)
    PW = wt[i] * wt[j]  # (P, B) pair weights
    with np.errstate(invalid="ignore"):
        dx = x[:, i] - x[:, j]
        dz = z[:, i] - z[:, j]
        tie_x = (np.abs(dx) <= epsilon) & pv
    parts = [(dx == 0) & pv, (dz == 0) & pv, np.where(pv & ~tie_x, _signs(dx) * _signs(dz), 0)]
    if epsilon:
        parts.append(tie_x)
    if variant in ("23", "acc23"):
        parts.append(tie_x & (dz == 0))
    sums = np.concatenate([p.astype(np.float32) for p in parts]) @ PW  # one GEMM for all pair sums
    sums = sums.astype(np.float64).reshape(len(parts), x.shape[0], -1)
    distinct = variant in DISTINCT_PAIR_VARIANTS
    self_ties = 0.0 if distinct else V @ (W * (W - 1.0) / 2.0).T
    tx0 = sums[0] + self_ties
    tz = sums[1] + self_ties
    n0 = (n * n - V @ (W * W).T) / 2.0 if distinct else n * (n - 1.0) / 2.0
    with np.errstate(invalid="ignore", divide="ignore"):
        tx = sums[3] + self_ties if epsilon else tx0
        txz = sums[-1] + self_ties if variant in ("23", "acc23") else None
        undefined = _kendall_undefined(n, n0, tx0, tx, tz, variant, min_pairs)
        m = None
        if variant == "c":
            m = np.minimum(_distinct_gemm(x, valid, W), _distinct_gemm(z, valid, W))
            m = np.rint(m) if exact_distinct else m
        r = tau_from_counts(sums[2], n0, tx, tz, n, m, variant, txz)
    r = np.where(undefined, np.nan, np.clip(r, -1.0, 1.0))
    return r, n.astype(np.int64)


def _distinct_gemm(a, valid, W):
    """Distinct values among the drawn valid units, (R, B): the sum of 1 / (drawn units of equal value)."""
    rows, length = a.shape
    sel = valid[:, :, None] & (W.T > 0)[None, :, :]  # (R, S, B)
    equal = (a[:, None, :] == a[:, :, None]) & valid[:, None, :] & valid[:, :, None]
    group = (equal.reshape(rows * length, length).astype(np.float64) @ (W.T > 0)).reshape(rows, length, -1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.sum(np.where(sel, 1.0 / group, 0.0), axis=1)


def _data(seed, rows=14, s=7, b=40):
    return weighted_rows(seed, rows, s, b, unit=s // 2, no_draw=True)


def _assert_same(actual, expected):
    np.testing.assert_array_equal(actual[0], expected[0])
    np.testing.assert_array_equal(actual[1], expected[1])


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("epsilon", [0.0, 0.25])
@pytest.mark.parametrize("min_pairs", [1, 3, 6])
def test_loop_equals_the_matrix_product_oracle_bit_for_bit(variant, epsilon, min_pairs):
    for seed, s in [(1, 7), (2, 2), (3, 12)]:
        x, z, w = _data(seed, s=s)
        got = wkendall_rows(x, z, w, variant=variant, min_pairs=min_pairs, epsilon=epsilon)
        _assert_same(got, gemm_kendall(x, z, w, variant=variant, min_pairs=min_pairs, epsilon=epsilon,
                                       exact_distinct=True))
        if variant == "c":  # the oracle's distinct count is a float sum: the same within a few ulps
            want = gemm_kendall(x, z, w, variant=variant, min_pairs=min_pairs, epsilon=epsilon)[0]
            np.testing.assert_allclose(got[0], want, rtol=1e-14, atol=0)


def _expanded(x, z, w):
    """The valid units of one row repeated by their counts, with the unit of each copy."""
    keep = ~np.isnan(x) & ~np.isnan(z)
    units = np.repeat(np.flatnonzero(keep), w[keep])
    return x[units], z[units], units


@pytest.mark.parametrize("variant", ["b", "c"])
@pytest.mark.parametrize("min_pairs", [1, 3, 6])
def test_tau_b_and_c_equal_scipy_on_the_expanded_resample(variant, min_pairs):
    x, z, w = _data(4)
    r, n = wkendall_rows(x, z, w, variant=variant, min_pairs=min_pairs)
    for i, b in itertools.product(range(x.shape[0]), range(w.shape[0])):
        xe, ze, _ = _expanded(x[i], z[i], w[b])
        assert n[i, b] == xe.size
        if xe.size < max(min_pairs, 1) or np.ptp(xe) == 0 or np.ptp(ze) == 0:
            assert np.isnan(r[i, b]), (i, b)
        else:
            assert r[i, b] == pytest.approx(stats.kendalltau(xe, ze, variant=variant)[0], abs=1e-12), (i, b)


def _brute_force(x, z, w, variant, min_pairs, epsilon):
    """tau of one row under one draw from the expanded pairs, with the plain undefined rule."""
    xe, ze, units = _expanded(x, z, w)
    pairs = [(xe[a] - xe[c], ze[a] - ze[c], epsilon) for a, c in itertools.combinations(range(xe.size), 2)
             if variant not in DISTINCT_PAIR_VARIANTS or units[a] != units[c]]
    c, d, tg, tm, tgm = kendall_counts(pairs)
    exact_x = sum(dx == 0 for dx, _, _ in pairs)
    if variant in ("23", "acc23"):
        undefined = xe.size < max(min_pairs, 2) or not pairs
    else:
        undefined = xe.size < min_pairs or exact_x >= len(pairs) or tg + tgm >= len(pairs)
        undefined = undefined or (variant == "b" and tm + tgm >= len(pairs))
    return np.nan if undefined else float(np.clip(kendall_from_counts(c, d, tg, tm, tgm, variant), -1, 1))


@pytest.mark.parametrize("variant", ["a", "b", "23", "acc23"])
@pytest.mark.parametrize("epsilon", [0.0, 0.25])
def test_tie_variants_equal_a_brute_force_count_of_the_expanded_pairs(variant, epsilon):
    x, z, w = _data(5, rows=8, s=6, b=25)
    r, _ = wkendall_rows(x, z, w, variant=variant, min_pairs=3, epsilon=epsilon)
    for i, b in itertools.product(range(x.shape[0]), range(w.shape[0])):
        want = _brute_force(x[i], z[i], w[b], variant, 3, epsilon)
        if np.isnan(want):
            assert np.isnan(r[i, b]), (i, b)
        else:
            assert r[i, b] == pytest.approx(want, abs=1e-12), (i, b)


@pytest.mark.parametrize("variant", VARIANTS)
def test_batches_and_row_blocks_change_nothing(variant):
    x, z, w = _data(6, rows=20, s=9, b=50)
    whole = wkendall_rows(x, z, w, variant=variant, epsilon=0.1 if variant != "c" else 0.0)
    kw = dict(variant=variant, epsilon=0.1 if variant != "c" else 0.0)
    parts = [wkendall_rows(x, z, w[k:k + 1], **kw)[0] for k in range(w.shape[0])]  # one draw at a time
    np.testing.assert_array_equal(np.concatenate(parts, axis=1), whole[0])
    np.testing.assert_array_equal(wkendall_rows(x[5:9], z[5:9], w, **kw)[0], whole[0][5:9])
    np.testing.assert_array_equal(wkendall_rows(x[7:8], z[7:8], w[3:20], **kw)[0], whole[0][7:8, 3:20])


def test_continuous_scores_and_many_units():
    rng = np.random.default_rng(7)
    x, z = rng.normal(size=(30, 40)), rng.normal(size=(30, 40))
    w = rng.multinomial(40, np.full(40, 1 / 40), size=70)
    for variant in VARIANTS:
        _assert_same(wkendall_rows(x, z, w, variant=variant),
                     gemm_kendall(x, z, w, variant=variant, exact_distinct=True))


def test_bad_shapes_and_variants_are_rejected():
    with pytest.raises(ValueError, match="must be"):
        wkendall_rows(np.zeros((2, 3)), np.zeros((2, 4)), np.ones((5, 3)))
    with pytest.raises(ValueError, match="must be"):
        wkendall_rows(np.zeros((2, 3)), np.zeros((2, 3)), np.ones((5, 4)))
    with pytest.raises(ValueError, match="variant"):
        wkendall_rows(np.zeros((2, 3)), np.zeros((2, 3)), np.ones((5, 3)), variant="d")


def test_resampled_rows_take_the_loop():
    from xcorrstat._resampling.statistics import _rows_under_draws

    x, z, w = _data(8)
    for variant in VARIANTS:
        kw = dict(method="kendall", variant=variant, min_pairs=3, epsilon=0.0)
        _assert_same(_rows_under_draws(x, z, w, kw), wkendall_rows(x, z, w, variant=variant))
