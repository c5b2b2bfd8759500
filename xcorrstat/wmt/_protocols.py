"""The official task lists of the WMT metrics tasks as data, expanded into :class:`~xcorrstat.wmt.Task`.

``protocols.json`` beside this module holds each year's protocol: its test set, default
language pairs, task templates and weighting (see its ``about`` text). :func:`protocol` gives
one as a plain dict to read or edit, and :func:`task_set` expands a protocol (by name, or an
edited dict) into tasks:

======================  ======================================================================
``wmt22``               the WMT22 evaluation notebook: accuracy over all pairs; per pair, overall and
                        per domain, system-level Pearson and Kendall and segment-level Pearson and
                        Kendall (no grouping, by system, by item), human translations in and out;
                        weights shared level by level (pairs, domains, levels, human, grouping,
                        statistic)
``wmt23``               ``tasks.WMT23``: accuracy over all pairs (weight: the number of pairs); per pair
                        system Pearson, segment Pearson, item-wise acc_eq
``wmt24-on-wmt23``      ``tasks.WMT24OnWMT23``: WMT24's tasks on the WMT23 data
``wmt24``, ``wmt25``    ``tasks.WMT24``, ``tasks.WMT25``: per pair soft pairwise accuracy and item-wise
                        acc_eq, equal weights
======================  ======================================================================
"""

from __future__ import annotations

import copy
import itertools
import json
import os
from collections.abc import Hashable, Mapping, Sequence
from functools import cache
from typing import Any

import numpy as np
import xarray as xr

from .._display import cut, did_you_mean
from ._specs import Task
from .._warn import one_call

__all__ = ["PROTOCOLS_FILE", "lp_domains", "lp_reference_count", "protocol", "protocols", "task_set"]

#: The bundled protocols.
PROTOCOLS_FILE = os.path.join(os.path.dirname(__file__), "protocols.json")

_TEMPLATE_KEYS = {"lps", "level", "statistic", "grouping", "domain", "human", "use_outliers", "weight"}


@cache
def _bundled() -> dict[str, Any]:
    with open(PROTOCOLS_FILE, encoding="utf-8") as fh:
        return json.load(fh)["protocols"]


def protocols() -> list[str]:
    """Names of the bundled protocols.

    Examples
    --------
    >>> protocols()
    ['wmt22', 'wmt23', 'wmt24', 'wmt24-on-wmt23', 'wmt25']
    """
    return sorted(_bundled())


@one_call
def protocol(name: str) -> dict[str, Any]:
    """A bundled protocol as a dict (a copy: edit it and pass it to :func:`task_set`).

    Examples
    --------
    >>> p = protocol("wmt24")
    >>> p["testset"], p["lps"], [t["statistic"] for t in p["tasks"]]
    ('wmt24', ['en-de', 'en-es', 'ja-zh'], ['soft_accuracy', 'acc_eq'])
    """
    if name not in _bundled():
        hint = did_you_mean(name, protocols()) if isinstance(name, str) else ""
        raise ValueError(f"protocol must be one of {protocols()} or a dict, got {cut(name)}{hint}")
    return copy.deepcopy(_bundled()[name])


# ------------------------------------------------------------------------------- the data's facts


def _lp_view(data: xr.Dataset, lp: str) -> xr.Dataset:
    if "lp" in data.dims:
        if lp not in data["lp"].values:
            have = [str(v) for v in data["lp"].values]
            raise ValueError(f"language pair {lp!r} is not in the data; it has {cut(have, 300)}{did_you_mean(lp, have)}")
        return data.sel(lp=lp)
    return data


def lp_domains(data: xr.Dataset, lp: str) -> list[str]:
    """The domains of a language pair's segments (the ``domain`` coordinate), sorted.

    Examples
    --------
    >>> ds = xr.Dataset(coords={"lp": ["en-de"], "domain": (("lp", "input"), [["news", "chat", "news"]])})
    >>> lp_domains(ds, "en-de")
    ['chat', 'news']
    """
    view = _lp_view(data, lp)
    if "domain" not in view.coords:
        return []
    values = np.asarray(view["domain"].values).ravel()
    return sorted({str(v) for v in values if isinstance(v, str) and v})


def lp_reference_count(data: xr.Dataset, lp: str) -> int:
    """How many references a language pair has (``n_references`` of :func:`~xcorrstat.read_mtme`).

    Examples
    --------
    >>> ds = xr.Dataset(coords={"lp": ["en-de", "zh-en"], "n_references": ("lp", [2, 1])})
    >>> lp_reference_count(ds, "zh-en")
    1
    """
    view = _lp_view(data, lp)
    if "n_references" in view.coords:
        return int(view["n_references"].values)
    return len(data.attrs.get("references", []))


# ------------------------------------------------------------------------------------- expansion


def _choices(key: str, value: Any, lp: str | None, spec: Mapping[str, Any], data: xr.Dataset | None) -> list[Any]:
    """The values a template field takes for one language pair (None: a pooled task)."""
    if key == "domain" and (value == "each" or (isinstance(value, list) and "each" in value)):
        listed = value if isinstance(value, list) else [value]
        out: list[Any] = []
        for v in listed:
            out.extend(_domains(lp, spec, data) if v == "each" else [v])
        return out
    if key == "human" and value == "human_lps":
        human_lps = set(spec.get("human_lps", []))
        return [bool(human_lps & set(spec["lps"] if lp is None else [lp]))]
    if key == "human" and value == "both":
        return [True, False] if _reference_count(lp, data) > 1 else [False]
    return list(value) if isinstance(value, list) else [value]


def _needs_data(what: str) -> ValueError:
    return ValueError(f"this protocol has {what}, which depend on the data: pass data= (the read_mtme Dataset)")


def _domains(lp: str | None, spec: Mapping[str, Any], data: xr.Dataset | None) -> list[str]:
    if data is None:
        raise _needs_data("a task per domain")
    return [d for lp_ in ([lp] if lp else spec["lps"]) for d in lp_domains(data, lp_)]


def _reference_count(lp: str | None, data: xr.Dataset | None) -> int:
    if data is None:
        raise _needs_data("human-translation tasks for the language pairs with several references")
    if lp is None:
        raise ValueError("human: 'both' needs one language pair per task ('lps': 'each')")
    return lp_reference_count(data, lp)


def _expand(template: Mapping[str, Any], lp: str | None, spec: Mapping[str, Any],
            data: xr.Dataset | None) -> list[dict[str, Any]]:
    """The task fields of one template for one language pair (``lp=None``: every pair, pooled)."""
    unknown = sorted(set(template) - _TEMPLATE_KEYS)
    if unknown:
        raise ValueError(f"task template {cut(template)}: unknown field {unknown[0]!r}; "
                         f"the fields are {sorted(_TEMPLATE_KEYS)}{did_you_mean(unknown[0], _TEMPLATE_KEYS)}")
    fields = {k: v for k, v in template.items() if k != "lps"}
    keys = list(fields)
    combos = itertools.product(*(_choices(k, fields[k], lp, spec, data) for k in keys))
    lps = tuple(spec["lps"]) if lp is None else (lp,)
    out = []
    for values in combos:
        task = dict(zip(keys, values), lps=lps)
        if task.get("weight") == "n_lps":
            task["weight"] = float(len(spec["lps"]))
        out.append(task)
    return out


def _expanded(spec: Mapping[str, Any], data: xr.Dataset | None) -> list[dict[str, Any]]:
    """Every task of a protocol in order: a pooled template where it stands, consecutive per-pair
    templates language pair by language pair."""
    out: list[dict[str, Any]] = []
    block: list[Mapping[str, Any]] = []

    def flush() -> None:
        for lp in spec["lps"]:
            for template in block:
                out.extend(_expand(template, lp, spec, data))
        block.clear()

    for template in spec["tasks"]:
        how = template.get("lps")
        if how == "each":
            block.append(template)
            continue
        if how != "pooled":
            raise ValueError(f"task template {cut(template)}: 'lps' must be 'each' or 'pooled'")
        flush()
        out.extend(_expand(template, None, spec, data))
    flush()
    return out


def _hierarchy_weights(tasks: list[dict[str, Any]], keys: Sequence[str], total: float = 1.0) -> list[float]:
    """Share ``total`` equally among the values of ``keys[0]``, then recursively (the WMT22 notebook's
    ``distribute_mass``)."""
    if not keys:
        return [total / len(tasks)] * len(tasks)
    groups: dict[Hashable, list[int]] = {}
    for k, t in enumerate(tasks):
        groups.setdefault(repr(t.get(keys[0])), []).append(k)
    weights = [0.0] * len(tasks)
    for members in groups.values():
        sub = _hierarchy_weights([tasks[k] for k in members], keys[1:], total / len(groups))
        for k, w in zip(members, sub):
            weights[k] = w
    return weights


def _weighted(tasks: list[dict[str, Any]], rule: Any) -> list[dict[str, Any]]:
    if rule in (None, "templates"):
        return tasks
    if isinstance(rule, Mapping) and isinstance(rule.get("hierarchy"), list):
        full = [Task(**t) for t in tasks]  # the fields as the tasks have them (default grouping filled in)
        keyed = [{k: getattr(t, k) for k in rule["hierarchy"]} for t in full]
        return [dict(t, weight=w) for t, w in zip(tasks, _hierarchy_weights(keyed, rule["hierarchy"]))]
    raise ValueError(f"protocol 'weights' must be 'templates' or {{'hierarchy': [fields]}}, got {cut(rule)}")


def _task_set_iv(spec: Any, lps: Any) -> dict[str, Any]:
    spec = protocol(spec) if isinstance(spec, str) else copy.deepcopy(spec)
    if not isinstance(spec, dict) or not isinstance(spec.get("tasks"), list) or not spec.get("lps"):
        raise ValueError("protocol must be a name or a dict with 'lps' and 'tasks' (see xcorrstat.wmt.protocol)")
    if lps is not None:
        chosen = [lps] if isinstance(lps, str) else list(lps)
        if not chosen or not all(isinstance(lp, str) and lp for lp in chosen) or len(set(chosen)) < len(chosen):
            raise ValueError(f"lps must name one or more distinct language pairs, got {cut(lps)}")
        spec["lps"] = chosen
    spec["lps"] = sorted(spec["lps"])
    return spec


@one_call
def task_set(protocol: str | Mapping[str, Any], lps: str | Sequence[str] | None = None, *,
             data: xr.Dataset | None = None, gold: str | None = None, primary: bool = True) -> list[Task]:
    """The task list of a WMT metrics task.

    Parameters
    ----------
    protocol : str or dict
        ``"wmt22"``, ``"wmt23"``, ``"wmt24"``, ``"wmt24-on-wmt23"``, ``"wmt25"``, or a protocol
        dict (from :func:`protocol`, edited, or your own).
    lps : str or sequence of str, optional
        Language pairs (sorted, as mt-metrics-eval does); default the protocol's.
    data : Dataset, optional
        The :func:`~xcorrstat.read_mtme` data, for the protocols whose tasks depend on it
        (WMT22: a task per domain, human translations where a language pair has several
        references).
    gold : str, optional
        Human score of every task; default each language pair's standard one (from its roles
        when the tasks run).
    primary : bool, default True
        Rank the primary metrics and baselines only (False: every metric).

    Returns
    -------
    list of Task
        In the protocol's order, with their weights (normalised when they run).

    Examples
    --------
    >>> [t.label for t in task_set("wmt23", ["en-de", "zh-en"])][:4]
    ['en-de,zh-en sys accuracy', 'en-de sys pearson', 'en-de seg pearson', 'en-de seg acc_eq']
    >>> [t.weight for t in task_set("wmt23", ["en-de", "zh-en"])][:2]
    [2.0, 1.0]
    """
    spec = _task_set_iv(protocol, lps)
    tasks = _weighted(_expanded(spec, data), spec.get("weights"))
    out = [Task(**t, gold=gold, primary=primary) for t in tasks]
    labels = [t.label for t in out]
    if len(set(labels)) < len(labels):
        raise ValueError("the protocol gives two tasks with the same fields; make its templates distinct")
    return out
