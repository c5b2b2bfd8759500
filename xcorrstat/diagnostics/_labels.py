"""Names of the intervals and tests a simulation compares: lists of scheme labels."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .._resampling.schemes import parse_label

__all__ = ["coordinate_label", "name_list", "parse_labels"]


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


def coordinate_label(name: str, label: str) -> str:
    """How a result labels a scheme the user spelt ``name`` (parsed to ``label``).

    A current label keeps the user's spelling (any case); an earlier spelling gets
    the label, in lower case.

    Examples
    --------
    >>> coordinate_label("perm-both", "PERM-BOTH"), coordinate_label("bootstrap-both", "BOOT-BOTH")
    ('perm-both', 'boot-both')
    """
    return name if name.upper() == label.upper() else label.lower()


def parse_labels(values: str | Iterable[str], allowed: Sequence[str], argument: str) -> tuple[list[str], list[str]]:
    """``(labels, names)``: each name parsed to its label in ``allowed``, and as the result labels it.

    Called from a public function's validator: an earlier spelling's FutureWarning
    points at the user's call.

    Examples
    --------
    >>> parse_labels(["fisher", "Boot-Both"], ("fisher", "BOOT-BOTH"), "methods")
    (['fisher', 'BOOT-BOTH'], ['fisher', 'Boot-Both'])
    """
    names = name_list(values, allowed, argument)
    labels = []
    for name in names:  # a loop, not a comprehension (its own frame before Python 3.12): stacklevel is exact
        labels.append(parse_label(name, allowed, argument, stacklevel=5))
    return labels, [coordinate_label(n, lab) for n, lab in zip(names, labels)]

