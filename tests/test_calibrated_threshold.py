"""calibrated_threshold: the epsilon of calibrate_epsilon (the oracle), bit for bit, without the curve."""

from __future__ import annotations

import numpy as np
import pytest

from xcorrstat._kernels.mt.ties import calibrate_epsilon, calibrated_threshold
from xcorrstat._significance.pairoutcome import calibrated_epsilons


def _scores(rng, shape, kind, nan_frac):
    if kind == "integer":
        v = rng.integers(0, 6, size=shape).astype(float)
    elif kind == "rounded":  # continuous, with many ties at a coarse grid
        v = np.round(rng.normal(size=shape), 1)
    else:
        v = rng.normal(size=shape)
    v[rng.random(shape) < nan_frac] = np.nan
    return v


@pytest.mark.parametrize("variant", ["acc23", "23"])
@pytest.mark.parametrize("kind", ["integer", "rounded", "continuous"])
@pytest.mark.parametrize("seed", range(8))
def test_equals_calibrate_epsilon(seed, kind, variant):
    rng = np.random.default_rng([seed, len(kind), len(variant)])
    groups, items = int(rng.integers(1, 21)), int(rng.integers(2, 61))
    nan_frac = float(rng.choice([0.0, 0.1, 0.4]))
    x = _scores(rng, (3, groups, items), kind, nan_frac)
    z = rng.integers(0, 5, size=(groups, items)).astype(float)
    z[rng.random(z.shape) < nan_frac] = np.nan
    np.testing.assert_array_equal(calibrated_threshold(x, z, variant=variant),
                                  calibrate_epsilon(x, z, variant=variant)[0])


@pytest.mark.parametrize("seed", range(20))
def test_small_groups_of_many_pair_counts(seed):
    """Groups of 2 to 6 items with missing cells: many classes of groups, whose exact objectives tie
    across classes (1/3 = 2/6), where the rounded running sum cannot tell them apart."""
    rng = np.random.default_rng(seed)
    groups = int(rng.integers(1, 21))
    x = rng.integers(0, 3, size=(4, groups, 6)).astype(float)
    z = rng.integers(0, 5, size=(groups, 6)).astype(float)
    z[rng.random(z.shape) < 0.3] = np.nan
    x[:, np.isnan(z)] = np.nan
    np.testing.assert_array_equal(calibrated_threshold(x, z), calibrate_epsilon(x, z)[0])


def test_flat_top_and_no_pairs():
    z = np.arange(8.0)[None]
    x = np.stack([-z, z, np.zeros_like(z), np.full_like(z, np.nan)])  # no gain, every gain, one candidate, no pair
    np.testing.assert_array_equal(calibrated_threshold(x, z), calibrate_epsilon(x, z)[0])
    assert np.isnan(calibrated_threshold(x[3], z))


def test_variant_checked():
    with pytest.raises(ValueError, match="variant"):
        calibrated_threshold([[1.0, 2.0]], [[1.0, 2.0]], variant="b")


def test_calibrated_epsilons_blocks():
    rng = np.random.default_rng(5)
    gx = np.round(rng.normal(size=(5, 7, 30)), 1)
    gz = rng.integers(0, 5, size=(7, 30)).astype(float)
    gx[:, rng.random((7, 30)) < 0.1] = np.nan
    expected = np.where(np.isnan(e := calibrate_epsilon(gx, gz[None])[0]), 0.0, e)
    np.testing.assert_array_equal(calibrated_epsilons(gx, gz, "acc23"), expected)


@pytest.mark.parametrize("seed", range(5))
def test_infinite_scores_never_tie(seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 4, size=(2, 3, 9)).astype(float)
    x[rng.random(x.shape) < 0.2] = np.inf
    x[0, 0] = np.inf  # a group whose pairs all have an infinite or undefined |dm|
    z = rng.integers(0, 3, size=(3, 9)).astype(float)
    np.testing.assert_array_equal(calibrated_threshold(x, z), calibrate_epsilon(x, z)[0])
    np.testing.assert_array_equal(calibrated_threshold(np.full((2, 4), np.inf), z[:2, :4]), np.nan)
