"""Permutation test between the soft pairwise accuracies of every pair of metrics (WMT24's clusters).

mt-metrics-eval ranks metrics by soft pairwise accuracy (SPA) with ``PermutationSigDiff``
over all cells: each draw swaps every (system, input) cell between the two metrics with a
fair coin, recomputes both SPAs, and counts the draws whose difference reaches the
observed one. Here a draw is a 0/1 mask over the cells, keyed by its draw id, shared by
every pair of metrics; :mod:`xcorrstat.kernels.spa_swap` turns a batch of masks into both
swapped SPAs with one matrix product per system.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from functools import partial

import dask
import numpy as np
import xarray as xr

from .._types import Draws, Seed
from ..kernels.spa_swap import spa_swap_draws
from ..resampling.draws import permutation_masks, resolve_seed
from ..resampling.engine import block_elems, draws_within
from ..resampling.pvalues import permutation_pvalue
from ..resampling.workers import BLAS_ONE_THREAD
from ..schema import INPUT, METRIC, SYSTEM, aligned_scores
from ..validation import check_choice, check_positive_int
from .softpairwise import DRAWS, mtme_signs, soft_pairwise_accuracy

__all__ = ["soft_pairwise_accuracy_test"]

OTHER = "other_metric"


def _mask_seed(seed: int) -> int:
    """The seed of the swap masks: a stream of ``seed`` of its own, apart from the sign draws of the statistic."""
    return int(np.random.SeedSequence([seed, 0x5BA]).generate_state(1, np.uint64)[0] % (2**63))


def _signs(draws: Draws, spa_seed: int, n: int, kept: np.ndarray) -> np.ndarray:
    """The statistic's fixed sign matrix (n, L) over the kept inputs."""
    if draws == "mt-metrics-eval":
        return mtme_signs(spa_seed, n, int(kept.sum())).astype(np.float64)
    return 1.0 - 2.0 * permutation_masks(spa_seed, np.arange(n), 1, kept.size, "cells")[:, 0, kept]


def _pair_deltas(x: np.ndarray, z: np.ndarray, pairs: np.ndarray, signs_of, mask_seed: int, n_resamples: int,
                 batch: int) -> tuple[np.ndarray, np.ndarray]:
    """Observed SPA difference (P,) and its draws (P, n_resamples) of the metric pairs ``pairs`` (P, 2)."""
    delta = np.full(len(pairs), np.nan)
    dist = np.full((len(pairs), n_resamples), np.nan)
    with BLAS_ONE_THREAD:
        for start in range(0, n_resamples, batch):
            ids = np.arange(start, min(start + batch, n_resamples))
            masks = permutation_masks(mask_seed, ids, x.shape[1], x.shape[2], "cells")
            for k, (i, j) in enumerate(pairs):
                kept = np.isfinite(x[i]).all(axis=0) & np.isfinite(x[j]).all(axis=0) & np.isfinite(z).all(axis=0)
                if kept.sum() < 1:
                    continue
                signs = signs_of(kept)
                xi, xj, zk = x[i][:, kept], x[j][:, kept], z[:, kept]
                if start == 0:
                    a0, b0 = spa_swap_draws(xi, xj, zk, signs, np.zeros((1,) + xi.shape, dtype=bool))
                    delta[k] = a0[0] - b0[0]
                sa, sb = spa_swap_draws(xi, xj, zk, signs, masks[:, :, kept])
                dist[k, start:start + ids.size] = sa - sb
    return delta, dist


def _soft_pairwise_accuracy_test_iv(data, target, metrics, n_resamples, spa_resamples, draws, batch):
    n_resamples = check_positive_int(n_resamples, "n_resamples")
    spa_resamples = check_positive_int(spa_resamples, "spa_resamples")
    check_choice(draws, DRAWS, "draws")
    batch = check_positive_int(batch, "batch", allow_none=True)
    x, z, lead = aligned_scores(data, target=target, metrics=metrics)
    if lead != [METRIC]:
        raise ValueError(f"soft_pairwise_accuracy_test compares metrics over (system, input) only; the scores have "
                         f"the extra dims {[d for d in lead if d != METRIC]}: select one label of each first")
    return x, z.isel({METRIC: 0}), n_resamples, spa_resamples, batch


def soft_pairwise_accuracy_test(
    data: xr.Dataset,
    *,
    target: Hashable,
    metrics: Hashable | Sequence[Hashable] | None = None,
    n_resamples: int = 1000,
    rng: Seed = None,
    spa_resamples: int = 1000,
    spa_rng: Seed = None,
    draws: Draws = "by-id",
    batch: int | None = None,
) -> xr.Dataset:
    """Permutation test of the difference in soft pairwise accuracy of every pair of metrics.

    Parameters
    ----------
    data : Dataset
        Scores over ``system`` and ``input``, one variable per metric and the target.
    target : hashable
        The human score.
    metrics : hashable or sequence, optional
        The metrics to compare (default: every variable but the target).
    n_resamples : int, default 1000
        Draws of the test: each swaps every (system, input) cell between the two metrics
        with a fair coin (PERM-BOTH), the same masks for every pair, keyed by draw id.
    rng : int, Generator, SeedSequence or None
        Seed of the swap masks (recorded in attrs).
    spa_resamples, spa_rng, draws
        The statistic's own sign draws, as ``n_resamples``, ``rng`` and ``draws`` of
        :func:`xcorrstat.soft_pairwise_accuracy` (``draws="mt-metrics-eval"``: its seed 4 by
        default). The sign matrix is fixed across the test's draws, as in mt-metrics-eval.
    batch : int, optional
        Draws per batch (memory only; the numbers do not depend on it).

    Returns
    -------
    Dataset
        ``soft_pairwise_accuracy`` over metric; over (metric, other_metric): ``delta``
        (SPA of metric minus that of other_metric, from the inputs both have) and ``pvalue``,
        the share of draws whose swapped difference reaches ``delta`` (one-sided, metric
        better; ``k / n_resamples`` as mt-metrics-eval counts). An input where a system
        lacks either metric or the target is left out of that pair. NaN on the diagonal.

    Notes
    -----
    The draws' SPAs are computed in float64 with the rounding tolerance of ``draws="by-id"``
    whatever ``draws`` is, and so is ``delta``, so that draws and observed value share their
    arithmetic; ``soft_pairwise_accuracy`` is the statistic itself (float32 in the
    ``"mt-metrics-eval"`` mode).

    Examples
    --------
    >>> import xcorrstat
    >>> ds = xcorrstat.datasets.summeval()[["expert_relevance", "meteor", "bertscore_f1"]]
    >>> res = xcorrstat.soft_pairwise_accuracy_test(ds, target="expert_relevance", n_resamples=50, rng=0,
    ...                                             spa_resamples=200, spa_rng=0)
    >>> res["pvalue"].dims, bool(res["pvalue"].isnull()[0, 0])
    (('metric', 'other_metric'), True)
    """
    x, z, n_resamples, spa_resamples, batch = _soft_pairwise_accuracy_test_iv(
        data, target, metrics, n_resamples, spa_resamples, draws, batch)
    seed = resolve_seed(rng)
    spa = soft_pairwise_accuracy(data, target=target, metrics=list(x[METRIC].values), n_resamples=spa_resamples,
                                 rng=spa_rng, draws=draws)
    spa_seed = int(spa.attrs["seed"])
    m, s, n_inp = x.shape
    per_draw = 4 * s * n_inp + 4 * spa_resamples * s + 3 * spa_resamples * (s * (s - 1) // 2)
    batch = batch or min(n_resamples, draws_within(block_elems(), per_draw))
    iu = np.stack(np.triu_indices(m, 1), axis=-1)
    chunks = [c for c in np.array_split(iu, max(1, min(len(iu), 4 * dask.system.CPU_COUNT))) if len(c)]
    signs_of = partial(_signs, draws, spa_seed, spa_resamples)
    parts = dask.compute(*[dask.delayed(_pair_deltas)(x.values, z.values, c, signs_of, _mask_seed(seed), n_resamples,
                                                      batch) for c in chunks])
    delta = np.full((m, m), np.nan)
    pvalue = np.full((m, m), np.nan)
    for c, (d, dist) in zip(chunks, parts):
        i, j = c[:, 0], c[:, 1]
        delta[i, j], delta[j, i] = d, -d
        pvalue[i, j] = permutation_pvalue(dist, d, alternative="greater", pvalue="fraction")
        pvalue[j, i] = permutation_pvalue(-dist, -d, alternative="greater", pvalue="fraction")
    coords = {METRIC: x[METRIC].values, OTHER: x[METRIC].values}
    out = xr.Dataset({"soft_pairwise_accuracy": spa["soft_pairwise_accuracy"],
                      "delta": ((METRIC, OTHER), delta), "pvalue": ((METRIC, OTHER), pvalue)},
                     coords=coords)
    out.attrs = {"test": "permutation", "permute": f"{SYSTEM}, {INPUT} (every cell)", "n_resamples": n_resamples,
                 "seed": seed, "spa_resamples": spa_resamples, "spa_seed": spa_seed, "draws": draws,
                 "pvalue": "fraction", "alternative": "greater", "batch": batch}
    return out
