"""Power and type-I error by simulation, against one test call per simulated dataset."""

import numpy as np
import pytest
import xarray as xr

import xcorrstat
from conftest import make_scores
from xcorrstat.diagnostics import degrade, power_analysis


@pytest.fixture(scope="module")
def ds():
    ds = make_scores(n_metrics=1, n_systems=8, n_inputs=10, seed=6)
    ds["m0"] = (ds["human"] + 0.8 * ds["m0"]).assign_attrs(role="metric")
    return ds


def test_degrade_is_the_documented_formula(ds):
    y = degrade(ds["m0"], noise=[0.0, 0.5, 2.0], n_trials=3, rng=11)
    x = ds["m0"].values
    sd = np.std(x)
    for t in range(3):
        e = np.random.Generator(np.random.PCG64(np.random.SeedSequence(11, spawn_key=(t, 0)))).standard_normal(x.shape)
        for k, a in enumerate([0.0, 0.5, 2.0]):
            np.testing.assert_allclose(y.isel(trial=t, noise=k).values, x + a * sd * e, atol=1e-12)


@pytest.mark.parametrize("level,tests", [("system", ["PERM-BOTH", "boot-inputs", "williams"]),
                                         ("input", ["Perm-Systems", "BOOT-BOTH"]),
                                         ("within_system", ["perm-inputs", "BOOT-SYSTEMS"])])
def test_equals_one_call_per_trial(ds, level, tests):
    noise, n_trials = [0.3, 1.0], 6
    pw = power_analysis(ds, target="human", metric="m0", noise=noise, tests=tests, level=level,
                        n_trials=n_trials, n_resamples=60, alpha=0.1, rng=5)
    y = degrade(ds["m0"], noise=noise, n_trials=n_trials, rng=5)
    y2 = degrade(ds["m0"], noise=noise, n_trials=n_trials, rng=5, copy=1)
    perm, boot = xcorrstat.Permutation, xcorrstat.Bootstrap
    calls = {"PERM-BOTH": ("permutation_test", {"test": perm(("system", "input"), n_resamples=60, rng=5)}),
             "PERM-SYSTEMS": ("permutation_test", {"test": perm(("system",), n_resamples=60, rng=5)}),
             "PERM-INPUTS": ("permutation_test", {"test": perm(("input",), n_resamples=60, rng=5)}),
             "BOOT-SYSTEMS": ("paired_bootstrap_test", {"test": boot(("system",), n_resamples=60, rng=5)}),
             "BOOT-BOTH": ("paired_bootstrap_test", {"test": boot(("system", "input"), n_resamples=60, rng=5)}),
             "BOOT-INPUTS": ("paired_bootstrap_test", {"test": boot(("input",), n_resamples=60, rng=5)}),
             "williams": ("williams_test", {})}
    assert list(pw["test"].values) == [n if n == "williams" else n.upper() for n in tests]  # canonical labels
    for name in pw["test"].values:
        func, extra = calls[name]
        for k, a in enumerate(noise):
            hits, false = [], []
            for t in range(n_trials):
                one = xr.Dataset({"a": ds["m0"], "b": y.isel(trial=t, noise=k, drop=True),
                                  "c": y2.isel(trial=t, noise=k, drop=True), "human": ds["human"]})
                kw = dict(target="human", level=level, **extra)
                hits.append(float(getattr(xcorrstat, func)(one, x="a", y="b", **kw)["pvalue"]) <= 0.1)
                false.append(float(getattr(xcorrstat, func)(one, x="b", y="c", **kw)["pvalue"]) <= 0.1)
            got = pw.sel(test=name).isel(noise=k)
            assert float(got["power"]) == pytest.approx(np.mean(hits), abs=1e-12)
            assert float(got["type1_error"]) == pytest.approx(np.mean(false), abs=1e-12)
            p = np.mean(hits)
            assert float(got["power_se"]) == pytest.approx(np.sqrt(p * (1 - p) / n_trials), abs=1e-12)


def test_monotone_and_calibrated_on_synthetic_data(ds):
    pw = power_analysis(ds, target="human", metric="m0", noise=[0.0, 0.25, 0.5, 1.0, 2.0],
                        tests=["PERM-BOTH", "williams"], level="system", n_trials=200, n_resamples=200,
                        rng=1)
    for name in ("PERM-BOTH", "williams"):
        power = pw["power"].sel(test=name).values
        se = pw["power_se"].sel(test=name).values
        assert power[0] == 0.0  # an identical copy is never significantly worse
        assert np.all(np.diff(power[1:]) >= -3 * np.maximum(se[1:-1], se[2:]))
        assert power[-1] > power[1]
        err = pw["type1_error"].sel(test=name).values[1:]
        assert np.all(np.abs(err - 0.05) <= 3 * np.sqrt(0.05 * 0.95 / 200))


def test_user_supplied_degradations_and_input_samples(ds):
    wave = xr.DataArray(np.sin(np.arange(10)), dims="input", coords={"input": ds["input"]})
    sd = float(ds["m0"].std())
    worse = xr.concat([ds["m0"] + s * sd * wave for s in (0.1, 3.0)],
                      dim="noise").assign_coords(noise=["slight", "strong"])
    pw = power_analysis(ds, target="human", metric="m0", degraded=worse, tests=["PERM-BOTH"], n_trials=4,
                        n_resamples=50, rng=0, n_inputs=6)
    assert list(pw["noise"].values) == ["slight", "strong"] and "type1_error" not in pw
    assert pw.attrs["degradation"] == "user-supplied" and pw.attrs["n_inputs"] == 6


@pytest.mark.parametrize("level", ["input", "within_system"])
def test_williams_is_undefined_at_input_level(ds, level):
    pw = power_analysis(ds, target="human", metric="m0", noise=[1.0], tests=["williams"], level=level,
                        n_trials=2, n_resamples=10, rng=0)
    assert np.isnan(pw["power"]).all()


def test_bad_arguments(ds):
    kw = dict(target="human", metric="m0", n_trials=2, n_resamples=10)
    with pytest.raises(ValueError, match="tests must be one of"):
        power_analysis(ds, tests=["t-test"], **kw)
    with pytest.raises(ValueError, match="noise must be a non-empty list of amounts >= 0"):
        power_analysis(ds, noise=[-1.0], **kw)
    with pytest.raises(ValueError, match="metric='nope' is not a variable"):
        power_analysis(ds, target="human", metric="nope")
    with pytest.raises(ValueError, match="degraded must be a DataArray with a 'noise' dim"):
        power_analysis(ds, degraded=ds["m0"], **kw)
    with pytest.raises(ValueError, match="n_inputs=50 is more than the 10 inputs"):
        power_analysis(ds, n_inputs=50, **kw)


def test_trial_batch_is_recorded_and_trial_chunk_refused():
    """The trial_batch option sets the trials per task (same numbers, recorded in attrs); trial_chunk, an
    earlier name, is refused, and so is trial_batch as a parameter (how the work runs is an option)."""
    ds = make_scores(n_metrics=1, seed=4)
    kw = dict(target="human", metric="m0", noise=[0.0, 1.0], tests=["PERM-BOTH"], n_trials=4,
              n_resamples=50, rng=0)
    with xcorrstat.set_options(trial_batch=2):
        two = power_analysis(ds, **kw)
    with xcorrstat.set_options(trial_batch=1):
        one = power_analysis(ds, **kw)
    np.testing.assert_array_equal(two["power"].values, one["power"].values)
    assert two.attrs["trial_batch"] == 2
    for name in ("trial_chunk", "trial_batch"):
        with pytest.raises(TypeError, match=name):
            power_analysis(ds, **{name: 2}, **kw)
