"""Compiled loops of :mod:`xcorrstat._kernels.global_corr` (numba).

Only :mod:`xcorrstat._kernels.global_corr` imports this module, on its first call.
:func:`draws` takes every row's valid cells (one segment per row), and for every draw the cell
weights ``w_s c_i``; per row it runs the draws :data:`LANES` at a time, the draws innermost
(vector registers, IEEE operations, no reassociation), so every draw's sums run over the cells
in the same order whatever the batch. Spearman's midranks are formed per draw from the row's
cells sorted once by x and by z; Pearson's r of the values (or of the ranks) is the corrected
two-pass form. It releases the GIL.
"""

from __future__ import annotations

import importlib
import math

import numpy as np

numba = importlib.import_module("numba")

__all__ = ["LANES", "draws"]

#: Draws computed side by side (one register lane each)
LANES = 32

_jit = numba.njit(nogil=True, cache=True, boundscheck=False, error_model="numpy")


@_jit
def _weights(sys_of, inp_of, ws, ct, lo, e, b0, nl, wt):
    """wt[k, l] = w_s c_i of cell lo + k in draw b0 + l."""
    for k in range(e):
        s, i = sys_of[lo + k], inp_of[lo + k]
        for lane in range(nl):
            wt[k, lane] = ws[s, b0 + lane] * ct[i, b0 + lane]


@_jit
def _midranks(order, new, lo, e, wt, nl, ranks, below, group):
    """ranks[k, l]: midrank of cell k among the weighted cells of draw l (ties share theirs)."""
    below[:nl] = 0.0
    start = 0
    while start < e:
        stop = start + 1
        while stop < e and not new[lo + stop]:
            stop += 1
        group[:nl] = 0.0
        for j in range(start, stop):
            k = order[lo + j]
            for lane in range(nl):
                group[lane] += wt[k, lane]
        for j in range(start, stop):
            k = order[lo + j]
            for lane in range(nl):
                ranks[k, lane] = below[lane] + (group[lane] + 1.0) / 2.0
        for lane in range(nl):
            below[lane] += group[lane]
        start = stop


@_jit
def _pass_one(x, z, e, wt, nl, acc):
    """acc rows 0-6: n, sum x, sum z, min x, max x, min z, max z over the drawn cells (x, z (E, L))."""
    for lane in range(nl):
        acc[0, lane] = 0.0
        acc[1, lane] = 0.0
        acc[2, lane] = 0.0
        acc[3, lane] = np.inf
        acc[4, lane] = -np.inf
        acc[5, lane] = np.inf
        acc[6, lane] = -np.inf
    for k in range(e):
        for lane in range(nl):
            q = wt[k, lane]
            xv = x[k, lane]
            zv = z[k, lane]
            drawn = q > 0
            acc[0, lane] += q
            acc[1, lane] += q * xv
            acc[2, lane] += q * zv
            acc[3, lane] = xv if drawn & (xv < acc[3, lane]) else acc[3, lane]
            acc[4, lane] = xv if drawn & (xv > acc[4, lane]) else acc[4, lane]
            acc[5, lane] = zv if drawn & (zv < acc[5, lane]) else acc[5, lane]
            acc[6, lane] = zv if drawn & (zv > acc[6, lane]) else acc[6, lane]


@_jit
def _pass_two(x, z, e, wt, nl, acc):
    """acc rows 1, 2 become the means; rows 7-11: sums of w dx, w dz, w dx dx, w dz dz, w dx dz."""
    for lane in range(nl):
        acc[1, lane] = acc[1, lane] / acc[0, lane]
        acc[2, lane] = acc[2, lane] / acc[0, lane]
        for j in range(7, 12):
            acc[j, lane] = 0.0
    for k in range(e):
        for lane in range(nl):
            q = wt[k, lane]
            dx = x[k, lane] - acc[1, lane]
            dz = z[k, lane] - acc[2, lane]
            wdx = q * dx
            wdz = q * dz
            acc[7, lane] += wdx
            acc[8, lane] += wdz
            acc[9, lane] += wdx * dx
            acc[10, lane] += wdz * dz
            acc[11, lane] += wdx * dz


@_jit
def _finish(acc, nl, need, row, b0, out):
    """r (clipped to [-1, 1], NaN where undefined) and n of the lanes into out[:, row, b0:]."""
    for lane in range(nl):
        n = acc[0, lane]
        c_x = acc[7, lane] / n
        c_z = acc[8, lane] / n
        s_xx = acc[9, lane] - n * c_x * c_x
        s_zz = acc[10, lane] - n * c_z * c_z
        s_xz = acc[11, lane] - n * c_x * c_z
        r = s_xz / math.sqrt(s_xx * s_zz)
        r = 1.0 if r > 1.0 else (-1.0 if r < -1.0 else r)
        undefined = (n < need) | (n <= 0) | ~(acc[3, lane] < acc[4, lane]) | ~(acc[5, lane] < acc[6, lane])
        out[0, row, b0 + lane] = np.nan if undefined else r
        out[1, row, b0 + lane] = n


@_jit
def draws(off, sys_of, inp_of, x, z, x_order, x_new, z_order, z_new, ranked, ws, ct, need, out):
    """out (2, R, B): r and n of every row's cells (segment ``off[r]:off[r + 1]``) under every draw.

    ``x``, ``z`` (E,) are the cells' scores, ``ws`` (S, B) and ``ct`` (I, B) the system and
    input counts of the draws. With ``ranked`` the statistic is Spearman's: the scores are
    replaced by each draw's weighted midranks, from the cells of each segment sorted by x
    (``x_order``, local indices; ``x_new`` marks the first of each run of equal values) and by z.
    """
    n_draws = ws.shape[1]
    longest = 0
    for row in range(off.size - 1):
        longest = max(longest, off[row + 1] - off[row])
    wt = np.empty((longest, LANES))
    acc = np.empty((12, LANES))
    xs, zs = np.empty((longest, LANES)), np.empty((longest, LANES))  # scores in every lane, or ranks
    below, group = np.empty(LANES), np.empty(LANES)
    for row in range(off.size - 1):
        lo, e = off[row], off[row + 1] - off[row]
        if not ranked:
            for k in range(e):
                for lane in range(LANES):
                    xs[k, lane] = x[lo + k]
                    zs[k, lane] = z[lo + k]
        for b0 in range(0, n_draws, LANES):
            nl = min(LANES, n_draws - b0)
            _weights(sys_of, inp_of, ws, ct, lo, e, b0, nl, wt)
            if ranked:
                _midranks(x_order, x_new, lo, e, wt, nl, xs, below, group)
                _midranks(z_order, z_new, lo, e, wt, nl, zs, below, group)
            _pass_one(xs, zs, e, wt, nl, acc)
            _pass_two(xs, zs, e, wt, nl, acc)
            _finish(acc, nl, need, row, b0, out)
