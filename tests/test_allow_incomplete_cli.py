"""``xcorrstat report`` and ``xcorrstat correlate`` on an mt-metrics-eval test set folder whose metric file lacks a
rated system: refused by default in one line naming the file, the system and the flag of the command run;
``--allow-incomplete`` keeps the metric, with the reader's note in the printed heading, as ``xcorrstat wmt`` does.

The oracle of the accepted run is scipy's Pearson on the systems the metric scores, read from the tree's files.
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
import scipy.stats
from mtme_tree import write_wmt_tree

from xcorrstat._cli import main
from xcorrstat._cliscores import ALLOW_INCOMPLETE_HELP

LP = "en-de"
SYS = f"metric-scores/{LP}/BLEU-refA.sys.score"
GONE = "ONLINE-B"


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    tree = write_wmt_tree(tmp_path_factory.mktemp("mtme"), "wmt23", np.random.default_rng(3), k_systems=6,
                          n_segments=20, n_docs=4, lps=[LP])
    path = os.path.join(tree.folder, SYS)
    with open(path, encoding="utf-8") as fh:
        lines = [line for line in fh.read().split("\n")[:-1] if line.split("\t")[0] != GONE]
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("".join(line + "\n" for line in lines))
    return tree


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _scores(tree, rel):
    with open(os.path.join(tree.folder, rel), encoding="utf-8") as fh:
        pairs = (line.split("\t") for line in fh.read().split("\n")[:-1])
        return {s: np.nan if v == "None" else float(v) for s, v in pairs}


@pytest.mark.parametrize("command", [["correlate"], ["report", "--no-files", "--n-resamples", "50"]])
def test_refused_by_default_naming_file_system_and_this_commands_flag(tree, capsys, command):
    code, out, err = _run(capsys, command[0], tree.folder, "--target", "mqm.sys", *command[1:], "--quiet")
    lines = err.strip().splitlines()
    assert code == 2 and out == "" and len(lines) == 1
    assert SYS in lines[0] and f"no line for system {GONE!r}" in lines[0]
    assert lines[0].endswith("pass --allow-incomplete to keep the metric, marked")
    assert "allow_incomplete=True" not in lines[0] and "xcorrstat wmt" not in lines[0]


def test_wmt_names_its_flag_too(tree, capsys):
    code, _, err = _run(capsys, "wmt", os.path.dirname(tree.folder), "--testset", "wmt23", "--lps", LP,
                        "--n-resamples", "0", "--quiet")
    assert code == 2 and err.strip().endswith("pass --allow-incomplete to keep the metric, marked")


def test_correlate_keeps_the_metric_with_a_note_on_the_systems_it_scores(tree, capsys):
    code, out, err = _run(capsys, "correlate", tree.folder, "--target", "mqm.sys", "--level", "system",
                          "--method", "pearson", "--allow-incomplete")
    assert code == 0, err
    assert (f"note: metric BLEU-refA ({LP}, sys) lacks system {GONE!r}, which the human scores 'da-sqm', 'mqm' rate: "
            f"{SYS} has no line for it") in out
    assert "BLEU-refA" in out.split(f"lp = {LP}")[1]
    code, out, _ = _run(capsys, "correlate", tree.folder, "--target", "mqm.sys", "--level", "system",
                        "--method", "pearson", "--allow-incomplete", "--table-format", "json", "--quiet")
    rows = {r["metric"]: r for r in json.loads(out)}
    human = _scores(tree, f"human-scores/{LP}.mqm.sys.score")
    bleu = _scores(tree, SYS)
    rated = [s for s in bleu if s in human and not np.isnan(human[s])]
    expect = scipy.stats.pearsonr([bleu[s] for s in rated], [human[s] for s in rated]).statistic
    assert rows["BLEU-refA"]["n"] == len(rated) == rows["chrF-refA"]["n"] - 1
    assert rows["BLEU-refA"]["correlation"] == pytest.approx(expect, abs=1e-9)


def test_report_keeps_the_metric_with_notes_and_compares_on_common_ground(tree, capsys):
    code, out, err = _run(capsys, "report", tree.folder, "--target", "mqm.sys", "--no-files", "--n-resamples", "50",
                          "--allow-incomplete", "--quiet")
    assert code == 0, err
    assert f"note: metric BLEU-refA ({LP}, sys) lacks system {GONE!r}" in out
    assert "note: common ground: every metric compared on the 6 of 7 rated cells" in out
    assert "(n = 6 systems)" in out and "BLEU-refA" in out.split("rank")[1]


@pytest.mark.parametrize("file", [None, "table"])
def test_refused_where_there_is_no_test_set_folder(tmp_path, capsys, file):
    argv = ["correlate", "--allow-incomplete"]
    if file:
        path = tmp_path / "scores.csv"
        path.write_text("system,input,h,m\na,1,1,2\nb,1,2,1\nc,1,3,3\n", encoding="utf-8")
        argv = ["correlate", str(path), "--target", "h", "--allow-incomplete"]
    code, out, err = _run(capsys, *argv)
    lines = err.strip().splitlines()
    assert code == 2 and out == "" and len(lines) == 1
    assert lines[0].startswith("xcorrstat: error: --allow-incomplete applies to an mt-metrics-eval test set folder")


@pytest.mark.parametrize("command", ["correlate", "report", "wmt"])
def test_the_same_help_in_every_command(capsys, command):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert " ".join(ALLOW_INCOMPLETE_HELP.split()) in text
