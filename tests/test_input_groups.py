"""Input-level permutation draws through the within-system kernels of the transposed matrices.

Where the input level's pair forms do not reach (tau-c, every average but ``"macro"``) or cost more
than one sorted table per input (many systems: ``GROUP_SYSTEMS``), each input is one group whose items
are the systems (:func:`xcorrstat._kernels.swap.input_by_groups`). Every draw must equal the statistic of
the explicitly swapped matrices (``level_correlation`` on ``np.where(mask, Y, X)``), Kendall's exact
counts bit for bit and Pearson to 1e-12, whatever the missing cells; tau-c also against scipy.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats
from test_within_system_swap import AVERAGES, GAPS, check, scores, swapped_oracle

from xcorrstat._kernels import swap
from xcorrstat._resampling import swapstats
from xcorrstat._resampling.draws import permutation_masks
from xcorrstat._resampling.swapstats import draw_deltas, standardise

LEVEL = "input"
CASES = [("pearson", "b")] + [("kendall", v) for v in ("b", "a", "c", "23", "acc23")]


@pytest.mark.parametrize("gaps", GAPS)
@pytest.mark.parametrize("average", AVERAGES)
@pytest.mark.parametrize(("method", "variant"), CASES, ids=[f"{m}-{v}" for m, v in CASES])
def test_draws_by_groups_equal_the_explicitly_swapped_matrices(method, variant, average, gaps, monkeypatch):
    x, y, z = (np.swapaxes(a, -1, -2).copy() for a in scores(3, gaps, s=6, i=30))  # 30 systems x 6 inputs
    masks = permutation_masks(4, np.arange(9), x.shape[1], x.shape[2], "cells")
    kw = dict(level=LEVEL, method=method, variant=variant, min_pairs=3, skipna=True, average=average)
    monkeypatch.setattr(swap, "GROUP_SYSTEMS", 2)  # every Kendall case by groups
    assert swap.input_by_groups(x.shape, method=method, variant=variant, average=average) == (
        method == "kendall" or average != "macro")
    oracle = swapped_oracle(x, y, z, masks, kw)
    monkeypatch.setattr(swapstats, "level_correlation", None)  # never the swapped matrices
    fast = draw_deltas(x, y, z, kw)(masks)
    check(fast, oracle, method)
    assert np.isfinite(fast).any()


def test_many_systems_take_the_groups_at_the_default_threshold():
    assert not swap.input_by_groups((1, swap.GROUP_SYSTEMS - 1, 20), method="kendall", variant="b", average="macro")
    assert swap.input_by_groups((1, swap.GROUP_SYSTEMS, 20), method="kendall", variant="b", average="macro")
    assert not swap.input_by_groups((1, 5000, 20), method="pearson", variant="b", average="macro")
    rng = np.random.default_rng(8)
    x, y, z = (rng.integers(0, 40, (1, swap.GROUP_SYSTEMS, 3)).astype(float) for _ in range(3))
    masks = permutation_masks(2, np.arange(3), x.shape[1], x.shape[2], "cells")
    kw = dict(level=LEVEL, method="kendall", variant="b", min_pairs=3, skipna=True, average="macro")
    check(draw_deltas(x, y, z, kw)(masks), swapped_oracle(x, y, z, masks, kw), "kendall")


def test_tau_c_draws_equal_scipy_on_the_swapped_matrices():
    rng = np.random.default_rng(9)
    x, y = (rng.integers(0, 4, (1, 25, 5)).astype(float) for _ in range(2))  # few levels: m < n
    z = rng.integers(0, 3, (1, 25, 5)).astype(float)
    masks = permutation_masks(5, np.arange(4), 25, 5, "cells")
    kw = dict(level=LEVEL, method="kendall", variant="c", min_pairs=3, skipna=True, average="macro")
    fast = draw_deltas(x, y, z, kw)(masks)
    zx, zy = standardise(x), standardise(y)
    for b, m in enumerate(masks):
        xp, yp = np.where(m, zy, zx)[0], np.where(m, zx, zy)[0]
        want = [np.mean([scipy.stats.kendalltau(a[:, i], z[0, :, i], variant="c").statistic for i in range(5)])
                for a in (xp, yp)]
        np.testing.assert_allclose(fast[0, b], want[0] - want[1], rtol=0, atol=1e-12)
