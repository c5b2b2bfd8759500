"""Soft pairwise accuracy against exact enumeration of every sign vector, and mt-metrics-eval's cases.

mt-metrics-eval's PCE values 0.872 and 0.529 are Monte-Carlo estimates from its own seeded
generator; the exact values over all sign vectors are 0.875 and 0.5 (tests/data/mtme_fixtures.md).
Our draws come from our own generator, so the cases are checked against the exact values within
four Monte-Carlo standard errors.
"""

import itertools

import numpy as np
import pytest

import xcorrstat
from mtme_cases import load, scores
from xcorrstat.softpairwise import pairwise_pvalues


def _exact_p(a, b):
    d = np.asarray(a, float) - np.asarray(b, float)
    signs = np.array(list(itertools.product([1.0, -1.0], repeat=len(d))))
    return float(np.mean(signs @ d >= d.sum() - 1e-12))


def _exact_spa(gold, metric):
    s = gold.shape[0]
    diffs = []
    for i, j in itertools.combinations(range(s), 2):
        keep = ~np.isnan(gold[i]) & ~np.isnan(gold[j]) & ~np.isnan(metric[i]) & ~np.isnan(metric[j])
        diffs.append(abs(_exact_p(gold[i][keep], gold[j][keep]) - _exact_p(metric[i][keep], metric[j][keep])))
    return 1 - np.mean(diffs)


def test_pvalues_and_spa_match_exact_enumeration():
    rng = np.random.default_rng(3)
    gold = rng.normal(size=(4, 6))
    metric = gold + rng.normal(scale=1.0, size=(4, 6))
    ds = scores(4, gold.ravel().tolist(), m=metric.ravel().tolist())
    n = 20000
    res = xcorrstat.soft_pairwise_accuracy(ds, target="human", n_resamples=n, rng=1)
    exact = _exact_spa(gold, metric)
    # each |p_h - p_m| has MC sd <= sqrt(2 * 0.25 / n); the mean over 6 pairs has at most that
    assert float(res["soft_pairwise_accuracy"][0]) == pytest.approx(exact, abs=4 * np.sqrt(0.5 / n))
    signs = 1.0 - 2.0 * (rng.random((n, 6)) < 0.5)
    p = pairwise_pvalues(gold, signs)
    exact_p = [_exact_p(gold[i], gold[j]) for i, j in itertools.combinations(range(4), 2)]
    np.testing.assert_allclose(p, exact_p, atol=4 * np.sqrt(0.25 / n))


@pytest.mark.parametrize("name,exact,seeded", [("Correlation.PairwiseConfidenceError", 0.875, 0.872),
                                                ("AverageCorrelation.PairwiseConfidenceError/nones", 0.5, 0.529)])
def test_mtme_soft_pairwise_accuracy(name, exact, seeded):
    case = load(names=(name,))[0]
    a = case["args"]
    ds = scores(a["num_sys"], a["gold"], m=a["metric"])
    n = 1000
    got = float(xcorrstat.soft_pairwise_accuracy(ds, target="human", n_resamples=n, rng=4)["soft_pairwise_accuracy"][0])
    assert got == pytest.approx(exact, abs=4 * np.sqrt(0.5 / n))
    assert case["expected"] == pytest.approx(seeded, abs=1e-9)


def test_mtme_pce_docstring_example():
    case = load(names=("pce.compute_pairwise_p_values/docstring_example",))[0]
    seg = np.array(case["args"]["seg_scores"])
    ds = scores(2, seg.ravel().tolist(), m=seg.ravel().tolist())
    n = 20000
    signs = 1.0 - 2.0 * (np.random.default_rng(0).random((n, seg.shape[1])) < 0.5)
    p = pairwise_pvalues(seg, signs)[0]
    assert p == pytest.approx(case["expected"]["p_upper_0_1_exact"], abs=4 * np.sqrt(0.03 * 0.97 / n))
    # the same data as metric and target: every pair's p-values agree, SPA = 1, and it is deterministic
    spa = xcorrstat.soft_pairwise_accuracy(ds, target="human", rng=4)
    assert float(spa["soft_pairwise_accuracy"][0]) == 1.0
    assert spa.equals(xcorrstat.soft_pairwise_accuracy(ds, target="human", rng=4))
