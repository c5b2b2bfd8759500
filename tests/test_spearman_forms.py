"""Input-level Spearman permutation draws by tau-a's pair forms (:mod:`xcorrstat._kernels.rank.spearman_forms`):
against scipy's spearmanr on the explicitly swapped matrices, with target ties, missing cells and a constant
target on an input; which rows (pairs of metrics) take them; and the same bits as the walk of
:mod:`xcorrstat._kernels.rank.spearman_swap`, whatever rows are computed beside them."""

from __future__ import annotations

import numpy as np
import pytest
from oracles import assert_values_same
from test_spearman_swap import oracle

from xcorrstat._kernels.rank import spearman_forms
from xcorrstat._kernels.rank.spearman_forms import input_spearman_swap_means, spearman_form_rows
from xcorrstat._kernels.rank.spearman_swap import prepare_spearman_swap
from xcorrstat._resampling import swapstats
from xcorrstat._resampling.draws import permutation_masks


def scores(seed, n_sys, n_inp, *, gaps):
    """Continuous metrics (no ties between systems), a tied integer target with a constant input."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n_sys, n_inp))
    y = x + rng.normal(size=(n_sys, n_inp))
    y[0] = x[0]  # X and Y tie within a system: allowed
    z = rng.integers(0, 4, size=(n_sys, n_inp)).astype(float)
    z[:, 1] = 2.0  # a constant target: undefined on that input
    if gaps:
        gone = rng.random((n_sys, n_inp)) < 0.2
        x[gone] = y[gone] = np.nan
        z[rng.random((n_sys, n_inp)) < 0.1] = np.nan
        x[2:, 3] = y[2:, 3] = np.nan  # an input with too few systems
    return x, y, z


@pytest.mark.parametrize("gaps", [False, True])
@pytest.mark.parametrize(("n_sys", "n_inp"), [(3, 8), (9, 12), (spearman_forms.FORM_SYSTEMS, 5)])
def test_draws_equal_scipy_on_the_swapped_matrices(n_sys, n_inp, gaps):
    x, y, z = scores(n_sys, n_sys, n_inp, gaps=gaps)
    masks = permutation_masks(4, np.arange(7), n_sys, n_inp, "cells")
    assert spearman_form_rows(x[None], y[None], z[None]).all()
    mx, my = input_spearman_swap_means(x[None], y[None], z[None], min_pairs=3)(masks)
    assert_values_same(mx[0] - my[0], oracle(x, y, z, masks, "input", "macro"))


def test_rows_that_take_the_forms():
    x, y, z = scores(1, 6, 5, gaps=False)
    tied = y.copy()
    tied[3, 2] = x[4, 2]  # two systems' cells tie: the walk
    apart = y.copy()
    apart[0, 0] = np.nan  # missing in X but not in Y
    inf = x.copy()
    inf[1, 1] = np.inf
    rows = spearman_form_rows(np.stack([x, x, x, inf]), np.stack([y, tied, apart, y]), z)
    assert rows.tolist() == [True, False, False, False]
    many = spearman_forms.FORM_SYSTEMS + 1
    xs, ys, zs = scores(2, many, 3, gaps=False)
    assert not spearman_form_rows(xs[None], ys[None], zs[None]).any()


def test_draw_deltas_mixes_the_routes_row_by_row_with_the_walks_bits():
    x, y, z = (np.stack(a) for a in zip(*(scores(s, 10, 20, gaps=s == 1) for s in range(3))))
    y[2, 4, 6] = x[2, 5, 6]  # row 2 ties between two systems: the walk
    assert spearman_form_rows(x, y, z).tolist() == [True, True, False]
    masks = permutation_masks(6, np.arange(11), 10, 20, "cells")
    kw = dict(level="input", method="spearman", variant="b", min_pairs=3, skipna=True, average="macro", epsilon=0.0)
    both = swapstats.draw_deltas(x, y, z, kw)(masks)
    zx, zy = swapstats.standardise(x), swapstats.standardise(y)
    walk = prepare_spearman_swap(zx, zy, z, level="input", min_pairs=3)(masks)
    np.testing.assert_array_equal(both, walk)  # the forms' values are the walk's, bit for bit
    for r in range(3):  # and a row's draws do not depend on the rows beside it
        alone = swapstats.draw_deltas(x[r:r + 1], y[r:r + 1], z[r:r + 1], kw)(masks)
        np.testing.assert_array_equal(alone, both[r:r + 1])
