"""From the draws of every pair of metrics to decisions: p-values, corrections, significance, clusters.

One chain serves :func:`~xcorrstat.compare` and :func:`~xcorrstat.aggregate_tasks`:

1. :func:`pair_pvalues`: the Monte-Carlo p-value of each ordered pair (metric,
   other_metric) from its draws (NaN on the diagonal);
2. :func:`adjust_matrix`: the multiple-testing correction over each row or all pairs;
3. ``significant``: corrected p-value <= alpha;
4. :func:`cluster_matrix`: the greedy significance clusters of mt-metrics-eval.

:func:`decide` runs steps 2-4 on labelled p-values.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from .._types import Alternative, Correction, Family, PValue
from .._kernels.clusters import greedy_clusters
from .._kernels.corrections import CORRECTIONS, adjust_pvalues
from .._resampling.engine import RESAMPLE_DIM
from .._resampling.pvalues import paired_bootstrap_pvalue, permutation_pvalue
from .._schema import METRIC
from .._validation import check_choice

__all__ = ["FAMILIES", "OTHER", "adjust_matrix", "check_correction", "cluster_matrix", "decide", "off_diagonal",
           "pair_pvalues"]

#: The dim of the second metric of a pair (the first is ``metric``).
OTHER = "other_metric"
#: The families a correction can run over: each metric's row, or all pairs at once.
FAMILIES = ("row", "all")


def check_correction(correction: object, family: object) -> None:
    """``correction`` (one of :data:`~xcorrstat._kernels.corrections.CORRECTIONS` or None) and ``family``,
    which only a correction reads: set away from ``"row"`` without one it is refused, not ignored.

    Examples
    --------
    >>> check_correction(None, "all")
    Traceback (most recent call last):
    ...
    ValueError: family='all' chooses the p-values a correction adjusts together, and correction=None makes ...
    """
    check_choice(family, FAMILIES, "family")
    if correction is None:
        if family != "row":
            raise ValueError(f"family={family!r} chooses the p-values a correction adjusts together, and "
                             "correction=None makes no correction; leave family at its default 'row', or choose "
                             f"a correction ({', '.join(map(repr, CORRECTIONS))})")
        return
    check_choice(correction, CORRECTIONS, "correction", " or None")


def off_diagonal(p: xr.DataArray, m: int) -> xr.DataArray:
    """``p`` over (metric, other_metric) with NaN on the diagonal (a metric against itself)."""
    diagonal = xr.DataArray(np.eye(m, dtype=bool), dims=(METRIC, OTHER))
    return p.where(~diagonal)


def pair_pvalues(dist: xr.DataArray, delta: xr.DataArray, *, test: str, alternative: Alternative,
                 pvalue: PValue) -> xr.DataArray:
    """Monte-Carlo p-values over (metric, other_metric) from each pair's draws of delta.

    ``test="permutation"`` counts the draws themselves, any other test (the paired
    bootstrap) the centred draws (:mod:`xcorrstat._resampling.pvalues`). The diagonal is NaN.

    Examples
    --------
    >>> d = xr.DataArray(np.array([[[0.0, 0.0], [0.1, 0.3]], [[-0.1, -0.3], [0.0, 0.0]]]),
    ...                  dims=(METRIC, OTHER, RESAMPLE_DIM))
    >>> delta = xr.DataArray(np.array([[0.0, 0.2], [-0.2, 0.0]]), dims=(METRIC, OTHER))
    >>> pair_pvalues(d, delta, test="permutation", alternative="greater", pvalue="fraction").values.tolist()
    [[nan, 0.5], [0.5, nan]]
    """
    func = permutation_pvalue if test == "permutation" else paired_bootstrap_pvalue

    def pfunc(d, obs):
        return func(d, obs, alternative=alternative, pvalue=pvalue)

    if dist.chunks is not None:
        dist = dist.chunk({RESAMPLE_DIM: -1})
    p = xr.apply_ufunc(
        pfunc, dist, delta,
        input_core_dims=[[RESAMPLE_DIM], []],
        dask="parallelized", output_dtypes=[np.float64],
    )
    return off_diagonal(p, dist.sizes[METRIC])


def adjust_matrix(p: np.ndarray, *, correction: Correction | None, family: Family,
                  alternative: Alternative) -> np.ndarray:
    """Corrected p-values of an (..., M, M) matrix; the family is each row or all pairs.

    With ``family="all"`` and a two-sided alternative, (i, k) and (k, i) are one
    hypothesis: the upper triangle is corrected and mirrored.

    Examples
    --------
    >>> p = np.array([[np.nan, 0.01, 0.04], [0.5, np.nan, 0.02], [0.9, 0.3, np.nan]])
    >>> adjust_matrix(p, correction="bonferroni", family="row", alternative="greater")[0].tolist()
    [nan, 0.02, 0.08]
    """
    if correction is None:
        return p
    m = p.shape[-1]
    if family == "row":
        return adjust_pvalues(p, method=correction, axis=-1)
    if alternative == "two-sided":  # (i, k) and (k, i) are one hypothesis: correct the upper triangle
        iu = np.triu_indices(m, 1)
        adj = adjust_pvalues(p[..., iu[0], iu[1]], method=correction, axis=-1)
        out = np.full(p.shape, np.nan)
        out[..., iu[0], iu[1]] = adj
        out[..., iu[1], iu[0]] = adj
        return out
    flat = p.reshape(p.shape[:-2] + (m * m,))
    return adjust_pvalues(flat, method=correction, axis=-1).reshape(p.shape)


def cluster_matrix(r: np.ndarray, significant: np.ndarray, delta: np.ndarray, *,
                   alternative: Alternative) -> np.ndarray:
    """Cluster of each metric (..., M) from the flags (..., M, M): ``better[j, i]`` = j significantly better than i.

    ``significant[i, k]`` flags H1 of the pair (i, k): i better (``"greater"``), i worse
    (``"less"``) or a difference whose sign is that of ``delta`` (``"two-sided"``).

    Examples
    --------
    >>> r = np.array([0.9, 0.5, 0.85])
    >>> sig = np.array([[False, True, False], [False, False, False], [False, True, False]])
    >>> cluster_matrix(r, sig, r[:, None] - r[None, :], alternative="greater").tolist()
    [1, 2, 1]
    """
    if alternative == "greater":
        better = significant
    elif alternative == "less":
        better = np.swapaxes(significant, -1, -2)
    else:
        better = significant & (delta > 0)
    flat_r = r.reshape(-1, r.shape[-1])
    flat_b = better.reshape(-1, *better.shape[-2:])
    out = np.stack([greedy_clusters(a, b) for a, b in zip(flat_r, flat_b)])  # one per extra-dim label
    return out.reshape(r.shape)


def decide(p: xr.DataArray, r: xr.DataArray, delta: xr.DataArray, *, correction: Correction | None,
           family: Family, alternative: Alternative,
           alpha: float) -> tuple[xr.DataArray, xr.DataArray, xr.DataArray]:
    """Corrected p-values, significance flags and clusters of a comparison of every pair of metrics.

    ``p`` and ``delta`` are over (metric, other_metric), ``r`` over metric. Returns
    ``(pvalue_corrected, significant, cluster)``; ``significant`` is
    ``pvalue_corrected <= alpha`` (False where it is NaN). Dask-backed inputs stay lazy.

    Examples
    --------
    >>> dims = (METRIC, OTHER)
    >>> p = xr.DataArray([[np.nan, 0.01], [0.99, np.nan]], dims=dims)
    >>> r = xr.DataArray([0.8, 0.2], dims=METRIC)
    >>> adj, sig, cl = decide(p, r, r - r.rename({METRIC: OTHER}), correction="holm", family="all",
    ...                       alternative="greater", alpha=0.05)
    >>> adj.values.tolist(), cl.values.tolist()
    ([[nan, 0.02], [0.99, nan]], [1, 2])
    """
    if any(v.chunks is not None for v in (p, r, delta)):  # the correction and the clusters see whole (metric, other_metric) matrices
        p, r, delta = p.chunk({METRIC: -1, OTHER: -1}), r.chunk({METRIC: -1}), delta.chunk({METRIC: -1, OTHER: -1})
    p_adj = xr.apply_ufunc(
        adjust_matrix, p, input_core_dims=[[METRIC, OTHER]], output_core_dims=[[METRIC, OTHER]],
        kwargs=dict(correction=correction, family=family, alternative=alternative),
        dask="parallelized", output_dtypes=[np.float64],
    )
    significant = (p_adj <= alpha).fillna(False) & p_adj.notnull()
    cluster = xr.apply_ufunc(
        cluster_matrix, r, significant, delta,
        input_core_dims=[[METRIC], [METRIC, OTHER], [METRIC, OTHER]],
        output_core_dims=[[METRIC]],
        kwargs=dict(alternative=alternative),
        dask="parallelized", output_dtypes=[np.int64],
    )
    return p_adj, significant, cluster
