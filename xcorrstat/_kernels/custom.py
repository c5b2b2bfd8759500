"""A statistic of the user's own, ``method=f``: ``f(x, z)`` along the last axis, vectorised.

``f`` takes two float arrays of the same shape ``(..., n)`` -- the metric's and the target's
scores of ``n`` paired units -- and returns one value per row, shape ``(...)``, as NumPy
reductions with ``axis=-1`` do (``pandas.DataFrame.corr`` takes such a callable too, one row at a
time). It is called on many rows at once: every row without a missing pair in one call, and the
rows with missing pairs grouped by how many pairs are present, each group in one call with each
row's present pairs only, in their order. A row with fewer than ``min_pairs`` valid pairs is NaN
and ``f`` never sees it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._types import OWN, is_own

__all__ = ["OWN", "is_own", "own_name", "own_rows"]

def own_name(method: Any) -> str:
    """The name attrs record for a function of one's own (its qualified name).

    Examples
    --------
    >>> def spread(x, z):
    ...     return (x - z).std(axis=-1)
    >>> own_name(spread), own_name("pearson")
    ('spread', 'pearson')
    """
    if not is_own(method):
        return str(method)
    name = getattr(method, "__qualname__", None) or getattr(method, "__name__", None) or type(method).__name__
    return str(name)


def _call(func: Callable[..., Any], x: np.ndarray, z: np.ndarray) -> np.ndarray:
    out = np.asarray(func(x, z), dtype=np.float64)
    if out.shape != x.shape[:-1]:
        raise ValueError(f"method: the function {own_name(func)!r} must return one value per row of its "
                         f"(..., n) arguments, a statistic along the last axis: given shape {x.shape} it "
                         f"returned shape {out.shape}")
    return out


def own_rows(func: Callable[..., Any], x: ArrayLike, z: ArrayLike, *,
             min_pairs: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """``func`` of ``x`` and ``z`` along the last axis, broadcasting leading axes; ``(value, n)``.

    Rows with missing pairs are called in groups of rows with the same number of present pairs (one
    call per count, not per row or per pattern of missing cells), each row's present pairs in their
    order; fewer than ``min_pairs`` valid pairs is NaN.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([[1., 2, 3, 4], [1, np.nan, 3, 5]]); z = np.array([1., 3, 2, 4])
    >>> value, n = own_rows(lambda a, b: np.mean(np.abs(a - b), axis=-1), x, z)
    >>> value.tolist(), n.tolist()
    ([0.5, 0.6666666666666666], [4, 3])
    """
    ax, az = np.broadcast_arrays(np.asarray(x, dtype=np.float64), np.asarray(z, dtype=np.float64))
    lead, width = ax.shape[:-1], ax.shape[-1]
    ax, az = ax.reshape(-1, width), az.reshape(-1, width)
    valid = ~(np.isnan(ax) | np.isnan(az))
    n = valid.sum(axis=-1)
    out = np.full(ax.shape[0], np.nan)
    enough = n >= min_pairs
    complete = enough & (n == width)
    if complete.any():
        out[complete] = _call(func, ax[complete], az[complete])
    partial = np.flatnonzero(enough & ~complete)
    for rows, take in _by_count(valid, n, partial):  # one call per number of present pairs
        out[rows] = _call(func, np.take_along_axis(ax[rows], take, axis=-1),
                          np.take_along_axis(az[rows], take, axis=-1))
    return out.reshape(lead), n.reshape(lead).astype(np.int64)


def _by_count(valid: np.ndarray, n: np.ndarray, rows: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """The rows of ``valid`` (R, w) among ``rows`` grouped by their number of present pairs k: ``(rows, take)``
    pairs, ``take`` (rows, k) the positions of each row's present pairs in order (a stable sort of the row's
    gaps to its end), by increasing k."""
    if not rows.size:
        return []
    first = valid[rows[0]]
    if (valid[rows] == first).all():  # one pattern (the same missing cells in every draw): no sort
        keep = np.flatnonzero(first)
        return [(rows, np.broadcast_to(keep, (rows.size, keep.size)))]
    order = np.argsort(~valid[rows], axis=-1, kind="stable")  # present pairs first, in order
    counts = n[rows]
    out = []
    for k in np.unique(counts):
        which = counts == k
        out.append((rows[which], order[which, :k]))
    return out
