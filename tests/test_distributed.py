"""On a ``dask.distributed`` cluster of two worker processes: the same numbers as the threaded scheduler,
eager data as blocks of the graph, BLAS on one thread in every task, and the allocator changed only on request."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import xcorrstat
from xcorrstat._resampling import workers as workers

distributed = pytest.importorskip("distributed")

from conftest import make_scores  # noqa: E402

#: The workers' BLAS starts with two threads (Dask's nanny would set one): the tasks must lower it.
WORKER_ENV = {"OPENBLAS_NUM_THREADS": "2", "OMP_NUM_THREADS": "2", "MKL_NUM_THREADS": "2"}


@pytest.fixture(scope="module")
def cluster():
    import os

    import dask

    # the nanny takes these from this process's environment if set there (an earlier cluster sets them)
    saved = {k: os.environ.get(k) for k in WORKER_ENV}
    os.environ.update(WORKER_ENV)
    env = {f"distributed.nanny.pre-spawn-environ.{k}": v for k, v in WORKER_ENV.items()}
    try:
        with dask.config.set(env):
            local = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                             dashboard_address=None)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    with local:
        yield local


def _same_numbers(a, b) -> None:
    assert list(a.variables) == list(b.variables)
    for name in a.variables:
        np.testing.assert_array_equal(np.asarray(a[name]), np.asarray(b[name]), err_msg=str(name))


CALLS = {
    "bootstrap input-level Kendall": lambda ds: xcorrstat.bootstrap(
        ds, target="human", level="input", method="kendall",
        resample=xcorrstat.Bootstrap(("system", "input"), n_resamples=300, rng=1, keep_distribution=True)),
    "bootstrap system-level Pearson, two levels": lambda ds: xcorrstat.bootstrap(
        ds, target="human", level=["system", "global"], method="pearson",
        resample=xcorrstat.Bootstrap(n_resamples=200, rng=2)),
    "compare input-level Kendall": lambda ds: xcorrstat.compare(
        ds, target="human", level="input", method="kendall",
        test=xcorrstat.Permutation(("system", "input"), n_resamples=200, rng=3, keep_distribution=True)),
    "compare system-level Pearson (all pairs at once)": lambda ds: xcorrstat.compare(
        ds, target="human", level="system", method="pearson", test=xcorrstat.Permutation(n_resamples=300, rng=4)),
}


def test_two_worker_processes_give_the_threaded_numbers(cluster):
    ds = make_scores(n_metrics=5, n_systems=7, n_inputs=40, seed=11)
    threaded = {name: call(ds) for name, call in CALLS.items()}
    with distributed.Client(cluster) as client:
        with distributed.get_task_stream(client) as stream:
            on_cluster = {name: call(ds) for name, call in CALLS.items()}
            lazy = CALLS["bootstrap input-level Kendall"](ds.chunk()).compute()
        assert {task["worker"] for task in stream.data} == set(client.scheduler_info()["workers"])
    for name in CALLS:
        _same_numbers(on_cluster[name], threaded[name])
    _same_numbers(lazy, threaded["bootstrap input-level Kendall"])


def test_eager_data_are_blocks_of_the_graph(cluster):
    values = np.arange(24.0).reshape(4, 2, 3)
    with distributed.Client(cluster) as client:
        arr = workers.dask_input(values, (2, -1, -1))
        graph = dict(arr.__dask_graph__())
        assert not client.who_has()  # nothing scattered: a lost worker's blocks can be sent again
        np.testing.assert_array_equal(arr.compute(), values)
    assert len(graph) == 2  # one literal block per chunk, and nothing else
    blocks = [np.asarray(getattr(task, "value", task)) for task in graph.values()]
    assert all(block.flags.c_contiguous and block.shape == (2, 2, 3) for block in blocks)
    assert arr.chunks == ((2, 2), (2,), (3,))


def _blas_threads_in_a_task() -> tuple[list[int], list[int], list[int]]:
    from threadpoolctl import threadpool_info

    def blas() -> list[int]:
        return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]

    before = blas()
    with workers.BLAS_ONE_THREAD:
        inside = blas()
    return before, inside, blas()


def test_blas_is_one_thread_in_every_worker_process(cluster):
    with distributed.Client(cluster) as client:
        env = client.run(lambda: __import__("os").environ.get("OPENBLAS_NUM_THREADS"))
        got = client.gather([client.submit(_blas_threads_in_a_task, pure=False, workers=[w])
                             for w in client.scheduler_info()["workers"]])
    assert set(env.values()) == {"2"} and len(got) == 2  # the workers started with 2 BLAS threads
    for _, inside, after in got:
        assert inside and set(inside) == {1}
        assert set(after) == {1}  # and it stays so in a worker process: every task there is a cluster's


def _mapped_bytes_of_a_temporary(reuse: bool) -> int:
    """Bytes glibc maps afresh (``mallinfo2().hblkhd``) for a 1 MB temporary made in this task, under
    the settings of a task of draws (with the allocator tuned if ``reuse``)."""
    import ctypes

    class MallInfo2(ctypes.Structure):
        _fields_ = [(name, ctypes.c_size_t) for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                          "fsmblks", "uordblks", "fordblks", "keepcost")]

    libc = ctypes.CDLL("libc.so.6")
    libc.mallinfo2.restype = MallInfo2
    with workers.task_settings(reuse):
        before = libc.mallinfo2().hblkhd
        a = np.ones(2**17)  # 1 MiB: above glibc's fixed 128 KiB mmap threshold, below the raised one
        mapped = libc.mallinfo2().hblkhd - before
        del a
    return int(mapped)


def _has_mallinfo2() -> bool:
    import ctypes

    try:
        return hasattr(ctypes.CDLL("libc.so.6"), "mallinfo2")
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux") or not _has_mallinfo2(), reason="glibc >= 2.33")
def test_tasks_reuse_freed_memory_in_a_worker_process(cluster):
    with distributed.Client(cluster) as client:
        env = client.run(lambda: __import__("os").environ.get("MALLOC_TRIM_THRESHOLD_"))
        if not all(env.values()):
            pytest.skip("these workers do not fix the allocator's thresholds")
        plain = client.submit(_mapped_bytes_of_a_temporary, False, pure=False).result()
        reused = client.submit(_mapped_bytes_of_a_temporary, True, pure=False).result()
        after = client.submit(_mapped_bytes_of_a_temporary, False, pure=False).result()
    assert plain >= 2**20  # mapped afresh (and unmapped when freed): a task leaves the allocator alone by default
    assert reused == 0  # from the heap while tasks of draws run, when asked for
    assert after >= 2**20  # the process's own setting is back once they end


def test_distributed_imported_during_a_computation_keeps_its_config(tmp_path):
    """A computation before distributed is loaded must not drop distributed's defaults: importing it while
    a computation runs, then asking for a Client, works (it failed with KeyError: 'distributed')."""
    import subprocess

    code = (
        "import sys, dask, xcorrstat\n"
        "from xcorrstat._resampling.engine import no_large_graph_warning\n"
        "assert 'distributed' not in sys.modules\n"
        "with no_large_graph_warning():\n"
        "    import distributed\n"
        "print(dask.config.get('distributed.comm.timeouts.connect'))\n"
        "ds = xcorrstat.datasets.summeval()[['expert_relevance', 'rouge_2_f1', 'meteor']]\n"
        "ds.corrstat.bootstrap(target='expert_relevance', resample=xcorrstat.Bootstrap(n_resamples=20, rng=0))\n"
        "with distributed.Client(processes=False, n_workers=1, threads_per_worker=1, dashboard_address=None):\n"
        "    r = ds.corrstat.bootstrap(target='expert_relevance',\n"
        "                              resample=xcorrstat.Bootstrap(n_resamples=20, rng=0))\n"
        "print(float(r['low'].sel(metric='meteor')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    timeout, low = out.stdout.split()
    assert timeout and -1 <= float(low) <= 1


@pytest.mark.parametrize("tune", [False, True])
def test_tasks_of_draws_tune_the_allocator_only_when_asked(monkeypatch, tune):
    import dask

    from xcorrstat._resampling import engine, pairs

    seen: list[bool] = []

    def recording(tune_allocator: bool):
        seen.append(tune_allocator)
        return workers.task_settings(tune_allocator)

    monkeypatch.setattr(engine, "task_settings", recording)
    monkeypatch.setattr(pairs, "task_settings", recording)
    ds = make_scores(n_metrics=3, n_systems=5, n_inputs=6, seed=4).chunk()
    with xcorrstat.set_options(tune_worker_allocator=tune):
        boot = xcorrstat.bootstrap(ds, target="human", level="input",
                                   resample=xcorrstat.Bootstrap(n_resamples=20, rng=0))
        comp = xcorrstat.compare(ds, target="human", level="input", method="kendall",
                                 test=xcorrstat.Permutation(n_resamples=20, rng=0))
    with dask.config.set(scheduler="synchronous"):  # computed after the option is back to its default
        boot.compute()
        comp.compute()
    assert seen and set(seen) == {tune}  # read when the call built its tasks, as a worker process would see it


def test_tune_worker_allocator_is_a_flag():
    assert xcorrstat.get_options()["tune_worker_allocator"] is False
    with pytest.raises(ValueError, match="tune_worker_allocator must be True or False"):
        xcorrstat.set_options(tune_worker_allocator="yes")
