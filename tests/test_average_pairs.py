"""``average="pairs"``: groups weighted by their pairs, checked against pooled pair counts.

With ``average="pairs"`` a group of ``n`` valid items weighs ``n (n - 1) / 2``. For a share
of pairs (acc_eq, tau-a) the average then equals the share among the pooled pairs of
every group -- WMT's system-level accuracy over language pairs. The oracles count pairs
with plain loops (mt-metrics-eval's ``Agreement``: signs equal, a tie agreeing only with
a tie), on the explicitly expanded bootstrap resample and on the explicitly swapped
matrices of each permutation draw.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import xarray as xr
from scipy import stats

import xcorrstat
from xcorrstat._resampling.draws import bootstrap_indices, permutation_masks
from xcorrstat._resampling.swapstats import standardise


def pooled_agreement(x: np.ndarray, z: np.ndarray) -> float:
    """Agreeing pairs / pairs over every input's valid systems (x, z: (S, I))."""
    agree = pairs = 0
    for j in range(x.shape[1]):
        ok = ~np.isnan(x[:, j]) & ~np.isnan(z[:, j])
        a, b = x[ok, j], z[ok, j]
        for p, q in itertools.combinations(range(len(a)), 2):
            pairs += 1
            agree += np.sign(a[p] - a[q]) == np.sign(b[p] - b[q])
    return agree / pairs if pairs else np.nan


def pair_weighted_taub(x: np.ndarray, z: np.ndarray, min_pairs: int = 3) -> float:
    """Average of scipy's tau-b over inputs, each weighted by its valid pairs (undefined left out)."""
    num = den = 0.0
    for j in range(x.shape[1]):
        ok = ~np.isnan(x[:, j]) & ~np.isnan(z[:, j])
        n = int(ok.sum())
        if n < min_pairs:
            continue
        tau = stats.kendalltau(x[ok, j], z[ok, j]).statistic
        if np.isnan(tau):
            continue
        num += tau * n * (n - 1) / 2
        den += n * (n - 1) / 2
    return num / den if den else np.nan


def dataset(seed: int, n_sys: int = 6, n_inp: int = 4) -> xr.Dataset:
    """Integer scores (ties) with inputs missing different numbers of systems."""
    rng = np.random.default_rng(seed)
    latent = rng.integers(0, 5, size=(n_sys, n_inp)).astype(float)
    data = {name: latent + rng.integers(-2, 3, size=latent.shape) for name in ("a", "b")}
    data["h"] = latent.copy()
    for v in data.values():
        v[:2, 1] = np.nan  # input 1: two systems fewer
        v[0, 2] = np.nan  # input 2: one fewer
    ds = xr.Dataset({k: (("system", "input"), v) for k, v in data.items()},
                    coords={"system": [f"s{i}" for i in range(n_sys)], "input": [f"i{j}" for j in range(n_inp)]})
    ds["h"].attrs["role"] = "human"
    return ds


@pytest.mark.parametrize("seed", range(4))
def test_correlate_is_the_pooled_share_of_pairs(seed):
    ds = dataset(seed)
    res = xcorrstat.correlate(ds, target="h", level="input", method="kendall", variant="acc23", average="pairs")
    for m in ("a", "b"):
        want = pooled_agreement(ds[m].values, ds["h"].values)
        assert float(res.sel(metric=m)) == pytest.approx(want, abs=1e-12)
    taub = xcorrstat.correlate(ds, target="h", level="input", method="kendall", variant="b", average="pairs")
    assert float(taub.sel(metric="a")) == pytest.approx(pair_weighted_taub(ds["a"].values, ds["h"].values),
                                                         abs=1e-12)


@pytest.mark.parametrize("resample", [("system",), ("input",), ("system", "input")])
def test_bootstrap_draws_equal_the_expanded_resample(resample):
    ds = dataset(7)
    n = 12
    res = xcorrstat.bootstrap(ds, target="h", metrics=["a"], level="input", method="kendall", variant="acc23",
                              average="pairs",
                              resample=xcorrstat.Bootstrap(resample, n_resamples=n, rng=5, keep_distribution=True))
    seed = res.attrs["rng"]
    sizes = [ds.sizes[d] for d in resample]
    idx = dict(zip(resample, bootstrap_indices(seed, range(n), sizes)))
    draws = res["distribution"].sel(metric="a").values
    for b in range(n):
        x, z = ds["a"].values, ds["h"].values
        rows = idx.get("system", [np.arange(ds.sizes["system"])] * n)[b]
        cols = idx.get("input", [np.arange(ds.sizes["input"])] * n)[b]
        # the expanded resample: acc_eq compares distinct units, so copies of a system are no pair
        xe, ze = x[np.ix_(rows, cols)], z[np.ix_(rows, cols)]
        # per expanded input: acc_eq over pairs of distinct drawn systems (copies of one system
        # are no pair), weighted by n (n - 1) / 2 of its n expanded valid systems
        num = den = 0.0
        for j in range(xe.shape[1]):
            ok = ~np.isnan(xe[:, j]) & ~np.isnan(ze[:, j])
            agree = pairs = 0
            for p, q in itertools.combinations(np.flatnonzero(ok), 2):
                if rows[p] != rows[q]:
                    pairs += 1
                    agree += np.sign(xe[p, j] - xe[q, j]) == np.sign(ze[p, j] - ze[q, j])
            k = int(ok.sum())
            if k >= 3 and pairs:
                num += agree / pairs * k * (k - 1) / 2
                den += k * (k - 1) / 2
        expected = num / den if den else np.nan
        np.testing.assert_allclose(draws[b], expected, atol=1e-12, err_msg=f"draw {b}")


@pytest.mark.parametrize("permute", ["cells", "system", "input"])
def test_permutation_draws_equal_the_swapped_matrices(permute):
    ds = dataset(3)
    n = 40
    dims = {"cells": ("system", "input"), "system": "system", "input": "input"}[permute]
    res = xcorrstat.permutation_test(ds, x="a", y="b", target="h", level="input", method="kendall",
                                     variant="acc23", average="pairs",
                                     test=xcorrstat.Permutation(dims, n_resamples=n, rng=11, keep_distribution=True,
                                                                pvalue="fraction"))
    assert res.attrs["average"] == "pairs"
    x, y, z = ds["a"].values, ds["b"].values, ds["h"].values
    zx, zy = standardise(x), standardise(y)
    masks = permutation_masks(res.attrs["rng"], range(n), *x.shape, permute)
    want = np.array([pooled_agreement(np.where(m, zy, zx), z) - pooled_agreement(np.where(m, zx, zy), z)
                     for m in masks])
    np.testing.assert_allclose(res["distribution"].values, want, atol=1e-12)
    delta = pooled_agreement(x, z) - pooled_agreement(y, z)
    assert float(res["delta"]) == pytest.approx(delta, abs=1e-12)
    assert float(res["pvalue"]) == pytest.approx(np.mean(want >= delta - 1e-9), abs=1e-12)
    pair = xcorrstat.compare(ds, target="h", metrics=["a", "b"], level="input", method="kendall",
                             variant="acc23", average="pairs",
                             test=xcorrstat.Permutation(dims, n_resamples=n, rng=11, pvalue="fraction"))
    assert float(pair["pvalue"].sel(metric="a", other_metric="b")) == float(res["pvalue"])


def test_bad_average():
    ds = dataset(0)
    with pytest.raises(ValueError, match="compare: average='pairs' averages the per-group correlations of the input and within-system levels"):
        xcorrstat.compare(ds, target="h", level="system", average="pairs",
                          test=xcorrstat.Permutation(n_resamples=10))
    with pytest.raises(ValueError, match="average must be one of"):
        xcorrstat.permutation_test(ds, x="a", y="b", target="h", level="input", average="pooled",
                                   test=xcorrstat.Permutation(n_resamples=10))
    with pytest.raises(ValueError, match="average='pairs' is an option of swap='scores'"):
        xcorrstat.compare(ds, target="h", level="input", method="kendall", variant="acc23",
                          test=xcorrstat.Permutation(swap="pairs", n_resamples=10), average="pairs")
