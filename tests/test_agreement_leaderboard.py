"""Leaderboards and their agreement against pandas, scipy.stats.kendalltau and explicit resamples.

The oracles build each leaderboard with pandas (``DataFrame.mean`` / ``DataFrame.rank``),
compare position vectors with ``scipy.stats.kendalltau(variant="b")``, and expand
every bootstrap draw explicitly by indexing the conditions with the same indices
(``bootstrap_indices(seed, arange(n_resamples), [n_conditions])``).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from scipy import stats

import xcorrstat
from xcorrstat.agreement import leaderboard, leaderboard_agreement, synthetic_benchmark
from xcorrstat._resampling.draws import bootstrap_indices

ATOL = 1e-12


def oracle_leaderboard(table, *, rank=False, missing="complete", higher_is_better=True):
    """(score, position, n_conditions) of a (competitor, condition) table, with pandas."""
    df = pd.DataFrame(table)
    if missing == "complete":
        df = df.loc[:, df.notna().all(axis=0)]
    if rank:
        df = df.rank(axis=0, ascending=not higher_is_better, method="average")
    score = df.mean(axis=1)
    position = score.rank(ascending=rank or not higher_is_better, method="average")
    return score.to_numpy(), position.to_numpy(), df.notna().sum(axis=1).to_numpy()


def oracle_tau(p, q, min_pairs=3):
    valid = ~np.isnan(p) & ~np.isnan(q)
    if valid.sum() < min_pairs:
        return np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return stats.kendalltau(p[valid], q[valid], variant="b").statistic


def oracle_tau_matrix(tables, min_pairs=3, **rules):
    """tables: (L, K, C) -> (L, L) Kendall tau-b between the L leaderboards' positions."""
    positions = [oracle_leaderboard(t, **rules)[1] for t in tables]
    n = len(positions)
    return np.array([[oracle_tau(positions[i], positions[j], min_pairs) for j in range(n)] for i in range(n)])


def random_scores(g, *, n_lb, n_comp, n_cond, ties, nan_frac):
    shape = (n_lb, n_comp, n_cond)
    v = g.integers(0, 5, size=shape).astype(float) if ties else g.normal(size=shape)
    v[g.random(shape) < nan_frac] = np.nan
    return xr.DataArray(v, dims=("setting", "strategy", "dataset"),
                        coords={"setting": [f"v{k}" for k in range(n_lb)],
                                "strategy": [f"s{k}" for k in range(n_comp)],
                                "dataset": [f"d{k}" for k in range(n_cond)]}, name="score")


def rules_for(seed):
    return dict(rank=seed % 2 == 1, missing=["complete", "available"][(seed // 2) % 2],
                higher_is_better=seed % 7 != 0)


@pytest.mark.parametrize("seed", range(40))
def test_leaderboard_equals_pandas(seed):
    g = np.random.default_rng(seed)
    da = random_scores(g, n_lb=2, n_comp=int(g.integers(2, 8)), n_cond=int(g.integers(1, 7)),
                       ties=seed % 3 == 0, nan_frac=[0.0, 0.15, 0.35][seed % 3])
    rules = rules_for(seed)
    lb = leaderboard(da, competitor="strategy", condition="dataset", **rules)
    for k in range(da.sizes["setting"]):
        score, position, count = oracle_leaderboard(da.values[k], **rules)
        np.testing.assert_allclose(lb["score"].isel(setting=k).values, score, rtol=0, atol=ATOL)
        np.testing.assert_array_equal(lb["position"].isel(setting=k).values, position)
        np.testing.assert_array_equal(lb["n_conditions"].isel(setting=k).values, count)


@pytest.mark.parametrize("seed", range(40))
def test_tau_equals_scipy_kendalltau_on_positions(seed):
    g = np.random.default_rng(100 + seed)
    da = random_scores(g, n_lb=int(g.integers(2, 4)), n_comp=int(g.integers(2, 9)), n_cond=int(g.integers(2, 7)),
                       ties=seed % 3 == 0, nan_frac=[0.0, 0.1, 0.25][seed % 3])
    rules = rules_for(seed)
    res = leaderboard_agreement(da, competitor="strategy", condition="dataset", between="setting",
                                n_resamples=None, **rules)
    expected = oracle_tau_matrix(da.values, **rules)
    np.testing.assert_allclose(res["tau"].values, expected, rtol=0, atol=ATOL)
    assert res["tau"].dims == ("setting", "other_setting")
    assert "low" not in res and "rng" not in res.attrs


@pytest.mark.parametrize("seed", range(12))
def test_bootstrap_draws_equal_explicitly_resampled_conditions(seed):
    g = np.random.default_rng(200 + seed)
    n_cond = int(g.integers(3, 8))
    da = random_scores(g, n_lb=int(g.integers(2, 4)), n_comp=int(g.integers(3, 7)), n_cond=n_cond,
                       ties=seed % 3 == 0, nan_frac=[0.0, 0.1][seed % 2])
    rules = rules_for(seed)
    n_resamples = 40
    with xcorrstat.set_options(batch=7):
        res = leaderboard_agreement(da, competitor="strategy", condition="dataset", between="setting",
                                    n_resamples=n_resamples, rng=seed, keep_distribution=True, **rules)
    (idx,) = bootstrap_indices(seed, np.arange(n_resamples), [n_cond])
    expected = np.stack([oracle_tau_matrix(da.values[:, :, idx[b]], **rules) for b in range(n_resamples)], axis=-1)
    got = res["distribution"].transpose("setting", "other_setting", "resample").values
    np.testing.assert_allclose(got, expected, rtol=0, atol=ATOL)
    # the interval: percentiles of the defined draws; undefined draws counted
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        low = np.nanpercentile(expected, 2.5, axis=-1)
        high = np.nanpercentile(expected, 97.5, axis=-1)
    np.testing.assert_allclose(res["low"].values, low, rtol=0, atol=ATOL)
    np.testing.assert_allclose(res["high"].values, high, rtol=0, atol=ATOL)
    np.testing.assert_array_equal(res["n_undefined"].values, np.isnan(expected).sum(axis=-1))
    assert res.attrs["rng"] == seed and res.attrs["n_resamples"] == n_resamples


def test_draws_do_not_depend_on_batch_or_dask():
    da = random_scores(np.random.default_rng(5), n_lb=3, n_comp=6, n_cond=5, ties=False, nan_frac=0.1)
    kw = dict(competitor="strategy", condition="dataset", between="setting", n_resamples=300, rng=11,
              keep_distribution=True)
    with xcorrstat.set_options(batch=300):
        one = leaderboard_agreement(da, **kw)
    with xcorrstat.set_options(batch=17):
        many = leaderboard_agreement(da, **kw)
    with xcorrstat.set_options(batch=64):
        lazy = leaderboard_agreement(da.chunk({"setting": 1}), **kw)
        assert lazy["distribution"].chunks is not None
        lazy = lazy.compute()
    for other in (many, lazy):
        np.testing.assert_array_equal(one["distribution"].values, other["distribution"].values)
        np.testing.assert_array_equal(one["low"].values, other["low"].values)
        np.testing.assert_array_equal(one["tau"].values, other["tau"].values)


def test_rng_generator_records_a_reusable_seed():
    da = random_scores(np.random.default_rng(6), n_lb=2, n_comp=5, n_cond=6, ties=False, nan_frac=0.0)
    kw = dict(competitor="strategy", condition="dataset", between="setting", n_resamples=50, keep_distribution=True)
    first = leaderboard_agreement(da, rng=np.random.default_rng(1), **kw)
    again = leaderboard_agreement(da, rng=first.attrs["rng"], **kw)
    np.testing.assert_array_equal(first["distribution"].values, again["distribution"].values)


def test_batch_dims_and_variable_list():
    bench = synthetic_benchmark(rng=1, n_missing=3)
    res = leaderboard_agreement(bench, var=["accuracy", "auc"], competitor="strategy", condition="dataset",
                                n_resamples=20, rng=0)
    assert set(res["tau"].dims) == {"batch_size", "variable", "other_variable"}
    assert res.attrs["between"] == "variable" and res.attrs["variable"] == ["accuracy", "auc"]
    for b in bench["batch_size"].values:
        tables = np.stack([bench["accuracy"].sel(batch_size=b).values, bench["auc"].sel(batch_size=b).values])
        np.testing.assert_allclose(res["tau"].sel(batch_size=b).transpose("variable", "other_variable").values,
                                   oracle_tau_matrix(tables), rtol=0, atol=ATOL)


def test_missing_rules_on_a_small_table():
    # strategy c has no score on d1: "complete" drops d1 for everyone, "available" keeps it for a and b
    table = np.array([[3.0, 1.0], [2.0, 9.0], [1.0, np.nan]])
    da = xr.DataArray(table, dims=("strategy", "dataset"), coords={"strategy": ["a", "b", "c"]})
    complete = leaderboard(da, competitor="strategy", condition="dataset")
    assert complete["score"].values.tolist() == [3.0, 2.0, 1.0]
    assert complete["position"].values.tolist() == [1.0, 2.0, 3.0]
    assert complete["n_conditions"].values.tolist() == [1, 1, 1]
    available = leaderboard(da, competitor="strategy", condition="dataset", missing="available")
    assert available["score"].values.tolist() == [2.0, 5.5, 1.0]
    assert available["position"].values.tolist() == [2.0, 1.0, 3.0]
    ranked = leaderboard(da, competitor="strategy", condition="dataset", rank=True, missing="available")
    assert ranked["score"].values.tolist() == [1.5, 1.5, 3.0]  # d1 ranks b first among a, b
    assert ranked["position"].values.tolist() == [1.5, 1.5, 3.0]
    lower = leaderboard(da, competitor="strategy", condition="dataset", higher_is_better=False)
    assert lower["position"].values.tolist() == [3.0, 2.0, 1.0]


def test_no_complete_condition_gives_nan():
    table = np.array([[np.nan, 1.0], [2.0, np.nan], [1.0, 3.0]])
    da = xr.DataArray(table, dims=("strategy", "dataset"))
    lb = leaderboard(da, competitor="strategy", condition="dataset")
    assert np.isnan(lb["score"].values).all() and np.isnan(lb["position"].values).all()


@pytest.mark.parametrize(
    "kwargs,error,match",
    [
        (dict(competitor="strategy", condition="strategy", between="setting"), ValueError, "must be different"),
        (dict(competitor="strategy", condition="dataset", between="dataset"), ValueError, "between must differ"),
        (dict(competitor="strategy", condition="dataset", between="nope"), ValueError, "between must name a dim"),
        (dict(competitor="strategy", condition="dataset", between="setting", missing="drop"), ValueError,
         "missing must be one of"),
        (dict(competitor="strategy", condition="dataset", between="setting", rank="yes"), TypeError,
         "rank must be True or False"),
        (dict(competitor="strategy", condition="dataset", between="setting", n_resamples=0), ValueError,
         "n_resamples must be a positive integer"),
        (dict(competitor="strategy", condition="dataset", between="setting", confidence_level=95), ValueError,
         "confidence_level"),
        (dict(competitor="strategy", condition="dataset", between="setting", rng="x"), TypeError, "rng must be"),
    ],
)
def test_errors_name_the_argument(kwargs, error, match):
    da = random_scores(np.random.default_rng(0), n_lb=2, n_comp=3, n_cond=3, ties=False, nan_frac=0.0)
    with pytest.raises(error, match=match):
        leaderboard_agreement(da, **kwargs)
