"""How kernels are compiled: :data:`jit`, numba's decorator with the package's settings, and
:func:`loops`, a module of compiled loops imported on first use.

Every kernel that runs a loop per draw has one algorithm, compiled by numba (a dependency). A
small loop is written beside its kernel and decorated with :data:`jit`; a larger set of loops
lives in a ``*_jit`` module of its own, which its kernel imports with :func:`loops` when it first
runs. Either way importing xcorrstat does not start numba's compiler (about 50 MiB of memory) in
a process that never runs a loop. The NumPy algorithms these loops replaced are kept in the tests,
as the oracles the loops are compared with bit for bit.
"""

from __future__ import annotations

import functools
import importlib
from types import ModuleType

from collections.abc import Callable
from typing import Any

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
            import numba

            compiled.append(numba.njit(nogil=True, cache=True, boundscheck=False)(func))
        return compiled[0](*args)

    return call


@functools.cache
def loops(name: str) -> ModuleType:
    """``xcorrstat._kernels.<name>``, a module of compiled loops, imported once, on first use.

    Examples
    --------
    >>> loops("global_kendall_jit").LANES
    32
    """
    return importlib.import_module(f"{__package__}.{name}")
