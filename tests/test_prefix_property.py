"""The draw-id contract of every public resampling function.

Draw ``r`` depends only on the seed and ``r``. So the first k draws of an n-draw run
are the draws of a k-draw run, whatever ``batch`` (None, 1, 7) and whether the data
are NumPy- or Dask-backed. Each function's n = 2,500 run (eager, default batch) is
the reference; every other run must equal its prefix bit for bit.

On tiny data ``batch`` is raised to a floor of about 8 MB of temporaries; with
``batch=7`` the floor is switched off, so the in-task loops really take 7 draws at a
time (and cross the 256-draw blocks of the generators at odd places).
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
import xarray as xr

import xcorrstat
from xcorrstat.agreement import leaderboard_agreement
from xcorrstat.diagnostics import ci_coverage, power_analysis
from xcorrstat.diagnostics._coverage import split_trial
from xcorrstat._resampling import draws as draws, engine as engine, memory as memory
from xcorrstat._resampling.draws import MAX_DRAW_TASKS, draws_per_task

from conftest import make_scores
from xcorrstat._significance.common import LAZY_COMMON_NOTE

N_MAX = 2500
NS = [1, 999, 1000, 1001, N_MAX]
BATCHES = [None, 1, 7]
BACKENDS = ["eager", "dask"]


@functools.lru_cache(maxsize=None)
def scores(backend: str) -> xr.Dataset:
    ds = make_scores(n_metrics=3, n_systems=5, n_inputs=6, seed=3)
    return ds.chunk() if backend == "dask" else ds


@functools.lru_cache(maxsize=None)
def boards(backend: str) -> xr.DataArray:
    g = np.random.default_rng(8)
    da = xr.DataArray(g.normal(size=(3, 5, 6)), dims=("setting", "strategy", "dataset"),
                      coords={"setting": ["a", "b", "c"]}, name="score")
    return da.chunk({"setting": 1}) if backend == "dask" else da


def _dist(res: xr.Dataset, name: str = "distribution") -> np.ndarray:
    return np.asarray(res[name].transpose(..., "resample").values)


def _calibrated(ds, n, batch):
    with xcorrstat.set_options(batch=batch):
        res = xcorrstat.bootstrap(ds, target="human", level="input", method="kendall", variant="acc23",
                                  epsilon="calibrate",
                                  resample=xcorrstat.Bootstrap(n_resamples=n, rng=2, keep_distribution=True))
        res = res.compute()
    return np.stack([_dist(res), _dist(res, "epsilon_distribution")])


SETTINGS = {"permutation": xcorrstat.Permutation, "bootstrap": xcorrstat.Bootstrap}


def _compare(ds, n, batch, test):
    with xcorrstat.set_options(batch=batch):
        res = xcorrstat.compare(ds, target="human", metrics=["m0", "m1", "m2"],
                                test=SETTINGS[test](n_resamples=n, rng=5, keep_distribution=True), level="input",
                                method="kendall")
        return _dist(res.compute())


def _batched(run):
    """(data, n) -> draws, run with set_options(batch=b): (data, n, b) -> draws."""
    def with_batch(ds, n, b):
        with xcorrstat.set_options(batch=b):
            return run(ds, n)
    return with_batch


# each: (data, n, batch) -> draws with the draw axis last
RUNS = {
    "bootstrap": _batched(lambda ds, n: _dist(xcorrstat.bootstrap(
        ds, target="human", level="system", method="spearman",
        resample=xcorrstat.Bootstrap(n_resamples=n, rng=1, keep_distribution=True)).compute())),
    "bootstrap-calibrate": lambda ds, n, b: _calibrated(ds, n, b),
    "permutation_test": _batched(lambda ds, n: _dist(xcorrstat.permutation_test(
        ds, x="m0", y="m1", target="human", level="input",
        test=xcorrstat.Permutation(n_resamples=n, rng=3, keep_distribution=True)).compute())),
    "paired_bootstrap_test": _batched(lambda ds, n: _dist(xcorrstat.paired_bootstrap_test(
        ds, x="m0", y="m2", target="human", level="global", method="kendall",
        test=xcorrstat.Bootstrap(n_resamples=n, rng=4, keep_distribution=True)).compute())),
    "compare-permutation": lambda ds, n, b: _compare(ds, n, b, "permutation"),
    "compare-bootstrap": lambda ds, n, b: _compare(ds, n, b, "bootstrap"),
    "mean_ci": _batched(lambda ds, n: _dist(xcorrstat.mean_ci(ds, n_resamples=n, rng=6, keep_distribution=True))),
    "paired_difference_ci": _batched(lambda ds, n: _dist(xcorrstat.paired_difference_ci(
        ds, system_a="S0", system_b="S3", n_resamples=n, rng=7, keep_distribution=True))),
}


@functools.lru_cache(maxsize=None)
def reference(name: str) -> np.ndarray:
    return RUNS[name](scores("eager"), N_MAX, None)


@functools.lru_cache(maxsize=None)
def board_reference() -> np.ndarray:
    return _boards(boards("eager"), N_MAX, None)


def _boards(da, n, batch):
    with xcorrstat.set_options(batch=batch):
        res = leaderboard_agreement(da, competitor="strategy", condition="dataset", between="setting",
                                    n_resamples=n, rng=9, keep_distribution=True)
        return _dist(res.compute())


@pytest.fixture
def honest_batch(monkeypatch, request):
    """With batch=7, switch off the floor that raises small batches on tiny data (and
    allow fewer blocks of draws, to keep the Dask graphs of the test small)."""
    if request.node.callspec.params.get("batch") == 7:
        monkeypatch.setattr(memory, "MIN_BATCH_ELEMS", 1)  # the one floor every resampling call uses
        monkeypatch.setattr(draws, "MAX_DRAW_TASKS", 16)
    elif request.node.callspec.params.get("batch") == 1:  # honest one-draw steps: see also the test below
        if request.node.callspec.params.get("n") == 1:
            monkeypatch.setattr(memory, "MIN_BATCH_ELEMS", 1)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("batch", BATCHES)
@pytest.mark.parametrize("n", NS)
@pytest.mark.parametrize("name", list(RUNS))
def test_first_k_draws_equal_a_k_draw_run(name, n, batch, backend, honest_batch):
    ref = reference(name)
    got = RUNS[name](scores(backend), n, batch)
    assert got.shape == ref.shape[:-1] + (n,)
    assert np.isfinite(got).any()
    np.testing.assert_array_equal(got, ref[..., :n])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("batch", BATCHES)
@pytest.mark.parametrize("n", NS)
def test_leaderboard_agreement_prefix(n, batch, backend, honest_batch):
    ref = board_reference()
    got = _boards(boards(backend), n, batch)
    assert got.shape == ref.shape[:-1] + (n,)
    np.testing.assert_array_equal(got, ref[..., :n])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("batch", BATCHES)
def test_williams_is_unchanged_by_batch_and_backend(batch, backend):
    kw = dict(target="human", metrics=["m0", "m1", "m2"], test="williams", level="system")
    base = xcorrstat.compare(scores("eager"), **kw)
    with xcorrstat.set_options(batch=batch):  # (Williams takes no n_resamples: it has no draws)
        res = xcorrstat.compare(scores(backend), **kw).compute()
    np.testing.assert_array_equal(res["pvalue"].values, base["pvalue"].values)
    assert np.isfinite(res["pvalue"].values).sum() == 6  # every off-diagonal pair


@pytest.mark.parametrize("n", NS)
def test_coverage_trial_draws_are_prefixes(n):
    full = split_trial(13, 4, 5, 6, N_MAX)
    part = split_trial(13, 4, 5, 6, n)
    for k in range(4):  # the split itself does not depend on n
        np.testing.assert_array_equal(part[k], full[k])
    for k in (4, 5):
        assert part[k].shape == (n, full[k].shape[1])
        np.testing.assert_array_equal(part[k], full[k][:n])


@functools.lru_cache(maxsize=None)
def _coverage(n, trial_batch, backend):
    ds = make_scores(n_metrics=2, n_systems=8, n_inputs=6, seed=5)  # halves of 4 systems: defined
    with xcorrstat.set_options(trial_batch=trial_batch):
        res = ci_coverage(ds.chunk() if backend == "dask" else ds, target="human", metrics=["m0", "m1"],
                          level=["system", "input"],
                          methods=["boot-both", "boot-inputs"], n_trials=3, n_resamples=n, rng=11)
    return res[["contained", "width", "too_high", "too_low"]]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("batch", BATCHES)
@pytest.mark.parametrize("n", NS)
def test_coverage_unchanged_by_trial_batch_and_backend(n, batch, backend):
    xr.testing.assert_identical(_coverage(n, batch, backend), _coverage(n, None, "eager"))
    assert np.isfinite(_coverage(n, None, "eager")["contained"].values).all()


@functools.lru_cache(maxsize=None)
def _power(n, batch, backend):
    with xcorrstat.set_options(batch=batch):
        return power_analysis(scores(backend), target="human", metric="m0", noise=[0.0, 1.0],
                              tests=["perm-both"], n_trials=3, n_resamples=n, rng=12, type_one=False)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("batch", BATCHES)
@pytest.mark.parametrize("n", NS)
def test_power_unchanged_by_batch_and_backend(n, batch, backend, honest_batch):
    with xcorrstat.set_options(batch=batch):
        got = power_analysis(scores(backend), target="human", metric="m0", noise=[0.0, 1.0], tests=["perm-both"],
                             n_trials=3, n_resamples=n, rng=12, type_one=False)
    xr.testing.assert_identical(got, _power(n, None, "eager"))


def test_power_trials_are_the_permutation_tests_on_the_degraded_copies():
    """Power = share of trials whose permutation test (same seed, same draws) has p <= alpha."""
    ds = scores("eager")
    res = power_analysis(ds, target="human", metric="m0", noise=[1.0], tests=["perm-both"], n_trials=3,
                         n_resamples=999, rng=12, type_one=False, alpha=0.5)
    y = xcorrstat.diagnostics.degrade(ds["m0"], noise=[1.0], n_trials=3, rng=12)
    hits = []
    for t in range(3):
        one = ds.assign(deg=y.isel(trial=t, noise=0, drop=True))
        p = xcorrstat.permutation_test(one, x="m0", y="deg", target="human",
                                       test=xcorrstat.Permutation(n_resamples=999, rng=12))
        hits.append(float(p["pvalue"]) <= 0.5)
    assert float(res["power"].item()) == pytest.approx(np.mean(hits), abs=0)


def test_batch_of_one_draw_at_a_time_crosses_generator_blocks(monkeypatch):
    """The floor switched off, batch=1 really computes one draw per step: still the same draws."""
    monkeypatch.setattr(memory, "MIN_BATCH_ELEMS", 1)
    ds = scores("eager")
    with xcorrstat.set_options(batch=1):
        boot = xcorrstat.bootstrap(ds, target="human",
                                   resample=xcorrstat.Bootstrap(n_resamples=300, rng=1, keep_distribution=True))
    assert boot.attrs["draws_per_batch"] == 1
    np.testing.assert_array_equal(_dist(boot), _dist(xcorrstat.bootstrap(
        ds, target="human", resample=xcorrstat.Bootstrap(n_resamples=300, rng=1, keep_distribution=True))))
    with xcorrstat.set_options(batch=1):
        perm = xcorrstat.permutation_test(ds, x="m0", y="m1", target="human", level="input",
                                          test=xcorrstat.Permutation(n_resamples=300, rng=3, keep_distribution=True))
    assert perm.attrs["draws_per_batch"] == 1
    np.testing.assert_array_equal(_dist(perm), reference("permutation_test")[..., :300])
    with xcorrstat.set_options(batch=1):
        lb = leaderboard_agreement(boards("eager"), competitor="strategy", condition="dataset", between="setting",
                                   n_resamples=300, rng=9, keep_distribution=True)
    assert lb.attrs["draws_per_batch"] == 1
    np.testing.assert_array_equal(_dist(lb), board_reference()[..., :300])


def test_task_graph_is_bounded_whatever_the_batch():
    ds = scores("dask")
    with xcorrstat.set_options(batch=1):
        res = xcorrstat.bootstrap(ds, target="human", resample=xcorrstat.Bootstrap(n_resamples=10**6, rng=0))
    n_tasks = len(res["low"].data.__dask_graph__())
    assert n_tasks < 20 * MAX_DRAW_TASKS  # a 10**6-task graph before
    assert res.attrs["batch"] == 1
    assert res.attrs["draws_per_task"] == draws_per_task(10**6, res.attrs["draws_per_batch"]) == 3907
    assert res.attrs["draws_per_batch"] >= 1


def test_small_batches_are_raised_on_tiny_data():
    with xcorrstat.set_options(batch=1):
        res = xcorrstat.bootstrap(scores("eager"), target="human",
                                  resample=xcorrstat.Bootstrap(n_resamples=2000, rng=0))
    assert res.attrs["batch"] == 1 and res.attrs["draws_per_batch"] == 1000


def test_bootstrap_takes_a_list_of_levels_with_the_same_draws():
    ds = scores("eager")
    kw = dict(target="human", method="kendall",
              resample=xcorrstat.Bootstrap(n_resamples=300, rng=21, keep_distribution=True))
    both = xcorrstat.bootstrap(ds, level=["system", "input"], **kw)
    assert both["low"].dims == ("level", "metric") and list(both["level"].values) == ["system", "input"]
    assert both.attrs["level"] == ["system", "input"] and both.attrs["rng"] == 21
    for lev in ("system", "input"):
        one = xcorrstat.bootstrap(ds, level=lev, **kw)
        for name in ("correlation", "low", "high", "distribution"):
            np.testing.assert_array_equal(both[name].sel(level=lev).values, one[name].values)
        np.testing.assert_array_equal(both["n"].sel(level=lev).values, one["n"].values)


def test_compare_takes_a_list_of_targets_each_compared_on_its_own():
    ds = scores("eager").assign(human2=lambda d: d["human"] ** 3 + d["m2"])
    ds["human2"].attrs["role"] = "human"
    kw = dict(metrics=["m0", "m1", "m2"], level="input", test=xcorrstat.Permutation(n_resamples=200, rng=4))
    both = xcorrstat.compare(ds, target=["human", "human2"], **kw)
    assert both.attrs["target"] == ["human", "human2"]
    for t in ("human", "human2"):
        one = xcorrstat.compare(ds, target=t, **kw)
        for name in ("correlation", "pvalue", "pvalue_corrected", "cluster", "delta"):
            np.testing.assert_array_equal(both[name].sel(target=t).transpose(*one[name].dims).values,
                                          one[name].values)


def test_aggregate_tasks_of_a_lazy_compare_equals_the_eager_one():
    ds = make_scores(n_metrics=3, extra=("task", 2))
    kw = dict(target="human", test=xcorrstat.Permutation(n_resamples=1001, rng=0, keep_distribution=True))
    with xcorrstat.set_options(batch=7):
        lazy = xcorrstat.aggregate_tasks(xcorrstat.compare(ds.chunk(), **kw))
    eager = xcorrstat.aggregate_tasks(xcorrstat.compare(ds, **kw))
    # Dask data: the common ground's note says what was done without counting the cells (no pass first)
    assert lazy.attrs.pop("notes") == (LAZY_COMMON_NOTE,)
    xr.testing.assert_identical(lazy, eager)
    assert np.isfinite(eager["pvalue"].values).sum() == 6


@pytest.mark.parametrize("test", ["permutation", "bootstrap"])
def test_eager_data_through_the_task_graph_with_more_draws_than_a_block(monkeypatch, test):
    """Large eager problems go through Dask blocks of draws: 1,001 draws crossed two (a crash before)."""
    monkeypatch.setattr(engine, "SMALL_WORK", 0)
    got = _compare(scores("eager"), 1001, None, test)
    np.testing.assert_array_equal(got, reference(f"compare-{test}")[..., :1001])
