"""Comparisons on common ground (issue 37, item 2) and notes that travel with results (items 5, notes).

The censored-copy case: one metric twice, complete and with its worst system and 30% of its worst
cells removed. On its own cells the censored copy ranks first and is called significantly better
than its own complete copy; compared on common ground (the default of compare and report) it can
never gain rank or significance, and every n shown is true. The oracle of the common ground is the
data masked explicitly here, run through the per-metric path (``common_cells=False``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import xcorrstat
from xcorrstat._notes import notes_of
from xcorrstat._significance.common import LAZY_COMMON_NOTE

N = 300
FIXTURE = str(Path(__file__).parent / "data" / "wmt20_ende_sys.csv")  # tests/data/README.md


def censored_copy(seed: int = 1, n_systems: int = 10, n_inputs: int = 40) -> xr.Dataset:
    """``m`` complete, ``m_cens`` the same scores without its worst system and its 30% worst cells,
    ``good`` another metric, ``human`` the target; the data carry a note of their own."""
    rng = np.random.default_rng(seed)
    h = rng.normal(size=(n_systems, 1)) + rng.normal(size=(n_systems, n_inputs))
    m = h + rng.normal(scale=1.5, size=h.shape)
    good = h + rng.normal(scale=1.0, size=h.shape)
    cens = m.copy()
    err = np.abs(m - h)
    cens[np.argmax(np.abs(m.mean(1) - h.mean(1)))] = np.nan
    cens[err > np.nanquantile(np.where(np.isnan(cens), np.nan, err), 0.7)] = np.nan
    dims = ("system", "input")
    ds = xr.Dataset({"human": (dims, h), "m_cens": (dims, cens), "m": (dims, m), "good": (dims, good)},
                    coords={"system": [f"s{i}" for i in range(n_systems)],
                            "input": [f"i{j}" for j in range(n_inputs)]})
    ds.attrs["notes"] = ("read from a test table",)
    return ds


def masked(ds: xr.Dataset, names=("m_cens", "m", "good")) -> xr.Dataset:
    """The common ground written out: every metric NaN where one of them lacks a rated cell."""
    lacks = xr.concat([ds[k].isnull() for k in names], dim="k").any("k") & ds["human"].notnull()
    return ds.assign({k: ds[k].where(~lacks) for k in names})


TESTS = {
    "system": [xcorrstat.Permutation(n_resamples=N, rng=0), xcorrstat.Bootstrap(n_resamples=N, rng=0),
               xcorrstat.Williams()],
    "input": [xcorrstat.Permutation(n_resamples=N, rng=0), xcorrstat.Bootstrap(n_resamples=N, rng=0)],
    "global": [xcorrstat.Permutation(n_resamples=N, rng=0), xcorrstat.Williams()],
}
CASES = [(level, test) for level, tests in TESTS.items() for test in tests]


@pytest.mark.parametrize("level,test", CASES, ids=[f"{lev}-{type(t).__name__}" for lev, t in CASES])
def test_censored_copy_gains_nothing_on_common_ground(level, test):
    ds = censored_copy()
    own = xcorrstat.compare(ds, target="human", level=level, test=test, common_cells=False)
    if level != "system" or not isinstance(test, xcorrstat.Bootstrap):  # what the common ground prevents
        assert float(own["correlation"].sel(metric="m_cens")) > float(own["correlation"].sel(metric="m"))
    res = xcorrstat.compare(ds, target="human", level=level, test=test)
    r = res["correlation"]
    assert float(r.sel(metric="m_cens")) == float(r.sel(metric="m"))
    assert not bool(res["significant"].sel(metric="m_cens", other_metric="m"))
    assert res["cluster"].sel(metric="m_cens") >= res["cluster"].sel(metric="m")
    assert len(set(res["n"].values.tolist())) == 1  # every metric on the same units
    notes = notes_of(res)
    assert notes[0] == "read from a test table"
    assert "'m_cens' lacks" in notes[-1] and "every cell of system ['s" in notes[-1]
    assert res.attrs["common_cells"] == 1


@pytest.mark.parametrize("method", ["pearson", "kendall", "spearman"])
@pytest.mark.parametrize("level,test", CASES, ids=[f"{lev}-{type(t).__name__}" for lev, t in CASES])
def test_common_ground_is_the_explicitly_masked_data(level, test, method):
    if method != "pearson" and isinstance(test, xcorrstat.Williams):
        pytest.skip("Williams' test is Pearson's")
    ds = censored_copy(seed=3)
    res = xcorrstat.compare(ds, target="human", level=level, test=test, method=method)
    oracle = xcorrstat.compare(masked(ds), target="human", level=level, test=test, method=method,
                               common_cells=False)
    for name in ("correlation", "delta", "pvalue", "significant", "cluster", "n"):
        np.testing.assert_array_equal(res[name].values, oracle[name].values, err_msg=name)


def test_pair_outcome_test_on_common_ground():
    ds = censored_copy(seed=4)
    test = xcorrstat.Permutation(swap="pairs", n_resamples=100, rng=0)
    kw = dict(target="human", level="input", method="kendall", variant="acc23", test=test)
    res = xcorrstat.compare(ds, **kw)
    common = masked(ds)
    common["human"] = common["human"].where(common["m"].notnull())  # the test needs a metric score wherever
    oracle = xcorrstat.compare(common, common_cells=False, **kw)     # the target has one
    np.testing.assert_array_equal(res["pvalue"].values, oracle["pvalue"].values)
    assert "'m_cens' lacks" in notes_of(res)[-1]


def test_a_metric_absent_from_a_label_does_not_narrow_the_others():
    ds = xr.concat([censored_copy(seed=5), censored_copy(seed=6)], dim="lp").assign_coords(lp=["a", "b"])
    ds["m_cens"] = ds["m_cens"].where(ds["lp"] == "a")  # no score at all in lp b
    res = xcorrstat.compare(ds, target="human", test=xcorrstat.Williams())
    full = xcorrstat.compare(ds.sel(lp="b").drop_vars("m_cens"), target="human", test=xcorrstat.Williams())
    got = res["correlation"].sel(lp="b", metric=["m", "good"]).values
    np.testing.assert_array_equal(got, full["correlation"].values)
    assert np.isnan(float(res["correlation"].sel(lp="b", metric="m_cens")))


def test_dask_data_give_the_same_common_ground():
    ds = censored_copy(seed=7)
    test = xcorrstat.Permutation(n_resamples=100, rng=0)
    eager = xcorrstat.compare(ds, target="human", level="input", test=test)
    lazy = xcorrstat.compare(ds.chunk({"system": 5}), target="human", level="input", test=test).compute()
    np.testing.assert_array_equal(eager["pvalue"].values, lazy["pvalue"].values)
    # Dask data: the common ground is in the graph, and its note says so without counting the cells
    # (that would compute first)
    assert notes_of(lazy) == (*notes_of(ds), LAZY_COMMON_NOTE)
    assert any(note.startswith("common ground:") for note in notes_of(eager))


@pytest.fixture(scope="module")
def reports():
    ds = censored_copy()
    return {cc: xcorrstat.report(ds, target="human", level=["system", "input", "global"], n_resamples=200, rng=0,
                                 common_cells=cc) for cc in (True, False)}


def test_report_ranks_the_censored_copy_no_higher_and_its_n_is_true(reports):
    rep = reports[True]
    table = rep.table()
    for level, sub in table.groupby("level"):
        by = sub.set_index("metric")
        assert by.loc["m_cens", "rank"] >= by.loc["m", "rank"], level
        assert by.loc["m_cens", "cluster"] >= by.loc["m", "cluster"], level
        assert by.loc["m_cens", "correlation"] == by.loc["m", "correlation"]
        assert sub["n"].nunique() == 1
    text = rep.to_text()
    assert "System level (n = 9 systems)" in text  # the censored copy's 9 systems, for every metric
    assert "note: read from a test table" in text and "note: common ground:" in text
    assert rep.notes == notes_of(rep) == tuple(table.attrs["notes"])
    assert rep.settings["common_cells"] is True


def test_report_on_own_cells_shows_n_per_metric(reports):
    rep = reports[False]
    text = rep.to_text()
    assert "System level (n = 9 to 10 systems: column n)" in text
    assert "note: each metric on its own cells (common_cells=False)" in text
    line = next(line for line in text.splitlines() if " m_cens " in line)
    assert line.split()[-1] == "9"


def test_report_files_carry_the_notes(reports, tmp_path):
    pytest.importorskip("matplotlib")
    rep = reports[True]
    rep.save(tmp_path / "out", formats=["svg"])
    doc = json.loads((tmp_path / "out" / "report.json").read_text())
    assert doc["settings"]["notes"] == list(rep.notes)
    page = (tmp_path / "out" / "report.html").read_text()
    assert "read from a test table" in page and "&#x27;m_cens&#x27; lacks" in page
    assert "common ground" in rep._repr_html_()


def test_every_analysis_carries_the_notes_of_its_data():
    ds = censored_copy()
    ds["human_raw"] = ds["human"] + 0.5
    boot = xcorrstat.Bootstrap(n_resamples=20, rng=0)
    perm = xcorrstat.Permutation(n_resamples=20, rng=0)
    with pytest.warns(UserWarning, match="human_raw"):
        results = {
            "correlate": xcorrstat.correlate(ds, target="human", level=["system", "input"]),
            "bootstrap": xcorrstat.bootstrap(ds, target="human", resample=boot),
            "fisher": xcorrstat.fisher(ds, target="human"),
        }
    pair = dict(x="m_cens", y="m", target="human")
    results.update({
        "permutation_test": xcorrstat.permutation_test(ds, test=perm, **pair),
        "paired_bootstrap_test": xcorrstat.paired_bootstrap_test(ds, test=boot, **pair),
        "williams_test": xcorrstat.williams_test(ds, **pair),
    })
    for name, res in results.items():
        notes = notes_of(res)
        assert notes[0] == "read from a test table", name
        if name in ("correlate", "bootstrap", "fisher"):
            assert "'human_raw' (named like a human judgment)" in notes[1], name
        else:  # a two-metric test says which metric lacks cells the other scores
            assert "'m_cens' lacks" in notes[1] and "two-metric test" in notes[1], name


def test_columns_left_out_are_all_named():
    ds = censored_copy()
    ds["human_raw"] = ds["human"] + 0.5
    ds["rater_notes"] = (("system", "input"), np.full(ds["human"].shape, "x", dtype=object))
    ds["length"] = ("system", np.arange(10.0))
    ds["other"] = ds["human"].assign_attrs(role="human")
    with pytest.warns(UserWarning):
        r = xcorrstat.correlate(ds, target="human")
    note = notes_of(r)[-1]
    for part in ("'human_raw' (named like a human judgment)", "'rater_notes' (not numeric)",
                 "'length' (not per system and input)"):
        assert part in note
    assert "'other'" not in note  # declared a human judgment by the data: not left out by a guess
    named = xcorrstat.correlate(ds, target="human", metrics=["m", "good"])
    assert notes_of(named) == ("read from a test table",)  # the metrics named: nothing was left out


# --------------------------------------------------------------------------- #
# the official WMT20 en-de system-level file: HUMAN_RAW, a second human judgment
# --------------------------------------------------------------------------- #
@pytest.fixture(scope="module")
def wmt20():
    return xcorrstat.read(FIXTURE, input=False)


def test_wmt20_human_raw_is_left_out_and_named(wmt20):
    with pytest.warns(UserWarning, match="human_raw"):
        res = xcorrstat.compare(wmt20, target="human", test=xcorrstat.Williams())
    assert "human_raw" not in res["metric"].values
    assert "'human_raw' (named like a human judgment)" in notes_of(res)[0]
    # kept as a row (as the published tables show it) by naming the metrics: the others' numbers are unchanged
    names = [str(m) for m in res["metric"].values]
    kept = xcorrstat.compare(wmt20, target="human", test=xcorrstat.Williams(), metrics=[*names, "human_raw"])
    assert "human_raw" in kept["metric"].values and not notes_of(kept)
    np.testing.assert_array_equal(kept["pvalue"].sel(metric=names, other_metric=names).values, res["pvalue"].values)
    inliers = wmt20.where(wmt20["is_outlier"] == 0, drop=True)
    r = xcorrstat.correlate(inliers, target="human", metrics=["COMET", "BLEU", "esim", "human_raw"])
    np.testing.assert_allclose(r.sel(metric=["COMET", "BLEU", "esim"]).values, [.8628757, .8247221, .8939532],
                               atol=5e-8)
    one = xcorrstat.williams_test(inliers, x="esim", y="YiSi-2", target="human")
    assert abs(float(one["pvalue"]) - .0190746) < 5e-7


def test_wmt20_command_line_headers_name_human_raw(wmt20):
    for command in (["correlate"], ["report", "--no-files", "--test", "williams", "--n-resamples", "50"]):
        run = subprocess.run([sys.executable, "-m", "xcorrstat", *command, FIXTURE, "--target", "human",
                              "--input-col", "none"], capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stderr
        head = run.stdout.split("\n\n")[0]
        assert ("note: left out of the metrics: 'is_outlier' (named like a marker of units), "
                "'human_raw' (named like a human judgment)") in head, command
        assert "Warning" not in run.stderr


def test_report_command_line_common_cells(tmp_path):
    ds = censored_copy()
    frame = ds.to_dataframe().reset_index()
    path = tmp_path / "scores.csv"
    frame.to_csv(path, index=False)
    base = [sys.executable, "-m", "xcorrstat", "report", str(path), "--target", "human", "--no-files",
            "--n-resamples", "100", "--level", "system"]
    common = subprocess.run(base, capture_output=True, text=True, timeout=300)
    own = subprocess.run([*base, "--no-common-cells"], capture_output=True, text=True, timeout=300)
    assert common.returncode == 0 and own.returncode == 0, common.stderr + own.stderr
    assert "(n = 9 systems)" in common.stdout and "note: common ground:" in common.stdout
    assert "(n = 9 to 10 systems: column n)" in own.stdout
    assert pd.notna(frame["m_cens"]).sum() < len(frame)


def test_wmt_results_carry_the_notes_and_print_them(tmp_path):
    from mtme_tree import write_mtme_tree

    from xcorrstat._reporting.tables import format_table
    from xcorrstat.wmt import run_tasks, task_set

    write_mtme_tree(tmp_path, "wmt23", ["en-de"], 5, 24, ["BLEU", "COMET"], ["refA"], ["mqm"],
                    np.random.default_rng(2))
    ds = xcorrstat.read_mtme(tmp_path, "wmt23")
    ds.attrs["notes"] = ("read from a test tree",)
    res = run_tasks(ds, task_set("wmt23", ["en-de"])[:2], n_resamples=20, rng=0)
    assert notes_of(res)[0] == "read from a test tree"
    text = format_table(res, "text")
    assert text.startswith("note: read from a test tree\n")
