"""Scale- and shift-safe preparation of scores before sums of products.

Every correlation is invariant to a positive scaling of either variable, and Pearson's
r to a shift. Computed naively, neither holds in floating point: a metric of order
1e200 overflows ``sum x**2``, one of order 1e-300 underflows it, and a metric shifted by
1e6 loses the low bits of its per-system means. Two exact or benign steps prevent both:

* :func:`pow2_normalise` multiplies a vector by the power of two that brings its largest
  magnitude into ``[0.5, 1)`` (when that magnitude is extreme). A power-of-two scaling is exact in binary floating point
  (barring subnormal results far below the largest value), so ties, order and every
  downstream rounding are the same as for the original scores, bit for bit: results on
  data that never overflowed are unchanged.
* :func:`centre_cells` subtracts the mean ``c`` of the valid cells from a whole
  ``(system, input)`` matrix before per-system means are taken, when that offset is
  large (``|c| > 16 * (max - min)``), so it is removed before anything is rounded
  relative to it. Every cell then lies within a sixteenth of ``c``, so each subtraction
  is exact (Sterbenz): equal means stay equal and a tie is never made or broken. A
  matrix without such an offset is left as it is.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["SAFE_SUM_BOUNDS", "centre_cells", "pow2_exponent", "pow2_normalise", "remove_offset",
           "rescaled_where_unsafe"]

#: Largest |exponent| left unscaled: squares and sums of 2**31 squares stay far inside float64's range.
SAFE_EXPONENT = 256

#: An axis or a tuple of axes.
Axis = int | tuple[int, ...]
#: ``sums(x, z, valid, n) -> (r, sxx, szz)``: a Pearson correlation and its two sums of squares.
PearsonSums = Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray]]


def pow2_exponent(a: ArrayLike, *, axis: Axis = -1, where: np.ndarray | None = None) -> np.ndarray:
    """Exponent ``e`` (keepdims) with the largest finite ``|a|`` along ``axis`` in ``[2**(e-1), 2**e)``.

    Values outside ``where`` (default: the finite values) are ignored; an axis with no
    non-zero value gets ``e = 0``, and so does one where ``where`` admits a NaN or an
    infinity (no scaling).

    Examples
    --------
    >>> pow2_exponent(np.array([[3.0, -6.0], [0.0, np.nan]])).tolist()
    [[3], [0]]
    """
    aa = np.asarray(a, dtype=np.float64)
    use = np.isfinite(aa) if where is None else where
    mag = np.max(np.abs(aa), axis=axis, where=use, initial=0.0, keepdims=True)
    return np.frexp(mag)[1]


def pow2_normalise(a: ArrayLike, *, axis: Axis = -1, where: np.ndarray | None = None) -> np.ndarray:
    """``a * 2**-e`` with ``e`` from :func:`pow2_exponent`: largest magnitude in ``[0.5, 1)``, exactly.

    Arrays whose every exponent is moderate (``|e| <= 256``) are returned as they are:
    their sums of products cannot overflow or underflow either, and since the scaling is
    exact, every result computed from them is the same bit for bit.

    Examples
    --------
    >>> pow2_normalise(np.array([3.0, -6.0, np.nan, 0.75]) * 2.0**600).tolist()
    [0.375, -0.75, nan, 0.09375]
    >>> x = np.array([3.0, -6.0]); pow2_normalise(x) is x
    True
    """
    aa = np.asarray(a, dtype=np.float64)
    e = pow2_exponent(aa, axis=axis, where=where)
    if e.size == 0 or np.max(np.abs(e)) <= SAFE_EXPONENT:
        return aa
    return np.ldexp(aa, -e)


def centre_cells(a: ArrayLike) -> np.ndarray:
    """Normalise each ``(..., S, I)`` matrix by a power of two, then remove a large common offset.

    The offset (the mean of the valid cells) is subtracted where it exceeds 16 times the
    range of the cells: then each subtraction is exact. The result differs from ``a`` by
    a positive factor and a shift per matrix, so every Pearson correlation of its
    per-system means equals that of ``a``'s.

    Examples
    --------
    >>> centre_cells(np.array([[1e6 + 0.5, 1e6 + 1.5], [1e6 + 2.5, np.nan]]))
    array([[-1.,  0.],
           [ 1., nan]])
    """
    return remove_offset(pow2_normalise(a, axis=(-2, -1)), axis=(-2, -1))


def remove_offset(a: ArrayLike, *, axis: Axis = (-2, -1)) -> np.ndarray:
    """Subtract the mean of the valid values along ``axis`` where it exceeds 16 times their range.

    Only then: each subtraction is exact, so ties and equal means are kept. ``a`` should
    be normalised (:func:`pow2_normalise`) so that the sums cannot overflow.

    Examples
    --------
    >>> remove_offset(np.array([[100.0, 101.0], [102.0, 103.0]])).tolist()
    [[-1.5, -0.5], [0.5, 1.5]]
    """
    aa = np.asarray(a, dtype=np.float64)
    valid = ~np.isnan(aa)
    count = valid.sum(axis=axis, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.sum(aa, axis=axis, where=valid, keepdims=True) / np.maximum(count, 1)
    low = np.min(aa, axis=axis, where=valid, initial=np.inf, keepdims=True)
    high = np.max(aa, axis=axis, where=valid, initial=-np.inf, keepdims=True)
    offset = (count > 0) & (np.abs(mean) > 16.0 * (high - low))
    return aa - np.where(offset, mean, 0.0)


#: Sums of squares outside ``(2**-500, 2**500)`` may have overflowed or lost bits to underflow (a zero
#: sum may be squares that underflowed); inside it, so does not their product.
_SAFE_EXPONENT_SUMS = 500.0
#: ``(low, high)``: a sum of squares strictly between them is safe (:func:`rescaled_where_unsafe`).
SAFE_SUM_BOUNDS = (2.0**-_SAFE_EXPONENT_SUMS, 2.0**_SAFE_EXPONENT_SUMS)


def _safe(sums: np.ndarray) -> np.ndarray:
    """Whether each sum of squares lies in ``(2**-500, 2**500)``."""
    with np.errstate(invalid="ignore"):
        return (sums > 2.0**-_SAFE_EXPONENT_SUMS) & (sums < 2.0**_SAFE_EXPONENT_SUMS)


def rescaled_where_unsafe(
    sums: PearsonSums,
    x: np.ndarray,
    z: np.ndarray,
    valid: np.ndarray,
    n: np.ndarray,
    *,
    skip: np.ndarray | None = None,
) -> np.ndarray:
    """``r`` of ``sums(x, z, valid, n) -> (r, sxx, szz)``, rows out of float64's comfortable range redone.

    Every row is computed as it is first; rows with valid pairs (``n > 0``) whose sums of
    squares left ``(2**-500, 2**500)`` (scores beyond about 2**±250: an overflow, or an
    underflow that costs precision) are computed again after :func:`pow2_normalise`.
    A power-of-two scaling changes no result bit of an ordinary row, so ordinary data
    pay no extra pass. ``valid`` is a mask or non-negative weights (0 = left out);
    rows in ``skip`` (already known undefined, e.g. a constant vector, whose zero sums
    are no underflow) are never redone.

    Examples
    --------
    >>> def sums(x, z, valid, n):  # uncentred, for the example only
    ...     sxx, szz = (x * x).sum(-1), (z * z).sum(-1)
    ...     return (x * z).sum(-1) / np.sqrt(sxx * szz), sxx, szz
    >>> x = np.array([[1.0, 2.0]]) * 1e300
    >>> ones = np.ones((1, 2), dtype=bool)
    >>> with np.errstate(over="ignore", invalid="ignore"):
    ...     r = rescaled_where_unsafe(sums, x, x, ones, np.array([2]))
    >>> r.round(12).tolist()
    [1.0]
    """
    r, sxx, szz = sums(x, z, valid, n)
    unsafe = (n > 0) & ~(_safe(sxx) & _safe(szz))
    if skip is not None:
        unsafe &= ~np.broadcast_to(skip, unsafe.shape)
    if not unsafe.any():
        return r
    shape = np.broadcast_shapes(np.shape(x), np.shape(z), np.shape(valid))
    x, z, valid = (np.broadcast_to(a, shape)[unsafe] for a in (x, z, valid))
    n = np.broadcast_to(n, unsafe.shape)[unsafe]
    use = valid > 0
    r = np.array(r, dtype=np.float64, copy=True)
    r[unsafe] = sums(pow2_normalise(x, where=use), pow2_normalise(z, where=use), valid, n)[0]
    return r
