"""Names of the intervals and tests a simulation compares: lists of scheme labels."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .._resampling.schemes import parse_label

__all__ = ["name_list", "parse_labels"]


def name_list(values: str | Iterable[str], allowed: Sequence[str], argument: str) -> list[str]:
    """``values`` (a name or a non-empty list of names) as a list; the names are parsed by the caller.

    Examples
    --------
    >>> name_list("fisher", ("fisher",), "methods")
    ['fisher']
    """
    names = [values] if isinstance(values, str) else list(values)
    if not names:
        raise ValueError(f"{argument} must name at least one of {tuple(allowed)!r}")
    return names


def parse_labels(values: str | Iterable[str], allowed: Sequence[str], argument: str) -> tuple[list[str], list[str]]:
    """``(labels, names)``: each name parsed to its label in ``allowed``, and as the result labels it.

    A result labels every choice by its canonical spelling, whatever case the user wrote, so
    results of different calls align.

    Examples
    --------
    >>> parse_labels(["fisher", "Boot-Both"], ("fisher", "BOOT-BOTH"), "methods")
    (['fisher', 'BOOT-BOTH'], ['fisher', 'BOOT-BOTH'])
    """
    labels = [parse_label(name, allowed, argument) for name in name_list(values, allowed, argument)]
    return labels, list(labels)

