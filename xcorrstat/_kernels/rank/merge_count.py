"""Discordant pairs of a sequence by a compiled merge sort: the inversion count of
:func:`.tau.kendall_sorted` (exact integers, the same as the NumPy merge count it replaced, which the
tests keep as its oracle), O(n log n) per row and no temporary beyond one row's buffer."""

from __future__ import annotations

import numpy as np

from .._compiled import jit

__all__ = ["inversions"]


@jit
def _count_rows(seq: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover - compiled by numba
    rows, length = seq.shape
    a = np.empty(length, dtype=np.int64)
    b = np.empty(length, dtype=np.int64)
    for r in range(rows):
        for i in range(length):
            a[i] = seq[r, i]
        count = 0
        width = 1
        while width < length:
            for lo in range(0, length, 2 * width):
                mid = min(lo + width, length)
                hi = min(lo + 2 * width, length)
                i, j, k = lo, mid, lo
                while i < mid and j < hi:
                    if a[j] < a[i]:  # a[j] is below every one left of the left run: inversions
                        count += mid - i
                        b[k] = a[j]
                        j += 1
                    else:
                        b[k] = a[i]
                        i += 1
                    k += 1
                while i < mid:
                    b[k] = a[i]
                    i += 1
                    k += 1
                while j < hi:
                    b[k] = a[j]
                    j += 1
                    k += 1
            a, b = b, a
            width *= 2
        out[r] = count


def inversions(seq: np.ndarray) -> np.ndarray:
    """Number of pairs ``i < j`` with ``seq[i] > seq[j]`` in each row of a 2-d integer array.

    Examples
    --------
    >>> inversions(np.array([[3, 1, 2], [1, 2, 3]])).tolist()
    [2, 0]
    """
    seq = np.ascontiguousarray(seq, dtype=np.int64)
    out = np.zeros(seq.shape[0], dtype=np.int64)
    if seq.shape[0] and seq.shape[1] > 1:
        _count_rows(seq, out)
    return out
