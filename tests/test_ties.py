"""Tie calibration: the sweep equals a brute-force search over every candidate threshold,
and reproduces mt-metrics-eval's tie-calibration reference cases (tests/data/mtme_fixtures.json).

Case -> call (the flat vectors become (system, input) Datasets by ``mtme_cases.scores``):

| mt-metrics-eval | xcorrstat |
|---|---|
| ``KendallWithTiesOpt(average_by="none")`` | ``calibrate_ties(level="global")`` |
| ``average_by="item"`` | ``level="input"`` |
| ``average_by="sys"`` | ``level="within_system"`` |
| ``tau_optimization(metric, human)`` (one row) | one input with the row's items as systems, ``level="input"`` |
| ``tau_optimization`` on matrices (rows averaged) | rows as inputs, ``level="input"`` |
| ``tau_optimization(..., sample_rate=r)`` after ``np.random.seed(s)`` | ``sample_rate=r, rng=np.random.RandomState(s)`` |

The pair sampling is checked against a loop that draws one number per pair, one call at a
time, in mt-metrics-eval's order (groups in order, valid items, row-major ``i < j``).
"""

import itertools

import numpy as np
import pytest
import xarray as xr

import xcorrstat
from conftest import make_scores
from mtme_cases import case as fixture, ids, load, scores
from xcorrstat._kernels.mt.ties import calibrate_epsilon


def _valid_pairs(x, z):
    """The valid pairs (group, a, b) in mt-metrics-eval's order: groups in order, row-major a < b."""
    groups, n = x.shape
    return [(g, a, b) for g in range(groups) for a, b in itertools.combinations(range(n), 2)
            if not np.isnan([x[g, a], x[g, b], z[g, a], z[g, b]]).any()]


def _brute(x, z, pairs=None):
    """Every candidate threshold, every pair (of ``pairs``, default all valid pairs) counted again:
    (best epsilon, best mean acc_eq)."""
    groups = x.shape[0]
    pairs = _valid_pairs(x, z) if pairs is None else pairs
    if not pairs:
        return np.nan, np.nan
    candidates = sorted({0.0} | {abs(x[g, a] - x[g, b]) for g, a, b in pairs})
    best = None
    for eps in candidates:
        accs = []
        for g in range(groups):
            mine = [(a, b) for gg, a, b in pairs if gg == g]
            if not mine:
                continue
            agree = 0
            for a, b in mine:
                dm, dg = x[g, a] - x[g, b], z[g, a] - z[g, b]
                agree += (0.0 if abs(dm) <= eps else np.sign(dm)) == np.sign(dg)
            accs.append(agree / len(mine))
        value = float(np.mean(accs))
        if best is None or value > best[1] + 1e-12:
            best = (eps, value)
    return best


@pytest.mark.parametrize("seed", range(25))
def test_sweep_equals_brute_force(seed):
    rng = np.random.default_rng(seed)
    groups, n = int(rng.integers(1, 6)), int(rng.integers(2, 8))
    x = rng.integers(0, 6, (groups, n)) / 2.0
    z = rng.integers(0, 3, (groups, n)).astype(float)
    if seed % 3 == 0:
        x[rng.random((groups, n)) < 0.25] = np.nan
        z[rng.random((groups, n)) < 0.1] = np.nan
    eps, best, thresholds, objective = calibrate_epsilon(x, z)
    ref = _brute(x, z)
    np.testing.assert_allclose([eps, best], ref, atol=1e-12)
    tau_eps, tau, _, _ = calibrate_epsilon(x, z, variant="23")
    np.testing.assert_allclose([tau_eps, tau], [ref[0], 2 * ref[1] - 1], atol=1e-12)


def test_labelled_levels_and_all_metrics_at_once():
    ds = make_scores(n_metrics=3, n_systems=6, n_inputs=7, seed=9, ties=True, nan_frac=0.1)
    for level in ("input", "within_system", "global", "system"):
        res = xcorrstat.calibrate_ties(ds, target="human", level=level)
        for m in ("m0", "m1", "m2"):
            x, z = ds[m].values, ds["human"].values
            if level == "input":
                gx, gz = x.T, z.T
            elif level == "within_system":
                gx, gz = x, z
            elif level == "global":
                gx, gz = x.reshape(1, -1), z.reshape(1, -1)
            else:
                valid = ~np.isnan(x) & ~np.isnan(z)
                gx = np.array([[x[s][valid[s]].mean() for s in range(6)]])
                gz = np.array([[z[s][valid[s]].mean() for s in range(6)]])
            np.testing.assert_allclose([float(res["epsilon"].sel(metric=m)), float(res["correlation"].sel(metric=m))],
                                       _brute(gx, gz), atol=1e-12)
        assert res.attrs["level"] == level


def test_extra_dims_curve_and_errors():
    ds = make_scores(n_metrics=2, n_systems=5, n_inputs=6, seed=3, ties=True, extra=("lp", 2))
    res = xcorrstat.calibrate_ties(ds, target="human", keep_curve=True)
    assert set(res["epsilon"].dims) == {"metric", "lp"} and "candidate" in res["objective"].dims
    # the optimum is the curve's maximum
    np.testing.assert_allclose(res["correlation"].values, res["objective"].max("candidate").values, atol=1e-12)
    assert ds.corrstat.calibrate_ties(target="human").equals(xcorrstat.calibrate_ties(ds, target="human"))
    with pytest.raises(ValueError, match="calibrate_ties: variant='b' is not supported"):
        xcorrstat.calibrate_ties(ds, target="human", variant="b")
    with pytest.raises(ValueError, match="level must be one of"):
        xcorrstat.calibrate_ties(ds, target="human", level="document")


def test_no_pairs_is_undefined():
    ds = make_scores(n_metrics=1, n_systems=3, n_inputs=2, seed=0)
    ds["m0"][:] = np.nan
    res = xcorrstat.calibrate_ties(ds, target="human")
    assert np.isnan(float(res["epsilon"][0])) and np.isnan(float(res["correlation"][0]))


LEVEL = {"none": "global", "item": "input", "sys": "within_system"}
CASES = load("Correlation.KendallWithTiesOpt", "stats.KendallWithTiesOpt",
             "AverageCorrelation(KendallWithTiesOpt")


@pytest.mark.parametrize("case", CASES, ids=ids(CASES))
def test_mtme_kendall_with_ties_opt(case):
    a = case["args"]
    ds = scores(a["num_sys"], a["gold"], m=a["metric"])
    res = xcorrstat.calibrate_ties(ds, target="human", level=LEVEL[a["average_by"]], variant=a["variant"])
    exp = case["expected"]
    corr, eps = (exp["corr"], exp["epsilon"]) if isinstance(exp, dict) else (exp, None)
    tol = max(case["tolerance"]["abs"], 1e-12)
    assert float(res["correlation"][0]) == pytest.approx(corr, abs=tol)
    if eps is not None:
        assert float(res["epsilon"][0]) == pytest.approx(eps, abs=1e-12)


TAU_OPT = load("tau_optimization.", where=lambda c: "thresholds" in c["expected"] and "taus" in c["expected"]
               and "metric_rows" not in c["args"])


@pytest.mark.parametrize("case", TAU_OPT, ids=ids(TAU_OPT))
def test_mtme_tau_optimization_one_row(case):
    a, exp = case["args"], case["expected"]
    # one row of items = the systems of one input
    ds = scores(len(a["metric"]), a["human"], m=a["metric"])
    res = xcorrstat.calibrate_ties(ds, target="human", level="input", keep_curve=True)
    curve = res.isel(metric=0)
    keep = ~np.isnan(curve["threshold"].values)
    np.testing.assert_allclose(curve["threshold"].values[keep], exp["thresholds"], atol=1e-12)
    np.testing.assert_allclose(curve["objective"].values[keep], exp["taus"], atol=1e-12)
    assert float(curve["epsilon"]) == exp["best_threshold"]
    assert float(curve["correlation"]) == pytest.approx(exp["best_tau"], abs=1e-12)


REGRESSION = fixture("tau_optimization/regression_example")


def test_mtme_tau_optimization_rows_averaged():
    case = REGRESSION
    a, exp = case["args"], case["expected"]
    rows_m = np.array([[np.nan if v is None else v for v in r] for r in a["metric_rows"]], dtype=float)
    rows_h = np.array([[np.nan if v is None else v for v in r] for r in a["human_rows"]], dtype=float)
    # rows are groups: inputs, with the row's items as systems
    dims = ("system", "input")
    ds = xr.Dataset({"m": (dims, rows_m.T), "human": (dims, rows_h.T)})
    ds["human"].attrs["role"] = "human"
    res = xcorrstat.calibrate_ties(ds, target="human", level="input", keep_curve=True).isel(metric=0)
    keep = ~np.isnan(res["threshold"].values)
    np.testing.assert_allclose(res["threshold"].values[keep], exp["thresholds"], atol=1e-12)
    np.testing.assert_allclose(res["objective"].values[keep], exp["taus"], atol=1e-12)
    assert float(res["epsilon"]) == exp["best_threshold"]
    assert float(res["correlation"]) == pytest.approx(exp["best_tau"], abs=1e-12)



# mt-metrics-eval's layout cases: which scores each level groups, in xcorrstat's own layout code
RESHAPE = load("stats._Reshape", "stats._ReshapeAndFilter", "Correlation.__init__")


@pytest.mark.parametrize("case", RESHAPE, ids=ids(RESHAPE))
def test_mtme_layout_cases(case):
    from xcorrstat._mt.ties import level_groups

    a, exp = case["args"], case["expected"]
    if case["function"] == "Correlation.__init__":
        ds = scores(a["num_sys"], a["gold"], m=a["metric"])
        assert ds.sizes["system"] == exp["num_sys"] and ds.sizes["input"] == exp["num_items"]
        assert int(ds["human"].isnull().sum()) == exp["none_count"]
        return
    level = LEVEL[a["average_by"]]
    if "vector" in a:  # _Reshape: the rows a level correlates
        ds = scores(a["num_sys"], a["vector"], m=a["vector"])
        rows, _ = level_groups(ds["m"].values, ds["human"].values, level)
        assert list(rows.shape) == exp["shape"]
        np.testing.assert_array_equal(rows, np.array(exp["matrix"], dtype=float))
        return
    # _ReshapeAndFilter: rows without their missing-gold entries, empty rows dropped, concatenated
    ds = scores(a["num_sys"], a["gold"], m1=a["metric1"], m2=a["metric2"])
    gold_rows, m1_rows = level_groups(ds["m1"].values, ds["human"].values, level)[::-1]
    m2_rows, _ = level_groups(ds["m2"].values, ds["human"].values, level)
    keep = ~np.isnan(gold_rows)
    lens = [int(k.sum()) for k in keep if k.any()]
    assert lens == exp["lens"]
    np.testing.assert_array_equal(gold_rows[keep], exp["gold"])
    np.testing.assert_array_equal(m1_rows[keep], exp["metric1"])
    np.testing.assert_array_equal(m2_rows[keep], exp["metric2"])


# pair sampling (mt-metrics-eval's sample_rate)

SAMPLED = fixture("tau_optimization/sample_rate_samples_pairs")
INVALID_RATE = fixture("tau_optimization/invalid_sample_rate")


def test_mtme_tau_optimization_sampled_pairs():
    a, exp = SAMPLED["args"], SAMPLED["expected"]
    ds = scores(len(a["metric"]), a["human"], m=a["metric"])
    # np.random.seed(123) drives numpy's legacy generator: a RandomState(123) gives the same stream
    res = xcorrstat.calibrate_ties(ds, target="human", level="input", keep_curve=True,
                                   sample_rate=a["sample_rate"], rng=np.random.RandomState(a["np_random_seed"]))
    curve = res.isel(metric=0)
    keep = ~np.isnan(curve["threshold"].values)
    assert curve["threshold"].values[keep].tolist() == exp["thresholds"]
    np.testing.assert_allclose(curve["objective"].values[keep], SAMPLED["upstream_full_precision"]["taus"],
                               atol=1e-12)
    assert float(curve["epsilon"]) == 0.0 and float(curve["correlation"]) == 1.0
    assert res.attrs["sample_rate"] == a["sample_rate"] and res.attrs["rng"] == "numpy.random.RandomState"


def test_mtme_tau_optimization_invalid_sample_rate():
    a = INVALID_RATE["args"]
    ds = scores(len(a["metric"]), a["human"], m=a["metric"])
    for rate in [*a["sample_rates"], -0.5, float("nan"), True, "0.5"]:
        with pytest.raises(ValueError, match=r"sample_rate must be a number in \(0, 1\]"):
            xcorrstat.calibrate_ties(ds, target="human", level="input", sample_rate=rate, rng=0)


def _groups_of(x, z, level):
    return (x.T, z.T) if level == "input" else (x, z)


def _kept(pairs, rate, draw):
    """The pairs kept by one call of ``draw()`` per pair, in order."""
    return [p for p in pairs if draw() <= rate]


@pytest.mark.parametrize("level", ["input", "within_system"])
@pytest.mark.parametrize("source", ["RandomState", "int"])
def test_sampling_equals_a_draw_per_pair(level, source):
    ds = make_scores(n_metrics=3, n_systems=6, n_inputs=5, seed=12, ties=True)
    ds["human"] = ds["human"].where(np.random.default_rng(1).random((6, 5)) > 0.15)  # gaps shared by every metric
    rng = np.random.RandomState(7) if source == "RandomState" else 7
    res = xcorrstat.calibrate_ties(ds, target="human", level=level, sample_rate=0.4, rng=rng, keep_curve=True)
    for m in ("m0", "m1", "m2"):
        gx, gz = _groups_of(ds[m].values, ds["human"].values, level)
        # every metric gets the draws that a fresh generator with the same seed gives it
        draw = np.random.RandomState(7).random_sample if source == "RandomState" else np.random.default_rng(7).random
        pairs = _kept(_valid_pairs(gx, gz), 0.4, draw)
        got = res.sel(metric=m)
        np.testing.assert_allclose([float(got["epsilon"]), float(got["correlation"])], _brute(gx, gz, pairs),
                                   atol=1e-12)
        thresholds = got["threshold"].values
        assert thresholds[~np.isnan(thresholds)].tolist() == sorted({0.0} | {abs(gx[g, a] - gx[g, b])
                                                                            for g, a, b in pairs})
    if source == "int":
        assert res.attrs["rng"] == 7


def test_sampling_with_metrics_missing_different_cells():
    """A pair gets a draw when some metric can use it; a metric calibrated alone gets mt-metrics-eval's draws."""
    ds = make_scores(n_metrics=2, n_systems=5, n_inputs=4, seed=5, ties=True)
    ds["m0"] = ds["m0"].where(np.random.default_rng(2).random((5, 4)) > 0.3)
    x0, x1, z = ds["m0"].values.T, ds["m1"].values.T, ds["human"].values.T  # input level: groups are inputs
    both = xcorrstat.calibrate_ties(ds, target="human", sample_rate=0.5, rng=np.random.RandomState(3))
    union = _valid_pairs(x1, z)  # m1 has every cell, so its valid pairs are those of either metric
    kept = set(_kept(union, 0.5, np.random.RandomState(3).random_sample))
    for m, x in (("m0", x0), ("m1", x1)):
        pairs = [p for p in _valid_pairs(x, z) if p in kept]
        np.testing.assert_allclose([float(both["epsilon"].sel(metric=m)), float(both["correlation"].sel(metric=m))],
                                   _brute(x, z, pairs), atol=1e-12)
    alone = xcorrstat.calibrate_ties(ds, target="human", metrics=["m0"], sample_rate=0.5,
                                     rng=np.random.RandomState(3))
    pairs = _kept(_valid_pairs(x0, z), 0.5, np.random.RandomState(3).random_sample)
    np.testing.assert_allclose([float(alone["epsilon"][0]), float(alone["correlation"][0])], _brute(x0, z, pairs),
                               atol=1e-12)


def test_sampling_extra_dim_labels_start_the_same_stream():
    ds = make_scores(n_metrics=2, n_systems=5, n_inputs=4, seed=6, ties=True, extra=("lp", 3))
    res = xcorrstat.calibrate_ties(ds, target="human", sample_rate=0.6, rng=11)
    for k in range(3):
        for m in ("m0", "m1"):
            x, z = ds[m].isel(lp=k).values.T, ds["human"].isel(lp=k).values.T
            pairs = _kept(_valid_pairs(x, z), 0.6, np.random.default_rng(11).random)
            got = res.sel(metric=m).isel(lp=k)
            np.testing.assert_allclose([float(got["epsilon"]), float(got["correlation"])], _brute(x, z, pairs),
                                       atol=1e-12)


def test_one_call_gives_the_stream_of_one_call_per_draw():
    """What the vectorised sampling relies on: numpy streams do not depend on how draws are batched."""
    one_by_one = np.random.RandomState(123)
    np.testing.assert_array_equal(np.random.RandomState(123).random_sample(50),
                                  [one_by_one.random_sample() for _ in range(50)])
    g = np.random.default_rng(9)
    np.testing.assert_array_equal(np.random.default_rng(9).random(50), [g.random() for _ in range(50)])


def test_full_rate_records_no_seed():
    ds = make_scores(n_metrics=1, n_systems=4, n_inputs=3, seed=1, ties=True)
    res = xcorrstat.calibrate_ties(ds, target="human", rng=5)
    assert res.attrs["sample_rate"] == 1.0 and "rng" not in res.attrs
    np.testing.assert_allclose([float(res["epsilon"][0]), float(res["correlation"][0])],
                               _brute(ds["m0"].values.T, ds["human"].values.T), atol=1e-12)
