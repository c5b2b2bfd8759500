"""Compiled loop of :mod:`xcorrstat._kernels.spa_swap` (numba, an optional dependency).

Only :mod:`xcorrstat._kernels.spa_swap` imports this module, and only when numba is installed
(the ``fast`` extra); it falls back to NumPy otherwise. :func:`pair_counts` computes the same
integer counts as the NumPy path (the tests compare them), fused: no temporary per pair.
The function releases the GIL (Dask threads run it in parallel).
"""

from __future__ import annotations

import importlib

import numpy as np

numba = importlib.import_module("numba")

__all__ = ["pair_counts"]


@numba.njit(nogil=True, cache=True, boundscheck=False)
def pair_counts(flipped, observed):
    """Sign draws r with ``f[a, r] - f[b, r] >= observed[q]`` per pair q = (a, b), a < b, in triu order.

    ``flipped`` (B, S, R) float64, ``observed`` (B, P) float64 -> (B, P) int64.
    """
    n_draws, n_sys, n_signs = flipped.shape
    out = np.zeros((n_draws, observed.shape[1]), np.int64)
    for d in range(n_draws):
        q = 0
        for a in range(n_sys - 1):
            fa = flipped[d, a]
            for b in range(a + 1, n_sys):
                fb = flipped[d, b]
                c = observed[d, q]
                k = 0
                for r in range(n_signs):
                    if fa[r] - fb[r] >= c:
                        k += 1
                out[d, q] = k
                q += 1
    return out


@numba.njit(nogil=True, cache=True, boundscheck=False)
def swapped_pair_counts(fa, fb, ua, ub, observed_a, observed_b):
    """:func:`pair_counts` of both swapped metrics without building their flipped sums.

    ``A' = fa - ua + ub`` and ``B' = fb - ub + ua`` row by row, one draw at a time: ``fa``, ``fb``
    (S, R), ``ua``, ``ub`` (B, S, R), observed (B, P) each -> two (B, P) int64.
    """
    n_draws, n_sys, n_signs = ua.shape
    n_pairs = observed_a.shape[1]
    out_a = np.zeros((n_draws, n_pairs), np.int64)
    out_b = np.zeros((n_draws, n_pairs), np.int64)
    rows_a = np.empty((n_sys, n_signs))
    rows_b = np.empty((n_sys, n_signs))
    for d in range(n_draws):
        for s in range(n_sys):
            for r in range(n_signs):
                moved = ub[d, s, r] - ua[d, s, r]
                rows_a[s, r] = fa[s, r] + moved
                rows_b[s, r] = fb[s, r] - moved
        q = 0
        for a in range(n_sys - 1):
            for b in range(a + 1, n_sys):
                ca = observed_a[d, q]
                cb = observed_b[d, q]
                ka = 0
                kb = 0
                for r in range(n_signs):
                    if rows_a[a, r] - rows_a[b, r] >= ca:
                        ka += 1
                    if rows_b[a, r] - rows_b[b, r] >= cb:
                        kb += 1
                out_a[d, q] = ka
                out_b[d, q] = kb
                q += 1
    return out_a, out_b
