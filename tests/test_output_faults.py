"""Output folders under faults: names taken by the user's entries, mount points, full and read-only disks,
links in the parents, the same bytes on every run, and running out of memory.

The tests that mount a tmpfs run as root only (they are skipped otherwise) and unmount it afterwards.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import numpy as np
import pytest

import xcorrstat
from conftest import make_scores
from mtme_tree import write_mtme_tree
from xcorrstat._cli import main

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

MANIFEST = "xcorrstat-manifest.json"
REPORT = ["ci.png", "ci.svg", "comparisons.csv", "correlations.csv", "csv-metadata.json", "report.html",
          "report.json",
          "significance.png", "significance.svg", MANIFEST]
DRAWS = ["--n-resamples", "20", "--level", "system", "--quiet"]


@pytest.fixture(scope="module")
def scores(tmp_path_factory):
    path = tmp_path_factory.mktemp("data") / "scores.csv"
    make_scores(n_metrics=3, n_systems=5, n_inputs=6, seed=1).to_dataframe().reset_index().to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def earlier(tmp_path_factory, scores):
    """A folder holding a report the command wrote (seed 0)."""
    out = tmp_path_factory.mktemp("earlier") / "rep"
    assert main(["report", str(scores), "--target", "human", *DRAWS, "--out", str(out)]) == 0
    return out


def _report(capsys, scores, out, *extra):
    """Run ``xcorrstat report`` in this process: exit code, stdout, stderr lines."""
    code = main(["report", str(scores), "--target", "human", *DRAWS, "--out", str(out), *extra])
    stdout, err = capsys.readouterr()
    return code, stdout, err.splitlines()


def _contents(folder):
    """Every entry under ``folder`` (hidden ones too): relative path to bytes, or 'dir' / 'link'."""
    found = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = os.path.join(root, name)
            rel = os.path.relpath(path, folder)
            found[rel] = ("link" if os.path.islink(path) else "dir" if os.path.isdir(path)
                          else open(path, "rb").read())
    return found


@pytest.fixture()
def old(tmp_path, earlier):
    """A copy of the earlier report, and its contents."""
    out = tmp_path / "rep"
    shutil.copytree(earlier, out)
    return out, _contents(out)


# -- --overwrite removes only what a report recorded as its own --------------------------------------------

def _folder_at_ci_png(out):
    shutil.rmtree(out) if out.exists() else None
    (out / "ci.png").mkdir(parents=True)
    (out / "ci.png" / "thesis.tex").write_text("my thesis")


def _folder_at_report_html(out):
    (out / "report.html").unlink()
    (out / "report.html").mkdir()
    (out / "report.html" / "index.html").write_text("my page")


def _users_file(out):
    (out / "correlations.csv").write_text("my numbers")


def _unrecorded_file(out):
    """A report of an older version, with no manifest: its files are not known to be the tool's."""
    (out / MANIFEST).unlink()


def _changed_file(out):
    with open(out / "report.json", "a") as fh:
        fh.write("my note")


def _link(out):
    (out / "ci.svg").unlink()
    (out / "ci.svg").symlink_to(out.parent / "elsewhere.svg")


@pytest.mark.parametrize("taken, name, reason", [
    (_folder_at_ci_png, "ci.png", "a folder"),
    (_folder_at_report_html, "report.html", "a folder"),
    (_users_file, "correlations.csv", "a file changed since xcorrstat wrote it"),
    (_unrecorded_file, "correlations.csv", "a file that no manifest of xcorrstat records"),
    (_changed_file, "report.json", "a file changed since xcorrstat wrote it"),
    (_link, "ci.svg", "a symbolic link"),
])
def test_overwrite_never_replaces_what_the_report_did_not_write(capsys, scores, old, taken, name, reason):
    out, _ = old
    (out.parent / "elsewhere.svg").write_text("not mine to delete")
    taken(out)
    before = _contents(out.parent)
    code, stdout, err = _report(capsys, scores, out, "--overwrite")
    assert code == 2 and stdout == ""  # refused before anything was computed
    assert err == [f"xcorrstat: error: --out '{out}': '{out / name}' is {reason}; xcorrstat replaces only files "
                   f"it wrote (listed in {MANIFEST}): move it away or name another folder"]
    assert _contents(out.parent) == before


def test_wmt_out_refuses_a_folder_named_table_md_before_reading(capsys, tmp_path):
    out = tmp_path / "wmt"
    (out / "table.md").mkdir(parents=True)
    (out / "table.md" / "draft.md").write_text("mine")
    code = main(["wmt", str(tmp_path / "no-such-root"), "--testset", "wmt23", "--out", str(out), "--overwrite"])
    err = capsys.readouterr().err.splitlines()
    assert code == 2
    assert err == [f"xcorrstat: error: --out '{out}': '{out / 'table.md'}' is a folder; xcorrstat replaces only "
                   "files it wrote (listed in xcorrstat-wmt-manifest.json): move it away or name another folder"]
    assert (out / "table.md" / "draft.md").read_text() == "mine"


def test_overwrite_removes_the_old_files_it_recorded_and_nothing_else(capsys, scores, old):
    out, _ = old
    (out / "notes.txt").write_text("mine")
    code, _, err = _report(capsys, scores, out, "--overwrite", "--formats", "pdf")
    assert code == 0, err
    assert sorted(os.listdir(out)) == sorted(["ci.pdf", "significance.pdf", "comparisons.csv", "correlations.csv",
                                              "csv-metadata.json", "report.html", "report.json", MANIFEST,
                                              "notes.txt"])
    recorded = json.loads((out / MANIFEST).read_text())["files"]
    assert sorted(recorded) == sorted(set(os.listdir(out)) - {MANIFEST, "notes.txt"})
    assert (out / "notes.txt").read_text() == "mine"


def test_a_recorded_file_now_a_link_is_left_alone_not_followed(capsys, scores, old):
    out, _ = old
    victim = out.parent / "victim.svg"
    victim.write_text("precious")
    (out / "significance.svg").unlink()
    (out / "significance.svg").symlink_to(victim)
    code, _, err = _report(capsys, scores, out, "--overwrite", "--formats", "png")
    assert code == 0, err
    assert victim.read_text() == "precious" and (out / "significance.svg").is_symlink()
    assert (out / "ci.svg").exists() is False  # recorded and unchanged: removed
    assert "significance.svg" not in json.loads((out / MANIFEST).read_text())["files"]


# -- mount points, full and read-only disks --------------------------------------------------------------

@pytest.fixture()
def tmpfs(tmp_path):
    """mount(name, options): a tmpfs mounted on tmp_path/name; unmounted after the test. Root only."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root")
    mounted = []

    def mount(name, options="size=4m"):
        path = tmp_path / name
        path.mkdir(exist_ok=True)
        run = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)], capture_output=True,
                             text=True)
        if run.returncode:
            pytest.skip(f"cannot mount a tmpfs: {run.stderr.strip()}")
        mounted.append(path)
        return path

    yield mount
    for path in reversed(mounted):
        subprocess.run(["umount", "-l", str(path)], check=True)


def test_a_mount_point_as_out(capsys, scores, tmpfs):
    mnt = tmpfs("volume")
    for extra in ([], ["--overwrite", "--rng", "1"]):
        code, _, err = _report(capsys, scores, mnt, *extra)
        assert code == 0, err
        assert sorted(os.listdir(mnt)) == sorted(REPORT) and os.path.ismount(mnt)
    assert json.loads((mnt / "report.json").read_text())["settings"]["rng"] == 1


def test_wmt_out_on_a_mount_point_keeps_the_earlier_run_until_the_new_one_is_written(capsys, tmp_path, tmpfs):
    root = tmp_path / "mtme"
    write_mtme_tree(root, "wmt23", ["en-de", "zh-en"], 4, 12, ["BLEU", "COMET"], ["refA"], ["mqm"],
                    np.random.default_rng(3))
    mnt = tmpfs("wmt-volume")
    (mnt / "notes.txt").write_text("mine")
    argv = ["wmt", str(root), "--testset", "wmt23", "--lps", "en-de,zh-en", "--n-resamples", "0", "--quiet",
            "--out", str(mnt)]
    assert main(argv) == 0
    first = sorted(os.listdir(mnt))
    assert first == sorted(["notes.txt", "pairs.csv", "ranking.csv", "table.md", "table.tex", "tasks.csv",
                            "xcorrstat-wmt-manifest.json"])
    assert main(argv) == 2 and "pass --overwrite" in capsys.readouterr().err
    assert main([*argv, "--overwrite", "--all-metrics"]) == 0, capsys.readouterr().err
    assert sorted(os.listdir(mnt)) == first and os.path.ismount(mnt)
    assert (mnt / "notes.txt").read_text() == "mine"


def _fill(folder, leave):
    """Fill the file system of ``folder`` with one file, leaving about ``leave`` bytes."""
    st = os.statvfs(folder)
    with open(folder / "filler", "wb") as fh:
        try:
            fh.write(bytes(max(st.f_bavail * st.f_frsize - leave, 0)))
            fh.flush()
        except OSError:
            pass


def test_a_full_disk_is_found_before_computing(capsys, scores, tmpfs):
    mnt = tmpfs("full", "size=256k")
    _fill(mnt, 0)
    code, stdout, err = _report(capsys, scores, mnt / "rep")
    assert code == 2 and stdout == ""
    assert err == [f"xcorrstat: error: --out '{mnt / 'rep'}' cannot be written: No space left on device (writing "
                   "a test file of 64 KiB in it)"]
    assert sorted(os.listdir(mnt)) == ["filler"]


def test_a_disk_full_while_writing_names_the_file_and_keeps_the_old_report(capsys, scores, tmpfs, earlier):
    mnt = tmpfs("small", "size=2m")
    shutil.copytree(earlier, mnt / "rep")
    _fill(mnt, 160 * 1024)  # room for the test file, not for the new report
    before = _contents(mnt)
    code, stdout, err = _report(capsys, scores, mnt / "rep", "--overwrite", "--rng", "1")
    assert code == 2 and "System level" in stdout  # computed, then failed writing
    assert len(err) == 1 and err[0].startswith(f"xcorrstat: error: No space left on device: '{mnt / 'rep'}{os.sep}")
    assert err[0].rstrip("'").rsplit(os.sep, 1)[1] in REPORT
    assert _contents(mnt) == before  # the old report, byte for byte; nothing left behind


def test_enospc_while_writing_names_the_file(capsys, scores, old, monkeypatch):
    out, before = old
    real = os.fsync
    calls = []

    def full(fd):
        calls.append(fd)
        if len(calls) == 4:
            raise OSError(28, "No space left on device")
        real(fd)

    monkeypatch.setattr(os, "fsync", full)
    code, _, err = _report(capsys, scores, out, "--overwrite", "--rng", "1")
    assert code == 2
    # the probe, the step-1 manifest, then correlations.csv, comparisons.csv: the second table fails
    assert err == [f"xcorrstat: error: No space left on device: '{out / 'comparisons.csv'}'"]
    assert _contents(out) == before and sorted(os.listdir(out.parent)) == ["rep"]


def test_a_read_only_parent_is_found_before_computing(capsys, scores, tmp_path, tmpfs):
    ro = tmpfs("ro", "ro,size=64k")
    code, stdout, err = _report(capsys, scores, ro / "rep")
    assert code == 2 and stdout == ""
    assert err == [f"xcorrstat: error: --out '{ro / 'rep'}' cannot be written: Read-only file system (making the "
                   f"folder '{ro / 'rep'}')"]


def test_a_read_only_folder_is_found_before_computing(capsys, scores, tmp_path, tmpfs):
    ro = tmpfs("ro", "ro,size=64k")
    code, stdout, err = _report(capsys, scores, ro)
    assert code == 2 and stdout == ""
    assert err == [f"xcorrstat: error: --out '{ro}' cannot be written: Read-only file system (writing a test "
                   "file of 64 KiB in it)"]


def test_a_parent_without_write_permission(capsys, scores, tmp_path):
    parent = tmp_path / "locked"
    parent.mkdir()
    parent.chmod(0o555)
    try:
        if os.access(parent, os.W_OK):
            pytest.skip("this user writes into read-only folders (root)")
        code, stdout, err = _report(capsys, scores, parent / "rep")
    finally:
        parent.chmod(0o755)
    assert code == 2 and stdout == ""
    assert err == [f"xcorrstat: error: --out '{parent / 'rep'}' cannot be written: Permission denied (making the "
                   f"folder '{parent / 'rep'}')"]
    assert os.listdir(parent) == []


# -- links in the parents: resolved, and said ------------------------------------------------------------

def test_a_link_in_a_parent_is_resolved_and_said(capsys, scores, tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real, target_is_directory=True)
    code = main(["report", str(scores), "--target", "human", "--n-resamples", "20", "--level", "system",
                 "--out", str(tmp_path / "link" / "rep")])
    err = capsys.readouterr().err.splitlines()
    assert code == 0
    assert (f"xcorrstat report: a parent folder of --out is a symbolic link: writing to {real / 'rep'}") in err
    assert sorted(os.listdir(real / "rep")) == sorted(REPORT)


# -- the same report, the same bytes -----------------------------------------------------------------------

def test_figures_are_the_same_bytes_on_every_run(tmp_path):
    rep = xcorrstat.report(make_scores(n_metrics=3, n_systems=5, n_inputs=6, seed=1), target="human",
                           level="system", n_resamples=20, rng=0)
    rep.save(tmp_path / "a", formats=["png", "svg", "pdf"])
    rep.save(tmp_path / "b", formats=["png", "svg", "pdf"])
    names = sorted(os.listdir(tmp_path / "a"))
    assert {"ci.svg", "ci.pdf", "significance.png"} <= set(names)
    for name in names:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    svg = (tmp_path / "a" / "ci.svg").read_text()
    assert "<dc:date>" not in svg and "<svg" in svg


# -- out of memory: one line with a hint -------------------------------------------------------------------

def _out_of_memory(*args, **kwargs):
    raise MemoryError("Unable to allocate 7.45 GiB for an array with shape (1000, 1000000)")


@pytest.mark.parametrize("command, target, hint", [
    (["report"], "xcorrstat._cli.report", "fewer metrics (--metrics) or draws (--n-resamples)"),
    (["correlate"], "xcorrstat._cli.correlate", "fewer metrics (--metrics)"),
    (["wmt", "root", "--testset", "wmt23"], "xcorrstat._wmtcli.read_mtme",
     "fewer language pairs (--lps) or draws (--n-resamples), without --all-metrics"),
])
def test_a_memory_error_is_one_line_with_a_hint(capsys, scores, tmp_path, monkeypatch, command, target, hint):
    monkeypatch.setattr(target, _out_of_memory)
    argv = command if command[0] == "wmt" else [*command, str(scores), "--target", "human"]
    code = main([*argv, "--quiet", "--out", str(tmp_path / "out")] if command[0] != "correlate" else argv)
    stdout, err = capsys.readouterr()
    assert code == 1
    assert err.splitlines() == [f"xcorrstat: error: out of memory: try {hint}, or run from Python with a smaller "
                                "xcorrstat.set_options(memory_budget=...) or on a Dask cluster (see the scale-out "
                                "page) (Unable to allocate 7.45 GiB for an array with shape (1000, 1000000))"]
    assert not (tmp_path / "out").exists()
