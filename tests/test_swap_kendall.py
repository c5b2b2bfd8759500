"""Swapped input-level Kendall variants with epsilon ties, against pair-by-pair counting and scipy."""

import itertools
import warnings

import numpy as np
import pytest
from oracles import kendall_counts, kendall_from_counts
from scipy import stats

from xcorrstat._kernels.rank import input_swap as swap_kendall
from xcorrstat._kernels.rank.input_swap import input_kendall_swap, input_kendall_swap_means
from xcorrstat._kernels.linear.forms import mask_products, pair_incidence


def _oracle(x, y, z, masks, eps, variant, min_pairs):
    """Swap explicitly, then count every pair of every input: (2, I, B)."""
    s, i = x.shape
    out = np.full((2, i, len(masks)), np.nan)
    for b, m in enumerate(masks):
        for which in (0, 1):
            src = np.where(m, 1, 0) if which == 0 else np.where(m, 0, 1)  # X' takes Y where m
            vals = np.where(src == 1, y, x)
            for j in range(i):
                rows = [a for a in range(s) if not np.isnan(vals[a, j]) and not np.isnan(z[a, j])]
                if len(rows) < max(min_pairs, 2):
                    continue
                counts = kendall_counts((vals[a, j] - vals[a2, j], z[a, j] - z[a2, j], eps[src[a, j], src[a2, j]])
                                        for a, a2 in itertools.combinations(rows, 2))
                out[which, j, b] = kendall_from_counts(*counts, variant)
    return out


def _data(seed, s, i, *, levels=4, nan_frac=0.0):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, levels, (s, i)) / 2.0
    y = rng.integers(0, levels, (s, i)) / 2.0 + 0.25 * rng.integers(0, 2, (s, i))
    z = rng.integers(0, 3, (s, i)).astype(float)
    if nan_frac == "own":  # X and Y each missing in cells of their own (the valid pairs change with the draw)
        x[rng.random((s, i)) < 0.2] = np.nan
        y[rng.random((s, i)) < 0.2] = np.nan
        z[rng.random((s, i)) < 0.1] = np.nan
    elif nan_frac:
        miss = rng.random((s, i)) < nan_frac
        x[miss] = np.nan
        y[miss] = np.nan
        z[rng.random((s, i)) < nan_frac / 2] = np.nan
    masks = rng.random((12, s, i)) < 0.5
    return x, y, z, masks


@pytest.mark.parametrize("variant", ["a", "b", "23", "acc23"])
@pytest.mark.parametrize("eps", [0.0, 0.25, 0.5, "mixed"])
@pytest.mark.parametrize("nan_frac", [0.0, 0.2, "own"])
def test_matches_pair_counting(variant, eps, nan_frac):
    x, y, z, masks = _data(3, 7, 9, nan_frac=nan_frac)
    eps_m = np.array([[0.25, 0.5], [0.5, 0.0]]) if eps == "mixed" else np.full((2, 2), eps)
    run = input_kendall_swap(x[None], y[None], z[None], min_pairs=3, variant=variant, eps=eps_m[None])
    rx, ry = run(masks)
    expected = _oracle(x, y, z, masks, eps_m, variant, 3)
    np.testing.assert_allclose(rx[0], expected[0], atol=1e-12, equal_nan=True)
    np.testing.assert_allclose(ry[0], expected[1], atol=1e-12, equal_nan=True)


def test_many_pairs_route_and_batching():
    # 9 metric pairs at once take the outer-product GEMM route; draws are independent of the batch
    rng = np.random.default_rng(8)
    x = rng.integers(0, 3, (9, 6, 5)).astype(float)
    y = rng.integers(0, 3, (9, 6, 5)).astype(float)
    z = rng.integers(0, 3, (9, 6, 5)).astype(float)
    masks = rng.random((10, 6, 5)) < 0.5
    run = input_kendall_swap(x, y, z, min_pairs=2, variant="acc23", eps=0.0)
    rx, ry = run(masks)
    rx2, _ = run(masks[:3])
    np.testing.assert_array_equal(rx[..., :3], rx2)
    for p in (0, 4, 8):
        expected = _oracle(x[p], y[p], z[p], masks, np.zeros((2, 2)), "acc23", 2)
        np.testing.assert_allclose(rx[p], expected[0], atol=1e-12)
        np.testing.assert_allclose(ry[p], expected[1], atol=1e-12)


def test_identities_and_bad_input():
    x, y, z, masks = _data(5, 6, 7)
    acc = input_kendall_swap(x[None], y[None], z[None], min_pairs=2, variant="acc23", eps=0.5)(masks)
    t23 = input_kendall_swap(x[None], y[None], z[None], min_pairs=2, variant="23", eps=0.5)(masks)
    np.testing.assert_allclose(t23[0], 2 * acc[0] - 1, atol=1e-12)
    # with no swap (all-zero masks) X' is X: every draw equals the statistic of X itself
    none = np.zeros((2,) + x.shape, dtype=bool)
    rx, ry = input_kendall_swap(x[None], y[None], z[None], min_pairs=2, variant="acc23")(none)
    np.testing.assert_allclose(rx[0, :, 0], _oracle(x, y, z, none[:1], np.zeros((2, 2)), "acc23", 2)[0, :, 0])
    with pytest.raises(ValueError, match="variant must be one of"):
        input_kendall_swap(x[None], y[None], z[None], min_pairs=2, variant="c")
    with pytest.raises(ValueError, match="eps must be finite and >= 0"):
        input_kendall_swap(x[None], y[None], z[None], min_pairs=2, eps=-1.0)


@pytest.mark.parametrize("variant", ["a", "b", "23", "acc23"])
@pytest.mark.parametrize("level", ["input", "global"])
def test_permutation_test_variants_equal_explicit_swaps(variant, level):
    """permutation_test's draws (fast path at input level, swapped matrices elsewhere) equal
    the level statistic of the explicitly swapped standardised matrices, same masks."""
    from conftest import to_dataset

    import xcorrstat
    from xcorrstat._kernels import level_correlation
    from xcorrstat._resampling.draws import permutation_masks
    from xcorrstat._resampling.swapstats import standardise

    rng = np.random.default_rng(12)
    x = rng.integers(0, 4, (6, 7)).astype(float)
    y = rng.integers(0, 4, (6, 7)).astype(float)
    z = rng.integers(0, 3, (6, 7)).astype(float)
    res = xcorrstat.permutation_test(to_dataset(x, y, z), x="mx", y="my", target="human", level=level,
                                     method="kendall", variant=variant,
                                     test=xcorrstat.Permutation(n_resamples=40, rng=5, keep_distribution=True),
                                     min_pairs=2)
    masks = permutation_masks(5, np.arange(40), 6, 7, "cells")
    zx, zy = standardise(x), standardise(y)
    kw = dict(level=level, method="kendall", variant=variant, min_pairs=2)
    for r, m in enumerate(masks):
        xp, yp = np.where(m, zy, zx), np.where(m, zx, zy)
        expected = level_correlation(xp, z, **kw)[0] - level_correlation(yp, z, **kw)[0]
        np.testing.assert_allclose(float(res["distribution"][r]), expected, atol=1e-12, equal_nan=True)
    observed = level_correlation(x, z, **kw)[0] - level_correlation(y, z, **kw)[0]
    assert float(res["delta"]) == pytest.approx(float(observed), abs=1e-12)


def test_compare_takes_variants_with_the_permutation_and_bootstrap_tests():
    from conftest import make_scores

    import xcorrstat

    ds = make_scores(n_metrics=3, n_systems=6, n_inputs=8, seed=2, ties=True)
    res = xcorrstat.compare(ds, target="human", level="input", method="kendall", variant="acc23",
                            test=xcorrstat.Permutation(n_resamples=50, rng=0))
    one = xcorrstat.permutation_test(ds, x="m0", y="m2", target="human", level="input", method="kendall",
                                     variant="acc23", test=xcorrstat.Permutation(n_resamples=50, rng=0))
    assert float(res["pvalue"].sel(metric="m0", other_metric="m2")) == float(one["pvalue"])
    boot = xcorrstat.compare(ds, target="human", level="input", method="kendall", variant="acc23",
                             test=xcorrstat.Bootstrap(n_resamples=50, rng=0))
    pair = xcorrstat.paired_bootstrap_test(ds, x="m0", y="m2", target="human", level="input", method="kendall",
                                           variant="acc23", test=xcorrstat.Bootstrap(n_resamples=50, rng=0))
    assert float(boot["pvalue"].sel(metric="m0", other_metric="m2")) == float(pair["pvalue"])
    with pytest.raises(ValueError, match=r"compare\(test='williams'\): method='kendall' is not supported"):
        xcorrstat.compare(ds, target="human", method="kendall", variant="acc23", test="williams")
    with pytest.raises(ValueError, match="variant='acc23' is not supported with level='global' and method='kendall'"):
        xcorrstat.bootstrap(ds, target="human", level="global", method="kendall", variant="acc23")

def _scipy_means(x, y, z, masks, min_pairs):
    """tau-b of the explicitly swapped X' and Y' per input (scipy.stats.kendalltau on the valid systems),
    averaged over the inputs where it is defined: (2, B)."""
    i = x.shape[1]
    out = np.full((2, len(masks)), np.nan)
    for b, m in enumerate(masks):
        for which, vals in enumerate((np.where(m, y, x), np.where(m, x, y))):
            taus = []
            for j in range(i):
                rows = ~np.isnan(vals[:, j]) & ~np.isnan(z[:, j])
                if rows.sum() < max(min_pairs, 2):
                    continue
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    tau = stats.kendalltau(vals[rows, j], z[rows, j], variant="b").statistic
                if not np.isnan(tau):
                    taus.append(tau)
            out[which, b] = np.mean(taus) if taus else np.nan
    return out


def _mixed_pairs(seed, s, i, n_masks):
    """Four pairs of metrics: continuous (no metric tie), integer levels (ties), each complete and with
    missing cells shared by X and Y, and an integer target with its own gaps."""
    rng = np.random.default_rng(seed)
    x = np.stack([rng.normal(size=(s, i)), rng.integers(0, 3, (s, i)) / 2.0,
                  rng.normal(size=(s, i)), rng.integers(0, 4, (s, i)) / 2.0])
    y = np.stack([rng.normal(size=(s, i)), rng.integers(0, 3, (s, i)) / 2.0 + 0.25,
                  rng.normal(size=(s, i)), rng.integers(0, 4, (s, i)) / 2.0])
    z = rng.integers(0, 4, (4, s, i)).astype(float)
    miss = rng.random((4, s, i)) < 0.2
    miss[:2] = False
    x[miss] = np.nan
    y[miss] = np.nan
    z[2:][rng.random((2, s, i)) < 0.1] = np.nan
    z[:, :, 0] = 1.0  # a constant target: undefined tau-b on that input in every draw
    return x, y, z, rng.random((n_masks, s, i)) < 0.5


def test_means_equal_scipy_on_explicit_swaps():
    # tau-b means over the defined inputs; pairs with and without metric ties in one call
    x, y, z, masks = _mixed_pairs(4, 7, 11, 9)
    mx, my = input_kendall_swap_means(x, y, z, min_pairs=3, variant="b")(masks)
    for p in range(4):
        expected = _scipy_means(x[p], y[p], z[p], masks, 3)
        np.testing.assert_allclose(mx[p], expected[0], atol=1e-12, equal_nan=True)
        np.testing.assert_allclose(my[p], expected[1], atol=1e-12, equal_nan=True)


def test_means_over_every_mask_equal_scipy():
    # every one of the 2**6 masks of 3 systems x 2 inputs, metrics with ties; some draws make X' constant
    # on both inputs (no input defined: NaN)
    x = np.array([[0.0, 1.0], [1.0, 1.0], [1.0, 0.5]])
    y = np.array([[1.0, 0.5], [1.0, 0.5], [0.0, 1.0]])
    z = np.array([[0.0, 2.0], [1.0, 1.0], [2.0, 0.0]])
    masks = np.array(list(itertools.product([False, True], repeat=6))).reshape(64, 3, 2)
    mx, my = input_kendall_swap_means(x[None], y[None], z[None], min_pairs=2, variant="b")(masks)
    expected = _scipy_means(x, y, z, masks, 2)
    np.testing.assert_allclose(mx[0], expected[0], atol=1e-12, equal_nan=True)
    np.testing.assert_allclose(my[0], expected[1], atol=1e-12, equal_nan=True)
    assert np.isnan(expected).any() and not np.isnan(expected).all()  # both rules are reached


@pytest.mark.parametrize("variant", ["a", "b", "23", "acc23"])
def test_means_equal_pair_counting_and_input_order_sums(variant, monkeypatch):
    x, y, z, masks = _mixed_pairs(6, 6, 9, 7)
    eps = np.array([[0.0, 0.3], [0.3, 0.0]])
    mx, my = input_kendall_swap_means(x, y, z, min_pairs=3, variant=variant, eps=eps)(masks)
    for p in (0, 1, 3):  # against counting every pair of every explicitly swapped input
        per_input = _oracle(x[p], y[p], z[p], masks, eps, variant, 3)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = np.nanmean(per_input, axis=1)
        np.testing.assert_allclose(mx[p], expected[0], atol=1e-12, equal_nan=True)
        np.testing.assert_allclose(my[p], expected[1], atol=1e-12, equal_nan=True)
    # the means sum the per-input values input after input: the same floats as a sum along the inputs
    rx, ry = input_kendall_swap(x, y, z, min_pairs=3, variant=variant, eps=eps)(masks)
    for got, r in ((mx, rx), (my, ry)):
        total, count = np.zeros(got.shape), np.zeros(got.shape, dtype=int)
        for j in range(r.shape[1]):
            total += np.where(np.isnan(r[:, j]), 0.0, r[:, j])
            count += ~np.isnan(r[:, j])
        with np.errstate(invalid="ignore", divide="ignore"):
            np.testing.assert_array_equal(got, np.where(count > 0, total / count, np.nan))
    # blocks of one input and one pair change nothing, bit for bit
    monkeypatch.setattr(swap_kendall, "_RUN_CELLS", 1)
    monkeypatch.setattr(swap_kendall, "_PREP_CELLS", 1)
    small = input_kendall_swap_means(x, y, z, min_pairs=3, variant=variant, eps=eps)(masks)
    np.testing.assert_array_equal(small[0], mx)
    np.testing.assert_array_equal(small[1], my)
    np.testing.assert_array_equal(input_kendall_swap(x, y, z, min_pairs=3, variant=variant, eps=eps)(masks)[0], rx)


@pytest.mark.parametrize("variant", ["a", "b", "23", "acc23"])
def test_pairs_missing_in_cells_of_their_own(variant, monkeypatch):
    # a fifth pair whose X and Y miss different cells sends every pair through the gap forms: the four
    # pairs missing in the same cells keep their floats bit for bit, the fifth equals pair counting
    x, y, z, masks = _mixed_pairs(6, 6, 9, 7)
    rng = np.random.default_rng(1)
    x5, y5 = rng.integers(0, 4, (2, 6, 9)) / 2.0
    x5[rng.random((6, 9)) < 0.25] = np.nan
    y5[rng.random((6, 9)) < 0.25] = np.nan
    xs, ys, zs = np.concatenate([x, x5[None]]), np.concatenate([y, y5[None]]), np.concatenate([z, z[3:]])
    eps = np.array([[0.0, 0.3], [0.3, 0.0]])
    same = input_kendall_swap_means(x, y, z, min_pairs=3, variant=variant, eps=eps)(masks)
    mixed = input_kendall_swap_means(xs, ys, zs, min_pairs=3, variant=variant, eps=eps)(masks)
    for k in (0, 1):
        np.testing.assert_array_equal(mixed[k][:4], same[k])
    per_input = _oracle(x5, y5, z[3], masks, eps, variant, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = np.nanmean(per_input, axis=1)
    np.testing.assert_allclose(mixed[0][4], expected[0], atol=1e-12, equal_nan=True)
    np.testing.assert_allclose(mixed[1][4], expected[1], atol=1e-12, equal_nan=True)
    monkeypatch.setattr(swap_kendall, "_RUN_CELLS", 1)
    monkeypatch.setattr(swap_kendall, "_PREP_CELLS", 1)
    small = input_kendall_swap_means(xs, ys, zs, min_pairs=3, variant=variant, eps=eps)(masks)
    for k in (0, 1):
        np.testing.assert_array_equal(small[k], mixed[k])


def test_mask_products_and_pair_incidence():
    rng = np.random.default_rng(3)
    m = rng.random((4, 5, 3)) < 0.5  # B=4, S=5, I=3
    got = mask_products(np.transpose(m, (1, 2, 0)), out=np.empty((16, 3, 4), dtype=np.float32))
    for j, b in itertools.product(range(3), range(4)):
        row = [*m[b, :, j], 1] + [m[b, a, j] * m[b, c, j] for a, c in itertools.combinations(range(5), 2)]
        assert got[j, b].tolist() == [float(v) for v in row]
    v = rng.integers(-3, 4, (2, 20)).astype(float)  # per-pair values, then again per pair
    inc = pair_incidence(5)
    for row in range(2):
        expected = np.zeros(5)
        for k, (a, c) in enumerate(itertools.combinations(range(5), 2)):
            expected[a] += v[row, k]
            expected[c] += v[row, 10 + k]
        assert (v[row] @ inc).tolist() == expected.tolist()
