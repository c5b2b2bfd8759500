"""The compiled (numba) companions of some kernels, imported on first use.

numba is an optional dependency (the ``fast`` extra). A kernel that has a compiled companion
module asks for it here and falls back to its NumPy path when this returns None.
"""

from __future__ import annotations

import functools
import importlib
from types import ModuleType

__all__ = ["compiled_module"]


@functools.cache
def compiled_module(name: str) -> ModuleType | None:
    """``xcorrstat.kernels.<name>``, imported once; None when numba is not installed.

    Examples
    --------
    >>> compiled_module("spa_swap_jit") is None or hasattr(compiled_module("spa_swap_jit"), "pair_counts")
    True
    """
    try:
        return importlib.import_module(f"{__package__}.{name}")
    except ImportError:
        return None
