"""Jaccard similarity of selected sets held as boolean masks over an item dim.

A set is a mask over the ``item`` dim (True = selected), for example which
samples an active-learning strategy queried. Optionally the masks are first
unioned over some dims (``union=("cycle",)``: everything selected in any cycle).
Every pair of labels of the ``over`` dim is compared by
``|A & B| / |A | B|``, computed for all pairs at once as a product of the mask
matrix with its transpose, then averaged over the ``along`` dims.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np
import xarray as xr
from numpy.typing import ArrayLike

from .._labelled import (
    check_dim,
    check_dims,
    check_labels,
    check_new_dim,
    label_coords,
    pair_dim,
    pick_variable,
)
from .._warn import one_call

__all__ = ["jaccard", "jaccard_kernel"]


def jaccard_kernel(masks: ArrayLike, *, empty: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Pairwise Jaccard similarity of the sets in ``masks`` shaped ``(..., L, I)``.

    Parameters
    ----------
    masks : array_like of bool, 0/1 or NaN
        ``L`` sets over ``I`` items along the last axis; leading axes broadcast. A
        set with any NaN entry is missing.
    empty : float
        The similarity of two empty sets.

    Returns
    -------
    similarity : ndarray (..., L, L)
        ``|A & B| / |A | B|``; ``empty`` where both sets are empty; NaN where either
        set is missing.
    intersection : ndarray of int64 (..., L, L)
        ``|A & B|`` (0 where either set is missing).

    Examples
    --------
    >>> j, inter = jaccard_kernel([[1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 0, 0]])
    >>> j.round(3).tolist()
    [[1.0, 0.333, 0.0], [0.333, 1.0, 0.0], [0.0, 0.0, 1.0]]
    """
    return _pairwise_jaccard(*_jaccard_kernel_iv(masks), empty)


def _as_masks(m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Masks as float64 0/1 (a missing entry as 0) and which sets are missing (any NaN entry)."""
    if m.dtype.kind == "b":
        missing = np.zeros(m.shape[:-1], dtype=bool)
        m = m.astype(np.float64)
    else:
        m = np.asarray(m, dtype=np.float64)
        nan = np.isnan(m)
        missing = nan.any(axis=-1)
        m = np.where(nan, 0.0, m)
    return m, missing


def _jaccard_kernel_iv(masks: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    m = np.asarray(masks)
    if m.ndim < 2:
        raise ValueError("masks must have a label axis (-2) and an item axis (-1)")
    return _as_masks(m)


def _pairwise_jaccard(m: np.ndarray, missing: np.ndarray, empty: float) -> tuple[np.ndarray, np.ndarray]:
    """Similarity and intersection of the 0/1 masks ``m`` (..., L, I), NaN where a set is missing."""
    inter = np.matmul(m, np.swapaxes(m, -1, -2))  # exact integer counts in float64
    size = m.sum(axis=-1)
    union = size[..., :, None] + size[..., None, :] - inter
    with np.errstate(invalid="ignore", divide="ignore"):
        sim = np.where(union > 0, inter / union, float(empty))
    absent = missing[..., :, None] | missing[..., None, :]
    sim = np.where(absent, np.nan, sim)
    return sim, np.where(absent, 0, np.rint(inter)).astype(np.int64)


def _check_masks(values: np.ndarray) -> None:
    if values.dtype.kind == "b":
        return
    if values.dtype.kind not in "iuf":
        raise TypeError(f"data must hold boolean masks (bool, or 0/1 numbers with NaN for a missing set), "
                        f"got dtype {values.dtype}")
    bad = ~(np.isnan(values) | (values == 0) | (values == 1)) if values.dtype.kind == "f" else ~np.isin(values, (0, 1))
    if bad.any():
        raise ValueError(f"data must hold boolean masks: found {int(bad.sum())} value(s) other than "
                         f"True/False, 0/1 or NaN")


def _kernel(values, *, empty):
    values = np.asarray(values)
    _check_masks(values)
    return _pairwise_jaccard(*_as_masks(values), empty)


def _jaccard_iv(data, var, over, item, union, along, empty,
                distance) -> tuple[xr.DataArray, Hashable, Hashable, tuple[Hashable, ...], tuple[Hashable, ...]]:
    da = pick_variable(data, var)
    over = check_dim(da, over, "over")
    item = check_dim(da, item, "item")
    if item == over:
        raise ValueError(f"item and over must be different dims, both are {over!r}")
    check_labels(da, over, "over")
    check_new_dim(da, pair_dim(over), "over")
    taken = {over: "over", item: "item"}
    unions = check_dims(da, union, "union", taken=taken)
    taken.update({d: "union" for d in unions})
    averaged = check_dims(da, along, "along", taken=taken) if along is not None else tuple(
        d for d in da.dims if d not in taken)
    if isinstance(empty, bool) or not isinstance(empty, (int, float, np.integer, np.floating)):
        raise TypeError(f"empty must be a number (or numpy.nan), got {empty!r}")
    if not isinstance(distance, (bool, np.bool_)):
        raise TypeError(f"distance must be True or False, got {distance!r}")
    if da.dtype.kind not in "biuf":
        raise TypeError(f"data must hold boolean masks, got dtype {da.dtype}")
    return da, over, item, unions, averaged


@one_call
def jaccard(
    data: xr.Dataset | xr.DataArray,
    *,
    var: Hashable | None = None,
    over: Hashable,
    item: Hashable,
    union: Hashable | Sequence[Hashable] | None = None,
    along: Hashable | Sequence[Hashable] | None = None,
    empty: float = 1.0,
    distance: bool = False,
) -> xr.DataArray:
    """Pairwise Jaccard similarity of selected sets, averaged over the remaining dims.

    Parameters
    ----------
    data : Dataset or DataArray
        Boolean masks (True = selected; 0/1 numbers also work) with an ``item`` dim.
    var : str, optional
        The variable of a Dataset to use (not needed for a DataArray or a Dataset
        with one variable).
    over : str
        The dim whose labels are compared (for example the strategies). The result
        has this dim and its copy ``f"other_{over}"``.
    item : str
        The dim of the set members (for example the samples).
    union : str or list of str, optional
        Dims to union the masks over first (an item is in the set if selected at
        any of their labels), for example the acquisition cycles.
    along : str or list of str, optional
        Dims to average the pairwise similarities over; default every dim that is
        not ``over``, ``item`` or in ``union``. Dims in none of these are kept
        (one matrix per label).
    empty : float, default 1.0
        Similarity of two empty sets. The default 1 treats them as equal sets;
        ``numpy.nan`` leaves such pairs out of the average instead.
    distance : bool, default False
        Return the distance ``1 - mean similarity`` instead.

    Returns
    -------
    DataArray
        Named ``jaccard`` (or ``jaccard_distance``) with dims ``(over, other_over)``
        plus kept dims, symmetric, with coordinate ``n`` counting the similarities
        averaged in each cell, and attrs recording how it was made.

    Notes
    -----
    ``J(A, B) = |A & B| / |A | B|`` for sets with at least one member between them.
    Two empty sets have ``J = empty`` (1 by default, so the distance of a set from
    itself is always 0); an empty and a non-empty set have ``J = 0``. A set is
    *missing* when any of its entries is NaN (after the union): its similarities
    are NaN and are left out of the average, and ``n`` counts what was averaged; a
    cell with nothing to average is NaN. Fill padding first (``.fillna(False)``) if
    a missing entry means "not selected".

    Examples
    --------
    >>> import xcorrstat.agreement as agr
    >>> bench = agr.synthetic_benchmark(rng=0)
    >>> j = agr.jaccard(bench, var="selected", over="strategy", item="item", union="cycle")
    >>> j.dims, float(j.sel(strategy="random", other_strategy="random"))
    (('strategy', 'other_strategy'), 1.0)
    """
    da, over, item, unions, averaged = _jaccard_iv(data, var, over, item, union, along, empty, distance)
    if unions:
        # NaN anywhere in the unioned entries makes the set missing (max propagates NaN)
        da = da.max(unions, skipna=False) if da.dtype.kind == "f" else da.any(unions)
    other = pair_dim(over)
    if da.chunks is not None:
        da = da.chunk({over: -1, item: -1})
    sim, _ = xr.apply_ufunc(
        _kernel, da,
        input_core_dims=[[over, item]],
        output_core_dims=[[over, other], [over, other]],
        dask="parallelized",
        output_dtypes=[np.float64, np.int64],
        dask_gufunc_kwargs={"output_sizes": {other: da.sizes[over]}},
        kwargs={"empty": float(empty)},
    )
    sim = sim.drop_vars([c for c in sim.coords if set(sim[c].dims) & {over, other} and c != over])
    if averaged:
        n = sim.notnull().sum(averaged).astype(np.int64)
        mean = sim.fillna(0.0).sum(averaged) / n.where(n > 0)  # NaN where nothing to average
    else:
        n, mean = sim.notnull().astype(np.int64), sim
    name = "jaccard"
    if distance:
        mean = 1.0 - mean
        name = "jaccard_distance"
    out = mean.assign_coords(label_coords(da, over)).assign_coords(n=n.assign_coords(label_coords(da, over)))
    out = out.drop_vars([c for c in out.coords if c not in out.dims and c != "n" and set(out[c].dims) & set(averaged)])
    out.name = name
    out.attrs = {
        "long_name": "Jaccard distance (1 - mean similarity)" if distance else "Jaccard similarity",
        "variable": str(da.name) if da.name is not None else "",
        "over": str(over), "item": str(item),
        "union": [str(d) for d in unions], "along": [str(d) for d in averaged],
        "empty": float(empty), "distance": int(bool(distance)),
        "n_meaning": "similarities averaged (pairs with a missing set left out)",
    }
    out.coords["n"].attrs["long_name"] = "number of similarities averaged"
    return out
