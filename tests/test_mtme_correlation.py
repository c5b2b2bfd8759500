"""mt-metrics-eval's correlation reference cases (tests/data/mtme_fixtures.json) through ``correlate``.

Each case's flat vectors become a (system, input) Dataset (``mtme_cases.scores``); the
call is ``correlate(..., min_pairs=2)`` (mt-metrics-eval correlates any row of two or more
entries) with

| mt-metrics-eval | xcorrstat |
|---|---|
| ``average_by="none"`` | ``level="global"`` |
| ``average_by="item"`` | ``level="input"`` |
| ``average_by="sys"`` | ``level="within_system"`` |
| ``macro=False`` | ``average="weighted"`` |
| ``KendallVariants(variant, epsilon)`` | ``method="kendall", variant=..., epsilon=...`` |
| a vector without ``num_sys`` | one system |

Only the correlations are compared: mt-metrics-eval also averages the p-values of the
rows, which xcorrstat does not report. ``replace_nans_with_zeros=True`` (an undefined row
counts as a correlation of 0) is not offered: xcorrstat never turns an undefined
correlation into 0, so that case checks that the row is left out instead.
"""

import itertools

import numpy as np
import pytest

import xcorrstat
from mtme_cases import ids, load, scores
from oracles import kendall_counts, kendall_from_counts

LEVEL = {"none": "global", "item": "input", "sys": "within_system"}
METHOD = {"Pearson": "pearson", "Spearman": "spearman", "Kendall": "kendall", "KendallVariants": "kendall",
          "pearsonr": "pearson", "kendalltau": "kendall"}


def _method(function: str) -> str:
    for key in ("KendallVariants", "Kendall", "Spearman", "Pearson", "kendalltau", "pearsonr"):
        if key in function:
            return METHOD[key]
    raise AssertionError(function)


def _applies(case) -> bool:
    a, f = case["args"], case["function"]
    return ("pdp" not in a and "raises" not in str(case["expected"]) and "_enumerate" not in f
            and "TiesOpt" not in f and "Confidence" not in f and "KendallLike" not in f)


CASES = load("Correlation.Pearson", "Correlation.Spearman", "Correlation.Kendall", "AverageCorrelation(",
             "stats.KendallVariants", where=_applies)


@pytest.mark.parametrize("case", CASES, ids=ids(CASES))
def test_correlation_cases(case):
    a = case["args"]
    num_sys = a.get("num_sys") or 1
    ds = scores(num_sys, a["gold"], m=a["metric"])
    kw = dict(level=LEVEL[a.get("average_by", "none")], method=_method(case["function"]),
              variant=a.get("variant", "b"), epsilon=a.get("epsilon", 0.0), min_pairs=2,
              average="weighted" if a.get("macro") is False else "macro")
    if kw["method"] != "kendall":
        kw.pop("epsilon")
    r = float(xcorrstat.correlate(ds, target="human", **kw)[0])
    exp = case["expected"]
    value = exp["corr"] if isinstance(exp, dict) else exp
    if a.get("replace_nans_with_zeros"):
        # the constant row is undefined and left out: the mean of the defined rows, not (r + 0) / 2
        assert value == pytest.approx(0.5) and r == pytest.approx(1.0, abs=1e-12)
        return
    assert r == pytest.approx(value, abs=max(case["tolerance"]["abs"], 1e-12))


def test_kendall_variant_counts_by_hand():
    """The worked example of the reference notes: C=13, D=2, T_g=3, T_m=2, T_gm=1 (N=21)."""
    gold = [1, 1, 1, 2, 2, 3, 4]
    metric = [1, 1, 2, 2, 4, 3, 3]
    ds = scores(1, gold, m=metric)
    r = {v: float(xcorrstat.correlate(ds, target="human", level="global", method="kendall", variant=v)[0])
         for v in ("a", "23", "acc23")}
    assert r["a"] == pytest.approx((13 - 2) / 21, abs=1e-12)
    assert r["23"] == pytest.approx((13 + 1 - 2 - 3 - 2) / 21, abs=1e-12)
    assert r["acc23"] == pytest.approx((13 + 1) / 21, abs=1e-12)
    eps1 = float(xcorrstat.correlate(ds, target="human", level="global", method="kendall", variant="23",
                                     epsilon=1.0)[0])
    assert eps1 == pytest.approx(-1 / 21, abs=1e-12)


def test_variants_against_pair_counting_on_random_data():
    rng = np.random.default_rng(0)
    for trial in range(20):
        s, i = int(rng.integers(3, 7)), int(rng.integers(2, 6))
        x = rng.integers(0, 5, (s, i)) / 2.0
        z = rng.integers(0, 3, (s, i)).astype(float)
        x[rng.random((s, i)) < 0.15] = np.nan
        eps = float(rng.choice([0.0, 0.5, 1.0]))
        ds = scores(s, z.ravel().tolist(), m=x.ravel().tolist())
        for variant in ("a", "b", "23", "acc23"):
            for level in ("input", "within_system", "global"):
                got = float(xcorrstat.correlate(ds, target="human", level=level, method="kendall",
                                                variant=variant, epsilon=eps, min_pairs=2)[0])
                rows_x = {"input": x.T, "within_system": x, "global": x.reshape(1, -1)}[level]
                rows_z = {"input": z.T, "within_system": z, "global": z.reshape(1, -1)}[level]
                vals = [v for v in (_by_pairs(rx, rz, variant, eps) for rx, rz in zip(rows_x, rows_z))
                        if not np.isnan(v)]
                expected = np.mean(vals) if vals else np.nan
                np.testing.assert_allclose(got, expected, atol=1e-12, err_msg=f"{trial} {variant} {level}")


def _by_pairs(x, z, variant, eps):
    keep = ~np.isnan(x) & ~np.isnan(z)
    x, z = x[keep], z[keep]
    if len(x) < 2:
        return np.nan
    if variant in ("a", "b") and (np.ptp(x) == 0 or np.ptp(z) == 0):
        return np.nan  # tau-a and tau-b of a constant vector are undefined
    counts = kendall_counts((x[a] - x[b], z[a] - z[b], eps) for a, b in itertools.combinations(range(len(x)), 2))
    return kendall_from_counts(*counts, variant)


def test_bad_options():
    ds = scores(2, [1, 2, 3, 4], m=[2, 1, 4, 3])
    with pytest.raises(ValueError, match="epsilon applies to method='kendall' only"):
        xcorrstat.correlate(ds, target="human", method="pearson", epsilon=0.5)
    with pytest.raises(ValueError, match="epsilon must be a finite number >= 0"):
        xcorrstat.correlate(ds, target="human", method="kendall", epsilon=-1)
    with pytest.raises(ValueError, match="epsilon > 0 is not defined for tau-c"):
        xcorrstat.correlate(ds, target="human", method="kendall", variant="c", epsilon=0.5)
    with pytest.raises(ValueError, match="average must be one of"):
        xcorrstat.correlate(ds, target="human", level="input", average="micro")
    with pytest.raises(ValueError, match="variant must be one of"):
        xcorrstat.correlate(ds, target="human", method="kendall", variant="d")
