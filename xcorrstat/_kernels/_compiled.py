"""How kernels are compiled: :data:`jit`, numba's decorator with the package's settings.

A kernel written once as a loop is compiled with :data:`jit` (numba is a dependency). Some
kernels still have a compiled companion module beside a NumPy path: they ask for it here and
take the NumPy path when this returns None: when the compiled loops are turned off
(``set_options(compiled=False)`` or the environment variable ``XCORRSTAT_COMPILED=0``, :func:`xcorrstat._options.compiled_enabled`).
"""

from __future__ import annotations

import functools
import importlib
from types import ModuleType

from collections.abc import Callable
from typing import Any

from .._options import compiled_enabled

__all__ = ["compiled_module", "jit"]


def jit(func: Callable[..., Any]) -> Callable[..., Any]:
    """``func`` compiled by numba on its first call: machine code without the GIL (Dask threads run
    it in parallel), cached on disk, without bounds checks. Kernels whose one algorithm is such a
    loop use this. The compilation waits for the first call, so importing xcorrstat does not start
    numba's compiler (about 50 MiB of memory) in a process that never runs the loop.

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


def compiled_module(name: str) -> ModuleType | None:
    """``xcorrstat._kernels.<name>``, imported once; None when numba is not installed or the
    compiled loops are turned off.

    Examples
    --------
    >>> hasattr(compiled_module("global_kendall_jit"), "LANES")
    True
    >>> from xcorrstat import set_options
    >>> with set_options(compiled=False):
    ...     compiled_module("global_kendall_jit") is None
    True
    """
    return _imported(name) if compiled_enabled() else None


@functools.cache
def _imported(name: str) -> ModuleType | None:
    """``xcorrstat._kernels.<name>``, imported once; None when numba is not installed."""
    try:
        return importlib.import_module(f"{__package__}.{name}")
    except ImportError:
        return None
