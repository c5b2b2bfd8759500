"""Empty units: a system pair, group, item or system without valid data is left out of every statistic.

The data have an unrated system (no target score anywhere), an empty input (no target score
for any system) and an input with a single rated system; with ``pool=``, a language pair in
which one system is unrated. Each statistic is checked against loops written out here, on
the grid as it is: the empty units must count neither as agreement nor as disagreement, and
the count (``n``, ``n_pairs``) must report the units used. Where the draws do not depend on
the grid's shape, the result must also equal the result on the data with the empty units
dropped.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
import xarray as xr
from scipy import stats

import xcorrstat

UNRATED, EMPTY, SINGLE = 4, 3, 6  # system without target; input without target; input with one rated system
LEVELS = ["system", "input", "within_system", "global"]


def grid(seed: int = 0, n_sys: int = 6, n_inp: int = 8) -> xr.Dataset:
    """Integer target (ties) and half-point metrics; the empty units above."""
    rng = np.random.default_rng(seed)
    z = rng.integers(0, 4, (n_sys, n_inp)).astype(float)
    a = z + rng.integers(-2, 3, z.shape) / 2
    b = z + rng.integers(-3, 4, z.shape) / 2
    z[UNRATED] = np.nan
    z[:, EMPTY] = np.nan
    z[1:, SINGLE] = np.nan
    dims = ("system", "input")
    return xr.Dataset({"a": (dims, a), "b": (dims, b), "h": (dims, z)},
                      coords={"system": [f"s{i}" for i in range(n_sys)], "input": [f"i{j}" for j in range(n_inp)]})


def dropped(ds: xr.Dataset) -> xr.Dataset:
    """The data without the units that have no valid cell (the single-system input keeps its cell)."""
    return ds.drop_sel(system=f"s{UNRATED}", input=f"i{EMPTY}")


def groups(x: np.ndarray, z: np.ndarray, level: str) -> list[tuple[list, list]]:
    """The valid items of every group of a level, as (metric, target) lists (system means as Fractions)."""
    n_sys, n_inp = x.shape
    if level == "input":
        cols = [[(x[s, j], z[s, j]) for s in range(n_sys)] for j in range(n_inp)]
    elif level == "within_system":
        cols = [[(x[s, j], z[s, j]) for j in range(n_inp)] for s in range(n_sys)]
    elif level == "global":
        cols = [[(x[s, j], z[s, j]) for s in range(n_sys) for j in range(n_inp)]]
    else:
        means = []
        for s in range(n_sys):
            ok = [j for j in range(n_inp) if not (np.isnan(x[s, j]) or np.isnan(z[s, j]))]
            if ok:
                means.append((sum(Fraction(x[s, j]) for j in ok) / len(ok),
                               sum(Fraction(z[s, j]) for j in ok) / len(ok)))
        cols = [means]
    out = []
    for col in cols:
        valid = [(p, q) for p, q in col if not (np.isnan(float(p)) or np.isnan(float(q)))]
        out.append(([p for p, _ in valid], [q for _, q in valid]))
    return out


def sign(v) -> int:
    return int(v > 0) - int(v < 0)


def agreement(xs, zs, eps=0.0) -> tuple[int, int]:
    """(agreeing pairs, pairs) of one group: signs equal, a metric tie within eps agreeing only with a tie."""
    agree = pairs = 0
    for p, q in itertools.combinations(range(len(xs)), 2):
        dm, dz = xs[p] - xs[q], zs[p] - zs[q]
        agree += (0 if abs(dm) <= eps else sign(dm)) == sign(dz)
        pairs += 1
    return agree, pairs


# ---------------------------------------------------------------------------------- pairwise statistics


@pytest.mark.parametrize("level", LEVELS)
def test_pairwise_accuracy(level):
    ds = grid()
    res = xcorrstat.pairwise_accuracy(ds, target="h", level=level)
    for m in ("a", "b"):
        counts = [agreement(xs, zs) for xs, zs in groups(ds[m].values, ds["h"].values, level)]
        agree, pairs = sum(c[0] for c in counts), sum(c[1] for c in counts)
        assert int(res["n_agree"].sel(metric=m)) == agree and int(res["n_pairs"].sel(metric=m)) == pairs
        assert float(res["accuracy"].sel(metric=m)) == agree / pairs
    xr.testing.assert_identical(res, xcorrstat.pairwise_accuracy(dropped(ds), target="h", level=level))


@pytest.mark.parametrize("level", LEVELS)
def test_kendall_like(level):
    ds = grid(1)
    threshold = 0.25 if level == "system" else 1.0
    res = xcorrstat.kendall_like(ds, target="h", level=level, threshold=threshold)
    for m in ("a", "b"):
        con = dis = 0
        for xs, zs in groups(ds[m].values, ds["h"].values, level):
            for p, q in itertools.combinations(range(len(xs)), 2):
                dm, dz = xs[p] - xs[q], zs[p] - zs[q]
                if abs(dz) >= threshold:
                    con += sign(dm) == sign(dz) and dm != 0
                    dis += not (sign(dm) == sign(dz) and dm != 0)
        assert (int(res["concordant"].sel(metric=m)), int(res["discordant"].sel(metric=m))) == (con, dis)
        assert float(res["correlation"].sel(metric=m)) == (con - dis) / (con + dis)
    xr.testing.assert_identical(res, xcorrstat.kendall_like(dropped(ds), target="h", level=level,
                                                            threshold=threshold))


@pytest.mark.parametrize("level", LEVELS)
def test_pairwise_difference_pearson(level):
    ds = grid(13)
    res = xcorrstat.pairwise_difference_pearson(ds, target="h", level=level)
    for m in ("a", "b"):
        sxz = sxx = szz = 0.0
        pairs = 0
        for xs, zs in groups(ds[m].values, ds["h"].values, level):
            for p, q in itertools.combinations(range(len(xs)), 2):
                dm, dz = float(xs[p] - xs[q]), float(zs[p] - zs[q])
                sxz, sxx, szz, pairs = sxz + dm * dz, sxx + dm * dm, szz + dz * dz, pairs + 1
        assert int(res["n_pairs"].sel(metric=m)) == pairs
        assert float(res["correlation"].sel(metric=m)) == pytest.approx(sxz / np.sqrt(sxx * szz), abs=1e-12)


def tasks() -> xr.Dataset:
    """Two language pairs; in the second, system s1 is unrated."""
    first, second = grid(2), grid(3)
    second["h"][1] = np.nan
    return xr.concat([first, second], dim="task").assign_coords(task=["t0", "t1"])


@pytest.mark.parametrize("level", ["system", "input"])
def test_pooled_over_language_pairs(level):
    ds = tasks()
    acc = xcorrstat.pairwise_accuracy(ds, target="h", level=level, pool="task")
    tau = xcorrstat.kendall_like(ds, target="h", level=level, pool="task", threshold=1.0)
    for m in ("a", "b"):
        counts = [agreement(xs, zs) for t in ("t0", "t1")
                  for xs, zs in groups(ds[m].sel(task=t).values, ds["h"].sel(task=t).values, level)]
        agree, pairs = sum(c[0] for c in counts), sum(c[1] for c in counts)
        assert (int(acc["n_agree"].sel(metric=m)), int(acc["n_pairs"].sel(metric=m))) == (agree, pairs)
        per_task = xcorrstat.kendall_like(ds, target="h", level=level, threshold=1.0)["n_pairs"].sel(metric=m)
        assert int(tau["n_pairs"].sel(metric=m)) == int(per_task.sum())
    # the unrated system of t1 leaves pairs of t1 out, none of t0
    pairs = xcorrstat.pairwise_accuracy(ds, target="h", level="system")["n_pairs"].sel(metric="a")
    assert pairs.values.tolist() == [10, 6]


# ---------------------------------------------------------------------------------- averages over groups


@pytest.mark.parametrize("level", ["input", "within_system"])
@pytest.mark.parametrize("method", ["pearson", "acc23"])
@pytest.mark.parametrize("average", ["macro", "weighted"])
def test_correlate_averages_only_defined_groups(level, method, average):
    ds = grid(4)
    kw = dict(method="kendall", variant="acc23", min_pairs=2) if method == "acc23" else dict(method="pearson")
    res = xcorrstat.correlate(ds, target="h", level=level, average=average, **kw)
    for m in ("a", "b"):
        vals, sizes = [], []
        for xs, zs in groups(ds[m].values, ds["h"].values, level):
            if method == "acc23":
                if len(xs) < 2:
                    continue
                agree, pairs = agreement(xs, zs)
                vals.append(agree / pairs)
            else:
                if len(xs) < 3 or len(set(xs)) == 1 or len(set(zs)) == 1:
                    continue
                vals.append(stats.pearsonr(xs, zs).statistic)
            sizes.append(len(xs))
        w = np.ones(len(vals)) if average == "macro" else np.array(sizes, float)
        assert float(res.sel(metric=m)) == pytest.approx(np.sum(w * vals) / w.sum(), abs=1e-12)
        assert int(res["n"].sel(metric=m)) == len(vals)


# ---------------------------------------------------------------------------------- tie calibration


def brute_calibration(xs_groups, c=None) -> tuple[float, Fraction, int]:
    """Every candidate threshold, every pair counted again, exact fractions: (smallest optimal epsilon,
    the mean over groups with a pair of agree / pairs, weighted by the group counts c; groups used)."""
    c = [1] * len(xs_groups) if c is None else c
    used = [(xs, zs, k) for (xs, zs), k in zip(xs_groups, c) if len(xs) >= 2 and k]
    candidates = sorted({0.0} | {abs(xs[p] - xs[q]) for xs, _, _ in used
                                 for p, q in itertools.combinations(range(len(xs)), 2)})
    best = None
    for eps in candidates:
        total = sum(k * Fraction(*agreement(xs, zs, eps)) for xs, zs, k in used) / sum(k for *_, k in used)
        if best is None or total > best[1]:
            best = (eps, total)
    return best[0], best[1], len(used)


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("seed", range(4))
def test_calibrate_ties_leaves_empty_groups_out_and_is_exact(level, seed):
    ds = grid(seed)
    for variant in ("acc23", "23"):
        res = xcorrstat.calibrate_ties(ds, target="h", level=level, variant=variant)
        for m in ("a", "b"):
            eps, value, n_groups = brute_calibration(groups(ds[m].values, ds["h"].values, level))
            want = value if variant == "acc23" else 2 * value - 1
            got = res.sel(metric=m)
            # system level: the thresholds are differences of float means, the oracle's of exact means
            assert float(got["epsilon"]) == pytest.approx(float(eps), abs=1e-12 if level == "system" else 0)
            assert float(got["correlation"]) == pytest.approx(float(want), abs=1e-15)
            if level in ("system", "global"):  # one group: the correctly rounded fraction
                assert float(got["correlation"]) == float(want)
            r = xcorrstat.correlate(ds, target="h", metrics=[m], level=level, method="kendall", variant=variant,
                                    epsilon=float(got["epsilon"]), min_pairs=2)
            assert float(got["correlation"]) == float(r[0])  # bit for bit
            assert int(got["n"]) == (n_groups if level in ("input", "within_system") else int(r["n"][0]))
        # the same numbers without the empty units (a mean over other positions may round differently)
        same = xcorrstat.calibrate_ties(dropped(ds), target="h", level=level, variant=variant)
        np.testing.assert_array_equal(res["epsilon"], same["epsilon"])
        np.testing.assert_array_equal(res["n"], same["n"])
        np.testing.assert_allclose(res["correlation"], same["correlation"], rtol=0, atol=1e-15)


def test_calibrated_value_is_the_fraction_not_the_running_sum():
    """The objective's running sum rounds (1 - 2^-53 where every pair agrees); the reported value does not."""
    rounded = whole = 0
    for seed in range(40):
        rng = np.random.default_rng(seed)
        z = rng.integers(0, 3, (5, 7)).astype(float)
        x = z + rng.integers(0, 3, z.shape) * 0.1
        ds = xr.Dataset({"m": (("system", "input"), x), "h": (("system", "input"), z)})
        res = xcorrstat.calibrate_ties(ds, target="h", level="global", keep_curve=True)
        eps, value, _ = brute_calibration(groups(x, z, "global"))
        assert float(res["epsilon"][0]) == eps and float(res["correlation"][0]) == float(value)
        at = res["objective"][0].values[res["threshold"][0].values == eps]
        rounded += bool(at.size and at[0] != float(value))
        whole += value == 1
        if value == 1:
            assert float(res["correlation"][0]) == 1.0
    assert rounded and whole  # the data do exercise the rounding and the perfect case


def test_bootstrap_recalibration_leaves_empty_groups_out():
    ds = grid(5)
    n = 8
    res = xcorrstat.bootstrap(ds, target="h", level="input", method="kendall", variant="acc23", epsilon="calibrate",
                              resample=xcorrstat.Bootstrap("input", n_resamples=n, rng=3, keep_distribution=True))
    cal = xcorrstat.calibrate_ties(ds, target="h", level="input")
    np.testing.assert_array_equal(res["correlation"], cal["correlation"])
    drawn = xcorrstat._resampling.draws.bootstrap_indices(res.attrs["rng"], np.arange(n), [ds.sizes["input"]])[0]
    for m in ("a", "b"):
        per_input = groups(ds[m].values, ds["h"].values, "input")
        for r in range(n):
            counts = np.bincount(drawn[r], minlength=ds.sizes["input"])
            eps, value, _ = brute_calibration(per_input, counts.tolist())
            assert float(res["epsilon_distribution"].sel(metric=m)[r]) == eps
            assert float(res["distribution"].sel(metric=m)[r]) == pytest.approx(float(value), abs=1e-15)
