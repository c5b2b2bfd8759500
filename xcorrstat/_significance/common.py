"""Comparisons on common ground: every metric compared on the cells that all of them score.

A metric with missing cells, correlated on its own cells, is judged on other units than its rivals:
leaving out its worst system or its worst segments raises its correlation, its rank and its
significance. :func:`common_ground` keeps every compared metric's scores on the cells where every one
of them has a score (as mt-metrics-eval compares metrics, whose scores must cover the same segments
and systems), and says in a note which metric lacks which units. A metric with no score at all in a
label of the extra dims (a language pair it did not take part in) does not narrow the others there:
its own results there are undefined whatever the cells.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np
import xarray as xr

from .._display import cut, name_list
from .._notes import notes_of
from .._schema import INPUT, METRIC, SYSTEM, TARGET, as_dataset, default_metrics, is_dask_array
from .._selection import select_scores, stack_scores

__all__ = ["common_ground", "common_scores", "pair_notes"]

#: The note of Dask data on common ground: what was done, without the counts a pass over the data would give.
LAZY_COMMON_NOTE = ("common ground on Dask data: any rated cell some metric lacks is left out for every metric; "
                    "which metrics lack cells is not counted before .compute() (.load() the data first "
                    "to have each one named)")
#: The same with ``common_cells=False``.
LAZY_OWN_NOTE = ("each metric on its own cells (common_cells=False) on Dask data: which metrics lack rated "
                 "cells is not counted before .compute() (.load() the data first to have each one named)")

#: The note of a two-metric test on Dask data.
LAZY_PAIR_NOTE = ("a two-metric test on Dask data: each metric on its own cells; whether one lacks rated cells "
                  "the other scores is not checked before .compute() (.load() the data first to have it named)")


def _names(ds: xr.Dataset, targets: list[Hashable], metrics: Hashable | Sequence[Hashable] | None) -> list[Hashable]:
    default = default_metrics(ds, targets, warn=False) if metrics is None else []
    return select_scores(ds, metrics, default, "metrics")


def _lacking(x: xr.DataArray, z: xr.DataArray) -> tuple[xr.DataArray, xr.DataArray, xr.DataArray]:
    """Per metric its cells missing where the target is rated (none where the metric has no score in a
    whole label of the extra dims), the rated cells and the common cells: rated cells every metric scores."""
    rated = z.notnull()
    if TARGET in rated.dims:
        rated = rated.any(TARGET)
    present = x.notnull()
    absent = ~present.any([SYSTEM, INPUT])  # no score in this label of the extra dims
    lacks = ~present & ~absent & rated
    return lacks, rated, rated & ~lacks.any(METRIC)


def _note(lacks: xr.DataArray, common: xr.DataArray, rated: xr.DataArray, common_cells: bool,
          own: str = "common_cells=False") -> str:
    """What each metric lacks (its cells, the systems it lacks entirely) and what that did."""
    other = [d for d in rated.dims if d != SYSTEM]
    has_system = rated.any(other) if other else rated
    counts = lacks.sum([d for d in lacks.dims if d != METRIC]).values
    whole = ((lacks | ~rated).all([d for d in lacks.dims if d not in (METRIC, SYSTEM)]) & has_system)
    whole = whole.transpose(METRIC, SYSTEM).values
    systems = np.asarray(lacks[SYSTEM].values)
    parts = []
    for k, (name, count) in enumerate(zip(lacks[METRIC].values, counts)):
        if not count:
            continue
        lost = [str(s) for s in systems[np.asarray(whole[k], dtype=bool)]]
        where = f", every cell of system {name_list(lost, width=600)}" if lost else ""
        parts.append(f"{cut(str(name), 200)} lacks {int(count)} cell{'' if count == 1 else 's'}{where}")
    n_common, n_rated = int(common.sum()), int(rated.sum())
    if not common_cells:
        return (f"each metric on its own cells ({own}), not on common ground: of {n_rated} rated "
                f"cells, {'; '.join(parts)}; its n counts the units it used")
    return (f"common ground: every metric compared on the {n_common} of {n_rated} rated cells that all "
            f"of them score; {'; '.join(parts)}; so those cells are left out for every metric "
            "(common_cells=False correlates each metric on its own cells)")


def common_scores(x: xr.DataArray, z: xr.DataArray, *, common_cells: bool = True,
                  mask_target: bool = False) -> tuple[xr.DataArray, xr.DataArray, str | None]:
    """The metric scores ``x`` (``metric``, ``system``, ``input``, ...) kept on the cells every metric
    scores where the target ``z`` is rated, the target, and the note saying what each metric lacks; ``x``
    and ``z`` themselves and None when no metric lacks a rated cell. With ``common_cells=False`` ``x`` and
    ``z`` themselves, and the note. ``mask_target``: the target is left out of the other cells too, where
    no metric has a score any more: the same correlations (a cell counts only where both scores are),
    and the kernels skip those cells outright; not for a statistic that sees the target's z-scores."""
    lacks, rated, common = _lacking(x, z)
    if is_dask_array(x.data) or is_dask_array(z.data):
        # Dask data: the common ground goes into the graph (nothing is computed before .compute()), and
        # the note cannot count what each metric lacks (that would take a pass over the data first):
        # it says what was done, and how to have it counted
        if not common_cells:
            return x, z, LAZY_OWN_NOTE
        keep = common | ~rated
        if mask_target:
            z = z.where(keep).transpose(*z.dims, ...).assign_attrs(z.attrs)
        return x.where(keep).transpose(*x.dims, ...).assign_attrs(x.attrs), z, LAZY_COMMON_NOTE
    if not bool(lacks.any()):
        return x, z, None
    note = _note(lacks, common, rated, common_cells)
    if not common_cells:
        return x, z, note
    keep = common | ~rated  # cells without a target score count for no metric anyway
    if mask_target:
        z = z.where(keep).transpose(*z.dims, ...).assign_attrs(z.attrs)
    return x.where(keep).transpose(*x.dims, ...).assign_attrs(x.attrs), z, note


def common_ground(data: xr.Dataset | xr.DataArray, *, target: Hashable | Sequence[Hashable],
                  metrics: Hashable | Sequence[Hashable] | None, common_cells: bool = True,
                  mask_target: bool = False) -> tuple[xr.Dataset | xr.DataArray, str | None]:
    """:func:`common_scores` on the scores of a Dataset: ``data`` with every metric kept on the cells all
    compared metrics score, and the note; ``data`` itself and None when no metric lacks a rated cell.
    ``mask_target``: the target too is left out of the other cells (for the tests that need a metric
    score wherever the target has one: the pair-outcome test).

    Examples
    --------
    >>> ds = xr.Dataset({"human": ("system", [1., 2., 3., 4.]), "a": ("system", [1., 2., 4., 3.]),
    ...                  "b": ("system", [1., 2., 3., np.nan])}, coords={"system": list("pqrs")})
    >>> common, note = common_ground(ds, target="human", metrics=None)
    >>> common["a"].values.ravel().tolist()
    [1.0, 2.0, 4.0, nan]
    >>> note
    "common ground: every metric compared on the 3 of 4 rated cells that all of them score; 'b' lacks 1 cell, every cell of system ['s']; so those cells are left out for every metric (common_cells=False correlates each metric on its own cells)"
    """
    ds = as_dataset(data)
    targets = [target] if isinstance(target, str) or not isinstance(target, (list, tuple)) else list(target)
    names = _names(ds, targets, metrics)
    x = stack_scores(ds, names, METRIC)
    z = stack_scores(ds, targets, TARGET)
    kept, _, note = common_scores(x, z, common_cells=common_cells)
    if kept is x:
        return data, note
    keep = kept.notnull() | x.isnull()  # False exactly where a score was left out
    common = keep.all(METRIC)
    base = data if isinstance(data, xr.Dataset) and METRIC not in data.dims else ds
    if INPUT not in base.dims:  # system-level data: the length-1 input dim as_dataset gave them goes again
        keep, common = keep.isel({INPUT: 0}, drop=True), common.isel({INPUT: 0}, drop=True)
    masks = {name: keep.sel({METRIC: str(name)}, drop=True) for name in names}
    if mask_target:
        masks.update({name: common for name in targets})
    masked = base.assign({name: base[name].where(mask).transpose(*base[name].dims, ...)
                          .assign_attrs(base[name].attrs) for name, mask in masks.items()})
    return masked, note


def pair_notes(data: xr.Dataset | xr.DataArray, *, x: Hashable, y: Hashable, target: Hashable) -> tuple[str, ...]:
    """The notes of a two-metric test: the data's, and which of ``x`` and ``y`` lacks rated cells the other
    scores (the test correlates each on its own cells; :func:`xcorrstat.compare` on common ground)."""
    ds = as_dataset(data)
    pair = stack_scores(ds, [x, y], METRIC)
    if is_dask_array(pair.data) or is_dask_array(ds[target].data):  # known only after a pass over the data
        return (*notes_of(data), LAZY_PAIR_NOTE)
    lacks, rated, common = _lacking(pair, ds[target])
    if not bool(lacks.any()):
        return notes_of(data)
    own = "a two-metric test; compare() compares metrics on common ground"
    return (*notes_of(data), _note(lacks, common, rated, False, own))
