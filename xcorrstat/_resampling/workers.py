"""Where the tasks of draws run: the active ``dask.distributed`` Client, the parallelism it offers,
eager data as blocks of the task graph (sent again if a worker is lost), the errors of a lost
worker, and the BLAS setting every task runs under (and the allocator setting, only when the
``tune_worker_allocator`` option asks for it).

The engine (:mod:`.engine`, :mod:`.pairs`) builds its task graphs with these; nothing here
changes a number.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import platform
import sys
import threading
from typing import Any

import numpy as np
from threadpoolctl import ThreadpoolController

__all__ = [
    "BLAS_ONE_THREAD",
    "WORKER_FOOTPRINT",
    "local_scheduler",
    "rechunked",
    "REUSED_PAGES",
    "active_client",
    "check_worker_memory",
    "client_active",
    "cluster_errors",
    "cpu_count",
    "dask_input",
    "in_worker_process",
    "parallelism",
    "task_settings",
    "worker_lost",
]


def cpu_count() -> int:
    """The cores this process may use (its CPU affinity, and a cgroup quota once Dask is imported: Dask's
    count), without importing Dask: importing it takes about half a second, a fixed cost of every fresh
    process that never builds a task graph.

    Examples
    --------
    >>> cpu_count() >= 1
    True
    """
    system = sys.modules.get("dask.system")
    if system is not None:
        return max(int(system.CPU_COUNT), 1)
    if hasattr(os, "sched_getaffinity"):
        return max(len(os.sched_getaffinity(0)), 1)
    return os.cpu_count() or 1


#: Memory a Dask worker needs to import xcorrstat and its libraries (numpy, numba, xarray, distributed:
#: about 210 MiB resident), over the 80% of its limit at which Dask pauses a worker, rounded up.
WORKER_FOOTPRINT = 300 * 2**20

#: Clients whose workers' memory limits were checked, by id: the worker addresses checked.
_CHECKED: dict[int, frozenset[str]] = {}


def check_worker_memory(client: Any) -> None:
    """Refuse (one line) a cluster with a worker whose memory limit is below :data:`WORKER_FOOTPRINT`.

    Such a worker pauses as soon as it has imported the package, and the tasks sent to it wait
    forever with no message. The limits are read from the scheduler's information once per set
    of workers of a Client (a worker that joins later is checked at the next call).
    """
    try:
        workers = client.scheduler_info().get("workers", {})
    except Exception:  # noqa: BLE001 -- a scheduler that cannot tell: nothing to check
        return
    if _CHECKED.get(id(client)) == frozenset(workers):
        return
    for address, info in workers.items():
        limit = info.get("memory_limit") if isinstance(info, dict) else None
        if isinstance(limit, (int, float)) and 0 < limit < WORKER_FOOTPRINT:
            raise ValueError(
                f"the Dask worker {address} has a memory limit of {limit / 2**20:.0f} MiB, below the "
                f"{WORKER_FOOTPRINT // 2**20} MiB a worker needs to import xcorrstat and its libraries (Dask "
                "pauses it at 80% of its limit and its tasks would wait forever); start the workers with "
                f"memory_limit='{WORKER_FOOTPRINT // 2**20}MiB' or more")
    _CHECKED[id(client)] = frozenset(workers)


def client_active() -> bool:
    """Whether a ``dask.distributed`` Client is active (work then runs on its cluster).

    An active Client's workers are checked first (:func:`check_worker_memory`): a worker that
    could not even import the package is refused before any task is sent to it.
    """
    if "distributed" not in sys.modules:  # no Client without it: importing it takes about a second
        return False
    try:
        from distributed import get_client

        client = get_client()
    except (ImportError, ValueError):
        return False
    if not getattr(client, "asynchronous", False):
        check_worker_memory(client)
    return True


def active_client() -> Any:
    """The active ``dask.distributed`` Client (work then runs on its cluster), or None (also for an
    asynchronous Client, which the engine does not call).

    Without ``distributed`` imported no Client can exist, so it is not imported here (that alone
    takes about a second, a fixed cost of every call in a fresh process).
    """
    if "distributed" not in sys.modules:
        return None
    try:
        from distributed import get_client

        client = get_client()
    except (ImportError, ValueError):
        return None
    if getattr(client, "asynchronous", False):
        return None
    check_worker_memory(client)
    return client


def rechunked(obj: Any, chunks: Any) -> Any:
    """``obj.chunk(chunks)`` (an xarray object), with dask's choice of rechunk method made without
    importing ``distributed`` when it is not imported: dask imports it to look for a Client (about a
    second in a fresh process), and with none it takes ``"tasks"``, the method given here. The
    result is the same graph; with ``distributed`` imported, or a method set, dask chooses as usual.

    Examples
    --------
    >>> import xarray as xr
    >>> rechunked(xr.DataArray(np.arange(4.0), dims="x").chunk(2), {"x": -1}).chunks
    ((4,),)
    """
    import dask

    if "distributed" in sys.modules or dask.config.get("array.rechunk.method", None):
        return obj.chunk(chunks)
    with dask.config.set({"array.rechunk.method": "tasks"}):
        return obj.chunk(chunks)


def local_scheduler() -> dict[str, Any]:
    """The keywords of a ``compute`` that runs on dask's threads when no Client can exist:
    ``{"scheduler": dask.threaded.get}`` when ``distributed`` is not imported and no scheduler is
    set in ``dask.config``, else none. dask would import ``distributed`` to look for a Client
    (about a second in a fresh process; also for a scheduler given by name) and, with none, use
    the threads of a Dask array: the same scheduler, given here as the function it is.

    Examples
    --------
    >>> import dask.threaded
    >>> local_scheduler() in ({"scheduler": dask.threaded.get}, {})
    True
    """
    import dask

    if "distributed" in sys.modules or dask.config.get("scheduler", None) is not None:
        return {}
    from dask.threaded import get as threaded_get

    return {"scheduler": threaded_get}


def parallelism() -> int:
    """Tasks that can run at once: the cores of this machine, or the worker threads of the active
    Client's cluster if there are more."""
    cores = cpu_count()
    client = active_client()
    if client is None:
        return cores
    return max(cores, sum(client.nthreads().values()))


def dask_input(values: np.ndarray, chunks: tuple[Any, ...]) -> Any:
    """A Dask array of eager ``values`` with ``chunks``, each block a literal of the task graph.

    The blocks are C-contiguous copies (a view is copied) under a random name (the data are
    not hashed). With a ``dask.distributed`` Client active, the scheduler sends a block to
    the first worker that needs it and the others fetch it from there, each block once
    per worker, as a scatter would; but since the block is part of the graph, the scheduler
    sends it again when the worker holding it is lost (a scattered block would be gone).
    The scheduler holds the blocks until the computation ends.

    Examples
    --------
    >>> dask_input(np.arange(6.0).reshape(2, 3), (1, -1)).chunks
    ((1, 1), (3,))
    """
    import dask.array as dsa

    return dsa.from_array(np.ascontiguousarray(values), chunks=chunks, name=False)


def cluster_errors() -> tuple[type[BaseException], ...]:
    """What a ``dask.distributed`` computation raises when a worker was lost beyond recovery
    (``KilledWorker``, cancelled futures); empty when distributed is not loaded."""
    if "distributed" not in sys.modules:
        return ()
    from distributed import KilledWorker
    from distributed.client import FutureCancelledError, FuturesCancelledError

    return (KilledWorker, FutureCancelledError, FuturesCancelledError)


def worker_lost(err: BaseException) -> RuntimeError:
    """A one-line error for a computation that lost a ``dask.distributed`` worker beyond recovery.

    Examples
    --------
    >>> str(worker_lost(ValueError("x"))).startswith("the dask.distributed cluster lost")
    True
    """
    try:
        detail = str(err)
    except Exception:  # a message that cannot be formed: the exception's type says enough
        detail = ""
    first = " ".join(detail.split()).split(". ")[0][:300]  # its first sentence, on one line
    return RuntimeError(f"the dask.distributed cluster lost a worker during the computation and gave up "
                        f"({type(err).__name__}: {first}); run the call again: the same seed gives the "
                        f"same numbers")


class _SingleThreadedBlas:
    """While any task runs, BLAS uses one thread: Dask already runs one task per core,
    and nested BLAS threads on the same cores slow every task down many times over.

    Reference-counted across Dask's worker threads; the user's setting comes back
    when the last running task ends. OpenBLAS may ignore a thread count set from a
    thread other than the main one, so :func:`.engine.compute_with_progress` enters this from the
    calling thread around the whole computation; the tasks' own entries then only count.
    In a ``dask.distributed`` worker process of its own (started by a nanny), BLAS is set
    to one thread once and for good: every task of that process is one of the cluster's.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._depth = 0
        self._limiter: Any = None
        self._for_good = False
        # made on first use (it inspects the loaded libraries once)
        self._controller: ThreadpoolController | None = None

    def _controller_once(self) -> ThreadpoolController:
        if self._controller is None:
            self._controller = ThreadpoolController()
        return self._controller

    def __enter__(self) -> None:
        with self._lock:
            if self._for_good or in_worker_process():
                if not self._for_good:
                    self._controller_once().limit(limits=1, user_api="blas")  # never restored
                    self._for_good = True
                return
            if self._depth == 0:
                self._limiter = self._controller_once().limit(limits=1, user_api="blas")
            self._depth += 1

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            if self._for_good:
                return
            self._depth -= 1
            if self._depth == 0 and self._limiter is not None:
                self._limiter.restore_original_limits()
                self._limiter = None


def in_worker_process() -> bool:
    """Whether this thread runs a task of a ``dask.distributed`` worker with a process of its own
    (one started by a nanny: ``LocalCluster(processes=True)``, ``dask worker``)."""
    distributed = sys.modules.get("distributed")
    if distributed is None:
        return False
    try:
        worker = distributed.get_worker()
    except ValueError:
        return False
    return getattr(worker, "nanny", None) is not None


BLAS_ONE_THREAD = _SingleThreadedBlas()


class _ReusedPages:
    """While tasks run in a ``dask.distributed`` worker process, large temporaries reuse freed memory
    (entered only when the ``tune_worker_allocator`` option was set where the call was made:
    :func:`task_settings`).

    Dask's nanny starts workers with ``MALLOC_TRIM_THRESHOLD_`` set (so that freed memory goes
    back to the system at once), which also fixes glibc's mmap threshold at 128 KiB: every
    larger temporary is then mapped afresh and its pages faulted in again in every batch --
    costly for a kernel with large temporaries (the compiled loops hold none). While any task
    runs, the threshold is raised to ``RAISED`` (glibc's largest); when the last running task
    ends it is put back and the freed memory is returned to the system (``malloc_trim``), as the
    setting intends.
    Nothing changes outside such worker processes, or without glibc.
    """

    RAISED = 32 * 2**20

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._depth = 0
        self._libc: Any = None
        self._checked = False

    def _glibc(self) -> Any:
        """glibc, if this process's allocator thresholds are fixed by the environment (else None)."""
        if not self._checked:
            self._checked = True
            fixed = "MALLOC_TRIM_THRESHOLD_" in os.environ or "MALLOC_MMAP_THRESHOLD_" in os.environ
            if fixed and sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc":
                try:
                    self._libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
                except OSError:
                    self._libc = None
        return self._libc

    def __enter__(self) -> None:
        if not in_worker_process():
            return
        with self._lock:
            libc = self._glibc()
            if libc is not None and self._depth == 0:
                libc.mallopt(M_MMAP_THRESHOLD, self.RAISED)
            self._depth += 1

    def __exit__(self, *exc: object) -> None:
        if not in_worker_process():
            return
        with self._lock:
            self._depth -= 1
            libc = self._libc
            if libc is not None and self._depth == 0:
                libc.mallopt(M_MMAP_THRESHOLD, _env_bytes("MALLOC_MMAP_THRESHOLD_", 128 * 2**10))
                libc.malloc_trim(0)


#: glibc's ``mallopt`` parameter number of the mmap threshold.
M_MMAP_THRESHOLD = -3


def _env_bytes(name: str, default: int) -> int:
    """An allocator setting in bytes from the environment, or ``default``."""
    try:
        return int(os.environ.get(name, default))
    except ValueError:
        return default


#: Entered by a task of draws beside :data:`BLAS_ONE_THREAD` when the call asked for it (:func:`task_settings`).
REUSED_PAGES = _ReusedPages()


def task_settings(tune_allocator: bool) -> contextlib.ExitStack:
    """What a task of draws runs under: BLAS on one thread (:data:`BLAS_ONE_THREAD`) and, only if
    ``tune_allocator`` (the ``tune_worker_allocator`` option, read when the call built its tasks, since
    a worker process has options of its own), glibc's raised mmap threshold (:data:`REUSED_PAGES`).

    Examples
    --------
    >>> with task_settings(False):
    ...     pass
    """
    stack = contextlib.ExitStack()
    stack.enter_context(BLAS_ONE_THREAD)
    if tune_allocator:
        stack.enter_context(REUSED_PAGES)
    return stack
