"""Counting the fields of a CSV or TSV file's lines: the first data line with fewer fields than the header.

Helper of :func:`xcorrstat._io.read`: pandas fills the missing fields of a short line (a truncated last
line) with NaN, so the reader looks for one when a column the header names has missing values. Files
without a quote character, in an encoding where the separator and the newline are single bytes (UTF-8,
Latin-1 ...), are counted in blocks with NumPy (a 130 MB file of a million lines in about 60% of the
time pandas takes to parse it);
others line by line with the :mod:`csv` module, which follows quoted fields over several lines.
"""

from __future__ import annotations

import codecs
import csv
import io

import numpy as np

from .limits import open_binary

__all__ = ["short_line"]

_BLOCK = 1 << 24


def _by_csv(path: str, gz: bool, encoding: str, sep: str, required: int) -> tuple[int, int] | None:
    """:func:`short_line` with the csv module (quoted fields, any encoding)."""
    with io.TextIOWrapper(open_binary(path, gz), encoding=encoding, newline="") as fh:
        reader = csv.reader(fh, delimiter=sep)
        next(reader, None)
        start = reader.line_num + 1
        for record in reader:
            blank = not record or (len(record) == 1 and not record[0].strip())
            if not blank and len(record) < required:
                return start, len(record)
            start = reader.line_num + 1
    return None


def _short_in_block(data: np.ndarray, begin: int, sep: int, required: int) -> tuple[int, int, int]:
    """(index of its first short line that is not blank, or -1; that line's fields; number of lines) of the
    whole lines of ``data`` from ``begin`` on (``data`` ends with a newline)."""
    ends = np.flatnonzero(data[begin:] == 10) + begin
    seps = np.flatnonzero(data[begin:] == sep) + begin
    counts = np.diff(np.searchsorted(seps, ends), prepend=0) + 1
    short = counts < required
    if short.any():
        for k in np.flatnonzero(short):
            start = int(ends[k - 1]) + 1 if k else begin
            if data[start:int(ends[k])].tobytes().strip():  # blank lines (pandas skips them) are no data lines
                return int(k), int(counts[k]), len(ends)
    return -1, 0, len(ends)


def _by_blocks(path: str, gz: bool, sep: int, required: int) -> tuple[int, int] | None:
    """:func:`short_line` by blocks of bytes; ``_Quoted`` when a quote is found (then ``_by_csv`` decides)."""
    lines, rest, header = 0, b"", True
    with open_binary(path, gz) as fh:
        while True:
            chunk = fh.read(_BLOCK)
            if b'"' in chunk:
                raise _Quoted
            block = rest + chunk if rest else chunk
            last = block.rfind(b"\n") + 1
            if not chunk and last < len(block):
                block, last = block + b"\n", len(block) + 1
            rest = block[last:]
            data = np.frombuffer(block, dtype=np.uint8, count=last)
            begin = 0
            if header and last:  # the header's line is not a data line
                begin, lines, header = block.find(b"\n") + 1, 1, False
            k, fields, count = _short_in_block(data, begin, sep, required) if begin < last else (-1, 0, 0)
            if k >= 0:
                return lines + k + 1, fields
            lines += count
            if not chunk:
                return None


class _Quoted(Exception):
    """A quote character: fields may hold separators and newlines."""


def short_line(path: str, gz: bool, encoding: str, sep: str, required: int) -> tuple[int, int] | None:
    """(line, number of fields) of the first data line with fewer than ``required`` fields, else None.

    Blank lines, which pandas skips, are not data lines.
    """
    try:
        name = codecs.lookup(encoding).name
        plain = "utf-8" if name == "utf-8-sig" else name  # the BOM is on the header's line, never counted
        single = "\n".encode(plain) == b"\n" and sep.encode(plain) == sep.encode("ascii")
    except (UnicodeError, LookupError):
        single = False
    if single:
        try:
            return _by_blocks(path, gz, ord(sep), required)
        except _Quoted:
            pass
    return _by_csv(path, gz, encoding, sep, required)
