"""System-level data: one score per system, no input dim.

Every analysis over systems equals scipy on the scores and the same call on the
equivalent one-input grid; levels and resampled dims that need inputs are clear errors.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from scipy import stats

import xcorrstat
from xcorrstat._io import from_dataframe, guess_label_columns, read
from xcorrstat._schema import SYSTEM_LEVEL_INPUT
from xcorrstat._selection import split_scores

N = 9


@pytest.fixture
def table() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    human = rng.normal(size=N)
    return pd.DataFrame({"system": [f"sys{k}" for k in range(N)], "human": human,
                         "good": human + rng.normal(scale=0.5, size=N), "poor": rng.normal(size=N),
                         "team": ["a", "b", "c"] * 3})


@pytest.fixture
def system_ds(table) -> xr.Dataset:
    return from_dataframe(table, input=None, human="human")


@pytest.fixture
def grid_ds(table) -> xr.Dataset:
    """The same scores on a (system, input) grid with one input."""
    return from_dataframe(table.assign(input="only"), human="human")


def test_from_dataframe_system_only(system_ds, table):
    assert system_ds["good"].dims == ("system",)
    assert system_ds.attrs["system_level"] == 1
    assert system_ds["team"].dims == ("system",)  # a text column: a coordinate
    np.testing.assert_array_equal(system_ds["good"].values, table["good"].to_numpy())


def test_read_and_accessor_give_the_same(system_ds, table, tmp_path):
    path = tmp_path / "sys.csv"
    table.to_csv(path, index=False)
    assert guess_label_columns(table.columns, optional_input=True) == ("system", None)
    from_file = read(path, human="human")
    xr.testing.assert_identical(from_file, system_ds)
    xr.testing.assert_identical(table.corrstat.to_dataset(human="human"), system_ds)
    xr.testing.assert_identical(read(path, input=False, human="human"), system_ds)


def test_netcdf_system_only(system_ds, tmp_path):
    path = tmp_path / "sys.nc"
    system_ds.to_netcdf(path)
    assert read(path)["good"].dims == ("system",)


def test_expanded_input_label(system_ds):
    x, z, _ = split_scores(system_ds, target="human", metrics=["good"])
    assert list(x["input"].values) == [SYSTEM_LEVEL_INPUT]
    assert z.sizes == {"system": N, "input": 1}


@pytest.mark.parametrize("method, oracle", [("pearson", stats.pearsonr), ("spearman", stats.spearmanr),
                                            ("kendall", stats.kendalltau)])
def test_correlate_each_method(system_ds, table, method, oracle):
    r = xcorrstat.correlate(system_ds, target="human", level="system", method=method)
    for name in ("good", "poor"):
        expected = oracle(table[name], table["human"])[0]
        assert r.sel(metric=name).item() == pytest.approx(expected, rel=1e-12)
    assert int(r["n"].sel(metric="good")) == N


def test_fisher(system_ds, grid_ds, table):
    out = xcorrstat.fisher(system_ds, target="human", level="system")
    xr.testing.assert_allclose(out, xcorrstat.fisher(grid_ds, target="human", level="system"))
    r = stats.pearsonr(table["good"], table["human"])[0]
    half = stats.norm.ppf(0.975) / np.sqrt(N - 3)  # textbook Fisher z interval
    assert out["low"].sel(metric="good").item() == pytest.approx(np.tanh(np.arctanh(r) - half), rel=1e-9)
    assert out["high"].sel(metric="good").item() == pytest.approx(np.tanh(np.arctanh(r) + half), rel=1e-9)


def test_bootstrap_over_systems(system_ds, grid_ds):
    kw = {"target": "human", "level": "system", "resample": xcorrstat.Bootstrap("system", n_resamples=200, rng=4)}
    xr.testing.assert_allclose(xcorrstat.bootstrap(system_ds, **kw), xcorrstat.bootstrap(grid_ds, **kw))


def test_williams(system_ds, grid_ds, table):
    out = xcorrstat.williams_test(system_ds, target="human", x="good", y="poor", level="system")
    xr.testing.assert_allclose(out, xcorrstat.williams_test(grid_ds, target="human", x="good", y="poor",
                                                            level="system"))
    assert out["r_xy"].item() == pytest.approx(stats.pearsonr(table["good"], table["poor"])[0], rel=1e-12)


def test_permutation_over_systems(system_ds, grid_ds):
    kw = {"target": "human", "x": "good", "y": "poor", "level": "system",
          "test": xcorrstat.Permutation("system", n_resamples=200, rng=1)}
    xr.testing.assert_allclose(xcorrstat.permutation_test(system_ds, **kw),
                               xcorrstat.permutation_test(grid_ds, **kw))


@pytest.mark.parametrize("test", ["permutation", "bootstrap", "williams"])
def test_compare(system_ds, grid_ds, test):
    settings = {"permutation": xcorrstat.Permutation("system", n_resamples=100, rng=2),
                "bootstrap": xcorrstat.Bootstrap("system", n_resamples=100, rng=2), "williams": "williams"}
    kw = {"target": "human", "level": "system", "test": settings[test]}
    xr.testing.assert_allclose(xcorrstat.compare(system_ds, **kw), xcorrstat.compare(grid_ds, **kw))


@pytest.mark.parametrize("level", ["input", "global", "within_system", ["system", "input"]])
def test_levels_that_need_inputs(system_ds, level):
    with pytest.raises(ValueError, match=r"the data hold system-level scores only.*use level='system'"):
        xcorrstat.correlate(system_ds, target="human", level=level)


def test_resampling_inputs_is_refused(system_ds):
    with pytest.raises(ValueError, match=r"resampling/permuting along .*system-level scores only.*"
                                         r"resample='system' / permute='system'"):
        split_scores(system_ds, target="human", level="system", along="input")


CALLS_ALONG_INPUT = {
    "bootstrap": lambda ds: xcorrstat.bootstrap(ds, target="human",
                                                resample=xcorrstat.Bootstrap("input", n_resamples=10)),
    "paired_bootstrap_test": lambda ds: xcorrstat.paired_bootstrap_test(
        ds, x="good", y="poor", target="human", test=xcorrstat.Bootstrap("input", n_resamples=10)),
    "permutation_test": lambda ds: xcorrstat.permutation_test(
        ds, x="good", y="poor", target="human", test=xcorrstat.Permutation("input", n_resamples=10)),
    "compare-permutation": lambda ds: xcorrstat.compare(ds, target="human",
                                                        test=xcorrstat.Permutation("input", n_resamples=10)),
    "compare-bootstrap": lambda ds: xcorrstat.compare(ds, target="human",
                                                      test=xcorrstat.Bootstrap("input", n_resamples=10)),
}


@pytest.mark.parametrize("call", list(CALLS_ALONG_INPUT))
def test_public_calls_refuse_inputs_alone(system_ds, call):
    # drawing the one input alone would give every draw the observed value: a zero-width interval
    with pytest.raises(ValueError, match=r"along \('input',\): the data hold system-level scores only"):
        CALLS_ALONG_INPUT[call](system_ds)


def test_both_dims_equal_systems_alone(system_ds):
    # the one input is drawn with its system: BOOT-BOTH is BOOT-SYSTEMS, draw for draw
    both = xcorrstat.bootstrap(system_ds, target="human",
                               resample=xcorrstat.Bootstrap(("system", "input"), n_resamples=50, rng=3,
                                                            keep_distribution=True))
    alone = xcorrstat.bootstrap(system_ds, target="human",
                                resample=xcorrstat.Bootstrap("system", n_resamples=50, rng=3, keep_distribution=True))
    assert np.array_equal(both["distribution"].values, alone["distribution"].values, equal_nan=True)


def test_bootstrap_input_level_refused(system_ds):
    with pytest.raises(ValueError, match="level='input': the data hold system-level scores only"):
        xcorrstat.bootstrap(system_ds, target="human", level="input",
                            resample=xcorrstat.Bootstrap("system", n_resamples=10))


def test_extra_dim_system_level(table):
    long = pd.concat([table.assign(lp="en-de"), table.assign(lp="zh-en", good=table["good"] * 2)])
    ds = from_dataframe(long, input=None, dims=["lp"])
    assert ds["good"].dims == ("system", "lp")
    r = xcorrstat.correlate(ds, target="human", level="system", method="spearman")
    expected = stats.spearmanr(table["good"], table["human"])[0]
    np.testing.assert_allclose(r.sel(metric="good").values, [expected, expected], rtol=1e-12)
