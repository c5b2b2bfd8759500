"""The score test's per-draw tie calibration by walks along one sorted table of pairings
(xcorrstat._kernels.mt.swap_ties) against calibrate_epsilon on the explicitly swapped matrices."""

import numpy as np
import pytest
import xarray as xr

import xcorrstat
from xcorrstat._kernels.mt.swap_ties import swap_pair_table, swapped_calibration
from xcorrstat._kernels.mt.ties import calibrate_epsilon


def _oracle(x, y, z, m, variant):
    return (calibrate_epsilon(np.where(m, y, x), z, variant=variant)[1],
            calibrate_epsilon(np.where(m, x, y), z, variant=variant)[1])


@pytest.mark.parametrize("seed", range(12))
def test_walks_equal_the_swapped_matrices_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    for trial in range(25):
        g, n, b = int(rng.integers(1, 6)), int(rng.integers(2, 9)), int(rng.integers(1, 40))
        levels = int(rng.choice([2, 3, 5, 50]))
        x = rng.integers(0, levels, (g, n)) / 2.0  # ties within and between the metrics
        y = rng.integers(0, levels, (g, n)) / 2.0
        z = rng.integers(0, int(rng.choice([2, 3, 10])), (g, n)).astype(float)
        if trial % 2:
            for a in (x, y, z):
                a[rng.random((g, n)) < 0.2] = np.nan
        m = rng.random((b, g, n)) < 0.5
        variant = "acc23" if trial % 3 else "23"
        got = swapped_calibration(swap_pair_table(x, y, z), m, variant=variant)
        for g_side, o_side in zip(got, _oracle(x, y, z, m, variant)):
            np.testing.assert_array_equal(g_side, o_side)


def test_sums_past_64_bits_take_the_swapped_matrices():
    # 59 groups with 2 .. 60 valid items: the lcm of their pair counts does not fit 64 bits
    rng = np.random.default_rng(2)
    x, y = (rng.integers(0, 5, (59, 60)).astype(float) for _ in range(2))
    z = rng.integers(0, 4, (59, 60)).astype(float)
    for j in range(59):
        z[j, j + 2:] = np.nan
    m = rng.random((5, 59, 60)) < 0.5
    got = swapped_calibration(swap_pair_table(x, y, z), m)
    for g_side, o_side in zip(got, _oracle(x, y, z, m, "acc23")):
        np.testing.assert_array_equal(g_side, o_side)


def test_each_draw_is_its_own_in_any_batch():
    rng = np.random.default_rng(4)
    x, y, z = (rng.integers(0, 4, (30, 6)).astype(float) for _ in range(3))
    m = rng.random((50, 30, 6)) < 0.5
    table = swap_pair_table(x, y, z)
    whole = swapped_calibration(table, m)
    parts = [swapped_calibration(table, m[i:i + 7]) for i in range(0, 50, 7)]
    for side in range(2):
        np.testing.assert_array_equal(np.concatenate([p[side] for p in parts]), whole[side])


def test_a_table_over_the_budget_is_refused_in_one_line():
    rng = np.random.default_rng(0)
    scores = rng.integers(0, 5, (3, 4, 400)).astype(float)
    ds = xr.Dataset({name: (("system", "input"), scores[k]) for k, name in enumerate(["mx", "my", "human"])})
    with xcorrstat.set_options(memory_budget="16MiB"), pytest.raises(ValueError) as err:
        xcorrstat.permutation_test(ds, x="mx", y="my", target="human", level="within_system", method="kendall",
                                   variant="acc23", test=xcorrstat.Permutation(epsilon="calibrate", n_resamples=10))
    message = str(err.value)
    assert "\n" not in message and "4 groups of 400 items" in message and "memory_budget" in message
