"""Readers of the outputs for test_hostile_names.py: each parses a format with a parser of its own.

Markdown with markdown-it-py, HTML with the standard library's parser, LaTeX rows by their
unescaped ``&``, text tables by their columns; none of them uses xcorrstat.
"""

from __future__ import annotations

import re
import unicodedata
from html.parser import HTMLParser

#: Token types of markdown-it-py that a cell showing a name as text never holds.
MARKUP_TOKENS = {"html_inline", "html_block", "link_open", "image", "code_inline", "code_block", "fence", "s_open",
                 "softbreak", "hardbreak"}


def raw_controls(text: str) -> list[str]:
    """The characters of ``text`` a terminal would act on: controls (but line ends), format characters, separators."""
    return [c for c in text if c != "\n" and unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp")]


def _cell(inline) -> tuple[str, bool]:
    """The text a Markdown cell renders and whether it is all in bold."""
    children = [c for c in inline.children or [] if c.content or c.type not in ("text", "text_special")]
    bad = [c.type for c in children if c.type in MARKUP_TOKENS]
    assert not bad, (inline.content, bad)
    text = "".join(c.content for c in children if c.type in ("text", "text_special"))
    bold = bool(children) and children[0].type == "strong_open" and children[-1].type == "strong_close"
    return text, bold


def markdown_tables(text: str) -> list[list[list[tuple[str, bool]]]]:
    """Every table of ``text`` as parsed by markdown-it-py (CommonMark with tables): rows of (text, bold) cells.

    Fails when the text holds raw HTML or any other markup but emphasis.
    """
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    assert not [t.type for t in tokens if t.type in MARKUP_TOKENS]
    tables: list[list[list[tuple[str, bool]]]] = []
    for k, token in enumerate(tokens):
        if token.type == "table_open":
            tables.append([])
        elif token.type == "tr_open":
            tables[-1].append([])
        elif token.type == "inline" and tokens[k - 1].type in ("th_open", "td_open"):
            tables[-1][-1].append(_cell(token))
        elif token.type == "inline":
            _cell(token)
    return tables


def latex_rows(tex: str) -> list[list[str]]:
    """The rows of every booktabs ``tabular`` in ``tex`` (header rows too), split at unescaped ``&``."""
    rows = []
    for line in tex.splitlines():
        if line.endswith(r"\\"):
            rows.append(re.split(r"(?<!\\)&", line[:-2]))
    return rows


class _Page(HTMLParser):
    """The start tags, attribute names and the text of each ``td`` of an HTML page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attributes: set[str] = set()
        self.cells: list[str] = []
        self._in_cell = False

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attributes.update(name for name, _ in attrs)
        if tag == "td":
            self._in_cell = True
            self.cells.append("")

    def handle_endtag(self, tag):
        if tag == "td":
            self._in_cell = False

    def handle_data(self, data):
        if self._in_cell:
            self.cells[-1] += data


def html_page(text: str) -> _Page:
    """``text`` parsed: ``.tags``, ``.attributes`` and ``.cells`` (the text of each table cell)."""
    page = _Page()
    page.feed(text)
    page.close()
    return page


def right_column(lines: list[str], header: str) -> list[str]:
    """The right-aligned first column of a fixed-width text table: it ends where ``header`` ends."""
    head = next(k for k, line in enumerate(lines) if header in line)
    end = lines[head].index(header) + len(header)
    return [line[:end].lstrip(" ") for line in lines[head + 1:] if line.strip()]


_NUMBER = r"(?:-?\d+\.\d+|nan)"

#: A row of a report's text table: rank, label, r, [CI], cluster.
REPORT_ROW = re.compile(rf"^ *(?:\d+|-)  (?P<label>.*?\S) +(?P<r>{_NUMBER})  +\[{_NUMBER}, {_NUMBER}\] +(?:\d+|-)$")


def correlate_row(columns: int) -> re.Pattern[str]:
    """A row of ``xcorrstat correlate``'s table: the label, then ``columns`` numbers."""
    return re.compile(rf"^(?P<label>.*?\S) +(?P<numbers>{_NUMBER}(?: +{_NUMBER}){{{columns - 1}}})$")
