"""The data model: normalise user data to labelled (metric, system, input) arrays.

Accepted forms
--------------
* a Dataset whose data variables are metric / human scores with dims
  ``(system, input, ...)`` -- what ``df.set_index(["system", "input"]).to_xarray()``
  gives for a wide table;
* a DataArray with dims ``(metric, system, input, ...)``, or a Dataset holding one
  such variable.

Extra dims (language pair, domain, annotator ...) are carried through as batch dims.
A variable whose ``attrs["role"] == "human"`` is a human judgment: it is never
picked as a metric by default; nor is a variable without a ``role`` whose name looks
like a human judgment (:func:`looks_human`), with a warning naming it.

A variable whose ``attrs["lower_is_better"]`` is true (TER, an error count) is negated
where the scores are split into metrics and target (:func:`xcorrstat._selection.split_scores`), so every
statistic reads it as higher-is-better; results record the declared scores in their
``lower_is_better`` attr.

System-level data -- scores with a ``system`` dim and no ``input`` dim, one score
per system -- are expanded to a length-1 ``input`` dim labelled
:data:`SYSTEM_LEVEL_INPUT` (``"all"``), so every system-level analysis runs on them
unchanged; the input, global and within-system levels, and resampling or
permuting inputs, are errors for such data.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
import xarray as xr

from ._display import cut, did_you_mean, name_list
from ._notes import notes_of
from ._warn import warn as warn_user

__all__ = [
    "INPUT", "LOWER_IS_BETTER", "METRIC", "SYSTEM", "SYSTEM_LEVEL_ATTR", "SYSTEM_LEVEL_INPUT", "TARGET",
    "as_dataset", "as_names", "check_finite", "check_level", "check_variable", "checked_finite", "default_metrics",
    "flag_like_scores", "guessed_out", "human_like_scores", "is_dask_array", "is_system_level", "left_out_note",
    "looks_human", "looks_like_flag", "scores_notes",
]

SYSTEM = "system"
INPUT = "input"
METRIC = "metric"
TARGET = "target"
#: The one ``input`` label given to system-level data (scores without an ``input`` dim).
SYSTEM_LEVEL_INPUT = "all"
#: Dataset attr marking system-level data that have extra dims besides ``system``.
SYSTEM_LEVEL_ATTR = "system_level"
#: Variable attr declaring a score where lower is better (TER, error counts): it is negated before analysis.
LOWER_IS_BETTER = "lower_is_better"

#: Names of human judgments (whole names, any case): WMT's and common rating columns, and names
#: starting with a rater's word (``human_``, ``expert_``, ``turker_`` ...) or ending in ``_human``.
_HUMAN_NAME = re.compile(
    r"(?:humans?|mqm|da|esa|psqm|sqm|wmt[-_](?:raw|z)|raw|z|ratings?|judg(?:e)?ments?|likert|gold)"
    r"|(?:humans?|expert|experts|turker|turkers|annotator|annotators|crowd|mturk|rater|raters|mqm|da|esa|gold)"
    r"[-_. ].*"
    r"|.*[-_. ](?:humans?|ratings?|judg(?:e)?ments?)",
    re.IGNORECASE,
)

#: Names of 0/1 markers of a unit (whole names, any case): ``is_*``, ``has_*``, ``*_outlier``, ``*_flag``.
_FLAG_NAME = re.compile(r"(?:is|has)[-_. ].+|(?:.*[-_. ])?(?:outliers?|flags?)", re.IGNORECASE)


def is_dask_array(value: object) -> bool:
    """Whether ``value`` is a Dask array, without importing Dask (about half a second in a fresh
    process): no Dask array exists before ``dask.array`` is imported.

    Examples
    --------
    >>> is_dask_array(np.zeros(3))
    False
    """
    module = sys.modules.get("dask.array")
    return module is not None and isinstance(value, module.Array)


def _is_dask(da: xr.DataArray) -> bool:
    return da.chunks is not None


def as_dataset(data: object) -> xr.Dataset:
    """Return a Dataset with one variable per score (splitting a ``metric`` dim).

    Raises
    ------
    TypeError
        If ``data`` is not a Dataset or DataArray.
    ValueError
        If the ``system`` or ``input`` dim is missing, or labels are duplicated.
    """
    if isinstance(data, xr.DataArray):
        if METRIC not in data.dims:
            raise ValueError(
                f"data: a DataArray needs a {METRIC!r} dim whose labels name the scores; "
                f"it has dims {tuple(data.dims)}"
            )
        labels = [str(v) for v in data[METRIC].values] if METRIC in data.coords else None
        if labels is None:
            raise ValueError(f"data: the {METRIC!r} dim needs a coordinate of score names")
        if len(set(labels)) != len(labels):
            raise ValueError(f"data: duplicate labels on the {METRIC!r} dim: {cut(sorted(labels), 300)}")
        ds = data.to_dataset(dim=METRIC)
        ds = ds.rename({k: str(k) for k in ds.data_vars})
    elif isinstance(data, xr.Dataset):
        stacked = [k for k in data.data_vars if METRIC in data.variables[k].dims]
        if stacked:
            if len(data.data_vars) != 1:
                raise ValueError(
                    f"data: a Dataset with a {METRIC!r} dim must hold exactly one variable, "
                    f"found {list(data.data_vars)}"
                )
            return as_dataset(data[stacked[0]])
        ds = data
    else:
        raise TypeError(
            f"data must be an xarray Dataset or DataArray (or a pandas DataFrame via the accessor), "
            f"got {type(data).__name__}"
        )
    if INPUT not in ds.dims and is_system_level(ds):
        ds = _expand_input(ds)
    for dim in (SYSTEM, INPUT):
        if dim not in ds.dims:
            raise ValueError(
                f"data: missing the {dim!r} dim; found dims {tuple(ds.dims)}. Rename yours with "
                f".rename({{'your_dim': {dim!r}}}) or build the data with xcorrstat.from_dataframe(..., {dim}=...)"
                + ("" if dim == SYSTEM else "; system-level scores (one per system) need only a 'system' dim, "
                   f"or the attr {SYSTEM_LEVEL_ATTR}=1 beside extra dims (from_dataframe(..., input=None) sets it)")
            )
        if dim in ds.indexes and not ds.indexes[dim].is_unique:
            dup = ds.indexes[dim][ds.indexes[dim].duplicated()].unique().tolist()[:5]
            raise ValueError(f"data: duplicate {dim!r} labels {cut(dup)}; each (system, input) must appear once")
        if ds.sizes[dim] == 0:
            raise ValueError(f"data: the {dim!r} dim is empty (0 {dim} labels); there is nothing to correlate")
    return ds


def is_system_level(data: object) -> bool:
    """Whether `data` holds system-level scores only: a ``system`` dim and no ``input`` dim
    (or the length-1 one :func:`as_dataset` adds).

    Data with dims other than ``system`` count only when marked with the Dataset attr
    ``system_level = 1`` (as :func:`xcorrstat.from_dataframe` does with ``input=None``):
    otherwise a misnamed input dim would silently pass for an extra batch dim.
    """
    if not isinstance(data, (xr.Dataset, xr.DataArray)):
        return False
    dims = set(data.dims) - {METRIC}
    marked = bool(data.attrs.get(SYSTEM_LEVEL_ATTR, 0))
    if SYSTEM not in dims:
        return False
    if INPUT in dims:  # already expanded by as_dataset
        return marked and data.sizes[INPUT] == 1
    return dims == {SYSTEM} or marked


def _expand_input(ds: xr.Dataset) -> xr.Dataset:
    """`ds` with every variable on ``system`` given a length-1 ``input`` dim right after it."""
    variables = {}
    for name in ds.data_vars:
        var = ds.variables[name]
        if SYSTEM in var.dims:
            dims = list(var.dims)
            dims.insert(dims.index(SYSTEM) + 1, INPUT)
            var = var.set_dims({INPUT: 1, **var.sizes}).transpose(*dims)
        variables[name] = var
    coords: dict[Hashable, Any] = {k: ds.variables[k] for k in ds.coords}
    coords[INPUT] = (INPUT, np.array([SYSTEM_LEVEL_INPUT], dtype=object))
    return xr.Dataset(variables, coords=coords, attrs={**ds.attrs, SYSTEM_LEVEL_ATTR: 1})


def check_level(data: object, *, level: str | Sequence[str] | None = None,
                along: str | Sequence[str] | None = None) -> None:
    """Raise ValueError when system-level `data` meets a level or resampled dim that needs inputs.

    `level` is a level name or a list of them; `along` a dim name or a list of the dims
    resampled or permuted. Either may be None (not checked). Resampling or permuting
    along ``input`` alone is refused; along both dims it is the same as along ``system``
    (the one input is always drawn / swapped with its system).
    """
    if not is_system_level(data):
        return
    levels = [level] if isinstance(level, str) else list(level or ())
    bad = [lev for lev in levels if lev != SYSTEM]
    if bad:
        raise ValueError(
            f"level={cut(level)}: the data hold system-level scores only (a {SYSTEM!r} dim, no {INPUT!r} dim), "
            f"so only level='system' applies; use level='system'"
        )
    dims = [along] if isinstance(along, str) else list(along or ())
    if INPUT in dims and SYSTEM not in dims:  # with both, resampling the one input is the identity
        raise ValueError(
            f"resampling/permuting along {cut(along)}: the data hold system-level scores only (a {SYSTEM!r} dim, "
            f"no {INPUT!r} dim), so there are no inputs to resample; use resample='system' / permute='system'"
        )


def as_names(value, argument: str) -> list[Hashable]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, Sequence) and not isinstance(value, bytes):
        names = list(value)
        if not names:
            raise ValueError(f"{argument} must name at least one variable, got an empty list")
        return names
    raise TypeError(f"{argument} must be a variable name or a list of names, got {type(value).__name__}")


def check_variable(ds: xr.Dataset, name: Hashable, argument: str) -> None:
    if name not in ds.data_vars:
        if isinstance(name, Hashable) and name in ds.coords and name not in ds.dims:
            raise ValueError(
                f"{argument}={cut(name)} is a label column, not a score: its values are not numbers, so it was "
                f"kept as a coordinate along {tuple(ds.coords[name].dims)}; name a numeric score"
            )
        raise ValueError(f"{argument}={cut(name)} is not a score in the data; available: "
                         f"{name_list(ds.data_vars, near=name)}{did_you_mean(name, ds.data_vars)}")
    var = ds.variables[name]
    if var.dtype.kind not in "biuf":
        raise TypeError(f"{argument}={cut(name)} has non-numeric dtype {var.dtype}; scores must be numbers")
    missing = [d for d in (SYSTEM, INPUT) if d not in var.dims]
    if missing:
        raise ValueError(f"{argument}={cut(name)} lacks dims {missing}; every score needs (system, input)")
    if not is_dask_array(var.data):  # lazy scores are checked where they are computed
        check_finite(np.asarray(var.data), f"{argument}={cut(name)}")


def check_finite(values: np.ndarray, what: str) -> None:
    """Raise ValueError if ``values`` holds +/-inf (NaN marks a missing cell and is allowed)."""
    if values.dtype.kind == "f":
        count = int(np.isinf(values).sum())
        if count:
            raise ValueError(f"{what} has {count} infinite value(s); use NaN for a missing score")


def _finite_block(values: np.ndarray, what: str) -> np.ndarray:
    check_finite(values, what)
    return values


def checked_finite(da: xr.DataArray, what: str) -> xr.DataArray:
    """``da`` after :func:`check_finite`: checked now if eager; if Dask-backed, each block is checked
    when it is computed (the data stay lazy)."""
    if da.chunks is None:
        check_finite(da.values, what)
        return da
    return da.copy(data=da.data.map_blocks(_finite_block, what, dtype=da.dtype))


def looks_human(name: Hashable) -> bool:
    """Whether a score's name looks like a human judgment (``human_*``, ``*_human``, ``expert_*``,
    ``turker_*``, ``annotator_*``, ``mqm``, ``da``, ``esa``, ``rating`` ...).

    Examples
    --------
    >>> [looks_human(n) for n in ("human_fluency", "MQM", "expert_relevance", "bleu", "comet-da")]
    [True, True, True, False, False]
    """
    return bool(_HUMAN_NAME.fullmatch(str(name)))


def looks_like_flag(name: Hashable) -> bool:
    """Whether a score's name looks like a 0/1 marker of its units rather than a metric (``is_outlier``,
    ``has_reference``, ``outlier``, ``qa_flag`` ...).

    Examples
    --------
    >>> [looks_like_flag(n) for n in ("is_outlier", "has_ref", "outlier", "qa_flag", "bleu", "isomorph")]
    [True, True, True, True, False, False]
    """
    return bool(_FLAG_NAME.fullmatch(str(name)))


def _candidates(ds: xr.Dataset, targets: Sequence[Hashable]) -> list[Hashable]:
    variables = ds.variables
    return [k for k in ds.data_vars for v in (variables[k],)
            if k not in targets and v.attrs.get("role") not in ("human", "flag") and v.dtype.kind in "biuf"
            and SYSTEM in v.dims and INPUT in v.dims]


def human_like_scores(ds: xr.Dataset, targets: Sequence[Hashable]) -> list[Hashable]:
    """The scores that would be metrics by default but have no ``role`` attr and a human judgment's
    name (:func:`looks_human`); empty when they are all the metrics there are."""
    candidates = _candidates(ds, targets)
    found = [k for k in candidates if "role" not in ds.variables[k].attrs and looks_human(k)]
    return found if len(found) < len(candidates) else []


def flag_like_scores(ds: xr.Dataset, targets: Sequence[Hashable]) -> list[Hashable]:
    """The scores that would be metrics by default but have no ``role`` attr and a marker's name
    (:func:`looks_like_flag`; not a human judgment's); empty when they are all the metrics there are.
    By name only, as for human judgments, so that lazy and loaded data have the same metrics."""
    candidates = [k for k in _candidates(ds, targets) if k not in set(human_like_scores(ds, targets))]
    found = [k for k in candidates if "role" not in ds.variables[k].attrs and looks_like_flag(k)]
    return found if len(found) < len(candidates) else []


def guessed_out(ds: xr.Dataset, targets: Sequence[Hashable]) -> list[tuple[str, list[Hashable], str]]:
    """The scores the default metrics leave out by a guess from their names, by kind: ``(role, names,
    what the names look like)`` for human judgments (:func:`human_like_scores`) and markers of units
    (:func:`flag_like_scores`), each kind with names only."""
    kinds = [("human", human_like_scores(ds, targets), "human judgments"),
             ("flag", flag_like_scores(ds, targets), "markers of units (is_*, has_*, *_outlier, *_flag)")]
    return [kind for kind in kinds if kind[1]]


def default_metrics(ds: xr.Dataset, targets: Sequence[Hashable], *, warn: bool = True) -> list[Hashable]:
    """Every numeric score that is neither a target nor a human judgment: marked ``role="human"``, or
    without a ``role`` and named like one (:func:`human_like_scores`), or named like a marker of units
    (:func:`flag_like_scores`), left out with a warning unless ``warn=False``; the results' notes name them
    too, :func:`left_out_note`."""
    left_out: set[Hashable] = set()
    for _, names, what in guessed_out(ds, targets):
        left_out.update(names)
        if warn:
            warn_user(f"left out of the metrics, as their names look like {what}: {name_list(names)}; to "
                      "analyse them as metrics pass metrics=[...] or set ds[name].attrs['role'] = 'metric'",
                      UserWarning)
    return [k for k in _candidates(ds, targets) if k not in left_out]


def _why_left_out(ds: xr.Dataset, name: Hashable, looks: Sequence[Hashable]) -> str:
    var = ds.variables[name]
    if var.attrs.get("role") == "flag" or (name not in looks and looks_like_flag(name)
                                            and var.dtype.kind in "biuf" and "role" not in var.attrs):
        return "named like a marker of units"
    if name in looks or var.attrs.get("role_from") == "name":  # the command line marks those it finds
        return "named like a human judgment"
    if var.dtype.kind not in "biuf":
        return "not numeric"
    return "not per system and input"


def left_out_note(data: object, target: Hashable | Sequence[Hashable],
                  metrics: Hashable | Sequence[Hashable] | None) -> str | None:
    """The note naming every score of ``data`` that the default metrics leave out, and why; None when
    ``metrics`` names them or nothing is left out. Scores the data (or the user) mark
    ``role="human"`` are human judgments by declaration, not left out by a guess: they are not named.

    Examples
    --------
    >>> ds = xr.Dataset({"human": ("system", [1., 2., 3.]), "human_raw": ("system", [1., 3., 2.]),
    ...                  "bleu": ("system", [.1, .2, .3]), "team": ("system", ["a", "b", "c"])})
    >>> left_out_note(ds, "human", None)
    "left out of the metrics: 'human_raw' (named like a human judgment), 'team' (not numeric); to rank them as metrics name every metric (metrics=[...], --metrics) or set their attr role='metric'"
    """
    ds = as_dataset(data)
    targets = as_names(target, "target")
    for name in targets:
        check_variable(ds, name, "target")
    if metrics is not None:
        return None
    looks = human_like_scores(ds, targets)
    flags = flag_like_scores(ds, targets)
    kept = [k for k in _candidates(ds, targets) if k not in looks and k not in flags]
    declared = [k for k in ds.data_vars  # marked human by the data or the user, not by a guess of ours
                if ds.variables[k].attrs.get("role") == "human" and ds.variables[k].attrs.get("role_from") != "name"]
    out = [k for k in ds.data_vars if k not in targets and k not in kept and k not in declared]
    if not out:
        return None
    named = ", ".join(f"{cut(k, 200)} ({_why_left_out(ds, k, looks)})" for k in out)
    return (f"left out of the metrics: {named}; to rank them as metrics name every metric "
            "(metrics=[...], --metrics) or set their attr role='metric'")


def scores_notes(data: object, target: Hashable | Sequence[Hashable],
                 metrics: Hashable | Sequence[Hashable] | None) -> tuple[str, ...]:
    """The notes an analysis of ``data`` carries: the data's own, then the scores left out of the
    default metrics (:func:`left_out_note`)."""
    left_out = left_out_note(data, target, metrics)
    return (*notes_of(data), *([left_out] if left_out else []))
