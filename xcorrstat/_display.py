"""Labels as they are shown: literally, without control characters, at a readable length.

Metric and column names come from users' files. In a terminal an escape sequence in a
name would be interpreted, in a figure a ``$`` would start matplotlib's mathtext, and a
30 MB cell would flood an error message. These helpers show every label literally.
"""

from __future__ import annotations

import difflib
import sys
from collections.abc import Iterable
from typing import IO, Any

__all__ = ["LABEL_WIDTH", "VALUE_WIDTH", "closest", "cut", "did_you_mean", "figure_text", "name_list",
           "printable", "shorten", "stream_is_interactive"]

LABEL_WIDTH = 40
"""Longest label shown whole in a terminal table; longer ones are cut."""

VALUE_WIDTH = 200
"""Longest text shown whole in a message."""

CUT_WIDTH = 80
"""Longest ``repr`` of a user's value echoed whole in an error message."""

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(char: str) -> str:
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def printable(value: object, width: int | None = None) -> str:
    """``str(value)`` with control characters escaped, cut to ``width`` characters.

    Parameters
    ----------
    value : object
        Anything; shown through ``str``.
    width : int, optional
        Longest result; a longer text keeps its start and says how long it was.

    Returns
    -------
    str

    Examples
    --------
    >>> printable("\\x1b[31mred")
    '\\\\x1b[31mred'
    >>> printable("x" * 100, width=20)
    'x...(100 characters)'
    """
    text = str(value)
    full = len(text)
    if width is not None and full > width:
        text = text[:width]  # escape only what can be shown
    if not text.isprintable():
        text = "".join(c if c.isprintable() else _escape(c) for c in text)
    if width is not None and (full > width or len(text) > width):
        text = shorten(text, width, length=full)
    return text


def cut(value: object, limit: int = CUT_WIDTH) -> str:
    """``repr(value)`` cut to ``limit`` characters with an ellipsis, for error messages.

    ``repr`` already escapes control characters in strings.

    Examples
    --------
    >>> cut("abc")
    "'abc'"
    >>> cut("x" * 100, 10)
    "'xxxxxx..."
    """
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def shorten(text: str, width: int, *, length: int | None = None) -> str:
    """``text`` cut to at most ``width`` characters, ending in how long it was.

    Examples
    --------
    >>> shorten("abcdef", 10)
    'abcdef'
    >>> shorten("a" * 50, 25)
    'aaaaaaa...(50 characters)'
    """
    if len(text) <= width and length is None:
        return text
    tail = f"...({len(text) if length is None else length} characters)"
    keep = max(width - len(tail), 1)
    return text[:keep] + tail


def figure_text(value: object, width: int | None = None) -> str:
    """A label for a matplotlib figure: shown literally (no mathtext), without control characters.

    Every ``$`` is escaped, so matplotlib draws it as a dollar sign instead of
    starting a formula.

    Examples
    --------
    >>> figure_text("$\\\\foo$")
    '\\\\$\\\\foo\\\\$'
    """
    return printable(value, width).replace("$", "\\$")


def closest(value: object, names: Iterable[object], n: int = 3) -> list[object]:
    """The (at most ``n``) entries of ``names`` most like ``value``, best first, ignoring case.

    An entry equal to ``value`` but for case comes first; then ``difflib``'s close matches.

    Examples
    --------
    >>> closest("Kendal", ["pearson", "spearman", "kendall"])
    ['kendall']
    >>> closest("BLEU", ["bleu", "chrf"])
    ['bleu']
    """
    pool = list(dict.fromkeys(names))
    key = str(value).casefold()
    folded: dict[str, list[object]] = {}
    for name in pool:
        folded.setdefault(str(name).casefold(), []).append(name)
    found = list(folded.get(key, []))
    for match in difflib.get_close_matches(key, list(folded), n=n, cutoff=0.6):
        found += [name for name in folded[match] if name not in found]
    return found[:n]


def did_you_mean(value: object, names: Iterable[object]) -> str:
    """``"; did you mean 'x'?"`` naming the closest of ``names`` to ``value``, or ``""`` when none is close.

    Examples
    --------
    >>> did_you_mean("kendal", ["pearson", "kendall"])
    "; did you mean 'kendall'?"
    >>> did_you_mean("zzz", ["pearson", "kendall"])
    ''
    """
    near = closest(value, names)
    if not near:
        return ""
    shown = [cut(str(name)) for name in near]
    return f"; did you mean {' or '.join([', '.join(shown[:-1]), shown[-1]] if len(shown) > 1 else shown)}?"


def name_list(names: Iterable[object], near: object = None, width: int = 300) -> str:
    """The names as a message shows them: all of them in their order when they fit in about ``width``
    characters; else those closest to ``near`` first, then the others, and how many were left out.

    Examples
    --------
    >>> name_list(["a", "b", "c"])
    "['a', 'b', 'c']"
    >>> name_list([f"metric_{k}" for k in range(100)], near="metric_42", width=60)
    "['metric_42', 'metric_4', 'metric_2', 'metric_0', ...] and 96 more (100 in all)"
    """
    pool = [str(name) for name in dict.fromkeys(names)]
    texts = [cut(name, LABEL_WIDTH + 2) for name in pool]
    if sum(len(t) + 2 for t in texts) <= width:
        return "[" + ", ".join(texts) + "]"
    first = [str(name) for name in closest(near, pool)] if near is not None else []
    ordered = first + [name for name in pool if name not in first]
    shown: list[str] = []
    used = 0
    for name in ordered:
        text = cut(name, LABEL_WIDTH + 2)
        if shown and used + len(text) + 2 > width:
            break
        shown.append(text)
        used += len(text) + 2
    return f"[{', '.join(shown)}, ...] and {len(ordered) - len(shown)} more ({len(ordered)} in all)"


def stream_is_interactive(stream: IO[Any] | None = None) -> bool:
    """Whether ``stream`` (default ``sys.stderr``) is shown to a person as it is written:
    a terminal, or a Jupyter notebook's output. A file, a pipe or a log is not, nor is the
    output pytest captures.

    A notebook's streams are ipykernel's ``OutStream`` (or a subclass of it), whose
    ``isatty()`` is False; a terminal's answer ``isatty()`` True.

    Examples
    --------
    >>> import io
    >>> stream_is_interactive(io.StringIO())
    False
    """
    stream = sys.stderr if stream is None else stream
    if any(str(getattr(cls, "__module__", "")).split(".")[0] == "ipykernel" for cls in type(stream).__mro__):
        return True
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False
