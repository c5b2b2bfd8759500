"""System-level permutation draws of every pair at once, for every method and with missing cells.

:mod:`xcorrstat._kernels.linear.system_swap` takes the per-system means of each draw from one matrix
product per system (as the complete-data Pearson kernel does) and the rank statistic of those
S means per draw. Checked here:

1. the kernel against the explicitly swapped matrices: for every pair and draw, X and Y are
   z-scored here, swapped with ``np.where`` under the draw's mask, their system means taken
   over the cells valid in the swapped metric and the target (NumPy ``nanmean``), and
   correlated by ``scipy.stats`` (pearsonr, spearmanr, kendalltau b and c; tau-a by counting
   pairs) -- with missing cells in the metrics (each its own) and in the target;
2. ``compare`` at system level (Kendall, Spearman, Pearson with gaps) equals the two-metric
   ``permutation_test`` pair by pair, and its first draws equal the oracle on masks rebuilt
   from the same seed;
3. the draws do not depend on the batch, the budget or the backend, and ``compare`` takes the
   all-pairs route (no per-pair task) for every method.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
import xarray as xr
from conftest import make_scores
from oracles import assert_values_same, exact_integer_scores, integer_scores, scipy_statistic

import xcorrstat
from xcorrstat._kernels.linear.system_swap import prepare_system_swap, system_swap_deltas
from xcorrstat._resampling import pairs as pairs_module
from xcorrstat._resampling.draws import permutation_masks
from xcorrstat._resampling.pairs import pair_permutation_draws

SCHEMES = ["cells", "system", "input", "system-xor-input"]
PERMUTE = {"cells": ("system", "input"), "system": "system", "input": "input",
           "system-xor-input": "system-xor-input"}
METHODS = [("pearson", "b"), ("spearman", "b"), ("kendall", "b"), ("kendall", "c"), ("kendall", "a")]


# --------------------------------------------------------------------------- #
# The oracle: explicit swaps, NumPy means, scipy statistics
# --------------------------------------------------------------------------- #
def zscore(a):
    return (a - np.nanmean(a)) / np.nanstd(a)


def tau_a(a, b):
    """(C - D) / N by counting every pair."""
    n = len(a)
    s = sum(np.sign(a[i] - a[j]) * np.sign(b[i] - b[j]) for i, j in itertools.combinations(range(n), 2))
    return s / (n * (n - 1) / 2)


def statistic(a, b, method, variant, min_pairs=3):
    valid = ~np.isnan(a) & ~np.isnan(b)
    a, b = a[valid], b[valid]
    if a.size < max(min_pairs, 2) or np.all(a == a[0]) or np.all(b == b[0]):
        return np.nan
    return tau_a(a, b) if method == "kendall" and variant == "a" else scipy_statistic(a, b, method, variant)


def system_means(values, target):
    """Means per system over the cells where both are present (NaN for a system without one)."""
    valid = ~np.isnan(values) & ~np.isnan(target)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.nanmean(np.where(valid, values, np.nan), axis=1), np.nanmean(np.where(valid, target, np.nan), axis=1)


def oracle(x, z, masks, pairs, method, variant, min_pairs=3):
    """(P, B): r(X', Z) - r(Y', Z) of the explicitly swapped z-scored metrics."""
    zx = np.stack([zscore(a) for a in x])
    out = np.empty((len(pairs[0]), len(masks)))
    for p, (i, k) in enumerate(zip(*pairs)):
        for b, m in enumerate(masks):
            xs, ys = np.where(m, zx[k], zx[i]), np.where(m, zx[i], zx[k])
            out[p, b] = (statistic(*system_means(xs, z), method, variant, min_pairs)
                         - statistic(*system_means(ys, z), method, variant, min_pairs))
    return out


def scores_with_gaps(seed, n_metrics=5, n_systems=7, n_inputs=11, metric_gaps=0.1, target_gaps=0.2):
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(n_systems, n_inputs)) + rng.normal(size=(n_systems, 1))
    x = np.stack([base + rng.normal(size=base.shape) * s for s in np.linspace(0.3, 2.0, n_metrics)])
    x[rng.random(x.shape) < metric_gaps] = np.nan
    z = base + rng.normal(size=base.shape)
    z[rng.random(z.shape) < target_gaps] = np.nan
    return x, z


def all_pairs(m):
    pi, pk = np.triu_indices(m, 1)
    return np.concatenate([pi, pk]), np.concatenate([pk, pi])


# --------------------------------------------------------------------------- #
# 1. the kernel
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize(("method", "variant"), METHODS)
@pytest.mark.parametrize("scheme", SCHEMES)
def test_kernel_equals_explicit_swaps_with_missing_cells(method, variant, scheme):
    x, z = scores_with_gaps(1)
    masks = permutation_masks(3, np.arange(12), *z.shape, scheme)
    masks = np.concatenate([masks, np.zeros((1,) + z.shape, bool), np.ones((1,) + z.shape, bool)])
    pairs = all_pairs(x.shape[0])
    got = system_swap_deltas(x, z, masks, pairs, method=method, variant=variant, min_pairs=3)
    assert np.isfinite(got).mean() > 0.9
    assert_values_same(got, oracle(x, z, masks, pairs, method, variant), f"{method} {variant} {scheme}")


@pytest.mark.parametrize(("method", "variant"), METHODS)
def test_kernel_complete_data_and_ties(method, variant):
    """Scores 0..6 whose z-scores are exact halves (mean 3, std 2 over the present cells): the oracle's
    z-scored means tie exactly where the kernel's do, in many draws (PERM-SYSTEMS swaps whole rows)."""
    rng = np.random.default_rng(5)
    x = np.stack([exact_integer_scores(rng, (6, 4), 0.0) for _ in range(4)])
    z = integer_scores(rng, (6, 4), 0.1)
    masks = permutation_masks(4, np.arange(30), 6, 4, "system")
    pairs = all_pairs(4)
    got = system_swap_deltas(x, z, masks, pairs, method=method, variant=variant)
    assert_values_same(got, oracle(x, z, masks, pairs, method, variant))


def test_kernel_min_pairs_and_a_system_without_cells():
    x, z = scores_with_gaps(2, n_systems=5)
    z[3] = np.nan  # a system with no target cell: left out of every draw
    masks = permutation_masks(1, np.arange(10), *z.shape, "cells")
    pairs = all_pairs(x.shape[0])
    for min_pairs in (3, 4, 5):
        got = system_swap_deltas(x, z, masks, pairs, method="kendall", min_pairs=min_pairs)
        assert_values_same(got, oracle(x, z, masks, pairs, "kendall", "b", min_pairs), str(min_pairs))
    assert np.isnan(system_swap_deltas(x, z, masks, pairs, method="kendall", min_pairs=5)).all()


def test_kernel_skipna_false_marks_pairs_with_a_gap():
    x, z = scores_with_gaps(3, metric_gaps=0.0, target_gaps=0.0)
    x[2, 0, 0] = np.nan
    masks = permutation_masks(1, np.arange(6), *z.shape, "cells")
    pairs = all_pairs(x.shape[0])
    got = system_swap_deltas(x, z, masks, pairs, method="spearman", skipna=False)
    touches = (pairs[0] == 2) | (pairs[1] == 2)
    assert np.isnan(got[touches]).all() and np.isfinite(got[~touches]).all()


def test_one_draw_equals_its_row_of_a_batch_and_batches_do_not_matter():
    x, z = scores_with_gaps(4)
    masks = permutation_masks(7, np.arange(20), *z.shape, "cells")
    deltas = prepare_system_swap(x, z, all_pairs(x.shape[0]), method="kendall", variant="c")
    whole = deltas(masks)
    np.testing.assert_array_equal(deltas(masks[5:6])[:, 0], whole[:, 5])
    np.testing.assert_array_equal(np.concatenate([deltas(masks[:7]), deltas(masks[7:])], axis=1), whole)


# --------------------------------------------------------------------------- #
# 2. compare equals permutation_test, and the oracle on rebuilt masks
# --------------------------------------------------------------------------- #
def dataset_with_gaps(seed=6, n_metrics=4):
    x, z = scores_with_gaps(seed, n_metrics=n_metrics)
    dims = ("system", "input")
    data = {f"m{k}": (dims, x[k]) for k in range(n_metrics)}
    data["human"] = (dims, z)
    return xr.Dataset(data), x, z


@pytest.mark.parametrize(("method", "variant"), [("kendall", "b"), ("spearman", "b"), ("pearson", "b")])
@pytest.mark.parametrize("scheme", ["cells", "system"])
def test_compare_equals_permutation_test_and_the_oracle(method, variant, scheme):
    ds, x, z = dataset_with_gaps()
    opts = dict(target="human", level="system", method=method, variant=variant,
                test=xcorrstat.Permutation(PERMUTE[scheme], n_resamples=40, rng=11, keep_distribution=True))
    res = xcorrstat.compare(ds, common_cells=False, **opts)
    masks = permutation_masks(11, np.arange(40), *z.shape, scheme)
    names = [f"m{k}" for k in range(4)]
    for a, b in itertools.permutations(range(4), 2):
        cell = res.sel(metric=names[a], other_metric=names[b])
        one = xcorrstat.permutation_test(ds, x=names[a], y=names[b], **opts)
        assert_values_same(cell["distribution"].values, one["distribution"].values, f"{a} vs {b}")
        np.testing.assert_array_equal(cell["pvalue"].values, one["pvalue"].values)
        expected = oracle(x, z, masks[:8], ([a], [b]), method, variant)[0]
        assert_values_same(cell["distribution"].values[:8], expected, f"oracle {a} vs {b}")


# --------------------------------------------------------------------------- #
# 3. batch, budget, backend; the route
# --------------------------------------------------------------------------- #
KW = dict(level="system", method="kendall", variant="b", min_pairs=3, skipna=True)


def test_draws_do_not_depend_on_batch_budget_or_backend():
    ds, _, _ = dataset_with_gaps(7, n_metrics=5)
    x = xr.concat([ds[f"m{k}"] for k in range(5)], dim="metric")
    pairs = np.triu_indices(5, 1)
    opts = dict(pairs=pairs, seed=8, scheme="cells", kw=KW)
    ref = pair_permutation_draws(x, ds["human"], n_resamples=300, **opts).values
    assert np.isfinite(ref).all()
    for batch in (1, 7, 300):
        got = pair_permutation_draws(x, ds["human"], batch=batch, n_resamples=300, **opts).values
        np.testing.assert_array_equal(got, ref, err_msg=str(batch))
    with xcorrstat.set_options(memory_budget="1MiB"):
        np.testing.assert_array_equal(pair_permutation_draws(x, ds["human"], n_resamples=300, **opts).values, ref)
    lazy = pair_permutation_draws(x.chunk(), ds["human"].chunk(), n_resamples=300, **opts)
    assert lazy.chunks is not None
    np.testing.assert_array_equal(lazy.values, ref)
    np.testing.assert_array_equal(pair_permutation_draws(x, ds["human"], n_resamples=100, **opts).values,
                                  ref[:, :100])


@pytest.mark.parametrize("method", ["kendall", "spearman", "pearson"])
def test_compare_takes_the_all_pairs_route(method, monkeypatch):
    calls = {"pair": 0, "system": 0}
    for name in calls:
        original = getattr(pairs_module, f"_{name}_block")

        def spy(*args, _original=original, _name=name, **kwargs):
            calls[_name] += 1
            return _original(*args, **kwargs)

        monkeypatch.setattr(pairs_module, f"_{name}_block", spy)
    ds = make_scores(n_metrics=6, n_systems=8, n_inputs=30, seed=9, nan_frac=0.05)
    xcorrstat.compare(ds, target="human", level="system", method=method,
                      test=xcorrstat.Permutation(n_resamples=50, rng=1))
    assert calls == {"pair": 0, "system": 1}
