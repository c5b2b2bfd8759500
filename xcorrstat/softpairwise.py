"""Soft pairwise accuracy (1 - pairwise confidence error): agreement of per-pair significance.

Thompson et al. (2024) compare how sure the humans and the metric are that system i beats
system j: for each pair, a paired sign-flip permutation test on the per-input score
differences gives a p-value from the human scores and one from the metric scores, and

    SPA = 1 - mean over pairs i < j of |p_human(i, j) - p_metric(i, j)|.

The test of a pair: ``p = share of draws with sum_k s_k d_k >= sum_k d_k``, with
``d_k = score_i - score_j`` on input k (inputs where both systems have both scores) and
random signs ``s_k``. The same sign draws serve every pair, the target and every metric;
draw r comes from ``SeedSequence(seed, ...)`` by its id like every draw of the library.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np
import xarray as xr

from .resampling.draws import permutation_masks, resolve_seed
from .schema import INPUT, SYSTEM, aligned_scores
from .validation import check_positive_int

__all__ = ["pairwise_pvalues", "soft_pairwise_accuracy"]


def pairwise_pvalues(scores, signs):
    """One-sided sign-flip p-values of every system pair: scores (..., S, I), signs (B, I) -> (..., P).

    Pairs are ``np.triu_indices(S, 1)``; ``p[i, j]`` is the share of draws whose sign-flipped
    sum of differences reaches the observed sum (no +1: the share of draws itself).
    """
    scores = np.asarray(scores, dtype=np.float64)
    a, b = np.triu_indices(scores.shape[-2], 1)
    with np.errstate(invalid="ignore"):
        d = scores[..., a, :] - scores[..., b, :]  # (..., P, I)
    d = np.where(np.isnan(d), 0.0, d)
    observed = d.sum(axis=-1)  # (..., P)
    flipped = np.einsum("...pi,bi->...pb", d, np.asarray(signs, dtype=np.float64))
    # the observed sum is one of the draws' sums when all signs are +1: compare with a tolerance of rounding
    tol = 1e-9 * np.maximum(np.abs(d).sum(axis=-1), 1.0)
    return (flipped >= (observed - tol)[..., None]).mean(axis=-1)


def soft_pairwise_accuracy(
    data: xr.Dataset | xr.DataArray,
    *,
    target: Hashable,
    metrics: Sequence[Hashable] | None = None,
    n_resamples: int = 1000,
    rng: int | np.random.Generator | np.random.SeedSequence | None = None,
) -> xr.Dataset:
    """Soft pairwise accuracy of every metric's system ranking (1 - pairwise confidence error).

    Parameters
    ----------
    data : Dataset or DataArray
        Scores with ``system`` and ``input`` dims.
    target : str
        Human score.
    metrics : list of str, optional
        Default every non-human variable.
    n_resamples : int, default 1000
        Sign-flip draws of each pair's test (shared by every pair and metric).
    rng : int, Generator, SeedSequence or None
        Seed of the draws; recorded in attrs.

    Returns
    -------
    Dataset
        ``soft_pairwise_accuracy`` over ``metric`` (NaN with fewer than 2 systems), and
        ``n_pairs``.

    Examples
    --------
    >>> import xcorrstat
    >>> ds = xcorrstat.datasets.summeval()
    >>> spa = xcorrstat.soft_pairwise_accuracy(ds, target="expert_relevance", metrics=["qa_eval_f1"], rng=0)
    >>> 0 <= float(spa["soft_pairwise_accuracy"][0]) <= 1
    True
    """
    n_resamples = check_positive_int(n_resamples, "n_resamples")
    seed = resolve_seed(rng)
    x, zb, batch = aligned_scores(data, target=target, metrics=metrics)
    # a cell missing in the metric or the target is left out of both (the library's one rule)
    x, zb = x.where(zb.notnull()), zb.where(x.notnull())
    n_sys, n_inp = x.sizes[SYSTEM], x.sizes[INPUT]
    signs = 1.0 - 2.0 * permutation_masks(seed, np.arange(n_resamples), 1, n_inp, "cells")[:, 0, :]
    p_metric = pairwise_pvalues(x.values, signs)
    p_gold = pairwise_pvalues(zb.values, signs)
    n_pairs = n_sys * (n_sys - 1) // 2
    with np.errstate(invalid="ignore"):
        spa = 1.0 - np.abs(p_gold - p_metric).mean(axis=-1) if n_pairs else np.full(p_metric.shape[:-1], np.nan)
    coords = {d: x[d] for d in batch}
    out = xr.Dataset({"soft_pairwise_accuracy": (batch, spa)}, coords=coords)
    out["n_pairs"] = n_pairs
    out.attrs = {"statistic": "soft pairwise accuracy = 1 - mean |p_human - p_metric| over system pairs",
                 "test": "one-sided paired sign-flip test of the summed per-input differences",
                 "target": str(target), "n_resamples": n_resamples, "seed": seed}
    return out
