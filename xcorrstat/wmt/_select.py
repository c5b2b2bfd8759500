"""The scores one task ranks: its language pairs, level, domain, systems, metrics and gold.

The selection follows mt-metrics-eval's ``GetCorrelations``: the systems are those of the
language pair minus the references the metrics use, minus the outlier systems (unless the task
uses them) and the human translations (unless it counts them), and minus every system without a
single gold score at the task's level; the metrics are those that use only the task's references
(reference-free ones always), and with ``primary`` only the ranked ones of the language pair's
roles. A task whose inputs are absent raises :class:`TaskSkipped`, saying why.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping

import numpy as np
import xarray as xr

from ._roles import Roles
from ._specs import Task

__all__ = ["GOLD", "LpView", "TaskSkipped", "file_level", "gold_name", "lp_views", "scores_of", "task_scores"]

#: Name of the gold (human) score in a task's Dataset.
GOLD = "gold"


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
        raise TaskSkipped(f"no {level}-level human scores {name!r} for {lp}")
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


def task_scores(ds: xr.Dataset, task: Task, roles: Mapping[str, Roles] | None = None) -> xr.Dataset:
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

    Raises
    ------
    TaskSkipped
        If the data lack what the task needs (the message says what).

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
    return scores_of(lp_views(ds, task.lps), {str(r) for r in ds.attrs.get("references", [])}, task, roles)


def scores_of(views: dict[str, LpView], all_refs: set[str], task: Task,
              roles: Mapping[str, Roles] | None = None) -> xr.Dataset:
    """:func:`task_scores` on language pairs already sliced (:func:`lp_views`); ``all_refs``: the data's
    references (what a metric's ``-all`` means)."""
    parts = [_one_lp(views, all_refs, task, k, (roles or {}).get(lp, Roles())) for k, lp in enumerate(task.lps)]
    common = set.intersection(*(set(p.data_vars) for p in parts))
    parts = [p[[v for v in p.data_vars if v in common]] for p in parts]
    if task.statistic == "accuracy":  # one cell per (language pair, system): pairs form within a pair
        out = xr.concat(parts, dim="input", join="outer").assign_coords(input=list(task.lps))
        out = out.transpose("system", "input")
    else:
        out = parts[0]
    out.attrs.update(task=task.label)
    return out
