"""Compiled loops of :func:`xcorrstat._kernels.mt.ties.calibrated_threshold` (numba): one calibration's
pairs as sort keys, and its sweeps over them in ``|dm|`` order.

Only :mod:`xcorrstat._kernels.mt.ties` imports this module, on its first call. :func:`fill_keys` forms
the valid pairs of each group and counts the agreeing ones per class of groups (the groups with the
same number of pairs) at no tie. A pair whose agreement changes once it ties, with a finite ``|dm|``,
becomes one uint64 key in its class's run of keys: the bits of ``|dm|`` (a float64 >= 0, whose bits
sort as its value) shifted left by one, and the low bit set when tying costs an agreement. Sorting
each run (``ndarray.sort`` of integers) orders it by ``|dm|``. A pair whose agreement stays is not
stored: a threshold at a ``|dm|`` of such pairs alone has the counts, so the objective, of the next
smaller candidate, and never is the smallest optimal one.

:func:`top_level` and :func:`near_top` merge the sorted runs (a binary heap of runs) and evaluate
the objective after all pairs at each distinct ``|dm|``: a running sum of each pair's +-1 times its
class's weight, and the agreeing pairs per class. The functions release the GIL.
"""

from __future__ import annotations

import importlib

import numpy as np

numba = importlib.import_module("numba")

__all__ = ["fill_keys", "near_top", "start_heap", "top_level"]

_jit = numba.njit(nogil=True, cache=True, boundscheck=False, error_model="numpy")


@_jit
def fill_keys(x, z, valid, group_cls, starts, used, keys, base_counts):
    """Every valid pair ``i < j`` of each group of ``x``, ``z`` (G, n): its key appended to its class's
    run (``keys[starts[k] + used[k]]``) when tying changes its agreement, its agreement at no tie added
    to ``base_counts``. Returns the valid pairs with a finite ``|dm|``."""
    scratch = np.zeros(1, dtype=np.float64)
    bits = scratch.view(np.uint64)
    finite = 0
    for g in range(x.shape[0]):
        k = group_cls[g]
        for i in range(x.shape[1]):
            if not valid[g, i]:
                continue
            for j in range(i + 1, x.shape[1]):
                if not valid[g, j]:
                    continue
                dm = x[g, i] - x[g, j]
                dg = z[g, i] - z[g, j]
                before = (dm > 0 and dg > 0) or (dm < 0 and dg < 0) or (dm == 0 and dg == 0)
                after = dg == 0
                base_counts[k] += before
                d = abs(dm)
                if not np.isfinite(d):
                    continue  # never a metric tie
                finite += 1
                if before != after:
                    scratch[0] = d
                    keys[starts[k] + used[k]] = (bits[0] << np.uint64(1)) | np.uint64(before)
                    used[k] += 1
    return finite


@_jit
def _sift(keys, pos, heap, size, i):
    """Restore the heap of runs (by each run's next key) below entry ``i``."""
    while True:
        child = 2 * i + 1
        if child >= size:
            return
        if child + 1 < size and keys[pos[heap[child + 1]]] < keys[pos[heap[child]]]:
            child += 1
        if keys[pos[heap[child]]] >= keys[pos[heap[i]]]:
            return
        heap[i], heap[child] = heap[child], heap[i]
        i = child


@_jit
def start_heap(keys, starts, ends, pos, heap):
    """Point ``pos`` (K,) at each run's first key and build ``heap`` (K,) of the runs with a key;
    returns the number of such runs."""
    size = 0
    for k in range(starts.size):
        pos[k] = starts[k]
        if starts[k] < ends[k]:
            heap[size] = k
            size += 1
    for i in range(size // 2 - 1, -1, -1):
        _sift(keys, pos, heap, size, i)
    return size


@_jit
def _next_distance(keys, ends, pos, heap, size, weight, counts, level):
    """Take every pair at the smallest remaining ``|dm|``: returns its key's distance bits, the running
    sum and the heap's size after them (``counts`` updated in place)."""
    dist = keys[pos[heap[0]]] >> np.uint64(1)
    while size > 0 and keys[pos[heap[0]]] >> np.uint64(1) == dist:
        k = heap[0]
        step = 1 - 2 * np.int64(keys[pos[k]] & np.uint64(1))
        level += step * weight[k]
        counts[k] += step
        pos[k] += 1
        if pos[k] == ends[k]:
            size -= 1
            heap[0] = heap[size]
        _sift(keys, pos, heap, size, 0)
    return dist, level, size


@_jit
def top_level(keys, starts, ends, weight, base):
    """The highest running sum over the candidates (no tie: ``base``; then each distinct ``|dm|``)."""
    pos = np.empty(starts.size, dtype=np.int64)
    heap = np.empty(starts.size, dtype=np.int64)
    counts = np.zeros(starts.size, dtype=np.int64)
    size = start_heap(keys, starts, ends, pos, heap)
    level, top = base, base
    while size > 0:
        _, level, size = _next_distance(keys, ends, pos, heap, size, weight, counts, level)
        top = max(top, level)
    return top


@_jit
def near_top(keys, ends, pos, heap, state, level, counts, weight, floor, out_counts, out_bits):
    """Resumable sweep from the heap ``pos``, ``heap`` of :func:`start_heap` (its size in ``state[0]``):
    records the class counts and distance bits of each candidate whose running sum is ``>= floor`` until
    ``out_bits`` is full; returns how many. ``state``, ``level`` (1,) and ``counts`` (K,) are updated in
    place for the next call; ``state[0] == 0`` once the sweep is over."""
    size = state[0]
    run = level[0]
    got = 0
    while size > 0 and got < out_bits.size:
        dist, run, size = _next_distance(keys, ends, pos, heap, size, weight, counts, run)
        if run >= floor:
            out_counts[got, :] = counts
            out_bits[got] = dist
            got += 1
    state[0] = size
    level[0] = run
    return got
