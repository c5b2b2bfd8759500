"""Compiled loop of :mod:`.spearman_swap` (numba): Spearman's rho of every group of swapped metrics,
draw by draw, and its average over the groups.

Only :mod:`.spearman_swap` imports this module, on first use (importing the package does not import
numba). For each row, draw and group the loop gathers the group's items of X' (X where the mask is
0, Y where it is 1) and of Y' (the other way), takes the mid-ranks of each and of the target over the
items valid in both (by counting over a few dozen items, by a stable sort over more), Pearson's r of
the mid-ranks (two-pass sums in item order) and adds the defined values to the draw's average, group
after group: no (draws, groups, items) temporary, and a draw's value does not depend on the batch.
The loop releases the GIL (Dask threads run it in parallel).
"""

from __future__ import annotations

import importlib
import math

import numpy as np

numba = importlib.import_module("numba")

__all__ = ["COUNTING_MAX_ITEMS", "swap_deltas"]

_jit = numba.njit(nogil=True, cache=True, boundscheck=False, error_model="numpy")

#: Groups of at most this many items take their mid-ranks by counting (O(n**2)), larger ones by sorting.
COUNTING_MAX_ITEMS = 32


@_jit
def _midranks(v, valid, n, order, out):
    """Mid-ranks (1-based) of v's n valid entries among themselves into out (invalid entries untouched):
    the valid positions sorted stably by value (insertion sort over a few dozen, merge sort over more),
    then each run of equal values given the mean of its ranks."""
    k = 0
    for s in range(v.size):
        if valid[s]:
            order[k] = s
            k += 1
    if n <= COUNTING_MAX_ITEMS:
        for j in range(1, n):
            item = order[j]
            key = v[item]
            t = j - 1
            while t >= 0 and v[order[t]] > key:
                order[t + 1] = order[t]
                t -= 1
            order[t + 1] = item
        ranked = order[:n]
    else:
        sub = order[:n]
        ranked = sub[np.argsort(v[sub], kind="mergesort")]
    start = 0
    while start < n:
        stop = start + 1
        while stop < n and v[ranked[stop]] == v[ranked[start]]:
            stop += 1
        mid = (start + 1 + stop) / 2.0  # ranks start+1 .. stop
        for j in range(start, stop):
            out[ranked[j]] = mid
        start = stop


@_jit
def _centred(v, valid, n, order, ranks, out):
    """The mid-ranks of v's valid entries minus their mean into out; returns their sum of squares."""
    _midranks(v, valid, n, order, ranks)
    total = 0.0
    for s in range(v.size):
        if valid[s]:
            total += ranks[s]
    mean = total / n
    squares = 0.0
    for s in range(v.size):
        if valid[s]:
            out[s] = ranks[s] - mean
            squares += out[s] * out[s]
    return squares


@_jit
def _rho_centred(u, valid, n, dz, szz, order, ranks, du):
    """rho of u against the target's centred mid-ranks dz (sum of squares szz) over the n valid items."""
    suu = _centred(u, valid, n, order, ranks, du)
    suz = 0.0
    for s in range(u.size):
        if valid[s]:
            suz += du[s] * dz[s]
    if suu == 0.0 or szz == 0.0:  # every valid item tied
        return np.nan
    return min(1.0, max(-1.0, suz / math.sqrt(suu * szz)))


@_jit
def _rho(u, zc, valid, need, work):
    """Spearman's rho of u against zc over the items valid in both, and their number (NaN where undefined)."""
    order, ranks, du, dz = work
    n = 0
    for s in range(u.size):
        valid[s] = not (math.isnan(u[s]) or math.isnan(zc[s]))
        n += valid[s]
    if n < need:
        return np.nan, n
    szz = _centred(zc, valid, n, order, ranks, dz)
    return _rho_centred(u, valid, n, dz, szz, order, ranks, du), n


@_jit
def _weight(n, average):
    """A defined group's weight in the average: 1 (macro), its items (weighted) or its pairs (pairs)."""
    if average == 0:
        return 1.0
    if average == 1:
        return float(n)
    return n * (n - 1.0) / 2.0


@_jit
def _fixed_target(zx, zy, z, r, g, need, valid, work):
    """Whether group g of row r has the same valid items in every draw (X and Y missing in the same
    cells there); if so, its valid items into ``valid``, the target's centred mid-ranks into work[3]
    and the number of valid items and the target's sum of squares are returned."""
    n = 0
    for s in range(zx.shape[1]):
        if math.isnan(zx[r, s, g]) != math.isnan(zy[r, s, g]) and not math.isnan(z[r, s, g]):
            return False, 0, 0.0
        valid[s] = not (math.isnan(zx[r, s, g]) or math.isnan(z[r, s, g]))
        n += valid[s]
    if n < need:
        return True, n, 0.0
    zc = np.empty(zx.shape[1])
    for s in range(zx.shape[1]):
        zc[s] = z[r, s, g]
    return True, n, _centred(zc, valid, n, work[0], work[1], work[3])


@_jit
def swap_deltas(zx, zy, z, m, need, average, out):
    """out (R, B): the average over the groups of rho(X', Z) minus that of rho(Y', Z), for each row and mask.

    ``zx``, ``zy``, ``z`` (R, S, G) and the masks ``m`` (B, S, G) (any strides: S items of G groups);
    ``need`` the fewest valid items of a defined group; ``average`` 0 (macro), 1 (weighted), 2 (pairs).
    A draw with no defined group is NaN. A group whose valid items are the same in every draw (X and Y
    missing in the same cells) ranks the target once, for every draw; the values are the same either way.

    Examples
    --------
    >>> x = np.array([[[1.0], [2.0], [3.0]]]); y = np.array([[[3.0], [2.0], [1.0]]])
    >>> masks = np.zeros((2, 3, 1), dtype=np.bool_); masks[1] = True  # no swap, then every cell swapped
    >>> out = np.empty((1, 2))
    >>> swap_deltas(x, y, x, masks, 3, 0, out)
    >>> out.tolist()
    [[2.0, -2.0]]
    """
    n_rows, n_items, n_groups = zx.shape
    n_draws = m.shape[0]
    u = np.empty(n_items)
    v = np.empty(n_items)
    zc = np.empty(n_items)
    valid = np.empty(n_items, dtype=np.bool_)
    work = (np.empty(n_items, dtype=np.int64), np.empty(n_items), np.empty(n_items), np.empty(n_items))
    num = np.zeros((2, n_draws))
    den = np.zeros((2, n_draws))
    for r in range(n_rows):
        num[:] = 0.0
        den[:] = 0.0
        for g in range(n_groups):
            fixed, n, szz = _fixed_target(zx, zy, z, r, g, need, valid, work)
            if fixed and n < need:
                continue
            w = _weight(n, average)
            for b in range(n_draws):
                for s in range(n_items):
                    zc[s] = z[r, s, g]
                    if m[b, s, g]:
                        u[s] = zy[r, s, g]
                        v[s] = zx[r, s, g]
                    else:
                        u[s] = zx[r, s, g]
                        v[s] = zy[r, s, g]
                for k in range(2):
                    a = u if k == 0 else v
                    if fixed:
                        rho = _rho_centred(a, valid, n, work[3], szz, work[0], work[1], work[2])
                        wk = w
                    else:
                        rho, nk = _rho(a, zc, valid, need, work)
                        wk = _weight(nk, average)
                    if not math.isnan(rho):
                        num[k, b] += wk * rho
                        den[k, b] += wk
        for b in range(n_draws):
            mean_u = num[0, b] / den[0, b] if den[0, b] > 0 else np.nan
            mean_v = num[1, b] / den[1, b] if den[1, b] > 0 else np.nan
            out[r, b] = mean_u - mean_v
