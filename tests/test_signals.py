"""SIGINT (Ctrl-C) and SIGTERM: one line, exit 130 or 143, and an output folder that holds the old report or the
new one in full, with nothing left behind.

The trials send a signal at a random moment to ``python -m xcorrstat report --overwrite`` over an earlier
report: 4 of each signal by default, 20 with ``XCORRSTAT_SLOW=1``.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time

import pytest

from conftest import make_scores
from xcorrstat import _cli
from xcorrstat._signals import Terminated, command_signals, signals_held, unwrapped
from xcorrstat._reporting.folder import write_folder, written_before

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

SLOW = os.environ.get("XCORRSTAT_SLOW") == "1"
TRIALS = 20 if SLOW else 4

#: Seconds before the first signal of a trial: Python's start-up, before the package is imported.
STARTUP = 0.3
MANIFEST = "m.json"


def _contents(folder):
    """Every entry of ``folder`` (hidden ones too) to its bytes."""
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def _send_on(monkeypatch, fn_name, call, signum):
    """Make the ``call``-th call of ``os.<fn_name>`` send ``signum`` to this process first."""
    real, calls = getattr(os, fn_name), []

    def patched(*args, **kwargs):
        calls.append(args)
        if len(calls) == call:
            os.kill(os.getpid(), signum)
        return real(*args, **kwargs)

    monkeypatch.setattr(os, fn_name, patched)


@pytest.fixture()
def earlier(tmp_path):
    out = tmp_path / "out"
    write_folder(out, {"a.txt": b"old a", "b.txt": b"old b", "c.txt": b"old c"}, manifest=MANIFEST)
    return out, _contents(out)


def test_ctrl_c_while_the_files_are_written_undoes_them(monkeypatch, earlier):
    out, before = earlier
    _send_on(monkeypatch, "fsync", 3, signal.SIGINT)  # step 1's manifest, a.txt, then b.txt
    with pytest.raises(KeyboardInterrupt) as stop:
        write_folder(out, {"a.txt": b"new a", "b.txt": b"new b", "c.txt": b"new c"}, manifest=MANIFEST,
                     overwrite=True)
    assert not written_before(stop.value)
    assert _contents(out) == before  # the old manifest put back too; no temporary file left
    assert sorted(os.listdir(out.parent)) == ["out"]


def test_sigterm_while_the_files_are_renamed_is_delivered_once_they_are_all_in_place(monkeypatch, earlier):
    out, _ = earlier
    _send_on(monkeypatch, "replace", 2, signal.SIGTERM)  # step 1's manifest, then the first file
    with command_signals(), pytest.raises(Terminated) as stop:
        write_folder(out, {"a.txt": b"new a", "b.txt": b"new b"}, manifest=MANIFEST, overwrite=True)
    assert written_before(stop.value)
    files = _contents(out)
    assert sorted(files) == ["a.txt", "b.txt", MANIFEST]  # c.txt, recorded and unchanged, removed
    assert files["a.txt"] == b"new a" and files["b.txt"] == b"new b"


def test_a_new_folder_stopped_by_a_signal_is_removed(monkeypatch, tmp_path):
    _send_on(monkeypatch, "fsync", 2, signal.SIGINT)
    with pytest.raises(KeyboardInterrupt):
        write_folder(tmp_path / "a" / "b", {"x.txt": b"x", "y.txt": b"y"}, manifest=MANIFEST)
    assert os.listdir(tmp_path) == []


def test_temporary_files_of_a_killed_write_are_removed_by_the_next(earlier):
    out, _ = earlier
    # what SIGKILL during step 2 leaves: a temporary file, recorded in the step-1 manifest
    (out / ".xcorrstat-0badf00d-a.txt").write_bytes(b"new a")
    text = (out / MANIFEST).read_text()
    (out / MANIFEST).write_text(text.replace('"files"', '"temporary": [".xcorrstat-0badf00d-a.txt"], "files"'))
    (out / ".xcorrstat-0badf00d-b.txt").write_bytes(b"not recorded: left alone")
    write_folder(out, {"a.txt": b"newer a"}, manifest=MANIFEST, overwrite=True)
    assert sorted(os.listdir(out)) == [".xcorrstat-0badf00d-b.txt", "a.txt", MANIFEST]


def test_signals_held_delivers_the_first_after_the_block():
    with pytest.raises(KeyboardInterrupt):
        with signals_held() as held:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.01)
            assert held.caught == [signal.SIGINT]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


class _SignalOnDelete:
    """Sends a signal to this process from ``__del__``, where Python drops an exception after printing it."""

    def __init__(self, signum):
        self.signum = signum

    def __del__(self):
        os.kill(os.getpid(), self.signum)  # the handler runs here, inside __del__


@pytest.mark.parametrize("signum, stop", [(signal.SIGINT, KeyboardInterrupt), (signal.SIGTERM, Terminated)])
def test_a_signal_python_drops_in_a_callback_is_raised_after_it(capfd, signum, stop):
    """A weakref or garbage-collection callback, ``__del__``, a ctypes callback: Python prints the exception
    and goes on. In the command, the signal is raised again at the next point where it can be, silently."""
    before = sys.unraisablehook
    reached = []
    with pytest.raises(stop):
        with command_signals():
            _SignalOnDelete(signum)  # deleted at once
            for _ in range(1000):
                time.sleep(0.001)
            reached.append("end")
    assert reached == [] and capfd.readouterr().err == ""
    assert sys.unraisablehook is before


def test_other_exceptions_in_callbacks_still_reach_the_previous_hook(monkeypatch):
    seen = []
    monkeypatch.setattr(sys, "unraisablehook", lambda unraisable: seen.append(type(unraisable.exc_value)))

    class Broken:
        def __del__(self):
            raise ValueError("in __del__")

    with command_signals():
        Broken()
    assert seen == [ValueError]


def test_a_caught_ctrl_c_from_exec_code_keeps_the_exit_code(tmp_path):
    """CPython notes a KeyboardInterrupt that left ``exec`` of a string (as dataclasses and named tuples make their
    methods on import) and, under ``python -m``, kills the process with SIGINT at exit even when it was caught."""
    (tmp_path / "probe").mkdir()
    (tmp_path / "probe" / "__main__.py").write_text(
        "import sys\nfrom xcorrstat._signals import command_signals\n"
        "with command_signals():\n"
        "    try:\n        exec('raise KeyboardInterrupt')\n"
        "    except KeyboardInterrupt:\n        code = 130\n"
        "sys.exit(code)\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    proc = subprocess.run([sys.executable, "-m", "probe"], env=env, capture_output=True, text=True, timeout=120)
    assert (proc.returncode, proc.stderr) == (130, "")


class _SignalOnSetName:
    """A descriptor that sends a signal as its class is made (Python 3.11 wraps what ``__set_name__`` raises)."""

    def __init__(self, signum):
        self.signum = signum

    def __set_name__(self, owner, name):
        os.kill(os.getpid(), self.signum)


@pytest.mark.parametrize("signum, code, word", [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")])
def test_a_signal_python_wraps_in_another_exception_stops_the_command(monkeypatch, capsys, signum, code, word):
    made = []

    def run(args):
        made.append(type("Owner", (), {"attr": _SignalOnSetName(signum)}))  # as on import, e.g. matplotlib's
        time.sleep(1)

    monkeypatch.setattr(_cli, "_run", run)
    assert _cli.main(["correlate"]) == code
    assert made == [] and capsys.readouterr().err == f"xcorrstat: {word}\n"


def test_unwrapped_leaves_other_exceptions_alone():
    with pytest.raises(RuntimeError, match="plain"):
        with unwrapped():
            raise RuntimeError("plain")


# -- the command, stopped at random moments ----------------------------------------------------------------

def _command(data, out, seed):
    return [sys.executable, "-m", "xcorrstat", "report", str(data), "--target", "human", "--n-resamples", "200",
            "--quiet", "--rng", str(seed), "--out", str(out), "--overwrite"]


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """The data, the old report (seed 0) and the new one (seed 1), and how long a run takes."""
    base = tmp_path_factory.mktemp("reports")
    data = base / "scores.csv"
    make_scores(n_metrics=3, n_systems=5, n_inputs=6, seed=1).to_dataframe().reset_index().to_csv(data, index=False)
    took = []
    for name, seed in (("old", 0), ("new", 1)):
        start = time.monotonic()
        subprocess.run(_command(data, base / name, seed), check=True, capture_output=True)
        took.append(time.monotonic() - start)
    return data, _contents(base / "old"), _contents(base / "new"), min(took)


def _trial(tmp_path, reports, signum, at):
    """Send ``signum`` ``at`` seconds after the start; what the process printed and left."""
    data, old, _, _ = reports
    parent = tmp_path / f"trial-{signum}-{at:.3f}"
    out = parent / "rep"
    out.mkdir(parents=True)
    for name, content in old.items():
        (out / name).write_bytes(content)
    proc = subprocess.Popen(_command(data, out, 1), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        proc.wait(timeout=at)
    except subprocess.TimeoutExpired:
        proc.send_signal(signum)
    _, err = proc.communicate(timeout=120)
    return proc.returncode, err.splitlines(), sorted(os.listdir(parent)), _contents(out)


@pytest.mark.parametrize("signum, code, word", [(signal.SIGTERM, 143, "terminated"),
                                                (signal.SIGINT, 130, "interrupted")])
def test_a_signal_at_a_random_moment(tmp_path, reports, signum, code, word):
    """From 0.3 s on (before, Python's own start-up has the signal: see the next test)."""
    _, old, new, took = reports
    rng = random.Random(signum)
    outcomes = []
    for _ in range(TRIALS):
        at = rng.uniform(STARTUP, took)
        rc, err, beside, contents = _trial(tmp_path, reports, signum, at)
        state = "old" if contents == old else "new" if contents == new else "mixed"
        outcomes.append((round(at, 2), rc, state, err[0].split(";")[0] if err else ""))
        assert beside == ["rep"], (at, beside)
        assert state != "mixed", (at, sorted(contents))
        if rc == 0:  # finished before the signal
            assert err == [] and state == "new", (at, err)
        else:
            assert rc == code and len(err) == 1 and err[0].startswith(f"xcorrstat: {word}"), (at, rc, err)
            assert state == "new" or "after the report was written" not in err[0], (at, err)
    print(f"{signal.Signals(signum).name}: {outcomes}")


def test_ctrl_c_in_the_first_second_is_one_line(tmp_path, reports):
    """While the package is imported. From 0.3 s on: Python's own start-up (site-packages, an editable
    install's finder) comes first, and a signal then is Python's to handle (0.1 to 0.2 s here). By 1.5 s a
    fast machine may be writing the report, or done: the one line then says so, or there is none."""
    data = reports[0]
    rng = random.Random(1)
    for k in range(TRIALS):
        at = rng.uniform(STARTUP, 1.5)
        out = tmp_path / f"rep{k}"
        proc = subprocess.Popen(_command(data, out, 0), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        time.sleep(at)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
        lines = err.splitlines()
        if proc.returncode == 0:  # done before the signal
            assert lines == [] and out.exists(), (at, err)
            continue
        assert proc.returncode == 130 and len(lines) == 1 and lines[0].startswith("xcorrstat: interrupted"), (at, err)
        assert out.exists() == ("after the report was written" in lines[0]), (at, err)
