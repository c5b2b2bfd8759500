"""Compiled loop of :mod:`xcorrstat._kernels.rank.system_swap` (numba): Kendall's exact pair counts of
the swapped system means of each pair and draw, over at most :data:`.sorted_counts.SORTED_MIN_UNITS`
systems (over more, the same counts by sorting: :mod:`.sorted_counts`).

Only :mod:`..linear.system_swap` calls it, on first use (importing the package does not import numba).
For a block of pairs, the loop takes a pair's means draw by draw from the per-metric terms
(:func:`..linear.system_swap_jit.pair_means`, the same additions as the Pearson loop) and counts every pair
of systems at once, fused: no (systems, pairs, draws) temporary. The counts are exact integers
(:data:`.system_swap.COUNT_NAMES`). The functions release the GIL.
"""

from __future__ import annotations

import importlib

import numpy as np

from ..linear.system_swap_jit import pair_means

numba = importlib.import_module("numba")

__all__ = ["kendall_counts"]


@numba.njit(nogil=True, cache=True, boundscheck=False, error_model="numpy")
def _distinct(m, valid, b):
    """Distinct values of column b of m (S, B) over its valid entries."""
    count = 0
    for s in range(m.shape[0]):
        if not valid[s, b]:
            continue
        new = 1
        for t in range(s):
            if valid[t, b] and m[t, b] == m[s, b]:
                new = 0
                break
        count += new
    return count


@numba.njit(nogil=True, cache=True, boundscheck=False, error_model="numpy")
def _add_pair(xs, xt, zs, zt, vs, vt, acc):
    """Add the systems pair (s, t) of every draw (rows of the means, 1 where valid) to acc (4, B)."""
    cmd, tx, tz, txz = acc[0], acc[1], acc[2], acc[3]
    for b in range(xs.size):
        pv = vs[b] & vt[b]
        sx = np.int32(xs[b] > xt[b]) - np.int32(xs[b] < xt[b])
        sz = np.int32(zs[b] > zt[b]) - np.int32(zs[b] < zt[b])
        ex = np.int32(sx == 0) & pv
        ez = np.int32(sz == 0) & pv
        cmd[b] += sx * sz * pv
        tx[b] += ex
        tz[b] += ez
        txz[b] += ex & ez


@numba.njit(nogil=True, cache=True, boundscheck=False, error_model="numpy")
def _counts(mx, mz, distinct, valid, acc, out):
    """The Kendall counts of each column b of the means (S, B) into out (6, B): systems outside, draws inside."""
    n_sys, n_draws = mx.shape
    acc[:] = 0
    out[4] = 0
    for s in range(n_sys):
        for b in range(n_draws):
            valid[s, b] = not (np.isnan(mx[s, b]) or np.isnan(mz[s, b]))
            out[4, b] += valid[s, b]
    for s in range(n_sys - 1):
        for t in range(s + 1, n_sys):
            _add_pair(mx[s], mx[t], mz[s], mz[t], valid[s], valid[t], acc)
    out[:4] = acc
    out[5] = 0
    if distinct:
        for b in range(n_draws):
            out[5, b] = min(_distinct(mx, valid, b), _distinct(mz, valid, b))


@numba.njit(nogil=True, cache=True, boundscheck=False, error_model="numpy")
def kendall_counts(kept, took, kept_count, took_count, kept_z, took_z, keep, moved, distinct, out):
    """out (6, Pb, B) int64: the Kendall counts of the means of X' for each pair q (the terms of
    :class:`..linear.system_swap.SystemTerms`, as ``pearson_rows`` takes them),
    rows as :data:`.system_swap.COUNT_NAMES`; ``distinct`` adds the smaller number of distinct
    values (tau-c).

    Examples
    --------
    >>> kept = np.array([1.0, 2.0, 4.0, 3.0]).reshape(4, 1, 1); none = np.zeros((4, 1, 1)); one = none + 1.0
    >>> target = np.concatenate([np.array([1.0, 3.0, 2.0, 4.0]).reshape(1, 4, 1, 1), none[None], none[None]])
    >>> out = np.empty((6, 1, 1), dtype=np.int64)
    >>> kendall_counts(kept, none, one, none, target, np.zeros((3, 4, 1, 1)), np.array([0]), np.array([0]),
    ...                True, out)
    >>> out[:, 0, 0].tolist()
    [2, 0, 0, 0, 4, 4]
    """
    n_sys, _, n_draws = kept.shape
    mx = np.empty((n_sys, n_draws))
    mz = np.empty((n_sys, n_draws))
    valid = np.empty((n_sys, n_draws), dtype=np.int32)
    acc = np.empty((4, n_draws), dtype=np.int32)
    for q in range(keep.size):
        pair_means(kept, took, kept_count, took_count, kept_z, took_z, keep[q], moved[q], mx, mz)
        _counts(mx, mz, distinct, valid, acc, out[:, q])
