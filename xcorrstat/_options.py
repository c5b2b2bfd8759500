"""Global options, set with :func:`set_options` (also usable as a context manager)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np

from ._display import cut, did_you_mean, stream_is_interactive
from ._warn import one_call

__all__ = ["OPTIONS", "PROGRESS", "get_options", "parse_bytes",
           "set_options", "show_progress"]

OPTIONS: dict[str, Any] = {
    "min_pairs": 3,
    "memory_budget": 2**30,
    "progress": "auto",
    "batch": None,
    "trial_batch": None,
    "tune_worker_allocator": False,
}

#: Values of the ``progress`` option.
PROGRESS = ("never", "auto", "always")

#: Multiples of a byte a ``memory_budget`` string may name (decimal and binary prefixes, any case).
BYTE_UNITS = {"b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
              "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}

_BYTES = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*([a-zA-Z]*)\s*")


def parse_bytes(value: object, name: str = "memory_budget") -> int:
    """A number of bytes: a positive integer, or a string such as ``"512MiB"``, ``"2GB"`` or ``"1.5 GiB"``.

    Units are B, kB, MB, GB, TB (powers of 1000) and KiB, MiB, GiB, TiB (powers of 1024), in any
    case; a string without a unit counts bytes. Anything else, or a size below one byte, is
    refused with an error naming ``name``.

    Examples
    --------
    >>> parse_bytes("512MiB"), parse_bytes("2GB"), parse_bytes(4096)
    (536870912, 2000000000, 4096)
    """
    expected = "a positive integer (bytes) or a string such as '512MiB' or '2GB'"
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        if value >= 1:
            return int(value)
    elif isinstance(value, str):
        match = _BYTES.fullmatch(value)
        unit = match.group(2).lower() if match else ""
        if match and unit in BYTE_UNITS | {"": 1}:
            size = int(float(match.group(1)) * BYTE_UNITS.get(unit, 1))
            if size >= 1:
                return size
    raise ValueError(f"set_options: {name} must be {expected}, got {cut(value)}")


def _min_pairs(value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 2:
        return value
    raise ValueError(f"set_options: min_pairs must be an integer >= 2, got {value!r}")


def _progress(value: Any) -> str:
    if isinstance(value, (bool, np.bool_)):
        return "always" if value else "never"
    if isinstance(value, str) and value.lower() in PROGRESS:
        return value.lower()
    hint = did_you_mean(value, PROGRESS) if isinstance(value, str) else ""
    raise ValueError(f"set_options: progress must be one of {PROGRESS} (or True / False), got {cut(value)}{hint}")


def _batch(value: Any) -> int | None:
    if value is None or (isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= 1):
        return None if value is None else int(value)
    raise ValueError(f"set_options: batch must be a positive integer or None (sized by memory_budget), "
                     f"got {cut(value)}")


def _trial_batch(value: Any) -> int | None:
    if value is None or (isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= 1):
        return None if value is None else int(value)
    raise ValueError(f"set_options: trial_batch must be a positive integer (trials per task) or None, "
                     f"got {cut(value)}")


def _flag(name: str) -> Callable[[Any], bool]:
    def check(value: Any) -> bool:
        if isinstance(value, (bool, np.bool_)):
            return bool(value)
        raise ValueError(f"set_options: {name} must be True or False, got {cut(value)}")

    return check


#: Each option's check: it returns the value to store or raises a ValueError naming the option.
_CHECKS: dict[str, Callable[[Any], Any]] = {
    "min_pairs": _min_pairs,
    "memory_budget": parse_bytes,
    "progress": _progress,
    "batch": _batch,
    "trial_batch": _trial_batch,
    "tune_worker_allocator": _flag("tune_worker_allocator"),
}


def show_progress(progress: bool, stream: Any = None) -> bool:
    """Whether a computation that can show a progress bar (``progress``) shows one on ``stream``
    (default stderr).

    With the ``progress`` option ``"auto"`` (the default) a bar is shown only when stderr is a
    terminal or a notebook's output (:func:`xcorrstat._display.stream_is_interactive`), so a log,
    a pipe or the captured output of a test gets none; ``"always"`` shows it anyway and
    ``"never"`` never does.

    Examples
    --------
    >>> import io
    >>> with set_options(progress="auto"):
    ...     show_progress(True, io.StringIO()), show_progress(False, io.StringIO())
    (False, False)
    >>> with set_options(progress="always"):
    ...     show_progress(True, io.StringIO())
    True
    """
    if not progress or OPTIONS["progress"] == "never":
        return False
    return OPTIONS["progress"] == "always" or stream_is_interactive(stream)


@one_call
def get_options() -> dict[str, Any]:
    """Return a copy of the current options.

    Examples
    --------
    >>> get_options()["min_pairs"]
    3
    """
    return dict(OPTIONS)


class set_options:
    """Set package options globally or for a ``with`` block.

    Parameters
    ----------
    min_pairs : int, default 3
        Fewest valid (x, z) pairs for a correlation to be defined; fewer gives NaN.
    memory_budget : int or str, default 1 GiB (``2**30`` bytes)
        About the most memory the temporaries of resampling (bootstrap and permutation draws)
        may take at once, in bytes, or a string such as ``"512MiB"`` or ``"2GB"`` (stored as
        bytes). It is shared by the tasks that run at once, one per core, with a safety factor
        of 2 for the temporaries the estimate does not count: each task's block of draws
        (and of metrics or metric pairs) is sized for ``memory_budget / (2 x 8 bytes x cores)``
        float64 values (:func:`xcorrstat._resampling.memory.block_elems`). The data and the
        results come on top. A smaller budget means smaller blocks and more of them, not other
        numbers: every draw is made from its id, whatever the blocks. A block always holds
        at least one draw of one metric (or pair) and about 8 MB of temporaries.
    progress : {"auto", "always", "never"}, default "auto"
        Progress of the long phases of eager computations, on stderr: Dask's bar while a task
        graph of draws computes (the bootstrap, the permutation and paired bootstrap tests, the
        trials of :mod:`xcorrstat.diagnostics`) and a line per round of the draws of
        ``n_resamples="auto"`` (the round, the draws so far, the decisions still open), per task
        of :func:`xcorrstat.wmt.run_tasks` and per test of a power analysis. ``"auto"`` shows
        them only when stderr is a terminal or a notebook's output, so a log file, a pipe or
        captured output gets none; ``"always"`` shows them anyway, ``"never"`` never.
        ``True`` / ``False`` mean ``"always"`` / ``"never"``. Progress never changes a number.
    batch : int or None, default None
        Draws computed together in a resampling kernel (bootstrap, permutation, the soft
        pairwise accuracy test). ``None`` sizes the blocks by ``memory_budget``: a task's
        temporaries stay near 256 MB, on tiny data the draws whose temporaries fit in about
        8 MB are computed together, and a Dask task computes at least
        ``ceil(n_resamples / 256)`` draws. The numbers do not depend on it: every draw is made
        from its id. Results record ``batch`` (as set), ``draws_per_batch`` and ``draws_per_task``.
    trial_batch : int or None, default None
        Trials per Dask task of the simulations of :mod:`xcorrstat.diagnostics`
        (``ci_coverage``, ``power_analysis``); ``None`` picks it from the number of trials. The
        numbers do not depend on it: every trial is made from its id. Results record it in
        ``attrs["trial_batch"]``.
    tune_worker_allocator : bool, default False
        Whether tasks of draws may change glibc's allocator in the ``dask.distributed`` worker
        processes that run them (workers with a process of their own, started by a nanny, which
        sets ``MALLOC_TRIM_THRESHOLD_``; on Linux with glibc only). If ``True``, while any such
        task runs in a worker process, that process's mmap threshold is raised to 32 MiB
        (``mallopt(M_MMAP_THRESHOLD)``), so large temporaries reuse freed heap memory instead of
        being mapped and faulted in afresh in every batch; when the last running task ends the
        threshold is put back (``MALLOC_MMAP_THRESHOLD_``, else 128 KiB) and freed memory is
        returned to the system (``malloc_trim(0)``). The setting applies to the whole worker
        process, so other work running there at the same time allocates under it too. The value
        is read when a call builds its tasks. Nothing changes in the calling process, with
        Dask's local schedulers or in threads-only clusters. ``False`` (the default) leaves
        every allocator setting alone; the numbers are the same either way.

    Examples
    --------
    >>> import xcorrstat
    >>> with xcorrstat.set_options(min_pairs=4):
    ...     xcorrstat.get_options()["min_pairs"]
    4
    >>> with xcorrstat.set_options(memory_budget="512MiB"):
    ...     xcorrstat.get_options()["memory_budget"]
    536870912
    """

    def __init__(self, **kwargs: Any) -> None:
        self._old: dict[str, Any] = {}
        checked: dict[str, Any] = {}
        for key, value in kwargs.items():
            if key not in OPTIONS:
                raise ValueError(f"set_options: unknown option {key!r}; valid options are {sorted(OPTIONS)}"
                                 f"{did_you_mean(key, OPTIONS)}")
            checked[key] = _CHECKS[key](value)
            self._old[key] = OPTIONS[key]
        OPTIONS.update(checked)

    def __enter__(self) -> set_options:
        return self

    def __exit__(self, *exc: object) -> None:
        OPTIONS.update(self._old)
