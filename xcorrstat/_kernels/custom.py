"""A statistic of the user's own, ``method=f``: ``f(x, z)`` along the last axis, vectorised.

``f`` takes two float arrays of the same shape ``(..., n)`` -- the metric's and the target's
scores of ``n`` paired units -- and returns one value per row, shape ``(...)``, as NumPy
reductions with ``axis=-1`` do (``pandas.DataFrame.corr`` takes such a callable too, one row at a
time). It is called on many rows at once: every row without a missing pair in one call, and the
rows with missing pairs grouped by which pairs are present, each group in one call with those
pairs only. A row with fewer than ``min_pairs`` valid pairs is NaN and ``f`` never sees it.
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

    Rows with missing pairs are called in groups of rows sharing the same present pairs (one
    call per pattern of missing cells, not per row); fewer than ``min_pairs`` valid pairs is NaN.

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
    for rows, keep in _patterns(valid, partial):  # one call per pattern of present pairs
        out[rows] = _call(func, ax[np.ix_(rows, keep)], az[np.ix_(rows, keep)])
    return out.reshape(lead), n.reshape(lead).astype(np.int64)


def _patterns(valid: np.ndarray, rows: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """The rows of ``valid`` (R, n) bool among ``rows`` grouped by their pattern: ``(rows, pattern)`` pairs in
    the order of the sorted patterns. One pattern (the same missing cells in every draw) is one pass; others are
    told apart on their bits packed into bytes, 8 cells a byte."""
    if not rows.size:
        return []
    first = valid[rows[0]]
    if (valid[rows] == first).all():
        return [(rows, first)]
    packed = np.packbits(valid[rows], axis=-1)
    keys = np.ascontiguousarray(packed).view(np.dtype((np.void, packed.shape[1]))).ravel()
    _, start, which, count = np.unique(keys, return_index=True, return_inverse=True, return_counts=True)
    groups = np.split(rows[np.argsort(np.asarray(which).reshape(-1), kind="stable")], np.cumsum(count)[:-1])
    return [(group, valid[rows[first]]) for group, first in zip(groups, start)]
