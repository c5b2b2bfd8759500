"""How kernels are compiled: :data:`jit`, numba's decorator with the package's settings, and
:func:`loops`, a module of compiled loops imported on first use.

Every kernel that runs a loop per draw has one algorithm, compiled by numba (a dependency). A
small loop is written beside its kernel and decorated with :data:`jit`; a larger set of loops
lives in a ``*_jit`` module of its own, which its kernel imports with :func:`loops` when it first
runs. Either way importing xcorrstat does not start numba's compiler (about 50 MiB of memory) in
a process that never runs a loop. The NumPy algorithms these loops replaced are kept in the tests,
as the oracles the loops are compared with bit for bit.

numba is imported, and each loop's first call (its compilation or its load from numba's cache)
runs, with Ctrl-C and SIGTERM held back (:func:`xcorrstat._signals.signals_held`, in the main
thread): both run code in garbage-collection and library callbacks, where Python would drop the
KeyboardInterrupt (the command went on and wrote its report) or leave the import half done. A
signal that came meanwhile is delivered as soon as that call is complete.

Compiled loops are cached on disk, so only the first process after an install (or an upgrade)
compiles them; later processes load them (:func:`numba_module`). numba writes its cache in the
first writable one of: ``NUMBA_CACHE_DIR`` if set, the ``__pycache__`` folder beside these
modules (a user's own install), the user's cache folder (``~/.cache/numba``, for a shared
read-only install). When none of them is writable numba would refuse to load the loops at all;
the loops are then cached in a private folder of the user's under the temporary folder.
"""

from __future__ import annotations

import functools
import importlib
import os
import tempfile
from types import ModuleType

from collections.abc import Callable
from typing import Any

from .._signals import signals_held

__all__ = ["jit", "loops", "numba_module"]


def jit(func: Callable[..., Any]) -> Callable[..., Any]:
    """``func`` compiled by numba on its first call: machine code without the GIL (Dask threads run
    it in parallel), cached on disk, without bounds checks.

    Examples
    --------
    >>> import numpy as np
    >>> from xcorrstat._kernels.mt.soft_pairwise import _pair_counts  # a loop decorated with jit
    >>> _pair_counts(np.array([[[3.0, 1.0], [1.0, 3.0]]]), np.array([[1.0]])).tolist()
    [[1]]
    """
    compiled: list[Any] = []

    @functools.wraps(func)
    def call(*args: Any) -> Any:
        if not compiled:
            with signals_held():
                numba = numba_module()
                compiled.append(numba.njit(nogil=True, cache=True, boundscheck=False)(func))
                return compiled[0](*args)  # compiled, or loaded from numba's cache, with signals held
        return compiled[0](*args)

    return call


class _Loops:
    """A module of compiled loops whose functions make their first call with signals held."""

    def __init__(self, module: ModuleType) -> None:
        self._module = module
        self._ready: set[str] = set()

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._module, name)
        if name in self._ready or not callable(attr):
            return attr

        def first(*args: Any) -> Any:
            with signals_held():
                out = attr(*args)
            self._ready.add(name)
            return out

        return first


@functools.cache
def loops(name: str) -> Any:
    """``xcorrstat._kernels.<name>``, a module of compiled loops, imported once, on first use; each of
    its functions makes its first call with signals held (module docstring).

    Examples
    --------
    >>> loops("rank.global_jit").LANES
    32
    """
    with signals_held():
        numba_module()  # the cache's folder is chosen before the module's loops are decorated
        return _Loops(importlib.import_module(f"{__package__}.{name}"))


def _writable(folder: str) -> bool:
    """Whether ``folder`` exists or can be made, and a file can be written in it (numba's own check)."""
    try:
        os.makedirs(folder, exist_ok=True)
        tempfile.TemporaryFile(dir=folder).close()
    except OSError:
        return False
    return True


def _private_folder(parent: str) -> str | None:
    """``parent/xcorrstat-numba-<uid>``, made for this user alone (mode 0700, owned by them), or None
    if it cannot be made or is not theirs (a cache of another user's would be loaded as code)."""
    uid = os.getuid() if hasattr(os, "getuid") else None
    folder = os.path.join(parent, f"xcorrstat-numba-{uid if uid is not None else 'user'}")
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        info = os.lstat(folder)
    except OSError:
        return None
    if uid is not None and (info.st_uid != uid or info.st_mode & 0o077):
        return None
    return folder if _writable(folder) else None


def cache_folders(numba: Any) -> list[str]:
    """The folders numba would write the loops' cache in, in its order of preference: the
    ``NUMBA_CACHE_DIR`` given, the ``__pycache__`` beside these modules, the user's cache folder.

    Examples
    --------
    >>> import numba
    >>> cache_folders(numba)[-1].endswith("numba")
    True
    """
    from numba.misc.appdirs import AppDirs

    folders = [numba.config.CACHE_DIR] if numba.config.CACHE_DIR else []
    folders.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "__pycache__"))
    folders.append(AppDirs(appname="numba", appauthor=False).user_cache_dir)
    return folders


def choose_cache(numba: Any, writable: Callable[[str], bool] = _writable) -> str | None:
    """Make sure numba has a folder to cache the loops in; returns the folder it was given, if any.

    When none of :func:`cache_folders` is ``writable``, numba's ``NUMBA_CACHE_DIR`` setting (and
    the environment variable) is pointed at a private folder under the temporary folder (kept across processes), or at a new
    temporary folder of this process's if that cannot be made: the loops still load, compiled.

    Examples
    --------
    >>> import numba
    >>> choose_cache(numba, writable=lambda folder: True) is None  # numba's own choice stands
    True
    """
    if any(writable(folder) for folder in cache_folders(numba)):
        return None
    folder = _private_folder(tempfile.gettempdir()) or tempfile.mkdtemp(prefix="xcorrstat-numba-")
    numba.config.CACHE_DIR = folder
    os.environ["NUMBA_CACHE_DIR"] = folder  # kept when numba rereads its settings; worker processes inherit it
    return folder


@functools.cache
def numba_module() -> Any:
    """numba, imported once, with a cache folder it can write (:func:`choose_cache`)."""
    numba = importlib.import_module("numba")
    choose_cache(numba)
    return numba
