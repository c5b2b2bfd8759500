"""Run batches of draws over labelled data, in parallel through Dask.

Work is split into blocks of metrics × blocks of draw ids. Each block computes its
draws from their ids (:mod:`.draws`), so the numbers do not depend on the block
sizes, the batch size or the scheduler. Blocks become Dask tasks through
:func:`xarray.apply_ufunc` (``dask="parallelized"``): the local threaded scheduler
by default, a ``dask.distributed`` cluster when a Client is active.
"""

from __future__ import annotations

import sys
import threading
import warnings
from collections.abc import Hashable, Mapping, Sequence
from typing import Any, Protocol, TypeVar

import dask
import dask.array as dsa
from dask.array.core import PerformanceWarning
import numpy as np
import xarray as xr
from numpy.typing import ArrayLike
from threadpoolctl import ThreadpoolController

from .._types import Level, Method
from ..schema import INPUT, SYSTEM, check_finite
from .draws import bootstrap_indices, draws_per_task, fill_draws
from .statistics import calibration_table, resampled_calibration, resampled_level_correlation

__all__ = [
    "RESAMPLE_DIM",
    "bootstrap_draws",
    "compute_with_progress",
    "default_batch",
    "default_metric_chunk",
    "batch_plan",
    "draws_within",
    "raised_batch",
]

RESAMPLE_DIM = "resample"
#: float64 temporaries one task of draws may hold (~256 MB): the one block-size policy of every resampling path.
BLOCK_ELEMS = 32_000_000
#: Work (cells x draws) below which eager data is computed in one block, without Dask.
SMALL_WORK = 20_000_000
#: float64 temporaries a batch of draws may always use (``batch`` is raised to fill them).
MIN_BATCH_ELEMS = 1_000_000


class Computable(Protocol):
    """Anything Dask can compute: an xarray object or a Dask collection."""

    def compute(self, **kwargs: Any) -> Any: ...

    def persist(self, **kwargs: Any) -> Any: ...


Computed = TypeVar("Computed", bound=Computable)


def default_metric_chunk(n_metrics: int) -> int:
    """Metrics per task: about two tasks per core along ``metric``."""
    return max(1, -(-n_metrics // max(2 * dask.system.CPU_COUNT, 1)))


def draws_within(budget: int, per_draw: int) -> int:
    """Draws (1 to 1,000) whose float64 temporaries, ``per_draw`` elements each, fit in ``budget``.

    Examples
    --------
    >>> draws_within(1000, 300), draws_within(10, 300)
    (3, 1)
    """
    return int(max(1, min(1000, budget // max(per_draw, 1))))


def raised_batch(batch: int, per_draw: int, n_resamples: int) -> int:
    """``batch`` raised to the draws that fit in ``MIN_BATCH_ELEMS``, and at most ``n_resamples``.

    Examples
    --------
    >>> raised_batch(1, 100, 50), raised_batch(1, 10**7, 50)
    (50, 1)
    """
    return int(min(max(batch, draws_within(MIN_BATCH_ELEMS, per_draw)), n_resamples))


def default_batch(n_metrics: int, n_systems: int, n_inputs: int, level: Level, method: Method,
                  calibrate: bool = False, *, budget: int = BLOCK_ELEMS) -> int:
    """Draws per batch (and per task) so one task's temporaries stay near 256 MB (``budget`` elements).

    The estimate counts the float64 temporaries one draw needs for ``n_metrics``
    metrics: pair arrays at system level, per-input sums (Kendall) or per-input
    weighted ranks (Pearson/Spearman) at input level, the gathered cells at global level;
    with ``calibrate``, the pair weights and calibration curve of every pair.

    Examples
    --------
    >>> default_batch(10, 20, 100, "system", "pearson")
    1000
    """
    s, i = n_systems, n_inputs
    if level == "within_system":  # input level with the dims' roles swapped
        level, s, i = "input", n_inputs, n_systems
    if calibrate:
        pairs = s * (s - 1) // 2 * (i if level == "input" else 1)
        return draws_within(budget, n_metrics * 8 * pairs + i + s)
    if level == "system":
        per_draw = n_metrics * (4 * s * s + 2 * s) + i
    elif level == "input":
        per_draw = n_metrics * i * (12 if method == "kendall" else 8 * s) + i + s
    else:
        per_draw = n_metrics * s * i * (12 if method == "kendall" else 8)
    return draws_within(budget, per_draw)


def batch_plan(x: xr.DataArray, n_resamples: int, batch: int, *, level: Level, method: Method,
               calibrate: bool = False) -> tuple[int, int]:
    """Draws computed together and draws per task for ``batch`` on scores ``x``.

    A batch holds at least the draws whose temporaries fit in ``MIN_BATCH_ELEMS``
    float64 values (about 8 MB): on tiny data, one draw at a time would cost far more
    in Python overhead than the statistic itself, and memory stays bounded by the
    larger of ``batch`` and that floor. A task holds at least ``batch`` draws and at
    most ``MAX_DRAW_TASKS`` tasks split a run. Neither changes any draw's value.
    """
    s, i = x.sizes[SYSTEM], x.sizes[INPUT]
    units = max(1, x.size // max(s * i, 1))  # metrics x any batch dims
    floor = default_batch(units, s, i, level, method, calibrate, budget=MIN_BATCH_ELEMS)
    batch = int(min(max(batch, floor), n_resamples))
    return batch, draws_per_task(n_resamples, batch)


class _SingleThreadedBlas:
    """While any task runs, BLAS uses one thread: Dask already runs one task per core,
    and nested BLAS threads on the same cores slow every task down many times over.

    Reference-counted across Dask's worker threads; the user's setting comes back
    when the last running task ends.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._depth = 0
        self._limiter: Any = None
        # made on first use (it inspects the loaded libraries once)
        self._controller: ThreadpoolController | None = None

    def __enter__(self) -> None:
        with self._lock:
            if self._depth == 0:
                controller = self._controller
                if controller is None:
                    controller = self._controller = ThreadpoolController()
                self._limiter = controller.limit(limits=1, user_api="blas")
            self._depth += 1

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._depth -= 1
            if self._depth == 0 and self._limiter is not None:
                self._limiter.restore_original_limits()
                self._limiter = None


BLAS_ONE_THREAD = _SingleThreadedBlas()


def _block_task(x: np.ndarray, z: np.ndarray, ids: ArrayLike, **kwargs: Any) -> np.ndarray:
    """A Dask task: one block with single-threaded BLAS."""
    with BLAS_ONE_THREAD:
        return _block(x, z, ids, **kwargs)


def _block(x: np.ndarray, z: np.ndarray, ids: ArrayLike, *, seed: int, dims: Sequence[str], sizes: Sequence[int],
           batch: int, kw: dict[str, Any]) -> np.ndarray:
    """Statistic and n (and the re-calibrated epsilon) of draws ``ids`` for one block:
    x, z (..., S, I) -> (2 or 3, ..., B)."""
    check_finite(x, "metric scores")
    check_finite(z, "target scores")
    ids = np.asarray(ids).reshape(-1)
    calibrate = _calibrates(kw)
    out = np.empty((3 if calibrate else 2,) + x.shape[:-2] + (ids.size,), dtype=np.float64)
    table = calibration_table(x, z, level=kw["level"]) if calibrate else None  # pairs sorted once per block

    def statistic(*indices: np.ndarray) -> np.ndarray:
        idx = dict(zip(dims, indices))
        parts: tuple[np.ndarray, ...]
        if calibrate:
            parts = resampled_calibration(x, z, level=kw["level"], variant=kw["variant"], table=table,
                                          sys_idx=idx.get(SYSTEM), inp_idx=idx.get(INPUT))
        else:
            parts = resampled_level_correlation(x, z, sys_idx=idx.get(SYSTEM), inp_idx=idx.get(INPUT), **kw)
        return np.stack(np.broadcast_arrays(*parts))

    # batches of draws, never one draw at a time; indices are made once per block of draw ids
    return fill_draws(out, ids, batch, lambda chunk: bootstrap_indices(seed, chunk, sizes), statistic)


def _calibrates(kw: Mapping[str, Any]) -> bool:
    return isinstance(kw.get("epsilon"), str) and kw["epsilon"] == "calibrate"


def bootstrap_draws(
    x: xr.DataArray,
    z: xr.DataArray,
    *,
    seed: int,
    resample: tuple[str, ...],
    n_resamples: int,
    batch: int,
    metric_chunk: int | None = None,
    **kw: Any,
) -> tuple[xr.DataArray, ...]:
    """Lazy (Dask) draws of a level correlation: ``(r, n)`` over (..., resample).

    With ``epsilon="calibrate"`` the metric-tie threshold is re-calibrated in every
    draw and ``(r, n, epsilon)`` is returned. ``x`` has a ``metric`` dim; it is chunked
    along ``metric`` (``metric_chunk`` metrics per task; default about two tasks per
    core) and the draws along ``resample`` (:func:`batch_plan`: ``batch`` draws at a
    time, raised on tiny data, and at most ``MAX_DRAW_TASKS`` blocks of draws).
    ``system`` and ``input`` are never split.
    """
    sizes = [x.sizes[d] for d in resample]
    x, z = xr.broadcast(x, z)  # z is shared: broadcasting is a view per block
    batch, per_task = batch_plan(x, n_resamples, batch, level=kw["level"], method=kw["method"],
                                 calibrate=_calibrates(kw))
    lead = [d for d in x.dims if d not in (SYSTEM, INPUT)]
    x = x.transpose(*lead, SYSTEM, INPUT)
    z = z.transpose(*lead, SYSTEM, INPUT)
    coords = {k: v for k, v in x.coords.items() if not set(v.dims) & {SYSTEM, INPUT}}
    dims = lead + [RESAMPLE_DIM]
    eager = x.chunks is None and z.chunks is None
    if eager and runs_in_one_block(x.size * n_resamples):
        # small eager problems: one block in this thread beats building a task graph
        out = _block_task(x.values, z.values, np.arange(n_resamples), seed=seed, dims=resample, sizes=sizes,
                          batch=batch, kw=kw)
        return _draw_arrays(out, dims, coords)
    if metric_chunk is None:
        # about two tasks per core along `metric` (results do not depend on it)
        metric_chunk = default_metric_chunk(x.sizes["metric"])
    chunks = {"metric": metric_chunk, SYSTEM: -1, INPUT: -1}
    xd = x.chunk(chunks).data
    zd = z.chunk(chunks).data
    zd = zd.rechunk(xd.chunks)
    # at most MAX_DRAW_TASKS blocks of draws, however small `batch` is
    ids = dsa.arange(n_resamples, chunks=per_task, dtype=np.int64)
    letters = "abcdefghjklmnopq"[: len(lead)]
    with warnings.catch_warnings():
        # many small draw chunks are deliberate when `batch` is small
        warnings.simplefilter("ignore", PerformanceWarning)
        out = dsa.blockwise(
            _block_task, "k" + letters + "r",
            xd, letters + "si",
            zd, letters + "si",
            ids, "r",
            new_axes={"k": 3 if _calibrates(kw) else 2},
            concatenate=True,
            dtype=np.float64,
            meta=np.empty((0,) * (len(lead) + 2), dtype=np.float64),
            seed=seed, dims=resample, sizes=sizes, batch=batch, kw=kw,
        )
    return _draw_arrays(out, dims, coords)


def _draw_arrays(out: Any, dims: Sequence[Hashable], coords: Mapping[Hashable, Any]) -> tuple[xr.DataArray, ...]:
    """(r, n[, epsilon]) as DataArrays from a block's stacked output."""
    parts = [out[0], out[1].astype(np.int64)] + ([out[2]] if out.shape[0] == 3 else [])
    return tuple(xr.DataArray(p, dims=dims, coords=coords) for p in parts)


def runs_in_one_block(work: int) -> bool:
    """Whether eager work of ``work`` cells x draws is computed at once, without a task graph."""
    return work <= SMALL_WORK and not client_active()


def client_active() -> bool:
    """Whether a ``dask.distributed`` Client is active (work then runs on its cluster)."""
    try:
        from distributed import get_client

        get_client()
    except (ImportError, ValueError):
        return False
    return True


def compute_with_progress(obj: Computed, enabled: bool) -> Computed:
    """Compute ``obj`` on the active scheduler, with a progress bar if asked.

    With a ``dask.distributed`` Client active the work runs on its cluster and
    :func:`distributed.progress` shows the bar; otherwise Dask's local
    :class:`~dask.diagnostics.ProgressBar` does (both on stderr or in the notebook).
    """
    if not enabled:
        return obj.compute()
    if not client_active():
        from dask.diagnostics import ProgressBar

        with ProgressBar(out=sys.stderr):
            return obj.compute()
    from distributed import progress

    persisted = obj.persist()
    progress(persisted)
    return persisted.compute()
