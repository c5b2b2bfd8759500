"""Compiled loop of :mod:`.spearman_swap` (numba): Spearman's rho of every group of swapped metrics,
draw by draw, from one sort per group, and its average over the groups.

Only :mod:`.spearman_swap` imports this module, on first use (importing the package does not import
numba). Per row and group the loop sorts, once, the group's 2n scores of X and Y (its valid cells'
values; stable, by value) and the target's scores. A draw gives every item's X score to X' or to Y'
(the mask) and its Y score to the other, so each sorted value belongs to exactly one of the two: a walk
along the sorted values, run of equal values by run, gives every value of X' and of Y' its mid-rank
(the values of its own metric below the run, plus the middle of its share of the run) in O(n), with
no sort per draw. Where X and Y are valid in the same cells the walk takes every draw of the batch at
once, the draws as lanes (an item's masks are contiguous), so the compiler vectorises it. The target's
mid-ranks over the items valid in X' are fixed when X and Y are missing in the same cells, and otherwise
come from a walk along the sorted target in the same way.

Mid-ranks are half-integers, so every sum of the coefficient -- sum(rx * dz), sum(rx**2), sum(dz**2),
with ``dz`` the target's centred mid-ranks (quarter-integers) -- is exact in float64 while n(n+1)**2
stays below 2**53 (n up to about 200,000 items a group), and rho is formed from the exact sums by one
division and one square root: a draw's value does not depend on the order of anything, the block or the
batch. The loop releases the GIL (Dask threads run it in parallel).
"""

from __future__ import annotations

import importlib
import math

import numpy as np

numba = importlib.import_module("numba")

__all__ = ["swap_deltas"]

_jit = numba.njit(nogil=True, cache=True, boundscheck=False, error_model="numpy")


@_jit
def _sorted_entries(x, y, z, r, g, value, item, source):
    """The valid scores of X (source 0) and Y (source 1) of group g of row r at items with a target
    score, sorted by value (stable); returns how many."""
    k = 0
    for s in range(x.shape[1]):
        if math.isnan(z[r, s, g]):
            continue
        if not math.isnan(x[r, s, g]):
            value[k] = x[r, s, g]
            item[k] = s
            source[k] = 0
            k += 1
        if not math.isnan(y[r, s, g]):
            value[k] = y[r, s, g]
            item[k] = s
            source[k] = 1
            k += 1
    order = np.argsort(value[:k], kind="mergesort")
    sorted_value, sorted_item, sorted_source = value[:k][order], item[:k][order], source[:k][order]
    value[:k] = sorted_value
    item[:k] = sorted_item
    source[:k] = sorted_source
    return k


@_jit
def _sorted_target(z, r, g, zvalue, zitem):
    """The target's scores of group g of row r, sorted (stable); returns how many."""
    k = 0
    for s in range(z.shape[1]):
        if not math.isnan(z[r, s, g]):
            zvalue[k] = z[r, s, g]
            zitem[k] = s
            k += 1
    order = np.argsort(zvalue[:k], kind="mergesort")
    sorted_value, sorted_item = zvalue[:k][order], zitem[:k][order]
    zvalue[:k] = sorted_value
    zitem[:k] = sorted_item
    return k


@_jit
def _target_ranks(zvalue, zitem, k, inside, dz):
    """The target's centred mid-ranks (rank minus (n + 1) / 2) at the items ``inside`` into dz: the
    number of those items and the sum of the squares (exact)."""
    n = 0
    for j in range(k):
        n += inside[zitem[j]]
    centre = (n + 1) / 2.0
    below = 0
    squares = 0.0
    start = 0
    while start < k:
        stop = start
        count = 0
        while stop < k and zvalue[stop] == zvalue[start]:
            count += inside[zitem[stop]]
            stop += 1
        mid = below + (count + 1) / 2.0 - centre
        for j in range(start, stop):
            if inside[zitem[j]]:
                dz[zitem[j]] = mid
                squares += mid * mid
        below += count
        start = stop
    return n, squares


@_jit
def _rank_sums(value, item, source, k, mask, b, g, dzx, dzy, sums):
    """One walk along the sorted values: for X' (sums[0:2]) and Y' (sums[2:4]) the sum of mid-rank times
    the target's centred mid-rank and the sum of squared mid-ranks."""
    below_x = 0
    below_y = 0
    sums[:] = 0.0
    start = 0
    while start < k:
        stop = start
        kx = 0
        while stop < k and value[stop] == value[start]:
            kx += (source[stop] == 1) == mask[g, item[stop], b]  # X' takes Y where the mask is set
            stop += 1
        ky = stop - start - kx
        mid_x = below_x + (kx + 1) / 2.0
        mid_y = below_y + (ky + 1) / 2.0
        for j in range(start, stop):
            s = item[j]
            if (source[j] == 1) == mask[g, s, b]:
                sums[0] += mid_x * dzx[s]
                sums[1] += mid_x * mid_x
            else:
                sums[2] += mid_y * dzy[s]
                sums[3] += mid_y * mid_y
        below_x += kx
        below_y += ky
        start = stop


@_jit
def _rank_sums_lanes(value, item, source, k, mask, g, dzx, dzy, acc, run):
    """:func:`_rank_sums` for every draw at once (the items valid in the same cells in every draw): one walk
    along the sorted values with the draws as lanes. ``acc`` (6, B): below and the two sums of X', then of
    Y'; ``run`` (3, B) scratch. Every sum is of half-integer products, exact, so it equals the draw-by-draw
    walk's bit for bit."""
    n_draws = acc.shape[1]
    acc[:] = 0.0
    start = 0
    while start < k:
        stop = start
        while stop < k and value[stop] == value[start]:
            stop += 1
        run[:] = 0.0
        for j in range(start, stop):
            s = item[j]
            one = source[j] == 1
            for b in range(n_draws):
                take = 1.0 if (mask[g, s, b] == one) else 0.0  # X' takes Y where the mask is set
                run[0, b] += take
                run[1, b] += take * dzx[s]
                run[2, b] += (1.0 - take) * dzy[s]
        size = stop - start
        for b in range(n_draws):
            kx = run[0, b]
            ky = size - kx
            mid_x = acc[0, b] + (kx + 1) / 2.0
            mid_y = acc[3, b] + (ky + 1) / 2.0
            acc[1, b] += mid_x * run[1, b]
            acc[2, b] += kx * (mid_x * mid_x)
            acc[4, b] += mid_y * run[2, b]
            acc[5, b] += ky * (mid_y * mid_y)
            acc[0, b] += kx
            acc[3, b] += ky
        start = stop


@_jit
def _rho(suz, suu, n, szz, need):
    """rho from the exact sums over n valid items (suu the raw sum of squared mid-ranks); NaN where undefined."""
    if n < need:
        return np.nan
    centre = (n + 1) / 2.0
    suu = suu - n * centre * centre
    if suu <= 0.0 or szz <= 0.0:  # every valid item tied
        return np.nan
    return min(1.0, max(-1.0, suz / math.sqrt(suu * szz)))


@_jit
def _weight(n, average):
    """A defined group's weight in the average: 1 (macro), its items (weighted) or its pairs (pairs)."""
    if average == 0:
        return 1.0
    if average == 1:
        return float(n)
    return n * (n - 1.0) / 2.0


@_jit
def _add(num, den, b, rho_x, rho_y, nx, ny, average):
    """Draw b's weighted sums over the groups: a defined rho of X' (of Y') and its weight."""
    if not math.isnan(rho_x):
        w = _weight(nx, average)
        num[0, b] += w * rho_x
        den[0, b] += w
    if not math.isnan(rho_y):
        w = _weight(ny, average)
        num[1, b] += w * rho_y
        den[1, b] += w


@_jit
def _fixed(x, y, z, r, g):
    """Whether X and Y are missing in the same cells of group g of row r (where the target is present)."""
    for s in range(x.shape[1]):
        if not math.isnan(z[r, s, g]) and math.isnan(x[r, s, g]) != math.isnan(y[r, s, g]):
            return False
    return True


@_jit
def _valid_items(x, y, z, r, g, mask, b, inside_x, inside_y):
    """The items valid in X' and in Y' under draw b (a score and a target score)."""
    for s in range(x.shape[1]):
        has_z = not math.isnan(z[r, s, g])
        vx = has_z and not math.isnan(x[r, s, g])
        vy = has_z and not math.isnan(y[r, s, g])
        inside_x[s] = vy if mask[g, s, b] else vx
        inside_y[s] = vx if mask[g, s, b] else vy


@_jit
def swap_deltas(x, y, z, m, need, average, out):
    """out (R, B): the average over the groups of rho(X', Z) minus that of rho(Y', Z), for each row and mask.

    ``x``, ``y``, ``z`` (R, S, G) (any strides: S items of G groups) and the masks ``m`` (G, S, B), each
    group's draws together (C order: a group's masks are read in one piece, an item's draws as lanes);
    ``need`` the fewest valid items of a defined group; ``average`` 0 (macro), 1 (weighted), 2 (pairs).
    A draw with no defined group is NaN.

    Examples
    --------
    >>> x = np.array([[[1.0], [2.0], [3.0]]]); y = np.array([[[3.0], [2.0], [1.0]]])
    >>> masks = np.zeros((1, 3, 2), dtype=np.bool_); masks[..., 1] = True  # no swap, then every cell swapped
    >>> out = np.empty((1, 2))
    >>> swap_deltas(x, y, x, masks, 3, 0, out)
    >>> out.tolist()
    [[2.0, -2.0]]
    """
    n_rows, n_items, n_groups = x.shape
    n_draws = m.shape[2]
    acc, run = np.zeros((6, n_draws)), np.zeros((3, n_draws))
    value, item, source = np.empty(2 * n_items), np.empty(2 * n_items, np.int64), np.empty(2 * n_items, np.int64)
    zvalue, zitem = np.empty(n_items), np.empty(n_items, np.int64)
    inside_x, inside_y = np.empty(n_items, np.bool_), np.empty(n_items, np.bool_)
    dzx, dzy = np.zeros(n_items), np.zeros(n_items)
    sums = np.empty(4)
    num, den = np.zeros((2, n_draws)), np.zeros((2, n_draws))
    for r in range(n_rows):
        num[:] = 0.0
        den[:] = 0.0
        for g in range(n_groups):
            k = _sorted_entries(x, y, z, r, g, value, item, source)
            kz = _sorted_target(z, r, g, zvalue, zitem)
            fixed = _fixed(x, y, z, r, g)
            if fixed:
                for s in range(n_items):  # the same items in every draw
                    inside_x[s] = not (math.isnan(z[r, s, g]) or math.isnan(x[r, s, g]))
                nx, szx = _target_ranks(zvalue, zitem, kz, inside_x, dzx)
                ny, szy = nx, szx
                if nx < need:
                    continue
                dzy[:] = dzx
                _rank_sums_lanes(value, item, source, k, m, g, dzx, dzy, acc, run)
                for b in range(n_draws):
                    _add(num, den, b, _rho(acc[1, b], acc[2, b], nx, szx, need),
                         _rho(acc[4, b], acc[5, b], ny, szy, need), nx, ny, average)
                continue
            for b in range(n_draws):
                _valid_items(x, y, z, r, g, m, b, inside_x, inside_y)
                nx, szx = _target_ranks(zvalue, zitem, kz, inside_x, dzx)
                ny, szy = _target_ranks(zvalue, zitem, kz, inside_y, dzy)
                _rank_sums(value, item, source, k, m, b, g, dzx, dzy, sums)
                _add(num, den, b, _rho(sums[0], sums[1], nx, szx, need), _rho(sums[2], sums[3], ny, szy, need),
                     nx, ny, average)
        for b in range(n_draws):
            mean_x = num[0, b] / den[0, b] if den[0, b] > 0 else np.nan
            mean_y = num[1, b] / den[1, b] if den[1, b] > 0 else np.nan
            out[r, b] = mean_x - mean_y
