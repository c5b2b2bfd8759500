"""Reproducibility of bootstrap draws: one seed gives the same numbers everywhere.

Draws are keyed by draw id, so the distribution must be bit-identical whatever
the input backend (NumPy or Dask), the metric chunking, the batch size, the
Dask scheduler, or a distributed cluster; intervals agree to rounding.
"""

from __future__ import annotations

import dask
import numpy as np
import pytest
import xarray as xr

import xcorrstat  # (also registers the .corrstat accessor)
from xcorrstat._resampling.draws import bootstrap_indices

N_METRICS = 10
N_DRAWS = 60
SEED = 20240611

CONFIGS = {
    "system-kendall-both": dict(level="system", method="kendall", resample=("system", "input")),
    "input-spearman-systems": dict(level="input", method="spearman", resample="system"),
    "global-pearson-both": dict(level="global", method="pearson", resample=("system", "input")),
}
#: keywords of the draws' settings object (xcorrstat.Bootstrap, passed as resample=); the rest stay flat
DRAW_KEYS = ("resample", "n_resamples", "rng", "keep_distribution")


def make_dataset(seed=3, n_metrics=N_METRICS, n_sys=7, n_inp=15, nan_frac=0.1):
    rng = np.random.default_rng(seed)

    def draw():
        v = np.round(rng.normal(size=(n_sys, n_inp)), 1)  # rounded: some ties
        v[rng.random(v.shape) < nan_frac] = np.nan
        return v

    data = {f"metric{k:02d}": (("system", "input"), draw()) for k in range(n_metrics)}
    data["human"] = (("system", "input"), draw())
    coords = {"system": [f"sys{s}" for s in range(n_sys)], "input": [f"doc{j}" for j in range(n_inp)]}
    ds = xr.Dataset(data, coords=coords)
    ds["human"].attrs["role"] = "human"
    return ds


@pytest.fixture(scope="module")
def ds():
    return make_dataset()


@pytest.fixture(scope="module", params=list(CONFIGS))
def config(request):
    return CONFIGS[request.param]


@pytest.fixture(scope="module")
def reference(ds, config):
    flat = {k: v for k, v in config.items() if k != "resample"}
    with dask.config.set(scheduler="synchronous"):
        res = ds.corrstat.bootstrap(target="human", resample=xcorrstat.Bootstrap(
            config["resample"], n_resamples=N_DRAWS, rng=SEED, keep_distribution=True), **flat)
    # a usable reference: mostly defined draws, every metric present
    assert res.sizes["metric"] == N_METRICS
    assert int(res["n_undefined"].sum()) < 0.5 * res["distribution"].size
    return res


def run(data, config, **kw):
    kw = {"target": "human", "n_resamples": N_DRAWS, "rng": SEED, "keep_distribution": True, **config, **kw}
    draws = xcorrstat.Bootstrap(**{k: kw.pop(k) for k in DRAW_KEYS if k in kw})
    return data.corrstat.bootstrap(resample=draws, **kw)


def assert_reproduced(res, reference):
    assert not any(v.chunks for v in res.variables.values()), "result should be computed"
    assert list(res["metric"].values) == list(reference["metric"].values)
    np.testing.assert_array_equal(res["distribution"].values, reference["distribution"].values)
    np.testing.assert_array_equal(res["distribution_n"].values, reference["distribution_n"].values)
    np.testing.assert_array_equal(res["n_undefined"].values, reference["n_undefined"].values)
    np.testing.assert_array_equal(res["correlation"].values, reference["correlation"].values)
    for bound in ("low", "high"):
        np.testing.assert_allclose(res[bound].values, reference[bound].values, rtol=0, atol=1e-12)
    assert res.attrs["rng"] == reference.attrs["rng"] == SEED


def stacked(ds, metric_chunk):
    """The scores as one DataArray with a ``metric`` dim, Dask-backed with the given chunks."""
    return ds.to_array("metric").chunk({"metric": metric_chunk})


# --------------------------------------------------------------------------- #
# backends, chunking, batching, schedulers
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("scheduler", ["synchronous", "threads"])
def test_eager_input_same_on_every_local_scheduler(ds, config, reference, scheduler):
    with dask.config.set(scheduler=scheduler):
        assert_reproduced(run(ds, config), reference)


@pytest.mark.parametrize("metric_chunk", [1, 3, 10])
def test_dask_input_any_metric_chunking(ds, config, reference, metric_chunk):
    da = stacked(ds, metric_chunk)
    assert da.chunks is not None and da.chunks[0][0] == metric_chunk
    res = run(da, config)
    with dask.config.set(scheduler="threads"):
        assert_reproduced(res.compute(), reference)


def test_chunked_dataset_input(ds, config, reference):
    res = run(ds.chunk({"system": 3, "input": 4}), config)
    with dask.config.set(scheduler="threads"):
        assert_reproduced(res.compute(), reference)


@pytest.mark.parametrize("batch", [1, 7, None])
def test_any_batch_size(ds, config, reference, batch):
    with xcorrstat.set_options(batch=batch):
        res = run(ds, config)
    if batch is not None:
        assert res.attrs["batch"] == batch
    assert_reproduced(res, reference)


@pytest.mark.parametrize("scheduler", ["synchronous", "threads"])
@pytest.mark.parametrize("batch", [1, 7])
def test_dask_input_batch_and_scheduler(ds, config, reference, scheduler, batch):
    with xcorrstat.set_options(batch=batch):
        res = run(stacked(ds, 3), config)
    with dask.config.set(scheduler=scheduler):
        assert_reproduced(res.compute(), reference)


def test_one_metric_alone_sees_the_same_draws(ds, config, reference):
    res = run(ds, config, metrics=["metric04"])
    np.testing.assert_array_equal(res["distribution"].values[0],
                                  reference["distribution"].sel(metric="metric04").values)


# --------------------------------------------------------------------------- #
# distributed
# --------------------------------------------------------------------------- #
@pytest.fixture(scope="module")
def cluster():
    distributed = pytest.importorskip("distributed")
    try:
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                           dashboard_address=None)
    except Exception as err:  # pragma: no cover - environment without a usable cluster
        pytest.skip(f"distributed.LocalCluster could not start: {err!r}")
    try:
        yield cluster
    finally:
        cluster.close()


@pytest.fixture
def client(cluster):
    # one Client per test: an active Client changes how Dask builds graphs, so it
    # must not outlive the test that uses it
    from distributed import Client

    try:
        client = Client(cluster)
    except Exception as err:  # pragma: no cover
        pytest.skip(f"distributed.Client could not connect: {err!r}")
    try:
        yield client
    finally:
        client.close()


def test_distributed_cluster_gives_the_same_numbers(ds, config, reference, client):
    from distributed import get_client, get_task_stream

    assert get_client() is client
    with get_task_stream(client) as stream:
        with xcorrstat.set_options(batch=7):
            eager = run(ds, config)  # NumPy input, computed while the Client is active
        with xcorrstat.set_options(batch=11):
            lazy = run(stacked(ds, 3), config).compute()
    assert_reproduced(eager, reference)
    assert_reproduced(lazy, reference)
    assert len(stream.data) > 0, "the cluster's workers did not run the draws"


# --------------------------------------------------------------------------- #
# seeds and resample order
# --------------------------------------------------------------------------- #
SMALL = dict(level="system", method="pearson", resample=("system", "input"))


def test_different_seeds_give_different_draws(ds):
    a = run(ds, SMALL, rng=1)["distribution"].values
    b = run(ds, SMALL, rng=2)["distribution"].values
    assert not np.array_equal(a, b, equal_nan=True)
    ia = bootstrap_indices(1, range(5), [7, 15])
    ib = bootstrap_indices(2, range(5), [7, 15])
    assert not all(np.array_equal(x, y) for x, y in zip(ia, ib))


def test_draws_keyed_by_id():
    # draw r is the same whichever other draws are requested with it
    full = bootstrap_indices(99, range(10), [7, 15])
    part = bootstrap_indices(99, [7, 3], [7, 15])
    for f, p in zip(full, part):
        np.testing.assert_array_equal(p, f[[7, 3]])


def test_seed_recorded_for_int_seed_sequence_and_generator(ds):
    ref = run(ds, SMALL, rng=12345)
    assert ref.attrs["rng"] == 12345

    res = run(ds, SMALL, rng=np.random.SeedSequence(12345))
    assert res.attrs["rng"] == 12345
    np.testing.assert_array_equal(res["distribution"].values, ref["distribution"].values)

    gen = np.random.default_rng(7)
    expected_seed = int(np.random.default_rng(7).integers(2**63))
    res = run(ds, SMALL, rng=gen)
    assert res.attrs["rng"] == expected_seed
    again = run(ds, SMALL, rng=expected_seed)
    np.testing.assert_array_equal(res["distribution"].values, again["distribution"].values)


def test_seed_recorded_when_rng_is_none(ds):
    first = run(ds, SMALL, rng=None)
    second = run(ds, SMALL, rng=None)
    seed = first.attrs["rng"]
    assert isinstance(seed, int) and 0 <= seed < 2**63
    assert seed != second.attrs["rng"]
    replay = run(ds, SMALL, rng=seed)
    np.testing.assert_array_equal(first["distribution"].values, replay["distribution"].values)
    np.testing.assert_array_equal(first["low"].values, replay["low"].values)


def test_resample_order_does_not_matter(ds):
    a = run(ds, SMALL, resample=("system", "input"))
    b = run(ds, SMALL, resample=("input", "system"))
    assert a.attrs["resample"] == b.attrs["resample"] == ["system", "input"]
    np.testing.assert_array_equal(a["distribution"].values, b["distribution"].values)
    np.testing.assert_array_equal(a["low"].values, b["low"].values)
    np.testing.assert_array_equal(a["high"].values, b["high"].values)


# --------------------------------------------------------------------------- #
# laziness
# --------------------------------------------------------------------------- #
def _no_compute(dsk, keys, **kwargs):
    raise AssertionError("bootstrap computed something before .compute()")


def test_dask_input_gives_lazy_result(ds):
    da = stacked(ds, 3)
    with dask.config.set(scheduler=_no_compute), xcorrstat.set_options(batch=7):
        res = run(da, SMALL)
        for name, var in res.variables.items():
            if name not in res.indexes:
                assert var.chunks is not None, f"{name} is not lazy"
    with xcorrstat.set_options(batch=7):
        eager = run(ds, SMALL)
    with dask.config.set(scheduler="synchronous"):
        assert_reproduced(res.compute(), eager)


@pytest.mark.parametrize("test", ["permutation", "bootstrap"])
def test_compare_on_distributed_cluster_gives_the_same_pvalues(test, client):
    from distributed import get_task_stream

    from conftest import make_scores

    data = make_scores(n_metrics=4, n_systems=6, n_inputs=9, seed=17, nan_frac=0.05)
    settings = {"permutation": xcorrstat.Permutation, "bootstrap": xcorrstat.Bootstrap}[test]
    opts = dict(target="human", test=settings(n_resamples=80, rng=23), level="input", method="kendall",
                correction="holm")
    with get_task_stream(client) as stream, xcorrstat.set_options(batch=9):
        on_cluster = data.corrstat.compare(**opts)
    assert len(stream.data) > 0, "the cluster's workers did not run the draws"
    client.close()  # the same call with no Client: local threads
    local = data.corrstat.compare(**opts)
    np.testing.assert_array_equal(on_cluster["pvalue"].values, local["pvalue"].values)
    np.testing.assert_array_equal(on_cluster["cluster"].values, local["cluster"].values)


def test_compare_acc_eq_with_a_task_dim_on_cluster_gives_the_same_pvalues(client):
    from distributed import get_task_stream

    from conftest import make_scores

    data = make_scores(n_metrics=4, n_systems=6, n_inputs=9, seed=5, ties=True, extra=("task", 3))
    opts = dict(target="human", level="input", method="kendall", variant="acc23",
                test=xcorrstat.Permutation(n_resamples=60, rng=4), correction="holm")
    with get_task_stream(client) as stream, xcorrstat.set_options(batch=7):
        on_cluster = data.corrstat.compare(**opts)
    assert len(stream.data) > 0, "the cluster's workers did not run the draws"
    client.close()
    local = data.corrstat.compare(**opts)
    assert set(local["pvalue"].dims) == {"task", "metric", "other_metric"}
    np.testing.assert_array_equal(on_cluster["pvalue"].values, local["pvalue"].values)
    # each task is tested on its own scores, with the draws every task shares
    one = data.sel(task="task1").corrstat.compare(**opts)
    np.testing.assert_array_equal(local["pvalue"].sel(task="task1").values, one["pvalue"].values)
