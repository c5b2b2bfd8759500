"""The compiled tie calibration of bootstrap draws against its NumPy oracle.

:func:`xcorrstat._kernels.mt.tie_sweeps.weighted_calibration` (compiled walks along each metric's
sorted pairs, a block of draws at a time) is compared with
:func:`~xcorrstat._kernels.mt.tie_sweeps.weighted_calibration_numpy` (every pair of every draw at once):
the same epsilon, value and drawn groups, bit for bit and NaN in the same places, on groups with ties in
the target (integer scores 0..4) and in the metric, with and without missing cells (integer weights, and
fractions compared within 1e-12), and the same draws whatever batch they are computed in.
"""

from __future__ import annotations

import numpy as np
import pytest

from xcorrstat._kernels.mt.tie_sweeps import sorted_pairs, weighted_calibration, weighted_calibration_numpy


def _groups(seed, m=3, g=40, n=6, nan_frac=0.0):
    """(M, G, n) metric scores tied in steps of 0.25 (rounded to 0.1 for the last but one metric, not
    rounded for the last) and a shared integer target 0..4, with ``nan_frac`` of the cells missing."""
    rng = np.random.default_rng(seed)
    z = rng.integers(0, 5, (1, g, n)).astype(float)
    noise = z + rng.normal(0.0, 0.7, (2, g, n))
    x = np.concatenate([z + rng.integers(-4, 5, (m - 2, g, n)) * 0.25, np.round(noise[:1], 1), noise[1:]])
    z = np.broadcast_to(z, x.shape).copy()
    if nan_frac:
        x[rng.random(x.shape) < nan_frac] = np.nan
        z[rng.random(z.shape) < nan_frac / 2] = np.nan
    return x, z


def _counts(seed, b, size, zeros=False):
    """``b`` bootstrap draws of ``size`` units: multinomial counts (some units given 0 with ``zeros``)."""
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(size, np.full(size, 1.0 / size), size=b).astype(float)
    if zeros:
        counts[rng.random(counts.shape) < 0.2] = 0.0
    return counts


def _both(pairs, w, c, variant):
    return weighted_calibration(pairs, w, c, variant=variant), weighted_calibration_numpy(pairs, w, c, variant=variant)


def _assert_same(got, want):
    for name, a, b in zip(("epsilon", "best", "groups"), got, want):
        np.testing.assert_array_equal(a, b, err_msg=name)


@pytest.mark.parametrize("variant", ["acc23", "23"])
@pytest.mark.parametrize("nan_frac", [0.0, 0.15, 0.5])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_compiled_sweep_equals_numpy_oracle(variant, nan_frac, seed):
    x, z = _groups(seed, nan_frac=nan_frac)
    pairs = sorted_pairs(x, z)
    b = (25, 70, 33)[seed]  # one block of draws, three, two
    w = _counts(seed + 10, b, x.shape[-1])
    c = _counts(seed + 20, b, x.shape[1], zeros=nan_frac > 0.3)
    got, want = _both(pairs, w, c, variant)
    _assert_same(got, want)
    assert np.isfinite(got[0]).any()


@pytest.mark.parametrize("variant", ["acc23", "23"])
def test_exact_path_is_taken_and_equal_on_complete_data(variant):
    """Complete data: every drawn group has the draw's pair count, the weights are integers."""
    x, z = _groups(5, m=2, g=30, n=8)
    pairs = sorted_pairs(x, z)
    w = _counts(6, 40, 8, zeros=True)
    c = _counts(7, 40, 30)
    got, want = _both(pairs, w, c, variant)
    _assert_same(got, want)
    paired = (w > 0).sum(axis=-1) >= 2  # a draw with two distinct drawn systems has a pair in every group
    assert np.isfinite(got[0][:, paired]).all() and np.isnan(got[0][:, ~paired]).all()


def test_draws_without_a_pair_are_nan_in_both():
    x, z = _groups(8, m=2, g=3, n=3, nan_frac=0.4)
    pairs = sorted_pairs(x, z)
    w = _counts(9, 30, 3, zeros=True)
    c = _counts(10, 30, 3, zeros=True)
    got, want = _both(pairs, w, c, "acc23")
    _assert_same(got, want)
    assert np.isnan(got[0]).any() and (got[2] == 0).any()


@pytest.mark.parametrize("nan_frac", [0.0, 0.2])
def test_draws_do_not_depend_on_their_batch(nan_frac):
    x, z = _groups(11, nan_frac=nan_frac)
    pairs = sorted_pairs(x, z)
    w = _counts(12, 70, x.shape[-1])
    c = _counts(13, 70, x.shape[1])
    whole = weighted_calibration(pairs, w, c)
    for step in (1, 7):
        parts = [weighted_calibration(pairs, w[i:i + step], c[i:i + step]) for i in range(0, len(w), step)]
        _assert_same(tuple(np.concatenate(p, axis=-1) for p in zip(*parts)), whole)


def test_groups_without_pairs_are_nan():
    """One item per group: no pair at all (the oracle cannot take an empty table)."""
    pairs = sorted_pairs(np.ones((1, 2, 1)), np.ones((1, 2, 1)))
    eps, best, groups = weighted_calibration(pairs, np.ones((3, 1)), np.ones((3, 2)))
    assert np.isnan(eps).all() and np.isnan(best).all() and (groups == 0).all()
