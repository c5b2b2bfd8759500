"""Bootstrap draws of rank statistics over long rows (within-system level over many inputs, input
level over many systems) by sorting each row once, against the explicitly expanded resamples.

Rows longer than ``SORTED_MIN_UNITS`` take the global level's kernels, one row a one-system table:

* Kendall tau-b and tau-c (also with epsilon, tau-b) and Spearman: each row's statistic bit for bit
  the plain kernel (:func:`xcorrstat._kernels.level_correlation`) on
  ``x[..., sys_idx[b], :][..., inp_idx[b]]`` (the counts and the midranks' sums are exact integers or
  quarters); the level value too, except that the average over resampled groups weights each group by
  its count where the expanded resample repeats it, and sums in another order (within 1e-13);
* the variants comparing distinct units only (tau-a, tau_eq, acc_eq) count the pairs of copies of
  distinct units (``distinct=True``: the pairs of copies of one unit left out of every count), bit
  for bit the pair form (:func:`wkendall_rows`), rows with two valid units or constant included;
* a draw's value depends on neither the batch nor the other metrics in the block.
"""

from __future__ import annotations

import numpy as np
import pytest

from xcorrstat._kernels.levels import level_correlation
from xcorrstat._kernels.rank.global_counts import weighted_global_kendall
from xcorrstat._kernels.rank.sorted_counts import SORTED_MIN_UNITS
from xcorrstat._kernels.rank.weighted_rows import wkendall_rows
from xcorrstat._resampling.draws import bootstrap_indices, counts_from_indices
from xcorrstat._resampling.statistics import resampled_level_correlation

LONG = SORTED_MIN_UNITS + 36


def _data(seed: int, m: int, s: int, i: int, nan: float = 0.1) -> tuple[np.ndarray, np.ndarray]:
    """Integer scores with many ties (x and z), a share ``nan`` missing, one metric constant in one system."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 9, size=(m, s, i)).astype(float)
    z = rng.integers(0, 5, size=(s, i)).astype(float)
    x[rng.random(x.shape) < nan] = np.nan
    x[0, -1, :] = 3.0
    return x, z


def _draws(seed: int, s: int, i: int, b: int, dims: tuple[str, ...]) -> tuple[np.ndarray | None, np.ndarray | None]:
    sizes = [{"system": s, "input": i}[d] for d in dims]
    idx = dict(zip(dims, bootstrap_indices(seed, range(b), sizes)))
    return idx.get("system"), idx.get("input")


def _expanded(x, z, sys_idx, inp_idx, b, **kw):
    """The plain level correlation of every explicitly expanded resample, (M, B)."""
    s, i = x.shape[-2:]
    rows = sys_idx if sys_idx is not None else np.broadcast_to(np.arange(s), (b, s))
    cols = inp_idx if inp_idx is not None else np.broadcast_to(np.arange(i), (b, i))
    out = [level_correlation(x[:, rows[k]][:, :, cols[k]], np.broadcast_to(z, x.shape)[:, rows[k]][:, :, cols[k]],
                             **kw) for k in range(b)]
    return np.stack([o[0] for o in out], axis=-1), np.stack([o[1] for o in out], axis=-1)


CASES = [("kendall", "b", 0.0), ("kendall", "c", 0.0), ("kendall", "b", 1.0), ("spearman", "b", 0.0)]


@pytest.mark.parametrize("method,variant,epsilon", CASES)
@pytest.mark.parametrize("dims", [("system", "input"), ("input",), ("system",)])
@pytest.mark.parametrize("average", ["macro", "weighted"])
def test_within_system_long_rows_equal_expanded(method, variant, epsilon, dims, average):
    x, z = _data(1, 3, 5, LONG)
    b = 12
    sys_idx, inp_idx = _draws(7, 5, LONG, b, dims)
    kw = dict(level="within_system", method=method, variant=variant, epsilon=epsilon, average=average)
    r, n = resampled_level_correlation(x, z, sys_idx=sys_idx, inp_idx=inp_idx, **kw)
    r_exp, n_exp = _expanded(x, z, sys_idx, inp_idx, b, **kw)
    np.testing.assert_array_equal(n, n_exp)
    np.testing.assert_array_equal(np.isnan(r), np.isnan(r_exp))
    # the average over the systems (the same code as before this route) sums in another order
    np.testing.assert_allclose(r, r_exp, rtol=0, atol=1e-13)
    assert np.isfinite(r).all()


@pytest.mark.parametrize("method,variant,epsilon", CASES)
def test_within_system_long_row_bit_for_bit(method, variant, epsilon):
    """One system, not resampled: the level value is the row's statistic itself, bit for bit."""
    x, z = _data(9, 4, 1, LONG)
    _, inp_idx = _draws(11, 1, LONG, 15, ("input",))
    kw = dict(level="within_system", method=method, variant=variant, epsilon=epsilon)
    r, n = resampled_level_correlation(x, z, inp_idx=inp_idx, **kw)
    r_exp, n_exp = _expanded(x, z, None, inp_idx, 15, **kw)
    np.testing.assert_array_equal(n, n_exp)
    np.testing.assert_array_equal(r, r_exp)


@pytest.mark.parametrize("method,variant,epsilon", CASES)
def test_input_level_many_systems_equal_expanded(method, variant, epsilon):
    x, z = _data(2, 2, LONG, 4, nan=0.05)
    b = 10
    sys_idx, inp_idx = _draws(3, LONG, 4, b, ("system", "input"))
    kw = dict(level="input", method=method, variant=variant, epsilon=epsilon)
    r, n = resampled_level_correlation(x, z, sys_idx=sys_idx, inp_idx=inp_idx, **kw)
    r_exp, n_exp = _expanded(x, z, sys_idx, inp_idx, b, **kw)
    np.testing.assert_array_equal(n, n_exp)
    np.testing.assert_allclose(r, r_exp, rtol=0, atol=1e-13)  # the average over inputs reassociates
    # one input, systems resampled: the level value is the row's statistic, bit for bit
    r, n = resampled_level_correlation(x[..., :1], z[..., :1], sys_idx=sys_idx, **kw)
    r_exp, n_exp = _expanded(x[..., :1], z[..., :1], sys_idx, None, b, **kw)
    np.testing.assert_array_equal(n, n_exp)
    np.testing.assert_array_equal(r, r_exp)


@pytest.mark.parametrize("method,variant,epsilon", CASES + [("kendall", "a", 0.0), ("kendall", "acc23", 0.5)])
def test_long_rows_do_not_depend_on_batch_or_block(method, variant, epsilon):
    x, z = _data(4, 3, 4, LONG)
    sys_idx, inp_idx = _draws(5, 4, LONG, 9, ("system", "input"))
    kw = dict(level="within_system", method=method, variant=variant, epsilon=epsilon)
    whole, n_whole = resampled_level_correlation(x, z, sys_idx=sys_idx, inp_idx=inp_idx, **kw)
    for cut in (1, 4):
        parts = [resampled_level_correlation(x[k:k + 1], z, sys_idx=sys_idx[lo:hi], inp_idx=inp_idx[lo:hi], **kw)
                 for k in range(3) for lo, hi in ((0, cut), (cut, 9))]
        r = np.stack([np.concatenate([parts[2 * k][0][0], parts[2 * k + 1][0][0]]) for k in range(3)])
        n = np.stack([np.concatenate([parts[2 * k][1][0], parts[2 * k + 1][1][0]]) for k in range(3)])
        np.testing.assert_array_equal(r, whole)
        np.testing.assert_array_equal(n, n_whole)


def test_distinct_pair_variants_as_the_pair_form():
    """tau-a, tau_eq and acc_eq compare copies of distinct units only: the draws count them so on long rows too."""
    x, z = _data(6, 2, 3, LONG)
    _, inp_idx = _draws(8, 3, LONG, 6, ("input",))
    c = counts_from_indices(inp_idx, LONG)
    for variant, epsilon in (("a", 0.0), ("23", 0.0), ("acc23", 0.0), ("acc23", 1.0)):
        r, n = resampled_level_correlation(x, z, inp_idx=inp_idx, level="within_system", method="kendall",
                                           variant=variant, epsilon=epsilon)
        rows, _ = wkendall_rows(x.reshape(-1, LONG), np.broadcast_to(z, x.shape).reshape(-1, LONG), c,
                                variant=variant, epsilon=epsilon)
        rows = np.ascontiguousarray(np.moveaxis(rows.reshape(2, 3, -1), 1, 2))  # (M, B, S)
        defined = ~np.isnan(rows)
        expected = np.where(defined, rows, 0.0).sum(axis=-1) / defined.sum(axis=-1)
        np.testing.assert_array_equal(r, expected)
        np.testing.assert_array_equal(n, defined.sum(axis=-1))


@pytest.mark.parametrize("variant", ["a", "23", "acc23", "b", "c"])
@pytest.mark.parametrize("epsilon", [0.0, 1.0])
@pytest.mark.parametrize("min_pairs", [1, 2, 3])
def test_distinct_counts_equal_the_pair_form(variant, epsilon, min_pairs):
    """weighted_global_kendall(distinct=True) on one-system rows: wkendall_rows' counts, bit for bit."""
    if variant == "c" and epsilon:
        pytest.skip("tau-c has no epsilon")
    rng = np.random.default_rng(12)
    r_, s_ = 14, LONG
    x = rng.integers(0, 12, size=(r_, s_)).astype(float)
    z = rng.normal(size=(r_, s_)).round(1)
    x[rng.random(x.shape) < 0.1] = np.nan
    z[5] = 1.0  # constant target
    x[7, 2:] = np.nan  # two valid units
    x[8, 1:] = np.nan  # one
    x[9] = 2.0  # constant metric
    x[10, 3:] = np.nan  # three
    _, inp_idx = _draws(13, 1, s_, 25, ("input",))
    c = counts_from_indices(inp_idx, s_)
    distinct = variant in ("a", "23", "acc23")
    r, n = weighted_global_kendall(x[:, None, :], z[:, None, :], None, c, variant=variant, min_pairs=min_pairs,
                                   epsilon=epsilon, distinct=distinct)
    r_pair, n_pair = wkendall_rows(x, z, c, variant=variant, min_pairs=min_pairs, epsilon=epsilon)
    np.testing.assert_array_equal(n, n_pair)
    np.testing.assert_array_equal(r, r_pair)
