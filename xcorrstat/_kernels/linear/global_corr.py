"""Pearson's r and Spearman's rho over all cells (global level) of bootstrap draws given as counts.

A bootstrap draw at global level keeps every score and changes only multiplicities: cell
``(s, i)`` appears ``W = w_s c_i`` times in the expanded resample (``w`` the system counts,
``c`` the input counts; 1 for a dim that is not resampled). So the statistic of the expanded
vectors is a weighted statistic over the valid cells, each draw costing O(S I) with no
gather:

* Pearson: the weighted means, then the centred co-moments less the rounding error of the
  means (the corrected two-pass form of :func:`xcorrstat._kernels.pearson`). The sums run over
  the cells in a fixed order for every draw, so a draw's value never depends on the batch; it
  is that of :func:`~xcorrstat._kernels.pearson` on the expanded vectors up to the order of the
  float additions (within 1e-12, not bit for bit).
* Spearman: the midrank of a cell among the expanded values is the weight of the cells below
  it plus half of (the weight of its run of equal values + 1), formed per draw from the cells
  sorted once by x and once by z; then the weighted Pearson r of the ranks. Ranks and every
  sum of weighted products of ranks are multiples of 1/4 below 2**53 (up to about 130,000
  expanded cells), so the sums are exact and a draw's rho is bit for bit that of
  :func:`~xcorrstat._kernels.spearman` on the expanded vectors (beyond, it is within 1e-12,
  and still the same in every batch).

Undefined draws (NaN) as in the plain kernels: fewer than ``max(min_pairs, 2)`` expanded valid
cells, or x or z constant over the drawn valid cells. The scores of each row are first
normalised by a power of two (exact), so no sum of squares overflows. The per-draw loops are
compiled (:mod:`xcorrstat._kernels.linear.global_corr_jit`, imported on first use).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from .._compiled import loops
from ..draw_counts import count_columns, draw_counts
from ..rank.global_counts import lead_rows
from ..scaling import SAFE_EXPONENT

__all__ = ["GlobalCells", "global_cells", "weighted_global_corr"]


class GlobalCells(NamedTuple):
    """The valid cells of every row of (..., S, I) scores, one segment per row (:func:`global_cells`)."""

    off: np.ndarray  # (R + 1,) int64: row r's cells are off[r]:off[r + 1]
    sys_of: np.ndarray  # (E,) int64 system of each cell
    inp_of: np.ndarray  # (E,) int64 input of each cell
    x: np.ndarray  # (E,) scores, normalised per row by a power of two (Pearson; else empty)
    z: np.ndarray  # (E,)
    x_new: np.ndarray  # (E,) bool: first of a run of equal x (Spearman, cells in x order; else empty)
    z_group: np.ndarray  # (E,) int64: the cell's run of equal z, numbered in z order within the row
    z_groups: np.ndarray  # (R,) int64: runs of equal z of each row
    ranked: bool  # Spearman's table (cells in x order) or Pearson's (cells in system order)


def _sorted_runs(a: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each row of (R, C) values with NaN where not valid, sorted: the order, the valid positions
    (the first ``n[r]`` of the row) and the run of equal values of each sorted position (0, 1, ...)."""
    order = np.argsort(a, axis=-1, kind="stable")  # NaN last
    v = np.take_along_axis(a, order, axis=-1)
    used = np.arange(a.shape[-1]) < n[:, None]
    new = np.ones(a.shape, dtype=bool)
    new[:, 1:] = v[:, 1:] != v[:, :-1]
    runs = np.cumsum(new & used, axis=-1) - 1
    return order, used, runs


def _ranked_cells(xf: np.ndarray, zf: np.ndarray, valid: np.ndarray, off: np.ndarray) -> GlobalCells:
    """Spearman's table: every row's valid cells in x order, with the runs of equal x and of equal z."""
    rows, s, i = xf.shape
    count = off[1:] - off[:-1]
    flat = valid.reshape(rows, s * i)
    xo, used, xruns = _sorted_runs(np.where(flat, xf.reshape(rows, -1), np.nan), count)
    zo, zused, zruns = _sorted_runs(np.where(flat, zf.reshape(rows, -1), np.nan), count)
    z_run = np.zeros((rows, s * i), dtype=np.int64)
    np.put_along_axis(z_run, zo, np.where(zused, zruns, 0), axis=-1)  # each cell's run of z
    cells = xo[used]  # row by row, in x order
    x_new = np.ones(cells.size, dtype=bool)
    x_new[1:] = np.diff(xruns[used]) != 0
    x_new[off[:-1][count > 0]] = True
    z_group = np.take_along_axis(z_run, xo, axis=-1)[used]
    z_groups = np.where(count > 0, zruns.max(axis=-1, initial=-1) + 1, 0).astype(np.int64)
    empty = np.empty(0)
    return GlobalCells(off, (cells // i).astype(np.int64), (cells % i).astype(np.int64), empty, empty, x_new,
                       z_group, z_groups, True)


def global_cells(x: ArrayLike, z: ArrayLike, *, ranked: bool) -> GlobalCells:
    """The valid cells of every row of (..., S, I) scores: for Pearson in (system, input) order
    with the scores, for Spearman (``ranked``) in x order with their runs of ties.

    Examples
    --------
    >>> t = global_cells([[2.0, 1.0], [3.0, np.nan]], [[1.0, 2.0], [3.0, 4.0]], ranked=True)
    >>> t.off.tolist(), t.sys_of.tolist(), t.inp_of.tolist(), t.z_group.tolist()
    ([0, 3], [0, 0, 1], [1, 0, 0], [1, 0, 2])
    """
    (xf, zf), _ = lead_rows(x, z)
    valid = ~np.isnan(xf) & ~np.isnan(zf)
    off = np.zeros(xf.shape[0] + 1, dtype=np.int64)
    np.cumsum(valid.sum(axis=(-2, -1)), out=off[1:])
    if ranked:
        return _ranked_cells(xf, zf, valid, off)
    flat = valid.reshape(valid.shape[0], -1)
    cell = np.flatnonzero(flat) % flat.shape[1]  # row by row, each in (system, input) order
    xv = _normalised(xf.reshape(flat.shape)[flat], off)
    zv = _normalised(zf.reshape(flat.shape)[flat], off)
    i = xf.shape[-1]
    empty = np.empty(0, dtype=np.int64)
    return GlobalCells(off, cell // i, cell % i, xv, zv, np.empty(0, dtype=bool), empty,
                       np.zeros(xf.shape[0], dtype=np.int64), False)


def _normalised(values: np.ndarray, off: np.ndarray) -> np.ndarray:
    """Each row's segment of ``values`` scaled exactly by a power of two (largest magnitude in [0.5, 1))
    when some row's magnitudes leave the range where sums of squares are safe
    (:func:`~xcorrstat._kernels.scaling.pow2_normalise`)."""
    count = np.diff(off)
    top = np.zeros(count.size)
    filled = count > 0
    top[filled] = np.maximum.reduceat(np.abs(values), off[:-1][filled]) if values.size else 0.0
    e = np.frexp(top)[1]
    if e.size == 0 or np.max(np.abs(e)) <= SAFE_EXPONENT:
        return values
    return np.ldexp(values, -np.repeat(e, count))


def weighted_global_corr(
    x: ArrayLike,
    z: ArrayLike,
    w: ArrayLike | None = None,
    c: ArrayLike | None = None,
    *,
    method: str = "pearson",
    min_pairs: int = 3,
    cells: GlobalCells | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Global-level Pearson or Spearman of bootstrap draws given as system and input counts.

    Parameters
    ----------
    x, z : array_like (..., S, I)
        Scores; leading axes broadcast.
    w : array_like (B, S) of int, optional
        System counts of each draw (None: every system once).
    c : array_like (B, I) of int, optional
        Input counts of each draw (None: every input once). At least one of w and c.
    method : {"pearson", "spearman"}
    min_pairs : int
        As in :func:`xcorrstat._kernels.pearson`.
    cells : GlobalCells, optional
        :func:`global_cells` of the same ``x`` and ``z`` (``ranked`` for Spearman), to find and
        sort the cells once for many batches of draws.

    Returns
    -------
    r, n : ndarray (..., B)
        The statistic and the number of valid cells of the expanded resample of every draw.

    Examples
    --------
    >>> x = np.array([[1.0, 2.0], [3.0, 4.0]]); z = np.array([[1.0, 3.0], [2.0, 4.0]])
    >>> r, n = weighted_global_corr(x, z, w=[[1, 1], [2, 0]], method="spearman")
    >>> np.round(r, 4).tolist(), n.tolist()
    ([0.8, 1.0], [4, 4])
    """
    if method not in ("pearson", "spearman"):
        raise ValueError(f"method must be pearson or spearman, got {method!r}")
    (xf, zf), lead = lead_rows(x, z)
    s, i = xf.shape[-2:]
    wa, ca, b = draw_counts(w, c, s, i, "weighted_global_corr")
    ws, ct = count_columns(wa, b, s, np.float64), count_columns(ca, b, i, np.float64)  # (S, B), (I, B)
    ranked = method == "spearman"
    if cells is None or cells.ranked != ranked or cells.off.size != xf.shape[0] + 1:
        cells = global_cells(xf, zf, ranked=ranked)
    out = np.empty((2, xf.shape[0], b))
    loops("linear.global_corr_jit").draws(cells.off, cells.sys_of, cells.inp_of, cells.x, cells.z, cells.x_new,
                                   cells.z_group, cells.z_groups, ranked, ws, ct, float(max(int(min_pairs), 2)), out)
    r, n = out
    return r.reshape(lead + (b,)), n.astype(np.int64).reshape(lead + (b,))
