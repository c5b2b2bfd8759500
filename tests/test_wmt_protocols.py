"""The WMT protocols and roles against mt-metrics-eval's own: its meta_info, its task lists, and its
whole evaluation on trees shaped like each year's data.

Without ``XCORRSTAT_MTME_SOURCE`` (a checkout of mt-metrics-eval) these tests skip: the oracle is its code.
"""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest
from mtme_source import mtme_modules

import xcorrstat
from xcorrstat import wmt
from xcorrstat.wmt._roles import testsets as known_testsets  # not "test*": pytest would collect it
from xcorrstat.wmt._select import GOLD, task_scores

#: mt-metrics-eval's name of each statistic and grouping.
CORR_FCN = {"accuracy": "accuracy", "pearson": "pearson", "kendall": "kendall", "acc_eq": "KendallWithTiesOpt",
            "soft_accuracy": "pce"}
AVG_BY = {"none": "none", "item": "item", "system": "sys"}
MTME_TASK_SETS = {"wmt23": "WMT23", "wmt24-on-wmt23": "WMT24OnWMT23", "wmt24": "WMT24", "wmt25": "WMT25"}


def _meta_info():
    return mtme_modules("meta_info")[0]


def test_bundled_roles_are_meta_info():
    """Every test set and language pair of mt-metrics-eval's meta_info, field by field; the two
    documented differences (WMT22's baselines from its notebook; WMT25's baselines ranked) aside."""
    meta_info = _meta_info()
    assert set(known_testsets()) == set(meta_info.DATA)
    for testset, lps in meta_info.DATA.items():
        ours = wmt.roles(testset)
        assert set(ours) == set(lps), testset
        for lp, info in lps.items():
            r = ours[lp]
            where = f"{testset} {lp}"
            assert r.std_ref == info.std_ref, where
            assert r.std_gold == dict(info.std_gold), where
            assert r.outliers == set(info.outlier_systems), where
            assert r.primary == set(info.primary_metrics), where
            if testset == "wmt22":  # the notebook's baselines that are primary metrics
                assert info.baseline_metrics is None and r.baselines <= r.primary, where
            else:
                assert r.baselines == set(info.baseline_metrics or ()), where
            if testset != "wmt25":  # elsewhere mt-metrics-eval's primary metrics hold the baselines
                assert r.ranked == (r.primary if r.primary else frozenset()), where


@pytest.mark.parametrize("name", sorted(MTME_TASK_SETS))
@pytest.mark.parametrize("lps", [None, ["en-de"]])
def test_task_lists_are_mt_metrics_evals(name, lps):
    """task_set gives mt-metrics-eval's tasks.WMT23 / WMT24OnWMT23 / WMT24 / WMT25: same order, attributes
    and weights."""
    (tasks,) = mtme_modules("tasks")
    testset = wmt.protocol(name)["testset"]
    chosen = None if lps is None else (["en-ko_KR"] if name == "wmt25" else lps)
    theirs, weights = getattr(tasks, MTME_TASK_SETS[name])(chosen, k=0)
    ours = wmt.task_set(name, chosen)
    assert len(ours) == len(theirs)
    total = sum(t.weight for t in ours)
    for t, their, w in zip(ours, theirs, weights):
        assert their.test_set == testset
        assert their.lang == ",".join(t.lps)
        assert their.level == t.level
        assert their.corr_fcn == CORR_FCN[t.statistic]
        assert their.avg_by == AVG_BY[str(t.grouping)] or (t.statistic == "accuracy" and their.avg_by == "none")
        assert their.human == t.human
        assert their.domain is None and t.domain is None
        assert their.primary == t.primary and their.use_outliers == t.use_outliers
        assert t.weight / total == pytest.approx(w, abs=1e-12)


# ------------------------------------------------- the whole evaluation, on trees shaped like each year


#: Our protocol -> mt-metrics-eval's (its task-set function, or the WMT22 notebook), the tree's test set and
#: the language pair written without system-level metric files.
CASES = {"wmt22": ("WMT22", "wmt22", "en-ru"), "wmt23": ("WMT23", "wmt23", "zh-en"),
         "wmt24-on-wmt23": ("WMT24OnWMT23", "wmt23", "zh-en"), "wmt24": ("WMT24", "wmt24", "en-es"),
         "wmt25": ("WMT25", "wmt25", None)}
ALPHA = 0.05


@pytest.fixture(scope="module")
def trees(tmp_path_factory):
    """One tree per test set, written on first use: root folder by test set."""
    from mtme_tree import write_wmt_tree

    made: dict[str, str] = {}

    def tree(testset: str, no_sys: str | None) -> str:
        if testset not in made:
            root = tmp_path_factory.mktemp(testset)
            spec_lps = wmt.protocol(next(n for n, c in CASES.items() if c[1] == testset))["lps"]
            lps = None if testset != "wmt25" else ["cs-uk_UA", "en-ko_KR", "ja-zh_CN"]
            if no_sys is None and testset == "wmt25":
                no_sys = "cs-uk_UA"
            assert lps is None or set(lps) <= set(spec_lps)
            seed = {"wmt22": 11, "wmt23": 12, "wmt24": 13, "wmt25": 14}[testset]
            write_wmt_tree(root, testset, np.random.default_rng(seed), lps=lps, no_sys_metrics_lp=no_sys)
            made[testset] = str(root)
        return made[testset]

    return tree


def _mtme_key(attrs: dict[str, str]) -> tuple:
    lang = attrs["lang"].strip("[]").replace("'", "").replace(" ", "")
    domain = None if attrs.get("domain", "None") == "None" else attrs["domain"]
    return lang, domain, attrs["level"], attrs["human"] == "True", attrs["avg_by"], attrs["corr_fcn"]


def _our_key(t: wmt.Task) -> tuple:
    return ",".join(t.lps), t.domain, t.level, t.human, AVG_BY[str(t.grouping)], CORR_FCN[t.statistic]


def _mtme_ranked_roles(testset: str):
    """The roles under which mt-metrics-eval's primary=True ranks the same metrics: WMT25's baselines out."""
    from dataclasses import replace

    r = wmt.roles(testset)
    return {lp: replace(x, baselines=frozenset()) for lp, x in r.items()} if testset == "wmt25" else r


def _run_both(trees, name: str, k: int):
    from mtme_reference import mtme_evaluation, tree_lps

    protocol_name, testset, no_sys = CASES[name]
    root = trees(testset, no_sys)
    lps = tree_lps(root, testset)
    theirs = mtme_evaluation(root, protocol_name, lps, k=k, seed=0)
    ds = xcorrstat.read_mtme(root, testset, lps)
    tasks = wmt.task_set(name, lps, data=ds)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", wmt.TaskSkippedWarning)
        ours = wmt.run_tasks(ds, tasks, n_resamples=k, rng=0, roles=_mtme_ranked_roles(testset))
    return root, ds, tasks, theirs, ours


def _spa_exact(ds, task, ours, metric) -> float:
    """mt-metrics-eval's PairwiseConfidenceError on the systems in xcorrstat's order."""
    (stats,) = mtme_modules("stats")
    scores = task_scores(ds, task, _mtme_ranked_roles(ds.attrs["testset"]))
    keep = ~np.isnan(scores[GOLD].values).all(axis=0)  # the inputs every system has (unannotated out)
    gold, metric_scores = scores[GOLD].values[:, keep], scores[metric].values[:, keep]
    return stats.PairwiseConfidenceError(gold.ravel().tolist(), metric_scores.ravel().tolist(),
                                         num_sys=gold.shape[0])[0]


def _near(p: float, n: int, k: int) -> float:
    """4.5 standard errors of a p-value estimated from n draws and one from k draws, plus two draws."""
    var = max(p * (1 - p), 1.0 / max(n, 1))
    return 4.5 * np.sqrt(var / max(n, 1) + var / k) + 2.0 / k


def _early_tail(exact: float, n: int, p_mine: float, k: int) -> float:
    """How likely mt-metrics-eval's count in its n draws is, or one further from xcorrstat's p-value (taken
    as the truth, kept within a draw of 0 and 1): it stops at the first block whose estimate is below .02 or
    above .5, so a pair whose true p-value is near .05 stops early now and then with a small count."""
    from scipy import stats

    count, p = round(exact * n), min(max(p_mine, 1.0 / k), 1.0 - 1.0 / k)
    return float(stats.binom.cdf(count, n, p) if exact <= p else stats.binom.sf(count - 1, n, p))


def _compare_task(ds, task, ours, theirs, k: int, tally: list[int]) -> bool:
    """Assert one task's agreement; True when its clusters could be compared (no p-value near alpha).
    Counts the pairs compared and those with the same decision in ``tally``."""
    label = task.label
    corr = ours["correlation"].sel(task=label)
    ranked = [str(m) for m in corr["metric"].values if np.isfinite(float(corr.sel(metric=m)))]
    assert sorted(ranked) == sorted(theirs.corrs), (label, sorted(ranked), sorted(theirs.corrs))
    spa = task.statistic == "soft_accuracy"
    for m, value in theirs.corrs.items():
        mine = float(corr.sel(metric=m))
        if spa:  # see docs/wmt.md: mt-metrics-eval's order of systems; exact on xcorrstat's order
            assert mine == pytest.approx(_spa_exact(ds, task, ours, m), abs=1e-9), (label, m)
            assert mine == pytest.approx(value, abs=0.02), (label, m)
        else:
            assert mine == pytest.approx(value, abs=1e-9), (label, m)
    if k == 0:
        exact = not spa or all(abs(float(corr.sel(metric=m)) - v) < 1e-9 for m, v in theirs.corrs.items())
        if exact:  # plain ranks; metrics whose values agree to 1e-9 may come in either order (rounding)
            for m, value in theirs.corrs.items():
                tied = [t for t, v in theirs.corrs.items() if abs(v - value) <= 1e-9]
                mine = sorted(int(ours["cluster"].sel(task=label, metric=t)) for t in tied)
                assert mine == sorted(theirs.ranks[t] for t in tied), (label, m, tied)
        return exact
    agree = True
    for (a, b), p_theirs in theirs.pvalues.items():
        n = theirs.draws[(a, b)]
        p_mine = float(ours["pvalue"].sel(task=label, metric=a, other_metric=b))
        # mt-metrics-eval's own draws, counted as xcorrstat counts (a draw tying the observed difference
        # counts): within Monte-Carlo error of xcorrstat's; its plain >= only ever drops draws
        exact = theirs.exact_pvalues[(a, b)]
        spread = _near(exact, n, k)
        assert p_theirs <= exact + 1e-12, (label, a, b, p_theirs, exact)
        if n < k:  # stopped early because its estimate looked clearly small or large: selected, so a tail test
            assert _early_tail(exact, n, p_mine, k) >= 1e-4, (label, a, b, p_mine, exact, p_theirs, n)
        else:
            assert abs(p_mine - exact) <= spread, (label, a, b, p_mine, exact, p_theirs, n)
        if (p_mine <= ALPHA) != (p_theirs <= ALPHA):  # a different decision: alpha within reach, or its drops
            dropped = (exact <= ALPHA) == (p_mine <= ALPHA) and p_theirs < exact
            near = min(abs(exact - ALPHA), abs(p_mine - ALPHA)) <= spread
            assert near or dropped, (label, a, b, p_mine, p_theirs, exact, n)
            agree = False
        else:
            tally[1] += 1
        tally[0] += 1
    if agree:  # the same decisions on every pair in the same order: the same greedy clusters
        for m, rank in theirs.ranks.items():
            assert int(ours["cluster"].sel(task=label, metric=m)) == rank, (label, m)
    return agree


#: Draws of each comparison: the protocols at k=1000 as mt-metrics-eval's task lists run them; the WMT22
#: notebook runs its main results at k=0 ("VERY slow unless k is < 5"), so a few draws test its clusters.
#: mt-metrics-eval takes 15 to 30 minutes a protocol at k=1000 (its pairs test loops in Python), so the runs
#: with draws also need ``XCORRSTAT_SLOW=1``.
_SLOW = [pytest.mark.slow, pytest.mark.skipif(os.environ.get("XCORRSTAT_SLOW") != "1",
                                              reason="set XCORRSTAT_SLOW=1 to run mt-metrics-eval with draws")]
RUNS = [(name, 0) for name in sorted(CASES)] + [
    pytest.param(name, 1000 if name != "wmt22" else 50, marks=_SLOW) for name in sorted(CASES)]


@pytest.mark.parametrize(("name", "k"), RUNS)
def test_whole_evaluation_equals_mt_metrics_evals(trees, name, k):
    """run_tasks against mt-metrics-eval's own evaluation at its defaults (primary metrics, outliers out,
    early stopping): the same tasks run and skipped, the same metrics ranked, the same correlations, the
    same clusters where no p-value is within Monte-Carlo error of alpha, and the same averaged ranking."""
    _, ds, tasks, theirs, ours = _run_both(trees, name, k)
    by_key = {_mtme_key(t.attrs): t for t in theirs.tasks}
    assert len(by_key) == len(theirs.tasks) == len(tasks)
    compared, tally = [], [0, 0]
    for task in tasks:
        their = by_key[_our_key(task)]
        skipped = str(ours["skipped"].sel(task=task.label).item())
        assert bool(skipped) == (their.skipped is not None), (task.label, skipped, their.skipped)
        if not skipped:
            compared.append(_compare_task(ds, task, ours, their, k, tally))
    # with 45 to 500 pairs a task, most tasks have a pair within Monte-Carlo error of alpha; the decisions
    # themselves must nearly all agree
    assert k == 0 or tally[1] >= 0.9 * tally[0], f"{tally[1]} of {tally[0]} decisions agree"
    assert k or np.mean(compared) >= 0.5, f"only {sum(compared)} of {len(compared)} tasks ranked alike"
    ranked = ours["average_rank"].to_series().dropna()
    assert sorted(ranked.index) == sorted(theirs.average_ranks)
    # the averaged ranking: equal where every task made the same decisions; else off by at most the weight of
    # the tasks whose decisions differ near alpha times their number of metrics
    ran = [t for t in tasks if not str(ours["skipped"].sel(task=t.label).item())]
    loose = sum(float(ours["weight"].sel(task=t.label)) * len(theirs.average_ranks)
                for t, same in zip(ran, compared) if not same)
    for m, value in theirs.average_ranks.items():
        assert float(ranked[m]) == pytest.approx(value, abs=1e-9 + loose), m
    weights = ours["weight"].to_series()
    for task in tasks:
        their = by_key[_our_key(task)]
        if their.skipped is None:
            total = sum(t.weight for t in theirs.tasks if t.skipped is None)
            assert float(weights[task.label]) == pytest.approx(their.weight / total, abs=1e-12), task.label
