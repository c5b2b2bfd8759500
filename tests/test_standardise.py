"""standardise="system-means": mt-metrics-eval's system-level permutation test (z-scored per-system means,
whole systems swapped), against a plain NumPy/scipy oracle and an exact enumeration of the swaps."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import xarray as xr
from scipy import stats

import xcorrstat
from conftest import make_scores, to_dataset
from xcorrstat._resampling.draws import permutation_masks

TIE = 1e-12


def _means(a):
    return np.nanmean(a, axis=1)


def _oracle_delta(mx, my, mz, swap):
    """delta' of one swap vector over systems: z-scored means, X and Y swapped where swap is True."""
    zx, zy = stats.zscore(mx), stats.zscore(my)
    xp = np.where(swap, zy, zx)
    yp = np.where(swap, zx, zy)
    return stats.pearsonr(xp, mz)[0] - stats.pearsonr(yp, mz)[0]


@pytest.mark.parametrize("nan_frac", [0.0, 0.15])
@pytest.mark.parametrize("alternative", ["greater", "two-sided"])
def test_draws_and_pvalue_equal_the_oracle(nan_frac, alternative):
    rng = np.random.default_rng(7)
    shape = (9, 12)
    z = rng.normal(size=shape)
    x = z + rng.normal(scale=0.8, size=shape)
    y = z + rng.normal(scale=1.2, size=shape)
    if nan_frac:
        for a in (x, y, z):
            a[rng.random(shape) < nan_frac] = np.nan
    ds = to_dataset(x, y, z)
    n = 300
    res = xcorrstat.permutation_test(ds, x="mx", y="my", target="human", level="system",
                                     test=xcorrstat.Permutation("system", standardise="system-means", n_resamples=n,
                                                                rng=11, keep_distribution=True),
                                     alternative=alternative)
    mx, my, mz = _means(x), _means(y), _means(z)
    delta = stats.pearsonr(mx, mz)[0] - stats.pearsonr(my, mz)[0]
    masks = permutation_masks(11, np.arange(n), shape[0], 1, "system")[:, :, 0]  # whole systems
    draws = np.array([_oracle_delta(mx, my, mz, m) for m in masks])
    np.testing.assert_allclose(float(res["delta"]), delta, rtol=0, atol=1e-12)
    np.testing.assert_allclose(res["distribution"].values, draws, rtol=0, atol=1e-12)
    if alternative == "greater":
        k = np.count_nonzero(draws >= delta - TIE)
    else:
        k = np.count_nonzero(np.abs(draws) >= abs(delta) - TIE)
    assert float(res["pvalue"]) == pytest.approx((1 + k) / (1 + n), abs=1e-15)
    assert res.attrs["standardise"] == "system-means" and res.attrs["scheme"] == "PERM-SYSTEMS"


def test_pvalue_converges_to_the_exact_enumeration():
    """With 6 systems there are 64 swap vectors: the Monte-Carlo p-value estimates their exact share."""
    rng = np.random.default_rng(3)
    shape = (6, 10)
    z = rng.normal(size=shape)
    x = z + rng.normal(scale=0.7, size=shape)
    y = z + rng.normal(scale=1.0, size=shape)
    ds = to_dataset(x, y, z)
    mx, my, mz = _means(x), _means(y), _means(z)
    delta = stats.pearsonr(mx, mz)[0] - stats.pearsonr(my, mz)[0]
    every = [np.array(s, dtype=bool) for s in itertools.product([False, True], repeat=shape[0])]
    exact = np.mean([_oracle_delta(mx, my, mz, s) >= delta - TIE for s in every])
    n = 20_000
    res = xcorrstat.permutation_test(ds, x="mx", y="my", target="human", level="system",
                                     test=xcorrstat.Permutation("system", standardise="system-means", n_resamples=n,
                                                                rng=5, pvalue="fraction"))
    se = np.sqrt(exact * (1 - exact) / n)
    assert abs(float(res["pvalue"]) - exact) < 4 * se + 1e-12


def test_compare_equals_the_two_metric_test_for_every_pair():
    ds = make_scores(n_metrics=4, n_systems=7, n_inputs=9, seed=2, nan_frac=0.1)
    kw = dict(target="human", level="system",
              test=xcorrstat.Permutation("system", standardise="system-means", n_resamples=200, rng=4))
    res = xcorrstat.compare(ds, **kw)
    names = list(res["metric"].values)
    for a in names:
        for b in names:
            if a != b:
                one = xcorrstat.permutation_test(ds, x=a, y=b, **kw)
                assert float(res["pvalue"].sel(metric=a, other_metric=b)) == pytest.approx(float(one["pvalue"]),
                                                                                          abs=1e-12)
    assert res.attrs["standardise"] == "system-means"


def test_on_system_level_tables_both_choices_are_one_test():
    """Data that are already one mean per system: z-scoring cells is z-scoring means."""
    ds = make_scores(n_metrics=2, n_systems=8, n_inputs=1, seed=5)
    table = ds.isel(input=0, drop=True)
    kw = dict(x="m0", y="m1", target="human", level="system")
    draws = dict(n_resamples=300, rng=1, keep_distribution=True)
    a = xcorrstat.permutation_test(table, test=xcorrstat.Permutation("system", standardise="cells", **draws), **kw)
    b = xcorrstat.permutation_test(table, test=xcorrstat.Permutation("system", standardise="system-means", **draws),
                                   **kw)
    np.testing.assert_allclose(a["distribution"].values, b["distribution"].values, rtol=0, atol=1e-12)
    assert float(a["pvalue"]) == float(b["pvalue"])


@pytest.mark.parametrize("kw, match", [
    (dict(level="input", permute="system"), "needs level='system' and permute='system'"),
    (dict(level="system", permute=("system", "input")), "got level='system' and PERM-BOTH"),
    (dict(level="system", permute="system", standardise="means"), "standardise must be one of"),
])
def test_errors_name_the_option(kw, match):
    ds = make_scores(n_metrics=2, seed=1)
    kw = {"standardise": "system-means", **kw}
    level = kw.pop("level")
    with pytest.raises(ValueError, match=match):
        xcorrstat.permutation_test(ds, x="m0", y="m1", target="human", level=level,
                                   test=xcorrstat.Permutation(n_resamples=10, **kw))
    with pytest.raises(ValueError, match=match):
        xcorrstat.compare(ds, target="human", level=level, test=xcorrstat.Permutation(n_resamples=10, **kw))


def test_default_is_unchanged():
    ds = make_scores(n_metrics=2, seed=6)
    kw = dict(x="m0", y="m1", target="human", level="system")
    default = xcorrstat.Permutation(n_resamples=100, rng=2)
    cells = xcorrstat.Permutation(standardise="cells", n_resamples=100, rng=2)
    xr.testing.assert_identical(xcorrstat.permutation_test(ds, test=default, **kw),
                                xcorrstat.permutation_test(ds, test=cells, **kw))
