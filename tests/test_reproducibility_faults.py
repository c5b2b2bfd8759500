"""One seed, the same floats: input-level Pearson under any batch, metric chunking or scheduler;
the rule for the order of the rows; and a ``dask.distributed`` worker lost in the middle of a run.

Oracle: the eager run in one block of all metrics with the threaded scheduler, compared bit for bit
(``assert_array_equal``). The data have 10 systems (NumPy sums 8 or more values in another order
when they are strided, which is what once made a block of one metric differ by 1 ulp) and missing cells.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time

import numpy as np
import pytest
import xarray as xr

import xcorrstat

from conftest import make_scores

N_DRAWS = 300
SEED = 20261126

BOOTSTRAP = {
    "resample inputs": dict(resample="input"),
    "resample inputs, weighted": dict(resample="input", average="weighted"),
    "resample systems": dict(resample="system"),
    "resample both": dict(resample=("system", "input")),
}
COMPARE = {
    "permute both": dict(permute=("system", "input")),
    "permute systems": dict(permute="system"),
}


@pytest.fixture(scope="module")
def ds() -> xr.Dataset:
    return make_scores(n_metrics=5, n_systems=10, n_inputs=40, seed=7, nan_frac=0.1)


def batched(batch):
    """``set_options(batch=batch)``, or nothing for the default batch."""
    return contextlib.nullcontext() if batch is None else xcorrstat.set_options(batch=batch)


def bootstrap(data, *, resample, batch=None, n_resamples=N_DRAWS, **kw):
    kw = {"target": "human", "level": "input", "method": "pearson", **kw}
    settings = xcorrstat.Bootstrap(resample, n_resamples=n_resamples, rng=SEED, keep_distribution=True)
    with batched(batch):
        return xcorrstat.bootstrap(data, resample=settings, **kw)


def compare(data, *, permute, batch=None, n_resamples=N_DRAWS, **kw):
    kw = {"target": "human", "level": "input", "method": "pearson", **kw}
    settings = xcorrstat.Permutation(permute, n_resamples=n_resamples, rng=SEED, keep_distribution=True)
    with batched(batch):
        return xcorrstat.compare(data, test=settings, **kw)


def assert_same_floats(res: xr.Dataset, ref: xr.Dataset) -> None:
    assert list(res.data_vars) == list(ref.data_vars)
    for name in ref.data_vars:
        np.testing.assert_array_equal(np.asarray(res[name].values), np.asarray(ref[name].values), err_msg=name)


@pytest.fixture(scope="module")
def boot_refs(ds):
    return {name: bootstrap(ds, batch=N_DRAWS, **kw) for name, kw in BOOTSTRAP.items()}


@pytest.fixture(scope="module")
def compare_refs(ds):
    return {name: compare(ds, batch=N_DRAWS, **kw) for name, kw in COMPARE.items()}


# --------------------------------------------------------------------------- #
# batch sizes and metric chunks
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("batch", [1, 7, 61, 100, 299])
@pytest.mark.parametrize("name", list(BOOTSTRAP))
def test_bootstrap_any_batch(ds, boot_refs, name, batch):
    assert_same_floats(bootstrap(ds, batch=batch, **BOOTSTRAP[name]), boot_refs[name])


@pytest.mark.parametrize("batch", [61, 299])
@pytest.mark.parametrize("name", list(BOOTSTRAP))
def test_bootstrap_small_budget_any_batch(ds, boot_refs, name, batch):
    # a batch over the whole budget splits an eager run's metrics into blocks (here 2, 2 and 1 on 2 cores)
    with xcorrstat.set_options(memory_budget="1MiB"):
        assert_same_floats(bootstrap(ds, batch=batch, **BOOTSTRAP[name]), boot_refs[name])


@pytest.mark.parametrize("metric_chunk", [1, 2, 3])
@pytest.mark.parametrize("name", list(BOOTSTRAP))
def test_bootstrap_any_metric_chunks(ds, boot_refs, name, metric_chunk):
    lazy = bootstrap(ds.to_array("metric").chunk({"metric": metric_chunk}), batch=37, **BOOTSTRAP[name])
    res = lazy.compute()
    ref = boot_refs[name]
    for var in ("distribution", "correlation", "low", "high"):
        np.testing.assert_array_equal(res[var].sel(metric=ref["metric"].values).values, ref[var].values)


@pytest.mark.parametrize("name", list(BOOTSTRAP))
def test_one_metric_alone_gives_its_floats(ds, boot_refs, name):
    # a block of one metric: the case that once differed by 1 ulp (resample="input")
    for metric in ("m0", "m3"):
        alone = bootstrap(ds, metrics=[metric], **BOOTSTRAP[name])
        ref = boot_refs[name].sel(metric=[metric])
        for var in ("distribution", "correlation", "low", "high"):
            np.testing.assert_array_equal(alone[var].values, ref[var].values, err_msg=f"{metric} {var}")


@pytest.mark.parametrize("batch", [1, 13, 100])
@pytest.mark.parametrize("name", list(COMPARE))
def test_compare_any_batch(ds, compare_refs, name, batch):
    assert_same_floats(compare(ds, batch=batch, **COMPARE[name]), compare_refs[name])


# --------------------------------------------------------------------------- #
# the order of the rows
# --------------------------------------------------------------------------- #
def shuffled(ds: xr.Dataset, seed: int = 0) -> xr.Dataset:
    rng = np.random.default_rng(seed)
    return ds.isel(system=rng.permutation(ds.sizes["system"]), input=rng.permutation(ds.sizes["input"]))


def test_draws_are_keyed_by_position_and_sorting_restores_the_numbers(ds, boot_refs):
    """The documented rule: draw r picks positions along system and input, so rows in another order
    change the draws; sorted by label, any order gives the same floats."""
    other = shuffled(ds)
    moved = bootstrap(other, batch=N_DRAWS, **BOOTSTRAP["resample both"])
    assert not np.array_equal(moved["distribution"].values, boot_refs["resample both"]["distribution"].values)
    # the point estimates are the same to rounding (their sums run in the rows' order)
    np.testing.assert_allclose(moved["correlation"].values, boot_refs["resample both"]["correlation"].values,
                               rtol=1e-12, atol=0)
    in_order = ds.sortby(["system", "input"])  # "doc10" comes before "doc2"
    for kw in BOOTSTRAP.values():
        assert_same_floats(bootstrap(other.sortby(["system", "input"]), **kw), bootstrap(in_order, **kw))
    for kw in COMPARE.values():
        assert_same_floats(compare(other.sortby(["system", "input"]), **kw), compare(in_order, **kw))


def test_rows_of_a_file_in_another_order_sorted_after_reading(ds, tmp_path):
    table = ds[["m0", "m1", "human"]].to_dataframe().reset_index()
    table.to_csv(tmp_path / "a.csv", index=False)
    table.sample(frac=1.0, random_state=3).to_csv(tmp_path / "b.csv", index=False)
    a, b = xcorrstat.read(tmp_path / "a.csv"), xcorrstat.read(tmp_path / "b.csv")
    assert list(a["system"].values) != list(b["system"].values)  # read keeps the file's order
    first = bootstrap(a.sortby(["system", "input"]), target="human", **BOOTSTRAP["resample both"])
    second = bootstrap(b.sortby(["system", "input"]), target="human", **BOOTSTRAP["resample both"])
    assert_same_floats(second, first)


# --------------------------------------------------------------------------- #
# a dask.distributed cluster, and a worker lost in the middle of a run
# --------------------------------------------------------------------------- #
def start_cluster(n_workers: int):
    distributed = pytest.importorskip("distributed")
    try:
        return distributed.LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                                        dashboard_address=None)
    except Exception as err:  # pragma: no cover - environment without a usable cluster
        pytest.skip(f"distributed.LocalCluster could not start: {err!r}")


def long_call(ds):
    """An input-level Pearson bootstrap of many small tasks (a few seconds on a cluster)."""
    return bootstrap(ds, n_resamples=4000, batch=1, **BOOTSTRAP["resample both"])


def kill_while_running(client, call, victim: int):
    """``call()`` in a thread; the ``victim``-th worker's process is killed once it runs a task.
    Returns the result or the exception, and whether the kill came while the call was running."""
    out: dict[str, object] = {}

    def work() -> None:
        try:
            out["result"] = call()
        except Exception as err:
            out["error"] = err

    thread = threading.Thread(target=work)
    thread.start()
    address = sorted(client.scheduler_info()["workers"])[victim]
    deadline = time.monotonic() + 30
    while not client.processing().get(address) and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    mid_run = thread.is_alive() and bool(client.processing().get(address))
    os.kill(client.run(os.getpid, workers=[address])[address], signal.SIGKILL)
    thread.join()
    return out.get("result", out.get("error")), mid_run


@pytest.mark.slow
def test_cluster_gives_the_local_floats_and_survives_a_lost_worker(ds, boot_refs, compare_refs):
    distributed = pytest.importorskip("distributed")
    local = long_call(ds)
    with start_cluster(2) as cluster, distributed.Client(cluster) as client:
        for batch in (1, 61, N_DRAWS):
            for name, kw in BOOTSTRAP.items():
                assert_same_floats(bootstrap(ds, batch=batch, **kw), boot_refs[name])
        for name, kw in COMPARE.items():
            assert_same_floats(compare(ds, batch=13, **kw), compare_refs[name])
        result, mid_run = kill_while_running(client, lambda: long_call(ds), victim=1)  # one of two
        assert mid_run
        assert_same_floats(result, local)


@pytest.mark.slow
def test_the_only_worker_lost_gives_the_same_floats_or_one_line_error(ds):
    distributed = pytest.importorskip("distributed")
    local = long_call(ds)
    with start_cluster(1) as cluster, distributed.Client(cluster) as client:
        result, mid_run = kill_while_running(client, lambda: long_call(ds), victim=0)  # the nanny restarts it
        assert mid_run
        assert_same_floats(result, local)
        client.wait_for_workers(1, timeout=60)
        cluster.scheduler.allowed_failures = 0  # now a task on a lost worker is not tried again
        error, mid_run = kill_while_running(client, lambda: long_call(ds), victim=0)
    assert mid_run
    assert isinstance(error, RuntimeError), error
    message = str(error)
    assert "\n" not in message and "lost a worker" in message and "run the call again" in message


def test_the_lost_worker_message_is_one_line():
    from xcorrstat._resampling.workers import worker_lost

    class Unprintable(Exception):
        def __str__(self) -> str:
            raise AttributeError("no address")

    long = worker_lost(ValueError("Attempted to run task x on 3 workers.\nThe last worker was y. More."))
    assert str(long) == ("the dask.distributed cluster lost a worker during the computation and gave up "
                         "(ValueError: Attempted to run task x on 3 workers); run the call again: the same "
                         "seed gives the same numbers")
    assert "(Unprintable: )" in str(worker_lost(Unprintable()))
