"""Linear and quadratic forms in a batch of 0/1 swap masks, evaluated with matrix products.

The swap kernels (:mod:`xcorrstat._kernels.swap` and :mod:`xcorrstat._kernels.rank.input_swap`)
write every per-draw sum as a constant plus a linear form ``sum_s m_s c_s`` plus a
quadratic form ``sum_{a<b} m_a m_b G_ab`` of a mask ``m`` over the systems of one input.
Here a batch of masks is laid out once per input: its values (:func:`per_input_masks`,
for the linear forms of :func:`linear`), or its values, a 1 and its products over the
system pairs (:func:`mask_products`), so that constant, linear and quadratic parts
together are one GEMM over draws against an operand shared by the draws.

The integer-valued forms are summed in float32 when that is exact (every partial sum
below :data:`F32_EXACT`) and float64 otherwise. The real-valued linear forms (:func:`linear`)
are independent of the order too: each coefficient is split into two fixed-point parts whose
0/1-weighted sums are exact in any order (:func:`~xcorrstat._kernels.exactsum.exact_parts`),
and the two part sums are added once. (The parts keep the coefficients to ``2**-76`` of their
largest in magnitude per input, for 24,000 systems: the sums are closer to the exact ones than
a float64 sum of the coefficients would be.) A plain product would not do: BLAS blocks a product by its
number of rows (the draws of a batch), so a draw's sum would depend on how many draws shared
its batch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from numpy.typing import DTypeLike

from ..exactsum import exact_parts

__all__ = ["F32_EXACT", "LinearForms", "SwapRun", "linear", "linear_forms", "mask_products", "pair_incidence",
           "per_input_masks"]

#: float32 adds integers exactly while every partial sum stays below this bound.
F32_EXACT = 2**24

#: ``run(masks) -> (r_x, r_y)``: a per-input statistic of X' and Y' for a (B, S, I) batch of bool
#: masks, each (P, I, B).
SwapRun = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]


def per_input_masks(m: np.ndarray, dtype: DTypeLike) -> np.ndarray:
    """(B, S, I) bool -> (I, B, S) in ``dtype``.

    Examples
    --------
    >>> per_input_masks(np.ones((2, 3, 4), dtype=bool), np.float32).shape
    (4, 2, 3)
    """
    return np.ascontiguousarray(np.transpose(m, (2, 0, 1)), dtype=dtype)


class LinearForms(NamedTuple):
    """Coefficients (P, K, S, I) laid out for :func:`linear`: ``parts`` (I, S, 2 P K), the two
    fixed-point parts of every coefficient per input (part 0 of every form, then part 1), and the
    leading shape ``(P, K)``."""

    parts: np.ndarray
    shape: tuple[int, int]


def linear_forms(coef: np.ndarray) -> LinearForms:
    """The operand of :func:`linear` for finite coefficients ``coef`` (P, K, S, I): split once, used by
    every batch.

    Examples
    --------
    >>> linear_forms(np.ones((2, 3, 4, 5))).parts.shape  # (I, S, 2 P K)
    (5, 4, 12)
    """
    p, k, s, i = coef.shape
    parts = exact_parts(np.transpose(np.asarray(coef, dtype=np.float64), (0, 1, 3, 2)), s, 2)  # (2, P, K, I, S)
    return LinearForms(np.ascontiguousarray(np.transpose(parts, (3, 4, 0, 1, 2)).reshape(i, s, 2 * p * k)), (p, k))


def linear(mt: np.ndarray, coef: np.ndarray | LinearForms) -> np.ndarray:
    """Linear forms per input: mt (I, B, S) of 0/1 values (:func:`per_input_masks`), coef (P, K, S, I)
    -> (P, K, I, B).

    Each value is ``sum_s mt[i, b, s] * coef[p, k, s, i]``, as the sum of the two exact part sums of
    :func:`linear_forms`: a draw's value is the same bits whatever the other
    draws of its batch, their number, the BLAS or its threads. Pass :func:`linear_forms` of the
    coefficients to split them once for many batches.

    Examples
    --------
    >>> mt = per_input_masks(np.array([[[1], [0], [1]]], dtype=bool), np.float64)  # B=1, S=3, I=1
    >>> linear(mt, np.array([1.0, 2.0, 4.0]).reshape(1, 1, 3, 1)).tolist()
    [[[[5.0]]]]
    """
    forms = coef if isinstance(coef, LinearForms) else linear_forms(coef)
    p, k = forms.shape
    i, b = mt.shape[:2]
    sums = np.matmul(np.asarray(mt, dtype=np.float64), forms.parts)  # (I, B, 2 P K): exact per part
    out = sums[..., :p * k] + sums[..., p * k:]
    return np.transpose(out.reshape(i, b, p, k), (2, 3, 0, 1))


def mask_products(mt: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Per input and draw, the row ``[m_s | 1 | m_a m_b for a < b]`` of a batch of masks.

    ``mt`` holds the masks system by system, (S, I, B) bool (``np.transpose(m, (1, 2, 0))``
    of a (B, S, I) batch). Returns an (I, B, S + 1 + S (S - 1) / 2) view of an
    (S + 1 + S (S - 1) / 2, I, B) array (``out`` if given, whose dtype is the result's;
    float64 otherwise): every product is one operation on contiguous rows, and a matrix
    product takes each input's (B, rows) matrix as it is. The system pairs come in the
    order of ``np.triu_indices(S, 1)``.

    Examples
    --------
    >>> m = np.array([[[1], [0], [1]]], dtype=bool)  # B=1, S=3, I=1
    >>> mask_products(np.transpose(m, (1, 2, 0)))[0, 0].tolist()  # m, 1, m0m1, m0m2, m1m2
    [1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0]
    """
    s, i, b = mt.shape
    if out is None:
        out = np.empty((s + 1 + s * (s - 1) // 2, i, b))
    np.copyto(out[:s], mt)
    out[s] = 1
    col = s + 1
    for a in range(s - 1):  # the pairs (a, a + 1 ...): one broadcast product per first system
        np.multiply(out[a], out[a + 1:s], out=out[col:col + s - 1 - a])
        col += s - 1 - a
    return np.transpose(out, (1, 2, 0))


def pair_incidence(s: int, dtype: DTypeLike = np.float64) -> np.ndarray:
    """(2K, S) 0/1: row k marks the first system of pair k, row K + k its second (K = S (S - 1) / 2).

    Values per pair ``v`` (..., 2K) times this matrix are the sums per system of the
    values of the pairs where it comes first plus those where it comes second.

    Examples
    --------
    >>> pair_incidence(3).astype(int).tolist()  # pairs (0, 1), (0, 2), (1, 2)
    [[1, 0, 0], [1, 0, 0], [0, 1, 0], [0, 1, 0], [0, 0, 1], [0, 0, 1]]
    """
    a_idx, b_idx = np.triu_indices(s, 1)
    k = a_idx.size
    inc = np.zeros((2 * k, s), dtype=dtype)
    inc[np.arange(k), a_idx] = 1
    inc[k + np.arange(k), b_idx] = 1
    return inc
