"""Empty units in soft pairwise accuracy and in the significance tests over pairs and groups.

Same data as ``test_empty_units.py`` (an unrated system, an empty input, an input with a single
rated system). Soft pairwise accuracy is checked against its procedure written out pair by
pair, and against mt-metrics-eval's own ``data.GetCorrelations`` (which drops the systems
without a gold score) and ``PairwiseConfidenceError`` when ``XCORRSTAT_MTME_SOURCE`` names its
source. The tests' observed values and every draw are checked against loops over the pairs
of each group, with the draws' masks or swap bits taken from the library's draw functions.
"""

from __future__ import annotations

import itertools

import numpy as np
import scipy.stats
import pytest
import xarray as xr
from mtme_source import mtme_modules
from test_empty_units import SINGLE, UNRATED, agreement, grid, groups, sign

import xcorrstat
from xcorrstat._resampling.draws import permutation_masks
from xcorrstat._resampling.swapstats import standardise
from xcorrstat._significance.pairoutcome import pair_swap_bits

# ---------------------------------------------------------------------------------- soft pairwise accuracy


def loop_pvalue(d: np.ndarray, signs: np.ndarray, tol: float) -> float:
    """Share of sign draws whose flipped sum of the differences reaches the observed sum less ``tol``."""
    return float(np.mean([float(np.dot(s, d)) >= d.sum() - tol for s in signs]))


def loop_spa_by_id(x: np.ndarray, z: np.ndarray, signs: np.ndarray) -> tuple[float, int]:
    """1 - mean |p_human - p_metric| over the system pairs with an input where both have both scores."""
    diffs = []
    for i, j in itertools.combinations(range(x.shape[0]), 2):
        keep = ~(np.isnan(x[i]) | np.isnan(x[j]) | np.isnan(z[i]) | np.isnan(z[j]))
        if not keep.any():
            continue  # an empty unit: no test, not in the mean
        dx, dz = np.where(keep, x[i] - x[j], 0.0), np.where(keep, z[i] - z[j], 0.0)
        ph = loop_pvalue(dz, signs, 1e-9 * np.abs(dz).sum())
        pm = loop_pvalue(dx, signs, 1e-9 * np.abs(dx).sum())
        diffs.append(abs(ph - pm))
    return 1.0 - float(np.mean(diffs)), len(diffs)


def loop_spa_mtme(x: np.ndarray, z: np.ndarray, n: int = 1000, seed: int = 4) -> float:
    """mt-metrics-eval's procedure: systems without a gold score dropped, then inputs missing anywhere;
    one float32 sign matrix, float32 sums and products, a draw counts when it reaches the difference."""
    rated = ~np.isnan(z).all(axis=1)
    x, z = x[rated], z[rated]
    keep = ~(np.isnan(x) | np.isnan(z)).any(axis=0)
    signs = (np.rint(np.random.default_rng(seed).random((n, int(keep.sum())), dtype=np.float32)) * 2 - 1)
    out = []
    for scores in (z[:, keep], x[:, keep]):
        s = np.ascontiguousarray(scores, dtype=np.float32)
        sums, partial = s.sum(axis=1), signs.astype(np.float32) @ s.T
        out.append([np.sum(partial[:, i] - partial[:, j] >= sums[i] - sums[j]) / n
                    for i, j in itertools.combinations(range(s.shape[0]), 2)])
    return 1.0 - float(np.mean(np.abs(np.array(out[0]) - np.array(out[1]))))


def test_soft_pairwise_accuracy_by_id_leaves_pairs_without_data_out():
    ds = grid(6)
    n = 300
    res = xcorrstat.soft_pairwise_accuracy(ds, target="h", n_resamples=n, rng=2)
    signs = 1.0 - 2.0 * permutation_masks(2, np.arange(n), 1, ds.sizes["input"], "cells")[:, 0, :]
    for m in ("a", "b"):
        want, pairs = loop_spa_by_id(ds[m].values, ds["h"].values, signs)
        assert float(res["soft_pairwise_accuracy"].sel(metric=m)) == pytest.approx(want, abs=1e-12)
        assert int(res["n_pairs"].sel(metric=m)) == pairs == 10  # the 5 rated systems
    # without the unrated system (the signs are keyed by input, so they are the same draws)
    same = xcorrstat.soft_pairwise_accuracy(ds.drop_sel(system=f"s{UNRATED}"), target="h", n_resamples=n, rng=2)
    np.testing.assert_allclose(res["soft_pairwise_accuracy"], same["soft_pairwise_accuracy"], rtol=0, atol=1e-15)


def test_soft_pairwise_accuracy_mtme_drops_unrated_systems():
    ds = grid(7)
    res = xcorrstat.soft_pairwise_accuracy(ds, target="h", draws="mt-metrics-eval")
    same = xcorrstat.soft_pairwise_accuracy(ds.drop_sel(system=f"s{UNRATED}"), target="h", draws="mt-metrics-eval")
    xr.testing.assert_identical(res, same)
    for m in ("a", "b"):
        assert float(res["soft_pairwise_accuracy"].sel(metric=m)) == loop_spa_mtme(ds[m].values, ds["h"].values)
    assert res["n_pairs"].values.tolist() == [10, 10]
    assert res["n_inputs"].values.tolist() == [ds.sizes["input"] - 2] * 2  # the empty and the single-system input
    # every system unrated but one, or no input left: no pair has a test
    lone = ds.copy(deep=True)
    lone["h"][1:] = np.nan
    for draws in ("by-id", "mt-metrics-eval"):
        out = xcorrstat.soft_pairwise_accuracy(lone, target="h", draws=draws, rng=4)
        assert np.isnan(out["soft_pairwise_accuracy"]).all() and (out["n_pairs"] == 0).all()


class _EvalSet:
    """The parts of mt-metrics-eval's ``data.EvalSet`` that ``data.GetCorrelations`` reads, over arrays."""

    levels = {"seg"}
    human_sys_names: set = set()
    outlier_sys_names: set = set()
    primary_metrics: set = set()
    ref_names = {"refA"}

    def __init__(self, data, names: list[str], gold: np.ndarray, metrics: dict[str, np.ndarray]):
        self._data = data
        self.sys_names = set(names)
        self._scores = {"mqm": {s: [None if np.isnan(v) else float(v) for v in gold[k]] for k, s in enumerate(names)}}
        for name, x in metrics.items():
            self._scores[f"{name}-refA"] = {s: [float(v) for v in x[k]] for k, s in enumerate(names)}
        self.metric_names = {f"{name}-refA" for name in metrics}

    def Scores(self, level, name):  # noqa: N802 -- mt-metrics-eval's names
        return self._scores.get(name)

    def StdHumanScoreName(self, level):  # noqa: N802
        return "mqm"

    def ParseMetricName(self, name):  # noqa: N802
        return self._data.EvalSet.ParseMetricName(self, name)

    def DisplayName(self, name, fmt="spreadsheet"):  # noqa: N802
        return name.split("-")[0]

    def Correlation(self, gold, metric, sys_names):  # noqa: N802
        return self._data.EvalSet.Correlation(self, gold, metric, sys_names)


def test_soft_pairwise_accuracy_equals_mt_metrics_eval_with_unrated_systems():
    (data,) = mtme_modules("data")
    ds = grid(8, n_sys=8, n_inp=40)
    ds["a"] = ds["a"] + np.random.default_rng(0).normal(scale=0.3, size=ds["a"].shape)  # fractional scores
    ds["h"][:, SINGLE] = np.nan  # mt-metrics-eval lines its vectors up only when the rated systems miss alike
    names = [str(s) for s in ds["system"].values]
    evs = _EvalSet(data, names, ds["h"].values, {"a": ds["a"].values, "b": ds["b"].values})
    corrs = data.GetCorrelations(evs, "seg", {"refA"}, set(), False, False, "std", False)
    for m, corr in corrs.items():
        # the systems mt-metrics-eval kept, in its order: identify each block of its gold vector
        blocks = np.array(corr.gold_scores, dtype=float).reshape(corr.num_sys, -1)
        order = [next(s for s in range(len(names)) if np.array_equal(b, ds["h"].values[s], equal_nan=True))
                 for b in blocks]
        assert UNRATED not in order and len(order) == len(names) - 1
        theirs = corr.PairwiseConfidenceError()[0]
        ours = xcorrstat.soft_pairwise_accuracy(ds.isel(system=order + [UNRATED]), target="h", metrics=[m],
                                                draws="mt-metrics-eval")
        assert float(ours["soft_pairwise_accuracy"][0]) == pytest.approx(theirs, abs=1e-9)


def test_soft_pairwise_accuracy_test_leaves_unrated_systems_out():
    """3 rated systems x 2 inputs (64 swap masks of the rated cells) and one unrated system: the observed
    delta is the difference of the two SPAs, and the p-value the exact one over the 64 masks."""
    rng = np.random.default_rng(9)
    z = rng.normal(size=(4, 2))
    xa, xb = z + rng.normal(size=z.shape), z + 2 * rng.normal(size=z.shape)
    xa[0, 0] += 2.0
    z[2] = np.nan
    dims = ("system", "input")
    ds = xr.Dataset({"ma": (dims, xa), "mb": (dims, xb), "h": (dims, z)})
    res = xcorrstat.soft_pairwise_accuracy_test(ds, target="h", n_resamples=4000, rng=3, spa_resamples=64, spa_rng=1)
    signs = 1.0 - 2.0 * permutation_masks(res.attrs["spa_rng"], np.arange(64), 1, 2, "cells")[:, 0, :]
    rated = [0, 1, 3]
    delta = loop_spa_by_id(xa[rated], z[rated], signs)[0] - loop_spa_by_id(xb[rated], z[rated], signs)[0]
    got = float(res["delta"].sel(metric="ma", other_metric="mb"))
    assert got == pytest.approx(delta, abs=1e-12)
    spa = res["soft_pairwise_accuracy"]
    assert got == pytest.approx(float(spa.sel(metric="ma") - spa.sel(metric="mb")), abs=1e-12)
    deltas = []
    # swapped as each metric's z-scores over the rated cells
    za, zb = scipy.stats.zscore(xa[rated], axis=None), scipy.stats.zscore(xb[rated], axis=None)
    for bits in itertools.product([False, True], repeat=6):
        m = np.array(bits).reshape(3, 2)
        sa = loop_spa_by_id(np.where(m, zb, za), z[rated], signs)[0]
        deltas.append(sa - loop_spa_by_id(np.where(m, za, zb), z[rated], signs)[0])
    exact = float(np.mean(np.array(deltas) >= delta - 1e-12))
    se = np.sqrt(max(exact * (1 - exact), 1e-4) / 4000)
    assert float(res["pvalue"].sel(metric="ma", other_metric="mb")) == pytest.approx(exact, abs=5 * se)


def test_soft_pairwise_accuracy_test_mtme_draws_leave_unrated_systems_out():
    """Integer scores (exact in float32 and float64): the observed delta is the difference of the two
    metrics' SPA in mt-metrics-eval's mode, the unrated system left out of both."""
    ds = grid(12)
    res = xcorrstat.soft_pairwise_accuracy_test(ds, target="h", metrics=["a", "b"], n_resamples=20, rng=1,
                                                draws="mt-metrics-eval")
    spa = xcorrstat.soft_pairwise_accuracy(ds, target="h", metrics=["a", "b"], draws="mt-metrics-eval")
    want = loop_spa_mtme(ds["a"].values, ds["h"].values) - loop_spa_mtme(ds["b"].values, ds["h"].values)
    assert float(res["delta"].sel(metric="a", other_metric="b")) == pytest.approx(want, abs=1e-12)
    np.testing.assert_array_equal(res["soft_pairwise_accuracy"], spa["soft_pairwise_accuracy"])
    assert np.isfinite(res["pvalue"].sel(metric="a", other_metric="b"))


# ---------------------------------------------------------------------------------- significance tests


def loop_pair_outcome(x, y, z, eps_x, eps_y, bits, level, min_pairs):
    """acc_eq of x's and y's hybrid pair tables, each group's pairs numbered as np.triu_indices; groups
    with fewer than min_pairs rated items are left out."""
    n_sys, n_inp = z.shape
    cells = ([[(s, j) for s in range(n_sys)] for j in range(n_inp)] if level == "input"
             else [[(s, j) for j in range(n_inp)] for s in range(n_sys)])
    per_group = len(cells[0]) * (len(cells[0]) - 1) // 2
    vx, vy = [], []
    for g, items in enumerate(cells):
        if sum(not np.isnan(z[c]) for c in items) < max(min_pairs, 2):
            continue
        agree_x = agree_y = pairs = 0
        for k, (p, q) in enumerate(itertools.combinations(items, 2)):
            if np.isnan(z[p]) or np.isnan(z[q]):
                continue
            verdict_x = 0 if abs(x[p] - x[q]) <= eps_x else sign(x[p] - x[q])
            verdict_y = 0 if abs(y[p] - y[q]) <= eps_y else sign(y[p] - y[q])
            if bits[g * per_group + k]:
                verdict_x, verdict_y = verdict_y, verdict_x
            agree_x += verdict_x == sign(z[p] - z[q])
            agree_y += verdict_y == sign(z[p] - z[q])
            pairs += 1
        vx.append(agree_x / pairs)
        vy.append(agree_y / pairs)
    return np.mean(vx), np.mean(vy), len(vx)


@pytest.mark.parametrize("level", ["input", "within_system"])
def test_pair_outcome_test_leaves_empty_groups_out(level):
    ds = grid(10)
    eps = {"a": 0.5, "b": 0.0}
    n = 25
    res = xcorrstat.compare(ds, target="h", level=level, method="kendall", variant="acc23",
                            test=xcorrstat.Permutation(swap="pairs", epsilon=eps, n_resamples=n, rng=4,
                                                       keep_distribution=True),
                            min_pairs=2)
    x, y, z = ds["a"].values, ds["b"].values, ds["h"].values
    ra, rb, used = loop_pair_outcome(x, y, z, eps["a"], eps["b"], np.zeros(10**4, bool), level, 2)
    assert float(res["correlation"].sel(metric="a")) == pytest.approx(ra, abs=1e-15)
    assert float(res["correlation"].sel(metric="b")) == pytest.approx(rb, abs=1e-15)
    assert int(res["n"].sel(metric="a")) == used == (ds.sizes["input"] - 2 if level == "input" else 5)
    for m, e in eps.items():  # the observed value is correlate's at that epsilon
        r = xcorrstat.correlate(ds, target="h", metrics=[m], level=level, method="kendall", variant="acc23",
                                epsilon=e, min_pairs=2)
        assert float(res["correlation"].sel(metric=m)) == float(r[0])
    n_groups, per = (ds.sizes["input"], 15) if level == "input" else (ds.sizes["system"], 28)
    bits = pair_swap_bits(res.attrs["rng"], np.arange(n), 0, n_groups * per)
    dist = res["distribution"].sel(metric="a", other_metric="b").values
    for r in range(n):
        ha, hb, _ = loop_pair_outcome(x, y, z, eps["a"], eps["b"], bits[r], level, 2)
        assert dist[r] == pytest.approx(ha - hb, abs=1e-12)


def pooled_agreement(x: np.ndarray, z: np.ndarray, min_pairs: int = 3) -> float:
    """Agreeing pairs / pairs over every input with at least min_pairs rated systems."""
    agree = pairs = 0
    for xs, zs in groups(x, z, "input"):
        if len(xs) >= min_pairs:
            a, p = agreement(xs, zs)
            agree, pairs = agree + a, pairs + p
    return agree / pairs


def test_permutation_test_of_pooled_accuracy_leaves_empty_units_out():
    ds = grid(11)
    n = 30
    res = xcorrstat.permutation_test(ds, x="a", y="b", target="h", level="input", method="kendall", variant="acc23",
                                     average="pairs",
                                     test=xcorrstat.Permutation(n_resamples=n, rng=7, keep_distribution=True,
                                                                pvalue="fraction"))
    x, y, z = ds["a"].values, ds["b"].values, ds["h"].values
    assert float(res["delta"]) == pooled_agreement(x, z) - pooled_agreement(y, z)
    zx, zy = standardise(x), standardise(y)
    masks = permutation_masks(res.attrs["rng"], range(n), *x.shape, "cells")
    want = [pooled_agreement(np.where(m, zy, zx), z) - pooled_agreement(np.where(m, zx, zy), z) for m in masks]
    np.testing.assert_allclose(res["distribution"].values, want, rtol=0, atol=1e-12)
    # the pooled share is the ratio of the pooled counts, as pairwise_accuracy computes it
    acc = xcorrstat.pairwise_accuracy(ds, target="h", level="input")["accuracy"]
    pooled = xcorrstat.correlate(ds, target="h", level="input", method="kendall", variant="acc23", average="pairs",
                                 min_pairs=2)
    np.testing.assert_array_equal(pooled.values, acc.values)
