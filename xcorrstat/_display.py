"""Labels as they are shown: literally, without control characters, at a readable length.

Metric and column names come from users' files. In a terminal an escape sequence in a
name would be interpreted, in a figure a ``$`` would start matplotlib's mathtext, and a
30 MB cell would flood an error message. These helpers show every label literally.
"""

from __future__ import annotations

__all__ = ["LABEL_WIDTH", "VALUE_WIDTH", "cut", "figure_text", "printable", "shorten"]

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
