"""Weighted Pearson r of fixed rows under a batch of bootstrap count vectors, draw by draw.

The rows (e.g. one per metric and input, along the systems) stay fixed while each draw
gives the S units multiplicities ``w``: r of the explicitly expanded resample is the
weighted r. Per row and draw, by the corrected two-pass method (as
:func:`xcorrstat._kernels.weighted.wcorr_gemm`): the weighted means, then the centred
co-moments less the rounding error of the means. The sums run over the units in order,
each an elementwise operation over (rows, draws), so a value never depends on the batch
or on the other rows. With numba the same operations run in a
compiled loop (:mod:`xcorrstat._kernels.wpearson_rows_jit`): the same floats.

A row is undefined (NaN) in a draw with fewer than ``min_pairs`` expanded units, or with a
constant x or z over its drawn valid units. Rows whose sums of squares leave float64's
comfortable range are recomputed by :func:`~xcorrstat._kernels.weighted.wcorr_gemm`, which
rescales them.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ._compiled import compiled_module
from .scaling import SAFE_SUM_BOUNDS
from .weighted import wcorr_gemm

__all__ = ["wpearson_rows"]

#: float64 elements of one (rows, draws) temporary of the NumPy path.
ROW_BLOCK_ELEMS = 1 << 18


def wpearson_rows(x: ArrayLike, z: ArrayLike, weights: ArrayLike, *,
                  min_pairs: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """Weighted Pearson r of rows ``x``, ``z`` (R, S) under each of B weight vectors (B, S).

    Returns ``(r, n)``, each (R, B): the statistic and the expanded valid units.

    Examples
    --------
    >>> r, n = wpearson_rows([[1.0, 2.0, 3.0]], [[1.0, 3.0, 2.0]], [[1, 1, 1], [2, 1, 1]])
    >>> np.round(r, 4).tolist(), n.tolist()
    ([[0.5, 0.6364]], [[3, 4]])
    """
    xa = np.asarray(x, dtype=np.float64)
    za = np.asarray(z, dtype=np.float64)
    wt = np.ascontiguousarray(np.asarray(weights, dtype=np.float64).T)  # (S, B)
    if xa.ndim != 2 or za.shape != xa.shape or wt.shape[0] != xa.shape[1]:
        raise ValueError(f"x and z must be (R, S) and weights (B, S), got {xa.shape}, {za.shape}, {wt.T.shape}")
    valid = ~np.isnan(xa) & ~np.isnan(za)
    xv, zv = np.where(valid, xa, 0.0), np.where(valid, za, 0.0)
    out = np.empty((2, xa.shape[0], wt.shape[1]))
    jit = compiled_module("wpearson_rows_jit")
    if jit is not None:
        jit.rows(xv, zv, valid, wt, float(min_pairs), *SAFE_SUM_BOUNDS, out)
    else:
        step = max(1, ROW_BLOCK_ELEMS // max(wt.shape[1], 1))
        with np.errstate(invalid="ignore", divide="ignore", over="ignore", under="ignore"):
            for r0 in range(0, xa.shape[0], step):
                sl = slice(r0, r0 + step)
                out[:, sl] = _rows(xv[sl], zv[sl], valid[sl], wt, float(min_pairs))
    r, n = out
    unsafe = np.isinf(r)  # sums of squares out of the safe range: rescaled by the general kernel
    if unsafe.any():
        rows = np.flatnonzero(unsafe.any(axis=1))
        again, _ = wcorr_gemm(xa[rows], za[rows], wt.T, method="pearson", min_pairs=min_pairs)
        r[rows] = np.where(unsafe[rows], again, r[rows])
    return r, n.astype(np.int64)


def _rows(xv: np.ndarray, zv: np.ndarray, valid: np.ndarray, wt: np.ndarray, need: float) -> np.ndarray:
    """(2, R, B): r and n of a block of rows; ``inf`` where a sum of squares is out of the safe range
    (floating-point warnings are the caller's to silence)."""
    shape = (xv.shape[0], wt.shape[1])
    n, sx, sz = np.zeros(shape), np.zeros(shape), np.zeros(shape)
    lo_x, hi_x = np.full(shape, np.inf), np.full(shape, -np.inf)
    lo_z, hi_z = np.full(shape, np.inf), np.full(shape, -np.inf)
    for s in range(wt.shape[0]):
        ws = valid[:, s, None] * wt[s]
        drawn = ws > 0
        n += ws
        sx += xv[:, s, None] * ws
        sz += zv[:, s, None] * ws
        lo_x, hi_x = _extend(lo_x, hi_x, xv[:, s, None], drawn)
        lo_z, hi_z = _extend(lo_z, hi_z, zv[:, s, None], drawn)
    mx, mz = sx / n, sz / n
    cx, cz, sxx, szz, sxz = (np.zeros(shape) for _ in range(5))
    for s in range(wt.shape[0]):
        ws = valid[:, s, None] * wt[s]
        drawn = ws > 0
        dx = np.where(drawn, xv[:, s, None] - mx, 0.0)
        dz = np.where(drawn, zv[:, s, None] - mz, 0.0)
        wdx, wdz = ws * dx, ws * dz
        cx += wdx
        cz += wdz
        sxx += wdx * dx
        szz += wdz * dz
        sxz += wdx * dz
    cx, cz = cx / n, cz / n
    sxx -= n * cx * cx
    szz -= n * cz * cz
    sxz -= n * cx * cz
    r = sxz / np.sqrt(sxx) / np.sqrt(szz)
    return np.stack([_finish(r, n, sxx, szz, lo_x, hi_x, lo_z, hi_z, need), n])


def _extend(lo: np.ndarray, hi: np.ndarray, v: np.ndarray, drawn: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The least and greatest drawn values so far."""
    return np.where(drawn & (v < lo), v, lo), np.where(drawn & (v > hi), v, hi)


def _finish(r: np.ndarray, n: np.ndarray, sxx: np.ndarray, szz: np.ndarray, lo_x: np.ndarray, hi_x: np.ndarray,
            lo_z: np.ndarray, hi_z: np.ndarray, need: float) -> np.ndarray:
    """r clipped; NaN where undefined, ``inf`` where a sum of squares is out of the safe range."""
    low, high = SAFE_SUM_BOUNDS
    undefined = (n < need) | (n <= 0) | (lo_x == hi_x) | (lo_z == hi_z)
    unsafe = ~((sxx > low) & (sxx < high) & (szz > low) & (szz < high))
    r = np.where(r > 1.0, 1.0, np.where(r < -1.0, -1.0, r))
    return np.where(undefined, np.nan, np.where(unsafe, np.inf, r))
