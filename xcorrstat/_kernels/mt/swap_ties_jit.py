"""Compiled loops of :mod:`xcorrstat._kernels.mt.swap_ties` (numba): every permutation draw's tie calibration of
the two swapped metrics, exactly, as walks along one sorted table of all four pairings of each pair.

Only :mod:`xcorrstat._kernels.mt.swap_ties` imports this module, on its first call. A block of up to
:data:`DRAWS` draws takes 2 :data:`DRAWS` lanes: lane ``j`` is X' of draw ``j``, lane ``DRAWS + j`` its Y'.
Each cell's 32 lanes are one word, bit ``L`` the source (0: X, 1: Y) lane ``L`` takes there, so an entry
(a pair of cells ``a``, ``b`` with sources ``(sa, sb)``) is in the lanes of ``word_a`` (or its complement)
``&`` ``word_b`` (or its complement).

The objective of a lane at a threshold is ``(1 / G) sum_g A_g / N_g`` (``A_g`` the agreeing pairs of
group ``g``, ``N_g = k_g (k_g - 1) / 2`` its valid pairs). Scaled by ``G L`` (``L`` the lcm of the lane's
``N_g``) it is the integer ``sum_g A_g L / N_g``, so the walks compare thresholds on exact integers:

1. :func:`_walk` sums each lane's base (no metric tie) and running sum of ``gain L / N_g`` and keeps its
   highest value at a candidate (the last entry of each distinct ``|dm|``; a candidate whose run holds no
   entry of the lane repeats the lane's level just before, so it never comes first);
2. :func:`_ties` walks again as far as each lane's first candidate at the top, moving its groups' counts
   from ``before`` to ``after`` on the way; a lane whose top is the base takes threshold 0 and the entries
   at ``|dm| = 0`` (ties at epsilon 0), as :func:`~xcorrstat._kernels.mt.ties.calibrate_epsilon` does.

A lane whose scaled sums could pass 2**62 (the lcm of many different ``N_g``) is flagged; its draw is
computed on the swapped matrices by the caller. The functions release the GIL.
"""

from __future__ import annotations

import importlib

import numpy as np

numba = importlib.import_module("numba")

__all__ = ["DRAWS", "swap_calibrations"]

_jit = numba.njit(nogil=True, cache=True, boundscheck=False, error_model="numpy")

#: Draws walked together: 2 DRAWS lanes (X' and Y' of each), one 32-bit word per cell.
DRAWS = 16
_LANES = 2 * DRAWS
_FULL = (1 << _LANES) - 1
_LIMIT = 2**62


@_jit
def _gcd(a, b):
    while b:
        a, b = b, a % b
    return a


@_jit
def _load(masks, valid, d0, draws, word, k):
    """The words of draws ``d0 .. d0 + draws`` (masks (B, G, n) of 0/1, valid (2, G, n)) and each lane's
    valid cells per group ``k`` (G, lanes)."""
    n_groups, n_items = masks.shape[1], masks.shape[2]
    for g in range(n_groups):
        for lane in range(_LANES):
            k[g, lane] = 0
        for i in range(n_items):
            w = 0
            for j in range(draws):
                if masks[d0 + j, g, i]:
                    w |= 1 << j
            w |= (~w & ((1 << DRAWS) - 1)) << DRAWS  # Y' takes the other source
            word[g, i] = w
            for lane in range(_LANES):
                k[g, lane] += valid[(w >> lane) & 1, g, i]


@_jit
def _scales(k, scale, used, ok):
    """Each lane's ``L / N_g`` per group (0 without a pair), groups with a pair and whether its sums fit."""
    n_groups, n_lanes = k.shape
    for lane in range(n_lanes):
        common, groups, fits = 1, 0, True
        for g in range(n_groups):
            kg = k[g, lane]
            if kg >= 2:
                groups += 1
                n_pairs = kg * (kg - 1) // 2
                step = common // _gcd(common, n_pairs)
                if step > _LIMIT // n_pairs:
                    fits = False
                else:
                    common = step * n_pairs
        if fits and groups > 0 and common > _LIMIT // groups:
            fits = False
        used[lane] = groups
        ok[lane] = fits
        for g in range(n_groups):
            kg = k[g, lane]
            scale[g, lane] = common // (kg * (kg - 1) // 2) if (fits and kg >= 2) else 0


@_jit
def _lanes_of(f, word_a, word_b):
    """The lanes (bits) an entry of flags ``f`` is in: those whose sources at its two cells are its own."""
    wa = word_a if (f >> 3) & 1 else word_a ^ _FULL
    wb = word_b if (f >> 4) & 1 else word_b ^ _FULL
    return wa & wb


@_jit
def _walk(group, item_a, item_b, flag, word, scale, base, top, cnt):
    """The first walk: each lane's base, its highest running sum at a candidate (``top``, -1 before the
    first) and each group's count of agreeing pairs at no tie (``cnt`` (G, lanes))."""
    run = np.zeros(_LANES, dtype=np.int64)
    seen = np.zeros(_LANES, dtype=np.bool_)
    for lane in range(_LANES):
        base[lane] = 0
    for e in range(flag.size):
        f = flag[e]
        g, a, b = group[e], item_a[e], item_b[e]
        before, gain = f & 1, ((f >> 1) & 1) - (f & 1)
        if before or gain:
            act = _lanes_of(f, word[g, a], word[g, b])
            if act:
                for lane in range(_LANES):
                    bit = (act >> lane) & 1
                    val = scale[g, lane] * bit
                    base[lane] += val * before
                    cnt[g, lane] += bit * before
                    run[lane] += val * gain
        if f & 4:
            for lane in range(_LANES):
                if not seen[lane] or run[lane] > top[lane]:
                    top[lane] = run[lane]
                    seen[lane] = True
    for lane in range(_LANES):
        top[lane] = max(top[lane] + base[lane], base[lane]) if seen[lane] else base[lane]


@_jit
def _ties(dist, group, item_a, item_b, flag, word, scale, base, top, lanes, cnt, eps):
    """The second walk, as far as each lane's first candidate at the top (exact integers): its threshold
    ``eps`` and its groups' counts at it (``cnt``)."""
    run = np.zeros(_LANES, dtype=np.int64)
    mode = np.zeros(_LANES, dtype=np.int64)  # 0 done, 1 walking to the top, 2 threshold 0 and its ties
    left = 0
    for lane in range(_LANES):
        eps[lane] = 0.0
        if lane % DRAWS < lanes:
            mode[lane] = 2 if base[lane] >= top[lane] else 1
            if mode[lane] == 2 and not (flag.size > 0 and dist[0] == 0.0):
                mode[lane] = 0
            left += mode[lane] != 0
    for e in range(flag.size):
        if left == 0:
            break
        f = flag[e]
        gain = ((f >> 1) & 1) - (f & 1)
        if gain:
            g, a, b = group[e], item_a[e], item_b[e]
            act = _lanes_of(f, word[g, a], word[g, b])
            if act:
                for lane in range(_LANES):
                    bit = (act >> lane) & 1
                    on = 1 if mode[lane] else 0
                    run[lane] += scale[g, lane] * bit * gain
                    cnt[g, lane] += bit * gain * on
        if f & 4:
            for lane in range(_LANES):
                if mode[lane] == 2 or (mode[lane] == 1 and base[lane] + run[lane] >= top[lane]):
                    eps[lane] = 0.0 if mode[lane] == 2 else dist[e]
                    mode[lane] = 0
                    left -= 1


@_jit
def swap_calibrations(dist, group, item_a, item_b, flag, valid, masks, agree, pairs, eps, ok):
    """Every draw's threshold and groups' counts for X' and Y', from one sorted table.

    ``dist``, ``group``, ``item_a``, ``item_b``, ``flag`` (E,): the entries sorted by ``|dm|``
    (:func:`~xcorrstat._kernels.mt.swap_ties.swap_pair_table`); ``valid`` (2, G, n) of 0/1: the cells of
    X and of Y with a score and a target; ``masks`` (B, G, n) of 0/1: each draw's swaps, grouped. Writes
    ``agree`` and ``pairs`` (2, B, G): each group's agreeing pairs at the threshold and its valid pairs
    (X' then Y'); ``eps`` (2, B) the thresholds; ``ok`` (2, B) whether the lane's sums fit 64 bits.

    Examples
    --------
    >>> # one group of two cells: x = [1, 2], y = [2, 1], target [1, 2]; no swap: X' agrees, Y' does not
    >>> agree, pairs = np.empty((2, 1, 1), np.int64), np.empty((2, 1, 1), np.int64)
    >>> eps, ok = np.empty((2, 1)), np.empty((2, 1), np.bool_)
    >>> swap_calibrations(np.array([1.0]), np.zeros(1, np.int32), np.zeros(1, np.int32), np.ones(1, np.int32),
    ...                   np.array([1 | 4], np.uint8), np.ones((2, 1, 2), np.int64), np.zeros((1, 1, 2), np.uint8),
    ...                   agree, pairs, eps, ok)
    >>> agree[:, 0, 0].tolist(), pairs[:, 0, 0].tolist()
    ([1, 0], [1, 1])
    """
    n_draws, n_groups, n_items = masks.shape
    word = np.zeros((n_groups, n_items), dtype=np.int64)
    k = np.zeros((n_groups, _LANES), dtype=np.int64)
    scale = np.zeros((n_groups, _LANES), dtype=np.int64)
    cnt = np.zeros((n_groups, _LANES), dtype=np.int64)
    used = np.zeros(_LANES, dtype=np.int64)
    fits = np.zeros(_LANES, dtype=np.bool_)
    base = np.zeros(_LANES, dtype=np.int64)
    top = np.zeros(_LANES, dtype=np.int64)
    e = np.zeros(_LANES)
    for d0 in range(0, n_draws, DRAWS):
        lanes = min(DRAWS, n_draws - d0)
        _load(masks, valid, d0, lanes, word, k)
        _scales(k, scale, used, fits)
        cnt[:] = 0
        _walk(group, item_a, item_b, flag, word, scale, base, top, cnt)
        _ties(dist, group, item_a, item_b, flag, word, scale, base, top, lanes, cnt, e)
        for side in range(2):
            for j in range(lanes):
                lane = side * DRAWS + j
                eps[side, d0 + j] = e[lane]
                ok[side, d0 + j] = fits[lane]
                for g in range(n_groups):
                    agree[side, d0 + j, g] = cnt[g, lane]
                    pairs[side, d0 + j, g] = k[g, lane] * (k[g, lane] - 1) // 2
