"""Run batches of draws over labelled data, in parallel through Dask.

Work is split into blocks of metrics × blocks of draw ids. Each block computes its
draws from their ids (:mod:`.draws`), so the numbers do not depend on the block
sizes, the batch size or the scheduler. Blocks become Dask tasks through
:func:`xarray.apply_ufunc` (``dask="parallelized"``): the local threaded scheduler
by default, a ``dask.distributed`` cluster when a Client is active.
"""

from __future__ import annotations

import contextlib
import sys
import warnings
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, Protocol, TypeVar

import numpy as np
import xarray as xr
from numpy.typing import ArrayLike

from .._types import Level, Statistic
from .._display import printable
from .._options import OPTIONS, show_progress
from .._schema import INPUT, METRIC, SYSTEM, check_finite
from .draws import bootstrap_indices, draws_per_task, fill_draws
from .memory import (block_elems, calibration_metrics, default_batch, draw_elems, draws_within, metric_step, min_batch,
                     process_elems, raised_batch)
from .statistics import calibration_table, global_tables, resampled_calibration, resampled_level_correlation
from .workers import (
    BLAS_ONE_THREAD,
    active_client,
    client_active,
    cluster_errors,
    cpu_count,
    dask_input,
    local_scheduler,
    parallelism,
    task_settings,
    worker_lost,
)

__all__ = [
    "BLAS_ONE_THREAD",  # from .workers, where tasks' settings live
    "RESAMPLE_DIM",
    "batch_plan",
    "block_elems",  # from .memory, the one memory plan, as the next four
    "blocks_of_cells",
    "bootstrap_draws",
    "client_active",  # from .workers
    "cluster_scores",
    "compute_with_progress",
    "default_batch",
    "default_metric_chunk",
    "draw_elems",
    "draws_within",
    "process_elems",
    "progress_line",
    "raised_batch",
    "runs_in_one_block",
    "spread_draws",
]

RESAMPLE_DIM = "resample"
#: Work (cells x draws) below which eager data is computed in one block, without Dask.
SMALL_WORK = 20_000_000

class Computable(Protocol):
    """Anything Dask can compute: an xarray object or a Dask collection."""

    def compute(self, **kwargs: Any) -> Any: ...

    def persist(self, **kwargs: Any) -> Any: ...


Computed = TypeVar("Computed", bound=Computable)


def default_metric_chunk(n_metrics: int) -> int:
    """Metrics per task: about two tasks per core (or per worker thread of a cluster) along ``metric``."""
    return max(1, -(-n_metrics // (2 * parallelism())))


def batch_plan(x: xr.DataArray, n_resamples: int, batch: int, *, level: Level, method: Statistic,
               calibrate: bool = False) -> tuple[int, int]:
    """Draws computed together and draws per task for ``batch`` on scores ``x``.

    A batch holds at least the draws whose temporaries fit in ``MIN_BATCH_ELEMS``
    float64 values (about 8 MB): on tiny data, one draw at a time would cost far more
    in Python overhead than the statistic itself, and memory stays bounded by the
    larger of ``batch`` and that floor. A task holds at least ``batch`` draws and at
    most ``MAX_DRAW_TASKS`` tasks split a run. With a ``dask.distributed`` Client active,
    the draws are split further when the blocks of metrics alone would give a worker thread
    fewer than two tasks (:func:`spread_draws`; the batch is then at most a task's draws).
    None of this changes any draw's value.
    """
    s, i = x.sizes[SYSTEM], x.sizes[INPUT]
    units = max(1, x.size // max(s * i, 1))  # metrics x any batch dims
    floor = min_batch(units, s, i, level, method, calibrate)
    batch = int(min(max(batch, floor), n_resamples))
    per_task = draws_per_task(n_resamples, batch)
    if active_client() is not None:  # a cluster: enough tasks for every worker thread
        n_metrics = x.sizes.get(METRIC, 1)
        per_task = spread_draws(n_resamples, per_task, -(-n_metrics // default_metric_chunk(n_metrics)))
        batch = min(batch, per_task)
    return batch, per_task


def spread_draws(n_resamples: int, per_task: int, blocks: int) -> int:
    """Draws per task, lowered so ``blocks`` blocks of metrics times the blocks of draws make at
    least two tasks per worker thread (:func:`parallelism`).

    Examples
    --------
    >>> spread_draws(1000, 1000, 100), spread_draws(1000, 1000, 1) == -(-1000 // (2 * parallelism()))
    (1000, True)
    """
    wanted = -(-2 * parallelism() // max(blocks, 1))  # blocks of draws
    return int(max(1, min(per_task, -(-n_resamples // wanted))))


def _block_task(x: np.ndarray, z: np.ndarray, ids: ArrayLike, *, metric_axis: int | None = None,
                tune_allocator: bool = False, **kwargs: Any) -> np.ndarray:
    """A Dask task: one block with single-threaded BLAS (:func:`~.workers.task_settings`). ``z`` lacks
    the metric axis of ``x`` at ``metric_axis`` (it is shared by the metrics) unless that is None."""
    with task_settings(tune_allocator):
        if metric_axis is not None:
            z = np.broadcast_to(np.expand_dims(z, metric_axis), x.shape)
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
    cells = None if calibrate else global_tables(x, z, **kw)  # global level: the cells found once per block

    def statistic(*indices: np.ndarray) -> np.ndarray:
        idx = dict(zip(dims, indices))
        parts: tuple[np.ndarray, ...]
        if calibrate:
            parts = resampled_calibration(x, z, level=kw["level"], variant=kw["variant"], table=table,
                                          sys_idx=idx.get(SYSTEM), inp_idx=idx.get(INPUT))
        else:
            parts = resampled_level_correlation(x, z, sys_idx=idx.get(SYSTEM), inp_idx=idx.get(INPUT), tables=cells,
                                                **kw)
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
    first: int = 0,
    **kw: Any,
) -> tuple[xr.DataArray, ...]:
    """Lazy (Dask) draws of a level correlation: ``(r, n)`` over (..., resample).

    With ``epsilon="calibrate"`` the metric-tie threshold is re-calibrated in every
    draw and ``(r, n, epsilon)`` is returned. ``x`` has a ``metric`` dim; it is chunked
    along ``metric`` (``metric_chunk`` metrics per task; default about two tasks per
    core) and the draws along ``resample`` (:func:`batch_plan`: ``batch`` draws at a
    time, raised on tiny data, and at most ``MAX_DRAW_TASKS`` blocks of draws).
    ``system`` and ``input`` are never split. The draws are those of ids ``first, ...,
    first + n_resamples - 1`` (a run continued).
    """
    sizes = [x.sizes[d] for d in resample]
    shared = METRIC not in z.dims
    x, z = xr.broadcast(x, z)  # views
    if shared:  # z is shared by the metrics: never copied along `metric` (broadcast inside each task)
        z = z.isel({METRIC: 0}, drop=True)
    batch, per_task = batch_plan(x, n_resamples, batch, level=kw["level"], method=kw["method"],
                                 calibrate=_calibrates(kw))
    lead = [d for d in x.dims if d not in (SYSTEM, INPUT)]
    x = x.transpose(*lead, SYSTEM, INPUT)
    z = z.transpose(*[d for d in lead if d in z.dims], SYSTEM, INPUT)
    coords = {k: v for k, v in x.coords.items() if not set(v.dims) & {SYSTEM, INPUT}}
    dims = lead + [RESAMPLE_DIM]
    opts = dict(metric_axis=None if METRIC in z.dims else lead.index(METRIC), seed=seed, dims=resample,
                sizes=sizes, batch=batch, kw=kw, tune_allocator=OPTIONS["tune_worker_allocator"])
    eager = x.chunks is None and z.chunks is None
    if metric_chunk is None:
        # about two tasks per core along `metric` (results do not depend on it)
        metric_chunk = default_metric_chunk(x.sizes[METRIC])
    if _calibrates(kw):  # each metric's sorted pair table: as many metrics a task as the budget holds
        metric_chunk = min(metric_chunk, calibration_metrics(x.sizes[METRIC], x.sizes[SYSTEM], x.sizes[INPUT],
                                                             kw["level"]))
    if eager and runs_in_one_block(x.size * n_resamples):
        # small eager problems: one block in this thread beats building a task graph
        units = x.size // (x.sizes[SYSTEM] * x.sizes[INPUT])
        per_draw = draw_elems(units, x.sizes[SYSTEM], x.sizes[INPUT], kw["level"], kw["method"], _calibrates(kw))
        step = metric_step(x.sizes[METRIC], metric_chunk, batch, per_draw)  # within the budget
        if _calibrates(kw):
            step = min(step, calibration_metrics(x.sizes[METRIC], x.sizes[SYSTEM], x.sizes[INPUT], kw["level"],
                                                 whole=True))
        return _draw_arrays(_metric_steps(x.values, z.values, n_resamples, lead.index(METRIC), step, opts, first),
                            dims, coords)
    import dask.array as dsa
    from dask.array.core import PerformanceWarning

    xd, zd = _metric_blocks(x, z, metric_chunk)
    # at most MAX_DRAW_TASKS blocks of draws, however small `batch` is
    ids = dsa.arange(first, first + n_resamples, chunks=per_task, dtype=np.int64)
    letters = "abcdefghjklmnopq"[: len(lead)]
    zletters = "".join(a for a, d in zip(letters, lead) if d in z.dims)
    with warnings.catch_warnings():
        # many small draw chunks are deliberate when `batch` is small
        warnings.simplefilter("ignore", PerformanceWarning)
        out = dsa.blockwise(
            _block_task, "k" + letters + "r",
            xd, letters + "si",
            zd, zletters + "si",
            ids, "r",
            new_axes={"k": 3 if _calibrates(kw) else 2},
            concatenate=True,
            dtype=np.float64,
            meta=np.empty((0,) * (len(lead) + 2), dtype=np.float64),
            **opts,
        )
    return _draw_arrays(out, dims, coords)


def _metric_steps(x: np.ndarray, z: np.ndarray, n_resamples: int, axis: int, step: int,
                  opts: dict[str, Any], first: int = 0) -> np.ndarray:
    """Every draw of eager x (..., S, I), ``step`` metrics (along ``axis``) at a time, in this thread."""
    ids = np.arange(first, first + n_resamples)
    if step >= x.shape[axis]:
        return _block_task(x, z, ids, **opts)
    parts = []
    for start in range(0, x.shape[axis], step):
        index = (slice(None),) * axis + (slice(start, start + step),)
        zs = z if opts["metric_axis"] is not None else z[index]
        parts.append(_block_task(x[index], zs, ids, **opts))
    return np.concatenate(parts, axis=axis + 1)


def _metric_blocks(x: xr.DataArray, z: xr.DataArray, metric_chunk: int) -> tuple[Any, Any]:
    """Dask arrays of x (..., S, I), ``metric_chunk`` metrics a block, and of z (its leading dims a
    subset of those of x, in the same order) with the blocks of x along the dims they share.

    Eager data go through :func:`dask_input`: blocks of the graph, sent again if a worker is lost.
    """
    x_chunks: dict[Hashable, int] = {METRIC: metric_chunk, SYSTEM: -1, INPUT: -1}
    if x.chunks is None and z.chunks is None:
        xd = dask_input(x.values, tuple(x_chunks.get(d, -1) for d in x.dims))
        z_chunks = tuple(xd.chunks[x.dims.index(d)] for d in z.dims[:-2]) + (-1, -1)
        return xd, dask_input(z.values, z_chunks)
    xd = x.chunk(x_chunks).data
    zd = z.chunk({SYSTEM: -1, INPUT: -1}).data
    return xd, zd.rechunk(tuple(xd.chunks[x.dims.index(d)] for d in z.dims[:-2]) + zd.chunks[-2:])


def cluster_scores(x: xr.DataArray, z: xr.DataArray) -> tuple[xr.DataArray, xr.DataArray]:
    """Eager scores x (metric, ...) and target z as Dask-backed ones whose blocks are literals of the graph
    (:func:`~.workers.dask_input`, for the active Client's cluster): ``default_metric_chunk`` metrics a
    block, every other dim whole. A call then computes its point estimates on the cluster too, beside the
    draws, from the same blocks.
    """
    def blocks(a: xr.DataArray) -> xr.DataArray:
        chunks = tuple(default_metric_chunk(a.sizes[METRIC]) if d == METRIC else -1 for d in a.dims)
        return a.copy(data=dask_input(a.values, chunks))

    return blocks(x), blocks(z)


def blocks_of_cells(func: Any, x: xr.DataArray, z: xr.DataArray, /, *, outputs: Sequence[tuple[Sequence[str], Any]],
                    sizes: Mapping[str, int] | None = None, **kwargs: Any) -> tuple[xr.DataArray, ...]:
    """``func(x, z, **kwargs)`` on (..., system, input) blocks of Dask-backed ``x`` and ``z``: lazy
    DataArrays, one per ``(core dims, dtype)`` of ``outputs`` (the new core dims' sizes in ``sizes``).

    The leading dims keep their chunks, ``system`` and ``input`` are whole in every block, and each
    block runs under the settings of a task (:func:`~.workers.task_settings`). A statistic of the
    cells that needs no draws takes this route with lazy data, as the draws do (module docstring).
    """
    def task(xb: np.ndarray, zb: np.ndarray) -> Any:
        with task_settings(False):
            return func(xb, zb, **kwargs)

    whole = {SYSTEM: -1, INPUT: -1}
    out = xr.apply_ufunc(
        task, x.chunk(whole), z.chunk(whole),
        input_core_dims=[[SYSTEM, INPUT], [SYSTEM, INPUT]],
        output_core_dims=[list(dims) for dims, _ in outputs],
        dask="parallelized",
        output_dtypes=[dtype for _, dtype in outputs],
        dask_gufunc_kwargs={"output_sizes": dict(sizes or {})},
    )
    return out if isinstance(out, tuple) else (out,)


def _draw_arrays(out: Any, dims: Sequence[Hashable], coords: Mapping[Hashable, Any]) -> tuple[xr.DataArray, ...]:
    """(r, n[, epsilon]) as DataArrays from a block's stacked output."""
    parts = [out[0], out[1].astype(np.int64)] + ([out[2]] if out.shape[0] == 3 else [])
    return tuple(xr.DataArray(p, dims=dims, coords=coords) for p in parts)


def runs_in_one_block(work: int) -> bool:
    """Whether eager work of ``work`` cells x draws is computed at once, without a task graph
    (never with a Client active: the work then runs on its cluster)."""
    return work <= SMALL_WORK and not client_active()


def runs_on_threads(work: int) -> bool:
    """Whether eager work of ``work`` cells x draws, too much for one block, runs on a pool of this
    process's threads, one task per block as a task graph would run them, but without one (building a
    graph and importing Dask cost more than such work takes): at most :data:`SMALL_WORK` per core, never
    with a Client active."""
    return work <= SMALL_WORK * cpu_count() and not client_active()


def on_threads(tasks: Sequence[Callable[[], np.ndarray]]) -> list[np.ndarray]:
    """The results of ``tasks`` (functions of no arguments), in order, run on a pool of one thread per core.

    Examples
    --------
    >>> [int(a.sum()) for a in on_threads([lambda: np.ones(2), lambda: np.ones(3)])]
    [2, 3]
    """
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=min(cpu_count(), max(len(tasks), 1))) as pool:
        return list(pool.map(lambda task: task(), tasks))


def compute_with_progress(obj: Computed, enabled: bool) -> Computed:
    """Compute ``obj`` on the active scheduler, with a progress bar if asked.

    With a ``dask.distributed`` Client active the work runs on its cluster and
    :func:`distributed.progress` shows the bar; otherwise Dask's local
    :class:`~dask.diagnostics.ProgressBar` does (both on stderr or in the notebook).
    Eager data travel in the graph (:func:`~.workers.dask_input`), so distributed's warning
    about a large graph is not given; a worker lost beyond recovery raises a one-line
    RuntimeError (:func:`~.workers.worker_lost`).

    BLAS uses one thread meanwhile, set from the calling thread (:data:`BLAS_ONE_THREAD`).
    The bar is shown only where a person sees it (:func:`xcorrstat._options.show_progress`).
    """
    with BLAS_ONE_THREAD, no_large_graph_warning():
        try:
            return _compute(obj, enabled)
        except cluster_errors() as err:
            raise worker_lost(err) from err


def progress_line(text: str) -> None:
    """Write ``text`` as one line ``xcorrstat: text`` on stderr, where progress is shown.

    The progress of work that is not one computation of a task graph (the rounds of draws of
    ``n_resamples="auto"``, the tasks of :func:`xcorrstat.wmt.run_tasks`, the tests of a power
    analysis): shown by the same rule as the bars of :func:`compute_with_progress`
    (:func:`xcorrstat._options.show_progress`), so a log gets none unless ``progress="always"``.
    Writing it never changes a number. Control characters (in a metric's name, say) are escaped
    and a long line is cut, as in every message.

    Examples
    --------
    >>> from xcorrstat import set_options
    >>> with set_options(progress="never"):
    ...     progress_line("nothing is written")
    """
    if show_progress(True):
        print(f"xcorrstat: {printable(text, 400)}", file=sys.stderr, flush=True)


#: distributed's option: the pickled graph size above which a computation warns.
LARGE_GRAPH_OPTION = "distributed.admin.large-graph-warning-threshold"


def no_large_graph_warning() -> contextlib.AbstractContextManager[object]:
    """Silence distributed's large-graph warning while a computation runs, if distributed is loaded.

    Without distributed no Client is active, so there is nothing to silence; and setting its
    option then would create ``dask.config``'s ``distributed`` section, which the context
    removes on exit, taking with it the defaults distributed adds if it is imported meanwhile
    (every later Client call would fail with ``KeyError: 'distributed'``).
    """
    if "distributed" not in sys.modules:
        return contextlib.nullcontext()
    import dask

    return dask.config.set({LARGE_GRAPH_OPTION: "1PiB"})


def _compute(obj: Computed, enabled: bool) -> Computed:
    """``obj`` computed, with the progress bar of the active scheduler if ``enabled`` (and seen)."""
    if "dask" not in sys.modules:  # no Dask array can exist: nothing to compute, and no need to import Dask
        return obj.compute()
    if not show_progress(enabled):
        return obj.compute(**local_scheduler())
    if not client_active():
        from dask.diagnostics import ProgressBar

        with ProgressBar(out=sys.stderr):
            return obj.compute(**local_scheduler())
    from distributed import progress

    persisted = obj.persist()
    progress(persisted)
    return persisted.compute()
