"""xcorrstat.tidy: every result as a long frame with the columns a table wants."""

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import xcorrstat
from conftest import make_scores


@pytest.fixture(scope="module")
def ds():
    return make_scores(n_metrics=4, n_systems=7, n_inputs=9, seed=11)


def test_bootstrap_rows_and_columns(ds):
    res = xcorrstat.bootstrap(ds, target="human", level="input",
                              resample=xcorrstat.Bootstrap(n_resamples=100, rng=0, keep_distribution=True))
    frame = xcorrstat.tidy(res)
    assert list(frame.columns[:4]) == ["target", "level", "method", "metric"]
    assert {"correlation", "low", "high", "n"} <= set(frame.columns)
    assert "distribution" not in frame.columns and len(frame) == 4
    assert (frame["level"] == "input").all() and (frame["target"] == "human").all()
    for row in frame.itertuples():
        ref = res.sel(metric=row.metric)
        assert row.correlation == float(ref["correlation"]) and row.low == float(ref["low"])
        assert row.high == float(ref["high"]) and row.n == int(ref["n"])
    draws = xcorrstat.tidy(res, distribution=True)
    assert len(draws) == 4 * 100 and "distribution" in draws.columns


def test_compare_is_one_row_per_ordered_pair(ds):
    res = xcorrstat.compare(ds, target="human", test=xcorrstat.Permutation(n_resamples=100, rng=1), correction="holm")
    frame = xcorrstat.tidy(res)
    assert len(frame) == 4 * 3
    assert (frame["metric"] != frame["other_metric"]).all()
    for row in frame.itertuples():
        pair = res.sel(metric=row.metric, other_metric=row.other_metric)
        assert row.pvalue == float(pair["pvalue"]) and row.delta == float(pair["delta"])
        assert row.pvalue_corrected == float(pair["pvalue_corrected"])
        assert row.significant == bool(pair["significant"])
        assert row.correlation == float(res["correlation"].sel(metric=row.metric))
        assert row.other_correlation == float(res["correlation"].sel(metric=row.other_metric))
        assert row.cluster == int(res["cluster"].sel(metric=row.metric))


def test_level_and_coefficient_dims_become_columns(ds):
    r = xcorrstat.correlate(ds, target="human", level=["system", "global"], method=["pearson", "kendall"])
    frame = xcorrstat.tidy(r)
    assert len(frame) == 4 * 2 * 2
    assert {"level", "coefficient", "metric", "correlation", "n", "target"} <= set(frame.columns)
    got = frame.set_index(["level", "coefficient", "metric"])["correlation"]
    ref = r.to_series().reorder_levels(["level", "coefficient", "metric"])
    pd.testing.assert_series_equal(got.sort_index(), ref.sort_index(), check_names=False)


def test_scalar_results_and_selections(ds):
    p = xcorrstat.permutation_test(ds, target="human", x="m0", y="m1",
                                   test=xcorrstat.Permutation(n_resamples=50, rng=0))
    frame = xcorrstat.tidy(p)
    assert len(frame) == 1 and frame.loc[0, "x"] == "m0" and frame.loc[0, "y"] == "m1"
    assert frame.loc[0, "pvalue"] == float(p["pvalue"])
    r = xcorrstat.correlate(ds, target="human", level=["system", "input"]).sel(level="input")
    assert (xcorrstat.tidy(r)["level"] == "input").all()


def test_accessor_and_bad_input(ds):
    res = xcorrstat.fisher(ds, target="human")
    pd.testing.assert_frame_equal(res.corrstat.tidy(), xcorrstat.tidy(res))
    with pytest.raises(TypeError, match="result must be an xarray Dataset or DataArray, got list"):
        xcorrstat.tidy([1, 2])


def test_extra_dims_are_label_columns():
    ds = make_scores(n_metrics=2, n_systems=5, n_inputs=6, seed=2, extra=("lp", 2))
    frame = xcorrstat.tidy(xcorrstat.fisher(ds, target="human"))
    assert len(frame) == 4 and "lp" in frame.columns
    assert list(frame.columns).index("lp") < list(frame.columns).index("correlation")
    assert np.isfinite(frame["correlation"]).all()
    assert isinstance(frame, pd.DataFrame) and not isinstance(frame, xr.Dataset)
