"""Lazy in, lazy out for soft pairwise accuracy and its permutation test: Dask-backed scores give a
Dask-backed result without computing anything, and computing it gives the eager result bit for bit,
whatever the chunks (with an extra dim, missing cells and both sources of sign draws)."""

from __future__ import annotations

import dask
import dask.array as dsa
import numpy as np
import pytest
import xarray as xr
from conftest import make_scores

import xcorrstat

DRAWS = ["by-id", "mt-metrics-eval"]


def refuse(*args, **kwargs):
    raise AssertionError("computed before .compute()")


def summeval() -> xr.Dataset:
    ds = xcorrstat.datasets.summeval()[["expert_relevance", "meteor", "bertscore_f1", "qa_eval_f1"]]
    # a system without any target score on a few inputs, and a metric missing other inputs
    ds = ds.where(~((ds.system == ds.system[0]) & ds.input.isin(ds.input[:6])))
    ds["meteor"] = ds["meteor"].where(~ds.input.isin(ds.input[10:13]))
    return ds


def with_extra() -> xr.Dataset:
    return make_scores(n_metrics=3, n_systems=5, n_inputs=60, seed=4, nan_frac=0.05, extra=("lp", 3))


def lazily(run, ds: xr.Dataset, chunks: dict) -> xr.Dataset:
    with dask.config.set(scheduler=refuse):
        return run(ds.chunk(chunks))


def assert_lazy_equal(lazy: xr.Dataset, eager: xr.Dataset) -> None:
    for name, var in lazy.data_vars.items():
        assert isinstance(var.data, dsa.Array), name
    for name, var in eager.data_vars.items():
        assert isinstance(var.data, np.ndarray), name
    xr.testing.assert_identical(lazy.compute(scheduler="threads"), eager)


def spa(draws: str, target: str = "expert_relevance"):
    def run(ds):
        return xcorrstat.soft_pairwise_accuracy(ds, target=target, n_resamples=300,
                                                rng=None if draws == "mt-metrics-eval" else 7, draws=draws)
    return run


def spa_test(draws: str, target: str = "expert_relevance"):
    def run(ds):
        return xcorrstat.soft_pairwise_accuracy_test(ds, target=target, n_resamples=90, rng=3, spa_resamples=150,
                                                     spa_rng=None if draws == "mt-metrics-eval" else 5, draws=draws)
    return run


@pytest.mark.parametrize("draws", DRAWS)
@pytest.mark.parametrize("chunks", [{"input": 25}, {"input": 25, "system": 5}])
def test_soft_pairwise_accuracy_is_lazy(draws, chunks):
    ds = summeval()
    eager = spa(draws)(ds)
    assert_lazy_equal(lazily(spa(draws), ds, chunks), eager)


@pytest.mark.parametrize("draws", DRAWS)
@pytest.mark.parametrize("chunks", [{"input": 25}, {"input": 25, "lp": 1}, {"lp": 2}])
def test_soft_pairwise_accuracy_with_an_extra_dim_is_lazy(draws, chunks):
    ds = with_extra()
    eager = spa(draws, "human")(ds)
    assert eager["soft_pairwise_accuracy"].dims == ("metric", "lp")
    assert_lazy_equal(lazily(spa(draws, "human"), ds, chunks), eager)


def test_soft_pairwise_accuracy_of_a_data_array_is_lazy():
    da = summeval().to_array("metric")
    ds = summeval()

    def run(scores):
        return xcorrstat.soft_pairwise_accuracy(scores, target="expert_relevance", rng=1, n_resamples=100)

    eager = run(ds)
    with dask.config.set(scheduler=refuse):
        lazy = run(da.chunk({"input": 25, "metric": 1}).to_dataset("metric"))
    assert_lazy_equal(lazy, eager)


@pytest.mark.parametrize("draws", DRAWS)
def test_soft_pairwise_accuracy_test_is_lazy(draws):
    ds = summeval()
    eager = spa_test(draws)(ds)
    assert_lazy_equal(lazily(spa_test(draws), ds, {"input": 25}), eager)


@pytest.mark.parametrize("draws", DRAWS)
def test_soft_pairwise_accuracy_test_of_one_language_pair_is_lazy(draws):
    ds = with_extra().isel(lp=1)
    eager = spa_test(draws, "human")(ds)
    assert_lazy_equal(lazily(spa_test(draws, "human"), ds, {"input": 25}), eager)


def test_soft_pairwise_accuracy_test_refuses_an_extra_dim_of_lazy_scores():
    with dask.config.set(scheduler=refuse), pytest.raises(ValueError, match="extra dims"):
        spa_test("by-id", "human")(with_extra().chunk({"input": 25}))


def test_results_do_not_depend_on_the_chunks_or_the_layout():
    ds = summeval()
    eager = spa_test("by-id")(ds)
    for chunks in ({"input": 7}, {"system": 3, "input": 40}):
        xr.testing.assert_identical(spa_test("by-id")(ds.chunk(chunks)).compute(), eager)
    xr.testing.assert_identical(spa("by-id")(ds.transpose("input", "system")), spa("by-id")(ds))
    xr.testing.assert_identical(spa_test("by-id")(ds.transpose("input", "system")), eager)


def test_the_lazy_test_runs_on_the_default_scheduler_and_keeps_attrs():
    ds = summeval()
    lazy = spa_test("by-id")(ds.chunk({"input": 25}))
    assert lazy.attrs == spa_test("by-id")(ds).attrs
    done = lazy.compute()
    assert np.isnan(done["pvalue"].values.diagonal()).all()
    assert ((done["pvalue"] >= 0) | done["pvalue"].isnull()).all()
