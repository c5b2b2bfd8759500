"""aggregate_tasks: weighted averages over a task dim and the test of the averaged differences."""

import numpy as np
import pytest
import xarray as xr

import xcorrstat
from conftest import make_scores
from xcorrstat._kernels.clusters import greedy_clusters
from xcorrstat._resampling.pvalues import permutation_pvalue


@pytest.fixture(scope="module")
def result():
    ds = make_scores(n_metrics=4, n_systems=6, n_inputs=8, seed=7, extra=("task", 3))
    return xcorrstat.compare(ds, target="human", level="input", method="pearson",
                             test=xcorrstat.Permutation(n_resamples=200, rng=3, keep_distribution=True),
                             correction="holm")


def test_average_and_its_test_by_hand(result):
    weights = {"task0": 1.0, "task1": 2.0, "task2": 1.0}
    avg = xcorrstat.aggregate_tasks(result, weights=weights)
    w = np.array([0.25, 0.5, 0.25])
    r = result["correlation"].transpose("task", "metric").values
    np.testing.assert_allclose(avg["correlation"].values, w @ r, atol=1e-12)
    dist = np.einsum("t,tmkb->mkb", w, result["distribution"].transpose("task", "metric", "other_metric",
                                                                        "resample").values)
    delta = np.einsum("t,tmk->mk", w, result["delta"].transpose("task", "metric", "other_metric").values)
    p = permutation_pvalue(dist, delta, alternative="greater")
    np.fill_diagonal(p, np.nan)
    np.testing.assert_allclose(avg["pvalue"].values, p, atol=1e-12, equal_nan=True)
    # ranks: 1 = best in each task, averaged with the weights
    ranks = np.array([len(row) - np.argsort(np.argsort(row)) for row in r])
    np.testing.assert_allclose(avg["mean_rank"].values, w @ ranks, atol=1e-12)
    clusters = greedy_clusters(avg["correlation"].values, avg["significant"].values)
    np.testing.assert_array_equal(avg["cluster"].values, clusters)
    assert avg.attrs["aggregated_over"] == "task" and float(avg["weight"].sum()) == pytest.approx(1.0)


def test_one_task_equals_compare(result):
    one = result.isel(task=[1])
    avg = xcorrstat.aggregate_tasks(one)
    single = result.isel(task=1)
    for v in ("correlation", "delta", "pvalue", "pvalue_corrected", "significant", "cluster"):
        np.testing.assert_array_equal(avg[v].values, single[v].values)


def test_bad_arguments(result):
    with pytest.raises(ValueError, match="keep_distribution=True"):
        xcorrstat.aggregate_tasks(result.drop_vars("distribution"))
    with pytest.raises(ValueError, match="dim='lp' is not a dim"):
        xcorrstat.aggregate_tasks(result, dim="lp")
    with pytest.raises(ValueError, match="missing"):
        xcorrstat.aggregate_tasks(result, weights={"task0": 1.0})
    with pytest.raises(ValueError, match="weights must be >= 0"):
        xcorrstat.aggregate_tasks(result, weights=xr.DataArray([1.0, -1.0, 1.0], dims="task",
                                                               coords={"task": result["task"].values}))
