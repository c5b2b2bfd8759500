"""Oracle tests for :func:`xcorrstat._kernels.levels.level_correlation`.

The oracle (:func:`oracles.oracle_level`, broadcast below) loops over systems
and inputs explicitly and uses only NumPy and ``scipy.stats``.  Inputs are shaped ``(..., S, I)`` (systems on
axis -2, inputs on axis -1); a cell ``(s, j)`` is valid iff both scores are
non-NaN.

* ``system``: per-system means over the valid cells, then a correlation across
  systems (systems without a valid cell drop out); ``complete_inputs=True``
  restricts the means to inputs valid for every system.
* ``input``: one correlation across systems per input, averaged over the
  inputs whose correlation is defined; ``n`` counts those inputs.
* ``global``: one correlation over all valid cells.

Every correlation follows the kernel rule: NaN when fewer than ``min_pairs``
pairs remain or when either side is constant over them.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from oracles import (
    ATOL,
    LEVELS,
    METHOD_VARIANTS,
    MV_IDS,
    assert_same,
    broadcast_oracle,
    hypothesis_settings,
    oracle_level,
)
from scipy import stats

from xcorrstat._kernels.levels import level_correlation

ORACLE_SETTINGS = hypothesis_settings(120)
PROPERTY_SETTINGS = hypothesis_settings(100)


# --------------------------------------------------------------------------- #
# Oracle
# --------------------------------------------------------------------------- #
def oracle(x, z, level, method="pearson", variant="b", min_pairs=3, complete_inputs=False):
    """:func:`oracles.oracle_level` on every (S, I) matrix of the broadcast inputs."""
    return broadcast_oracle(
        oracle_level, x, z, 2, level, method, variant, min_pairs=min_pairs, complete_inputs=complete_inputs
    )


# --------------------------------------------------------------------------- #
# Data generation
# --------------------------------------------------------------------------- #
KINDS = ["bin", "int3", "int5", "grid", "fine"]
# repeated entries weight the draws towards informative cases
STRUCTURES = ["none"] * 6 + ["const_all", "const_inputs", "const_inputs", "same_rows", "copy", "neg"]
NAN_PLANS = (
    [("none", "none")] * 3
    + [("sparse", "none"), ("none", "sparse"), ("sparse", "sparse")] * 2
    + [
        ("heavy", "none"),
        ("none", "heavy"),
        ("drop_system", "sparse"),
        ("sparse", "drop_input"),
        ("drop_input", "drop_system"),
        ("all", "sparse"),
    ]
)


def make_values(rng, kind, shape):
    """Dyadic values: sums are exact, so ties among means are exact too."""
    if kind == "bin":
        return rng.integers(0, 2, shape).astype(np.float64)
    if kind == "int3":
        return rng.integers(0, 3, shape).astype(np.float64)
    if kind == "int5":
        return rng.integers(-2, 3, shape).astype(np.float64)
    if kind == "grid":
        return rng.integers(-64, 65, shape) / 8.0
    if kind == "fine":
        return rng.integers(-(2**20), 2**20 + 1, shape) / 1024.0
    raise AssertionError(kind)


def apply_structure(rng, x, z, structure):
    S, I = x.shape[-2:]
    if structure == "const_all":
        target = x if rng.random() < 0.5 else z
        target[...] = float(rng.integers(-2, 3))
    elif structure == "const_inputs":
        # some inputs have the same score for every system
        cols = rng.random(I) < 0.5
        x[..., :, cols] = np.round(x[..., :1, cols])
    elif structure == "same_rows":
        # every system receives the same scores: equal system means
        x[..., :, :] = x[..., :1, :]
    elif structure == "copy":
        z[...] = np.broadcast_to(x, z.shape) if z.ndim >= x.ndim else x[(0,) * (x.ndim - z.ndim)]
    elif structure == "neg":
        z[...] = -(np.broadcast_to(x, z.shape) if z.ndim >= x.ndim else x[(0,) * (x.ndim - z.ndim)])


def apply_nans(rng, a, mode):
    S, I = a.shape[-2:]
    if mode == "sparse":
        a[rng.random(a.shape) < 0.1] = np.nan
    elif mode == "heavy":
        a[rng.random(a.shape) < 0.45] = np.nan
    elif mode == "drop_system":
        a[..., rng.integers(0, S), :] = np.nan
        a[rng.random(a.shape) < 0.1] = np.nan
    elif mode == "drop_input":
        a[..., :, rng.integers(0, I)] = np.nan
        a[rng.random(a.shape) < 0.1] = np.nan
    elif mode == "all":
        a[...] = np.nan


@st.composite
def level_cases(draw, max_s=8, max_i=7):
    # mostly panels with enough systems to correlate, sometimes tiny ones
    S = draw(st.sampled_from([False] * 5 + [True]).flatmap(
        lambda tiny: st.integers(1, 2) if tiny else st.integers(3, max_s)
    ))
    I = draw(st.sampled_from([False, False, True]).flatmap(
        lambda tiny: st.integers(1, 2) if tiny else st.integers(3, max_i)
    ))
    x_lead, z_lead = draw(
        st.sampled_from(
            [
                ((), ()),
                ((), ()),
                ((2,), ()),
                ((3,), (3,)),
                ((2, 2), (2,)),
                ((1,), (2,)),
                ((), (2,)),
            ]
        )
    )
    kinds = draw(st.tuples(st.sampled_from(KINDS), st.sampled_from(KINDS)))
    structure = draw(st.sampled_from(STRUCTURES))
    nan_x, nan_z = draw(st.sampled_from(NAN_PLANS))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    x = make_values(rng, kinds[0], x_lead + (S, I))
    z = make_values(rng, kinds[1], z_lead + (S, I))
    apply_structure(rng, x, z, structure)
    apply_nans(rng, x, nan_x)
    apply_nans(rng, z, nan_z)
    return x, z


min_pairs_st = st.sampled_from([None, None, 1, 2, 3, 4])


def _kwargs(method, variant, min_pairs, **extra):
    kw = dict(method=method, variant=variant, **extra)
    if min_pairs is not None:
        kw["min_pairs"] = min_pairs
    return kw


# --------------------------------------------------------------------------- #
# Oracle comparisons: level x method x variant
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize(("method", "variant"), METHOD_VARIANTS, ids=MV_IDS)
@pytest.mark.parametrize("level", LEVELS)
@ORACLE_SETTINGS
@given(case=level_cases(), min_pairs=min_pairs_st)
def test_level_matches_oracle(level, method, variant, case, min_pairs):
    x, z = case
    x0, z0 = x.copy(), z.copy()
    got = level_correlation(x, z, level=level, **_kwargs(method, variant, min_pairs))
    mp = 3 if min_pairs is None else min_pairs
    assert_same(got, oracle(x, z, level, method, variant, mp))
    np.testing.assert_array_equal(x, x0)
    np.testing.assert_array_equal(z, z0)


@pytest.mark.parametrize(("method", "variant"), METHOD_VARIANTS, ids=MV_IDS)
@ORACLE_SETTINGS
@given(case=level_cases(), min_pairs=min_pairs_st)
def test_system_level_complete_inputs_matches_oracle(method, variant, case, min_pairs):
    x, z = case
    got = level_correlation(
        x, z, level="system", **_kwargs(method, variant, min_pairs, complete_inputs=True)
    )
    mp = 3 if min_pairs is None else min_pairs
    assert_same(got, oracle(x, z, "system", method, variant, mp, complete_inputs=True))


@pytest.mark.parametrize(("method", "variant"), METHOD_VARIANTS, ids=MV_IDS)
@pytest.mark.parametrize("shape", [(60, 60), (25, 140), (2, 1700)])
def test_global_level_long_vectors(method, variant, shape):
    rng = np.random.default_rng(sum(shape))
    S, I = shape
    x = make_values(rng, "int5", (2, S, I))
    z = make_values(rng, "int3", (S, I))
    x[1] = make_values(rng, "fine", (S, I))
    x[rng.random(x.shape) < 0.1] = np.nan
    z[rng.random(z.shape) < 0.05] = np.nan
    got = level_correlation(x, z, level="global", method=method, variant=variant)
    expected = oracle(x, z, "global", method, variant, 3)
    assert np.all(expected[1] >= 2500)
    assert_same(got, expected)


@pytest.mark.parametrize(("method", "variant"), METHOD_VARIANTS, ids=MV_IDS)
def test_large_panel_all_levels(method, variant):
    rng = np.random.default_rng(99)
    S, I = 16, 200
    x = make_values(rng, "int5", (S, I))
    z = make_values(rng, "grid", (S, I))
    x[rng.random(x.shape) < 0.15] = np.nan
    z[:, 3] = np.nan
    for level in LEVELS:
        got = level_correlation(x, z, level=level, method=method, variant=variant)
        assert_same(got, oracle(x, z, level, method, variant, 3))
    got = level_correlation(
        x, z, level="system", method=method, variant=variant, complete_inputs=True
    )
    assert_same(got, oracle(x, z, "system", method, variant, 3, complete_inputs=True))


# --------------------------------------------------------------------------- #
# Hand-checked examples of the level rules
# --------------------------------------------------------------------------- #
def test_system_level_uses_pairwise_valid_cells():
    X = np.array([[1.0, 2.0], [3.0, np.nan], [5.0, 6.0], [0.0, 8.0]])
    Z = np.array([[1.0, 1.0], [2.0, 2.0], [np.nan, 3.0], [4.0, np.nan]])
    # means over cells valid in both: (1.5, 1), (3, 2), (6, 3), (0, 4)
    r, n = level_correlation(X, Z, level="system", method="pearson")
    expected = stats.pearsonr([1.5, 3.0, 6.0, 0.0], [1.0, 2.0, 3.0, 4.0]).statistic
    assert int(n) == 4
    assert abs(float(r) - expected) <= ATOL
    # no input is valid for all systems
    r, n = level_correlation(X, Z, level="system", method="pearson", complete_inputs=True)
    assert int(n) == 0 and np.isnan(r)


def test_system_level_complete_inputs_restricts_means():
    X = np.array([[1.0, 2.0, 9.0], [3.0, 0.0, np.nan], [5.0, 6.0, 1.0]])
    Z = np.array([[1.0, 4.0, 2.0], [2.0, 2.0, 7.0], [0.0, 3.0, 5.0]])
    r, n = level_correlation(X, Z, level="system", method="spearman", complete_inputs=True)
    # inputs 0 and 1 only
    expected = stats.spearmanr([1.5, 1.5, 5.5], [2.5, 2.0, 1.5]).statistic
    assert int(n) == 3
    assert abs(float(r) - expected) <= ATOL
    r, n = level_correlation(X, Z, level="system", method="spearman")
    expected = stats.spearmanr([4.0, 1.5, 4.0], [7.0 / 3.0, 2.0, 8.0 / 3.0]).statistic
    assert int(n) == 3
    assert abs(float(r) - expected) <= ATOL


def test_input_level_averages_defined_correlations_only():
    X = np.array(
        [
            [1.0, 5.0, 1.0, np.nan],
            [2.0, 5.0, 3.0, 1.0],
            [3.0, 5.0, 2.0, np.nan],
            [4.0, 5.0, np.nan, 2.0],
        ]
    )
    Z = np.array(
        [
            [1.0, 1.0, 2.0, 0.0],
            [3.0, 2.0, 1.0, 1.0],
            [2.0, 3.0, 3.0, 0.0],
            [4.0, 4.0, 0.0, 1.0],
        ]
    )
    # input 0 defined; input 1 constant in X; input 2 has 3 valid systems;
    # input 3 has only 2 valid systems
    r, n = level_correlation(X, Z, level="input", method="kendall", variant="b")
    r0 = stats.kendalltau([1.0, 2.0, 3.0, 4.0], [1.0, 3.0, 2.0, 4.0]).statistic
    r2 = stats.kendalltau([1.0, 3.0, 2.0], [2.0, 1.0, 3.0]).statistic
    assert int(n) == 2
    assert abs(float(r) - (r0 + r2) / 2.0) <= ATOL
    r, n = level_correlation(X, Z, level="input", method="kendall", min_pairs=4)
    assert int(n) == 1
    assert abs(float(r) - r0) <= ATOL


def test_input_level_none_defined():
    X = np.array([[1.0, 2.0], [1.0, 2.0], [1.0, 2.0]])
    Z = np.array([[1.0, 2.0], [2.0, 3.0], [3.0, 1.0]])
    for method in ("pearson", "spearman", "kendall"):
        r, n = level_correlation(X, Z, level="input", method=method)
        assert int(n) == 0 and np.isnan(r)


def test_global_level_flattens_cells():
    X = np.array([[1.0, np.nan, 3.0], [2.0, 2.0, 0.0]])
    Z = np.array([[0.0, 1.0, 2.0], [np.nan, 1.0, 1.0]])
    r, n = level_correlation(X, Z, level="global", method="kendall", variant="c")
    expected = stats.kendalltau([1.0, 3.0, 2.0, 0.0], [0.0, 2.0, 1.0, 1.0], variant="c").statistic
    assert int(n) == 4
    assert abs(float(r) - expected) <= ATOL


@pytest.mark.parametrize("level", LEVELS)
def test_all_missing_gives_nan_and_zero(level):
    x = np.full((2, 4, 3), np.nan)
    z = np.ones((4, 3))
    r, n = level_correlation(x, z, level=level, method="pearson")
    assert np.shape(r) == (2,) and np.all(np.isnan(r))
    np.testing.assert_array_equal(n, 0)


# --------------------------------------------------------------------------- #
# Properties
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize(("method", "variant"), METHOD_VARIANTS, ids=MV_IDS)
@PROPERTY_SETTINGS
@given(case=level_cases(), level=st.sampled_from(LEVELS), complete=st.booleans(), data=st.data())
def test_level_permutation_invariance_and_bounds(method, variant, case, level, complete, data):
    x, z = case
    complete = complete and level == "system"
    kw = dict(level=level, method=method, variant=variant)
    if complete:
        kw["complete_inputs"] = True
    r, n = (np.asarray(a) for a in level_correlation(x, z, **kw))
    defined = ~np.isnan(r)
    assert np.all(r[defined] >= -1.0) and np.all(r[defined] <= 1.0)
    assert np.all(n >= 0)

    S, I = x.shape[-2:]
    ps = np.array(data.draw(st.permutations(range(S))), dtype=np.intp)
    pi = np.array(data.draw(st.permutations(range(I))), dtype=np.intp)
    xp = x[..., ps, :][..., pi]
    zp = z[..., ps, :][..., pi]
    r2, n2 = (np.asarray(a) for a in level_correlation(xp, zp, **kw))
    np.testing.assert_array_equal(n, n2)
    np.testing.assert_array_equal(np.isnan(r), np.isnan(r2))
    np.testing.assert_allclose(r, r2, rtol=0, atol=ATOL)


@pytest.mark.parametrize(("method", "variant"), METHOD_VARIANTS, ids=MV_IDS)
@PROPERTY_SETTINGS
@given(
    m=st.integers(1, 3),
    l_=st.integers(1, 3),
    s=st.integers(1, 6),
    i=st.integers(1, 6),
    kinds=st.tuples(st.sampled_from(KINDS), st.sampled_from(KINDS)),
    level=st.sampled_from(LEVELS),
    seed=st.integers(0, 2**32 - 1),
)
def test_level_broadcast_metric_and_batch_axes(method, variant, m, l_, s, i, kinds, level, seed):
    rng = np.random.default_rng(seed)
    x = make_values(rng, kinds[0], (m, l_, s, i))
    z = make_values(rng, kinds[1], (l_, s, i))
    x[rng.random(x.shape) < 0.2] = np.nan
    z[rng.random(z.shape) < 0.2] = np.nan
    kw = dict(level=level, method=method, variant=variant)
    r, n = (np.asarray(a) for a in level_correlation(x, z, **kw))
    assert r.shape == (m, l_) and n.shape == (m, l_)
    assert_same((r, n), oracle(x, z, level, method, variant, 3))
    # each (metric, batch) slice on its own gives the same answer
    for mi in range(m):
        for li in range(l_):
            rs, ns = (np.asarray(a) for a in level_correlation(x[mi, li], z[li], **kw))
            assert rs.shape == () and int(ns) == n[mi, li]
            np.testing.assert_allclose(rs, r[mi, li], rtol=0, atol=ATOL)


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize(("method", "variant"), METHOD_VARIANTS, ids=MV_IDS)
def test_level_broadcast_explicit_shapes(level, method, variant):
    rng = np.random.default_rng(2024)
    M, L, S, I = 3, 2, 5, 6
    x = make_values(rng, "int5", (M, L, S, I))
    z = make_values(rng, "grid", (L, S, I))
    x[0, 1, 2, :] = np.nan  # one system gone for one metric/batch
    x[2, 0, :, 4] = np.nan  # one input gone
    z[1, rng.random((S, I)) < 0.3] = np.nan
    got = level_correlation(x, z, level=level, method=method, variant=variant)
    assert_same(got, oracle(x, z, level, method, variant, 3))
    # the reversed broadcast (z carries the extra axis) is the same problem
    got_rev = level_correlation(z, x, level=level, method=method, variant=variant)
    r, n = (np.asarray(a) for a in got)
    r_rev, n_rev = (np.asarray(a) for a in got_rev)
    np.testing.assert_array_equal(n, n_rev)
    np.testing.assert_allclose(r, r_rev, rtol=0, atol=ATOL)
