"""System-level permutation draws of every pair: the compiled loops and the NumPy path of
:mod:`xcorrstat._kernels.swap_system` (means and statistic per block of pairs,
:mod:`xcorrstat._kernels.swap_system_stats`).

Checked against explicitly swapped matrices: X and Y z-scored, swapped with ``np.where`` under
each mask, system means over the cells valid in the swapped metric and the target, and
``scipy.stats`` (pearsonr, kendalltau b and c) on those means -- with metrics missing in the same
cells and in different cells, a constant metric, gaps in the target and scores of extreme
magnitude. Both paths give the same floats, whatever the blocks of pairs and the batches.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from oracles import assert_values_same, scipy_statistic

from xcorrstat import set_options
from xcorrstat._kernels import swap_system as swap_system
from xcorrstat._kernels._compiled import compiled_module
from xcorrstat._kernels.swap_system import prepare_system_swap
from xcorrstat._resampling.draws import permutation_masks

METHODS = [("pearson", "b"), ("kendall", "b"), ("kendall", "c"), ("kendall", "a"), ("kendall", "23"),
           ("spearman", "b")]
HAS_NUMBA = compiled_module("swap_system_jit") is not None


@pytest.fixture(params=["compiled", "numpy"])
def path(request):
    """Both the compiled loops (when numba is installed) and the NumPy path."""
    if request.param == "compiled" and not HAS_NUMBA:
        pytest.skip("numba is not installed")
    with set_options(compiled=request.param == "compiled"):
        yield request.param


def explicit(x, z, masks, pairs, method, variant, min_pairs=3):
    """(P, B): r(X', Z) - r(Y', Z) of the explicitly swapped, z-scored metrics; NaN for a pair with a
    constant metric (it has no z-scores)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        zx = np.stack([(a - np.nanmean(a)) / np.nanstd(a) for a in x])
    out = np.empty((len(pairs[0]), len(masks)))
    constant = np.isnan(zx).all(axis=(1, 2))
    for p, (i, k) in enumerate(zip(*pairs)):
        out[p] = np.nan
        if constant[i] or constant[k]:
            continue
        for b, m in enumerate(masks):
            out[p, b] = (_statistic(np.where(m, zx[k], zx[i]), z, method, variant, min_pairs)
                         - _statistic(np.where(m, zx[i], zx[k]), z, method, variant, min_pairs))
    return out


def _statistic(values, target, method, variant, min_pairs):
    valid = ~np.isnan(values) & ~np.isnan(target)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = np.nanmean(np.where(valid, values, np.nan), axis=1)
        b = np.nanmean(np.where(valid, target, np.nan), axis=1)
    keep = ~np.isnan(a) & ~np.isnan(b)
    a, b = a[keep], b[keep]
    if a.size < max(min_pairs, 2) or np.all(a == a[0]) or np.all(b == b[0]):
        return np.nan
    return scipy_statistic(a, b, method, variant)


def scores(seed, case, n_metrics=5, n_systems=7, n_inputs=13):
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(n_systems, n_inputs)) + rng.normal(size=(n_systems, 1))
    x = np.stack([base + rng.normal(size=base.shape) * s for s in np.linspace(0.3, 2.0, n_metrics)])
    z = base + rng.normal(size=base.shape)
    z[rng.random(z.shape) < 0.25] = np.nan
    if case == "same-cells":  # every metric misses the same cells
        x[:, rng.random(base.shape) < 0.15] = np.nan
    elif case == "different-cells":  # each metric its own cells
        x[rng.random(x.shape) < 0.15] = np.nan
    elif case == "constant":  # a constant metric (no z-scores) beside metrics with their own gaps
        x[rng.random(x.shape) < 0.1] = np.nan
        x[2] = 0.5
    elif case == "extreme":  # the target's sums of squares underflow: flagged rows, recomputed
        x[rng.random(x.shape) < 0.1] = np.nan
        z = z * 1e-200
    return x, z


def pairs_of(m):
    pi, pk = np.triu_indices(m, 1)
    return np.concatenate([pi, pk]), np.concatenate([pk, pi])


@pytest.mark.parametrize(("method", "variant"), [("pearson", "b"), ("kendall", "b"), ("kendall", "c")])
@pytest.mark.parametrize("case", ["same-cells", "different-cells", "constant", "extreme"])
def test_draws_equal_explicit_swaps(path, method, variant, case):
    x, z = scores(3, case)
    masks = permutation_masks(5, np.arange(10), *z.shape, "cells")
    masks = np.concatenate([masks, np.zeros((1,) + z.shape, bool), np.ones((1,) + z.shape, bool)])
    pairs = pairs_of(x.shape[0])
    got = prepare_system_swap(x, z, pairs, method=method, variant=variant)(masks)
    expected = explicit(x, z, masks, pairs, method, variant)
    assert np.isfinite(expected).any()
    assert_values_same(got, expected, f"{path} {method} {variant} {case}")


@pytest.mark.skipif(not HAS_NUMBA, reason="numba is not installed")
@pytest.mark.parametrize(("method", "variant"), METHODS)
@pytest.mark.parametrize("case", ["same-cells", "different-cells", "constant", "extreme"])
def test_compiled_and_numpy_paths_give_the_same_floats(method, variant, case):
    x, z = scores(4, case, n_metrics=6, n_systems=9, n_inputs=30)
    x = np.round(x * 2) / 2  # tied means in some draws
    masks = permutation_masks(2, np.arange(40), *z.shape, "cells")
    pairs = pairs_of(x.shape[0])
    compiled = prepare_system_swap(x, z, pairs, method=method, variant=variant)(masks)
    with set_options(compiled=False):
        plain = prepare_system_swap(x, z, pairs, method=method, variant=variant)(masks)
    np.testing.assert_array_equal(compiled, plain)


@pytest.mark.parametrize(("method", "variant"), [("pearson", "b"), ("kendall", "c")])
def test_blocks_of_pairs_and_batches_give_the_same_floats(path, method, variant, monkeypatch):
    x, z = scores(6, "different-cells", n_metrics=6)
    masks = permutation_masks(9, np.arange(24), *z.shape, "cells")
    pairs = pairs_of(x.shape[0])
    deltas = prepare_system_swap(x, z, pairs, method=method, variant=variant)
    whole = deltas(masks)
    np.testing.assert_array_equal(np.concatenate([deltas(masks[:5]), deltas(masks[5:])], axis=1), whole)
    np.testing.assert_array_equal(deltas(masks[7:8])[:, 0], whole[:, 7])
    monkeypatch.setattr(swap_system, "SYSTEM_BLOCK_ELEMS", 1)  # one pair a block
    np.testing.assert_array_equal(prepare_system_swap(x, z, pairs, method=method, variant=variant)(masks), whole)
