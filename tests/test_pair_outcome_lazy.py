"""Lazy in, lazy out for the pair-outcome test and the re-calibrated score test: Dask-backed scores
give a Dask-backed result without computing anything, and computing it gives the eager result bit
for bit (with an extra dim, missing target cells and given or calibrated thresholds)."""

from __future__ import annotations

import dask
import dask.array as dsa
import numpy as np
import pytest
import xarray as xr
from conftest import assert_lazy_notes_equal, make_scores

import xcorrstat
from xcorrstat import Permutation


def refuse(*args, **kwargs):
    raise AssertionError("computed before .compute()")


def scores(extra: bool) -> xr.Dataset:
    ds = make_scores(n_metrics=3, n_systems=5, n_inputs=12, seed=4, ties=True, extra=("lp", 2) if extra else None)
    return ds.where(~((ds.system == "s0") & (ds.input == "i3")))  # a cell without any score


def lazy_and_eager(run, ds: xr.Dataset) -> tuple[xr.Dataset, xr.Dataset]:
    eager = run(ds)
    with dask.config.set(scheduler=refuse):
        lazy = run(ds.chunk({"input": 5}))
    return lazy, eager


def assert_lazy_equal(lazy: xr.Dataset, eager: xr.Dataset) -> None:
    for name, var in lazy.data_vars.items():
        if name not in ("n_resamples_used",):
            assert isinstance(var.data, dsa.Array), name
    # Dask data: a fixed note says the missing cells were not counted (that would take a pass first)
    assert_lazy_notes_equal(lazy.compute(scheduler="threads"), eager)


@pytest.mark.parametrize("extra", [False, True])
@pytest.mark.parametrize("level", ["input", "within_system", "global"])
@pytest.mark.parametrize("epsilon", [None, 0.1])
def test_permutation_test_swap_pairs_is_lazy(extra, level, epsilon):
    test = Permutation(swap="pairs", epsilon=epsilon, n_resamples=60, rng=3, keep_distribution=True)

    def run(ds):
        return xcorrstat.permutation_test(ds, x="m0", y="m1", target="human", level=level, method="kendall",
                                          variant="acc23", test=test)

    assert_lazy_equal(*lazy_and_eager(run, scores(extra)))


@pytest.mark.parametrize("extra", [False, True])
def test_compare_swap_pairs_is_lazy(extra):
    test = Permutation(swap="pairs", n_resamples=40, rng=1, keep_distribution=True)

    def run(ds):
        return xcorrstat.compare(ds, target="human", level="input", method="kendall", variant="acc23", test=test)

    lazy, eager = lazy_and_eager(run, scores(extra))
    assert isinstance(lazy["distribution"].data, dsa.Array) and isinstance(lazy["epsilon"].data, dsa.Array)
    # Dask data: a fixed note says the missing cells were not counted (that would take a pass first)
    assert_lazy_notes_equal(lazy.compute(scheduler="threads"), eager)


@pytest.mark.parametrize("extra", [False, True])
def test_recalibrated_score_test_is_lazy(extra):
    test = Permutation(epsilon="calibrate", n_resamples=30, rng=2, keep_distribution=True)

    def run(ds):
        return xcorrstat.permutation_test(ds, x="m0", y="m2", target="human", level="input", method="kendall",
                                          variant="acc23", test=test)

    assert_lazy_equal(*lazy_and_eager(run, scores(extra)))


def test_eager_scores_give_numbers():
    ds = scores(False)
    out = xcorrstat.permutation_test(ds, x="m0", y="m1", target="human", level="input", method="kendall",
                                     variant="acc23", test=Permutation(swap="pairs", n_resamples=20, rng=0))
    assert all(isinstance(v.data, np.ndarray) for v in out.data_vars.values())
