"""The compiled (numba) companions of some kernels, imported on first use.

numba is an optional dependency (the ``fast`` extra). A kernel that has a compiled companion
module asks for it here and falls back to its NumPy path when this returns None: when numba
is not installed, or the compiled loops are turned off (``set_options(compiled=False)`` or the
environment variable ``XCORRSTAT_COMPILED=0``, :func:`xcorrstat._options.compiled_enabled`).
"""

from __future__ import annotations

import functools
import importlib
from types import ModuleType

from .._options import compiled_enabled

__all__ = ["compiled_module"]


def compiled_module(name: str) -> ModuleType | None:
    """``xcorrstat._kernels.<name>``, imported once; None when numba is not installed or the
    compiled loops are turned off.

    Examples
    --------
    >>> compiled_module("spa_swap_jit") is None or hasattr(compiled_module("spa_swap_jit"), "pair_counts")
    True
    >>> from xcorrstat import set_options
    >>> with set_options(compiled=False):
    ...     compiled_module("spa_swap_jit") is None
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
