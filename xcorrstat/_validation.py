"""Argument checks shared by every public call: each error names the argument and what was expected."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeVar, cast, get_args, overload

import numpy as np

from ._display import cut, did_you_mean
from ._types import Average

__all__ = [
    "check_average",
    "check_batch",
    "check_choice",
    "check_confidence_level",
    "check_epsilon",
    "check_min_pairs",
    "check_positive_int",
    "choice_type",
    "match_choice",
]

#: A named choice: the type of the allowed values is the type returned.
Choice = TypeVar("Choice", bound=str)


@overload
def check_positive_int(value: object, name: str, *, allow_none: Literal[False] = False) -> int: ...


@overload
def check_positive_int(value: object, name: str, *, allow_none: bool) -> int | None: ...


def check_positive_int(value: object, name: str, *, allow_none: bool = False) -> int | None:
    """``value`` as an int >= 1 (or None when allowed).

    Examples
    --------
    >>> check_positive_int(np.int64(3), "n_resamples"), check_positive_int(None, "n", allow_none=True)
    (3, None)
    """
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        expected = "a positive integer or None" if allow_none else "a positive integer"
        raise ValueError(f"{name} must be {expected}, got {value!r}")
    return int(value)


def check_batch(value: object, name: str = "batch", what: str = "draws computed together") -> int | None:
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


def check_unit_interval(value: object, name: str, note: str = "") -> float:
    """``value`` as a float strictly between 0 and 1 (a level, a coverage, a risk).

    Examples
    --------
    >>> check_unit_interval(0.05, "alpha")
    0.05
    """
    if (isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating))
            or not 0.0 < float(value) < 1.0):
        raise ValueError(f"{name} must be a number strictly between 0 and 1{note}, got {value!r}")
    return float(value)


def check_epsilon(value: object, note: str = "") -> float:
    """``epsilon`` (a metric-tie threshold) as a finite float >= 0.

    Examples
    --------
    >>> check_epsilon(0)
    0.0
    """
    if (isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating))
            or not np.isfinite(value) or value < 0):
        raise ValueError(f"epsilon must be a finite number >= 0{note}, got {value!r}")
    return float(value)


def check_confidence_level(value: object) -> float:
    """``value`` as a float strictly between 0 and 1.

    Examples
    --------
    >>> check_confidence_level(0.9)
    0.9
    """
    return check_unit_interval(value, "confidence_level")


def check_min_pairs(value: object) -> int:
    """``value`` as an int >= 2 (the fewest pairs for a defined correlation).

    Examples
    --------
    >>> check_min_pairs(3)
    3
    """
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 2:
        raise ValueError(f"min_pairs must be an integer >= 2, got {value!r}")
    return int(value)


def check_choice(value: object, allowed: Sequence[Choice], name: str, note: str = "") -> Choice:
    """``value`` if it is one of ``allowed``.

    A value that is not is refused with a message listing ``allowed`` and, for a near miss
    (another case, a typo), the closest choice: "did you mean ...". The functions take the
    choices as spelt (the command line, :func:`match_choice`, ignores case).

    Examples
    --------
    >>> check_choice("less", ("greater", "less", "two-sided"), "alternative")
    'less'
    """
    if not isinstance(value, str) or value not in allowed:
        hint = did_you_mean(value, allowed) if isinstance(value, str) else ""
        raise ValueError(f"{name} must be one of {tuple(allowed)!r}{note}, got {cut(value)}{hint}")
    return cast(Choice, value)  # one of `allowed`


def match_choice(value: str, allowed: Sequence[Choice]) -> Choice | None:
    """The one entry of ``allowed`` equal to ``value`` ignoring case, else None (none, or several).

    Examples
    --------
    >>> match_choice("Kendall", ("pearson", "spearman", "kendall")), match_choice("x", ("a", "b"))
    ('kendall', None)
    """
    if value in allowed:
        return cast(Choice, value)
    same = [choice for choice in allowed if choice.casefold() == value.casefold()]
    return same[0] if len(same) == 1 else None


def choice_type(allowed: Sequence[str]) -> Callable[[str], str]:
    """An ``argparse`` type for an option with these choices: any case where unambiguous, and a
    "did you mean" for a near miss.

    Examples
    --------
    >>> choice_type(("pearson", "kendall"))("Kendall")
    'kendall'
    """
    choices = tuple(allowed)

    def parse(text: str) -> str:
        found = match_choice(text, choices)
        if found is None:
            raise argparse.ArgumentTypeError(f"invalid choice: {cut(text)} (choose from "
                                             f"{', '.join(map(repr, choices))}){did_you_mean(text, choices)}")
        return found

    parse.__name__ = "choice"
    return parse


def check_choices(values: Any, allowed: Sequence[Choice], name: str) -> list[Choice]:
    """``values`` (a name or a non-empty list of names, each one of ``allowed``) as a list.

    Examples
    --------
    >>> check_choices("percentile", ("percentile", "bca"), "methods")
    ['percentile']
    """
    items: list[object] = [values] if isinstance(values, str) else list(values)
    if not items:
        raise ValueError(f"{name} must name at least one of {tuple(allowed)!r}")
    return [check_choice(value, allowed, name) for value in items]


def check_average(average: object) -> Average:
    """``average``, a member of :data:`~xcorrstat._types.Average` (the levels it applies to are checked
    with the capability table's :func:`~xcorrstat._capabilities.check_refinements`).

    Examples
    --------
    >>> check_average("pairs")
    'pairs'
    """
    check_choice(average, get_args(Average), "average")
    return cast(Average, average)
