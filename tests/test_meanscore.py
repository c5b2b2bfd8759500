"""Mean-score bootstrap CIs against independent oracles.

The main oracle is ``scipy.stats.bootstrap`` replaying the package's own draws
(``Replay`` hands scipy the indices from ``bootstrap_indices``), so both sides
resample exactly the same inputs; per-draw means are checked against the
explicitly expanded resample ``x[idx]``.
"""

import types
import warnings

import numpy as np
import pytest
import xarray as xr
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

from conftest import make_scores
from xcorrstat import set_options
from xcorrstat._resampling.draws import bootstrap_indices
from xcorrstat._correlation.meanscore import format_ci, mean_ci, paired_difference_ci

TOL = {"rtol": 1e-12, "atol": 1e-12}


class Replay(np.random.Generator):
    """A Generator whose ``integers`` returns given bootstrap indices (what scipy asks for)."""

    def __init__(self, idx):
        super().__init__(np.random.PCG64(0))
        self.idx = idx

    def integers(self, low, high=None, size=None, *args, **kwargs):
        assert size == self.idx.shape
        return self.idx


def _indices(seed, n_resamples, n):
    return bootstrap_indices(seed, range(n_resamples), [n])[0]


def _scipy(x, idx, confidence_level):
    return stats.bootstrap(
        (x,), np.mean, n_resamples=idx.shape[0], method="percentile", confidence_level=confidence_level,
        vectorized=True, rng=Replay(idx),
    )


def _explicit_means(x, idx):
    """Draw means of the expanded resamples, skipping missing cells (NaN if none present)."""
    vals = x[idx]
    present = ~np.isnan(vals)
    count = present.sum(axis=1)
    sums = np.where(present, vals, 0.0).sum(axis=1)
    return np.where(count > 0, sums / np.maximum(count, 1), np.nan)


# --- 1. exactness against scipy on the same draws ---------------------------------


@pytest.mark.parametrize("confidence_level", [0.95, 0.9])
def test_summeval_matches_scipy_on_same_draws(summeval, confidence_level):
    b, seed = 2000, 11
    metrics = ["rouge_2_f1", "bertscore_f1", "bewte_f1", "expert_relevance"]
    systems = ["M0", "M11", "M23"]
    r = mean_ci(summeval, metrics=metrics, n_resamples=b, confidence_level=confidence_level, rng=seed,
                keep_distribution=True)
    idx = _indices(seed, b, summeval.sizes["input"])
    for m in metrics:
        for s in systems:
            x = summeval[m].sel(system=s).values
            cell = r.sel(metric=m, system=s)
            res = _scipy(x, idx, confidence_level)
            np.testing.assert_allclose(float(cell["low"]), res.confidence_interval.low, **TOL)
            np.testing.assert_allclose(float(cell["high"]), res.confidence_interval.high, **TOL)
            np.testing.assert_allclose(cell["distribution"].values, x[idx].mean(axis=1), **TOL)
            np.testing.assert_allclose(float(cell["mean"]), x.mean(), **TOL)
            assert int(cell["n_undefined"]) == 0


def test_generated_with_extra_dim_matches_scipy():
    ds = make_scores(n_metrics=3, n_systems=4, n_inputs=37, seed=5, extra=("lang", 2))
    b, seed = 1000, 3
    r = mean_ci(ds, n_resamples=b, confidence_level=0.8, rng=seed)
    assert r["mean"].dims == ("metric", "system", "lang")
    assert list(r["metric"].values) == ["m0", "m1", "m2", "human"]  # human scores are scores too
    idx = _indices(seed, b, 37)
    for m in ["m0", "human"]:
        for s in ["S0", "S3"]:
            for lang in ["lang0", "lang1"]:
                x = ds[m].sel(system=s, lang=lang).values
                res = _scipy(x, idx, 0.8)
                cell = r.sel(metric=m, system=s, lang=lang)
                np.testing.assert_allclose(float(cell["low"]), res.confidence_interval.low, **TOL)
                np.testing.assert_allclose(float(cell["high"]), res.confidence_interval.high, **TOL)


def test_percentile_agrees_with_scipy_on_identical_distribution(summeval):
    r = mean_ci(summeval, metrics=["rouge_1_f1", "meteor"], n_resamples=1999, confidence_level=0.9, rng=4,
                keep_distribution=True)
    for m in ["rouge_1_f1", "meteor"]:
        for s in ["M1", "M8"]:
            cell = r.sel(metric=m, system=s)
            res = stats.bootstrap(
                (summeval[m].sel(system=s).values,), np.mean, n_resamples=0, method="percentile",
                confidence_level=0.9,
                bootstrap_result=types.SimpleNamespace(bootstrap_distribution=cell["distribution"].values),
            )
            np.testing.assert_allclose(float(cell["low"]), res.confidence_interval.low, rtol=0, atol=1e-12)
            np.testing.assert_allclose(float(cell["high"]), res.confidence_interval.high, rtol=0, atol=1e-12)


def test_result_layout_and_attrs(summeval):
    r = mean_ci(summeval, metrics="rouge_2_f1", n_resamples=50, rng=np.random.SeedSequence(9))
    assert set(r.data_vars) == {"mean", "low", "high", "n_undefined"}
    assert r["mean"].dims == ("metric", "system") and r.sizes == {"metric": 1, "system": 16}
    assert r["n_undefined"].dtype == np.int64
    assert r.attrs["method"] == "percentile" and r.attrs["n_resamples"] == 50
    assert r.attrs["confidence_level"] == 0.95 and r.attrs["rng"] == 9 and r.attrs["dim"] == "input"
    np.testing.assert_allclose(r["mean"].sel(metric="rouge_2_f1").values,
                               summeval["rouge_2_f1"].mean("input").values, **TOL)


def _assert_close(a: xr.Dataset, b: xr.Dataset) -> None:
    """Same labels, attrs and undefined counts; statistics equal to 1e-12."""
    assert a.attrs == b.attrs
    xr.testing.assert_identical(a["n_undefined"], b["n_undefined"])
    xr.testing.assert_allclose(a, b, rtol=0, atol=1e-12)


def test_dataarray_and_dask_inputs_give_the_same_result():
    ds = make_scores(n_inputs=20, nan_frac=0.1, seed=8)
    names = ["m0", "m1", "human"]
    base = mean_ci(ds, metrics=names, n_resamples=300, rng=2)
    stacked = ds[names].to_dataarray("metric")
    _assert_close(mean_ci(stacked, n_resamples=300, rng=2), base)
    lazy = ds.chunk({"system": 2})
    _assert_close(mean_ci(lazy, metrics=names, n_resamples=300, rng=2), base)


def test_resampling_another_dim(summeval):
    r = mean_ci(summeval, metrics="rouge_2_f1", dim="system", n_resamples=200, rng=1, keep_distribution=True)
    assert r["mean"].dims == ("metric", "input") and r.attrs["dim"] == "system"
    idx = _indices(1, 200, 16)
    x = summeval["rouge_2_f1"].isel(input=5).values
    np.testing.assert_allclose(r["distribution"].isel(metric=0, input=5).values, x[idx].mean(axis=1), **TOL)


# --- 2. reproducibility ----------------------------------------------------------


def test_same_seed_identical_across_batch_sizes(summeval):
    runs = []
    for b in (1, 7, None):
        with set_options(batch=b):
            runs.append(mean_ci(summeval, n_resamples=400, rng=21, keep_distribution=True))
    for other in runs[1:]:
        _assert_close(other, runs[0])  # same draws; sums agree to rounding
    with set_options(batch=3):
        subset = mean_ci(summeval, metrics=["meteor"], n_resamples=400, rng=21, keep_distribution=True)
    np.testing.assert_allclose(subset["distribution"].values,
                               runs[0]["distribution"].sel(metric=["meteor"]).values, **TOL)


def test_different_seed_differs_and_none_records_a_reusable_seed(summeval):
    a = mean_ci(summeval, metrics="meteor", n_resamples=300, rng=1)
    b = mean_ci(summeval, metrics="meteor", n_resamples=300, rng=2)
    assert not np.array_equal(a["low"].values, b["low"].values)
    fresh = mean_ci(summeval, metrics="meteor", n_resamples=300, rng=None)
    assert isinstance(fresh.attrs["rng"], int)
    xr.testing.assert_identical(mean_ci(summeval, metrics="meteor", n_resamples=300, rng=fresh.attrs["rng"]),
                                fresh)
    gen = mean_ci(summeval, metrics="meteor", n_resamples=300, rng=np.random.default_rng(5))
    assert gen.attrs["rng"] == int(np.random.default_rng(5).integers(2**63))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(1, 12), batch=st.integers(1, 40), seed=st.integers(0, 2**32), nan_frac=st.sampled_from([0, 0.4]))
def test_batch_invariance_property(n, batch, seed, nan_frac):
    ds = make_scores(n_metrics=2, n_systems=3, n_inputs=n, seed=seed % 1000, nan_frac=nan_frac)
    kw = dict(n_resamples=37, rng=seed, keep_distribution=True)
    with set_options(batch=batch):
        batched = mean_ci(ds, **kw)
    _assert_close(batched, mean_ci(ds, **kw))


# --- 3. paired difference ----------------------------------------------------------


@pytest.mark.parametrize("confidence_level", [0.95, 0.5])
def test_paired_difference_matches_explicit_draws_and_scipy(summeval, confidence_level):
    b, seed = 2000, 17
    metrics = ["rouge_2_f1", "expert_coherence"]
    with set_options(batch=333):
        d = paired_difference_ci(summeval, system_a="M11", system_b="M0", metrics=metrics, n_resamples=b,
                                 confidence_level=confidence_level, rng=seed)
    assert set(d.data_vars) == {"difference", "low", "high", "n_undefined"} and d["low"].dims == ("metric",)
    assert d.attrs["system_a"] == "M11" and d.attrs["rng"] == seed
    idx = _indices(seed, b, summeval.sizes["input"])
    dist = mean_ci(summeval, metrics=metrics, n_resamples=b, rng=seed, keep_distribution=True)["distribution"]
    for m in metrics:
        a = summeval[m].sel(system="M11").values
        z = summeval[m].sel(system="M0").values
        draws = dist.sel(metric=m, system="M11").values - dist.sel(metric=m, system="M0").values
        np.testing.assert_allclose(draws, a[idx].mean(axis=1) - z[idx].mean(axis=1), **TOL)
        res = _scipy(a - z, idx, confidence_level)  # same inputs drawn for both systems
        np.testing.assert_allclose(float(d["low"].sel(metric=m)), res.confidence_interval.low, **TOL)
        np.testing.assert_allclose(float(d["high"].sel(metric=m)), res.confidence_interval.high, **TOL)
        np.testing.assert_allclose(float(d["difference"].sel(metric=m)), a.mean() - z.mean(), **TOL)
        q = np.quantile(draws, [(1 - confidence_level) / 2, 1 - (1 - confidence_level) / 2])
        np.testing.assert_array_equal([float(d["low"].sel(metric=m)), float(d["high"].sel(metric=m))], q)


def test_paired_difference_with_missing_cells_and_extra_dim():
    ds = make_scores(n_metrics=2, n_systems=3, n_inputs=4, seed=2, nan_frac=0.35, extra=("domain", 2))
    b = 500
    d = paired_difference_ci(ds, system_a="S2", system_b="S0", metrics=["m0", "m1"], n_resamples=b, rng=6)
    assert d["difference"].dims == ("metric", "domain")
    idx = _indices(6, b, 4)
    for m in ["m0", "m1"]:
        for dom in ["domain0", "domain1"]:
            a = ds[m].sel(system="S2", domain=dom).values
            z = ds[m].sel(system="S0", domain=dom).values
            draws = _explicit_means(a, idx) - _explicit_means(z, idx)
            ok = ~np.isnan(draws)
            cell = d.sel(metric=m, domain=dom)
            assert int(cell["n_undefined"]) == int((~ok).sum())
            if ok.any():
                np.testing.assert_allclose([float(cell["low"]), float(cell["high"])],
                                           np.quantile(draws[ok], [0.025, 0.975]), **TOL)


# --- 4. missing cells ------------------------------------------------------------------


def test_missing_cells_and_undefined_draws():
    x = np.array([[np.nan, np.nan, 2.0], [1.0, np.nan, 3.0], [np.nan] * 3, [1.0, 2.0, 4.0]])
    ds = xr.Dataset({"score": (("system", "input"), x)},
                    coords={"system": ["A", "B", "C", "D"], "input": ["i0", "i1", "i2"]})
    b = 2000
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = mean_ci(ds, n_resamples=b, rng=13, keep_distribution=True).sel(metric="score")
        strict = mean_ci(ds, n_resamples=b, rng=13, skipna=False).sel(metric="score")
    idx = _indices(13, b, 3)
    for k, s in enumerate("ABCD"):
        oracle = _explicit_means(x[k], idx)
        ok = ~np.isnan(oracle)
        np.testing.assert_allclose(r["distribution"].sel(system=s).values, oracle, **TOL)
        assert int(r["n_undefined"].sel(system=s)) == int((~ok).sum())
        if ok.any():
            np.testing.assert_allclose([float(r["low"].sel(system=s)), float(r["high"].sel(system=s))],
                                       np.quantile(oracle[ok], [0.025, 0.975]), **TOL)
    assert 0 < int(r["n_undefined"].sel(system="A")) < b  # some draws hit only missing cells
    assert float(r["mean"].sel(system="A")) == 2.0 and float(r["mean"].sel(system="B")) == 2.0
    c = r.sel(system="C")
    assert np.isnan(float(c["mean"])) and np.isnan(float(c["low"])) and int(c["n_undefined"]) == b
    for s in "ABC":  # skipna=False: any missing cell makes the score undefined
        cell = strict.sel(system=s)
        assert np.isnan([float(cell["mean"]), float(cell["low"]), float(cell["high"])]).all()
        assert int(cell["n_undefined"]) == b
    xr.testing.assert_equal(strict.sel(system="D"), r.drop_vars(["distribution", "resample"]).sel(system="D"))


def test_missing_cells_generated_match_expanded_resamples():
    ds = make_scores(n_metrics=3, n_systems=5, n_inputs=6, seed=4, nan_frac=0.4)
    b = 800
    with set_options(batch=99):
        r = mean_ci(ds, n_resamples=b, rng=31, keep_distribution=True)
    idx = _indices(31, b, 6)
    for m in ["m0", "m2", "human"]:
        for s in ["S0", "S4"]:
            x = ds[m].sel(system=s).values
            np.testing.assert_allclose(r["distribution"].sel(metric=m, system=s).values,
                                       _explicit_means(x, idx), **TOL)


# --- 5. formatting -----------------------------------------------------------------


def test_format_ci_strings():
    r = xr.Dataset(
        {"mean": (("metric", "system"), [[0.8202, np.nan]]), "low": (("metric", "system"), [[0.8101, np.nan]]),
         "high": (("metric", "system"), [[0.83, np.nan]])},
        coords={"metric": ["acc"], "system": ["A", "B"]},
    )
    out = format_ci(r, scale=100)
    assert out.dims == ("metric", "system") and out.name == "ci"
    assert out.sel(metric="acc", system="A").item() == "82.02 (81.01, 83.00)"
    assert out.sel(metric="acc", system="B").item() == "nan (nan, nan)"
    assert format_ci(r).sel(metric="acc", system="A").item() == "0.82 (0.81, 0.83)"
    assert format_ci(r, digits=1, scale=100).sel(metric="acc", system="A").item() == "82.0 (81.0, 83.0)"
    assert format_ci(r, digits=0, scale=100).sel(metric="acc", system="A").item() == "82 (81, 83)"


def test_format_ci_on_results(summeval):
    r = mean_ci(summeval, metrics=["rouge_2_f1"], n_resamples=200, rng=0)
    cell = r.sel(metric="rouge_2_f1", system="M5")
    expected = f"{float(cell['mean']):.3f} ({float(cell['low']):.3f}, {float(cell['high']):.3f})"
    assert format_ci(r, digits=3).sel(metric="rouge_2_f1", system="M5").item() == expected
    d = paired_difference_ci(summeval, system_a="M5", system_b="M8", metrics="meteor", n_resamples=200, rng=0)
    cell = d.sel(metric="meteor")
    expected = f"{float(cell['difference']):.2f} ({float(cell['low']):.2f}, {float(cell['high']):.2f})"
    assert format_ci(d).sel(metric="meteor").item() == expected


# --- 6. validation -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n_resamples": 0}, "n_resamples"),
        ({"n_resamples": -3}, "n_resamples"),
        ({"n_resamples": 2.5}, "n_resamples"),
        ({"n_resamples": True}, "n_resamples"),
        ({"confidence_level": 0}, "confidence_level"),
        ({"confidence_level": 1.0}, "confidence_level"),
        ({"confidence_level": 95}, "confidence_level"),
        ({"confidence_level": "0.9"}, "confidence_level"),
        ({"metrics": ["m0", "nope"]}, "metrics='nope'"),
        ({"metrics": []}, "metrics"),
        ({"dim": "document"}, "dim='document'"),
        ({"batch": 0}, "batch"),
        ({"batch": 2.0}, "batch"),
    ],
)
def test_validation_errors(kwargs, match):
    ds = make_scores(n_inputs=5)
    kwargs = dict(kwargs)
    options = {"batch": kwargs.pop("batch")} if "batch" in kwargs else {}  # batch is set_options(batch=...)
    with pytest.raises(ValueError, match=match):
        with set_options(**options):
            mean_ci(ds, **{"n_resamples": 10, **kwargs})
    with pytest.raises(ValueError, match=match):
        with set_options(**options):
            paired_difference_ci(ds, system_a="S0", system_b="S1", **{"n_resamples": 10, **kwargs})


def test_validation_errors_specific():
    ds = make_scores(n_inputs=5)
    with pytest.raises(ValueError, match="system_a='S9'"):
        paired_difference_ci(ds, system_a="S9", system_b="S1", n_resamples=10)
    with pytest.raises(ValueError, match="system_b='nope'"):
        paired_difference_ci(ds, system_a="S0", system_b="nope", n_resamples=10)
    with pytest.raises(ValueError, match="must differ"):
        paired_difference_ci(ds, system_a="S0", system_b="S0", n_resamples=10)
    with pytest.raises(ValueError, match="dim"):
        paired_difference_ci(ds, system_a="S0", system_b="S1", dim="system", n_resamples=10)
    with pytest.raises(TypeError, match="skipna"):
        mean_ci(ds, skipna="yes", n_resamples=10)
    with pytest.raises(TypeError, match="rng"):
        mean_ci(ds, rng="seed", n_resamples=10)
    bad = ds.assign(m0=ds["m0"].where(ds["m0"] > 0, np.inf))
    with pytest.raises(ValueError, match="infinite"):
        mean_ci(bad, n_resamples=10)
    r = mean_ci(ds, n_resamples=10, rng=0)
    with pytest.raises(ValueError, match="digits"):
        format_ci(r, digits=-1)
    with pytest.raises(ValueError, match="scale"):
        format_ci(r, scale=float("nan"))
    with pytest.raises(ValueError, match="'low'"):
        format_ci(r.drop_vars("low"))
    with pytest.raises(TypeError, match="result"):
        format_ci(r["mean"])


def test_dask_inputs_give_lazy_results_equal_to_eager():
    """Nothing is computed before ``.compute()``; then the numbers equal the eager call's bit for bit."""
    import dask
    import dask.array as dsa

    def refuse(*args, **kwargs):
        raise AssertionError("computed before .compute()")

    ds = make_scores(n_inputs=20, nan_frac=0.1, seed=8, extra=("lp", 2))
    names = ["m0", "m1", "human"]
    runs = [lambda d: mean_ci(d, metrics=names, n_resamples=300, rng=2, keep_distribution=True),
            lambda d: mean_ci(d, metrics=names, dim="system", n_resamples=100, rng=1, skipna=False),
            lambda d: paired_difference_ci(d, system_a="S1", system_b="S0", metrics=names, n_resamples=200, rng=3,
                                           keep_distribution=True)]
    for run in runs:
        eager = run(ds)
        with dask.config.set(scheduler=refuse):
            lazy = run(ds.chunk({"input": 7}))
        assert all(isinstance(v.data, dsa.Array) for v in lazy.data_vars.values())
        xr.testing.assert_identical(lazy.compute(scheduler="threads"), eager)
