"""System-level draws over many systems: the rank statistics of each draw's S means by sorting.

Over more than ``SORTED_MIN_UNITS`` systems, weighted Kendall counts and weighted mid-ranks come
from sorting (:mod:`xcorrstat._kernels.rank.sorted_counts`) instead of every pair of systems. Checked here:

1. the sorting form's counts and statistics equal the pair form's bit for bit (the threshold raised
   so the same rows take the pair form), for random data with ties, NaN, zero weights and epsilon
   ties, every Kendall variant and Spearman;
2. both equal scipy on the explicitly expanded resample (``np.repeat`` by the weights);
3. bootstrap draws over many systems equal the statistic of the explicitly resampled matrices, and do
   not depend on the memory budget or the batch;
4. permutation draws over many systems equal the pair form's and the explicitly swapped matrices';
5. the draw estimate is linear in the systems, and a bootstrap over thousands of systems stays within
   its memory budget.
"""

from __future__ import annotations

import sys
import textwrap

import numpy as np
import pytest
import scipy.stats as st
import xarray as xr
from oracles import exact_integer_scores
from peak_memory import PRELUDE, child_result

import xcorrstat
from xcorrstat._kernels.rank import sorted_counts as wrank_sorted
from xcorrstat._kernels.linear.system_swap import system_swap_deltas
from xcorrstat._kernels.rank.system_swap import system_statistic
from xcorrstat._kernels.weighted import wcorr
from xcorrstat._kernels.rank.sorted_counts import SORTED_MIN_UNITS, sorted_form, sorted_kendall_counts, sorted_midranks
from xcorrstat._resampling.draws import bootstrap_indices, permutation_masks
from xcorrstat._resampling.engine import draw_elems
from xcorrstat._resampling.statistics import resampled_level_correlation

VARIANTS = ["a", "b", "c", "23", "acc23"]
MANY = SORTED_MIN_UNITS + 37  # rows that take the sorting form
MiB = 1 << 20


@pytest.fixture
def pair_form(monkeypatch):
    """Every row takes the pair form while the fixture is active."""
    monkeypatch.setattr(wrank_sorted, "SORTED_MIN_UNITS", 10 ** 9)


def rows(seed, n_rows=12, length=MANY, nan_frac=0.08):
    """Rows with many ties (a few values) and missing entries, and integer weights with zeros."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 7, (n_rows, length)) * 0.1
    z = rng.integers(0, 5, (n_rows, length)).astype(np.float64)
    x[rng.random(x.shape) < nan_frac] = np.nan
    z[rng.random(z.shape) < nan_frac] = np.nan
    w = rng.multinomial(length, np.ones(length) / length, size=n_rows).astype(np.float64)  # bootstrap counts
    w[0] = 1.0  # one row unweighted
    w[1, : length // 2] = 0.0
    return x, z, w


def same(a, b):
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


# --------------------------------------------------------------------------- #
# 1. The sorting form equals the pair form, bit for bit
# --------------------------------------------------------------------------- #
def test_the_form_depends_on_the_length_alone():
    assert not sorted_form(SORTED_MIN_UNITS) and sorted_form(SORTED_MIN_UNITS + 1)


@pytest.mark.parametrize("epsilon", [0.0, 0.1, 0.25])
@pytest.mark.parametrize("variant", VARIANTS)
def test_weighted_kendall_by_sorting_equals_the_pair_form(variant, epsilon, monkeypatch):
    x, z, w = rows(1)
    fast = wcorr(x, z, w, method="kendall", variant=variant, epsilon=epsilon)
    monkeypatch.setattr(wrank_sorted, "SORTED_MIN_UNITS", 10 ** 9)
    slow = wcorr(x, z, w, method="kendall", variant=variant, epsilon=epsilon)
    same(fast[0], slow[0])
    same(fast[1], slow[1])
    assert np.isfinite(fast[0]).sum() >= 10


def test_weighted_spearman_by_sorting_equals_the_pair_form(monkeypatch):
    x, z, w = rows(2)
    fast = wcorr(x, z, w, method="spearman")
    monkeypatch.setattr(wrank_sorted, "SORTED_MIN_UNITS", 10 ** 9)
    slow = wcorr(x, z, w, method="spearman")
    same(fast[0], slow[0])
    assert np.isfinite(fast[0]).all()


def test_counts_by_sorting_are_the_counts_of_every_pair():
    """Each count against a double loop over the pairs of distinct units, weights as multiplicities."""
    rng = np.random.default_rng(3)
    for trial in range(60):
        length = int(rng.integers(1, 30))
        x = rng.integers(0, 4, length) * 0.1
        z = rng.integers(0, 3, length).astype(np.float64)
        x[rng.random(length) < 0.15] = np.nan
        w = rng.integers(0, 3, length).astype(np.float64)
        epsilon = [0.0, 0.1, 0.2][trial % 3]
        want = np.zeros(5)
        for a in range(length):
            for b in range(a + 1, length):
                if np.isnan(x[a]) or np.isnan(x[b]) or np.isnan(z[a]):
                    continue
                pw, dx, dz = w[a] * w[b], x[a] - x[b], z[a] - z[b]
                tie = abs(dx) <= epsilon
                want += pw * np.array([0.0 if tie else np.sign(dx) * np.sign(dz), dx == 0, tie, dz == 0,
                                       tie and dz == 0])
        got = sorted_kendall_counts(x, z, w, epsilon)
        same([float(g) for g in got[:5]], want)
        drawn = (w > 0) & ~np.isnan(x)
        assert int(got[5]) == min(np.unique(x[drawn]).size, np.unique(z[drawn]).size)


def test_midranks_are_the_ranks_of_the_expanded_row():
    x, _, w = rows(4, n_rows=5)
    ranks = sorted_midranks(x, w)
    for r in range(5):
        keep = ~np.isnan(x[r]) & (w[r] > 0)
        expanded = np.repeat(x[r, keep], w[r, keep].astype(int))
        ranked = st.rankdata(expanded)
        first = np.concatenate([[0], np.cumsum(w[r, keep].astype(int))[:-1]])
        same(ranks[r, keep], ranked[first])
        same(ranks[r, np.isnan(x[r])], 0.5)


# --------------------------------------------------------------------------- #
# 2. scipy on the explicitly expanded resample
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("method, variant", [("kendall", "b"), ("kendall", "c"), ("spearman", "b")])
def test_weighted_statistics_equal_scipy_on_the_expanded_rows(method, variant):
    x, z, w = rows(5)
    r, n = wcorr(x, z, w, method=method, variant=variant)
    for k in range(x.shape[0]):
        keep = ~np.isnan(x[k]) & ~np.isnan(z[k]) & (w[k] > 0)
        xe, ze = (np.repeat(a[k, keep], w[k, keep].astype(int)) for a in (x, z))
        want = st.spearmanr(xe, ze)[0] if method == "spearman" else st.kendalltau(xe, ze, variant=variant)[0]
        assert n[k] == xe.size
        np.testing.assert_allclose(r[k], want, rtol=0, atol=1e-12)


# --------------------------------------------------------------------------- #
# 3. Bootstrap draws over many systems
# --------------------------------------------------------------------------- #
def integer_scores(seed, n_sys=MANY, n_inp=4, n_metrics=3, nan_frac=0.05):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 6, (n_metrics, n_sys, n_inp)).astype(np.float64)
    z = rng.integers(0, 6, (n_sys, n_inp)).astype(np.float64)
    x[rng.random(x.shape) < nan_frac] = np.nan
    z[rng.random(z.shape) < nan_frac] = np.nan
    return x, z


def expanded_system_statistic(x, z, sys_idx, inp_idx, method, variant):
    """The system means of the explicitly resampled matrices, correlated by scipy."""
    out = []
    for rows_, cols in zip(sys_idx, inp_idx):
        xs, zs = x[rows_][:, cols], z[rows_][:, cols]
        valid = ~np.isnan(xs) & ~np.isnan(zs)
        count = valid.sum(axis=1)
        keep = count > 0
        mx = np.where(valid, xs, 0.0).sum(axis=1)[keep] / count[keep]
        mz = np.where(valid, zs, 0.0).sum(axis=1)[keep] / count[keep]
        a, b = mx, mz
        out.append(st.spearmanr(a, b)[0] if method == "spearman" else st.kendalltau(a, b, variant=variant)[0])
    return np.array(out)


@pytest.mark.parametrize("method, variant", [("kendall", "b"), ("kendall", "c"), ("spearman", "b")])
@pytest.mark.parametrize("scheme", ["both", "systems"])
def test_bootstrap_draws_equal_the_expanded_resample(method, variant, scheme):
    x, z = integer_scores(6)
    s, i = z.shape
    b = 6
    sys_idx, inp_idx = bootstrap_indices(11, np.arange(b), [s, i])
    inp_idx = inp_idx if scheme == "both" else None
    r, _ = resampled_level_correlation(x, z, level="system", method=method, variant=variant, sys_idx=sys_idx,
                                       inp_idx=inp_idx)
    cols = inp_idx if inp_idx is not None else np.broadcast_to(np.arange(i), (b, i))
    for m in range(x.shape[0]):
        want = expanded_system_statistic(x[m], z, sys_idx, cols, method, variant)
        np.testing.assert_allclose(r[m], want, rtol=0, atol=1e-12)


@pytest.mark.parametrize("complete_inputs", [False, True])
@pytest.mark.parametrize("method, variant", [*(("kendall", v) for v in VARIANTS), ("spearman", "b")])
def test_bootstrap_draws_by_sorting_equal_the_pair_form(method, variant, complete_inputs, monkeypatch):
    x, z = integer_scores(7, nan_frac=0.0)
    x[:, :3, 1], z[4, 2] = np.nan, np.nan  # a few systems' gaps: complete inputs depend on the drawn systems
    sys_idx, inp_idx = bootstrap_indices(1, np.arange(5), list(z.shape))
    kw = dict(level="system", method=method, variant=variant, sys_idx=sys_idx, inp_idx=inp_idx,
              complete_inputs=complete_inputs)
    fast = resampled_level_correlation(x, z, **kw)[0]
    fixed = resampled_level_correlation(x, z, **dict(kw, inp_idx=None))[0]
    assert np.isfinite(fast).mean() > 0.5 and np.isfinite(fixed).mean() > 0.5
    monkeypatch.setattr(wrank_sorted, "SORTED_MIN_UNITS", 10 ** 9)
    same(fast, resampled_level_correlation(x, z, **kw)[0])
    same(fixed, resampled_level_correlation(x, z, **dict(kw, inp_idx=None))[0])


def dataset(x, z):
    dims = ("system", "input")
    data = {f"m{k}": (dims, x[k]) for k in range(x.shape[0])}
    data["human"] = (dims, z)
    ds = xr.Dataset(data, coords={"system": [f"S{s}" for s in range(z.shape[0])],
                                  "input": [f"d{j}" for j in range(z.shape[1])]})
    ds["human"].attrs["role"] = "human"
    return ds


@pytest.mark.parametrize("method", ["kendall", "spearman"])
def test_bootstrap_over_many_systems_does_not_depend_on_budget_or_batch(method):
    ds = dataset(*integer_scores(8, n_sys=400, n_inp=5))
    resample = xcorrstat.Bootstrap(("system", "input"), n_resamples=40, rng=0, keep_distribution=True)
    runs = []
    for options in ({"memory_budget": "16MiB"}, {"memory_budget": "4GiB"}, {"batch": 3}, {"batch": 17}):
        with xcorrstat.set_options(**options):
            runs.append(xcorrstat.bootstrap(ds, target="human", level="system", method=method, resample=resample))
    names = [v for v in runs[0].data_vars if "resample" in runs[0][v].dims]
    assert names, list(runs[0].data_vars)
    for other in runs[1:]:
        for name in ["correlation", "low", "high", *names]:
            same(runs[0][name].values, other[name].values)


def test_the_draw_estimate_is_linear_in_the_systems():
    small, large = draw_elems(2, 1_000, 3, "system", "kendall"), draw_elems(2, 10_000, 3, "system", "kendall")
    assert large < 11 * small and large < 2_000_000
    assert draw_elems(2, 15, 3, "system", "kendall") == 2 * (4 * 15 * 15 + 2 * 15) + 3  # the pair form's


MANY_CHILD = PRELUDE + textwrap.dedent(
    """
    budget = int(sys.argv[1])
    rng = np.random.default_rng(0)
    dims = ("system", "input")
    shape = (5000, 3)
    ds = xr.Dataset({k: (dims, rng.integers(0, 50, shape).astype(float)) for k in ("m0", "m1", "human")})
    ds["human"].attrs["role"] = "human"

    def run(data=ds):
        with xcorrstat.set_options(memory_budget=budget):
            xcorrstat.bootstrap(data, target="human", level="system", method="kendall",
                                resample=xcorrstat.Bootstrap(("system", "input"), n_resamples=200, rng=0))

    run(ds.isel(system=slice(100)))  # numba and the compiled loops loaded first: not the draws' memory
    print(json.dumps({"growth": growth(run)}))
    """
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the peak RSS of /proc/self/status")
def test_bootstrap_over_thousands_of_systems_stays_within_the_budget():
    budget = 64 * MiB
    growth = child_result(MANY_CHILD, budget)["growth"]
    assert growth <= budget + 64 * MiB, growth / MiB  # the pair form would hold 5000^2 / 2 pairs a draw


# --------------------------------------------------------------------------- #
# 4. Permutation draws over many systems
# --------------------------------------------------------------------------- #
def zscore(a):
    return (a - np.nanmean(a)) / np.nanstd(a)


def swapped_statistic(x, z, mask, method, variant):
    """delta of the explicitly swapped (standardised) metrics' system means, by scipy."""
    out = []
    a, b = zscore(x[0]), zscore(x[1])
    for m in mask:
        values = []
        for xs in (np.where(m, b, a), np.where(m, a, b)):
            valid = ~np.isnan(xs) & ~np.isnan(z)
            count = valid.sum(axis=1)
            keep = count > 0
            mx = (np.where(valid, xs, 0.0).sum(axis=1) / np.maximum(count, 1))[keep]
            mz = (np.where(valid, z, 0.0).sum(axis=1) / np.maximum(count, 1))[keep]
            values.append(st.spearmanr(mx, mz)[0] if method == "spearman"
                          else st.kendalltau(mx, mz, variant=variant)[0])
        out.append(values[0] - values[1])
    return np.array(out)


@pytest.mark.parametrize("method, variant", [("kendall", "b"), ("kendall", "c"), ("kendall", "a"),
                                             ("spearman", "b")])
def test_permutation_draws_over_many_systems(method, variant, monkeypatch):
    rng = np.random.default_rng(9)  # z-scores (v - 3) / 2 exact: the explicit swap's means tie as the kernel's
    x = np.stack([exact_integer_scores(rng, (MANY, 4), 0.05) for _ in range(2)])
    z = integer_scores(10, n_metrics=1)[1]
    masks = permutation_masks(5, np.arange(6), *z.shape, "cells")
    fast = system_swap_deltas(x, z, masks, ([0], [1]), method=method, variant=variant)
    if variant != "a":  # tau-a: pairs counted explicitly elsewhere (tests/test_system_rank_fast.py)
        np.testing.assert_allclose(fast[0], swapped_statistic(x, z, masks, method, variant), rtol=0, atol=1e-12)
    monkeypatch.setattr(wrank_sorted, "SORTED_MIN_UNITS", 10 ** 9)
    same(fast, system_swap_deltas(x, z, masks, ([0], [1]), method=method, variant=variant))


def test_system_statistic_by_sorting_equals_counting():
    x, z, _ = rows(10, n_rows=8)
    fast = system_statistic(x, z, method="spearman", variant="b", min_pairs=3)
    assert np.isfinite(fast).all()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(wrank_sorted, "SORTED_MIN_UNITS", 10 ** 9)
        same(fast, system_statistic(x, z, method="spearman", variant="b", min_pairs=3))
