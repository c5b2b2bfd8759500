"""Permutation test of the difference of two metrics' correlations with a target.

A draw is checked by swapping explicitly: X and Y are z-scored here (over all
their non-missing cells, population std), the draw's 0/1 mask comes from
:func:`permutation_masks` (which every run uses), ``X' = where(m, Y, X)`` and
``Y' = where(m, X, Y)``, and the draw's statistic ``r(X', Z) - r(Y', Z)`` is
computed by :func:`oracles.oracle_level` (plain Python loops and ``scipy.stats``,
no xcorrstat kernel).

Exact data. At the system level a rank correlation depends on exact ties
between per-system means, and the means of z-scored values only tie exactly if
the z-scores themselves are exact. The main exactness test therefore draws
integer scores 0..6 whose mean over the non-missing cells is exactly 3 and whose
population std is exactly 2: their z-scores are halves, every sum of them is
exact, and tied means are tied in the package and in the oracle alike. A second
test uses unconstrained integer scores wherever rounding of the z-scores cannot
change a statistic by more than the tolerance (input and global levels, and
Pearson at the system level).
"""

from __future__ import annotations

import dataclasses
import os
import time

import numpy as np
import pytest
import xarray as xr
from conftest import assert_lazy_notes_equal, make_scores, to_dataset
from oracles import assert_values_same, exact_integer_scores, integer_scores, LEVELS, METHOD_VARIANTS, MV_IDS, oracle_level

import xcorrstat
from xcorrstat._resampling import pvalues as permutation_module
from xcorrstat._resampling.draws import permutation_masks

# permute argument -> scheme name of permutation_masks
PERMUTES = {
    "both": (("system", "input"), "cells"),
    "systems": ("system", "system"),
    "inputs": ("input", "input"),
    "xor": ("system-xor-input", "system-xor-input"),
}
N_DRAWS = 10
TIE_TOLERANCE = 1e-12


# --------------------------------------------------------------------------- #
# Data and oracle
# --------------------------------------------------------------------------- #
def zscore(a):
    """z-scores over all non-missing cells (population std)."""
    return (a - np.nanmean(a)) / np.nanstd(a)


def matrices(seed, *, nan_frac, exact):
    """X, Y, Z of a random small shape (4..7 systems, 5..9 inputs), integer scores with ties."""
    rng = np.random.default_rng(seed)
    shape = (int(rng.integers(4, 8)), int(rng.integers(5, 10)))
    draw = exact_integer_scores if exact else integer_scores
    return draw(rng, shape, nan_frac), draw(rng, shape, nan_frac), integer_scores(rng, shape, nan_frac)


def oracle_delta(X, Y, Z, level, method, variant, **kw):
    return oracle_level(X, Z, level, method, variant, **kw)[0] - oracle_level(Y, Z, level, method, variant, **kw)[0]


def oracle_distribution(X, Y, Z, masks, level, method, variant, **kw):
    """Oracle delta of every draw: swap the z-scored matrices under each mask."""
    xs, ys = zscore(X), zscore(Y)
    return np.array([
        oracle_delta(np.where(m, ys, xs), np.where(m, xs, ys), Z, level, method, variant, **kw) for m in masks
    ])


def expected_pvalue(dist, delta, alternative, pvalue):
    """Monte-Carlo p-value over the defined draws, with ties within TIE_TOLERANCE counted as extreme."""
    d = dist[~np.isnan(dist)]
    if np.isnan(delta) or d.size == 0:
        return np.nan
    if alternative == "greater":
        k = np.count_nonzero(d >= delta - TIE_TOLERANCE)
    elif alternative == "less":
        k = np.count_nonzero(d <= delta + TIE_TOLERANCE)
    else:
        k = np.count_nonzero(np.abs(d) >= abs(delta) - TIE_TOLERANCE)
    return (1 + k) / (1 + d.size) if pvalue == "plus-one" else k / d.size


PERMUTATION_FIELDS = {f.name for f in dataclasses.fields(xcorrstat.Permutation)}


def split_settings(kw):
    """Keywords -> (the function's own, xcorrstat.Permutation(the draw settings), batch for set_options)."""
    kw = dict(kw)
    batch = kw.pop("batch", None)
    test = xcorrstat.Permutation(**{k: kw.pop(k) for k in list(kw) if k in PERMUTATION_FIELDS})
    return kw, test, batch


def run(ds, **kw):
    opts = dict(x="mx", y="my", target="human", n_resamples=N_DRAWS, rng=0, keep_distribution=True)
    opts.update(kw)
    opts, test, batch = split_settings(opts)
    with xcorrstat.set_options(batch=batch):
        return ds.corrstat.permutation_test(test=test, **opts)


# --------------------------------------------------------------------------- #
# 1. every draw equals the explicitly swapped oracle
# --------------------------------------------------------------------------- #
def test_exact_data_has_exact_zscores():
    X, Y, _ = matrices(0, nan_frac=0.1, exact=True)
    for a in (X, Y):
        assert np.nanmean(a) == 3.0 and np.nanstd(a) == 2.0
        np.testing.assert_array_equal(zscore(a), (a - 3.0) / 2.0)


@pytest.mark.parametrize("nan_frac", [0.0, 0.1], ids=["complete", "nan"])
@pytest.mark.parametrize("permute", list(PERMUTES))
@pytest.mark.parametrize("method,variant", METHOD_VARIANTS, ids=MV_IDS)
@pytest.mark.parametrize("level", LEVELS)
def test_draws_equal_swapped_oracle(level, method, variant, permute, nan_frac):
    data_seed = 100 + LEVELS.index(level) + 10 * METHOD_VARIANTS.index((method, variant))
    X, Y, Z = matrices(data_seed, nan_frac=nan_frac, exact=True)
    perm, scheme = PERMUTES[permute]
    seed = 7000 + data_seed
    res = run(to_dataset(X, Y, Z), level=level, method=method, variant=variant, permute=perm, rng=seed)

    assert res["distribution"].dims == ("resample",)
    masks = permutation_masks(seed, range(N_DRAWS), *X.shape, scheme)
    expected = oracle_distribution(X, Y, Z, masks, level, method, variant)
    assert_values_same(res["distribution"].values, expected, "distribution")
    assert int(res["n_undefined"]) == int(np.isnan(expected).sum())
    assert_values_same(res["delta"].values, oracle_delta(zscore(X), zscore(Y), Z, level, method, variant), "delta")
    assert res.attrs["permute"] == scheme


ROUNDING_SAFE = [(lvl, m, v) for lvl in LEVELS for m, v in METHOD_VARIANTS if lvl != "system" or m == "pearson"]


@pytest.mark.parametrize("nan_frac", [0.0, 0.1], ids=["complete", "nan"])
@pytest.mark.parametrize("permute", list(PERMUTES))
@pytest.mark.parametrize(
    "level,method,variant", ROUNDING_SAFE, ids=[f"{lvl}-{m}-{v}" for lvl, m, v in ROUNDING_SAFE]
)
def test_draws_equal_swapped_oracle_any_integer_scores(level, method, variant, permute, nan_frac):
    X, Y, Z = matrices(200 + LEVELS.index(level), nan_frac=nan_frac, exact=False)
    perm, scheme = PERMUTES[permute]
    res = run(to_dataset(X, Y, Z), level=level, method=method, variant=variant, permute=perm, rng=31)
    masks = permutation_masks(31, range(N_DRAWS), *X.shape, scheme)
    assert_values_same(res["distribution"].values, oracle_distribution(X, Y, Z, masks, level, method, variant))
    assert_values_same(res["delta"].values, oracle_delta(zscore(X), zscore(Y), Z, level, method, variant))


def test_draws_across_draw_blocks_equal_swapped_oracle():
    # 300 draws: past the first block of draw ids
    X, Y, Z = matrices(301, nan_frac=0.1, exact=True)
    res = run(to_dataset(X, Y, Z), level="global", method="kendall", n_resamples=300, rng=99, batch=7)
    masks = permutation_masks(99, range(300), *X.shape, "cells")
    assert_values_same(res["distribution"].values, oracle_distribution(X, Y, Z, masks, "global", "kendall", "b"))


@pytest.mark.parametrize("level", LEVELS)
def test_min_pairs_applies_to_swapped_matrices(level):
    X, Y, Z = matrices(302, nan_frac=0.3, exact=True)
    res = run(to_dataset(X, Y, Z), level=level, method="spearman", min_pairs=5, rng=4)
    masks = permutation_masks(4, range(N_DRAWS), *X.shape, "cells")
    expected = oracle_distribution(X, Y, Z, masks, level, "spearman", "b", min_pairs=5)
    assert_values_same(res["distribution"].values, expected)
    assert_values_same(res["delta"].values, oracle_delta(zscore(X), zscore(Y), Z, level, "spearman", "b", min_pairs=5))


@pytest.mark.parametrize(
    "level,method,variant", ROUNDING_SAFE, ids=[f"{lvl}-{m}-{v}" for lvl, m, v in ROUNDING_SAFE]
)
def test_observed_delta_equals_difference_of_correlations(level, method, variant):
    # the correlations are invariant to z-scoring, so delta is correlate(x) - correlate(y)
    ds = to_dataset(*matrices(303, nan_frac=0.1, exact=False))
    r = xcorrstat.correlate(ds, target="human", metrics=["mx", "my"], level=level, method=method, variant=variant)
    res = run(ds, level=level, method=method, variant=variant)
    np.testing.assert_allclose(float(res["delta"]), float(r.sel(metric="mx") - r.sel(metric="my")), rtol=0, atol=1e-12)


@pytest.mark.parametrize("method,variant", METHOD_VARIANTS[1:], ids=MV_IDS[1:])
def test_observed_delta_keeps_ties_between_system_means(method, variant):
    # integer scores whose raw system means tie; z-scoring must not break those ties
    rng = np.random.default_rng(2)
    X, Y, Z = (rng.integers(0, 4, size=(7, 6)).astype(float) for _ in range(3))
    ds = to_dataset(X, Y, Z)
    r = xcorrstat.correlate(ds, target="human", metrics=["mx", "my"], level="system", method=method, variant=variant)
    res = run(ds, level="system", method=method, variant=variant)
    np.testing.assert_allclose(float(res["delta"]), float(r.sel(metric="mx") - r.sel(metric="my")), rtol=0, atol=1e-12)


def test_module_function_equals_accessor():
    ds = to_dataset(*matrices(304, nan_frac=0.1, exact=True))
    a = xcorrstat.permutation_test(ds, x="mx", y="my", target="human",
                                   test=xcorrstat.Permutation(n_resamples=20, rng=3, keep_distribution=True))
    b = ds.corrstat.permutation_test(x="mx", y="my", target="human",
                                     test=xcorrstat.Permutation(n_resamples=20, rng=3, keep_distribution=True))
    xr.testing.assert_identical(a, b)


@pytest.mark.parametrize("perm", [("input", "system"), ["system", "input"]])
def test_permute_both_spelled_other_ways(perm):
    ds = to_dataset(*matrices(305, nan_frac=0.0, exact=True))
    a = run(ds, permute=("system", "input"))
    b = run(ds, permute=perm)
    assert b.attrs["permute"] == "cells"
    np.testing.assert_array_equal(a["distribution"].values, b["distribution"].values)


# --------------------------------------------------------------------------- #
# 2. masks
# --------------------------------------------------------------------------- #
SCHEMES = ["system", "input", "cells", "system-xor-input"]


@pytest.mark.parametrize("scheme", SCHEMES)
def test_mask_shape_and_type(scheme):
    m = permutation_masks(5, range(12), 4, 7, scheme)
    assert m.shape == (12, 4, 7)
    assert m.dtype == bool


def test_system_masks_constant_along_inputs():
    m = permutation_masks(11, range(500), 6, 9, "system")
    assert (m == m[:, :, :1]).all()
    assert len({tuple(row) for row in m[:, :, 0]}) > 30  # rows do vary between draws


def test_input_masks_constant_along_systems():
    m = permutation_masks(11, range(500), 6, 9, "input")
    assert (m == m[:, :1, :]).all()
    assert len({tuple(col) for col in m[:, 0, :]}) > 200


def test_xor_masks_are_row_xor_column():
    m = permutation_masks(12, range(500), 6, 9, "system-xor-input")
    col = m[:, 0, :]  # row flip of system 0 XOR column flips
    row = m[:, :, 0] ^ col[:, :1]  # row flips relative to that of system 0
    np.testing.assert_array_equal(m, row[:, :, None] ^ col[:, None, :])
    # neither constant along inputs nor along systems
    assert not (m == m[:, :, :1]).all()
    assert not (m == m[:, :1, :]).all()


@pytest.mark.parametrize("scheme", SCHEMES)
def test_each_cell_flips_half_the_time(scheme):
    n = 4000
    m = permutation_masks(13, range(n), 5, 6, scheme)
    freq = m.mean(axis=0)
    bound = 5 * np.sqrt(0.25 / n)  # five binomial standard errors
    assert np.abs(freq - 0.5).max() < bound, freq
    # two cells in different rows and columns swap together half the time
    agree = (m[:, 0, 0] == m[:, 1, 1]).mean()
    assert abs(agree - 0.5) < bound, agree


def test_cells_flip_independently_within_rows_and_columns():
    n = 4000
    m = permutation_masks(14, range(n), 5, 6, "cells")
    bound = 5 * np.sqrt(0.25 / n)
    assert abs((m[:, 0, 0] == m[:, 0, 1]).mean() - 0.5) < bound  # same system
    assert abs((m[:, 0, 0] == m[:, 1, 0]).mean() - 0.5) < bound  # same input


@pytest.mark.parametrize("scheme", SCHEMES)
def test_masks_depend_only_on_seed_and_draw_id(scheme):
    full = permutation_masks(21, range(600), 5, 8, scheme)
    np.testing.assert_array_equal(permutation_masks(21, range(300, 600), 5, 8, scheme), full[300:])
    ids = [599, 0, 256, 255, 511, 42]
    np.testing.assert_array_equal(permutation_masks(21, ids, 5, 8, scheme), full[ids])
    np.testing.assert_array_equal(permutation_masks(21, [257], 5, 8, scheme), full[[257]])
    # another seed gives other masks
    assert (permutation_masks(22, range(600), 5, 8, scheme) != full).any()


def test_mask_errors():
    with pytest.raises(ValueError, match="scheme must be one of"):
        permutation_masks(0, range(3), 4, 5, "both")
    with pytest.raises(ValueError, match="non-negative"):
        permutation_masks(0, [-1, 2], 4, 5, "cells")


# --------------------------------------------------------------------------- #
# 3. p-values
# --------------------------------------------------------------------------- #
PVALUE_CASES = {
    # 3 systems, whole-system swaps: 8 distinct masks, so many draws tie with +-delta
    "systems-3": dict(shape=(3, 6), level="system", method="pearson", permute="system"),
    "both-global": dict(shape=(6, 8), level="global", method="kendall", permute=("system", "input")),
    "inputs-input": dict(shape=(5, 7), level="input", method="spearman", permute="input"),
}


def pvalue_dataset(shape, seed=40):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=shape)
    ds = to_dataset(z + rng.normal(size=shape), z + 1.5 * rng.normal(size=shape), z)
    return ds


@pytest.mark.parametrize("pvalue", ["plus-one", "fraction"])
@pytest.mark.parametrize("alternative", ["greater", "less", "two-sided"])
@pytest.mark.parametrize("case", list(PVALUE_CASES))
def test_pvalue_from_distribution(case, alternative, pvalue):
    cfg = dict(PVALUE_CASES[case])
    ds = pvalue_dataset(cfg.pop("shape"))
    res = run(ds, n_resamples=200, rng=8, alternative=alternative, pvalue=pvalue, **cfg)
    dist, delta = res["distribution"].values, float(res["delta"])
    assert not np.isnan(delta)
    assert int(res["n_undefined"]) == 0
    p = float(res["pvalue"])
    np.testing.assert_allclose(p, expected_pvalue(dist, delta, alternative, pvalue), rtol=1e-15, atol=0)
    assert 0 < p <= 1 if pvalue == "plus-one" else 0 <= p <= 1
    assert res.attrs["alternative"] == alternative and res.attrs["pvalue"] == pvalue


def test_tie_tolerance_is_documented_value():
    assert permutation_module.TIE_TOLERANCE == TIE_TOLERANCE


def test_draws_tied_with_observed_count_as_extreme():
    # with 3 systems swapped whole, the draws that swap nothing (or everything) give
    # +delta (or -delta) up to rounding; they must count as extreme
    ds = pvalue_dataset((3, 6))
    n = 200
    masks = permutation_masks(8, range(n), 3, 6, "system")
    none, every = ~masks.any(axis=(1, 2)), masks.all(axis=(1, 2))
    assert none.sum() > 10 and every.sum() > 10
    kw = dict(level="system", method="pearson", permute="system", n_resamples=n, rng=8)
    res = run(ds, **kw)
    dist, delta = res["distribution"].values, float(res["delta"])
    assert abs(delta) > 0.1
    np.testing.assert_allclose(dist[none], delta, rtol=0, atol=TIE_TOLERANCE)
    np.testing.assert_allclose(dist[every], -delta, rtol=0, atol=TIE_TOLERANCE)
    k_greater = np.count_nonzero(dist >= delta - TIE_TOLERANCE)
    assert k_greater >= none.sum()
    assert float(res["pvalue"]) == pytest.approx((1 + k_greater) / (1 + n), rel=1e-15)
    two = run(ds, alternative="two-sided", **kw)
    assert np.count_nonzero(np.abs(dist) >= abs(delta) - TIE_TOLERANCE) >= none.sum() + every.sum()
    assert float(two["pvalue"]) == pytest.approx(expected_pvalue(dist, delta, "two-sided", "plus-one"), rel=1e-15)


@pytest.mark.parametrize("alternative", ["greater", "less", "two-sided"])
@pytest.mark.parametrize("level", LEVELS)
def test_rescaled_copy_ties_with_every_draw(level, alternative):
    # y is an affine copy of x: z-scored, they agree up to rounding, so every draw's
    # delta and the observed one are 0 up to rounding, and every draw is as extreme
    rng = np.random.default_rng(45)
    z = rng.normal(size=(6, 8))
    X = z + rng.normal(size=z.shape)
    ds = to_dataset(X, 3.7 * X + 1.3, z)
    kw = dict(level=level, n_resamples=200, rng=8, alternative=alternative)
    res = run(ds, **kw)
    assert np.abs(res["distribution"].values).max() < TIE_TOLERANCE
    assert abs(float(res["delta"])) < TIE_TOLERANCE
    assert float(res["pvalue"]) == 1.0
    assert float(run(ds, pvalue="fraction", **kw)["pvalue"]) == 1.0


@pytest.mark.parametrize("alternative", ["greater", "less", "two-sided"])
@pytest.mark.parametrize("pvalue", ["plus-one", "fraction"])
def test_undefined_draws_left_out(alternative, pvalue):
    # 4 systems, min_pairs 3; system 0 of x and system 1 of y are missing. A draw that
    # swaps exactly one of these two systems leaves x' or y' with only 2 systems: undefined.
    rng = np.random.default_rng(50)
    z = rng.normal(size=(4, 6))
    X, Y = z + rng.normal(size=z.shape), z + rng.normal(size=z.shape)
    X[0], Y[1] = np.nan, np.nan
    n, seed = 300, 51
    res = run(to_dataset(X, Y, z), level="system", permute="system", n_resamples=n, rng=seed,
              alternative=alternative, pvalue=pvalue, min_pairs=3)
    m = permutation_masks(seed, range(n), 4, 6, "system")
    undefined = m[:, 0, 0] != m[:, 1, 0]
    dist, delta = res["distribution"].values, float(res["delta"])
    assert not np.isnan(delta)
    np.testing.assert_array_equal(np.isnan(dist), undefined)
    assert int(res["n_undefined"]) == int(undefined.sum())
    assert 0 < undefined.sum() < n
    p = float(res["pvalue"])
    np.testing.assert_allclose(p, expected_pvalue(dist, delta, alternative, pvalue), rtol=1e-15, atol=0)
    # the same draws with the undefined ones dropped (n - #undefined in the denominator)
    d = dist[~undefined]
    if alternative == "greater" and pvalue == "plus-one":
        assert p == pytest.approx((1 + np.count_nonzero(d >= delta - TIE_TOLERANCE)) / (1 + d.size), rel=1e-15)


def test_constant_target_gives_undefined_everything():
    X, Y, _ = matrices(60, nan_frac=0.0, exact=True)
    res = run(to_dataset(X, Y, np.full(X.shape, 2.0)), level="global", n_resamples=25)
    assert np.isnan(float(res["delta"]))
    assert np.isnan(float(res["pvalue"]))
    assert int(res["n_undefined"]) == 25
    assert np.isnan(res["distribution"].values).all()


def test_constant_metric_gives_undefined_observed_and_pvalue():
    rng = np.random.default_rng(61)
    z = rng.normal(size=(5, 6))
    res = run(to_dataset(np.full(z.shape, 1.0), z + rng.normal(size=z.shape), z), level="system", n_resamples=25)
    assert np.isnan(float(res["delta"]))
    assert np.isnan(float(res["pvalue"]))


@pytest.mark.parametrize("alternative", ["greater", "two-sided"])
def test_plus_one_pvalue_never_zero(alternative):
    # x is the target itself: no draw reaches the observed delta
    rng = np.random.default_rng(70)
    z = rng.normal(size=(6, 8))
    ds = to_dataset(z.copy(), rng.normal(size=z.shape), z)
    n = 99
    kw = dict(level="global", n_resamples=n, rng=1, alternative=alternative)
    res = run(ds, **kw)
    dist, delta = res["distribution"].values, float(res["delta"])
    assert (np.abs(dist) < abs(delta) - 0.1).all()
    assert float(res["pvalue"]) == pytest.approx(1 / (1 + n), rel=1e-15)
    assert float(run(ds, pvalue="fraction", **kw)["pvalue"]) == 0.0


def test_less_mirrors_greater_when_x_and_y_swap_roles():
    ds = pvalue_dataset((6, 8))
    kw = dict(level="input", method="kendall", n_resamples=150, rng=9)
    greater = run(ds, alternative="greater", **kw)
    less = run(ds, x="my", y="mx", alternative="less", **kw)
    np.testing.assert_allclose(float(less["delta"]), -float(greater["delta"]), rtol=0, atol=1e-12)
    np.testing.assert_allclose(less["distribution"].values, -greater["distribution"].values, rtol=0, atol=1e-12)
    assert float(less["pvalue"]) == pytest.approx(float(greater["pvalue"]), rel=1e-12)


# --------------------------------------------------------------------------- #
# 4. reproducibility
# --------------------------------------------------------------------------- #
VARIABLES = ["delta", "pvalue", "n_undefined", "distribution"]


def assert_same_results(a, b):
    for name in VARIABLES:
        np.testing.assert_array_equal(a[name].values, b[name].values, err_msg=name)


def repro_dataset(**kw):
    return make_scores(n_metrics=2, n_systems=6, n_inputs=8, seed=80, nan_frac=0.1, ties=True, **kw)


REPRO = dict(x="m0", y="m1", target="human")
DRAWS = dict(n_resamples=300, keep_distribution=True)


@pytest.mark.parametrize("level,method", [("system", "kendall"), ("input", "spearman"), ("global", "pearson")])
@pytest.mark.parametrize("permute", ["both", "xor"])
def test_batch_size_does_not_change_results(level, method, permute):
    ds = repro_dataset()
    kw = dict(REPRO, level=level, method=method)
    test = xcorrstat.Permutation(PERMUTES[permute][0], rng=123, **DRAWS)
    results = []
    for b in (1, 3, None):
        with xcorrstat.set_options(batch=b):
            results.append(ds.corrstat.permutation_test(test=test, **kw))
    assert [r.attrs["batch"] for r in results[:2]] == [1, 3]
    for r in results[1:]:
        assert_same_results(results[0], r)


def test_seed_recorded_and_reused():
    ds = repro_dataset()
    a = ds.corrstat.permutation_test(test=xcorrstat.Permutation(rng=2024, **DRAWS), **REPRO)
    assert a.attrs["rng"] == 2024
    assert_same_results(a, ds.corrstat.permutation_test(test=xcorrstat.Permutation(rng=2024, **DRAWS), **REPRO))
    assert_same_results(a, ds.corrstat.permutation_test(
        test=xcorrstat.Permutation(rng=np.random.SeedSequence(2024), **DRAWS), **REPRO))
    for rng in (None, np.random.default_rng(5)):
        b = ds.corrstat.permutation_test(test=xcorrstat.Permutation(rng=rng, **DRAWS), **REPRO)
        seed = b.attrs["rng"]
        assert isinstance(seed, int) and seed >= 0
        assert_same_results(b, ds.corrstat.permutation_test(test=xcorrstat.Permutation(rng=seed, **DRAWS), **REPRO))


def test_generator_gives_same_seed_as_its_copy():
    ds = repro_dataset()
    a = ds.corrstat.permutation_test(test=xcorrstat.Permutation(rng=np.random.default_rng(17), **DRAWS), **REPRO)
    b = ds.corrstat.permutation_test(test=xcorrstat.Permutation(rng=np.random.default_rng(17), **DRAWS), **REPRO)
    assert a.attrs["rng"] == b.attrs["rng"]
    assert_same_results(a, b)


def test_different_seeds_give_different_draws():
    ds = repro_dataset()
    a = ds.corrstat.permutation_test(test=xcorrstat.Permutation(rng=1, **DRAWS), **REPRO)
    b = ds.corrstat.permutation_test(test=xcorrstat.Permutation(rng=2, **DRAWS), **REPRO)
    assert float(a["delta"]) == float(b["delta"])
    assert not np.array_equal(a["distribution"].values, b["distribution"].values)


def test_attrs_record_options():
    ds = repro_dataset()
    res = ds.corrstat.permutation_test(
        x="m0", y="m1", target="human", level="input", method="kendall", variant="c",
        test=xcorrstat.Permutation("input", n_resamples=40, pvalue="fraction", rng=3), alternative="less",
        min_pairs=4,
    )
    a = res.attrs
    assert (a["x"], a["y"], a["target"], a["level"], a["method"], a["variant"]) == (
        "m0", "m1", "human", "input", "kendall", "c",
    )
    assert (a["permute"], a["n_resamples"], a["alternative"], a["pvalue"], a["rng"], a["min_pairs"]) == (
        "input", 40, "less", "fraction", 3, 4,
    )
    assert "distribution" not in res


def test_dask_input_gives_lazy_equal_result():
    ds = repro_dataset()
    kw = dict(REPRO, level="system", method="spearman", test=xcorrstat.Permutation(rng=31, **DRAWS))
    eager = ds.corrstat.permutation_test(**kw)
    lazy = ds.chunk().corrstat.permutation_test(**kw)
    for name in VARIABLES:
        assert lazy[name].chunks is not None, name
    assert_lazy_notes_equal(lazy.compute(), eager)


def test_extra_dim_chunked_equals_each_slice_alone():
    ds = repro_dataset(extra=("lang", 3))
    kw = dict(REPRO, level="global", method="kendall", test=xcorrstat.Permutation("system", rng=32, **DRAWS))
    eager = ds.corrstat.permutation_test(**kw)
    lazy = ds.chunk({"lang": 1}).corrstat.permutation_test(**kw)
    assert lazy["distribution"].chunks is not None
    assert eager["distribution"].dims == ("lang", "resample")
    assert_same_results(lazy.compute(), eager)
    for k in range(3):
        alone = ds.isel(lang=k).corrstat.permutation_test(**kw)
        assert_same_results(alone, eager.isel(lang=k))


# --------------------------------------------------------------------------- #
# 5. argument errors
# --------------------------------------------------------------------------- #
ARGS = dict(x="m0", y="m1", target="human", n_resamples=10, rng=0)


@pytest.mark.parametrize(
    "change,error,match",
    [
        (dict(y="m0"), ValueError, "two different metrics"),
        (dict(x="nope"), ValueError, "is not a score in the data"),
        (dict(y="nope"), ValueError, "is not a score in the data"),
        (dict(target="nope"), ValueError, "is not a score in the data"),
        (dict(permute="both"), ValueError, "permute must be"),
        (dict(permute=("system", "system")), ValueError, "permute must be"),
        (dict(permute=("system", "input", "lang")), ValueError, "permute must be"),
        (dict(permute="both"), ValueError, "permute must be"),
        (dict(alternative="bigger"), ValueError, "alternative must be one of"),
        (dict(pvalue="exact"), ValueError, "pvalue must be one of"),
        (dict(n_resamples=0), ValueError, "n_resamples must be a positive integer"),
        (dict(n_resamples=-5), ValueError, "n_resamples must be a positive integer"),
        (dict(batch=0), ValueError, "batch must be a positive integer"),
        (dict(level="document"), ValueError, "level must be one of"),
        (dict(method="cosine"), ValueError, "method must be one of"),
        (dict(variant="d", method="kendall"), ValueError, "variant must be one of"),
        (dict(min_pairs=1), ValueError, "min_pairs must be an integer >= 2"),
        (dict(target=["human"]), TypeError, "target must be one score name"),
        (dict(rng=-1), ValueError, "non-negative"),
    ],
)
def test_bad_arguments(change, error, match):
    ds = make_scores(n_metrics=2, seed=90)
    with pytest.raises(error, match=match):
        kw, test, batch = split_settings({**ARGS, **change})
        with xcorrstat.set_options(batch=batch):
            ds.corrstat.permutation_test(test=test, **kw)


def test_infinite_score_rejected():
    ds = make_scores(n_metrics=2, seed=91)
    ds["m0"][0, 0] = np.inf
    with pytest.raises(ValueError, match="infinite"):
        ds.corrstat.permutation_test(x="m0", y="m1", target="human", test=xcorrstat.Permutation(n_resamples=10, rng=0))


# --------------------------------------------------------------------------- #
# 6. calibration under H0 (slow)
# --------------------------------------------------------------------------- #
SLOW = pytest.mark.skipif(os.environ.get("XCORRSTAT_SLOW") != "1", reason="set XCORRSTAT_SLOW=1 to run")


def h0_dataset(rng, n_sys, n_inp):
    """x and y: independent noisy copies of one signal, with the same noise; z correlates with it."""
    signal = rng.normal(size=(n_sys, 1)) + 0.5 * rng.normal(size=(1, n_inp)) + rng.normal(size=(n_sys, n_inp))
    shape = (n_sys, n_inp)
    return to_dataset(signal + rng.normal(size=shape), signal + rng.normal(size=shape),
                      signal + rng.normal(size=shape))


@pytest.mark.slow
@SLOW
@pytest.mark.parametrize("level,method", [("system", "pearson"), ("input", "kendall")])
def test_rejection_rate_under_h0_is_nominal(level, method):
    """PERM-BOTH, PERM-SYSTEMS and PERM-INPUTS reject a true H0 at about the nominal rate.

    The bound (3 binomial standard errors, +-0.021 over 1000 datasets) catches gross
    miscalibration. Z-scoring x and y before swapping whole systems is slightly
    liberal with few systems (about 0.06 here over 10 000 datasets; about 0.048
    when the same swaps are applied to unstandardised scores), within this bound.
    """
    n_datasets, n_sys, n_inp, n_perm, alpha = 1000, 8, 10, 200, 0.05
    rng = np.random.default_rng(20240917 if level == "system" else 20261122)
    rejected = {name: 0 for name in ("both", "systems", "inputs")}
    start = time.perf_counter()
    for k in range(n_datasets):
        ds = h0_dataset(rng, n_sys, n_inp)
        for name in rejected:
            res = ds.corrstat.permutation_test(
                x="mx", y="my", target="human", level=level, method=method,
                test=xcorrstat.Permutation(PERMUTES[name][0], n_resamples=n_perm, rng=10_000 * k + len(name)),
            )
            rejected[name] += float(res["pvalue"]) <= alpha
    rates = {name: count / n_datasets for name, count in rejected.items()}
    elapsed = time.perf_counter() - start
    print(f"\n{level}-level {method}: H0 rejection rates at alpha={alpha} over {n_datasets} datasets: {rates}"
          f" ({elapsed:.0f} s)")
    se = np.sqrt(alpha * (1 - alpha) / n_datasets)
    for name, rate in rates.items():
        assert abs(rate - alpha) <= 3 * se, (name, rate, 3 * se)

