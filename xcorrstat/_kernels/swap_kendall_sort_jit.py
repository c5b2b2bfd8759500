"""Compiled loops of :mod:`xcorrstat._kernels.swap_kendall_sort` (numba).

Only :mod:`xcorrstat._kernels.swap_kendall_sort` imports this module, on its first call.

:func:`prepare` sorts each input once: its valid systems by the target (ties grouped) and the X and
Y cells of those systems jointly, into dense ranks. :func:`draw_counts` then counts, per draw, the
integers of each swapped metric by one pass over the systems in target order, with a Fenwick tree
over the joint ranks (a weighted inversion count): ``C - D`` over the pairs not tied in the target,
the pairs tied in the metric and those tied in both. O(S log S) per input and draw, where the
pair-by-pair forms take O(S^2). Every count is an integer, so it equals the pair form's exactly. The
functions release the GIL.
"""

from __future__ import annotations

import importlib

import numpy as np

numba = importlib.import_module("numba")

__all__ = ["draw_counts", "prepare"]

_jit = numba.njit(nogil=True, cache=True, boundscheck=False, error_model="numpy")
_A, _B, _EQ, _ACC = 0, 1, 2, 3  # the variant codes of swap_kendall_gaps


@_jit
def _one_input(x, y, z, order, rx, ry, new, vals):
    """One input: ``order`` its valid systems in target order, ``rx``/``ry`` the joint dense ranks of
    their X and Y cells, ``new`` where a target group starts. Returns (valid systems, ranks, target-tied
    pairs, whether two systems' cells tie)."""
    s = x.shape[0]
    nv = 0
    for a in range(s):
        if not (np.isnan(x[a]) or np.isnan(z[a])):
            vals[nv] = z[a]
            order[nv] = a
            nv += 1
    by_z = np.argsort(vals[:nv], kind="mergesort")
    kept = order[:nv].copy()
    for k in range(nv):
        order[k] = kept[by_z[k]]
    gold, run = 0, 0
    for k in range(nv):
        new[k] = k == 0 or z[order[k]] != z[order[k - 1]]
        run = 1 if new[k] else run + 1
        gold += run - 1
    for k in range(nv):
        vals[k] = x[order[k]]
        vals[nv + k] = y[order[k]]
    joint = np.argsort(vals[:2 * nv], kind="mergesort")
    rank, first, cross = -1, -1, False
    for t in range(2 * nv):
        j = joint[t]
        if t == 0 or vals[j] != vals[joint[t - 1]]:
            rank += 1
            first = j % nv if nv else 0
        elif j % nv != first:  # a tie between the cells of two systems (in this group: some pair)
            cross = True
        if j < nv:
            rx[j] = rank
        else:
            ry[j - nv] = rank
    return nv, rank + 1, gold, cross


@_jit
def prepare(zx, zy, z, order, rx, ry, new, info):
    """Sort every pair of metrics' inputs: zx, zy, z (P, S, I) float64, every valid cell finite (z may
    be repeated along P with stride 0). Writes order (P, I, S) int64, rx, ry (P, I, S) int64, new (P, I, S)
    bool and info (P, I, 4) int64: valid systems, ranks, target-tied valid pairs, whether two systems'
    cells tie (1) or not (0)."""
    p, s, n_inp = zx.shape
    vals = np.empty(2 * s)
    for q in range(p):
        for i in range(n_inp):
            nv, nr, gold, cross = _one_input(zx[q, :, i], zy[q, :, i], z[q, :, i], order[q, i], rx[q, i],
                                             ry[q, i], new[q, i], vals)
            info[q, i, 0] = nv
            info[q, i, 1] = nr
            info[q, i, 2] = gold
            info[q, i, 3] = 1 if cross else 0


@_jit
def _query(tree, r):
    """Inserted ranks below ``r``."""
    total = 0
    k = r
    while k > 0:
        total += tree[k]
        k &= k - 1
    return total


@_jit
def _insert(tree, nr, r):
    k = r + 1
    while k <= nr:
        tree[k] += 1
        k += k & -k


@_jit
def _plain_draw(mz, rx, ry, nv, nr, tx, ty):
    """``C - D`` of X' and Y' on an input without any tie (target or metric)."""
    tx[:nr + 1] = 0
    ty[:nr + 1] = 0
    cx, cy = 0, 0
    for j in range(nv):
        m = mz[j]
        r1 = ry[j] if m else rx[j]
        r2 = rx[j] if m else ry[j]
        cx += 2 * _query(tx, r1) - j
        cy += 2 * _query(ty, r2) - j
        _insert(tx, nr, r1)
        _insert(ty, nr, r2)
    return cx, cy


@_jit
def _tied_draw(mz, rx, ry, new, nv, nr, tree, cnt, held, out):
    """``C - D``, metric-tied and both-tied pairs of X' (out[0]) and Y' (out[1]) on an input with ties:
    a target group is inserted after all its members are counted against the earlier groups."""
    tree[:, :nr + 1] = 0
    cnt[:, :nr] = 0
    out[:] = 0
    g0 = 0
    for j in range(nv + 1):
        if j == nv or (new[j] and j > 0):
            for t in range(g0, j):
                for k in range(2):
                    r = held[k, 0, t]
                    c = cnt[k, r]
                    out[k, 1] += c
                    out[k, 2] += c - held[k, 1, t]
                    cnt[k, r] = c + 1
                    if j < nv:
                        _insert(tree[k], nr, r)
            g0 = j
        if j == nv:
            break
        m = mz[j]
        for k in range(2):
            r = ry[j] if m == (k == 0) else rx[j]
            e = cnt[k, r]
            out[k, 0] += 2 * _query(tree[k], r) + e - g0
            held[k, 0, j] = r
            held[k, 1, j] = e


@_jit
def draw_counts(mt, i0, order, rx, ry, new, info, variant, vx, vy, tx, ty):
    """Each draw's integers of X' and Y' on the inputs ``i0 ...`` of a block.

    mt (S, I, B) bool masks; order, rx, ry, new, info as :func:`prepare` wrote them; ``variant`` a code
    of ``swap_kendall_gaps``. Writes vx, vy (inputs, B, P): the variant's numerator (``C - D``; acc_eq:
    ``C - D + 2 T_gm - T_m + N - T_g``), and for tau-b tx, ty (inputs, B, P) the metric-tied valid
    pairs (else (0, 0, 0)).
    """
    n_blk, n_draws, p = vx.shape
    s = order.shape[2]
    acc = variant == _EQ or variant == _ACC
    ties = tx.shape[0] > 0
    tree = np.empty((2, 2 * s + 1), dtype=np.int64)
    cnt = np.empty((2, 2 * s), dtype=np.int64)
    held = np.empty((2, 2, s), dtype=np.int64)
    mz = np.empty(s, dtype=np.bool_)
    out = np.empty((2, 3), dtype=np.int64)
    for ii in range(n_blk):
        i = i0 + ii
        for q in range(p):
            nv, nr, gold = info[q, i, 0], info[q, i, 1], info[q, i, 2]
            plain = gold == 0 and nr == 2 * nv
            extra = nv * (nv - 1) // 2 - gold if acc else 0
            for b in range(n_draws):
                for j in range(nv):
                    mz[j] = mt[order[q, i, j], i, b]
                if plain:
                    cx, cy = _plain_draw(mz, rx[q, i], ry[q, i], nv, nr, tree[0], tree[1])
                    out[:] = 0
                    out[0, 0] = cx
                    out[1, 0] = cy
                else:
                    _tied_draw(mz, rx[q, i], ry[q, i], new[q, i], nv, nr, tree, cnt, held, out)
                for k in range(2):
                    v = out[k, 0]
                    if acc:
                        v += 3 * out[k, 2] - out[k, 1] + extra
                    if k == 0:
                        vx[ii, b, q] = v
                    else:
                        vy[ii, b, q] = v
                    if ties:
                        if k == 0:
                            tx[ii, b, q] = out[k, 1]
                        else:
                            ty[ii, b, q] = out[k, 1]
