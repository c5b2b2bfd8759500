"""Compiled loops of :mod:`xcorrstat._kernels.linear.global_corr` (numba).

Only :mod:`xcorrstat._kernels.linear.global_corr` imports this module, on its first call.
:func:`draws` takes every row's valid cells (one segment per row) and the system and input
counts of the draws; per row it runs the draws :data:`LANES` at a time, the draws innermost
(vector registers, IEEE operations, no reassociation), so every draw's sums run over the cells
in the same order whatever the batch. Pearson: the corrected two-pass sums, each over a
system's cells weighted by the input counts, then times the system's count (:func:`_cell_means`,
:func:`_cell_moments`). Spearman: one pass over the cells in x order gives each run of equal x
its midrank and carries the weighted ranks into the runs of equal z, which get theirs at the end
(:func:`_ranked`); every sum is of multiples of 1/4, exact. They release the GIL.
"""

from __future__ import annotations

import importlib
import math

import numpy as np

numba = importlib.import_module("numba")

__all__ = ["LANES", "draws"]

#: Draws computed side by side (one register lane each)
LANES = 32

#: A centred sum of squares at most n * TINY (scores at most 1) may be of a constant: checked cell by cell
TINY = 2.0**-80

_jit = numba.njit(nogil=True, cache=True, boundscheck=False, error_model="numpy")


@_jit
def _lane_counts(counts, b0, nl, out):
    """out[u, l] = counts[u, b0 + l] (0 in the lanes past the last draw)."""
    for u in range(counts.shape[0]):
        for lane in range(LANES):
            out[u, lane] = counts[u, b0 + lane] if lane < nl else 0.0


@_jit
def _system_end(sys_of, lo, k, e):
    """The end of the run of cells of the system of cell k (cells are in system order)."""
    stop = k + 1
    while stop < e and sys_of[lo + stop] == sys_of[lo + k]:
        stop += 1
    return stop


@_jit
def _cell_means(x, z, sys_of, inp_of, lo, e, wsc, ctc, n, mx, mz, part):
    """Pass 1 of Pearson: n and the weighted means, w_s c_i as w_s (sum over the system's cells of c_i ...)."""
    n[:] = 0.0
    mx[:] = 0.0
    mz[:] = 0.0
    k = 0
    while k < e:
        stop = _system_end(sys_of, lo, k, e)
        part[:3] = 0.0
        for j in range(k, stop):
            i, xv, zv = inp_of[lo + j], x[lo + j], z[lo + j]
            for lane in range(LANES):
                q = ctc[i, lane]
                part[0, lane] += q
                part[1, lane] += q * xv
                part[2, lane] += q * zv
        s = sys_of[lo + k]
        for lane in range(LANES):
            a = wsc[s, lane]
            n[lane] += a * part[0, lane]
            mx[lane] += a * part[1, lane]
            mz[lane] += a * part[2, lane]
        k = stop
    for lane in range(LANES):
        mx[lane] = mx[lane] / n[lane]
        mz[lane] = mz[lane] / n[lane]


@_jit
def _cell_moments(x, z, sys_of, inp_of, lo, e, wsc, ctc, mx, mz, acc, part):
    """Pass 2 of Pearson: acc rows 3-7 are the sums of w dx, w dz, w dx dx, w dz dz, w dx dz."""
    acc[3:8] = 0.0
    k = 0
    while k < e:
        stop = _system_end(sys_of, lo, k, e)
        part[:] = 0.0
        for j in range(k, stop):
            i, xv, zv = inp_of[lo + j], x[lo + j], z[lo + j]
            for lane in range(LANES):
                q = ctc[i, lane]
                dx = xv - mx[lane]
                dz = zv - mz[lane]
                wdx = q * dx
                wdz = q * dz
                part[0, lane] += wdx
                part[1, lane] += wdz
                part[2, lane] += wdx * dx
                part[3, lane] += wdz * dz
                part[4, lane] += wdx * dz
        s = sys_of[lo + k]
        for lane in range(LANES):
            a = wsc[s, lane]
            for j in range(5):
                acc[3 + j, lane] += a * part[j, lane]
        k = stop


@_jit
def _constant_cells(v, sys_of, inp_of, lo, e, wsc, ctc, lane):
    """Whether scores v[lo:lo + e] take one value over the cells of weight > 0 in ``lane``."""
    first = np.nan
    for k in range(e):
        if wsc[sys_of[lo + k], lane] * ctc[inp_of[lo + k], lane] > 0:
            if first != first:
                first = v[lo + k]
            elif v[lo + k] != first:
                return False
    return True


@_jit
def _r(acc, lane):
    """n, r clipped to [-1, 1] and the centred sums of squares of x and z of one lane."""
    nb = acc[0, lane]
    c_x = acc[3, lane] / nb
    c_z = acc[4, lane] / nb
    s_xx = acc[5, lane] - nb * c_x * c_x
    s_zz = acc[6, lane] - nb * c_z * c_z
    s_xz = acc[7, lane] - nb * c_x * c_z
    r = s_xz / math.sqrt(s_xx * s_zz)
    return nb, (1.0 if r > 1.0 else (-1.0 if r < -1.0 else r)), s_xx, s_zz


# x or z is constant over the drawn cells only if its centred sum of squares is tiny next to its
# scale (at most 1 for normalised scores): only such lanes are looked at cell by cell, so the rule
# is exactly that of the plain kernels (a single value over the drawn valid cells).


@_jit
def _finish_cells(x, z, sys_of, inp_of, lo, e, wsc, ctc, nl, need, acc, row, b0, out):
    """Pearson's r (NaN where undefined) and n of the lanes into out[:, row, b0:]."""
    for lane in range(nl):
        nb, r, s_xx, s_zz = _r(acc, lane)
        tiny = nb * TINY
        undefined = (nb < need) | (nb <= 0)
        if not undefined and not s_xx > tiny:
            undefined = _constant_cells(x, sys_of, inp_of, lo, e, wsc, ctc, lane)
        if not undefined and not s_zz > tiny:
            undefined = _constant_cells(z, sys_of, inp_of, lo, e, wsc, ctc, lane)
        out[0, row, b0 + lane] = np.nan if undefined else r
        out[1, row, b0 + lane] = nb


@_jit
def _ranked(sys_of, inp_of, x_new, z_group, lo, e, h, wsc, ctc, wt, gz, tz, acc):
    """Spearman's sums of one row in every lane: acc rows 0-2 n, the x and z groups with weight,
    rows 5-7 the sums of w rx rx, w rz rz and w rx rz (ranks about 0).

    The cells are in x order (``x_new`` starts each run of equal x); ``z_group`` is each cell's
    run of equal z (0 ... h - 1 in z order). Each run of x gets its midrank when its weight is
    known, and adds its cells' weights and weighted ranks to their z runs (``gz``, ``tz``); the
    z runs get theirs at the end. Ranks are multiples of 1/2, so these sums are exact.
    """
    gz[:h] = 0.0
    tz[:h] = 0.0
    acc[:] = 0.0
    start = 0
    while start < e:
        stop = start + 1
        while stop < e and not x_new[lo + stop]:
            stop += 1
        acc[3] = 0.0  # the run's weight
        for j in range(start, stop):
            s, i = sys_of[lo + j], inp_of[lo + j]
            for lane in range(LANES):
                q = wsc[s, lane] * ctc[i, lane]
                wt[j - start, lane] = q
                acc[3, lane] += q
        for lane in range(LANES):
            g = acc[3, lane]
            r = acc[0, lane] + (g + 1.0) / 2.0
            acc[4, lane] = r
            acc[5, lane] += g * r * r
            acc[1, lane] += 1.0 if g > 0 else 0.0
            acc[0, lane] += g
        for j in range(start, stop):
            hz = z_group[lo + j]
            for lane in range(LANES):
                q = wt[j - start, lane]
                gz[hz, lane] += q
                tz[hz, lane] += q * acc[4, lane]
        start = stop
    acc[3] = 0.0  # the weight below each z run
    for hz in range(h):
        for lane in range(LANES):
            g = gz[hz, lane]
            r = acc[3, lane] + (g + 1.0) / 2.0
            acc[6, lane] += g * r * r
            acc[7, lane] += r * tz[hz, lane]
            acc[2, lane] += 1.0 if g > 0 else 0.0
            acc[3, lane] += g


@_jit
def _finish_ranks(acc, nl, need, row, b0, out):
    """Spearman's rho (NaN where undefined: too few cells, or one run of x or z drawn) and n."""
    for lane in range(nl):
        nb = acc[0, lane]
        m = (nb + 1.0) / 2.0  # the mean rank
        s_xx = acc[5, lane] - nb * m * m
        s_zz = acc[6, lane] - nb * m * m
        s_xz = acc[7, lane] - nb * m * m
        r = s_xz / math.sqrt(s_xx * s_zz)
        r = 1.0 if r > 1.0 else (-1.0 if r < -1.0 else r)
        undefined = (nb < need) | (acc[1, lane] < 2) | (acc[2, lane] < 2)
        out[0, row, b0 + lane] = np.nan if undefined else r
        out[1, row, b0 + lane] = nb


@_jit
def draws(off, sys_of, inp_of, x, z, x_new, z_group, z_groups, ranked, ws, ct, need, out):
    """out (2, R, B): r and n of every row's cells (segment ``off[r]:off[r + 1]``) under every draw.

    ``x``, ``z`` (E,) are the cells' scores, ``ws`` (S, B) and ``ct`` (I, B) the system and
    input counts of the draws. With ``ranked`` the statistic is Spearman's: the cells are in x
    order, ``x_new`` starts each run of equal x, ``z_group`` numbers the runs of equal z of the
    row in z order and ``z_groups`` (R,) counts them; otherwise the cells are in system order.
    """
    n_draws = ws.shape[1]
    longest, most = 0, 0
    for row in range(off.size - 1):
        longest = max(longest, off[row + 1] - off[row])
        most = max(most, z_groups[row] if ranked else 0)
    acc, part = np.empty((8, LANES)), np.empty((5, LANES))
    wsc, ctc = np.empty((ws.shape[0], LANES)), np.empty((ct.shape[0], LANES))
    wt = np.empty((longest if ranked else 0, LANES))
    gz, tz = np.empty((most, LANES)), np.empty((most, LANES))
    for b0 in range(0, n_draws, LANES):
        nl = min(LANES, n_draws - b0)
        _lane_counts(ws, b0, nl, wsc)
        _lane_counts(ct, b0, nl, ctc)
        for row in range(off.size - 1):
            lo, e = off[row], off[row + 1] - off[row]
            if ranked:
                _ranked(sys_of, inp_of, x_new, z_group, lo, e, z_groups[row], wsc, ctc, wt, gz, tz, acc)
                _finish_ranks(acc, nl, need, row, b0, out)
            else:
                _cell_means(x, z, sys_of, inp_of, lo, e, wsc, ctc, acc[0], acc[1], acc[2], part)
                _cell_moments(x, z, sys_of, inp_of, lo, e, wsc, ctc, acc[1], acc[2], acc, part)
                _finish_cells(x, z, sys_of, inp_of, lo, e, wsc, ctc, nl, need, acc, row, b0, out)
