"""Compiled loops of :mod:`xcorrstat._kernels.rank.global_counts` (numba): its one algorithm.

:mod:`xcorrstat._kernels.rank.global_counts` imports this module on first use (importing
xcorrstat does not start numba). The loops count exact integers (the tests compare them
with NumPy counts and brute-force counts, draw by draw):

* :func:`level_discordant`: weighted discordant pairs of a table for a block of weight
  columns ("lanes"), one pass over the entries per bit of the target's rank; with a lag
  (``epsilon > 0``) an entry pairs only with the entries far enough below it, and
  :func:`far_pairs` counts those far pairs and the far pairs tied in the target;
* :func:`group_counts`: weighted tie pairs and distinct values of the table's groups;
* :func:`swap_counts` and :func:`weight_counts`: the two drivers, which build a block of
  lanes from swap masks (0/1 weights of X' and Y') or from bootstrap counts (``w_s c_i``)
  and call both; :func:`swap_counts_linear` counts X' only and gives what Y' needs
  (:mod:`xcorrstat._kernels.rank.global_swap`), whose linear terms :func:`linear_terms` gives;
  :mod:`xcorrstat._kernels.rank.group_jit` runs them for many small tables in one call.

Weights, bucket sums and partial sums take the dtype of the arrays passed in: int32 when
they fit (the fast flavour), int64 otherwise; numba compiles one specialisation per dtype of
the same loops. Every lane is computed on its own, so a draw's counts do not depend on the
block or batch it is computed in. The functions release the GIL (Dask threads run them in
parallel).
"""

from __future__ import annotations

import importlib

import numpy as np

numba = importlib.import_module("numba")

__all__ = ["LANES", "N_COUNTS", "N_ROWS", "far_pairs", "group_counts", "level_discordant", "linear_terms",
           "swap_counts", "swap_counts_linear", "weight_counts"]

#: Weight columns computed together: one SIMD row of 0/1 bytes, a few of int32 weights.
LANES = 32
#: Rows of the counts :func:`swap_counts` and :func:`weight_counts` return.
N_COUNTS = 7  # n, discordant, tx0, txz0, tz, distinct x, distinct z
#: Rows of the counts :func:`weight_counts` returns: those of :data:`N_COUNTS`, then with a lag
#: the pairs far apart in x and those of them tied in z.
N_ROWS = 9

_JIT = {"nogil": True, "cache": True, "boundscheck": False, "error_model": "numpy"}


@numba.njit(**_JIT)
def _width(h):
    """Lanes of a block of ``h`` draws: a multiple of 8, at most :data:`LANES` (a short last block
    costs its own width, not a full one)."""
    return min(LANES, (h + 7) // 8 * 8)


@numba.njit(**_JIT)
def level_discordant(zr, w, nbits, ones, flush, acc, lag):
    """Weighted pairs ``i < j`` (table order) with ``zr[i] > zr[j]``, per lane: ``sum w_i w_j``;
    with a ``lag`` (not None) only the pairs with ``i < lag[j]`` (far apart in x).

    The pair is counted at the highest bit where the two ranks differ: entry i (bit 1) adds
    its weights to its bucket (the rank's higher bits), entry j (bit 0) takes the bucket's
    sum. ``ones`` is scratch of at least ``((max rank >> 1) + 1) * lanes`` of the weights'
    dtype; partial sums are ``acc``'s dtype and go into the int64 result every ``flush`` entries.
    numba compiles the loop without a lag (None) on its own: the lagged branch is pruned.
    """
    e, lanes = w.shape
    out = np.zeros(lanes, np.int64)
    if lag is not None:
        for k in range(nbits):
            _lagged_pass(zr, w, lag, k + 1, k, ones, flush, acc, out)
        return out
    part = np.zeros(lanes, acc.dtype)
    for k in range(nbits):
        ones[:] = 0
        for j0 in range(0, e, flush):
            part[:] = 0
            for j in range(j0, min(e, j0 + flush)):
                r = zr[j]
                base = (r >> (k + 1)) * lanes
                row = ones[base:base + lanes]
                wj = w[j]
                if (r >> k) & 1:
                    for lane in range(lanes):
                        row[lane] += wj[lane]
                else:
                    for lane in range(lanes):
                        part[lane] += wj[lane] * row[lane]
            for lane in range(lanes):
                out[lane] += part[lane]
    return out


@numba.njit(**_JIT)
def _lagged_pass(zr, w, lag, shift, bit, ones, flush, acc, out):
    """One pass of :func:`level_discordant` with a lag, or of :func:`far_pairs`: add ``sum w_i w_j``
    per lane to ``out`` over the pairs ``i < lag[j]`` (table order) in the same bucket
    ``zr >> shift``; with ``bit >= 0`` only those where i has that bit of its rank set and j
    has not, with ``bit < 0`` all of them.

    ``lag`` never decreases, so that a pointer walks the entries once: entry i adds its weights
    to its bucket's running sums in ``ones`` (scratch of at least ``((max rank >> shift) + 1)
    * lanes``, cleared here) when the look of some j passes it, then j takes its bucket's sums.
    The row views are taken outside the branches, so that the lane loops are vectorised.
    """
    e, lanes = w.shape
    part = np.zeros(lanes, acc.dtype)
    ones[:] = 0
    i = 0
    for j0 in range(0, e, flush):
        part[:] = 0
        for j in range(j0, min(e, j0 + flush)):
            while i < lag[j]:
                r = zr[i]
                base = (r >> shift) * lanes
                row = ones[base:base + lanes]
                wi = w[i]
                if bit < 0 or (r >> bit) & 1:
                    for lane in range(lanes):
                        row[lane] += wi[lane]
                i += 1
            r = zr[j]
            base = (r >> shift) * lanes
            row = ones[base:base + lanes]
            wj = w[j]
            if bit < 0 or not (r >> bit) & 1:
                for lane in range(lanes):
                    part[lane] += wj[lane] * row[lane]
        for lane in range(lanes):
            out[lane] += part[lane]


@numba.njit(**_JIT)
def far_pairs(zr, w, nbits, ones, flush, acc, lag, far, far_tz):
    """Add per lane the weighted pairs ``i < lag[j]`` to ``far`` and those of them tied in the
    target to ``far_tz``; ``ones`` as in :func:`level_discordant` with ``(max rank + 1) * lanes``."""
    _lagged_pass(zr, w, lag, nbits, -1, ones, flush, acc, far)  # one bucket: every rank < 2**nbits
    _lagged_pass(zr, w, lag, 0, -1, ones, flush, acc, far_tz)


@numba.njit(**_JIT)
def _run_pairs(w, order, starts, ends, pairs, nonzero, covered):
    """Over the runs ``[starts[g], ends[g])`` of entries (through ``order`` when it is not empty):
    add each run's tie pairs T (T - 1) / 2 to ``pairs``, 1 if it has weight to ``nonzero`` and
    its weight T to ``covered``, per lane."""
    lanes = w.shape[1]
    total = np.zeros(lanes, np.int64)
    for g in range(starts.shape[0]):
        total[:] = 0
        for k in range(starts[g], ends[g]):
            wj = w[order[k]] if order.shape[0] else w[k]
            for lane in range(lanes):
                total[lane] += wj[lane]
        for lane in range(lanes):
            t = total[lane]
            pairs[lane] += t * (t - 1) // 2
            nonzero[lane] += t > 0
            covered[lane] += t


@numba.njit(**_JIT)
def group_counts(w, groups, out, with_z, binary):
    """Per lane into ``out[:, :lanes]`` (rows as :data:`N_COUNTS`): the weight, tie pairs within
    the runs of equal x and of equal (x, z) and the distinct x values; with ``with_z`` also tie
    pairs and distinct values of the runs of equal z.

    ``groups = (x starts, x ends, xz starts, xz ends, zorder, z starts, z ends)``. A run of
    weight T has T (T - 1) / 2 tie pairs (copies of one cell included). With ``binary`` (0/1
    weights) the x and (x, z) lists may hold only the runs of two entries or more: a lone
    entry has no tie pair, and it is a distinct value when it has weight.
    """
    xs, xe, xzs, xze, zorder, zs, ze = groups
    e, lanes = w.shape
    n = np.zeros(lanes, np.int64)
    for j in range(e):
        wj = w[j]
        for lane in range(lanes):
            n[lane] += wj[lane]
    none = np.zeros(0, np.int32)
    covered = np.zeros(lanes, np.int64)
    distinct = np.zeros(lanes, np.int64)
    _run_pairs(w, none, xs, xe, out[2], distinct, covered)
    scratch = np.zeros(lanes, np.int64)
    _run_pairs(w, none, xzs, xze, out[3], scratch, scratch.copy())
    for lane in range(lanes):
        out[0, lane] = n[lane]
        out[5, lane] = distinct[lane] + (n[lane] - covered[lane] if binary else 0)
    if with_z:
        _run_pairs(w, zorder, zs, ze, out[4], out[6], scratch)


@numba.njit(**_JIT)
def swap_counts(cell, src, zr, nbits, groups, masks, with_z, flush):
    """Counts of X' (columns ``0..B-1``) and Y' (``B..2B-1``) for the B masks of ``masks`` (B, cells) of 0/1.

    Entry j of the table is cell ``cell[j]`` of X (``src[j] == 0``) or of Y (1): X' keeps it
    where the mask is ``src[j]``, Y' where it is not. ``groups`` as in :func:`group_counts`
    (binary weights).
    """
    e = cell.shape[0]
    b = masks.shape[0]
    out = np.zeros((N_COUNTS, 2 * b), np.int64)
    rows = ((zr.max() >> 1) + 1) if e else 1
    ones = np.zeros(rows * LANES, np.int32)
    acc = np.zeros(1, np.int32)
    part = np.zeros((N_COUNTS, LANES), np.int64)
    block = np.zeros((masks.shape[1], LANES // 2), np.uint8)  # this block's masks, by cell: small enough for a cache
    for b0 in range(0, b, LANES // 2):
        h = min(LANES // 2, b - b0)
        half = min(LANES // 2, _width(h))  # lanes of X'; as many of Y' follow
        block[:] = 0  # lanes past the last draw weigh nothing
        for lane in range(h):
            m = masks[b0 + lane]
            for c in range(m.shape[0]):
                block[c, lane] = m[c]
        w = np.zeros((e, 2 * half), np.uint8)
        for j in range(e):
            row = block[cell[j]]
            flip = np.uint8(1 - src[j])
            for lane in range(half):
                v = row[lane] ^ flip
                w[j, lane] = v
                w[j, half + lane] = v ^ np.uint8(1)
        for lane in range(h, half):
            w[:, lane] = 0
            w[:, half + lane] = 0
        part[:] = 0
        group_counts(w, groups, part, with_z, True)
        part[1, :2 * half] = level_discordant(zr, w, nbits, ones[:rows * 2 * half], flush, acc, None)
        for lane in range(h):
            for r in range(N_COUNTS):
                out[r, b0 + lane] = part[r, lane]
                out[r, b + b0 + lane] = part[r, half + lane]
    return out


@numba.njit(**_JIT)
def weight_counts(sys_of, inp_of, zr, nbits, groups, w_t, c_t, flush, acc, lag):
    """Counts (:data:`N_ROWS`, B) for B bootstrap draws: entry j weighs ``w_t[sys_of[j], b] * c_t[inp_of[j], b]``.

    ``w_t`` (S, B) and ``c_t`` (I, B) are counts of the systems and inputs, of a dtype that
    holds every weight and every sum of weights (the dtype of the block and the bucket sums);
    ``groups`` as in :func:`group_counts`, every run listed; ``lag`` None, or (with epsilon)
    the entries far enough below each entry (then the far rows are counted too).
    """
    e = sys_of.shape[0]
    b = w_t.shape[1]
    out = np.zeros((N_ROWS, b), np.int64)
    top = zr.max() if e else 0
    rows = (top >> 1) + 1 if lag is None else top + 1
    ones = np.zeros(rows * LANES, w_t.dtype)
    part = np.zeros((N_ROWS, LANES), np.int64)
    for b0 in range(0, b, LANES):
        h = min(LANES, b - b0)
        lanes = _width(h)
        w = np.zeros((e, lanes), w_t.dtype)
        for j in range(e):
            ws = w_t[sys_of[j]]
            ci = c_t[inp_of[j]]
            for lane in range(h):
                w[j, lane] = ws[b0 + lane] * ci[b0 + lane]
        part[:] = 0
        group_counts(w, groups, part, True, False)
        scratch = ones[:((top >> 1) + 1) * lanes]
        part[1, :lanes] = level_discordant(zr, w, nbits, scratch, flush, acc, lag)
        if lag is not None:
            far_pairs(zr, w, nbits, ones[:rows * lanes], flush, acc, lag, part[7], part[8])
        for lane in range(h):
            for r in range(N_ROWS):
                out[r, b0 + lane] = part[r, lane]
    return out


@numba.njit(**_JIT)
def _run_pairs_both(w, starts, ends, pairs_x, pairs_y, nonzero_x, nonzero_y, covered):
    """Tie pairs and runs with weight of X' (weights ``w``) and of Y' (the entries X' does not keep)."""
    lanes = w.shape[1]
    total = np.zeros(lanes, np.int64)
    for g in range(starts.shape[0]):
        total[:] = 0
        for k in range(starts[g], ends[g]):
            wk = w[k]
            for lane in range(lanes):
                total[lane] += wk[lane]
        size = ends[g] - starts[g]
        for lane in range(lanes):
            t = total[lane]
            u = size - t
            pairs_x[lane] += t * (t - 1) // 2
            pairs_y[lane] += u * (u - 1) // 2
            nonzero_x[lane] += t > 0
            nonzero_y[lane] += u > 0
            covered[lane] += t


@numba.njit(**_JIT)
def swap_counts_linear(cell, src, zr, nbits, groups, masks, lin, singles, flush):
    """What X' and Y' need when X and Y are valid in the same cells, for the B masks (B, cells).

    Returns (9, B) rows: weight, discordant pairs, tie pairs in x and in (x, z) and distinct
    x of X'; tie pairs in x and in (x, z) and distinct x of Y' (every entry X' does not keep);
    ``sum_c m_c lin[c]`` (``lin`` int32, or int64 for tables too long for int32 sums). ``groups`` lists the
    runs of two entries or more;
    ``singles`` is the number of entries alone in their run of x.
    """
    xs, xe, xzs, xze = groups[0], groups[1], groups[2], groups[3]
    e = cell.shape[0]
    cells = masks.shape[1]
    b = masks.shape[0]
    out = np.zeros((9, b), np.int64)
    rows = ((zr.max() >> 1) + 1) if e else 1
    ones = np.zeros(rows * LANES, np.int32)
    acc = np.zeros(1, np.int32)
    block = np.zeros((cells, LANES), np.uint8)
    part = np.zeros((9, LANES), np.int64)
    n_valid = e // 2
    lm = np.zeros(LANES, lin.dtype)
    biggest = 1
    for c in range(cells):
        biggest = max(biggest, abs(lin[c]))
    lin_flush = max(1, 2147483647 // biggest)
    for b0 in range(0, b, LANES):
        h = min(LANES, b - b0)
        lanes = _width(h)
        block[:] = 0  # lanes past the last draw weigh nothing
        for lane in range(h):
            m = masks[b0 + lane]
            for c in range(cells):
                block[c, lane] = m[c]
        part[:] = 0
        for c0 in range(0, cells, lin_flush):  # int32 partial sums of sum_c m_c l_c
            lm[:] = 0
            for c in range(c0, min(cells, c0 + lin_flush)):
                lc = lin[c]
                row = block[c]
                for lane in range(lanes):
                    lm[lane] += lc * row[lane]
            for lane in range(lanes):
                part[8, lane] += lm[lane]
        w = np.zeros((e, lanes), np.uint8)
        for j in range(e):
            row = block[cell[j]]
            flip = np.uint8(1 - src[j])
            wj = w[j]
            for lane in range(lanes):
                wj[lane] = row[lane] ^ flip
        for lane in range(h, lanes):
            w[:, lane] = 0
        for lane in range(h):
            part[0, lane] = n_valid  # every valid cell, from X or from Y
        covered = np.zeros(lanes, np.int64)
        _run_pairs_both(w, xs, xe, part[2], part[5], part[4], part[7], covered)
        _run_pairs_both(w, xzs, xze, part[3], part[6], np.zeros(lanes, np.int64), np.zeros(lanes, np.int64),
                        np.zeros(lanes, np.int64))
        for lane in range(lanes):
            kept = part[0, lane] - covered[lane]  # lone entries X' keeps; Y' keeps the other lone ones
            part[4, lane] += kept
            part[7, lane] += singles - kept
        part[1, :lanes] = level_discordant(zr, w, nbits, ones[:rows * lanes], flush, acc, None)
        for lane in range(h):
            for r in range(9):
                out[r, b0 + lane] = part[r, lane]
    return out


@numba.njit(**_JIT)
def _below(tree, r):
    """Entries of rank < r in a Fenwick tree of counts."""
    total = 0
    while r > 0:
        total += tree[r]
        r -= r & (-r)
    return total


@numba.njit(**_JIT)
def linear_terms(zr, x_runs, src, cell, n_cells):
    """The linear form of :mod:`xcorrstat._kernels.rank.global_swap`: ``(l, S(X) - S(Y))``.

    With every valid cell present twice in the table (its X entry, ``src`` 0, and its Y entry),
    ``l[c] = h(y_c) - h(x_c)`` with ``h_j = sum_e sgn(v_j - v_e) sgn(z_j - z_e)`` over all
    entries, and ``S`` of X (Y) over its own entries. One sweep up the values with Fenwick trees
    over the target's ranks: all entries, X's, Y's.
    """
    e = zr.shape[0]
    g = (zr.max() + 1) if e else 1
    count = np.zeros(g + 1, np.int64)
    for j in range(e):
        count[zr[j] + 1] += 1
    for r in range(g):
        count[r + 1] += count[r]  # count[r]: entries of rank < r
    trees = np.zeros((3, g + 1), np.int64)
    seen = np.zeros(3, np.int64)
    lin = np.zeros(n_cells, np.int64)
    signed = np.zeros(2, np.int64)
    for run in range(x_runs.shape[0] - 1):
        s, t = x_runs[run], x_runs[run + 1]
        k = s
        while k < t:  # the (x, z) runs inside this run of equal x: ranks ascend
            u = k
            while u < t and zr[u] == zr[k]:
                u += 1
            for j in range(k, u):
                r = zr[j]
                lo = _below(trees[0], r)
                hi = seen[0] - _below(trees[0], r + 1)
                h = 2 * lo - 2 * hi + (e - count[r + 1]) - count[r] + (k - s) - (t - u)
                lin[cell[j]] += h if src[j] else -h
                q = src[j] + 1
                signed[src[j]] += _below(trees[q], r) - (seen[q] - _below(trees[q], r + 1))
            k = u
        for j in range(s, t):
            for q in (0, src[j] + 1):
                i = zr[j] + 1
                while i <= g:
                    trees[q, i] += 1
                    i += i & (-i)
                seen[q] += 1
    return lin, signed[0] - signed[1]
