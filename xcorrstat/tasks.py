"""Several tasks at once (language pairs, domains): per-task results, a weighted average, and its tests.

:func:`xcorrstat.compare` on data with a task dim tests every pair of metrics within each
task, with the same draw ids in every task. :func:`aggregate_tasks` averages such a
result over the task dim: the correlations (with user weights or equal ones), the ranks,
and the draws themselves. Draw r of the average is the weighted mean of draw r of every
task, so the averaged difference gets its own p-value from the same draws, then the
correction and the significance clusters of :func:`~xcorrstat.compare`.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping

import numpy as np
import xarray as xr
from scipy.stats import rankdata

from .compare import OTHER, _adjust, _clusters
from .resampling.engine import RESAMPLE_DIM
from .resampling.paired import paired_bootstrap_pvalue
from .resampling.permutation import permutation_pvalue
from .schema import METRIC
from .validation import check_unit_interval

__all__ = ["aggregate_tasks"]


def _weights(result: xr.Dataset, dim: Hashable, weights) -> xr.DataArray:
    labels = result[dim].values
    if weights is None:
        w = xr.DataArray(np.ones(len(labels)), dims=dim, coords={dim: labels})
    elif isinstance(weights, Mapping):
        missing = [lab for lab in labels if lab not in weights]
        if missing:
            raise ValueError(f"weights must give a weight to every {dim!r} label; missing {missing}")
        w = xr.DataArray([float(weights[lab]) for lab in labels], dims=dim, coords={dim: labels})
    elif isinstance(weights, xr.DataArray):
        w = weights.astype(np.float64).reindex({dim: labels})
    else:
        raise TypeError(f"weights must be a dict or a DataArray over {dim!r}, got {type(weights).__name__}")
    if w.isnull().any() or (w < 0).any() or float(w.sum()) <= 0:
        raise ValueError(f"weights must be >= 0 for every {dim!r} label, with a positive sum")
    return w / w.sum()


def aggregate_tasks(
    result: xr.Dataset,
    *,
    dim: Hashable = "task",
    weights: Mapping | xr.DataArray | None = None,
    alpha: float | None = None,
) -> xr.Dataset:
    """Average a :func:`~xcorrstat.compare` result over tasks, and test the averaged differences.

    Parameters
    ----------
    result : Dataset
        Returned by ``compare(..., keep_distribution=True)`` on data with a ``dim`` dim
        (permutation or paired bootstrap test).
    dim : str, default "task"
        The task dim (a language pair, a domain ...).
    weights : dict or DataArray, optional
        Weight of each task (normalised to sum 1); default equal weights.
    alpha : float, optional
        Significance level of the clusters; default the result's.

    Returns
    -------
    Dataset
        Over ``metric`` (and ``other_metric``): ``correlation`` (the weighted average),
        ``mean_rank`` (the weighted average of each task's rank, 1 = best), ``delta``,
        ``pvalue``, ``pvalue_corrected``, ``significant`` and ``cluster`` of the averaged
        comparison, plus ``task_correlation`` (per task) and ``weight``. A task whose
        correlation is undefined makes the average undefined (NaN).

    Examples
    --------
    >>> import xarray as xr
    >>> import xcorrstat
    >>> ds = xcorrstat.datasets.summeval()
    >>> two = xr.concat([ds, ds], dim="task").assign_coords(task=["a", "b"])
    >>> res = two.corrstat.compare(target="expert_relevance", metrics=["qa_eval_f1", "rouge_2_f1"],
    ...                            n_resamples=100, rng=0, keep_distribution=True)
    >>> avg = xcorrstat.aggregate_tasks(res)
    >>> float(avg["correlation"].sel(metric="qa_eval_f1")) == float(res["correlation"].sel(metric="qa_eval_f1", task="a"))
    True
    """
    if not isinstance(result, xr.Dataset) or "distribution" not in result or "pvalue" not in result:
        raise ValueError("result must come from compare(..., keep_distribution=True) (permutation or bootstrap "
                         "test): the averaged test needs every task's draws")
    if dim not in result.dims:
        raise ValueError(f"dim={dim!r} is not a dim of the result; it has {tuple(result.dims)}")
    if any(v.chunks is not None for v in result.data_vars.values()):
        result = result.compute()  # a lazy compare result: the average needs every task's draws
    test = result.attrs.get("test")
    alternative = result.attrs.get("alternative", "greater")
    pvalue_rule = result.attrs.get("pvalue", "plus-one")
    alpha = check_unit_interval(result.attrs.get("alpha", 0.05) if alpha is None else alpha, "alpha")
    correction = result.attrs.get("correction", "none")
    correction = None if correction == "none" else correction
    family = result.attrs.get("family", "row")
    w = _weights(result, dim, weights)

    corr = (result["correlation"] * w).sum(dim, skipna=False)
    # rank 1 = best within each task (ties share the mean rank; an undefined correlation has no rank)
    ranks = xr.apply_ufunc(lambda a: rankdata(-a, axis=-1, nan_policy="omit"), result["correlation"],
                           input_core_dims=[[METRIC]], output_core_dims=[[METRIC]])
    mean_rank = (ranks * w).sum(dim, skipna=False)
    delta = (result["delta"] * w).sum(dim, skipna=False)
    dist = (result["distribution"] * w).sum(dim, skipna=False)
    func = permutation_pvalue if test == "permutation" else paired_bootstrap_pvalue
    p = xr.apply_ufunc(lambda d, o: func(d, o, alternative=alternative, pvalue=pvalue_rule), dist, delta,
                       input_core_dims=[[RESAMPLE_DIM], []])
    m = result.sizes[METRIC]
    p = p.where(~xr.DataArray(np.eye(m, dtype=bool), dims=(METRIC, OTHER)))
    p_adj = xr.apply_ufunc(_adjust, p, input_core_dims=[[METRIC, OTHER]], output_core_dims=[[METRIC, OTHER]],
                           kwargs=dict(correction=correction, family=family, alternative=alternative))
    significant = (p_adj <= alpha).fillna(False) & p_adj.notnull()
    cluster = xr.apply_ufunc(_clusters, corr, significant, delta, input_core_dims=[[METRIC], [METRIC, OTHER],
                             [METRIC, OTHER]], output_core_dims=[[METRIC]], kwargs=dict(alternative=alternative))
    out = xr.Dataset({
        "correlation": corr, "mean_rank": mean_rank, "cluster": cluster, "delta": delta, "pvalue": p,
        "pvalue_corrected": p_adj, "significant": significant,
        "task_correlation": result["correlation"], "weight": w,
    })
    out = out.drop_vars([c for c in ("n",) if c in out.coords])
    out.attrs = {**result.attrs, "aggregated_over": str(dim), "alpha": alpha,
                 "average": "weighted mean over tasks; draw r of the average = weighted mean of each task's draw r"}
    return out
