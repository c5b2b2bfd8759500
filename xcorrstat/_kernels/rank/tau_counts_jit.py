"""Compiled loops of :mod:`xcorrstat._kernels.rank.tau_counts` (numba): Kendall's pair counts of plain
(unweighted) rows, one row at a time, without a temporary per pair.

Only :mod:`xcorrstat._kernels.rank.tau_counts` imports this module, on its first call. :func:`row_counts`
takes every row of a block and picks, from the row length alone, one of two exact counts:

* short rows (systems): every pair of valid entries, its signs as the NumPy pair kernel
  (:func:`xcorrstat._kernels.rank.tau.kendall_pairwise`) forms them from the difference ``x_i - x_j``
  (so an epsilon applies to that difference, as there); O(n^2) a row;
* long rows (inputs, cells): the valid entries in z's order (one argsort of each distinct z row, given),
  x sorted inside each tie group of z, then a merge sort of x that counts the inversions -- the
  discordant pairs -- and leaves x sorted, whose tie groups give the ties in x; O(n log n) a row.

Every count is an integer, so they are those of the NumPy kernels (the oracles of the tests) exactly.
The functions release the GIL.
"""

from __future__ import annotations

import importlib

import numpy as np

numba = importlib.import_module("numba")

__all__ = ["COUNTS", "row_counts"]

_jit = numba.njit(nogil=True, cache=True, boundscheck=False, error_model="numpy")

#: The columns of :func:`row_counts`' output: C - D, pairs tied in x (within epsilon), in z, in both, valid
#: entries, the smaller number of distinct values of x and z.
COUNTS = ("con_minus_dis", "tx", "tz", "txz", "n", "distinct")


@_jit
def _sign(d, tie):
    """-1, 0 or 1: the sign of ``d`` (0 for a tie or NaN)."""
    if tie:
        return 0
    return (1 if d > 0 else 0) - (1 if d < 0 else 0)


@_jit
def _pairs(xr, zr, vr, epsilon, out, r):
    """Counts of one short row from all its pairs of valid entries."""
    length = vr.size
    cmd, tx, tz, txz, n, dx, dz = 0, 0, 0, 0, 0, 0, 0
    for i in range(length):
        if not vr[i]:
            continue
        n += 1
        new_x, new_z = True, True
        for j in range(i + 1, length):
            if not vr[j]:
                continue
            ddx = xr[i] - xr[j]
            ddz = zr[i] - zr[j]
            tie_x = abs(ddx) <= epsilon
            tie_z = ddz == 0
            cmd += _sign(ddx, tie_x) * _sign(ddz, False)
            if tie_x:
                tx += 1
            if tie_z:
                tz += 1
            if tie_x and tie_z:
                txz += 1
        for j in range(i):
            if vr[j] and xr[j] == xr[i]:
                new_x = False
            if vr[j] and zr[j] == zr[i]:
                new_z = False
        if new_x:
            dx += 1
        if new_z:
            dz += 1
    out[r, 0], out[r, 1], out[r, 2], out[r, 3], out[r, 4], out[r, 5] = cmd, tx, tz, txz, n, min(dx, dz)


@_jit
def _z_groups(xs, zs, scratch, n):
    """Sort x inside each tie group of z (``zs`` sorted; by the merge sort, whose count is not needed
    here); returns (ties in z, ties in both, distinct z)."""
    tz, txz, groups, s = 0, 0, 0, 0
    while s < n:
        e = s + 1
        while e < n and zs[e] == zs[s]:
            e += 1
        run = e - s
        groups += 1
        tz += run * (run - 1) // 2
        if run > 1:
            _merge_inversions(xs, scratch, s, e)
            a = s
            while a < e:
                b = a + 1
                while b < e and xs[b] == xs[a]:
                    b += 1
                txz += (b - a) * (b - a - 1) // 2
                a = b
        s = e
    return tz, txz, groups


@_jit
def _merge_inversions(a, b, start, stop):
    """Pairs ``i < j`` with ``a[j] < a[i]`` in ``a[start:stop]``, by a bottom-up merge sort that leaves those
    values sorted in place (``b`` is scratch of ``a``'s size). Integer flags and element copies, not
    boolean arithmetic and slices: numba compiles this form in a tenth of the time."""
    count, width, in_a = 0, 1, True
    src, dst = a, b
    while width < stop - start:
        for lo in range(start, stop, 2 * width):
            mid = min(lo + width, stop)
            hi = min(lo + 2 * width, stop)
            i, j, k = lo, mid, lo
            while i < mid and j < hi:  # without a branch: the comparison of random data mispredicts
                left = src[i]
                right = src[j]
                below = 1 if right < left else 0  # below every one left of the left run: inversions
                dst[k] = right if below else left
                count += (mid - i) * below
                j += below
                i += 1 - below
                k += 1
            while i < mid:
                dst[k] = src[i]
                i += 1
                k += 1
            while j < hi:
                dst[k] = src[j]
                j += 1
                k += 1
        src, dst = dst, src
        in_a = not in_a
        width *= 2
    if not in_a:
        for t in range(start, stop):
            a[t] = b[t]
    return count


@_jit
def _x_ties(xs, n):
    """(pairs tied in x, distinct values of x) of the sorted ``xs[:n]``."""
    tx, groups, a = 0, 0, 0
    while a < n:
        b = a + 1
        while b < n and xs[b] == xs[a]:
            b += 1
        groups += 1
        tx += (b - a) * (b - a - 1) // 2
        a = b
    return tx, groups


@_jit
def _sorted(xr, zr, vr, order, xs, zs, scratch, out, r):
    """Counts of one long row by sorting (``order``: an argsort of z's row)."""
    n = 0
    for t in range(order.size):
        i = order[t]
        if vr[i]:
            xs[n], zs[n] = xr[i], zr[i]
            n += 1
    tz, txz, dz = _z_groups(xs, zs, scratch, n)
    dis = _merge_inversions(xs, scratch, 0, n)
    tx, dx = _x_ties(xs, n)
    tot = n * (n - 1) // 2
    out[r, 0], out[r, 1], out[r, 2], out[r, 3] = tot - tx - tz + txz - 2 * dis, tx, tz, txz
    out[r, 4], out[r, 5] = n, min(dx, dz)


@_jit
def row_counts(x, xrow, z, zrow, valid, zorder, epsilon, by_sorting, out):
    """The :data:`COUNTS` of every row ``r`` of ``valid`` (rows, n): x's row ``xrow[r]`` of ``x``, z's row
    ``zrow[r]`` of ``z``; by sorting (``zorder[zrow[r]]`` z's argsort) or from every pair."""
    length = valid.shape[1]
    xs = np.empty(length, dtype=np.float64)
    zs = np.empty(length, dtype=np.float64)
    scratch = np.empty(length, dtype=np.float64)
    for r in range(valid.shape[0]):
        if by_sorting:
            _sorted(x[xrow[r]], z[zrow[r]], valid[r], zorder[zrow[r]], xs, zs, scratch, out, r)
        else:
            _pairs(x[xrow[r]], z[zrow[r]], valid[r], epsilon, out, r)
