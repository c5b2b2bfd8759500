"""Pairwise accuracy and the DARR Kendall-like tau: brute-force pair loops and mt-metrics-eval's cases.

| mt-metrics-eval | xcorrstat |
|---|---|
| ``Agreement(gold, metric)`` (one vector) | ``pairwise_accuracy(level="global")`` on one system |
| ``KendallLike(gold, metric, thresh)`` (one vector) | ``kendall_like(level="global", threshold=thresh)`` |
| ``Correlation.KendallLike(average_by="none")`` | ``kendall_like(level="global")`` |
| ``Correlation.KendallLike(average_by="item")``, pooled | ``kendall_like(level="input")`` |
| ``Pearson(pdp=True)``, ``AverageCorrelation(pearsonr, pdp=True)`` | ``pairwise_difference_pearson``                   |
"""

import inspect
import itertools

import numpy as np
import pytest

import xcorrstat
from conftest import make_scores
from mtme_cases import ids, load, scores


def _pairs(x, z):
    keep = ~np.isnan(x) & ~np.isnan(z)
    x, z = x[keep], z[keep]
    return [(x[a] - x[b], z[a] - z[b]) for a, b in itertools.combinations(range(len(x)), 2)]


def _rows(x, z, level):
    if level == "input":
        return list(zip(x.T, z.T))
    if level == "within_system":
        return list(zip(x, z))
    if level == "global":
        return [(x.ravel(), z.ravel())]
    valid = ~np.isnan(x) & ~np.isnan(z)
    mx = np.array([x[s][valid[s]].mean() if valid[s].any() else np.nan for s in range(x.shape[0])])
    mz = np.array([z[s][valid[s]].mean() if valid[s].any() else np.nan for s in range(x.shape[0])])
    return [(mx, mz)]


@pytest.mark.parametrize("level", ["system", "input", "within_system", "global"])
def test_against_pair_loops(level):
    ds = make_scores(n_metrics=2, n_systems=6, n_inputs=7, seed=8, ties=True, nan_frac=0.1)
    acc = xcorrstat.pairwise_accuracy(ds, target="human", level=level)
    tau = xcorrstat.kendall_like(ds, target="human", level=level, threshold=1.0)
    for m in ("m0", "m1"):
        pairs = [p for rx, rz in _rows(ds[m].values, ds["human"].values, level) for p in _pairs(rx, rz)]
        agree = sum(np.sign(dm) == np.sign(dg) for dm, dg in pairs)
        assert int(acc["n_agree"].sel(metric=m)) == agree and int(acc["n_pairs"].sel(metric=m)) == len(pairs)
        assert float(acc["accuracy"].sel(metric=m)) == pytest.approx(agree / len(pairs), abs=1e-12)
        used = [(dm, dg) for dm, dg in pairs if abs(dg) >= 1.0]
        c = sum(dm != 0 and np.sign(dm) == np.sign(dg) for dm, dg in used)
        assert int(tau["concordant"].sel(metric=m)) == c and int(tau["n_pairs"].sel(metric=m)) == len(used)
        assert float(tau["correlation"].sel(metric=m)) == pytest.approx((2 * c - len(used)) / len(used), abs=1e-12)


def test_pooled_over_a_task_dim():
    ds = make_scores(n_metrics=2, n_systems=5, n_inputs=4, seed=2, extra=("lp", 3))
    pooled = xcorrstat.pairwise_accuracy(ds, target="human", pool="lp")
    per_task = xcorrstat.pairwise_accuracy(ds, target="human")
    assert "lp" not in pooled.dims and "lp" in per_task.dims
    np.testing.assert_array_equal(pooled["n_agree"].values, per_task["n_agree"].sum("lp").values)
    np.testing.assert_allclose(pooled["accuracy"].values,
                               (per_task["n_agree"].sum("lp") / per_task["n_pairs"].sum("lp")).values)
    with pytest.raises(ValueError, match="pool='system' must name an extra dim"):
        xcorrstat.pairwise_accuracy(ds, target="human", pool="system")
    with pytest.raises(ValueError, match="threshold must be a finite number >= 0"):
        xcorrstat.kendall_like(ds, target="human", threshold=-1)


def test_no_pairs_is_undefined():
    ds = make_scores(n_metrics=1, n_systems=4, n_inputs=3, seed=0)
    res = xcorrstat.kendall_like(ds, target="human", threshold=1e9)
    assert int(res["n_pairs"][0]) == 0 and np.isnan(float(res["correlation"][0]))


LEVEL = {"none": "global", "item": "input"}
LIKE = load("KendallLike", "Correlation.KendallLike", "stats.KendallLike")


@pytest.mark.parametrize("case", LIKE, ids=ids(LIKE))
def test_mtme_kendall_like(case):
    a, exp = case["args"], case["expected"]
    ds = scores(a.get("num_sys", 1), a["gold"], m=a["metric"])
    res = xcorrstat.kendall_like(ds, target="human", level=LEVEL[a.get("average_by", "none")],
                                 threshold=a["thresh"]).isel(metric=0)
    corr = exp["corr"] if isinstance(exp, dict) else exp
    assert float(res["correlation"]) == pytest.approx(corr, abs=1e-12)
    if isinstance(exp, dict):
        assert int(res["n_pairs"]) == exp["num_pairs"]
        assert int(res["concordant"]) == exp["concordant"] and int(res["discordant"]) == exp["discordant"]


AGREEMENT = load("stats.Agreement")


@pytest.mark.parametrize("case", AGREEMENT, ids=ids(AGREEMENT))
def test_mtme_agreement(case):
    a, exp = case["args"], case["expected"]
    res = xcorrstat.pairwise_accuracy(scores(1, a["gold"], m=a["metric"]), target="human", level="global")
    assert int(res["n_agree"][0]) == exp["agree"] and int(res["n_pairs"][0]) == exp["num_pairs"]


@pytest.mark.parametrize("level", ["input", "within_system", "global", "system"])
def test_pairwise_difference_pearson_against_pair_loops(level):
    ds = make_scores(n_metrics=2, n_systems=5, n_inputs=6, seed=4, nan_frac=0.15)
    res = xcorrstat.pairwise_difference_pearson(ds, target="human", level=level)
    for m in ("m0", "m1"):
        pairs = [p for rx, rz in _rows(ds[m].values, ds["human"].values, level) for p in _pairs(rx, rz)]
        dm, dg = np.array(pairs).T
        expected = np.sum(dm * dg) / np.sqrt(np.sum(dm**2) * np.sum(dg**2))
        assert float(res["correlation"].sel(metric=m)) == pytest.approx(expected, abs=1e-12)
        assert int(res["n_pairs"].sel(metric=m)) == len(pairs)


def test_pairwise_difference_pearson_targets_levels_and_extra_dims():
    ds = make_scores(n_metrics=2, n_systems=4, n_inputs=5, seed=1, nan_frac=0.1, extra=("lp", 2))
    ds["coherence"] = ds["human"] + 1.0
    ds["coherence"].attrs["role"] = "human"
    for t, lev in itertools.product(("human", "coherence"), ("input", "system")):
        r = xcorrstat.pairwise_difference_pearson(ds, target=t, level=lev)
        assert set(r["correlation"].dims) == {"metric", "lp"}
        for m, k in itertools.product(("m0", "m1"), range(2)):
            rows = _rows(ds[m].isel(lp=k).values, ds[t].isel(lp=k).values, lev)
            dm, dg = np.array([p for rx, rz in rows for p in _pairs(rx, rz)]).T
            expected = np.sum(dm * dg) / np.sqrt(np.sum(dm**2) * np.sum(dg**2))
            got = r.sel(metric=m).isel(lp=k)
            assert float(got["correlation"]) == pytest.approx(expected, abs=1e-12)
            assert int(got["n_pairs"]) == len(dm)


PDP = load("Correlation.Pearson(pdp", "AverageCorrelation(pearsonr, num_sys=2, average_by=item, pdp",
           "AverageCorrelation(pearsonr, num_sys=2, average_by=none, pdp", "AverageCorrelation(pearsonr, num_sys=1")
PDP_LEVEL = {"none": "global", "item": "input", "sys": "within_system"}


@pytest.mark.parametrize("case", PDP, ids=ids(PDP))
def test_mtme_pdp(case):
    """``Pearson(pdp=True)``: ``pairwise_difference_pearson`` (which, as mt-metrics-eval, correlates any
    two or more differences)."""
    a, exp = case["args"], case["expected"]
    ds = scores(a["num_sys"], a["gold"], m=a["metric"])
    level = PDP_LEVEL[a["average_by"]]
    if isinstance(exp, dict) and exp.get("raises"):
        with pytest.raises(ValueError, match="pairs need at least 2"):
            xcorrstat.pairwise_difference_pearson(ds, target="human", level=level)
        return
    r = float(xcorrstat.pairwise_difference_pearson(ds, target="human", level=level)["correlation"][0])
    assert r == pytest.approx(exp, abs=case["tolerance"]["abs"])
    if level == "global":  # on one group PDP is plain Pearson
        assert r == pytest.approx(float(xcorrstat.correlate(ds, target="human", level="global", min_pairs=2)[0]),
                                  abs=1e-12)


PDP_INVALID = load("AverageCorrelation(kendalltau, num_sys=2, average_by=none, pdp=True)")


@pytest.mark.parametrize("case", PDP_INVALID, ids=ids(PDP_INVALID))
def test_mtme_pdp_invalid_corr_fcn(case):
    """mt-metrics-eval refuses pdp=True with a correlation function other than Pearson's; here the
    combination cannot be written: pairwise difference Pearson is a function of its own, without a
    ``method``, and ``correlate`` has no ``pdp`` flag."""
    assert case["expected"] == {"raises": "ValueError"} and case["args"]["pdp"] is True
    assert "method" not in inspect.signature(xcorrstat.pairwise_difference_pearson).parameters
    assert "pdp" not in inspect.signature(xcorrstat.correlate).parameters
    ds = scores(case["args"]["num_sys"], case["args"]["gold"], m=case["args"]["metric"])
    with pytest.raises(TypeError, match="pdp"):
        xcorrstat.correlate(ds, target="human", method="kendall", pdp=True)