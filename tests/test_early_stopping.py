"""Early stopping of permutation p-values (sequential Clopper-Pearson bound), off by default."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as st
import xarray as xr
from conftest import make_scores

import xcorrstat

from xcorrstat._resampling.sequential import clopper_pearson, settled

N = 2000


def clear_cases(seed=0):
    """x tracks the target closely, y is noise: the decision is clear in both directions."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(10, 12))
    dims = ("system", "input")
    ds = xr.Dataset({"good": (dims, z + 0.3 * rng.normal(size=z.shape)), "noise": (dims, rng.normal(size=z.shape)),
                     "human": (dims, z)})
    ds["human"].attrs["role"] = "human"
    return ds


def run(ds, x, y, **kw):
    return ds.corrstat.permutation_test(x=x, y=y, target="human", level="input", method="kendall",
                                        test=xcorrstat.Permutation(n_resamples=N, rng=5, keep_distribution=True, **kw))


def test_off_by_default_uses_every_draw():
    res = run(clear_cases(), "good", "noise")
    assert int(res["n_resamples_used"]) == N and res.attrs["early_stop"] == "off"


@pytest.mark.parametrize("x,y,reject", [("good", "noise", True), ("noise", "good", False)])
def test_stops_early_with_the_full_runs_decision(x, y, reject):
    ds = clear_cases()
    full = run(ds, x, y)
    early = run(ds, x, y, early_stop=0.05, risk=1e-3)
    used = int(early["n_resamples_used"])
    assert used < N and used % 100 == 0  # looks every 100 draws
    assert (float(early["pvalue"]) <= 0.05) is reject is (float(full["pvalue"]) <= 0.05)
    # the draws kept are the full run's first draws; the rest are not made
    np.testing.assert_array_equal(early["distribution"].values[:used], full["distribution"].values[:used])
    assert np.isnan(early["distribution"].values[used:]).all() and int(early["n_undefined"]) == 0
    d = full["distribution"].values[:used]
    k = np.count_nonzero(d >= float(full["delta"]) - 1e-12)
    assert float(early["pvalue"]) == pytest.approx((1 + k) / (1 + used), abs=1e-15)
    # and it stopped at the first look where the bound excluded alpha (checked with scipy's exact interval)
    for look in range(100, used + 1, 100):
        kk = np.count_nonzero(d[:look] >= float(full["delta"]) - 1e-12)
        ci = st.binomtest(kk, look).proportion_ci(confidence_level=1 - 1e-3 / (N // 100), method="exact")
        assert (ci.high < 0.05 or ci.low > 0.05) is (look == used)


def test_each_test_stops_on_its_own_whatever_the_chunking():
    ds = make_scores(n_metrics=2, n_systems=8, n_inputs=10, seed=3, extra=("lp", 3))
    opts = dict(x="m0", y="m1", target="human", level="system",
                test=xcorrstat.Permutation(n_resamples=1000, rng=2, early_stop=0.5, keep_distribution=True))
    with xcorrstat.set_options(batch=50):
        together = ds.chunk({"lp": 2}).corrstat.permutation_test(**opts).compute()
        for lp in ds["lp"].values:
            alone = ds.sel(lp=lp).corrstat.permutation_test(**opts)
            xr.testing.assert_identical(together.sel(lp=lp).drop_attrs(), alone.drop_attrs())


def test_clopper_pearson_equals_scipy_exact_interval():
    for k, b in [(0, 10), (1, 10), (5, 10), (10, 10), (3, 250), (240, 250), (0, 1)]:
        ci = st.binomtest(k, b).proportion_ci(confidence_level=0.99, method="exact")
        low, high = clopper_pearson(k, b, 0.99)
        assert float(low) == pytest.approx(ci.low, abs=1e-12) and float(high) == pytest.approx(ci.high, abs=1e-12)


def test_settled_means_the_interval_excludes_alpha():
    k = np.arange(0, 101)
    got = settled(k, 100, alpha=0.05, risk=0.01, n_looks=5)
    for kk, g in zip(k, got):
        ci = st.binomtest(int(kk), 100).proportion_ci(confidence_level=1 - 0.01 / 5, method="exact")
        assert g == (ci.high < 0.05 or ci.low > 0.05)


@pytest.mark.parametrize("change,match", [(dict(early_stop=1.5), "early_stop must be"),
                                          (dict(early_stop=0.05, risk=0.0), "risk must be"),
                                          (dict(early_stop=True), "early_stop must be")])
def test_bad_early_stop_arguments(change, match):
    with pytest.raises(ValueError, match=match):
        run(clear_cases(), "good", "noise", **change)
