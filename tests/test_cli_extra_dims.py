"""``xcorrstat correlate`` and ``report`` on data with extra dims: one result per label, never NaN
for a defined value.

The data: an mt-metrics-eval test set of two language pairs (written by tests/mtme_tree.py from
random arrays), netCDF files with an ``lp`` dim (or another extra dim), a CSV file read with
``--dims``. The oracles: the Python API on one label (``ds.sel(lp=...)``) with the same options and
seed, and scipy on the system scores the tree wrote.
"""

from __future__ import annotations

import io
import json
import re

import numpy as np
import pandas as pd
import pytest
import scipy.stats
import xarray as xr
from conftest import make_scores
from mtme_tree import write_mtme_tree

import xcorrstat
from xcorrstat._cli import main

LPS = ["en-de", "zh-en"]
METHODS = ["pearson", "spearman", "kendall"]


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    root = tmp_path_factory.mktemp("mtme")
    written = write_mtme_tree(root, "wmtx", LPS, {"en-de": 6, "zh-en": 5}, {"en-de": 14, "zh-en": 11},
                              ["BLEU", "COMET"], ["refA", "refB"], ["mqm", "wmt-raw"], np.random.default_rng(7),
                              noref_metrics=["Kiwi"], none_frac=0.1)
    return written


@pytest.fixture(scope="module")
def full(tree):
    return xcorrstat.read(tree.folder)


@pytest.fixture(scope="module")
def seg(full):
    return xcorrstat.mtme_level(full, "seg")


def _blocks(out: str, dims: str = "lp") -> dict[str, str]:
    """The text of each label's block of ``correlate --table-format text``, by the label line."""
    parts = re.split(rf"^({dims} = .*)$", out, flags=re.M)
    return {parts[k]: parts[k + 1] for k in range(1, len(parts), 2)}


def _rows(block: str, metrics) -> dict[str, list[str]]:
    return {ln.split()[0]: ln.split()[1:] for ln in block.splitlines() if ln.split() and ln.split()[0] in metrics}


def _close(shown: str, value: float, digits: int = 3) -> bool:
    return shown != "nan" and abs(float(shown) - value) <= 0.5 * 10 ** -digits + 1e-12


# -- correlate on an mt-metrics-eval test set ----------------------------------------------------------


def test_correlate_tree_prints_one_table_per_lp_equal_to_the_api(capsys, tree, seg):
    code, out, err = run(capsys, "correlate", tree.folder, "--target", "mqm", "--level", "system", "input",
                         "--method", *METHODS)
    assert code == 0, err
    assert len(err.strip().splitlines()) == 1
    assert "the target 'mqm' names the segment-level score files, so only those are analysed" in err
    assert "the target 'mqm.sys' names the system-level files" in err
    blocks = _blocks(out)
    assert list(blocks) == [f"lp = {lp}" for lp in LPS]
    metrics = tree.metrics
    for lp in LPS:
        want = xcorrstat.correlate(seg.sel(lp=lp), target="mqm", level=["system", "input"], method=METHODS)
        rows = _rows(blocks[f"lp = {lp}"], metrics)
        assert sorted(rows) == sorted(metrics)  # the human score wmt-raw is not a metric
        for m in metrics:
            values = want.sel(metric=m).transpose("level", "coefficient").values.ravel()
            assert np.isfinite(values).all()
            assert all(_close(s, v) for s, v in zip(rows[m], values)), (lp, m, rows[m], values)


def _scipy_system(tree, lp: str, metric: str, method: str) -> float:
    """The correlation over the systems that both system-level files score."""
    human, scores = tree.scores[(lp, "mqm", "sys")], tree.scores[(lp, metric, "sys")]
    both = [s for s in scores if s in human and np.isfinite(human[s]) and np.isfinite(scores[s])]
    x = [float(scores[s]) for s in both]
    y = [float(human[s]) for s in both]
    fn = {"pearson": scipy.stats.pearsonr, "spearman": scipy.stats.spearmanr, "kendall": scipy.stats.kendalltau}
    return float(fn[method](x, y)[0])


def test_correlate_tree_system_files_csv_equals_scipy(capsys, tree):
    code, out, err = run(capsys, "correlate", tree.folder, "--target", "mqm.sys", "--table-format", "csv")
    assert code == 0, err
    assert "'mqm.sys' names the system-level score files" in err and "'mqm' names the segment-level" in err
    table = pd.read_csv(io.StringIO(out))
    assert list(table.columns) == ["lp", "metric", *(f"system_{m}" for m in METHODS)]
    assert len(table) == len(LPS) * len(tree.metrics)
    for row in table.itertuples(index=False):
        for method in METHODS:
            want = _scipy_system(tree, row.lp, row.metric, method)
            assert getattr(row, f"system_{method}") == pytest.approx(want, abs=1e-6), (row.lp, row.metric)


def test_correlate_tree_json_has_the_lp_field(capsys, tree):
    code, out, err = run(capsys, "correlate", tree.folder, "--target", "mqm.sys", "--table-format", "json",
                         "--method", "kendall", "--metrics", "COMET-refA.sys", "Kiwi-src")
    assert code == 0, err
    records = json.loads(out)
    assert [(r["lp"], r["metric"]) for r in records] == [(lp, m) for lp in LPS for m in ("COMET-refA", "Kiwi-src")]
    for r in records:
        assert set(r) == {"lp", "metric", "level", "coefficient", "correlation", "n"}
        assert r["correlation"] == pytest.approx(_scipy_system(tree, r["lp"], r["metric"], "kendall"), abs=1e-9)
        assert r["n"] == sum(1 for s, v in tree.scores[(r["lp"], r["metric"], "sys")].items()
                             if np.isfinite(v) and np.isfinite(tree.scores[(r["lp"], "mqm", "sys")].get(s, np.nan)))


def test_human_scores_of_the_level_are_never_metrics(capsys, tree, seg):
    code, out, err = run(capsys, "correlate", tree.folder, "--target", "wmt-raw", "--table-format", "csv",
                         "--level", "system", "--method", "pearson", "--human", "Kiwi-src")
    assert code == 0, err
    table = pd.read_csv(io.StringIO(out))
    assert sorted(set(table["metric"])) == sorted(m for m in tree.metrics if m != "Kiwi-src")
    assert f"{len(tree.metrics) - 1} metrics" in err
    for lp in LPS:
        want = xcorrstat.correlate(seg.sel(lp=lp), target="wmt-raw", level="system", metrics=["BLEU-refA"])
        got = table[(table["lp"] == lp) & (table["metric"] == "BLEU-refA")]["system_pearson"].item()
        assert got == pytest.approx(float(want.item()), abs=1e-6)


@pytest.mark.parametrize("level", ["doc", "domain"])
def test_document_and_domain_files(capsys, tmp_path, level):
    tree = write_mtme_tree(tmp_path, "wmtd", LPS, 5, 16, ["BLEU"], ["refA"], ["mqm"], np.random.default_rng(3),
                           levels=("seg", "doc", "domain", "sys"), domains=("news", "social", "speech"))
    code, out, err = run(capsys, "correlate", tree.folder, "--target", f"mqm.{level}", "--level", "input",
                         "--method", "pearson", "--table-format", "csv")
    assert code == 0, err
    assert f"'mqm.{level}' names the {'document' if level == 'doc' else 'domain'}-level score files" in err
    table = pd.read_csv(io.StringIO(out))
    data = xcorrstat.mtme_level(xcorrstat.read(tree.folder, levels=[level]), level)
    assert len(table) == 2
    for row in table.itertuples(index=False):
        want = xcorrstat.correlate(data.sel(lp=row.lp), target="mqm", level="input", metrics=[row.metric])
        assert np.isfinite(float(want.item()))
        assert row.input_pearson == pytest.approx(float(want.item()), abs=1e-6)


def test_an_unknown_human_score_is_an_error(capsys, tree):
    code, out, err = run(capsys, "correlate", tree.folder, "--target", "mqm", "--human", "nope")
    assert code == 2 and out == ""
    assert "xcorrstat: error: --human 'nope': no such score in the data" in err


# -- netCDF and CSV files with extra dims --------------------------------------------------------------


def test_correlate_netcdf_with_an_lp_dim(capsys, tmp_path):
    ds = make_scores(n_metrics=3, n_systems=7, n_inputs=9, seed=11, nan_frac=0.1, extra=("lp", 3))
    path = tmp_path / "scores.nc"
    ds.to_netcdf(path)
    levels = ["system", "input", "global"]
    code, out, err = run(capsys, "correlate", path, "--target", "human", "--table-format", "json")
    assert code == 0, err
    records = json.loads(out)
    assert len(records) == 3 * 3 * 3 * 3
    for r in records:
        want = xcorrstat.correlate(ds.sel(lp=r["lp"]), target="human", level=r["level"], method=r["coefficient"],
                                   metrics=[r["metric"]])
        assert r["correlation"] == pytest.approx(float(want.item()), abs=1e-9)  # JSON keeps 10 decimals
    code, out, _ = run(capsys, "correlate", path, "--target", "human")
    blocks = _blocks(out)
    assert list(blocks) == ["lp = lp0", "lp = lp1", "lp = lp2"]
    assert "; a table per lp)" in out.splitlines()[0]
    for lp, block in blocks.items():
        want = xcorrstat.correlate(ds.sel(lp=lp[5:]), target="human", level=levels, method=METHODS)
        for m, shown in _rows(block, ["m0", "m1", "m2"]).items():
            values = want.sel(metric=m).transpose("level", "coefficient").values.ravel()
            assert all(_close(s, v) for s, v in zip(shown, values))


def test_correlate_netcdf_with_two_extra_dims_of_any_name(capsys, tmp_path):
    base = make_scores(n_metrics=2, n_systems=6, n_inputs=7, seed=5, extra=("annotator", 2))
    ds = base.expand_dims(domain=["news", "chat"]).copy(deep=True)
    ds["m0"][1] = ds["m0"][1] * -1.0  # the two domains differ
    path = tmp_path / "two.nc"
    ds.to_netcdf(path)
    code, out, err = run(capsys, "correlate", path, "--target", "human", "--level", "system", "--method",
                         "kendall", "--table-format", "csv")
    assert code == 0, err
    table = pd.read_csv(io.StringIO(out))
    assert list(table.columns) == ["domain", "annotator", "metric", "system_kendall"]
    assert len(table) == 2 * 2 * 2
    for row in table.itertuples(index=False):
        one = ds.sel(domain=row.domain, annotator=row.annotator)
        x = one[row.metric].mean("input").values
        y = one["human"].mean("input").values
        assert row.system_kendall == pytest.approx(scipy.stats.kendalltau(x, y)[0], abs=1e-6)
    code, out, _ = run(capsys, "correlate", path, "--target", "human", "--level", "system")
    assert [ln for ln in out.splitlines() if ln.startswith("domain = ")] == [
        f"domain = {d}, annotator = {a}" for d in ("news", "chat") for a in ("annotator0", "annotator1")]


def test_csv_with_the_dims_option_and_odd_labels(capsys, tmp_path):
    ds = make_scores(n_metrics=2, n_systems=5, n_inputs=6, seed=8, extra=("lp", 2))
    ds = ds.assign_coords(lp=["\x1b[31mred", "$x$<b>"])
    path = tmp_path / "scores.csv"
    ds.to_dataframe().reset_index().to_csv(path, index=False)
    code, out, err = run(capsys, "correlate", path, "--target", "human", "--dims", "lp", "--level", "system",
                         "--method", "pearson")
    assert code == 0, err
    assert "\x1b" not in out
    blocks = _blocks(out)
    assert list(blocks) == ["lp = \\x1b[31mred", "lp = $x$<b>"]
    for (heading, block), lp in zip(blocks.items(), ds["lp"].values):
        want = xcorrstat.correlate(ds.sel(lp=lp), target="human", level="system", method="pearson")
        for m, shown in _rows(block, ["m0", "m1"]).items():
            assert _close(shown[0], float(want.sel(metric=m)))
    code, out, err = run(capsys, "correlate", path, "--target", "human", "--dims", "lp", "--table-format", "csv",
                         "--level", "system", "--method", "pearson")
    table = pd.read_csv(io.StringIO(out))  # a file gets the labels as they are
    assert list(table["lp"].unique()) == ["\x1b[31mred", "$x$<b>"]


# -- report ------------------------------------------------------------------------------------------


def _report_blocks(out: str) -> dict[tuple[str, str], list[list[str]]]:
    """The rows of each (level, lp) block of the report's text."""
    found = {}
    for match in re.finditer(r"^(\w+) level, lp = (\S+) \(n = \d+ \w+\)\n.*\n((?:\s+(?:\d+|-)\s.*\n?)+)", out, re.M):
        found[(match.group(1).lower(), match.group(2))] = [ln.split() for ln in match.group(3).splitlines()]
    return found

def on_common_ground(ds, target):
    """The scores a report ranks (common_cells=True), written out: every metric NaN on the rated cells
    where one of the metrics lacks a score."""
    names = [k for k, v in ds.data_vars.items() if k != target and v.attrs.get("role") != "human"]
    lacks = xr.concat([ds[k].isnull() for k in names], dim="_k").any("_k") & ds[target].notnull()
    return ds.assign({k: ds[k].where(~lacks) for k in names})



def test_report_tree_per_lp_equals_the_api_with_the_same_seed(capsys, tmp_path, tree, seg):
    pytest.importorskip("matplotlib")
    out_dir = tmp_path / "rep"
    code, out, err = run(capsys, "report", tree.folder, "--target", "mqm", "--n-resamples", "120", "--rng", "3",
                         "--out", out_dir)
    assert code == 0, err
    assert "segment-level score files" in err
    blocks = _report_blocks(out)
    assert list(blocks) == [(lev, lp) for lp in LPS for lev in ("system", "input")]
    table = pd.read_csv(out_dir / "correlations.csv", keep_default_na=False, na_values=[""])
    assert {"lp", "level", "metric", "rank", "cluster"} <= set(table.columns)
    for lp in LPS:
        for lev in ("system", "input"):
            boot = xcorrstat.bootstrap(on_common_ground(seg.sel(lp=lp), "mqm"), target="mqm", level=lev,
                                       resample=xcorrstat.Bootstrap(n_resamples=120, rng=3))
            comp = xcorrstat.compare(seg.sel(lp=lp), target="mqm", level=lev,
                                     test=xcorrstat.Permutation(n_resamples=120, rng=3), correction="holm")
            rows = blocks[(lev, lp)]
            corr = boot["correlation"].to_series()
            assert [r[1] for r in rows] == list(corr.sort_values(ascending=False, kind="stable").index)
            for rank, metric, r, low, high, cluster in rows:
                assert _close(r, float(corr[metric]))
                assert _close(low.strip("[,"), float(boot["low"].sel(metric=metric)))
                assert _close(high.strip("]"), float(boot["high"].sel(metric=metric)))
                assert int(cluster) == int(comp["cluster"].sel(metric=metric))
            saved = table[(table["lp"] == lp) & (table["level"] == lev)].set_index("metric")
            np.testing.assert_allclose(saved.loc[corr.index, "correlation"], corr.values, atol=1e-6)
            np.testing.assert_allclose(saved.loc[corr.index, "high"], boot["high"].values, atol=1e-6)
    pairs = pd.read_csv(out_dir / "comparisons.csv")
    assert len(pairs) == len(LPS) * 2 * len(tree.metrics) * (len(tree.metrics) - 1)
    doc = json.loads((out_dir / "report.json").read_text())
    assert {r["lp"] for r in doc["correlations"]} == set(LPS) == {r["lp"] for r in doc["comparisons"]}
    page = (out_dir / "report.html").read_text()
    assert page.count("<table") == 4
    assert all(f"<h3>{lev} level, lp = {lp}</h3>" in page for lp in LPS for lev in ("System", "Input"))


def test_report_netcdf_with_an_lp_dim(capsys, tmp_path):
    ds = make_scores(n_metrics=4, n_systems=8, n_inputs=10, seed=13, extra=("lp", 2))
    path = tmp_path / "scores.nc"
    ds.to_netcdf(path)
    code, out, err = run(capsys, "report", path, "--target", "human", "--level", "system", "--test", "bootstrap",
                         "--n-resamples", "80", "--no-files", "--table-format", "markdown")
    assert code == 0, err
    titles = re.findall(r"^\*\*(.*)\*\*$", out, re.M)
    assert titles == ["System level, lp = lp0", "System level, lp = lp1"]
    for lp, part in zip(("lp0", "lp1"), out.split("**System level")[1:]):
        boot = xcorrstat.bootstrap(ds.sel(lp=lp), target="human", level="system",
                                   resample=xcorrstat.Bootstrap(n_resamples=80, rng=0))
        rows = [ln.split("|") for ln in part.splitlines() if re.match(r"\| (\d+|-) \|", ln)]
        assert len(rows) == 4
        for row in rows:
            metric = row[2].strip().strip("*")
            assert _close(row[3].strip(), float(boot["correlation"].sel(metric=metric)))
