"""Weighted Kendall tau of fixed rows under a batch of bootstrap count vectors, draw by draw.

The rows (e.g. one per metric and input, along the systems) stay fixed while each draw
gives the S units multiplicities ``w``: tau of the explicitly expanded resample follows from
weighted pair counts (see :mod:`xcorrstat._kernels.weighted`). With pair weight
``w_a w_c``: ``C - D = sum_{a<c} w_a w_c s^x_ac s^z_ac`` (``s^x = 0`` for a tie within
epsilon), the ties in x (exact and within epsilon), in z and in both; copies of one unit are
tied with each other (``sum_a w_a (w_a - 1) / 2`` more ties of each kind), except for the
variants comparing distinct units only (:data:`~xcorrstat._kernels.weighted.DISTINCT_PAIR_VARIANTS`),
whose pairs number ``(n^2 - sum w^2) / 2`` instead of ``n (n - 1) / 2``. Tau-c takes the
smaller number of distinct values among the drawn valid units.

A compiled loop (:mod:`xcorrstat._kernels.rank.weighted_rows_jit`) forms these counts a row at
a time with the draws innermost, without temporaries larger than a few vectors of the draws.
The counts are integers held exactly in float64, so a value depends neither on the batch nor
on the other rows. The undefined rule is the plain kernel's on the expanded vectors: fewer
than ``min_pairs`` expanded units, or every expanded pair tied in x or in z (tau-b also in x
within epsilon); tau_eq and acc_eq need two units only.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..._types import Variant
from .._compiled import loops

__all__ = ["wkendall_rows"]

_VARIANTS = ("a", "b", "c", "23", "acc23")


def wkendall_rows(x: ArrayLike, z: ArrayLike, weights: ArrayLike, *, variant: Variant = "b",
                  min_pairs: int = 3, epsilon: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Weighted Kendall tau of rows ``x``, ``z`` (R, S) under each of B weight vectors (B, S).

    ``weights`` hold non-negative integer multiplicities; ``variant`` and ``epsilon`` are
    those of :func:`xcorrstat._kernels.kendall`. Returns ``(r, n)``, each (R, B): the
    statistic and the expanded valid units.

    Examples
    --------
    >>> r, n = wkendall_rows([[1.0, 2.0, 3.0, 4.0]], [[1.0, 3.0, 2.0, 4.0]], [[1, 1, 1, 1], [0, 2, 1, 1]])
    >>> np.round(r, 4).tolist(), n.tolist()
    ([[0.6667, 0.2]], [[4, 4]])
    """
    xa = np.asarray(x, dtype=np.float64)
    za = np.asarray(z, dtype=np.float64)
    wt = np.ascontiguousarray(np.asarray(weights, dtype=np.float64).T)  # (S, B)
    if xa.ndim != 2 or za.shape != xa.shape or wt.ndim != 2 or wt.shape[0] != xa.shape[1]:
        raise ValueError(f"x and z must be (R, S) and weights (B, S), got {xa.shape}, {za.shape}, {wt.T.shape}")
    if variant not in _VARIANTS:
        raise ValueError(f"variant must be one of {_VARIANTS}, got {variant!r}")
    valid = ~np.isnan(xa) & ~np.isnan(za)
    out = np.empty((2, xa.shape[0], wt.shape[1]))
    loop = loops("rank.weighted_rows_jit")
    loop.rows(xa, za, valid, wt, loop.VARIANT_CODES[variant], float(min_pairs), float(max(int(min_pairs), 2)),
              float(epsilon), out)
    r, n = out
    return r, n.astype(np.int64)
