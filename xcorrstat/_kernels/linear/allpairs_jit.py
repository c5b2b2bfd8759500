"""Compiled loop of :mod:`xcorrstat._kernels.linear.allpairs` (numba).

Only :mod:`xcorrstat._kernels.linear.allpairs` imports this module, on its first batch.
:func:`swapped_add` computes each input's r of X' and Y' for a block of inputs, draws and pairs
(the swapped sums added system after system, then the operations of
:func:`xcorrstat._kernels.linear.gaps.from_sums` in their order) and adds the defined ones to the
running totals: no temporary per pair, form or input beyond a row of draws. The loops over draws
are innermost and free of branches, so the compiler runs them on vector registers (IEEE
operations, no reassociation). Where both metrics of a pair have every cell the target has on an
input, the count and the target's sums of X' and Y' are those of either metric (their swapped
parts cancel to exactly 0.0): only the three sums of x are formed. Values flagged as nearly
constant (``inf``) are first checked on the swapped cells themselves: where X' or the target
takes a single value over the draw's valid cells (exact comparisons, the rule of
:func:`xcorrstat._kernels.correlation.pearson`) the value is NaN, neither added nor recorded;
the others are recorded, for the caller to recompute from the swapped cells. Inputs the caller
marks dead (a target with too few cells or constant over its cells: every swap is NaN there) are
skipped. The function releases the GIL (Dask threads run it in parallel).
"""

from __future__ import annotations

import importlib
import math

import numpy as np

numba = importlib.import_module("numba")

__all__ = ["swapped_add"]

_jit = numba.njit(nogil=True, cache=True, boundscheck=False, error_model="numpy")
#: Draws a row of the inner loops holds: the swapped sums of an input, (6, M, CHUNK), stay in cache.
CHUNK = 64


@_jit
def _r(n, sx, sxx, sz, szz, sxz, need, near):
    """from_sums for one vector of sums: r, ``inf`` when nearly constant, NaN with too few cells."""
    varx = n * sxx - sx * sx
    varz = n * szz - sz * sz
    r = (n * sxz - sx * sz) / math.sqrt(varx * varz)  # a negative product: sqrt is NaN, so r is
    r = 1.0 if r > 1.0 else r
    r = -1.0 if r < -1.0 else r
    r = np.inf if (varx <= near * n * sxx) | (varz <= near * n * szz) else r
    return np.nan if n < need else r


@_jit
def _swapped_sums(f, ms, terms, full, i, b0, w):
    """f (6, M, w): every metric's six sums over the swapped cells of input i, draws b0 .. b0 + w - 1.

    The count and target sums (forms 0, 3, 4) of the metrics with every cell the target has
    are one and the same (their terms are equal): added once, then copied.
    """
    f[:] = 0.0
    shared = -1
    for j in range(f.shape[1]):
        if full[i, j]:
            shared = j
            break
    for s in range(ms.shape[1]):
        for k in range(6):
            target_form = k == 0 or k == 3 or k == 4
            for j in range(f.shape[1]):
                if target_form and full[i, j] and j != shared:
                    continue
                t = terms[i, s, k, j]
                for b in range(w):
                    f[k, j, b] += ms[i, s, b0 + b] * t
    if shared >= 0:
        for j in range(f.shape[1]):
            if full[i, j] and j != shared:
                for k in (0, 3, 4):
                    f[k, j, :w] = f[k, shared, :w]


@_jit
def _pair_full(f, t, a, c, w, need, near, rx, ry):
    """r of X' and Y' for draws 0 .. w - 1 of a pair whose metrics both have the target's cells."""
    n, sz, szz = t[0, a], t[3, a], t[4, a]
    x1, x2, x5, y1, y2, y5 = t[1, a], t[2, a], t[5, a], t[1, c], t[2, c], t[5, c]
    fa1, fa2, fa5, fc1, fc2, fc5 = f[1, a], f[2, a], f[5, a], f[1, c], f[2, c], f[5, c]
    for b in range(w):
        c1, c2, c5 = fc1[b] - fa1[b], fc2[b] - fa2[b], fc5[b] - fa5[b]
        rx[b] = _r(n, x1 + c1, x2 + c2, sz, szz, x5 + c5, need, near)
        ry[b] = _r(n, y1 - c1, y2 - c2, sz, szz, y5 - c5, need, near)


@_jit
def _pair_gaps(f, t, a, c, w, need, near, rx, ry):
    """r of X' and Y' for draws 0 .. w - 1 of any pair: all six sums change with the swap."""
    for b in range(w):
        rx[b] = _r(t[0, a] + (f[0, c, b] - f[0, a, b]), t[1, a] + (f[1, c, b] - f[1, a, b]),
                   t[2, a] + (f[2, c, b] - f[2, a, b]), t[3, a] + (f[3, c, b] - f[3, a, b]),
                   t[4, a] + (f[4, c, b] - f[4, a, b]), t[5, a] + (f[5, c, b] - f[5, a, b]), need, near)
        ry[b] = _r(t[0, c] - (f[0, c, b] - f[0, a, b]), t[1, c] - (f[1, c, b] - f[1, a, b]),
                   t[2, c] - (f[2, c, b] - f[2, a, b]), t[3, c] - (f[3, c, b] - f[3, a, b]),
                   t[4, c] - (f[4, c, b] - f[4, a, b]), t[5, c] - (f[5, c, b] - f[5, a, b]), need, near)


@_jit
def _undefined(cells, zt, ms, i, keep, move, b, need):
    """Whether the swapped vector (cells of ``move`` where the mask is set, of ``keep`` elsewhere) or the
    target takes a single value over their valid cells, or has fewer than ``need``: its r is NaN."""
    n = 0
    xlo, xhi, zlo, zhi = np.inf, -np.inf, np.inf, -np.inf
    for s in range(zt.shape[1]):
        v = cells[i, move, s] if ms[i, s, b] != 0.0 else cells[i, keep, s]
        t = zt[i, s]
        if v == v and t == t:
            n += 1
            xlo, xhi = min(xlo, v), max(xhi, v)
            zlo, zhi = min(zlo, t), max(zhi, t)
    return n < need or not (xlo < xhi) or not (zlo < zhi)


@_jit
def _settle(r, cells, zt, ms, i, keep, move, b0, w, need):
    """Flagged values of r[:w] (``inf``) that are exactly undefined become NaN; how many stay flagged."""
    left = 0
    for b in range(w):
        if abs(r[b]) == np.inf:
            if _undefined(cells, zt, ms, i, keep, move, b0 + b, need):
                r[b] = np.nan
            else:
                left += 1
    return left


@_jit
def _add_row(r, acc, cnt, w):
    """Add the finite values of r[:w] to acc and count them; how many are flagged (infinite)."""
    flagged = 0
    for b in range(w):
        v = r[b]
        ok = abs(v) < np.inf
        acc[b] += v if ok else 0.0
        cnt[b] += 1 if ok else 0
        flagged += abs(v) == np.inf
    return flagged


@_jit
def _record(r, which, i, b0, q, w, records, n):
    """Append (input, draw, pair, which) of the flagged values of r[:w] to records (as room allows)."""
    for b in range(w):
        if abs(r[b]) == np.inf:
            if n < records.shape[0]:
                records[n, 0], records[n, 1], records[n, 2], records[n, 3] = i, b0 + b, q, which
            n += 1
    return n


@_jit
def _pair_rows(f, totals, full, i, a, c, w, need, near, rx, ry):
    """r of X' and Y' of pair (a, c) on input i for draws 0 .. w - 1 of the row."""
    if full[i, a] and full[i, c]:
        _pair_full(f, totals[i], a, c, w, need, near, rx, ry)
    else:
        _pair_gaps(f, totals[i], a, c, w, need, near, rx, ry)


@_jit
def swapped_add(ms, terms, totals, full, live, cells, zt, lo, hi, need, near, acc, cnt, records, add):
    """Add r of X' and Y' of every input, draw and pair of a block to ``acc`` (2, Q, B), counts to ``cnt``.

    ms (ib, S, B) the masks as 0.0/1.0, terms (ib, S, 6, M), totals (ib, 6, M), full (ib, M)
    bool (the metric has every cell the target has), live (ib,) bool (False: skip the input),
    cells (ib, M, S) the metrics' cells and zt (ib, S) the target's (NaN where missing), pairs
    (lo, hi) (Q,). The flagged values left after the exact check are recorded in records (R, 4)
    int64 as (input, draw, pair, which); returns how many there are (more than R: call again
    with room and ``add=False``, which only records).
    """
    n_inp, _, n_draws = ms.shape
    f = np.empty((6, terms.shape[3], CHUNK))
    rx, ry = np.empty(CHUNK), np.empty(CHUNK)
    n = 0
    for b0 in range(0, n_draws, CHUNK):  # a chunk's totals stay in cache while its inputs are added in order
        w = min(CHUNK, n_draws - b0)
        for i in range(n_inp):
            if not live[i]:
                continue
            _swapped_sums(f, ms, terms, full, i, b0, w)
            for q in range(lo.size):
                a, c = lo[q], hi[q]
                _pair_rows(f, totals, full, i, a, c, w, need, near, rx, ry)
                flagged = 1  # (not adding: look at every row)
                if add:  # the flagged (infinite) values are not added, whatever the check below makes of them
                    flagged = (_add_row(rx, acc[0, q, b0:], cnt[0, q, b0:], w)
                               + _add_row(ry, acc[1, q, b0:], cnt[1, q, b0:], w))
                if flagged and (_settle(rx, cells, zt, ms, i, a, c, b0, w, need)
                                + _settle(ry, cells, zt, ms, i, c, a, b0, w, need)):
                    n = _record(ry, 1, i, b0, q, w, records, _record(rx, 0, i, b0, q, w, records, n))
    return n
