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
"""

from __future__ import annotations

import functools
import importlib
from types import ModuleType

from collections.abc import Callable
from typing import Any

from .._signals import signals_held

__all__ = ["jit", "loops"]


def jit(func: Callable[..., Any]) -> Callable[..., Any]:
    """``func`` compiled by numba on its first call: machine code without the GIL (Dask threads run
    it in parallel), cached on disk, without bounds checks.

    Examples
    --------
    >>> import numpy as np
    >>> from xcorrstat._kernels.spa_swap import _pair_counts  # a loop decorated with jit
    >>> _pair_counts(np.array([[[3.0, 1.0], [1.0, 3.0]]]), np.array([[1.0]])).tolist()
    [[1]]
    """
    compiled: list[Any] = []

    @functools.wraps(func)
    def call(*args: Any) -> Any:
        if not compiled:
            with signals_held():
                import numba

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
    >>> loops("global_kendall_jit").LANES
    32
    """
    with signals_held():
        return _Loops(importlib.import_module(f"{__package__}.{name}"))
