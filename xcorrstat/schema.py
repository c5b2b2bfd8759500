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
picked as a metric by default.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np
import xarray as xr

__all__ = ["SYSTEM", "INPUT", "METRIC", "TARGET", "as_dataset", "split_scores", "select_scores", "stack_scores",
           "check_finite", "aligned_scores"]

SYSTEM = "system"
INPUT = "input"
METRIC = "metric"
TARGET = "target"


def _is_dask(da: xr.DataArray) -> bool:
    return da.chunks is not None


def as_dataset(data) -> xr.Dataset:
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
            raise ValueError(f"data: duplicate labels on the {METRIC!r} dim: {sorted(labels)}")
        ds = data.to_dataset(dim=METRIC)
        ds = ds.rename({k: str(k) for k in ds.data_vars})
    elif isinstance(data, xr.Dataset):
        stacked = [k for k, v in data.data_vars.items() if METRIC in v.dims]
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
    for dim in (SYSTEM, INPUT):
        if dim not in ds.dims:
            raise ValueError(
                f"data: missing the {dim!r} dim; found dims {tuple(ds.dims)}. Rename yours with "
                f".rename({{'your_dim': {dim!r}}}) or build the data with xcorrstat.from_dataframe(..., {dim}=...)"
            )
        if dim in ds.indexes and not ds.indexes[dim].is_unique:
            dup = ds.indexes[dim][ds.indexes[dim].duplicated()].unique().tolist()[:5]
            raise ValueError(f"data: duplicate {dim!r} labels {dup}; each (system, input) must appear once")
    return ds


def _as_names(value, argument: str) -> list[Hashable]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, Sequence) and not isinstance(value, bytes):
        names = list(value)
        if not names:
            raise ValueError(f"{argument} must name at least one variable, got an empty list")
        return names
    raise TypeError(f"{argument} must be a variable name or a list of names, got {type(value).__name__}")


def _check_variable(ds: xr.Dataset, name: Hashable, argument: str) -> None:
    if name not in ds.data_vars:
        raise ValueError(f"{argument}={name!r} is not a score in the data; available: {sorted(map(str, ds.data_vars))}")
    var = ds[name]
    if var.dtype.kind not in "biuf":
        raise TypeError(f"{argument}={name!r} has non-numeric dtype {var.dtype}; scores must be numbers")
    missing = [d for d in (SYSTEM, INPUT) if d not in var.dims]
    if missing:
        raise ValueError(f"{argument}={name!r} lacks dims {missing}; every score needs (system, input)")
    if not _is_dask(var):
        check_finite(var.values, f"{argument}={name!r}")


def check_finite(values: np.ndarray, what: str) -> None:
    """Raise ValueError if ``values`` holds +/-inf (NaN marks a missing cell and is allowed)."""
    if values.dtype.kind == "f":
        count = int(np.isinf(values).sum())
        if count:
            raise ValueError(f"{what} has {count} infinite value(s); use NaN for a missing score")


def default_metrics(ds: xr.Dataset, targets: Sequence[Hashable]) -> list[Hashable]:
    """Every numeric score that is neither a target nor marked ``role="human"``."""
    return [
        k
        for k, v in ds.data_vars.items()
        if k not in targets
        and v.attrs.get("role") != "human"
        and v.dtype.kind in "biuf"
        and SYSTEM in v.dims
        and INPUT in v.dims
    ]


def select_scores(ds: xr.Dataset, names, default: list[Hashable], argument: str) -> list[Hashable]:
    """Validated score names: ``names`` (a name or list) or, if None, ``default`` (non-empty)."""
    if names is None:
        if not default:
            raise ValueError(f"{argument}: the data holds no score to use here; pass {argument}=[...]")
        chosen = list(default)
    else:
        chosen = _as_names(names, argument)
        if len(set(chosen)) != len(chosen):
            raise ValueError(f"{argument} has duplicate names: {chosen}")
    for name in chosen:
        _check_variable(ds, name, argument)
    return chosen


def stack_scores(ds: xr.Dataset, names: Sequence[Hashable], dim: str) -> xr.DataArray:
    """The named scores as one float64 DataArray along a new ``dim`` labelled by name."""
    x = xr.concat([ds[k].astype(np.float64, copy=False) for k in names], dim=dim, coords="minimal",
                  compat="override", join="outer")
    x = x.assign_coords({dim: [str(k) for k in names]})
    x.attrs = {}
    return x.rename(None)


def split_scores(data, *, target, metrics=None) -> tuple[xr.DataArray, xr.DataArray, bool]:
    """Split data into metric scores X (dim ``metric``) and target scores Z.

    Returns
    -------
    x : DataArray
        ``(metric, system, input, ...)``.
    z : DataArray
        ``(system, input, ...)`` for one target, ``(target, system, input, ...)`` for several.
    several : bool
        Whether several targets were given.
    """
    ds = as_dataset(data)
    targets = _as_names(target, "target")
    for name in targets:
        _check_variable(ds, name, "target")
    names = select_scores(ds, metrics, default_metrics(ds, targets), "metrics")
    x = stack_scores(ds, names, METRIC)
    several = not isinstance(target, str)
    if several:
        z = stack_scores(ds, targets, TARGET)
    else:
        z = ds[targets[0]].astype(np.float64, copy=False)
    x.attrs, z.attrs = {}, {}
    return x.rename(None), z.rename(None), several


def aligned_scores(data, *, target, metrics=None) -> tuple[xr.DataArray, xr.DataArray, list[Hashable]]:
    """Metric scores X and the one target Z, finite-or-NaN, both ``(*batch, system, input)``.

    Z is broadcast to X's batch dims (``metric`` and any extra dims), so the two arrays
    line up cell by cell; ``batch`` lists those leading dims.
    """
    x, z, several = split_scores(data, target=target, metrics=metrics)
    if several:
        raise ValueError(f"target must be one human score, got a list: {target!r}")
    check_finite(x.values, "metric scores")
    check_finite(z.values, "target scores")
    batch = [d for d in x.dims if d not in (SYSTEM, INPUT)]
    x = x.transpose(*batch, SYSTEM, INPUT)
    return x, z.broadcast_like(x).transpose(*batch, SYSTEM, INPUT), batch
