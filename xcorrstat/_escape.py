"""One escaping layer per output format: how a user's name is written in each of them.

Metric names, labels and task names come from users' files (in mt-metrics-eval's layout
a metric name is a file name chosen by a participant). Every writer goes through one
function here for its format, so each format has a single rule:

- terminal text (:func:`terminal_text`, :func:`distinct_labels`): no raw control (C0, C1,
  DEL), format (bidi overrides and isolates, zero-width characters, BOM) or line/paragraph
  separator character; each is shown as a Python escape (``\\x1b``, ``\\u202e``). Labels
  longer than the table's width are cut keeping their start and end, and the cut labels
  of one table or figure stay distinct.
- Markdown (:func:`markdown_text`, :func:`markdown_table`): the terminal text, then HTML
  (``< > &``) as entities and Markdown's inline markup (``\\ ` * _ { } [ ] | # !``) escaped
  with a backslash, so a name renders as its text, never as markup or raw HTML.
- LaTeX (:func:`latex_text`): the terminal text, then every special character escaped.
- HTML (:func:`html_text`): the terminal text, then ``html.escape``.
- figures (:func:`figure_labels`): the distinct labels with ``$`` escaped (no mathtext);
  matplotlib escapes the SVG itself.
- CSV (:func:`csv_options`) and JSON: the exact names, as data. A CSV field holding a line
  break is quoted (a carriage return too); a name starting with ``=``, ``+``, ``-`` or ``@``
  is written as it is, not altered for spreadsheets. JSON escapes control characters itself.
"""

from __future__ import annotations

import hashlib
import html
from collections.abc import Iterable, Sequence
from typing import Any

from ._display import printable

__all__ = ["csv_options", "csv_text", "distinct_labels", "figure_labels", "html_text", "latex_text",
           "markdown_table", "markdown_text", "terminal_text"]

#: How many characters of the end a cut label keeps (of its width).
_TAIL_SHARE = 3


def terminal_text(value: object, width: int | None = None) -> str:
    """``str(value)`` for a terminal: every character that is not printable shown as an escape.

    Escaped are the control characters (C0, C1, DEL), format characters (bidi overrides and
    isolates, zero-width characters, the BOM), line and paragraph separators, and any space
    but the ASCII one. With ``width``, a longer text keeps its start and says how long it was.

    Examples
    --------
    >>> terminal_text("a\\u202eb\\x1b]0;t\\x07")
    'a\\\\u202eb\\\\x1b]0;t\\\\x07'
    """
    return printable(value, width)


def _cut(text: str, width: int) -> str:
    """``text`` (already escaped) in at most ``width`` characters: its start, ``...``, its end."""
    if len(text) <= width:
        return text
    if width < 5:
        return text[:width]
    tail = max((width - 3) // _TAIL_SHARE, 1)
    return text[: width - 3 - tail] + "..." + text[len(text) - tail:]


def _shown(name: str, width: int) -> str:
    """``name`` escaped and cut to ``width``; a long name is escaped only where it is shown."""
    if len(name) > 2 * width:
        return _cut(printable(name[:width]) + printable(name[-width:]), width)
    return _cut(printable(name), width)


def _tagged(name: str, width: int, digits: int) -> str:
    """``name`` shown with a tag of its hash at the end (``~1a2b3c``), all in ``width`` characters."""
    tag = "~" + hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:digits]
    return _shown(name, max(width - len(tag), 1)) + tag


def distinct_labels(names: Iterable[object], width: int) -> list[str]:
    """The label of each name in one table or figure: escaped, at most ``width`` characters, distinct.

    A name that fits is shown whole (escaped as :func:`terminal_text` does). A longer one
    keeps its start and its end around ``...``. Distinct names whose labels would still be
    the same (they differ only in the middle, or only in characters shown as escapes) end
    in ``~`` and a few hex digits of a hash of the name instead, the same in every table.

    Parameters
    ----------
    names : iterable
        The names, shown through ``str``; a name given twice gets the same label.
    width : int
        Longest label.

    Returns
    -------
    list of str

    Examples
    --------
    >>> distinct_labels(["bleu", "a" * 30 + "_x", "a" * 30 + "_y"], 20)
    ['bleu', 'aaaaaaaaaaaa...aaa_x', 'aaaaaaaaaaaa...aaa_y']
    >>> distinct_labels(["a" * 15 + "1" + "b" * 15, "a" * 15 + "2" + "b" * 15], 20)
    ['aaaaaaa...bbb~da9d53', 'aaaaaaa...bbb~4862a7']
    """
    texts = [str(name) for name in names]
    unique = list(dict.fromkeys(texts))
    shown = {name: _shown(name, width) for name in unique}
    digits = 6
    while True:
        owners: dict[str, list[str]] = {}
        for name in unique:
            owners.setdefault(shown[name], []).append(name)
        clashes = [group for group in owners.values() if len(group) > 1]
        if not clashes or digits > 64:
            break
        for group in clashes:
            shown.update({name: _tagged(name, width, digits) for name in group})
        digits += 2
    return [shown[name] for name in texts]


def figure_labels(names: Iterable[object], width: int) -> list[str]:
    """:func:`distinct_labels` for a matplotlib figure: every ``$`` escaped (drawn literally, no mathtext).

    Examples
    --------
    >>> figure_labels(["$x$", "bleu"], 20)
    ['\\\\$x\\\\$', 'bleu']
    """
    return [label.replace("$", "\\$") for label in distinct_labels(names, width)]


def html_text(value: object, width: int | None = None) -> str:
    """``value`` as HTML text: escaped as :func:`terminal_text` does, then markup and quotes escaped.

    Examples
    --------
    >>> html_text("<b>\\x1b")
    '&lt;b&gt;\\\\x1b'
    """
    return html.escape(printable(value, width))


_MARKDOWN_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "~": "&#126;", "$": "&#36;"}
_MARKDOWN_BACKSLASHED = frozenset("\\`*_{}[]|#!")


def _markdown_char(text: str, k: int) -> str:
    """Character ``k`` of ``text`` as Markdown; an ``_`` between two letters or digits (``qa_eval_f1``)
    starts or ends no emphasis in any of the dialects and stays as it is."""
    char = text[k]
    if char in _MARKDOWN_ENTITIES:
        return _MARKDOWN_ENTITIES[char]
    if char == "_" and 0 < k < len(text) - 1 and text[k - 1].isalnum() and text[k + 1].isalnum():
        return char
    return "\\" + char if char in _MARKDOWN_BACKSLASHED else char


def markdown_text(value: object) -> str:
    """``value`` as literal Markdown text (a table cell, a heading): never markup, never raw HTML.

    Characters :func:`terminal_text` escapes are shown as their escapes; ``& < >`` (and ``~``
    and ``$``, which extensions read as strike-through or math) become HTML entities; the
    inline markup ``\\ ` * _ { } [ ] | # !`` is escaped with a backslash (but for an ``_``
    between two letters or digits, which no dialect reads as markup); a space at either end
    becomes ``&#32;`` so a table cell keeps it. The rules hold in CommonMark, GitHub's
    Markdown and Python-Markdown (MkDocs).

    Examples
    --------
    >>> markdown_text("<img src=x>")
    '&lt;img src=x&gt;'
    >>> markdown_text("_a_b|c\\\\")
    '\\\\_a_b\\\\|c\\\\\\\\'
    """
    text = printable(value)
    out = "".join(_markdown_char(text, k) for k in range(len(text)))
    stripped = out.strip(" ")
    if stripped == out:
        return out
    lead = len(out) - len(out.lstrip(" "))
    trail = len(out) - len(out.rstrip(" "))
    return "&#32;" * lead + stripped + "&#32;" * (trail if stripped else 0)


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[str]], align: Sequence[str]) -> str:
    """A GitHub-flavoured Markdown table of cells already written as Markdown (see :func:`markdown_text`).

    ``align`` holds ``"l"`` or ``"r"`` per column.

    Examples
    --------
    >>> print(markdown_table(["a", "b"], [["x", "1"]], "lr"))
    | a | b |
    | :-- | --: |
    | x | 1 |
    <BLANKLINE>
    """
    rule = [":--" if a == "l" else "--:" for a in align]
    lines = ["| " + " | ".join(cells) + " |" for cells in [list(header), rule, *map(list, rows)]]
    return "\n".join(lines) + "\n"


_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                  "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
                  "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}"}


def latex_text(value: object) -> str:
    r"""``value`` set literally in LaTeX text mode.

    Characters :func:`terminal_text` escapes are shown as their escapes; every special
    character is escaped (``\ { } $ & # ^ _ ~ %`` and ``< > |``, which the default font
    encoding would draw as other signs); ``--`` stays two hyphens.

    Examples
    --------
    >>> print(latex_text("\\input{x}_1 -- 100%"))
    \textbackslash{}input\{x\}\_1 -{}- 100\%
    """
    text = printable(value)
    out = []
    for k, char in enumerate(text):
        if char == "-" and text[k + 1: k + 2] == "-":
            out.append("-{}")
        else:
            out.append(_LATEX_SPECIAL.get(char, char))
    return "".join(out)


def csv_options(frame: Any) -> dict[str, str]:
    """Options of ``frame.to_csv`` that keep every text exact: ``{"lineterminator": "\\r\\n"}`` when a label
    or text cell holds a carriage return, else none.

    Python's CSV writer quotes a field holding a character of the line ending, and only
    those: with ``"\\n"`` line endings a lone carriage return is written bare, and readers
    break the row there. With ``"\\r\\n"`` endings it is quoted and reads back exactly.

    Examples
    --------
    >>> import pandas as pd
    >>> csv_options(pd.DataFrame({"metric": ["bleu"]})), csv_options(pd.DataFrame({"metric": ["a\\rb"]}))
    ({}, {'lineterminator': '\\r\\n'})
    """
    flat = frame.reset_index()
    texts = [str(c) for c in flat.columns]
    for column in flat.columns:
        if flat[column].dtype.kind not in "biufcmM":
            texts += [str(v) for v in flat[column].to_numpy()]
    return {"lineterminator": "\r\n"} if any("\r" in t for t in texts) else {}


def csv_text(frame: Any, **options: Any) -> str:
    """``frame.to_csv(**options)`` as a string, every text exact (see :func:`csv_options`).

    Examples
    --------
    >>> import pandas as pd
    >>> csv_text(pd.DataFrame({"metric": ["a\\rb", "=1+1"]}), index=False)
    'metric\\r\\n"a\\rb"\\r\\n=1+1\\r\\n'
    """
    return str(frame.to_csv(**options, **csv_options(frame)))
