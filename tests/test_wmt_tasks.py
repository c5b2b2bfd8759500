"""The WMT task lists (xcorrstat.wmt) and run_tasks, against independent oracles and mt-metrics-eval.

Oracles: scipy's Pearson on the task's explicitly selected scores; pooled pairwise agreement
counted with loops; ``calibrate_ties`` for acc_eq. When ``XCORRSTAT_MTME_SOURCE`` names a
checkout of mt-metrics-eval, its own ``tasks.WMT23`` runs on the same generated tree: every
task's correlations must equal ours to 1e-9, the p-values agree within Monte-Carlo error and
the cluster ranks agree wherever no p-value is within that error of alpha.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
from mtme_source import mtme_modules
from mtme_tree import write_mtme_tree
from scipy import stats

import xcorrstat
from xcorrstat.wmt import Task, roles, run_tasks, task_set
from xcorrstat.wmt._roles import Roles
from xcorrstat.wmt._select import GOLD, task_scores

LPS = ["en-de", "he-en"]
METRICS = ["BLEU", "COMET", "chrF"]


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    root = tmp_path_factory.mktemp("mtme")
    written = write_mtme_tree(root, "wmt23", LPS, 5, 24, METRICS, ["refA", "refB"], ["mqm"],
                              np.random.default_rng(2), noref_metrics=["Kiwi"], text=True)
    return str(root), written, xcorrstat.read_mtme(root, "wmt23")


def test_task_set_is_mt_metrics_evals_wmt23_list():
    tasks = task_set("wmt23", ["zh-en", "en-de", "he-en"])
    assert [t.label for t in tasks] == [
        "en-de,he-en,zh-en sys accuracy +human",
        "en-de sys pearson", "en-de seg pearson", "en-de seg acc_eq",
        "he-en sys pearson +human", "he-en seg pearson +human", "he-en seg acc_eq +human",
        "zh-en sys pearson", "zh-en seg pearson", "zh-en seg acc_eq",
    ]
    assert [t.weight for t in tasks] == [3.0] + [1.0] * 9
    assert [t.human for t in tasks] == [True, False, False, False, True, True, True, False, False, False]
    assert all(t.gold is None and t.refs is None and t.primary and not t.use_outliers for t in tasks)
    assert [t.grouping for t in tasks][:4] == ["none", "none", "none", "item"]
    assert [t.label for t in task_set("wmt24", ["en-de"])] == ["en-de sys soft_accuracy +human", "en-de seg acc_eq +human"]
    assert [t.label for t in task_set("wmt24-on-wmt23", ["zh-en"])] == ["zh-en sys soft_accuracy", "zh-en seg acc_eq"]
    assert len(task_set("wmt25")) == 32 and not any(t.human for t in task_set("wmt25"))


def test_roles_are_mt_metrics_evals_facts():
    """Spot checks of the bundled roles against meta_info.py as published (the full file is compared with
    mt-metrics-eval's own meta_info when its source is given, in test_wmt_protocols.py)."""
    r23 = roles("wmt23")
    assert r23["he-en"].std_ref == "refB" and r23["en-de"].std_ref == "refA"
    assert r23["en-de"].outliers == {"synthetic_ref"} and r23["he-en"].outliers == frozenset()
    assert r23["en-de"].std_gold == {"seg": "mqm", "domain": "mqm", "sys": "mqm"}
    assert r23["en-ru"].std_gold == {} and r23["de-en"].std_gold["sys"] == "da-sqm"
    assert len(r23["en-de"].primary) == 32 and len(r23["en-de"].baselines) == 14
    r24 = roles("wmt24")
    assert r24["en-de"].std_ref == "refB" and r24["en-es"].outliers == {"MSLC"} and r24["en-cs"].outliers == frozenset()
    assert r24["en-cs"].std_gold["seg"] == "esa"
    r25 = roles("wmt25")
    assert r25["ja-zh_CN"].std_gold["seg"] == "mqm" and r25["cs-uk_UA"].std_gold["seg"] == "esa-human1"
    assert "BLEU" in r25["en-ko_KR"].ranked and "MetricX-25" in r25["en-ko_KR"].ranked
    assert roles("wmt22")["en-de"].outliers == {"M2M100_1.2B-B4"}
    assert roles("wmt20")["de-en"].outliers == {"yolo.1052", "zlabs-nlp.1153", "WMTBiomedBaseline.388"} - {
        "WMTBiomedBaseline.388"} | {"WMTBiomedBaseline.387"}


def test_bad_tasks():
    with pytest.raises(ValueError, match="only statistic='accuracy' pools"):
        Task(lps=("en-de", "zh-en"), level="sys", statistic="pearson")
    with pytest.raises(ValueError, match="statistic='acc_eq' uses level 'seg'"):
        Task(lps=("en-de",), level="sys", statistic="acc_eq")
    with pytest.raises(ValueError, match="grouping='none'"):
        Task(lps=("en-de",), level="sys", statistic="pearson", grouping="item")
    with pytest.raises(ValueError, match="protocol must be one of"):
        task_set("wmt19")
    with pytest.raises(ValueError, match="Task.statistic must be one of"):
        Task(lps=("en-de",), level="seg", statistic="spearman")
    with pytest.raises(ValueError, match="pass data="):
        task_set("wmt22")
    with pytest.raises(ValueError, match="has no roles"):
        roles("wmt18")


def test_task_scores_select_systems_and_references(tree):
    _, written, ds = tree
    seg = task_scores(ds, Task(lps=("en-de",), level="seg", statistic="pearson", gold="mqm", refs=("refA",)))
    assert set(seg.data_vars) == {"BLEU", "COMET", "chrF", "Kiwi[noref]", GOLD}
    assert "refB" not in seg["system"].values and "refA" not in seg["system"].values  # human systems left out
    human = task_scores(ds, Task(lps=("en-de",), level="seg", statistic="pearson", gold="mqm", refs=("refA",),
                                 human=True))
    assert "refB" in human["system"].values
    np.testing.assert_array_equal(seg["BLEU"].sel(system="sys01").values,
                                  written.scores[("en-de", "BLEU-refA", "seg")]["sys01"])


def test_correlations_equal_independent_oracles(tree):
    _, _, ds = tree
    tasks = [Task(lps=tuple(LPS), level="sys", statistic="accuracy", gold="mqm", refs=("refA", "refA")),
             Task(lps=("en-de",), level="sys", statistic="pearson", gold="mqm", refs=("refA",)),
             Task(lps=("en-de",), level="seg", statistic="pearson", gold="mqm", refs=("refA",)),
             Task(lps=("he-en",), level="seg", statistic="acc_eq", gold="mqm", refs=("refA",))]
    res = run_tasks(ds, tasks, n_resamples=50, rng=0, roles={})  # no roles: every metric, reference refA
    for m in ("BLEU", "Kiwi[noref]"):
        agree = pairs = 0
        for lp in LPS:
            sub = task_scores(ds, Task(lps=(lp,), level="sys", statistic="pearson", gold="mqm", refs=("refA",)))
            x, z = sub[m].values, sub[GOLD].values
            for p, q in itertools.combinations(range(len(x)), 2):
                if not np.isnan(z[[p, q]]).any():
                    pairs += 1
                    agree += np.sign(x[p] - x[q]) == np.sign(z[p] - z[q])
        assert float(res["correlation"].sel(task=tasks[0].label, metric=m)) == pytest.approx(agree / pairs, abs=1e-12)
        sys_scores = task_scores(ds, tasks[1])
        assert float(res["correlation"].sel(task=tasks[1].label, metric=m)) == pytest.approx(
            stats.pearsonr(sys_scores[m].values, sys_scores[GOLD].values).statistic, abs=1e-12)
        seg = task_scores(ds, tasks[2])
        ok = ~np.isnan(seg[GOLD].values)
        assert float(res["correlation"].sel(task=tasks[2].label, metric=m)) == pytest.approx(
            stats.pearsonr(seg[m].values[ok], seg[GOLD].values[ok]).statistic, abs=1e-12)
        acc = xcorrstat.calibrate_ties(task_scores(ds, tasks[3]), target=GOLD, metrics=[m], level="input",
                                       variant="acc23")
        assert float(res["correlation"].sel(task=tasks[3].label, metric=m)) == pytest.approx(
            float(acc["correlation"].sel(metric=m)), abs=1e-12)
    # the averages: weighted cluster ranks, and scores rescaled to [0, 1]
    w = res["weight"].values
    for m in res["metric"].values:
        clusters = res["cluster"].sel(metric=m).values
        assert float(res["average_rank"].sel(metric=m)) == pytest.approx(float(np.sum(w * clusters)))
    assert np.all(np.diff(res["average_rank"].values) >= 0)


def test_tables_and_cli(tree, tmp_path):
    root, _, ds = tree
    res = run_tasks(ds, task_set("wmt23", LPS)[:3], n_resamples=20, rng=1)
    md = res.corrstat.to_markdown()
    rows = [r for r in md.splitlines() if r.startswith("|")]
    assert len(rows) == 2 + res.sizes["metric"] and all(r.count(" | ") == rows[0].count(" | ") for r in rows)
    assert r"\toprule" in res.corrstat.to_latex()
    out = tmp_path / "wmt-out"
    run = subprocess.run([sys.executable, "-m", "xcorrstat", "wmt", root, "--testset", "wmt23", "--lps",
                          ",".join(LPS), "--n-resamples", "20", "--out", str(out)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "Avg rank" in run.stdout
    assert sorted(os.listdir(out)) == sorted(["ranking.csv", "tasks.csv", "pairs.csv", "table.tex", "table.md",
                                              "xcorrstat-wmt-manifest.json"])
    again = subprocess.run([sys.executable, "-m", "xcorrstat", "wmt", root, "--testset", "wmt23", "--lps",
                            ",".join(LPS), "--n-resamples", "20", "--out", str(out)], capture_output=True, text=True)
    assert again.returncode == 2 and "--overwrite" in again.stderr


# ------------------------------------------------------------------ mt-metrics-eval as the oracle


def _plain_roles(std_ref):
    """The roles of the MetaInfo these tests give mt-metrics-eval: standard references, MQM, nothing else."""
    return {lp: Roles(std_ref=ref, std_gold={"seg": "mqm", "sys": "mqm"}) for lp, ref in std_ref.items()}


def _mtme():
    return mtme_modules("data", "meta_info", "tasks")


def _mtme_results(root, k):
    data, meta_info, tasks = _mtme()
    info = meta_info.MetaInfo("refA", {"seg": "mqm", "sys": "mqm"}, set(), set())
    evs = {("wmt23", lp): data.EvalSet("wmt23", lp, read_stored_metric_scores=True, info=info, path=root)
           for lp in LPS}
    task_list, weights = tasks.WMT23(LPS, primary=False, k=k)
    for t in task_list:
        t.block_size = max(k, 1)  # no early stopping: every p-value from all k draws
    np.random.seed(0)
    return task_list.Run(eval_set_dict=evs), weights


def test_parity_with_mt_metrics_eval(tree):
    root, _, ds = tree
    k = 300
    theirs, their_weights = _mtme_results(root, k)
    tasks = task_set("wmt23", LPS, primary=False)
    mine = run_tasks(ds, tasks, n_resamples=k, rng=0, roles=_plain_roles({"en-de": "refA", "he-en": "refB"}))
    np.testing.assert_allclose(mine["weight"].values, their_weights, atol=1e-12)
    alpha = 0.05
    tolerance = 4.5 * np.sqrt(alpha * (1 - alpha) / k) * np.sqrt(2)
    for task, result in zip(tasks, theirs):
        names = {m: m.lstrip("*") for m in result.metrics}
        for m, ours in names.items():
            assert float(mine["correlation"].sel(task=task.label, metric=ours)) == pytest.approx(
                result.Corr(m), abs=1e-9), (task.label, m)
        ordered = list(result.metrics)
        near = False
        for i, j in itertools.combinations(range(len(ordered)), 2):
            p_theirs = result.matrix[i, j]
            p_mine = float(mine["pvalue"].sel(task=task.label, metric=names[ordered[i]],
                                              other_metric=names[ordered[j]]))
            spread = 4.5 * np.sqrt(max(p_theirs * (1 - p_theirs), 1.0 / k) / k) * np.sqrt(2) + 2.0 / k
            assert abs(p_mine - p_theirs) <= spread, (task.label, ordered[i], ordered[j], p_mine, p_theirs)
            near |= abs(p_theirs - alpha) <= tolerance or abs(p_mine - alpha) <= tolerance
        if not near:
            for m, ours in names.items():
                assert int(mine["cluster"].sel(task=task.label, metric=ours)) == result.Rank(m), (task.label, m)


def test_wmt24_parity_with_mt_metrics_eval(tmp_path):
    """WMT24: soft pairwise accuracy (its permutation test) and item-wise acc_eq, against tasks.WMT24."""
    data, meta_info, tasks = _mtme()
    lps = ["en-de", "en-es"]
    write_mtme_tree(tmp_path, "wmt24", lps, 5, 30, METRICS, ["refA", "refB"], ["mqm"], np.random.default_rng(4),
                    text=True)
    ds = xcorrstat.read_mtme(tmp_path, "wmt24")
    k = 300
    std_ref = {"en-de": "refB", "en-es": "refA"}  # WMT24's standard references, as task_set("wmt24") has them
    evs = {("wmt24", lp): data.EvalSet("wmt24", lp, read_stored_metric_scores=True, path=str(tmp_path),
                                       info=meta_info.MetaInfo(std_ref[lp], {"seg": "mqm", "sys": "mqm"}, set(),
                                                               set()))
           for lp in lps}
    task_list, weights = tasks.WMT24(lps, primary=False, k=k)
    for t in task_list:
        t.block_size = max(k, 1)
    np.random.seed(0)
    theirs = task_list.Run(eval_set_dict=evs)
    ours_tasks = task_set("wmt24", lps, primary=False)
    mine = run_tasks(ds, ours_tasks, n_resamples=k, rng=0, roles=_plain_roles(std_ref))
    np.testing.assert_allclose(mine["weight"].values, weights, atol=1e-12)
    from mt_metrics_eval import stats as mtme_stats

    for task, result in zip(ours_tasks, theirs):
        names = {m: m.lstrip("*") for m in result.metrics}
        spa = task.statistic == "soft_accuracy"
        scores = task_scores(ds, task, _plain_roles(std_ref)) if spa else None
        for m, ours in names.items():
            value = float(mine["correlation"].sel(task=task.label, metric=ours))
            if spa:
                # mt-metrics-eval orders the systems as a Python set iterates (it varies with the hash seed), and a
                # sign draw that ties the observed difference counts for one orientation of a pair only: its own
                # function on xcorrstat's order is the exact oracle, its task result agrees up to those ties
                gold, metric = scores[GOLD].values, scores[ours].values
                exact = mtme_stats.PairwiseConfidenceError(gold.ravel().tolist(), metric.ravel().tolist(),
                                                           num_sys=gold.shape[0])[0]
                assert value == pytest.approx(exact, abs=1e-9), (task.label, m)
                assert value == pytest.approx(result.Corr(m), abs=0.02), (task.label, m)  # 1 pair in 10: .01
            else:
                assert value == pytest.approx(result.Corr(m), abs=1e-9), (task.label, m)
        ordered = list(result.metrics)
        for i, j in itertools.combinations(range(len(ordered)), 2):
            p_theirs = result.matrix[i, j]
            p_mine = float(mine["pvalue"].sel(task=task.label, metric=names[ordered[i]],
                                              other_metric=names[ordered[j]]))
            spread = 4.5 * np.sqrt(max(p_theirs * (1 - p_theirs), 1.0 / k) / k) * np.sqrt(2) + 2.0 / k
            assert abs(p_mine - p_theirs) <= spread + (0.02 if spa else 0.0), (task.label, ordered[i], ordered[j],
                                                                              p_mine, p_theirs)


def test_metric_files_named_like_human_scores_are_ranked(tmp_path):
    """In mt-metrics-eval's layout a metric file is a metric: names such as ``metricx_xxl_MQM_2020`` or
    ``BERTScore_With_Human`` are ranked, not left out as human judgments, and nothing warns."""
    names = ["BLEU", "metricx_xxl_MQM_2020", "BERTScore_With_Human"]
    write_mtme_tree(tmp_path, "wmt23", ["en-de"], 5, 24, names, ["refA"], ["mqm"], np.random.default_rng(4))
    ds = xcorrstat.read_mtme(tmp_path, "wmt23")
    tasks = [Task(lps=("en-de",), level="seg", statistic="pearson", grouping="none")]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = run_tasks(ds, tasks, n_resamples=0, roles={"en-de": Roles(std_ref="refA", std_gold={"seg": "mqm"})})
    corr = res["correlation"].isel(task=0).to_series().dropna()
    assert sorted(corr.index) == sorted(names)
    scores = task_scores(ds, tasks[0], {"en-de": Roles(std_ref="refA", std_gold={"seg": "mqm"})})
    for m in names:  # the oracle: scipy on the cells with a human score
        x, z = scores[m].values.ravel(), scores[GOLD].values.ravel()
        ok = ~np.isnan(x) & ~np.isnan(z)
        assert corr[m] == pytest.approx(stats.pearsonr(x[ok], z[ok]).statistic, abs=1e-12)
