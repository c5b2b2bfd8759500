"""Argument checks shared by every public call: each error names the argument and what was expected."""

from __future__ import annotations

import argparse
import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeVar, cast, get_args, overload

import numpy as np

from ._display import cut, did_you_mean
from ._types import Average
from ._warn import warn

__all__ = [
    "MAX_DRAWS",
    "TooFewDrawsWarning",
    "check_average",
    "check_batch",
    "check_choice",
    "check_confidence_level",
    "check_draw_count",
    "check_epsilon",
    "check_min_pairs",
    "check_positive_int",
    "choice_type",
    "interval_min_draws",
    "match_choice",
    "pvalue_min_draws",
    "warn_few_draws",
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


#: The most draws one call makes (``n_resamples``, ``max_resamples``): beyond it a run cannot finish in hours.
MAX_DRAWS = 10_000_000


class TooFewDrawsWarning(UserWarning):
    """Fewer draws than the requested interval or test needs (the message gives the minimum)."""


def check_draw_count(value: object, name: str = "n_resamples") -> int:
    """``value`` as a number of draws: an int from 1 to :data:`MAX_DRAWS`.

    Examples
    --------
    >>> check_draw_count(np.int64(500))
    500
    >>> check_draw_count(10**9)
    Traceback (most recent call last):
    ...
    ValueError: n_resamples=1000000000 is more draws than one call makes (at most 10000000: ...
    """
    number = check_positive_int(value, name)
    if number > MAX_DRAWS:
        auto = ("--n-resamples auto with --max-resamples" if name.startswith("--")
                else "n_resamples='auto' with max_resamples")
        raise ValueError(f"{name}={cut(number, 40)} is more draws than one call makes (at most {MAX_DRAWS}: "
                         f"at thousands of draws a second that is hours); use fewer, or {auto}, which draws "
                         "only until the decisions are settled")
    return number


def interval_min_draws(confidence_level: float) -> int:
    """Fewest draws whose percentiles at ``(1 -+ confidence_level) / 2`` are not the extreme draws: ``2 / (1 - level)``.

    Examples
    --------
    >>> interval_min_draws(0.95), interval_min_draws(0.9)
    (40, 20)
    """
    return max(2, math.ceil(2.0 / (1.0 - float(confidence_level)) - 1e-9))


def pvalue_min_draws(alpha: float) -> int:
    """Fewest draws for which a plus-one p-value ``(1 + k) / (1 + B)`` can be ``<= alpha``: ``1 / alpha - 1``.

    Examples
    --------
    >>> pvalue_min_draws(0.05), pvalue_min_draws(0.01)
    (19, 99)
    """
    return max(1, math.ceil(1.0 / float(alpha) - 1.0 - 1e-9))


def warn_few_draws(n_resamples: int, *, confidence_level: float | None = None, alpha: float | None = None) -> None:
    """Warn (:class:`TooFewDrawsWarning`, one line with the minimum) when ``n_resamples`` draws are too few.

    ``confidence_level``: for a percentile interval (:func:`interval_min_draws`); ``alpha``: for a test
    whose plus-one p-values are compared with ``alpha`` (:func:`pvalue_min_draws`). The warning names the
    user's line and is given once per public call (:func:`~xcorrstat._warn.warn`).

    Examples
    --------
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_few_draws(1, confidence_level=0.95)
    >>> print(caught[0].message)
    1 draw is too few for a 95% interval: its 2.5% and 97.5% percentiles need at least 40 draws (n_resamples >= 40)
    """
    n = int(n_resamples)
    draws = f"{n} draw is" if n == 1 else f"{n} draws are"
    if confidence_level is not None and n < interval_min_draws(confidence_level):
        level = float(confidence_level)
        tail = f"{100 * (1 - level) / 2:g}% and {100 * (1 + level) / 2:g}%"
        need = interval_min_draws(level)
        warn(f"{draws} too few for a {100 * level:g}% interval: its {tail} percentiles need at least "
             f"{need} draws (n_resamples >= {need})", TooFewDrawsWarning)
    if alpha is not None and n < pvalue_min_draws(alpha):
        need = pvalue_min_draws(alpha)
        warn(f"{draws} too few for a test at alpha = {float(alpha):g}: no p-value can be below "
             f"1 / (1 + {n}) = {1 / (1 + n):.3g}, so none is significant; at least {need} draws are "
             f"needed (n_resamples >= {need})", TooFewDrawsWarning)


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
