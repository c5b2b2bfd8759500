"""Numbers and one-line messages: means of scores near the largest float, too few or too many draws,
a deeply nested roles file, a closed pipe, a folder removed while written, two writers of one folder,
and Dask workers with too little memory.

Each test fails on the code before these checks: it prints a wrong correlation, an interval from one
draw without a word, a traceback or an internal error, or waits forever.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import warnings

import numpy as np
import pytest
import scipy.stats

import xcorrstat
from conftest import make_scores
from xcorrstat._cli import main
from xcorrstat._kernels import level_correlation
from xcorrstat._reporting import folder as folder_module
from xcorrstat._reporting.lock import LOCK_NAME
from xcorrstat._validation import MAX_DRAWS, TooFewDrawsWarning

MANIFEST = "xcorrstat-manifest.json"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# -- means of scores near the largest float ------------------------------------------------------------

def _huge(seed: int = 0, s: int = 8, i: int = 20):
    """Scores within a factor 2 of the largest float (their sums overflow), and a target."""
    rng = np.random.default_rng(seed)
    return 1.7e308 * (0.5 + 0.5 * rng.uniform(size=(s, i))), rng.normal(size=(s, i))


@pytest.mark.parametrize("method", ["pearson", "spearman", "kendall"])
def test_system_means_of_scores_near_the_largest_float_match_scipy(method):
    x, z = _huge()
    r, n = level_correlation(x, z, level="system", method=method)
    means = np.mean(np.ldexp(x, -1023), axis=-1)  # an exact scaling: the same order and ratios
    oracle = {"pearson": scipy.stats.pearsonr, "spearman": scipy.stats.spearmanr,
              "kendall": scipy.stats.kendalltau}[method](means, z.mean(axis=-1))[0]
    assert int(n) == 8
    np.testing.assert_allclose(float(r), oracle, rtol=0, atol=1e-12)


def test_system_means_with_missing_cells_near_the_largest_float_match_numpy():
    x, z = _huge(1)
    x[0, :5] = np.nan
    mx, _ = xcorrstat._kernels.system_means(x, z)
    oracle = np.ldexp(np.nanmean(np.ldexp(x, -1023), axis=-1), 1023)
    assert np.all(np.isfinite(mx))
    np.testing.assert_allclose(mx, oracle, rtol=1e-15)


def _scores(x, z):
    import xarray as xr

    dims = ("system", "input")
    return xr.Dataset({"big": (dims, x), "other": (dims, x[::-1].copy()), "human": (dims, z)},
                      coords={"system": [f"s{k}" for k in range(x.shape[0])],
                              "input": [f"i{k}" for k in range(x.shape[1])]})


@pytest.mark.parametrize("method", ["spearman", "kendall"])
def test_draws_of_scores_near_the_largest_float_equal_those_of_the_exactly_scaled_scores(method):
    x, z = _huge(2)
    big, scaled = _scores(x, z), _scores(np.ldexp(x, -1023), z)
    for make in (lambda ds: xcorrstat.bootstrap(ds, target="human", level="system", method=method,
                                                resample=xcorrstat.Bootstrap("input", n_resamples=60, rng=1)),
                 lambda ds: xcorrstat.permutation_test(ds, x="big", y="other", target="human", level="system",
                                                       method=method,
                                                       test=xcorrstat.Permutation("system", n_resamples=60, rng=1)),
                 lambda ds: xcorrstat.permutation_test(ds, x="big", y="other", target="human", level="system",
                                                       method=method,
                                                       test=xcorrstat.Permutation("system", n_resamples=60, rng=1,
                                                                                  standardise="system-means"))):
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)  # no overflow anywhere
            got, want = make(big), make(scaled)
        for name in want.data_vars:
            np.testing.assert_array_equal(got[name].values, want[name].values, err_msg=name)


# -- too few and too many draws ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def scores(tmp_path_factory):
    path = tmp_path_factory.mktemp("data") / "scores.csv"
    make_scores(n_metrics=3, n_systems=5, n_inputs=6, seed=1).to_dataframe().reset_index().to_csv(path, index=False)
    return path


def test_one_draw_is_said_to_be_too_few_for_the_interval_and_the_test(capsys, scores):
    code = main(["report", str(scores), "--target", "human", "--n-resamples", "1", "--level", "system",
                 "--no-files"])
    out, err = capsys.readouterr()
    notes = [line for line in err.splitlines() if "too few" in line]
    assert code == 0 and "System level" in out
    assert notes == [
        "xcorrstat report: note: 1 draw is too few for a 95% interval: its 2.5% and 97.5% percentiles need at "
        "least 40 draws (n_resamples >= 40)",
        "xcorrstat report: note: 1 draw is too few for a test at alpha = 0.05: no p-value can be below "
        "1 / (1 + 1) = 0.5, so none is significant; at least 19 draws are needed (n_resamples >= 19)"]


def test_python_calls_warn_with_the_minimum_number_of_draws():
    ds = xcorrstat.datasets.summeval()[["expert_relevance", "meteor", "rouge_l_f1"]]
    with pytest.warns(TooFewDrawsWarning, match=r"at least 20 draws \(n_resamples >= 20\)"):
        xcorrstat.bootstrap(ds, target="expert_relevance", level="system", confidence_level=0.9,
                            resample=xcorrstat.Bootstrap(n_resamples=10, rng=0))
    with pytest.warns(TooFewDrawsWarning, match=r"alpha = 0.01.*at least 99 draws"):
        xcorrstat.compare(ds, target="expert_relevance", level="system", alpha=0.01,
                          test=xcorrstat.Permutation(n_resamples=50, rng=0))
    with warnings.catch_warnings():
        warnings.simplefilter("error", TooFewDrawsWarning)  # enough draws: no warning
        xcorrstat.bootstrap(ds, target="expert_relevance", level="system",
                            resample=xcorrstat.Bootstrap(n_resamples=40, rng=0))


@pytest.mark.parametrize("draws", ["99999999999999999999999", "1000000000"])
def test_a_number_of_draws_that_cannot_finish_is_refused_in_one_line(capsys, scores, draws):
    code = main(["report", str(scores), "--target", "human", "--n-resamples", draws, "--no-files"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.splitlines() == [
        f"xcorrstat: error: --n-resamples={draws} is more draws than one call makes (at most {MAX_DRAWS}: at "
        "thousands of draws a second that is hours); use fewer, or --n-resamples auto with --max-resamples, "
        "which draws only until the decisions are settled"]


def test_python_calls_refuse_a_number_of_draws_that_cannot_finish():
    ds = xcorrstat.datasets.summeval()[["expert_relevance", "meteor", "rouge_l_f1"]]
    with pytest.raises(ValueError, match=r"^n_resamples=1000000000 is more draws than one call makes"):
        xcorrstat.bootstrap(ds, target="expert_relevance", resample=xcorrstat.Bootstrap(n_resamples=10**9))
    with pytest.raises(ValueError, match=r"^max_resamples=100000000 is more draws"):
        xcorrstat.compare(ds, target="expert_relevance", test=xcorrstat.Permutation(max_resamples=10**8))
    with pytest.raises(ValueError, match=r"^n_resamples=10{22}"):
        xcorrstat.permutation_test(ds, x="meteor", y="rouge_l_f1", target="expert_relevance",
                                   test=xcorrstat.Permutation(n_resamples=10**22))


# -- a deeply nested roles file ------------------------------------------------------------------------

def test_a_deeply_nested_roles_file_is_one_line(tmp_path):
    path = tmp_path / "roles.json"
    path.write_text("[" * 100000 + "]" * 100000)
    with pytest.raises(ValueError) as caught:
        xcorrstat.wmt.roles("wmt23", source=path)
    text = str(caught.value)
    assert "\n" not in text and "nested too deeply" in text and str(path) in text


# -- a closed pipe -------------------------------------------------------------------------------------

def test_a_closed_stdout_ends_the_command_quietly():
    env = {**os.environ, "PYTHONPATH": ROOT}
    proc = subprocess.Popen([sys.executable, "-m", "xcorrstat", "correlate", "--metrics", "meteor", "rouge_l_f1"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=ROOT)
    proc.stdout.close()  # the reader is gone before the command writes (as `| head -0`)
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141
    assert err == ""


# -- the output folder: removed while written, two writers ---------------------------------------------

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

DRAWS = ["--n-resamples", "40", "--level", "system", "--quiet", "--formats", "svg"]


def _report(capsys, scores, out, *extra):
    code = main(["report", str(scores), "--target", "human", *DRAWS, "--out", str(out), *extra])
    stdout, err = capsys.readouterr()
    return code, stdout, err.splitlines()


def test_a_folder_removed_while_the_report_is_written_is_named_in_one_line(capsys, scores, tmp_path, monkeypatch):
    out = tmp_path / "rep"
    real = folder_module._Folder.replace

    def replace(self, src, dst):
        shutil.rmtree(out, ignore_errors=True)  # between the temporary files and their renames
        return real(self, src, dst)

    monkeypatch.setattr(folder_module._Folder, "replace", replace)
    code, _, err = _report(capsys, scores, out)
    assert code == 2
    assert err == [f"xcorrstat: error: --out '{out}' cannot be written: No such file or directory (the folder "
                   "was removed or moved while the files were written)"]


def _manifest_matches(out) -> bool:
    doc = json.loads((out / MANIFEST).read_text())
    names = sorted(n for n in os.listdir(out) if n != MANIFEST)
    return names == sorted(doc["files"]) and "temporary" not in doc


def test_a_folder_another_live_run_writes_is_refused_in_one_line(capsys, scores, tmp_path):
    out = tmp_path / "rep"
    out.mkdir()
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        import socket

        (out / LOCK_NAME).write_text(json.dumps({"pid": holder.pid, "host": socket.gethostname(),
                                                 "started": "2026-01-01 00:00:00"}))
        code, stdout, err = _report(capsys, scores, out)
    finally:
        holder.kill()
        holder.wait()
    assert code == 2 and stdout == ""
    assert err == [f"xcorrstat: error: --out '{out}' is being written by another xcorrstat run (pid {holder.pid} "
                   f"on host '{socket.gethostname()}' since 2026-01-01 00:00:00); wait until it is done, or name "
                   "another folder"]
    assert os.listdir(out) == [LOCK_NAME]


def test_the_lock_of_a_killed_run_is_taken_over_and_overwrite_recovers_its_folder(capsys, scores, tmp_path):
    out = tmp_path / "rep"
    assert _report(capsys, scores, out)[0] == 0
    # a second run killed (SIGKILL) in the middle of renaming its files into place: lock and temporary files left
    script = (
        "import os, sys\n"
        "from xcorrstat._reporting import folder\n"
        "from xcorrstat._cli import main\n"
        "real, calls = folder._Folder.replace, []\n"
        "def replace(self, src, dst):\n"
        "    calls.append(dst)\n"
        "    if len(calls) == 3:\n"
        "        os._exit(9)\n"
        "    return real(self, src, dst)\n"
        "folder._Folder.replace = replace\n"
        f"main(['report', {str(scores)!r}, '--target', 'human', *{DRAWS!r}, '--rng', '5', '--overwrite', "
        f"'--out', {str(out)!r}])\n")
    killed = subprocess.run([sys.executable, "-c", script], env={**os.environ, "PYTHONPATH": ROOT}, cwd=ROOT,
                            capture_output=True, timeout=300)
    assert killed.returncode == 9 and (out / LOCK_NAME).exists()
    assert not _manifest_matches(out)
    code, stdout, err = _report(capsys, scores, out, "--overwrite")
    assert (code, err) == (0, []) and "System level" in stdout
    assert _manifest_matches(out) and not (out / LOCK_NAME).exists()


# -- Dask workers with too little memory ---------------------------------------------------------------

def test_a_dask_worker_below_the_import_footprint_is_refused_in_one_line():
    distributed = pytest.importorskip("distributed")
    ds = xcorrstat.datasets.summeval()[["expert_relevance", "meteor", "rouge_l_f1"]]
    with distributed.Client(processes=False, n_workers=1, threads_per_worker=1, dashboard_address=None,
                            memory_limit="100MiB"):
        with pytest.raises(ValueError) as caught:
            xcorrstat.bootstrap(ds, target="expert_relevance", level="system",
                                resample=xcorrstat.Bootstrap(n_resamples=100, rng=0))
    text = str(caught.value)
    assert "\n" not in text
    assert "has a memory limit of 100 MiB, below the 300 MiB a worker needs to import xcorrstat" in text
