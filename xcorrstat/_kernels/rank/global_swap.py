"""Global-level Kendall of swapped metrics: ``tau(X', Z) - tau(Y', Z)`` for a batch of swap masks.

A draw gives each cell of X' the (standardised) score of X or of Y and Y' the other one. The
2n scores of X and Y are sorted once with the target (:func:`.rank.global_counts.ranked_table`);
in a draw X' keeps one entry per cell (weight 1) and Y' the other, and every count of
:mod:`xcorrstat._kernels.rank.global_counts` follows, with no sort per draw. X and Y may be
missing in different cells: a cell of X' is then valid only when its score is.

When X and Y are valid in the same cells, Y' needs no pass of its own: every entry belongs
to exactly one of X' and Y', so Y''s tie counts are a run's size minus X''s, and its
``S = C - D`` is linear in the mask given X''s. With ``g_ab = sgn(z_a - z_b)`` and
``f_ab(p, q) = sgn(u^p_a - u^q_b)`` (``u^0 = X``, ``u^1 = Y``), a pair contributes
``g_ab f_ab(m_a, m_b)`` to ``S(X')`` and ``g_ab f_ab(1 - m_a, 1 - m_b)`` to ``S(Y')``; their
difference is ``g_ab [A_ab (1 - m_a - m_b) + B_ab (m_b - m_a)]`` with ``A = f(0, 0) - f(1, 1)``
and ``B = f(0, 1) - f(1, 0)``: no ``m_a m_b`` term. So
``S(Y') = S(X') - (S(X) - S(Y)) - sum_c m_c l_c`` with ``l_c = h(y_c, z_c) - h(x_c, z_c)`` and
``h(v, z_c) = sum over the 2n entries e of sgn(v - v_e) sgn(z_c - z_e)``, found once
(:func:`xcorrstat._kernels.rank.global_jit.linear_terms`). When X and Y are missing in
different cells, the compiled loops count Y' like X'. The tests compare both with NumPy counts
of X' and Y' and with the explicitly swapped matrices.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from ..._types import Variant
from .._compiled import loops
from .global_counts import (
    COUNT_ROWS,
    TauTable,
    jit_groups,
    lead_rows,
    ranked_table,
    tau_from_table,
)

__all__ = ["group_tables", "swap_global_kendall", "swap_group_kendall", "swap_table_taus"]

_INT32_MAX = 2**31 - 1
#: The variants as :func:`xcorrstat._kernels.rank.group_jit.group_swap_taus` numbers them.
_VARIANT_CODES = {"a": 0, "b": 1, "c": 2, "23": 3, "acc23": 4}
#: Tables of this many entries or more keep the linear terms l_c (|l_c| <= 2 E) in int64.
LINEAR_INT32_ENTRIES = _INT32_MAX // 8


class _SwapRow(NamedTuple):
    """One row's table of the 2n scores of X and Y, and what its draws reuse."""

    table: TauTable
    cell: np.ndarray  # (E,) int32 cell of each entry
    src: np.ndarray  # (E,) uint8: 0 the score of X, 1 that of Y
    fixed: tuple[int, int] | None  # (tz, distinct z) when X and Y are valid in the same cells
    groups: tuple[np.ndarray, ...]  # the runs for the compiled loops (those of one entry left out)
    linear: tuple[np.ndarray, int] | None  # (l_c per cell, S(X) - S(Y)) for the compiled loops


def _swap_row(zx: np.ndarray, zy: np.ndarray, z: np.ndarray) -> _SwapRow:
    """The table of one (S, I) row: the valid scores of X (cells where X and Z are present), then of Y."""
    zf = z.reshape(-1)
    vz = ~np.isnan(zf)
    vx = ~np.isnan(zx).reshape(-1) & vz
    vy = ~np.isnan(zy).reshape(-1) & vz
    ranks = np.zeros(zf.size, dtype=np.int64)
    ranks[vz] = np.unique(zf[vz], return_inverse=True)[1].reshape(-1)
    cells = np.concatenate([np.flatnonzero(vx), np.flatnonzero(vy)])
    src = np.repeat(np.array([0, 1], dtype=np.uint8), [int(vx.sum()), int(vy.sum())])
    t = ranked_table(np.concatenate([zx.reshape(-1)[vx], zy.reshape(-1)[vy]]), ranks[cells])
    row = _SwapRow(t, cells[t.order].astype(np.int32), src[t.order], None, jit_groups(t, multi=True), None)
    if not np.array_equal(vx, vy):
        return row
    # every draw keeps the same cells, each once: the target's ties are fixed
    per_z = np.diff(t.z_runs).astype(np.int64) // 2  # each cell is two entries, its X and its Y
    row = row._replace(fixed=(int(np.sum(per_z * (per_z - 1) // 2)), int(per_z.size)))
    lin, c0 = loops("rank.global_jit").linear_terms(t.zr, t.x_runs, row.src, row.cell, zf.size)
    return row._replace(linear=(lin.astype(np.int32 if t.zr.size < LINEAR_INT32_ENTRIES else np.int64), int(c0)))


def swap_global_kendall(
    zx: ArrayLike,
    zy: ArrayLike,
    z: ArrayLike,
    *,
    variant: Variant = "b",
    min_pairs: int = 3,
) -> Callable[[ArrayLike], np.ndarray]:
    """``deltas(masks)``: global-level ``tau(X', Z) - tau(Y', Z)`` for a batch of swap masks.

    Parameters
    ----------
    zx, zy, z : array_like (..., S, I)
        The two (standardised) metrics and the target; leading axes broadcast. X and Y
        may be missing in different cells.
    variant, min_pairs
        As in :func:`xcorrstat._kernels.kendall`.

    Returns
    -------
    callable
        ``deltas(masks)`` with masks (B, S, I) of bool (True: X and Y swap in that cell)
        gives (..., B): the statistic of the explicitly swapped matrices, draw by draw.

    Examples
    --------
    >>> zx = np.arange(6.0).reshape(2, 3); zy = zx[::-1].copy()
    >>> deltas = swap_global_kendall(zx, zy, zx)
    >>> np.round(deltas(np.array([np.zeros((2, 3), bool), np.ones((2, 3), bool)])), 4).tolist()
    [1.2, -1.2]
    """
    (xf, yf, zf), lead = lead_rows(zx, zy, z)
    rows = [_swap_row(xf[p], yf[p], zf[p]) for p in range(xf.shape[0])]

    def deltas(masks: ArrayLike) -> np.ndarray:
        m = np.asarray(masks, dtype=bool)
        if m.ndim != 3 or m.shape[1:] != xf.shape[-2:]:
            raise ValueError(f"masks must be (draws, {xf.shape[-2]}, {xf.shape[-1]}), got shape {m.shape}")
        b = m.shape[0]
        flat = np.ascontiguousarray(m.reshape(b, -1)).view(np.uint8)  # (B, cells) of 0/1
        out = np.empty((len(rows), b))
        for p, row in enumerate(rows):
            r, _ = tau_from_table(_row_counts(row, flat), variant=variant, min_pairs=min_pairs)
            out[p] = r[:b] - r[b:]
        return out.reshape(lead + (b,))

    return deltas


def swap_group_kendall(
    zx: ArrayLike,
    zy: ArrayLike,
    z: ArrayLike,
    *,
    variant: Variant = "b",
    min_pairs: int = 3,
) -> Callable[[ArrayLike], tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """``taus(masks)``: Kendall's tau of X' and of Y' with Z within each system, for a batch of swap masks.

    Each system's row of I cells is a group, counted as :func:`swap_global_kendall` counts
    one matrix (one sorted table of its 2 I scores, no sort per draw; every group's table sorted
    in one pass, :func:`group_tables`), the mask of the group being the system's row of the mask.

    Parameters
    ----------
    zx, zy, z : array_like (..., S, I)
        The two (standardised) metrics and the target; leading axes broadcast. X and Y
        may be missing in different cells.
    variant, min_pairs
        As in :func:`xcorrstat._kernels.kendall`.

    Returns
    -------
    callable
        ``taus(masks)`` with masks (B, S, I) of bool (True: X and Y swap in that cell) gives
        ``(r_x, r_y, n_x, n_y)``, each (..., B, S): the tau of each system's row of X' (Y')
        and its number of valid items, as :func:`xcorrstat._kernels.kendall` gives them on the
        explicitly swapped rows.

    Examples
    --------
    >>> zx = np.array([[1.0, 2.0, 3.0], [3.0, 1.0, 2.0]]); zy = -zx  # Y ranks each system backwards
    >>> taus = swap_group_kendall(zx, zy, zx)
    >>> r_x, r_y, n_x, n_y = taus(np.zeros((1, 2, 3), bool))
    >>> r_x.tolist(), r_y.tolist(), n_x.tolist()
    ([[1.0, 1.0]], [[-1.0, -1.0]], [[3, 3]])
    """
    (xf, yf, zf), lead = lead_rows(zx, zy, z)
    n_rows, s, i = xf.shape
    xr, yr, zr = (a.reshape(n_rows * s, i) for a in (xf, yf, zf))
    counted = swap_table_taus(xr, yr, zr, np.tile(np.arange(s, dtype=np.int64), n_rows), variant=variant,
                              min_pairs=min_pairs)

    def taus(masks: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        m = np.asarray(masks, dtype=bool)
        if m.ndim != 3 or m.shape[1:] != (s, i):
            raise ValueError(f"masks must be (draws, {s}, {i}), got shape {m.shape}")
        b = m.shape[0]
        r, n = counted(np.swapaxes(m, 0, 1))
        shape = lead + (s, 2 * b)
        r, n = np.swapaxes(r.reshape(shape), -1, -2), np.swapaxes(n.reshape(shape), -1, -2)  # (..., 2B, S)
        return (np.ascontiguousarray(r[..., :b, :]), np.ascontiguousarray(r[..., b:, :]),
                np.ascontiguousarray(n[..., :b, :]), np.ascontiguousarray(n[..., b:, :]))

    return taus


def swap_table_taus(xf: np.ndarray, yf: np.ndarray, zf: np.ndarray, mask_of: np.ndarray, *, variant: Variant,
                    min_pairs: int) -> Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """``taus(masks)``: Kendall's tau of X' and Y' with Z in each of R rows of n cells ((R, n) scores, one sorted
    table per row, :func:`group_tables`), row g swapped by the mask ``masks[mask_of[g]]``.

    ``masks`` (M, B, n) of bool gives ``(r, n)``, each (R, 2B): the tau of each row of X' (columns ``:B``) and
    of Y' (``B:``), and its valid items, as :func:`xcorrstat._kernels.kendall` gives them on the swapped rows.

    Examples
    --------
    >>> x = np.array([[1.0, 2.0, 3.0]]); masks = np.zeros((1, 1, 3), bool)
    >>> r, n = swap_table_taus(x, -x, x, np.array([0]), variant="b", min_pairs=2)(masks)
    >>> r.tolist(), n.tolist()
    ([[1.0, -1.0]], [[3, 3]])
    """
    tables = group_tables(xf, yf, zf)
    code, need = _VARIANT_CODES[variant], max(int(min_pairs), 2)
    rows = xf.shape[0]
    mask_rows = np.ascontiguousarray(mask_of, dtype=np.int64)

    def taus(masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        m = np.ascontiguousarray(masks, dtype=bool)
        if m.ndim != 3 or m.shape[2] != xf.shape[1]:
            raise ValueError(f"masks must be (rows, draws, {xf.shape[1]}), got shape {m.shape}")
        b = m.shape[1]
        r = np.empty((rows, 2 * b))
        n = np.empty((rows, 2 * b), dtype=np.int64)
        loops("rank.group_jit").group_swap_taus(*tables[:7], m.view(np.uint8), mask_rows, *tables[7:], code, need,
                                                 r, n)
        return r, n

    return taus


def _bounds(new: np.ndarray, row_of: np.ndarray, e_off: np.ndarray, n_rows: int, *,
            multi: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Local starts and ends of the runs of concatenated tables (``new[k]``: entry k starts a run; every
    table's first entry does) and each table's offset into them; only runs of two entries or more with
    ``multi``."""
    starts = np.flatnonzero(new)
    ends = np.append(starts[1:], new.size)
    if multi:
        keep = ends - starts > 1
        starts, ends = starts[keep], ends[keep]
    rows = row_of[starts]
    off = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n_rows), out=off[1:])
    local = e_off[rows]
    return (starts - local).astype(np.int32), (ends - local).astype(np.int32), off


def group_tables(xf: np.ndarray, yf: np.ndarray, zf: np.ndarray) -> tuple:
    """The tables of R rows of n cells each ((R, n) scores of X and Y and the target), end to end, as
    :func:`xcorrstat._kernels.rank.group_jit.group_swap_taus` takes them: each row's table is the
    one :func:`_swap_row` builds for it (its valid scores of X, then of Y, sorted by value and the
    target's dense rank, ties in both left in that order), all rows sorted at once.
    """
    n_rows, n = xf.shape
    vz = ~np.isnan(zf)
    valid = np.concatenate([~np.isnan(xf) & vz, ~np.isnan(yf) & vz], axis=1)  # (R, 2n): X's cells, then Y's
    row_of, col = np.nonzero(valid)
    cell = np.where(col < n, col, col - n)
    src = (col >= n).astype(np.uint8)
    v = np.concatenate([xf, yf], axis=1)[row_of, col]
    zr = _dense_ranks(zf)[row_of, cell]
    order = np.lexsort((zr, v, row_of))
    row_of, cell, src, v, zr = row_of[order], cell[order], src[order], v[order], zr[order]
    counts = np.bincount(row_of, minlength=n_rows)
    e_off = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(counts, out=e_off[1:])
    first = np.zeros(v.size, dtype=bool)
    first[e_off[:-1][counts > 0]] = True
    new_x = first.copy()
    new_x[1:] |= v[1:] != v[:-1]
    new_xz = new_x.copy()
    new_xz[1:] |= zr[1:] != zr[:-1]
    zorder = np.lexsort((zr, row_of))  # by the target within each row, ties in table order
    zz = zr[zorder]
    new_z = first.copy()
    new_z[1:] |= zz[1:] != zz[:-1]
    runs, offs = _run_lists(new_x, new_xz, zorder, new_z, row_of, e_off, n_rows)
    top = np.zeros(n_rows, dtype=np.int64)
    np.maximum.at(top, row_of, zr)
    nbits = np.where(top > 0, np.frexp(top.astype(np.float64))[1], 0).astype(np.int64)
    linear = (valid[:, :n] == valid[:, n:]).all(axis=1)  # X and Y valid in the same cells: the linear form
    fixed = _fixed_target(new_z, row_of, linear)
    x_starts = np.flatnonzero(new_x)  # every run of equal x, with each table's size: linear_terms' bounds
    x_off = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(np.bincount(row_of[x_starts], minlength=n_rows), out=x_off[1:])
    x_runs = _with_ends(x_starts - e_off[row_of[x_starts]], x_off, counts)
    wide = bool((counts[linear] >= LINEAR_INT32_ENTRIES).any())
    lin = np.zeros(n_rows * n, dtype=np.int64)
    c0 = np.zeros(n_rows, dtype=np.int64)
    cell32, zr32 = cell.astype(np.int32), zr.astype(np.int32)
    loops("rank.group_jit").linear_terms_tables(zr32, x_runs, x_off + np.arange(n_rows + 1), src, cell32,
                                                 e_off, n, linear, lin, c0)
    return (cell32, src, zr32, e_off, nbits, tuple(runs), np.stack(offs), lin.astype(np.int64 if wide else np.int32),
            c0, fixed, linear)


def _dense_ranks(zf: np.ndarray) -> np.ndarray:
    """(R, n) dense ranks 0, 1, ... of each row's target values (as ``np.unique``'s inverse over the
    row's cells with a target; anything at a missing cell)."""
    zo = np.argsort(zf, axis=1, kind="stable")  # NaN last
    zsorted = np.take_along_axis(zf, zo, axis=1)
    step = np.zeros(zsorted.shape, dtype=np.int64)
    step[:, 1:] = zsorted[:, 1:] != zsorted[:, :-1]
    ranks = np.empty(zf.shape, dtype=np.int64)
    np.put_along_axis(ranks, zo, np.cumsum(step, axis=1), axis=1)
    return ranks


def _run_lists(new_x: np.ndarray, new_xz: np.ndarray, zorder: np.ndarray, new_z: np.ndarray, row_of: np.ndarray,
               e_off: np.ndarray, n_rows: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The seven run lists of the compiled loops (x and (x, z) runs of two entries or more, zorder, z runs)
    of every table, end to end, and each list's offsets per table."""
    runs, offs = [], []
    for flags, multi in ((new_x, True), (new_xz, True)):
        a, b, off = _bounds(flags, row_of, e_off, n_rows, multi=multi)
        runs += [a, b]
        offs += [off, off]
    runs.append((zorder - e_off[row_of]).astype(np.int32))
    offs.append(e_off)
    a, b, off = _bounds(new_z, row_of, e_off, n_rows, multi=False)
    return runs + [a, b], offs + [off, off]


def _fixed_target(new_z: np.ndarray, row_of: np.ndarray, linear: np.ndarray) -> np.ndarray:
    """(2, R): the target's tie pairs and distinct values of each table whose X and Y are valid in the same
    cells (each cell two entries of one target value; 0 for the others)."""
    starts = np.flatnonzero(new_z)
    per_z = np.diff(np.append(starts, new_z.size)) // 2
    z_row = row_of[starts]
    fixed = np.zeros((2, linear.size), dtype=np.int64)
    np.add.at(fixed[0], z_row, per_z * (per_z - 1) // 2)
    np.add.at(fixed[1], z_row, 1)
    fixed[:, ~linear] = 0
    return fixed


def _with_ends(starts: np.ndarray, off: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Each table's run bounds (its runs' local starts, then its size), end to end: table g's are
    ``out[off[g] + g:off[g + 1] + g + 1]``."""
    n_rows = counts.size
    out = np.empty(off[-1] + n_rows, dtype=np.int32)
    pos = np.arange(off[-1]) + np.repeat(np.arange(n_rows), np.diff(off))
    out[pos] = starts
    out[off[1:] + np.arange(n_rows)] = counts
    return out


def _row_counts(row: _SwapRow, masks: np.ndarray) -> np.ndarray:
    """(9, 2B) counts of X' then Y' of one table for masks (B, cells) of 0/1."""
    return _linear_counts(row, masks) if row.linear is not None else _swap_counts(row, masks)


def _swap_counts(row: _SwapRow, masks: np.ndarray) -> np.ndarray:
    """(9, 2B) counts of X' then Y' for masks (B, cells), both counted by the compiled loops."""
    t = row.table
    counts = np.zeros((len(COUNT_ROWS), 2 * masks.shape[0]), dtype=np.int64)
    jit = loops("rank.global_jit")
    counts[:7] = jit.swap_counts(row.cell, row.src, t.zr, t.nbits, row.groups, masks, row.fixed is None,
                                 max(1, _INT32_MAX // max(t.zr.size, 1)))
    if row.fixed is not None:
        counts[4], counts[6] = row.fixed
    return counts


def _linear_counts(row: _SwapRow, masks: np.ndarray) -> np.ndarray:
    """(9, 2B) counts with Y''s discordant pairs from the linear form (module docstring)."""
    assert row.fixed is not None and row.linear is not None
    t, b = row.table, masks.shape[0]
    lin, c0 = row.linear
    singles = t.zr.size - int(np.sum(row.groups[1] - row.groups[0]))  # entries alone in their run of x
    jit = loops("rank.global_jit")
    part = jit.swap_counts_linear(row.cell, row.src, t.zr, t.nbits, row.groups, masks, lin, singles,
                                  max(1, _INT32_MAX // max(t.zr.size, 1)))
    n, dis_x, tx_x, txz_x, mx_x, tx_y, txz_y, mx_y, lm = part
    tz, mz = row.fixed
    counts = np.zeros((len(COUNT_ROWS), 2 * b), dtype=np.int64)
    n0 = n * (n - 1) // 2
    s_y = (n0 - tx_x - tz + txz_x - 2 * dis_x) - c0 - lm
    dis_y = (n0 - tx_y - tz + txz_y - s_y) // 2
    for col, values in ((slice(0, b), (n, dis_x, tx_x, txz_x, tz, mx_x, mz)),
                        (slice(b, 2 * b), (n, dis_y, tx_y, txz_y, tz, mx_y, mz))):
        for r, v in enumerate(values):
            counts[r, col] = v
    return counts

