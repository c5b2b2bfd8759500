"""Compiled loop of :mod:`xcorrstat.kernels.swap_allpairs_input` (numba, an optional dependency).

Only :mod:`xcorrstat.kernels.swap_allpairs_input` imports this module, and only when numba is
installed and the compiled loops are on. :func:`swapped_r` computes each input's r of X' and Y'
for a block of inputs, draws and pairs with the operations of the NumPy path in the same order
(the swapped sums added system after system, then :func:`xcorrstat.kernels.swap_gaps.from_sums`),
fused: no temporary per pair and form. The function releases the GIL (Dask threads run it in
parallel).
"""

from __future__ import annotations

import importlib
import math

import numpy as np

numba = importlib.import_module("numba")

__all__ = ["accumulate", "swapped_r"]


@numba.njit(nogil=True, cache=True, boundscheck=False, error_model="numpy")
def _r(n, sx, sxx, sz, szz, sxz, need, near):
    """from_sums for one vector of sums: r, ``inf`` when nearly constant, NaN with too few cells."""
    varx = n * sxx - sx * sx
    varz = n * szz - sz * sz
    r = (n * sxz - sx * sz) / math.sqrt(varx * varz) if varx * varz >= 0 else np.nan
    if r > 1.0:
        r = 1.0
    elif r < -1.0:
        r = -1.0
    if varx <= near * n * sxx or varz <= near * n * szz:
        r = np.inf
    if n < need:
        r = np.nan
    return r


@numba.njit(nogil=True, cache=True, boundscheck=False, error_model="numpy")
def swapped_r(mb, terms, totals, lo, hi, need, near):
    """r of X' and Y' per input, draw and pair: mb (ib, B, S) bool, terms (ib, S, 6, M), totals (ib, 6, M),
    pairs (lo, hi) (Q,) -> (2, ib, B, Q) float64."""
    n_inp, n_draws, n_sys = mb.shape
    n_met = terms.shape[3]
    n_pairs = lo.size
    out = np.empty((2, n_inp, n_draws, n_pairs))
    f = np.empty((6, n_met))
    xs = np.empty(6)
    ys = np.empty(6)
    for i in range(n_inp):
        for b in range(n_draws):
            f[:] = 0.0
            for s in range(n_sys):
                if mb[i, b, s]:  # (a kept cell adds 0.0 in the NumPy path: no change to any sum)
                    for k in range(6):
                        for j in range(n_met):
                            f[k, j] += terms[i, s, k, j]
            for q in range(n_pairs):
                a, c = lo[q], hi[q]
                for k in range(6):
                    change = f[k, c] - f[k, a]
                    xs[k] = totals[i, k, a] + change
                    ys[k] = totals[i, k, c] - change
                out[0, i, b, q] = _r(xs[0], xs[1], xs[2], xs[3], xs[4], xs[5], need, near)
                out[1, i, b, q] = _r(ys[0], ys[1], ys[2], ys[3], ys[4], ys[5], need, near)
    return out


@numba.njit(nogil=True, cache=True, boundscheck=False)
def accumulate(r, totals, counts):
    """Add the defined values of r (ib, B, Q) to totals (B, Q) and count them, input after input."""
    n_inp, n_draws, n_pairs = r.shape
    for i in range(n_inp):
        for b in range(n_draws):
            for q in range(n_pairs):
                v = r[i, b, q]
                if not np.isnan(v):
                    totals[b, q] += v
                    counts[b, q] += 1
