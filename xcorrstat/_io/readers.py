"""Reading the text of score files: encodings, compression, header and line checks.

Helpers of :func:`xcorrstat._io.read`; every error they raise names the file (and
the line, where there is one).
"""

from __future__ import annotations

import codecs
import csv
import gzip
import io
import json
import re
import warnings
import zlib
from typing import IO

import pandas as pd

from .._display import cut
from .fields import short_line
from .limits import ReadLimitError, check_columns, open_binary
from .parquet import read_parquet

__all__ = ["ENCODING_OPTION", "FORMAT_OPTION", "load_table", "located", "undecodable"]

#: How a hint names the options a user can pass, in Python and on the command line.
FORMAT_OPTION = "format= (--file-format on the command line)"
ENCODING_OPTION = "encoding= (--encoding on the command line)"

_BOMS = ((b"\xef\xbb\xbf", "utf-8-sig"), (b"\xff\xfe\x00\x00", "utf-32"), (b"\x00\x00\xfe\xff", "utf-32"),
         (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16"))


def _head(path: str, gz: bool, size: int = 4096) -> bytes:
    """The first bytes of the (decompressed) file."""
    with open_binary(path, gz) as fh:
        return fh.read(size)


def _text(path: str, gz: bool, encoding: str, newline: str | None = None) -> IO[str]:
    """The file's text (decompressed when `gz`), within the reading limit."""
    return io.TextIOWrapper(open_binary(path, gz), encoding=encoding, newline=newline)


def _encoding(path: str, gz: bool, encoding: str | None) -> str:
    """`encoding`, else the one a byte-order mark names, else UTF-8 (text without NUL bytes)."""
    if encoding is not None:
        try:
            codecs.lookup(encoding)
        except (LookupError, TypeError):
            raise ValueError(f"encoding={cut(encoding)} is not a known text encoding") from None
        return encoding
    head = _head(path, gz)
    for bom, name in _BOMS:
        if head.startswith(bom):
            return name
    if b"\x00" in head:
        raise ValueError(f"{path!r} holds NUL bytes: it looks like UTF-16 or UTF-32 text without a byte-order "
                         f"mark (or a binary file); pass the file's encoding with {ENCODING_OPTION}, for example "
                         f"'utf-16-le', or its format with {FORMAT_OPTION} if it is Parquet or netCDF")
    return "utf-8"


class _Lines:
    """The lines of a text stream, remembering the first (for a message about the header)."""

    def __init__(self, fh: IO[str]) -> None:
        self._fh, self.first = fh, ""

    def __iter__(self) -> _Lines:
        return self

    def __next__(self) -> str:
        line = next(self._fh)
        self.first = self.first or line
        return line


def _header_error(path: str, sep: str, first: str) -> str:
    """Where a header's field outgrew the csv module's field limit: a stray quote, or a huge name."""
    limit = csv.field_size_limit()
    fields = first.rstrip("\r\n").split(sep)
    long = next((k for k, f in enumerate(fields) if len(f) > limit), len(fields))
    quote = first.find('"')
    if quote >= 0 and first[:quote].count(sep) <= long:
        return (f"{path!r}, line 1, column {first[:quote].count(sep) + 1}: a quote (\") opens a field that is not "
                f"closed within {limit} characters; remove the stray quote or close it")
    if long < len(fields):
        return (f"{path!r}, line 1, column {long + 1}: a column name of {len(fields[long])} characters, more than "
                f"the {limit} a field may hold; is this the header of a score table?")
    return f"{path!r}, line 1: a field of the header is longer than {limit} characters"


def _check_header(path: str, sep: str, encoding: str, gz: bool) -> list[str]:
    """The names of the header; ValueError naming the file when it repeats a column name or is not
    well-formed (empty names may repeat: they are columns without a name, see ``checks.unnamed_columns``)."""
    with _text(path, gz, encoding, newline="") as fh:
        lines = _Lines(fh)
        try:
            names = next(csv.reader(lines, delimiter=sep), [])
        except csv.Error:
            raise ValueError(_header_error(path, sep, lines.first)) from None
    check_columns(path, len(names))
    seen: dict[str, int] = {}
    for pos, name in enumerate(names, start=1):
        if name in seen and name:
            raise ValueError(f"{path!r}, line 1: column name {cut(name)} appears twice (columns {seen[name]} and "
                             f"{pos}); each column needs its own name")
        seen[name] = pos
    return names


def _checked_fields(df: pd.DataFrame, names: list[str], path: str, sep: str, encoding: str,
                    gz: bool) -> tuple[pd.DataFrame, list[str]]:
    """The table as its header names its fields, and notes; ValueError naming the line when a data line
    has fewer fields than the header names, or every data line has more (pandas would make the first
    fields an index and shift the names) that are not all empty."""
    notes = []
    if not (isinstance(df.index, pd.RangeIndex) and df.index.start == 0 and df.index.step == 1):
        extra = df.index.nlevels  # pandas took the first fields as an index: the lines have more fields
        fields = len(names) + extra
        if not df.iloc[:, -extra:].isna().all().all():
            raise ValueError(f"{path!r}, line 2: {fields} fields, but the header (line 1) names {len(names)}: "
                             "name every column in the header, or remove the extra fields")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", pd.errors.ParserWarning)  # the empty fields dropped: said below
            with open_binary(path, gz) as fh:
                df = pd.read_csv(fh, sep=sep, encoding=encoding, low_memory=False, index_col=False)
        notes.append(f"the data lines have {fields} fields, the header {len(names)}: the last "
                     f"{'field is' if extra == 1 else f'{extra} fields are'} empty on every line (a comma at the "
                     "end of each line?) and left out")
    required = max((k + 1 for k, name in enumerate(names) if name), default=0)
    if 0 < required <= df.shape[1] and df.iloc[:, required - 1].isna().any():
        short = short_line(path, gz, encoding, sep, required)
        if short is not None:
            raise ValueError(f"{path!r}, line {short[0]}: {short[1]} field{'' if short[1] == 1 else 's'}, but the "
                             f"header names {required}: is the line cut short? a missing score is an empty "
                             f"field ({sep!r} with nothing between)")
    return df, notes


def _parser_message(path: str, fmt: str, err: Exception) -> str:
    """A message naming the line for pandas' tokenizer errors, the tokenizer's own text otherwise."""
    text = str(err)
    quote = re.search(r"EOF inside string starting at row (\d+)", text)
    if quote:
        return (f"{path!r}, line {int(quote.group(1)) + 1}: a quote (\") opens a field that is never closed (it "
                "runs to the end of the file); remove the stray quote or close it")
    fields = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", text)
    if fields:
        return (f"{path!r}, line {fields.group(2)}: {fields.group(3)} fields, but the lines before have "
                f"{fields.group(1)}")
    return f"{path!r}: not a well-formed {fmt.upper()} file: {cut(text, 200)}"


def _jsonl_records(path: str, encoding: str, gz: bool) -> list[dict]:
    """The objects of a JSON Lines file, read line by line; ValueError names the first bad line."""
    records = []
    with _text(path, gz, encoding) as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as err:
                raise ValueError(f"{path!r}, line {number}: not valid JSON ({err.msg} at column {err.colno}): "
                                 f"{cut(line.strip())}") from None
            if not isinstance(obj, dict):  # the file's content, not an argument, is wrong
                raise ValueError(  # noqa: TRY004
                    f"{path!r}, line {number}: expected a JSON object {{...}}, got {type(obj).__name__}: "
                    f"{cut(line.strip())}")
            records.append(obj)
    return records


def _read_table(path: str, fmt: str, gz: bool, encoding: str | None) -> tuple[pd.DataFrame, list[str]]:
    """The file's table and notes on what was left out of it."""
    if fmt == "parquet":
        return read_parquet(path), []
    enc = _encoding(path, gz, encoding)
    if fmt in ("csv", "tsv"):
        sep = "," if fmt == "csv" else "\t"
        names = _check_header(path, sep, enc, gz)
        with open_binary(path, gz) as fh:  # low_memory=False: one pass, one dtype per column
            df = pd.read_csv(fh, sep=sep, encoding=enc, low_memory=False)
        return _checked_fields(df, names, path, sep, enc, gz)
    try:
        with open_binary(path, gz) as fh:  # dtype=False keeps string labels such as "001" as strings
            return pd.read_json(fh, lines=True, dtype=False, precise_float=True, encoding=enc), []
    except ReadLimitError:
        raise
    except (ValueError, TypeError):  # find the bad line, or read what pandas' parser could not
        return pd.DataFrame.from_records(_jsonl_records(path, enc, gz)), []


def located(message: str, path: str, fmt: str) -> str:
    """`message` naming the file, with each 'data row k' also given as its line of the file."""
    if fmt in ("csv", "tsv", "jsonl"):
        shift = 1 if fmt != "jsonl" else 0
        message = re.sub(r"data row (\d+)", lambda m: f"{m.group(0)} (line {int(m.group(1)) + shift})", message)
    return f"{path!r}: {message}"


def _first_undecodable(path: str, gz: bool, encoding: str) -> tuple[int, int, UnicodeDecodeError] | None:
    """(line, column, error) of the first bytes of the file that are not `encoding` text."""
    decoder = codecs.getincrementaldecoder(encoding)()
    line, column = 1, 1
    with open_binary(path, gz) as fh:
        while chunk := fh.read(1 << 20):
            try:
                text = decoder.decode(chunk)
            except UnicodeDecodeError as err:
                before = err.object[: err.start].decode(encoding, errors="replace")
                lines = before.split("\n")
                return line + len(lines) - 1, (column if len(lines) == 1 else 1) + len(lines[-1]), err
            lines = text.split("\n")
            line, column = line + len(lines) - 1, (column if len(lines) == 1 else 1) + len(lines[-1])
    return None


def undecodable(path: str, encoding: str, err: UnicodeError, gz: bool = False) -> str:
    """The message of a file that is not `encoding` text: where its first bad bytes are, and what to do."""
    try:
        found = _first_undecodable(path, gz, encoding)
    except (OSError, LookupError, ValueError, EOFError):  # an unreadable file: the error as it came
        found = None
    where, reason = "", getattr(err, "reason", str(err))
    if found is not None:
        line, column, bad = found
        where, reason = f": line {line}, column {column} holds {bad.object[bad.start:bad.end]!r}", bad.reason
    return (f"{path!r} is not valid {encoding} text{where} ({reason}); pass its encoding with "
            f"{ENCODING_OPTION}, for example 'latin-1' or 'utf-16'")


def load_table(path: str, fmt: str, gz: bool, encoding: str | None) -> tuple[pd.DataFrame, list[str]]:
    """The file's table, and notes on what was left out of it; errors of the file itself (compression,
    encoding, syntax) name it."""
    try:
        df, notes = _read_table(path, fmt, gz, encoding)
    except pd.errors.EmptyDataError:
        raise ValueError(f"file is empty: {path!r}") from None
    except UnicodeError as err:
        enc = encoding or getattr(err, "encoding", None) or "utf-8"
        raise ValueError(undecodable(path, enc, err, gz)) from None
    except (EOFError, zlib.error, gzip.BadGzipFile) as err:
        raise ValueError(f"{path!r}: corrupt or truncated gzip data ({cut(str(err))})") from None
    except pd.errors.ParserError as err:
        raise ValueError(_parser_message(path, fmt, err)) from None
    except OSError as err:
        if isinstance(err, (FileNotFoundError, PermissionError)):
            raise
        raise ValueError(f"{path!r}: cannot read it as {fmt} ({cut(str(err))}); if the extension is wrong, "
                         f"pass the format with {FORMAT_OPTION}") from None
    except Exception as err:
        if type(err).__module__.startswith("pyarrow"):
            raise ValueError(f"{path!r} is not a readable Parquet file ({cut(str(err))}); if it is a table "
                             "of text, pass format='csv' (or 'tsv', 'jsonl'; --file-format on the command "
                             "line)") from None
        raise
    if len(df) == 0:
        raise ValueError(f"no rows in {path!r}")
    check_columns(path, len(df.columns))  # JSON Lines: known once read
    return df, notes
