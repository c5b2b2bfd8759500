"""Labels as they are shown: literally, without control characters, at a readable length.

Metric and column names come from users' files. In a terminal an escape sequence in a
name would be interpreted, in a figure a ``$`` would start matplotlib's mathtext, and a
30 MB cell would flood an error message. These helpers show every label literally.
"""

from __future__ import annotations

import difflib
import sys
import unicodedata
from collections.abc import Iterable
from typing import IO, Any

__all__ = ["LABEL_WIDTH", "SUGGESTED", "VALUE_WIDTH", "closest", "cut", "did_you_mean", "figure_text", "is_part",
           "name_list", "plain", "printable", "shorten", "stream_is_interactive"]

LABEL_WIDTH = 40
"""Longest label shown whole in a terminal table; longer ones are cut."""

VALUE_WIDTH = 200
"""Longest text shown whole in a message."""

SUGGESTED = 6
"""Most names a "did you mean" shows; more are counted."""

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


def plain(name: object) -> str:
    """A name without blanks or invisible characters (a zero-width space, a byte-order mark), case-folded:
    what two spellings of one name share.

    Examples
    --------
    >>> plain(" Human\u200b_MQM")
    'human_mqm'
    """
    return "".join(ch for ch in str(name) if not ch.isspace()
                   and unicodedata.category(ch) not in ("Cf", "Cc", "Zs", "Zl", "Zp")).casefold()


def is_part(part: str, name: str) -> bool:
    """Whether ``part`` is whole words of ``name``, ignoring case: a prefix, suffix or middle of it that
    starts and ends at a word boundary (the name's ends, or a character that is not a letter or digit).

    Examples
    --------
    >>> is_part("mqm", "human_mqm"), is_part("Relevance", "expert_relevance"), is_part("m1", "m10")
    (True, True, False)
    """
    part, name = part.strip().casefold(), name.casefold()
    if len(part) < 2 or not any(ch.isalnum() for ch in part) or part == name:
        return False
    at = name.find(part)
    while at >= 0:
        stop = at + len(part)
        if (at == 0 or not name[at - 1].isalnum()) and (stop == len(name) or not name[stop].isalnum()):
            return True
        at = name.find(part, at + 1)
    return False


def closest(value: object, names: Iterable[object], n: int = 3, *, cutoff: float = 0.6) -> list[object]:
    """The entries of ``names`` most like ``value``, best first, ignoring case.

    An entry equal to ``value`` but for case, blanks and invisible characters is the answer alone.
    Otherwise: every entry that ``value`` is whole words of (:func:`is_part`: ``mqm`` of ``human_mqm``),
    then the ``n`` closest spellings (``difflib``'s ratio at least ``cutoff``) and any as close as the
    last of them; at most ``n`` in all unless more are as close, or more entries hold ``value`` as words:
    those are all given (a choice between them is the user's).

    Examples
    --------
    >>> closest("Kendal", ["pearson", "spearman", "kendall"])
    ['kendall']
    >>> closest("BLEU", ["bleu", "chrf"])
    ['bleu']
    >>> closest("mqm", ["m0", "human_mqm"])
    ['human_mqm']
    >>> closest("relevance", ["expert_relevance", "turker_relevance", "m0"])
    ['expert_relevance', 'turker_relevance']
    """
    pool = list(dict.fromkeys(names))
    key = str(value).casefold()
    same = [name for name in pool if str(name).casefold() == key]
    same = same or [name for name in pool if plain(name) == plain(value)]
    if same:
        return same[:n]
    found = [name for name in pool if is_part(str(value), str(name))]
    parts = len(found)
    folded: dict[str, list[object]] = {}
    for name in pool:
        folded.setdefault(str(name).casefold(), []).append(name)
    order = {name: k for k, name in enumerate(folded)}
    ratio = {m: difflib.SequenceMatcher(None, key, m).ratio()
             for m in difflib.get_close_matches(key, list(folded), n=len(folded), cutoff=cutoff)}
    close = sorted(ratio, key=lambda m: (-ratio[m], order[m]))  # equally close ones in the given order
    tied = [m for m in close[n:] if close[:n] and ratio[m] == ratio[close[n - 1]]]  # as close as the n-th
    for match in close[:n] + tied:
        found += [name for name in folded[match] if name not in found]
    return found[:max(n, parts) + len(tied)]


def did_you_mean(value: object, names: Iterable[object], *, n: int = 3, cutoff: float = 0.6,
                 parenthesised: bool = False) -> str:
    """``"; did you mean 'x'?"`` naming the entry of ``names`` closest to ``value`` (:func:`closest`),
    ``"; did you mean one of 'x', 'y'?"`` when several are as close, or ``""`` when none is close;
    ``" (did you mean 'x'?)"`` with ``parenthesised``.

    Examples
    --------
    >>> did_you_mean("kendal", ["pearson", "kendall"])
    "; did you mean 'kendall'?"
    >>> did_you_mean("mqm", ["m0", "human_mqm"])
    "; did you mean 'human_mqm'?"
    >>> did_you_mean("relevance", ["expert_relevance", "turker_relevance"])
    "; did you mean one of 'expert_relevance', 'turker_relevance'?"
    >>> did_you_mean("zzz", ["pearson", "kendall"])
    ''
    """
    near = closest(value, names, n, cutoff=cutoff)
    if not near:
        return ""
    shown = [cut(str(name)) for name in near[:SUGGESTED]]
    more = f" and {len(near) - SUGGESTED} more" if len(near) > SUGGESTED else ""
    text = f"did you mean {shown[0]}?" if len(near) == 1 else f"did you mean one of {', '.join(shown)}{more}?"
    return f" ({text})" if parenthesised else f"; {text}"


def name_list(names: Iterable[object], near: object = None, width: int = 300) -> str:
    """The names as a message shows them: all of them in their order when they fit in about ``width``
    characters; else those closest to ``near`` first, then the others, and how many were left out.

    Examples
    --------
    >>> name_list(["a", "b", "c"])
    "['a', 'b', 'c']"
    >>> name_list([f"metric_{k}" for k in range(100)], near="metric_42", width=60)
    "['metric_42', 'metric_2', 'metric_4', 'metric_12', ...] and 96 more (100 in all)"
    """
    pool = [str(name) for name in dict.fromkeys(names)]
    texts = [cut(name, LABEL_WIDTH + 2) for name in pool]
    if sum(len(t) + 2 for t in texts) <= width:
        return "[" + ", ".join(texts) + "]"
    first = [str(name) for name in closest(near, pool)] if near is not None else []
    if first and plain(first[0]) == plain(near):  # the name itself, then those like it
        first += [str(name) for name in closest(near, [name for name in pool if name not in first])]
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
