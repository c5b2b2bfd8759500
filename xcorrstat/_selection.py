"""Score selection: which variables are the metrics and the target, stacked and oriented.

The functions that turn checked score data (:mod:`xcorrstat._schema`) into the arrays an analysis
reads: the chosen names (:func:`select_scores`), the scores stacked along one dim
(:func:`stack_scores`), metric scores X and target scores Z with every score declared
lower-is-better negated (:func:`split_scores`, :func:`aligned_scores`), and each system's mean as a
system-level grid (:func:`system_mean_grid`).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np
import xarray as xr

from ._display import cut, did_you_mean, name_list
from ._schema import (INPUT, LOWER_IS_BETTER, METRIC, SYSTEM, SYSTEM_LEVEL_INPUT, TARGET, as_dataset, as_names,
                      check_level, check_variable, checked_finite, default_metrics, is_dask_array)

__all__ = [
    "aligned_scores", "declare_lower_is_better", "lower_is_better_scores", "metric_pair", "select_scores",
    "split_scores", "stack_scores", "system_mean_grid",
]


def _declared(value: object) -> bool:
    """Whether an attr value says yes (True, 1, "true", "yes"): netCDF files keep 1 for True."""
    if isinstance(value, str):
        return value.strip().lower() in ("true", "1", "yes")
    return isinstance(value, (bool, int, np.bool_, np.integer)) and bool(value)


def lower_is_better_scores(ds: xr.Dataset) -> list[str]:
    """The names of the scores declared lower-is-better (``attrs["lower_is_better"]`` true).

    Examples
    --------
    >>> ds = xr.Dataset({"ter": ("system", [0.3, 0.5], {"lower_is_better": True}), "bleu": ("system", [1., 2.])})
    >>> lower_is_better_scores(ds)
    ['ter']
    """
    return [str(k) for k in ds.data_vars if _declared(ds.variables[k].attrs.get(LOWER_IS_BETTER))]


def declare_lower_is_better(ds: xr.Dataset, names: Sequence[Hashable], argument: str = "lower_is_better"
                            ) -> xr.Dataset:
    """A copy of ``ds`` with the scores ``names`` declared lower-is-better (their attr set to True).

    Examples
    --------
    >>> ds = xr.Dataset({"ter": ("system", [0.3, 0.5]), "bleu": ("system", [1., 2.])})
    >>> declare_lower_is_better(ds, ["ter"])["ter"].attrs
    {'lower_is_better': True}
    """
    unknown = [n for n in names if n not in ds.data_vars]
    if unknown:
        raise ValueError(f"{argument}: {cut(unknown[0])} is not a score in the data; its scores are "
                         f"{name_list(ds.data_vars, near=unknown[0])}{did_you_mean(unknown[0], ds.data_vars)}")
    ds = ds.copy()
    for name in names:
        ds[name].attrs = {**ds[name].attrs, LOWER_IS_BETTER: True}
    return ds


def _oriented(scores: xr.DataArray, names: Sequence[Hashable], declared: set[str], dim: str) -> xr.DataArray:
    """``scores`` (stacked along ``dim``) with the declared scores negated."""
    flip = [str(n) in declared for n in names]
    if not any(flip):
        return scores
    sign = xr.DataArray(np.where(flip, -1.0, 1.0), dims=[dim], coords={dim: scores[dim].values})
    return (scores * sign).assign_coords({LOWER_IS_BETTER: (dim, np.array(flip))})


def select_scores(ds: xr.Dataset, names: Hashable | Sequence[Hashable] | None, default: list[Hashable],
                  argument: str) -> list[Hashable]:
    """Validated score names: ``names`` (a name or list) or, if None, ``default`` (non-empty)."""
    if names is None:
        if not default:
            raise ValueError(f"{argument}: the data holds no score to use here; pass {argument}=[...]")
        chosen = list(default)
    else:
        chosen = as_names(names, argument)
        if len(set(chosen)) != len(chosen):
            raise ValueError(f"{argument} has duplicate names: {cut(chosen, 300)}")
    for name in chosen:
        check_variable(ds, name, argument)
    return chosen


def stack_scores(ds: xr.Dataset, names: Sequence[Hashable], dim: str) -> xr.DataArray:
    """The named scores as one float64 DataArray along a new ``dim`` labelled by name.

    Works on the variables directly (time linear in the number of names): scores lacking
    some dim of the others are broadcast along it.
    """
    variables = [ds.variables[k] for k in names]
    sizes: dict[Hashable, int] = {}
    for var in variables:
        for d, n in var.sizes.items():
            sizes.setdefault(d, n)
    order = list(sizes)
    if all(var.dims == tuple(order) for var in variables):
        parts = [var.data for var in variables]
    else:
        parts = [var.set_dims(sizes).transpose(*order).data for var in variables]
    if any(is_dask_array(p) for p in parts):
        import dask.array as dsa

        data = dsa.stack([dsa.asarray(p).astype(np.float64) for p in parts])
    else:
        data = np.stack([np.asarray(p, dtype=np.float64) for p in parts])
    coords = {k: ds.variables[k] for k in ds.coords if set(ds.variables[k].dims) <= set(order) and k != dim}
    x = xr.DataArray(data, dims=[dim, *order], coords=coords)
    return x.assign_coords({dim: [str(k) for k in names]})


def metric_pair(data: object, *, target: object, x: object, y: object) -> xr.Dataset:
    """The data as a Dataset once ``target``, ``x`` and ``y`` are checked: one target name, two different scores.

    Examples
    --------
    >>> ds = xr.Dataset({"a": ("system", [1.0, 2.0]), "b": ("system", [2.0, 1.0]), "h": ("system", [1.0, 3.0])})
    >>> sorted(metric_pair(ds, target="h", x="a", y="b").data_vars)
    ['a', 'b', 'h']
    """
    if not isinstance(target, str):
        raise TypeError(f"target must be one score name, got {target!r}")
    ds = as_dataset(data)
    for argument, name in (("x", x), ("y", y)):
        if not isinstance(name, Hashable):
            raise TypeError(f"{argument} must be one score name, got {name!r}")
        select_scores(ds, [name], [], argument)
    if x == y:
        raise ValueError(f"x and y must be two different metrics, got x=y={x!r}")
    return ds


def split_scores(data: object, *, target: Hashable | Sequence[Hashable],
                 metrics: Hashable | Sequence[Hashable] | None = None, level: str | Sequence[str] | None = None,
                 along: str | Sequence[str] | None = None) -> tuple[xr.DataArray, xr.DataArray, bool]:
    """Split data into metric scores X (dim ``metric``) and target scores Z.

    Parameters
    ----------
    data : Dataset or DataArray
        See :func:`as_dataset`; system-level data get a length-1 ``input`` dim.
    target, metrics : name or list of names
        The human score(s) and the metric scores (default: every numeric non-human score).
    level, along : str or list of str, optional
        The level(s) and the resampled or permuted dim(s) of the analysis; with
        system-level data anything but ``"system"`` is a ValueError (:func:`check_level`).

    Returns
    -------
    x : DataArray
        ``(metric, system, input, ...)``.
    z : DataArray
        ``(system, input, ...)`` for one target, ``(target, system, input, ...)`` for several.
    several : bool
        Whether several targets were given.
    """
    check_level(data, level=level, along=along)
    ds = as_dataset(data)
    targets = as_names(target, "target")
    for name in targets:
        check_variable(ds, name, "target")
    names = select_scores(ds, metrics, default_metrics(ds, targets) if metrics is None else [], "metrics")
    both = [name for name in names if name in targets]
    if both:
        raise ValueError(f"metrics={cut(metrics)} includes the target {cut(both[0])}; a score cannot be "
                         f"both a metric and the target (its correlation with itself is 1)")
    declared = set(lower_is_better_scores(ds))
    x = _oriented(stack_scores(ds, names, METRIC), names, declared, METRIC)
    several = not isinstance(target, str)
    if several:
        z = _oriented(stack_scores(ds, targets, TARGET), targets, declared, TARGET)
    else:
        z = ds[targets[0]].astype(np.float64, copy=False)
        z = -z if str(targets[0]) in declared else z
    x.attrs, z.attrs = {}, {}
    flipped = [str(n) for n in [*names, *targets] if str(n) in declared]
    if flipped:  # the results' builders copy x.attrs where they record their inputs
        x.attrs[LOWER_IS_BETTER] = flipped
    return x.rename(None), z.rename(None), several


def aligned_scores(data: object, *, target: Hashable, metrics: Hashable | Sequence[Hashable] | None = None,
                   level: str | Sequence[str] | None = None,
                   along: str | Sequence[str] | None = None) -> tuple[xr.DataArray, xr.DataArray, list[Hashable]]:
    """Metric scores X and the one target Z, finite-or-NaN, both ``(*batch, system, input)``.

    Z is broadcast to X's batch dims (``metric`` and any extra dims), so the two arrays
    line up cell by cell; ``batch`` lists those leading dims.
    """
    x, z, several = split_scores(data, target=target, metrics=metrics, level=level, along=along)
    if several:
        raise ValueError(f"target must be one human score, got a list: {target!r}")
    x, z = checked_finite(x, "metric scores"), checked_finite(z, "target scores")
    batch = [d for d in x.dims if d not in (SYSTEM, INPUT)]
    x = x.transpose(*batch, SYSTEM, INPUT)
    return x, z.broadcast_like(x).transpose(*batch, SYSTEM, INPUT), batch


def system_mean_grid(da: xr.DataArray) -> xr.DataArray:
    """Each system's mean over its present inputs, as a grid with one input labelled ``"all"``.

    The shape of a system-level table (:data:`SYSTEM_LEVEL_INPUT`), so every
    system-level analysis runs on it unchanged.

    Examples
    --------
    >>> da = xr.DataArray([[1.0, 3.0], [2.0, np.nan]], dims=(SYSTEM, INPUT), coords={SYSTEM: ["a", "b"]})
    >>> system_mean_grid(da).values.tolist()
    [[2.0], [2.0]]
    """
    with np.errstate(over="ignore", invalid="ignore"):
        means = da.mean(INPUT, skipna=True, keep_attrs=True)
        if not isinstance(means.data, np.ndarray) or not np.isfinite(means.values).all():
            # a sum that overflowed (scores near the largest float): that mean again, scaled exactly by 2**-1023
            scaled = (da * 2.0**-1023).mean(INPUT, skipna=True) * 2.0**1023
            means = means.where(np.isfinite(means), scaled).assign_attrs(means.attrs)
    return means.expand_dims({INPUT: np.array([SYSTEM_LEVEL_INPUT], dtype=object)}, axis=-1)
