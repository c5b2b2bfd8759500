"""Compiled loops of :mod:`xcorrstat._kernels.linear.system_swap` (numba): a pair's swapped system means
taken draw by draw from the per-metric terms (:class:`.system_swap.SystemTerms`), and Pearson's r of them
fused (no (systems, pairs, draws) temporary).

Only :mod:`.system_swap` imports this module, on first use (importing the package does not import
numba); :mod:`..rank.system_swap_jit` takes its means from :func:`pair_means` too. The means are those of
:func:`.system_swap.swapped_means` (the same additions in the same order); Pearson's sums are added in
system order, corrected two-pass, and a row whose sums of squares leave :data:`..scaling.SAFE_SUM_BOUNDS`
is flagged ``inf`` for :func:`.system_swap.flagged_pearson`. The functions release the GIL (Dask threads
run them in parallel).
"""

from __future__ import annotations

import importlib

import numpy as np

numba = importlib.import_module("numba")

__all__ = ["pair_means", "pearson_rows"]


@numba.njit(nogil=True, cache=True, boundscheck=False, error_model="numpy")
def pair_means(kept, took, kept_count, took_count, kept_z, took_z, i, k, mx, mz):
    """A pair's means (S, B) into mx and mz: metric i kept where the mask is 0, k moved in where it is 1."""
    n_sys, _, n_draws = kept.shape
    for s in range(n_sys):
        for b in range(n_draws):
            count = kept_count[s, i, b] + took_count[s, k, b]
            zsum = ((kept_z[0, s, i, b] + took_z[0, s, k, b]) + (kept_z[1, s, i, b] + took_z[1, s, k, b])) \
                + (kept_z[2, s, i, b] + took_z[2, s, k, b])
            if count > 0:
                mx[s, b] = (kept[s, i, b] + took[s, k, b]) / count
                mz[s, b] = zsum / count
            else:
                mx[s, b] = np.nan
                mz[s, b] = np.nan


@numba.njit(nogil=True, cache=True, boundscheck=False, error_model="numpy")
def _pearson(mx, mz, need, low, high, out):
    """Pearson's r of each column b of the means (S, B) into out (B,): NaN where undefined (fewer than
    ``need`` valid systems, or either vector constant over them), inf where flagged.

    Loops over the systems outside and the draws inside (the draws' lanes side by side); each draw's
    sums are still added in system order.
    """
    n_sys, n_draws = mx.shape
    n = np.zeros(n_draws, dtype=np.int64)
    sx, sz = np.zeros(n_draws), np.zeros(n_draws)
    lox, loz = np.full(n_draws, np.inf), np.full(n_draws, np.inf)
    hix, hiz = np.full(n_draws, -np.inf), np.full(n_draws, -np.inf)
    for s in range(n_sys):
        for b in range(n_draws):
            x, z = mx[s, b], mz[s, b]
            valid = not (np.isnan(x) or np.isnan(z))
            n[b] += valid
            sx[b] += x if valid else 0.0
            sz[b] += z if valid else 0.0
            if valid:
                lox[b], hix[b] = min(lox[b], x), max(hix[b], x)
                loz[b], hiz[b] = min(loz[b], z), max(hiz[b], z)
    nn = np.maximum(n, 1).astype(np.float64)
    ax, az = sx / nn, sz / nn
    sums = np.zeros((5, n_draws))
    cx, cz, sxx, szz, sxz = sums[0], sums[1], sums[2], sums[3], sums[4]
    for s in range(n_sys):
        for b in range(n_draws):
            x, z = mx[s, b], mz[s, b]
            valid = not (np.isnan(x) or np.isnan(z))
            dx = x - ax[b] if valid else 0.0
            dz = z - az[b] if valid else 0.0
            cx[b] += dx
            cz[b] += dz
            sxx[b] += dx * dx
            szz[b] += dz * dz
            sxz[b] += dx * dz
    for b in range(n_draws):
        out[b] = _finish(n[b], nn[b], cx[b] / nn[b], cz[b] / nn[b], sxx[b], szz[b], sxz[b],
                         lox[b] < hix[b] and loz[b] < hiz[b], need, low, high)


@numba.njit(nogil=True, cache=True, boundscheck=False, error_model="numpy")
def _finish(n, nn, cx, cz, sxx, szz, sxz, varies, need, low, high):
    """r from the sums of one draw: NaN where undefined, inf where flagged."""
    sxx = sxx - nn * cx * cx
    szz = szz - nn * cz * cz
    sxz = sxz - nn * cx * cz
    r = sxz / np.sqrt(sxx * szz)
    if r > 1.0:
        r = 1.0
    elif r < -1.0:
        r = -1.0
    if not (sxx > low and sxx < high and szz > low and szz < high):
        r = np.inf
    if n < need or not varies:
        r = np.nan
    return r


@numba.njit(nogil=True, cache=True, boundscheck=False, error_model="numpy")
def pearson_rows(kept, took, kept_count, took_count, kept_z, took_z, keep, moved, need, low, high, out):
    """out (Pb, B): Pearson's r of the means of X' (``keep[q]`` kept, ``moved[q]`` moved in) for each pair q.

    The terms are those of :class:`.system_swap.SystemTerms`, (S, M, B) ((3, S, M, B) for the
    target's parts); ``need`` is the fewest valid systems, ``low`` and ``high`` the safe range of
    the sums of squares (beyond it r is ``inf``: flagged).

    Examples
    --------
    >>> kept = np.array([1.0, 2.0, 4.0, 3.0]).reshape(4, 1, 1); none = np.zeros((4, 1, 1)); one = none + 1.0
    >>> target = np.concatenate([kept[None], none[None], none[None]])  # the target's three parts
    >>> out = np.empty((1, 1))
    >>> pearson_rows(kept, none, one, none, target, np.zeros((3, 4, 1, 1)), np.array([0]), np.array([0]),
    ...              3, 1e-300, 1e300, out)
    >>> out.tolist()
    [[1.0]]
    """
    n_sys, _, n_draws = kept.shape
    mx = np.empty((n_sys, n_draws))
    mz = np.empty((n_sys, n_draws))
    for q in range(keep.size):
        pair_means(kept, took, kept_count, took_count, kept_z, took_z, keep[q], moved[q], mx, mz)
        _pearson(mx, mz, need, low, high, out[q])

