"""Compiled loop of :mod:`xcorrstat._kernels.linear.weighted_rows` (numba).

Only :mod:`xcorrstat._kernels.linear.weighted_rows` imports this module, on its first call.
:func:`rows` forms each row's sums over the units in order, a row at a time with its draws
innermost (vector registers, IEEE operations, no reassociation), then r clipped to [-1, 1]:
NaN where undefined, ``inf`` where a sum of squares leaves the safe range (the caller
rescales those). It releases the GIL.
"""

from __future__ import annotations

import importlib
import math

import numpy as np

numba = importlib.import_module("numba")

__all__ = ["rows"]

_jit = numba.njit(nogil=True, cache=True, boundscheck=False, error_model="numpy")


@_jit
def _means(xv, zv, valid, wt, row, n, sx, sz, lo_x, hi_x, lo_z, hi_z):
    """Pass 1 of a row: expanded units, sums and drawn ranges per draw."""
    n_draws = wt.shape[1]
    n[:] = 0.0
    sx[:] = 0.0
    sz[:] = 0.0
    lo_x[:] = np.inf
    hi_x[:] = -np.inf
    lo_z[:] = np.inf
    hi_z[:] = -np.inf
    for s in range(wt.shape[0]):
        v, x, z = valid[row, s], xv[row, s], zv[row, s]
        for b in range(n_draws):
            ws = v * wt[s, b]
            drawn = ws > 0
            n[b] += ws
            sx[b] += x * ws
            sz[b] += z * ws
            lo_x[b] = x if drawn & (x < lo_x[b]) else lo_x[b]
            hi_x[b] = x if drawn & (x > hi_x[b]) else hi_x[b]
            lo_z[b] = z if drawn & (z < lo_z[b]) else lo_z[b]
            hi_z[b] = z if drawn & (z > hi_z[b]) else hi_z[b]


@_jit
def _moments(xv, zv, valid, wt, row, n, sx, sz, cx, cz, sxx, szz, sxz):
    """Pass 2 of a row: the centred sums (``sx``, ``sz`` become the means)."""
    n_draws = wt.shape[1]
    for b in range(n_draws):
        sx[b] = sx[b] / n[b]
        sz[b] = sz[b] / n[b]
        cx[b] = 0.0
        cz[b] = 0.0
        sxx[b] = 0.0
        szz[b] = 0.0
        sxz[b] = 0.0
    for s in range(wt.shape[0]):
        v, x, z = valid[row, s], xv[row, s], zv[row, s]
        for b in range(n_draws):
            ws = v * wt[s, b]
            drawn = ws > 0
            dx = x - sx[b] if drawn else 0.0
            dz = z - sz[b] if drawn else 0.0
            wdx = ws * dx
            wdz = ws * dz
            cx[b] += wdx
            cz[b] += wdz
            sxx[b] += wdx * dx
            szz[b] += wdz * dz
            sxz[b] += wdx * dz


@_jit
def rows(xv, zv, valid, wt, need, low, high, out):
    """out (2, R, B): r and n of every row (xv, zv, valid (R, S)) under every draw (wt (S, B))."""
    n_draws = wt.shape[1]
    n, sx, sz = np.empty(n_draws), np.empty(n_draws), np.empty(n_draws)
    lo_x, hi_x, lo_z, hi_z = np.empty(n_draws), np.empty(n_draws), np.empty(n_draws), np.empty(n_draws)
    cx, cz, sxx, szz, sxz = (np.empty(n_draws), np.empty(n_draws), np.empty(n_draws), np.empty(n_draws),
                             np.empty(n_draws))
    for row in range(xv.shape[0]):
        _means(xv, zv, valid, wt, row, n, sx, sz, lo_x, hi_x, lo_z, hi_z)
        _moments(xv, zv, valid, wt, row, n, sx, sz, cx, cz, sxx, szz, sxz)
        for b in range(n_draws):
            c_x = cx[b] / n[b]
            c_z = cz[b] / n[b]
            s_xx = sxx[b] - n[b] * c_x * c_x
            s_zz = szz[b] - n[b] * c_z * c_z
            s_xz = sxz[b] - n[b] * c_x * c_z
            r = s_xz / math.sqrt(s_xx) / math.sqrt(s_zz)
            r = 1.0 if r > 1.0 else (-1.0 if r < -1.0 else r)
            unsafe = not ((s_xx > low) & (s_xx < high) & (s_zz > low) & (s_zz < high))
            r = np.inf if unsafe else r
            undefined = (n[b] < need) | (n[b] <= 0) | (lo_x[b] == hi_x[b]) | (lo_z[b] == hi_z[b])
            out[0, row, b] = np.nan if undefined else r
            out[1, row, b] = n[b]
