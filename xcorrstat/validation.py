"""Argument checks shared by every public call: each error names the argument and what was expected."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ._display import cut

__all__ = [
    "check_batch",
    "check_choice",
    "check_confidence_level",
    "check_epsilon",
    "check_min_pairs",
    "check_positive_int",
]


def check_positive_int(value, name: str, *, allow_none: bool = False) -> int | None:
    """``value`` as an int >= 1 (or None when allowed)."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        expected = "a positive integer or None" if allow_none else "a positive integer"
        raise ValueError(f"{name} must be {expected}, got {value!r}")
    return int(value)


def check_batch(value, name: str = "batch", what: str = "draws computed together") -> int | None:
    """``batch`` (draws computed together) as an int >= 1, or None for the default.

    Every public resampling call checks its ``batch`` here: a bool, a float, zero
    or a negative number is refused with a message naming the argument.

    Examples
    --------
    >>> check_batch(7), check_batch(None)
    (7, None)
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer ({what}) or None for the default, got {cut(value, 60)}")
    return int(value)


def check_unit_interval(value, name: str, note: str = "") -> float:
    """``value`` as a float strictly between 0 and 1 (a level, a coverage, a risk)."""
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    if not ok or not 0.0 < float(value) < 1.0:
        raise ValueError(f"{name} must be a number strictly between 0 and 1{note}, got {value!r}")
    return float(value)


def check_epsilon(value, note: str = "") -> float:
    """``epsilon`` (a metric-tie threshold) as a finite float >= 0."""
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    if not ok or not np.isfinite(value) or value < 0:
        raise ValueError(f"epsilon must be a finite number >= 0{note}, got {value!r}")
    return float(value)


def check_confidence_level(value) -> float:
    """``value`` as a float strictly between 0 and 1."""
    return check_unit_interval(value, "confidence_level")


def check_min_pairs(value) -> int:
    """``value`` as an int >= 2 (the fewest pairs for a defined correlation)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 2:
        raise ValueError(f"min_pairs must be an integer >= 2, got {value!r}")
    return int(value)


def check_choice(value, allowed: Sequence[str], name: str, note: str = "") -> str:
    """``value`` if it is one of ``allowed``."""
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"{name} must be one of {tuple(allowed)!r}{note}, got {value!r}")
    return value


def check_choices(values, allowed: Sequence[str], name: str) -> list[str]:
    """``values`` (a name or a non-empty list of names, each one of ``allowed``) as a list."""
    values = [values] if isinstance(values, str) else list(values)
    if not values:
        raise ValueError(f"{name} must name at least one of {tuple(allowed)!r}")
    for value in values:
        check_choice(value, allowed, name)
    return values
