"""Run a list of WMT tasks on a :func:`~xcorrstat.read_mtme` Dataset: rankings, clusters, averages.

Each :class:`~xcorrstat.wmt.Task` picks its scores , ranks
every metric by its statistic and draws the significance clusters with the task's test
(:func:`~xcorrstat.compare`, p-values as the fraction of draws at least as extreme, no
multiple-testing correction, as in mt-metrics-eval); with ``n_resamples=0`` the cluster ranks
are the plain ranks (mt-metrics-eval's ``k=0``). A task whose inputs the data lack is skipped
with a warning saying why and the others run. The overall ranking is the weighted average of
each metric's cluster rank over the tasks that ran (mt-metrics-eval's ``AverageRanks``), beside
the weighted average of its scores rescaled to [0, 1] (``AverageCorrs``: correlations map
``[-1, 1]`` to ``[0, 1]``, accuracies stay).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np
import xarray as xr

from .._notes import add_notes, carry_notes, notes_of
from .._options import set_options
from .._types import Seed
from .._correlation.estimates import correlate
from .._mt.softpairwise import soft_pairwise_accuracy
from .._mt.spatest import soft_pairwise_accuracy_test
from .._mt.ties import calibrate_ties
from .._resampling.draws import resolve_seed
from .._resampling.engine import progress_line
from .._resampling.settings import Permutation
from .._significance.allpairs import compare
from .._significance.auto import AUTO, OpenDecisionsWarning, auto_rerun
from .._significance.decisions import decide
from .._significance.defaults import DEFAULTS
from .._validation import check_unit_interval
from .._warn import one_call, warn
from ._roles import Roles, metric_status, roles as known_roles, testsets
from ._select import GOLD, TaskSkipped, lp_views, scores_of
from ._specs import Task

__all__ = ["TaskSkippedWarning", "run_tasks"]

#: Fewest systems (or items) of a correlation: two, as mt-metrics-eval computes them.
MIN_PAIRS = 2
_LEVEL = {"none": "global", "item": "input", "system": "within_system"}


class TaskSkippedWarning(UserWarning):
    """A task was skipped: the data lack its inputs."""


#: The options of :func:`_options` that are the test's (its :class:`~xcorrstat.Permutation`), not the statistic's.
_TEST_OPTIONS = ("permute", "swap", "epsilon")


def _options(task: Task) -> dict[str, Any]:
    """compare's options for a task's statistic and test (soft_accuracy has a test of its own)."""
    if task.statistic == "accuracy":
        return dict(level="input", method="kendall", variant="acc23", average="pairs", permute=("system", "input"))
    if task.statistic == "acc_eq":
        return dict(level=_LEVEL[str(task.grouping)], method="kendall", variant="acc23", swap="pairs",
                    epsilon="calibrate")
    method = dict(method=task.statistic, variant="b") if task.statistic == "kendall" else dict(method="pearson")
    if task.level == "sys":
        return dict(level="system", permute="system", **method)
    return dict(level=_LEVEL[str(task.grouping)], permute=("system", "input"), **method)


def _observed(scores: xr.Dataset, task: Task) -> xr.DataArray:
    """The task's statistic of every metric, without a test (``n_resamples=0``)."""
    if task.statistic == "soft_accuracy":  # mt-metrics-eval's own sign draws (seed 4, 1,000 draws)
        spa = soft_pairwise_accuracy(scores, target=GOLD, draws="mt-metrics-eval")
        return spa["soft_pairwise_accuracy"]
    options = _options(task)
    if task.statistic == "acc_eq":
        return calibrate_ties(scores, target=GOLD, level=options["level"], variant="acc23")["correlation"]
    keep = {k: v for k, v in options.items() if k in ("level", "method", "variant", "average")}
    return correlate(scores, target=GOLD, min_pairs=MIN_PAIRS, **keep)


def _warn_open(labels: list[str], n_open: list[int], alpha: float, cap: int) -> None:
    """One :class:`~xcorrstat.OpenDecisionsWarning` naming the tasks whose decisions the cap left open."""
    tasks = [f"{label} ({n})" for label, n in zip(labels, n_open) if n]
    if tasks:
        warn(f"n_resamples='auto': decisions at alpha={alpha:g} still open with draws capped at "
             f"max_resamples={cap} (p-values within Monte-Carlo error of alpha) in {len(tasks)} task(s): "
             f"{', '.join(tasks)}; raise max_resamples to settle them", OpenDecisionsWarning)


def _plain_ranks(corr: xr.DataArray) -> xr.DataArray:
    """1, 2, ... by decreasing statistic, ties by name, undefined last (mt-metrics-eval's ranks at k=0)."""
    names = [str(m) for m in corr["metric"].values]
    values = corr.values.astype(np.float64)
    order = sorted(range(len(names)), key=lambda k: (np.isnan(values[k]), -np.nan_to_num(values[k]), names[k]))
    ranks = np.empty(len(names), dtype=np.float64)
    ranks[order] = np.arange(1, len(names) + 1)
    ranks[np.isnan(values)] = np.nan
    return xr.DataArray(ranks, dims="metric", coords={"metric": corr["metric"]})


#: The tests of a WMT task: p-values and correction as mt-metrics-eval computes them.
_WMT = dict(pvalue=DEFAULTS["wmt_pvalue"].python, correction=DEFAULTS["wmt_correction"].python)


def _drawn(res: xr.Dataset) -> dict[str, int]:
    """The draws a task's test used (the most of a pair) and its open decisions."""
    return {"n_resamples_used": int(res.attrs.get("n_resamples_used", res.attrs.get("n_resamples", 0))),
            "n_open": int(res.attrs.get("n_open", 0))}


def _rank_task(scores: xr.Dataset, task: Task, *, n_resamples: int | Literal["auto"], seed: int, alpha: float,
               max_resamples: int) -> xr.Dataset:
    """One task's ranking: ``correlation`` and ``cluster`` over metric, ``pvalue`` over metric pairs."""
    if n_resamples == 0:
        corr = _observed(scores, task).rename("correlation")
        corr = corr.drop_vars([c for c in corr.coords if c != "metric"])
        return xr.Dataset({"correlation": corr, "cluster": _plain_ranks(corr)}, attrs=_noted({}, scores, corr))
    if task.statistic == "soft_accuracy":  # its draws restart at 0: an "auto" run reruns it with more
        res = auto_rerun(lambda n, rng: soft_pairwise_accuracy_test(scores, target=GOLD, n_resamples=n, rng=rng,
                                                                    draws="mt-metrics-eval"),
                         n_resamples=n_resamples, max_resamples=max_resamples, rng=seed, family="all",
                         alternative="greater", alpha=alpha, **_WMT)
        corr = res["soft_pairwise_accuracy"].rename("correlation")
        _, significant, cluster = decide(res["pvalue"], corr, res["delta"], correction=_WMT["correction"],
                                         family="all", alternative="greater", alpha=alpha)
        return xr.Dataset({"correlation": corr, "cluster": cluster, "pvalue": res["pvalue"],
                           "significant": significant}, attrs=_noted(_drawn(res), scores, res))
    options = _options(task)
    test = Permutation(n_resamples=n_resamples, max_resamples=max_resamples, rng=seed, pvalue=_WMT["pvalue"],
                       **{k: options.pop(k) for k in _TEST_OPTIONS if k in options})
    res = compare(scores, target=GOLD, test=test, alpha=alpha, min_pairs=MIN_PAIRS,
                  correction=_WMT["correction"], **options)
    keep = ["correlation", "cluster", "pvalue", "significant"] + (["epsilon"] if "epsilon" in res else [])
    out = res[keep].drop_vars([c for c in res.coords if c not in ("metric", "other_metric")], errors="ignore")
    out.attrs = _noted(_drawn(res), scores, res)
    return out


def _noted(attrs: dict[str, Any], *sources: Any) -> dict[str, Any]:
    """``attrs`` with the notes of ``sources`` (a task's scores and its analysis)."""
    carry_notes(attrs, sources)
    return attrs


def _task_notes(data: xr.Dataset, drawn: dict[str, Any]) -> tuple[str, ...]:
    """The data's notes, then each task's own (those its scores or analysis added), named by task."""
    own = notes_of(data)
    return (*own, *(f"task {label}: {note}" for label, attrs in drawn.items()
                    for note in notes_of(attrs) if note not in own))


#: Score range of each statistic, for the average of scores rescaled to [0, 1].
_RANGE = {"accuracy": (0.0, 1.0), "acc_eq": (0.0, 1.0), "soft_accuracy": (0.0, 1.0),
          "pearson": (-1.0, 1.0), "kendall": (-1.0, 1.0)}


def _averages(per_task: xr.Dataset, weight: xr.DataArray, tasks: Sequence[Task], ran: np.ndarray) -> xr.Dataset:
    """Weighted average cluster rank and rescaled score of the metrics present in every task that ran."""
    coords = {"task": per_task["task"]}
    lo = xr.DataArray([_RANGE[t.statistic][0] for t in tasks], dims="task", coords=coords)
    hi = xr.DataArray([_RANGE[t.statistic][1] for t in tasks], dims="task", coords=coords)
    cluster = per_task["cluster"].isel(task=ran)
    everywhere = cluster.notnull().all("task") & (cluster > 0).all("task")
    w = weight.isel(task=ran)
    rank = (cluster * w).sum("task").where(everywhere)
    score = (((per_task["correlation"] - lo) / (hi - lo)).isel(task=ran) * w).sum("task").where(everywhere)
    return xr.Dataset({"average_rank": rank, "average_score": score})


def _resolve_roles(data: xr.Dataset, roles: Any) -> tuple[dict[str, Roles], str]:
    """Each language pair's roles and where they came from."""
    if roles is None:
        testset = str(data.attrs.get("testset", ""))
        if testset in testsets():
            return known_roles(testset), f"bundled {testset}"
        return {}, "none (every metric primary; standard reference refA)"
    if isinstance(roles, str):
        return known_roles(roles), f"bundled {roles}"
    if isinstance(roles, Mapping) and all(isinstance(r, Roles) for r in roles.values()):
        return dict(roles), "given"
    raise TypeError("roles must be None, a test set name or a mapping of language pairs to roles (as xcorrstat.wmt.roles gives)")


def _run_tasks_iv(data: Any, tasks: Any, n_resamples: Any, alpha: Any,
                  allow_incomplete: Any = False) -> tuple[xr.Dataset, list[Task], int | Literal["auto"], float]:
    if not isinstance(allow_incomplete, bool):
        raise TypeError(f"allow_incomplete must be True or False, got {allow_incomplete!r}")
    if not isinstance(data, xr.Dataset):
        raise TypeError(f"data must be a Dataset from read_mtme, got {type(data).__name__}")
    tasks = [tasks] if isinstance(tasks, Task) else list(tasks)
    if not tasks or not all(isinstance(t, Task) for t in tasks):
        raise ValueError("tasks must be a non-empty list of xcorrstat.wmt.Task (see xcorrstat.wmt.task_set)")
    labels = [t.label for t in tasks]
    if len(set(labels)) != len(labels):
        raise ValueError(f"tasks must have distinct labels (set Task.name), got {labels}")
    if isinstance(n_resamples, str) and n_resamples == AUTO:
        return data, tasks, "auto", check_unit_interval(alpha, "alpha")
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)) or n_resamples < 0:
        raise ValueError(f"n_resamples must be 'auto' or an integer >= 0 (0: statistics and plain ranks, no tests), "
                         f"got {n_resamples!r}")
    return data, tasks, int(n_resamples), check_unit_interval(alpha, "alpha")


def _run_each(data: xr.Dataset, tasks: list[Task], lp_roles: dict[str, Roles], allow_incomplete: bool,
              **options: Any) -> tuple[list[xr.Dataset], dict[str, str]]:
    """Every task's ranking; the skipped ones (with the reason) instead of a ranking. A ranking's attrs
    ``lacks``: the units each metric lacks that the task's gold rates (with `allow_incomplete`)."""
    parts, skipped = [], {}
    views = lp_views(data, [lp for t in tasks for lp in t.lps])
    all_refs = {str(r) for r in data.attrs.get("references", [])}
    for number, t in enumerate(tasks, 1):
        try:
            scores = scores_of(views, all_refs, t, lp_roles, allow_incomplete=allow_incomplete)
        except TaskSkipped as why:
            skipped[t.label] = str(why)
            warn(f"skipped task {t.label!r}: {why}", TaskSkippedWarning)
            continue
        progress_line(f"wmt task {number} of {len(tasks)}: {t.label}")
        with set_options(progress="never"):  # the tasks are the progress shown, not each task's computation
            ranked = _rank_task(scores, t, **options).expand_dims(task=[t.label])
        ranked.attrs["lacks"] = dict(scores.attrs.get("lacks", {}))
        parts.append(ranked)
    if not parts:
        raise ValueError("no task could run: " + "; ".join(f"{k}: {v}" for k, v in skipped.items()))
    return parts, skipped


def _mark_lacks(out: xr.Dataset, drawn: Mapping[str, Mapping[str, Any]]) -> xr.Dataset:
    """The coordinate ``lacks`` over (task, metric) and a note per metric and task that lacks units."""
    lacks = np.full((out.sizes["task"], out.sizes["metric"]), "", dtype=object)
    metrics = [str(m) for m in out["metric"].values]
    notes = []
    for i, task in enumerate(str(t) for t in out["task"].values):
        for name, units in drawn.get(task, {}).get("lacks", {}).items():
            lacks[i, metrics.index(name)] = units
            notes.append(f"task {task!r}: metric {name} lacks {units}, which the gold rates; every metric of the "
                         "task ranked on the units all of them score")
    add_notes(out.attrs, *notes)
    return out.assign_coords(lacks=(("task", "metric"), lacks))


def _status(metrics: np.ndarray, tasks: list[Task], lp_roles: dict[str, Roles]) -> list[str]:
    """Each metric's status (primary, baseline, contrastive) in the language pairs of the tasks."""
    lps = {lp for t in tasks for lp in t.lps}
    known = [lp_roles[lp] for lp in sorted(lps) if lp in lp_roles] or [Roles()]
    return [metric_status(str(m).removesuffix("[noref]"), known) for m in metrics]


@one_call
def run_tasks(
    data: xr.Dataset,
    tasks: Task | Sequence[Task],
    *,
    roles: str | Mapping[str, Roles] | None = None,
    n_resamples: int | Literal["auto"] = DEFAULTS["n_resamples"].python,
    rng: Seed = None,
    alpha: float = DEFAULTS["alpha"].python,
    max_resamples: int = DEFAULTS["max_resamples"].python,
    allow_incomplete: bool = False,
) -> xr.Dataset:
    """Rank the metrics in every task, with significance clusters, and average the ranks over tasks.

    Parameters
    ----------
    data : Dataset
        From :func:`~xcorrstat.read_mtme` (an ``lp`` dim when several language pairs are
        read; the levels the tasks need: ``seg``, ``sys``, ``domain``).
    tasks : Task or sequence of Task
        E.g. ``xcorrstat.wmt.task_set("wmt23")``.
    roles : str or mapping of str to Roles, optional
        Each language pair's standard reference and gold, outlier systems, primary metrics and
        baselines: a test set name, or a mapping (from :func:`~xcorrstat.wmt.roles`, edited).
        Default: the bundled roles of the data's test set (``data.attrs["testset"]``); none
        for an unknown test set (every metric primary, reference ``refA``).
    n_resamples : int or "auto", default "auto"
        Draws of every task's significance test; 0 gives the statistics and plain ranks only
        (mt-metrics-eval's ``k=0``). ``"auto"``: each task's test draws until every decision of
        its family (the task's pairs of metrics, uncorrected as in mt-metrics-eval) is settled
        at ``alpha``, from 1,000 up to ``max_resamples`` (``n_resamples="auto"`` of
        :func:`~xcorrstat.compare`; the soft pairwise accuracy test is rerun with doubled draws).
    rng : int, Generator, SeedSequence or None
        Seed; every task's draws come from it (recorded in attrs).
    alpha : float, default 0.05
        Significance level of the clusters (p-values are the fraction of draws at least
        as extreme; no multiple-testing correction, as in mt-metrics-eval).
    max_resamples : int, default 20000
        The cap on a task's draws with ``n_resamples="auto"``.
    allow_incomplete : bool, default False
        Rank a metric that has no score for a unit (a system, a segment) that a task's gold
        rates -- as :func:`~xcorrstat.read_mtme` ``(allow_incomplete=True)`` keeps one: every
        metric of that task is ranked on the units all of them score, and the metric is marked
        (coordinate ``lacks``, a note, a ``†`` in the tables). By default such a metric is an
        error, as mt-metrics-eval refuses it.

    Returns
    -------
    Dataset
        Over ``task`` and ``metric``: ``correlation`` (the task's statistic), ``cluster``
        (its significance-cluster rank, 1 = best; NaN where the task lacks the metric or did
        not run); ``pvalue`` and ``significant`` over (``task``, ``metric``, ``other_metric``)
        when ``n_resamples > 0``; ``weight`` over task (normalised over the tasks that ran,
        0 for a skipped task); ``average_rank`` (weighted average of the cluster ranks, lower is
        better) and ``average_score`` (weighted average of the scores rescaled to [0, 1]) over
        metric, NaN for a metric missing from a task that ran. Coordinates ``status`` over
        metric (``"primary"``, ``"baseline"``, ``"contrastive"``) and ``skipped`` over task
        (why a task did not run, ``""`` if it ran); ``lacks`` over (``task``, ``metric``): the
        units the metric lacks that the task's gold rates (``"en-de: system 'A'"``; ``""``
        for a complete metric). Metrics are ordered by ``average_rank``. ``attrs["notes"]``:
        the data's notes and one per metric and task that lacks units.

    Raises
    ------
    ValueError
        If a metric has no score for a unit a task's gold rates (unless `allow_incomplete`),
        or no task can run.

    Warns
    -----
    TaskSkippedWarning
        Once per skipped task.
    OpenDecisionsWarning
        With ``n_resamples="auto"``, once, naming the tasks whose decisions the cap left open
        (attrs ``n_resamples_used`` and ``n_open`` hold each task's draws and open decisions).

    Examples
    --------
    >>> import xcorrstat  # doctest: +SKIP
    >>> ds = xcorrstat.read_mtme("mt-metrics-eval-v2", "wmt23")  # doctest: +SKIP
    >>> res = xcorrstat.wmt.run_tasks(ds, xcorrstat.wmt.task_set("wmt23"), rng=0)  # doctest: +SKIP
    >>> res["average_rank"].to_series().head()  # doctest: +SKIP
    """
    data, tasks, n_resamples, alpha = _run_tasks_iv(data, tasks, n_resamples, alpha, allow_incomplete)
    lp_roles, roles_from = _resolve_roles(data, roles)
    seed = resolve_seed(rng)
    with warnings.catch_warnings():  # one warning below names the tasks with decisions left open
        warnings.filterwarnings("ignore", category=OpenDecisionsWarning)
        parts, skipped = _run_each(data, tasks, lp_roles, allow_incomplete, n_resamples=n_resamples, seed=seed,
                                   alpha=alpha, max_resamples=max_resamples)
    drawn = {str(p["task"].values[0]): p.attrs for p in parts}
    labels = [t.label for t in tasks]
    per_task = xr.concat(parts, dim="task", join="outer", coords="minimal", compat="override").reindex(task=labels)
    ran = np.array([label not in skipped for label in labels])
    total = float(sum(t.weight for t, r in zip(tasks, ran) if r)) or 1.0
    weight = xr.DataArray([t.weight / total if r else 0.0 for t, r in zip(tasks, ran)], dims="task",
                          coords={"task": labels})
    out = xr.merge([per_task, _averages(per_task, weight, tasks, np.flatnonzero(ran))])
    out["weight"] = weight
    rank = out["average_rank"].values
    out = out.isel(metric=np.lexsort((-np.nan_to_num(out["average_score"].values, nan=-np.inf),
                                      np.where(np.isnan(rank), np.inf, rank))))
    out = out.assign_coords(status=("metric", _status(out["metric"].values, tasks, lp_roles)),
                            skipped=("task", [skipped.get(label, "") for label in labels]))
    out.attrs = {"testset": str(data.attrs.get("testset", "")), "roles": roles_from, "n_resamples": n_resamples,
                 "rng": seed, "alpha": alpha, "pvalue": "fraction", "correction": "none",
                 "tasks": [repr(t) for t in tasks], "n_skipped": len(skipped), "allow_incomplete": allow_incomplete}
    add_notes(out.attrs, *_task_notes(data, drawn))
    out = _mark_lacks(out, drawn)
    if n_resamples == AUTO:  # per task (0 for a skipped one): the most draws of a pair, the decisions left open
        out.attrs.update(max_resamples=int(max_resamples),
                         n_resamples_used=[int(drawn.get(label, {}).get("n_resamples_used", 0)) for label in labels],
                         n_open=[int(drawn.get(label, {}).get("n_open", 0)) for label in labels])
        _warn_open(labels, out.attrs["n_open"], alpha, int(max_resamples))
    return out
