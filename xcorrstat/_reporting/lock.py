"""One writer per output folder: a lock file made with ``O_EXCL``, holding the writer's pid and host.

Two runs writing their files into the same folder at once could leave files of both behind a
manifest that matches neither. A writer therefore takes the folder's lock first: it creates
``.xcorrstat-lock`` in the folder with ``O_CREAT | O_EXCL`` (which only one process can do) and
writes its pid, host and start time into it; it removes the file when its write is done.

A second writer finds the file and reads it:

* held by a live process (this host, its pid running): refused, with one line naming the pid;
* stale (this host, its pid gone: a run that was killed): taken over;
* held on another host, or unreadable: its liveness cannot be told, so it is refused unless
  the writer replaces an earlier set (``overwrite=True``, ``--overwrite``), which takes it over.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import socket
import time
from collections.abc import Iterator
from typing import Any

__all__ = ["LOCK_NAME", "check_unlocked", "folder_lock"]

#: The lock file's name inside the output folder (hidden, and never a name of the files written).
LOCK_NAME = ".xcorrstat-lock"

#: Largest lock file read.
_LOCK_LIMIT = 4096
_FLAGS = getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)


def _host() -> str:
    return socket.gethostname()


def _read(path: str) -> dict[str, Any] | None:
    """The lock's content (None when it is not a lock xcorrstat wrote); FileNotFoundError when gone."""
    fd = os.open(path, os.O_RDONLY | _FLAGS)
    with os.fdopen(fd, "rb") as fh:
        data = fh.read(_LOCK_LIMIT)
    try:
        doc = json.loads(data.decode("utf-8"))
    except ValueError:
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("pid"), int) or not isinstance(doc.get("host"), str):
        return None
    return doc


def _alive(pid: int) -> bool:
    """Whether process ``pid`` of this host runs (a process of another user counts as running)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


def _holder(doc: dict[str, Any] | None) -> str:
    if doc is None:
        return "an unreadable lock"
    since = doc.get("started")
    when = f" since {since}" if isinstance(since, str) else ""
    return f"pid {doc['pid']} on host {doc['host']!r}{when}"


def _refusal(where: str, doc: dict[str, Any] | None, overwrite: bool) -> str | None:
    """Why a lock of content ``doc`` may not be taken, or None when it is stale or may be."""
    if doc is not None and doc["host"] == _host():
        if not _alive(doc["pid"]):
            return None  # a killed run's lock: taken over
        return (f"{where} is being written by another xcorrstat run ({_holder(doc)}); wait until it is done, "
                "or name another folder")
    if overwrite:
        return None
    return (f"{where} is locked by {_holder(doc)}, whose run this host cannot check ({LOCK_NAME}); if no run "
            "writes there any more, pass overwrite=True (--overwrite on the command line) to take it over")


def check_unlocked(folder: str, *, where: str, overwrite: bool = False) -> None:
    """Refuse (FileExistsError, one line) when ``folder``'s lock is held by a run that may still write there."""
    path = os.path.join(folder, LOCK_NAME)
    try:
        doc = _read(path)
    except FileNotFoundError:
        return
    except OSError:
        doc = None
    why = _refusal(where, doc, overwrite)
    if why is not None:
        raise FileExistsError(why)


def _create(path: str, token: str) -> bool:
    """Make the lock file with ``O_EXCL``; False when it exists."""
    doc = {"pid": os.getpid(), "host": _host(), "token": token,
           "started": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime())}
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _FLAGS, 0o644)
    except FileExistsError:
        return False
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(doc, fh)
    return True


def _acquire(path: str, token: str, where: str, overwrite: bool) -> None:
    for _ in range(8):  # a lock that is taken over can be taken by another writer in between: try again
        if _create(path, token):
            return
        try:
            doc = _read(path)
        except FileNotFoundError:
            continue
        why = _refusal(where, doc, overwrite)
        if why is not None:
            raise FileExistsError(why)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
    raise FileExistsError(f"{where}: its lock {LOCK_NAME} keeps changing hands; try again")


def _release(path: str, token: str) -> None:
    """Remove the lock if it is still ours."""
    try:
        doc = _read(path)
    except OSError:
        return
    if doc is not None and doc.get("token") == token:
        with contextlib.suppress(OSError):
            os.unlink(path)


@contextlib.contextmanager
def folder_lock(folder: str, *, where: str, overwrite: bool = False) -> Iterator[None]:
    """Hold ``folder``'s lock meanwhile (the folder must exist); FileExistsError when another run holds it.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     with folder_lock(d, where="out='r'"):
    ...         try:
    ...             check_unlocked(d, where="out='r'")
    ...         except FileExistsError as err:
    ...             print(str(err).split(" (")[0])
    ...     os.listdir(d)
    out='r' is being written by another xcorrstat run
    []
    """
    path = os.path.join(folder, LOCK_NAME)
    token = secrets.token_hex(8)
    _acquire(path, token, where, overwrite)
    try:
        yield
    finally:
        _release(path, token)
