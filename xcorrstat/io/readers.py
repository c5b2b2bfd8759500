"""Reading the text of score files: encodings, compression, header and line checks.

Helpers of :func:`xcorrstat.io.read`; every error they raise names the file (and
the line, where there is one).
"""

from __future__ import annotations

import codecs
import csv
import gzip
import json
import re
import zlib

import pandas as pd

from .._display import cut

__all__ = ["ENCODING_OPTION", "FORMAT_OPTION", "load_table", "located"]

#: How a hint names the options a user can pass, in Python and on the command line.
FORMAT_OPTION = "format= (--file-format on the command line)"
ENCODING_OPTION = "encoding= (--encoding on the command line)"

_BOMS = ((b"\xef\xbb\xbf", "utf-8-sig"), (b"\xff\xfe\x00\x00", "utf-32"), (b"\x00\x00\xfe\xff", "utf-32"),
         (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16"))


def _head(path: str, gz: bool, size: int = 4096) -> bytes:
    """The first bytes of the (decompressed) file."""
    opener = gzip.open if gz else open
    with opener(path, "rb") as fh:
        return fh.read(size)


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


def _check_header(path: str, sep: str, encoding: str, gz: bool) -> None:
    """Raise ValueError naming the file when its header repeats a column name."""
    opener = gzip.open if gz else open
    with opener(path, "rt", encoding=encoding, newline="") as fh:
        names = next(csv.reader(fh, delimiter=sep), [])
    seen: dict[str, int] = {}
    for pos, name in enumerate(names, start=1):
        if name in seen:
            raise ValueError(f"{path!r}, line 1: column name {cut(name)} appears twice (columns {seen[name]} and "
                             f"{pos}); each column needs its own name")
        seen[name] = pos


def _jsonl_records(path: str, encoding: str, gz: bool) -> list[dict]:
    """The objects of a JSON Lines file, read line by line; ValueError names the first bad line."""
    opener = gzip.open if gz else open
    records = []
    with opener(path, "rt", encoding=encoding) as fh:
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


def _read_table(path: str, fmt: str, gz: bool, encoding: str | None) -> pd.DataFrame:
    if fmt == "parquet":
        return pd.read_parquet(path, engine="pyarrow")
    enc = _encoding(path, gz, encoding)
    comp = "gzip" if gz else None
    if fmt in ("csv", "tsv"):
        sep = "," if fmt == "csv" else "\t"
        _check_header(path, sep, enc, gz)
        # low_memory=False: one pass (faster on wide files) and one dtype per column
        return pd.read_csv(path, sep=sep, encoding=enc, compression=comp, low_memory=False)
    try:
        # dtype=False keeps string labels such as "001" as strings
        return pd.read_json(path, lines=True, dtype=False, precise_float=True, encoding=enc, compression=comp)
    except (ValueError, TypeError):  # find the bad line, or read what pandas' parser could not
        return pd.DataFrame.from_records(_jsonl_records(path, enc, gz))


def located(message: str, path: str, fmt: str) -> str:
    """`message` naming the file, with each 'data row k' also given as its line of the file."""
    if fmt in ("csv", "tsv", "jsonl"):
        shift = 1 if fmt != "jsonl" else 0
        message = re.sub(r"data row (\d+)", lambda m: f"{m.group(0)} (line {int(m.group(1)) + shift})", message)
    return f"{path!r}: {message}"


def load_table(path: str, fmt: str, gz: bool, encoding: str | None) -> pd.DataFrame:
    """The file's table; errors of the file itself (compression, encoding, syntax) name it."""
    try:
        df = _read_table(path, fmt, gz, encoding)
    except pd.errors.EmptyDataError:
        raise ValueError(f"file is empty: {path!r}") from None
    except UnicodeError as err:
        raise ValueError(f"{path!r} is not valid {getattr(err, 'encoding', 'text')} text ({cut(str(err))}); "
                         f"pass its encoding with {ENCODING_OPTION}, for example 'latin-1' or 'utf-16'") from None
    except (EOFError, zlib.error, gzip.BadGzipFile) as err:
        raise ValueError(f"{path!r}: corrupt or truncated gzip data ({cut(str(err))})") from None
    except pd.errors.ParserError as err:
        raise ValueError(f"{path!r}: not a well-formed {fmt.upper()} file: {cut(str(err), 200)}") from None
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
    return df
