"""Global options, set with :func:`set_options` (also usable as a context manager)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["OPTIONS", "get_options", "set_options"]

OPTIONS: dict[str, Any] = {
    "min_pairs": 3,
}

#: Each option's check and the values it expects, for the error message.
_VALIDATORS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "min_pairs": (lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 2, "an integer >= 2"),
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

    Examples
    --------
    >>> import xcorrstat
    >>> with xcorrstat.set_options(min_pairs=4):
    ...     xcorrstat.get_options()["min_pairs"]
    4
    """

    def __init__(self, **kwargs: Any) -> None:
        self._old: dict[str, Any] = {}
        for key, value in kwargs.items():
            if key not in OPTIONS:
                raise ValueError(f"set_options: unknown option {key!r}; valid options are {sorted(OPTIONS)}")
            check, expected = _VALIDATORS[key]
            if not check(value):
                raise ValueError(f"set_options: {key} must be {expected}, got {value!r}")
            self._old[key] = OPTIONS[key]
        OPTIONS.update(kwargs)

    def __enter__(self) -> set_options:
        return self

    def __exit__(self, *exc: object) -> None:
        OPTIONS.update(self._old)
