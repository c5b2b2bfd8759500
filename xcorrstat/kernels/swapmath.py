"""Linear and quadratic forms in a batch of 0/1 swap masks, evaluated with matrix products.

The swap kernels (:mod:`xcorrstat.kernels.swap` and :mod:`xcorrstat.kernels.swap_kendall`)
write every per-draw sum as a constant plus a linear form ``sum_s m_s c_s`` plus a
quadratic form ``sum_{a<b} m_a m_b G_ab`` of a mask ``m`` over the systems of one input.
Here a batch of masks is laid out once per input (:func:`per_input_masks`) and each form
becomes a GEMM over draws (:func:`linear`, :func:`quadratic`).

The integer-valued forms are summed in float32 when that is exact (every partial sum
below :data:`F32_EXACT`) and float64 otherwise.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from numpy.typing import DTypeLike

__all__ = [
    "F32_EXACT", "QuadraticOperand", "SwapRun", "empty_operand", "fill_operand", "linear", "per_input_masks",
    "quadratic", "quadratic_operand",
]

#: float32 adds integers exactly while every partial sum stays below this bound.
F32_EXACT = 2**24
_INPUT_BLOCK = 16  # inputs per GEMM block of the quadratic forms

#: ``run(masks) -> (r_x, r_y)``: a per-input statistic of X' and Y' for a (B, S, I) batch of bool
#: masks, each (P, I, B).
SwapRun = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]



class QuadraticOperand(NamedTuple):
    """Quadratic matrices laid out for :func:`quadratic`.

    With few forms (``pairs`` None), ``flat`` is (I, S, P*K*S): one (S, S) matrix per
    input and form. With many, ``flat`` is (I, pairs, P*K) over the system pairs
    ``pairs = (a_idx, b_idx)`` with ``a < b``.
    """

    forms: tuple[int, int]  # (P, K)
    flat: np.ndarray
    pairs: tuple[np.ndarray, np.ndarray] | None


def per_input_masks(m: np.ndarray, dtype: DTypeLike) -> np.ndarray:
    """(B, S, I) bool -> (I, B, S) in ``dtype``.

    Examples
    --------
    >>> per_input_masks(np.ones((2, 3, 4), dtype=bool), np.float32).shape
    (4, 2, 3)
    """
    return np.ascontiguousarray(np.transpose(m, (2, 0, 1)), dtype=dtype)


def linear(mt: np.ndarray, coef: np.ndarray) -> np.ndarray:
    """Linear forms per input: mt (I, B, S), coef (P, K, S, I) -> (P, K, I, B).

    Examples
    --------
    >>> mt = per_input_masks(np.array([[[1], [0], [1]]], dtype=bool), np.float64)  # B=1, S=3, I=1
    >>> linear(mt, np.array([1.0, 2.0, 4.0]).reshape(1, 1, 3, 1)).tolist()
    [[[[5.0]]]]
    """
    p, k, s, i = coef.shape
    c = np.ascontiguousarray(np.transpose(coef, (3, 2, 0, 1)).reshape(i, s, p * k), dtype=mt.dtype)
    out = np.matmul(mt, c)  # (I, B, P*K)
    return np.transpose(out.reshape(i, -1, p, k), (2, 3, 0, 1)).astype(np.float64)


def quadratic_operand(g: np.ndarray, dtype: DTypeLike) -> QuadraticOperand:
    """Lay out the quadratic matrices g (P, K, I, S, S), zero on and below the diagonal, for the GEMMs.

    Examples
    --------
    >>> op = quadratic_operand(np.zeros((1, 1, 2, 3, 3)), np.float64)  # 1 form < 3 systems
    >>> op.forms, op.flat.shape, op.pairs
    ((1, 1), (2, 3, 3), None)
    """
    p, k, i, s, _ = g.shape
    operand = empty_operand(p, k, i, s, dtype)
    fill_operand(operand, g, 0, 0)
    return operand


def empty_operand(p: int, k: int, i: int, s: int, dtype: DTypeLike) -> QuadraticOperand:
    """An operand for P x K forms over I inputs and S systems, to fill block by block (:func:`fill_operand`).

    Building the (P, K, I, S, S) matrices of many pairs at once would hold them all in
    memory; filled by blocks of pairs and inputs, only the laid-out operand stays.

    Examples
    --------
    >>> empty_operand(4, 2, 5, 3, np.float32).flat.shape  # 8 forms >= 3 systems: over system pairs
    (5, 3, 8)
    """
    if p * k < s:  # few forms: (B, S) @ (S, S) per input and form, then a row-wise dot with m
        return QuadraticOperand((p, k), np.empty((i, s, p * k * s), dtype=dtype), None)
    # many forms: outer products of the mask over system pairs, then one GEMM per input
    a_idx, b_idx = np.triu_indices(s, 1)
    return QuadraticOperand((p, k), np.empty((i, a_idx.size, p * k), dtype=dtype), (a_idx, b_idx))


def fill_operand(operand: QuadraticOperand, g: np.ndarray, p0: int, i0: int) -> None:
    """Write the matrices g (Pb, K, Ib, S, S) of pairs ``p0:p0+Pb`` and inputs ``i0:i0+Ib`` into ``operand``.

    Examples
    --------
    >>> op = empty_operand(2, 1, 1, 3, np.float64)
    >>> g = np.zeros((1, 1, 1, 3, 3)); g[..., 0, 2] = 1.0
    >>> fill_operand(op, np.zeros_like(g), 0, 0); fill_operand(op, g, 1, 0)
    >>> op.flat[0].tolist()  # each form's (S, S) matrix, the forms side by side
    [[0.0, 0.0, 0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]
    """
    pb, k, ib, s, _ = g.shape
    (_, k), flat, pairs = operand
    if pairs is None:
        part = np.transpose(g, (2, 3, 0, 1, 4)).reshape(ib, s, pb * k * s)
        flat[i0:i0 + ib, :, p0 * k * s:(p0 + pb) * k * s] = part
        return
    a_idx, b_idx = pairs
    part = np.transpose(g[..., a_idx, b_idx], (2, 3, 0, 1)).reshape(ib, -1, pb * k)
    flat[i0:i0 + ib, :, p0 * k:(p0 + pb) * k] = part


def quadratic(mt: np.ndarray, operand: QuadraticOperand) -> np.ndarray:
    """Quadratic forms m^T G m per input and draw: mt (I, B, S) -> (P, K, I, B).

    Examples
    --------
    >>> g = np.zeros((1, 1, 1, 3, 3)); g[..., 0, 2] = 1.0  # the pair (0, 2)
    >>> mt = per_input_masks(np.array([[[1], [0], [1]], [[1], [1], [0]]], dtype=bool), np.float64)
    >>> quadratic(mt, quadratic_operand(g, np.float64)).tolist()
    [[[[1.0, 0.0]]]]
    """
    (p, k), flat, pairs = operand
    i, b, s = mt.shape
    if pairs is None:
        prod = np.matmul(mt, flat).reshape(i, b, p * k, s)  # (I, B, PK, S)
        out = np.einsum("ibfs,ibs->fib", prod, mt, dtype=np.float64)
        return out.reshape(p, k, i, b)
    a_idx, b_idx = pairs
    out = np.empty((p, k, i, b))
    for start in range(0, i, _INPUT_BLOCK):  # blocks of inputs keep the mask outer products in cache
        sl = slice(start, start + _INPUT_BLOCK)
        outer = mt[sl][..., a_idx] * mt[sl][..., b_idx]  # (i, B, pairs)
        part = np.matmul(outer, flat[sl])  # (i, B, PK)
        out[:, :, sl] = np.transpose(part.reshape(-1, b, p, k), (2, 3, 0, 1))
    return out
