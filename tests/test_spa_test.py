"""The permutation test of soft pairwise accuracy (SPA) between metrics.

Oracles: (1) the kernel's swapped SPAs equal SPA recomputed by scipy-free direct loops on the
explicitly swapped score matrices; (2) the test's p-value equals, within Monte-Carlo error, the
exact p-value over every one of the 2**cells swap masks of a tiny case; (3) when
``XCORRSTAT_MTME_SOURCE`` names a checkout of mt-metrics-eval, its ``PermutationSigDiff`` with
its ``PairwiseConfidenceError`` gives the same p-value within Monte-Carlo error.
"""

from __future__ import annotations

import itertools

import numpy as np
import scipy.stats
import pytest
import xarray as xr
from mtme_source import mtme_modules

import xcorrstat
from xcorrstat._kernels.mt.soft_pairwise import spa_swap_draws
from xcorrstat._mt.softpairwise import mtme_signs


def _loop_pvalues(x: np.ndarray, signs: np.ndarray) -> np.ndarray:
    """One-sided sign-flip p-value of every system pair (a < b), pair by pair and draw by draw."""
    out = []
    for a, b in itertools.combinations(range(x.shape[0]), 2):
        d = x[a] - x[b]
        observed = d.sum()
        tol = 1e-9 * np.abs(d).sum()
        out.append(np.mean([float(np.dot(s, d)) >= observed - tol for s in signs]))
    return np.array(out)


def _loop_spa(x: np.ndarray, z: np.ndarray, signs: np.ndarray) -> float:
    return 1.0 - float(np.mean(np.abs(_loop_pvalues(z, signs) - _loop_pvalues(x, signs))))


def _scores(s: int, n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(s, 1)) + rng.normal(size=(s, n))
    return z + rng.normal(size=(s, n)), z + 2 * rng.normal(size=(s, n)), z


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_kernel_equals_the_explicitly_swapped_matrices(seed):
    xa, xb, z = _scores(5, 12, seed)
    rng = np.random.default_rng(seed + 10)
    signs = np.where(rng.random((150, 12)) < 0.5, -1.0, 1.0)
    masks = rng.random((7, 5, 12)) < 0.5
    sa, sb = spa_swap_draws(xa, xb, z, signs, masks)
    for r, m in enumerate(masks):
        assert sa[r] == pytest.approx(_loop_spa(np.where(m, xb, xa), z, signs), abs=1e-12)
        assert sb[r] == pytest.approx(_loop_spa(np.where(m, xa, xb), z, signs), abs=1e-12)


def test_kernel_on_tied_integer_scores():
    rng = np.random.default_rng(5)
    z = rng.integers(0, 3, size=(4, 10)).astype(float)
    xa, xb = rng.integers(0, 3, size=(2, 4, 10)).astype(float)
    signs = mtme_signs(4, 300, 10).astype(np.float64)
    masks = rng.random((5, 4, 10)) < 0.5
    sa, sb = spa_swap_draws(xa, xb, z, signs, masks)
    for r, m in enumerate(masks):
        assert sa[r] == pytest.approx(_loop_spa(np.where(m, xb, xa), z, signs), abs=1e-12)
        assert sb[r] == pytest.approx(_loop_spa(np.where(m, xa, xb), z, signs), abs=1e-12)


def _dataset(xa, xb, z, extra=None):
    dims = ("system", "input")
    data = {"ma": (dims, xa), "mb": (dims, xb), "human": (dims, z)}
    if extra is not None:
        data["mc"] = (dims, extra)
    return xr.Dataset(data, coords={"system": [f"s{i}" for i in range(xa.shape[0])]})


def test_pvalue_equals_the_exact_enumeration_within_monte_carlo_error():
    xa, xb, z = _scores(3, 2, 7)  # 6 cells: 64 swap masks
    xa[0, 0] += 2.0  # metric A is better on one cell
    res = xcorrstat.soft_pairwise_accuracy_test(_dataset(xa, xb, z), target="human", metrics=["ma", "mb"],
                                                n_resamples=4000, rng=3, spa_resamples=64, spa_rng=1)
    signs = 1.0 - 2.0 * xcorrstat._resampling.draws.permutation_masks(res.attrs["spa_rng"], np.arange(64), 1, 2,
                                                                     "cells")[:, 0, :]
    delta = _loop_spa(xa, z, signs) - _loop_spa(xb, z, signs)
    assert float(res["delta"].sel(metric="ma", other_metric="mb")) == pytest.approx(delta, abs=1e-12)
    deltas = []
    za, zb = scipy.stats.zscore(xa, axis=None), scipy.stats.zscore(xb, axis=None)  # swapped as z-scores
    for bits in itertools.product([False, True], repeat=6):
        m = np.array(bits).reshape(3, 2)
        deltas.append(_loop_spa(np.where(m, zb, za), z, signs) - _loop_spa(np.where(m, za, zb), z, signs))
    exact = float(np.mean(np.array(deltas) >= delta - 1e-12))
    exact_rev = float(np.mean(-np.array(deltas) >= -delta - 1e-12))
    se = np.sqrt(max(exact * (1 - exact), 1e-4) / 4000)
    assert float(res["pvalue"].sel(metric="ma", other_metric="mb")) == pytest.approx(exact, abs=5 * se)
    assert float(res["pvalue"].sel(metric="mb", other_metric="ma")) == pytest.approx(exact_rev, abs=5 * se)


def test_draws_do_not_depend_on_batch_and_prefix_property():
    xa, xb, z = _scores(4, 9, 3)
    ds = _dataset(xa, xb, z, extra=z + np.random.default_rng(0).normal(size=z.shape))
    kw = dict(target="human", rng=11, spa_resamples=100, spa_rng=2)
    with xcorrstat.set_options(batch=7):
        full = xcorrstat.soft_pairwise_accuracy_test(ds, n_resamples=60, **kw)
    with xcorrstat.set_options(batch=60):
        again = xcorrstat.soft_pairwise_accuracy_test(ds, n_resamples=60, **kw)
    xr.testing.assert_identical(full.drop_attrs(), again.drop_attrs())
    # the first k draws of an n-draw run are a k-draw run: a one-draw run counts draw 0 alone
    one = xcorrstat.soft_pairwise_accuracy_test(ds, n_resamples=1, **kw)
    assert set(np.unique(one["pvalue"].values[~np.isnan(one["pvalue"].values)])) <= {0.0, 1.0}


def test_missing_inputs_are_left_out_of_the_pair_and_diagonal_is_nan():
    xa, xb, z = _scores(4, 8, 4)
    xa_nan = xa.copy()
    xa_nan[1, 3] = np.nan
    res = xcorrstat.soft_pairwise_accuracy_test(_dataset(xa_nan, xb, z), target="human", n_resamples=30, rng=0,
                                                draws="mt-metrics-eval")
    kept = np.arange(8) != 3
    ref = xcorrstat.soft_pairwise_accuracy_test(_dataset(xa[:, kept], xb[:, kept], z[:, kept]), target="human",
                                                n_resamples=30, rng=0, draws="mt-metrics-eval")
    assert float(res["delta"][0, 1]) == pytest.approx(float(ref["delta"][0, 1]), abs=1e-12)
    assert np.isnan(res["pvalue"].values.diagonal()).all()


def test_clear_errors():
    xa, xb, z = _scores(3, 4, 0)
    ds = _dataset(xa, xb, z)
    with pytest.raises(ValueError, match="n_resamples"):
        xcorrstat.soft_pairwise_accuracy_test(ds, target="human", n_resamples=0)
    with pytest.raises(ValueError, match="draws"):
        xcorrstat.soft_pairwise_accuracy_test(ds, target="human", draws="other")
    lp = xr.concat([ds, ds], dim="lp")
    with pytest.raises(ValueError, match="extra dims"):
        xcorrstat.soft_pairwise_accuracy_test(lp, target="human")


# ------------------------------------------------------------------ mt-metrics-eval as the oracle


def _mtme_stats():
    (stats,) = mtme_modules("stats")
    return stats


def test_mtme_permutation_sig_diff_with_pce():
    stats = _mtme_stats()
    import functools

    s, n, k = 5, 40, 2000
    xa, xb, z = _scores(s, n, 21)
    ours = xcorrstat.soft_pairwise_accuracy_test(_dataset(xa, xb, z), target="human", metrics=["ma", "mb"],
                                                 n_resamples=k, rng=5, draws="mt-metrics-eval")
    corr_a = stats.Correlation(s, z.ravel().tolist(), xa.ravel().tolist())
    corr_b = stats.Correlation(s, z.ravel().tolist(), xb.ravel().tolist())
    pce = functools.partial(stats.PairwiseConfidenceError, num_sys=s)
    np.random.seed(0)
    params = stats.PermutationSigDiffParams(block_size=k + 1)
    p_mtme, delta_mtme, _, _ = stats.PermutationSigDiff(corr_b, corr_a, pce, "none", k, params)
    assert float(ours["delta"].sel(metric="ma", other_metric="mb")) == pytest.approx(delta_mtme, abs=2e-3)
    p_ours = float(ours["pvalue"].sel(metric="ma", other_metric="mb"))
    se = np.sqrt(max(p_mtme * (1 - p_mtme), 1e-3) * 2 / k)
    assert p_ours == pytest.approx(p_mtme, abs=5 * se)


def _numpy_pvalues(flipped, sums, scale):
    """An independent oracle of the compiled pair counts: NumPy, one first system at a time."""
    n_sys = sums.shape[-1]
    a, b = np.triu_indices(n_sys, 1)
    observed = sums[..., a] - sums[..., b] - 1e-9 * scale
    counts = np.empty(observed.shape, dtype=np.int64)
    start = 0
    for first in range(n_sys - 1):
        stop = start + n_sys - first - 1
        diff = flipped[..., first:first + 1, :] - flipped[..., first + 1:, :]
        counts[..., start:stop] = np.count_nonzero(diff >= observed[..., start:stop, None], axis=-1)
        start = stop
    return counts / flipped.shape[-1]


def test_compiled_counts_equal_a_numpy_oracle():
    from xcorrstat._kernels.mt.soft_pairwise import pair_pvalues_from_sums

    rng = np.random.default_rng(3)
    flipped = rng.integers(-3, 4, size=(6, 5, 40)).astype(float)  # integer sums: many exact ties
    sums = rng.integers(-3, 4, size=(6, 5)).astype(float)
    scale = np.abs(rng.normal(size=10))
    np.testing.assert_array_equal(_numpy_pvalues(flipped, sums, scale), pair_pvalues_from_sums(flipped, sums, scale))
    np.testing.assert_array_equal(_numpy_pvalues(flipped[0], sums[0], scale),
                                  pair_pvalues_from_sums(flipped[0], sums[0], scale))


@pytest.mark.parametrize("integer", [False, True])
def test_fused_swapped_spa_equals_the_swapped_sums_counted_by_numpy(integer):
    from xcorrstat._kernels.mt.soft_pairwise import masked_flips, pair_scale, swapped_spa

    rng = np.random.default_rng(8)
    shape = (5, 20)
    xa, xb, z = (rng.integers(0, 3, size=(3, *shape)).astype(float) if integer else rng.normal(size=(3, *shape)))
    signs = mtme_signs(4, 64, 20).astype(np.float64)
    masks = rng.random((9, *shape)) < 0.5
    p_gold = _numpy_pvalues(z @ signs.T, z.sum(axis=-1), pair_scale(z))
    fixed = (xa @ signs.T, xb @ signs.T, xa.sum(axis=-1), xb.sum(axis=-1))
    (ua, sa), (ub, sb) = masked_flips(xa, signs, masks), masked_flips(xb, signs, masks)
    fast = swapped_spa(fixed, (ua, ub, sa, sb), pair_scale(xa, xb), p_gold)
    delta = ub - ua  # the swapped metrics' flipped sums, built, then counted by the oracle
    scale = pair_scale(xa, xb)
    slow = (1.0 - np.abs(p_gold - _numpy_pvalues(fixed[0] + delta, fixed[2] + (sb - sa), scale)).mean(axis=-1),
            1.0 - np.abs(p_gold - _numpy_pvalues(fixed[1] - delta, fixed[3] - (sb - sa), scale)).mean(axis=-1))
    np.testing.assert_array_equal(fast[0], slow[0])
    np.testing.assert_array_equal(fast[1], slow[1])
