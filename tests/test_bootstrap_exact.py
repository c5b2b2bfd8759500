"""Bootstrap draws, intervals and Fisher bounds checked against independent oracles.

A bootstrap draw is checked by expanding it explicitly: the drawn systems and
inputs (from :func:`bootstrap_indices`, which every run uses) index the score
matrices, ``X[:, sys_idx[b]][:, :, inp_idx[b]]``, and the level statistic of that
expanded matrix is computed by :func:`oracles.oracle_level` with plain Python
loops and ``scipy.stats``:

* system level: per-system means over the inputs where both scores are present
  (with ``complete_inputs``: only inputs present for every expanded system), then
  one correlation across the expanded systems;
* input level: one correlation across the expanded systems per expanded input,
  averaged over the inputs where it is defined;
* global level: one correlation over all valid cells.

A correlation is NaN when fewer than ``min_pairs`` valid pairs remain or when
either side is constant over them. None of xcorrstat's kernels is used by the
oracle. Integer scores keep every mean exactly representable up to one rounding,
so ties between system means are the same here and in the package.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import xarray as xr
from oracles import assert_values_same, LEVELS, METHOD_VARIANTS, MV_IDS, oracle_level
from scipy import stats

import xcorrstat
from xcorrstat._resampling.draws import bootstrap_indices
from xcorrstat._resampling.statistics import resampled_level_correlation

RESAMPLES = {"system": ("system",), "input": ("input",), "both": ("system", "input")}
N_DRAWS = 8


# --------------------------------------------------------------------------- #
# Oracle
# --------------------------------------------------------------------------- #
def expand(a, sys_row, inp_row):
    """The explicit resample of a (..., S, I) matrix."""
    out = a if sys_row is None else a[..., sys_row, :]
    return out if inp_row is None else out[..., inp_row]


def oracle_draws(X, Z, level, method, variant, sys_idx, inp_idx, **kw):
    """Oracle statistic and n of every metric (rows of X) under every draw: (M, B)."""
    n_draws = (sys_idx if sys_idx is not None else inp_idx).shape[0]
    r = np.full((X.shape[0], n_draws), np.nan)
    n = np.zeros((X.shape[0], n_draws), dtype=np.int64)
    for b in range(n_draws):
        srow = None if sys_idx is None else sys_idx[b]
        irow = None if inp_idx is None else inp_idx[b]
        zb = expand(Z, srow, irow)
        for m in range(X.shape[0]):
            r[m, b], n[m, b] = oracle_level(expand(X[m], srow, irow), zb, level, method, variant, **kw)
    return r, n


def draw_indices(seed, resample, n_sys, n_inp, n_draws):
    """Drawn system / input indices of draws 0..n_draws-1 (None for a dim kept fixed)."""
    dims = RESAMPLES[resample] if isinstance(resample, str) else resample
    sizes = [{"system": n_sys, "input": n_inp}[d] for d in dims]
    idx = dict(zip(dims, bootstrap_indices(seed, range(n_draws), sizes)))
    return idx.get("system"), idx.get("input")


def make_matrices(seed, *, nan_frac=0.0, n_metrics=3, n_sys=None, n_inp=None, integer=True):
    rng = np.random.default_rng(seed)
    n_sys = int(rng.integers(4, 9)) if n_sys is None else n_sys
    n_inp = int(rng.integers(5, 13)) if n_inp is None else n_inp

    def draw(shape):
        v = rng.integers(0, 4, size=shape).astype(float) if integer else rng.normal(size=shape)
        if nan_frac:
            v[rng.random(shape) < nan_frac] = np.nan
        return v

    return draw((n_metrics, n_sys, n_inp)), draw((n_sys, n_inp))


def to_dataset(X, Z):
    n_metrics, n_sys, n_inp = X.shape
    coords = {"system": [f"sys{s}" for s in range(n_sys)], "input": [f"in{j}" for j in range(n_inp)]}
    data = {f"m{k}": (("system", "input"), X[k]) for k in range(n_metrics)}
    data["human"] = (("system", "input"), Z)
    ds = xr.Dataset(data, coords=coords)
    ds["human"].attrs["role"] = "human"
    return ds


# --------------------------------------------------------------------------- #
# 1. resampled_level_correlation against the expanded resample
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("data_seed", [11, 12])
@pytest.mark.parametrize("nan_frac", [0.0, 0.15], ids=["complete", "nan"])
@pytest.mark.parametrize("resample", list(RESAMPLES))
@pytest.mark.parametrize("method,variant", METHOD_VARIANTS, ids=MV_IDS)
@pytest.mark.parametrize("level", LEVELS)
def test_draws_equal_expanded_oracle(level, method, variant, resample, nan_frac, data_seed):
    X, Z = make_matrices(data_seed, nan_frac=nan_frac)
    sys_idx, inp_idx = draw_indices(1000 + data_seed, resample, X.shape[1], X.shape[2], N_DRAWS)
    r, n = resampled_level_correlation(
        X, Z, level=level, method=method, variant=variant, sys_idx=sys_idx, inp_idx=inp_idx
    )
    r_exp, n_exp = oracle_draws(X, Z, level, method, variant, sys_idx, inp_idx)
    assert r.shape == n.shape == (X.shape[0], N_DRAWS)
    assert_values_same(r, r_exp)
    np.testing.assert_array_equal(n, n_exp)


@pytest.mark.parametrize("nan_frac", [0.0, 0.15], ids=["complete", "nan"])
@pytest.mark.parametrize("resample", list(RESAMPLES))
@pytest.mark.parametrize("method,variant", METHOD_VARIANTS, ids=MV_IDS)
def test_system_level_complete_inputs_equal_expanded_oracle(method, variant, resample, nan_frac):
    X, Z = make_matrices(21, nan_frac=nan_frac, n_sys=6, n_inp=12)
    sys_idx, inp_idx = draw_indices(77, resample, 6, 12, N_DRAWS)
    r, n = resampled_level_correlation(
        X, Z, level="system", method=method, variant=variant,
        sys_idx=sys_idx, inp_idx=inp_idx, complete_inputs=True,
    )
    r_exp, n_exp = oracle_draws(X, Z, "system", method, variant, sys_idx, inp_idx, complete_inputs=True)
    assert_values_same(r, r_exp)
    np.testing.assert_array_equal(n, n_exp)


@pytest.mark.parametrize("method,variant", METHOD_VARIANTS, ids=MV_IDS)
def test_global_level_long_vectors_equal_expanded_oracle(method, variant):
    # 10 x 14 = 140 cells: past the short-vector kernel, into the sort-based one
    X, Z = make_matrices(31, nan_frac=0.1, n_metrics=2, n_sys=10, n_inp=14)
    sys_idx, inp_idx = draw_indices(5, "both", 10, 14, 4)
    r, n = resampled_level_correlation(
        X, Z, level="global", method=method, variant=variant, sys_idx=sys_idx, inp_idx=inp_idx
    )
    r_exp, n_exp = oracle_draws(X, Z, "global", method, variant, sys_idx, inp_idx)
    assert_values_same(r, r_exp)
    np.testing.assert_array_equal(n, n_exp)


@pytest.mark.parametrize("level", LEVELS)
def test_min_pairs_applies_to_the_expanded_resample(level):
    X, Z = make_matrices(41, nan_frac=0.3, n_sys=5, n_inp=7)
    sys_idx, inp_idx = draw_indices(3, "both", 5, 7, N_DRAWS)
    r, n = resampled_level_correlation(
        X, Z, level=level, method="spearman", sys_idx=sys_idx, inp_idx=inp_idx, min_pairs=5
    )
    r_exp, n_exp = oracle_draws(X, Z, level, "spearman", "b", sys_idx, inp_idx, min_pairs=5)
    assert_values_same(r, r_exp)
    np.testing.assert_array_equal(n, n_exp)


# --------------------------------------------------------------------------- #
# 2. labelled API: distribution and point estimate
# --------------------------------------------------------------------------- #
LABELLED_CASES = [
    ("system", "kendall", "b", ("system", "input"), 0.0),
    ("system", "pearson", "b", ("system",), 0.15),
    ("input", "spearman", "b", ("system",), 0.15),
    ("input", "kendall", "c", ("system", "input"), 0.0),
    ("global", "pearson", "b", ("input",), 0.15),
    ("global", "kendall", "b", ("system", "input"), 0.15),
]


@pytest.mark.parametrize("level,method,variant,resample,nan_frac", LABELLED_CASES)
def test_labelled_distribution_and_point_equal_oracle(level, method, variant, resample, nan_frac):
    X, Z = make_matrices(51, nan_frac=nan_frac, n_sys=7, n_inp=9)
    ds = to_dataset(X, Z)
    seed = 2024
    res = ds.corrstat.bootstrap(
        target="human", level=level, method=method, variant=variant,
        resample=xcorrstat.Bootstrap(resample, n_resamples=N_DRAWS, rng=seed, keep_distribution=True),
    )
    assert res["distribution"].dims == ("metric", "resample")
    assert list(res["metric"].values) == ["m0", "m1", "m2"]
    assert res.attrs["rng"] == seed
    sys_idx, inp_idx = draw_indices(seed, resample, 7, 9, N_DRAWS)
    r_exp, n_exp = oracle_draws(X, Z, level, method, variant, sys_idx, inp_idx)
    assert_values_same(res["distribution"].values, r_exp, "distribution")
    np.testing.assert_array_equal(res["distribution_n"].values, n_exp)

    point = [oracle_level(X[m], Z, level, method, variant) for m in range(X.shape[0])]
    assert_values_same(res["correlation"].values, [p[0] for p in point], "point estimate")
    np.testing.assert_array_equal(res["n"].values, [p[1] for p in point])


def test_module_level_bootstrap_matches_accessor():
    X, Z = make_matrices(52, nan_frac=0.1, n_sys=6, n_inp=8)
    ds = to_dataset(X, Z)
    kw = dict(target="human", level="system", method="spearman",
              resample=xcorrstat.Bootstrap(n_resamples=20, rng=9, keep_distribution=True))
    xr.testing.assert_identical(xcorrstat.bootstrap(ds, **kw), ds.corrstat.bootstrap(**kw))


# --------------------------------------------------------------------------- #
# 3. intervals
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("confidence_level", [0.95, 0.8])
@pytest.mark.parametrize("ci", ["percentile", "basic"])
@pytest.mark.parametrize("level,resample", [("system", ("system", "input")), ("input", ("system",)),
                                            ("global", ("input",))])
def test_percentile_and_basic_intervals_are_quantiles_of_defined_draws(level, resample, ci, confidence_level):
    X, Z = make_matrices(61, nan_frac=0.15, n_metrics=4, n_sys=5, n_inp=8)
    ds = to_dataset(X, Z)
    res = ds.corrstat.bootstrap(
        target="human", level=level, method="kendall",
        resample=xcorrstat.Bootstrap(resample, n_resamples=150, rng=17, keep_distribution=True),
        ci=ci, confidence_level=confidence_level,
    )
    alpha = 1 - confidence_level
    for m in range(X.shape[0]):
        d = res["distribution"].values[m]
        defined = d[~np.isnan(d)]
        assert defined.size > 0
        q_low, q_high = np.quantile(defined, [alpha / 2, 1 - alpha / 2])
        theta = oracle_level(X[m], Z, level, "kendall", "b")[0]
        if ci == "percentile":
            expected = (q_low, q_high)
        else:
            expected = (2 * theta - q_high, 2 * theta - q_low)
        assert_values_same(res["low"].values[m], expected[0], f"low m{m}")
        assert_values_same(res["high"].values[m], expected[1], f"high m{m}")
        assert int(res["n_undefined"].values[m]) == int(np.isnan(d).sum())


class Replay(np.random.Generator):
    """A Generator whose ``integers`` hands out given index rows, in order."""

    def __init__(self, rows):
        super().__init__(np.random.PCG64(0))
        self.rows = np.asarray(rows)
        self.served = 0
        self.calls = []

    def integers(self, low, high=None, size=None, dtype=np.int64, endpoint=False):
        self.calls.append((low, high, size))
        n_rows, n = self.rows.shape
        assert not endpoint
        assert (low, high) == (0, n), (low, high)
        assert isinstance(size, tuple) and len(size) == 2 and size[1] == n, size
        assert self.served + size[0] <= n_rows, "scipy asked for more draws than were replayed"
        out = self.rows[self.served : self.served + size[0]]
        self.served += size[0]
        return out.astype(dtype, copy=True)


def bca_statistic(level, method, variant, obs_axis):
    """Vectorised statistic for scipy.stats.bootstrap with paired (X, Z) samples.

    scipy moves the observation axis last and indexes it, so a sample arrives as
    ``(other, *batch, obs)``; it is put back to ``(*batch, S, I)`` and looped over.
    """

    def statistic(x, z, axis=-1):
        assert axis == -1
        dest = -1 if obs_axis == 0 else -2  # systems observed: (I, ..., S) -> (..., S, I)
        x = np.moveaxis(x, 0, dest)
        z = np.moveaxis(z, 0, dest)
        lead = x.shape[:-2]
        out = np.empty(lead)
        for k in np.ndindex(*lead):
            out[k] = oracle_level(x[k], z[k], level, method, variant)[0]
        return out

    return statistic


BCA_CASES = [
    ("system", "pearson", "b", "system"),
    ("system", "kendall", "b", "system"),
    ("input", "kendall", "b", "input"),
    ("global", "spearman", "b", "input"),
]


@pytest.mark.parametrize("scipy_batch", [None, 64])
@pytest.mark.parametrize("level,method,variant,dim", BCA_CASES)
def test_bca_equals_scipy_with_replayed_indices(level, method, variant, dim, scipy_batch):
    n_sys, n_inp, n_draws, seed = 12, 8, 200, 314
    X, Z = make_matrices(71, n_metrics=1, n_sys=n_sys, n_inp=n_inp, integer=False)
    ds = to_dataset(X, Z)
    res = ds.corrstat.bootstrap(
        target="human", level=level, method=method, variant=variant,
        resample=xcorrstat.Bootstrap(dim, n_resamples=n_draws, rng=seed, keep_distribution=True), ci="bca",
    )
    assert int(res["n_undefined"].values[0]) == 0  # scipy has no rule for undefined draws
    rows = bootstrap_indices(seed, range(n_draws), [n_sys if dim == "system" else n_inp])[0]
    assert rows.shape == (n_draws, n_sys if dim == "system" else n_inp)
    obs_axis = 0 if dim == "system" else 1
    replay = Replay(rows)
    ref = stats.bootstrap(
        (X[0], Z), bca_statistic(level, method, variant, obs_axis), paired=True, vectorized=True,
        axis=obs_axis, method="BCa", n_resamples=n_draws, batch=scipy_batch, rng=replay,
    )
    assert replay.served == n_draws
    expected_calls = 1 if scipy_batch is None else -(-n_draws // scipy_batch)
    assert len(replay.calls) == expected_calls
    assert_values_same(res["distribution"].values[0], ref.bootstrap_distribution, "distribution vs scipy")
    assert_values_same(res["low"].values[0], ref.confidence_interval.low, "bca low")
    assert_values_same(res["high"].values[0], ref.confidence_interval.high, "bca high")


def test_bca_equals_scipy_unvectorised_system_ids():
    # one paired sample of system ids; the statistic expands the scores itself
    n_sys, n_inp, n_draws, seed = 10, 6, 120, 8
    X, Z = make_matrices(72, n_metrics=1, n_sys=n_sys, n_inp=n_inp, integer=False)
    ds = to_dataset(X, Z)
    res = ds.corrstat.bootstrap(
        target="human", level="system", method="pearson",
        resample=xcorrstat.Bootstrap("system", n_resamples=n_draws, rng=seed), ci="bca", confidence_level=0.9,
    )
    replay = Replay(bootstrap_indices(seed, range(n_draws), [n_sys])[0])

    def statistic(ids):
        ids = np.asarray(ids, dtype=np.int64)
        return oracle_level(X[0][ids], Z[ids], "system", "pearson", "b")[0]

    ref = stats.bootstrap(
        (np.arange(n_sys),), statistic, paired=True, vectorized=False, method="BCa",
        n_resamples=n_draws, rng=replay, confidence_level=0.9,
    )
    assert replay.served == n_draws and len(replay.calls) == 1
    assert replay.calls[0][2] == (n_draws, n_sys)
    assert_values_same(res["low"].values[0], ref.confidence_interval.low, "bca low")
    assert_values_same(res["high"].values[0], ref.confidence_interval.high, "bca high")


def test_bca_with_both_dims_raises():
    X, Z = make_matrices(73, n_sys=5, n_inp=6)
    with pytest.raises(ValueError, match="bca"):
        to_dataset(X, Z).corrstat.bootstrap(target="human", ci="bca",
                                            resample=xcorrstat.Bootstrap(("system", "input"), n_resamples=10, rng=0))


# --------------------------------------------------------------------------- #
# 4. undefined draws
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("ci", ["percentile", "basic"])
@pytest.mark.parametrize("level,method,variant", [("system", "pearson", "b"), ("system", "kendall", "c"),
                                                  ("input", "spearman", "b"), ("input", "kendall", "b")])
def test_undefined_draws_are_nan_counted_and_left_out(level, method, variant, ci):
    # three systems: a draw of one system repeated is constant -> undefined
    rng = np.random.default_rng(81)
    X = rng.normal(size=(2, 3, 5))
    X[1] = 2.5  # a constant metric: every draw and the point estimate undefined
    Z = rng.normal(size=(3, 5))
    ds = to_dataset(X, Z)
    n_draws, seed = 300, 5
    res = ds.corrstat.bootstrap(
        target="human", level=level, method=method, variant=variant,
        resample=xcorrstat.Bootstrap("system", n_resamples=n_draws, rng=seed, keep_distribution=True), ci=ci,
    )
    sys_idx, _ = draw_indices(seed, ("system",), 3, 5, n_draws)
    r_exp, _ = oracle_draws(X, Z, level, method, variant, sys_idx, None)
    dist = res["distribution"].values
    assert_values_same(dist, r_exp, "distribution")
    single = np.array([len(set(row)) == 1 for row in sys_idx])
    assert single.any()
    assert np.isnan(dist[0, single]).all()  # NaN, never 0
    np.testing.assert_array_equal(res["n_undefined"].values, np.isnan(dist).sum(axis=-1))
    assert 0 < int(res["n_undefined"].values[0]) < n_draws

    defined = dist[0][~np.isnan(dist[0])]
    q_low, q_high = np.quantile(defined, [0.025, 0.975])
    theta = oracle_level(X[0], Z, level, method, variant)[0]
    expected = (q_low, q_high) if ci == "percentile" else (2 * theta - q_high, 2 * theta - q_low)
    assert_values_same(res["low"].values[0], expected[0])
    assert_values_same(res["high"].values[0], expected[1])

    # all draws undefined: count is every draw, bounds and estimate are NaN (not 0)
    assert int(res["n_undefined"].values[1]) == n_draws
    assert np.isnan(dist[1]).all()
    assert np.isnan(res["correlation"].values[1])
    assert np.isnan(res["low"].values[1]) and np.isnan(res["high"].values[1])


def test_undefined_draws_from_missing_cells():
    # 4 systems, one of which has a single valid cell: draws without enough systems are NaN
    X, Z = make_matrices(82, nan_frac=0.4, n_metrics=3, n_sys=4, n_inp=4)
    ds = to_dataset(X, Z)
    res = ds.corrstat.bootstrap(target="human", level="input", method="pearson",
                                resample=xcorrstat.Bootstrap(("system", "input"), n_resamples=200, rng=1,
                                                             keep_distribution=True))
    sys_idx, inp_idx = draw_indices(1, "both", 4, 4, 200)
    r_exp, n_exp = oracle_draws(X, Z, "input", "pearson", "b", sys_idx, inp_idx)
    assert_values_same(res["distribution"].values, r_exp)
    np.testing.assert_array_equal(res["distribution_n"].values, n_exp)
    np.testing.assert_array_equal(res["n_undefined"].values, np.isnan(r_exp).sum(axis=-1))
    assert np.isnan(r_exp).any()
    for m in range(3):
        d = r_exp[m][~np.isnan(r_exp[m])]
        if d.size:
            assert_values_same(res["low"].values[m], np.quantile(d, 0.025))
            assert_values_same(res["high"].values[m], np.quantile(d, 0.975))
        else:
            assert np.isnan(res["low"].values[m]) and np.isnan(res["high"].values[m])


# --------------------------------------------------------------------------- #
# 5. Fisher
# --------------------------------------------------------------------------- #
FISHER_CONSTANTS = {"pearson": (3, lambda r: 1.0), "spearman": (3, lambda r: math.sqrt(1 + r * r / 2)),
                    "kendall": (4, lambda r: math.sqrt(0.437))}


def oracle_fisher_n(x, z, level):
    valid = ~np.isnan(x) & ~np.isnan(z)
    if level == "system":
        return int(sum(valid[s].any() for s in range(x.shape[0])))
    if level == "input":
        return int(max(valid[:, j].sum() for j in range(x.shape[1])))
    return int(valid.sum())


def oracle_fisher(r, n, method, confidence_level):
    b, c = FISHER_CONSTANTS[method]
    if n <= b or math.isnan(r):
        return math.nan, math.nan
    half = stats.norm.ppf(1 - (1 - confidence_level) / 2) * c(r) / math.sqrt(n - b)
    return math.tanh(math.atanh(r) - half), math.tanh(math.atanh(r) + half)


@pytest.mark.parametrize("confidence_level", [0.95, 0.9])
@pytest.mark.parametrize("method", ["pearson", "spearman", "kendall"])
@pytest.mark.parametrize("level", LEVELS)
def test_fisher_equals_textbook_formula(level, method, confidence_level):
    X, Z = make_matrices(91, nan_frac=0.15, n_metrics=3, n_sys=9, n_inp=10)
    res = xcorrstat.fisher(to_dataset(X, Z), target="human", level=level, method=method,
                           confidence_level=confidence_level)
    for m in range(X.shape[0]):
        r, _ = oracle_level(X[m], Z, level, method, "b")
        n = oracle_fisher_n(X[m], Z, level)
        low, high = oracle_fisher(r, n, method, confidence_level)
        assert int(res["sample_size"].values[m]) == n
        assert_values_same(res["correlation"].values[m], r)
        assert_values_same(res["low"].values[m], low, f"low m{m}")
        assert_values_same(res["high"].values[m], high, f"high m{m}")
        assert not np.isnan(low)


@pytest.mark.parametrize("method,n_sys,defined", [("pearson", 3, False), ("pearson", 4, True),
                                                  ("spearman", 3, False), ("kendall", 4, False),
                                                  ("kendall", 5, True)])
def test_fisher_nan_when_n_at_most_b(method, n_sys, defined):
    X, Z = make_matrices(92, n_metrics=2, n_sys=n_sys, n_inp=6, integer=False)
    res = xcorrstat.fisher(to_dataset(X, Z), target="human", level="system", method=method)
    for m in range(2):
        r, _ = oracle_level(X[m], Z, "system", method, "b")
        low, high = oracle_fisher(r, n_sys, method, 0.95)
        assert np.isnan(low) != defined
        assert_values_same(res["low"].values[m], low)
        assert_values_same(res["high"].values[m], high)
        assert int(res["sample_size"].values[m]) == n_sys


# --------------------------------------------------------------------------- #
# 6. published interval on SummEval
# --------------------------------------------------------------------------- #
def test_summeval_rouge2_system_kendall_boot_both(summeval):
    # Deutsch, Dror & Roth (2021): ROUGE-2 vs expert relevance, system-level Kendall,
    # BOOT-BOTH 95% interval [-0.09, 0.84]
    res = summeval.corrstat.bootstrap(
        target="expert_relevance", metrics=["rouge_2_f1"], level="system", method="kendall",
        resample=xcorrstat.Bootstrap(("system", "input"), n_resamples=10_000, rng=0),
    )
    low, high = float(res["low"].values[0]), float(res["high"].values[0])
    assert low == pytest.approx(-0.09, abs=0.07)
    assert high == pytest.approx(0.84, abs=0.07)
    assert low < float(res["correlation"].values[0]) < high
    assert int(res["n_undefined"].values[0]) == 0
