"""xcorrstat.report on data with extra dims: one ranked list, table and figure panel per label.

Every number is checked against the library calls on one label (``ds.sel(lp=...)``) with the same
seed; ranks and panel orders against orders computed here.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import xarray as xr
from conftest import make_scores

import xcorrstat
from xcorrstat._reporting.build import report
from xcorrstat._reporting.tables import ranked_frame

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from xcorrstat import plot as xplot  # noqa: E402

N = 120
LEVELS = ["system", "input"]


def _named(rep):
    """The report as the command line makes it from a file: its source named in the header."""
    rep.settings["source"] = "synthetic"
    return rep


@pytest.fixture(scope="module")
def ds():
    ds = make_scores(n_metrics=4, n_systems=8, n_inputs=10, seed=31, nan_frac=0.05, extra=("lp", 3))
    ds["m0"] = (ds["human"] + 0.4 * ds["m0"]).assign_attrs(role="metric")
    return ds.assign_coords(lp=["en-de", "zh_en", "<b>$x$"])


@pytest.fixture(scope="module")
def rep(ds):
    return _named(report(ds, target="human", level=LEVELS, n_resamples=N, rng=4, correction="fdr_bh"))


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def on_common_ground(ds, target):
    """The scores a report ranks (common_cells=True), written out: every metric NaN on the rated cells
    where one of the metrics lacks a score."""
    names = [k for k, v in ds.data_vars.items() if k != target and v.attrs.get("role") != "human"]
    lacks = xr.concat([ds[k].isnull() for k in names], dim="_k").any("_k") & ds[target].notnull()
    return ds.assign({k: ds[k].where(~lacks) for k in names})


def _ranks(corr: np.ndarray) -> list[int]:
    """1 = highest correlation, 0 = undefined: by a loop."""
    defined = sorted((-c, k) for k, c in enumerate(corr) if np.isfinite(c))
    ranks = [0] * len(corr)
    for position, (_, k) in enumerate(defined):
        ranks[k] = position + 1
    return ranks


def test_every_label_equals_the_library_calls_on_that_label(ds, rep):
    assert rep.extra_dims == ["lp"]
    for lp in ds["lp"].values:
        for lev in LEVELS:
            boot = xcorrstat.bootstrap(on_common_ground(ds.sel(lp=lp), "human"), target="human", level=lev,
                                       resample=xcorrstat.Bootstrap(n_resamples=N, rng=4))
            comp = xcorrstat.compare(ds.sel(lp=lp), target="human", level=lev,
                                     test=xcorrstat.Permutation(n_resamples=N, rng=4), correction="fdr_bh")
            got = rep.intervals.sel(level=lev, lp=lp)
            for v in ("correlation", "low", "high"):
                np.testing.assert_array_equal(got[v].values, boot[v].values)
            np.testing.assert_array_equal(got["cluster"].values, comp["cluster"].values)
            assert got["rank"].values.tolist() == _ranks(boot["correlation"].values)
            pairs = rep.comparisons.sel(level=lev, lp=lp)
            for v in ("pvalue", "pvalue_corrected", "significant"):
                np.testing.assert_array_equal(pairs[v].transpose("metric", "other_metric").values,
                                              comp[v].transpose("metric", "other_metric").values)


def test_the_same_seed_gives_the_same_report(ds, rep):
    again = _named(report(ds, target="human", level=LEVELS, n_resamples=N, rng=4, correction="fdr_bh"))
    xr.testing.assert_identical(again.intervals, rep.intervals)
    assert again.to_text() == rep.to_text()


def test_table_is_ranked_within_each_label_and_level(ds, rep):
    table = rep.table()
    assert list(table.columns[:5]) == ["target", "level", "method", "lp", "metric"]
    keys = list(dict.fromkeys(zip(table["lp"], table["level"])))
    assert keys == [(lp, lev) for lp in ds["lp"].values for lev in LEVELS]
    for (lp, lev), sub in table.groupby(["lp", "level"], sort=False):
        assert list(sub["rank"]) == list(range(1, 5))
        assert sub["correlation"].is_monotonic_decreasing
        want = rep.intervals.sel(level=lev, lp=lp)["correlation"].to_series()
        np.testing.assert_array_equal(sub.set_index("metric")["correlation"].loc[want.index], want.values)
    pairs = rep.pairs()
    assert len(pairs) == 3 * 2 * 4 * 3 and list(dict.fromkeys(pairs["lp"])) == list(ds["lp"].values)


def test_text_html_latex_and_markdown_show_a_table_per_label_and_level(rep):
    text = rep.to_text()
    assert "(synthetic; 4 metrics; a ranked list per lp label, 3 in all)" in text
    headings = [ln for ln in text.splitlines() if " level, lp = " in ln]
    assert headings == [f"{lev.capitalize()} level, lp = {lp} (n = {n} {unit})"
                        for lp in ("en-de", "zh_en", "<b>$x$") for lev, n, unit in
                        (("system", 8, "systems"), ("input", 10, "inputs"))]
    html = rep._repr_html_()
    assert html.count("<table") == 6 and "lp = &lt;b&gt;$x$" in html and "<b>$x$" not in html
    latex = rep.to_latex()
    assert r"\caption{System level, lp = zh\_en}" in latex and r"lp = \textless{}b\textgreater{}\$x\$}" in latex
    markdown = rep.to_markdown()
    assert "**Input level, lp = zh_en**" in markdown and markdown.count("| --: | :-- |") == 6
    assert "lp = &lt;b&gt;&#36;x&#36;**" in markdown
    frame = ranked_frame(rep)
    assert list(frame.columns[:3]) == ["level", "lp", "metric"] and len(frame) == 24


def test_saved_files_have_the_lp_column(tmp_path, rep):
    out = tmp_path / "rep"
    rep.save(out, formats=["png"])
    doc = json.loads((out / "report.json").read_text())
    assert [(r["lp"], r["level"]) for r in doc["correlations"][::4]] == [
        (lp, lev) for lp in ("en-de", "zh_en", "<b>$x$") for lev in LEVELS]
    first = doc["correlations"][0]
    want = rep.intervals.sel(level="system", lp="en-de", metric=first["metric"])
    assert first["correlation"] == pytest.approx(float(want["correlation"]), abs=1e-12)
    page = (out / "report.html").read_text()
    assert page.count("<table") == 6 and "One matrix per label of lp and level" in page


def _panel_order(res: xr.Dataset) -> list[str]:
    """Metrics by cluster (0 last), then by correlation, best first: sorted here."""
    rows = [(int(c) if c > 0 else 10**9, -float(r), str(m))
            for m, r, c in zip(res["metric"].values, res["correlation"].values, res["cluster"].values)]
    return [m for _, _, m in sorted(rows, key=lambda t: (t[0], t[1]))]


def test_figures_have_a_panel_per_label_and_level(ds, rep):
    figs = rep.figures()
    ci = figs["ci"].axes
    assert len(ci) == 6
    titles = [a.get_title() for a in ci]
    assert titles == [f"{lev} level, lp = {lp}" for lp in ("en-de", "zh_en", "<b>\\$x\\$") for lev in LEVELS]
    for a, (lp, lev) in zip(ci, [(lp, lev) for lp in ds["lp"].values for lev in LEVELS]):
        res = rep.intervals.sel(level=lev, lp=lp)
        order = _panel_order(res)
        assert [t.get_text() for t in a.get_yticklabels()] == order
        (points,) = [line for line in a.lines if line.get_gid() == "correlation"]
        np.testing.assert_array_equal(points.get_xdata(), res["correlation"].sel(metric=order).values)
    matrices = [a for a in figs["significance"].axes if a.get_ylabel() == "metric (better)"]
    assert len(matrices) == 6
    for a, (lp, lev) in zip(matrices, [(lp, lev) for lp in ds["lp"].values for lev in LEVELS]):
        assert a.get_title().startswith(f"lp = {lp.replace('$', chr(92) + '$')}: ")
        assert f"{lev} level" in a.get_title()
        res = rep.comparisons.sel(level=lev, lp=lp)
        order = _panel_order(res)
        pv = res["pvalue"].sel(metric=order, other_metric=order).values
        filled = ~np.ma.getmaskarray(a.images[0].get_array())
        np.testing.assert_array_equal(filled, pv <= 0.05)
    for fig in figs.values():
        fig.canvas.draw()  # '$x$' is drawn literally, not as mathtext


def test_one_metric_per_label(ds):
    one = ds.copy()
    one["m1"] = one["m1"].where(one["lp"] != "zh_en")  # undefined for one label
    rep = xcorrstat.report(one, target="human", metrics=["m1"], level="system", n_resamples=30, rng=0)
    got = rep.intervals.sel(level="system", metric="m1")
    assert got["cluster"].values.tolist() == [1, 0, 1] and got["rank"].values.tolist() == [1, 0, 1]
    for lp in ("en-de", "<b>$x$"):
        boot = xcorrstat.bootstrap(one.sel(lp=lp), target="human", metrics=["m1"], level="system",
                                   resample=xcorrstat.Bootstrap(n_resamples=30, rng=0))
        assert float(got["correlation"].sel(lp=lp)) == float(boot["correlation"].item())
    assert set(rep.comparisons["pvalue"].dims) == {"level", "lp", "metric", "other_metric"}
    assert rep.comparisons["pvalue"].isnull().all() and not rep.comparisons["significant"].any()
    figs = rep.figures()
    assert len(figs["ci"].axes) == 3


def test_report_on_a_read_mtme_dataset(tmp_path):
    from mtme_tree import write_mtme_tree

    tree = write_mtme_tree(tmp_path, "wmtx", ["en-de", "zh-en"], 5, 9, ["BLEU", "COMET"], ["refA"], ["mqm"],
                           np.random.default_rng(2))
    full = xcorrstat.read(tree.folder)
    rep = xcorrstat.report(full, target="mqm", level="system", n_resamples=40, rng=1)
    assert sorted(map(str, rep.intervals["metric"].values)) == sorted(tree.metrics)  # segment scores only
    seg = xcorrstat.mtme_level(full, "seg")
    for lp in ("en-de", "zh-en"):
        boot = xcorrstat.bootstrap(seg.sel(lp=lp), target="mqm", level="system",
                                   resample=xcorrstat.Bootstrap(n_resamples=40, rng=1))
        np.testing.assert_array_equal(rep.intervals.sel(level="system", lp=lp)["low"].values, boot["low"].values)


# -- the plots' by= option on their own ----------------------------------------------------------------


def test_plot_by_without_levels_and_its_errors(ds):
    boot = xcorrstat.bootstrap(ds, target="human", level="system", resample=xcorrstat.Bootstrap(n_resamples=40, rng=0))
    fig = xplot.plot_ci(boot, by="lp")
    assert [a.get_title() for a in fig.axes] == ["lp = en-de", "lp = zh_en", "lp = <b>\\$x\\$"]
    for a, lp in zip(fig.axes, ds["lp"].values):
        (points,) = [line for line in a.lines if line.get_gid() == "correlation"]
        want = boot["correlation"].sel(lp=lp).values
        np.testing.assert_array_equal(np.sort(points.get_xdata()), np.sort(want))
    with pytest.raises(ValueError, match=r"or draw one panel per label with by=\['lp'\]"):
        xplot.plot_ci(boot)
    with pytest.raises(ValueError, match="by must name dims of the result other than"):
        xplot.plot_ci(boot, by="annotator")
    with pytest.raises(ValueError, match="by must name dims of the result other than"):
        xplot.plot_ci(boot, by="metric")
    _, axes = plt.subplots(1, 2)
    with pytest.raises(ValueError, match=r"ax must hold one Axes per 'lp' label \(3\), got 2"):
        xplot.plot_ci(boot, by="lp", ax=axes)
    comp = xcorrstat.compare(ds, target="human", level="system", test=xcorrstat.Permutation(n_resamples=40, rng=0))
    with pytest.raises(ValueError, match=r"by=\['lp'\]"):
        xplot.plot_significance(comp)
    _, axes = plt.subplots(3, 1)
    assert xplot.plot_significance(comp, by=["lp"], ax=axes) is axes[0].figure
    assert [a.get_title().split(":")[0] for a in axes] == ["lp = en-de", "lp = zh_en", "lp = <b>\\$x\\$"]


def test_labels_of_one_level_wrap_three_a_row():
    ds = make_scores(n_metrics=3, n_systems=6, n_inputs=5, seed=3, extra=("lp", 4))
    boot = xcorrstat.bootstrap(ds, target="human", level="system", resample=xcorrstat.Bootstrap(n_resamples=30, rng=0))
    fig = xplot.plot_ci(boot.expand_dims(level=["system"]), by="lp")
    assert [a.get_title() for a in fig.axes] == [f"system level, lp = lp{k}" for k in range(4)]
    rows = [a.get_subplotspec().rowspan.start for a in fig.axes]
    cols = [a.get_subplotspec().colspan.start for a in fig.axes]
    assert rows == [0, 0, 0, 1] and cols == [0, 1, 2, 0]
    assert [a.get_ylabel() for a in fig.axes] == ["metric", "", "", "metric"]
    for a, lp in zip(fig.axes, ds["lp"].values):
        (points,) = [line for line in a.lines if line.get_gid() == "correlation"]
        want = boot["correlation"].sel(lp=lp)
        order = [str(m) for m in want["metric"].values[np.argsort(-want.values, kind="stable")]]
        assert [t.get_text() for t in a.get_yticklabels()] == order
        np.testing.assert_array_equal(points.get_xdata(), want.sel(metric=order).values)
