"""Bootstrap of Kendall's variants with metric ties, tie calibration re-done in every draw, and the
within-system level and weighted averages under resampling.

Every draw is checked against pair loops on the explicitly expanded resample, built from
the same indices (``bootstrap_indices``): the drawn systems and inputs are repeated, and
pairs are counted position by position. For tau-a, tau_eq and acc_eq two copies of one
system are not a pair (the library's rule for the pair-share variants); for tau-b they are
(tied in both, as on any expanded vector).
"""

import itertools
import math

import numpy as np
import pytest
import xarray as xr

import xcorrstat
from conftest import make_scores
from oracles import METHOD_VARIANTS, MV_IDS, assert_values_same, kendall_counts, kendall_from_counts
from test_bootstrap_exact import draw_indices, make_matrices, oracle_draws
from xcorrstat._resampling.draws import bootstrap_indices, canonical_dims
from xcorrstat._resampling.statistics import resampled_level_correlation

N_DRAWS = 10
SEED = 5


def _data(seed=3, n_systems=5, n_inputs=6):
    ds = make_scores(n_metrics=2, n_systems=n_systems, n_inputs=n_inputs, seed=seed, ties=True, nan_frac=0.08)
    return ds


def _indices(ds, resample):
    dims = canonical_dims(resample)
    sizes = [ds.sizes[d] for d in dims]
    idx = dict(zip(dims, bootstrap_indices(SEED, np.arange(N_DRAWS), sizes)))
    s, i = ds.sizes["system"], ds.sizes["input"]
    return [(idx["system"][b] if "system" in idx else np.arange(s),
             idx["input"][b] if "input" in idx else np.arange(i)) for b in range(N_DRAWS)]


def _pairs(units, xs, zs, eps, distinct):
    """(dm, dg, eps) of every pair of expanded positions with both scores."""
    keep = [k for k in range(len(xs)) if not (math.isnan(xs[k]) or math.isnan(zs[k]))]
    return [(xs[a] - xs[b], zs[a] - zs[b], eps) for a, b in itertools.combinations(keep, 2)
            if not (distinct and units[a] == units[b])]


def _variant_value(units, xs, zs, variant, eps, min_pairs=3):
    distinct = variant in ("a", "23", "acc23")
    valid = [k for k in range(len(xs)) if not (math.isnan(xs[k]) or math.isnan(zs[k]))]
    pairs = _pairs(units, xs, zs, eps, distinct)
    if len(valid) < (max(min_pairs, 2) if variant in ("23", "acc23") else min_pairs) or not pairs:
        return math.nan
    if variant in ("a", "b"):
        vx, vz = [xs[k] for k in valid], [zs[k] for k in valid]
        if len(set(vx)) == 1 or len(set(vz)) == 1:
            return math.nan
    return kendall_from_counts(*kendall_counts(pairs), variant)


def _system_means(x, z, sys, inp):
    """Means over the drawn inputs (with repeats) of the drawn systems, both scores present."""
    mx, mz = [], []
    for s in sys:
        cells = [(x[s, i], z[s, i]) for i in inp if not (math.isnan(x[s, i]) or math.isnan(z[s, i]))]
        mx.append(np.mean([c[0] for c in cells]) if cells else math.nan)
        mz.append(np.mean([c[1] for c in cells]) if cells else math.nan)
    return mx, mz


def _oracle_draw(x, z, sys, inp, level, variant, eps):
    if level == "system":
        mx, mz = _system_means(x, z, sys, inp)
        return _variant_value(list(sys), mx, mz, variant, eps)
    if level == "input":
        values = [_variant_value(list(sys), x[sys, i], z[sys, i], variant, eps) for i in inp]
    else:  # within-system: each drawn system's drawn inputs
        values = [_variant_value(list(inp), x[s, inp], z[s, inp], variant, eps) for s in sys]
    values = [v for v in values if not math.isnan(v)]
    return float(np.mean(values)) if values else math.nan


@pytest.mark.parametrize("level", ["system", "input", "within_system"])
@pytest.mark.parametrize("resample", [("system",), ("input",), ("system", "input")])
@pytest.mark.parametrize("variant,eps", [("a", 0.0), ("23", 0.0), ("acc23", 0.0), ("acc23", 1.0), ("b", 1.0),
                                         ("23", 0.5)])
def test_variant_draws_equal_expanded_pair_counts(level, resample, variant, eps):
    ds = _data()
    res = xcorrstat.bootstrap(ds, target="human", level=level, method="kendall", variant=variant, epsilon=eps,
                              resample=xcorrstat.Bootstrap(resample, n_resamples=N_DRAWS, rng=SEED,
                                                           keep_distribution=True))
    assert res.attrs["epsilon"] == eps and res.attrs["variant"] == variant
    z = ds["human"].values
    for m in ("m0", "m1"):
        x = ds[m].values
        got = res["distribution"].sel(metric=m).values
        want = [_oracle_draw(x, z, s, i, level, variant, eps) for s, i in _indices(ds, resample)]
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12, equal_nan=True)
        point = xcorrstat.correlate(ds, target="human", level=level, method="kendall", variant=variant,
                                    epsilon=eps).sel(metric=m)
        assert float(res["correlation"].sel(metric=m)) == pytest.approx(float(point), abs=1e-12, nan_ok=True)


def _brute_calibration(groups):
    """Smallest epsilon with the highest mean acc_eq over groups; groups of (units, xs, zs), every
    candidate threshold counted again pair by pair (copies of one unit are not a pair)."""
    pair_sets = [p for p in (_pairs(u, xs, zs, 0.0, True) for u, xs, zs in groups) if p]
    if not pair_sets:
        return math.nan, math.nan
    candidates = sorted({0.0} | {abs(dm) for pairs in pair_sets for dm, _, _ in pairs})
    best = None
    for eps in candidates:
        accs = [np.mean([(0.0 if abs(dm) <= eps else np.sign(dm)) == np.sign(dg) for dm, dg, _ in pairs])
                for pairs in pair_sets]
        value = float(np.mean(accs))
        if best is None or value > best[1] + 1e-12:
            best = (eps, value)
    return best


def _oracle_calibration(x, z, sys, inp, level):
    if level == "system":
        mx, mz = _system_means(x, z, sys, inp)
        return _brute_calibration([(list(sys), mx, mz)])
    return _brute_calibration([(list(sys), x[sys, i], z[sys, i]) for i in inp])


@pytest.mark.parametrize("level", ["system", "input"])
@pytest.mark.parametrize("resample", [("system",), ("input",), ("system", "input")])
@pytest.mark.parametrize("seed", [3, 11])
def test_calibrated_draws_equal_brute_force_on_the_expanded_resample(level, resample, seed):
    ds = _data(seed=seed)
    res = xcorrstat.bootstrap(ds, target="human", level=level, method="kendall", variant="acc23",
                              epsilon="calibrate",
                              resample=xcorrstat.Bootstrap(resample, n_resamples=N_DRAWS, rng=SEED,
                                                           keep_distribution=True))
    z = ds["human"].values
    for m in ("m0", "m1"):
        x = ds[m].values
        want = np.array([_oracle_calibration(x, z, s, i, level) for s, i in _indices(ds, resample)])
        np.testing.assert_allclose(res["epsilon_distribution"].sel(metric=m).values, want[:, 0], atol=1e-12,
                                   equal_nan=True)
        np.testing.assert_allclose(res["distribution"].sel(metric=m).values, want[:, 1], atol=1e-12,
                                   equal_nan=True)
        eps, best = _oracle_calibration(x, z, np.arange(ds.sizes["system"]), np.arange(ds.sizes["input"]), level)
        assert float(res["epsilon"].sel(metric=m)) == pytest.approx(eps, abs=1e-12)
        assert float(res["correlation"].sel(metric=m)) == pytest.approx(best, abs=1e-12)


def test_calibrated_point_is_calibrate_ties_and_intervals_are_quantiles():
    ds = xcorrstat.datasets.summeval()[["rouge_2_f1", "qa_eval_f1", "bertscore_f1", "expert_relevance"]]
    for level in ("input", "system"):
        res = xcorrstat.bootstrap(ds, target="expert_relevance", level=level, method="kendall", variant="23",
                                  epsilon="calibrate",
                                  resample=xcorrstat.Bootstrap(n_resamples=200, rng=1, keep_distribution=True))
        cal = xcorrstat.calibrate_ties(ds, target="expert_relevance", level=level, variant="23")
        np.testing.assert_allclose(res["correlation"], cal["correlation"], atol=1e-12)
        np.testing.assert_array_equal(res["epsilon"], cal["epsilon"])
        d, e = res["distribution"].values, res["epsilon_distribution"].values
        np.testing.assert_allclose(res["low"], np.quantile(d, 0.025, axis=-1), atol=1e-12)
        np.testing.assert_allclose(res["high"], np.quantile(d, 0.975, axis=-1), atol=1e-12)
        np.testing.assert_allclose(res["epsilon_low"], np.quantile(e, 0.025, axis=-1), atol=1e-12)
        np.testing.assert_allclose(res["epsilon_high"], np.quantile(e, 0.975, axis=-1), atol=1e-12)
        assert np.all(res["low"] <= res["correlation"]) and np.all(res["correlation"] <= res["high"])
        assert res.attrs["epsilon"] == "calibrate"


def test_same_draws_whatever_the_batch_and_chunking():
    ds = _data(seed=7, n_systems=6, n_inputs=9)
    opts = dict(target="human", level="input", method="kendall", variant="acc23", epsilon="calibrate",
                resample=xcorrstat.Bootstrap(n_resamples=40, rng=2, keep_distribution=True))
    ref = xcorrstat.bootstrap(ds, **opts)
    with xcorrstat.set_options(batch=3):
        batched = xcorrstat.bootstrap(ds, **opts)
    for other in (batched, xcorrstat.bootstrap(ds.chunk({"input": -1}), **opts)):
        other = other.compute()
        for name in ("distribution", "epsilon_distribution", "low", "high", "epsilon_low", "epsilon_high"):
            np.testing.assert_array_equal(other[name].values, ref[name].values)


def test_no_self_pairs_keeps_draws_centred():
    """With 15 systems, counting copies of a system as agreeing pairs would lift every draw by
    about (1 - acc_eq) / 15; comparing distinct systems only keeps the draws around the estimate."""
    rng = np.random.default_rng(0)
    s, i = 15, 300
    human = rng.integers(0, 5, (s, i)).astype(float)
    coords = {"system": [f"s{k}" for k in range(s)], "input": np.arange(i)}
    ds = xr.Dataset({"m": (("system", "input"), np.round(human + rng.normal(0, 2, (s, i)), 1)),
                     "human": (("system", "input"), human)}, coords=coords)
    res = xcorrstat.bootstrap(ds, target="human", level="input", method="kendall", variant="acc23",
                              epsilon="calibrate",
                              resample=xcorrstat.Bootstrap(n_resamples=300, rng=0, keep_distribution=True))
    point = float(res["correlation"][0])
    shift = float(res["distribution"][0].mean()) - point
    assert abs(shift) < 0.25 * (1 - point) / s
    assert float(res["low"][0]) < point < float(res["high"][0])


@pytest.mark.parametrize("kwargs,match", [
    (dict(method="pearson", epsilon="calibrate"), "method='pearson' is not supported; it supports method 'kendall'"),
    (dict(variant="b", epsilon="calibrate"), "variant='b' is not supported with method='kendall'; it supports "
                                             "variant '23' or 'acc23'"),
    (dict(level="global", epsilon="calibrate"), "not supported with level='global' and method='kendall'"),
    (dict(level="global", variant="23", epsilon="calibrate"), "not supported with level='global'"),
    (dict(level="document", epsilon="calibrate"), "level must be one of"),
    (dict(epsilon="calibrate", ci="bca", resample="input"), "ci='bca' is not available"),
    (dict(epsilon="auto"), "epsilon must be a number >= 0 or 'calibrate'"),
    (dict(epsilon=-1.0), "epsilon must be a finite number"),
    (dict(method="pearson", variant="b", epsilon=0.5), "epsilon applies to method='kendall' only"),
    (dict(variant="c", epsilon=0.5), "not defined for tau-c"),
    (dict(level="global"), "^bootstrap: variant='acc23' is not supported with level='global' and "
                           "method='kendall'; it supports variant 'b' or 'c': under resampling, tau-a"),
    (dict(variant="e"), "variant must be one of"),
])
def test_errors_name_the_argument(kwargs, match):
    ds = _data()
    opts = dict(target="human", level="input", method="kendall", variant="acc23", n_resamples=5, rng=0)
    opts = {**opts, **kwargs}
    draws = {k: opts.pop(k) for k in ("resample", "n_resamples", "rng") if k in opts}
    with pytest.raises(ValueError, match=match):
        xcorrstat.bootstrap(ds, resample=xcorrstat.Bootstrap(**draws), **opts)


def test_paired_bootstrap_test_takes_the_variants():
    ds = _data()
    res = xcorrstat.paired_bootstrap_test(ds, x="m0", y="m1", target="human", level="input", method="kendall",
                                          variant="acc23", test=xcorrstat.Bootstrap(n_resamples=N_DRAWS, rng=SEED,
                                                                                    keep_distribution=True))
    z = ds["human"].values
    want = [_oracle_draw(ds["m0"].values, z, s, i, "input", "acc23", 0.0)
            - _oracle_draw(ds["m1"].values, z, s, i, "input", "acc23", 0.0)
            for s, i in _indices(ds, ("system", "input"))]
    np.testing.assert_allclose(res["distribution"].values, want, atol=1e-12)


@pytest.mark.parametrize("nan_frac", [0.0, 0.15], ids=["complete", "nan"])
@pytest.mark.parametrize("resample", [("system",), ("input",), ("system", "input")])
@pytest.mark.parametrize("method,variant", METHOD_VARIANTS, ids=MV_IDS)
@pytest.mark.parametrize("level,average", [("within_system", "macro"), ("within_system", "weighted"),
                                           ("input", "weighted")])
def test_group_levels_and_weighted_average_equal_expanded_oracle(level, average, method, variant, resample,
                                                                 nan_frac):
    X, Z = make_matrices(31, nan_frac=nan_frac)
    sys_idx, inp_idx = draw_indices(4, resample, X.shape[1], X.shape[2], N_DRAWS)
    r, n = resampled_level_correlation(X, Z, level=level, method=method, variant=variant, average=average,
                                       sys_idx=sys_idx, inp_idx=inp_idx)
    r_exp, n_exp = oracle_draws(X, Z, level, method, variant, sys_idx, inp_idx, average=average)
    assert_values_same(r, r_exp)
    np.testing.assert_array_equal(n, n_exp)


def test_within_system_labelled_bootstrap_and_calibration():
    ds = _data(seed=5, n_systems=5, n_inputs=7)
    res = xcorrstat.bootstrap(ds, target="human", level="within_system", method="kendall", variant="acc23",
                              epsilon="calibrate",
                              resample=xcorrstat.Bootstrap(("system", "input"), n_resamples=N_DRAWS, rng=SEED,
                                                           keep_distribution=True))
    cal = xcorrstat.calibrate_ties(ds, target="human", level="within_system")
    np.testing.assert_allclose(res["correlation"], cal["correlation"], atol=1e-12)
    np.testing.assert_array_equal(res["epsilon"], cal["epsilon"])
    z = ds["human"].values
    for m in ("m0", "m1"):
        x = ds[m].values
        want = np.array([_brute_calibration([(list(i), x[s_, i], z[s_, i]) for s_ in s])
                         for s, i in _indices(ds, ("system", "input"))])
        np.testing.assert_allclose(res["epsilon_distribution"].sel(metric=m), want[:, 0], atol=1e-12)
        np.testing.assert_allclose(res["distribution"].sel(metric=m), want[:, 1], atol=1e-12)
    weighted = xcorrstat.bootstrap(ds, target="human", level="within_system", method="pearson",
                                   average="weighted", resample=xcorrstat.Bootstrap(n_resamples=N_DRAWS, rng=SEED))
    point = xcorrstat.correlate(ds, target="human", level="within_system", average="weighted")
    np.testing.assert_allclose(weighted["correlation"], point, atol=1e-12)
    assert weighted.attrs["average"] == "weighted"


def test_recalibrating_refuses_pair_tables_over_the_budget_and_blocks_the_rest():
    """Each metric's sorted pair table must fit the memory budget: refused with one line when one alone does
    not, and the same numbers whatever the budget when the metrics are taken a few at a time."""
    rng = np.random.default_rng(5)
    z = rng.integers(0, 4, size=(4, 1000)).astype(float)
    data = {f"m{k}": (("system", "input"), np.round(z + rng.normal(size=z.shape), 1)) for k in range(3)}
    ds = xr.Dataset({**data, "human": (("system", "input"), z)})
    ds["human"].attrs["role"] = "human"
    kw = dict(target="human", method="kendall", variant="acc23", epsilon="calibrate",
              resample=xcorrstat.Bootstrap(("system", "input"), n_resamples=20, rng=1))
    with xcorrstat.set_options(memory_budget="64MiB"):
        with pytest.raises(ValueError, match=r"^epsilon='calibrate' re-calibrates every draw on each metric's 4 groups "
                                             r"of 1,000 items .* over memory_budget"):
            xcorrstat.bootstrap(ds, level="within_system", **kw)
    many = xr.Dataset({name: (("system", "input"), np.resize(rng.integers(0, 4, 3000).astype(float), (3000, 1)))
                       for name in ("m0", "human")})
    many["human"].attrs["role"] = "human"
    with xcorrstat.set_options(memory_budget="64MiB"):
        with pytest.raises(ValueError, match=r"^epsilon='calibrate' re-calibrates every draw on the pairs of 3,000 "
                                             r"system means"):
            xcorrstat.bootstrap(many, level="system", **kw)
    small = ds.isel(input=slice(0, 200))
    with xcorrstat.set_options(memory_budget="4GiB"):
        whole = xcorrstat.bootstrap(small, level="input", **kw)
    with xcorrstat.set_options(memory_budget="16MiB"):
        steps = xcorrstat.bootstrap(small, level="input", **kw)
    for name in whole.data_vars:
        np.testing.assert_array_equal(whole[name].values, steps[name].values)
