"""Permutation draws for every pair of metrics at once, in parallel through Dask.

Work is split into blocks of metric pairs x blocks of draw ids. Every block makes its
masks from the draw ids (:func:`.draws.permutation_masks`), so each pair sees exactly
the masks :func:`xcorrstat.permutation_test` would use with the same seed -- the
draws are shared by all pairs and do not depend on the block sizes or the scheduler.
"""

from __future__ import annotations

import warnings
from typing import Any

import dask
import dask.array as dsa
import numpy as np
import xarray as xr
from dask.array.core import PerformanceWarning
from numpy.typing import ArrayLike

from .._types import Level, Method, SwapUnit
from ..schema import INPUT, METRIC, SYSTEM, check_finite
from .draws import draws_per_task, fill_draws, permutation_masks
from .engine import BLAS_ONE_THREAD, BLOCK_ELEMS, draws_within, raised_batch, runs_in_one_block
from .swapstats import draw_deltas

__all__ = ["pair_permutation_draws", "default_pair_chunk"]

PAIR_DIM = "pair"


def default_pair_chunk(n_pairs: int) -> int:
    """Pairs per task: about four tasks per core, at most 64 pairs."""
    return max(1, min(64, -(-n_pairs // max(4 * dask.system.CPU_COUNT, 1))))


def _per_pair_draw(s: int, i: int, level: Level, method: Method) -> int:
    """Rough float64 temporaries per pair and draw."""
    if level == "input":
        return i * (16 if method in ("pearson", "kendall") else 8 * s)
    if level == "system":
        return 8 * s if method == "pearson" else 6 * s * i
    if level == "within_system":  # the swapped matrices are built: no mask-linear kernel here
        return 6 * s * i
    return 16 if method == "pearson" else 6 * s * i


def _pair_block(x: np.ndarray, z: np.ndarray, pi: ArrayLike, pk: ArrayLike, ids: ArrayLike, *, seed: int,
                scheme: SwapUnit, batch: int, kw: dict[str, Any]) -> np.ndarray:
    """One task: x (..., M, S, I), z (..., S, I), pair indices, draw ids -> (..., pairs, draws)."""
    with BLAS_ONE_THREAD:
        check_finite(x, "metric scores")
        check_finite(z, "target scores")
        pi, pk, ids = (np.asarray(a).reshape(-1) for a in (pi, pk, ids))
        xa, ya = x[..., pi, :, :], x[..., pk, :, :]
        za = np.broadcast_to(z[..., None, :, :], xa.shape)
        deltas = draw_deltas(xa, ya, za, kw)
        out = np.empty(xa.shape[:-2] + (ids.size,), dtype=np.float64)
        s, i = x.shape[-2:]

        def masks(chunk: np.ndarray) -> list[np.ndarray]:
            return [permutation_masks(seed, chunk, s, i, scheme)]

        return fill_draws(out, ids, batch, masks, deltas)


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
) -> xr.DataArray:
    """Draws of ``r(X_i', Z) - r(X_k', Z)`` for pairs ``(i, k)``: DataArray (..., pair, resample).

    ``x`` has a ``metric`` dim; ``pairs`` holds the metric positions ``i`` and ``k``.
    Lazy (Dask) unless the data are eager and the work is small.
    """
    pi, pk = (np.asarray(p, dtype=np.int64) for p in pairs)
    x, z = xr.broadcast(x, z, exclude=[METRIC])
    lead = [d for d in x.dims if d not in (METRIC, SYSTEM, INPUT)]
    x = x.transpose(*lead, METRIC, SYSTEM, INPUT)
    z = z.transpose(*lead, SYSTEM, INPUT)
    s, i = x.sizes[SYSTEM], x.sizes[INPUT]
    n_lead = int(np.prod([x.sizes[d] for d in lead])) if lead else 1
    if pair_chunk is None:
        pair_chunk = default_pair_chunk(pi.size)
    per_draw = pair_chunk * n_lead * _per_pair_draw(s, i, kw["level"], kw["method"])
    if batch is None:
        batch = draws_within(BLOCK_ELEMS, per_draw)
    # at least ~8 MB of temporaries per batch: one draw at a time costs more in overhead than in arithmetic
    batch = raised_batch(batch, per_draw, n_resamples)
    coords = {k: v for k, v in x.coords.items() if not set(v.dims) & {METRIC, SYSTEM, INPUT}}
    dims = lead + [PAIR_DIM, "resample"]
    opts: dict[str, Any] = dict(seed=seed, scheme=scheme, batch=batch, kw=kw)
    eager = x.chunks is None and z.chunks is None
    if eager and runs_in_one_block(n_lead * pi.size * s * i * n_resamples):
        out = _pair_block(x.values, z.values, pi, pk, np.arange(n_resamples), **opts)
        return xr.DataArray(out, dims=dims, coords=coords)
    xd = x.chunk({METRIC: -1, SYSTEM: -1, INPUT: -1}).data
    zd = z.chunk({SYSTEM: -1, INPUT: -1}).data
    if lead:
        zd = zd.rechunk(xd.chunks[: len(lead)] + zd.chunks[len(lead):])
    pid = dsa.from_array(pi, chunks=pair_chunk)
    kid = dsa.from_array(pk, chunks=pair_chunk)
    per_task = draws_per_task(n_resamples, max(batch, min(n_resamples, 1000)))  # a bounded number of tasks
    ids = dsa.arange(n_resamples, chunks=per_task, dtype=np.int64)
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
            **opts,
        )
    return xr.DataArray(out, dims=dims, coords=coords)
