"""Input-level tau-c permutation draws of metrics that tie between systems (:mod:`xcorrstat._kernels.rank.input_tau_c`):
tau-a's pair forms where an input's divisor is fixed, one sorted table for each other input. The bound on X''s
distinct values against every mask by brute force; the draws bit for bit those of one sorted table per input and
of the explicitly swapped matrices, whatever the rows beside a row and however the draws are batched."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from test_within_system_swap import swapped_oracle

from xcorrstat._kernels.rank.input_tau_c import fewest_distinct, input_tau_c_split, split_rows
from xcorrstat._kernels.rank.untied_forms import FORM_SYSTEMS, untied_rows
from xcorrstat._resampling import swapstats
from xcorrstat._resampling.draws import permutation_masks

KW = dict(level="input", method="kendall", variant="c", min_pairs=3, skipna=True, average="macro")


def tied_scores(seed, rows, n_sys, n_inp, *, levels=4, gaps=0.15):
    """Metrics on a few levels (ties within and between systems), an integer target, cells missing in all."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, levels, (rows, n_sys, n_inp)).astype(float)
    y = rng.integers(0, levels + 2, (rows, n_sys, n_inp)).astype(float) / 2.0
    z = np.broadcast_to(rng.integers(0, 3, (1, n_sys, n_inp)).astype(float), x.shape).copy()
    gone = rng.random(x.shape[1:]) < gaps
    x[:, gone], y[:, gone], z[:, gone] = np.nan, np.nan, np.nan
    z[:, :, 0] = 1.0  # a constant target: undefined on that input
    return x, y, z


def test_fewest_distinct_is_a_lower_bound_of_every_mask():
    rng = np.random.default_rng(3)
    tight = []
    for _ in range(300):
        s, levels = int(rng.integers(1, 8)), int(rng.integers(1, 6))
        x, y = (rng.integers(0, levels, (1, s, 1)).astype(float) for _ in range(2))
        valid = rng.random((1, s, 1)) < 0.85
        cells = np.flatnonzero(valid[0, :, 0])
        fewest = min((np.unique(np.where(np.array(m, bool), y[0, cells, 0], x[0, cells, 0])).size
                      for m in itertools.product([0, 1], repeat=cells.size)), default=0)
        bound = fewest_distinct(x, y, valid)[0, 0]
        assert bound <= fewest
        tight.append(bound == fewest)
    assert np.mean(tight) > 0.8  # and mostly the fewest itself


def test_rows_that_take_the_split():
    x, y, z = tied_scores(1, 1, 6, 5)
    s, i = np.argwhere(~np.isnan(x[0] + z[0]))[0]
    apart = y.copy()
    apart[0, s, i] = np.nan  # missing in one metric only
    inf = x.copy()
    inf[0, s, i] = np.inf
    rows = split_rows(np.concatenate([x, x, inf]), np.concatenate([y, apart, y]), np.concatenate([z, z, z]))
    assert rows.tolist() == [True, False, False]
    many = FORM_SYSTEMS + 1
    xs, ys, zs = tied_scores(2, 1, many, 2)
    assert not split_rows(xs, ys, zs).any()


@pytest.mark.parametrize("seed", range(4))
def test_draws_equal_the_tables_and_the_swapped_matrices_bit_for_bit(seed):
    x, y, z = tied_scores(seed, 3, 8, 40)
    zx, zy = swapstats.standardise(x), swapstats.standardise(y)
    valid = ~np.isnan(zx) & ~np.isnan(z)
    target = np.array([[np.unique(z[p, valid[p, :, i], i]).size for i in range(40)] for p in range(3)])
    fixed = fewest_distinct(zx, zy, valid) >= target
    assert 0.1 < fixed.mean() < 0.9  # both routes run
    masks = permutation_masks(8, np.arange(12), 8, 40, "cells")
    got = input_tau_c_split(zx, zy, z, min_pairs=3)(masks)
    tables = swapstats._within_deltas(zx, zy, z, KW, None, transposed=True)(masks)
    np.testing.assert_array_equal(got, tables)
    np.testing.assert_array_equal(got, swapped_oracle(x, y, z, masks, KW))


def test_draw_deltas_routes_rows_alone_and_in_any_batch():
    x, y, z = tied_scores(7, 3, 8, 30)
    rng = np.random.default_rng(0)
    for a in (x, y):  # row 1 without ties between systems: tau-a's forms
        a[1] = np.where(np.isnan(a[1]), np.nan, rng.normal(size=a[1].shape))
    s, i = np.argwhere(~np.isnan(x[2] + z[2]))[0]
    y[2, s, i] = np.nan  # X and Y miss different cells: one sorted table per input
    zx, zy = swapstats.standardise(x), swapstats.standardise(y)
    assert untied_rows(zx, zy, z).tolist() == [False, True, False]
    assert split_rows(zx, zy, z).tolist() == [True, True, False]
    masks = permutation_masks(6, np.arange(9), 8, 30, "cells")
    both = swapstats.draw_deltas(x, y, z, KW)(masks)
    np.testing.assert_array_equal(both[[0, 2]], swapped_oracle(x, y, z, masks, KW)[[0, 2]])
    for r in range(3):  # a row's draws do not depend on the rows beside it, nor on the batch
        alone = swapstats.draw_deltas(x[r:r + 1], y[r:r + 1], z[r:r + 1], KW)
        np.testing.assert_array_equal(alone(masks), both[r:r + 1])
        np.testing.assert_array_equal(np.concatenate([alone(masks[:4]), alone(masks[4:])], axis=1), both[r:r + 1])
