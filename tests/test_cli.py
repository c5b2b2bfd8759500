"""The command line, driven end to end."""

import io
import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import xcorrstat
from xcorrstat._cli import main
from conftest import make_scores


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_default_prints_all_levels_and_methods(capsys, summeval):
    code, out, err = run(capsys, "correlate")
    assert code == 0, err
    assert "expert_relevance" in out and "bundled SummEval" in out
    lines = [ln for ln in out.splitlines() if ln.startswith(("rouge", "bertscore", "qa_eval", "s3_", "bewte",
                                                              "moverscore", "autosummeng", "memog", "npower",
                                                              "meteor"))]
    assert len(lines) == 34
    row = next(ln for ln in lines if ln.startswith("qa_eval_f1 ")).split()
    expected = summeval.corrstat.correlate(target="expert_relevance", level=["system", "input", "global"],
                                           method=["pearson", "spearman", "kendall"]).sel(metric="qa_eval_f1")
    assert [float(v) for v in row[1:]] == [round(float(v), 3) for v in expected.values.ravel()]


def test_csv_and_json_output(capsys, summeval):
    code, out, _ = run(capsys, "correlate", "--table-format", "csv", "--level", "system", "--method", "kendall")
    assert code == 0
    assert out.splitlines()[0] == "metric,system_kendall"  # one header row, flat names
    table = pd.read_csv(io.StringIO(out), index_col="metric")
    got = table["system_kendall"]
    expected = summeval.corrstat.correlate(target="expert_relevance", method="kendall").to_series()
    np.testing.assert_allclose(got.loc[expected.index].values, expected.values, atol=1e-6)
    code, out, _ = run(capsys, "correlate", "--table-format", "json", "--level", "input", "--method", "pearson")
    records = json.loads(out)
    assert len(records) == 34 and {"metric", "level", "coefficient", "correlation", "n"} <= set(records[0])


def test_own_file_with_column_names(capsys, tmp_path):
    ds = make_scores(seed=7)
    df = ds.to_dataframe().reset_index().rename(columns={"system": "sys", "input": "doc"})
    path = tmp_path / "scores.tsv"
    df.to_csv(path, sep="\t", index=False)
    code, out, err = run(capsys, "correlate", str(path), "--target", "human", "--system-col", "sys",
                         "--input-col", "doc", "--level", "global", "--method", "spearman", "--digits", "4")
    assert code == 0, err
    expected = ds.corrstat.correlate(target="human", level="global", method="spearman")
    for m in ["m0", "m3"]:
        line = next(ln for ln in out.splitlines() if ln.startswith(m + " "))
        assert float(line.split()[1]) == round(float(expected.sel(metric=m)), 4)


@pytest.mark.parametrize(
    "content,args,message",
    [
        (None, ["--target", "human"], "no such file"),
        ("system,input,human,m0\nA,d1,1,2\n", [], "--target is required"),
        ("system,input,human,m0\nA,d1,1,2\nB,d1,2,3\nC,d1,3,1\n", ["--target", "humn"], "target='humn'"),
        ("team,input,human,m0\nA,d1,1,2\n", ["--target", "human"], "no system label column found"),
        ("system,input,human,m0\nA,d1,1,2\n", ["--target", "human", "--system-col", "sys"],
         "system='sys': no such column"),
        ("system,input,human,m0\nA,d1,1,2\nA,d1,2,3\n", ["--target", "human"], "duplicate"),
        ("system,input,human,m0\nA,d1,1,x\nB,d1,2,3\nC,d1,3,4\nD,d1,4,5\n", ["--target", "human"], "m0"),
        ("", ["--target", "human"], "empty"),
    ],
)
def test_bad_files_exit_2_with_message(capsys, tmp_path, content, args, message):
    path = tmp_path / "bad.csv"
    if content is not None:
        path.write_text(content)
    code, out, err = run(capsys, "correlate", str(path), *args)
    assert code == 2
    assert err.startswith("xcorrstat: error:") and message in err
    assert out == ""


def test_bad_option_is_argparse_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["correlate", "--level", "document"])
    assert exc.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


def test_python_dash_m_entry_point():
    proc = subprocess.run([sys.executable, "-m", "xcorrstat", "--version"], capture_output=True, text=True,
                          check=True)
    assert proc.stdout.strip() == f"xcorrstat {xcorrstat.__version__}"
