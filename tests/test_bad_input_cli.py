"""Bad input on the command line: exit code 2 (130 for Ctrl-C) and one line naming what is wrong."""

import gzip
import hashlib
import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from xcorrstat._cli import MESSAGE_WIDTH, main

GOOD = "system,input,human,m0,m1\n" + "".join(
    f"S{s},d{i},{(s * 7 + i * 3) % 5},{(s * 5 + i) % 7},{(s + 2 * i) % 4}\n" for s in range(4) for i in range(5))


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def usage_error(capsys, *argv):
    """argparse refuses the options: exit code 2 and its message on stderr."""
    with pytest.raises(SystemExit) as exc:
        main([str(a) for a in argv])
    return exc.value.code, capsys.readouterr().err


def error_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.startswith("xcorrstat: error:")]
    assert len(lines) == 1, err
    return lines[0]


@pytest.fixture()
def good(tmp_path):
    path = tmp_path / "scores.csv"
    path.write_text(GOOD)
    return path


@pytest.fixture()
def old_report(tmp_path):
    """A previous report: its page, and the manifest that records it."""
    out = tmp_path / "rep"
    out.mkdir()
    (out / "report.html").write_text("old")
    old = {"size": 3, "sha256": hashlib.sha256(b"old").hexdigest()}
    (out / "xcorrstat-manifest.json").write_text(json.dumps({"format": "xcorrstat-manifest-1",
                                                             "files": {"report.html": [old]}}))
    return out


# -- files that cannot be read: the file, and the line where there is one ---------------------------------

def _write(path, content):
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    return path


FILES = [
    ("missing.csv", None, ["no such file", "missing.csv"]),
    ("empty.csv", "", ["file is empty", "empty.csv"]),
    ("header.csv", "system,input,human,m0\n", ["no rows in", "header.csv"]),
    ("dup.csv", "system,input,human,m0,m0\nA,d1,1,2,3\nB,d1,2,3,4\nC,d1,3,1,2\n",
     ["dup.csv", "column name 'm0' appears twice"]),
    ("rows.csv", "system,input,human,m0\nA,d1,1,2\nB,d1,2,3\nA,d1,2,3\n",
     ["rows.csv", "1 duplicate row(s) for (system, input): data row 3", "repeats data row 1"]),
    ("value.csv", "system,input,human,m0\nA,d1,1,2\nB,d1,2,3\nC,d1,3,x\nD,d1,4,5\n",
     ["column 'm0'", "first non-numeric entry: 'x' in data row 3"]),
    ("corrupt.csv.gz", gzip.compress(GOOD.encode())[:40], ["corrupt.csv.gz", "gzip"]),
    ("bad.jsonl", '{"system": "A", "input": "d1", "human": 1, "m0": 2}\n{"system": "B", oops\n',
     ["bad.jsonl", "line 2", "not valid JSON"]),
    ("table.nc", GOOD, ["table.nc", "not a readable netCDF file", "format='csv'"]),
    ("scores.xlsx", GOOD, ["cannot tell the format", "scores.xlsx"]),
    ("label.csv", "system,input,human,m0\nA,d1,1,2\n,d1,2,3\n",
     ["system='system': 1 missing label(s), first in data row 2"]),
]


@pytest.mark.parametrize("command", ["correlate", "report"])
@pytest.mark.parametrize("name,content,words", FILES, ids=[f[0] for f in FILES])
def test_unreadable_files_exit_2_naming_the_file(capsys, tmp_path, command, name, content, words):
    path = tmp_path / name
    if content is not None:
        _write(path, content)
    extra = ["--out", tmp_path / "rep"] if command == "report" else []
    code, out, err = run(capsys, command, path, "--target", "human", *extra)
    assert code == 2
    line = error_line(err)
    for word in words:
        assert word in line, err
    assert out == ""
    assert not (tmp_path / "rep").exists()


# -- columns: target, metrics, labels ------------------------------------------------------------------

COLUMNS = [
    (["--target", "humn"], ["target='humn' is not a score in the data", "available: ['human', 'm0', 'm1']"]),
    (["--target", "domain"], ["target='domain'", "label column, not a score"]),
    (["--target", "human", "--metrics", "domain"], ["metrics='domain'", "label column, not a score"]),
    (["--target", "human", "--metrics", "human", "m0"], ["includes the target 'human'"]),
    (["--target", "human", "--metrics", "nope"], ["metrics='nope' is not a score in the data"]),
    (["--target", "human", "--system-col", "sys"], ["system='sys': no such column"]),
    (["--target", "human", "--input-col", "segment"], ["input='segment': no such column"]),
    (["--target", "human", "--human", "nope"], ["human=['nope']"]),
    (["--target", "\x1b[31mred"], ["target='\\x1b[31mred'"]),
]


@pytest.mark.parametrize("args,words", COLUMNS, ids=[" ".join(a) for a, _ in COLUMNS])
def test_bad_columns_exit_2_naming_the_column(capsys, tmp_path, args, words):
    path = tmp_path / "wmt.csv"
    frame = pd.read_csv(pd.io.common.StringIO(GOOD))
    frame["domain"] = np.where(frame["input"].isin(["d1", "d3"]), "news", "chat")
    frame.to_csv(path, index=False)
    code, out, err = run(capsys, "correlate", path, *args)
    assert code == 2
    line = error_line(err)
    for word in words:
        assert word in line, err
    assert "\x1b" not in err


def test_target_is_required_with_a_file(capsys, good):
    code, _, err = run(capsys, "report", good, "--no-files")
    assert code == 2
    assert "--target is required with a FILE" in error_line(err)


# -- options -------------------------------------------------------------------------------------------

USAGE = [
    (["correlate", "--level", "document"], "argument --level: invalid choice: 'document'"),
    (["report", "--method", "cosine"], "argument --method: invalid choice: 'cosine'"),
    (["report", "--test", "t"], "argument --test: invalid choice: 't'"),
    (["report", "--correction", "sidak"], "argument --correction: invalid choice: 'sidak'"),
    (["report", "--formats", "gif"], "argument --formats: invalid choice: 'gif'"),
    (["report", "--digits", "-1"], "argument --digits: must be an integer from 0 to 15, got -1"),
    (["correlate", "--digits", "-1"], "argument --digits: must be an integer from 0 to 15, got -1"),
    (["correlate", "--digits", "two"], "argument --digits: must be an integer from 0 to 15, got 'two'"),
    (["report", "--confidence-level", "1.5"], "argument --confidence-level: must be a number strictly between "
                                              "0 and 1, got '1.5'"),
    (["report", "--alpha", "0"], "argument --alpha: must be a number strictly between 0 and 1, got '0'"),
    (["report", "--n-resamples", "many"], "argument --n-resamples: invalid int value: 'many'"),
]


@pytest.mark.parametrize("argv,words", USAGE, ids=[" ".join(a) for a, _ in USAGE])
def test_bad_option_values_are_usage_errors(capsys, argv, words):
    code, err = usage_error(capsys, *argv)
    assert code == 2
    assert words in err


@pytest.mark.parametrize("value", ["0", "-3"])
def test_n_resamples_must_be_positive(capsys, good, value):
    code, out, err = run(capsys, "report", good, "--target", "human", "--n-resamples", value, "--no-files")
    assert code == 2
    assert f"--n-resamples must be a positive integer, got {value}" in error_line(err)
    assert out == ""


def test_negative_epsilon_names_the_option(capsys, good):
    code, _, err = run(capsys, "correlate", good, "--target", "human", "--epsilon", "-1")
    assert code == 2
    assert "epsilon must be a finite number >= 0, got -1.0" in error_line(err)


# -- --out: checked before any computing ---------------------------------------------------------------

def test_existing_report_without_overwrite(capsys, good, old_report):
    code, out, err = run(capsys, "report", good, "--target", "human", "--out", old_report)
    assert code == 2
    assert f"--out '{old_report}' already exists and holds a report; pass --overwrite to replace it" \
        in error_line(err)
    assert out == "" and (old_report / "report.html").read_text() == "old"


def test_out_is_a_file(capsys, good, tmp_path):
    target = tmp_path / "rep.txt"
    target.write_text("mine")
    code, out, err = run(capsys, "report", good, "--target", "human", "--out", target, "--overwrite")
    assert code == 2
    assert f"--out '{target}' exists and is not a directory" in error_line(err)
    assert target.read_text() == "mine" and out == ""


def test_out_is_a_symlink(capsys, good, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    link = tmp_path / "rep"
    link.symlink_to(elsewhere, target_is_directory=True)
    code, _, err = run(capsys, "report", good, "--target", "human", "--out", link, "--overwrite")
    assert code == 2
    assert f"--out '{link}' is a symbolic link; a report is never written through a link" in error_line(err)
    assert list(elsewhere.iterdir()) == []


def test_out_holds_a_file_of_the_user_under_a_report_name(capsys, good, old_report):
    (old_report / "correlations.csv").write_text("mine")
    code, out, err = run(capsys, "report", good, "--target", "human", "--out", old_report, "--overwrite")
    assert code == 2 and out == ""
    assert (f"--out '{old_report}': '{old_report / 'correlations.csv'}' is a file that no manifest of xcorrstat "
            "records") in error_line(err)
    assert (old_report / "correlations.csv").read_text() == "mine"
    assert (old_report / "report.html").read_text() == "old"


# -- Ctrl-C and long values, in a real process ---------------------------------------------------------

def test_ctrl_c_while_reading_exits_130(capsys, good, monkeypatch):
    import xcorrstat._cliscores as cliscores  # where the commands read their files

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(cliscores, "read", interrupted)
    code, out, err = run(capsys, "correlate", good, "--target", "human")
    assert code == 130
    assert err.splitlines() == ["xcorrstat: interrupted"] and out == ""


def test_a_huge_cell_is_cut_in_the_message(tmp_path):
    path = tmp_path / "big.csv"
    path.write_text("system,input,human,m0\nA,d1,1,2\nB,d1,2," + "y" * 1_000_000 + "\nC,d1,3,1\n")
    proc = subprocess.run([sys.executable, "-m", "xcorrstat", "correlate", str(path), "--target", "human"],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stdout == ""
    line = error_line(proc.stderr)
    assert "column 'm0'" in line and "yyyy" in line
    assert len(line) <= len("xcorrstat: error: ") + MESSAGE_WIDTH
    assert "Traceback" not in proc.stderr


def test_system_level_data_refuse_the_input_level(capsys, tmp_path):
    path = tmp_path / "sys.csv"
    path.write_text("system,human,m0,m1\n" + "".join(f"S{s},{s % 3},{(s * 5) % 7},{s}\n" for s in range(6)))
    code, out, err = run(capsys, "report", path, "--target", "human", "--level", "input", "--no-files")
    assert code == 2
    line = error_line(err)
    assert "level='input'" in line and "system-level" in line
    assert out == ""
