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
from .._schema import INPUT, METRIC, SYSTEM, as_dataset, default_metrics, select_scores

__all__ = ["common_ground"]

def _names(ds: xr.Dataset, target: Hashable | Sequence[Hashable],
           metrics: Hashable | Sequence[Hashable] | None) -> list[Hashable]:
    targets = [target] if isinstance(target, str) or not isinstance(target, (list, tuple)) else list(target)
    default = default_metrics(ds, targets, warn=False) if metrics is None else []
    return select_scores(ds, metrics, default, "metrics")


def _rated(ds: xr.Dataset, target: Hashable | Sequence[Hashable]) -> xr.DataArray:
    """The cells with a target score (any of several targets)."""
    targets = [target] if isinstance(target, str) or not isinstance(target, (list, tuple)) else list(target)
    rated = ds[targets[0]].notnull()
    for name in targets[1:]:
        rated = rated | ds[name].notnull()
    return rated


def _lacking(ds: xr.Dataset, names: list[Hashable], rated: xr.DataArray) -> tuple[xr.Dataset, xr.DataArray]:
    """Per metric its cells missing where the target is rated (False where the metric has no score in a
    whole label of the extra dims), and the common cells: rated cells every metric scores."""
    cell_dims = (SYSTEM, INPUT)
    lacks = {}
    for name in names:
        present = ds[name].notnull()
        absent = ~present.any([d for d in cell_dims if d in present.dims])  # no score in this label
        lacks[str(name)] = (~present & ~absent & rated)
    lacking = xr.Dataset(lacks)
    common = rated & ~lacking.to_array("_metric").any("_metric")
    return lacking, common


def _note(lacking: xr.Dataset, common: xr.DataArray, rated: xr.DataArray) -> str:
    """What the common ground left out: per metric its cells and the systems it lacks entirely."""
    parts = []
    other = [d for d in common.dims if d != SYSTEM]
    has_system = rated.any(other) if other else rated
    for name, cells in lacking.data_vars.items():
        k = int(cells.sum())
        if not k:
            continue
        whole = (cells | ~rated).all([d for d in cells.dims if d != SYSTEM]) & has_system
        systems = [str(s) for s in np.asarray(whole[SYSTEM].values)[np.asarray(whole.values, dtype=bool)]]
        where = f", every cell of system {name_list(systems, width=600)}" if systems else ""
        parts.append(f"{cut(name, 200)} lacks {k} cell{'' if k == 1 else 's'}{where}")
    n_common, n_rated = int(common.sum()), int(rated.sum())
    return (f"common ground: every metric compared on the {n_common} of {n_rated} rated cells that all "
            f"of them score; {'; '.join(parts)}; so those cells are left out for every metric "
            "(common_cells=False correlates each metric on its own cells)")


def common_ground(data: xr.Dataset | xr.DataArray, *, target: Hashable | Sequence[Hashable],
                  metrics: Hashable | Sequence[Hashable] | None,
                  common_cells: bool = True) -> tuple[xr.Dataset | xr.DataArray, str | None]:
    """``data`` with every metric kept on the cells all compared metrics score, and the note saying what
    that left out; ``data`` itself and None when no metric lacks a rated cell (or ``common_cells`` is
    False).

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
    if not common_cells:
        return data, None
    ds = as_dataset(data)
    names = _names(ds, target, metrics)
    rated = _rated(ds, target)
    lacking, common = _lacking(ds, names, rated)
    if not bool(lacking.to_array().any()):
        return data, None
    keep = common | ~rated  # cells without a target score count for no metric anyway
    base = data if isinstance(data, xr.Dataset) and METRIC not in data.dims else ds
    if INPUT not in base.dims:  # system-level data: the length-1 input dim as_dataset gave them goes again
        keep = keep.isel({INPUT: 0}, drop=True)
    masked = base.assign({name: base[name].where(keep).transpose(*base[name].dims, ...)
                          .assign_attrs(base[name].attrs) for name in names})
    return masked, _note(lacking, common, rated)
