"""Tests of :mod:`xcorrstat._kernels.corrections` against explicit loop oracles.

The oracles follow the textbook definitions hypothesis by hypothesis: adjusted
p-values as a max (Holm) or min (BH) over the sorted family, and rejections by
running the step-down (Holm) or step-up (BH) procedure itself.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xcorrstat._kernels.corrections import CORRECTIONS, adjust_pvalues, reject

# --------------------------------------------------------------------------- #
# Loop oracles (one family, a Python list; NaN = no hypothesis)
# --------------------------------------------------------------------------- #
def family(p):
    """Sorted non-NaN p-values and the family size."""
    present = sorted(v for v in p if not math.isnan(v))
    return present, len(present)


def oracle_adjust(p, method):
    sorted_p, m = family(p)
    out = []
    for v in p:
        if math.isnan(v):
            out.append(math.nan)
            continue
        if method == "bonferroni":
            out.append(min(1.0, v * m))
            continue
        k = sorted_p.index(v) + 1  # first position of v; ties give the same value below
        if method == "holm":
            best = max((m - j + 1) * sorted_p[j - 1] for j in range(1, k + 1))
        else:
            best = min(sorted_p[j - 1] * (m / j) for j in range(k, m + 1))
        out.append(min(1.0, best))
    return out


def oracle_reject(p, alpha, method):
    sorted_p, m = family(p)
    threshold = -1.0  # reject every p-value <= threshold
    if method == "bonferroni":
        return [not math.isnan(v) and v * m <= alpha for v in p]
    if method == "holm":  # step down: stop at the first acceptance
        for j, v in enumerate(sorted_p, start=1):
            if (m - j + 1) * v > alpha:
                break
            threshold = v
    else:  # step up: the largest j with p_(j) m / j <= alpha
        for j in range(m, 0, -1):
            if sorted_p[j - 1] * (m / j) <= alpha:
                threshold = sorted_p[j - 1]
                break
    return [not math.isnan(v) and v <= threshold for v in p]


def assert_same(got, want):
    np.testing.assert_allclose(np.asarray(got, dtype=float), np.asarray(want, dtype=float),
                               rtol=1e-12, atol=0, equal_nan=True)


# --------------------------------------------------------------------------- #
# Fixture
# --------------------------------------------------------------------------- #
HOLM_P = [0.168, 0.297, 0.357, 0.019, 0.218, 0.001]


def test_holm_fixture():
    assert np.flatnonzero(reject(HOLM_P, alpha=0.05, method="holm")).tolist() == [5]
    assert set(np.flatnonzero(reject(HOLM_P, alpha=0.10, method="holm")).tolist()) == {5, 3}
    assert_same(adjust_pvalues(HOLM_P, method="holm"), [0.672, 0.672, 0.672, 0.095, 0.672, 0.006])
    assert oracle_reject(HOLM_P, 0.05, "holm") == [False] * 5 + [True]


def test_small_known_values():
    assert_same(adjust_pvalues([0.01, 0.04, 0.03, 0.005], method="fdr_bh"),
                [0.02, 0.04, 0.04, 0.02])
    assert_same(adjust_pvalues([0.01, math.nan, 0.02], method="bonferroni"), [0.02, math.nan, 0.04])
    assert_same(adjust_pvalues([0.6, 0.6, 0.1], method="holm"), [1.0, 1.0, 0.3])


# --------------------------------------------------------------------------- #
# Oracle comparisons on generated families (ties and NaNs)
# --------------------------------------------------------------------------- #
TIED = [0.0, 0.001, 0.01, 0.0125, 0.02, 0.025, 0.05, 0.1, 0.5, 1.0]
p_value = st.one_of(st.floats(0, 1), st.sampled_from(TIED), st.just(math.nan))
families = st.lists(p_value, min_size=0, max_size=25)
alphas = st.sampled_from([0.001, 0.01, 0.05, 0.1, 0.2, 0.5])


@settings(max_examples=300, deadline=None)
@given(families, st.sampled_from(CORRECTIONS), alphas)
def test_matches_loop_oracle(p, method, alpha):
    adjusted = adjust_pvalues(p, method=method)
    assert adjusted.shape == (len(p),)
    assert_same(adjusted, oracle_adjust(p, method))
    assert reject(p, alpha=alpha, method=method).tolist() == oracle_reject(p, alpha, method)


@settings(max_examples=100, deadline=None)
@given(families, st.sampled_from(CORRECTIONS))
def test_monotone_and_bounded(p, method):
    adjusted = adjust_pvalues(p, method=method)
    arr = np.asarray(p, dtype=float)
    ok = ~np.isnan(arr)
    assert np.array_equal(np.isnan(adjusted), np.isnan(arr))
    a, q = arr[ok], adjusted[ok]
    assert np.all(q >= a) and np.all(q <= 1.0)
    order = np.argsort(a, kind="stable")
    qs, ps = q[order], a[order]
    assert np.all(np.diff(qs) >= 0)  # adjusted p-values keep the order of the p-values
    tie = np.diff(ps) == 0
    assert np.array_equal(qs[1:][tie], qs[:-1][tie])  # tied p-values share one adjusted value


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 12).flatmap(lambda k: st.lists(st.lists(p_value, min_size=k, max_size=k),
                                                     min_size=1, max_size=5)),
       st.sampled_from(CORRECTIONS))
def test_families_along_axis(rows, method):
    p = np.array(rows, dtype=float)
    want = np.array([oracle_adjust(row, method) for row in rows]).reshape(p.shape)
    assert_same(adjust_pvalues(p, method=method), want)
    assert_same(adjust_pvalues(p.T, method=method, axis=0), want.T)
    batch = np.stack([p, p[::-1]])  # (2, rows, k): families along the last axis
    assert_same(adjust_pvalues(batch, method=method, axis=-1), np.stack([want, want[::-1]]))
    moved = np.moveaxis(batch, -1, 1)
    assert_same(adjust_pvalues(moved, method=method, axis=1), np.moveaxis(np.stack([want, want[::-1]]), -1, 1))
    assert np.array_equal(reject(p.T, method=method, axis=0), reject(p, method=method).T)


# --------------------------------------------------------------------------- #
# Edges and argument checks
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("method", CORRECTIONS)
def test_edges(method):
    assert adjust_pvalues([], method=method).shape == (0,)
    assert np.isnan(adjust_pvalues([math.nan, math.nan], method=method)).all()
    assert not reject([math.nan, 0.0], method=method)[0] and reject([math.nan, 0.0], method=method)[1]
    assert float(adjust_pvalues(0.3, method=method)) == 0.3
    assert adjust_pvalues(np.full((3, 0), 0.5), method=method).shape == (3, 0)
    # the family size counts only the non-NaN p-values
    full = adjust_pvalues([0.02, math.nan, math.nan, 0.04], method=method)
    assert_same(full[[0, 3]], adjust_pvalues([0.02, 0.04], method=method))
    assert np.isnan(full[1:3]).all()


def test_invalid_arguments():
    with pytest.raises(ValueError, match="method"):
        adjust_pvalues([0.1], method="fdr_by")
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        adjust_pvalues([0.1, 1.5])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        adjust_pvalues([-0.1])
    for alpha in (0.0, 1.0, -0.2, True, "0.05"):
        with pytest.raises(ValueError, match="alpha"):
            reject([0.1], alpha=alpha)
    with pytest.raises(TypeError):
        reject([0.1], 0.05)
