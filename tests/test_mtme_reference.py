"""The WMT parity harness itself: WMT-shaped trees (mtme_tree.write_wmt_tree) and the runner of
mt-metrics-eval's own evaluation on them (mtme_reference).

mt-metrics-eval, with its real meta-info, must load the tree of every year; its GetCorrelations must
drop the unrated and outlier systems; ``primary=True`` must keep exactly the metrics its meta-info
lists as primary; the language pair without system-level metric files must make exactly the tasks
that read those files fail; and the runner's results must hang together (ranks from the p-values,
weights summing to 1, average ranks from the task ranks). One test records a limit of
mt-metrics-eval (soft pairwise accuracy with gold missing in scattered cells). Skipped unless
``XCORRSTAT_MTME_SOURCE`` names mt-metrics-eval's source.
"""

from __future__ import annotations

import numpy as np
import pytest
from mtme_reference import PROTOCOLS, MtmeEvaluation, mtme_evaluation, mtme_task_set, mtme_wmt22_notebook
from mtme_source import mtme_modules
from mtme_tree import WMT_YEARS, wmt_year, write_wmt_tree

YEARS = ["wmt22", "wmt23", "wmt24", "wmt25"]
PROTOCOL = {"wmt22": "WMT22", "wmt23": "WMT23", "wmt24": "WMT24", "wmt25": "WMT25"}
SMALL = {"k_systems": 4, "n_segments": 20, "n_docs": 4}
#: the WMT22 notebook runs 97 tasks on two pairs, most averaging over segments: fewer of them
SIZE = {"wmt22": dict(SMALL, n_segments=12)}
#: the trees without system-level (and, for WMT22, domain-level) metric files in one pair
NO_SYS = {"wmt22": "en-de", "wmt23": "he-en", "wmt24": "en-es", "wmt25": "ja-zh_CN"}
NO_DOMAIN = {"wmt22": "zh-en"}


@pytest.fixture(scope="module")
def mtme():
    return mtme_modules("data", "meta_info", "tasks", "stats")


@pytest.fixture(scope="module")
def full(mtme, tmp_path_factory):
    """Every year, every level of every file; WMT22 with two language pairs (fewer notebook tasks)."""
    root = tmp_path_factory.mktemp("wmt")
    trees = {}
    for year in YEARS:
        lps = ["en-de", "zh-en"] if year == "wmt22" else None
        trees[year] = write_wmt_tree(root, year, np.random.default_rng(YEARS.index(year)), lps=lps,
                                     **SIZE.get(year, SMALL))
    return str(root), trees


@pytest.fixture(scope="module")
def holes(mtme, tmp_path_factory):
    """Every year with one pair lacking its system-level metric files (WMT22: another its domain-level)."""
    root = tmp_path_factory.mktemp("wmt-holes")
    trees = {year: write_wmt_tree(root, year, np.random.default_rng(10 + YEARS.index(year)),
                                  lps=["en-de", "zh-en"] if year == "wmt22" else None,
                                  no_sys_metrics_lp=NO_SYS[year], no_domain_metrics_lp=NO_DOMAIN.get(year),
                                  **SIZE.get(year, SMALL))
             for year in YEARS}
    return str(root), trees


@pytest.fixture(scope="module")
def at_k0(full):
    """Each year's protocol at k=0 on the full trees, computed once."""
    root, _ = full
    done: dict[str, MtmeEvaluation] = {}

    def get(year: str) -> MtmeEvaluation:
        if year not in done:
            done[year] = mtme_evaluation(root, PROTOCOL[year], k=0, primary=True)
        return done[year]
    return get


def _values(scores):
    return {s: np.array([np.nan if v is None else v for v in vals], dtype=float) for s, vals in scores.items()}


@pytest.mark.parametrize("year", YEARS)
def test_tree_loads_with_the_real_meta_info(mtme, full, year):
    data, meta_info, _, _ = mtme
    root, trees = full
    tree = trees[year]
    assert tree.testset == year and tree.lps == [lp for lp in WMT_YEARS[year].lps if lp in tree.lps]
    for lp in tree.lps:
        info = meta_info.DATA[year][lp]
        assert tree.std_ref[lp] == info.std_ref == tree.lp_refs[lp][0]
        assert info.std_gold == {"sys": tree.gold[lp], "domain": tree.gold[lp], "seg": tree.gold[lp]}
        assert set(tree.outliers[lp]) == info.outlier_systems
        for name, status in tree.metric_status.items():
            assert status == ("baseline" if name in (info.baseline_metrics or set())
                              else "primary" if name in info.primary_metrics else "contrastive"), name
        evs = data.EvalSet(year, lp, True, path=root)  # info=None: meta_info.DATA
        assert evs.sys_names == set(tree.systems[lp])
        assert evs.human_sys_names == set(tree.human[lp]) == set(tree.lp_refs[lp][1:])
        assert evs.ref_names == set(tree.lp_refs[lp])
        assert evs.metric_names == set(tree.metric_names[lp])
        assert evs.human_score_names == {tree.gold[lp], WMT_YEARS[year].extra_gold}
        assert evs.levels == {"seg", "domain", "sys"}
        assert list(evs.domain_names) == sorted(set(tree.domains[lp])) and len(evs.domain_names) == 2
        assert evs.DocsPerSeg() == tree.docs[lp] and evs.DomainsPerSeg() == tree.domains[lp]
        for (lp_, name, level), written in tree.scores.items():
            if lp_ == lp:
                read = _values(evs.Scores(level, name))
                assert set(read) == set(written), (lp, name, level)
                for s, v in written.items():
                    np.testing.assert_array_equal(read[s], np.atleast_1d(v), err_msg=f"{lp} {name} {level} {s}")
        gold_sys = evs.Scores("sys", tree.gold[lp])
        assert all(gold_sys[s] == [None] for s in tree.unrated[lp] if s in gold_sys)
        assert set(tree.unrated_absent[lp]) and not set(tree.unrated_absent[lp]) & set(gold_sys)
        tied = tree.tied[lp]
        assert gold_sys[tied[0]] == gold_sys[tied[1]]
        assert evs.Scores("seg", tree.gold[lp])[tied[0]] != evs.Scores("seg", tree.gold[lp])[tied[1]]


@pytest.mark.parametrize("year", YEARS)
def test_get_correlations_drops_unrated_and_outlier_systems(mtme, full, year):
    data, _, _, _ = mtme
    root, trees = full
    tree = trees[year]
    for lp in tree.lps:
        evs = data.EvalSet(year, lp, True, path=root)
        gold = {s: v[0] for s, v in evs.Scores("sys", tree.gold[lp]).items()}
        # the metrics score the unrated systems: only the missing gold drops them
        assert all(set(tree.unrated[lp]) <= set(evs.Scores("sys", m)) for m in tree.metric_names[lp])
        for human in (False, True):
            for outliers in (False, True):
                expected = tree.rated(lp, human) + (tree.outliers[lp] if outliers else [])
                for level in ("sys", "seg"):
                    corrs = data.GetCorrelations(evs, level, {evs.std_ref}, set(), human, outliers, "std", False)
                    assert {c.num_sys for c in corrs.values()} == {len(expected)}, (lp, level, human, outliers)
                    if level == "sys":
                        assert all(sorted(c.gold_scores) == sorted(gold[s] for s in expected)
                                   for c in corrs.values())


@pytest.mark.parametrize("year", YEARS)
def test_primary_keeps_exactly_the_meta_info_primaries(mtme, full, at_k0, year):
    """WMT22-24 list their baselines among the primaries; WMT25's meta-info does not, so
    mt-metrics-eval's ``primary=True`` leaves the WMT25 baselines out."""
    root, trees = full
    tree = trees[year]
    ranked = {"primary", "baseline"} if year != "wmt25" else {"primary"}
    ev = at_k0(year)
    assert not [t.name for t in ev.tasks if t.skipped]
    expected = {m for m, s in tree.display_status.items() if s in ranked}
    assert all(set(t.corrs) == expected for t in ev.tasks), year
    assert ev.status == {m: tree.display_status[m] for m in expected}
    assert set(ev.average_ranks) == expected
    if year == "wmt22":
        everything = mtme_wmt22_notebook(root, tree.lps[:1], k=0, primary=False, include_domains=False)
    else:
        everything = mtme_task_set(root, PROTOCOL[year], tree.lps[:1], k=0, primary=False)
    assert all(set(t.corrs) == set(tree.display_status) for t in everything.tasks)
    assert everything.status == tree.display_status


def test_the_standard_reference_as_a_system_is_never_scored(mtme, tmp_path):
    data = mtme[0]
    tree = write_wmt_tree(tmp_path, 2023, np.random.default_rng(3), lps=["he-en"], std_ref_system=True, **SMALL)
    evs = data.EvalSet("wmt23", "he-en", True, path=str(tmp_path))
    assert evs.human_sys_names == {"refA", "refB"} == set(tree.human["he-en"])
    corrs = data.GetCorrelations(evs, "sys", {"refB"}, set(), True, True, "std", False)
    assert {c.num_sys for c in corrs.values()} == {len(tree.rated("he-en", human=True))}
    assert "refB" not in tree.rated("he-en", human=True) and "refA" in tree.rated("he-en", human=True)


def _reads(task, lp, level):
    """Whether the task reads the metric files of ``lp`` at ``level``."""
    a = task.attrs
    lps = a["lang"].strip("[]").replace("'", "").split(",")
    files = "seg" if a["level"] == "seg" or a["corr_fcn"] == "pce" else "domain" if a["domain"] != "None" else "sys"
    return lp in lps and files == level


@pytest.mark.parametrize("year", YEARS)
def test_missing_level_files_skip_exactly_the_tasks_that_read_them(mtme, holes, year):
    root, trees = holes
    tree = trees[year]
    ev = mtme_evaluation(root, PROTOCOL[year], k=0)
    for t in ev.tasks:
        expected = _reads(t, tree.no_sys_metrics_lp, "sys") or _reads(t, tree.no_domain_metrics_lp, "domain")
        assert (t.skipped is not None) == expected, t.name
        if t.skipped:
            # the pooled accuracy fails on the pair without scores, the others on an empty metric list
            assert t.skipped.startswith("IndexError" if t.attrs["corr_fcn"] == "accuracy" else "AssertionError")
            assert not t.corrs and not t.ranks
    n_skipped = sum(t.skipped is not None for t in ev.tasks)
    # WMT24 and WMT25 rank systems by soft pairwise accuracy, which reads segment scores only
    assert n_skipped == {"wmt22": 1 + 4 + 8, "wmt23": 2, "wmt24": 0, "wmt25": 0}[year]
    _check_consistent(ev, mtme)


def _check_consistent(ev: MtmeEvaluation, mtme) -> None:
    """Ranks from the p-values, orders, weights, and the average ranks from the task ranks."""
    data = mtme[0]
    assert sum(t.weight for t in ev.tasks) == pytest.approx(1.0, abs=1e-12)
    ran = [t for t in ev.tasks if t.skipped is None]
    for t in ran:
        names = list(t.corrs)
        values = [t.corrs[m] for m in names]
        assert values == sorted(values, reverse=True), t.name
        low = 0.0 if t.attrs["corr_fcn"] in ("accuracy", "pce", "KendallWithTiesOpt") else -1.0
        assert all(low - 1e-12 <= v <= 1 + 1e-12 for v in values), t.name
        assert list(t.ranks) == names and set(t.pvalues) == set(t.draws)
        assert set(t.pvalues) == {(names[i], names[j]) for i in range(len(names)) for j in range(i + 1, len(names))}
        matrix = np.zeros((len(names), len(names)))
        for (a, b), p in t.pvalues.items():
            matrix[names.index(a), names.index(b)] = p
        assert [t.ranks[m] for m in names] == data.AssignRanks(matrix, 0.05), t.name
        if ev.k == 0:
            assert set(t.pvalues.values()) <= {0.0} and set(t.draws.values()) <= {0}
            assert [t.ranks[m] for m in names] == list(range(1, len(names) + 1))
        for key, p in t.pvalues.items():
            n = t.draws[key]
            if ev.k:
                assert 1 <= n <= ev.k and 0.0 <= p <= 1.0
                assert p * n == pytest.approx(round(p * n), abs=1e-6), (t.name, key)  # a count over n draws
    total = sum(t.weight for t in ran)
    common = set.intersection(*(set(t.ranks) for t in ran)) if ran else set()
    assert set(ev.average_ranks) == common
    for m, avg in ev.average_ranks.items():
        assert avg == pytest.approx(sum(t.weight * t.ranks[m] for t in ran) / total, abs=1e-12)
    assert list(ev.average_ranks.values()) == sorted(ev.average_ranks.values())
    assert set(ev.average_corrs) == common
    assert set(ev.status) == {m for t in ran for m in t.corrs}
    assert set(ev.status.values()) <= {"primary", "baseline", "contrastive"}


def test_task_sets_with_draws_are_consistent(mtme, full):
    root, _ = full
    k = 3  # below the early-stopping block (100): every pair takes all k draws
    wmt23 = mtme_task_set(root, "WMT23", ["he-en", "en-de"], k=k)
    _check_consistent(wmt23, mtme)
    assert [t.attrs["corr_fcn"] for t in wmt23.tasks[:4]] == ["accuracy", "pearson", "pearson", "KendallWithTiesOpt"]
    assert [t.weight for t in wmt23.tasks] == pytest.approx([2 / 8] + [1 / 8] * 6)
    assert wmt23.tasks[0].attrs["lang"] == "en-de,he-en" and wmt23.lps == ["en-de", "he-en"]
    assert [t.attrs["human"] for t in wmt23.tasks] == ["True"] + ["False"] * 3 + ["True"] * 3
    assert {n for t in wmt23.tasks for n in t.draws.values()} == {k}
    wmt25 = mtme_task_set(root, "WMT25", ["en-ko_KR"], k=k)
    _check_consistent(wmt25, mtme)
    assert [t.attrs["corr_fcn"] for t in wmt25.tasks] == ["pce", "KendallWithTiesOpt"]
    again = mtme_task_set(root, "WMT25", ["en-ko_KR"], k=k)  # np.random.seed(seed) before each task
    assert [(a.corrs, a.ranks, a.pvalues, a.draws) for a in again.tasks] == [
        (b.corrs, b.ranks, b.pvalues, b.draws) for b in wmt25.tasks]
    assert mtme_task_set(root, "WMT24OnWMT23", ["zh-en"], k=0).testset == "wmt23"


def test_wmt22_notebook_tasks_and_weights(mtme, full, at_k0):
    root, trees = full
    ev = at_k0("wmt22")
    _check_consistent(ev, mtme)
    lps = trees["wmt22"].lps
    assert ev.tasks[0].attrs["corr_fcn"] == "accuracy" and ev.tasks[0].weight == pytest.approx(1 / (len(lps) + 1))
    per_lp = ev.tasks[1:]
    # per pair: 3 domains (None and two) x [sys: 2 human x 2 corr; seg: 3 avg_by x 2 human x 2 corr]
    assert len(per_lp) == len(lps) * 3 * (4 + 12)
    for lp in lps:
        assert sum(t.weight for t in per_lp if t.attrs["lang"] == lp) == pytest.approx(1 / (len(lps) + 1))
    assert {t.attrs["avg_by"] for t in per_lp if t.attrs["level"] == "sys"} == {"none"}
    assert {t.attrs["corr_fcn"] for t in per_lp} == {"pearson", "kendall"}
    # with draws, on the system-level tasks only (the notebook's own levels / include_domains)
    k = 3
    drawn = mtme_wmt22_notebook(root, k=k, levels=("sys",), include_domains=False)
    assert len(drawn.tasks) == 1 + len(lps) * 4
    _check_consistent(drawn, mtme)
    assert {n for t in drawn.tasks for n in t.draws.values()} == {k}


def test_mtme_soft_pairwise_accuracy_with_scattered_missing_gold(mtme, tmp_path):
    """Its PCE drops the None cells from the flat vector, then reshapes by system: it raises when
    the count left is no multiple of the number of systems, and misaligns the segments when it
    is, unless every system misses the same segments (WMT's data, and the trees' default)."""
    tree = write_wmt_tree(tmp_path, "wmt24", np.random.default_rng(0), lps=["en-es"], scattered_none_frac=0.1,
                          **SMALL)
    ev = mtme_task_set(tmp_path, "WMT24", k=0)
    pce, acc = ev.tasks
    rated = tree.rated("en-es")
    seg = tree.scores[("en-es", "mqm", "seg")]
    cells = sum(int(np.sum(~np.isnan(seg[s]))) for s in rated)
    if cells % len(rated):
        assert pce.skipped is not None and pce.skipped.startswith("ValueError: cannot reshape")
    else:
        assert pce.skipped is None
    assert acc.skipped is None


def test_protocol_and_year_names(tmp_path):
    assert set(PROTOCOLS) == {"WMT22", "WMT23", "WMT24OnWMT23", "WMT24", "WMT25"}
    with pytest.raises(ValueError, match="name must be one of"):
        mtme_task_set(".", "WMT22")
    assert wmt_year(2023) is wmt_year("wmt23") is wmt_year(23) is WMT_YEARS["wmt23"]
    with pytest.raises(ValueError, match="year must be one of"):
        wmt_year(2019)
    with pytest.raises(ValueError, match="has no language pairs"):
        write_wmt_tree(tmp_path, 2024, np.random.default_rng(0), lps=["en-fr"])
