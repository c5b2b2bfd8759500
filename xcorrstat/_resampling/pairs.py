"""Permutation draws for every pair of metrics at once, in parallel through Dask.

Work is split into blocks of metric pairs x blocks of draw ids. Every block makes its
masks from the draw ids (:func:`.draws.permutation_masks`), so each pair sees exactly
the masks :func:`xcorrstat.permutation_test` would use with the same seed -- the
draws are shared by all pairs and do not depend on the block sizes or the scheduler.

System level takes another route: a task holds a block of draw ids and **every** pair, and
one matrix product per system over all metrics gives all pairs' draws. Pearson on complete
data (no NaN in the metrics' z-scores or the target) takes
:mod:`xcorrstat._kernels.linear.allpairs`; any other method, and any missing cells, take
:mod:`xcorrstat._kernels.linear.system_swap` (counts and target sums per metric, linear in the
masks too). Pearson at input, global and within-system level (``average="macro"``) takes the
same route with :mod:`xcorrstat._kernels.linear.allpairs` (one product per input over all
metrics, any missing cells; within-system level as the input level of the transposed matrices).
Lazy data, whose completeness is only known inside a task, choose the kernel label by label of the
leading dims (e.g. one language pair).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np
import xarray as xr
from numpy.typing import ArrayLike

from .._options import OPTIONS
from .._types import SwapUnit
from .._kernels.swap import SwapDeltas
from .._kernels.linear.allpairs import prepare_allpairs, prepare_allpairs_input
from .._kernels.linear.system_swap import prepare_system_swap
from .._schema import INPUT, METRIC, SYSTEM, check_finite
from .draws import DRAW_BLOCK, BlockMemo, draws_per_task, fill_draws, permutation_masks
from .engine import on_threads, runs_in_one_block, runs_on_threads
from .memory import (allpairs_batch, allpairs_per_draw, default_pair_chunk, pair_batch, pair_block_plan,
                     pair_fixed, pair_step)
from .._kernels.custom import is_own
from .swapstats import draw_deltas, standardise
from .workers import dask_input, parallelism, task_settings

__all__ = ["all_complete", "allpairs_task_draws", "default_pair_chunk", "pair_block_plan", "pair_permutation_draws",
           "uses_allpairs"]  # default_pair_chunk and pair_block_plan: from .memory, the one memory plan

PAIR_DIM = "pair"


def uses_allpairs(kw: dict[str, Any]) -> bool:
    """Whether the level and method take the all-pairs route: system level, any method; input, global and
    within-system level, Pearson (the per-input or per-system correlations averaged with equal weights);
    never with epsilon."""
    if kw.get("epsilon") or is_own(kw["method"]):
        return False
    if kw["level"] == "system":
        return True
    return bool(kw["level"] in ("input", "global", "within_system") and kw["method"] == "pearson"
                and kw.get("average", "macro") == "macro")


def _complete(zx: np.ndarray, z: np.ndarray) -> bool:
    """No missing z-score (a missing cell or a constant metric) and no missing target cell."""
    return not (np.isnan(zx).any() or np.isnan(z).any())


def all_complete(x: np.ndarray, z: np.ndarray) -> bool:
    """Whether every label of (..., M, S, I) scores x and (..., S, I) target z takes the all-pairs kernel."""
    if np.isnan(x).any() or np.isnan(z).any():  # a missing cell: no need to standardise to know
        return False
    return _complete(standardise(x), z)


def _pair_block(x: np.ndarray, z: np.ndarray, pi: ArrayLike, pk: ArrayLike, ids: ArrayLike, *, seed: int,
                scheme: SwapUnit, batch: int, kw: dict[str, Any], tune_allocator: bool = False) -> np.ndarray:
    """One task: x (..., M, S, I), z (..., S, I), pair indices, draw ids -> (..., pairs, draws)."""
    with task_settings(tune_allocator):
        check_finite(x, "metric scores")
        check_finite(z, "target scores")
        pi, pk, ids = (np.asarray(a).reshape(-1) for a in (pi, pk, ids))
        xa, ya = x[..., pi, :, :], x[..., pk, :, :]
        za = np.broadcast_to(z[..., None, :, :], xa.shape)
        used = np.unique(np.concatenate([pi, pk]))  # each metric standardised once, not once per pair
        zs = np.empty(x.shape)
        zs[..., used, :, :] = standardise(x[..., used, :, :])
        deltas = draw_deltas(xa, ya, za, kw, standardised=(zs[..., pi, :, :], zs[..., pk, :, :]))
        out = np.empty(xa.shape[:-2] + (ids.size,), dtype=np.float64)
        s, i = x.shape[-2:]

        memo = BlockMemo()  # a block of draw ids two batches cut is drawn once

        def masks(chunk: np.ndarray) -> list[np.ndarray]:
            return [permutation_masks(seed, chunk, s, i, scheme, memo=memo)]

        return fill_draws(out, ids, batch, masks, deltas)


def _label_deltas(x: np.ndarray, z: np.ndarray, pairs: tuple[np.ndarray, np.ndarray],
                  kw: dict[str, Any]) -> SwapDeltas:
    """The all-pairs kernel of one label: x (M, S, I), z (S, I) -> ``deltas(masks) -> (P, B)``."""
    if kw["level"] != "system":
        return _without_skipped(prepare_allpairs_input(standardise(x), z, pairs, level=kw["level"],
                                                       min_pairs=kw["min_pairs"]), x, z, pairs, kw["skipna"])
    if kw["method"] == "pearson":
        zx = standardise(x)
        if _complete(zx, z):
            return prepare_allpairs(zx, z, pairs, min_pairs=kw["min_pairs"])
    return prepare_system_swap(x, z, pairs, method=kw["method"], variant=kw["variant"], min_pairs=kw["min_pairs"],
                               skipna=kw["skipna"])


def _without_skipped(deltas: SwapDeltas, x: np.ndarray, z: np.ndarray, pairs: tuple[np.ndarray, np.ndarray],
                     skipna: bool) -> SwapDeltas:
    """With ``skipna=False``, NaN for every pair where either metric or the target misses a cell."""
    if skipna:
        return deltas
    gaps = np.isnan(x).any(axis=(-2, -1)) | np.isnan(z).any()
    missing = (gaps[pairs[0]] | gaps[pairs[1]])[:, None]
    return lambda m: np.where(missing, np.nan, deltas(m))


def _labels_block(x: np.ndarray, z: np.ndarray, ids: ArrayLike, *, pairs: tuple[np.ndarray, np.ndarray],
                  seed: int, scheme: SwapUnit, batch: int, kw: dict[str, Any],
                  tune_allocator: bool = False) -> np.ndarray:
    """x (..., M, S, I), z (..., S, I), draw ids -> (..., pairs, draws), one label of the leading dims
    after the other (one label's operands in memory at a time), each with its kernel."""
    with task_settings(tune_allocator):
        check_finite(x, "metric scores")
        check_finite(z, "target scores")
        pi, pk = pairs
        ids = np.asarray(ids).reshape(-1)
        n_labels = int(np.prod(x.shape[:-3], dtype=np.int64))
        xf = x.reshape((n_labels,) + x.shape[-3:])
        zf = z.reshape((n_labels,) + z.shape[-2:])
        out = np.empty((n_labels, pi.size, ids.size), dtype=np.float64)
        s, i = x.shape[-2:]

        memo = BlockMemo()  # a block of draw ids two batches cut is drawn once

        def masks(chunk: np.ndarray) -> list[np.ndarray]:
            return [permutation_masks(seed, chunk, s, i, scheme, memo=memo)]

        for lab in range(n_labels):
            fill_draws(out[lab], ids, batch, masks, _label_deltas(xf[lab], zf[lab], (pi, pk), kw))
        return out.reshape(x.shape[:-3] + (pi.size, ids.size))


def _allpairs_block(x: np.ndarray, z: np.ndarray, ids: ArrayLike, **opts: Any) -> np.ndarray:
    """One task of the all-pairs route on data whose completeness is not known up front (lazy data, or
    complete system-level Pearson): each label takes the complete-data Pearson kernel if it can."""
    return _labels_block(x, z, ids, **opts)


def _system_block(x: np.ndarray, z: np.ndarray, ids: ArrayLike, **opts: Any) -> np.ndarray:
    """One task of the all-pairs route on eager data with missing cells or a rank method."""
    return _labels_block(x, z, ids, **opts)


def allpairs_task_draws(n_resamples: int, batch: int, label_tasks: int = 1) -> int:
    """Draws per task of the all-pairs route, at least ``batch``.

    Each task prepares its label's operands once (z-scores, exact parts: about as long as
    computing two blocks of draws), so tasks are few and large: whole blocks of
    ``DRAW_BLOCK`` draw ids, about one task per core counting the ``label_tasks`` blocks
    of the leading dims, two per core on long runs (for balance).

    Examples
    --------
    >>> allpairs_task_draws(1000, 600), allpairs_task_draws(1000, 100, label_tasks=1000)
    (600, 1000)
    """
    cores = parallelism()
    blocks = -(-n_resamples // DRAW_BLOCK)
    tasks = 2 * cores if blocks * label_tasks >= 4 * cores else cores
    per_label = max(1, -(-tasks // max(label_tasks, 1)))  # draw tasks per label block
    per_task = DRAW_BLOCK * -(-blocks // per_label)
    return min(draws_per_task(n_resamples, max(batch, per_task)), max(n_resamples, 1))


def pair_permutation_draws(
    x: xr.DataArray,
    z: xr.DataArray,
    *,
    pairs: tuple[np.ndarray, np.ndarray],
    seed: int,
    scheme: SwapUnit,
    n_resamples: int,
    kw: dict[str, Any],
    pair_chunk: int | None = None,
    batch: int | None = None,
    first: int = 0,
) -> xr.DataArray:
    """Draws of ``r(X_i', Z) - r(X_k', Z)`` for pairs ``(i, k)``: DataArray (..., pair, resample).

    The draws are those of ids ``first, ..., first + n_resamples - 1`` (a run continued).

    ``x`` has a ``metric`` dim; ``pairs`` holds the metric positions ``i`` and ``k``.
    Lazy (Dask) unless the data are eager and the work is small. System-level Pearson
    on complete data (or lazy data) takes the all-pairs route (module docstring).
    """
    pi, pk = (np.asarray(p, dtype=np.int64).reshape(-1) for p in pairs)
    x, z = xr.broadcast(x, z, exclude=[METRIC])
    lead = [d for d in x.dims if d not in (METRIC, SYSTEM, INPUT)]
    x = x.transpose(*lead, METRIC, SYSTEM, INPUT)
    z = z.transpose(*lead, SYSTEM, INPUT)
    s, i = x.sizes[SYSTEM], x.sizes[INPUT]
    n_lead = int(np.prod([x.sizes[d] for d in lead])) if lead else 1
    pair_chunk, per_draw, budget = pair_block_plan(pi.size, s, i, n_lead, kw, pair_chunk)
    # at least ~8 MB of temporaries per batch: one draw at a time costs more in overhead than in arithmetic
    draws = pair_batch(batch, per_draw, budget, n_resamples)
    coords = {k: v for k, v in x.coords.items() if not set(v.dims) & {METRIC, SYSTEM, INPUT}}
    dims = lead + [PAIR_DIM, "resample"]
    opts: dict[str, Any] = dict(seed=seed, scheme=scheme, kw=kw, tune_allocator=OPTIONS["tune_worker_allocator"])
    eager = x.chunks is None and z.chunks is None
    if uses_allpairs(kw):
        # eager data known to be complete (Pearson) or not; lazy data choose label by label inside the task
        simple = eager and kw["method"] == "pearson" and all_complete(x.values, z.values)
        general = not simple
        block = _system_block if eager and general else _allpairs_block
        return _allpairs_draws(x, z, (pi, pk), n_resamples, batch, opts, dims, coords, block=block, general=general,
                              first=first)
    if eager and runs_in_one_block(n_lead * pi.size * s * i * n_resamples):
        # all pairs at once if they fit in the whole budget, else `pair_chunk` pairs at a time
        step = pair_step(pi.size, pair_chunk, n_lead * pair_fixed(s, i, kw), draws, per_draw)
        out = np.concatenate([_pair_block(x.values, z.values, pi[k:k + step], pk[k:k + step],
                                          np.arange(first, first + n_resamples),
                                          batch=draws, **opts) for k in range(0, pi.size, step)], axis=-2)
        return xr.DataArray(out, dims=dims, coords=coords)
    per_task = draws_per_task(n_resamples, max(draws, min(n_resamples, 1000)))  # a bounded number of tasks
    if eager and runs_on_threads(n_lead * pi.size * s * i * n_resamples):
        out = _threaded_pair_blocks(x.values, z.values, pi, pk, np.arange(first, first + n_resamples), pair_chunk,
                                    per_task, dict(opts, batch=draws))
        return xr.DataArray(out, dims=dims, coords=coords)
    import dask.array as dsa
    from dask.array.core import PerformanceWarning

    xd, zd = _dask_scores(x, z, len(lead))
    pid = dsa.from_array(pi, chunks=pair_chunk)
    kid = dsa.from_array(pk, chunks=pair_chunk)
    ids = dsa.arange(first, first + n_resamples, chunks=per_task, dtype=np.int64)
    letters = "abcdefghjklnoq"[: len(lead)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PerformanceWarning)
        out = dsa.blockwise(
            _pair_block, letters + "pr",
            xd, letters + "msi",
            zd, letters + "si",
            pid, "p",
            kid, "p",
            ids, "r",
            concatenate=True,
            dtype=np.float64,
            meta=np.empty((0,) * (len(lead) + 2), dtype=np.float64),
            batch=draws,
            **opts,
        )
    return xr.DataArray(out, dims=dims, coords=coords)


def _threaded_pair_blocks(x: np.ndarray, z: np.ndarray, pi: np.ndarray, pk: np.ndarray, ids: np.ndarray,
                          pair_chunk: int, per_task: int, opts: dict[str, Any]) -> np.ndarray:
    """The tasks of the task graph (blocks of ``pair_chunk`` pairs x ``per_task`` draw ids) on this process's
    threads: (..., pairs, draws), the same numbers (draws are keyed by id)."""
    def task(k: int, r: int) -> Callable[[], np.ndarray]:
        return lambda: _pair_block(x, z, pi[k:k + pair_chunk], pk[k:k + pair_chunk], ids[r:r + per_task], **opts)

    parts = on_threads([task(k, r) for k in range(0, pi.size, pair_chunk) for r in range(0, ids.size, per_task)])
    rows = -(-ids.size // per_task)
    return np.concatenate([np.concatenate(parts[n:n + rows], axis=-1) for n in range(0, len(parts), rows)], axis=-2)


def _dask_scores(x: xr.DataArray, z: xr.DataArray, n_lead_dims: int, per_label: bool = False) -> tuple[Any, Any]:
    """Dask arrays of x (..., M, S, I) and z (..., S, I): one chunk along metric, system, input; z's
    leading chunks those of x. Eager data are split one label of the leading dims a block if
    ``per_label`` (lazy data keep their chunks) and go through :func:`~.workers.dask_input`: blocks of
    the graph, sent again if a worker is lost."""
    if x.chunks is None and z.chunks is None:
        xd = dask_input(x.values, (1 if per_label else -1,) * n_lead_dims + (-1, -1, -1))
        return xd, dask_input(z.values, xd.chunks[:n_lead_dims] + (-1, -1))
    xd = x.chunk({METRIC: -1, SYSTEM: -1, INPUT: -1}).data
    zd = z.chunk({SYSTEM: -1, INPUT: -1}).data
    if n_lead_dims:
        zd = zd.rechunk(xd.chunks[:n_lead_dims] + zd.chunks[n_lead_dims:])
    return xd, zd


def _allpairs_draws(x: xr.DataArray, z: xr.DataArray, pairs: tuple[np.ndarray, np.ndarray], n_resamples: int,
                    batch: int | None, opts: dict[str, Any], dims: list[Hashable], coords: dict[Hashable, Any], *,
                    block: Any = _allpairs_block, general: bool = False, first: int = 0) -> xr.DataArray:
    """The all-pairs route: tasks over blocks of draw ids (and of the leading dims), every pair in each.

    Eager data are split one label of the leading dims a task; lazy data keep their chunks.
    """
    n_lead_dims = len(dims) - 2
    s, i, m = x.sizes[SYSTEM], x.sizes[INPUT], x.sizes[METRIC]
    lead_sizes = [x.sizes[d] for d in x.dims[:n_lead_dims]]
    n_lead = int(np.prod(lead_sizes)) if lead_sizes else 1
    per_draw = allpairs_per_draw(s, i, m, general, opts["kw"]["level"])
    batch = allpairs_batch(batch, per_draw, n_resamples)  # at most one block of draws: several tasks
    opts = dict(opts, pairs=pairs, batch=batch)
    eager = x.chunks is None and z.chunks is None
    if eager and runs_in_one_block(n_lead * (m * s * i + pairs[0].size * s) * n_resamples):
        out = block(x.values, z.values, np.arange(first, first + n_resamples), **opts)
        return xr.DataArray(out, dims=dims, coords=coords)
    import dask.array as dsa
    from dask.array.core import PerformanceWarning

    xd, zd = _dask_scores(x, z, n_lead_dims, per_label=True)
    label_tasks = int(np.prod([len(c) for c in xd.chunks[:n_lead_dims]]))
    per_task = allpairs_task_draws(n_resamples, batch, label_tasks)
    ids = dsa.arange(first, first + n_resamples, chunks=per_task, dtype=np.int64)
    letters = "abcdefghjklnoq"[:n_lead_dims]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PerformanceWarning)
        out = dsa.blockwise(
            block, letters + "pr",
            xd, letters + "msi",
            zd, letters + "si",
            ids, "r",
            new_axes={"p": pairs[0].size},
            concatenate=True,
            dtype=np.float64,
            meta=np.empty((0,) * (n_lead_dims + 2), dtype=np.float64),
            **opts,
        )
    return xr.DataArray(out, dims=dims, coords=coords)
