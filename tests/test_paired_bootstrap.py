"""Paired bootstrap test of rho(X, Z) - rho(Y, Z), checked against independent oracles.

A draw is checked by expanding it explicitly: the drawn systems and inputs (from
:func:`bootstrap_indices`, which every run uses) index the score matrices,
``A[sys_idx[b]][:, inp_idx[b]]``, the *same* indices for X, Y and Z, and the
draw's difference ``r(X_b, Z_b) - r(Y_b, Z_b)`` is computed by
:func:`oracles.oracle_level` (plain Python loops and ``scipy.stats``, no
xcorrstat kernel). Integer scores keep system means exact, so ties between them
are the same in the package and in the oracle.

The p-value is recomputed here by counting the centred draws by hand:
``greater``: ``delta_b - delta >= delta``; ``less``: ``delta_b - delta <= delta``;
``two-sided``: ``|delta_b - delta| >= |delta|`` (ties within 1e-12 count), over
the defined draws, as ``(1 + k) / (1 + B)`` or ``k / B``.
"""

from __future__ import annotations

import dask
import numpy as np
import pytest
import xarray as xr
from conftest import to_dataset
from oracles import assert_values_same, LEVELS, METHOD_VARIANTS, MV_IDS, oracle_level

import xcorrstat
from xcorrstat._resampling.draws import bootstrap_indices
from xcorrstat._resampling.pvalues import paired_bootstrap_pvalue
from xcorrstat._significance import paired_bootstrap_test

RESAMPLES = {"systems": ("system",), "inputs": ("input",), "both": ("system", "input")}
N_DRAWS = 6
TIE_TOLERANCE = 1e-12


# --------------------------------------------------------------------------- #
# Data and oracle
# --------------------------------------------------------------------------- #
def matrices(seed, *, nan_frac=0.15, n_sys=5, n_inp=7):
    """X, Y, Z: integer scores 0..3 (many ties) with NaN where missing."""
    rng = np.random.default_rng(seed)

    def draw():
        v = rng.integers(0, 4, size=(n_sys, n_inp)).astype(float)
        if nan_frac:
            v[rng.random(v.shape) < nan_frac] = np.nan
        return v

    return draw(), draw(), draw()


def draw_indices(seed, dims, n_sys, n_inp, n_draws):
    """Drawn system / input indices of draws 0..n_draws-1 (None for a dim kept fixed)."""
    sizes = [{"system": n_sys, "input": n_inp}[d] for d in dims]
    idx = dict(zip(dims, bootstrap_indices(seed, range(n_draws), sizes)))
    return idx.get("system"), idx.get("input")


def expand(a, sys_row, inp_row):
    out = a if sys_row is None else a[sys_row, :]
    return out if inp_row is None else out[:, inp_row]


def oracle_draws(X, Y, Z, level, method, variant, sys_idx, inp_idx, **kw):
    """Oracle r(X_b, Z_b) and r(Y_b, Z_b) of every draw, one index set per draw for all three."""
    n_draws = (sys_idx if sys_idx is not None else inp_idx).shape[0]
    rx, ry = np.full(n_draws, np.nan), np.full(n_draws, np.nan)
    for b in range(n_draws):
        srow = None if sys_idx is None else sys_idx[b]
        irow = None if inp_idx is None else inp_idx[b]
        zb = expand(Z, srow, irow)
        rx[b] = oracle_level(expand(X, srow, irow), zb, level, method, variant, **kw)[0]
        ry[b] = oracle_level(expand(Y, srow, irow), zb, level, method, variant, **kw)[0]
    return rx, ry


def oracle_delta(X, Y, Z, level, method, variant, **kw):
    return oracle_level(X, Z, level, method, variant, **kw)[0] - oracle_level(Y, Z, level, method, variant, **kw)[0]


def expected_pvalue(dist, delta, alternative, pvalue):
    """The paired bootstrap p-value, counted by hand over the defined draws."""
    d = [v for v in dist if not np.isnan(v)]
    if np.isnan(delta) or not d:
        return np.nan
    k = 0
    for v in d:
        centred = v - delta
        if alternative == "greater":
            k += centred >= delta - TIE_TOLERANCE
        elif alternative == "less":
            k += centred <= delta + TIE_TOLERANCE
        else:
            k += abs(centred) >= abs(delta) - TIE_TOLERANCE
    return (1 + k) / (1 + len(d)) if pvalue == "plus-one" else k / len(d)


#: keywords of the test's settings object (xcorrstat.Bootstrap); the rest stay flat in the call
BOOTSTRAP_KEYS = ("resample", "n_resamples", "rng", "pvalue", "keep_distribution")


def run(ds, **kw):
    opts = dict(x="mx", y="my", target="human", n_resamples=N_DRAWS, rng=0, keep_distribution=True)
    opts.update(kw)
    test = xcorrstat.Bootstrap(**{k: opts.pop(k) for k in BOOTSTRAP_KEYS if k in opts})
    return paired_bootstrap_test(ds, test=test, **opts)


# --------------------------------------------------------------------------- #
# 1. every draw equals scipy on the explicitly resampled matrices
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("resample", list(RESAMPLES))
@pytest.mark.parametrize("method,variant", METHOD_VARIANTS, ids=MV_IDS)
@pytest.mark.parametrize("level", LEVELS)
def test_draws_equal_expanded_oracle(level, method, variant, resample):
    data_seed = 10 + LEVELS.index(level) + 10 * METHOD_VARIANTS.index((method, variant))
    X, Y, Z = matrices(data_seed)
    dims = RESAMPLES[resample]
    seed = 500 + data_seed
    res = run(to_dataset(X, Y, Z), level=level, method=method, variant=variant, resample=dims, rng=seed)

    sys_idx, inp_idx = draw_indices(seed, dims, *X.shape, N_DRAWS)
    rx, ry = oracle_draws(X, Y, Z, level, method, variant, sys_idx, inp_idx)
    assert res["distribution"].dims == ("resample",)
    assert_values_same(res["metric_distribution"].sel(metric="mx").values, rx, "x draws")
    assert_values_same(res["metric_distribution"].sel(metric="my").values, ry, "y draws")
    assert_values_same(res["distribution"].values, rx - ry, "delta draws")
    assert int(res["n_undefined"]) == int(np.isnan(rx - ry).sum())

    delta = oracle_delta(X, Y, Z, level, method, variant)
    assert_values_same(res["delta"].values, delta, "observed delta")
    assert_values_same(res["correlation"].values,
                       [oracle_level(A, Z, level, method, variant)[0] for A in (X, Y)], "observed correlations")
    assert_values_same(res["pvalue"].values, expected_pvalue(rx - ry, delta, "greater", "plus-one"), "pvalue")


@pytest.mark.parametrize("level", LEVELS)
def test_draws_on_complete_data_across_draw_blocks(level):
    # 300 draws: past the first block of 256 draw ids; no missing cell
    X, Y, Z = matrices(71, nan_frac=0.0, n_sys=6, n_inp=5)
    with xcorrstat.set_options(batch=37):
        res = run(to_dataset(X, Y, Z), level=level, method="kendall", n_resamples=300, rng=8)
    sys_idx, inp_idx = draw_indices(8, ("system", "input"), 6, 5, 300)
    rx, ry = oracle_draws(X, Y, Z, level, "kendall", "b", sys_idx, inp_idx)
    assert_values_same(res["distribution"].values, rx - ry)


@pytest.mark.parametrize("level", LEVELS)
def test_min_pairs_and_skipna_apply_to_the_resample(level):
    X, Y, Z = matrices(72, nan_frac=0.3)
    sys_idx, inp_idx = draw_indices(4, ("system", "input"), *X.shape, N_DRAWS)
    res = run(to_dataset(X, Y, Z), level=level, method="spearman", min_pairs=4, rng=4)
    rx, ry = oracle_draws(X, Y, Z, level, "spearman", "b", sys_idx, inp_idx, min_pairs=4)
    assert_values_same(res["distribution"].values, rx - ry)
    assert_values_same(res["delta"].values, oracle_delta(X, Y, Z, level, "spearman", "b", min_pairs=4))
    # skipna=False: any missing cell in the data makes every statistic NaN
    res = run(to_dataset(X, Y, Z), level=level, skipna=False, rng=4)
    assert np.isnan(res["distribution"].values).all() and np.isnan(float(res["delta"]))
    assert int(res["n_undefined"]) == N_DRAWS and np.isnan(float(res["pvalue"]))


# --------------------------------------------------------------------------- #
# 2. paired: the draws of x and of y are bootstrap()'s draws with the same seed
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("level,method,resample", [("system", "kendall", ("system", "input")),
                                                   ("input", "pearson", ("system",)),
                                                   ("global", "spearman", ("input",))])
def test_draws_are_bootstraps_draws_of_each_metric(level, method, resample):
    ds = to_dataset(*matrices(81, n_sys=7, n_inp=9))
    common = dict(target="human", level=level, method=method)
    draws = xcorrstat.Bootstrap(resample, n_resamples=40, rng=123, keep_distribution=True)
    res = paired_bootstrap_test(ds, x="mx", y="my", test=draws, **common)
    for name in ("mx", "my"):
        ref = xcorrstat.bootstrap(ds, metrics=[name], resample=draws, **common)
        np.testing.assert_array_equal(res["metric_distribution"].sel(metric=name).values,
                                      ref["distribution"].sel(metric=name).values)
        np.testing.assert_array_equal(res["correlation"].sel(metric=name).values,
                                      ref["correlation"].sel(metric=name).values)
    np.testing.assert_array_equal(
        res["distribution"].values,
        res["metric_distribution"].sel(metric="mx").values - res["metric_distribution"].sel(metric="my").values,
    )


def test_identical_metrics_give_zero_deltas_and_pvalue_one():
    X, _, Z = matrices(82)
    ds = to_dataset(X, X.copy(), Z)
    for alternative in ("greater", "less", "two-sided"):
        res = run(ds, alternative=alternative, pvalue="fraction", n_resamples=30)
        d = res["distribution"].values
        assert (d[~np.isnan(d)] == 0).all() and float(res["delta"]) == 0
        assert float(res["pvalue"]) == 1.0


# --------------------------------------------------------------------------- #
# 3. p-value: an explicit count for every alternative and convention
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("pvalue", ["plus-one", "fraction"])
@pytest.mark.parametrize("alternative", ["greater", "less", "two-sided"])
@pytest.mark.parametrize("level,resample", [("system", ("system",)), ("input", ("system", "input"))])
def test_pvalue_equals_explicit_count(level, resample, alternative, pvalue):
    # three systems: some draws repeat one system and are undefined
    X, Y, Z = matrices(91, nan_frac=0.1, n_sys=4, n_inp=6)
    n_draws, seed = 120, 17
    res = run(to_dataset(X, Y, Z), level=level, resample=resample, n_resamples=n_draws, rng=seed,
              alternative=alternative, pvalue=pvalue)
    sys_idx, inp_idx = draw_indices(seed, resample, *X.shape, n_draws)
    rx, ry = oracle_draws(X, Y, Z, level, "pearson", "b", sys_idx, inp_idx)
    delta = oracle_delta(X, Y, Z, level, "pearson", "b")
    assert np.isnan(rx - ry).any()
    assert_values_same(res["pvalue"].values, expected_pvalue(rx - ry, delta, alternative, pvalue))
    assert res.attrs["alternative"] == alternative and res.attrs["pvalue"] == pvalue


def test_pvalue_kernel_by_hand():
    draws = np.array([-0.3, 0.0, 0.2, 0.4, 0.4 - 1e-13, 0.4 - 1e-9, 0.45, np.nan, 0.9])  # 8 defined
    # delta = 0.2; centred draws: -0.5, -0.2, 0, 0.2, 0.2 - 1e-13 (a tie), 0.2 - 1e-9 (not a tie), 0.25, NaN, 0.7
    assert paired_bootstrap_pvalue(draws, 0.2, pvalue="fraction") == pytest.approx(4 / 8)
    assert paired_bootstrap_pvalue(draws, 0.2, alternative="less", pvalue="fraction") == pytest.approx(6 / 8)
    # |centred| >= 0.2: -0.5, -0.2, 0.2, 0.2 - 1e-13, 0.25, 0.7
    assert paired_bootstrap_pvalue(draws, 0.2, alternative="two-sided", pvalue="fraction") == pytest.approx(6 / 8)
    assert paired_bootstrap_pvalue(draws, 0.2) == pytest.approx((1 + 4) / (1 + 8))
    # broadcasting: rows of draws with one observed value each
    two = np.stack([draws, -draws])
    np.testing.assert_allclose(paired_bootstrap_pvalue(two, [0.2, -0.2], alternative="less", pvalue="fraction"),
                               [6 / 8, 4 / 8])
    # nothing defined, or delta undefined: NaN (never 0 or 1)
    assert np.isnan(paired_bootstrap_pvalue(np.full(4, np.nan), 0.1))
    assert np.isnan(paired_bootstrap_pvalue(draws, np.nan))
    with pytest.raises(ValueError, match="alternative"):
        paired_bootstrap_pvalue(draws, 0.2, alternative="bigger")
    with pytest.raises(ValueError, match="pvalue"):
        paired_bootstrap_pvalue(draws, 0.2, pvalue="exact")


def test_direction_of_the_alternative():
    # x follows the target closely, y is noise: small p for "greater", large for "less"
    rng = np.random.default_rng(93)
    Z = rng.normal(size=(8, 12))
    ds = to_dataset(Z + 0.3 * rng.normal(size=Z.shape), rng.normal(size=Z.shape), Z)
    kw = dict(n_resamples=200, rng=1, pvalue="fraction")
    greater, less = run(ds, **kw), run(ds, alternative="less", **kw)
    assert float(greater["delta"]) > 0.5
    assert float(greater["pvalue"]) < 0.05 < 0.95 < float(less["pvalue"])
    assert float(greater["low"]) > 0


# --------------------------------------------------------------------------- #
# 4. interval: quantiles of the defined draws
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("confidence_level", [0.95, 0.8])
def test_interval_is_numpy_quantile_of_defined_draws(confidence_level):
    X, Y, Z = matrices(101, nan_frac=0.1, n_sys=4, n_inp=6)
    res = run(to_dataset(X, Y, Z), resample="system", n_resamples=150, rng=3, confidence_level=confidence_level)
    sys_idx, _ = draw_indices(3, ("system",), *X.shape, 150)
    rx, ry = oracle_draws(X, Y, Z, "system", "pearson", "b", sys_idx, None)
    d = rx - ry
    assert np.isnan(d).any()
    alpha = 1 - confidence_level
    q_low, q_high = np.quantile(d[~np.isnan(d)], [alpha / 2, 1 - alpha / 2])  # default "linear" method
    assert_values_same(res["low"].values, q_low, "low")
    assert_values_same(res["high"].values, q_high, "high")
    assert int(res["n_undefined"]) == int(np.isnan(d).sum())
    assert res.attrs["confidence_level"] == confidence_level


# --------------------------------------------------------------------------- #
# 5. batch, chunking and laziness
# --------------------------------------------------------------------------- #
def _raising_scheduler(*args, **kwargs):
    raise AssertionError("the result should stay lazy: something was computed")


def assert_same_result(a, b):
    assert set(a.data_vars) == set(b.data_vars)
    for name in ("distribution", "metric_distribution", "delta", "n_undefined", "correlation", "pvalue"):
        np.testing.assert_array_equal(a[name].values, b[name].values, err_msg=name)
    for name in ("low", "high"):
        np.testing.assert_allclose(a[name].values, b[name].values, rtol=0, atol=1e-12, err_msg=name)


@pytest.fixture(scope="module")
def batched_data():
    """Scores with an extra batch dim (two language pairs)."""
    rng = np.random.default_rng(111)
    shape = (2, 6, 9)
    dims = ("lp", "system", "input")

    def draw():
        v = rng.integers(0, 5, size=shape).astype(float)
        v[rng.random(shape) < 0.1] = np.nan
        return v

    ds = xr.Dataset({"mx": (dims, draw()), "my": (dims, draw()), "human": (dims, draw())},
                    coords={"lp": ["de-en", "zh-en"], "system": list("abcdef"), "input": [f"d{j}" for j in range(9)]})
    ds["human"].attrs["role"] = "human"
    return ds


@pytest.fixture(scope="module")
def batched_reference(batched_data):
    return run(batched_data, level="system", method="kendall", n_resamples=300, rng=5)


def test_batch_size_does_not_change_results(batched_data, batched_reference):
    for batch in (1, 64, 300):
        with xcorrstat.set_options(batch=batch):
            res = run(batched_data, level="system", method="kendall", n_resamples=300, rng=5)
        assert res.attrs["batch"] == batch
        assert_same_result(res, batched_reference)


def test_dask_input_stays_lazy_and_chunking_does_not_change_results(batched_data, batched_reference):
    lazy_data = batched_data.chunk({"lp": 1, "input": 4})
    with dask.config.set(scheduler=_raising_scheduler), xcorrstat.set_options(batch=50):
        res = run(lazy_data, level="system", method="kendall", n_resamples=300, rng=5)
    for name, var in res.data_vars.items():
        assert var.chunks is not None, f"{name} was computed"
    with dask.config.set(scheduler="threads"):
        computed = res.compute()
    assert_same_result(computed, batched_reference)
    assert computed.attrs["rng"] == batched_reference.attrs["rng"] == 5


def test_batch_dim_slices_equal_separate_runs(batched_data, batched_reference):
    assert batched_reference["delta"].dims == ("lp",)
    assert batched_reference["distribution"].dims == ("lp", "resample")
    for lp in ("de-en", "zh-en"):
        one = run(batched_data.sel(lp=lp), level="system", method="kendall", n_resamples=300, rng=5)
        for name in ("delta", "pvalue", "low", "high", "distribution"):
            np.testing.assert_array_equal(one[name].values, batched_reference[name].sel(lp=lp).values)


def test_generator_seed_is_recorded_and_reproduces():
    ds = to_dataset(*matrices(121))
    a = run(ds, rng=np.random.default_rng(9), n_resamples=20)
    b = run(ds, rng=a.attrs["rng"], n_resamples=20)
    xr.testing.assert_identical(a, b)


# --------------------------------------------------------------------------- #
# 6. attrs, outputs and errors
# --------------------------------------------------------------------------- #
def test_attrs_record_every_option():
    ds = to_dataset(*matrices(131))
    with xcorrstat.set_options(batch=10):
        res = paired_bootstrap_test(ds, x="mx", y="my", target="human", level="input", method="kendall",
                                    variant="c",
                                    test=xcorrstat.Bootstrap("input", n_resamples=25, rng=77, pvalue="fraction"),
                                    alternative="two-sided", confidence_level=0.9, skipna=True, min_pairs=4)
    expected = {
        "test": "paired-bootstrap", "x": "mx", "y": "my", "target": "human", "level": "input",
        "method": "kendall", "variant": "c", "resample": ["input"], "n_resamples": 25,
        "alternative": "two-sided", "pvalue": "fraction", "confidence_level": 0.9, "ci": "percentile",
        "rng": 77, "batch": 10, "skipna": 1, "min_pairs": 4,
    }
    assert {k: res.attrs[k] for k in expected} == expected
    assert "distribution" not in res and "metric_distribution" not in res
    assert list(res["correlation"]["metric"].values) == ["mx", "my"]
    assert res["pvalue"].dims == res["delta"].dims == ()
    assert run(ds, method="pearson").attrs["variant"] == ""


@pytest.mark.parametrize("kwargs,error,match", [
    (dict(y="mx"), ValueError, "x and y must be two different"),
    (dict(x="nope"), ValueError, "x='nope' is not a score"),
    (dict(y="nope"), ValueError, "y='nope' is not a score"),
    (dict(target="nope"), ValueError, "target='nope'"),
    (dict(target=["human"]), TypeError, "target must be one score name"),
    (dict(alternative="bigger"), ValueError, "alternative must be one of"),
    (dict(pvalue="exact"), ValueError, "pvalue must be one of"),
    (dict(confidence_level=1.0), ValueError, "confidence_level must be"),
    (dict(confidence_level="0.9"), ValueError, "confidence_level must be"),
    (dict(resample="metric"), ValueError, "resample must be"),
    (dict(resample=()), ValueError, "resample must name"),
    (dict(n_resamples=0), ValueError, "n_resamples must be a positive integer"),
    (dict(batch=0), ValueError, "batch must be a positive integer"),
    (dict(level="document"), ValueError, "level must be one of"),
    (dict(method="cosine"), ValueError, "method must be one of"),
    (dict(variant="d"), ValueError, "variant must be one of"),
    (dict(min_pairs=1), ValueError, "min_pairs must be"),
    (dict(skipna="yes"), TypeError, "skipna must be"),
    (dict(rng=-1), ValueError, "rng must be"),
])
def test_errors_name_the_argument(kwargs, error, match):
    ds = to_dataset(*matrices(141))
    kwargs = dict(kwargs)
    options = {"batch": kwargs.pop("batch")} if "batch" in kwargs else {}  # batch is set_options(batch=...)
    with pytest.raises(error, match=match):
        with xcorrstat.set_options(**options):
            run(ds, **kwargs)
