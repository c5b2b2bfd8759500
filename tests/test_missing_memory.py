"""Missing cells never take a resampling path outside ``memory_budget``.

With missing cells (a metric's own gaps, or the target's) the permutation draws of a pair whose
metrics are missing in different cells take the mask-linear kernels with per-draw validity at
input and global level (Pearson for every pair at once); within-system level and the methods
without such a kernel build the swapped matrices, a block of pairs and draws at a time within
the block budget. At system level every method takes the all-pairs kernel, gaps or not. Checked:

1. the peak RSS of ``compare`` (system and input level, Pearson and Kendall), ``permutation_test``
   and the bootstraps on data with gaps, measured in a fresh interpreter as in
   ``test_memory_budget.py``: within the budget plus a fixed allowance, flat in draws and pairs;
2. the blocked computation gives the numbers of the explicitly swapped matrices (oracle:
   scipy on each draw's swap, masks rebuilt from the seed) and the same numbers at any budget.
"""

from __future__ import annotations

import sys
import textwrap
import warnings

import numpy as np
import pytest
import xarray as xr
from oracles import assert_values_same
from peak_memory import PRELUDE, child_result
from scipy import stats

import xcorrstat
from xcorrstat._resampling.draws import permutation_masks

MiB = 2**20

PEAK_CHILD = PRELUDE + textwrap.dedent(
    """

    def scores(n_metrics, n_systems, n_inputs, seed, gaps):
        rng = np.random.default_rng(seed)
        latent = rng.normal(size=(n_systems, n_inputs))
        data = {}
        for k in range(n_metrics):
            v = latent + rng.normal(size=latent.shape)
            v[rng.random(v.shape) < gaps] = np.nan  # each metric its own gaps
            data[f"m{k:02d}"] = (("system", "input"), v)
        human = latent + rng.normal(size=latent.shape)
        human[rng.random(human.shape) < 0.3] = np.nan
        data["human"] = (("system", "input"), human)
        return xr.Dataset(data)

    def compare(ds, m, n, level, method):
        names = [f"m{k:02d}" for k in range(m)]
        return lambda: xcorrstat.compare(ds, target="human", metrics=names, level=level, method=method,
                                         test=xcorrstat.Permutation(n_resamples=n, rng=0))

    system, inputs = scores(12, 14, 1875, 0, 0.01), scores(6, 10, 800, 1, 0.01)
    one_gap = scores(2, 14, 1875, 2, 0.0)
    one_gap["m00"][3, 5] = np.nan
    out = {}
    with xcorrstat.set_options(memory_budget=int(sys.argv[1])):
        compare(inputs, 3, 20, "input", "pearson")()  # imports, threads and their heaps
        compare(system, 3, 20, "system", "kendall")()
        out["system pearson, 1 pair, one gap"] = growth(compare(one_gap, 2, 1000, "system", "pearson"))
        for m, n in ((6, 500), (12, 1000)):
            for method in ("pearson", "kendall"):
                out[f"system {method}, {m} metrics, {n} draws"] = growth(compare(system, m, n, "system", method))
        for m, n in ((3, 100), (6, 200)):
            out[f"input pearson, {m} metrics, {n} draws"] = growth(compare(inputs, m, n, "input", "pearson"))
        out["input permutation_test"] = growth(lambda: xcorrstat.permutation_test(
            inputs, x="m00", y="m01", target="human", level="input",
            test=xcorrstat.Permutation(n_resamples=300, rng=0)))
        out["bootstrap, system kendall"] = growth(lambda: xcorrstat.bootstrap(
            system, target="human", level="system", method="kendall",
            resample=xcorrstat.Bootstrap(n_resamples=300, rng=0)))
        out["paired bootstrap compare, input"] = growth(lambda: xcorrstat.compare(
            inputs, target="human", level="input", test=xcorrstat.Bootstrap(n_resamples=200, rng=0)))
    print(json.dumps(out))
    """
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the peak RSS of /proc/self/status")
def test_peak_memory_with_missing_cells_stays_within_the_budget():
    budget = 64 * MiB
    growth = child_result(PEAK_CHILD, budget, timeout=900)
    # each run's peak over the RSS before it: the budget plus a fixed allowance (a block's masks, the
    # kernels' fixed operands, the allocator's slack), as for complete data
    assert max(growth.values()) <= budget + 64 * MiB, growth
    # flat in draws and pairs: 6 -> 12 metrics (15 -> 66 pairs) and 500 -> 1,000 draws
    for method in ("pearson", "kendall"):
        small = growth[f"system {method}, 6 metrics, 500 draws"]
        large = growth[f"system {method}, 12 metrics, 1000 draws"]
        # (4.4 times the pairs, twice the draws: a path that grew with them would take hundreds of MiB more; the
        # allocator's and two threads' slack moves a run by a few tens of MiB)
        assert large - small <= budget, growth


# --------------------------------------------------------------------------- #
# The blocked swapped matrices against the oracle, at any budget
# --------------------------------------------------------------------------- #
def zscore(a):
    return (a - np.nanmean(a)) / np.nanstd(a)


def input_level(x, z, method):
    """Mean over inputs of the correlation across systems (scipy, pairwise deletion, NaN left out)."""
    values = []
    for j in range(x.shape[1]):
        ok = ~np.isnan(x[:, j]) & ~np.isnan(z[:, j])
        a, b = x[ok, j], z[ok, j]
        if a.size < 3 or np.all(a == a[0]) or np.all(b == b[0]):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = stats.pearsonr(a, b) if method == "pearson" else stats.kendalltau(a, b)
        values.append(float(res.statistic))
    return np.mean(values) if values else np.nan


def gappy(seed, n_metrics=3, shape=(6, 12)):
    rng = np.random.default_rng(seed)
    base = rng.normal(size=shape)
    data = {}
    for k in range(n_metrics):
        v = base + rng.normal(size=shape)
        v[rng.random(shape) < 0.1] = np.nan
        data[f"m{k}"] = (("system", "input"), v)
    human = base + rng.normal(size=shape)
    human[rng.random(shape) < 0.2] = np.nan
    data["human"] = (("system", "input"), human)
    return xr.Dataset(data)


@pytest.mark.parametrize("method", ["pearson", "kendall"])
def test_blocked_swaps_equal_the_oracle_at_any_budget(method):
    ds = gappy(3)
    opts = dict(target="human", level="input", method=method, common_cells=False,  # each metric's own gaps
                test=xcorrstat.Permutation(n_resamples=60, rng=4, keep_distribution=True))
    runs = {}
    for budget in ("1MiB", "1GiB"):  # 1 MiB: blocks of a few rows and draws
        with xcorrstat.set_options(memory_budget=budget):
            runs[budget] = xcorrstat.compare(ds, **opts)
    np.testing.assert_array_equal(runs["1MiB"]["distribution"].values, runs["1GiB"]["distribution"].values)
    masks = permutation_masks(4, np.arange(6), *ds["human"].shape, "cells")
    z = ds["human"].values
    for a, b in (("m0", "m1"), ("m2", "m0")):
        xs, ys = zscore(ds[a].values), zscore(ds[b].values)
        expected = [input_level(np.where(m, ys, xs), z, method) - input_level(np.where(m, xs, ys), z, method)
                    for m in masks]
        got = runs["1MiB"]["distribution"].sel(metric=a, other_metric=b).values[:6]
        assert_values_same(got, expected, f"{a} vs {b}")
