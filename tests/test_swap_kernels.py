"""The mask-linear / mask-bilinear permutation kernels (:mod:`xcorrstat._kernels.swap`).

Each kernel's draws are compared with the oracle on the explicitly swapped
matrices (``X' = where(m, Y, X)`` of the z-scored metrics, statistics from plain
loops and ``scipy.stats`` in ``tests/oracles.py``), with the same masks, to 1e-12.
The data are built so every branch of the kernels is reached: missing cells shared
by X and Y (the case the kernels cover) plus missing target cells; inputs where a
swapped metric becomes constant in some draws; inputs with too few pairs; one pair
of metrics (few quadratic forms) and many pairs at once (the outer-product GEMM).
"""

from __future__ import annotations

import numpy as np
import pytest
from oracles import assert_values_same
from test_permutation import PERMUTES, exact_integer_scores, oracle_distribution, zscore

from xcorrstat._kernels.swap import swap_supported, swapped_deltas
from xcorrstat._resampling.draws import permutation_masks

FAST = [("input", "kendall"), ("input", "pearson"), ("global", "pearson"), ("system", "pearson")]
N_DRAWS = 40


def shared_missing(seed, shape, nan_frac):
    """Exact-z-score X and Y missing in the same cells, and an integer target with its own gaps."""
    rng = np.random.default_rng(seed)
    X = exact_integer_scores(rng, shape, nan_frac)
    Y = exact_integer_scores(rng, shape, 0.0)
    Y[np.isnan(X)] = np.nan
    Y = np.where(np.isnan(Y), np.nan, Y)
    Z = rng.integers(0, 4, size=shape).astype(float)
    Z[rng.random(shape) < nan_frac / 2] = np.nan
    return X, Y, Z


def different_missing(seed, shape, nan_frac):
    """Exact-z-score X and Y each missing in cells of its own (some shared), and a target with gaps."""
    rng = np.random.default_rng(seed)
    X = exact_integer_scores(rng, shape, nan_frac)
    Y = exact_integer_scores(rng, shape, nan_frac)
    Y[rng.random(shape) < nan_frac / 2] = np.nan
    Z = rng.integers(0, 4, size=shape).astype(float)
    Z[rng.random(shape) < nan_frac / 2] = np.nan
    assert not np.array_equal(np.isnan(X), np.isnan(Y))
    return X, Y, Z


GAP_FAST = [("input", "kendall"), ("input", "pearson"), ("global", "pearson")]


@pytest.mark.parametrize("permute", list(PERMUTES))
@pytest.mark.parametrize("nan_frac", [0.1, 0.3])
@pytest.mark.parametrize("level,method", GAP_FAST, ids=[f"{lvl}-{m}" for lvl, m in GAP_FAST])
def test_kernel_draws_equal_swapped_oracle_with_different_missing_cells(level, method, nan_frac, permute):
    # the valid cells of every correlation change with the draw (linear.gaps)
    X, Y, Z = different_missing(31 + GAP_FAST.index((level, method)), (7, 9), nan_frac)
    masks = permutation_masks(6, range(N_DRAWS), 7, 9, PERMUTES[permute][1])
    assert swap_supported(zscore(X), zscore(Y), level=level, method=method, variant="b")
    expected = oracle_distribution(X, Y, Z, masks, level, method, "b")
    assert_values_same(kernel(X, Y, Z, masks, level, method), expected, f"{level} {method}")
    with_min = oracle_distribution(X, Y, Z, masks, level, method, "b", min_pairs=5)
    assert_values_same(kernel(X, Y, Z, masks, level, method, min_pairs=5), with_min, "min_pairs=5")


@pytest.mark.parametrize("level,method", GAP_FAST, ids=[f"{lvl}-{m}" for lvl, m in GAP_FAST])
def test_different_missing_cells_with_constant_swapped_metrics(level, method):
    # X in {0, 1}, Y = 1 - X, each with cells of its own missing: constant X' in some draws and inputs
    X, Y, Z = flip_pair(3, (4, 10))
    X[0, 1], Y[2, 1], Y[3, 4], X[1, 6] = np.nan, np.nan, np.nan, np.nan
    masks = permutation_masks(8, range(100), 4, 10, "cells")
    expected = oracle_distribution(X, Y, Z, masks, level, method, "b")
    assert_values_same(kernel(X, Y, Z, masks, level, method, min_pairs=2),
                       oracle_distribution(X, Y, Z, masks, level, method, "b", min_pairs=2))
    assert_values_same(kernel(X, Y, Z, masks, level, method), expected)


def test_different_missing_cells_real_valued_and_many_pairs():
    # 16 systems x 30 inputs, 9 pairs at once, real-valued scores, 5% of each metric missing
    rng = np.random.default_rng(9)
    pairs = []
    for _ in range(9):
        X, Y, Z = rng.normal(size=(3, 16, 30))
        X[rng.random(X.shape) < 0.05] = np.nan
        Y[rng.random(Y.shape) < 0.05] = np.nan
        Z[rng.random(Z.shape) < 0.2] = np.nan
        pairs.append((X, Y, Z))
    masks = permutation_masks(2, range(12), 16, 30, "cells")
    zx = np.stack([zscore(X) for X, _, _ in pairs])
    zy = np.stack([zscore(Y) for _, Y, _ in pairs])
    z = np.stack([Z for _, _, Z in pairs])
    for level, method in GAP_FAST:
        out = swapped_deltas(zx, zy, z, masks, level=level, method=method, min_pairs=3)
        for k, (X, Y, Z) in enumerate(pairs):
            assert_values_same(out[k], oracle_distribution(X, Y, Z, masks, level, method, "b"), f"{level} pair {k}")


def flip_pair(seed, shape):
    """X in {0, 1} with as many 0s as 1s and Y = 1 - X: same z-scores, and in a draw that picks
    the same value in every cell of an input the swapped metric is constant there."""
    rng = np.random.default_rng(seed)
    flat = np.repeat([0.0, 1.0], shape[0] * shape[1] // 2)
    X = rng.permutation(flat).reshape(shape)
    Z = rng.integers(0, 3, size=shape).astype(float)
    Z[:, 0] = 1.0  # a constant target on one input
    return X, 1.0 - X, Z


def kernel(X, Y, Z, masks, level, method, min_pairs=3):
    zx, zy = zscore(X)[None], zscore(Y)[None]
    return swapped_deltas(zx, zy, Z[None], masks, level=level, method=method, min_pairs=min_pairs)[0]


@pytest.mark.parametrize("permute", list(PERMUTES))
@pytest.mark.parametrize("nan_frac", [0.0, 0.15], ids=["complete", "shared-nan"])
@pytest.mark.parametrize("level,method", FAST, ids=[f"{lvl}-{m}" for lvl, m in FAST])
def test_kernel_draws_equal_swapped_oracle(level, method, nan_frac, permute):
    X, Y, Z = shared_missing(11 + FAST.index((level, method)), (6, 8), nan_frac)
    masks = permutation_masks(5, range(N_DRAWS), 6, 8, PERMUTES[permute][1])
    assert swap_supported(zscore(X), zscore(Y), level=level, method=method, variant="b")
    expected = oracle_distribution(X, Y, Z, masks, level, method, "b")
    assert_values_same(kernel(X, Y, Z, masks, level, method), expected, f"{level} {method}")


@pytest.mark.parametrize("level,method", FAST, ids=[f"{lvl}-{m}" for lvl, m in FAST])
def test_swapped_metric_constant_in_some_draws(level, method):
    X, Y, Z = flip_pair(3, (4, 10))
    masks = permutation_masks(8, range(100), 4, 10, "cells")
    xs = np.where(masks, zscore(Y), zscore(X))
    constant_inputs = (xs.min(axis=1) == xs.max(axis=1)).sum()
    assert constant_inputs > 10  # the case is really exercised
    expected = oracle_distribution(X, Y, Z, masks, level, method, "b")
    assert_values_same(kernel(X, Y, Z, masks, level, method), expected)


@pytest.mark.parametrize("level,method", FAST, ids=[f"{lvl}-{m}" for lvl, m in FAST])
def test_min_pairs_and_sparse_inputs(level, method):
    X, Y, Z = shared_missing(21, (5, 9), 0.35)
    masks = permutation_masks(2, range(N_DRAWS), 5, 9, "cells")
    expected = oracle_distribution(X, Y, Z, masks, level, method, "b", min_pairs=4)
    assert_values_same(kernel(X, Y, Z, masks, level, method, min_pairs=4), expected)


@pytest.mark.parametrize("level,method", FAST, ids=[f"{lvl}-{m}" for lvl, m in FAST])
def test_many_pairs_at_once_equal_each_pair(level, method):
    # 9 pairs of metrics on 4 systems: the quadratic forms go through the outer-product GEMM
    pairs = [shared_missing(40 + k, (4, 7), 0.1) for k in range(9)]
    masks = permutation_masks(3, range(15), 4, 7, "cells")
    zx = np.stack([zscore(X) for X, _, _ in pairs])
    zy = np.stack([zscore(Y) for _, Y, _ in pairs])
    z = np.stack([Z for _, _, Z in pairs])
    out = swapped_deltas(zx, zy, z, masks, level=level, method=method, min_pairs=3)
    assert out.shape == (9, 15)
    for k, (X, Y, Z) in enumerate(pairs):
        assert_values_same(out[k], oracle_distribution(X, Y, Z, masks, level, method, "b"), f"pair {k}")


def test_larger_matrices_equal_oracle():
    # 16 systems x 30 inputs, real-valued scores: the shape of a summarization data set
    rng = np.random.default_rng(4)
    X, Y, Z = rng.normal(size=(3, 16, 30))
    masks = permutation_masks(1, range(20), 16, 30, "cells")
    for level, method in FAST:
        assert_values_same(kernel(X, Y, Z, masks, level, method), oracle_distribution(X, Y, Z, masks, level, method, "b"))


@pytest.mark.parametrize(
    "level,method,variant,same_missing,supported",
    [
        ("input", "kendall", "b", True, True),
        ("input", "kendall", "c", True, False),
        ("input", "spearman", "b", True, False),
        ("global", "kendall", "b", True, False),
        ("system", "kendall", "b", True, False),
        ("system", "pearson", "b", True, True),
        ("global", "pearson", "b", True, True),
        ("input", "pearson", "b", False, True),
        ("global", "pearson", "b", False, True),
        ("input", "kendall", "b", False, True),
        ("system", "pearson", "b", False, False),
    ],
)
def test_which_cases_the_kernels_cover(level, method, variant, same_missing, supported):
    zx = np.array([[0.0, 1.0], [np.nan, 2.0]])
    zy = zx.copy() if same_missing else np.array([[0.0, np.nan], [1.0, 2.0]])
    assert swap_supported(zx, zy, level=level, method=method, variant=variant) is supported
