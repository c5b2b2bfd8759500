"""Every name a user types gets a "did you mean" when a known name is close, in Python and on the command line.

Close means: the same but for case, blanks or invisible characters; whole words of exactly one known name
(``mqm`` of ``human_mqm``, ``relevance`` of ``expert_relevance``); or a near spelling. Whole words of several
names list them all ("did you mean one of ..."), never one picked among them.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

import xcorrstat
from xcorrstat import wmt
from xcorrstat._cli import main
from xcorrstat._display import closest, did_you_mean, is_part, name_list
from xcorrstat._io.mtme_checks import did_you_mean as system_hint
from conftest import make_scores
from mtme_tree import write_mtme_tree

KNOWN = ["m0", "m1", "human_mqm", "expert_relevance", "turker_relevance"]


# -- the function -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("typed, hint", [
    ("mqm", "; did you mean 'human_mqm'?"),
    ("MQM", "; did you mean 'human_mqm'?"),
    ("human", "; did you mean 'human_mqm'?"),  # a prefix of one name, at a word boundary
    ("relevance", "; did you mean one of 'expert_relevance', 'turker_relevance'?"),
    ("expert", "; did you mean 'expert_relevance'?"),
    ("M1", "; did you mean 'm1'?"),
    ("human_mqm\u200b", "; did you mean 'human_mqm'?"),
    (" human_mqm", "; did you mean 'human_mqm'?"),
    ("human_mq", "; did you mean 'human_mqm'?"),
    ("zzz", ""),
    ("q", ""),  # one letter is no word to match
])
def test_the_hint(typed, hint):
    assert did_you_mean(typed, KNOWN) == hint


def test_words_are_whole():
    assert is_part("mqm", "human_mqm") and is_part("relevance", "expert-relevance") and is_part("mqm", "a.mqm.b")
    assert is_part("comet", "COMET-22") and is_part("human mqm", "raw human mqm")
    assert not is_part("m1", "m10") and not is_part("qm", "human_mqm") and not is_part("mqm", "mqm")
    assert not is_part("_", "human_mqm")


def test_an_exact_name_but_for_case_is_the_one_answer():
    assert closest("Human", ["human", "human_mqm", "humane"]) == ["human"]
    assert did_you_mean("BLEU", ["bleu", "bleurt"]) == "; did you mean 'bleu'?"


def test_ambiguous_words_list_every_candidate():
    names = [f"{who}_relevance" for who in ("expert", "turker", "crowd", "llm", "judge", "panel", "jury", "x")]
    hint = did_you_mean("relevance", names)
    assert hint.startswith("; did you mean one of 'expert_relevance', 'turker_relevance', ")
    assert hint.endswith(" and 2 more?")
    assert len(closest("relevance", names)) == len(names)


def test_equally_close_spellings_are_all_named():
    assert did_you_mean("wmt2", ["wmt22", "wmt23", "wmt24", "wmt25"]) == \
        "; did you mean one of 'wmt22', 'wmt23', 'wmt24', 'wmt25'?"


def test_the_long_list_puts_the_words_match_first():
    names = [f"metric_{k:03d}" for k in range(200)] + ["human_mqm"]
    assert name_list(names, near="mqm", width=60).startswith("['human_mqm', ")


def test_the_system_hint_is_the_same_function():
    assert system_hint("ONLINE-B\u200b", ["ONLINE-A", "ONLINE-B"]) == " (did you mean 'ONLINE-B'?)"
    assert system_hint("ONLINE", ["ONLINE-A", "ONLINE-B"]) == " (did you mean one of 'ONLINE-A', 'ONLINE-B'?)"
    assert system_hint("zzz", ["ONLINE-A"]) == ""


# -- the command line ---------------------------------------------------------------------------------------------


def _table(tmp_path):
    ds = make_scores(n_metrics=2)
    df = ds.to_dataframe().reset_index().rename(columns={"human": "human_mqm"})
    df = df.assign(expert_relevance=df["human_mqm"] * 2, turker_relevance=df["human_mqm"] * 3)
    path = tmp_path / "scores.csv"
    df.to_csv(path, index=False)
    return str(path)


def _cli(capsys, *argv):
    """The exit code and stderr of a command, whether it or argparse refuses it."""
    try:
        code = main(list(argv))
    except SystemExit as stop:
        code = stop.code
    return code, capsys.readouterr().err


@pytest.mark.parametrize("argv, hint", [
    (["report", "--target", "mqm"], "did you mean 'human_mqm'?"),
    (["report", "--target", "relevance"], "did you mean one of 'expert_relevance', 'turker_relevance'?"),
    (["correlate", "--target", "human_mqm", "--metrics", "M0", "mqm"], "did you mean 'm0'?"),
    (["correlate", "--target", "human_mqm", "--human", "relevance"],
     "did you mean one of 'expert_relevance', 'turker_relevance'?"),
    (["correlate", "--target", "human_mqm", "--lower-is-better", "M1"], "did you mean 'm1'?"),
    (["correlate", "--target", "human_mqm", "--system-col", "sys"], "did you mean 'system'?"),
    (["correlate", "--target", "human_mqm", "--input-col", "inp"], "did you mean 'input'?"),
    (["correlate", "--target", "human_mqm", "--dims", "syst"], "did you mean 'system'?"),
    (["report", "--target", "human_mqm", "--resample", "sytem"], "did you mean 'system'?"),
    (["report", "--target", "human_mqm", "--permute", "sytem"], "did you mean 'system'?"),
])
def test_the_command_line_suggests(capsys, tmp_path, argv, hint):
    command, *rest = argv
    code, err = _cli(capsys, command, _table(tmp_path), *rest, "--no-files" if command == "report" else "--quiet")
    assert code == 2, err
    (line,) = [line for line in err.splitlines() if "error:" in line]  # one line
    assert hint in line, err


def test_the_wmt_command_suggests_test_sets_and_language_pairs(capsys, tmp_path):
    write_mtme_tree(tmp_path, "wmt23", ["en-de"], 3, 8, ["BLEU"], ["refA"], ["mqm"], np.random.default_rng(0))
    code, err = _cli(capsys, "wmt", str(tmp_path), "--testset", "wmt2")
    assert code == 2 and "has no official task list" in err and "did you mean one of 'wmt22', 'wmt23'" in err, err
    code, err = _cli(capsys, "wmt", str(tmp_path), "--testset", "wmt23", "--lps", "en-dee")
    assert code == 2 and "did you mean 'en-de'?" in err, err
    code, err = _cli(capsys, "wmt", str(tmp_path), "--testset", "wmt23", "--lps", "en-de", "--gold", "MQM")
    assert code == 2 and "--gold 'MQM' is not a human score of wmt23" in err and "did you mean 'mqm'?" in err, err


# -- Python ------------------------------------------------------------------------------------------------------


def _scores():
    ds = make_scores(n_metrics=2, extra=("lp", 2))
    ds["human_mqm"] = (ds["human"].dims, ds["human"].values + 1.0)
    return ds


@pytest.mark.parametrize("call, hint", [
    (lambda ds: xcorrstat.correlate(ds, target="mqm"), "'human_mqm'"),
    (lambda ds: xcorrstat.correlate(ds, target="human", metrics=["M0"]), "'m0'"),
    (lambda ds: xcorrstat.correlate(ds, target="human", level="sytem"), "'system'"),
    (lambda ds: xcorrstat.correlate(ds, target="human", method="kendal"), "'kendall'"),
    (lambda ds: xcorrstat.correlate(ds, target="human", method="kendall", variant="C"), "'c'"),
    (lambda ds: xcorrstat.bootstrap(ds, target="human", resample="sytem"), "'system'"),
    (lambda ds: xcorrstat.bootstrap(ds, target="human", resample="boot-system"), "'BOOT-SYSTEMS'"),
    (lambda ds: xcorrstat.compare(ds, target="human", test=xcorrstat.Permutation(permute="inputs")), "'input'"),
    (lambda ds: xcorrstat.compare(ds, target="human", test="permutaton"), "'permutation'"),
    (lambda ds: xcorrstat.compare(ds, target="human", correction="holmes"), "'holm'"),
    (lambda ds: xcorrstat.mean_ci(ds, dim="inputs"), "'input'"),
    (lambda ds: xcorrstat.paired_difference_ci(ds, system_a="s0", system_b="S1"), "'S0'"),
    (lambda ds: xcorrstat.pairwise_accuracy(ds, target="mqm"), "'human_mqm'"),
    (lambda ds: xcorrstat.set_options(progres="never"), "'progress'"),
    (lambda ds: xcorrstat.set_options(progress="nevr"), "'never'"),
    (lambda ds: xcorrstat.set_options(memory_budgt="1GiB"), "'memory_budget'"),
    (lambda ds: wmt.task_set("wmt2"), "one of 'wmt22', 'wmt23'"),
    (lambda ds: wmt.protocol("wmt-23"), "'wmt23'"),
    (lambda ds: xcorrstat.diagnostics.power_analysis(ds, target="mqm", metric="m0"), "'human_mqm'"),
    (lambda ds: xcorrstat.plot.plot_ci(xcorrstat.bootstrap(ds, target="human", metrics=["m0"], level="system",
                                                           resample=xcorrstat.Bootstrap(n_resamples=50, rng=0)),
                                       by="lps"), "'lp'"),
])
def test_python_suggests(call, hint):
    with pytest.raises(ValueError) as err:
        call(_scores())
    text = str(err.value)
    assert "did you mean" in text and hint in text.split("did you mean")[-1], text


@pytest.mark.parametrize("option, typed, hint", [
    ("system", "sytem", "'system'"),
    ("input", "Input ", "'input'"),
    ("dims", ["LP"], "'lp'"),
    ("human", ["mqm"], "'human_mqm'"),
])
def test_the_readers_suggest(option, typed, hint):
    df = _scores().to_dataframe().reset_index()
    options = {"dims": ["lp"], option: typed}
    with pytest.raises(ValueError, match="did you mean " + re.escape(hint)):
        xcorrstat.from_dataframe(df, **options)


def test_read_mtme_suggests(tmp_path):
    write_mtme_tree(tmp_path, "wmt23", ["en-de", "zh-en"], 3, 8, ["BLEU"], ["refA"], ["mqm"],
                    np.random.default_rng(0))
    with pytest.raises(FileNotFoundError, match=r"did you mean 'wmt23'\?"):
        xcorrstat.read_mtme(tmp_path, "wmt-23")
    with pytest.raises(FileNotFoundError, match=r"did you mean 'en-de'\?"):
        xcorrstat.read_mtme(tmp_path, "wmt23", "en-De ")
    with pytest.raises(ValueError, match=r"did you mean 'BLEU'\?"):
        xcorrstat.read_mtme(tmp_path, "wmt23", "en-de", metrics=["bleu"])
    with pytest.raises(ValueError, match=r"did you mean 'mqm'\?"):
        xcorrstat.read_mtme(tmp_path, "wmt23", "en-de", human=["MQM"])
    with pytest.raises(ValueError, match=r"did you mean 'sys'\?"):
        xcorrstat.read_mtme(tmp_path, "wmt23", "en-de", levels=["system"])
    with pytest.raises(ValueError, match=r"did you mean 'seg'\?"):
        xcorrstat.mtme_level(xcorrstat.read_mtme(tmp_path, "wmt23", "en-de"), "segment")


def test_nothing_close_gives_no_hint():
    with pytest.raises(ValueError) as err:
        xcorrstat.correlate(_scores(), target="zzz")
    assert "did you mean" not in str(err.value)
    df = pd.DataFrame({"system": ["a", "b"], "bleu": [1.0, 2.0], "human": [1.0, 3.0]})
    with pytest.raises(ValueError) as err:
        xcorrstat.from_dataframe(df, input=None, system="qqq")
    assert "did you mean" not in str(err.value)


def test_a_task_gold_the_data_lacks_suggests(tmp_path):
    from mtme_tree import write_wmt_tree

    write_wmt_tree(tmp_path, "wmt23", np.random.default_rng(3), k_systems=4, n_segments=20, n_docs=4)
    ds = xcorrstat.read_mtme(tmp_path, "wmt23", ["en-de"])
    tasks = wmt.task_set("wmt23", ["en-de"], data=ds, gold="MQM")
    with pytest.raises(ValueError, match=r"no sys-level human scores 'MQM' for en-de \(did you mean 'mqm'\?\)"):
        with xcorrstat.set_options(progress="never"), warnings.catch_warnings():
            warnings.simplefilter("ignore", wmt.TaskSkippedWarning)  # each task says it; then the error
            wmt.run_tasks(ds, tasks, n_resamples=0)
