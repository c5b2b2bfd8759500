"""Compiled loop of :mod:`xcorrstat._kernels.mt.pair_outcomes` (numba): the masked sums of a batch of draws
from packed swap bits.

Only :mod:`xcorrstat._kernels.mt.pair_outcomes` imports this module, on its first call. A pair's quantity
``q`` is -1, 0 or 1, so ``sum_p w_p q_p`` over the pairs of a word is two population counts: of the swap
bits and the pairs where ``q`` is 1, less those where it is -1. The sums are exact integers. The function
releases the GIL.
"""

from __future__ import annotations

import importlib

import numpy as np

from ..bitcount_jit import popcount

numba = importlib.import_module("numba")

__all__ = ["masked_counts", "pack_pairs", "word_counts"]

_jit = numba.njit(nogil=True, cache=True, boundscheck=False, error_model="numpy")


#: Words of swap bits read together (one cache line of each draw's row).
TILE = 8


@_jit
def masked_counts(words, vkey, vword, vmask, vrow, plus, minus, out):
    """Add each draw's masked sums of a block of pairs to ``out``.

    words (B, K, W) uint64: the packed swap bits of B draws over the block's K keys of W words; the block's
    pairs as V words ``(vkey, vword)`` in order, each with the mask ``vmask`` of its pairs in the row
    ``vrow`` of ``out`` (a group, or a class of groups); plus, minus (K, W, C) uint64: where each of C
    quantities is 1 and -1; out (R, C, B) int64. The draws' bits are read :data:`TILE` words at a time into
    a tile with each word's draws contiguous; a word and quantity without a pair at 1 or -1 is skipped, and
    the loop over the draws has no branch.
    """
    n_draws, n_cols = words.shape[0], plus.shape[2]
    tile = np.empty((TILE, n_draws), dtype=np.uint64)
    at_k, at_t = -1, -1
    for v in range(vkey.size):
        k, w, r, m = vkey[v], vword[v], vrow[v], vmask[v]
        t = w // TILE
        if k != at_k or t != at_t:  # the words come in order: each tile is read once
            for d in range(n_draws):
                for u in range(TILE):
                    tile[u, d] = words[d, k, t * TILE + u]
            at_k, at_t = k, t
        bits = tile[w - t * TILE]
        for j in range(n_cols):
            up, down = plus[k, w, j] & m, minus[k, w, j] & m
            if up == 0 and down == 0:
                continue
            row = out[r, j]
            if down == 0:
                for d in range(n_draws):
                    row[d] += np.int64(popcount(bits[d] & up))
            else:
                for d in range(n_draws):
                    row[d] += np.int64(popcount(bits[d] & up)) - np.int64(popcount(bits[d] & down))


_ACC, _EQ, _B, _A = 0, 1, 2, 3  # the variant codes of pair_outcomes


@_jit
def _run_bits(variant, xs, xa, zs, za, single, t0, t1, b0, e):
    """The bits of the places ``t0 ... t1 - 1`` of a word, pairs ``(a, b0 + t - t0)`` of one group (``xa``,
    ``za`` item a's scores; ``xs``, ``zs`` the group's): where the first quantity is 1, where it is -1,
    where the second is 1 (tau-a/b: the metric does not tie). One loop without branches per variant."""
    up, down, free = np.uint64(0), np.uint64(0), np.uint64(0)
    zero = np.uint64(0)
    if variant == _ACC or variant == _EQ:
        for t in range(t0, t1):
            d, dz, bit = xa - xs[b0 + t - t0], za - zs[b0 + t - t0], single[t]
            p, q, ok = d > e, d < -e, dz == dz
            agree = (p & (dz > 0)) | (q & (dz < 0)) | (~p & ~q & (dz == 0))
            up |= bit if agree else zero
            down |= bit if ok & ~agree else zero
    else:
        for t in range(t0, t1):
            d, dz, bit = xa - xs[b0 + t - t0], za - zs[b0 + t - t0], single[t]
            p, q, zp, zn = d > e, d < -e, dz > 0, dz < 0
            up |= bit if (p & zp) | (q & zn) else zero
            down |= bit if (p & zn) | (q & zp) else zero
            untied = (p | q) if variant == _B else d != 0
            free |= bit if untied & (dz == dz) else zero
    return up, down, free


@_jit
def pack_pairs(x, z, eps, variant, g0, a0, b0, count, offset, single, plus, minus):
    """Set the bits of ``count`` consecutive pairs in ``plus`` and ``minus`` (K, W, C) uint64: where each
    quantity of :func:`~xcorrstat._kernels.mt.pair_outcomes.pair_quantities` is 1 and -1.

    x (M, G, n), z (G, n) float64, eps (M,); the first pair is items ``(a0, b0)`` of group ``g0`` (the
    next ones in the row-major order of the pairs a < b, group after group) at bit ``offset`` of the
    block; ``single`` (64,) uint64 the bit of each place in a word. A pair without a target score sets no
    bit; the caller makes sure every metric has a score wherever the target has one. The pairs go by runs
    of one item ``a`` against consecutive items ``b`` within a word (:func:`_run_bits`).
    """
    n_metrics, n = x.shape[0], x.shape[2]
    n_words = plus.shape[1]
    g, a, b = g0, a0, b0
    pos, end = offset, offset + count
    while pos < end:
        word = pos >> 6
        t0 = pos & 63
        run = min(n - b, 64 - t0, end - pos)
        k = word // n_words
        w = word - k * n_words
        za = z[g, a]
        if not np.isnan(za):
            for mm in range(n_metrics):
                up, down, free = _run_bits(variant, x[mm, g], x[mm, g, a], z[g], za, single, t0, t0 + run, b,
                                           eps[mm])
                plus[k, w, mm] |= up
                if variant != _ACC:  # acc_eq's quantity is 0 or 1
                    minus[k, w, mm] |= down
                if variant == _B or variant == _A:
                    plus[k, w, n_metrics + mm] |= free
        pos += run
        b += run
        if b == n:
            a += 1
            b = a + 1
            if b >= n:
                g += 1
                a, b = 0, 1


@_jit
def word_counts(plus, minus, vkey, vword, vmask, out):
    """out (V, C) int64: the sum of each quantity over the pairs of each word ``(vkey, vword)`` under its mask
    ``vmask`` (the pairs where it is 1, less those where it is -1)."""
    for v in range(vkey.size):
        k, w, m = vkey[v], vword[v], vmask[v]
        for j in range(plus.shape[2]):
            out[v, j] = np.int64(popcount(plus[k, w, j] & m)) - np.int64(popcount(minus[k, w, j] & m))
