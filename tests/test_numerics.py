"""Numerical range: every statistic is unchanged when the scores are multiplied by 1e+-150
or shifted by 1e6, and the undefined-statistic rules survive such scores.

The data lie on a dyadic grid (integers / 16, a few hundred distinct values): multiplying
by 1e+-150 keeps every tie and the order of every pair (neighbouring values differ by far
more than a rounding error), and ``x + 1e6`` is exact in float64. So the transformed
data hold exactly the same information, and only the algorithm can lose precision: rank
statistics must match bit for bit, Pearson-based ones to 1e-12 relative (1e-13 absolute
for values near 0, such as the difference of two correlations).

The independent oracle is scipy.stats (and explicit pair counts for tau-a, tau_eq and
acc_eq) on the untransformed grid data, which equal the transformed data rescaled
exactly; at global level scipy is also run on the transformed data themselves.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import xarray as xr
from oracles import kendall_counts, kendall_from_counts
from scipy import stats

import xcorrstat

LEVELS = ["system", "input", "global", "within_system"]
METHODS = [("pearson", "b"), ("spearman", "b"), ("kendall", "b"), ("kendall", "c"), ("kendall", "a"),
           ("kendall", "23"), ("kendall", "acc23")]
METHOD_IDS = ["pearson", "spearman", "kendall-b", "kendall-c", "kendall-a", "kendall-23", "kendall-acc23"]
TRANSFORMS = ["x1e+150", "x1e-150", "+1e6", "mixed", "split"]
RTOL, ATOL = 1e-12, 1e-13
N_SYS, N_INP = 6, 20  # 120 cells: the global level uses the sort-and-merge Kendall kernel (> 96)


def grid_dataset(seed: int = 0, *, nan_frac: float = 0.1) -> xr.Dataset:
    """Metrics m0, m1, m2 and the target ``human`` on the grid k / 16, with missing cells."""
    rng = np.random.default_rng(seed)
    human = rng.integers(-64, 65, size=(N_SYS, N_INP)) / 16.0
    data = {
        "m0": human + rng.integers(-48, 49, size=human.shape) / 16.0,  # correlated with the target
        "m1": rng.integers(-64, 65, size=human.shape) / 16.0,
        "m2": -human + rng.integers(-24, 25, size=human.shape) / 16.0,
        "human": human,
    }
    for name, v in data.items():
        v = v.copy()
        v[rng.random(v.shape) < nan_frac] = np.nan
        data[name] = (("system", "input"), v)
    coords = {"system": [f"sys{s}" for s in range(N_SYS)], "input": [f"doc{j}" for j in range(N_INP)]}
    ds = xr.Dataset(data, coords=coords)
    ds["human"].attrs["role"] = "human"
    return ds


def transform(ds: xr.Dataset, how: str) -> xr.Dataset:
    """The scores scaled or shifted (``mixed``: metrics x 1e150, the target x 1e-150; ``split``: each
    variable its own way)."""
    out = ds.copy()
    split = {"m0": "x1e+150", "m1": "x1e-150", "m2": "+1e6", "human": "x1e+150"}
    for name in ds.data_vars:
        v = ds[name]
        kind = split[name] if how == "split" else how
        if kind in ("x2^+500", "x2^-500"):
            out[name] = v * 2.0 ** int(kind[3:])
        elif kind == "x1e+150" or (kind == "mixed" and name != "human"):
            out[name] = v * 1e150
        elif kind == "x1e-150" or (kind == "mixed" and name == "human"):
            out[name] = v * 1e-150
        else:
            assert kind == "+1e6", kind
            out[name] = v + 1e6
    return out


def test_transforms_keep_ties_and_order_of_the_grid(base):
    out = transform(base, "split")
    np.testing.assert_array_equal(out["m1"].values, base["m1"].values * 1e-150)
    np.testing.assert_array_equal(out["m2"].values - 1e6, base["m2"].values)  # the shift is exact
    for how in TRANSFORMS:
        for name in base.data_vars:
            a, b = base[name].values.ravel(), transform(base, how)[name].values.ravel()
            keep = ~np.isnan(a)
            np.testing.assert_array_equal(np.argsort(a[keep], kind="stable"), np.argsort(b[keep], kind="stable"))
            assert len(np.unique(a[keep])) == len(np.unique(b[keep]))


def assert_unchanged(actual, expected, method: str) -> None:
    """Bit for bit for rank statistics, 1e-12 relative for Pearson-based ones; NaN in the same places."""
    actual, expected = np.asarray(actual, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    np.testing.assert_array_equal(np.isnan(actual), np.isnan(expected))
    if method == "pearson":
        np.testing.assert_allclose(actual, expected, rtol=RTOL, atol=ATOL)
    else:
        np.testing.assert_array_equal(actual, expected)


# --------------------------------------------------------------------------- #
# independent oracle
# --------------------------------------------------------------------------- #
def _statistic(a, b, method, variant):
    if len(a) < 3 or len(set(a)) < 2 and variant not in ("23", "acc23"):
        return math.nan
    if len(set(b)) < 2 and variant not in ("23", "acc23"):
        return math.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if method == "pearson":
            return float(stats.pearsonr(a, b).statistic)
        if method == "spearman":
            return float(stats.spearmanr(a, b).statistic)
        if variant in ("b", "c"):
            return float(stats.kendalltau(a, b, variant=variant).statistic)
    pairs = [(a[i] - a[j], b[i] - b[j], 0.0) for i in range(len(a)) for j in range(i + 1, len(a))]
    return kendall_from_counts(*kendall_counts(pairs), variant)


def _clean(xs, zs):
    keep = ~(np.isnan(xs) | np.isnan(zs))
    return list(np.asarray(xs)[keep]), list(np.asarray(zs)[keep])


def oracle(x: np.ndarray, z: np.ndarray, level: str, method: str, variant: str) -> float:
    """The level correlation by explicit loops (exactly rounded system means)."""
    if level == "system":
        valid = ~(np.isnan(x) | np.isnan(z))
        mx = [math.fsum(x[s][valid[s]]) / valid[s].sum() for s in range(x.shape[0])]
        mz = [math.fsum(z[s][valid[s]]) / valid[s].sum() for s in range(x.shape[0])]
        return _statistic(mx, mz, method, variant)
    if level == "global":
        return _statistic(*_clean(x.ravel(), z.ravel()), method, variant)
    rows = zip(x.T, z.T) if level == "input" else zip(x, z)
    values = [_statistic(*_clean(a, b), method, variant) for a, b in rows]
    values = [v for v in values if not math.isnan(v)]
    return sum(values) / len(values) if values else math.nan


# --------------------------------------------------------------------------- #
# correlate: every level x method x transform
# --------------------------------------------------------------------------- #
@pytest.fixture(scope="module")
def base():
    return grid_dataset(0)


_ORACLE: dict = {}


@pytest.mark.parametrize("how", TRANSFORMS)
@pytest.mark.parametrize("method,variant", METHODS, ids=METHOD_IDS)
@pytest.mark.parametrize("level", LEVELS)
def test_correlate_unchanged_by_scale_and_shift(base, level, method, variant, how):
    kw = dict(target="human", level=level, method=method, variant=variant)
    before = xcorrstat.correlate(base, **kw)
    after = xcorrstat.correlate(transform(base, how), **kw)
    assert_unchanged(after.values, before.values, method)
    np.testing.assert_array_equal(after["n"].values, before["n"].values)
    key = (level, method, variant)
    if key not in _ORACLE:  # the same for every transform: computed once
        _ORACLE[key] = [oracle(base[m].values, base["human"].values, *key) for m in ("m0", "m1", "m2")]
    expected = _ORACLE[key]
    np.testing.assert_allclose(after.values, expected, rtol=RTOL, atol=ATOL)
    assert np.isfinite(after.values).all()  # the grid data define every statistic
    assert abs(float(after.sel(metric="m0"))) > 0.05  # a real correlation, neither 0 nor 1
    assert abs(float(after.sel(metric="m0"))) < 1.0


@pytest.mark.parametrize("how", ["x1e+150", "x1e-150"])
@pytest.mark.parametrize("method,variant", [("pearson", "b"), ("spearman", "b"), ("kendall", "b")])
def test_global_level_matches_scipy_on_transformed_data(base, method, variant, how):
    # scipy itself is stable for scaled data at global level (no means are formed)
    data = transform(base, how)
    r = xcorrstat.correlate(data, target="human", level="global", method=method, variant=variant)
    z = data["human"].values.ravel()
    for m in ("m0", "m1", "m2"):
        expected = _statistic(*_clean(data[m].values.ravel(), z), method, variant)
        np.testing.assert_allclose(float(r.sel(metric=m)), expected, rtol=RTOL, atol=ATOL)


def test_correlate_dask_backed_unchanged(base):
    pytest.importorskip("dask")
    kw = dict(target="human", level=["system", "input"], method="pearson")
    before = xcorrstat.correlate(base, **kw)
    after = xcorrstat.correlate(transform(base, "x1e+150").chunk({"system": 3}), **kw).compute()
    assert_unchanged(after.values, before.values, "pearson")


@pytest.mark.parametrize("factor", [1e200, 1e-300])
@pytest.mark.parametrize("level", LEVELS)
def test_summeval_pearson_scaled_far(summeval, level, factor):
    """A metric scaled by 1e200 correlated 0.0 and by 1e-300 gave 1.0 (true value about 0.3)."""
    kw = dict(target="expert_relevance", metrics=["qa_eval_f1"], level=level, method="pearson")
    before = float(xcorrstat.correlate(summeval, **kw)[0])
    scaled = summeval.assign(qa_eval_f1=summeval["qa_eval_f1"] * factor)
    after = float(xcorrstat.correlate(scaled, **kw)[0])
    assert 0.1 < after < 0.9
    # the bundled scores hold values one rounding apart; a scaling that is not a power of two may merge a few
    np.testing.assert_allclose(after, before, rtol=1e-9)


@pytest.mark.parametrize("factor", [1e200, 1e-300])
@pytest.mark.parametrize("level", ["system", "input", "global"])
def test_summeval_pearson_bootstrap_draws_scaled_far(summeval, level, factor):
    """Bootstrap draws (count-weighted kernels) of a metric whose squares overflow or underflow to 0."""
    kw = dict(target="expert_relevance", metrics=["qa_eval_f1"], level=level, method="pearson",
              resample=xcorrstat.Bootstrap(n_resamples=20, rng=5, keep_distribution=True))
    before = xcorrstat.bootstrap(summeval, **kw)["distribution"].values
    scaled = summeval.assign(qa_eval_f1=summeval["qa_eval_f1"] * factor)
    after = xcorrstat.bootstrap(scaled, **kw)["distribution"].values
    assert np.isfinite(after).all() and (np.abs(after) < 1).all()
    np.testing.assert_allclose(after, before, rtol=1e-9)  # rounding of the scaled cells, as above


@pytest.mark.parametrize("level", LEVELS)
def test_power_of_two_scaling_is_bit_exact(base, level):
    kw = dict(target="human", level=level, method=["pearson", "spearman", "kendall"])
    before = xcorrstat.correlate(base, **kw)
    after = xcorrstat.correlate(base * 2.0**600, **kw)
    np.testing.assert_array_equal(after.values, before.values)


# --------------------------------------------------------------------------- #
# resampling and tests built on the kernels
# --------------------------------------------------------------------------- #
# A draw's system means tie when different cells have equal sums (1 + 3 == 2 + 2); a scaling that is not
# exact rounds each cell on its own and may break such a tie. So a rank statistic of resampled means is
# checked under shifts of grid data and power-of-two scalings, not under 1e+-150.
BOOTSTRAP_CASES = [(level, method, how) for level in LEVELS for method in ("pearson", "spearman", "kendall")
                   for how in TRANSFORMS + ["x2^+500", "x2^-500"]
                   if not (level == "system" and method != "pearson" and how not in ("+1e6", "x2^+500", "x2^-500"))]


@pytest.mark.parametrize("level,method,how", BOOTSTRAP_CASES)
def test_bootstrap_distribution_unchanged(base, level, method, how):
    kw = dict(target="human", level=level, method=method,
              resample=xcorrstat.Bootstrap(n_resamples=12, rng=3, keep_distribution=True))
    before = xcorrstat.bootstrap(base, **kw)
    after = xcorrstat.bootstrap(transform(base, how), **kw)
    assert_unchanged(after["distribution"].values, before["distribution"].values, method)
    assert_unchanged(after["correlation"].values, before["correlation"].values, method)
    np.testing.assert_array_equal(after["distribution_n"].values, before["distribution_n"].values)


@pytest.mark.parametrize("how", TRANSFORMS)
@pytest.mark.parametrize("level,method,variant", [
    ("system", "pearson", "b"), ("input", "pearson", "b"), ("global", "pearson", "b"),
    ("input", "kendall", "b"), ("input", "kendall", "acc23"), ("system", "spearman", "b"),
])
def test_permutation_distribution_unchanged(base, level, method, variant, how):
    data = base.where(base["m0"].notnull() & base["m1"].notnull())  # the swap kernels' missing pattern
    kw = dict(x="m0", y="m1", target="human", level=level, method=method, variant=variant,
              test=xcorrstat.Permutation(n_resamples=12, rng=5, keep_distribution=True))
    before = xcorrstat.permutation_test(data, **kw)
    after = xcorrstat.permutation_test(transform(data, how), **kw)
    np.testing.assert_allclose(after["distribution"].values, before["distribution"].values, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(float(after["delta"]), float(before["delta"]), rtol=RTOL, atol=ATOL)
    assert float(after["pvalue"]) == float(before["pvalue"])


@pytest.mark.parametrize("how", TRANSFORMS)
@pytest.mark.parametrize("level", ["system", "input", "global"])
def test_paired_bootstrap_unchanged(base, level, how):
    kw = dict(x="m0", y="m2", target="human", level=level,
              test=xcorrstat.Bootstrap(n_resamples=12, rng=7, keep_distribution=True))
    before = xcorrstat.paired_bootstrap_test(base, **kw)
    after = xcorrstat.paired_bootstrap_test(transform(base, how), **kw)
    np.testing.assert_allclose(after["distribution"].values, before["distribution"].values, rtol=RTOL, atol=ATOL)
    for name in ("delta", "low", "high"):
        np.testing.assert_allclose(float(after[name]), float(before[name]), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("how", TRANSFORMS)
@pytest.mark.parametrize("level", ["system", "global"])
def test_williams_unchanged(base, level, how):
    kw = dict(x="m0", y="m2", target="human", level=level)
    before = xcorrstat.williams_test(base, **kw)
    after = xcorrstat.williams_test(transform(base, how), **kw)
    for name in ("r_xz", "r_yz", "r_xy", "statistic", "pvalue", "low", "high"):
        np.testing.assert_allclose(float(after[name]), float(before[name]), rtol=1e-11, atol=ATOL, err_msg=name)


@pytest.mark.parametrize("how", TRANSFORMS)
def test_fisher_unchanged(base, how):
    before = xcorrstat.fisher(base, target="human", level="system")
    after = xcorrstat.fisher(transform(base, how), target="human", level="system")
    for name in ("correlation", "low", "high"):
        np.testing.assert_allclose(after[name].values, before[name].values, rtol=1e-11, atol=ATOL)


@pytest.mark.parametrize("how", TRANSFORMS)
@pytest.mark.parametrize("level", LEVELS)
def test_pairwise_difference_pearson_unchanged(base, level, how):
    before = xcorrstat.pairwise_difference_pearson(base, target="human", level=level)
    after = xcorrstat.pairwise_difference_pearson(transform(base, how), target="human", level=level)
    np.testing.assert_allclose(after["correlation"].values, before["correlation"].values, rtol=RTOL, atol=ATOL)
    # oracle: uncentred Pearson of the explicit pair differences of the first metric
    x, z = base["m0"].values, base["human"].values
    groups = {"input": list(zip(x.T, z.T)), "within_system": list(zip(x, z)),
              "global": [(x.ravel(), z.ravel())]}.get(level)
    if groups is None:
        valid = ~(np.isnan(x) | np.isnan(z))
        groups = [([math.fsum(x[s][valid[s]]) / valid[s].sum() for s in range(N_SYS)],
                   [math.fsum(z[s][valid[s]]) / valid[s].sum() for s in range(N_SYS)])]
    dx, dz = [], []
    for a, b in groups:
        a, b = _clean(np.asarray(a), np.asarray(b))
        for i in range(len(a)):
            for j in range(i + 1, len(a)):
                dx.append(a[i] - a[j])
                dz.append(b[i] - b[j])
    dx, dz = np.array(dx), np.array(dz)
    expected = (dx @ dz) / math.sqrt((dx @ dx) * (dz @ dz))
    np.testing.assert_allclose(float(after["correlation"].sel(metric="m0")), expected, rtol=RTOL)


@pytest.mark.parametrize("level,how", [(level, how) for level, method, how in BOOTSTRAP_CASES if method == "kendall"])
def test_pairwise_accuracy_unchanged(base, level, how):
    before = xcorrstat.pairwise_accuracy(base, target="human", level=level)
    after = xcorrstat.pairwise_accuracy(transform(base, how), target="human", level=level)
    np.testing.assert_array_equal(after["n_agree"].values, before["n_agree"].values)
    np.testing.assert_array_equal(after["n_pairs"].values, before["n_pairs"].values)
    assert (before["n_pairs"].values > 0).all()


# mt-metrics-eval's float32 arithmetic compares sums exactly: only an exact scaling keeps every bit there
# (2**600 is beyond float32's range: the scores are brought into it by an exact power-of-two scaling)
@pytest.mark.parametrize("factor,draws", [(1e-150, "by-id"), (1e200, "by-id"), (2.0**-200, "by-id"),
                                          (2.0**-200, "mt-metrics-eval"), (2.0**600, "mt-metrics-eval")])
def test_soft_pairwise_accuracy_unchanged(factor, draws):
    data = grid_dataset(1, nan_frac=0.0)
    before = xcorrstat.soft_pairwise_accuracy(data, target="human", n_resamples=50, rng=2, draws=draws)
    after = xcorrstat.soft_pairwise_accuracy(data * factor, target="human", n_resamples=50, rng=2, draws=draws)
    np.testing.assert_array_equal(after["soft_pairwise_accuracy"].values, before["soft_pairwise_accuracy"].values)
    assert (before["soft_pairwise_accuracy"].values < 1).all()


# --------------------------------------------------------------------------- #
# the undefined-statistic rules still hold
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("value", [3.0, 3.7e200, 2.5e-300, 1e6 + 0.5])
@pytest.mark.parametrize("method,variant", METHODS, ids=METHOD_IDS)
@pytest.mark.parametrize("level", LEVELS)
def test_constant_metric_is_nan_never_a_number(base, level, method, variant, value):
    data = base.assign(m1=xr.full_like(base["m1"], value))
    r = xcorrstat.correlate(data, target="human", level=level, method=method, variant=variant)
    got = float(r.sel(metric="m1"))
    if variant in ("23", "acc23"):  # tau_eq and acc_eq count ties: defined for a constant metric
        expected = oracle(data["m1"].values, base["human"].values, level, method, variant)
        assert got == pytest.approx(expected, rel=RTOL)
    else:
        assert math.isnan(got)
        assert np.isfinite(r.sel(metric="m0").values)


@pytest.mark.parametrize("method", ["pearson", "kendall"])
@pytest.mark.parametrize("level", ["system", "input", "global"])
@pytest.mark.parametrize("value", [3.0, 3.7e200, 1e6 + 0.1])
def test_constant_metric_bootstrap_draws_are_nan(base, level, method, value):
    data = base.assign(m1=xr.full_like(base["m1"], value))
    res = xcorrstat.bootstrap(data, target="human", metrics=["m1"], level=level, method=method,
                              resample=xcorrstat.Bootstrap(n_resamples=8, rng=0, keep_distribution=True))
    assert np.isnan(res["distribution"].values).all()
    assert int(res["n_undefined"].values[0]) == 8
    assert math.isnan(float(res["correlation"][0]))


@pytest.mark.parametrize("factor", [1.0, 1e200, 1e-300])
@pytest.mark.parametrize("method", ["pearson", "spearman", "kendall"])
def test_fewer_than_min_pairs_is_nan(method, factor):
    x = np.array([[1.0, np.nan], [2.0, np.nan], [np.nan, 5.0], [4.0, 6.0]]) * factor
    z = np.array([[1.0, 2.0], [3.0, 1.0], [2.0, 4.0], [5.0, 3.0]])
    ds = xr.Dataset({"m": (("system", "input"), x), "human": (("system", "input"), z)},
                    coords={"system": list("abcd"), "input": ["i0", "i1"]})
    r = xcorrstat.correlate(ds, target="human", level="global", method=method, min_pairs=6)
    assert math.isnan(float(r[0])) and int(r["n"][0]) == 5  # 5 valid pairs < 6
    r = xcorrstat.correlate(ds, target="human", level="global", method=method, min_pairs=5)
    expected = _statistic(*_clean(x.ravel(), z.ravel()), method, "b")
    assert float(r[0]) == pytest.approx(expected, rel=RTOL)


@pytest.mark.parametrize("factor", [1e200, 1e-300])
def test_near_constant_metric_is_a_number_not_nan(factor):
    # two values a rounding error apart (before scaling) are distinct: a defined correlation of 1
    x = np.array([[1.0], [1.0 + 2**-50], [1.0], [1.0 + 2**-50]]) * factor
    z = np.array([[1.0], [2.0], [1.0], [2.0]])
    ds = xr.Dataset({"m": (("system", "input"), x), "human": (("system", "input"), z)},
                    coords={"system": list("abcd"), "input": ["i0"]})
    for method in ("pearson", "spearman", "kendall"):
        r = xcorrstat.correlate(ds, target="human", level="global", method=method)
        assert float(r[0]) == pytest.approx(1.0, rel=1e-12), method


@pytest.mark.parametrize("method", ["pearson", "spearman", "kendall"])
def test_a_strided_view_gives_the_floats_of_its_copy(method):
    """Sums along a strided axis round differently in NumPy: the kernels make the observations contiguous,
    so the same values give the same bits whatever their memory layout."""
    from xcorrstat._kernels import corr

    rng = np.random.default_rng(1)
    for _ in range(20):
        x = rng.normal(size=(rng.integers(5, 300), rng.integers(2, 40))) * 10 ** rng.uniform(-3, 3)
        z = rng.normal(size=x.shape)
        x[rng.random(x.shape) < 0.1] = np.nan
        strided = corr(x.T, z.T, method=method)
        copied = corr(np.ascontiguousarray(x.T), np.ascontiguousarray(z.T), method=method)
        for a, b in zip(strided, copied):
            assert np.array_equal(a, b, equal_nan=True)
