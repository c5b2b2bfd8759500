"""Input-level Spearman and tau-c permutation draws by tau-a's pair forms (:mod:`xcorrstat._kernels.rank.untied_forms`):
against scipy's spearmanr on the explicitly swapped matrices, with target ties, missing cells and a constant
target on an input; which rows (pairs of metrics) take them; and the same bits as the walk of
:mod:`xcorrstat._kernels.rank.spearman_swap`, whatever rows are computed beside them."""

from __future__ import annotations

import numpy as np
import pytest
from oracles import assert_values_same
from scipy import stats
from test_spearman_swap import oracle
from test_within_system_swap import swapped_oracle

from xcorrstat._kernels.rank import untied_forms
from xcorrstat._kernels.rank.untied_forms import input_untied_swap_means, untied_rows
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
@pytest.mark.parametrize(("n_sys", "n_inp"), [(3, 8), (9, 12), (untied_forms.FORM_SYSTEMS, 5)])
def test_draws_equal_scipy_on_the_swapped_matrices(n_sys, n_inp, gaps):
    x, y, z = scores(n_sys, n_sys, n_inp, gaps=gaps)
    masks = permutation_masks(4, np.arange(7), n_sys, n_inp, "cells")
    assert untied_rows(x[None], y[None], z[None]).all()
    mx, my = input_untied_swap_means(x[None], y[None], z[None], method="spearman", min_pairs=3)(masks)
    assert_values_same(mx[0] - my[0], oracle(x, y, z, masks, "input", "macro"))


def test_rows_that_take_the_forms():
    x, y, z = scores(1, 6, 5, gaps=False)
    tied = y.copy()
    tied[3, 2] = x[4, 2]  # two systems' cells tie: the walk
    apart = y.copy()
    apart[0, 0] = np.nan  # missing in X but not in Y
    inf = x.copy()
    inf[1, 1] = np.inf
    rows = untied_rows(np.stack([x, x, x, inf]), np.stack([y, tied, apart, y]), z)
    assert rows.tolist() == [True, False, False, False]
    many = untied_forms.FORM_SYSTEMS + 1
    xs, ys, zs = scores(2, many, 3, gaps=False)
    assert not untied_rows(xs[None], ys[None], zs[None]).any()


def test_draw_deltas_mixes_the_routes_row_by_row_with_the_walks_bits():
    x, y, z = (np.stack(a) for a in zip(*(scores(s, 10, 20, gaps=s == 1) for s in range(3))))
    x[2, 4, 6] = x[2, 5, 6]  # row 2 ties between two systems (in X: standardising keeps it): the walk
    assert untied_rows(x, y, z).tolist() == [True, True, False]
    masks = permutation_masks(6, np.arange(11), 10, 20, "cells")
    kw = dict(level="input", method="spearman", variant="b", min_pairs=3, skipna=True, average="macro", epsilon=0.0)
    both = swapstats.draw_deltas(x, y, z, kw)(masks)
    zx, zy = swapstats.standardise(x), swapstats.standardise(y)
    walk = prepare_spearman_swap(zx, zy, z, level="input", min_pairs=3)(masks)
    np.testing.assert_array_equal(both, walk)  # the forms' values are the walk's, bit for bit
    for r in range(3):  # and a row's draws do not depend on the rows beside it
        alone = swapstats.draw_deltas(x[r:r + 1], y[r:r + 1], z[r:r + 1], kw)(masks)
        np.testing.assert_array_equal(alone, both[r:r + 1])


@pytest.mark.parametrize("gaps", [False, True])
def test_tau_c_draws_by_forms_and_by_tables_equal_the_swapped_matrices(gaps):
    x, y, z = (np.stack(a) for a in zip(*(scores(s, 9, 14, gaps=gaps) for s in range(3))))
    x[2, 4, 6] = x[2, 5, 6]  # row 2 ties between two systems (in X: standardising keeps it): sorted tables
    assert untied_rows(x, y, z).tolist() == [True, True, False]
    masks = permutation_masks(8, np.arange(10), 9, 14, "cells")
    kw = dict(level="input", method="kendall", variant="c", min_pairs=3, skipna=True, average="macro")
    got = swapstats.draw_deltas(x, y, z, kw)(masks)
    want = swapped_oracle(x, y, z, masks, kw)
    assert_values_same(got[:2], want[:2])  # the forms add the inputs' values in order: the mean to rounding
    np.testing.assert_array_equal(got[2], want[2])  # the tables' exact counts and the level's mean: bit for bit
    for r in range(3):  # a row's draws do not depend on the rows beside it
        alone = swapstats.draw_deltas(x[r:r + 1], y[r:r + 1], z[r:r + 1], kw)(masks)
        np.testing.assert_array_equal(alone, got[r:r + 1])


def test_tau_c_by_forms_against_scipy():
    rng = np.random.default_rng(12)
    x, y = rng.normal(size=(1, 12, 6)), rng.normal(size=(1, 12, 6))
    z = rng.integers(0, 3, (1, 12, 6)).astype(float)  # m = 3 distinct target values < n
    masks = permutation_masks(3, np.arange(5), 12, 6, "cells")
    mx, _ = input_untied_swap_means(x, y, z, method="kendall", min_pairs=3)(masks)
    for b, m in enumerate(masks):
        xp = np.where(m, y, x)[0]
        want = np.mean([stats.kendalltau(xp[:, i], z[0, :, i], variant="c").statistic for i in range(6)])
        np.testing.assert_allclose(mx[0, b], want, rtol=0, atol=1e-12)
