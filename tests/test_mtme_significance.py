"""mt-metrics-eval's significance reference cases through xcorrstat's calls.

| mt-metrics-eval | xcorrstat |
|---|---|
| ``WilliamsTest(r12, r13, r23, n, one_sided=True)`` | ``kernels.williams`` with ``alternative`` toward the larger correlation (it takes ``|t|``) |
| ``WilliamsSigDiff(m1, m2, pearsonr)`` (system level) | ``williams_test(level="system", alternative="greater")`` |
| ``WilliamsSigDiff(m1, m2, item-averaged pearsonr)`` | ``kernels.williams`` of ``correlate(level="input")`` values with their ``n`` |
| ``PermutationSigDiff`` delta, ``average_by`` none/item | ``permutation_test(level="global"/"input")["delta"]`` |
| ``PermutationSigDiff`` delta, ``average_by="sys"`` | difference of ``correlate(level="within_system")`` |

Only the deterministic part of a permutation case (delta) is recorded upstream.
``replace_nans_with_zeros=True`` is not offered (undefined rows are left out, never 0).
"""

import numpy as np
import pytest

from mtme_cases import case as fixture, ids, load, scores

import xcorrstat
from xcorrstat._kernels import williams

LEVEL = {"none": "global", "item": "input", "sys": "within_system"}


@pytest.mark.parametrize("case", load("stats.WilliamsTest"), ids=ids(load("stats.WilliamsTest")))
def test_williams_test(case):
    a = case["args"]
    alternative = "greater" if a["r12"] >= a["r13"] else "less"
    res = williams(a["r12"], a["r13"], a["r23"], a["n"], alternative=alternative)
    assert float(res.pvalue) == pytest.approx(case["expected"], abs=1e-9)


SYSTEM_LEVEL = fixture("WilliamsSigDiff/pearson/system_level")
ITEM_AVERAGED = fixture("WilliamsSigDiff/pearson/item_avg_with_nones")
NAN0_FALSE = fixture("PermutationSigDiff.delta/pearson/sys/nan0=False")
TIES_OPT = fixture("PermutationSigDiff.delta/KendallWithTiesOpt.acc23/item")


def test_williams_sig_diff_system_level():
    case = SYSTEM_LEVEL
    a, exp = case["args"], case["expected"]
    ds = scores(a["num_sys"], a["gold"], m1=a["metric1"], m2=a["metric2"])
    res = ds.corrstat.williams_test(target="human", x="m1", y="m2", level="system", alternative="greater")
    assert float(res["pvalue"]) == pytest.approx(exp["pvalue"], abs=5e-4)
    assert float(res["r_xz"]) == pytest.approx(exp["r1"], abs=5e-4)
    assert float(res["r_yz"]) == pytest.approx(exp["r2"], abs=5e-4)


def test_williams_sig_diff_item_averaged():
    case = ITEM_AVERAGED
    a, exp = case["args"], case["expected"]
    ds = scores(a["num_sys"], a["gold"], m1=a["metric1"], m2=a["metric2"])
    r = ds.corrstat.correlate(target="human", metrics=["m1", "m2"], level="input", min_pairs=2)
    r12 = float(ds.corrstat.correlate(target="m1", metrics=["m2"], level="input", min_pairs=2)[0])
    # mt-metrics-eval's n is the length of the flat vector, missing entries included
    res = williams(float(r.sel(metric="m1")), float(r.sel(metric="m2")), r12, a["n"], alternative="greater")
    assert float(r.sel(metric="m1")) == pytest.approx(exp["r1"], abs=5e-4)
    assert float(r.sel(metric="m2")) == pytest.approx(exp["r2"], abs=5e-4)
    assert float(res.pvalue) == pytest.approx(exp["pvalue"], abs=5e-4)


PERM = load("stats.PermutationSigDiff(", where=lambda c: "TiesOpt" not in c["function"])


@pytest.mark.parametrize("case", PERM, ids=ids(PERM))
def test_permutation_sig_diff_delta(case):
    a = case["args"]
    ds = scores(a["num_sys"], a["gold"], m1=a["metric1"], m2=a["metric2"])
    method = "kendall" if "endall" in case["function"] else "pearson"
    variant = a.get("variant", "b")
    level = LEVEL[a["average_by"]]
    if level == "within_system":
        r = ds.corrstat.correlate(target="human", metrics=["m1", "m2"], level=level, method=method,
                                  variant=variant, min_pairs=2)
        delta = float(r.sel(metric="m2") - r.sel(metric="m1"))
    else:
        res = ds.corrstat.permutation_test(target="human", x="m2", y="m1", level=level, method=method,
                                           variant=variant, test=xcorrstat.Permutation(n_resamples=20, rng=0),
                                           min_pairs=2)
        delta = float(res["delta"])
    expected = case["expected"]["delta"]
    if a.get("replace_nans_with_zeros"):
        # upstream counts the undefined (constant) rows as 0; xcorrstat leaves them out
        expected = NAN0_FALSE["expected"]["delta"]
    assert delta == pytest.approx(expected, abs=max(case["tolerance"]["abs"], 1e-12))


def test_permutation_sig_diff_with_calibrated_ties():
    case = TIES_OPT
    a = case["args"]
    ds = scores(a["num_sys"], a["gold"], m1=a["metric1"], m2=a["metric2"])
    cal = ds.corrstat.calibrate_ties(target="human", level="input")
    delta = float(cal["correlation"].sel(metric="m2") - cal["correlation"].sel(metric="m1"))
    assert delta == pytest.approx(case["expected"]["delta"], abs=5e-8)
    assert np.isfinite(cal["epsilon"]).all()


PAIRWISE_PERM = load("stats.PairwisePermutationSigDiff")


@pytest.mark.parametrize("case", PAIRWISE_PERM, ids=ids(PAIRWISE_PERM))
def test_pairwise_permutation_sig_diff_delta(case):
    """Each metric keeps its own epsilon: the calibrated one when upstream passes None."""
    a = case["args"]
    ds = scores(a["num_sys"], a["gold"], m1=a["metric1"], m2=a["metric2"])
    level = LEVEL[a["average_by"]]
    if a["epsilon1"] is None:
        cal = ds.corrstat.calibrate_ties(target="human", level=level, variant=a["variant"])
        values = {m: float(cal["correlation"].sel(metric=m)) for m in ("m1", "m2")}
    else:
        values = {m: float(ds.corrstat.correlate(target="human", metrics=[m], level=level, method="kendall",
                                                 variant=a["variant"], epsilon=a[f"epsilon{m[-1]}"],
                                                 min_pairs=2)[0]) for m in ("m1", "m2")}
    assert values["m2"] - values["m1"] == pytest.approx(case["expected"]["delta"], abs=5e-8)
