"""xcorrstat.report: the paper table as a library call, checked against the calls it is made of."""

import numpy as np
import pytest

import xcorrstat
from xcorrstat._reporting.build import report
from conftest import make_scores


def _named(rep):
    """The report as the command line makes it from a file: its source named in the header."""
    rep.settings["source"] = "synthetic"
    return rep


@pytest.fixture(scope="module")
def ds():
    ds = make_scores(n_metrics=5, n_systems=8, n_inputs=10, seed=21)
    ds["m1"] = (ds["human"] + 0.5 * ds["m1"]).assign_attrs(role="metric")
    return ds


@pytest.fixture(scope="module")
def rep(ds):
    return _named(report(ds, target="human", level=["system", "input"], n_resamples=150, rng=9, correction="fdr_bh"))


def test_intervals_and_clusters_equal_the_library_calls(ds, rep):
    for lev in ("system", "input"):
        boot = xcorrstat.bootstrap(ds, target="human", level=lev, resample=xcorrstat.Bootstrap(n_resamples=150, rng=9))
        comp = xcorrstat.compare(ds, target="human", level=lev, test=xcorrstat.Permutation(n_resamples=150, rng=9),
                                 correction="fdr_bh")
        got = rep.intervals.sel(level=lev)
        for v in ("correlation", "low", "high"):
            np.testing.assert_array_equal(got[v].values, boot[v].values)
        np.testing.assert_array_equal(got["cluster"].values, comp["cluster"].values)
        np.testing.assert_array_equal(rep.comparisons.sel(level=lev)["pvalue"].values, comp["pvalue"].values)
        corr = boot["correlation"].values
        # rank 1 = highest correlation
        np.testing.assert_array_equal(got["rank"].values, np.argsort(np.argsort(-corr)) + 1)


def test_table_is_ranked_within_levels(rep):
    table = rep.table()
    assert list(table["level"].unique()) == ["system", "input"]
    for _, sub in table.groupby("level", sort=False):
        assert list(sub["rank"]) == list(range(1, 6))
        assert sub["correlation"].is_monotonic_decreasing
    assert rep.settings["rng"] == 9 and rep.settings["ci_scheme"] == "BOOT-BOTH"
    assert rep.settings["test_scheme"] == "PERM-BOTH"


def test_text_and_html_reprs(rep):
    text = repr(rep)
    assert text.startswith("Pearson correlation with 'human' (synthetic; 5 metrics)")
    assert "System level (n = 8 systems)" in text and "Input level (n = 10 inputs)" in text
    html = rep._repr_html_()
    assert html.count("<table") == 2 and "BOOT-BOTH" in html


def test_undefined_metric_ranks_last(ds):
    ds = ds.assign(const=ds["m0"] * 0 + 1.0)
    rep = xcorrstat.report(ds, target="human", level="system", n_resamples=50, rng=0)
    table = rep.table()
    last = table.iloc[-1]
    assert last["metric"] == "const" and last["rank"] == 0 and last["cluster"] == 0
    assert np.isnan(last["correlation"])
    assert "   -  const" in rep.to_text()


def test_figures(rep):
    plt = pytest.importorskip("matplotlib.pyplot")
    figs = rep.figures()
    assert len(figs["ci"].axes) == 2
    assert [ax.get_ylabel() for ax in figs["significance"].axes if ax.get_ylabel() == "metric (better)"] == [
        "metric (better)"] * 2
    for fig in figs.values():
        plt.close(fig)


def test_bad_arguments(ds):
    with pytest.raises(ValueError, match="level must be one of"):
        xcorrstat.report(ds, target="human", level="document")
    with pytest.raises(ValueError, match="level must be one of .* got an empty list"):
        xcorrstat.report(ds, target="human", level=[])
    with pytest.raises(ValueError, match="formats must hold figure formats"):
        xcorrstat.report(ds, target="human", level="system", n_resamples=20, rng=0).save("x", formats=["gif"])
