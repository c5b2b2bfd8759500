"""Soft pairwise accuracy against exact enumeration of every sign vector, and mt-metrics-eval's cases.

| mt-metrics-eval | xcorrstat |
|---|---|
| ``PairwiseConfidenceError`` (1 - PCE) | ``soft_pairwise_accuracy(draws="mt-metrics-eval")`` (seed 4) |
| ``pce.compute_pairwise_p_values`` of pair (i, j) | SPA against a metric that ties every pair (its p-values are all 1) |

mt-metrics-eval's PCE values 0.872 and 0.529 are Monte-Carlo estimates from its seeded sign
matrix (tests/data/mtme_fixtures.md); ``draws="mt-metrics-eval"`` reproduces that matrix and
its float32 arithmetic, so they are checked to 1e-9. The library's own draws
(``draws="by-id"``) are checked against the exact values over all sign vectors, within four
Monte-Carlo standard errors.
"""

import itertools

import numpy as np
import pytest

import xcorrstat
from mtme_cases import case as fixture, ids, load, scores
from xcorrstat._mt.softpairwise import pairwise_pvalues


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


def _loop_spa_mtme(gold, metric, n=1000, seed=4, dtype=np.float32):
    """mt-metrics-eval's procedure written out pair by pair: drop inputs missing anywhere, one float32
    sign matrix, float32 sums and products, a draw counts when it reaches the observed difference."""
    keep = ~(np.isnan(gold) | np.isnan(metric)).any(axis=0)
    gold, metric = gold[:, keep], metric[:, keep]
    u = np.random.default_rng(seed).random((n, gold.shape[1]), dtype=np.float32)
    signs = (np.rint(u) * 2 - 1).astype(dtype)

    def p(scores):
        s = np.ascontiguousarray(scores, dtype=dtype)  # row-major, as mt-metrics-eval's reshaped flat vectors
        sums, partial = s.sum(axis=1), signs @ s.T  # as mt-metrics-eval: one product for all systems
        out = []
        for i, j in itertools.combinations(range(s.shape[0]), 2):
            out.append(np.sum(partial[:, i] - partial[:, j] >= sums[i] - sums[j]) / n)
        return np.array(out)

    return 1.0 - np.mean(np.abs(p(gold) - p(metric)))


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
    assert res.attrs["draws"] == "by-id" and res.attrs["rng"] == 1
    signs = 1.0 - 2.0 * (rng.random((n, 6)) < 0.5)
    p = pairwise_pvalues(gold, signs)
    exact_p = [_exact_p(gold[i], gold[j]) for i, j in itertools.combinations(range(4), 2)]
    np.testing.assert_allclose(p, exact_p, atol=4 * np.sqrt(0.25 / n))


PCE = load(names=("Correlation.PairwiseConfidenceError", "AverageCorrelation.PairwiseConfidenceError/nones"))
EXACT = {"Correlation.PairwiseConfidenceError": 0.875, "AverageCorrelation.PairwiseConfidenceError/nones": 0.5}


@pytest.mark.parametrize("case", PCE, ids=ids(PCE))
def test_mtme_soft_pairwise_accuracy(case):
    a = case["args"]
    ds = scores(a["num_sys"], a["gold"], m=a["metric"])
    res = xcorrstat.soft_pairwise_accuracy(ds, target="human", draws="mt-metrics-eval")
    got = float(res["soft_pairwise_accuracy"][0])
    assert got == pytest.approx(case["expected"], abs=1e-9)  # 0.872 / 0.529, the seeded values
    assert res.attrs["draws"] == "mt-metrics-eval" and res.attrs["rng"] == 4
    # mt-metrics-eval drops the missing entries: inputs where any system lacks a score go
    gold = np.array(a["gold_matrix_sys_x_item"], dtype=float)
    assert int(res["n_inputs"][0]) == len(a["gold_matrix_sys_x_item"][0]) - int(np.isnan(gold).any(axis=0).sum())
    # the library's own draws estimate the exact value over all sign vectors
    metric = np.array(a["metric_matrix_sys_x_item"], dtype=float)
    exact = _exact_spa(gold, metric)
    assert exact == pytest.approx(EXACT[case["name"]], abs=1e-12)
    n = 20000
    own = xcorrstat.soft_pairwise_accuracy(ds, target="human", n_resamples=n, rng=4)["soft_pairwise_accuracy"]
    own = float(own[0])
    assert own == pytest.approx(exact, abs=4 * np.sqrt(0.5 / n))


DOCSTRING = fixture("pce.compute_pairwise_p_values/docstring_example")


def test_mtme_pce_docstring_example():
    """p of the pair (0, 1), through SPA: against a metric tying the two systems (p = 1 on every
    draw), SPA = 1 - |p_human - 1| = p_human."""
    a, exp = DOCSTRING["args"], DOCSTRING["expected"]
    seg = np.array(a["seg_scores"])
    tied = np.full_like(seg, 0.5)
    ds = scores(2, seg.ravel().tolist(), m=tied.ravel().tolist())
    mtme = xcorrstat.soft_pairwise_accuracy(ds, target="human", n_resamples=a["num_permutations"], rng=a["seed"],
                                            draws="mt-metrics-eval")
    p = float(mtme["soft_pairwise_accuracy"][0])
    assert p == pytest.approx(DOCSTRING["upstream_full_precision"]["p_upper_0_1_seed4_mc"], abs=1e-9)  # 0.036
    assert p == pytest.approx(exp["p_upper_0_1_exact"], abs=DOCSTRING["tolerance"]["abs"])  # 1/32
    n = 20000
    own = xcorrstat.soft_pairwise_accuracy(ds, target="human", n_resamples=n, rng=0)
    assert float(own["soft_pairwise_accuracy"][0]) == pytest.approx(exp["p_upper_0_1_exact"],
                                                                    abs=4 * np.sqrt(0.03 * 0.97 / n))
    # the same data as metric and target: every pair's p-values agree, SPA = 1
    same = scores(2, seg.ravel().tolist(), m=seg.ravel().tolist())
    for draws in ("by-id", "mt-metrics-eval"):
        assert float(xcorrstat.soft_pairwise_accuracy(same, target="human", rng=4, draws=draws)[
            "soft_pairwise_accuracy"][0]) == 1.0


DETERMINISM = fixture("pce.determinism")


def test_mtme_pce_determinism():
    """Two calls on the same scores give the same result (mt-metrics-eval: 10 systems x 100 segments)."""
    rng = np.random.default_rng(0)
    gold = rng.random((10, 100))
    metric = gold + rng.normal(scale=0.2, size=gold.shape)
    ds = scores(10, gold.ravel().tolist(), m=metric.ravel().tolist())
    for draws, seed in (("mt-metrics-eval", None), ("by-id", 4)):
        first = xcorrstat.soft_pairwise_accuracy(ds, target="human", rng=seed, draws=draws)
        assert first.identical(xcorrstat.soft_pairwise_accuracy(ds, target="human", rng=seed, draws=draws))
    # and it is mt-metrics-eval's procedure, pair by pair, in float32, on fractional scores
    mtme = xcorrstat.soft_pairwise_accuracy(ds, target="human", draws="mt-metrics-eval")
    assert float(mtme["soft_pairwise_accuracy"][0]) == _loop_spa_mtme(gold, metric)


def test_mtme_draws_keep_float32_arithmetic():
    """On MQM-like scores (many zeros, tenths) float32 rounding decides whether a draw reaches the
    observed difference; the mode follows mt-metrics-eval there, which exact arithmetic would not."""
    rng = np.random.default_rng(1)
    gold = rng.choice([0, 0, 0, -0.1, -1, -5, -0.2], size=(6, 200))
    metric = np.where(rng.random(gold.shape) < 0.5, gold, rng.choice([0, -0.1, -1, -5], size=gold.shape))
    ds = scores(6, gold.ravel().tolist(), m=metric.ravel().tolist())
    got = xcorrstat.soft_pairwise_accuracy(ds, target="human", draws="mt-metrics-eval")["soft_pairwise_accuracy"]
    got = float(got[0])
    assert got == _loop_spa_mtme(gold, metric)
    assert _loop_spa_mtme(gold, metric, dtype=np.float64) != _loop_spa_mtme(gold, metric)  # the data is sensitive


def test_mtme_draws_drop_inputs_per_metric():
    """Each metric uses the inputs where every system has its score and the target's; a metric
    missing other inputs than another gets its own number of inputs and so its own sign matrix."""
    rng = np.random.default_rng(5)
    gold, m0, m1 = (rng.integers(0, 7, (4, 9)) / 2.0 for _ in range(3))
    gold[1, 2] = np.nan  # input 2 goes for both metrics
    m0[3, 6] = np.nan  # input 6 goes for m0 only
    ds = scores(4, gold.ravel().tolist(), m0=m0.ravel().tolist(), m1=m1.ravel().tolist())
    res = xcorrstat.soft_pairwise_accuracy(ds, target="human", draws="mt-metrics-eval", rng=7, n_resamples=500)
    assert res["n_inputs"].values.tolist() == [7, 8]
    for name, m in (("m0", m0), ("m1", m1)):
        assert float(res["soft_pairwise_accuracy"].sel(metric=name)) == _loop_spa_mtme(gold, m, n=500, seed=7)


def test_draws_options():
    ds = scores(2, [1, 2, 3, 2, 3, 4], m=[2, 2, 4, 1, 3, 5])
    for rng in (np.random.default_rng(0), np.random.SeedSequence(4), -1, 1.5):
        with pytest.raises(ValueError, match="rng must be a non-negative int seed with draws='mt-metrics-eval'"):
            xcorrstat.soft_pairwise_accuracy(ds, target="human", draws="mt-metrics-eval", rng=rng)
    with pytest.raises(ValueError, match="draws must be one of"):
        xcorrstat.soft_pairwise_accuracy(ds, target="human", draws="mtme")
    res = ds.corrstat.soft_pairwise_accuracy(target="human", draws="mt-metrics-eval", rng=4)
    expected = {c["name"]: c for c in PCE}["Correlation.PairwiseConfidenceError"]["expected"]
    assert res.attrs["rng"] == 4 and float(res["soft_pairwise_accuracy"][0]) == pytest.approx(expected, abs=1e-9)
