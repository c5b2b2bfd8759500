"""Compiled loops of :mod:`xcorrstat._kernels.rank.global_swap` for many small tables (one per group: a
system's row at within-system level, an input's systems at input level) in one call (numba).

:func:`group_swap_taus` counts each table's X' and Y' with the loops of
:mod:`xcorrstat._kernels.rank.global_jit` and forms their tau there, with the arithmetic of
:func:`~xcorrstat._kernels.rank.global_counts.tau_from_table`; :func:`linear_terms_tables` gives the
tables' linear terms. Only :mod:`xcorrstat._kernels.rank.global_swap` imports this module, on first use.
The functions release the GIL.
"""

from __future__ import annotations

import importlib

import numpy as np

from .global_jit import N_COUNTS, N_ROWS, linear_terms, swap_counts, swap_counts_linear

numba = importlib.import_module("numba")

__all__ = ["group_swap_taus", "linear_terms_tables"]

_JIT = {"nogil": True, "cache": True, "boundscheck": False, "error_model": "numpy"}


@numba.njit(**_JIT)
def linear_terms_tables(zr, x_runs, x_off, src, cell, e_off, n_cells, which, lin, c0):
    """:func:`linear_terms` of each table ``g`` with ``which[g]``, of concatenated tables (entries
    ``e_off[g]:e_off[g + 1]``, runs of equal x ``x_runs[x_off[g]:x_off[g + 1] + 1]``, local indexes):
    writes ``lin[g * n_cells:(g + 1) * n_cells]`` and ``c0[g]``."""
    for g in range(e_off.shape[0] - 1):
        if not which[g]:
            continue
        e0, e1 = e_off[g], e_off[g + 1]
        part, c = linear_terms(zr[e0:e1], x_runs[x_off[g]:x_off[g + 1] + 1], src[e0:e1], cell[e0:e1], n_cells)
        lin[g * n_cells:(g + 1) * n_cells] = part
        c0[g] = c


@numba.njit(**_JIT)
def _table_swap_counts(g, cell, src, zr, e_off, nbits, runs, run_off, masks, mask_of, lin, c0, fixed, linear,
                       out):
    """The (9, 2B) counts of X' (columns ``0..B-1``) and Y' of table ``g`` into ``out`` (rows 7 and 8 left as
    they are), for swap masks.

    The tables' arrays are concatenated: table g holds the entries ``e_off[g]:e_off[g + 1]`` of
    ``cell``, ``src`` and ``zr`` (local cell and entry indexes), its runs ``runs[k][run_off[k, g]:
    run_off[k, g + 1]]`` (the seven lists of :func:`group_counts`, runs of one entry left out of
    the x and (x, z) lists) and its cells' linear terms ``lin[g * I:(g + 1) * I]``. Its masks are
    ``masks[mask_of[g]]`` (B, I) of 0/1. With ``linear[g]`` (X and Y valid in the same cells) X'
    is counted by :func:`swap_counts_linear` and Y' follows from ``c0[g] = S(X) - S(Y)`` and the
    fixed target counts ``fixed[:, g] = (tz, distinct z)``; otherwise :func:`swap_counts` counts both.
    """
    b = masks.shape[1]
    n_cells = masks.shape[2]
    e0, e1 = e_off[g], e_off[g + 1]
    size = e1 - e0
    groups = (runs[0][run_off[0, g]:run_off[0, g + 1]], runs[1][run_off[1, g]:run_off[1, g + 1]],
              runs[2][run_off[2, g]:run_off[2, g + 1]], runs[3][run_off[3, g]:run_off[3, g + 1]],
              runs[4][run_off[4, g]:run_off[4, g + 1]], runs[5][run_off[5, g]:run_off[5, g + 1]],
              runs[6][run_off[6, g]:run_off[6, g + 1]])
    flush = max(1, 2147483647 // max(size, 1))
    m = masks[mask_of[g]]
    if not linear[g]:
        out[:N_COUNTS] = swap_counts(cell[e0:e1], src[e0:e1], zr[e0:e1], nbits[g], groups, m, True, flush)
        return
    singles = size
    for k in range(groups[0].shape[0]):
        singles -= groups[1][k] - groups[0][k]
    part = swap_counts_linear(cell[e0:e1], src[e0:e1], zr[e0:e1], nbits[g], groups, m,
                              lin[g * n_cells:(g + 1) * n_cells], singles, flush)
    tz, mz = fixed[0, g], fixed[1, g]
    for lane in range(b):
        n, dis_x, tx_x, txz_x = part[0, lane], part[1, lane], part[2, lane], part[3, lane]
        n0 = n * (n - 1) // 2
        s_y = (n0 - tx_x - tz + txz_x - 2 * dis_x) - c0[g] - part[8, lane]
        y = b + lane
        out[0, lane], out[0, y] = n, n
        out[1, lane], out[1, y] = dis_x, (n0 - part[5, lane] - tz + part[6, lane] - s_y) // 2
        out[2, lane], out[2, y] = tx_x, part[5, lane]
        out[3, lane], out[3, y] = txz_x, part[6, lane]
        out[4, lane], out[4, y] = tz, tz
        out[5, lane], out[5, y] = part[4, lane], part[7, lane]
        out[6, lane], out[6, y] = mz, mz


@numba.njit(**_JIT)
def _tau(n, dis, tx, txz, tz, mx, mz, variant, need):
    """One Kendall variant (0 a, 1 b, 2 c, 3 tau_eq, 4 acc_eq) from exact counts, with the arithmetic and the
    undefined rule of :func:`~xcorrstat._kernels.rank.global_counts.tau_from_table` (no epsilon), operation
    for operation."""
    n0 = n * (n - 1) // 2
    cmd = float(n0 - tx - tz + txz - 2 * dis)
    if variant == 0:
        tau = cmd / float(n0)
    elif variant == 1:
        tau = cmd / np.sqrt(float(n0 - tx)) / np.sqrt(float(n0 - tz))
    elif variant == 2:
        mf = float(min(mx, mz))
        nf = float(n)
        tau = 2.0 * cmd / (nf * nf * (mf - 1.0) / mf)
    elif variant == 3:
        tau = (cmd + 3.0 * float(txz) - float(tx) - float(tz)) / float(n0)
    else:
        total = float(n0)
        tau = ((total - float(tx) - float(tz) + float(txz) + cmd) / 2.0 + float(txz)) / total
    if n < need or (variant <= 2 and (mx <= 1 or mz <= 1)):
        return np.nan
    if tau < -1.0:
        return -1.0
    if tau > 1.0:
        return 1.0
    return tau


@numba.njit(**_JIT)
def group_swap_taus(cell, src, zr, e_off, nbits, runs, run_off, masks, mask_of, lin, c0, fixed, linear, variant,
                    need, r, n):
    """Kendall's tau (``variant``: 0 a, 1 b, 2 c, 3 tau_eq, 4 acc_eq) of X' and Y' of every table, from the
    counts of :func:`_table_swap_counts`, one table at a time: ``r`` (G, 2B) and the valid items ``n`` (G, 2B);
    NaN below ``need`` items (and, but for tau_eq and acc_eq, with one distinct value)."""
    counts = np.zeros((N_ROWS, 2 * masks.shape[1]), np.int64)
    for g in range(e_off.shape[0] - 1):
        _table_swap_counts(g, cell, src, zr, e_off, nbits, runs, run_off, masks, mask_of, lin, c0, fixed, linear,
                           counts)
        for lane in range(counts.shape[1]):
            items = counts[0, lane]
            n[g, lane] = items
            r[g, lane] = _tau(items, counts[1, lane], counts[2, lane], counts[3, lane], counts[4, lane],
                              counts[5, lane], counts[6, lane], variant, need)
