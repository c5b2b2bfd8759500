"""Compiled loops of :mod:`xcorrstat._kernels.mt.tie_sweeps` (numba): the tie calibration of every bootstrap
draw of one metric, walks along its sorted pairs, without a temporary per pair and draw.

Only :mod:`xcorrstat._kernels.mt.tie_sweeps` imports this module, on its first call.
:func:`draw_factors` gives each draw's pair counts and group factors; :func:`draw_sweeps` takes one
metric's pairs, sorted by ``|dm|`` once (as :func:`~xcorrstat._kernels.mt.tie_sweeps.sorted_pairs`
gives them), and does for each draw what
:func:`~xcorrstat._kernels.mt.tie_sweeps.weighted_calibration_numpy` (the oracle of the tests) does with
(M, B, P) arrays:

1. a walk along the pairs with a finite ``|dm|``: the pair weight ``factor_g * (w_a w_b)``, the base
   (the level at no metric tie: the sum of the weights of the pairs that agree before they tie), the
   running sum of ``weight * (after - before)`` from left to right (np.cumsum's order) and its highest
   value at a candidate threshold (the last pair of each distinct ``|dm|``), and each group's integer
   count of the pairs agreeing at no tie, ``sum w_a w_b before``;
2. the top, as :func:`~xcorrstat._kernels.mt.ties.best_threshold` takes it: the highest level
   (base + running sum, rounded: that is the base plus the highest running sum, rounded once, as
   rounding keeps the order) or the base; epsilon is 0 when the base is within ``tol`` of it;
3. else a second walk, the same running sum again, as far as the first candidate whose level is
   within ``tol`` of the top: that is the threshold, and on the way (the pairs with
   ``|dm| <= epsilon``) each group's count moves from ``before`` to ``after``.

Up to :data:`LANES` draws share each walk, one lane each (the pair's data is read once for all of them
and the lanes' sums are independent, so the compiler puts them in vector registers); each draw's
arithmetic is the same in any lane and any batch. Memory: the packed pairs, 13 bytes each, and a few
values per group, item and lane.

The counts are integers (sums of products of counts), so they are exact in any order. The base is
summed left to right here, and in another order by the oracle's ``np.einsum``; where the weights are
fractions (the 1e-12 path) the levels can differ from the oracle's in their last bits, which moves
the threshold only if a candidate's level lies within those bits of ``top - tol``. The functions
release the GIL.
"""

from __future__ import annotations

import importlib

import numpy as np

numba = importlib.import_module("numba")

__all__ = ["LANES", "draw_factors", "draw_sweeps"]

_jit = numba.njit(nogil=True, cache=True, boundscheck=False, error_model="numpy")

#: The most draws walked together, one lane each: every draw's arithmetic is its own, in its own lane, so
#: its values do not depend on the draws beside it.
LANES = 32


@_jit
def draw_factors(valid, w, c, size, groups, factor, tol):
    """Each draw's pair counts and weights of one metric's groups, from its valid items ``valid`` (G, n),
    the item counts ``w`` (B, n) and the group counts ``c`` (B, G).

    Writes ``size`` (B, G): the group's pairs of distinct drawn items ``N_g``; ``groups`` (B,): the drawn
    groups with a pair, ``sum c_g [N_g > 0]``; ``factor`` (B, G): the group's pair weight, ``c_g`` where
    every drawn group with a pair has the same ``N_g`` (exact sums), else ``c_g / (N_g groups)``; ``tol``
    (B,): 0 or 1e-12 accordingly. The sums are of integers, exact in any order; the rest is the oracle's
    arithmetic, operation for operation.

    Examples
    --------
    >>> size, groups, factor, tol = np.empty((1, 2)), np.empty(1), np.empty((1, 2)), np.empty(1)
    >>> draw_factors(np.array([[True, True, True], [True, True, False]]), np.array([[2.0, 1.0, 1.0]]),
    ...              np.array([[1.0, 3.0]]), size, groups, factor, tol)
    >>> size.tolist(), groups.tolist(), factor.tolist(), tol.tolist()
    ([[5.0, 2.0]], [4.0], [[0.05, 0.375]], [1e-12])
    """
    n_draws, n_items = w.shape
    n_groups = valid.shape[0]
    for d in range(n_draws):
        low, high, used = np.inf, -np.inf, 0.0
        for g in range(n_groups):
            items, squares = 0.0, 0.0
            for i in range(n_items):
                if valid[g, i]:
                    items += w[d, i]
                    squares += w[d, i] * w[d, i]
            n_pairs = (items * items - squares) / 2.0
            size[d, g] = n_pairs
            if n_pairs > 0:
                used += c[d, g]
                if c[d, g] > 0:
                    low = min(low, n_pairs)
                    high = max(high, n_pairs)
        groups[d] = used
        exact = low == high
        tol[d] = 0.0 if exact else 1e-12
        for g in range(n_groups):
            n_pairs = size[d, g]
            if n_pairs > 0:
                factor[d, g] = c[d, g] if exact else c[d, g] / (n_pairs * used)
            else:
                factor[d, g] = 0.0


@_jit
def _pair_codes(dist, before, after, group, item_a, item_b):
    """The pairs with a finite ``|dm|`` (a prefix of the sorted pairs; inf marks an invalid pair), packed:
    each one's group and items (int32, rows ``(grp, ia, ib)`` of ``idx``) and its flags (1: agrees before
    it ties, 2: after, 4: a candidate, the last pair of its distinct ``|dm|``)."""
    n = dist.size
    while n > 0 and not np.isfinite(dist[n - 1]):
        n -= 1
    idx = np.empty((3, n), dtype=np.int32)
    flag = np.empty(n, dtype=np.uint8)
    for p in range(n):
        idx[0, p] = group[p]
        idx[1, p] = item_a[p]
        idx[2, p] = item_b[p]
        f = (1 if before[p] else 0) | (2 if after[p] else 0)
        if p == n - 1 or dist[p + 1] != dist[p]:
            f |= 4
        flag[p] = f
    return idx, flag


@_jit
def _load_block(factor, w, d0, lanes, ft, wt, cnt):
    """Draws ``d0 .. d0 + lanes`` into the lanes: their group factors (G, lanes) and item counts
    (n, lanes); their counts reset."""
    for d in range(lanes):
        for g in range(factor.shape[1]):
            ft[g, d] = factor[d0 + d, g]
            cnt[g, d] = 0.0
        for i in range(w.shape[1]):
            wt[i, d] = w[d0 + d, i]


@_jit
def _walk(idx, flag, ft, wt, lanes, acc, cnt):
    """The first walk along the pairs, for the draws in the lanes: the base ``acc[0]``, the running sum
    of ``weight * (after - before)`` (``acc[1]``, left to right) and its highest value at a candidate
    (``acc[2]``), and each group's count of the pairs agreeing at no tie (``cnt``)."""
    for d in range(lanes):
        acc[0, d] = 0.0
        acc[1, d] = 0.0
        acc[2, d] = -np.inf
    for p in range(flag.size):
        g, ia, ib = idx[0, p], idx[1, p], idx[2, p]
        f = flag[p]
        b = float(f & 1)
        gain = float((f >> 1) & 1) - b
        for d in range(lanes):
            w = wt[ia, d] * wt[ib, d]
            weight = ft[g, d] * w
            acc[0, d] += weight * b
            cnt[g, d] += w * b
            acc[1, d] += weight * gain
        if f & 4:
            for d in range(lanes):
                acc[2, d] = max(acc[2, d], acc[1, d])


@_jit
def _bounds(acc, tol, d0, lanes, low, active):
    """Each lane's lowest level that ties the top (``low``: the top, the highest level or the base, minus
    ``tol``), and whether it walks on to find its threshold (``active`` 1; 0 when the base ties the top:
    epsilon 0). The rounded ``base + running sum`` grows with the running sum, so the top is the base
    plus the highest running sum, rounded once."""
    for d in range(lanes):
        base = acc[0, d]
        low[d] = max(acc[2, d] + base, base) - tol[d0 + d]
        active[d] = 0.0 if base >= low[d] else 1.0


@_jit
def _ties(dist, idx, flag, ft, wt, lanes, acc, low, active, e, cnt):
    """The second walk, along the pairs as far as the lanes' thresholds: the running sums again (the same
    sums), each active lane's group counts moved from ``before`` to ``after``, and at each candidate the
    lanes whose level ``base + running sum`` reaches ``low`` stop there (their threshold, ``e``). A lane
    whose threshold is 0 takes the pairs with ``|dm| = 0`` (ties at epsilon 0) and stops."""
    left = 0
    for d in range(lanes):
        acc[1, d] = 0.0
        e[d] = 0.0 if active[d] == 0.0 else np.nan  # NaN: a draw without a drawn group with a pair
        if active[d] == 0.0 and flag.size > 0 and dist[0] == 0.0:
            active[d] = 2.0  # threshold 0 and pairs with |dm| = 0: they tie
        left += active[d] != 0.0
    for p in range(flag.size):
        if left == 0:
            break
        g, ia, ib = idx[0, p], idx[1, p], idx[2, p]
        f = flag[p]
        gain = float((f >> 1) & 1) - float(f & 1)
        for d in range(lanes):
            w = wt[ia, d] * wt[ib, d]
            acc[1, d] += ft[g, d] * w * gain
            cnt[g, d] += w * gain * (1.0 if active[d] != 0.0 else 0.0)
        if f & 4:
            for d in range(lanes):
                if active[d] == 2.0 or (active[d] == 1.0 and acc[1, d] + acc[0, d] >= low[d]):
                    e[d] = 0.0 if active[d] == 2.0 else dist[p]
                    active[d] = 0.0
                    left -= 1


@_jit
def draw_sweeps(dist, before, after, group, item_a, item_b, factor, w, tol, eps, counts):
    """Every draw's threshold and per-group counts of agreeing pairs at it, for one metric.

    ``dist``, ``before``, ``after``, ``group``, ``item_a``, ``item_b`` (P,): the metric's sorted pairs (as
    :func:`~xcorrstat._kernels.mt.tie_sweeps.sorted_pairs` gives them: ``a``, ``b`` the items);
    ``factor``, ``tol`` as :func:`draw_factors` writes them; ``w`` (B, n) the item counts. Writes ``eps``
    (B,) and ``counts`` (B, G), the sums of the pair multiplicities ``w_a w_b`` over the pairs of each group
    that agree at the threshold.

    Examples
    --------
    >>> # one group of x = [1, 2, 2.5], z = [1, 3, 3]: pairs (1, 2), (0, 1), (0, 2) by |dm|
    >>> eps, counts = np.empty(1), np.empty((1, 1))
    >>> draw_sweeps(np.array([0.5, 1.0, 1.5]), np.array([False, True, True]), np.array([True, False, False]),
    ...             np.zeros(3, dtype=np.int64), np.array([1, 0, 0]), np.array([2, 1, 2]), np.ones((1, 1)),
    ...             np.ones((1, 3)), np.zeros(1), eps, counts)
    >>> eps.tolist(), counts.tolist()  # the tie at 0.5 agrees with z's: all 3 pairs agree
    ([0.5], [[3.0]])
    """
    n_draws, n_groups = factor.shape
    idx, flag = _pair_codes(dist, before, after, group, item_a, item_b)
    ft = np.empty((n_groups, LANES))
    wt = np.empty((w.shape[1], LANES))
    cnt = np.empty((n_groups, LANES))
    acc = np.empty((3, LANES))
    low = np.empty(LANES)
    active = np.empty(LANES)
    e = np.empty(LANES)
    for d0 in range(0, n_draws, LANES):
        lanes = min(LANES, n_draws - d0)
        _load_block(factor, w, d0, lanes, ft, wt, cnt)
        _walk(idx, flag, ft, wt, lanes, acc, cnt)
        _bounds(acc, tol, d0, lanes, low, active)
        _ties(dist, idx, flag, ft, wt, lanes, acc, low, active, e, cnt)
        for d in range(lanes):
            eps[d0 + d] = e[d]
            for g in range(n_groups):
                counts[d0 + d, g] = cnt[g, d]
