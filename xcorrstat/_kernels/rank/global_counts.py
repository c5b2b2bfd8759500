"""Kendall's tau over all cells (global level) for many draws at once, with the sort done once.

A bootstrap draw at global level keeps every score and changes only multiplicities: cell
``(s, i)`` appears ``W = w_s c_i`` times in the expanded resample (``w`` the system counts,
``c`` the input counts; 1 for a dim that is not resampled). A permutation draw (PERM-BOTH,
PERM-SYSTEMS, PERM-INPUTS ...) gives each cell of X' the score of X or of Y: among the
2n scores of X and Y, X' keeps one per cell (weight 1, the other 0) and Y' the other.
Either way a draw is a weight per *entry* of a table sorted once, and every Kendall count of
the expanded (swapped) vector is a weighted count over that table:

* ``n = sum W``; ties ``t_x``, ``t_z``, ``t_xz`` are sums over the groups of equal x, of
  equal z and of equal (x, z) of ``T (T - 1) / 2``, T the group's weight (copies of one
  cell are tied with each other, as in the expanded vector);
* discordant pairs ``D = sum_{i before j, z_i > z_j} W_i W_j`` with the table sorted by
  (x, z): pairs tied in x are never discordant. ``D`` is counted bit by bit of the target's
  dense rank: a pair counts at the highest bit where the two ranks differ, within the
  bucket of their common higher bits, so each bit is one pass over the table with a running
  sum per bucket -- O(n log G) per draw for G distinct targets, no sort, no comparison;
* ``C - D = n0 - t_x - t_z + t_xz - 2 D`` with ``n0 = n (n - 1) / 2``, and every variant
  follows (:func:`.rank.tau.tau_from_counts`); the distinct values of tau-c are the groups
  with weight.

With ``epsilon > 0`` (a metric difference of at most epsilon is a tie) a pair counts only
when ``x_j - x_i > epsilon``: each entry looks back to the last entry that far below it (its
lag), the same passes count only those pairs, and ``t_x`` is ``n0`` minus the far pairs.

The counts are exact integers, so a draw's tau is bit for bit the one of
:func:`xcorrstat._kernels.kendall` on the explicitly expanded (swapped) vectors, with its
undefined rule: fewer than ``max(min_pairs, 2)`` values, or (tau-a, -b, -c) a constant
vector over the drawn valid cells. A draw's counts depend on its weights alone, never on
the batch. Compiled loops (:mod:`xcorrstat._kernels.rank.global_jit`, imported on first
use) do the per-draw passes, 32 draws side by side, in int32 when every weight and sum of
weights fits and in int64 otherwise (:func:`accumulator`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from ..._types import Variant
from .._compiled import loops
from ..draw_counts import count_columns, draw_counts
from .tau import tau_from_counts

__all__ = [
    "COUNT_ROWS",
    "CellTable",
    "TauTable",
    "accumulator",
    "cell_tables",
    "group_lists",
    "jit_groups",
    "lead_rows",
    "ranked_table",
    "table_counts",
    "tau_from_table",
    "tau_table",
    "weighted_global_kendall",
]

#: Rows of the counts of a table (:func:`table_counts`): weight, discordant pairs, pairs tied
#: in x, in (x, z) and in z, distinct x and z values; with epsilon the pairs far apart in x
#: and those of them tied in z.
COUNT_ROWS = ("n", "discordant", "tx0", "txz0", "tz", "distinct_x", "distinct_z", "far", "far_tz")
_INT32_MAX = 2**31 - 1


class TauTable(NamedTuple):
    """Entries sorted by (x, z), and what the per-draw passes need; see :func:`tau_table`."""

    order: np.ndarray  # (E,) position of each table entry in the caller's entry arrays
    zr: np.ndarray  # (E,) int32 dense rank of z
    nbits: int  # bits of the largest rank
    x_runs: np.ndarray  # (Gx + 1,) int32 bounds of the runs of equal x
    xz_runs: np.ndarray  # (Gxz + 1,) int32 bounds of the runs of equal (x, z)
    zorder: np.ndarray  # (E,) int32 entries ordered by z (stable)
    z_runs: np.ndarray  # (Gz + 1,) int32 bounds of the runs of equal z along zorder
    lag: np.ndarray | None  # (E,) int64 with epsilon: entries far enough below each entry


def tau_table(values: ArrayLike, z: ArrayLike, *, epsilon: float = 0.0) -> TauTable:
    """Sort the entries ``(values, z)`` once for :func:`table_counts`.

    Parameters
    ----------
    values, z : array_like (E,)
        The scores of the entries (no NaN): the metric and the target.
    epsilon : float
        Metric differences of at most epsilon are ties.

    Examples
    --------
    >>> t = tau_table([3.0, 1.0, 2.0], [1.0, 1.0, 0.0])
    >>> t.order.tolist(), t.zr.tolist(), t.nbits
    ([1, 2, 0], [1, 0, 1], 1)
    """
    v = np.asarray(values, dtype=np.float64).reshape(-1)
    zz = np.asarray(z, dtype=np.float64).reshape(-1)
    if v.shape != zz.shape:
        raise ValueError(f"values and z must have one score per entry each, got {v.size} and {zz.size}")
    if np.isnan(v).any() or np.isnan(zz).any():
        raise ValueError("values and z must hold the valid entries only (no NaN)")
    return ranked_table(v, np.unique(zz, return_inverse=True)[1].reshape(-1), epsilon=epsilon)


def ranked_table(v: np.ndarray, zr: np.ndarray, *, epsilon: float = 0.0) -> TauTable:
    """:func:`tau_table` from the values and the dense ranks ``zr`` of the target (0, 1, ...)."""
    order = np.argsort(v)
    vs = v[order]
    new_x = vs[1:] != vs[:-1]
    if not new_x.all():  # equal values: order them by the target, so that they are never discordant
        order = np.lexsort((zr, v))
        vs = v[order]
    zs = zr[order]
    g = int(zs.max(initial=0)) + 1
    zorder = np.argsort(zs.astype(np.int16) if g <= 2**15 else zs, kind="stable")  # a radix sort for int16
    lag = _far_below(vs, float(epsilon)) if epsilon else None
    return TauTable(order.astype(np.int64), zs.astype(np.int32), (g - 1).bit_length(), _runs(new_x, vs.size),
                    _runs(new_x | (zs[1:] != zs[:-1]), vs.size), zorder.astype(np.int32),
                    _runs(np.diff(zs[zorder]) != 0, vs.size), lag)


def _runs(new: np.ndarray, e: int) -> np.ndarray:
    """Bounds of the runs of ``e`` entries, from ``new[k]``: entry k + 1 starts a run."""
    if not e:
        return np.zeros(1, dtype=np.int32)
    return np.concatenate([[0], np.flatnonzero(new) + 1, [e]]).astype(np.int32)


def jit_groups(t: TauTable, *, multi: bool) -> tuple[np.ndarray, ...]:
    """The runs of a table as the compiled loops take them: starts and ends of the runs of equal
    x and (x, z) (only those of two entries or more with ``multi``), zorder, starts and ends of
    the runs of equal z."""
    return (*group_lists(t.x_runs, multi=multi), *group_lists(t.xz_runs, multi=multi), t.zorder,
            *group_lists(t.z_runs, multi=False))


def group_lists(runs: np.ndarray, *, multi: bool) -> tuple[np.ndarray, np.ndarray]:
    """Starts and ends of the runs, only those of two entries or more with ``multi``.

    Examples
    --------
    >>> [a.tolist() for a in group_lists(np.array([0, 1, 3, 4]), multi=True)]  # the run of entries 1, 2
    [[1], [3]]
    """
    starts, ends = runs[:-1], runs[1:]
    if multi:
        keep = ends - starts > 1
        starts, ends = starts[keep], ends[keep]
    return starts, ends


def _far_below(vs: np.ndarray, epsilon: float) -> np.ndarray:
    """For sorted ``vs``: how many entries i have ``vs[j] - vs[i] > epsilon`` (a prefix), per j.

    The difference is rounded as the pair kernel rounds it, and rounding is monotone, so
    a bisection on that very test finds the prefix.
    """
    lo = np.zeros(vs.size, dtype=np.int64)  # vs[j] - vs[i] > eps for every i < lo
    hi = np.arange(vs.size, dtype=np.int64)  # ... and for no i >= hi
    while np.any(lo < hi):
        mid = (lo + hi) // 2
        far = (vs - vs[np.minimum(mid, vs.size - 1)]) > epsilon
        lo, hi = np.where(far & (lo < hi), mid + 1, lo), np.where(~far & (lo < hi), mid, hi)
    return lo




def table_counts(t: TauTable, weights: ArrayLike) -> np.ndarray:
    """Weighted Kendall counts of a table for a batch of weight vectors.

    Parameters
    ----------
    t : TauTable
        From :func:`tau_table`.
    weights : array_like (B, E) of int
        Non-negative integer weight of every entry (in the caller's entry order) in each draw.

    Returns
    -------
    ndarray (9, B) of int64
        Rows :data:`COUNT_ROWS`: ``n``, discordant pairs, pairs tied in x, in (x, z), in z,
        distinct x, distinct z; with epsilon the pairs with ``x_j - x_i > epsilon`` and
        those of them tied in z (0 otherwise).

    Examples
    --------
    >>> t = tau_table([1.0, 2.0, 3.0], [1.0, 3.0, 2.0])
    >>> table_counts(t, [[1, 1, 1], [2, 1, 1]])[:2].tolist()  # n and discordant pairs
    [[3, 4], [1, 1]]
    """
    w = np.asarray(weights, dtype=np.int64)
    if w.ndim != 2 or w.shape[1] != t.order.size or (w.size and w.min() < 0):
        raise ValueError(f"weights must be (draws, {t.order.size}) non-negative integers, got shape {w.shape}")
    dtype, acc, flush = accumulator(int(w.max(initial=0)), int(w.sum(axis=1).max(initial=0)), w.shape[1])
    # entry j of the table is the caller's entry order[j], weighing w[b, order[j]] * 1
    ones = np.ones((1, w.shape[0]), dtype=dtype)
    entries = t.order.astype(np.int32)
    jit = loops("rank.global_jit")
    return jit.weight_counts(entries, np.zeros_like(entries), t.zr, t.nbits, jit_groups(t, multi=False),
                             np.ascontiguousarray(w.T, dtype=dtype), ones, flush, acc, t.lag)


def accumulator(max_weight: int, total: int, entries: int) -> tuple[type[np.integer], np.ndarray, int]:
    """The dtypes of the compiled loops for weights up to ``max_weight`` summing to at most ``total``.

    Returns the dtype of the weights and of their bucket sums (int32 when both fit, else
    int64), an array of the partial sums' dtype, and how many entries are summed before each
    flush of the partial sums into int64.

    Examples
    --------
    >>> for bounds in ((3, 40, 10), (2**20, 2**30, 10), (2**20, 2**40, 10)):
    ...     weights, acc, flush = accumulator(*bounds)
    ...     print(weights.__name__, acc.dtype, flush)
    int32 int32 10
    int32 int64 10
    int64 int64 10
    """
    flush = max(entries, 1)
    if total > _INT32_MAX or max_weight > _INT32_MAX:
        return np.int64, np.zeros(1, dtype=np.int64), flush
    bound = max(max_weight * total, 1)  # one entry's term
    if bound > _INT32_MAX:
        return np.int32, np.zeros(1, dtype=np.int64), flush
    return np.int32, np.zeros(1, dtype=np.int32), max(1, min(_INT32_MAX // bound, flush))


def tau_from_table(counts: np.ndarray, *, variant: Variant = "b", min_pairs: int = 3,
                   epsilon: float = 0.0, self_pairs: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """A Kendall variant from :func:`table_counts`, with the plain kernel's undefined rule.

    ``self_pairs`` (B,), the pairs of copies of one entry (``sum W (W - 1) / 2``), leaves those pairs
    out of every count: the pairs are then those of copies of distinct entries (``(n^2 - sum W^2) / 2``),
    none of them tied for being copies of one entry (the draws of the variants that compare distinct
    units only).

    Examples
    --------
    >>> t = tau_table([1.0, 2.0, 3.0, 4.0], [1.0, 3.0, 2.0, 4.0])
    >>> r, n = tau_from_table(table_counts(t, [[1, 1, 1, 1]]))
    >>> np.round(r, 4).tolist(), n.tolist()
    ([0.6667], [4])
    """
    n, dis, tx0, txz0, tz, mx, mz, far, far_tz = counts
    n0 = n * (n - 1) // 2
    if self_pairs is not None:  # copies of one entry are never far apart, nor discordant
        n0, tx0, txz0, tz = n0 - self_pairs, tx0 - self_pairs, txz0 - self_pairs, tz - self_pairs
    tx, txz = (n0 - far, tz - far_tz) if epsilon else (tx0, txz0)
    cmd = n0 - tx - tz + txz - 2 * dis
    tau = np.asarray(tau_from_counts(cmd, n0, tx, tz, n, np.minimum(mx, mz) if variant == "c" else None,
                                     variant, txz))
    too_few = n < max(int(min_pairs), 2)
    if variant in ("23", "acc23"):
        undefined = too_few
    else:
        undefined = too_few | (mx <= 1) | (mz <= 1)
        if variant == "b" and epsilon > 0:
            undefined = undefined | np.isnan(tau)  # every pair tied within epsilon
    return np.where(undefined, np.nan, np.clip(tau, -1.0, 1.0)), n


def lead_rows(*arrays: ArrayLike) -> tuple[list[np.ndarray], tuple[int, ...]]:
    """Broadcast (..., S, I) arrays and flatten their leading axes: (M, S, I) each, and the leading shape."""
    out = np.broadcast_arrays(*(np.asarray(a, dtype=np.float64) for a in arrays))
    lead = out[0].shape[:-2]
    return [a.reshape((-1,) + a.shape[-2:]) for a in out], lead


class CellTable(NamedTuple):
    """The table of one row's valid cells (:func:`cell_tables`)."""

    table: TauTable
    sys_of: np.ndarray  # (E,) int32 system of each entry
    inp_of: np.ndarray  # (E,) int32 input of each entry
    groups: tuple[np.ndarray, ...]  # the runs for the compiled loops


def cell_tables(x: ArrayLike, z: ArrayLike, *, epsilon: float = 0.0) -> list[CellTable]:
    """The sorted cells of every row of (..., S, I) scores, for many calls of :func:`weighted_global_kendall`.

    Examples
    --------
    >>> [t.sys_of.tolist() for t in cell_tables([[2.0, 1.0], [3.0, np.nan]], [[1.0, 2.0], [3.0, 4.0]])]
    [[0, 0, 1]]
    """
    (xf, zf), _ = lead_rows(x, z)
    out = []
    for row in range(xf.shape[0]):
        valid = ~np.isnan(xf[row]) & ~np.isnan(zf[row])
        sys_idx, inp_idx = np.nonzero(valid)
        t = tau_table(xf[row][valid], zf[row][valid], epsilon=epsilon)
        out.append(CellTable(t, sys_idx[t.order].astype(np.int32), inp_idx[t.order].astype(np.int32),
                             jit_groups(t, multi=False)))
    return out


def weighted_global_kendall(
    x: ArrayLike,
    z: ArrayLike,
    w: ArrayLike | None = None,
    c: ArrayLike | None = None,
    *,
    variant: Variant = "b",
    min_pairs: int = 3,
    epsilon: float = 0.0,
    tables: Sequence[CellTable] | None = None,
    distinct: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Global-level Kendall of bootstrap draws given as system and input counts.

    Parameters
    ----------
    x, z : array_like (..., S, I)
        Scores; leading axes broadcast.
    w : array_like (B, S) of int, optional
        System counts of each draw (None: every system once).
    c : array_like (B, I) of int, optional
        Input counts of each draw (None: every input once). At least one of w and c.
    variant, min_pairs, epsilon
        As in :func:`xcorrstat._kernels.kendall`.
    tables : sequence of CellTable, optional
        :func:`cell_tables` of the same ``x``, ``z`` and ``epsilon``, to sort the cells once
        for many batches of draws.
    distinct : bool
        Count only the pairs of copies of distinct cells (:func:`tau_from_table`'s ``self_pairs``):
        the convention of the variants comparing distinct units only at the other levels.

    Returns
    -------
    r, n : ndarray (..., B)
        Tau and the number of valid cells of the expanded resample of every draw: those of
        :func:`xcorrstat._kernels.kendall` on ``x[..., sys_idx][..., inp_idx]`` flattened
        (without ``distinct``).

    Examples
    --------
    >>> x = np.array([[1.0, 2.0], [3.0, 4.0]]); z = np.array([[1.0, 3.0], [2.0, 4.0]])
    >>> r, n = weighted_global_kendall(x, z, w=[[1, 1], [2, 0]])
    >>> np.round(r, 4).tolist(), n.tolist()
    ([0.6667, 1.0], [4, 4])
    """
    (xf, zf), lead = lead_rows(x, z)
    s, i = xf.shape[-2:]
    wa, ca, b = draw_counts(w, c, s, i, "weighted_global_kendall")
    wt, ct = count_columns(wa, b, s, np.int64), count_columns(ca, b, i, np.int64)  # (S, B), (I, B)
    dtype, acc, flush = accumulator(int(wt.max(initial=0)) * int(ct.max(initial=0)),
                                    int(wt.sum(axis=0).max(initial=0)) * int(ct.sum(axis=0).max(initial=0)), s * i)
    if tables is None:
        tables = cell_tables(xf, zf, epsilon=epsilon)
    elif len(tables) != xf.shape[0]:
        raise ValueError(f"tables must hold one table per row of x, got {len(tables)} for {xf.shape[0]} rows")
    r = np.empty((xf.shape[0], b))
    n = np.empty((xf.shape[0], b), dtype=np.int64)
    wk, ck = wt.astype(dtype), ct.astype(dtype)  # every product w_s c_i and every draw's sum fit in dtype
    jit = loops("rank.global_jit")
    for row, ct_row in enumerate(tables):
        t = ct_row.table
        counts = jit.weight_counts(ct_row.sys_of, ct_row.inp_of, t.zr, t.nbits, ct_row.groups, wk, ck, flush, acc,
                                   t.lag)
        # sum_cells W (W - 1) / 2 with W = w_s c_i: exact in int64 (every W and sum of W fits)
        own = (wt[ct_row.sys_of].astype(np.int64) * ct[ct_row.inp_of]) if distinct else None
        self_pairs = (own * (own - 1)).sum(axis=0) // 2 if own is not None else None
        r[row], n[row] = tau_from_table(counts, variant=variant, min_pairs=min_pairs, epsilon=epsilon,
                                        self_pairs=self_pairs)
    return r.reshape(lead + (b,)), n.reshape(lead + (b,))
