"""Progress for every long phase: the bootstrap's bar, a line per round of the all-pairs draws (fixed and
``n_resamples="auto"``), the long two-metric permutation test, the WMT tasks and the tests of a power analysis;
on stderr only where a person sees it (the default ``progress="auto"``), and never a changed number."""

import io
import os
import subprocess
import sys

import numpy as np
import pytest
import xarray as xr

import xcorrstat
from xcorrstat._cli import main
from xcorrstat._display import stream_is_interactive
from xcorrstat._options import show_progress
from conftest import make_scores
from mtme_tree import write_mtme_tree

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self):
        return True


def lines(err, word):
    return [line for line in err.splitlines() if line.startswith("xcorrstat: ") and word in line]


def write_table(tmp_path, ds):
    path = tmp_path / "scores.csv"
    ds.to_dataframe().reset_index().to_csv(path, index=False)
    return path


def three_metrics():
    return make_scores(n_metrics=3, n_systems=8, n_inputs=10, seed=3)


# -- the default and where it shows ---------------------------------------------------------------------------


def test_the_default_is_auto():
    assert xcorrstat.get_options()["progress"] == "auto"


def test_auto_writes_nothing_to_captured_output(capsys):
    """pytest's capture (as a log or a pipe) is not a terminal: the default writes no progress there, so the
    test suite and the doctests stay quiet."""
    xcorrstat.compare(three_metrics(), target="human", test=xcorrstat.Permutation(max_resamples=2000, rng=0))
    assert not show_progress(True)
    assert capsys.readouterr().err == ""


def test_auto_writes_to_a_terminal(monkeypatch):
    terminal = Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    xcorrstat.compare(three_metrics(), target="human", test=xcorrstat.Permutation(max_resamples=2000, rng=0))
    assert lines(terminal.getvalue(), "permutation draws, round 1 of at most")


def test_stream_is_interactive():
    assert stream_is_interactive(Terminal())
    assert not stream_is_interactive(io.StringIO())
    with open(os.devnull, "w") as file:
        assert not stream_is_interactive(file)
    read, write = os.pipe()
    with os.fdopen(read) as r, os.fdopen(write, "w") as w:
        assert not stream_is_interactive(w) and not stream_is_interactive(r)
    assert not stream_is_interactive()  # pytest's captured stderr
    # a Jupyter kernel's stream is ipykernel's OutStream, whose isatty() is False; a subclass of it too
    out_stream = type("OutStream", (io.StringIO,), {"__module__": "ipykernel.iostream"})
    assert stream_is_interactive(out_stream()) and not out_stream().isatty()
    assert stream_is_interactive(type("Wrapped", (out_stream,), {"__module__": "somewhere.else"})())


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="no pseudo-terminal on this system")
def test_a_real_terminal_is_interactive():
    leader, follower = os.openpty()
    try:
        with os.fdopen(follower, "w", closefd=False) as tty:
            assert stream_is_interactive(tty)
    finally:
        os.close(leader)
        os.close(follower)


def test_never_and_always(capsys, monkeypatch):
    monkeypatch.setattr("sys.stderr", Terminal())
    with xcorrstat.set_options(progress="never"):
        assert not show_progress(True)
    monkeypatch.undo()
    with xcorrstat.set_options(progress="always"):
        assert show_progress(True) and not show_progress(False)


# -- the permutation phase ------------------------------------------------------------------------------------


def test_compare_writes_each_round_under_always(capsys):
    with xcorrstat.set_options(progress="always"):
        res = xcorrstat.compare(three_metrics(), target="human",
                                test=xcorrstat.Permutation(max_resamples=3000, rng=0))
    err = capsys.readouterr().err
    start = lines(err, "permutation draws of 3 metric pair(s): until every corrected decision at alpha=0.05")
    assert len(start) == 1 and "1,000 to 3,000 draws in at most 3 rounds" in start[0]
    rounds = lines(err, "permutation draws, round ")
    assert rounds and rounds[0].startswith("xcorrstat: permutation draws, round 1 of at most 3: 1,000 draws so far, ")
    n_open = int(res.attrs["n_open"])
    assert rounds[-1].split(": ")[2].endswith(f"{n_open} of 6 corrected decisions still open")
    assert len(rounds) <= 3 and all("decisions still open" in line for line in rounds)


def test_compare_rounds_say_what_the_next_round_draws(capsys):
    ds = xcorrstat.datasets.summeval()
    metrics = ["rouge_1_f1", "rouge_2_f1", "meteor", "moverscore", "qa_eval_f1"]  # one decision open a while
    with xcorrstat.set_options(progress="always"):
        res = xcorrstat.compare(ds, target="expert_relevance", metrics=metrics,
                                test=xcorrstat.Permutation(max_resamples=3000, rng=0))
    rounds = lines(capsys.readouterr().err, "permutation draws, round ")
    schedule = [1000, 2000, 3000]
    assert len(rounds) == schedule.index(int(res.attrs["n_resamples_used"])) + 1 >= 2
    for k, line in enumerate(rounds):
        assert line.split(": ")[2].startswith(f"{schedule[k]:,} draws so far")
        if k < len(rounds) - 1:
            assert f"; next round: 1 metric pair(s) draw on to {schedule[k + 1]:,}" in line
    assert "next round" not in rounds[-1] and f"{res.attrs['n_open']} of 20 corrected decisions" in rounds[-1]


def test_compare_with_fixed_draws_and_the_bootstrap_test(capsys):
    with xcorrstat.set_options(progress="always"):
        xcorrstat.compare(three_metrics(), target="human", test=xcorrstat.Permutation(n_resamples=300, rng=0))
        assert lines(capsys.readouterr().err, "permutation draws of 3 metric pair(s): 300 draws")
        xcorrstat.compare(three_metrics(), target="human", test=xcorrstat.Bootstrap(max_resamples=2000, rng=0))
        assert lines(capsys.readouterr().err, "bootstrap draws, round 1 of at most 2")


def test_a_round_computed_through_a_task_graph_shows_its_bar(capsys, monkeypatch):
    monkeypatch.setattr("xcorrstat._resampling.engine.SMALL_WORK", 0)  # the draws go through a task graph
    with xcorrstat.set_options(progress="always"):
        xcorrstat.compare(three_metrics(), target="human", level="input", method="kendall",
                          test=xcorrstat.Permutation(max_resamples=2000, rng=0))
    err = capsys.readouterr().err
    assert "Completed" in err and lines(err, "permutation draws, round 1")


def test_report_cli_shows_the_permutation_phase_with_progress(capsys, tmp_path):
    path = write_table(tmp_path, three_metrics())
    argv = ["report", str(path), "--target", "human", "--no-files", "--level", "system", "--max-resamples", "400"]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "system level: permutation tests of all metric pairs" in err and not lines(err, "draws")  # a log
    assert main([*argv, "--progress"]) == 0
    err = capsys.readouterr().err
    phase = err.index("system level: permutation tests of all metric pairs")
    assert lines(err[phase:], "permutation draws of 3 metric pair(s)")
    assert lines(err[phase:], "permutation draws, round 1 of at most 1: 400 draws so far, ")
    assert main([*argv, "--n-resamples", "300", "--progress"]) == 0
    assert lines(capsys.readouterr().err, "permutation draws of 3 metric pair(s): 300 draws")
    assert main([*argv, "--quiet"]) == 0
    assert capsys.readouterr().err == ""
    assert main([*argv, "--quiet", "--progress"]) == 0  # --progress asks for the progress, --quiet for no status
    err = capsys.readouterr().err
    assert lines(err, "permutation draws, round 1") and "xcorrstat report:" not in err
    assert lines(err, "system level: permutation tests of all metric pairs")  # the phases, as progress lines


def test_report_in_python_says_its_phases(capsys, caplog):
    ds = three_metrics()
    with xcorrstat.set_options(progress="always"):
        xcorrstat.report(ds, target="human", level="system", n_resamples=200, rng=0)
    err = capsys.readouterr().err
    assert lines(err, "system level: bootstrap CIs (200 resamples)")
    assert lines(err, "system level: permutation tests of all metric pairs")
    assert err.index("bootstrap CIs") < err.index("permutation tests") < err.index("permutation draws of 3")
    with caplog.at_level("INFO", logger="xcorrstat.report"), xcorrstat.set_options(progress="always"):
        xcorrstat.report(ds, target="human", level="system", n_resamples=200, rng=0)
    assert "system level: bootstrap CIs (200 resamples)" in caplog.messages  # a logging that listens gets them
    assert not lines(capsys.readouterr().err, "level:")  # once, not twice


def test_report_cli_in_a_subprocess_writes_progress_only_with_the_flag(tmp_path):
    path = write_table(tmp_path, three_metrics())
    argv = [sys.executable, "-m", "xcorrstat", "report", str(path), "--target", "human", "--no-files",
            "--level", "system", "--n-resamples", "200"]
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    plain = subprocess.run(argv, capture_output=True, text=True, timeout=300, env=env, cwd=ROOT)
    shown = subprocess.run([*argv, "--progress"], capture_output=True, text=True, timeout=300, env=env, cwd=ROOT)
    assert plain.returncode == 0 and shown.returncode == 0, plain.stderr + shown.stderr
    assert not lines(plain.stderr, "draws") and lines(shown.stderr, "permutation draws of 3 metric pair(s): 200 draws")
    assert plain.stdout == shown.stdout  # the same report


# -- the other long phases ------------------------------------------------------------------------------------


def test_a_long_two_metric_permutation_test_says_what_it_draws(capsys, monkeypatch):
    ds = three_metrics()
    test = xcorrstat.Permutation(n_resamples=200, rng=0)
    with xcorrstat.set_options(progress="always"):
        xcorrstat.permutation_test(ds, x="m0", y="m1", target="human", test=test)
        assert capsys.readouterr().err == ""  # small work: done at once, nothing to show
        monkeypatch.setattr("xcorrstat._resampling.engine.SMALL_WORK", 0)
        xcorrstat.permutation_test(ds, x="m0", y="m1", target="human", test=test)
    assert lines(capsys.readouterr().err, "permutation test of m0 against m1: 200 draws of PERM-BOTH at system level")


def test_power_analysis_says_which_test_runs(capsys):
    ds = xcorrstat.datasets.summeval()
    with xcorrstat.set_options(progress="always"):
        xcorrstat.diagnostics.power_analysis(ds, target="expert_relevance", metric="qa_eval_f1", noise=[0.0, 1.0],
                                             tests=["PERM-SYSTEMS", "BOOT-SYSTEMS"], n_trials=4, n_resamples=50,
                                             rng=0)
    err = capsys.readouterr().err
    assert lines(err, "power_analysis: test 1 of 2 (PERM-SYSTEMS), 4 trials")
    assert lines(err, "power_analysis: test 2 of 2 (BOOT-SYSTEMS), 4 trials")


def test_ci_coverage_shows_the_bar_of_its_trials(capsys):
    ds = xcorrstat.datasets.summeval()
    with xcorrstat.set_options(progress="always"):
        xcorrstat.diagnostics.ci_coverage(ds, target="expert_relevance", metrics="qa_eval_f1", n_trials=4,
                                          n_resamples=50, rng=0)
    assert "Completed" in capsys.readouterr().err


@pytest.fixture(scope="module")
def mtme(tmp_path_factory):
    root = tmp_path_factory.mktemp("mtme")
    write_mtme_tree(root, "wmt23", ["en-de"], 5, 24, ["BLEU", "COMET"], ["refA"], ["mqm"], np.random.default_rng(2))
    return root


def test_wmt_tasks_say_task_i_of_n(capsys, mtme):
    from xcorrstat.wmt import run_tasks, task_set

    ds = xcorrstat.read_mtme(mtme, "wmt23")
    tasks = task_set("wmt23", ["en-de"])[:3]
    with xcorrstat.set_options(progress="always"):
        run_tasks(ds, tasks, n_resamples=20, rng=0)
    err = capsys.readouterr().err
    told = lines(err, "wmt task ")
    assert [line.split(":")[1] for line in told] == [f" wmt task {k} of 3" for k in (1, 2, 3)]
    assert all(t.label in line for t, line in zip(tasks, told))
    assert not lines(err, "draws")  # a task's own computation is not shown: the tasks are the progress


def test_wmt_cli_takes_progress(capsys, mtme):
    argv = ["wmt", str(mtme), "--testset", "wmt23", "--lps", "en-de", "--n-resamples", "20"]
    assert main(argv) == 0
    assert not lines(capsys.readouterr().err, "wmt task ")  # captured stderr is a log
    assert main([*argv, "--progress"]) == 0
    assert lines(capsys.readouterr().err, "wmt task 1 of ")


# -- progress never changes a number ---------------------------------------------------------------------------


@pytest.mark.parametrize("through_graph", [False, True])
def test_results_are_identical_with_progress_on_and_off(capsys, monkeypatch, through_graph):
    if through_graph:
        monkeypatch.setattr("xcorrstat._resampling.engine.SMALL_WORK", 0)
    ds = make_scores(n_metrics=3, n_systems=7, n_inputs=9, seed=5, nan_frac=0.1)
    calls = {
        "compare auto": lambda: xcorrstat.compare(ds, target="human", level="input", method="kendall",
                                                  test=xcorrstat.Permutation(max_resamples=2000, rng=4)),
        "compare fixed": lambda: xcorrstat.compare(ds, target="human", level="system",
                                                   test=xcorrstat.Permutation(n_resamples=300, rng=4,
                                                                              keep_distribution=True)),
        "compare bootstrap": lambda: xcorrstat.compare(ds, target="human", level="system",
                                                       test=xcorrstat.Bootstrap(max_resamples=2000, rng=4)),
        "bootstrap": lambda: xcorrstat.bootstrap(ds, target="human", level=["system", "input"],
                                                 resample=xcorrstat.Bootstrap(n_resamples=300, rng=4,
                                                                              keep_distribution=True)),
        "permutation_test": lambda: xcorrstat.permutation_test(ds, x="m0", y="m1", target="human",
                                                               test=xcorrstat.Permutation(n_resamples=300, rng=4)),
    }
    for name, call in calls.items():
        with xcorrstat.set_options(progress="never"):
            off = call()
        with xcorrstat.set_options(progress="always"):
            on = call()
        xr.testing.assert_identical(on, off)
        for var in off.data_vars:
            np.testing.assert_array_equal(on[var].values, off[var].values, err_msg=f"{name}: {var}")
    err = capsys.readouterr().err
    assert ("Completed" in err) == through_graph  # the bars of the task graphs, when there are some


def test_the_pair_outcome_test_says_each_rerun(capsys):
    """The pair-outcome test (swap="pairs") cannot continue its draws from a draw id: each round reruns it
    with more draws, and says so."""
    ds = make_scores(n_metrics=3, n_systems=6, n_inputs=10, seed=2, ties=True)
    with xcorrstat.set_options(progress="always"):
        res = xcorrstat.compare(ds, target="human", level="input", method="kendall", variant="acc23",
                                test=xcorrstat.Permutation(swap="pairs", max_resamples=2000, rng=0))
    rounds = lines(capsys.readouterr().err, "draws of all metric pairs, round ")
    assert int(res.attrs["n_resamples"]) == 2000 and len(rounds) == 2  # this seed's data need a second round
    assert rounds[0].startswith("xcorrstat: draws of all metric pairs, round 1 of at most 2: 1,000 draws so far, ")
    assert rounds[0].endswith("; next round: the test rerun with 2,000 draws")
    assert rounds[1].startswith("xcorrstat: draws of all metric pairs, round 2 of at most 2: 2,000 draws so far, ")
    assert rounds[1].endswith(f"{res.attrs['n_open']} of 6 corrected decisions still open")
