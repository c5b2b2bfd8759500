"""Limits of the readers: regular files only, sizes within the memory budget, links kept in a tree.

Helpers of :func:`xcorrstat._io.read` and :func:`xcorrstat._io.mtme.read_mtme`. Every check but
the counting of a compressed stream runs before a file is opened (a FIFO would block, a device
never ends), and every refusal is one line naming the file:

* only regular files are read: a FIFO, a device (``/dev/zero``) or a socket is refused;
* a file, and the text a gzip-compressed file expands to, may not exceed :func:`read_limit`
  bytes (the ``memory_budget`` option); a compressed stream is counted as it is read and stops
  at the limit, so a small file that expands to gigabytes fails early;
* in an mt-metrics-eval tree a file that is a link (or lies under a linked folder) resolving
  outside the test set folder is refused unless links are allowed (``follow_links=True``,
  ``xcorrstat wmt --follow-links``, or the environment variable ``XCORRSTAT_FOLLOW_LINKS=1``);
* a table file may have at most :data:`MAX_COLUMNS` columns;
* running out of memory while reading becomes a :class:`ReadMemoryError` with a hint.
"""

from __future__ import annotations

import gzip
import io
import os
import stat
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, BinaryIO

from .._display import cut
from .._options import OPTIONS

__all__ = ["FOLLOW_LINKS_ENV", "MAX_COLUMNS", "ReadLimitError", "ReadMemoryError", "check_columns",
           "check_data_size", "check_file", "check_tree_file", "follow_links_default", "format_size",
           "memory_guard", "open_binary", "read_limit"]

#: Environment variable that lets an mt-metrics-eval tree's links point outside it (``1``).
FOLLOW_LINKS_ENV = "XCORRSTAT_FOLLOW_LINKS"
#: The most columns a table file may have: each score becomes a variable of the Dataset; 100,000 of
#: them take several seconds and about 0.5 GB to read, a million took over a minute and 3 GB.
MAX_COLUMNS = 200_000
_HINT = ("raise the limit with xcorrstat.set_options(memory_budget=...) if the machine has the memory, or read "
         "fewer metrics or columns, or read the data in parts with Dask (xarray.open_mfdataset)")


class ReadLimitError(ValueError):
    """A file refused by a reader limit: not a regular file, too large, or a link out of its tree."""


class ReadMemoryError(MemoryError, ValueError):
    """Memory ran out while a file was read; the message names the file and what to do."""


def format_size(n: int) -> str:
    """A number of bytes for a message: ``'6.0 GiB'``, ``'512 B'``.

    Examples
    --------
    >>> format_size(6 * 2**30), format_size(1536), format_size(10)
    ('6.0 GiB', '1.5 KiB', '10 B')
    """
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"


def read_limit() -> int:
    """The most bytes of text a reader takes from one file: the ``memory_budget`` option (default 1 GiB).

    Examples
    --------
    >>> from xcorrstat import set_options
    >>> with set_options(memory_budget="64MiB"):
    ...     read_limit()
    67108864
    """
    return int(OPTIONS["memory_budget"])


def _kind(mode: int) -> str:
    """What a file that is not a regular file is, for a message."""
    kinds = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
             (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder"))
    return next((name for test, name in kinds if test(mode)), "not a regular file")


def _too_large(path: str, what: str) -> ReadLimitError:
    """The refusal of a file that `what` (``"holds 6.0 GiB, over"``) the reading limit."""
    return ReadLimitError(f"{path!r}: the file {what} the reading limit of {format_size(read_limit())} "
                          f"(the memory_budget option); {_HINT}")


def check_file(path: str) -> int:
    """The size of `path`, a regular file within :func:`read_limit`; ReadLimitError otherwise.

    Nothing is opened: a FIFO, a device (also through a link) or a socket is refused by its
    ``os.stat`` alone.
    """
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise FileNotFoundError(f"no such file: {path!r}") from None
    if not stat.S_ISREG(info.st_mode):
        raise ReadLimitError(f"{path!r} is {_kind(info.st_mode)}, not a regular file; only regular files are read")
    if info.st_size > read_limit():
        raise _too_large(path, f"holds {format_size(info.st_size)}, over")
    return info.st_size


def check_data_size(path: str, size: int, what: str) -> None:
    """Refuse a file whose data, as its metadata give them (`what`: ``"Parquet data"``), take more than
    :func:`read_limit` bytes once read."""
    if size > read_limit():
        raise ReadLimitError(f"{path!r}: its {what} take {format_size(size)} once read, over the reading limit of "
                             f"{format_size(read_limit())} (the memory_budget option); {_HINT}")


def check_columns(path: str, n: int) -> None:
    """Refuse a table of more than :data:`MAX_COLUMNS` columns, before its rows are read."""
    if n > MAX_COLUMNS:
        raise ReadLimitError(f"{path!r}: the table has {n:,} columns, more than the {MAX_COLUMNS:,} a table file "
                             "may have (each score becomes a variable, and a million of them take minutes and "
                             "gigabytes); split the scores into files of fewer metrics")


def follow_links_default() -> bool:
    """Whether links may point outside an mt-metrics-eval tree when ``follow_links`` is not given:
    the environment variable ``XCORRSTAT_FOLLOW_LINKS`` (``1``, ``true``, ``yes``, ``on``), else no."""
    setting = os.environ.get(FOLLOW_LINKS_ENV, "").strip().lower()
    if setting in ("", "0", "false", "no", "off"):
        return False
    if setting in ("1", "true", "yes", "on"):
        return True
    raise ValueError(f"the environment variable {FOLLOW_LINKS_ENV} must be 0 or 1 (also false/true, no/yes, "
                     f"off/on), got {cut(os.environ[FOLLOW_LINKS_ENV])}")


def check_tree_file(path: str, tree: str, follow_links: bool) -> int:
    """:func:`check_file` for a file of the tree `tree` (a folder's real path), refusing one that
    resolves outside it unless `follow_links`."""
    real = os.path.realpath(path)
    if not follow_links and os.path.commonpath([real, tree]) != tree:
        raise ReadLimitError(f"{path!r} is a link to {real!r}, outside the test set folder {tree!r}; links out "
                             f"of the folder are refused unless allowed: pass follow_links=True (xcorrstat wmt "
                             f"--follow-links, or the environment variable {FOLLOW_LINKS_ENV}=1)")
    return check_file(path)


class _Counted(io.RawIOBase):
    """A decompressed stream that stops with ReadLimitError once it has given `limit` bytes."""

    def __init__(self, raw: BinaryIO, path: str, limit: int) -> None:
        super().__init__()
        self._raw, self._path, self._limit, self._count = raw, path, limit, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        data = self._raw.read(min(len(view), self._limit + 1 - self._count))
        self._count += len(data)
        if self._count > self._limit:
            raise _too_large(self._path, "is compressed and expands past")
        view[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self._raw.close()
        super().close()


def _gzip_trailer(path: str) -> int:
    """The size the gzip file says its (last member's) text has, modulo 4 GiB: a first guess only."""
    with open(path, "rb") as fh:
        fh.seek(-4, os.SEEK_END)
        return int(struct.unpack("<I", fh.read(4))[0])


#: The most that deflate expands (1032:1, with a margin): a larger size in a trailer is not believed.
_DEFLATE_RATIO = 1100


def open_binary(path: str, gz: bool) -> BinaryIO:
    """The file's bytes (decompressed when `gz`), never more than :func:`read_limit` of them.

    A gzip file whose trailer already announces more (and no more than deflate can expand to:
    a truncated file's last bytes are not a trailer) is refused before it is decompressed;
    every one is counted as it is read.
    """
    if not gz:
        return open(path, "rb")
    limit, size = read_limit(), os.path.getsize(path)
    announced = _gzip_trailer(path) if size >= 18 else 0
    if limit < announced <= _DEFLATE_RATIO * size:
        raise _too_large(path, f"is compressed and expands to {format_size(announced)}, over")
    return io.BufferedReader(_Counted(gzip.open(path, "rb"), path, limit))  # type: ignore[arg-type]


@contextmanager
def memory_guard(what: str) -> Iterator[None]:
    """Turn a MemoryError raised in the block into a one-line :class:`ReadMemoryError` about `what`."""
    try:
        yield
    except ReadMemoryError:
        raise
    except MemoryError:
        raise ReadMemoryError(f"{what}: out of memory while reading it; {_HINT}") from None
