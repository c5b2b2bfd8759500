"""A compiled population count for the ``*_jit`` modules (numba): imported by them only, never at package
import, so numba starts with the first loop that needs it."""

from __future__ import annotations

import importlib

numba = importlib.import_module("numba")
intrinsic = importlib.import_module("numba.extending").intrinsic

__all__ = ["popcount"]


@intrinsic
def popcount(typingctx, word):
    """The number of 1 bits of a uint64 (one machine instruction)."""
    if word != numba.types.uint64:
        return None

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])

    return numba.types.uint64(numba.types.uint64), codegen
