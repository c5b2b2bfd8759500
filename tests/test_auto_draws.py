"""``n_resamples="auto"``: draws added until every corrected decision at alpha is settled.

Oracles: fixed runs with each pair's number of draws (the p-values), a 20,000-draw fixed
run (the decisions and clusters), scipy's exact binomial intervals and a loop Holm
(the settling rule), and the textbook floors ``m / (B + 1)`` / ``1 / (B + 1)``.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
import xarray as xr
from conftest import make_scores
from scipy import stats

import xcorrstat
from xcorrstat._resampling.engine import bootstrap_draws
from xcorrstat._resampling.pairs import pair_permutation_draws
from xcorrstat._selection import split_scores
from xcorrstat._significance.auto import (
    OpenDecisionsWarning,
    check_draws,
    draw_schedule,
    open_decisions,
    pvalue_floor,
)

METRICS8 = [f"m{k}" for k in range(8)]


def floor_data() -> xr.Dataset:
    """8 metrics in two clear groups (near-copies of the target, and noise): 56 comparisons,
    so Holm over all pairs cannot reject anything at 1,000 draws (56 / 1001 > .05)."""
    ds = make_scores(n_metrics=8, n_systems=12, n_inputs=10, seed=1)
    rng = np.random.default_rng(1)
    ds["human"] = ds["human"] + 2 * rng.normal(size=(12, 1))
    for k, sd in enumerate([0.1, 0.1, 0.1, 0.1, 50, 50, 50, 50]):
        ds[f"m{k}"] = ds["human"] + sd * ds[f"m{k}"]
    ds["human"].attrs["role"] = "human"
    return ds


FLOOR = dict(target="human", metrics=METRICS8, level="system", family="all", correction="holm")


def _perm0(**kw) -> xcorrstat.Permutation:
    """The floor runs' permutation settings (seed 0)."""
    return xcorrstat.Permutation(rng=0, **kw)


def _holm(p):
    """Holm's adjusted p-values of one family, by a loop (NaN: not a hypothesis)."""
    out = np.full(p.shape, np.nan)
    idx = [i for i in range(p.size) if not np.isnan(p[i])]
    order = sorted(idx, key=lambda i: p[i])
    m, running = len(order), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out


def test_a_run_continued_from_a_draw_id_is_the_tail_of_a_longer_run():
    ds = make_scores(n_metrics=4, n_systems=6, n_inputs=8, seed=4)
    x, z, _ = split_scores(ds, target="human", level="input")
    kw = dict(level="input", method="pearson", variant="b", min_pairs=3, skipna=True)
    pairs = (np.array([0, 1, 2]), np.array([1, 3, 3]))
    whole = pair_permutation_draws(x, z, pairs=pairs, seed=7, scheme="cells", n_resamples=700, kw=kw)
    tail = pair_permutation_draws(x, z, pairs=pairs, seed=7, scheme="cells", n_resamples=400, kw=kw, first=300)
    np.testing.assert_array_equal(tail.values, whole.values[..., 300:])
    r_whole, _ = bootstrap_draws(x, z, seed=7, resample=("system", "input"), n_resamples=700, batch=100,
                                 complete_inputs=False, **kw)
    r_tail, _ = bootstrap_draws(x, z, seed=7, resample=("system", "input"), n_resamples=400, batch=100,
                                complete_inputs=False, first=300, **kw)
    np.testing.assert_array_equal(r_tail.values, r_whole.values[..., 300:])


@pytest.mark.parametrize("test", ["permutation", "bootstrap"])
@pytest.mark.parametrize("extra", [None, ("lp", 2)])
def test_auto_pvalues_equal_fixed_runs_with_each_pairs_draws(test, extra):
    ds = make_scores(n_metrics=5, n_systems=8, n_inputs=6, seed=2, extra=extra)
    ds["m0"] = ds["human"] + 0.3 * ds["m0"]
    ds["m1"] = ds["human"] + 0.8 * ds["m1"]
    ds["human"].attrs["role"] = "human"
    kw = dict(target="human", metrics=[f"m{k}" for k in range(5)], level="input")
    settings = xcorrstat.Permutation if test == "permutation" else xcorrstat.Bootstrap
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OpenDecisionsWarning)
        auto = xcorrstat.compare(ds, test=settings(n_resamples="auto", rng=3, max_resamples=3000), **kw)
    used = auto["n_resamples_used"].values
    assert auto.attrs["draws"] == "auto" and auto.attrs["n_resamples"] == used.max()
    assert np.all(np.diag(used) == 0) and np.array_equal(used, used.T)
    assert set(np.unique(used[used > 0])) <= set(draw_schedule(1000, 3000))
    for n in np.unique(used[used > 0]):
        fixed = xcorrstat.compare(ds, test=settings(n_resamples=int(n), rng=3), **kw)
        mask = np.broadcast_to(used == n, auto["pvalue"].transpose(..., "metric", "other_metric").shape)
        a = auto["pvalue"].transpose(..., "metric", "other_metric").values[mask]
        f = fixed["pvalue"].transpose(..., "metric", "other_metric").values[mask]
        np.testing.assert_array_equal(a, f)


def test_floor_above_alpha_auto_settles_like_a_20000_draw_run():
    ds = floor_data()
    fixed_1000 = xcorrstat.compare(ds, test=_perm0(n_resamples=1000), **FLOOR)
    assert np.nanmin(fixed_1000["pvalue_corrected"].values) >= 56 / 1001 > 0.05
    assert not fixed_1000["significant"].any()
    with warnings.catch_warnings():
        warnings.simplefilter("error", OpenDecisionsWarning)
        auto = xcorrstat.compare(ds, test=_perm0(), **FLOOR)  # n_resamples="auto" is the default
    fixed = xcorrstat.compare(ds, test=_perm0(n_resamples=20000), **FLOOR)
    assert auto.attrs["n_open"] == 0 and auto.attrs["max_resamples"] == 20000
    assert 1000 < auto.attrs["n_resamples_used"] <= 20000
    np.testing.assert_array_equal(auto["significant"].values, fixed["significant"].values)
    np.testing.assert_array_equal(auto["cluster"].values, fixed["cluster"].values)
    assert auto["significant"].any() and len(set(auto["cluster"].values.tolist())) == 2
    used = auto["n_resamples_used"].values.astype(float)
    least = np.where(np.eye(8, dtype=bool), np.nan, 1.0 / (used + 1.0))
    assert auto.attrs["pvalue_floor"] == pytest.approx(np.nanmin(_holm(least.ravel())))
    assert auto.attrs["pvalue_floor"] < 0.05


def test_the_cap_warns_and_records_the_open_decisions():
    with pytest.warns(OpenDecisionsWarning, match="still open with draws capped at max_resamples=1000"):
        res = xcorrstat.compare(floor_data(), test=_perm0(max_resamples=1000), **FLOOR)
    assert res.attrs["n_open"] > 0 and res.attrs["n_resamples"] == 1000
    assert res["n_resamples_used"].values.max() == 1000
    assert res.attrs["pvalue_floor"] == pytest.approx(56 / 1001)  # > .05: nothing can be rejected
    with pytest.warns(OpenDecisionsWarning, match="still open with draws capped at max_resamples=3000"):
        res = xcorrstat.compare(floor_data(), test=_perm0(max_resamples=3000), **FLOOR)
    # no decision open at 1,000 draws can settle by 3,000 (Holm over 56 needs ~8,000): they draw on to the cap,
    # where their p-values are those of a fixed 3,000-draw run, and so are the flags and clusters
    assert 0 < res.attrs["n_open"] and res.attrs["n_resamples"] == 3000
    fixed = xcorrstat.compare(floor_data(), test=_perm0(n_resamples=3000), **FLOOR)
    at_cap = res["n_resamples_used"].values == 3000
    assert at_cap.sum() >= res.attrs["n_open"]
    np.testing.assert_array_equal(res["pvalue"].values[at_cap], fixed["pvalue"].values[at_cap])
    np.testing.assert_array_equal(res["cluster"].values, fixed["cluster"].values)


@pytest.mark.parametrize("risk", [0.001, 0.01])
def test_open_decisions_against_scipy_intervals_and_a_loop_holm(risk):
    rng = np.random.default_rng(5)
    m, b, looks, alpha = 6, 1000, 7, 0.05
    pi = rng.choice([0.0, 0.002, 0.004, 0.008, 0.03, 0.05, 0.2, 0.6], size=(m, m))
    k = rng.binomial(b, pi).astype(float)
    np.fill_diagonal(k, np.nan)
    p = (1 + k) / (1 + b)
    got = open_decisions(np.nan_to_num(k), np.full((m, m), b), p, correction="holm", family="row",
                         alternative="greater", alpha=alpha, risk=risk, n_looks=looks)
    low, high = np.full((m, m), np.nan), np.full((m, m), np.nan)
    for i in range(m):
        for j in range(m):
            if i != j:
                ci = stats.binomtest(int(k[i, j]), b).proportion_ci(confidence_level=1 - risk / looks, method="exact")
                low[i, j], high[i, j] = min(ci.low, p[i, j]), max(ci.high, p[i, j])
    expected = np.zeros((m, m), dtype=bool)
    for i in range(m):
        rejected = _holm(high[i]) <= alpha
        kept = _holm(low[i]) > alpha
        expected[i] = ~np.isnan(p[i]) & ~rejected & ~kept
    np.testing.assert_array_equal(got, expected)
    assert expected.any() and (~expected & ~np.isnan(p)).any()  # both kinds occur


def test_the_floor_is_the_textbook_one():
    p = np.where(np.eye(52, dtype=bool), np.nan, 0.5)
    b = np.full(p.shape, 1000)
    for correction in ("holm", "bonferroni"):
        assert pvalue_floor(b, p, pvalue="plus-one", correction=correction, family="row",
                            alternative="greater") == pytest.approx(51 / 1001)
        assert pvalue_floor(b, p, pvalue="plus-one", correction=correction, family="all",
                            alternative="greater") == pytest.approx(min(1.0, 52 * 51 / 1001))
    assert pvalue_floor(b, p, pvalue="plus-one", correction="fdr_bh", family="row",
                        alternative="greater") == pytest.approx(1 / 1001)
    assert pvalue_floor(b, p, pvalue="fraction", correction="holm", family="row", alternative="greater") == 0.0


def test_draw_options_are_checked():
    assert check_draws(300, 5) == (300, None)
    assert draw_schedule(1000, 20000)[0] == 1000 and draw_schedule(1000, 20000)[-1] == 20000
    assert draw_schedule(1000, 700) == [700]
    ds = make_scores(n_metrics=3, seed=1)
    for bad in ("many", 0, -5, 2.5, True):
        with pytest.raises(ValueError, match="n_resamples must be a positive integer or 'auto'"):
            xcorrstat.compare(ds, target="human", test=xcorrstat.Permutation(n_resamples=bad))
    with pytest.raises(ValueError, match="max_resamples"):
        xcorrstat.compare(ds, target="human", test=xcorrstat.Permutation(max_resamples=0))


def test_williams_makes_no_draws_whatever_n_resamples():
    ds = make_scores(n_metrics=3, seed=1)
    res = xcorrstat.compare(ds, target="human", test="williams")
    assert "n_resamples_used" not in res and "n_resamples" not in res.attrs


def test_report_header_states_the_draws_used():
    ds = floor_data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OpenDecisionsWarning)
        rep = xcorrstat.report(ds, target="human", metrics=METRICS8[:3] + METRICS8[4:6], level="system", rng=0)
    used = rep.settings["n_resamples_used"]["system"]
    assert rep.settings["draws"] == "auto" and rep.settings["n_resamples"] == 1000
    assert used == rep.comparisons.attrs["n_resamples_used"] >= 1000
    head = rep.to_text().splitlines()[1]
    assert f"auto draws up to 20000: {used} at most a pair, " in head
    fixed = xcorrstat.report(ds, target="human", metrics=METRICS8[:3], level="system", rng=0, n_resamples=300)
    assert fixed.to_text().splitlines()[1].endswith("300 resamples; clusters from PERM-BOTH tests (holm, "
                                                    "alpha = 0.05); seed 0")


def test_wmt_tasks_draw_until_each_tasks_decisions_settle(tmp_path):
    from mtme_tree import write_mtme_tree

    from xcorrstat.wmt import run_tasks, task_set

    lps = ["en-de", "he-en"]
    write_mtme_tree(tmp_path, "wmt23", lps, 5, 24, ["BLEU", "COMET", "chrF"], ["refA", "refB"], ["mqm"],
                    np.random.default_rng(2), noref_metrics=["Kiwi"], text=True)
    ds = xcorrstat.read_mtme(tmp_path, "wmt23")
    tasks = task_set("wmt23", lps)[:4]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OpenDecisionsWarning)
        auto = run_tasks(ds, tasks, rng=0, max_resamples=5000)
        fixed = run_tasks(ds, tasks, rng=0, n_resamples=5000)
    assert auto.attrs["n_resamples"] == "auto" and auto.attrs["max_resamples"] == 5000
    assert len(auto.attrs["n_resamples_used"]) == len(tasks) == len(auto.attrs["n_open"])
    assert all(1000 <= n <= 5000 for n in auto.attrs["n_resamples_used"])
    for k, task in enumerate(tasks):
        if auto.attrs["n_open"][k] == 0:  # every decision settled: those of the cap's fixed run
            a, f = (r["significant"].sel(task=task.label) for r in (auto, fixed))
            np.testing.assert_array_equal(a.values, f.values)
    np.testing.assert_array_equal(auto["correlation"].values, fixed["correlation"].values)
    assert auto.attrs["correction"] == "none" and auto.attrs["pvalue"] == "fraction"


def test_the_commands_print_open_decisions_as_a_note(capsys):
    from xcorrstat._cli import main

    code = main(["report", "--level", "system", "--max-resamples", "1000", "--no-files", "--quiet"])
    out, err = capsys.readouterr()
    assert code == 0
    n_open = int(re.search(r"at most a pair, (\d+) decisions left open\)", out).group(1))
    assert n_open > 0
    assert f"xcorrstat report: note: n_resamples='auto': {n_open} corrected decision(s)" in err
    assert "OpenDecisionsWarning" not in err
