"""Compiled loops of :mod:`xcorrstat._kernels.rank.input_sort` (numba).

Only :mod:`xcorrstat._kernels.rank.input_sort` imports this module, on its first call.

:func:`prepare` sorts each input once: its valid systems by the target (ties grouped) and the X and
Y cells of those systems jointly, into dense ranks; :func:`differences` forms, once per input, Y'
minus X' as a constant and a linear form in the mask (Y' is X' under the opposite mask: the same
quadratic part). :func:`draw_counts` then counts, per draw, the integers of X' by one pass over the
systems in target order, with a table of counts of the joint ranks by level (an inversion count, a fixed number of steps
per system): ``C - D``
over the pairs not tied in the target, the pairs tied in the metric and those tied in both; Y''s
follow from the linear form. O(S log S) per input and draw, where the pair-by-pair forms take
O(S^2). On an input without any tie every rank is counted at most once, so the lanes' tables start
from a bitmap of the counted ranks, 64 a word, and a population count (:func:`_plain_lanes`); up to 256
systems the counts below each word are the bytes of one more word (:func:`_packed_lanes`). Every
count is an integer, so it equals the pair form's exactly. The functions release the GIL.
"""

from __future__ import annotations

import importlib

import numpy as np

from ..bitcount_jit import popcount

numba = importlib.import_module("numba")

__all__ = ["differences", "draw_counts", "prepare"]

_jit = numba.njit(nogil=True, cache=True, boundscheck=False, error_model="numpy")
_A, _B, _EQ, _ACC = 0, 1, 2, 3  # the variant codes of rank.input_gaps
#: Draws counted together on an input without ties (one count table each).
LANES = 64
#: Up to this many words of ranks, a lane keeps the ranks counted below each word (no levels).
SCAN_WORDS = 8


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
def _sgn(d):
    return (1 if d > 0 else 0) - (1 if d < 0 else 0)


@_jit
def differences(zx, zy, z, order, info, variant, dlin, dconst):
    """Y' minus X' of the numerator (r = 0) and of the metric ties (r = 1): a constant and a linear form in
    the mask, since Y' is X' under the opposite mask (the same quadratic part). For each pair of valid
    systems at positions j < k of the target order and the four cases c = (m_j, m_k) of their cells:
    ``f[0, c]`` the pair's numerator term, ``f[1, c]`` its metric tie. Writes dlin (2, P, I, S) int64 (by
    position) and dconst (2, P, I) int64."""
    p = zx.shape[0]
    n_inp = zx.shape[2]
    acc = variant == _EQ or variant == _ACC
    f = np.empty((2, 4), dtype=np.int64)
    for q in range(p):
        for i in range(n_inp):
            nv = info[q, i, 0]
            dlin[:, q, i, :] = 0
            dconst[:, q, i] = 0
            for j in range(nv - 1):
                a = order[q, i, j]
                xa, ya, za = zx[q, a, i], zy[q, a, i], z[q, a, i]
                for k in range(j + 1, nv):
                    b = order[q, i, k]
                    xb, yb, zb = zx[q, b, i], zy[q, b, i], z[q, b, i]
                    g = _sgn(za - zb)
                    wt = 2 if za == zb else -1
                    for c in range(4):
                        u = ya if c >> 1 else xa
                        v = yb if c & 1 else xb
                        t = 1 if u == v else 0
                        f[0, c] = g * _sgn(u - v) + (wt * t if acc else 0)
                        f[1, c] = t
                    for r in range(2):
                        f00, f01, f10, f11 = f[r, 0], f[r, 1], f[r, 2], f[r, 3]
                        dconst[r, q, i] += f11 - f00
                        dlin[r, q, i, j] += f00 - f11 + f01 - f10
                        dlin[r, q, i, k] += f00 - f11 - f01 + f10


@_jit
def _levels(nr, off):
    """The levels of the count table for ranks 0 ... nr - 1: level l counts the ranks by ``r >> l``, at
    ``off[l]``; returns (levels, entries)."""
    n_lev = 1
    while (1 << n_lev) < nr:
        n_lev += 1
    size = 0
    for lev in range(n_lev):
        off[lev] = size
        size += ((nr - 1) >> lev) + 2
    return n_lev, size


@_jit
def _below(tab, off, n_lev, r):
    """Counted ranks below ``r``: at each level where ``r`` has a 1 bit, the block just below its own
    (disjoint blocks; a fixed number of steps, without branches)."""
    total = 0
    for lev in range(n_lev):
        u = r >> lev
        total += (u & 1) * tab[off[lev] + (u ^ 1)]
    return total


@_jit
def _count(tab, off, n_lev, r):
    for lev in range(n_lev):
        tab[off[lev] + (r >> lev)] += 1


@_jit
def _plain_draw(mz, rx, ry, nv, tab, off, n_lev, size):
    """``C - D`` of X' on an input without any tie (target or metric)."""
    tab[:size] = 0
    cd = 0
    for j in range(nv):
        r = rx[j] + mz[j] * (ry[j] - rx[j])
        cd += 2 * _below(tab, off, n_lev, r) - j
        _count(tab, off, n_lev, r)
    return cd


@_jit
def _lane_rank(mt, row, i, col, base, step):
    """A lane's mask ``m`` of a system, the word of its rank and the rank's bit in that word."""
    m = 1 if mt[row, i, col] else 0
    r = base + m * step
    return m, r >> 6, np.uint64(1) << np.uint64(r & 63)


@_jit
def _plain_lanes(mt, i, b0, order, rx, ry, lin, nv, bits, tab, off, n_lev, size, cd, dv):
    """:func:`_plain_draw` for the draws ``b0 ...`` (one lane each, up to ``LANES``) at once, system after
    system: a system's masks of these draws are one contiguous row, and the lanes are independent (no
    branch depends on the data). Also Y' minus X' of the numerator (``dv``) by its linear form ``lin``
    (an input without ties has no metric ties in X' or Y').

    Without ties every rank is counted at most once, so the bottom of each lane's table is a bitmap of 64
    ranks a word (``bits``; the ranks below ``r`` in its word are one population count). Up to
    :data:`SCAN_WORDS` words, :func:`_packed_lanes` keeps the ranks counted below each word; past it, the
    levels of ``tab`` count the ranks by word (``r >> 6``): ``log2(words)`` levels instead of ``log2(ranks)``."""
    nb = cd.shape[0]
    bits[:nb] = 0
    cd[:] = 0
    if bits.shape[1] <= SCAN_WORDS:
        _packed_lanes(mt, i, b0, order, rx, ry, lin, nv, bits, tab[:, 0].view(np.uint64), cd, dv)
        return
    tab[:nb, :size] = 0
    one = np.uint64(1)
    for j in range(nv):
        row = order[j]
        base, step, lin_v = rx[j], ry[j] - rx[j], lin[j]
        for lane in range(nb):
            m, w, bit = _lane_rank(mt, row, i, b0 + lane, base, step)
            below = np.int64(popcount(bits[lane, w] & (bit - one)))
            for lev in range(n_lev):
                u = w >> lev
                below += (u & 1) * tab[lane, off[lev] + (u ^ 1)]
            for lev in range(n_lev):
                tab[lane, off[lev] + (w >> lev)] += 1
            bits[lane, w] |= bit
            cd[lane] += 2 * below - j
            dv[lane] += m * lin_v


@_jit
def _packed_lanes(mt, i, b0, order, rx, ry, lin, nv, bits, packed, cd, dv):
    """:func:`_plain_lanes` up to :data:`SCAN_WORDS` words of ranks: byte ``k`` of a lane's ``packed`` word
    counts the ranks counted in the words below word ``k``, so one shift reads it and one addition counts a
    rank in every byte above its word. A byte never overflows before it is read: the ranks are at most
    512, so the systems at most 256, and a count read before the last system's is at most 255."""
    nb = cd.shape[0]
    one = np.uint64(1)
    ones = np.uint64(0x0101010101010101)
    byte = np.uint64(0xFF)
    eight = np.uint64(8)
    packed[:nb] = 0
    for j in range(nv):
        row = order[j]
        base, step, lin_v = rx[j], ry[j] - rx[j], lin[j]
        for lane in range(nb):
            m, w, bit = _lane_rank(mt, row, i, b0 + lane, base, step)
            sh = np.uint64(w) * eight
            word = bits[lane, w]
            below = np.int64(popcount(word & (bit - one))) + np.int64((packed[lane] >> sh) & byte)
            packed[lane] += (ones << sh) << eight  # word 7 has no byte above it: the shift leaves 0
            bits[lane, w] = word | bit
            cd[lane] += 2 * below - j
            dv[lane] += m * lin_v


@_jit
def _tied_draw(mz, rx, ry, new, nv, tab, off, n_lev, size, held, out):
    """``C - D``, the metric-tied and the both-tied pairs of X' into ``out`` on an input with ties: a target
    group is counted in after all its members are compared with the earlier groups. Level 0 of the table
    counts each rank."""
    tab[:size] = 0
    out[:] = 0
    g0 = 0
    for j in range(nv + 1):
        if j == nv or (new[j] and j > 0):
            for t in range(g0, j):
                r = held[0, t]
                c = tab[r]
                out[1] += c
                out[2] += c - held[1, t]
                _count(tab, off, n_lev, r)
            g0 = j
        if j == nv:
            break
        r = rx[j] + mz[j] * (ry[j] - rx[j])
        e = tab[r]
        out[0] += 2 * _below(tab, off, n_lev, r) + e - g0
        held[0, j] = r
        held[1, j] = e


@_jit
def draw_counts(mt, i0, order, rx, ry, new, info, dlin, dconst, variant, vx, vy, tx, ty):
    """Each draw's integers of X' and Y' on the inputs ``i0 ...`` of a block.

    mt (S, inputs, B) bool the block's masks; order, rx, ry, new, info as :func:`prepare` wrote them, dlin
    and dconst as :func:`differences` did; ``variant`` a code of ``swap_kendall_gaps``. Writes vx, vy (inputs, B, P):
    the variant's numerator (``C - D``; acc_eq: ``C - D + 2 T_gm - T_m + N - T_g``), and for tau-b tx, ty
    (inputs, B, P) the metric-tied valid pairs (else (0, 0, 0)).
    """
    n_blk, n_draws, p = vx.shape
    s = order.shape[2]
    acc = variant == _EQ or variant == _ACC
    ties = tx.shape[0] > 0
    tab = np.empty(4 * s + 64, dtype=np.int64)
    off = np.empty(64, dtype=np.int64)
    held = np.empty((2, s), dtype=np.int64)
    mz = np.empty(s, dtype=np.int64)
    out = np.zeros(3, dtype=np.int64)
    words = (2 * s + 63) >> 6
    lanes = np.empty((LANES, 4 * words + 64), dtype=np.int64)
    bits = np.empty((LANES, words), dtype=np.uint64)
    w_off = np.empty(64, dtype=np.int64)
    cd, dvs = np.empty(LANES, dtype=np.int64), np.empty(LANES, dtype=np.int64)
    for ii in range(n_blk):
        i = i0 + ii
        for q in range(p):
            nv, nr, gold = info[q, i, 0], info[q, i, 1], info[q, i, 2]
            plain = gold == 0 and nr == 2 * nv
            extra = nv * (nv - 1) // 2 - gold if acc else 0
            n_lev, size = _levels(max(nr, 1), off)
            if plain:  # no tie anywhere: the draws a block of lanes at a time
                w_lev, w_size = _levels(max((nr + 63) >> 6, 1), w_off)
                for b0 in range(0, n_draws, LANES):
                    nb = min(LANES, n_draws - b0)
                    dvs[:nb] = dconst[0, q, i]
                    _plain_lanes(mt, ii, b0, order[q, i], rx[q, i], ry[q, i], dlin[0, q, i], nv,
                                 bits[:, :(nr + 63) >> 6], lanes, w_off, w_lev, w_size, cd[:nb], dvs[:nb])
                    for lane in range(nb):
                        v = cd[lane] + extra
                        vx[ii, b0 + lane, q] = v
                        vy[ii, b0 + lane, q] = v + dvs[lane]
                        if ties:  # no metric ties in X' or Y' (dlin[1] and dconst[1] are 0 here)
                            tx[ii, b0 + lane, q] = 0
                            ty[ii, b0 + lane, q] = 0
                continue
            for b in range(n_draws):
                dv, dt = dconst[0, q, i], dconst[1, q, i]
                for j in range(nv):
                    m = 1 if mt[order[q, i, j], ii, b] else 0
                    mz[j] = m
                    dv += m * dlin[0, q, i, j]
                    dt += m * dlin[1, q, i, j]
                if plain:
                    out[0] = _plain_draw(mz, rx[q, i], ry[q, i], nv, tab, off, n_lev, size)
                else:
                    _tied_draw(mz, rx[q, i], ry[q, i], new[q, i], nv, tab, off, n_lev, size, held, out)
                v = out[0] + (3 * out[2] - out[1] + extra if acc else 0)
                vx[ii, b, q] = v
                vy[ii, b, q] = v + dv
                if ties:
                    tx[ii, b, q] = out[1]
                    ty[ii, b, q] = out[1] + dt
