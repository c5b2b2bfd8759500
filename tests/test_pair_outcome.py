"""The pair-outcome permutation test (``swap="pairs"``): mt-metrics-eval's ``PairwisePermutationSigDiff``.

Oracles:

* a brute force written here with plain loops: every pair of items of every group, each
  metric's verdict (sign, 0 within its epsilon), the hybrid tables of a mask built
  explicitly, and the Kendall variant counted from them;
* the exact enumeration of all 2^12 masks of 2 inputs x 4 systems;
* mt-metrics-eval's own functions (``KendallVariants`` on ``PairwiseDiffs.Combine`` hybrids,
  ``KendallWithTiesOpt``, ``PairwisePermutationSigDiff``) when its source is found: set
  ``XCORRSTAT_MTME_SOURCE`` to a checkout of google-research/mt-metrics-eval (the folder
  holding ``mt_metrics_eval/``); those tests are skipped otherwise.
"""

from __future__ import annotations

import dataclasses
import itertools
import math

import warnings

import numpy as np
import pytest
import xarray as xr
from mtme_source import mtme_modules

import xcorrstat
from xcorrstat._kernels.mt.pair_outcomes import (hybrid_deltas, packed_bits, pair_quantities,
                                                 prepare_pair_outcomes)
from xcorrstat._resampling.draws import DRAW_BLOCK, keyed_generator, permutation_masks
from xcorrstat._significance.pairoutcome import _STREAM, PAIR_KEY, pair_swap_bits, pair_swap_words

LEVEL_GROUPS = {"input": "item", "within_system": "sys", "global": "none"}


# ----------------------------------------------------------------------------- brute force


def groups_of(a: np.ndarray, level: str) -> np.ndarray:
    """(G, n) groups of an (S, I) matrix: inputs' systems, systems' inputs, or all cells (system-major)."""
    if level == "input":
        return a.T
    if level == "within_system":
        return a
    return a.reshape(1, -1)


def verdict(d: float, eps: float) -> int:
    return 0 if abs(d) <= eps else (1 if d > 0 else -1)


def variant_of_table(vm: list[int], vz: list[int], variant: str, exact_untied: int) -> float:
    """A Kendall variant from a list of metric verdicts and target signs (one per pair)."""
    n = len(vm)
    con = sum(1 for a, b in zip(vm, vz) if a == b != 0)
    dis = sum(1 for a, b in zip(vm, vz) if a * b < 0)
    both = sum(1 for a, b in zip(vm, vz) if a == b == 0)
    tm = sum(1 for a in vm if a == 0)
    tz = sum(1 for b in vz if b == 0)
    if variant == "acc23":
        return (con + both) / n
    if variant == "23":
        return (con + both - (n - con - both)) / n
    if tz == n or (variant == "b" and tm == n) or (variant == "a" and exact_untied == 0):
        return math.nan
    if variant == "b":
        return (con - dis) / math.sqrt(n - tm) / math.sqrt(n - tz)
    return (con - dis) / n


def brute_delta(x, y, z, ex, ey, bits, *, level, variant, min_pairs=3) -> float:
    """delta' of one mask (bits over all pairs g * P + k of the full grid, row-major a < b)."""
    gx, gy, gz = groups_of(x, level), groups_of(y, level), groups_of(z, level)
    n = gz.shape[1]
    per = n * (n - 1) // 2
    cx, cy = [], []
    for g in range(gz.shape[0]):
        hx, hy, vz, ux, uy = [], [], [], 0, 0
        for k, (a, b) in enumerate(itertools.combinations(range(n), 2)):
            if np.isnan(gz[g, a]) or np.isnan(gz[g, b]):
                continue
            vx, vy = verdict(gx[g, a] - gx[g, b], ex), verdict(gy[g, a] - gy[g, b], ey)
            nx, ny = gx[g, a] != gx[g, b], gy[g, a] != gy[g, b]
            swap = bits[g * per + k]
            hx.append(vy if swap else vx)
            hy.append(vx if swap else vy)
            ux += int(ny if swap else nx)
            uy += int(nx if swap else ny)
            vz.append(int(np.sign(gz[g, a] - gz[g, b])))
        items = int((~np.isnan(gz[g])).sum())
        if items < max(min_pairs, 2):
            continue
        cx.append(variant_of_table(hx, vz, variant, ux))
        cy.append(variant_of_table(hy, vz, variant, uy))
    mx = np.nanmean(cx) if np.any(~np.isnan(cx)) else math.nan
    my = np.nanmean(cy) if np.any(~np.isnan(cy)) else math.nan
    return mx - my


def dataset(x, y, z, **more) -> xr.Dataset:
    dims = ("system", "input")
    s, i = z.shape
    coords = {"system": [f"s{k}" for k in range(s)], "input": [f"i{k}" for k in range(i)]}
    data = {"mx": (dims, x), "my": (dims, y), "human": (dims, z), **{k: (dims, v) for k, v in more.items()}}
    ds = xr.Dataset(data, coords=coords)
    ds["human"].attrs["role"] = "human"
    return ds


def tied_scores(seed: int, s: int, i: int, nan_cells: int = 0):
    """Metrics with near-ties on different scales and a target with many exact ties."""
    g = np.random.default_rng(seed)
    z = g.integers(-3, 1, (s, i)).astype(float)
    x = z + g.normal(0, 1.2, (s, i))
    y = 10.0 * np.round(z + g.normal(0, 1.0, (s, i)), 1)
    if nan_cells:
        z.ravel()[g.choice(s * i, nan_cells, replace=False)] = np.nan
    return x, y, z


# ----------------------------------------------------------------------------- (1) hybrid statistic


@pytest.mark.parametrize("level", ["input", "within_system", "global"])
@pytest.mark.parametrize("variant", ["acc23", "23", "b", "a"])
def test_draws_equal_brute_force_hybrid_tables(level, variant):
    x, y, z = tied_scores(1, 5, 6, nan_cells=4)
    x[0, :] = x[0, 0]  # a constant stretch: exact metric ties
    ds = dataset(x, y, z)
    ex, ey = 0.3, 4.0
    res = xcorrstat.permutation_test(ds, x="mx", y="my", target="human", level=level, method="kendall",
                                     variant=variant,
                                     test=xcorrstat.Permutation(swap="pairs", epsilon={"mx": ex, "my": ey},
                                                                n_resamples=12, rng=5, keep_distribution=True))
    gz = groups_of(z, level)
    total = gz.shape[0] * gz.shape[1] * (gz.shape[1] - 1) // 2
    bits = pair_swap_bits(5, np.arange(12), 0, total)
    expected = [brute_delta(x, y, z, ex, ey, bits[r], level=level, variant=variant) for r in range(12)]
    np.testing.assert_allclose(res["distribution"].values, expected, rtol=0, atol=1e-12)
    observed = brute_delta(x, y, z, ex, ey, np.zeros(total, int), level=level, variant=variant)
    assert float(res["delta"]) == pytest.approx(observed, abs=1e-12)


@pytest.mark.parametrize("variant", ["acc23", "b"])
def test_kernel_explicit_masks_and_blocks_of_pairs(variant):
    g = np.random.default_rng(2)
    x = np.round(g.normal(size=(3, 7, 5)), 1)
    z = g.integers(0, 3, (7, 5)).astype(float)
    z[2, 1] = np.nan
    eps = np.array([0.0, 0.15, 0.4])
    masks = g.integers(0, 2, (9, 7 * 10)).astype(np.uint8)
    bits = packed_bits(masks)
    pi, pk = np.array([0, 0, 1, 2]), np.array([1, 2, 2, 0])
    ref = None
    for max_pairs in (3, 10, 25, 1000):  # a block is part of a group, one group or several
        p = prepare_pair_outcomes(x, z, eps, variant=variant, max_pairs=max_pairs)
        got = hybrid_deltas(p, np.arange(9), bits, pi, pk)
        ref = got if ref is None else ref
        np.testing.assert_array_equal(got, ref)  # exact sums: bit for bit
    for j, (i, k) in enumerate(zip(pi, pk)):
        for r in range(9):
            want = brute_delta(x[i].T, x[k].T, z.T, eps[i], eps[k], masks[r], level="input", variant=variant)
            assert ref[j, r] == pytest.approx(want, abs=1e-12)


@pytest.mark.parametrize("level", ["input", "within_system", "global"])
@pytest.mark.parametrize("variant", ["acc23", "23", "b", "a"])
def test_correlation_is_the_metrics_own_statistic(level, variant):
    x, y, z = tied_scores(4, 5, 7)
    ds = dataset(x, y, z)
    eps = {"mx": 0.25, "my": 3.0}
    res = xcorrstat.compare(ds, target="human", level=level, method="kendall", variant=variant,
                            test=xcorrstat.Permutation(swap="pairs", epsilon=eps, n_resamples=5, rng=0))
    for name, e in eps.items():
        r = xcorrstat.correlate(ds, target="human", metrics=[name], level=level, method="kendall",
                                variant=variant, epsilon=e)
        assert float(res["correlation"].sel(metric=name)) == pytest.approx(float(r.squeeze()), abs=1e-12)


def test_calibrated_epsilon_is_calibrate_ties():
    x, y, z = tied_scores(6, 6, 9, nan_cells=3)
    ds = dataset(x, y, z)
    res = xcorrstat.compare(ds, target="human", level="input", method="kendall", variant="acc23",
                            test=xcorrstat.Permutation(swap="pairs", n_resamples=5, rng=0))
    cal = xcorrstat.calibrate_ties(ds, target="human", metrics=["mx", "my"], level="input")
    np.testing.assert_array_equal(res["epsilon"].values, cal["epsilon"].values)
    np.testing.assert_allclose(res["correlation"].values, cal["correlation"].values, atol=1e-12)
    assert res.attrs["epsilon"] == "calibrate" and res.attrs["swap"] == "pairs"
    assert res.attrs["average_by"] == "item" and res.attrs["scheme"] == "PERM-PAIRS"


# ----------------------------------------------------------------------------- (2) exact enumeration


def _enumerated_pvalue(x, y, z, variant) -> float:
    masks = np.array(list(itertools.product([0, 1], repeat=12)))
    deltas = np.array([brute_delta(x, y, z, 0.0, 0.0, m, level="input", variant=variant, min_pairs=2)
                       for m in masks])
    observed = deltas[0]  # no swap
    return float(np.mean(deltas >= observed - 1e-12))


@pytest.mark.parametrize("variant", ["acc23", "b"])
def test_pvalue_matches_exact_enumeration(variant):
    x = np.array([[0.1, 1.0], [0.5, 0.2], [0.3, 0.9], [0.8, 0.4]])
    y = np.array([[0.2, 0.6], [0.1, 0.7], [0.9, 0.5], [0.4, 0.3]])
    z = np.array([[1.0, 2.0], [2.0, 1.0], [2.0, 3.0], [3.0, 1.0]])  # 4 systems x 2 inputs: 12 pairs
    exact = _enumerated_pvalue(x, y, z, variant)
    n = 4000
    res = xcorrstat.permutation_test(dataset(x, y, z), x="mx", y="my", target="human", level="input",
                                     method="kendall", variant=variant,
                                     test=xcorrstat.Permutation(swap="pairs", epsilon=0, n_resamples=n, rng=11,
                                                                pvalue="fraction"),
                                     min_pairs=2)
    assert 0.05 < exact < 0.95
    assert abs(float(res["pvalue"]) - exact) <= 4.5 * math.sqrt(exact * (1 - exact) / n)


# ----------------------------------------------------------------------------- (4) draws keyed by id


def test_swap_bits_do_not_depend_on_blocks():
    whole = pair_swap_bits(3, np.arange(600), 0, 20_000)
    parts = np.concatenate([pair_swap_bits(3, np.arange(600), a, b) for a, b in ((0, 5), (5, 8191), (8191, 20_000))],
                           axis=1)
    np.testing.assert_array_equal(whole, parts)
    np.testing.assert_array_equal(pair_swap_bits(3, [599, 7], 100, 200), whole[[599, 7], 100:200])
    assert 0.45 < whole.mean() < 0.55
    assert not np.array_equal(whole[0], whole[256])


def test_packed_swap_bits_are_the_swap_bits():
    """The kernels' packed bits (raw 64-bit outputs read as bytes) unpack to the bits of ``integers``, stream
    by stream; and the unpacked bits are the packed ones: draws in two blocks, out of order, keys cut by the
    calls, a cache carried from call to call."""
    whole = np.zeros((600, 3 * PAIR_KEY), dtype=np.uint8)  # the definition: integers(0, 256, uint8), unpacked
    for block in range(3):
        for key in range(3):
            g = keyed_generator(3, _STREAM, block, key)
            stream = np.unpackbits(g.integers(0, 256, size=(DRAW_BLOCK, PAIR_KEY // 8), dtype=np.uint8), axis=1)
            rows = slice(block * DRAW_BLOCK, min((block + 1) * DRAW_BLOCK, 600))
            whole[rows, key * PAIR_KEY:(key + 1) * PAIR_KEY] = stream[:rows.stop - rows.start]
    np.testing.assert_array_equal(pair_swap_bits(3, np.arange(600), 0, 3 * PAIR_KEY), whole)
    cache: dict = {}
    for ids in (np.arange(600), np.array([599, 7, 300]), np.arange(250, 260)):
        for k0, k1 in ((0, 3), (1, 2), (2, 3)):
            words = pair_swap_words(3, ids, k0, k1, cache=cache)
            assert words.shape == (ids.size, k1 - k0, PAIR_KEY // 8)
            np.testing.assert_array_equal(np.unpackbits(words.reshape(ids.size, -1), axis=1),
                                          whole[ids, k0 * PAIR_KEY:k1 * PAIR_KEY])


@pytest.mark.parametrize("variant", ["acc23", "23", "b", "a"])
@pytest.mark.parametrize("max_pairs", [100, 1 << 15])
def test_compiled_packing_equals_the_numpy_quantities(variant, max_pairs):
    """The packed pairs where each quantity is 1 and -1 (a compiled loop) are those of ``pair_quantities``
    (the NumPy form), pair by pair, and the group sums are its sums; ties, a missing target score."""
    g = np.random.default_rng(9)
    x = np.round(g.normal(size=(3, 4, 30)), 1)
    z = g.integers(0, 3, (4, 30)).astype(float)
    z[1, 3] = np.nan
    eps = np.array([0.0, 0.1, 0.3])
    p = prepare_pair_outcomes(x, z, eps, variant=variant, max_pairs=max_pairs)
    per = 30 * 29 // 2
    groups = np.repeat(np.arange(4), per)
    a, b = np.tile(np.triu_indices(30, 1)[0], 4), np.tile(np.triu_indices(30, 1)[1], 4)
    q = pair_quantities(x, z, eps, groups, a, b, variant)  # (pairs, C)
    plus, minus = np.zeros(q.shape, bool), np.zeros(q.shape, bool)
    for blk in p.cached:  # every pair in the first key: each block's bits where its own pairs are
        assert blk.k0 == 0
        for flags, words in ((plus, blk.plus), (minus, blk.minus)):
            bits = np.unpackbits(np.ascontiguousarray(words.transpose(2, 0, 1)).view(np.uint8), axis=-1)
            flags |= bits.reshape(q.shape[1], -1)[:, :q.shape[0]].T.astype(bool)
    np.testing.assert_array_equal(plus, q > 0)
    np.testing.assert_array_equal(minus, q < 0)
    np.testing.assert_array_equal(p.sums, q.reshape(4, per, -1).sum(axis=1, dtype=np.float64))


@pytest.mark.parametrize("variant", ["acc23", "b"])
def test_packed_blocks_cut_anywhere(variant):
    """Groups whose pairs start and end inside words and keys (and blocks cut inside a group): the packed
    sums of the kernel equal the sums of the unpacked masks, pair by pair."""
    g = np.random.default_rng(4)
    x = np.round(g.normal(size=(2, 3, 140)), 1)  # 3 groups of 9,730 pairs: past a key, not on a word
    z = g.integers(0, 4, (3, 140)).astype(float)
    z[1, :7] = np.nan
    n_pairs = 3 * 140 * 139 // 2
    masks = g.integers(0, 2, (5, 4 * PAIR_KEY)).astype(np.uint8)
    bits = packed_bits(masks)
    ref = None
    for max_pairs in (1000, 9730, 1 << 15):
        p = prepare_pair_outcomes(x, z, np.array([0.05, 0.2]), variant=variant, max_pairs=max_pairs)
        got = hybrid_deltas(p, np.arange(5), bits, np.array([0]), np.array([1]))
        ref = got if ref is None else ref
        np.testing.assert_array_equal(got, ref)
    for r in range(5):
        want = brute_delta(x[0].T, x[1].T, z.T, 0.05, 0.2, masks[r, :n_pairs], level="input", variant=variant)
        assert ref[0, r] == pytest.approx(want, abs=1e-12)


@pytest.mark.parametrize("variant", ["acc23", "b"])
def test_batch_invariance_and_prefix_property(variant):
    x, y, z = tied_scores(9, 4, 5, nan_cells=2)
    ds = dataset(x, y, z, mw=x + y)
    kw = dict(target="human", level="input", method="kendall", variant=variant)
    draws = dict(swap="pairs", epsilon=0.1, rng=4, keep_distribution=True)
    test = xcorrstat.Permutation(n_resamples=600, **draws)
    ref = xcorrstat.compare(ds, test=test, **kw)["distribution"].values
    for batch in (1, 7, 300):
        with xcorrstat.set_options(batch=batch):
            got = xcorrstat.compare(ds, test=test, **kw)["distribution"].values
        np.testing.assert_array_equal(got, ref)
    for n in (1, 255, 257):
        got = xcorrstat.compare(ds, test=xcorrstat.Permutation(n_resamples=n, **draws), **kw)["distribution"].values
        np.testing.assert_array_equal(got, ref[..., :n])


# ----------------------------------------------------------------------------- (5) compare = two-metric test


@pytest.mark.parametrize("variant", ["acc23", "23", "b", "a"])
def test_compare_equals_permutation_test_per_pair(variant):
    g = np.random.default_rng(7)
    x, y, z = tied_scores(7, 5, 8, nan_cells=3)
    ds = dataset(x, y, z, mw=np.round(x - 0.5 * y, 1) + g.normal(0, 0.01, x.shape))
    eps = {"mx": 0.2, "my": 2.0, "mw": 0.05}
    common = dict(target="human", level="input", method="kendall", variant=variant,
                  test=xcorrstat.Permutation(swap="pairs", epsilon=eps, n_resamples=300, rng=21),
                  alternative="two-sided")
    res = xcorrstat.compare(ds, **common)
    for a, b in itertools.permutations(eps, 2):
        one = xcorrstat.permutation_test(ds, x=a, y=b, **common)
        assert float(one["pvalue"]) == float(res["pvalue"].sel(metric=a, other_metric=b))
        assert float(one["delta"]) == float(res["delta"].sel(metric=a, other_metric=b))
        assert float(one["epsilon_x"]) == eps[a] and float(one["epsilon_y"]) == eps[b]


def test_extra_dims_are_compared_label_by_label():
    x, y, z = tied_scores(8, 4, 6)
    x2, y2, z2 = tied_scores(9, 4, 6)
    one = dataset(x, y, z)
    two = dataset(x2, y2, z2)
    both = xr.concat([one, two], dim=xr.DataArray(["p", "q"], dims="lp", name="lp"))
    kw = dict(target="human", level="input", method="kendall", variant="acc23",
              test=xcorrstat.Permutation(swap="pairs", n_resamples=50, rng=3))
    res = xcorrstat.compare(both, **kw)
    for label, ds in (("p", one), ("q", two)):
        alone = xcorrstat.compare(ds, **kw)
        np.testing.assert_array_equal(res["pvalue"].sel(lp=label).values, alone["pvalue"].values)
        np.testing.assert_array_equal(res["epsilon"].sel(lp=label).values, alone["epsilon"].values)


# ----------------------------------------------------------------------------- swap="scores", per-draw calibration


def brute_calibrated(x: np.ndarray, z: np.ndarray, level: str) -> float:
    """The best group-averaged acc_eq over every candidate threshold (0 and each |metric difference|)."""
    gx, gz = groups_of(x, level), groups_of(z, level)
    pairs = [[(gx[g, a] - gx[g, b], np.sign(gz[g, a] - gz[g, b]))
              for a, b in itertools.combinations(range(gz.shape[1]), 2)
              if not (np.isnan(gz[g, a]) or np.isnan(gz[g, b]))] for g in range(gz.shape[0])]
    pairs = [p for p in pairs if p]
    best = -1.0
    for eps in {0.0} | {abs(d) for p in pairs for d, _ in p}:
        best = max(best, float(np.mean([np.mean([verdict(d, eps) == s for d, s in p]) for p in pairs])))
    return best


def zscored(a: np.ndarray) -> np.ndarray:
    return (a - np.nanmean(a)) / np.nanstd(a)


@pytest.mark.parametrize("level", ["input", "within_system", "global"])
def test_recalibrated_score_draws_equal_brute_force(level):
    x, _, z = tied_scores(14, 4, 5, nan_cells=2)
    y = z + np.random.default_rng(1).normal(0, 1.0, z.shape)  # no near-equal differences: z-scores keep the order
    res = xcorrstat.permutation_test(dataset(x, y, z), x="mx", y="my", target="human", level=level,
                                     method="kendall", variant="acc23",
                                     test=xcorrstat.Permutation(epsilon="calibrate", n_resamples=6, rng=8,
                                                                keep_distribution=True))
    zx, zy = zscored(x), zscored(y)
    assert float(res["delta"]) == pytest.approx(brute_calibrated(x, z, level) - brute_calibrated(y, z, level),
                                                abs=1e-12)
    for r, m in enumerate(permutation_masks(8, np.arange(6), 4, 5, "cells")):
        want = brute_calibrated(np.where(m, zy, zx), z, level) - brute_calibrated(np.where(m, zx, zy), z, level)
        assert float(res["distribution"][r]) == pytest.approx(want, abs=1e-12)
    assert res.attrs["swap"] == "scores" and res.attrs["epsilon"] == "calibrate in every draw"


def test_recalibrated_score_draws_are_keyed_by_id():
    x, y, z = tied_scores(15, 4, 5)
    kw = dict(x="mx", y="my", target="human", level="input", method="kendall", variant="acc23")
    draws = dict(epsilon="calibrate", rng=1, keep_distribution=True, permute="system")
    ref = xcorrstat.permutation_test(dataset(x, y, z), test=xcorrstat.Permutation(n_resamples=300, **draws),
                                     **kw)["distribution"].values
    with xcorrstat.set_options(batch=7):
        got = xcorrstat.permutation_test(dataset(x, y, z), test=xcorrstat.Permutation(n_resamples=260, **draws),
                                         **kw)["distribution"].values
    np.testing.assert_array_equal(got, ref[:260])


# ----------------------------------------------------------------------------- (6) bad options


@pytest.mark.parametrize("kwargs, match", [
    (dict(level="system"), r"^permutation_test\(test=Permutation\(swap='pairs'\)\): level='system' is not supported.*swap='scores'"),
    (dict(method="pearson"), "method='pearson' is not supported; it supports method 'kendall'"),
    (dict(variant="c"), "tau-c"),
    (dict(permute="system"), "permute"),
    (dict(standardise="system-means"), "standardise"),
    (dict(early_stop=0.05), "early_stop"),
    (dict(variant="b", epsilon="calibrate"), "variant 'acc23' or '23'"),
    (dict(epsilon=-1.0), "epsilon must be a finite number >= 0"),
    (dict(epsilon="auto"), "epsilon must be a number >= 0, 'calibrate'"),
    (dict(epsilon={"mx": 0.1}), r"no threshold for metric\(s\) \['my'\]"),
    (dict(swap="cells"), "swap must be one of"),
    (dict(swap="scores", epsilon=0.1), "epsilon=0.1 is an option of swap='pairs'"),
])
def test_bad_options_raise(kwargs, match):
    x, y, z = tied_scores(0, 4, 5)
    opts = dict(level="input", method="kendall", variant="acc23", swap="pairs", n_resamples=10, rng=0)
    opts.update(kwargs)
    fields = {f.name for f in dataclasses.fields(xcorrstat.Permutation)}
    with pytest.raises(ValueError, match=match):
        test = xcorrstat.Permutation(**{k: opts.pop(k) for k in list(opts) if k in fields})
        xcorrstat.permutation_test(dataset(x, y, z), x="mx", y="my", target="human", test=test, **opts)


def test_bad_compare_options_and_missing_metric_scores():
    x, y, z = tied_scores(0, 4, 5)
    ds = dataset(x, y, z)
    with pytest.raises(ValueError, match="re-calibrates in every draw"):
        xcorrstat.compare(ds, target="human", method="kendall", level="input", variant="acc23",
                          test=xcorrstat.Permutation(epsilon="calibrate"))
    with pytest.raises(ValueError, match=r"^permutation_test\(test=Permutation\(epsilon='calibrate'\)\): level='system' is not "
                                         "supported; it supports level 'input', 'within_system' or 'global'"):
        xcorrstat.permutation_test(ds, x="mx", y="my", target="human", method="kendall", level="system",
                                   test=xcorrstat.Permutation(epsilon="calibrate"))
    with pytest.raises(ValueError, match=r"no dim the scores lack"):
        xcorrstat.compare(ds, target="human", method="kendall", level="input",
                          test=xcorrstat.Permutation(swap="pairs", epsilon=xr.DataArray([0.1, 0.2], dims="lp")))
    x[1, 2] = np.nan
    with pytest.raises(ValueError, match=r"metric\(s\) \['mx'\] miss 1 such cell"):
        xcorrstat.compare(dataset(x, y, z), target="human", method="kendall", level="input",
                          test=xcorrstat.Permutation(swap="pairs"), common_cells=False)
    # on common ground (the default) the cell mx lacks is left out of every metric and said in a note
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = xcorrstat.compare(dataset(x, y, z), target="human", method="kendall", level="input",
                                test=xcorrstat.Permutation(swap="pairs", n_resamples=20, rng=0))
    assert any("mx" in note and "lacks" in note for note in res.attrs["notes"]), res.attrs.get("notes")
    z[1, 2] = np.nan  # no target score there: the cell is left out
    res = xcorrstat.compare(dataset(x, y, z), target="human", method="kendall", level="input",
                            test=xcorrstat.Permutation(swap="pairs", n_resamples=20, rng=0,
                                                       epsilon=xr.DataArray([0.1, 0.2], dims="metric",
                                                                            coords={"metric": ["my", "mx"]})))
    assert res["epsilon"].values.tolist() == [0.2, 0.1]
    assert res.attrs["epsilon"] == "given per metric"


# ----------------------------------------------------------------------------- (3) mt-metrics-eval itself


def _mtme():
    (stats,) = mtme_modules("stats")
    return stats


def _as_list(a: np.ndarray) -> list:
    return [None if np.isnan(v) else float(v) for v in a.ravel()]


@pytest.mark.parametrize("level", ["input", "within_system", "global"])
@pytest.mark.parametrize("variant", ["acc23", "23", "b"])
def test_mtme_hybrid_delta_and_epsilon(level, variant):
    stats = _mtme()
    x, y, z = tied_scores(12, 4, 6, nan_cells=3)
    ds = dataset(x, y, z)
    avg = LEVEL_GROUPS[level]
    ours = xcorrstat.permutation_test(ds, x="mx", y="my", target="human", level=level, method="kendall",
                                      variant=variant,
                                      test=xcorrstat.Permutation(swap="pairs", n_resamples=6, rng=2,
                                                                 keep_distribution=True),
                                      min_pairs=2)
    ex, ey = float(ours["epsilon_x"]), float(ours["epsilon_y"])
    if variant != "b":
        for scores, eps in ((x, ex), (y, ey)):
            _, theirs, opt = stats.KendallWithTiesOpt(_as_list(z), _as_list(scores), variant, 4, avg, 1.0)
            # the same optimum; where several thresholds reach it (up to rounding), xcorrstat takes the
            # smallest and mt-metrics-eval the one its running float sum makes largest
            curve = dict(zip(opt.thresholds, opt.taus))
            assert eps <= theirs and curve[eps] == pytest.approx(opt.best_tau, abs=1e-12)
    corr_y = stats.Correlation(4, _as_list(z), _as_list(y))  # mt-metrics-eval's metric1: delta = c(metric2) - c(metric1)
    corr_x = stats.Correlation(4, _as_list(z), _as_list(x))
    k = 0
    _, delta, _, _ = stats.PairwisePermutationSigDiff(corr_y, corr_x, variant, avg, k, epsilon1=ey, epsilon2=ex)
    assert float(ours["delta"]) == pytest.approx(delta, abs=1e-12)
    # each draw through mt-metrics-eval's own hybrid tables (PairwiseDiffs.Combine + KendallVariants)
    lens, gold, s_y, s_x = stats._ReshapeAndFilter(corr_y, corr_x, avg)
    full = groups_of(z, level)
    n = full.shape[1]
    per = n * (n - 1) // 2
    total = full.shape[0] * per
    bits = pair_swap_bits(2, np.arange(6), 0, total)
    for r in range(6):
        hybrid_x, hybrid_y, golds, start = [], [], [], 0
        for g, row in enumerate(full):
            keep = np.flatnonzero(~np.isnan(row))
            if keep.size == 0:
                continue
            b, e = start, start + keep.size
            start = e
            w = np.zeros((keep.size, keep.size), dtype=np.int64)  # integer weights, as mt-metrics-eval draws them
            for i, j in itertools.combinations(range(keep.size), 2):
                a_, b_ = keep[i], keep[j]
                w[i, j] = w[j, i] = bits[r][g * per + a_ * n - a_ * (a_ + 1) // 2 + (b_ - a_ - 1)]
            keep_x = 1 - w  # 1 where x keeps its own verdict
            px, py = stats.PairwiseDiffs(s_x[b:e], ex), stats.PairwiseDiffs(s_y[b:e], ey)
            hybrid_x.append(px.Combine(py, keep_x, 1 - keep_x))
            hybrid_y.append(py.Combine(px, keep_x, 1 - keep_x))
            golds.append(stats.KendallPreproc(gold[b:e]))

        def mean(tables):
            vals = [stats.KendallVariants(None, None, variant, gp, 0, t)[0] for gp, t in zip(golds, tables)]
            vals = np.asarray(vals)[~np.isnan(vals)]
            return np.average(vals)

        assert float(ours["distribution"][r]) == pytest.approx(mean(hybrid_x) - mean(hybrid_y), abs=1e-12)


@pytest.mark.parametrize("level, variant", [("input", "acc23"), ("global", "acc23"), ("input", "b")])
def test_mtme_pvalues_agree_within_monte_carlo_error(level, variant):
    stats = _mtme()
    x, y, z = tied_scores(23, 4, 6, nan_cells=2)
    x = 0.2 * np.round(5 * x)  # exact ties; a close pair: p away from 0 and 1
    ds = dataset(x, y, z)
    avg = LEVEL_GROUPS[level]
    k_mtme, k_ours = 1500, 6000
    corr_y = stats.Correlation(4, _as_list(z), _as_list(y))
    corr_x = stats.Correlation(4, _as_list(z), _as_list(x))
    np.random.seed(17)
    _, delta, _, corrs = stats.PairwisePermutationSigDiff(
        corr_y, corr_x, variant, avg, k_mtme, stats.PermutationSigDiffParams(block_size=k_mtme),
        epsilon1=None if variant != "b" else 0.0, epsilon2=None if variant != "b" else 0.0)
    # mt-metrics-eval counts c2 - c1 >= delta in floating point, which drops some draws equal to delta
    # (many, with few pairs per group); xcorrstat counts draws within 1e-12 of delta as ties
    p_mtme = float(np.mean([c2 - c1 >= delta - 1e-12 for c2, c1 in corrs]))
    ours = xcorrstat.permutation_test(ds, x="mx", y="my", target="human", level=level, method="kendall",
                                      variant=variant,
                                      test=xcorrstat.Permutation(swap="pairs", n_resamples=k_ours, rng=3,
                                                                 pvalue="fraction"),
                                      min_pairs=2)
    assert float(ours["delta"]) == pytest.approx(delta, abs=1e-12)
    p = float(ours["pvalue"])
    assert 0.02 < p < 0.98
    se = math.sqrt(p * (1 - p) * (1 / k_mtme + 1 / k_ours))
    assert abs(p - p_mtme) <= 4 * se + 1 / k_mtme


@pytest.mark.parametrize("level", ["input", "global"])
def test_mtme_recalibrated_score_test(level):
    stats = _mtme()
    x, y, z = tied_scores(23, 4, 6, nan_cells=2)
    x = 0.2 * np.round(5 * x)
    avg = LEVEL_GROUPS[level]
    k_mtme, k_ours = 400, 3000
    np.random.seed(5)
    _, delta, _, corrs = stats.PermutationSigDiff(
        stats.Correlation(4, _as_list(z), _as_list(y)), stats.Correlation(4, _as_list(z), _as_list(x)), stats.KendallWithTiesOpt,
        avg, k_mtme, stats.PermutationSigDiffParams(block_size=k_mtme), sample_rate=1.0)
    p_mtme = float(np.mean([c2 - c1 >= delta - 1e-12 for c2, c1 in corrs]))  # ties counted as xcorrstat does
    ours = xcorrstat.permutation_test(dataset(x, y, z), x="mx", y="my", target="human", level=level,
                                      method="kendall", variant="acc23",
                                      test=xcorrstat.Permutation(epsilon="calibrate", n_resamples=k_ours, rng=3,
                                                                 pvalue="fraction"))
    assert float(ours["delta"]) == pytest.approx(delta, abs=1e-12)
    p = float(ours["pvalue"])
    assert 0.02 < p < 0.98
    assert abs(p - p_mtme) <= 4 * math.sqrt(p * (1 - p) * (1 / k_mtme + 1 / k_ours)) + 1 / k_mtme
