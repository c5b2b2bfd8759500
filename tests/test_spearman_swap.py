"""Input-, within-system- and global-level Spearman permutation draws: the compiled loop of
:mod:`xcorrstat._kernels.rank.spearman_swap` against scipy's spearmanr on the explicitly swapped
matrices (a plain Python loop over draws and groups), the materialised route, every average, groups
ranked by counting and by sorting, missing cells in the same and in different places, and the same
bits in any batch."""

from __future__ import annotations

import numpy as np
import pytest
from oracles import assert_values_same, scipy_statistic

from xcorrstat._kernels.rank.spearman_swap import prepare_spearman_swap
from xcorrstat._resampling import swapstats
from xcorrstat._resampling.draws import permutation_masks

AVERAGES = ("macro", "weighted", "pairs")


def scores(seed, n_sys, n_inp, *, apart):
    """Tied integer target and metrics with missing cells (in the same cells, or apart)."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 6, size=(n_sys, n_inp)).astype(float)
    y = x + rng.integers(-2, 3, size=(n_sys, n_inp))
    z = rng.integers(0, 4, size=(n_sys, n_inp)).astype(float)
    gone = rng.random((n_sys, n_inp)) < 0.15
    x[gone] = np.nan
    y[gone if not apart else rng.random((n_sys, n_inp)) < 0.15] = np.nan
    z[rng.random((n_sys, n_inp)) < 0.05] = np.nan
    return x, y, z


def oracle(x, y, z, masks, level, average, min_pairs=3):
    """The level's average of scipy's rho over every group of X' minus Y', draw by draw."""
    if level == "within_system":
        x, y, z, masks = x.T, y.T, z.T, np.swapaxes(masks, 1, 2)
    if level == "global":  # one group of every cell
        x, y, z, masks = x.reshape(-1, 1), y.reshape(-1, 1), z.reshape(-1, 1), masks.reshape(len(masks), -1, 1)
    out = []
    for m in masks:
        means = []
        for a in (np.where(m, y, x), np.where(m, x, y)):
            num = den = 0.0
            for g in range(a.shape[1]):
                ok = ~np.isnan(a[:, g]) & ~np.isnan(z[:, g])
                n = int(ok.sum())
                rho = scipy_statistic(a[ok, g], z[ok, g], "spearman", "b") if n >= min_pairs else np.nan
                if not np.isnan(rho):
                    w = {"macro": 1.0, "weighted": n, "pairs": n * (n - 1) / 2}[average]
                    num, den = num + w * rho, den + w
            means.append(num / den if den else np.nan)
        out.append(means[0] - means[1])
    return np.array(out)


@pytest.mark.parametrize("apart", [False, True])
@pytest.mark.parametrize("average", AVERAGES)
@pytest.mark.parametrize("level, n_sys, n_inp", [("input", 7, 9), ("input", 41, 4),
                                                 ("within_system", 5, 11), ("within_system", 4, 38), ("global", 6, 9)])
def test_draws_equal_scipy_on_the_swapped_matrices(level, n_sys, n_inp, average, apart):
    x, y, z = scores(n_sys + n_inp, n_sys, n_inp, apart=apart)
    masks = permutation_masks(3, np.arange(6), n_sys, n_inp, "cells")
    got = prepare_spearman_swap(x[None], y[None], z[None], level=level, min_pairs=3, average=average)(masks)
    assert_values_same(got[0], oracle(x, y, z, masks, level, average))


@pytest.mark.parametrize("level", ["input", "within_system", "global"])
def test_draw_deltas_takes_the_loop_and_equals_the_materialised_route(level):
    x, y, z = (np.stack(a) for a in zip(*(scores(s, 12, 30, apart=s == 1) for s in range(3))))
    masks = permutation_masks(5, np.arange(9), 12, 30, "cells")
    kw = dict(level=level, method="spearman", variant="b", min_pairs=3, skipna=True, average="macro", epsilon=0.0)
    got = swapstats.draw_deltas(x, y, z, kw)(masks)
    want = swapstats._materialised(swapstats.standardise(x), swapstats.standardise(y), z, kw, None)(masks)
    assert np.isfinite(got).all()
    assert_values_same(got, want)


def test_a_draw_has_the_same_bits_in_any_batch():
    x, y, z = scores(8, 15, 40, apart=True)
    masks = permutation_masks(2, np.arange(12), 15, 40, "cells")
    deltas = prepare_spearman_swap(x[None], y[None], z[None], level="input", min_pairs=3)
    whole = deltas(masks)
    for step in (1, 5):
        parts = np.concatenate([deltas(masks[k:k + step]) for k in range(0, 12, step)], axis=1)
        np.testing.assert_array_equal(parts, whole)


def test_groups_without_enough_items_are_left_out_and_no_group_gives_nan():
    x, y, z = scores(4, 6, 5, apart=False)
    z[:, 1:] = np.nan  # only input 0 can be defined
    masks = permutation_masks(1, np.arange(3), 6, 5, "cells")
    got = prepare_spearman_swap(x[None], y[None], z[None], level="input", min_pairs=3)(masks)
    assert_values_same(got[0], oracle(x, y, z, masks, "input", "macro"))
    z[:] = np.nan
    assert np.isnan(prepare_spearman_swap(x[None], y[None], z[None], level="input", min_pairs=3)(masks)).all()


def test_refuses_other_levels_averages_and_mask_shapes():
    x = np.zeros((1, 3, 4))
    with pytest.raises(ValueError, match="level"):
        prepare_spearman_swap(x, x, x, level="system", min_pairs=3)
    with pytest.raises(ValueError, match="average"):
        prepare_spearman_swap(x, x, x, level="input", min_pairs=3, average="median")
    with pytest.raises(ValueError, match="masks"):
        prepare_spearman_swap(x, x, x, level="input", min_pairs=3)(np.zeros((2, 4, 3), dtype=bool))
