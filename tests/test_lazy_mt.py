"""Lazy in, lazy out for calibrate_ties with sampled pairs and for pairwise_difference_pearson:
Dask-backed scores give a Dask-backed result without computing anything, and computing it gives
the eager result bit for bit (NaN included), with the same attrs."""

from __future__ import annotations

import cloudpickle
import dask
import dask.array as dsa
import numpy as np
import pytest
import xarray as xr
from conftest import make_scores

import xcorrstat

LEVELS = ["input", "within_system", "global", "system"]
TARGET = "expert_relevance"


def refuse(*args, **kwargs):
    raise AssertionError("computed before .compute()")


def lazy_of(run, ds: xr.Dataset, chunks: dict) -> xr.Dataset:
    """``run`` on chunked scores, with a scheduler that refuses to compute anything."""
    with dask.config.set(scheduler=refuse):
        return run(ds.chunk(chunks))


def assert_same(lazy: xr.Dataset, eager: xr.Dataset) -> None:
    for name, var in lazy.data_vars.items():
        assert isinstance(var.data, dsa.Array), name  # nothing computed yet
    computed = lazy.compute(scheduler="threads")
    xr.testing.assert_identical(computed, eager)
    assert computed.attrs == eager.attrs
    for name in eager.variables:
        a, b = eager[name].values, computed[name].values
        assert a.dtype == b.dtype, name
        assert a.tobytes() == b.tobytes(), name  # bit for bit


@pytest.fixture(scope="module")
def summeval() -> xr.Dataset:
    ds = xcorrstat.datasets.summeval()
    ds = ds[[TARGET, "qa_eval_f1", "rouge_1_f1", "meteor", "bertscore_f1"]]
    ds["qa_eval_f1"] = ds["qa_eval_f1"].where(ds["qa_eval_f1"] > 0.1)  # missing cells
    return ds


def with_lp(**kwargs) -> xr.Dataset:
    """Scores with a language-pair dim, missing cells and ties."""
    return make_scores(n_metrics=3, n_systems=6, n_inputs=20, seed=5, nan_frac=0.15, ties=True,
                       extra=("lp", 3), **kwargs)


# -- calibrate_ties(sample_rate < 1) ---------------------------------------------------------------

@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("sample_rate", [0.5, 0.2])
def test_sampled_calibrate_ties_is_lazy(summeval, level, sample_rate):
    def run(ds):
        return xcorrstat.calibrate_ties(ds, target=TARGET, level=level, keep_curve=True, sample_rate=sample_rate,
                                        rng=11)

    eager = run(summeval)
    assert eager.attrs["rng"] == 11 and eager.attrs["sample_rate"] == sample_rate
    assert_same(lazy_of(run, summeval, {"input": 25}), eager)


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("chunks", [{"input": 7}, {"lp": 1, "system": 2}])
def test_sampled_calibrate_ties_with_an_extra_dim_is_lazy(level, chunks):
    ds = with_lp()

    def run(data):
        return xcorrstat.calibrate_ties(data, target="human", level=level, keep_curve=True, sample_rate=0.5, rng=3)

    assert_same(lazy_of(run, ds, chunks), run(ds))


def test_sampled_lazy_result_draws_the_same_pairs_every_time(summeval):
    def run(ds):
        return xcorrstat.calibrate_ties(ds, target=TARGET, sample_rate=0.5, rng=4, keep_curve=True)

    lazy = lazy_of(run, summeval, {"input": 25})
    first = lazy.compute(scheduler="threads")
    xr.testing.assert_identical(lazy.compute(scheduler="synchronous"), first)
    xr.testing.assert_identical(cloudpickle.loads(cloudpickle.dumps(lazy)).compute(), first)  # as a cluster gets it
    other = xcorrstat.calibrate_ties(summeval, target=TARGET, sample_rate=0.5, rng=5, keep_curve=True)
    assert not np.array_equal(first["objective"], other["objective"], equal_nan=True)  # the draws matter


def test_sampled_calibrate_ties_from_a_generator_is_lazy(summeval):
    def run(ds):
        return xcorrstat.calibrate_ties(ds, target=TARGET, level="within_system", sample_rate=0.5,
                                        rng=np.random.default_rng(8))

    assert_same(lazy_of(run, summeval, {"input": 25}), run(summeval))


def test_sampled_calibrate_ties_from_a_random_state_is_lazy(summeval):
    def run(ds, rng):
        return xcorrstat.calibrate_ties(ds, target=TARGET, metrics=["qa_eval_f1", "meteor"], sample_rate=0.5,
                                        rng=rng, keep_curve=True)

    eager = run(summeval, np.random.RandomState(123))
    legacy = np.random.RandomState(123)
    with dask.config.set(scheduler=refuse):
        lazy = run(summeval.chunk({"input": 25}), legacy)
    assert_same(lazy, eager)
    assert_same(lazy, eager)  # drawn from a copy of the state at the call: the same pairs again
    assert legacy.random_sample() == np.random.RandomState(123).random_sample()  # the caller's is not advanced


def test_unsampled_calibrate_ties_ignores_rng_lazily(summeval):
    def run(ds):
        return xcorrstat.calibrate_ties(ds, target=TARGET, level="input", rng=np.random.RandomState(1))

    eager = run(summeval)
    assert "rng" not in eager.attrs
    assert_same(lazy_of(run, summeval, {"input": 25}), eager)


# -- pairwise_difference_pearson ---------------------------------------------------------------------

@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("chunks", [{"input": 25}, {"system": 3}])
def test_pairwise_difference_pearson_is_lazy(summeval, level, chunks):
    def run(ds):
        return xcorrstat.pairwise_difference_pearson(ds, target=TARGET, level=level)

    assert_same(lazy_of(run, summeval, chunks), run(summeval))


def extreme_scores() -> xr.Dataset:
    """Scores that take both scaling steps: a metric beyond 2**256 (power-of-two normalisation) and
    large offsets (removed at system level), with an lp dim, missing cells and a transposed layout."""
    ds = make_scores(n_metrics=3, n_systems=7, n_inputs=30, seed=1, nan_frac=0.1, extra=("lp", 10))
    ds["m0"] = ds["m0"] * 2.0**400
    ds["m1"] = ds["m1"] * 1e-3 + 1e7
    ds["human"] = ds["human"] + 3e5
    ds["human"].attrs["role"] = "human"
    return ds.transpose("input", "lp", "system")


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("pool", [None, "lp"])
@pytest.mark.parametrize("chunks", [{"input": 7}, {"lp": 3, "system": 2}, {"lp": 1}])
def test_pairwise_difference_pearson_with_an_extra_dim_is_lazy(level, pool, chunks):
    ds = extreme_scores()

    def run(data):
        return xcorrstat.pairwise_difference_pearson(data, target="human", level=level, pool=pool)

    eager = run(ds)
    assert np.isfinite(eager["correlation"]).all()
    assert_same(lazy_of(run, ds, chunks), eager)


@pytest.mark.parametrize("level", LEVELS)
def test_pairwise_difference_pearson_of_ties_with_an_extra_dim_is_lazy(level):
    ds = with_lp()

    def run(data):
        return xcorrstat.pairwise_difference_pearson(data, target="human", level=level)

    assert_same(lazy_of(run, ds, {"input": 6}), run(ds))


def test_scaled_scores_stay_lazy():
    ds = extreme_scores()
    for level in LEVELS:
        def run(data):
            return xcorrstat.pairwise_difference_pearson(data, target="human", metrics=["m0", "m1", "m2"], level=level)

        eager = run(ds)
        with dask.config.set(scheduler=refuse):
            lazy = run(ds.chunk({"input": 4}))
        for name in ("correlation", "n_pairs"):
            assert isinstance(lazy[name].data, dsa.Array)
            assert eager[name].values.tobytes() == lazy[name].compute().values.tobytes()