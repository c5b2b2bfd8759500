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
from dataclasses import dataclass

import numpy as np
import xarray as xr

from .._display import did_you_mean
from .._types import Alternative, Correction, Family, PValue
from .._resampling.pvalues import ALTERNATIVES, PVALUES
from .._schema import METRIC
from .._validation import check_unit_interval
from .decisions import decide, pair_pvalues
from .._warn import one_call

__all__ = ["aggregate_tasks"]


@dataclass(frozen=True)
class _Options:
    """Normalised arguments of :func:`aggregate_tasks` and the options of the compare result."""

    result: xr.Dataset  # computed
    weight: xr.DataArray  # over ``dim``, summing to 1
    test: str
    alternative: Alternative
    pvalue: PValue
    correction: Correction | None
    family: Family
    alpha: float


def _weights(result: xr.Dataset, dim: Hashable, weights) -> xr.DataArray:
    labels = result[dim].values
    if weights is None:
        w = xr.DataArray(np.ones(len(labels)), dims=[dim], coords={dim: labels})
    elif isinstance(weights, Mapping):
        missing = [lab for lab in labels if lab not in weights]
        if missing:
            raise ValueError(f"weights must give a weight to every {dim!r} label; missing {missing}")
        w = xr.DataArray([float(weights[lab]) for lab in labels], dims=[dim], coords={dim: labels})
    elif isinstance(weights, xr.DataArray):
        w = weights.astype(np.float64).reindex({dim: labels})
    else:
        raise TypeError(f"weights must be a dict or a DataArray over {dim!r}, got {type(weights).__name__}")
    if w.isnull().any() or (w < 0).any() or float(w.sum()) <= 0:
        raise ValueError(f"weights must be >= 0 for every {dim!r} label, with a positive sum")
    return w / w.sum()


def _aggregate_tasks_iv(result, dim, weights, alpha) -> _Options:
    """Check the compare result and the arguments of :func:`aggregate_tasks`; read the result's options."""
    if not isinstance(result, xr.Dataset) or "distribution" not in result or "pvalue" not in result:
        raise ValueError("result must come from compare(..., keep_distribution=True) (permutation or bootstrap "
                         "test): the averaged test needs every task's draws")
    if dim not in result.dims:
        raise ValueError(f"dim={dim!r} is not a dim of the result; it has {tuple(result.dims)}"
                         f"{did_you_mean(dim, list(result.dims))}")
    if any(v.chunks is not None for v in result.data_vars.values()):
        result = result.compute()  # a lazy compare result: the average needs every task's draws
    attrs = result.attrs
    alpha = check_unit_interval(attrs.get("alpha", 0.05) if alpha is None else alpha, "alpha")
    correction = attrs.get("correction", "none")
    return _Options(
        result=result, weight=_weights(result, dim, weights), test=attrs.get("test", ""),
        alternative=attrs.get("alternative", ALTERNATIVES[0]), pvalue=attrs.get("pvalue", PVALUES[0]),
        correction=None if correction == "none" else correction, family=attrs.get("family", "row"), alpha=alpha,
    )


@one_call
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
    ...                            test=xcorrstat.Permutation(n_resamples=100, rng=0, keep_distribution=True))
    >>> avg = xcorrstat.aggregate_tasks(res)
    >>> float(avg["correlation"].sel(metric="qa_eval_f1")) == float(res["correlation"].sel(metric="qa_eval_f1", task="a"))
    True
    """
    o = _aggregate_tasks_iv(result, dim, weights, alpha)
    result, w = o.result, o.weight
    corr = (result["correlation"] * w).sum(dim, skipna=False)
    from scipy.stats import rankdata  # imported on use: scipy.stats takes about a second to import

    # rank 1 = best within each task (ties share the mean rank; an undefined correlation has no rank)
    ranks = xr.apply_ufunc(lambda a: rankdata(-a, axis=-1, nan_policy="omit"), result["correlation"],
                           input_core_dims=[[METRIC]], output_core_dims=[[METRIC]])
    mean_rank = (ranks * w).sum(dim, skipna=False)
    delta = (result["delta"] * w).sum(dim, skipna=False)
    dist = (result["distribution"] * w).sum(dim, skipna=False)
    p = pair_pvalues(dist, delta, test=o.test, alternative=o.alternative, pvalue=o.pvalue)
    p_adj, significant, cluster = decide(p, corr, delta, correction=o.correction, family=o.family,
                                         alternative=o.alternative, alpha=o.alpha)
    out = xr.Dataset({
        "correlation": corr, "mean_rank": mean_rank, "cluster": cluster, "delta": delta, "pvalue": p,
        "pvalue_corrected": p_adj, "significant": significant,
        "task_correlation": result["correlation"], "weight": w,
    })
    out = out.drop_vars([c for c in ("n",) if c in out.coords])
    out.attrs = {**result.attrs, "aggregated_over": str(dim), "alpha": o.alpha,
                 "average": "weighted mean over tasks; draw r of the average = weighted mean of each task's draw r"}
    return out
