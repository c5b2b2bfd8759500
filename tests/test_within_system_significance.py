"""Significance tests at the within-system level, against explicit oracles.

The within-system level correlates the two scores across the inputs of each system,
then averages the defined per-system correlations. The oracle here does exactly
that with plain loops and ``scipy.stats`` on explicitly built matrices:

* permutation test: X and Y are z-scored (over all their non-missing cells,
  population std), swapped under each draw's mask (``X' = where(m, Y, X)``,
  ``Y' = where(m, X, Y)``) and the draw's statistic is computed on the swapped
  matrices. The masks are the library's keyed draws (:func:`permutation_masks`),
  as in test_permutation.py;
* paired bootstrap test: the drawn systems and inputs (:func:`bootstrap_indices`)
  expand X, Y and Z into the resampled matrices (a system drawn twice is two
  groups of the average, an input drawn twice two items of each correlation);
* compare: every pair of metrics against the same oracles, the p-values counted by
  hand and a Bonferroni correction written out.

Williams' test needs a correlation over ``n`` units, which an average of per-system
correlations is not: it refuses the level with a message naming it.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import scipy.stats as st
import xarray as xr
from conftest import assert_lazy_notes_equal, to_dataset
from oracles import exact_integer_scores, integer_scores

import xcorrstat
from xcorrstat._resampling.draws import bootstrap_indices, permutation_masks

LEVEL = "within_system"
N_DRAWS = 8
TIE_TOLERANCE = 1e-12
ATOL = 1e-12
METHOD_VARIANTS = [("pearson", "b"), ("spearman", "b"), ("kendall", "b"), ("kendall", "c")]
MV_IDS = ["pearson", "spearman", "kendall-b", "kendall-c"]
# permute argument -> swap unit of permutation_masks
PERMUTES = {
    "both": (("system", "input"), "cells"),
    "systems": ("system", "system"),
    "inputs": ("input", "input"),
    "xor": ("system-xor-input", "system-xor-input"),
    "label": ("PERM-BOTH", "cells"),
}
RESAMPLES = {"systems": ("system",), "inputs": ("input",), "both": ("system", "input"), "label": "boot-both"}


# --------------------------------------------------------------------------- #
# Data and oracles (no xcorrstat code)
# --------------------------------------------------------------------------- #
def matrices(seed, *, nan_frac=0.1, n_sys=5, n_inp=7, n_metrics=2):
    """Metric matrices with exact z-scores and a target with ties, all (systems, inputs)."""
    rng = np.random.default_rng(seed)
    metrics = [exact_integer_scores(rng, (n_sys, n_inp), nan_frac) for _ in range(n_metrics)]
    return metrics, integer_scores(rng, (n_sys, n_inp), nan_frac)


def zscore(a):
    return (a - np.nanmean(a)) / np.nanstd(a)


def scipy_corr(a, b, method, variant, min_pairs=3):
    """scipy's statistic over the pairs where both values are present (NaN if undefined)."""
    keep = [(u, v) for u, v in zip(a, b) if not (math.isnan(u) or math.isnan(v))]
    if len(keep) < max(min_pairs, 2):
        return math.nan
    u, v = (np.array(t) for t in zip(*keep))
    if (u == u[0]).all() or (v == v[0]).all():
        return math.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if method == "pearson":
            return float(st.pearsonr(u, v).statistic)
        if method == "spearman":
            return float(st.spearmanr(u, v).statistic)
        return float(st.kendalltau(u, v, variant=variant).statistic)


def within_system(x, z, method, variant, min_pairs=3):
    """Each system's correlation across its inputs (one row each), averaged over the defined ones."""
    per_system = [scipy_corr(x[s], z[s], method, variant, min_pairs) for s in range(x.shape[0])]
    defined = [r for r in per_system if not math.isnan(r)]
    return sum(defined) / len(defined) if defined else math.nan


def oracle_delta(x, y, z, method, variant, **kw):
    return within_system(x, z, method, variant, **kw) - within_system(y, z, method, variant, **kw)


def swapped_draws(x, y, z, masks, method, variant, **kw):
    """delta of every mask, on the explicitly swapped z-scored matrices."""
    xs, ys = zscore(x), zscore(y)
    return np.array([oracle_delta(np.where(m, ys, xs), np.where(m, xs, ys), z, method, variant, **kw)
                     for m in masks])


def resampled_draws(a, z, sys_idx, inp_idx, method, variant):
    """Within-system correlation of every draw, on the explicitly expanded matrices."""
    out = []
    for b in range(len(sys_idx if sys_idx is not None else inp_idx)):
        ab, zb = a, z
        if sys_idx is not None:
            ab, zb = ab[sys_idx[b], :], zb[sys_idx[b], :]
        if inp_idx is not None:
            ab, zb = ab[:, inp_idx[b]], zb[:, inp_idx[b]]
        out.append(within_system(ab, zb, method, variant))
    return np.array(out)


def count_pvalue(draws, observed, alternative="greater", pvalue="plus-one", centred=False):
    """Monte-Carlo p-value counted by hand over the defined draws (centred: the paired bootstrap's)."""
    d = [v - observed if centred else v for v in draws if not math.isnan(v)]
    if math.isnan(observed) or not d:
        return math.nan
    if alternative == "greater":
        k = sum(v >= observed - TIE_TOLERANCE for v in d)
    elif alternative == "less":
        k = sum(v <= observed + TIE_TOLERANCE for v in d)
    else:
        k = sum(abs(v) >= abs(observed) - TIE_TOLERANCE for v in d)
    return (1 + k) / (1 + len(d)) if pvalue == "plus-one" else k / len(d)


def assert_close(actual, expected, what=""):
    actual, expected = np.asarray(actual, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    assert actual.shape == expected.shape, what
    np.testing.assert_array_equal(np.isnan(actual), np.isnan(expected), err_msg=f"NaN positions {what}")
    np.testing.assert_allclose(actual, expected, rtol=0, atol=ATOL, equal_nan=True, err_msg=what)


def metrics_dataset(metrics, z):
    names = [f"m{k}" for k in range(len(metrics))]
    n_sys, n_inp = z.shape
    coords = {"system": [f"sys{s}" for s in range(n_sys)], "input": [f"doc{j}" for j in range(n_inp)]}
    ds = xr.Dataset({**{n: (("system", "input"), m) for n, m in zip(names, metrics)},
                     "human": (("system", "input"), z)}, coords=coords)
    ds["human"].attrs["role"] = "human"
    return ds, names


# --------------------------------------------------------------------------- #
# permutation_test
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("nan_frac", [0.0, 0.15], ids=["complete", "nan"])
@pytest.mark.parametrize("permute", list(PERMUTES))
@pytest.mark.parametrize("method,variant", METHOD_VARIANTS, ids=MV_IDS)
def test_permutation_draws_equal_swapped_oracle(method, variant, permute, nan_frac):
    seed = 40 + METHOD_VARIANTS.index((method, variant)) + 10 * list(PERMUTES).index(permute)
    (x, y), z = matrices(seed, nan_frac=nan_frac)
    perm, unit = PERMUTES[permute]
    res = xcorrstat.permutation_test(to_dataset(x, y, z), x="mx", y="my", target="human", level=LEVEL,
                                     method=method, variant=variant,
                                     test=xcorrstat.Permutation(perm, n_resamples=N_DRAWS, rng=seed,
                                                                keep_distribution=True),
                                     alternative="two-sided")
    expected = swapped_draws(x, y, z, permutation_masks(seed, range(N_DRAWS), *x.shape, unit), method, variant)
    delta = oracle_delta(x, y, z, method, variant)
    assert_close(res["distribution"].values, expected, "draws")
    assert_close(res["delta"].values, delta, "delta")
    assert_close(res["pvalue"].values, count_pvalue(expected, delta, "two-sided"), "pvalue")
    assert int(res["n_undefined"]) == int(np.isnan(expected).sum())
    assert res.attrs["level"] == LEVEL and res.attrs["permute"] == unit


def test_permutation_min_pairs_and_skipna_apply_per_system():
    (x, y), z = matrices(7, nan_frac=0.3)
    ds = to_dataset(x, y, z)
    res = xcorrstat.permutation_test(ds, x="mx", y="my", target="human", level=LEVEL, method="spearman",
                                     min_pairs=4,
                                     test=xcorrstat.Permutation(n_resamples=N_DRAWS, rng=3, keep_distribution=True))
    masks = permutation_masks(3, range(N_DRAWS), *x.shape, "cells")
    assert_close(res["distribution"].values, swapped_draws(x, y, z, masks, "spearman", "b", min_pairs=4))
    strict = xcorrstat.permutation_test(ds, x="mx", y="my", target="human", level=LEVEL, skipna=False,
                                        test=xcorrstat.Permutation(n_resamples=N_DRAWS, rng=3))
    assert np.isnan(float(strict["delta"])) and np.isnan(float(strict["pvalue"]))


def test_permutation_early_stopping_keeps_a_prefix_of_the_draws():
    (x, y), z = matrices(8, n_sys=6, n_inp=9)
    ds = to_dataset(x, y, z)
    kw = dict(x="mx", y="my", target="human", level=LEVEL)
    with xcorrstat.set_options(batch=10):
        full = xcorrstat.permutation_test(ds, test=xcorrstat.Permutation(n_resamples=200, rng=5,
                                                                         keep_distribution=True), **kw)
        early = xcorrstat.permutation_test(ds, test=xcorrstat.Permutation(n_resamples=200, rng=5,
                                                                          keep_distribution=True,
                                                                          early_stop=0.5), **kw)
    used = int(early["n_resamples_used"])
    assert 0 < used <= 200
    np.testing.assert_array_equal(early["distribution"].values[:used], full["distribution"].values[:used])
    assert np.isnan(early["distribution"].values[used:]).all()


# --------------------------------------------------------------------------- #
# paired_bootstrap_test
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("resample", list(RESAMPLES))
@pytest.mark.parametrize("method,variant", METHOD_VARIANTS, ids=MV_IDS)
def test_paired_bootstrap_draws_equal_resampled_oracle(method, variant, resample):
    seed = 70 + METHOD_VARIANTS.index((method, variant)) + 10 * list(RESAMPLES).index(resample)
    rng = np.random.default_rng(seed)
    x, y, z = (integer_scores(rng, (5, 7), 0.15) for _ in range(3))
    dims = ("system", "input") if resample == "label" else RESAMPLES[resample]
    res = xcorrstat.paired_bootstrap_test(to_dataset(x, y, z), x="mx", y="my", target="human", level=LEVEL,
                                          method=method, variant=variant,
                                          test=xcorrstat.Bootstrap(RESAMPLES[resample], n_resamples=N_DRAWS,
                                                                   rng=seed, keep_distribution=True),
                                          alternative="less", confidence_level=0.8)
    sizes = [{"system": 5, "input": 7}[d] for d in dims]
    idx = dict(zip(dims, bootstrap_indices(seed, range(N_DRAWS), sizes)))
    rx = resampled_draws(x, z, idx.get("system"), idx.get("input"), method, variant)
    ry = resampled_draws(y, z, idx.get("system"), idx.get("input"), method, variant)
    delta = oracle_delta(x, y, z, method, variant)
    assert_close(res["metric_distribution"].sel(metric="mx").values, rx, "x draws")
    assert_close(res["metric_distribution"].sel(metric="my").values, ry, "y draws")
    assert_close(res["distribution"].values, rx - ry, "delta draws")
    assert_close(res["delta"].values, delta, "delta")
    assert_close(res["pvalue"].values, count_pvalue(rx - ry, delta, "less", centred=True), "pvalue")
    defined = (rx - ry)[~np.isnan(rx - ry)]
    if defined.size:
        assert_close([res["low"].values, res["high"].values], np.quantile(defined, [0.1, 0.9]), "interval")
    assert int(res["n_undefined"]) == int(np.isnan(rx - ry).sum())
    assert res.attrs["level"] == LEVEL and res.attrs["resample"] == list(dims)


def test_paired_bootstrap_within_system_equals_bootstrap_draws():
    # the paired draws are bootstrap()'s draws of each metric at the same level and seed
    rng = np.random.default_rng(9)
    ds = to_dataset(*(integer_scores(rng, (6, 8), 0.1) for _ in range(3)))
    kw = dict(target="human", level=LEVEL, method="kendall")
    draws = xcorrstat.Bootstrap(n_resamples=30, rng=12, keep_distribution=True)
    res = xcorrstat.paired_bootstrap_test(ds, x="mx", y="my", test=draws, **kw)
    boot = xcorrstat.bootstrap(ds, metrics=["mx", "my"], resample=draws, **kw)
    np.testing.assert_array_equal(res["metric_distribution"].values, boot["distribution"].values)
    np.testing.assert_array_equal(res["correlation"].values, boot["correlation"].values)


# --------------------------------------------------------------------------- #
# compare
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("method,variant", [("pearson", "b"), ("kendall", "b")], ids=["pearson", "kendall"])
def test_compare_permutation_equals_swapped_oracle(method, variant):
    metrics, z = matrices(90, n_metrics=3)
    ds, names = metrics_dataset(metrics, z)
    res = xcorrstat.compare(ds, target="human", common_cells=False, level=LEVEL, method=method, variant=variant,
                            test=xcorrstat.Permutation("input", n_resamples=N_DRAWS, rng=21, keep_distribution=True),
                            correction="bonferroni")
    masks = permutation_masks(21, range(N_DRAWS), *z.shape, "input")
    for i, a in enumerate(names):
        assert_close(res["correlation"].sel(metric=a).values, within_system(metrics[i], z, method, variant))
        row = []
        for k, b in enumerate(names):
            cell = res.sel(metric=a, other_metric=b)
            if i == k:
                assert np.isnan(float(cell["pvalue"]))
                continue
            draws = swapped_draws(metrics[i], metrics[k], z, masks, method, variant)
            delta = oracle_delta(metrics[i], metrics[k], z, method, variant)
            assert_close(cell["distribution"].values, draws, f"{a} vs {b}")
            assert_close(cell["delta"].values, delta)
            row.append((b, count_pvalue(draws, delta)))
        for b, p in row:  # Bonferroni over each metric's row of M - 1 comparisons
            assert_close(res["pvalue"].sel(metric=a, other_metric=b).values, p)
            assert_close(res["pvalue_corrected"].sel(metric=a, other_metric=b).values, min(1.0, len(row) * p))
    assert res.attrs["level"] == LEVEL and res.attrs["scheme"] == "PERM-INPUTS"


def test_compare_bootstrap_equals_resampled_oracle():
    rng = np.random.default_rng(91)
    metrics = [integer_scores(rng, (5, 7), 0.1) for _ in range(3)]
    z = integer_scores(rng, (5, 7), 0.1)
    ds, names = metrics_dataset(metrics, z)
    res = xcorrstat.compare(ds, target="human", common_cells=False, level=LEVEL, method="spearman",
                            test=xcorrstat.Bootstrap("BOOT-BOTH", n_resamples=N_DRAWS, rng=22, keep_distribution=True),
                            alternative="two-sided")
    sys_idx, inp_idx = bootstrap_indices(22, range(N_DRAWS), list(z.shape))
    per_metric = [resampled_draws(m, z, sys_idx, inp_idx, "spearman", "b") for m in metrics]
    for i, a in enumerate(names):
        for k, b in enumerate(names):
            if i == k:
                continue
            cell = res.sel(metric=a, other_metric=b)
            draws = per_metric[i] - per_metric[k]
            delta = oracle_delta(metrics[i], metrics[k], z, "spearman", "b")
            assert_close(cell["distribution"].values, draws, f"{a} vs {b}")
            assert_close(cell["pvalue"].values, count_pvalue(draws, delta, "two-sided", centred=True))
    assert res.attrs["scheme"] == "BOOT-BOTH"


@pytest.mark.parametrize("test", ["permutation", "bootstrap"])
def test_compare_pairs_equal_two_metric_tests(test):
    metrics, z = matrices(92, n_metrics=3, n_sys=6, n_inp=8)
    ds, names = metrics_dataset(metrics, z)
    kw = dict(target="human", level=LEVEL, method="kendall")
    settings = xcorrstat.Permutation if test == "permutation" else xcorrstat.Bootstrap
    kw["test"] = settings(n_resamples=40, rng=23, keep_distribution=True)
    res = xcorrstat.compare(ds, common_cells=False, **kw)
    two = xcorrstat.permutation_test if test == "permutation" else xcorrstat.paired_bootstrap_test
    for a in names:
        for b in names:
            if a != b:
                one = two(ds, x=a, y=b, **kw)
                cell = res.sel(metric=a, other_metric=b)
                np.testing.assert_array_equal(cell["distribution"].values, one["distribution"].values)
                np.testing.assert_array_equal(cell["pvalue"].values, one["pvalue"].values)


def test_dask_input_equals_eager():
    metrics, z = matrices(93, n_metrics=3)
    ds, _ = metrics_dataset(metrics, z)
    two = xr.concat([ds, ds.assign(m0=ds["m2"], m2=ds["m0"])], dim="lp").assign_coords(lp=["a", "b"])
    kw = dict(target="human", level=LEVEL)
    perm, boot = xcorrstat.Permutation(n_resamples=20, rng=1), xcorrstat.Bootstrap(n_resamples=20, rng=1)
    for func, extra in ((xcorrstat.compare, dict(test=perm)),
                        (xcorrstat.permutation_test, dict(x="m0", y="m1", test=perm)),
                        (xcorrstat.paired_bootstrap_test, dict(x="m0", y="m1", test=boot))):
        eager = func(two, **kw, **extra)
        lazy = func(two.chunk({"lp": 1}), **kw, **extra)
        assert_lazy_notes_equal(lazy.compute(), eager)


# --------------------------------------------------------------------------- #
# Williams' test: no n at the within-system level
# --------------------------------------------------------------------------- #
WILLIAMS_WORDS = ("level='within_system' is not supported; it supports level 'system' or 'global': Williams' test "
                  ".*permutation_test or paired_bootstrap_test")


def test_williams_refuses_the_within_system_level():
    (x, y), z = matrices(94)
    ds = to_dataset(x, y, z)
    with pytest.raises(ValueError, match=WILLIAMS_WORDS):
        xcorrstat.williams_test(ds, x="mx", y="my", target="human", level=LEVEL)
    with pytest.raises(ValueError, match=WILLIAMS_WORDS):
        xcorrstat.compare(ds, target="human", test="williams", level=LEVEL)

