"""Permutation test between the soft pairwise accuracies of every pair of metrics (WMT24's clusters).

mt-metrics-eval ranks metrics by soft pairwise accuracy (SPA) with ``PermutationSigDiff``
over all cells: each draw swaps every (system, input) cell between the two metrics with a
fair coin, recomputes both SPAs, and counts the draws whose difference reaches the
observed one. Here a draw is a 0/1 mask over the cells, keyed by its draw id, shared by
every pair of metrics; :mod:`xcorrstat._kernels.mt.soft_pairwise` turns a batch of masks into the
swapped SPAs of every pair with one matrix product per metric. Tasks are blocks of draw ids, in one
graph with the z-scores and the observed differences: Dask-backed scores give a lazy result, eager
scores run the same graph at once.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from functools import partial
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import xarray as xr

if TYPE_CHECKING:
    import dask.array as dsa

from .._options import OPTIONS
from .._types import Draws, Seed
from .._kernels.mt.soft_pairwise import masked_flips, pair_pvalues_from_sums, pair_scale, spa_from_flips, swapped_spa
from .._resampling.draws import permutation_masks, resolve_seed
from .._resampling.engine import block_elems, compute_with_progress, draws_within
from .._resampling.pvalues import permutation_pvalue
from .._resampling.workers import BLAS_ONE_THREAD, parallelism
from .._schema import INPUT, METRIC, SYSTEM
from .._selection import aligned_scores
from .._validation import check_choice, check_draw_count, check_positive_int
from .softpairwise import DRAWS, mtme_signs, soft_pairwise_accuracy
from .._warn import one_call

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


class _Group(NamedTuple):
    """Pairs of metrics that keep the same systems and inputs: one sign matrix, and each metric's fixed parts."""

    systems: np.ndarray  # (S,) bool
    kept: np.ndarray  # (I,) bool
    pairs: np.ndarray  # (P, 2) metric indices
    rows: np.ndarray  # (P,) positions of the pairs in the caller's list
    signs: np.ndarray  # (R, L)
    p_gold: np.ndarray  # (Q,) the target's p-value of every pair of kept systems
    flips: dict[int, np.ndarray]  # metric -> X T^T (S_kept, R)
    sums: dict[int, np.ndarray]  # metric -> system sums (S_kept,)
    scales: np.ndarray  # (P, Q) the tolerance scale of every pair of metrics


def _kept_units(x: np.ndarray, z: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """Per pair of metrics, the systems then the inputs it keeps: (P, S + I) bool.

    A system is kept when it has a cell with both metrics and the target (a system without one,
    such as a system without any target score, is in no pair of systems: an empty unit); an
    input when every kept system has the three scores there.
    """
    valid = np.isfinite(x) & np.isfinite(z)  # (M, S, I)
    # metrics usually share a few patterns of valid cells: the units once per pair of patterns
    shapes, which = np.unique(valid.reshape(len(valid), -1), axis=0, return_inverse=True)
    which = np.asarray(which).reshape(-1)
    shapes = shapes.reshape((-1,) + valid.shape[1:])
    combos, where = np.unique(np.stack([which[pairs[:, 0]], which[pairs[:, 1]]], axis=-1), axis=0,
                              return_inverse=True)
    both = shapes[combos[:, 0]] & shapes[combos[:, 1]]  # (C, S, I)
    systems = both.any(axis=-1)
    inputs = (both | ~systems[..., None]).all(axis=-2)
    return np.concatenate([systems, inputs], axis=-1)[np.asarray(where).reshape(-1)]


def _groups(x: np.ndarray, z: np.ndarray, pairs: np.ndarray,
            signs_of: Callable[[np.ndarray], np.ndarray]) -> list[_Group]:
    """The pairs grouped by their kept systems and inputs (every kept system has both metrics and the
    target on every kept input)."""
    n_sys = x.shape[1]
    patterns, which = np.unique(_kept_units(x, z, pairs), axis=0, return_inverse=True)
    out = []
    for g, pattern in enumerate(patterns):
        rows = np.flatnonzero(np.asarray(which).reshape(-1) == g)
        systems, kept = pattern[:n_sys], pattern[n_sys:]
        if kept.sum() < 1 or systems.sum() < 2:  # no pair of systems with data: delta stays NaN
            continue
        signs = signs_of(kept)
        zk = z[systems][:, kept]
        mine = pairs[rows]
        used = np.unique(mine)
        xs = {int(m): x[m][systems][:, kept] for m in used}
        out.append(_Group(systems, kept, mine, rows, signs,
                          pair_pvalues_from_sums(zk @ signs.T, zk.sum(axis=-1), pair_scale(zk)),
                          {m: v @ signs.T for m, v in xs.items()}, {m: v.sum(axis=-1) for m, v in xs.items()},
                          np.stack([pair_scale(xs[int(i)], xs[int(j)]) for i, j in mine])))
    return out


def _observed(x: np.ndarray, z: np.ndarray, pairs: np.ndarray, signs_of) -> np.ndarray:
    """SPA of metric minus that of other metric, per pair, with the draws' arithmetic (NaN: no input kept)."""
    delta = np.full(len(pairs), np.nan)
    for g in _groups(x, z, pairs, signs_of):
        for k, (i, j), scale in zip(g.rows, g.pairs, g.scales):
            sa = spa_from_flips(g.flips[i][None], g.sums[i][None], scale, g.p_gold)
            sb = spa_from_flips(g.flips[j][None], g.sums[j][None], scale, g.p_gold)
            delta[k] = sa[0] - sb[0]
    return delta


def _draw_block(x: np.ndarray, z: np.ndarray, pairs: np.ndarray, signs_of, mask_seed: int, ids: np.ndarray,
                batch: int) -> np.ndarray:
    """Draws ``ids`` of every pair's swapped SPA difference (P, len(ids)): each metric's masked part once a batch."""
    out = np.full((len(pairs), ids.size), np.nan)
    groups = _groups(x, z, pairs, signs_of)
    with BLAS_ONE_THREAD:
        for start in range(0, ids.size, batch):
            cols = slice(start, min(start + batch, ids.size))
            masks = permutation_masks(mask_seed, ids[cols], x.shape[1], x.shape[2], "cells")
            for g in groups:
                part = masks[:, g.systems][:, :, g.kept]
                moved = {m: masked_flips(x[m][g.systems][:, g.kept], g.signs, part) for m in g.flips}
                for k, (i, j), scale in zip(g.rows, g.pairs, g.scales):
                    (ui, si), (uj, sj) = moved[i], moved[j]
                    sa, sb = swapped_spa((g.flips[i], g.flips[j], g.sums[i], g.sums[j]), (ui, uj, si, sj), scale,
                                         g.p_gold)
                    out[k, cols] = sa - sb
    return out


def _zscored(x: np.ndarray, z: np.ndarray) -> np.ndarray:
    """Each metric (M, S, I) z-scored over its cells that have a target score (mt-metrics-eval's PERM-BOTH
    swaps z-scored scores): SPA is the same, the swapped scores are on one scale."""
    ok = np.isfinite(z)[None] & np.isfinite(x)
    count = np.maximum(ok.sum(axis=(1, 2), keepdims=True), 1)
    mean = np.where(ok, x, 0.0).sum(axis=(1, 2), keepdims=True) / count
    std = np.sqrt(np.where(ok, (x - mean) ** 2, 0.0).sum(axis=(1, 2), keepdims=True) / count)
    return (x - mean) / np.where(std > 0, std, 1.0)


def _prepared(x: np.ndarray, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The z-scored metrics (M, S, I) and the target (S, I), C-ordered first: each metric's sums then run
    in one order whatever the layout of the scores or the chunks they came in."""
    z = np.ascontiguousarray(z)
    return _zscored(np.ascontiguousarray(x), z), z


def _matrices(delta: np.ndarray, pairs: np.ndarray, m: int, *parts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """delta and p-value (M, M) from the observed difference of each pair of metrics and its blocks of draws."""
    dist = np.concatenate(parts, axis=-1)
    i, j = pairs[:, 0], pairs[:, 1]
    delta_mat = np.full((m, m), np.nan)
    pvalue = np.full((m, m), np.nan)
    delta_mat[i, j], delta_mat[j, i] = delta, -delta
    pvalue[i, j] = permutation_pvalue(dist, delta, alternative="greater", pvalue="fraction")
    pvalue[j, i] = permutation_pvalue(-dist, -delta, alternative="greater", pvalue="fraction")
    return delta_mat, pvalue


def _tested(x: xr.DataArray, z: xr.DataArray, *, signs_of, seed: int, n_resamples: int,
            batch: int) -> tuple[dsa.Array, dsa.Array]:
    """delta and p-value (M, M) as lazy arrays of one graph: the z-scores, the observed differences and the
    blocks of draw ids are its tasks (Dask-backed scores come in whole, to the z-scores' task)."""
    import dask
    import dask.array as dsa

    m = x.sizes[METRIC]
    pairs = np.stack(np.triu_indices(m, 1), axis=-1)
    prepared = dask.delayed(_prepared, nout=2)(x.data, z.data)
    delta = dask.delayed(_observed)(prepared[0], prepared[1], pairs, signs_of)
    blocks = np.array_split(np.arange(n_resamples), max(1, min(4 * parallelism(), -(-n_resamples // batch))))
    parts = [dask.delayed(_draw_block)(prepared[0], prepared[1], pairs, signs_of, _mask_seed(seed), ids, batch)
             for ids in blocks if ids.size]
    done = dask.delayed(_matrices, nout=2)(delta, pairs, m, *parts)
    return dsa.from_delayed(done[0], shape=(m, m), dtype=np.float64), \
        dsa.from_delayed(done[1], shape=(m, m), dtype=np.float64)


def _soft_pairwise_accuracy_test_iv(data, target, metrics, n_resamples, spa_resamples, draws, batch):
    n_resamples = check_draw_count(n_resamples, "n_resamples")
    spa_resamples = check_positive_int(spa_resamples, "spa_resamples")
    check_choice(draws, DRAWS, "draws")
    batch = check_positive_int(batch, "batch", allow_none=True)
    x, z, lead = aligned_scores(data, target=target, metrics=metrics)
    if lead != [METRIC]:
        raise ValueError(f"soft_pairwise_accuracy_test compares metrics over (system, input) only; the scores have "
                         f"the extra dims {[d for d in lead if d != METRIC]}: select one label of each first")
    return x, z.isel({METRIC: 0}), n_resamples, spa_resamples, batch


@one_call
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
        with a fair coin (PERM-BOTH), the same masks for every pair, keyed by draw id. As in
        mt-metrics-eval, the swapped scores are each metric's z-scores over its cells with a
        target score (the statistic does not change; the two metrics' scores share a scale).
    rng : int, Generator, SeedSequence or None
        Seed of the swap masks (recorded in attrs).
    spa_resamples, spa_rng, draws
        The statistic's own sign draws, as ``n_resamples``, ``rng`` and ``draws`` of
        :func:`xcorrstat.soft_pairwise_accuracy` (``draws="mt-metrics-eval"``: its seed 4 by
        default). The sign matrix is fixed across the test's draws, as in mt-metrics-eval.

    Returns
    -------
    Dataset
        ``soft_pairwise_accuracy`` over metric; over (metric, other_metric): ``delta``
        (SPA of metric minus that of other_metric, from the inputs both have) and ``pvalue``,
        the share of draws whose swapped difference reaches ``delta`` (one-sided, metric
        better; ``k / n_resamples`` as mt-metrics-eval counts). A system without a cell that
        has both metrics and the target (a system without any target score) is left out of
        that pair of metrics, in the observed value and in every draw, as
        :func:`~xcorrstat.soft_pairwise_accuracy` leaves it out; then an input where a kept
        system lacks either metric or the target is left out. NaN on the diagonal, and where
        fewer than 2 systems or no input are left. Dask-backed scores give a Dask-backed result
        (computing it gives the eager values).

    Notes
    -----
    The draws' SPAs are computed in float64 with the rounding tolerance of ``draws="by-id"``
    whatever ``draws`` is, and so is ``delta``, so that draws and observed value share their
    arithmetic; ``soft_pairwise_accuracy`` is the statistic itself (float32 in the
    ``"mt-metrics-eval"`` mode). Where cells are missing, ``delta`` comes from the inputs
    the pair keeps and so may differ from the difference of the two metrics' values.

    Examples
    --------
    >>> import xcorrstat
    >>> ds = xcorrstat.datasets.summeval()[["expert_relevance", "meteor", "bertscore_f1"]]
    >>> res = xcorrstat.soft_pairwise_accuracy_test(ds, target="expert_relevance", n_resamples=50, rng=0,
    ...                                             spa_resamples=200, spa_rng=0)
    >>> res["pvalue"].dims, bool(res["pvalue"].isnull()[0, 0])
    (('metric', 'other_metric'), True)
    """
    batch = OPTIONS["batch"]
    x, z, n_resamples, spa_resamples, batch = _soft_pairwise_accuracy_test_iv(
        data, target, metrics, n_resamples, spa_resamples, draws, batch)
    seed = resolve_seed(rng)
    lazy = x.chunks is not None or z.chunks is not None
    spa = soft_pairwise_accuracy(data, target=target, metrics=list(x[METRIC].values), n_resamples=spa_resamples,
                                 rng=spa_rng, draws=draws)
    spa_seed = int(spa.attrs["rng"])
    m, s, n_inp = x.shape
    q = s * (s - 1) // 2
    per_draw = m * spa_resamples * s + 2 * s * n_inp + 3 * spa_resamples * q
    batch = batch or min(n_resamples, draws_within(block_elems(), per_draw))
    delta, pvalue = _tested(x, z, signs_of=partial(_signs, draws, spa_seed, spa_resamples), seed=seed,
                            n_resamples=n_resamples, batch=batch)
    coords = {METRIC: x[METRIC].values, OTHER: x[METRIC].values}
    out = xr.Dataset({"soft_pairwise_accuracy": spa["soft_pairwise_accuracy"],
                      "delta": ((METRIC, OTHER), delta), "pvalue": ((METRIC, OTHER), pvalue)},
                     coords=coords)
    out.attrs = {"test": "permutation", "permute": f"{SYSTEM}, {INPUT} (every cell)", "n_resamples": n_resamples,
                 "rng": seed, "spa_resamples": spa_resamples, "spa_rng": spa_seed, "draws": draws,
                 "pvalue": "fraction", "alternative": "greater", "batch": batch}
    return out if lazy else compute_with_progress(out, True)
