"""Jaccard similarity of selected sets against ``len(a & b) / len(a | b)`` on Python sets."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import xarray as xr

from xcorrstat.agreement import jaccard
from xcorrstat.agreement._selection import jaccard_kernel

ATOL = 1e-12


def python_jaccard(a: set, b: set, empty: float = 1.0) -> float:
    union = a | b
    return empty if not union else len(a & b) / len(union)


def random_masks(g, *, n_labels, n_seeds, n_cycles, n_items):
    """Masks (label, seed, cycle, item) of mixed densities, with some empty sets on purpose."""
    density = g.choice([0.0, 0.02, 0.1, 0.5, 0.9], size=(n_labels, n_seeds, 1, 1))
    m = g.random((n_labels, n_seeds, n_cycles, n_items)) < density
    return xr.DataArray(m, dims=("label", "seed", "cycle", "item"),
                        coords={"label": [f"L{k}" for k in range(n_labels)]}, name="selected")


def oracle(m: np.ndarray, empty: float = 1.0) -> np.ndarray:
    """Mean over seeds of the Jaccard of the cycle-unioned sets, with Python sets and loops."""
    n_labels, n_seeds = m.shape[:2]
    out = np.empty((n_labels, n_labels))
    for i, j in itertools.product(range(n_labels), repeat=2):
        values = []
        for s in range(n_seeds):
            a = {item for c in range(m.shape[2]) for item in range(m.shape[3]) if m[i, s, c, item]}
            b = {item for c in range(m.shape[2]) for item in range(m.shape[3]) if m[j, s, c, item]}
            values.append(python_jaccard(a, b, empty))
        defined = [v for v in values if not np.isnan(v)]
        out[i, j] = sum(defined) / len(defined) if defined else np.nan
    return out


@pytest.mark.parametrize("seed", range(120))
def test_equals_python_sets(seed):
    g = np.random.default_rng(seed)
    da = random_masks(g, n_labels=int(g.integers(2, 5)), n_seeds=int(g.integers(1, 4)),
                      n_cycles=int(g.integers(1, 4)), n_items=int(g.integers(1, 25)))
    got = jaccard(da, over="label", item="item", union="cycle")
    np.testing.assert_allclose(got.values, oracle(da.values), rtol=0, atol=ATOL)
    assert got.dims == ("label", "other_label")
    np.testing.assert_array_equal(got["n"].values, da.sizes["seed"])


def test_at_least_100_cases_with_empty_sets():
    # the generated cases above include empty-vs-empty and empty-vs-non-empty pairs
    kinds = set()
    for seed in range(120):
        g = np.random.default_rng(seed)
        da = random_masks(g, n_labels=int(g.integers(2, 5)), n_seeds=int(g.integers(1, 4)),
                          n_cycles=int(g.integers(1, 4)), n_items=int(g.integers(1, 25)))
        sizes = da.any("cycle").sum("item").values
        kinds |= {"empty" if s == 0 else "nonempty" for s in sizes.ravel()}
    assert kinds == {"empty", "nonempty"}


def test_empty_sets_rule():
    m = np.array([[0, 0, 0], [0, 0, 0], [1, 0, 1]], dtype=bool)
    da = xr.DataArray(m, dims=("s", "item"), coords={"s": ["e1", "e2", "x"]})
    got = jaccard(da, over="s", item="item")
    assert float(got.sel(s="e1", other_s="e2")) == 1.0  # empty vs empty: equal sets
    assert float(got.sel(s="e1", other_s="x")) == 0.0  # empty vs non-empty
    assert float(got.sel(s="x", other_s="x")) == 1.0
    left_out = jaccard(da, over="s", item="item", empty=np.nan)
    assert np.isnan(float(left_out.sel(s="e1", other_s="e2")))
    assert int(left_out["n"].sel(s="e1", other_s="e2")) == 0


@pytest.mark.parametrize("seed", range(10))
def test_empty_nan_leaves_pairs_out_of_the_average(seed):
    g = np.random.default_rng(1000 + seed)
    da = random_masks(g, n_labels=3, n_seeds=4, n_cycles=2, n_items=6)
    got = jaccard(da, over="label", item="item", union="cycle", empty=np.nan)
    np.testing.assert_allclose(got.values, oracle(da.values, empty=np.nan), rtol=0, atol=ATOL)


def test_distance_is_one_minus_mean():
    g = np.random.default_rng(1)
    da = random_masks(g, n_labels=4, n_seeds=3, n_cycles=2, n_items=15)
    sim = jaccard(da, over="label", item="item", union="cycle")
    dist = jaccard(da, over="label", item="item", union="cycle", distance=True)
    np.testing.assert_allclose(dist.values, 1.0 - oracle(da.values), rtol=0, atol=ATOL)
    xr.testing.assert_allclose(dist, 1 - sim, check_dim_order=True)
    assert dist.name == "jaccard_distance" and dist.attrs["distance"] == 1
    np.testing.assert_array_equal(np.diag(dist.values), 0.0)


def test_along_keeps_other_dims():
    g = np.random.default_rng(2)
    da = random_masks(g, n_labels=3, n_seeds=4, n_cycles=2, n_items=10)
    da = da.assign_coords(seed=["a", "b", "c", "d"])
    per_seed = jaccard(da, over="label", item="item", union="cycle", along=())
    assert set(per_seed.dims) == {"seed", "label", "other_label"}
    for s in range(4):
        np.testing.assert_allclose(per_seed.isel(seed=s).transpose("label", "other_label").values,
                                   oracle(da.values[:, s : s + 1]), rtol=0, atol=ATOL)
    # no union: every (seed, cycle) set compared on its own, averaged over both
    each_cycle = jaccard(da, over="label", item="item")
    stacked = da.stack(run=("seed", "cycle")).transpose("label", "run", "item").values[:, :, None, :]
    np.testing.assert_allclose(each_cycle.values, oracle(stacked), rtol=0, atol=ATOL)
    assert each_cycle.attrs["along"] == ["seed", "cycle"]


def test_missing_sets_are_left_out():
    m = np.array([[[1, 0, 1], [1, 1, 0]], [[1, 0, 0], [np.nan, 0, 0]]])  # (label, seed, item)
    da = xr.DataArray(m, dims=("label", "seed", "item"))
    got = jaccard(da, over="label", item="item")
    # seed 1 of label 1 is missing: label0-label1 averages seed 0 only
    assert float(got[0, 1]) == pytest.approx(python_jaccard({0, 2}, {0}))
    assert int(got["n"][0, 1]) == 1 and int(got["n"][0, 0]) == 2
    assert float(got[1, 1]) == 1.0 and int(got["n"][1, 1]) == 1


def test_union_propagates_missing_entries():
    m = np.array([[[1, 0], [0, 1]], [[1, 0], [np.nan, np.nan]]])  # (label, cycle, item)
    got = jaccard(xr.DataArray(m, dims=("label", "cycle", "item")), over="label", item="item", union="cycle")
    assert np.isnan(float(got[0, 1]))
    filled = jaccard(xr.DataArray(m, dims=("label", "cycle", "item")).fillna(0), over="label", item="item",
                     union="cycle")
    assert float(filled[0, 1]) == pytest.approx(python_jaccard({0, 1}, {0}))


def test_integer_masks_and_kernel():
    m = np.array([[1, 1, 0, 0], [0, 1, 1, 0]])
    got = jaccard(xr.DataArray(m, dims=("s", "item")), over="s", item="item")
    assert float(got[0, 1]) == pytest.approx(1 / 3)
    sim, inter = jaccard_kernel(m.astype(bool))
    assert inter.tolist() == [[2, 1], [1, 2]]


def test_dask_matches_eager():
    g = np.random.default_rng(3)
    da = random_masks(g, n_labels=4, n_seeds=6, n_cycles=3, n_items=30)
    eager = jaccard(da, over="label", item="item", union="cycle")
    lazy = jaccard(da.chunk({"seed": 2, "item": 10}), over="label", item="item", union="cycle")
    assert lazy.chunks is not None
    xr.testing.assert_allclose(eager, lazy.compute())


def test_synthetic_benchmark_similar_strategies_overlap():
    from xcorrstat.agreement import synthetic_benchmark

    bench = synthetic_benchmark(rng=0)
    j = jaccard(bench, var="selected", over="strategy", item="item", union="cycle")
    assert float(j.sel(strategy="entropy", other_strategy="margin")) > float(j.sel(strategy="entropy",
                                                                                   other_strategy="coreset"))


@pytest.mark.parametrize(
    "kwargs,error,match",
    [
        (dict(over="label", item="label"), ValueError, "item and over must be different"),
        (dict(over="label", item="nope"), ValueError, "item must name a dim"),
        (dict(over="label", item="item", union="label"), ValueError, "already used by over"),
        (dict(over="label", item="item", along="cycle", union="cycle"), ValueError, "already used by union"),
        (dict(over="label", item="item", empty="one"), TypeError, "empty must be a number"),
        (dict(over="label", item="item", distance=1), TypeError, "distance must be True or False"),
    ],
)
def test_errors_name_the_argument(kwargs, error, match):
    da = random_masks(np.random.default_rng(0), n_labels=2, n_seeds=2, n_cycles=2, n_items=4)
    with pytest.raises(error, match=match):
        jaccard(da, **kwargs)


def test_non_mask_values_are_rejected():
    with pytest.raises(ValueError, match="boolean masks"):
        jaccard(xr.DataArray([[0, 2], [1, 0]], dims=("s", "item")), over="s", item="item")
    with pytest.raises(TypeError, match="boolean masks"):
        jaccard(xr.DataArray([["a", "b"], ["c", "d"]], dims=("s", "item")), over="s", item="item")


def test_synthetic_benchmark_takes_rng_only():
    """rng= seeds the benchmark (recorded in attrs); seed=, an earlier name, is refused."""
    from xcorrstat.agreement import synthetic_benchmark

    assert synthetic_benchmark(rng=3, n_missing=2).identical(synthetic_benchmark(rng=3, n_missing=2))
    assert synthetic_benchmark(rng=3).attrs["rng"] == 3
    assert not synthetic_benchmark(rng=3)["accuracy"].identical(synthetic_benchmark(rng=4)["accuracy"])
    with pytest.raises(TypeError, match="seed"):
        synthetic_benchmark(seed=2)
