"""The scores one task ranks: its language pairs, level, domain, systems, metrics and gold.

The selection follows mt-metrics-eval's ``GetCorrelations``: the systems are those of the
language pair minus the references the metrics use, minus the outlier systems (unless the task
uses them) and the human translations (unless it counts them), and minus every system without a
single gold score at the task's level; the metrics are those that use only the task's references
(reference-free ones always), and with ``primary`` only the ranked ones of the language pair's
roles. A task whose inputs are absent raises :class:`TaskSkipped`, saying why.

A metric that has no score for a unit the gold rates (a system, a segment: a cell of the task)
is an error, as mt-metrics-eval refuses such a metric file; with ``allow_incomplete=True`` every
metric of the task is ranked on the units all of them score (the others lose their gold score)
and the task's attrs ``lacks`` say, per metric, which units it lacks.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping

import numpy as np
import xarray as xr

from .._display import did_you_mean
from .._io.mtme_checks import ALLOW_ARGUMENT
from ._roles import Roles
from ._specs import Task

__all__ = ["ALLOW_INCOMPLETE", "GOLD", "LpView", "TaskSkipped", "file_level", "gold_name", "lp_views", "scores_of",
           "task_scores"]

#: Name of the gold (human) score in a task's Dataset.
GOLD = "gold"

#: How to rank a metric that lacks units anyway; ends the message that refuses it.
ALLOW_INCOMPLETE = (f"pass {ALLOW_ARGUMENT} to rank every metric of the task on the units all of them score, "
                    "the metric marked")

#: System names shown in a message at most.
_SHOWN = 5


class TaskSkipped(ValueError):
    """A task whose inputs the data lack (no score files at its level, no human scores, ...)."""


def file_level(task: Task) -> str:
    """The score files a task reads: ``"seg"``, ``"sys"`` or ``"domain"`` (system level in a domain)."""
    if task.level == "seg" or task.statistic == "soft_accuracy":
        return "seg"
    return "domain" if task.domain is not None else "sys"


def gold_name(task: Task, roles: Roles) -> str | None:
    """The human score of a task in one language pair: its own, else the standard one of its level."""
    return task.gold or roles.std_gold.get(task.level) or roles.std_gold.get(file_level(task))


def _lp_slice(ds: xr.Dataset, lp: str) -> xr.Dataset:
    if "lp" in ds.dims:
        if lp not in ds["lp"].values:
            raise TaskSkipped(f"language pair {lp} is not in the data")
        return ds.sel(lp=lp, drop=True)
    held = ds.coords["lp"].values if "lp" in ds.coords else None
    if held is not None and np.ndim(held) == 0 and str(held) != lp:
        raise TaskSkipped(f"language pair {lp} is not in the data (it holds {held})")
    return ds.drop_vars("lp", errors="ignore")


def _metric_refs(refs: str, all_refs: set[str]) -> set[str]:
    """The references a metric's ``refs`` attr names: ``src`` none, ``all`` every one."""
    if refs == "src":
        return set()
    return set(all_refs) if refs == "all" else set(refs.split("."))


class LpView:
    """One language pair's scores, with the variables that hold any score there (computed once)."""

    def __init__(self, ds: xr.Dataset, lp: str) -> None:
        self.lp = lp
        self.data = _lp_slice(ds, lp)
        variables = self.data.variables  # Variables, not DataArrays: no coordinates built per score
        self.filled = {k for k in self.data.data_vars if not np.isnan(np.asarray(variables[k].values, float)).all()}


def lp_views(ds: xr.Dataset, lps: Iterable[str]) -> dict[str, LpView]:
    """A :class:`LpView` of each language pair the data hold (the others are left out: their tasks skip)."""
    out = {}
    for lp in dict.fromkeys(lps):
        try:
            out[lp] = LpView(ds, lp)
        except TaskSkipped:
            continue
    return out


def _metric_names(view: LpView, level: str, main_refs: set[str], task: Task, roles: Roles,
                  all_refs: set[str]) -> dict[Hashable, str]:
    """The task's metrics: variable -> display name (``[noref]`` marks a reference-free metric)."""
    names: dict[Hashable, str] = {}
    ranked = roles.ranked if task.primary else frozenset()
    variables = view.data.variables
    for k in view.data.data_vars:
        a = variables[k].attrs
        if a.get("role") != "metric" or a.get("level") != level:
            continue
        used = _metric_refs(str(a.get("refs", "")), all_refs)
        base = str(a.get("basename", k))
        if not used <= main_refs or (ranked and base not in ranked) or k not in view.filled:
            continue  # another reference, not ranked, or no score file for this language pair
        names.setdefault(k, base if used else f"{base}[noref]")
    return names


def _systems(sub: xr.Dataset, gold: xr.DataArray, task: Task, roles: Roles, main_refs: set[str]) -> np.ndarray:
    """The systems of one language pair (see the module docstring)."""
    systems = sub["system"].values
    names = systems.astype(str)
    human = sub["human_system"].values.astype(bool) if "human_system" in sub.coords else np.zeros(len(systems), bool)
    keep = ~np.isin(names, list(main_refs))
    if not task.use_outliers:
        keep &= ~np.isin(names, list(roles.outliers))
    if not task.human:
        keep &= ~human
    other = [d for d in gold.dims if d != "system"]
    rated = gold.notnull().any(other).values if other else gold.notnull().values
    return systems[keep & rated]


def _in_domain(sub: xr.Dataset, task: Task, level: str, lp: str) -> xr.Dataset:
    """The segments (or the domain-level scores) of the task's domain."""
    if task.domain is None:
        return sub
    if level == "domain":
        if "domain_name" not in sub.dims or task.domain not in sub["domain_name"].values:
            raise TaskSkipped(f"no domain-level scores of domain {task.domain!r} for {lp}")
        return sub.sel(domain_name=task.domain, drop=True)
    if "domain" not in sub.coords:
        raise TaskSkipped(f"no domains for {lp} (documents file not read)")
    inside = (sub["domain"] == task.domain).values
    if not inside.any():
        raise TaskSkipped(f"no segment of domain {task.domain!r} in {lp}")
    return sub.isel(input=np.flatnonzero(inside))


def _one_lp(views: dict[str, LpView], all_refs: set[str], task: Task, k: int, roles: Roles) -> xr.Dataset:
    lp = task.lps[k]
    level = file_level(task)
    name = gold_name(task, roles)
    if name is None:
        raise TaskSkipped(f"no standard {task.level}-level human score for {lp} (name one with Task.gold)")
    if lp not in views:
        raise TaskSkipped(f"language pair {lp} is not in the data")
    sub = views[lp].data
    var = name if level == "seg" else f"{name}.{level}"
    if var not in views[lp].filled:
        humans = [str(v.attrs.get("mtme_name", k)) for k, v in sub.data_vars.items()
                  if v.attrs.get("role") == "human" and v.attrs.get("level") == level]
        raise TaskSkipped(f"no {level}-level human scores {name!r} for {lp}"
                          f"{did_you_mean(name, humans, parenthesised=True)}")
    ref = task.refs[k] if task.refs is not None else roles.std_ref
    main_refs = set(ref.split("."))
    names = _metric_names(views[lp], level, main_refs, task, roles, all_refs)
    if not names:
        raise TaskSkipped(f"no {level}-level metric scores for {lp} with reference {ref}")
    sub = _in_domain(sub, task, level, lp)
    systems = _systems(sub, sub[var], task, roles, main_refs)
    if len(systems) < 2:
        raise TaskSkipped(f"fewer than 2 systems with {name!r} scores in {lp}")
    sub = sub[[*names, var]].sel(system=systems)
    gold = sub.variables[var]
    missing = np.isnan(np.asarray(gold.values, dtype=np.float64))
    # a cell without a gold score is left out of everything, the metric's standardisation included
    scores = {new: (gold.dims, np.where(missing, np.nan, sub.variables[old].transpose(*gold.dims).values),
                    {"role": "metric"})  # a metric file is a metric, whatever its name looks like
              for old, new in names.items()}
    out = xr.Dataset(scores, coords={d: sub[d] for d in gold.dims})
    out[GOLD] = (gold.dims, gold.values, {"role": "human", "name": name})
    return out


def _lacked(systems: np.ndarray, hole: np.ndarray) -> str:
    """The units of a (system[, item]) cell mask: ``system 'A'``, ``3 scores of systems 'A', 'B'``."""
    rows = hole.reshape(len(systems), -1)
    names = [repr(str(s)) for s in systems[rows.any(axis=1)]]
    shown = ", ".join(names[:_SHOWN]) + (f" and {len(names) - _SHOWN} more" if len(names) > _SHOWN else "")
    plural = "s" if len(names) > 1 else ""
    if hole.ndim == 1:
        return f"system{plural} {shown}"
    n = int(rows.sum())
    return f"{n} score{'s' if n > 1 else ''} of system{plural} {shown}"


def _common_ground(part: xr.Dataset, lp: str, task: Task, allow: bool, lacks: dict[str, list[str]]) -> xr.Dataset:
    """One language pair's scores on the cells every metric scores where the gold rates them.

    A metric without a score where the gold has one is refused (ValueError), unless `allow`:
    then the cells any metric lacks lose their gold score, and ``lacks`` gets, per metric, the
    units it lacks.
    """
    names = [v for v in part.data_vars if v != GOLD]
    gold = part.variables[GOLD]
    rated = ~np.isnan(np.asarray(gold.values, dtype=np.float64))
    if not names:
        return part
    stack = np.stack([np.asarray(part.variables[m].transpose(*gold.dims).values, dtype=np.float64) for m in names])
    holes = np.isnan(stack) & rated
    short = np.flatnonzero(holes.reshape(len(names), -1).any(axis=1))
    if not short.size:
        return part
    systems = part["system"].values
    if not allow:
        k = int(short[0])
        raise ValueError(f"task {task.label!r}: metric {names[k]} has no score for {_lacked(systems, holes[k])} in "
                         f"{lp}, which the gold {part[GOLD].attrs.get('name', GOLD)!r} rates; {ALLOW_INCOMPLETE}")
    for j in short:
        lacks.setdefault(str(names[j]), []).append(f"{_lacked(systems, holes[j])} ({lp})")
    keep = rated & ~holes.any(axis=0)
    out = part.copy()
    for name in [*names, GOLD]:
        var = out.variables[name].transpose(*gold.dims)
        out[name] = (gold.dims, np.where(keep, var.values, np.nan), var.attrs)
    return out


def task_scores(ds: xr.Dataset, task: Task, roles: Mapping[str, Roles] | None = None, *,
                allow_incomplete: bool = False) -> xr.Dataset:
    """The scores one task ranks: metrics under their display names and the gold as ``"gold"``.

    Segment-level tasks (and ``soft_accuracy``) give ``(system, input)`` scores, system-level
    tasks system scores (a ``system`` dim only); an ``accuracy`` task gives its language pairs
    as the ``input`` dim (one cell per language pair and system). A pooled task keeps the
    metrics present in every one of its language pairs.

    Parameters
    ----------
    ds : Dataset
        From :func:`~xcorrstat.read_mtme`.
    task : Task
    roles : mapping of str to Roles, optional
        Each language pair's roles (default: none known, as :class:`Roles` ``()``).
    allow_incomplete : bool, default False
        Rank a metric that lacks a score the gold has: every metric on the units all of them
        score (attrs ``lacks``: the units each such metric lacks), instead of a ValueError.

    Raises
    ------
    TaskSkipped
        If the data lack what the task needs (the message says what).
    ValueError
        If a metric has no score for a unit the gold rates, unless `allow_incomplete`.

    Examples
    --------
    >>> import xarray as xr
    >>> ds = xr.Dataset({"mqm": (("system", "input"), [[1.0, 2.0], [3.0, 1.0], [2.0, 2.5]]),
    ...                  "BLEU-refA": (("system", "input"), [[0.1, 0.2], [0.3, 0.1], [0.2, 0.4]])},
    ...                 coords={"system": ["s1", "s2", "s3"]})
    >>> ds["mqm"].attrs.update(role="human", level="seg")
    >>> ds["BLEU-refA"].attrs.update(role="metric", level="seg", basename="BLEU", refs="refA")
    >>> sorted(task_scores(ds, Task(lps=("en-de",), level="seg", statistic="pearson", gold="mqm")).data_vars)
    ['BLEU', 'gold']
    """
    return scores_of(lp_views(ds, task.lps), {str(r) for r in ds.attrs.get("references", [])}, task, roles,
                     allow_incomplete=allow_incomplete)


def scores_of(views: dict[str, LpView], all_refs: set[str], task: Task,
              roles: Mapping[str, Roles] | None = None, *, allow_incomplete: bool = False) -> xr.Dataset:
    """:func:`task_scores` on language pairs already sliced (:func:`lp_views`); ``all_refs``: the data's
    references (what a metric's ``-all`` means)."""
    parts = [_one_lp(views, all_refs, task, k, (roles or {}).get(lp, Roles())) for k, lp in enumerate(task.lps)]
    common = set.intersection(*(set(p.data_vars) for p in parts))
    lacks: dict[str, list[str]] = {}
    parts = [_common_ground(p[[v for v in p.data_vars if v in common]], lp, task, allow_incomplete, lacks)
             for p, lp in zip(parts, task.lps)]
    if task.statistic == "accuracy":  # one cell per (language pair, system): pairs form within a pair
        out = xr.concat(parts, dim="input", join="outer").assign_coords(input=list(task.lps))
        out = out.transpose("system", "input")
    else:
        out = parts[0]
    out.attrs.update(task=task.label)
    if lacks:
        out.attrs["lacks"] = {name: "; ".join(units) for name, units in lacks.items()}
    return out
