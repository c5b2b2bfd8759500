"""Helpers shared by the agreement analyses: argument checks and the paired dim."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence

import numpy as np
import xarray as xr

from ._display import did_you_mean

__all__ = ["PAIR_PREFIX", "check_dim", "check_dims", "pair_dim", "pick_variable", "symmetric_pairs"]

#: The second copy of a compared dim is named ``f"{PAIR_PREFIX}{dim}"``, as compare's ``other_metric``.
PAIR_PREFIX = "other_"

# bound on the temporaries of one block of pairs (elements)
_PAIR_BLOCK_ELEMS = 1 << 23


def pair_dim(dim: Hashable) -> str:
    """Name of the second copy of ``dim`` in a (label, label') result: ``f"other_{dim}"`` (as
    ``other_metric`` of :func:`xcorrstat.compare`).

    Examples
    --------
    >>> pair_dim("batch_size")
    'other_batch_size'
    """
    return f"{PAIR_PREFIX}{dim}"


def pick_variable(data: object, var: Hashable | None, argument: str = "var") -> xr.DataArray:
    """The DataArray to analyse: ``data`` itself, or ``data[var]`` for a Dataset."""
    if isinstance(data, xr.DataArray):
        if var is not None and data.name != var:
            raise ValueError(f"{argument}={var!r}: data is a DataArray named {data.name!r}; omit {argument}")
        return data
    if not isinstance(data, xr.Dataset):
        raise TypeError(f"data must be an xarray Dataset or DataArray, got {type(data).__name__}")
    if var is None:
        if len(data.data_vars) == 1:
            return data[next(iter(data.data_vars))]
        raise ValueError(
            f"{argument}: data is a Dataset with variables {sorted(map(str, data.data_vars))}; "
            f"name the one to analyse with {argument}=..."
        )
    if not isinstance(var, Hashable) or var not in data.data_vars:
        raise ValueError(f"{argument}={var!r} is not a variable of the data; available: "
                         f"{sorted(map(str, data.data_vars))}{did_you_mean(var, data.data_vars)}")
    return data[var]


def check_dim(da: xr.DataArray, dim: object, argument: str) -> Hashable:
    """``dim`` if it is a dim of ``da``."""
    if not isinstance(dim, Hashable) or dim is None or dim not in da.dims:
        raise ValueError(f"{argument} must name a dim of the data {tuple(da.dims)}, got {dim!r}")
    return dim


def check_dims(da: xr.DataArray, dims: Hashable | Sequence[Hashable] | None, argument: str, *,
               taken: dict | None = None) -> tuple[Hashable, ...]:
    """``dims`` (a name or a sequence of names) as a tuple of distinct dims of ``da``.

    ``taken`` maps dims already used by other arguments to those arguments' names.
    """
    if dims is None:
        return ()
    names = (dims,) if isinstance(dims, str) or not isinstance(dims, Sequence) else tuple(dims)
    taken = taken or {}
    for d in names:
        check_dim(da, d, argument)
        if d in taken:
            raise ValueError(f"{argument}: dim {d!r} is already used by {taken[d]}")
    if len(set(names)) != len(names):
        raise ValueError(f"{argument} names a dim twice: {names}")
    return names


def check_new_dim(da: xr.DataArray, name: str, argument: str) -> None:
    """Raise if the paired dim ``name`` would clash with a dim of ``da``."""
    if name in da.dims or name in da.coords:
        raise ValueError(
            f"{argument}: the result needs a dim {name!r} for the second copy of the compared labels, "
            f"but the data already has a dim or coordinate of that name; rename it first"
        )


def check_labels(da: xr.DataArray, dim: Hashable, argument: str) -> None:
    """The compared dim needs distinct labels."""
    if dim in da.indexes and not da.indexes[dim].is_unique:
        dup = da.indexes[dim][da.indexes[dim].duplicated()].unique().tolist()[:5]
        raise ValueError(f"{argument}: duplicate labels {dup} on dim {dim!r}; each compared label must appear once")


def as_float(values: np.ndarray, what: str) -> np.ndarray:
    """``values`` as float64; infinite values are an error (NaN marks a missing value)."""
    values = np.asarray(values)
    if values.dtype.kind not in "biuf":
        raise TypeError(f"{what} must be numeric, got dtype {values.dtype}")
    values = values.astype(np.float64, copy=False)
    if np.isinf(values).any():
        raise ValueError(f"{what} has {int(np.isinf(values).sum())} infinite value(s); use NaN for a missing value")
    return values


def label_coords(da: xr.DataArray, dim: Hashable) -> dict:
    """Coordinates for the (dim, dim_2) result: the index of ``dim`` on both copies."""
    labels = da[dim].values if dim in da.coords else np.arange(da.sizes[dim])
    return {dim: labels, pair_dim(dim): labels}


def symmetric_pairs(x: np.ndarray, stat: Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]], *,
                    core_ndim: int) -> tuple[np.ndarray, np.ndarray]:
    """A symmetric (..., L, L) matrix of ``stat`` over all pairs of the L labels.

    ``x`` is shaped ``(..., L, *core)`` with ``core_ndim`` core axes; ``stat(a, b)``
    returns ``(r, n)`` over the leading shape of ``a``, ``b`` shaped ``(..., P, *core)``.
    Only the pairs ``i < j`` are computed (in blocks that bound memory, never one
    pair at a time) and mirrored, so the matrix is exactly symmetric. The diagonal
    is ``stat(x, x)`` set to exactly 1 where it is defined (a label's agreement
    with itself), NaN where it is not.
    """
    n_labels = x.shape[-core_ndim - 1]
    lead = x.shape[: -core_ndim - 1]
    core_size = int(np.prod(x.shape[-core_ndim:], dtype=np.int64))
    lead_size = int(np.prod(lead, dtype=np.int64))
    r = np.empty(lead + (n_labels, n_labels), dtype=np.float64)
    n = np.empty(lead + (n_labels, n_labels), dtype=np.int64)
    i, j = np.triu_indices(n_labels, 1)
    step = max(1, _PAIR_BLOCK_ELEMS // max(1, core_size * lead_size))
    axis = x.ndim - core_ndim - 1
    for start in range(0, i.size, step):  # memory blocks of pairs
        bi, bj = i[start : start + step], j[start : start + step]
        rp, np_ = stat(np.take(x, bi, axis=axis), np.take(x, bj, axis=axis))
        r[..., bi, bj] = rp
        r[..., bj, bi] = rp
        n[..., bi, bj] = np_
        n[..., bj, bi] = np_
    rd, nd = stat(x, x)
    d = np.arange(n_labels)
    r[..., d, d] = np.where(np.isnan(rd), np.nan, 1.0)
    n[..., d, d] = nd
    return r, n
