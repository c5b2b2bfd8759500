"""Tests of :mod:`xcorrstat._kernels.dependent` (Williams, Steiger, Zou).

Published fixtures (cocor's manual, Zou 2007, nlpstats / R ``psych::r.test``, WMT20
en-de), then a scalar ``math`` oracle on a random grid, broadcasting and NaN rules.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from xcorrstat._kernels.dependent import steiger_z, williams, zou_ci

ALTS = ("two-sided", "greater", "less")
WMT20 = Path(__file__).parent / "data" / "wmt20_ende_sys.csv"


# --------------------------------------------------------------------------- #
# Published fixtures
# --------------------------------------------------------------------------- #
def test_cocor_williams_and_steiger():
    t, p = williams(0.3, 0.4, 0.5, 100, alternative="two-sided")
    assert round(float(t), 4) == -1.0767 and round(float(p), 4) == 0.2843
    z, p = steiger_z(0.3, 0.4, 0.5, 100, alternative="two-sided")
    assert round(float(z), 4) == -1.0718 and round(float(p), 4) == 0.2838


def test_zou_2007_worked_example():
    low, high = zou_ci(0.396, 0.179, 0.088, 66, confidence_level=0.95)
    assert (round(float(low), 3), round(float(high), 3)) == (-0.093, 0.517)


# The three score matrices (9 systems x 5 inputs) of nlpstats' williams test:
# np.random.seed(12) then three np.random.random((9, 5)) draws.
NLP_X = np.array([
    [0.15416284237967237, 0.7400496965154048, 0.26331501518513467, 0.5337393933802977, 0.014574962485419674],
    [0.918747008099885, 0.9007148541170122, 0.03342142762634459, 0.9569493362751168, 0.13720932135607644],
    [0.28382835295794584, 0.6060831843588289, 0.9442251360530421, 0.852735541109285, 0.002259233518513537],
    [0.5212260272202929, 0.5520376332645666, 0.4853774136627097, 0.7681341540644223, 0.1607167531255701],
    [0.7645604503388788, 0.020809797952066167, 0.13521017836911686, 0.11627301740168983, 0.30989758449002924],
    [0.6714526452120027, 0.4712297782500141, 0.8161682980460269, 0.28958678353055356, 0.7331259776126706],
    [0.7026223552552463, 0.32756947626342303, 0.3346475291060558, 0.9780580790165189, 0.6245821117353524],
    [0.9503135246995253, 0.7674756506204887, 0.8250092532147735, 0.40664030180666166, 0.4513084114213143],
    [0.40063162736167357, 0.9951381603385585, 0.1775641759378893, 0.9625969030278503, 0.4192502702591062],
])
NLP_Y = np.array([
    [0.4240524465509987, 0.4631488697273459, 0.37372314882391533, 0.465508100172511, 0.03516826147080476],
    [0.08427266973184566, 0.7325206981419501, 0.6361999938328675, 0.027907788861532556, 0.3001700598239866],
    [0.2208525208288855, 0.055019993340200135, 0.5232460707782919, 0.4163696572946102, 0.048218749825570395],
    [0.5724045155296094, 0.8035166506773763, 0.11360171953981701, 0.2771172144251962, 0.6416780916854229],
    [0.49273730543650784, 0.5065560756680948, 0.4614402600659552, 0.8947430739278908, 0.6057776931355849],
    [0.6033556031675537, 0.4438718561912689, 0.4800467833268902, 0.8884475272296929, 0.2085004884601801],
    [0.9445814621563249, 0.07347004394226553, 0.5951524566360905, 0.031151070851766383, 0.6652574325307892],
    [0.6373854951409694, 0.862465162297615, 0.9416377123396569, 0.4456270534106257, 0.669957632435755],
    [0.9243306996319917, 0.6194234667677466, 0.32258573270881385, 0.3194763109335812, 0.2914566850066529],
])
NLP_Z = np.array([
    [0.9574174237390571, 0.4059583429596427, 0.9465558223628031, 0.8571905588319436, 0.6889276660324576],
    [0.0032879687523396095, 0.9001034996569824, 0.9198648709623234, 0.0059093558684842895, 0.6429261484358456],
    [0.38521698024307416, 0.5957418942869064, 0.6108070555044093, 0.5996191883973377, 0.3122839968432516],
    [0.06987367476308803, 0.8007342342155275, 0.9114340501333191, 0.19467462904253707, 0.21060763885288392],
    [0.3774407823606447, 0.40284721017267344, 0.8851776944327949, 0.20215434337007254, 0.4190148274837505],
    [0.6479591733392613, 0.511642952793331, 0.3338324855146031, 0.7784734338593446, 0.1354351345676108],
    [0.19171077225555577, 0.4025891478959648, 0.7868444652477247, 0.2538081939276894, 0.10948542133151884],
    [0.9306760143818863, 0.1263872837745974, 0.6050053903635636, 0.29012193658782715, 0.6265293919225703],
    [0.6594759538408164, 0.06772616162569478, 0.3554429248010227, 0.3347240774767726, 0.1775063672167354],
])


def test_nlpstats_matrices_are_the_seeded_draws():
    rs = np.random.RandomState(12)
    for m in (NLP_X, NLP_Y, NLP_Z):
        np.testing.assert_array_equal(m, rs.random_sample((9, 5)))


def test_nlpstats_global_pearson():
    # r12 = r(X, Z), r13 = r(Y, Z), r23 = r(X, Y) over all 45 cells; the test is on |r|
    r12, r13, r23 = (np.corrcoef(u.ravel(), v.ravel())[0, 1] for u, v in
                     ((NLP_X, NLP_Z), (NLP_Y, NLP_Z), (NLP_X, NLP_Y)))
    assert r12 < 0  # so the sign convention matters
    kw = dict(n=45, absolute=True)
    assert abs(williams(r12, r13, r23, alternative="greater", **kw).pvalue - 0.2716978) < 5e-8
    assert abs(williams(r13, r12, r23, alternative="greater", **kw).pvalue - (1 - 0.2716978)) < 5e-8
    assert abs(williams(r12, r13, r23, alternative="less", **kw).pvalue - (1 - 0.2716978)) < 5e-8
    assert abs(williams(r13, r12, r23, alternative="less", **kw).pvalue - 0.2716978) < 5e-8
    for a, b in ((r12, r13), (r13, r12)):
        assert abs(williams(a, b, r23, alternative="two-sided", **kw).pvalue - 0.5433956) < 5e-8
    # on the signed correlations r12 < r13: t = -2.19, the "greater" p-value is .98
    t, p = williams(r12, r13, r23, 45, alternative="greater")
    assert round(float(t), 4) == -2.1899 and round(float(p), 4) == 0.9829


def test_nlpstats_system_spearman():
    # Spearman correlations of the system means of that test's second draw (9 systems)
    r12, r13, r23 = 12 / 120, 6 / 120, 6 / 120
    assert abs(williams(r12, r13, r23, 9, alternative="greater").pvalue - 0.4658712) < 5e-8
    assert abs(williams(r13, r12, r23, 9, alternative="less").pvalue - 0.4658712) < 5e-8
    assert abs(williams(r13, r12, r23, 9, alternative="two-sided").pvalue - 0.9317423) < 5e-8


@pytest.fixture(scope="module")
def wmt20() -> pd.DataFrame:
    return pd.read_csv(WMT20)


def test_wmt20_data_copy(wmt20):
    assert wmt20.shape == (14, 32) and int(wmt20["is_outlier"].sum()) == 3
    kept = wmt20[wmt20["is_outlier"] == 0]
    for metric, r in (("COMET", 0.8628757), ("BLEU", 0.8247221), ("esim", 0.8939532)):
        assert abs(stats.pearsonr(kept[metric], kept["human"]).statistic - r) < 5e-8
    tau = stats.kendalltau(wmt20["COMET"], wmt20["human"], variant="b").statistic
    assert abs(tau - 0.8461538) < 5e-8


@pytest.mark.parametrize(("better", "worse", "expected"), [("esim", "YiSi-2", 0.0190746),
                                                            ("YiSi-0", "parbleu", 0.0384186)])
def test_wmt20_williams_psych_convention(wmt20, better, worse, expected):
    kept = wmt20[wmt20["is_outlier"] == 0]
    n = len(kept)
    r_jk, r_jh, r_kh = (stats.pearsonr(kept[u], kept[v]).statistic
                        for u, v in ((better, "human"), (worse, "human"), (better, worse)))
    t, p = williams(r_jk, r_jh, r_kh, n, alternative="greater")
    assert n == 11 and t > 0 and abs(p - expected) < 1e-6
    # psych::r.test: signed r, one-tailed p = P(T_{n-3} > |t|), whatever the argument order
    assert abs(stats.t.sf(abs(t), n - 3) - expected) < 1e-6
    assert abs(williams(r_jh, r_jk, r_kh, n, alternative="less").pvalue - expected) < 1e-6
    assert abs(williams(r_jk, r_jh, r_kh, n, alternative="two-sided").pvalue - 2 * expected) < 2e-6
    # all three correlations are positive here, so |r| changes nothing
    assert williams(r_jk, r_jh, r_kh, n, alternative="greater", absolute=True).pvalue == p


# --------------------------------------------------------------------------- #
# Scalar oracle (math module; p-values from scipy.stats)
# --------------------------------------------------------------------------- #
def defined(a, b, c, n):
    vals = (a, b, c, n)
    if any(math.isnan(v) for v in vals) or max(abs(a), abs(b), abs(c)) >= 1 or n <= 3:
        return False
    return 1.0 - a * a - b * b - c * c + 2.0 * a * b * c >= 0


def tail(stat, alternative, sf):
    if alternative == "greater":
        return sf(stat)
    if alternative == "less":
        return 1.0 - sf(stat) if abs(stat) < 5 else sf(-stat)
    return min(1.0, 2.0 * sf(abs(stat)))


def williams_oracle(a, b, c, n, alternative):
    if not defined(a, b, c, n):
        return math.nan, math.nan
    det_r = 1 - a**2 - b**2 - c**2 + 2 * a * b * c
    t = (a - b) * math.sqrt((n - 1) * (1 + c)) / math.sqrt(
        2 * (n - 1) / (n - 3) * det_r + ((a + b) / 2) ** 2 * (1 - c) ** 3)
    return t, tail(t, alternative, lambda x: stats.t.sf(x, n - 3))


def steiger_oracle(a, b, c, n, alternative):
    if not defined(a, b, c, n):
        return math.nan, math.nan
    rb = (a + b) / 2
    cov = (c * (1 - 2 * rb**2) - 0.5 * rb**2 * (1 - 2 * rb**2 - c**2)) / (1 - rb**2) ** 2
    za, zb = 0.5 * math.log((1 + a) / (1 - a)), 0.5 * math.log((1 + b) / (1 - b))
    z = (za - zb) * math.sqrt(n - 3) / math.sqrt(2 - 2 * cov)
    return z, tail(z, alternative, stats.norm.sf)


def zou_oracle(a, b, c, n, level):
    if not defined(a, b, c, n):
        return math.nan, math.nan
    q = stats.norm.ppf(1 - (1 - level) / 2)

    def fisher_ci(r):
        z = math.atanh(r)
        return math.tanh(z - q / math.sqrt(n - 3)), math.tanh(z + q / math.sqrt(n - 3))

    (l1, u1), (l2, u2) = fisher_ci(a), fisher_ci(b)
    k = ((c - a * b / 2) * (1 - a**2 - b**2 - c**2) + c**3) / ((1 - a**2) * (1 - b**2))
    low = a - b - math.sqrt((a - l1) ** 2 + (u2 - b) ** 2 - 2 * k * (a - l1) * (u2 - b))
    high = a - b + math.sqrt((u1 - a) ** 2 + (b - l2) ** 2 - 2 * k * (u1 - a) * (b - l2))
    return low, high


def random_grid(size=400, seed=7):
    """Valid (r_jk, r_jh, r_kh, n): correlations of random correlated data."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(size):
        data = rng.normal(size=(12, 3)) @ rng.normal(size=(3, 3))
        r = np.corrcoef(data, rowvar=False)
        out.append((r[0, 1], r[0, 2], r[1, 2], float(rng.integers(4, 400))))
    return np.array(out).T


@pytest.mark.parametrize("alternative", ALTS)
def test_tests_match_oracle_on_grid(alternative):
    a, b, c, n = random_grid()
    for fn, oracle in ((williams, williams_oracle), (steiger_z, steiger_oracle)):
        stat, p = fn(a, b, c, n, alternative=alternative)
        want = np.array([oracle(*args, alternative) for args in zip(a, b, c, n)])
        np.testing.assert_allclose(stat, want[:, 0], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(p, want[:, 1], rtol=1e-8, atol=1e-14)


@pytest.mark.parametrize("level", [0.8, 0.9, 0.95, 0.99])
def test_zou_matches_oracle_on_grid(level):
    a, b, c, n = random_grid(seed=11)
    low, high = zou_ci(a, b, c, n, confidence_level=level)
    want = np.array([zou_oracle(*args, level) for args in zip(a, b, c, n)])
    np.testing.assert_allclose(low, want[:, 0], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(high, want[:, 1], rtol=1e-10, atol=1e-12)
    assert np.all(low < a - b) and np.all(a - b < high)


r_values = st.one_of(st.floats(-1.2, 1.2), st.sampled_from([-1.0, 0.0, 1.0, 0.5, math.nan]))


@settings(max_examples=200, deadline=None)
@given(r_values, r_values, r_values, st.sampled_from([math.nan, 0.0, 3.0, 3.5, 4.0, 10.0, 250.0]))
def test_undefined_inputs_match_oracle(a, b, c, n):
    for alt in ALTS:
        got = [float(v) for v in williams(a, b, c, n, alternative=alt)]
        np.testing.assert_allclose(got, williams_oracle(a, b, c, n, alt), rtol=1e-8, atol=1e-12)
        got = [float(v) for v in steiger_z(a, b, c, n, alternative=alt)]
        np.testing.assert_allclose(got, steiger_oracle(a, b, c, n, alt), rtol=1e-8, atol=1e-12)
    got = [float(v) for v in zou_ci(a, b, c, n)]
    np.testing.assert_allclose(got, zou_oracle(a, b, c, n, 0.95), rtol=1e-9, atol=1e-12)


# --------------------------------------------------------------------------- #
# Broadcasting, symmetry, NaN and argument checks
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("fn", [williams, steiger_z, zou_ci])
def test_broadcasting(fn):
    a = np.array([[0.9], [0.7], [0.2]])
    b = np.array([0.1, 0.5, 0.6, 0.85])
    n = np.array([[10], [40], [200]])
    kw = {} if fn is zou_ci else {"alternative": "two-sided"}
    out = fn(a, b, 0.4, n, **kw)
    for arr in out:
        assert arr.shape == (3, 4)
    for i in range(3):
        for j in range(4):
            single = fn(float(a[i, 0]), float(b[j]), 0.4, int(n[i, 0]), **kw)
            assert all(np.isscalar(v) for v in single)
            np.testing.assert_allclose([arr[i, j] for arr in out], single, rtol=1e-14)


def test_symmetries():
    a, b, c, n = random_grid(size=50, seed=3)
    for fn in (williams, steiger_z):
        s, p_gt = fn(a, b, c, n, alternative="greater")
        s_swap, p_lt = fn(b, a, c, n, alternative="less")
        np.testing.assert_allclose(s_swap, -s, rtol=1e-12)
        np.testing.assert_allclose(p_lt, p_gt, rtol=1e-12)
        p_less = fn(a, b, c, n, alternative="less").pvalue
        np.testing.assert_allclose(p_gt + p_less, 1.0, rtol=1e-12)
        two = fn(a, b, c, n, alternative="two-sided").pvalue
        np.testing.assert_allclose(two, 2 * np.minimum(p_gt, p_less), rtol=1e-10)
    low, high = zou_ci(a, b, c, n)
    low_s, high_s = zou_ci(b, a, c, n)
    np.testing.assert_allclose(low_s, -high, rtol=1e-12)
    np.testing.assert_allclose(high_s, -low, rtol=1e-12)


def test_absolute_uses_magnitudes():
    signed = williams(-0.8, 0.5, -0.3, 30, alternative="greater", absolute=True)
    plain = williams(0.8, 0.5, 0.3, 30, alternative="greater")
    assert signed == plain


def test_nan_and_degenerate_entries_stay_local():
    a = np.array([0.5, np.nan, 1.0, 0.5, 0.5, -1.0])
    n = np.array([20, 20, 20, 3, np.nan, 20])
    for out in (williams(a, 0.3, 0.2, n, alternative="two-sided"), steiger_z(a, 0.3, 0.2, n, alternative="two-sided"),
                zou_ci(a, 0.3, 0.2, n)):
        for arr in out:
            assert np.isfinite(arr[0]) and np.isnan(arr[1:]).all()


def test_invalid_options():
    with pytest.raises(ValueError, match="alternative"):
        williams(0.3, 0.2, 0.1, 20, alternative="two.sided")
    with pytest.raises(ValueError, match="alternative"):
        steiger_z(0.3, 0.2, 0.1, 20, alternative="bigger")
    for level in (0.0, 1.0, 95):
        with pytest.raises(ValueError, match="confidence_level"):
            zou_ci(0.3, 0.2, 0.1, 20, confidence_level=level)
    with pytest.raises(TypeError):
        williams(0.3, 0.2, 0.1, 20, "greater")
