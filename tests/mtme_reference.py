"""mt-metrics-eval's own official WMT evaluation, run on a test-set tree, as plain Python data.

The reference side of the parity checks of ``xcorrstat wmt`` / :func:`xcorrstat.wmt.run_tasks`:
each function loads a tree (written by ``mtme_tree.write_wmt_tree`` or any folder in
mt-metrics-eval's layout) with mt-metrics-eval's ``data.EvalSet`` and its real ``meta_info.DATA``,
runs its evaluation the way its users run it (its defaults: primary metrics only, outlier systems
out, early stopping with ``block_size=100, early_min=0.02, early_max=0.5``) and returns an
:class:`MtmeEvaluation`. Nothing of mt-metrics-eval is copied: its modules come from
``mtme_source.mtme_modules`` (the calling test skips unless ``XCORRSTAT_MTME_SOURCE`` names its
source) and are called as they are.

* :func:`mtme_task_set`: the task lists of ``tasks.WMT23``, ``WMT24OnWMT23``, ``WMT24`` and
  ``WMT25``, each task run on its own with ``Task.Run``.
* :func:`mtme_wmt22_notebook`: the procedure of ``wmt22_metrics.ipynb`` (WMT22 had no task list
  in the library), called against the library as it is now.
* :func:`mtme_evaluation`: either, by protocol name (``"WMT22"`` for the notebook).

Randomness: ``np.random.seed(seed)`` is called right before each task, so a task's draws do not
depend on the tasks before it (the pooled accuracy task and task 5 draw the same way whatever the
task list). Within a process, a result is then reproducible. Across processes it also depends on
``PYTHONHASHSEED``: mt-metrics-eval orders the systems of a task as a Python ``set`` of their
names iterates, which changes which cell a permutation draw swaps (so the p-values, within their
Monte-Carlo error) and, for soft pairwise accuracy, the statistic itself (each pair of systems
enters in one orientation and a draw that ties the observed difference counts for that
orientation only). Run with a fixed ``PYTHONHASHSEED`` to reproduce a result exactly.

Run this file (``python tests/mtme_reference.py --help``) to time every protocol on generated
trees.
"""

from __future__ import annotations

import argparse
import dataclasses
import glob
import os
import tempfile
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from mtme_source import mtme_modules

#: Protocol name -> (test set, where its tasks come from).
PROTOCOLS: dict[str, tuple[str, str]] = {
    "WMT22": ("wmt22", "wmt22_metrics.ipynb"),
    "WMT23": ("wmt23", "tasks.WMT23"),
    "WMT24OnWMT23": ("wmt23", "tasks.WMT24OnWMT23"),
    "WMT24": ("wmt24", "tasks.WMT24"),
    "WMT25": ("wmt25", "tasks.WMT25"),
}


@dataclasses.dataclass
class MtmeTask:
    """One task as mt-metrics-eval ran it.

    ``attrs``: every attribute of the task as mt-metrics-eval writes it in the task's name
    (``lang``, ``domain``, ``level``, ``human``, ``avg_by``, ``corr_fcn`` ... as strings: corr_fcn
    ``'pearson'``, ``'kendall'``, ``'accuracy'``, ``'KendallWithTiesOpt'``, ``'pce'``; the
    language pairs of a pooled accuracy task are ``'en-de,he-en,zh-en'`` from ``tasks`` but
    ``"['en-de','en-ru','zh-en']"`` from the WMT22 notebook, which also writes ``domain='None'``).
    ``name``: that name. ``weight``: the protocol's weight of the task. ``skipped``: the exception
    (``"AssertionError: "`` ...) when mt-metrics-eval cannot run the task on this tree, else None.
    ``seconds``: wall time of running it.

    ``corrs``: display name -> statistic, in mt-metrics-eval's order (decreasing statistic, ties
    by display name with its ``*``); display names are its ``'spreadsheet'`` format without the
    leading ``*`` of non-primary metrics (``CometKiwi[noref]`` keeps its suffix). ``ranks``: the
    significance-cluster rank of each. ``pvalues[(i, j)]``, for ``i`` before ``j`` in that order:
    mt-metrics-eval's p-value for "``j`` is at least as good as ``i``"; ``draws[(i, j)]``: the
    number of permutation draws it used for that pair (early stopping); ``exact_pvalues[(i, j)]``: its
    own draws of that pair counted with a rounding tolerance, so that a draw tying the observed
    difference counts (its plain ``>=`` drops some on ratios of counts). With ``k=0`` it runs no
    test: every p-value is 0.0, every draw count 0, and the ranks are the positions 1, 2, 3 ...
    """

    attrs: dict[str, str]
    name: str
    weight: float
    skipped: str | None
    corrs: dict[str, float]
    ranks: dict[str, int]
    pvalues: dict[tuple[str, str], float]
    draws: dict[tuple[str, str], int]
    seconds: float = 0.0
    exact_pvalues: dict[tuple[str, str], float] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class MtmeEvaluation:
    """A protocol's results.

    ``average_ranks``: each metric's weighted average rank over the tasks that ran, the weights
    renormalised over them (when none was skipped, exactly the protocol's weights), for the
    metrics present in every task that ran, in increasing order (``TaskSetResults.AverageRanks``;
    the WMT22 notebook's ``rank_metrics``). ``average_corrs``: ``TaskSetResults.AverageCorrs`` with
    the same weights (WMT23's headline; each statistic mapped to [0, 1] first). ``status``: display
    name -> ``'primary'``, ``'baseline'`` or ``'contrastive'`` from the test set's meta-info
    (``baseline_metrics`` first, then ``primary_metrics``). ``load_seconds`` / ``run_seconds``:
    wall time of loading the EvalSets / of running the tasks.
    """

    protocol: str
    testset: str
    lps: list[str]
    k: int
    primary: bool
    tasks: list[MtmeTask]
    average_ranks: dict[str, float]
    average_corrs: dict[str, float]
    status: dict[str, str]
    load_seconds: float
    run_seconds: float

    def task(self, **attrs: str) -> MtmeTask:
        """The one task whose attributes have these values (``ev.task(lang="en-de", level="sys")``)."""
        found = [t for t in self.tasks if all(t.attrs.get(a) == v for a, v in attrs.items())]
        if len(found) != 1:
            raise KeyError(f"{len(found)} tasks match {attrs}")
        return found[0]


def tree_lps(root: str | os.PathLike[str], testset: str) -> list[str]:
    """The language pairs of ``<root>/<testset>`` (its ``documents/<lp>.docs``), sorted."""
    paths = glob.glob(os.path.join(os.fspath(root), testset, "documents", "*.docs"))
    return sorted(os.path.basename(p)[: -len(".docs")] for p in paths)


def mtme_eval_sets(root: str | os.PathLike[str], testset: str, lps: Sequence[str]) -> dict[tuple[str, str], Any]:
    """``data.EvalSet(testset, lp, True, path=root)`` for each pair, keyed as ``Task.Run`` wants."""
    (data,) = mtme_modules("data")
    return {(testset, lp): data.EvalSet(testset, lp, True, path=os.fspath(root)) for lp in lps}


def _strip(name: str) -> str:
    return name[1:] if name.startswith("*") else name


def _attrs(name: str) -> dict[str, str]:
    return dict(av.partition("=")[::2] for av in name.split())


def _task(name: str, weight: float, result: Any = None, skipped: str | None = None,
          seconds: float = 0.0) -> MtmeTask:
    """An :class:`MtmeTask` from a ``tasks.TaskResults`` (or a skipped task)."""
    out = MtmeTask(_attrs(name), name, float(weight), skipped, {}, {}, {}, {}, seconds)
    if result is None:
        return out
    metrics = list(result.corr_ranks)
    for m in metrics:
        corr, rank = result.corr_ranks[m]
        out.corrs[_strip(m)], out.ranks[_strip(m)] = float(corr), int(rank)
    for i, mi in enumerate(metrics):
        for j in range(i + 1, len(metrics)):
            key = (_strip(mi), _strip(metrics[j]))
            out.pvalues[key] = float(result.matrix[i, j])
            out.draws[key] = int(result.draws_index[j, i] - result.draws_index[i, j])
            out.exact_pvalues[key] = _exact_pvalue(result, mi, metrics[j])
    return out


def _exact_pvalue(result: Any, better: str, worse: str) -> float:
    """mt-metrics-eval's own draws of a pair counted with a rounding tolerance: the share of draws whose
    difference reaches the observed one up to 1e-9 (its plain ``>=`` drops draws that tie it exactly but come
    out a rounding error smaller, as ratios of counts do). NaN without draws."""
    draws = np.asarray(result.Draws(better, worse), dtype=np.float64)
    if draws.size == 0:
        return float("nan")
    delta = float(result.corr_ranks[better][0]) - float(result.corr_ranks[worse][0])
    return float(np.mean(draws[:, 0] - draws[:, 1] >= delta - 1e-9 * max(1.0, abs(delta))))


def _status(eval_sets: dict[tuple[str, str], Any], tasks: list[MtmeTask]) -> dict[str, str]:
    primary = set().union(*(e.info.primary_metrics for e in eval_sets.values()))
    baseline = set().union(*(e.info.baseline_metrics or set() for e in eval_sets.values()))
    names = dict.fromkeys(m for t in tasks for m in t.corrs)
    out = {}
    for m in names:
        base = m[: -len("[noref]")] if m.endswith("[noref]") else m
        out[m] = "baseline" if base in baseline else "primary" if base in primary else "contrastive"
    return out


def _run_one(run: Any, seed: int) -> tuple[Any, str | None, float]:
    """``run()`` after ``np.random.seed(seed)``: (result, None, seconds) or (None, the exception's
    text, seconds)."""
    np.random.seed(seed)
    start = time.perf_counter()
    try:
        return run(), None, time.perf_counter() - start
    except Exception as exc:  # noqa: BLE001 - whatever stops mt-metrics-eval is the finding
        return None, f"{type(exc).__name__}: {exc}", time.perf_counter() - start


def _averages(results: list[Any], weights: list[float]) -> tuple[dict[str, float], dict[str, float]]:
    """MTME's AverageRanks and AverageCorrs over the tasks that ran, weights renormalised over them."""
    (tasks,) = mtme_modules("tasks")
    ran = [(r, w) for r, w in zip(results, weights) if r is not None]
    if not ran:
        return {}, {}
    kept = [w for _, w in ran]
    if len(ran) < len(results):
        total = sum(kept)
        kept = [w / total for w in kept]
    done = tasks.TaskSetResults([r for r, _ in ran])
    ranks = {_strip(m): float(v) for m, v in done.AverageRanks(kept).items()}
    corrs = {_strip(m): float(v) for m, v in done.AverageCorrs(kept).items()}
    return ranks, corrs


def mtme_task_set(root: str | os.PathLike[str], name: str, lps: Sequence[str] | None = None, *,
                  k: int = 1000, primary: bool = True, seed: int = 0) -> MtmeEvaluation:
    """Run ``tasks.<name>(lps, primary=primary, k=k)`` on ``<root>/<testset>``.

    ``name``: ``"WMT23"``, ``"WMT24OnWMT23"`` (test set wmt23), ``"WMT24"`` or ``"WMT25"``.
    ``lps``: default the tree's language pairs (:func:`tree_lps`; mt-metrics-eval's own default
    for WMT25 is 16 pairs). Each task runs on its own (``Task.Run`` with the EvalSets of
    :func:`mtme_eval_sets`, loaded once), after ``np.random.seed(seed)``, at the task's defaults
    (early stopping ``block_size=100, early_min=0.02, early_max=0.5``, outliers out); a task that
    raises is recorded as skipped. Weights: those the task-set function returns.
    """
    if name not in PROTOCOLS or name == "WMT22":
        raise ValueError(f"name must be one of {[p for p in PROTOCOLS if p != 'WMT22']}, got {name!r}")
    (tasks,) = mtme_modules("tasks")
    testset = PROTOCOLS[name][0]
    lps = sorted(lps) if lps is not None else tree_lps(root, testset)
    task_list, weights = getattr(tasks, name)(list(lps), primary=primary, k=k)
    start = time.perf_counter()
    eval_sets = mtme_eval_sets(root, testset, lps)
    loaded = time.perf_counter()
    results, out = [], []
    for task, weight in zip(task_list, weights):
        result, skipped, seconds = _run_one(lambda task=task: task.Run(eval_set_dict=eval_sets), seed)
        results.append(result)
        out.append(_task(task.name, weight, result, skipped, seconds))
    ran = time.perf_counter()
    ranks, corrs = _averages(results, list(weights))
    return MtmeEvaluation(name, testset, list(lps), k, primary, out, ranks, corrs, _status(eval_sets, out),
                          loaded - start, ran - loaded)


def _wmt22_plan(eval_sets: dict[str, Any], langs: list[str], k: int, primary: bool, levels: Sequence[str],
                include_domains: bool) -> list[tuple[str, Any]]:
    """The notebook's ``eval_metrics(eval_sets, langs, levels, primary_only=primary, k=k,
    include_domains=include_domains)``: (task name, a function running the task) for each task,
    in the notebook's order."""
    data, stats = mtme_modules("data", "stats")
    import scipy.stats

    psd = stats.PermutationSigDiffParams(block_size=100)
    plan: list[tuple[str, Any]] = []
    if len(langs) > 1:
        evs_list = [eval_sets[lp] for lp in langs]
        main_refs = [{e.std_ref} for e in evs_list]
        close_refs = [set() for _ in evs_list]
        gold = evs_list[0].StdHumanScoreName("sys")
        name = data.MakeTaskName("wmt22", langs, None, "sys", False, "none", "accuracy", k, gold, main_refs,
                                 close_refs, False, primary)
        plan.append((name, lambda: data.CompareMetricsWithGlobalAccuracy(
            evs_list, main_refs, close_refs, include_human=False, include_outliers=False, gold_name=gold,
            primary_metrics=primary, domain=None, k=k, pval=0.05, psd=psd)))
    corr_fcns = {"pearson": scipy.stats.pearsonr, "kendall": scipy.stats.kendalltau}
    for lp in langs:
        evs = eval_sets[lp]
        for domain in [None, *(evs.domain_names if include_domains else [])]:
            for level in levels:
                for avg in ("none", "sys", "item"):
                    if level == "sys" and avg != "none":
                        continue
                    for human in (True, False):
                        if human and len(evs.ref_names) == 1:
                            continue
                        for corr in ("pearson", "kendall"):
                            name = data.MakeTaskName("wmt22", lp, domain, level, human, avg, corr, k,
                                                     evs.StdHumanScoreName(level), {evs.std_ref}, set(), False,
                                                     primary=primary)

                            def run(evs=evs, domain=domain, level=level, avg=avg, human=human, corr=corr):
                                corrs = data.GetCorrelations(
                                    evs=evs, level=level, main_refs={evs.std_ref}, close_refs=set(),
                                    include_human=human, include_outliers=False, gold_name="std",
                                    primary_metrics=primary, domain=domain)
                                ranked, *rest = data.CompareMetrics(corrs, corr_fcns[corr], average_by=avg, k=k,
                                                                    pval=0.05, psd=psd)
                                return ({evs.DisplayName(m): v for m, v in ranked.items()}, *rest)

                            plan.append((name, run))
    return plan


def mtme_wmt22_notebook(root: str | os.PathLike[str], lps: Sequence[str] | None = None, *, k: int = 1000,
                        primary: bool = True, seed: int = 0, levels: Sequence[str] = ("sys", "seg"),
                        include_domains: bool = True) -> MtmeEvaluation:
    """The WMT22 evaluation of ``mt_metrics_eval/wmt22_metrics.ipynb`` on ``<root>/wmt22``.

    Cell "Main evaluation function": ``eval_metrics(eval_sets, langs, levels,
    primary_only=primary, k=k, include_domains=include_domains)`` (by default the arguments of
    its main results; its other defaults ``gold_name='std'``, ``seg_level_no_avg=False``,
    ``include_human_with_acc=False``). When more than one language pair, first the pooled
    system-level accuracy task (human outputs out, the first pair's standard sys gold name for
    every pair). Then for each pair (``lps`` in the order given; default the tree's, sorted),
    domain (None, then each domain unless not ``include_domains``), level (each of ``levels``),
    avg_by (none; at seg also sys and item), human (True only when the pair has more than one
    reference, then False) and correlation (pearson, kendall): one ``data.CompareMetrics`` task
    on ``data.GetCorrelations`` (standard reference, outliers out, standard gold of the level;
    with a domain, the system level reads the domain-level files), with
    ``psd=PermutationSigDiffParams(block_size=100)``.

    Cell "Compute global task weights": ``distribute_mass`` over test_set, lang, domain, level,
    human, avg_by, corr_fcn, computed by ``TaskSetResults.AssignWeights`` (the library's
    identical recursion). Cell "Average ranks": ``rank_metrics`` over the tasks (weight times
    rank summed, times one over the tasks' total weight; metrics missing from a task left out).

    Adapted to the library as it is now: ``CompareMetrics`` and
    ``CompareMetricsWithGlobalAccuracy`` return four values (the notebook unpacks two); the first
    two are used as the notebook uses them and the draws index gives the draw counts. Tasks run
    one at a time after ``np.random.seed(seed)``; a task that raises is recorded as skipped (the
    notebook would stop there) and left out of the average ranks, which ``rank_metrics``
    renormalises over the tasks that ran. Task names are ``data.MakeTaskName``'s, built as the
    notebook builds them.
    """
    (tasks,) = mtme_modules("tasks")
    langs = list(lps) if lps is not None else tree_lps(root, "wmt22")
    start = time.perf_counter()
    eval_sets = {lp: e for (_, lp), e in mtme_eval_sets(root, "wmt22", langs).items()}
    loaded = time.perf_counter()
    plan = _wmt22_plan(eval_sets, langs, k, primary, levels, include_domains)
    results = []
    seconds = []
    for name, run in plan:
        res, skipped, took = _run_one(run, seed)
        result = tasks.TaskResults(None, res) if res is not None else tasks.TaskResults()
        result.name = name
        results.append((result, skipped))
        seconds.append(took)
    ran = time.perf_counter()
    weights = tasks.TaskSetResults([r for r, _ in results]).AssignWeights(
        ["test_set", "lang", "domain", "level", "human", "avg_by", "corr_fcn"])
    out = [_task(r.name, w, None if s else r, s, t) for ((r, s), w, t) in zip(results, weights, seconds)]
    done = [(r, w) for (r, s), w in zip(results, weights) if s is None]
    ranks = _rank_metrics([r for r, _ in done], [w for _, w in done])
    _, corrs = _averages([r if s is None else None for r, s in results], weights)
    keyed = {("wmt22", lp): e for lp, e in eval_sets.items()}
    return MtmeEvaluation("WMT22", "wmt22", langs, k, primary, out, ranks, corrs, _status(keyed, out),
                          loaded - start, ran - loaded)


def _rank_metrics(results: list[Any], weights: list[float]) -> dict[str, float]:
    """The notebook's "Average ranks": sum of weight x rank per metric, times 1 / total weight,
    for the metrics in every task, in increasing order."""
    if not results:
        return {}
    total = sum(weights)
    sums: dict[str, float] = {}
    counts: dict[str, int] = {}
    for result, weight in zip(results, weights):
        for metric in result.metrics:
            sums[metric] = sums.get(metric, 0.0) + weight * result.Rank(metric)
            counts[metric] = counts.get(metric, 0) + 1
    kept = {_strip(m): (1 / total) * v for m, v in sums.items() if counts[m] == len(results)}
    return dict(sorted(kept.items(), key=lambda kv: kv[1]))


def mtme_evaluation(root: str | os.PathLike[str], protocol: str, lps: Sequence[str] | None = None, *,
                    k: int = 1000, primary: bool = True, seed: int = 0) -> MtmeEvaluation:
    """:func:`mtme_wmt22_notebook` for ``"WMT22"``, else :func:`mtme_task_set`."""
    if protocol == "WMT22":
        return mtme_wmt22_notebook(root, lps, k=k, primary=primary, seed=seed)
    return mtme_task_set(root, protocol, lps, k=k, primary=primary, seed=seed)


# ----------------------------------------------------------------------------- timings


def time_protocols(ks: Sequence[int] = (0, 1000), protocols: Sequence[str] = tuple(PROTOCOLS), *,
                   k_systems: int = 6, n_segments: int = 60, seed: int = 0) -> list[dict[str, Any]]:
    """Wall time (and this process's CPU time, which other load does not inflate) of each protocol
    at each ``k`` on a fresh ``write_wmt_tree`` tree: rows of dicts, also printed."""
    from mtme_tree import write_wmt_tree

    rows = []
    with tempfile.TemporaryDirectory() as root:
        for protocol in protocols:
            testset = PROTOCOLS[protocol][0]
            if not os.path.isdir(os.path.join(root, testset)):
                write_wmt_tree(root, testset, np.random.default_rng(seed), k_systems=k_systems,
                               n_segments=n_segments)
            for k in ks:
                cpu = time.process_time()
                ev = mtme_evaluation(root, protocol, k=k, seed=seed)
                cpu = time.process_time() - cpu
                by_kind: dict[str, float] = {}
                for t in ev.tasks:
                    kind = f"{t.attrs['level']}/{t.attrs['corr_fcn']}/{t.attrs['avg_by']}"
                    by_kind[kind] = round(by_kind.get(kind, 0.0) + t.seconds, 2)
                rows.append({"protocol": protocol, "k": k, "tasks": len(ev.tasks),
                             "skipped": sum(t.skipped is not None for t in ev.tasks),
                             "metrics": len(ev.average_ranks), "load_s": round(ev.load_seconds, 2),
                             "run_s": round(ev.run_seconds, 2), "cpu_s": round(cpu, 2), "by_kind": by_kind})
                print(rows[-1], flush=True)
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Time mt-metrics-eval's WMT protocols on generated trees.")
    parser.add_argument("--source", help="mt-metrics-eval source folder (else $XCORRSTAT_MTME_SOURCE)")
    parser.add_argument("--k", default="0,1000", help="comma-separated numbers of draws")
    parser.add_argument("--protocols", default=",".join(PROTOCOLS))
    parser.add_argument("--systems", type=int, default=6, help="rated MT systems per language pair")
    parser.add_argument("--segments", type=int, default=60)
    args = parser.parse_args(argv)
    if args.source:
        os.environ["XCORRSTAT_MTME_SOURCE"] = args.source
    time_protocols([int(k) for k in args.k.split(",")], args.protocols.split(","), k_systems=args.systems,
                   n_segments=args.segments)


if __name__ == "__main__":
    main()
