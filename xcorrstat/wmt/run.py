"""Run a list of WMT tasks on a :func:`~xcorrstat.read_mtme` Dataset: rankings, clusters, averages.

Each :class:`~xcorrstat.wmt.specs.Task` picks its scores (language pairs, level, gold,
reference, systems), ranks every metric by its statistic and draws the significance
clusters with the task's test (:func:`~xcorrstat.compare`, p-values as the fraction
of draws at least as extreme, no multiple-testing correction, as in mt-metrics-eval).
The overall ranking is the weighted average of each metric's cluster rank over the
tasks (mt-metrics-eval's ``AverageRanks``), beside the weighted average of its scores
rescaled to [0, 1] (``AverageCorrs``: correlations map ``[-1, 1]`` to ``[0, 1]``,
accuracies stay).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
import xarray as xr

from .._types import Seed
from ..mt.spatest import soft_pairwise_accuracy_test
from ..resampling.draws import resolve_seed
from ..significance.allpairs import compare
from ..significance.decisions import decide
from ..validation import check_positive_int, check_unit_interval
from .specs import Task

__all__ = ["GOLD", "run_tasks", "task_scores"]

#: Name of the gold (human) score in a task's Dataset.
GOLD = "gold"


def _lp_slice(ds: xr.Dataset, lp: str) -> xr.Dataset:
    if "lp" in ds.dims:
        if lp not in ds["lp"].values:
            raise ValueError(f"task language pair {lp!r} is not in the data; have {list(ds['lp'].values)}")
        return ds.sel(lp=lp, drop=True)
    have = ds.attrs.get("lps", [])
    if lp not in (have if isinstance(have, list) else [have]) and ds.coords.get("lp") is not None \
            and str(ds.coords["lp"].values) != lp:
        raise ValueError(f"task language pair {lp!r} is not in the data (it holds {have!r})")
    return ds.drop_vars("lp", errors="ignore")


def _metric_names(sub: xr.Dataset, level: str, ref: str) -> dict[Hashable, str]:
    """The task's metrics: variable -> display name (``[noref]`` marks a reference-free metric)."""
    names: dict[Hashable, str] = {}
    for k, v in sub.data_vars.items():
        a = v.attrs
        if a.get("role") != "metric" or a.get("level") != level or a.get("refs") not in (ref, "src", ""):
            continue
        base = str(a.get("basename", k))
        names[k] = base if a.get("refs") == ref else f"{base}[noref]"
    return names


def _systems(sub: xr.Dataset, task: Task, ref: str) -> np.ndarray:
    """Systems of the task: no reference the metrics use, no outlier; human translations only with
    ``task.human``."""
    systems = sub["system"].values
    human = sub["human_system"].values if "human_system" in sub.coords else np.zeros(len(systems), bool)
    keep = ~np.isin(systems.astype(str), [*ref.split("."), *task.outliers])
    if not task.human:
        keep &= ~human.astype(bool)
    return systems[keep]


def _one_lp(ds: xr.Dataset, task: Task, lp: str, ref: str, level: str) -> xr.Dataset:
    sub = _lp_slice(ds, lp)
    gold_name = task.gold if level == "seg" else f"{task.gold}.sys"
    if gold_name not in sub.data_vars:
        raise ValueError(f"task {task.label!r}: no {level}-level human score {task.gold!r} for {lp} "
                         f"(variable {gold_name!r} is not in the data)")
    names = _metric_names(sub, level, ref)
    if not names:
        raise ValueError(f"task {task.label!r}: no {level}-level metric scores with reference {ref!r} for {lp}")
    sub = sub.sel(system=_systems(sub, task, ref))
    gold = sub[gold_name]
    # a cell without a gold score is left out of everything, the metric's standardisation included
    out = xr.Dataset({new: sub[k].where(gold.notnull()) for k, new in names.items()})
    out[GOLD] = gold.assign_attrs(role="human")
    return out.drop_vars([c for c in out.coords if c not in out.dims], errors="ignore")


def task_scores(ds: xr.Dataset, task: Task) -> xr.Dataset:
    """The scores one task ranks: metrics under their display names and the gold as ``"gold"``.

    Segment-level tasks give ``(system, input)`` scores, system-level tasks system scores
    (a ``system`` dim only); an ``accuracy`` task gives its language pairs as the ``input``
    dim (one cell per language pair and system). Metrics must be present
    in every language pair of the task.

    Examples
    --------
    >>> import xarray as xr
    >>> from xcorrstat.wmt.specs import Task
    >>> ds = xr.Dataset({"mqm": (("system", "input"), [[1.0, 2.0], [3.0, 1.0], [2.0, 2.5]]),
    ...                  "BLEU-refA": (("system", "input"), [[0.1, 0.2], [0.3, 0.1], [0.2, 0.4]])},
    ...                 coords={"system": ["s1", "s2", "s3"]})
    >>> ds["mqm"].attrs.update(role="human", level="seg")
    >>> ds["BLEU-refA"].attrs.update(role="metric", level="seg", basename="BLEU", refs="refA")
    >>> sorted(task_scores(ds, Task(lps=("en-de",), level="seg", statistic="pearson", gold="mqm",
    ...                             refs=("refA",))).data_vars)
    ['BLEU', 'gold']
    """
    refs = task.refs or tuple("refA" for _ in task.lps)
    level = "seg" if task.level == "seg" or task.statistic == "soft_accuracy" else "sys"
    parts = [_one_lp(ds, task, lp, ref, level) for lp, ref in zip(task.lps, refs)]
    common = set.intersection(*(set(p.data_vars) for p in parts))
    parts = [p[[v for v in p.data_vars if v in common]] for p in parts]
    if task.statistic == "accuracy":  # one cell per (language pair, system): pairs form within a pair
        out = xr.concat(parts, dim="input", join="outer").assign_coords(input=list(task.lps))
        out = out.transpose("system", "input")
    else:
        out = parts[0]
    out.attrs.update(task=task.label)
    return out


#: How each statistic is computed and tested: compare's options.
_COMPARE: dict[tuple[str, str], dict[str, Any]] = {
    ("accuracy", "sys"): dict(level="input", method="kendall", variant="acc23", average="pairs",
                              permute=("system", "input")),
    ("pearson", "sys"): dict(level="system", method="pearson", permute="system"),
    ("pearson", "seg"): dict(level="global", method="pearson", permute=("system", "input")),
    ("kendall", "seg"): dict(level="global", method="kendall", variant="b", permute=("system", "input")),
    ("acc_eq", "seg"): dict(level="input", method="kendall", variant="acc23", swap="pairs", epsilon="calibrate"),
}

#: Score range of each statistic, for the average of scores rescaled to [0, 1].
_RANGE = {"accuracy": (0.0, 1.0), "acc_eq": (0.0, 1.0), "soft_accuracy": (0.0, 1.0),
          "pearson": (-1.0, 1.0), "kendall": (-1.0, 1.0)}


def _rank_task(scores: xr.Dataset, task: Task, *, n_resamples: int, seed: int, alpha: float,
               batch: int | None) -> xr.Dataset:
    """One task's ranking: ``correlation`` and ``cluster`` over metric, ``pvalue`` over metric pairs."""
    if task.statistic == "soft_accuracy":  # mt-metrics-eval's sign matrix (seed 4, 1,000 draws) for the statistic
        res = soft_pairwise_accuracy_test(scores, target=GOLD, n_resamples=n_resamples, rng=seed, batch=batch,
                                          draws="mt-metrics-eval")
        corr = res["soft_pairwise_accuracy"].rename("correlation")
        _, significant, cluster = decide(res["pvalue"], corr, res["delta"], correction=None, family="all",
                                         alternative="greater", alpha=alpha)
        return xr.Dataset({"correlation": corr, "cluster": cluster, "pvalue": res["pvalue"],
                           "significant": significant})
    options: dict[str, Any] = _COMPARE[(task.statistic, task.level)]
    res = compare(scores, target=GOLD, n_resamples=n_resamples, rng=seed, pvalue="fraction", correction=None,
                  alpha=alpha, batch=batch, **options)
    keep = ["correlation", "cluster", "pvalue", "significant"] + (["epsilon"] if "epsilon" in res else [])
    return res[keep].drop_vars([c for c in res.coords if c not in ("metric", "other_metric")], errors="ignore")


def _averages(per_task: xr.Dataset, weight: xr.DataArray, tasks: Sequence[Task]) -> xr.Dataset:
    """Weighted average cluster rank and rescaled score of the metrics present in every task."""
    coords = {"task": per_task["task"]}
    lo = xr.DataArray([_RANGE[t.statistic][0] for t in tasks], dims="task", coords=coords)
    hi = xr.DataArray([_RANGE[t.statistic][1] for t in tasks], dims="task", coords=coords)
    scaled = (per_task["correlation"] - lo) / (hi - lo)
    everywhere = per_task["cluster"].notnull().all("task") & (per_task["cluster"] > 0).all("task")
    rank = (per_task["cluster"] * weight).sum("task").where(everywhere)
    score = (scaled * weight).sum("task").where(everywhere)
    return xr.Dataset({"average_rank": rank, "average_score": score})


def _run_tasks_iv(data: Any, tasks: Any, n_resamples: Any, alpha: Any) -> tuple[xr.Dataset, list[Task], int, float]:
    if not isinstance(data, xr.Dataset):
        raise TypeError(f"data must be a Dataset from read_mtme, got {type(data).__name__}")
    tasks = [tasks] if isinstance(tasks, Task) else list(tasks)
    if not tasks or not all(isinstance(t, Task) for t in tasks):
        raise ValueError("tasks must be a non-empty list of xcorrstat.wmt.Task (see xcorrstat.wmt.task_set)")
    labels = [t.label for t in tasks]
    if len(set(labels)) != len(labels):
        raise ValueError(f"tasks must have distinct labels (set Task.name), got {labels}")
    if sum(t.weight for t in tasks) <= 0:
        raise ValueError("tasks: the weights sum to 0")
    return data, tasks, check_positive_int(n_resamples, "n_resamples"), check_unit_interval(alpha, "alpha")


def run_tasks(
    data: xr.Dataset,
    tasks: Task | Sequence[Task],
    *,
    n_resamples: int = 1000,
    rng: Seed = None,
    alpha: float = 0.05,
    batch: int | None = None,
) -> xr.Dataset:
    """Rank the metrics in every task, with significance clusters, and average the ranks over tasks.

    Parameters
    ----------
    data : Dataset
        From :func:`~xcorrstat.read_mtme` (an ``lp`` dim when several language pairs
        are read; ``seg`` and ``sys`` levels as the tasks need).
    tasks : Task or sequence of Task
        E.g. ``xcorrstat.wmt.task_set("wmt23")``.
    n_resamples : int, default 1000
        Draws of every task's significance test.
    rng : int, Generator, SeedSequence or None
        Seed; every task's draws come from it (recorded in attrs).
    alpha : float, default 0.05
        Significance level of the clusters (p-values are the fraction of draws at least
        as extreme; no multiple-testing correction, as in mt-metrics-eval).
    batch : int, optional
        Draws per batch (memory only; the numbers do not depend on it).

    Returns
    -------
    Dataset
        Over ``task`` and ``metric``: ``correlation`` (the task's statistic), ``cluster``
        (its significance-cluster rank, 1 = best; NaN where the task lacks the metric);
        ``pvalue`` and ``significant`` over (``task``, ``metric``, ``other_metric``);
        ``weight`` over task (normalised); ``average_rank`` (weighted average of the
        cluster ranks, lower is better) and ``average_score`` (weighted average of the
        scores rescaled to [0, 1]) over metric, NaN for a metric missing from a task.
        Metrics are ordered by ``average_rank``.

    Examples
    --------
    >>> import tempfile, xcorrstat  # doctest: +SKIP
    >>> ds = xcorrstat.read_mtme("mt-metrics-eval-v2", "wmt23")  # doctest: +SKIP
    >>> res = xcorrstat.wmt.run_tasks(ds, xcorrstat.wmt.task_set("wmt23"), rng=0)  # doctest: +SKIP
    >>> res["average_rank"].sortby(res["average_rank"]).to_series().head()  # doctest: +SKIP
    """
    data, tasks, n_resamples, alpha = _run_tasks_iv(data, tasks, n_resamples, alpha)
    seed = resolve_seed(rng)
    parts = [_rank_task(task_scores(data, t), t, n_resamples=n_resamples, seed=seed, alpha=alpha, batch=batch)
             for t in tasks]
    per_task = xr.concat(parts, dim="task", join="outer", coords="minimal", compat="override")
    per_task = per_task.assign_coords(task=[t.label for t in tasks])
    total = float(sum(t.weight for t in tasks))
    weight = xr.DataArray([t.weight / total for t in tasks], dims="task", coords={"task": per_task["task"]})
    out = xr.merge([per_task, _averages(per_task, weight, tasks)])
    out["weight"] = weight
    order = np.argsort(np.where(np.isnan(out["average_rank"].values), np.inf, out["average_rank"].values),
                       kind="stable")
    out = out.isel(metric=order)
    out.attrs = {"testset": str(data.attrs.get("testset", "")), "n_resamples": n_resamples, "seed": seed,
                 "alpha": alpha, "pvalue": "fraction", "correction": "none",
                 "tasks": [repr(t) for t in tasks]}
    return out
