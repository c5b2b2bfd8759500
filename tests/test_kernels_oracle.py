"""Oracle tests for :func:`xcorrstat._kernels.correlation.corr`.

Every result of the vectorised kernel is compared with an explicit loop that
applies the documented missing-value rule pair by pair and then calls
``scipy.stats`` on the surviving pairs:

* pair ``i`` is valid iff ``x[..., i]`` and ``z[..., i]`` are both non-NaN;
* ``n`` is the number of valid pairs (always reported);
* ``r`` is NaN if ``n < min_pairs`` or if ``x`` or ``z`` is constant over the
  valid pairs, otherwise the scipy statistic on the valid pairs.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from oracles import (
    ATOL,
    METHOD_VARIANTS,
    MV_IDS,
    assert_same,
    broadcast_oracle,
    hypothesis_settings,
    oracle_corr,
)

from xcorrstat._kernels.correlation import corr

ORACLE_SETTINGS = hypothesis_settings(150)
PROPERTY_SETTINGS = hypothesis_settings(100)


# --------------------------------------------------------------------------- #
# Oracle
# --------------------------------------------------------------------------- #
def oracle(x, z, method="pearson", variant="b", min_pairs=3):
    """:func:`oracles.oracle_corr` on every vector along the last axis of the broadcast inputs."""
    return broadcast_oracle(oracle_corr, x, z, 1, method, variant, min_pairs)


# --------------------------------------------------------------------------- #
# Data generation
# --------------------------------------------------------------------------- #
VALUE_KINDS = ["bin", "int3", "int5", "grid", "fine"]
Z_DERIVED = ["copy", "neg", "mono"]
INFORMATIVE_NAN_MODES = ["none", "sparse", "heavy"]
DEGENERATE_NAN_MODES = [
    "all_x",
    "all_z",
    "valid0",
    "valid1",
    "valid2",
    "valid3",
    "const_on_valid",
]


def make_values(rng, kind, size):
    """Values with controlled tie structure.

    All finite values lie on dyadic grids of moderate magnitude so that the
    statistics are well conditioned (no spurious near-ties).
    """
    if kind == "bin":
        return rng.integers(0, 2, size).astype(np.float64)
    if kind == "int3":
        return rng.integers(0, 3, size).astype(np.float64)
    if kind == "int5":
        return rng.integers(-2, 3, size).astype(np.float64)
    if kind == "grid":
        return rng.integers(-128, 129, size) / 16.0
    if kind == "fine":
        return rng.integers(-(2**20), 2**20 + 1, size) / 1024.0
    if kind == "const":
        return np.full(size, float(rng.integers(-3, 4)))
    raise AssertionError(kind)


def make_row(rng, n, x_kind, z_kind, nan_mode):
    x = make_values(rng, x_kind, n)
    if z_kind == "copy":
        z = x.copy()
    elif z_kind == "neg":
        z = -x
    elif z_kind == "mono":
        # monotone map that merges neighbouring values into ties
        z = np.floor(x / 2.0)
        if np.all(z == z[:1]):
            z = x.copy()
    else:
        z = make_values(rng, z_kind, n)

    if nan_mode in ("sparse", "heavy"):
        p = 0.1 if nan_mode == "sparse" else 0.5
        x[rng.random(n) < p] = np.nan
        z[rng.random(n) < p] = np.nan
    elif nan_mode == "all_x":
        x[:] = np.nan
    elif nan_mode == "all_z":
        z[:] = np.nan
    elif nan_mode.startswith("valid"):
        k = min(int(nan_mode[-1]), n)
        order = rng.permutation(n)
        for i in order[k:]:
            which = rng.integers(0, 3)
            if which in (0, 2):
                x[i] = np.nan
            if which in (1, 2):
                z[i] = np.nan
    elif nan_mode == "const_on_valid":
        # x constant over the valid pairs but not over its own non-NaN values
        z[rng.random(n) < 0.3] = np.nan
        c = float(rng.integers(-3, 4))
        valid = ~np.isnan(z)
        x[valid] = c
        x[~valid] = c + 1.0
    return x, z


informative_rows = st.tuples(
    st.sampled_from(VALUE_KINDS),
    st.sampled_from(VALUE_KINDS + Z_DERIVED),
    st.sampled_from(INFORMATIVE_NAN_MODES),
)
degenerate_rows = st.one_of(
    # a constant side
    st.tuples(
        st.sampled_from(VALUE_KINDS + ["const"]),
        st.just("const"),
        st.sampled_from(INFORMATIVE_NAN_MODES),
    ),
    st.tuples(
        st.just("const"), st.sampled_from(VALUE_KINDS), st.sampled_from(INFORMATIVE_NAN_MODES)
    ),
    # missing values leaving few (or no) valid pairs
    st.tuples(
        st.sampled_from(VALUE_KINDS),
        st.sampled_from(VALUE_KINDS + Z_DERIVED),
        st.sampled_from(DEGENERATE_NAN_MODES),
    ),
)
# roughly one row in four is degenerate
row_specs = st.sampled_from([False, False, False, True]).flatmap(
    lambda degenerate: degenerate_rows if degenerate else informative_rows
)
_LENGTH_RANGES = [st.integers(1, 8), st.integers(9, 64), st.integers(65, 200), st.integers(201, 600)]
lengths = st.sampled_from([0, 1, 1, 2, 2, 3]).flatmap(lambda i: _LENGTH_RANGES[i])


@st.composite
def batches(draw, max_rows=6):
    n = draw(lengths)
    specs = draw(st.lists(row_specs, min_size=1, max_size=max_rows))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    xs, zs = [], []
    for spec in specs:
        x, z = make_row(rng, n, *spec)
        xs.append(x)
        zs.append(z)
    return np.stack(xs), np.stack(zs)


# --------------------------------------------------------------------------- #
# Oracle comparisons
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize(("method", "variant"), METHOD_VARIANTS, ids=MV_IDS)
@ORACLE_SETTINGS
@given(data=batches(), min_pairs=st.sampled_from([1, 2, 3, 3, 3, 4, 5]))
def test_corr_matches_scipy_oracle(method, variant, data, min_pairs):
    x, z = data
    x0, z0 = x.copy(), z.copy()
    got = corr(x, z, method=method, variant=variant, min_pairs=min_pairs)
    assert_same(got, oracle(x, z, method, variant, min_pairs))
    # inputs are not modified in place
    np.testing.assert_array_equal(x, x0)
    np.testing.assert_array_equal(z, z0)


@pytest.mark.parametrize(("method", "variant"), METHOD_VARIANTS, ids=MV_IDS)
@ORACLE_SETTINGS
@given(data=batches())
def test_corr_default_min_pairs_matches_oracle(method, variant, data):
    x, z = data
    got = corr(x, z, method=method, variant=variant)
    assert_same(got, oracle(x, z, method, variant, 3))


def _long_batch(n, seed):
    rng = np.random.default_rng(seed)
    specs = [
        ("int3", "int5", "sparse"),
        ("bin", "int3", "none"),
        ("fine", "int3", "heavy"),
        ("fine", "fine", "sparse"),
        ("grid", "mono", "sparse"),
        ("int5", "copy", "none"),
        ("int5", "neg", "sparse"),
        ("const", "fine", "none"),
        ("int3", "bin", "all_x"),
        ("fine", "grid", "valid2"),
        ("fine", "grid", "valid3"),
        ("grid", "int5", "const_on_valid"),
    ]
    rows = [make_row(rng, n, *spec) for spec in specs]
    return np.stack([r[0] for r in rows]), np.stack([r[1] for r in rows])


@pytest.mark.parametrize("n", [2500, 4099])
@pytest.mark.parametrize(("method", "variant"), METHOD_VARIANTS, ids=MV_IDS)
def test_corr_long_vectors_match_oracle(method, variant, n):
    x, z = _long_batch(n, seed=n)
    got = corr(x, z, method=method, variant=variant)
    assert_same(got, oracle(x, z, method, variant, 3))


@pytest.mark.parametrize(("method", "variant"), METHOD_VARIANTS, ids=MV_IDS)
def test_corr_single_long_vector_matches_oracle(method, variant):
    rng = np.random.default_rng(7)
    x, z = make_row(rng, 6000, "int5", "int3", "sparse")
    got = corr(x, z, method=method, variant=variant)
    assert_same(got, oracle(x, z, method, variant, 3))


@pytest.mark.parametrize(("method", "variant"), METHOD_VARIANTS, ids=MV_IDS)
def test_corr_large_batch_of_short_vectors(method, variant):
    # many metrics x many inputs, each correlated over ~90 systems
    rng = np.random.default_rng(17)
    M, K, N = 40, 30, 90
    x = make_values(rng, "int5", (M, K, N))
    x[: M // 2] = make_values(rng, "grid", (M // 2, K, N))
    z = make_values(rng, "int3", (K, N))
    x[rng.random(x.shape) < 0.05] = np.nan
    z[rng.random(z.shape) < 0.05] = np.nan
    x[3, 4] = 1.0  # a constant row
    z[5, 2:] = np.nan  # a column with two valid pairs
    got = corr(x, z, method=method, variant=variant)
    assert_same(got, oracle(x, z, method, variant, 3))


@pytest.mark.parametrize(("method", "variant"), METHOD_VARIANTS, ids=MV_IDS)
@pytest.mark.parametrize("offset", [50.0, 1e4])
def test_corr_shifted_data_is_stable(method, variant, offset):
    rng = np.random.default_rng(3)
    x = offset + rng.integers(-2000, 2001, (5, 40)) / 256.0
    z = -offset + rng.integers(-2000, 2001, (5, 40)) / 256.0
    x[rng.random(x.shape) < 0.1] = np.nan
    got = corr(x, z, method=method, variant=variant)
    assert_same(got, oracle(x, z, method, variant, 3))


@pytest.mark.parametrize(("method", "variant"), METHOD_VARIANTS, ids=MV_IDS)
def test_corr_strided_inputs(method, variant):
    rng = np.random.default_rng(11)
    big_x = make_values(rng, "int5", (40, 6))
    big_z = make_values(rng, "grid", (6, 80))
    big_x[rng.random(big_x.shape) < 0.2] = np.nan
    x = big_x.T  # (6, 40), not C-contiguous
    z = big_z[:, ::2]  # (6, 40), strided
    got = corr(x, z, method=method, variant=variant)
    assert_same(got, oracle(x, z, method, variant, 3))


# --------------------------------------------------------------------------- #
# Broadcasting
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize(("method", "variant"), METHOD_VARIANTS, ids=MV_IDS)
@PROPERTY_SETTINGS
@given(
    m=st.integers(1, 3),
    k=st.integers(1, 4),
    n=st.one_of(st.integers(1, 12), st.integers(60, 90)),
    layout=st.sampled_from(["x_lead", "z_lead", "outer", "z_1d", "x_1d"]),
    seed=st.integers(0, 2**32 - 1),
    kinds=st.tuples(st.sampled_from(VALUE_KINDS), st.sampled_from(VALUE_KINDS + ["const"])),
)
def test_corr_broadcasting(method, variant, m, k, n, layout, seed, kinds):
    rng = np.random.default_rng(seed)
    shapes = {
        "x_lead": ((m, k, n), (k, n)),
        "z_lead": ((k, n), (m, k, n)),
        "outer": ((m, 1, n), (k, n)),
        "z_1d": ((m, k, n), (n,)),
        "x_1d": ((n,), (m, k, n)),
    }
    sx, sz = shapes[layout]
    x = make_values(rng, kinds[0], sx)
    z = make_values(rng, kinds[1], sz)
    x[rng.random(sx) < 0.2] = np.nan
    z[rng.random(sz) < 0.2] = np.nan
    got = corr(x, z, method=method, variant=variant)
    expected = oracle(x, z, method, variant, 3)
    assert expected[0].shape == np.broadcast_shapes(sx, sz)[:-1]
    assert_same(got, expected)
    # identical to calling on explicitly broadcast copies
    xb, zb = (np.ascontiguousarray(a) for a in np.broadcast_arrays(x, z))
    assert_same(got, tuple(np.asarray(a) for a in corr(xb, zb, method=method, variant=variant)))


@pytest.mark.parametrize(("method", "variant"), METHOD_VARIANTS, ids=MV_IDS)
def test_corr_explicit_broadcast_m_k_n_against_k_n(method, variant):
    rng = np.random.default_rng(5)
    M, K, N = 3, 4, 25
    x = make_values(rng, "int5", (M, K, N))
    z = make_values(rng, "fine", (K, N))
    x[0, 1, :] = np.nan
    x[1, 2, :22] = np.nan  # three valid pairs left
    z[3, ::3] = np.nan
    r, n = corr(x, z, method=method, variant=variant)
    assert np.shape(r) == (M, K) and np.shape(n) == (M, K)
    for mi in range(M):
        for ki in range(K):
            r_exp, n_exp = oracle_corr(x[mi, ki], z[ki], method, variant, 3)
            assert n[mi, ki] == n_exp
            if np.isnan(r_exp):
                assert np.isnan(r[mi, ki])
            else:
                assert abs(r[mi, ki] - r_exp) <= ATOL
    assert n[0, 1] == 0 and np.isnan(r[0, 1])
    assert n[1, 2] == 3


@pytest.mark.parametrize(("method", "variant"), METHOD_VARIANTS, ids=MV_IDS)
def test_corr_1d_inputs_give_0d_results(method, variant):
    x = np.array([1.0, 2.0, 2.0, np.nan, 5.0, 0.0])
    z = np.array([0.5, 0.5, 3.0, 1.0, np.nan, -1.0])
    r, n = corr(x, z, method=method, variant=variant)
    r, n = np.asarray(r), np.asarray(n)
    assert r.shape == () and n.shape == ()
    assert r.dtype == np.float64 and n.dtype == np.int64
    r_exp, n_exp = oracle_corr(x, z, method, variant, 3)
    assert int(n) == n_exp == 4
    assert abs(float(r) - r_exp) <= ATOL


# --------------------------------------------------------------------------- #
# Properties
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize(("method", "variant"), METHOD_VARIANTS, ids=MV_IDS)
@PROPERTY_SETTINGS
@given(data=batches())
def test_corr_properties(method, variant, data):
    x, z = data
    r, n = (np.asarray(a) for a in corr(x, z, method=method, variant=variant))
    defined = ~np.isnan(r)
    # bounded
    assert np.all(r[defined] >= -1.0) and np.all(r[defined] <= 1.0)
    # n never exceeds the length and is non-negative
    assert np.all(n >= 0) and np.all(n <= x.shape[-1])
    # symmetric in its arguments
    r2, n2 = (np.asarray(a) for a in corr(z, x, method=method, variant=variant))
    np.testing.assert_array_equal(n, n2)
    np.testing.assert_allclose(r, r2, rtol=0, atol=ATOL)
    # invariant to a common permutation of the observations
    perm = np.random.default_rng(x.shape[-1]).permutation(x.shape[-1])
    r3, n3 = (np.asarray(a) for a in corr(x[..., perm], z[..., perm], method=method, variant=variant))
    np.testing.assert_array_equal(n, n3)
    np.testing.assert_allclose(r, r3, rtol=0, atol=ATOL)
    # rows are independent of each other
    for i in range(x.shape[0]):
        ri, ni = (np.asarray(a) for a in corr(x[i], z[i], method=method, variant=variant))
        assert int(ni) == n[i]
        np.testing.assert_allclose(ri, r[i], rtol=0, atol=ATOL)


@pytest.mark.parametrize(("method", "variant"), METHOD_VARIANTS, ids=MV_IDS)
def test_corr_perfect_and_reversed(method, variant):
    x = np.array([[0.0, 1.0, 2.0, 3.0, 4.0, 5.0], [3.0, 1.0, 4.0, 1.0, 5.0, 9.0]])
    r, _ = corr(x, x, method=method, variant=variant)
    r_neg, _ = corr(x, -x, method=method, variant=variant)
    np.testing.assert_allclose(r, -np.asarray(r_neg), rtol=0, atol=ATOL)
    assert abs(r[0] - 1.0) <= ATOL
    if not (method == "kendall" and variant == "c"):
        # tau-c of a tied vector with itself is below one
        assert abs(r[1] - 1.0) <= ATOL
    assert_same((r, _), oracle(x, x, method, variant, 3))


# --------------------------------------------------------------------------- #
# min_pairs and degenerate rows
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize(("method", "variant"), METHOD_VARIANTS, ids=MV_IDS)
@pytest.mark.parametrize("min_pairs", [1, 2, 3, 4, 6])
def test_corr_min_pairs_threshold(method, variant, min_pairs):
    # row k has exactly k valid, non-constant pairs (k >= 2)
    N = 8
    x = np.full((N + 1, N), np.nan)
    z = np.full((N + 1, N), np.nan)
    base_x = np.array([0.0, 3.0, 1.0, 2.0, 2.0, 5.0, -1.0, 4.0])
    base_z = np.array([1.0, 2.0, 0.0, 2.0, 7.0, 5.0, 1.0, 3.0])
    for k in range(N + 1):
        x[k, :k] = base_x[:k]
        z[k, :k] = base_z[:k]
        x[k, k:] = 9.0  # a value whose partner is missing
    r, n = (np.asarray(a) for a in corr(x, z, method=method, variant=variant, min_pairs=min_pairs))
    np.testing.assert_array_equal(n, np.arange(N + 1))
    for k in range(N + 1):
        if k < max(min_pairs, 2):
            assert np.isnan(r[k]), (k, r[k])
        else:
            assert not np.isnan(r[k]), k
    assert_same((r, n), oracle(x, z, method, variant, min_pairs))


@pytest.mark.parametrize(("method", "variant"), METHOD_VARIANTS, ids=MV_IDS)
def test_corr_default_min_pairs_is_three(method, variant):
    x = np.array([[1.0, 2.0, np.nan, np.nan], [1.0, 2.0, 3.0, np.nan]])
    z = np.array([[2.0, 1.0, 5.0, np.nan], [2.0, 1.0, 5.0, np.nan]])
    r, n = corr(x, z, method=method, variant=variant)
    np.testing.assert_array_equal(n, [2, 3])
    assert np.isnan(r[0]) and not np.isnan(r[1])
    r2, n2 = corr(x, z, method=method, variant=variant, min_pairs=2)
    np.testing.assert_array_equal(n2, [2, 3])
    assert abs(r2[0] + 1.0) <= ATOL


@pytest.mark.parametrize(("method", "variant"), METHOD_VARIANTS, ids=MV_IDS)
def test_corr_constant_over_valid_pairs(method, variant):
    x = np.array(
        [
            [1.0, 1.0, 1.0, 1.0, 1.0],  # constant everywhere
            [2.0, 2.0, 7.0, 2.0, 2.0],  # constant once pair 2 is dropped
            [2.0, 2.0, 7.0, 2.0, 2.0],  # not constant: pair 2 kept
            [np.nan] * 5,  # all missing
            [1.0, 2.0, 3.0, 4.0, 5.0],  # z constant
        ]
    )
    z = np.array(
        [
            [1.0, 2.0, 3.0, 4.0, 5.0],
            [1.0, 2.0, np.nan, 4.0, 5.0],
            [1.0, 2.0, 3.0, 4.0, 5.0],
            [1.0, 2.0, 3.0, 4.0, 5.0],
            [0.0, 0.0, 0.0, 0.0, np.nan],
        ]
    )
    r, n = (np.asarray(a) for a in corr(x, z, method=method, variant=variant))
    np.testing.assert_array_equal(n, [5, 4, 5, 0, 4])
    np.testing.assert_array_equal(np.isnan(r), [True, True, False, True, True])
    assert_same((r, n), oracle(x, z, method, variant, 3))


@pytest.mark.parametrize(("method", "variant"), METHOD_VARIANTS, ids=MV_IDS)
def test_corr_empty_last_axis(method, variant):
    x = np.empty((3, 0))
    z = np.empty((3, 0))
    r, n = (np.asarray(a) for a in corr(x, z, method=method, variant=variant))
    assert r.shape == (3,) and n.shape == (3,)
    assert np.all(np.isnan(r))
    np.testing.assert_array_equal(n, 0)
