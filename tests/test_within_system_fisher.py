"""Fisher intervals at within-system level against the textbook formula on explicit per-system correlations.

Within-system level averages each system's correlation over its inputs; its Fisher interval takes
as ``n`` the most inputs correlated for any one system (input level's rule with the dims' roles
swapped). The oracle computes every per-system correlation with SciPy, averages the defined ones,
and applies ``tanh(artanh(r) -/+ z_{alpha/2} c / sqrt(n - b))`` with Bonett & Wright's constants.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import xarray as xr
from scipy import stats

import xcorrstat

CONSTANTS = {"pearson": (3, lambda r: 1.0), "spearman": (3, lambda r: math.sqrt(1 + r * r / 2)),
             "kendall": (4, lambda r: math.sqrt(0.437))}
CORRELATIONS = {"pearson": lambda a, b: stats.pearsonr(a, b)[0],
                "spearman": lambda a, b: stats.spearmanr(a, b)[0],
                "kendall": lambda a, b: stats.kendalltau(a, b, variant="b")[0]}
MIN_PAIRS = 3  # the library's default


def make_data(seed: int, n_metrics: int = 3, n_sys: int = 6, n_inp: int = 9, nan_frac: float = 0.2):
    g = np.random.default_rng(seed)
    z = g.normal(size=(n_sys, n_inp))
    x = z[None] * g.uniform(0.2, 1.0, size=(n_metrics, 1, 1)) + g.normal(size=(n_metrics, n_sys, n_inp))
    x[g.random(x.shape) < nan_frac] = np.nan
    z[g.random(z.shape) < nan_frac / 2] = np.nan
    x[0, 0, 2:] = np.nan  # a system with 2 valid inputs: undefined, left out of the average
    ds = xr.Dataset({f"m{k}": (("system", "input"), x[k]) for k in range(n_metrics)},
                    coords={"system": [f"s{s}" for s in range(n_sys)], "input": [f"i{i}" for i in range(n_inp)]})
    ds["human"] = (("system", "input"), z)
    ds["human"].attrs["role"] = "human"
    return ds, x, z


def oracle(x: np.ndarray, z: np.ndarray, method: str, confidence_level: float):
    """(r, n, low, high) of one metric's (system, input) scores."""
    per_system, counts = [], []
    for s in range(x.shape[0]):
        valid = ~np.isnan(x[s]) & ~np.isnan(z[s])
        counts.append(int(valid.sum()))
        if valid.sum() >= MIN_PAIRS:
            per_system.append(CORRELATIONS[method](x[s][valid], z[s][valid]))
    defined = [r for r in per_system if not math.isnan(r)]
    r = float(np.mean(defined)) if defined else math.nan
    n = max(counts)
    b, c = CONSTANTS[method]
    if n <= b or math.isnan(r):
        return r, n, math.nan, math.nan
    half = stats.norm.ppf(1 - (1 - confidence_level) / 2) * c(r) / math.sqrt(n - b)
    return r, n, math.tanh(math.atanh(r) - half), math.tanh(math.atanh(r) + half)


@pytest.mark.parametrize("confidence_level", [0.95, 0.8])
@pytest.mark.parametrize("method", ["pearson", "spearman", "kendall"])
def test_within_system_fisher_equals_textbook_formula(method, confidence_level):
    ds, x, z = make_data(7)
    res = xcorrstat.fisher(ds, target="human", level="within_system", method=method,
                           confidence_level=confidence_level)
    assert res.attrs["level"] == "within_system"
    for m in range(x.shape[0]):
        r, n, low, high = oracle(x[m], z, method, confidence_level)
        assert int(res["sample_size"].values[m]) == n
        np.testing.assert_allclose(res["correlation"].values[m], r, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(res["low"].values[m], low, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(res["high"].values[m], high, rtol=1e-12, atol=1e-14)
        assert not math.isnan(low) and low < r < high


def test_within_system_fisher_is_input_level_transposed():
    ds, _, _ = make_data(11)
    swapped = ds.rename({"system": "input", "input": "system"}).transpose("system", "input")
    within = xcorrstat.fisher(ds, target="human", level="within_system", method="spearman")
    by_input = xcorrstat.fisher(swapped, target="human", level="input", method="spearman")
    for name in ("correlation", "low", "high", "sample_size", "n"):
        np.testing.assert_array_equal(within[name].values, by_input[name].values)


def test_within_system_fisher_nan_when_n_at_most_b():
    ds, _, _ = make_data(3, n_inp=4, nan_frac=0.0)
    res = xcorrstat.fisher(ds, target="human", level="within_system", method="kendall")
    assert (res["sample_size"] == 4).all()  # n <= b = 4 for Kendall
    assert np.isnan(res["low"]).all() and np.isnan(res["high"]).all()
    assert np.isfinite(res["correlation"]).all()


def test_fisher_names_an_unknown_level():
    ds, _, _ = make_data(1)
    with pytest.raises(ValueError, match="level must be one of .*'within_system'.*got 'per_item'"):
        xcorrstat.fisher(ds, target="human", level="per_item")
