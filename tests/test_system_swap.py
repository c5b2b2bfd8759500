"""System-level permutation draws of every pair: :mod:`xcorrstat._kernels.linear.system_swap` (means and
statistic per block of pairs, its compiled loops :mod:`xcorrstat._kernels.linear.system_swap_jit` and
:mod:`xcorrstat._kernels.rank.system_swap_jit`; the rank statistics :mod:`xcorrstat._kernels.rank.system_swap`).

Two oracles:

1. explicitly swapped matrices: X and Y z-scored, swapped with ``np.where`` under each mask,
   system means over the cells valid in the swapped metric and the target, and ``scipy.stats``
   (pearsonr, kendalltau b and c) on those means -- with metrics missing in the same cells and in
   different cells, a constant metric, gaps in the target and scores of extreme magnitude; Kendall
   also over more systems than the loop takes (the sort-and-merge count of ``corr``);
2. NumPy counting on the kernel's own means, vectorised over rows with a loop over the systems
   (:func:`row_pearson`, :func:`kendall_counts` below): the loops give the same floats, whatever
   the blocks of pairs and the batches.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from oracles import assert_values_same, scipy_statistic

from xcorrstat._kernels.linear import system_swap as swap_system
from xcorrstat._kernels.correlation import PAIRWISE_MAX_N
from xcorrstat._kernels.scaling import SAFE_SUM_BOUNDS
from xcorrstat._kernels.linear.system_swap import flagged_pearson, prepare_system_swap, swapped_means
from xcorrstat._kernels.rank.system_swap import COUNT_NAMES, system_statistic, tau_of_counts
from xcorrstat._kernels.rank.tau import count_distinct
from xcorrstat._resampling.draws import permutation_masks

METHODS = [("pearson", "b"), ("kendall", "b"), ("kendall", "c"), ("kendall", "a"), ("kendall", "23"),
           ("spearman", "b")]


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


# --------------------------------------------------------------------------- #
# The NumPy oracle: the means of a block (S, ...), statistics vectorised over the rows
# --------------------------------------------------------------------------- #
def _ordered_sum(a):
    """The planes of ``a`` (S, ...) added in system order, from 0.0."""
    total = np.zeros(a.shape[1:])
    for plane in a:
        total += plane
    return total


def _centred(a, valid, nn):
    """Deviations from the mean of the valid values (0 elsewhere; ``valid`` None: every value) and their
    mean (the mean's rounding error)."""
    if valid is None:
        dev = a - _ordered_sum(a) / nn
    else:
        dev = np.where(valid, a - _ordered_sum(np.where(valid, a, 0.0)) / nn, 0.0)
    return dev, _ordered_sum(dev) / nn


def _constant(a, valid):
    """Whether ``a`` takes one value over the valid systems (or none) of each row."""
    if valid is None:
        return ~(np.min(a, axis=0) < np.max(a, axis=0))
    low = np.min(a, axis=0, where=valid, initial=np.inf)
    high = np.max(a, axis=0, where=valid, initial=-np.inf)
    return ~(low < high)


def _products(dx, dz):
    """The sums over the systems of dx**2, dz**2 and dx dz, each added in system order."""
    sums = np.zeros((3,) + dx.shape[1:])
    for px, pz in zip(dx, dz):
        sums[0] += px * px
        sums[1] += pz * pz
        sums[2] += px * pz
    return sums[0], sums[1], sums[2]


def row_pearson(mx, mz, need):
    """Pearson's r over axis 0 of means (S, ...) with the target's: NaN where undefined (fewer than
    ``need`` valid systems, or either vector constant over them), ``inf`` where a sum of squares left
    SAFE_SUM_BOUNDS (flagged)."""
    valid = ~(np.isnan(mx) | np.isnan(mz))
    n = valid.sum(axis=0)
    nn = np.maximum(n, 1).astype(np.float64)
    if valid.all():
        valid, nn = None, float(mx.shape[0])  # the same values without the masks
    with np.errstate(invalid="ignore", divide="ignore", over="ignore", under="ignore"):
        (dx, cx), (dz, cz) = _centred(mx, valid, nn), _centred(mz, valid, nn)
        sxx, szz, sxz = _products(dx, dz)
        sxx -= nn * cx * cx
        szz -= nn * cz * cz
        sxz -= nn * cx * cz
        r = np.clip(sxz / np.sqrt(sxx * szz), -1.0, 1.0)
    undefined = (n < need) | _constant(mx, valid) | _constant(mz, valid)
    low, high = SAFE_SUM_BOUNDS
    r[~((sxx > low) & (sxx < high) & (szz > low) & (szz < high))] = np.inf
    r[undefined] = np.nan
    return r


def kendall_counts(xt, zt, distinct):
    """Kendall's pair counts (6, R) of each row of means (S, R) against the target's (COUNT_NAMES):
    the pairs (s, t > s) of every row at once, signs as int8."""
    valid = ~np.isnan(xt) & ~np.isnan(zt)
    counts = np.zeros((len(COUNT_NAMES), xt.shape[1]), dtype=np.int64)
    cmd, tx, tz, txz = counts[:4]
    with np.errstate(invalid="ignore"):
        for s in range(xt.shape[0] - 1):
            pv = valid[s] & valid[s + 1:]
            gx, lx = xt[s] > xt[s + 1:], xt[s] < xt[s + 1:]
            gz, lz = zt[s] > zt[s + 1:], zt[s] < zt[s + 1:]
            agree = (gx.view(np.int8) - lx.view(np.int8)) * (gz.view(np.int8) - lz.view(np.int8))
            agree *= pv.view(np.int8)
            cmd += agree.sum(axis=0, dtype=np.int64)
            ex, ez = ~(gx | lx) & pv, ~(gz | lz) & pv
            tx += ex.sum(axis=0, dtype=np.int64)
            tz += ez.sum(axis=0, dtype=np.int64)
            txz += (ex & ez).sum(axis=0, dtype=np.int64)
    counts[4] = valid.sum(axis=0)
    if distinct:
        counts[5] = np.minimum(count_distinct(xt.T, valid.T), count_distinct(zt.T, valid.T))
    return counts


def _numpy_statistic(ops, terms, keep, moved):
    """The kernel's block statistic (Pb, B) with the NumPy counting in place of the loops."""
    kw, n_sys = ops.kw, terms.kept.shape[0]
    mx, mz = swapped_means(terms, keep, moved)
    if kw["method"] == "pearson":
        return flagged_pearson(row_pearson(mx, mz, max(kw["min_pairs"], 2)), terms, keep, moved, kw["min_pairs"])
    if kw["method"] == "kendall" and n_sys <= PAIRWISE_MAX_N:
        xt, zt = (np.ascontiguousarray(a.reshape(n_sys, -1)) for a in (mx, mz))
        counts = kendall_counts(xt, zt, kw["variant"] == "c")
        return tau_of_counts(counts, kw["variant"], kw["min_pairs"]).reshape(mx.shape[1:])
    return system_statistic(np.moveaxis(mx, 0, -1), np.moveaxis(mz, 0, -1), **kw)


def numpy_deltas(x, z, pairs, masks, method, variant):
    """(P, B): the kernel's deltas with its statistic taken by the NumPy oracle."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(swap_system._Operands, "_statistic", _numpy_statistic)
        return prepare_system_swap(x, z, pairs, method=method, variant=variant)(masks)


# --------------------------------------------------------------------------- #
# The tests
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize(("method", "variant"), [("pearson", "b"), ("kendall", "b"), ("kendall", "c")])
@pytest.mark.parametrize("case", ["same-cells", "different-cells", "constant", "extreme"])
def test_draws_equal_explicit_swaps(method, variant, case):
    x, z = scores(3, case)
    masks = permutation_masks(5, np.arange(10), *z.shape, "cells")
    masks = np.concatenate([masks, np.zeros((1,) + z.shape, bool), np.ones((1,) + z.shape, bool)])
    pairs = pairs_of(x.shape[0])
    got = prepare_system_swap(x, z, pairs, method=method, variant=variant)(masks)
    expected = explicit(x, z, masks, pairs, method, variant)
    assert np.isfinite(expected).any()
    assert_values_same(got, expected, f"{method} {variant} {case}")


@pytest.mark.parametrize(("method", "variant"), [("kendall", "b"), ("kendall", "c"), ("spearman", "b")])
def test_more_systems_than_the_pair_count_takes(method, variant):
    """Kendall over more than PAIRWISE_MAX_N systems is the sorted count, Spearman over them the
    sorted mid-ranks: both equal scipy on the explicitly swapped means."""
    x, z = scores(5, "different-cells", n_metrics=3, n_systems=PAIRWISE_MAX_N + 8, n_inputs=4)
    masks = permutation_masks(7, np.arange(3), *z.shape, "cells")
    pairs = pairs_of(x.shape[0])
    got = prepare_system_swap(x, z, pairs, method=method, variant=variant)(masks)
    assert_values_same(got, explicit(x, z, masks, pairs, method, variant), f"{method} {variant}")


@pytest.mark.parametrize(("method", "variant"), METHODS)
@pytest.mark.parametrize("case", ["same-cells", "different-cells", "constant", "extreme"])
def test_loops_equal_the_numpy_oracle(method, variant, case):
    x, z = scores(4, case, n_metrics=6, n_systems=9, n_inputs=30)
    x = np.round(x * 2) / 2  # tied means in some draws
    masks = permutation_masks(2, np.arange(40), *z.shape, "cells")
    pairs = pairs_of(x.shape[0])
    got = prepare_system_swap(x, z, pairs, method=method, variant=variant)(masks)
    np.testing.assert_array_equal(got, numpy_deltas(x, z, pairs, masks, method, variant))


@pytest.mark.parametrize(("method", "variant"), [("pearson", "b"), ("kendall", "c")])
def test_blocks_of_pairs_and_batches_give_the_same_floats(method, variant, monkeypatch):
    x, z = scores(6, "different-cells", n_metrics=6)
    masks = permutation_masks(9, np.arange(24), *z.shape, "cells")
    pairs = pairs_of(x.shape[0])
    deltas = prepare_system_swap(x, z, pairs, method=method, variant=variant)
    whole = deltas(masks)
    np.testing.assert_array_equal(np.concatenate([deltas(masks[:5]), deltas(masks[5:])], axis=1), whole)
    np.testing.assert_array_equal(deltas(masks[7:8])[:, 0], whole[:, 7])
    monkeypatch.setattr(swap_system, "SYSTEM_BLOCK_ELEMS", 1)  # one pair a block
    np.testing.assert_array_equal(prepare_system_swap(x, z, pairs, method=method, variant=variant)(masks), whole)


@pytest.mark.parametrize(("method", "n_sys"), [("pearson", 4), ("pearson", PAIRWISE_MAX_N + 1), ("kendall", 4)])
def test_system_statistic_leaves_the_loops_cases_to_them(method, n_sys):
    means = np.arange(float(n_sys))[None]
    with pytest.raises(ValueError, match="compiled loops"):
        system_statistic(means, means, method=method, variant="b", min_pairs=3)
