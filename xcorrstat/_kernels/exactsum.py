"""Order-independent weighted sums: ``counts @ values`` that are the same bit for bit
whatever the batch shape or BLAS.

Each value is split into three fixed-point parts: per column, part ``k`` is a
multiple of ``2**(e - k*b)`` (``2**e`` bounds the column's magnitudes) with at most
``b`` significant bits, where ``n * 2**b <= 2**53`` for ``n`` the total count of one
draw. Every partial sum of count-weighted parts is then an exactly representable
float, so each part's sum is exact in any order; the three part sums are added in a
fixed order. The parts add back to the values up to ``2**(e - 3b)`` (below double
rounding for ``n`` up to about 2**17, and far below any meaningful score precision).

Why it matters: a resampled per-system mean feeds rank statistics, where a one-ulp
difference between two tied means flips a tie into a discordant pair. With exact
sums, a draw's means -- and so its statistic -- do not depend on how draws were
batched or chunked.
"""

from __future__ import annotations

import numpy as np

__all__ = ["exact_parts", "exact_weighted_sums"]


def exact_parts(values: np.ndarray, total_count: int, n_parts: int = 3) -> np.ndarray:
    """Split ``values`` (..., n) into parts (n_parts, ..., n) whose count-weighted sums are exact.

    ``total_count`` bounds the sum of the counts of one draw (e.g. n for a bootstrap
    draw of n units). Non-finite values must be replaced (e.g. by 0) beforehand. With
    ``n_parts=2`` the parts add back to the values up to ``2**(e - 2b)``: each sum is then
    off the exact one by at most ``n 2**(e - 2b)`` (``2**e`` bounding the values), far below
    the rounding of a float64 sum of the values in any order (about ``n 2**(e - 53)``), but
    the values themselves are not all kept to the last bit.

    Examples
    --------
    >>> parts = exact_parts(np.array([0.1, 0.2]), 2)
    >>> parts.shape, bool(np.all(parts.sum(axis=0) == [0.1, 0.2]))
    ((3, 2), True)
    """
    values = np.asarray(values, dtype=np.float64)
    bits = 53 - int(np.ceil(np.log2(max(int(total_count), 2))))
    _, e = np.frexp(np.max(np.abs(values), axis=-1, keepdims=True, initial=0.0))
    parts = []
    rest = values
    for k in range(1, n_parts + 1):
        unit = np.ldexp(1.0, np.maximum(e - k * bits, -1074))
        part = np.round(rest / unit) * unit
        parts.append(part)
        rest = rest - part
    return np.stack(parts)


def exact_weighted_sums(values: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``values @ counts.T`` computed exactly per part: values (..., n), counts (B, n) -> (..., B).

    ``counts`` may also be (..., B, n) matching the leading dims of ``values``.

    Examples
    --------
    >>> exact_weighted_sums(np.array([1.0, 2.0, 3.0]), np.array([[1, 0, 2], [0, 3, 0]])).tolist()
    [7.0, 6.0]
    """
    counts = np.asarray(counts, dtype=np.float64)
    total = int(np.max(counts.sum(axis=-1), initial=1))
    parts = exact_parts(values, total)
    ct = np.swapaxes(counts, -1, -2)
    sums = parts @ ct  # (3, ..., B)
    return (sums[0] + sums[1]) + sums[2]
