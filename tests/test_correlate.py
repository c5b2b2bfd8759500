"""The labelled API: input forms, batch dims, Dask laziness, multiple targets, errors."""

import dask
import dask.array as dsa
import numpy as np
import pandas as pd
import pytest
import xarray as xr

import xcorrstat
from xcorrstat._kernels import level_correlation
from conftest import make_scores

LEVELS = ["system", "input", "global"]
METHODS = ["pearson", "spearman", "kendall"]
METRICS = ["m0", "m1", "m2", "m3"]


def _all(data, **kw):
    return xcorrstat.correlate(data, target="human", level=LEVELS, method=METHODS, **kw)


@pytest.fixture
def ds():
    return make_scores(nan_frac=0.15, ties=True, seed=3)


def test_result_is_labelled_with_attrs(ds):
    r = ds.corrstat.correlate(target="human", level="input", method="kendall", variant="c")
    assert r.dims == ("metric",)
    assert list(r["metric"].values) == METRICS
    assert r.name == "correlation"
    assert r.attrs["level"] == "input" and r.attrs["method"] == "kendall" and r.attrs["variant"] == "c"
    assert r.attrs["target"] == "human"
    assert r["n"].dtype == np.int64 and r["n"].dims == ("metric",)


def test_matches_kernel_per_metric(ds):
    r = _all(ds)
    z = ds["human"].values
    for lev in LEVELS:
        for meth in METHODS:
            for m in METRICS:
                expected, n = level_correlation(ds[m].values, z, level=lev, method=meth)
                got = r.sel(level=lev, coefficient=meth, metric=m)
                np.testing.assert_allclose(float(got), expected, rtol=0, atol=0)
                assert int(got["n"]) == int(n)


def test_input_forms_agree(ds):
    expected = _all(ds)
    df = ds.to_dataframe().reset_index()
    from_df = _all(xcorrstat.from_dataframe(df))
    via_df_accessor = df.corrstat.correlate(target="human", level=LEVELS, method=METHODS)
    da = ds[METRICS + ["human"]].to_array("metric")
    from_da = _all(da)
    from_da_ds = _all(da.to_dataset(name="score"))
    for other in (from_df, via_df_accessor, from_da, from_da_ds):
        xr.testing.assert_identical(other.reset_coords("n"), expected.reset_coords("n"))


def test_dask_is_lazy_and_equal(ds):
    expected = _all(ds)
    da = ds[METRICS + ["human"]].to_array("metric").chunk({"metric": 2, "input": 3})

    def refuse(*args, **kwargs):
        raise AssertionError("computed before .compute()")

    with dask.config.set(scheduler=refuse):
        lazy = _all(da)
        lazy_ds = _all(ds.chunk({"input": 4}))
    assert isinstance(lazy.data, dsa.Array) and isinstance(lazy["n"].data, dsa.Array)
    assert isinstance(lazy_ds.data, dsa.Array)
    for result in (lazy, lazy_ds):
        computed = result.compute(scheduler="threads")
        xr.testing.assert_allclose(computed.reset_coords("n"), expected.reset_coords("n"), rtol=0, atol=1e-15)


def test_extra_dims_are_batch_dims():
    ds = make_scores(extra=("lp", 3), nan_frac=0.1, seed=5)
    r = _all(ds)
    assert set(r.dims) == {"level", "coefficient", "metric", "lp"}
    for lp in ds["lp"].values:
        one = _all(ds.sel(lp=lp))
        xr.testing.assert_identical(r.sel(lp=lp), one)


def test_target_broadcasts_over_extra_dim():
    ds = make_scores(extra=("lp", 2), seed=2)
    ds["human"] = ds["human"].isel(lp=0, drop=True)
    r = ds.corrstat.correlate(target="human", level="global")
    assert set(r.dims) == {"metric", "lp"}


def test_several_targets_add_target_dim(summeval):
    r = summeval.corrstat.correlate(target=["expert_relevance", "expert_coherence"], level="system")
    assert r.dims == ("metric", "target") or set(r.dims) == {"metric", "target"}
    one = summeval.corrstat.correlate(target="expert_coherence", level="system")
    np.testing.assert_array_equal(r.sel(target="expert_coherence").transpose("metric").values, one.values)
    assert "expert_relevance" not in r["metric"].values


def test_metrics_subset_and_order(ds):
    r = ds.corrstat.correlate(target="human", metrics=["m2", "m0"])
    assert list(r["metric"].values) == ["m2", "m0"]


def test_undefined_is_nan_never_zero():
    ds = make_scores(n_systems=4, n_inputs=3, seed=1)
    ds["m0"][:] = 1.0  # constant metric
    ds["m1"][:] = np.nan  # nothing observed
    r = _all(ds)
    assert bool(r.sel(metric=["m0", "m1"]).isnull().all())
    assert int(r["n"].sel(metric="m1", level="input", coefficient="pearson")) == 0
    assert int(r["n"].sel(metric="m1", level="global", coefficient="pearson")) == 0


def test_skipna_false_propagates_missing(ds):
    r = ds.corrstat.correlate(target="human", level="system", skipna=False)
    assert bool(r.isnull().all())


def test_complete_inputs_option():
    ds = make_scores(n_systems=5, n_inputs=6, seed=4)
    ds["m0"][0, 0] = np.nan
    r = ds.corrstat.correlate(target="human", level="system", complete_inputs=True)
    expected, _ = level_correlation(ds["m0"].values[:, 1:], ds["human"].values[:, 1:], level="system")
    np.testing.assert_allclose(float(r.sel(metric="m0")), expected, atol=1e-15)


def test_min_pairs_option(ds):
    with xcorrstat.set_options(min_pairs=100):
        r = ds.corrstat.correlate(target="human", level="system")
    assert bool(r.isnull().all())
    assert xcorrstat.get_options()["min_pairs"] == 3


# --- bad input: errors name the argument and what was expected ---------------------------


@pytest.mark.parametrize(
    "kwargs,exc,match",
    [
        ({"target": "nope"}, ValueError, r"target='nope'.*available"),
        ({"target": "human", "metrics": ["m0", "zzz"]}, ValueError, r"metrics='zzz'"),
        ({"target": "human", "level": "document"}, ValueError, r"level must be one of"),
        ({"target": "human", "method": "cosine"}, ValueError, r"method must be one of"),
        ({"target": "human", "method": "kendall", "variant": "x"}, ValueError, r"variant must be one of"),
        ({"target": "human", "min_pairs": 1}, ValueError, r"min_pairs must be"),
        ({"target": "human", "skipna": "yes"}, TypeError, r"skipna"),
        ({"target": 3.5}, TypeError, r"target must be"),
    ],
)
def test_bad_arguments(ds, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        xcorrstat.correlate(ds, **kwargs)


def test_missing_dim_is_named():
    ds = make_scores().rename({"input": "segment"})
    with pytest.raises(ValueError, match=r"missing the 'input' dim"):
        ds.corrstat.correlate(target="human")


def test_dataarray_without_metric_dim():
    with pytest.raises(ValueError, match=r"'metric' dim"):
        make_scores()["m0"].corrstat.correlate(target="human")


def test_duplicate_labels():
    ds = make_scores(n_systems=3)
    ds = ds.assign_coords(system=["A", "B", "A"])
    with pytest.raises(ValueError, match=r"duplicate 'system' labels \['A'\]"):
        ds.corrstat.correlate(target="human")


def test_duplicate_rows_in_frame():
    df = make_scores().to_dataframe().reset_index()
    df = pd.concat([df, df.iloc[[0]]])
    with pytest.raises(ValueError, match=r"duplicate"):
        df.corrstat.correlate(target="human")


def test_non_numeric_variable():
    ds = make_scores()
    ds["m1"] = ds["m1"].astype(str)
    with pytest.raises(TypeError, match=r"metrics='m1' has non-numeric dtype"):
        ds.corrstat.correlate(target="human", metrics=["m0", "m1"])


def test_infinite_values_eager_and_lazy():
    ds = make_scores()
    ds["m2"][1, 1] = np.inf
    with pytest.raises(ValueError, match=r"metrics='m2' has 1 infinite"):
        ds.corrstat.correlate(target="human")
    lazy = ds.chunk().corrstat.correlate(target="human")
    with pytest.raises(ValueError, match=r"infinite"):
        lazy.compute()


def test_not_xarray():
    with pytest.raises(TypeError, match=r"data must be an xarray"):
        xcorrstat.correlate(np.zeros((3, 3)), target="human")
