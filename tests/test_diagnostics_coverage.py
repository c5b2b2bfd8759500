"""Split-half CI coverage against an explicit per-trial loop with the same splits and draws."""

import numpy as np
import pytest
import xarray as xr
from scipy import stats

import xcorrstat
from conftest import make_scores
from oracles import oracle_level
from xcorrstat.diagnostics import ci_coverage
from xcorrstat.diagnostics._coverage import split_trial

N_TRIALS, N_RES = 8, 40


def _fisher(r, n, b, c, conf=0.95):
    """Bonett & Wright's Fisher-z interval; undefined when n <= b."""
    if n <= b or np.isnan(r):
        return np.nan, np.nan
    half = stats.norm.ppf(1 - (1 - conf) / 2) * c / np.sqrt(n - b)
    return np.tanh(np.arctanh(r) - half), np.tanh(np.arctanh(r) + half)


def _oracle_intervals(x, z, *, level, method, seed, trial):
    """Quadrants by plain indexing, every bootstrap draw expanded, scipy statistics, np.quantile."""
    s, i = z.shape
    a_s, b_s, a_i, b_i, sd, idr = split_trial(seed, trial, s, i, N_RES)
    xa, za = x[np.ix_(a_s, a_i)], z[np.ix_(a_s, a_i)]
    truth, _ = oracle_level(x[np.ix_(b_s, b_i)], z[np.ix_(b_s, b_i)], level, method, "b")
    out = {}
    r_a, n = oracle_level(xa, za, level, method, "b")
    if level == "input":
        n = len(a_s)  # complete data: every input of the quadrant has all its systems
    if level == "within_system":
        n = len(a_i)  # complete data: every system of the quadrant has all its inputs
    b, c = {"pearson": (3, 1.0), "kendall": (4, np.sqrt(0.437)), "spearman": (3, np.sqrt(1 + r_a**2 / 2))}[method]
    out["fisher"] = _fisher(r_a, n, b, c)
    for name, (rs, ri) in {"BOOT-SYSTEMS": (True, False), "BOOT-INPUTS": (False, True),
                           "BOOT-BOTH": (True, True)}.items():
        draws = []
        for r in range(N_RES):
            rows = sd[r] if rs else np.arange(len(a_s))
            cols = idr[r] if ri else np.arange(len(a_i))
            draws.append(oracle_level(xa[np.ix_(rows, cols)], za[np.ix_(rows, cols)], level, method, "b")[0])
        draws = np.array(draws, dtype=float)
        draws = draws[~np.isnan(draws)]
        out[name] = tuple(np.quantile(draws, [0.025, 0.975])) if draws.size else (np.nan, np.nan)
    return out, truth


@pytest.mark.parametrize("level,method", [("system", "pearson"), ("input", "pearson"), ("input", "kendall"),
                                          ("global", "spearman"), ("within_system", "pearson"),
                                          ("within_system", "kendall")])
def test_matches_explicit_trials(level, method):
    ds = make_scores(n_metrics=2, n_systems=9, n_inputs=10, seed=4)
    ds["m0"] = (ds["human"] + ds["m0"]).assign_attrs(role="metric")
    cov = ci_coverage(ds, target="human", metrics=["m0", "m1"], level=level, method=method,
                      n_trials=N_TRIALS, n_resamples=N_RES, rng=17)
    z = ds["human"].values
    for metric in ("m0", "m1"):
        x = ds[metric].values
        hits = {name: [] for name in cov["ci_method"].values}
        for t in range(N_TRIALS):
            intervals, truth = _oracle_intervals(x, z, level=level, method=method, seed=17, trial=t)
            for name, (low, high) in intervals.items():
                if not np.isnan(low) and not np.isnan(high) and not np.isnan(truth):  # undefined: left out
                    hits[name].append((low <= truth <= high, truth > high, truth < low))
        for name, rows in hits.items():
            rows = np.array(rows, dtype=float).reshape(-1, 3)
            got = cov.sel(metric=metric, level=level, ci_method=name)
            assert int(got["n_trials"]) == len(rows)
            if not len(rows):
                assert np.isnan(float(got["contained"]))
                continue
            np.testing.assert_allclose(float(got["contained"]), rows[:, 0].mean(), atol=1e-12)
            np.testing.assert_allclose(float(got["too_high"]), rows[:, 1].mean(), atol=1e-12)
            np.testing.assert_allclose(float(got["too_low"]), rows[:, 2].mean(), atol=1e-12)
            p = rows[:, 0].mean()
            np.testing.assert_allclose(float(got["mc_se"]), np.sqrt(p * (1 - p) / len(rows)), atol=1e-12)


def test_same_seed_same_result_whatever_the_blocks():
    ds = make_scores(n_metrics=1, n_systems=6, n_inputs=8, seed=1)
    kw = dict(target="human", metrics="m0", level=["system", "input"], n_trials=10, n_resamples=40, rng=3)
    with xcorrstat.set_options(trial_batch=1):
        a = ci_coverage(ds, **kw)
    with xcorrstat.set_options(trial_batch=7):
        b = ci_coverage(ds, **kw)
    c = ci_coverage(ds.chunk(), **kw)
    for other in (b, c):
        for v in ("contained", "too_high", "too_low", "width"):
            np.testing.assert_array_equal(a[v].values, other[v].values)
    assert a.attrs["rng"] == 3 and a.attrs["n_trials"] == 10
    # the splits are halves: A gets n // 2, B the rest, disjoint
    a_s, b_s, a_i, b_i, sd, idr = split_trial(3, 0, 7, 9, 5)
    assert len(a_s) == 3 and len(b_s) == 4 and not set(a_s) & set(b_s) and len(a_i) == 4 and len(b_i) == 5
    assert sd.shape == (5, 3) and sd.max() < 3 and idr.shape == (5, 4)


def test_shares_add_up_and_undefined_trials_are_left_out():
    ds = make_scores(n_metrics=1, n_systems=6, n_inputs=8, seed=2, nan_frac=0.3)
    cov = ci_coverage(ds, target="human", metrics="m0", level="input", n_trials=15, n_resamples=30, rng=0)
    total = (cov["contained"] + cov["too_high"] + cov["too_low"]).values
    n = cov["n_trials"].values
    np.testing.assert_allclose(total[n > 0], 1.0)
    assert np.isnan(total[n == 0]).all() and (n <= 15).all()
    # Fisher at input level: 3 systems per quadrant input is not more than b = 3, so undefined
    assert int(cov["n_trials"].sel(metric="m0", level="input", ci_method="fisher")) == 0


def test_methods_are_scheme_labels_in_any_case_and_results_use_the_canonical_one():
    ds = make_scores(n_metrics=1, n_systems=6, n_inputs=8, seed=3)
    kw = dict(target="human", metrics="m0", level=["system", "input"], n_trials=6, n_resamples=30, rng=2)
    mixed = ci_coverage(ds, methods=["boot-systems", "BOOT-INPUTS", "Boot-Both"], **kw)
    assert list(mixed["ci_method"].values) == ["BOOT-SYSTEMS", "BOOT-INPUTS", "BOOT-BOTH"]
    default = ci_coverage(ds, **kw)
    assert list(default["ci_method"].values) == ["fisher", "BOOT-SYSTEMS", "BOOT-INPUTS", "BOOT-BOTH"]
    for v in ("contained", "too_high", "too_low", "width", "n_trials"):
        np.testing.assert_array_equal(mixed[v].values, default[v].sel(ci_method=mixed["ci_method"]).values)
    with pytest.raises(ValueError, match="methods must be one of"):
        ci_coverage(ds, methods=["bootstrap-both"], **kw)  # an earlier spelling, no longer read


def test_bad_arguments():
    ds = make_scores(n_metrics=1, n_systems=6, n_inputs=8)
    kw = dict(target="human", metrics="m0", n_trials=2, n_resamples=5)
    with pytest.raises(ValueError, match="methods must be one of"):
        ci_coverage(ds, methods=["bca"], **kw)
    with pytest.raises(ValueError, match="level must be one of"):
        ci_coverage(ds, level="document", **kw)
    with pytest.raises(ValueError, match="n_trials must be a positive integer"):
        ci_coverage(ds, target="human", metrics="m0", n_trials=0)
    with pytest.raises(ValueError, match="at least 4 systems"):
        ci_coverage(make_scores(n_metrics=1, n_systems=3, n_inputs=8), **kw)
    with pytest.raises(ValueError, match="select one label"):
        ci_coverage(make_scores(n_metrics=1, extra=("lp", 2)), **kw)


def test_summeval_pattern_small():
    """The paper's pattern on a small run: BOOT-BOTH covers more than one-dim bootstraps."""
    ds = xcorrstat.datasets.summeval()
    cov = ci_coverage(ds, target="expert_relevance", metrics="qa_eval_f1", n_trials=60, n_resamples=300, rng=0)
    c = cov["contained"].sel(metric="qa_eval_f1")
    for level in ("system", "input"):
        both = float(c.sel(level=level, ci_method="BOOT-BOTH"))
        assert both > float(c.sel(level=level, ci_method="BOOT-SYSTEMS"))
        assert both > float(c.sel(level=level, ci_method="BOOT-INPUTS"))
    assert float(c.sel(level="input", ci_method="fisher")) >= 0.95


def test_metrics_is_required_and_metric_is_refused():
    ds = make_scores(n_metrics=2, seed=3)
    kw = dict(target="human", level="system", n_trials=5, n_resamples=50, rng=0)
    with pytest.raises(TypeError, match="needs metrics="):
        ci_coverage(ds, **kw)
    with pytest.raises(TypeError, match="metric"):
        ci_coverage(ds, metric="m0", **kw)
