"""A warning names the user's line, and a public call gives each of its warnings once.

Every warning of the package goes through ``xcorrstat._warn.warn``: its reported file is the file that
called into the package (this one), never a module of the package, and a public call that reaches the
same warning twice (a report's intervals and tests both leaving out the same human-like columns) gives
it once. Each kind of warning a public call can raise is triggered here from this file.
"""

from __future__ import annotations

import inspect
import os
import tempfile
import threading
import warnings

import numpy as np
import pandas as pd
import pytest

import xcorrstat
from xcorrstat import wmt
from xcorrstat._cli import main
from xcorrstat._validation import TooFewDrawsWarning
from xcorrstat._warn import PACKAGE_DIR, in_package, one_call, user_stacklevel, warn
from conftest import make_scores
from mtme_tree import write_wmt_tree

LEFT_OUT = "as their names look like human judgments"


def human_like(n_metrics: int = 3):
    """Scores with a column named like a human judgment and no role: left out of the default metrics."""
    ds = make_scores(n_metrics=n_metrics)
    ds["human_mqm"] = (("system", "input"), ds["human"].values + np.linspace(0, 1, ds["human"].size).reshape(6, 8))
    return ds


def record(call):
    """The warnings ``call()`` gives, every one recorded."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    return caught


def here(caught, category=Warning, text=""):
    """The recorded warnings of ``category`` whose text holds ``text``; each must name this file."""
    found = [w for w in caught if issubclass(w.category, category) and text in str(w.message)]
    for w in found:
        assert w.filename == __file__, (w.filename, str(w.message))
    return found


def line_of(marker: str) -> int:
    """The line of this file holding ``marker``."""
    lines = inspect.getsource(inspect.getmodule(line_of)).splitlines()
    return next(k for k, line in enumerate(lines, 1) if marker in line and "line_of(" not in line)


# -- the left-out warning -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name, call", [
    ("correlate", lambda ds: xcorrstat.correlate(ds, target="human")),
    ("accessor", lambda ds: ds.corrstat.correlate(target="human", level="input")),
    ("bootstrap", lambda ds: xcorrstat.bootstrap(ds, target="human", level="system",
                                                 resample=xcorrstat.Bootstrap(n_resamples=50, rng=0))),
    ("compare", lambda ds: xcorrstat.compare(ds, target="human", level="system",
                                             test=xcorrstat.Permutation(n_resamples=50, rng=0))),
    ("report", lambda ds: xcorrstat.report(ds, target="human", level=["system", "input"], n_resamples=50, rng=0)),
])
def test_the_left_out_warning_names_this_file_once(name, call):
    ds = human_like()
    with xcorrstat.set_options(progress="never"):
        caught = record(lambda: call(ds))
    left = here(caught, UserWarning, LEFT_OUT)
    assert len(left) == 1, [str(w.message) for w in caught]  # a report's intervals and tests: one warning
    assert "'human_mqm'" in str(left[0].message)


def test_the_reported_line_is_the_call():
    ds = human_like()
    caught = record(lambda: xcorrstat.correlate(ds, target="human"))  # the call's line
    (left,) = here(caught, UserWarning, LEFT_OUT)
    assert left.lineno == line_of("caught = record(lambda: xcorrstat.correlate(ds, target=\"human\"))  # the call")


def test_each_call_warns_again():
    """Once per call, not once per process: a loop's calls each say it (with the filter "always")."""
    ds = human_like()

    def twice():
        for _ in range(2):
            xcorrstat.correlate(ds, target="human")

    assert len(here(record(twice), UserWarning, LEFT_OUT)) == 2


# -- too few draws, decisions left open -----------------------------------------------------------------------


@pytest.mark.parametrize("call, texts", [
    (lambda ds: xcorrstat.bootstrap(ds, target="human", level="system",
                                    resample=xcorrstat.Bootstrap(n_resamples=10, rng=0)), ["95% interval"]),
    (lambda ds: xcorrstat.fisher(ds, target="human", level="system"), []),
    (lambda ds: xcorrstat.mean_ci(ds, n_resamples=10, rng=0), ["95% interval"]),
    (lambda ds: xcorrstat.paired_difference_ci(ds, system_a="S0", system_b="S1", n_resamples=10, rng=0),
     ["95% interval"]),
    (lambda ds: xcorrstat.compare(ds, target="human", level="system",
                                  test=xcorrstat.Permutation(n_resamples=10, rng=0)), ["alpha = 0.05"]),
    (lambda ds: xcorrstat.report(ds, target="human", level=["system", "input"], n_resamples=10, rng=0),
     ["95% interval", "alpha = 0.05"]),
    (lambda ds: ds.corrstat.mean_ci(n_resamples=10, rng=0), ["95% interval"]),
])
def test_too_few_draws_names_this_file_once(call, texts):
    ds = make_scores(n_metrics=3)
    with xcorrstat.set_options(progress="never"):
        caught = record(lambda: call(ds))
    few = here(caught, TooFewDrawsWarning)
    assert sorted(t for t in texts for w in few if t in str(w.message)) == sorted(texts)
    assert len(few) == len(texts), [str(w.message) for w in few]  # each kind once, e.g. per level of a report


def test_open_decisions_name_this_file():
    ds = make_scores(n_metrics=6, n_systems=12, n_inputs=10, seed=1)
    rng = np.random.default_rng(1)
    for k, sd in enumerate([0.1, 0.1, 0.1, 50, 50, 50]):
        ds[f"m{k}"] = (("system", "input"), (ds["human"] + sd * ds[f"m{k}"]).values + rng.normal(size=(12, 1)))
    test = xcorrstat.Permutation(rng=0, n_resamples="auto", max_resamples=200)
    with xcorrstat.set_options(progress="never"):
        caught = record(lambda: xcorrstat.compare(ds, target="human", level="system", test=test))
    (open_,) = here(caught, xcorrstat.OpenDecisionsWarning)
    assert "still open with draws capped at max_resamples=200" in str(open_.message)


# -- the readers' notes, wmt's skipped tasks --------------------------------------------------------------------


def test_a_reader_note_names_this_file():
    df = pd.DataFrame({"system": list("aabb"), "input": list("xyxy"), "bleu": [1.0, 2.0, 3.0, 4.0],
                       "human": [1.0, 2.0, 2.0, 3.0], "metric": list("abcd")})
    caught = record(lambda: xcorrstat.from_dataframe(df))
    (note,) = here(caught, UserWarning, "column 'metric' holds text")
    path = "scores.csv"
    caught = record(lambda: _read_written(df, path))
    assert here(caught, UserWarning, "column 'metric' holds text")
    assert note.category is UserWarning


def _read_written(df, path):
    """A function of this file reading a file: the warning names this file (that function's line)."""
    with tempfile.TemporaryDirectory() as folder:
        df.to_csv(os.path.join(folder, path), index=False)
        return xcorrstat.read(os.path.join(folder, path))


def test_skipped_tasks_name_this_file_once_each(tmp_path):
    write_wmt_tree(tmp_path, "wmt23", np.random.default_rng(3), k_systems=4, n_segments=20, n_docs=4,
                   no_sys_metrics_lp="he-en")
    lps = ["en-de", "he-en", "zh-en"]
    ds = xcorrstat.read_mtme(tmp_path, "wmt23", lps)
    tasks = wmt.task_set("wmt23", lps, data=ds)
    with xcorrstat.set_options(progress="never"):
        caught = record(lambda: wmt.run_tasks(ds, tasks, n_resamples=0))
    skipped = here(caught, wmt.TaskSkippedWarning)
    assert len(skipped) == 2 == len({str(w.message) for w in skipped})
    assert all(not in_package(w.filename) for w in caught)


# -- the command line: one line per warning ---------------------------------------------------------------------


def test_the_command_line_says_each_warning_once_on_one_line(capsys, tmp_path):
    path = tmp_path / "scores.csv"
    human_like().to_dataframe().reset_index().to_csv(path, index=False)
    with xcorrstat.set_options(progress="never"):
        code = main(["report", str(path), "--target", "human", "--no-files", "--n-resamples", "10",
                     "--level", "system", "input"])
    err = capsys.readouterr().err
    assert code == 0, err
    lines = err.splitlines()
    assert sum(LEFT_OUT in line for line in lines) == 1
    assert sum("too few for a 95% interval" in line for line in lines) == 1
    assert sum("too few for a test at alpha" in line for line in lines) == 1
    assert "Warning" not in err and ".py:" not in err  # no Python warning lines, no file of the package


# -- the function itself ------------------------------------------------------------------------------------------


def test_every_public_function_is_one_call():
    namespaces = [xcorrstat, xcorrstat.plot, xcorrstat.wmt, xcorrstat.diagnostics, xcorrstat.agreement,
                  xcorrstat.datasets]
    functions = [(ns.__name__, name) for ns in namespaces for name in ns.__all__
                 if inspect.isfunction(getattr(ns, name))]
    assert len(functions) > 30
    unmarked = [f"{ns}.{name}" for ns, name in functions
                if not getattr(getattr(__import__(ns, fromlist=["_"]), name), "one_call", False)]
    assert not unmarked


def test_a_package_frame_is_recognised():
    assert PACKAGE_DIR.endswith("xcorrstat" + os.sep)
    assert in_package(xcorrstat.__file__) and not in_package(__file__) and not in_package("<stdin>")
    assert user_stacklevel() == 1  # called from outside the package: its caller is the user


def test_nested_calls_and_threads():
    @one_call
    def outer(k):
        inner(k)
        inner(k)

    @one_call
    def inner(k):
        warn(f"said by call {k}", UserWarning)

    caught = record(lambda: outer(0))
    assert [str(w.message) for w in caught] == ["said by call 0"]
    results: list[list[str]] = []

    def in_thread(k):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            outer(k)
        results.append([str(w.message) for w in seen])

    # catch_warnings is not thread-safe: the threads run one after another, each with its own context
    for k in (1, 2):
        t = threading.Thread(target=in_thread, args=(k,))
        t.start()
        t.join()
    assert results == [["said by call 1"], ["said by call 2"]]
