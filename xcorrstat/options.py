"""Global options, set with :func:`set_options` (also usable as a context manager)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np

from ._display import cut

__all__ = ["OPTIONS", "get_options", "parse_bytes", "set_options"]

OPTIONS: dict[str, Any] = {
    "min_pairs": 3,
    "memory_budget": 2**30,
}

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


#: Each option's check: it returns the value to store or raises a ValueError naming the option.
_CHECKS: dict[str, Callable[[Any], Any]] = {
    "min_pairs": _min_pairs,
    "memory_budget": parse_bytes,
}


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
        float64 values (:func:`xcorrstat.resampling.engine.block_elems`). The data and the
        results come on top. A smaller budget means smaller blocks and more of them, not other
        numbers: every draw is made from its id, whatever the blocks. A block always holds
        at least one draw of one metric (or pair) and about 8 MB of temporaries.

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
                raise ValueError(f"set_options: unknown option {key!r}; valid options are {sorted(OPTIONS)}")
            checked[key] = _CHECKS[key](value)
            self._old[key] = OPTIONS[key]
        OPTIONS.update(checked)

    def __enter__(self) -> set_options:
        return self

    def __exit__(self, *exc: object) -> None:
        OPTIONS.update(self._old)
