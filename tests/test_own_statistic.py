"""A statistic of one's own, ``method=f``, checked against independent oracles.

Oracles never call xcorrstat's kernels: the level statistics are plain Python loops over the
(system, input) matrices (drop missing pairs, NaN below ``min_pairs``), resamples are expanded
by indexing with the draws of :func:`bootstrap_indices` / :func:`permutation_masks` (the draws
every run uses), and a callable Pearson (``scipy.stats.pearsonr``) must agree with the
built-in ``method="pearson"`` everywhere.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from conftest import make_scores
from scipy import stats

import xcorrstat
from xcorrstat._capabilities import check
from xcorrstat._kernels.custom import own_rows
from xcorrstat._resampling.draws import bootstrap_indices, permutation_masks
from xcorrstat._resampling.pvalues import TIE_TOLERANCE

LEVELS = ("system", "input", "global", "within_system")
MIN_PAIRS = 3


def pearson_own(x, z):
    """Pearson's r as a function of one's own."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # constant rows: NaN, as the built-in
        return stats.pearsonr(x, z, axis=-1).statistic


def mad(x, z):
    """Mean absolute difference: neither shift- nor scale-invariant."""
    return np.mean(np.abs(x - z), axis=-1)


# --------------------------------------------------------------------------- #
# Oracles: loops over 2-D (S, I) matrices
# --------------------------------------------------------------------------- #
def pair_stat(f, a, b):
    """f on the valid pairs of two 1-D vectors; NaN below MIN_PAIRS."""
    keep = ~(np.isnan(a) | np.isnan(b))
    return (float(f(a[keep], b[keep])), int(keep.sum())) if keep.sum() >= MIN_PAIRS else (np.nan, int(keep.sum()))


def hand_level(f, X, Z, level):
    """The level statistic of one metric (S, I) against the target (S, I), and its n."""
    S, I = X.shape
    if level == "global":
        return pair_stat(f, X.ravel(), Z.ravel())
    if level == "system":
        mx, mz = np.full(S, np.nan), np.full(S, np.nan)
        for s in range(S):
            keep = ~(np.isnan(X[s]) | np.isnan(Z[s]))
            if keep.any():
                mx[s], mz[s] = X[s, keep].mean(), Z[s, keep].mean()
        return pair_stat(f, mx, mz)
    groups = [(X[:, j], Z[:, j]) for j in range(I)] if level == "input" else [(X[s], Z[s]) for s in range(S)]
    vals = [pair_stat(f, a, b)[0] for a, b in groups]
    vals = [v for v in vals if not np.isnan(v)]
    return (float(np.mean(vals)) if vals else np.nan), len(vals)


def drawn_seed(res):
    """The int seed of a result's draws (attrs "rng"; "seed" in older versions)."""
    return int(res.attrs["rng"] if "rng" in res.attrs else res.attrs["seed"])


def metric_matrix(ds, name):
    return ds[name].transpose("system", "input").values.astype(float)


def scores_with_gaps(pattern):
    """Scores (3 metrics, 7 systems, 9 inputs) with missing cells in one of several patterns."""
    ds = make_scores(n_metrics=3, n_systems=7, n_inputs=9, seed=11, nan_frac=0.15 if pattern == "scattered" else 0)
    if pattern == "rows_cols":
        ds["m0"][2, :] = np.nan  # a whole system of one metric
        ds["human"][:, 4] = np.nan  # a whole input of the target
        ds["m1"][:5, 1] = np.nan  # an input with 2 systems left: below min_pairs
        ds["m2"][5, :7] = np.nan  # a system with 2 inputs left
    elif pattern == "single":
        ds["human"][3, 3] = np.nan
    return ds


# --------------------------------------------------------------------------- #
# 1. correlate: a callable Pearson is the built-in Pearson
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("pattern", ["none", "single", "scattered", "rows_cols"])
@pytest.mark.parametrize("level", LEVELS)
def test_correlate_pearson_callable(level, pattern):
    ds = scores_with_gaps(pattern)
    own = xcorrstat.correlate(ds, target="human", level=level, method=pearson_own)
    ref = xcorrstat.correlate(ds, target="human", level=level, method="pearson")
    np.testing.assert_allclose(own.values, ref.values, rtol=0, atol=1e-12, equal_nan=True)
    np.testing.assert_array_equal(own["n"].values, ref["n"].values)
    assert own.attrs["method"] == "pearson_own"
    # and both are the loop oracle of the same callable
    Z = metric_matrix(ds, "human")
    for k, m in enumerate(own["metric"].values):
        r, n = hand_level(pearson_own, metric_matrix(ds, m), Z, level)
        np.testing.assert_allclose(own.values[k], r, atol=1e-12, equal_nan=True)
        assert int(own["n"].values[k]) == n


@pytest.mark.parametrize("level", LEVELS)
def test_correlate_mad_matches_loop_oracle(level):
    ds = scores_with_gaps("rows_cols")
    own = xcorrstat.correlate(ds, target="human", level=level, method=mad)
    Z = metric_matrix(ds, "human")
    for k, m in enumerate(own["metric"].values):
        r, n = hand_level(mad, metric_matrix(ds, m), Z, level)
        np.testing.assert_allclose(own.values[k], r, rtol=1e-13, equal_nan=True)
        assert int(own["n"].values[k]) == n


# --------------------------------------------------------------------------- #
# 2. own_rows: rows by loop; one call per pattern of missing pairs
# --------------------------------------------------------------------------- #
def test_own_rows_loop_oracle_and_calls_per_count():
    rng = np.random.default_rng(5)
    x, z = rng.normal(size=(40, 6)), rng.normal(size=(40, 6))
    patterns = [[], [1], [1, 4], [0, 2, 5], [0, 1, 2, 3]]  # the last: 2 pairs left, below min_pairs
    for row in range(40):
        gap = patterns[rng.integers(len(patterns))]
        (x if row % 2 else z)[row, gap] = np.nan
    x[7, 3] = np.nan
    z[7, 0] = np.nan  # a pattern split across x and z

    calls = []

    def counted(a, b):
        calls.append(a.shape)
        return mad(a, b)

    value, n = own_rows(counted, x, z, min_pairs=MIN_PAIRS)
    for row in range(40):
        r, k = pair_stat(mad, x[row], z[row])
        np.testing.assert_allclose(value[row], r, rtol=1e-14, equal_nan=True)
        assert n[row] == k
    valid = ~(np.isnan(x) | np.isnan(z))
    counts = valid.sum(axis=1)
    partial = {c for c in counts if MIN_PAIRS <= c < 6}  # one call per number of present pairs
    assert len(calls) == len(partial) + int((counts == 6).any())
    assert len(calls) < 40
    assert sum(shape[0] for shape in calls) == int((counts >= MIN_PAIRS).sum())
    assert np.isnan(value[counts < MIN_PAIRS]).all() and (counts < MIN_PAIRS).any()


def test_own_rows_one_pattern_and_rows_grouped_by_their_count_of_pairs():
    rng = np.random.default_rng(6)
    x, z = rng.normal(size=(30, 13)), rng.normal(size=(30, 13))  # 13 cells: two bytes of bits, the last one padded
    x[:, 2] = np.nan  # one pattern in every row: one call
    calls = []

    def counted(a, b):
        calls.append(a.shape)
        return mad(a, b)

    value, _ = own_rows(counted, x, z, min_pairs=MIN_PAIRS)
    assert calls == [(30, 12)]
    x[::3, 12] = np.nan  # rows apart by their last cell only
    x[1::3, 11] = np.nan
    calls.clear()
    value, n = own_rows(counted, x, z, min_pairs=MIN_PAIRS)
    assert calls == [(20, 11), (10, 12)]  # rows of 11 present pairs in one call, whichever they are
    for row in range(30):
        r, k = pair_stat(mad, x[row], z[row])
        np.testing.assert_allclose(value[row], r, rtol=1e-14)
        assert n[row] == k


def test_own_rows_broadcasts_leading_axes():
    rng = np.random.default_rng(1)
    x, z = rng.normal(size=(2, 3, 5)), rng.normal(size=5)
    x[1, 2, 0] = np.nan
    value, n = own_rows(mad, x, z)
    assert value.shape == n.shape == (2, 3)
    for i in range(2):
        for j in range(3):
            np.testing.assert_allclose(value[i, j], pair_stat(mad, x[i, j], z)[0], rtol=1e-14)


# --------------------------------------------------------------------------- #
# 3. bootstrap: every draw is the statistic of the expanded resample
# --------------------------------------------------------------------------- #
RESAMPLES = {"system": ("system",), "input": ("input",), "both": ("system", "input")}


def expand(a, srow, irow):
    out = a if srow is None else a[srow, :]
    return out if irow is None else out[:, irow]


@pytest.mark.parametrize("resample", list(RESAMPLES))
@pytest.mark.parametrize("level", ["system", "input"])
@pytest.mark.parametrize("nan_frac", [0.0, 0.1])
def test_bootstrap_draws_are_expanded_resamples(level, resample, nan_frac):
    ds = make_scores(n_metrics=3, n_systems=6, n_inputs=8, seed=3, nan_frac=nan_frac)
    dims = RESAMPLES[resample]
    B = 20
    res = xcorrstat.bootstrap(ds, target="human", level=level, method=mad,
                              resample=xcorrstat.Bootstrap(dims if len(dims) > 1 else dims[0], n_resamples=B,
                                                           rng=7, keep_distribution=True))
    assert res.attrs["method"] == "mad"
    seed = drawn_seed(res)
    sizes = [{"system": 6, "input": 8}[d] for d in dims]
    idx = dict(zip(dims, bootstrap_indices(seed, np.arange(B), sizes)))
    Z = metric_matrix(ds, "human")
    dist = res["distribution"].transpose("metric", "resample").values
    for b in range(0, B, 4):
        srow = idx["system"][b] if "system" in idx else None
        irow = idx["input"][b] if "input" in idx else None
        for k, m in enumerate(res["metric"].values):
            r, _ = hand_level(mad, expand(metric_matrix(ds, m), srow, irow), expand(Z, srow, irow), level)
            np.testing.assert_allclose(dist[k, b], r, rtol=1e-12, equal_nan=True)


@pytest.mark.parametrize("resample", ["system", "input", ("system", "input")])
def test_bootstrap_pearson_callable_matches_builtin(resample):
    ds = make_scores(n_metrics=3, n_systems=8, n_inputs=10, seed=4, nan_frac=0.05)
    kw = dict(target="human", level="system", resample=xcorrstat.Bootstrap(resample, n_resamples=60, rng=2))
    own = xcorrstat.bootstrap(ds, method=pearson_own, **kw)
    ref = xcorrstat.bootstrap(ds, method="pearson", **kw)
    for var in ("correlation", "low", "high"):
        np.testing.assert_allclose(own[var].values, ref[var].values, rtol=0, atol=1e-10)
    np.testing.assert_array_equal(own["n_undefined"].values, ref["n_undefined"].values)


# --------------------------------------------------------------------------- #
# 4. permutation_test: Pearson parity, and a hand oracle for z-scored own statistics
# --------------------------------------------------------------------------- #
SCHEMES = ["system", "input", ("system", "input")]


@pytest.mark.parametrize("scheme", SCHEMES, ids=str)
@pytest.mark.parametrize("level", ["system", "input"])
def test_permutation_pearson_callable_matches_builtin(scheme, level):
    ds = make_scores(n_metrics=2, n_systems=7, n_inputs=9, seed=8, nan_frac=0.08)
    kw = dict(x="m0", y="m1", target="human", level=level,
              test=xcorrstat.Permutation(scheme, n_resamples=200, rng=3))
    own = xcorrstat.permutation_test(ds, method=pearson_own, **kw)
    ref = xcorrstat.permutation_test(ds, method="pearson", **kw)
    np.testing.assert_allclose(own["delta"].values, ref["delta"].values, rtol=0, atol=1e-12)
    np.testing.assert_allclose(own["pvalue"].values, ref["pvalue"].values, rtol=0, atol=1e-12)
    assert own.attrs["method"] == "pearson_own"


def zscore_cells(a):
    """z-score over all non-missing cells (population std)."""
    return (a - np.nanmean(a)) / np.nanstd(a)


def permutation_oracle(ds, x, y, level, seed, B, scheme):
    """Observed delta, draws and "greater" p-value of a permutation test of mad by hand: the metrics
    and the target z-scored over their cells (docs/own-statistic.md), the masks swap x and y."""
    X, Y, Z = (zscore_cells(metric_matrix(ds, v)) for v in (x, y, "human"))
    observed = hand_level(mad, X, Z, level)[0] - hand_level(mad, Y, Z, level)[0]
    S, I = X.shape
    masks = permutation_masks(seed, np.arange(B), S, I, "cells" if isinstance(scheme, tuple) else scheme)
    deltas = np.array([hand_level(mad, np.where(m, Y, X), Z, level)[0] - hand_level(mad, np.where(m, X, Y), Z, level)[0]
                       for m in masks])
    defined = ~np.isnan(deltas)
    k = int(np.sum(deltas[defined] >= observed - TIE_TOLERANCE))  # the library's tie tolerance
    return observed, deltas, (1 + k) / (1 + defined.sum())


def scales_differ(seed):
    ds = make_scores(n_metrics=3, n_systems=6, n_inputs=8, seed=seed, nan_frac=0.1)
    ds["m1"] = 3.0 * ds["m1"] + 10.0  # the scales differ: the z-scores matter
    ds["human"] = 5.0 * ds["human"] - 2.0
    return ds


@pytest.mark.parametrize("scheme", SCHEMES, ids=str)
@pytest.mark.parametrize("level", ["system", "input", "global"])
def test_permutation_own_statistic_hand_oracle(scheme, level):
    ds, B = scales_differ(9), 60
    res = xcorrstat.permutation_test(ds, x="m0", y="m1", target="human", level=level, method=mad,
                                     test=xcorrstat.Permutation(scheme, n_resamples=B, rng=5,
                                                                keep_distribution=True))
    observed, deltas, p = permutation_oracle(ds, "m0", "m1", level, drawn_seed(res), B, scheme)
    np.testing.assert_allclose(float(res["delta"]), observed, rtol=1e-12)
    np.testing.assert_allclose(res["distribution"].values, deltas, rtol=1e-12, atol=1e-12)
    assert float(res["pvalue"]) == pytest.approx(p, abs=1e-15)


def test_permutation_own_statistic_system_means():
    """standardise="system-means": the per-system means (over each one's present inputs) of the
    metrics and the target, each z-scored over the systems; whole systems swap."""
    ds, B = scales_differ(9), 40
    res = xcorrstat.permutation_test(ds, x="m0", y="m1", target="human", method=mad,
                                     test=xcorrstat.Permutation("system", n_resamples=B, rng=2, standardise="system-means",
                                                                keep_distribution=True))
    mx, my, mz = (zscore_cells(np.nanmean(metric_matrix(ds, v), axis=1)) for v in ("m0", "m1", "human"))
    np.testing.assert_allclose(float(res["delta"]), mad(mx, mz) - mad(my, mz), rtol=1e-12)
    flips = permutation_masks(drawn_seed(res), np.arange(B), 6, 8, "system")[:, :, 0]
    deltas = [mad(np.where(f, my, mx), mz) - mad(np.where(f, mx, my), mz) for f in flips]
    np.testing.assert_allclose(res["distribution"].values, deltas, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("scheme", ["system", ("system", "input")], ids=str)
def test_compare_permutation_own_statistic_hand_oracle(scheme):
    ds, B = scales_differ(10), 60
    res = xcorrstat.compare(ds, target="human", level="input", method=mad, common_cells=False,  # the oracle's cells
                            test=xcorrstat.Permutation(scheme, n_resamples=B, rng=6))
    for x, y in (("m0", "m1"), ("m2", "m0")):
        observed, _, p = permutation_oracle(ds, x, y, "input", drawn_seed(res), B, scheme)
        pair = res.sel(metric=x, other_metric=y)
        np.testing.assert_allclose(float(pair["delta"]), observed, rtol=1e-12)
        assert float(pair["pvalue"]) == pytest.approx(p, abs=1e-15)


# --------------------------------------------------------------------------- #
# 5. paired bootstrap and compare: a callable Pearson is the built-in Pearson
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("resample", ["system", "input", ("system", "input")], ids=str)
def test_paired_bootstrap_pearson_callable(resample):
    ds = make_scores(n_metrics=2, n_systems=8, n_inputs=9, seed=12, nan_frac=0.05)
    kw = dict(x="m0", y="m1", target="human", test=xcorrstat.Bootstrap(resample, n_resamples=80, rng=4))
    own = xcorrstat.paired_bootstrap_test(ds, method=pearson_own, **kw)
    ref = xcorrstat.paired_bootstrap_test(ds, method="pearson", **kw)
    for var in ("delta", "pvalue", "low", "high", "correlation"):
        np.testing.assert_allclose(own[var].values, ref[var].values, rtol=0, atol=1e-10)


@pytest.mark.parametrize("test", [xcorrstat.Permutation("system", n_resamples=100, rng=1),
                                  xcorrstat.Permutation(("system", "input"), n_resamples=100, rng=1),
                                  xcorrstat.Bootstrap("input", n_resamples=100, rng=1),
                                  xcorrstat.Bootstrap(("system", "input"), n_resamples=100, rng=1)], ids=repr)
@pytest.mark.parametrize("level", ["system", "input"])
def test_compare_pearson_callable(test, level):
    ds = make_scores(n_metrics=3, n_systems=7, n_inputs=8, seed=13, nan_frac=0.05)
    own = xcorrstat.compare(ds, target="human", level=level, method=pearson_own, test=test)
    ref = xcorrstat.compare(ds, target="human", level=level, method="pearson", test=test)
    for var in ("delta", "pvalue", "correlation"):
        np.testing.assert_allclose(own[var].values, ref[var].values, rtol=0, atol=1e-10, equal_nan=True)
    assert own.attrs["method"] == "pearson_own"


def test_report_runs_with_own_statistic():
    ds = make_scores(n_metrics=3, n_systems=6, n_inputs=8, seed=2, nan_frac=0.05)
    rep = xcorrstat.report(ds, target="human", method=mad, n_resamples=20, rng=0, common_cells=False)  # own cells
    assert rep.settings["method"] == "mad"
    Z = metric_matrix(ds, "human")
    for level in rep.levels:
        got = rep.intervals["correlation"].sel(level=level)
        for m in got["metric"].values:
            expected = hand_level(mad, metric_matrix(ds, m), Z, level)[0]
            np.testing.assert_allclose(float(got.sel(metric=m)), expected, rtol=1e-12)


# --------------------------------------------------------------------------- #
# 6. refusals, attrs and Dask
# --------------------------------------------------------------------------- #
def table_message(operation, **kw):
    with pytest.raises(ValueError) as info:
        check(operation, method=mad, **kw)
    return str(info.value)


def test_fisher_refuses_own_statistic():
    ds = make_scores(n_metrics=2)
    msg = table_message("fisher", level="system")
    assert "callable" in msg
    with pytest.raises(ValueError, match=re.escape(msg)):
        xcorrstat.fisher(ds, target="human", method=mad)


def test_williams_refuses_own_statistic():
    ds = make_scores(n_metrics=2)
    msg = table_message("williams_test", level="system")
    with pytest.raises(ValueError, match=re.escape(msg)):
        xcorrstat.williams_test(ds, x="m0", y="m1", target="human", method=mad)


def test_wrong_shape_names_the_function():
    def whole_mean(x, z):
        return float(np.mean(x - z))  # one number, not one per row

    def elementwise(x, z):
        return np.abs(x - z)  # one value per pair, not per row

    ds = make_scores(n_metrics=2)
    for f in (whole_mean, elementwise):
        name = re.escape(f.__qualname__)
        for level in LEVELS:
            with pytest.raises(ValueError, match=f"function '{name}' must return one value per row"):
                xcorrstat.correlate(ds, target="human", level=level, method=f)
        with pytest.raises(ValueError, match=f"'{name}'"):
            xcorrstat.bootstrap(ds, target="human", level="input", method=f,
                                resample=xcorrstat.Bootstrap("system", n_resamples=5, rng=0))


def test_attrs_record_the_function_name():
    ds = make_scores(n_metrics=2)
    boot = xcorrstat.bootstrap(ds, target="human", method=mad, resample=xcorrstat.Bootstrap("system", n_resamples=5, rng=0))
    perm = xcorrstat.permutation_test(ds, x="m0", y="m1", target="human", method=mad,
                                      test=xcorrstat.Permutation("system", n_resamples=5, rng=0))
    pb = xcorrstat.paired_bootstrap_test(ds, x="m0", y="m1", target="human", method=mad,
                                         test=xcorrstat.Bootstrap("system", n_resamples=5, rng=0))
    comp = xcorrstat.compare(ds, target="human", method=mad, test=xcorrstat.Permutation("system", n_resamples=5, rng=0))
    for res in (xcorrstat.correlate(ds, target="human", method=mad), boot, perm, pb, comp):
        assert res.attrs["method"] == "mad"


@pytest.mark.parametrize("chunks", [None, {"system": 3}], ids=["one_chunk", "systems_3"])
@pytest.mark.parametrize("level", ["system", "input", "global"])
def test_dask_bootstrap_equals_eager(level, chunks):
    ds = make_scores(n_metrics=3, n_systems=6, n_inputs=8, seed=6, nan_frac=0.1)
    kw = dict(target="human", level=level, method=mad,
              resample=xcorrstat.Bootstrap(("system", "input"), n_resamples=40, rng=3, keep_distribution=True))
    eager = xcorrstat.bootstrap(ds, **kw)
    lazy = xcorrstat.bootstrap(ds.chunk() if chunks is None else ds.chunk(chunks), **kw)
    assert lazy["distribution"].chunks is not None or lazy["low"].chunks is not None
    lazy = lazy.compute()
    for var in ("correlation", "low", "high", "distribution"):
        np.testing.assert_allclose(lazy[var].values, eager[var].values, rtol=0, atol=1e-12, equal_nan=True)
