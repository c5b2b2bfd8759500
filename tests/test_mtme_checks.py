"""mt-metrics-eval trees checked as its ``CheckScores`` (strict) checks them: a metric file that lacks a rated
system, names a system the test set lacks, or holds ``None`` is refused with one line naming the file, the line
and the system; ``allow_incomplete=True`` (``xcorrstat wmt --allow-incomplete``) keeps it, notes it, ranks every
metric of a task on the units all of them score and marks the metric in every table and file.

The oracle of the accepted run is scipy's Pearson on the systems every metric shares, from the numbers the tree
writer wrote.
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.stats
from mtme_tree import write_mtme_tree, write_wmt_tree

from xcorrstat import read_mtme, wmt
from xcorrstat._io.mtme_checks import did_you_mean
from xcorrstat._reporting.tables import format_table

LP = "en-de"
SYS = f"metric-scores/{LP}/BLEU-refA.sys.score"
SEG = f"metric-scores/{LP}/BLEU-refA.seg.score"
GONE = "ONLINE-B"


@pytest.fixture
def tree(tmp_path):
    return write_wmt_tree(tmp_path, "wmt23", np.random.default_rng(3), k_systems=6, n_segments=20, n_docs=4,
                          lps=[LP])


def _lines(tree, rel):
    with open(os.path.join(tree.folder, rel), encoding="utf-8") as fh:
        return fh.read().split("\n")[:-1]


def _edit(tree, rel, edit):
    lines = edit(_lines(tree, rel))
    with open(os.path.join(tree.folder, rel), "w", encoding="utf-8") as fh:
        fh.write("".join(line + "\n" for line in lines))


def _drop(system):
    return lambda lines: [line for line in lines if line.split("\t")[0] != system]


def _read(tree, **kwargs):
    return read_mtme(os.path.dirname(tree.folder), "wmt23", LP, **kwargs)


def _one_line(err) -> str:
    text = str(err.value)
    assert "\n" not in text
    return text


def _cli(tree, *extra):
    return subprocess.run([sys.executable, "-m", "xcorrstat", "wmt", os.path.dirname(tree.folder), "--testset",
                           "wmt23", "--lps", LP, "--n-resamples", "0", *extra], capture_output=True, text=True)


# ------------------------------------------------------------------------------- refused by default


def test_a_metric_file_without_a_rated_system_is_refused(tree):
    _edit(tree, SYS, _drop(GONE))
    with pytest.raises(ValueError) as err:
        _read(tree)
    text = _one_line(err)
    assert text.startswith(f"{os.path.join(tree.folder, SYS)!r}: no line for system {GONE!r}, which the human "
                           "scores 'da-sqm', 'mqm' rate in en-de")
    assert "allow_incomplete=True" in text and "--allow-incomplete" in text


def test_the_command_refuses_it_naming_file_and_system(tree):
    _edit(tree, SYS, _drop(GONE))
    run = _cli(tree, "--quiet")
    assert run.returncode == 2 and run.stdout == ""
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and SYS in lines[0] and f"no line for system {GONE!r}" in lines[0]


def test_a_missing_system_in_a_segment_file_and_a_domain_cell(tree):
    _edit(tree, SEG, _drop(GONE))
    with pytest.raises(ValueError, match=f"BLEU-refA.seg.score': no line for system {GONE!r}"):
        _read(tree)
    _edit(tree, SEG, lambda lines: lines + [f"{GONE}\t0.5"] * 20)
    rel = f"metric-scores/{LP}/BLEU-refA.domain.score"
    _edit(tree, rel, lambda lines: [line for line in lines if line.split("\t")[:2] != ["news", GONE]])
    with pytest.raises(ValueError, match=f"domain.score': no line for system {GONE!r} in domain 'news'"):
        _read(tree)


def test_exempt_systems_its_own_reference_and_unrated_ones(tmp_path):
    """A metric need not score its reference (as mt-metrics-eval's ``ReferencesUsed``), nor a system no human
    score rates, nor the human systems left out."""
    t = write_mtme_tree(tmp_path, "t", [LP], 3, 6, ["BLEU"], ["refA", "refB"], ["mqm"], np.random.default_rng(7),
                        n_docs=2)
    assert "notes" not in read_mtme(tmp_path, "t", LP).attrs  # BLEU-refB has no line for the system refB
    rel = os.path.join(t.folder, "human-scores", f"{LP}.mqm.sys.score")
    with open(rel, encoding="utf-8") as fh:
        kept = [line for line in fh.read().split("\n")[:-1] if not line.startswith("sys02")]
    with open(rel, "w", encoding="utf-8") as fh:
        fh.write("".join(line + "\n" for line in kept + ["sys02\tNone"]))
    _edit(t, "metric-scores/en-de/BLEU-refB.sys.score", _drop("sys02"))
    read_mtme(tmp_path, "t", LP, levels="sys")  # no human score of sys02 at the sys level
    _edit(t, "metric-scores/en-de/BLEU-refA.sys.score", _drop("refB"))
    with pytest.raises(ValueError, match="BLEU-refA.sys.score': no line for system 'refB'"):
        read_mtme(tmp_path, "t", LP, levels="sys")
    assert "refB" not in read_mtme(tmp_path, "t", LP, levels="sys", include_human_systems=False)["system"]


@pytest.mark.parametrize(("written", "hint"), [
    (GONE + "\u200b", f" (did you mean {GONE!r}?)"),
    ("\u200b" + GONE, f" (did you mean {GONE!r}?)"),
    ("online-b", f" (did you mean {GONE!r}?)"),
    ("ONLNE-B", f" (did you mean {GONE!r}?)"),
    ("zzz", ""),
])
def test_a_system_the_tree_lacks_is_refused_with_a_hint(tree, written, hint):
    lines = _lines(tree, SYS)
    line = next(k for k, text in enumerate(lines) if text.startswith(GONE + "\t")) + 1
    _edit(tree, SYS, lambda ls: [written + text[len(GONE):] if text.startswith(GONE + "\t") else text for text in ls])
    with pytest.raises(ValueError) as err:
        _read(tree)
    text = _one_line(err)
    assert text.startswith(f"{os.path.join(tree.folder, SYS)!r}, line {line}: system {written!r} is not a system "
                           f"of en-de (none of its system outputs or human scores){hint}; ")
    assert "\u200b" not in text  # shown as its escape


def test_did_you_mean():
    assert did_you_mean("sys01 ", ["sys01", "sys02"]) == " (did you mean 'sys01'?)"
    assert did_you_mean("\ufeffsys01", ["sys01"]) == " (did you mean 'sys01'?)"
    assert did_you_mean("other", ["sys01"]) == ""


@pytest.mark.parametrize("missing", ["None", "nan"])
def test_none_scores_in_a_segment_file_are_refused(tree, missing):
    lines = _lines(tree, SEG)
    first = next(k for k, text in enumerate(lines) if text.startswith(GONE + "\t")) + 1
    _edit(tree, SEG, lambda ls: [f"{GONE}\t{missing}" if text.startswith(GONE + "\t") else text for text in ls])
    with pytest.raises(ValueError) as err:
        _read(tree)
    assert _one_line(err).startswith(f"{os.path.join(tree.folder, SEG)!r}, line {first}: system {GONE!r} has no "
                                     f"score ({missing}); a metric file scores every segment of its systems (20 "
                                     "lines without a score)")


def test_human_none_scores_stay_allowed(tree):
    ds = _read(tree)
    assert np.isnan(ds["mqm"].values).any() and "notes" not in ds.attrs


# ------------------------------------------------------------------------------------- accepted


def _pearson_on(tree, metric, systems):
    x = [float(tree.scores[(LP, metric, "sys")][s]) for s in systems]
    z = [float(tree.scores[(LP, "mqm", "sys")][s]) for s in systems]
    return scipy.stats.pearsonr(x, z)[0]


def test_accepted_the_metric_is_kept_noted_and_ranked_on_common_ground(tree):
    _edit(tree, SYS, _drop(GONE))
    ds = _read(tree, allow_incomplete=True)
    assert ds.attrs["notes"] == (f"metric BLEU-refA (en-de, sys) lacks system {GONE!r}, which the human scores "
                                 f"'da-sqm', 'mqm' rate: {SYS} has no line for it",)
    assert np.isnan(ds["BLEU-refA.sys"].sel(system=GONE)) and not np.isnan(ds["COMET-refA.sys"].sel(system=GONE))
    task = wmt.Task(lps=(LP,), level="sys", statistic="pearson")
    with pytest.raises(ValueError, match=f"task 'en-de sys pearson': metric BLEU has no score for system {GONE!r} "
                       "in en-de, which the gold 'mqm' rates; pass allow_incomplete=True"):
        wmt.run_tasks(ds, [task], n_resamples=0)
    res = wmt.run_tasks(ds, [task], n_resamples=0, allow_incomplete=True)
    shared = [s for s in tree.rated(LP) if s != GONE]
    for metric, full in (("BLEU", "BLEU-refA"), ("COMET", "COMET-refA"), ("CometKiwi[noref]", "CometKiwi-src")):
        got = float(res["correlation"].sel(task=task.label, metric=metric))
        assert got == pytest.approx(_pearson_on(tree, full, shared), abs=1e-12), metric
    lacks = res["lacks"].sel(task=task.label)
    assert str(lacks.sel(metric="BLEU").values) == f"system {GONE!r} (en-de)"
    assert (lacks.drop_sel(metric="BLEU").values == "").all()
    assert res.attrs["notes"][0] == ds.attrs["notes"][0]
    assert res.attrs["notes"][1] == (f"task 'en-de sys pearson': metric BLEU lacks system {GONE!r} (en-de), which "
                                     "the gold rates; every metric of the task ranked on the units all of them score")


def test_accepted_none_segments_leave_those_cells_out_for_every_metric(tree):
    _edit(tree, SEG, lambda ls: [f"{GONE}\tNone" if text.startswith(GONE + "\t") else text for text in ls])
    ds = _read(tree, allow_incomplete=True)
    assert ds.attrs["notes"] == (f"metric BLEU-refA (en-de, seg) lacks 20 scores of system {GONE!r}: None in {SEG} "
                                 f"(first on line {1 + 20 * sorted(tree.systems[LP]).index(GONE)})",)
    task = wmt.Task(lps=(LP,), level="seg", statistic="pearson")
    res = wmt.run_tasks(ds, [task], n_resamples=0, allow_incomplete=True)
    rated = np.count_nonzero(~np.isnan(tree.scores[(LP, "mqm", "seg")][GONE]))
    assert str(res["lacks"].sel(task=task.label, metric="BLEU").values) == f"{rated} scores of system {GONE!r} (en-de)"
    systems = [s for s in tree.rated(LP) if s != GONE]
    x = np.concatenate([tree.scores[(LP, "COMET-refA", "seg")][s] for s in systems])
    z = np.concatenate([tree.scores[(LP, "mqm", "seg")][s] for s in systems])
    ok = ~np.isnan(z)
    want = scipy.stats.pearsonr(x[ok], z[ok])[0]
    assert float(res["correlation"].sel(task=task.label, metric="COMET")) == pytest.approx(want, abs=1e-12)


def test_accepted_a_misspelt_system_is_noted_with_the_one_it_lacks(tree):
    _edit(tree, SYS, lambda ls: [GONE + "\u200b" + text[len(GONE):] if text.startswith(GONE + "\t") else text
                                 for text in ls])
    ds = _read(tree, allow_incomplete=True)
    assert len(ds.attrs["notes"]) == 2
    assert ds.attrs["notes"][0].startswith(f"metric BLEU-refA (en-de, sys) scores {GONE + chr(0x200b)!r}, not a "
                                           f"system of en-de (did you mean {GONE!r}?)")
    assert f"lacks system {GONE!r}" in ds.attrs["notes"][1]
    res = wmt.run_tasks(ds, [wmt.Task(lps=(LP,), level="sys", statistic="pearson")], n_resamples=0,
                        allow_incomplete=True)
    assert str(res["lacks"].sel(metric="BLEU").values[0]) == f"system {GONE!r} (en-de)"


def test_accepted_every_table_marks_the_metric(tree):
    _edit(tree, SYS, _drop(GONE))
    ds = _read(tree, allow_incomplete=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = wmt.run_tasks(ds, wmt.task_set("wmt23", [LP], data=ds), n_resamples=0, allow_incomplete=True)
    legend = (f"\u2020 BLEU lacks system {GONE!r} (en-de) in en-de sys accuracy, en-de sys pearson, which the gold "
              "rates: these tasks rank every metric on the units all of them score.")
    for fmt in ("text", "markdown", "latex"):
        table = format_table(res, fmt)
        lines = [line for line in table.splitlines() if not line.startswith("note: ")]  # the notes above a text table
        row = next(line for line in lines if "BLEU" in line and "BLEURT" not in line
                   and not line.lstrip("%").strip().startswith("\u2020"))
        assert row.count("\u2020") == 3, (fmt, row)  # the name, and the two system-level tasks
        assert sum("\u2020" in line for line in lines) == 2, fmt  # that row and the legend
        assert legend.replace("'", "") in table.replace("'", "").replace("\\", ""), fmt


def test_accepted_on_the_command_line(tree, tmp_path):
    _edit(tree, SYS, _drop(GONE))
    out = tmp_path / "out"
    run = _cli(tree, "--allow-incomplete", "--out", str(out))
    assert run.returncode == 0, run.stderr
    assert f"\u2020 BLEU lacks system {GONE!r} (en-de)" in run.stdout
    assert "_BLEU\u2020" in run.stdout
    ranking = pd.read_csv(out / "ranking.csv", keep_default_na=False).set_index("metric")
    assert ranking.loc["BLEU", "lacks"] == (f"en-de sys accuracy: system {GONE!r} (en-de) | en-de sys pearson: "
                                            f"system {GONE!r} (en-de)")
    assert (ranking.drop(index="BLEU")["lacks"] == "").all()
    tasks = pd.read_csv(out / "tasks.csv", keep_default_na=False)
    marked = tasks[tasks["lacks"] != ""]
    assert sorted(marked["task"]) == ["en-de sys accuracy", "en-de sys pearson"]
    assert set(marked["metric"]) == {"BLEU"}
    for name in ("table.md", "table.tex"):
        assert "BLEU\u2020" in (out / name).read_text(encoding="utf-8"), name


def test_the_mark_on_a_terminal_without_it(tree):
    _edit(tree, SYS, _drop(GONE))
    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    run = subprocess.run([sys.executable, "-m", "xcorrstat", "wmt", os.path.dirname(tree.folder), "--testset",
                          "wmt23", "--lps", LP, "--n-resamples", "0", "--allow-incomplete", "-q"],
                         capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr
    assert "_BLEU\\u2020" in run.stdout


def test_the_option_is_true_or_false(tree):
    with pytest.raises(TypeError, match="allow_incomplete must be True or False"):
        _read(tree, allow_incomplete="yes")
    ds = _read(tree)
    with pytest.raises(TypeError, match="allow_incomplete must be True or False"):
        wmt.run_tasks(ds, [wmt.Task(lps=(LP,), level="sys", statistic="pearson")], n_resamples=0,
                      allow_incomplete=1)
    res = wmt.run_tasks(ds, [wmt.Task(lps=(LP,), level="sys", statistic="pearson")], n_resamples=0)
    assert (res["lacks"].values == "").all() and "notes" not in res.attrs
