"""System-level Pearson draws of every pair of metrics at once (:mod:`xcorrstat._kernels.linear.allpairs`).

1. The kernel against an independent oracle: for every pair and draw the swapped
   matrices are built explicitly (``X' = where(m, X_k, X_i)``), their system means taken
   with NumPy and correlated with ``scipy.stats.pearsonr``; to 1e-12, for every mask
   scheme, with a constant metric, a duplicated metric, draws that make a swapped
   metric constant, and ``min_pairs``.
2. ``compare`` through the all-pairs route equals the two-metric ``permutation_test``
   (which takes the per-pair route) for every pair with the same seed.
3. The draws do not depend on ``batch``, ``pair_chunk`` or the backend, and the first k
   draws of an n-draw run are a k-draw run, bit for bit.
4. Data with a missing cell (or a constant metric, whose z-scores are missing) take the
   per-pair route as before, eager or lazy.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import xarray as xr
from conftest import make_scores
from oracles import assert_values_same
from scipy import stats
from test_permutation import PERMUTES, zscore

import xcorrstat
from xcorrstat._kernels.linear import allpairs as swap_allpairs
from xcorrstat._kernels.linear.allpairs import PAIR_BLOCK_ELEMS, allpairs_system_deltas, prepare_allpairs
from xcorrstat._resampling import memory as memory
from xcorrstat._resampling import pairs as pairs_module
from xcorrstat._resampling.draws import permutation_masks
from xcorrstat._resampling.pairs import pair_permutation_draws

SCHEMES = [scheme for _, scheme in PERMUTES.values()]
KW = dict(level="system", method="pearson", variant="b", min_pairs=3, skipna=True)


# --------------------------------------------------------------------------- #
# 1. the kernel against explicitly swapped matrices
# --------------------------------------------------------------------------- #
def oracle_r(means, target_means, min_pairs):
    """Pearson r of two vectors of system means by scipy, NaN by the library's rule."""
    if means.size < max(min_pairs, 2) or np.all(means == means[0]) or np.all(target_means == target_means[0]):
        return np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(stats.pearsonr(means, target_means).statistic)


def oracle_deltas(zx, z, masks, pairs, min_pairs):
    """(P, B): r(X', Z) - r(Y', Z) of the explicitly swapped matrices of every pair and draw."""
    target_means = z.mean(axis=1)
    out = np.empty((len(pairs[0]), len(masks)))
    for p, (i, k) in enumerate(zip(*pairs)):
        for b, m in enumerate(masks):
            xs, ys = np.where(m, zx[k], zx[i]), np.where(m, zx[i], zx[k])
            out[p, b] = (oracle_r(xs.mean(axis=1), target_means, min_pairs)
                         - oracle_r(ys.mean(axis=1), target_means, min_pairs))
    return out


def metrics_with_special_cases(seed, n_systems, n_inputs):
    """Standardised metrics: five correlated ones, a constant one (0), a constant non-zero one, a copy
    of the first; a target sharing their signal."""
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(n_systems, n_inputs)) + rng.normal(size=(n_systems, 1))
    raw = [base + rng.normal(size=base.shape) * s for s in (0.3, 0.6, 1.0, 1.5, 3.0)]
    zx = np.stack([zscore(a) for a in raw]
                  + [np.zeros(base.shape), np.full(base.shape, 0.3), zscore(raw[0])])
    return zx, base + rng.normal(size=base.shape)


def all_pairs(m):
    pi, pk = np.triu_indices(m, 1)
    return np.concatenate([pi, pk]), np.concatenate([pk, pi])  # both orders


def with_extreme_masks(masks):
    """The batch, plus a draw that swaps nothing and one that swaps every cell."""
    shape = (1,) + masks.shape[1:]
    return np.concatenate([masks, np.zeros(shape, dtype=bool), np.ones(shape, dtype=bool)])


@pytest.mark.parametrize("scheme", SCHEMES)
def test_kernel_equals_explicit_swaps(scheme):
    zx, z = metrics_with_special_cases(1, 6, 9)
    masks = with_extreme_masks(permutation_masks(4, range(30), 6, 9, scheme))
    pairs = all_pairs(zx.shape[0])
    got = allpairs_system_deltas(zx, z, masks, pairs, min_pairs=3)
    expected = oracle_deltas(zx, z, masks, pairs, 3)
    assert np.isnan(expected).any() and not np.isnan(expected).all()  # the constant metrics are reached
    assert_values_same(got, expected, scheme)


@pytest.mark.parametrize("scheme", SCHEMES)
def test_kernel_equals_explicit_swaps_larger(scheme):
    # 14 systems x 120 inputs: the matrix products and several blocks of pairs
    zx, z = metrics_with_special_cases(2, 14, 120)
    masks = permutation_masks(9, range(20), 14, 120, scheme)
    pairs = all_pairs(zx.shape[0])
    assert_values_same(allpairs_system_deltas(zx, z, masks, pairs, min_pairs=3),
                       oracle_deltas(zx, z, masks, pairs, 3), scheme)


def test_pair_blocks_do_not_change_draws(monkeypatch):
    zx, z = metrics_with_special_cases(3, 5, 8)
    masks = permutation_masks(1, range(20), 5, 8, "cells")
    pairs = all_pairs(zx.shape[0])
    ref = allpairs_system_deltas(zx, z, masks, pairs, min_pairs=3)
    monkeypatch.setattr(swap_allpairs, "PAIR_BLOCK_ELEMS", 5 * 20 * 3)  # 3 pairs a block
    np.testing.assert_array_equal(allpairs_system_deltas(zx, z, masks, pairs, min_pairs=3), ref)
    assert PAIR_BLOCK_ELEMS > 5 * 20 * 3


def test_swapped_metric_constant_in_some_draws(monkeypatch):
    # X in {0, 1}, Y = 1 - X: z-scores +-1 and -+1; swapping exactly the cells where X = 0 makes
    # X' = 1 and Y' = -1 everywhere (constant means), which only exact sums see
    exact = []
    original = swap_allpairs._SystemOperands._exact
    monkeypatch.setattr(swap_allpairs._SystemOperands, "_exact", lambda self, *a: exact.append(a) or original(self, *a))
    rng = np.random.default_rng(5)
    shape = (4, 10)
    x = rng.permutation(np.repeat([0.0, 1.0], 20)).reshape(shape)
    zx = np.stack([zscore(x), zscore(1.0 - x)])
    z = rng.normal(size=shape)
    masks = np.concatenate([permutation_masks(2, range(30), *shape, "cells"), (x == 0)[None], (x == 1)[None]])
    got = allpairs_system_deltas(zx, z, masks, all_pairs(2), min_pairs=3)
    expected = oracle_deltas(zx, z, masks, all_pairs(2), 3)
    assert np.isnan(expected[:, -2:]).all()
    assert_values_same(got, expected)
    assert len(exact) >= 8  # at least 2 draws x 2 pairs x (X', Y'): decided on exactly rounded means


@pytest.mark.parametrize("min_pairs", [2, 4, 5, 7])
def test_min_pairs(min_pairs):
    zx, z = metrics_with_special_cases(6, 5, 7)  # 5 systems
    masks = permutation_masks(3, range(12), 5, 7, "system-xor-input")
    pairs = all_pairs(zx.shape[0])
    got = allpairs_system_deltas(zx, z, masks, pairs, min_pairs=min_pairs)
    assert_values_same(got, oracle_deltas(zx, z, masks, pairs, min_pairs))
    assert np.isnan(got).all() == (min_pairs > 5)


def test_constant_target_and_two_systems():
    zx, z = metrics_with_special_cases(7, 2, 6)
    masks = permutation_masks(3, range(10), 2, 6, "cells")
    pairs = all_pairs(zx.shape[0])
    assert_values_same(allpairs_system_deltas(zx, z, masks, pairs, min_pairs=2),
                       oracle_deltas(zx, z, masks, pairs, 2))
    zx, _ = metrics_with_special_cases(7, 4, 6)
    flat = np.tile(np.arange(6.0), (4, 1))  # every system's target mean is the same
    masks = permutation_masks(3, range(10), 4, 6, "cells")
    assert np.isnan(allpairs_system_deltas(zx, flat, masks, pairs, min_pairs=3)).all()


def test_one_draw_equals_its_row_of_a_batch():
    zx, z = metrics_with_special_cases(8, 6, 50)
    masks = permutation_masks(3, range(9), 6, 50, "cells")
    deltas = prepare_allpairs(zx, z, all_pairs(zx.shape[0]), min_pairs=3)
    batch = deltas(masks)
    for b in (0, 4, 8):
        np.testing.assert_array_equal(deltas(masks[b : b + 1])[:, 0], batch[:, b])


def test_kernel_needs_complete_data():
    zx, z = metrics_with_special_cases(9, 4, 5)
    z[0, 0] = np.nan
    with pytest.raises(ValueError, match="complete data"):
        prepare_allpairs(zx, z, ([0], [1]), min_pairs=3)


# --------------------------------------------------------------------------- #
# 2. compare() equals the two-metric test, pair by pair
# --------------------------------------------------------------------------- #
@pytest.fixture
def allpairs_calls(monkeypatch):
    """How many tasks of the all-pairs route ran."""
    calls = []
    original = pairs_module._allpairs_block

    def spy(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(pairs_module, "_allpairs_block", spy)
    return calls


@pytest.mark.parametrize("alternative", ["greater", "two-sided"])
@pytest.mark.parametrize("permute", list(PERMUTES))
def test_compare_equals_permutation_test(permute, alternative, allpairs_calls):
    ds = make_scores(n_metrics=4, n_systems=6, n_inputs=9, seed=12)
    perm = PERMUTES[permute][0]
    opts = dict(target="human", level="system", method="pearson",
                test=xcorrstat.Permutation(perm, n_resamples=80, rng=21, keep_distribution=True),
                alternative=alternative)
    res = ds.corrstat.compare(**opts)
    assert allpairs_calls
    names = [f"m{k}" for k in range(4)]
    for a in names:
        for b in names:
            if a == b:
                continue
            one = ds.corrstat.permutation_test(x=a, y=b, **opts)
            cell = res.sel(metric=a, other_metric=b)
            assert_values_same(cell["distribution"].values, one["distribution"].values, f"{a} vs {b}")
            assert_values_same(cell["delta"].values, one["delta"].values)
            np.testing.assert_array_equal(cell["pvalue"].values, one["pvalue"].values)


def test_compare_with_an_extra_dim(allpairs_calls):
    ds = make_scores(n_metrics=3, n_systems=5, n_inputs=7, seed=13, extra=("lp", 2))
    opts = dict(target="human", level="system", method="pearson",
                test=xcorrstat.Permutation(n_resamples=60, rng=4, keep_distribution=True))
    res = ds.corrstat.compare(**opts)
    assert allpairs_calls
    for lp in ds["lp"].values:
        one = ds.sel(lp=lp).corrstat.permutation_test(x="m2", y="m0", **opts)
        cell = res.sel(lp=lp, metric="m2", other_metric="m0")
        assert_values_same(cell["distribution"].values, one["distribution"].values, lp)
        np.testing.assert_array_equal(cell["pvalue"].values, one["pvalue"].values)


# --------------------------------------------------------------------------- #
# 3. batch, pair_chunk, backend and the prefix property
# --------------------------------------------------------------------------- #
def stacked(ds, n_metrics):
    return xr.concat([ds[f"m{k}"] for k in range(n_metrics)], dim="metric")


@pytest.mark.parametrize("scheme", SCHEMES)
def test_draws_do_not_depend_on_batch_chunks_or_backend(scheme, monkeypatch):
    monkeypatch.setattr(memory, "MIN_BATCH_ELEMS", 1)  # no floor under small batches: 1 and 7 are honest
    ds = make_scores(n_metrics=6, n_systems=7, n_inputs=40, seed=14)
    x = stacked(ds, 6)
    pi, pk = np.triu_indices(6, 1)
    opts = dict(pairs=(pi, pk), seed=8, scheme=scheme, kw=KW)
    ref = pair_permutation_draws(x, ds["human"], n_resamples=600, **opts).values
    assert np.isfinite(ref).all()
    for backend in ("eager", "dask"):
        xs, zs = (x.chunk(), ds["human"].chunk()) if backend == "dask" else (x, ds["human"])
        for chunk, batch in ((1, 1), (3, 7), (None, 600), (10, 256)):
            got = pair_permutation_draws(xs, zs, pair_chunk=chunk, batch=batch, n_resamples=600, **opts)
            assert (got.chunks is not None) == (backend == "dask")
            np.testing.assert_array_equal(got.values, ref, err_msg=f"{backend} {chunk} {batch}")
        for n in (1, 255, 257):
            got = pair_permutation_draws(xs, zs, n_resamples=n, **opts).values
            np.testing.assert_array_equal(got, ref[:, :n], err_msg=f"{backend} prefix {n}")


def test_dask_tasks_are_blocks_of_draws_with_every_pair(monkeypatch):
    monkeypatch.setattr(memory, "MIN_BATCH_ELEMS", 1)  # tiny data would otherwise take 1,000 draws a batch
    ds = make_scores(n_metrics=5, n_systems=6, n_inputs=30, seed=15).chunk()
    x = stacked(ds, 5)
    pi, pk = np.triu_indices(5, 1)
    got = pair_permutation_draws(x, ds["human"], pairs=(pi, pk), seed=2, scheme="cells", n_resamples=1000,
                                 kw=KW, batch=50)
    assert got.chunks[0] == (pi.size,)  # every pair in one task
    assert len(got.chunks[1]) > 1  # several blocks of draws
    assert all(c % 256 == 0 for c in got.chunks[1][:-1])  # whole blocks of the draw generators


# --------------------------------------------------------------------------- #
# 4. missing data: the per-pair route, as before
# --------------------------------------------------------------------------- #
def per_pair_route(x, z, pairs, *, seed, scheme, n):
    """The per-pair task itself, over every pair (and label at once): the route missing data take."""
    return pairs_module._pair_block(x.values, z.values, *pairs, np.arange(n), seed=seed, scheme=scheme, batch=n,
                                    kw=KW)


@pytest.mark.parametrize("case", ["missing-cell", "missing-target", "constant-metric"])
def test_incomplete_data_take_the_per_pair_route(case, allpairs_calls):
    ds = make_scores(n_metrics=4, n_systems=6, n_inputs=9, seed=16)
    if case == "missing-cell":
        ds["m1"][2, 3] = np.nan
    elif case == "missing-target":
        ds["human"][0, 0] = np.nan
    else:
        ds["m2"][:] = 0.5
    x = stacked(ds, 4)
    pi, pk = np.triu_indices(4, 1)
    opts = dict(pairs=(pi, pk), seed=5, scheme="cells", n_resamples=90, kw=KW)
    eager = pair_permutation_draws(x, ds["human"], **opts).values
    assert not allpairs_calls
    expected = per_pair_route(x, ds["human"], (pi, pk), seed=5, scheme="cells", n=90)
    np.testing.assert_array_equal(eager, expected)
    lazy = pair_permutation_draws(x.chunk(), ds["human"].chunk(), pair_chunk=2, **opts).values
    assert allpairs_calls  # lazy data: the all-pairs layout, each task finds the gap
    np.testing.assert_array_equal(lazy, expected)
    res = xcorrstat.compare(ds, target="human", common_cells=False, level="system",
                            test=xcorrstat.Permutation(n_resamples=90, rng=5, keep_distribution=True))
    one = ds.corrstat.permutation_test(x="m0", y="m1", target="human", level="system",
                                       test=xcorrstat.Permutation(n_resamples=90, rng=5, keep_distribution=True))
    assert_values_same(res["distribution"].sel(metric="m0", other_metric="m1").values, one["distribution"].values)


def test_lazy_labels_choose_their_route_one_by_one(allpairs_calls):
    ds = make_scores(n_metrics=3, n_systems=5, n_inputs=8, seed=17, extra=("lp", 3))
    ds["m1"][1, 2, 2] = np.nan  # the second language pair has a gap, the others are complete
    x = stacked(ds, 3)
    pi, pk = np.triu_indices(3, 1)
    opts = dict(pairs=(pi, pk), seed=6, scheme="system-xor-input", n_resamples=70, kw=KW)
    eager = pair_permutation_draws(x, ds["human"], **opts).values  # per-pair route for every label
    lazy = pair_permutation_draws(x.chunk({"lp": 1}), ds["human"].chunk({"lp": 1}), **opts).values
    assert allpairs_calls
    alone = per_pair_route(x.isel(lp=1), ds["human"].isel(lp=1), (pi, pk), seed=6, scheme="system-xor-input", n=70)
    # the label with a gap: the per-pair route (its kernels are chosen per block of pairs, so only to 1e-12)
    assert_values_same(lazy[1], alone)
    assert_values_same(lazy, eager)
    for lab in (0, 2):  # complete labels: the all-pairs kernel, as on their own
        one = pair_permutation_draws(x.isel(lp=lab), ds["human"].isel(lp=lab), **opts).values
        np.testing.assert_array_equal(lazy[lab], one)
