"""Weighted Pearson r of fixed rows under a batch of bootstrap count vectors, draw by draw.

The rows (e.g. one per metric and input, along the systems) stay fixed while each draw
gives the S units multiplicities ``w``: r of the explicitly expanded resample is the
weighted r. Per row and draw, by the corrected two-pass method (as
:func:`xcorrstat._kernels.weighted.wcorr_gemm`): the weighted means, then the centred
co-moments less the rounding error of the means. A compiled loop
(:mod:`xcorrstat._kernels.linear.weighted_rows_jit`) runs the sums over the units in order, a row at
a time with its draws innermost, so a value never depends on the batch or on the other rows.

A row is undefined (NaN) in a draw with fewer than ``min_pairs`` expanded units, or with a
constant x or z over its drawn valid units. Rows whose sums of squares leave float64's
comfortable range are recomputed by :func:`~xcorrstat._kernels.weighted.wcorr_gemm`, which
rescales them.
"""

from __future__ import annotations


import numpy as np
from numpy.typing import ArrayLike

from .._compiled import loops
from ..scaling import SAFE_SUM_BOUNDS
from ..weighted import wcorr_gemm

__all__ = ["wpearson_rows"]


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
    loops("linear.weighted_rows_jit").rows(xv, zv, valid, wt, float(min_pairs), *SAFE_SUM_BOUNDS, out)
    r, n = out
    unsafe = np.isinf(r)  # sums of squares out of the safe range: rescaled by the general kernel
    if unsafe.any():
        rows = np.flatnonzero(unsafe.any(axis=1))
        again, _ = wcorr_gemm(xa[rows], za[rows], wt.T, method="pearson", min_pairs=min_pairs)
        r[rows] = np.where(unsafe[rows], again, r[rows])
    return r, n.astype(np.int64)


