"""``xcorrstat report`` end to end: tables, files, figures, HTML page, and bad input."""

import json
import re

import numpy as np
import pandas as pd
import pytest

import xcorrstat
from conftest import make_scores
from xcorrstat._cli import main

pytest.importorskip("matplotlib")


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def small():
    """5 metrics on 8 systems x 12 inputs, with m0 built to agree with the target."""
    ds = make_scores(n_metrics=5, n_systems=8, n_inputs=12, seed=3)
    ds["m0"] = (ds["human"] + 0.3 * ds["m0"]).assign_attrs(role="metric")
    return ds


@pytest.fixture()
def small_file(tmp_path, small):
    df = small.to_dataframe().reset_index().rename(columns={"system": "model", "input": "doc_id"})
    path = tmp_path / "scores.csv"
    df.to_csv(path, index=False)
    return path


def _table_rows(out: str, level: str) -> list[list[str]]:
    block = out.split(f"{level.capitalize()} level")[1].split("level (n =")[0]
    return [ln.split() for ln in block.splitlines() if re.match(r"^\s+(\d+|-)\s", ln)]


def test_report_end_to_end_on_a_small_file(capsys, tmp_path, small, small_file):
    out_dir = tmp_path / "rep"
    code, out, err = run(capsys, "report", str(small_file), "--target", "human", "--n-resamples", "200",
                         "--rng", "5", "--out", str(out_dir))
    assert code == 0, err
    # column names were guessed
    assert "report: " in err and "writing tables" in err
    expected = {lev: xcorrstat.bootstrap(small, target="human", level=lev,
                                         resample=xcorrstat.Bootstrap(n_resamples=200, rng=5))
                for lev in ("system", "input")}
    clusters = {lev: xcorrstat.compare(small, target="human", level=lev,
                                       test=xcorrstat.Permutation(n_resamples=200, rng=5),
                                       correction="holm")["cluster"] for lev in ("system", "input")}
    for lev in ("system", "input"):
        rows = _table_rows(out, lev)
        assert len(rows) == 5
        corr = expected[lev]["correlation"]
        # ranked best first, values as computed by the library calls
        assert [r[1] for r in rows] == list(corr.sortby(corr, ascending=False)["metric"].values)
        for rank, metric, r, low, high, cluster in rows:
            ref = expected[lev].sel(metric=metric)
            assert float(r) == round(float(ref["correlation"]), 3)
            assert float(low.strip("[,")) == round(float(ref["low"]), 3)
            assert float(high.strip("]")) == round(float(ref["high"]), 3)
            assert int(cluster) == int(clusters[lev].sel(metric=metric))
    files = sorted(p.name for p in out_dir.iterdir())
    assert files == ["ci.png", "ci.svg", "comparisons.csv", "correlations.csv", "csv-metadata.json",
                     "report.html", "report.json",
                     "significance.png", "significance.svg", "xcorrstat-manifest.json"]
    table = pd.read_csv(out_dir / "correlations.csv")
    assert {"level", "metric", "correlation", "low", "high", "n", "cluster", "rank"} <= set(table.columns)
    assert len(table) == 10
    sys_rows = table[table["level"] == "system"].set_index("metric")
    np.testing.assert_allclose(sys_rows.loc[list(corr["metric"].values), "low"],
                               expected["system"]["low"].values, atol=1e-6)
    pairs = pd.read_csv(out_dir / "comparisons.csv")
    assert len(pairs) == 2 * 5 * 4 and {"metric", "other_metric", "pvalue", "pvalue_corrected",
                                        "significant"} <= set(pairs.columns)
    doc = json.loads((out_dir / "report.json").read_text())
    assert doc["settings"]["rng"] == 5 and doc["settings"]["n_resamples"] == 200
    assert len(doc["correlations"]) == 10 and len(doc["comparisons"]) == 40
    assert (out_dir / "ci.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out_dir / "significance.svg").read_text().lstrip().startswith("<?xml")
    page = (out_dir / "report.html").read_text()
    # self-contained: both figures embedded, nothing fetched from elsewhere
    assert page.count('src="data:image/png;base64,') == 2
    assert not re.search(r'(src|href)="(http|//|[^d#])', page)
    assert "m0" in page and "Pairwise significance" in page


def test_quiet_and_no_files(capsys, tmp_path, small_file, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "report", str(small_file), "--target", "human", "--n-resamples", "50",
                         "--quiet", "--no-files", "--level", "global", "--method", "kendall")
    assert code == 0
    assert err == ""
    assert "Global level" in out and "Kendall correlation" in out
    assert not (tmp_path / "xcorrstat-report").exists()


@pytest.mark.parametrize(
    "content,args,message",
    [
        # a missing column: the target, and a label column
        ("system,input,human,m0\nA,d1,1,2\nB,d1,2,3\nC,d1,3,1\n", ["--target", "humn"], "target='humn'"),
        ("team,input,human,m0\nA,d1,1,2\n", ["--target", "human"],
         "no system label column found: tried ['system', 'sys'"),
        ("system,input,human,m0\nA,d1,1,2\n", ["--target", "human", "--input-col", "segment"],
         "input='segment': no such column; available columns are ['system', 'input', 'human', 'm0']"),
        # duplicate rows: which row repeats which
        ("system,input,human,m0\nA,d1,1,2\nB,d1,2,3\nA,d1,2,3\n", ["--target", "human"],
         "1 duplicate row(s) for (system, input): data row 3 (line 4) repeats data row 1 (line 2), ('A', 'd1')"),
        # non-numeric values: the column, the value and its row
        ("system,input,human,m0\nA,d1,1,2\nB,d1,2,x\nC,d1,3,4\n", ["--target", "human"],
         ["column 'm0' has dtype ", "scores must be numeric (bool, integer or float); first non-numeric "
          "entry: 'x' in data row 2"]),
        # a missing label
        ("system,input,human,m0\nA,d1,1,2\n,d1,2,3\n", ["--target", "human"],
         "system='system': 1 missing label(s), first in data row 2"),
        # empty file, header only
        ("", ["--target", "human"], "file is empty"),
        ("system,input,human,m0\n", ["--target", "human"], "no rows in"),
        (None, ["--target", "human"], "no such file"),
        ("system,input,human,m0\nA,d1,1,2\n", ["--target", "human", "--n-resamples", "0"],
         "--n-resamples must be a positive integer, got 0"),
    ],
)
def test_malformed_files_exit_2_with_the_reason(capsys, tmp_path, content, args, message):
    path = tmp_path / "bad.csv"
    if content is not None:
        path.write_text(content)
    code, out, err = run(capsys, "report", str(path), *args, "--out", str(tmp_path / "rep"))
    assert code == 2
    first = [ln for ln in err.splitlines() if ln.startswith("xcorrstat: error:")]
    assert len(first) == 1, err
    for part in [message] if isinstance(message, str) else message:
        assert part in first[0], err
    assert out == ""
    assert not (tmp_path / "rep").exists()


def test_bad_option_values_are_usage_errors(capsys):
    for argv in (["report", "--level", "document"], ["report", "--correction", "sidak"],
                 ["report", "--n-resamples", "many"]):
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 2
        assert "invalid" in capsys.readouterr().err
