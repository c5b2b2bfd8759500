"""pairwise_differences: ``x[j] - x[i]`` over every ordered pair of labels, against loops and
mt-metrics-eval's cases.

| mt-metrics-eval | xcorrstat |
|---|---|
| ``AverageCorrelation._enumerate_pairwise_diffs(rows)`` (rows = segments, columns = systems) | ``pairwise_differences(ds, dim="system")``, one (system, other_system) matrix per input |
| ``PairwiseDiffs(x, eps)`` | ``pairwise_differences(x, epsilon=eps)`` |
| ``PairwiseDiffs.Combine`` (complementary symmetric 0/1 weights) | the two results' pair outcomes swapped by a symmetric mask |
"""

import itertools

import numpy as np
import pytest
import xarray as xr

import xcorrstat
from xcorrstat._mt.pairwise import pairwise_differences
from conftest import make_scores
from mtme_cases import case as fixture, from_rows, ids, load
from xcorrstat._resampling.draws import permutation_masks

ENUMERATE = load("AverageCorrelation._enumerate_pairwise_diffs")


@pytest.mark.parametrize("case", ENUMERATE, ids=ids(ENUMERATE))
def test_mtme_enumerate_pairwise_diffs(case):
    a, exp = case["args"], case["expected"]
    ds = from_rows(human=a["human_rows"], metric=a["metric_rows"])
    if exp.get("raises"):
        with pytest.raises(ValueError, match="dim='system' has 1 label"):
            pairwise_differences(ds, dim="system")
        return
    d = pairwise_differences(ds, dim="system")
    for name, key in (("human", "human_pairs"), ("metric", "metric_pairs")):
        for k, row in enumerate(exp[key]):
            expected = np.array([np.nan if v is None else v for v in row], dtype=float)
            got = d[name].isel(input=k).transpose("system", "other_system").values.ravel()  # row-major (i, j)
            np.testing.assert_array_equal(got, expected)


COUNTS = fixture("PairwiseDiffs/counts")


def _outcomes(d: np.ndarray) -> dict:
    upper = d[np.triu_indices(d.shape[0], 1)]
    return {"ties": int((upper == 0).sum()), "gt": int((upper > 0).sum()), "lt": int((upper < 0).sum())}


def test_mtme_pairwise_diffs_counts():
    a, exp = COUNTS["args"], COUNTS["expected"]
    d = {}
    for k in ("1", "2"):
        x = xr.DataArray(a[f"x{k}"], dims="system", coords={"system": [f"s{i}" for i in range(4)]})
        d[k] = pairwise_differences(x, epsilon=a[f"eps{k}"]).values
        counts = _outcomes(d[k])
        assert (counts["ties"], counts["gt"], counts["lt"]) == (exp[f"x{k}_ties"], exp[f"x{k}_upper_gt0"],
                                                                 exp[f"x{k}_upper_lt0"])
        np.testing.assert_allclose(d[k], COUNTS["upstream_full_precision"][f"x{k}_diffs"], atol=1e-12)
    # swap pair outcomes between the vectors with complementary symmetric 0/1 weights, from the
    # library's permutation draws (a coin per cell; the upper triangle mirrored): totals are conserved
    coins = permutation_masks(0, np.arange(20), 4, 4, "cells")
    per_vector = set()
    for c in coins:
        w = np.triu(c, 1)
        w = w | w.T
        combined = (np.where(w, d["2"], d["1"]), np.where(w, d["1"], d["2"]))
        for m in combined:
            np.testing.assert_array_equal(m, -m.T)  # still a matrix of pair differences
        one, two = (_outcomes(m) for m in combined)
        assert one["ties"] + two["ties"] == exp["combined_ties_total"]
        assert one["gt"] + two["gt"] == exp["combined_gt_total"]
        assert one["lt"] + two["lt"] == exp["combined_lt_total"]
        per_vector.add(one["gt"])
    assert len(per_vector) > 1  # the draws did swap outcomes


def test_against_loops_with_gaps_extra_dims_and_epsilon():
    ds = make_scores(n_metrics=2, n_systems=5, n_inputs=4, seed=3, ties=True, nan_frac=0.2, extra=("lp", 2))
    eps = 1.0
    d = pairwise_differences(ds, dim="system", epsilon=eps)
    assert set(d.data_vars) == {"m0", "m1", "human"} and d["m0"].dims[:2] == ("system", "other_system")
    systems = ds["system"].values
    for name, k, j in itertools.product(("m0", "human"), range(2), range(4)):
        x = ds[name].isel(lp=k, input=j).values
        for a, b in itertools.product(range(5), repeat=2):
            expected = x[b] - x[a]
            if abs(expected) <= eps:
                expected = 0.0
            got = float(d[name].isel(lp=k, input=j).sel(system=systems[a], other_system=systems[b]))
            assert got == expected or (np.isnan(got) and np.isnan(expected))
    # along inputs; Dask-backed data stays lazy
    along_inputs = pairwise_differences(ds, dim="input")
    assert along_inputs["m0"].dims[:2] == ("input", "other_input")
    lazy = pairwise_differences(ds.chunk({"lp": 1}), dim="system", epsilon=eps)
    assert lazy["m0"].chunks is not None
    xr.testing.assert_identical(lazy.compute(), d)


def test_errors():
    x = xr.DataArray([1.0, 2.0, 3.0], dims="system")
    for bad in (-0.1, np.inf, np.nan, True, "0"):
        with pytest.raises(ValueError, match="epsilon must be a finite number >= 0"):
            pairwise_differences(x, epsilon=bad)
    with pytest.raises(ValueError, match="dim must name a dim of the data"):
        pairwise_differences(x, dim="input")
    with pytest.raises(ValueError, match="dim='system' has 1 label"):
        pairwise_differences(x[:1])
    with pytest.raises(ValueError, match="'other_system'"):
        pairwise_differences(x.expand_dims(other_system=2))
    with pytest.raises(ValueError, match="duplicate labels"):
        pairwise_differences(x.assign_coords(system=["a", "a", "b"]))
    with pytest.raises(TypeError, match="numeric scores"):
        pairwise_differences(xr.DataArray(["a", "b"], dims="system"))
    with pytest.raises(ValueError, match="no data variable has this dim"):
        pairwise_differences(xr.Dataset({"a": ("input", [1.0, 2.0])}, coords={"system": ["s0", "s1"]}))
    with pytest.raises(TypeError, match="must be an xarray Dataset or DataArray"):
        pairwise_differences([1.0, 2.0])
