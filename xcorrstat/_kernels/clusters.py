"""Significance clusters: metrics ranked by correlation, grouped so none in a cluster beats another.

The greedy rule (the one of mt-metrics-eval): sort the metrics by correlation, best
first. Walk down the list; the first metric opens cluster 1. A metric joins the
current cluster unless some metric already in that cluster is significantly better
than it, in which case it opens the next cluster. So no metric in a cluster is
significantly beaten by another member, and clusters are contiguous in the ranking.
A metric whose correlation is undefined (NaN) gets cluster 0 (unranked).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["greedy_clusters"]


def greedy_clusters(correlation: ArrayLike, better: ArrayLike) -> np.ndarray:
    """Cluster numbers (1 = best) of metrics from their correlations and a "significantly better" matrix.

    Parameters
    ----------
    correlation : array_like, shape (M,)
        Each metric's correlation with the target; higher is better.
    better : array_like of bool, shape (M, M)
        ``better[j, i]`` is True when metric ``j`` is significantly better than metric ``i``.

    Returns
    -------
    ndarray of int64, shape (M,)
        Cluster of each metric in input order; 0 where the correlation is NaN.

    Examples
    --------
    >>> r = [0.9, 0.5, 0.85]
    >>> better = [[False, True, False], [False, False, False], [False, True, False]]
    >>> greedy_clusters(r, better).tolist()
    [1, 2, 1]
    """
    r = np.asarray(correlation, dtype=np.float64)
    sig = np.asarray(better, dtype=bool)
    if r.ndim != 1 or sig.shape != (r.size, r.size):
        raise ValueError(f"correlation must be (M,) and better (M, M), got {r.shape} and {sig.shape}")
    out = np.zeros(r.size, dtype=np.int64)
    ranked = [int(k) for k in np.argsort(-r, kind="stable") if not np.isnan(r[k])]
    cluster = 0
    members: list[int] = []
    for k in ranked:  # O(M^2) over metrics, not a resampling loop
        if not members or sig[members, k].any():
            cluster += 1
            members = []
        members.append(k)
        out[k] = cluster
    return out
