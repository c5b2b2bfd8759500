"""The compiled pair counts of Kendall's tau (``_kernels/rank/tau_counts.py``, the kernel of ``kendall``) against
the NumPy kernels they replaced there, kept in ``_kernels/rank/tau.py`` as their oracles: the pair-sign kernel
(``kendall_pairwise``) and the sort-and-merge kernel (``kendall_sorted``), bit for bit, for every variant, with
ties, missing pairs, epsilon, rows shared by broadcasting, and both counts on the same rows; and scipy's."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats
import xarray as xr

import xcorrstat
from xcorrstat._kernels.correlation import PAIRWISE_MAX_N, kendall
from xcorrstat._kernels.rank.tau import kendall_pairwise, kendall_sorted
from xcorrstat._kernels.rank.tau_counts import kendall_counts

VARIANTS = ("b", "c", "a", "23", "acc23")


def _data(seed: int, shape_x: tuple[int, ...], shape_z: tuple[int, ...], levels: int, missing: float):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, levels, size=shape_x).astype(float) * 0.25
    z = rng.integers(0, levels, size=shape_z).astype(float)
    x[rng.random(x.shape) < missing] = np.nan
    z[rng.random(z.shape) < missing] = np.nan
    if x.size > 2:
        x.flat[1] = -0.0  # equal to 0.0: a tie, as in the NumPy kernels
    return x, z


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("length", [0, 1, 2, 3, 15, PAIRWISE_MAX_N, PAIRWISE_MAX_N + 1, 400])
@pytest.mark.parametrize("levels", [3, 1000])
def test_both_counts_are_both_numpy_kernels_bit_for_bit(variant, length, levels):
    x, z = _data(length * 7 + levels, (5, 3, length), (3, length), levels, 0.15)
    ax, az = np.broadcast_arrays(x, z)
    valid = ~np.isnan(ax) & ~np.isnan(az)
    want = kendall_pairwise(ax, az, valid, variant=variant)
    with np.errstate(invalid="ignore", divide="ignore"):
        np.testing.assert_array_equal(kendall_sorted(ax, az, valid, variant=variant), want)
    for by_sorting in (False, True):
        with np.errstate(invalid="ignore", divide="ignore"):
            got = kendall_counts(x, z, valid, variant=variant, by_sorting=by_sorting)
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("variant", ("b", "a", "23", "acc23"))
@pytest.mark.parametrize("epsilon", [0.25, 0.6])
def test_epsilon_ties_are_the_pair_kernels(variant, epsilon):
    x, z = _data(11, (4, 20, 15), (20, 15), 6, 0.1)
    ax, az = np.broadcast_arrays(x, z)
    valid = ~np.isnan(ax) & ~np.isnan(az)
    with np.errstate(invalid="ignore", divide="ignore"):
        want = kendall_pairwise(ax, az, valid, variant=variant, epsilon=epsilon)
        got = kendall_counts(x, z, valid, variant=variant, epsilon=epsilon)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("shapes", [((4, 3, 50), (3, 50)), ((3, 50), (4, 3, 50)), ((50,), (2, 50)),
                                    ((2, 1, 150), (1, 3, 150)), ((150,), (150,))])
def test_rows_read_in_place_are_the_materialised_rows(shapes):
    x, z = _data(5, *shapes, levels=8, missing=0.2)
    for variant in VARIANTS:
        got = kendall(x, z, variant=variant)
        ax, az = (np.ascontiguousarray(a) for a in np.broadcast_arrays(x, z))
        want = kendall(ax, az, variant=variant)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])


@pytest.mark.parametrize("variant", ("b", "c"))
@pytest.mark.parametrize("length", [12, 3000])
def test_kendall_is_scipys(variant, length):
    x, z = _data(length, (3, length), (length,), 9, 0.1)
    tau, n = kendall(x, z, variant=variant)
    for row in range(3):
        keep = ~np.isnan(x[row]) & ~np.isnan(z)
        want = scipy.stats.kendalltau(x[row, keep], z[keep], variant=variant).statistic
        assert n[row] == keep.sum()
        np.testing.assert_allclose(tau[row], want, rtol=1e-13, atol=0)


def test_correlate_kendall_does_not_depend_on_the_budget():
    rng = np.random.default_rng(2)
    cells = rng.normal(size=(4, 12, 300))
    cells[:, rng.random((12, 300)) < 0.1] = np.nan
    data = xr.Dataset({name: (("system", "input"), cells[k]) for k, name in enumerate(["human", "m1", "m2", "m3"])})
    out = {}
    for budget in ("16MiB", "4GiB"):
        with xcorrstat.set_options(memory_budget=budget):
            out[budget] = [xcorrstat.correlate(data, target="human", level=level, method="kendall", variant=v)
                           for level in ("system", "input", "global", "within_system") for v in VARIANTS]
    for small, big in zip(out["16MiB"], out["4GiB"]):
        np.testing.assert_array_equal(small.values, big.values)
