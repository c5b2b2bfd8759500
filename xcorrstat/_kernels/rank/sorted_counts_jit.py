"""Compiled loops of :mod:`xcorrstat._kernels.rank.sorted_counts` (numba): weighted rank statistics of long
rows by sorting.

Only :mod:`xcorrstat._kernels.rank.sorted_counts` imports this module, on its first call. Each loop takes
a row at a time (a row is one draw's S values and weights) and never compares every pair:

* :func:`kendall_counts` sorts the row's drawn units by x (tie groups of equal x, their weights
  and dense ranks), then by z with x's order kept inside a z tie group, and walks that order once:
  ties in z and in both are weighted sums over the tie groups, the discordant pairs a weighted
  inversion count of x's ranks (a Fenwick tree of the weights). Pairs within epsilon in x are
  those whose float difference ``x_b - x_a`` is at most epsilon -- monotone in ``x_b`` over the
  sorted values, so a pointer per group finds them. O(S log S) a row.
* :func:`midranks` sorts a row and gives each unit the weighted mid-rank of its tie group: the
  weight below it plus half the group's weight plus one half.

Every count is a sum of products of integer weights held exactly in float64, in any order, so
the counts are those of the pair forms of :mod:`xcorrstat._kernels.weighted` bit for bit. The
functions release the GIL.
"""

from __future__ import annotations

import importlib

import numpy as np

numba = importlib.import_module("numba")

__all__ = ["COUNTS", "kendall_counts", "midranks"]

_jit = numba.njit(nogil=True, cache=True, boundscheck=False, error_model="numpy")

#: The columns of :func:`kendall_counts`' output, over pairs of distinct drawn units: C - D, pairs tied
#: in x (exactly), in x within epsilon, in z, in both (x within epsilon), the smaller number of
#: distinct values.
COUNTS = ("con_minus_dis", "tx0", "tx", "tz", "txz", "distinct")


@_jit
def _drawn(x, z, w, row, xs, zs, ws):
    """The row's units with a weight and both values into xs, zs, ws; returns their number."""
    k = 0
    for s in range(x.shape[1]):
        if w[row, s] > 0 and not (np.isnan(x[row, s]) or np.isnan(z[row, s])):
            xs[k], zs[k], ws[k] = x[row, s], z[row, s], w[row, s]
            k += 1
    return k


@_jit
def _x_groups(xs, ws, order, rank, gval, gw):
    """x's tie groups in sorted order: each unit's group (rank), the groups' values and weights.
    Returns (groups, exact ties in x over pairs of distinct units)."""
    groups, ties, sq = 0, 0.0, 0.0
    for p in range(order.size):
        u = order[p]
        if p == 0 or xs[u] != gval[groups - 1]:
            if groups:
                ties += (gw[groups - 1] * gw[groups - 1] - sq) / 2.0
            gval[groups], gw[groups], sq = xs[u], 0.0, 0.0
            groups += 1
        rank[u] = groups - 1
        gw[groups - 1] += ws[u]
        sq += ws[u] * ws[u]
    if groups:
        ties += (gw[groups - 1] * gw[groups - 1] - sq) / 2.0
    return groups, ties


@_jit
def _within(gval, gw, groups, epsilon, hi, below):
    """hi[g]: the last group whose float difference from group g is at most epsilon (g itself for
    epsilon 0); below[g]: the weight of the groups before g. Returns the pairs of distinct groups
    within epsilon (weighted)."""
    below[0] = 0.0
    for g in range(groups):
        below[g + 1] = below[g] + gw[g]
    pairs, t = 0.0, 0
    for g in range(groups):
        t = max(t, g)
        while t + 1 < groups and gval[t + 1] - gval[g] <= epsilon:
            t += 1
        hi[g] = t
        pairs += gw[g] * (below[t + 1] - below[g + 1])
    return pairs


@_jit
def _fenwick_add(tree, g, w):
    g += 1
    while g < tree.size:
        tree[g] += w
        g += g & -g


@_jit
def _fenwick_sum(tree, g):
    """The weight inserted at groups 0..g."""
    total = 0.0
    g += 1
    while g > 0:
        total += tree[g]
        g -= g & -g
    return total


@_jit
def _z_walk(zs, ws, order, rank, hi, tree, pos):
    """Units in z order (x's order inside a z tie group): (ties in z, ties in z and within epsilon in x,
    discordant pairs with x beyond epsilon, distinct z values), all over pairs of distinct units."""
    tz, txz, dis, inserted, distinct = 0.0, 0.0, 0.0, 0.0, 0
    tree[:] = 0.0
    k = order.size
    start = 0
    while start < k:
        end = start
        while end + 1 < k and zs[order[end + 1]] == zs[order[start]]:
            end += 1
        distinct += 1
        weight, sq = 0.0, 0.0
        pos[0] = 0.0  # the group's weights, cumulated along x
        for p in range(start, end + 1):
            u = order[p]
            weight += ws[u]
            sq += ws[u] * ws[u]
            pos[p - start + 1] = pos[p - start] + ws[u]
        tz += (weight * weight - sq) / 2.0
        q = start
        for p in range(start, end + 1):  # pairs of the group within epsilon in x
            u = order[p]
            q = max(q, p)
            while q + 1 <= end and rank[order[q + 1]] <= hi[rank[u]]:
                q += 1
            txz += ws[u] * (pos[q - start + 1] - pos[p - start + 1])
        for p in range(start, end + 1):  # earlier units (smaller z) beyond epsilon above x
            u = order[p]
            dis += ws[u] * (inserted - _fenwick_sum(tree, hi[rank[u]]))
            _fenwick_add(tree, rank[u], ws[u])
            inserted += ws[u]
        start = end + 1
    return tz, txz, dis, distinct


@_jit
def kendall_counts(x, z, w, epsilon, out):
    """out (R, 6): the weighted Kendall counts (:data:`COUNTS`) of every row of x, z, w (R, S).

    A unit counts in a row where its weight is positive and neither value is NaN.
    """
    n_sys = x.shape[1]
    xs, zs, ws = np.empty(n_sys), np.empty(n_sys), np.empty(n_sys)
    rank, hi = np.empty(n_sys, dtype=np.int64), np.empty(n_sys, dtype=np.int64)
    gval, gw = np.empty(n_sys), np.empty(n_sys)
    below, pos, tree = np.empty(n_sys + 1), np.empty(n_sys + 1), np.empty(n_sys + 1)
    for row in range(x.shape[0]):
        k = _drawn(x, z, w, row, xs, zs, ws)
        by_x = np.argsort(xs[:k], kind="mergesort")
        groups, tx0 = _x_groups(xs, ws, by_x, rank, gval, gw)
        tx = _within(gval, gw, groups, epsilon, hi, below) + tx0 if epsilon > 0 else tx0
        if not epsilon > 0:
            for g in range(groups):
                hi[g] = g
        by_z = by_x[np.argsort(zs[by_x], kind="mergesort")]  # stable: x's order inside a z tie group
        tz, txz, dis, distinct = _z_walk(zs, ws, by_z, rank, hi, tree[: groups + 1], pos)
        n, sq = 0.0, 0.0
        for p in range(k):
            n += ws[p]
            sq += ws[p] * ws[p]
        total = (n * n - sq) / 2.0
        out[row, 0] = (total - tx - tz + txz) - 2.0 * dis
        out[row, 1], out[row, 2], out[row, 3], out[row, 4] = tx0, tx, tz, txz
        out[row, 5] = min(groups, distinct)


@_jit
def midranks(a, w, out):
    """out (R, S): the weighted mid-rank of every unit of a (R, S) among the row's non-NaN units, with
    weights w (R, S): the weight of the smaller values plus (the weight of its tie group + 1) / 2;
    1 / 2 where a is NaN."""
    n_sys = a.shape[1]
    idx = np.empty(n_sys, dtype=np.int64)
    vals = np.empty(n_sys)
    for row in range(a.shape[0]):
        k = 0
        for s in range(n_sys):
            out[row, s] = 0.5
            if not np.isnan(a[row, s]):
                idx[k], vals[k] = s, a[row, s]
                k += 1
        order = np.argsort(vals[:k], kind="mergesort")
        below, start = 0.0, 0
        while start < k:
            end, weight = start, w[row, idx[order[start]]]
            while end + 1 < k and vals[order[end + 1]] == vals[order[start]]:
                end += 1
                weight += w[row, idx[order[end]]]
            rank = below + (weight + 1.0) / 2.0
            for p in range(start, end + 1):
                out[row, idx[order[p]]] = rank
            below += weight
            start = end + 1
