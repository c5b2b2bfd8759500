"""Write a set of files into a folder, touching only what an earlier set recorded as its own.

Every set of files written here comes with a *manifest*: a small JSON file in the same folder that
names each file with its size and SHA-256. Replacing an earlier set (``overwrite=True``) replaces
or removes only the files its manifest records and that are unchanged since; a name the new set
needs that is taken by anything else -- a folder, a symbolic link, a file no manifest records or
one changed since it was written -- is an error before anything is written. Other entries of the
folder are left alone.

The files are written inside the folder (never by renaming a folder over it, so a mount point
works), in three steps:

1. the manifest is replaced by one that records the old files, the new ones and the temporary
   files about to be written;
2. each file is written to a hidden temporary file beside it (``.xcorrstat-<token>-<name>``) and
   flushed to disk;
3. with SIGINT and SIGTERM held back, each temporary file is renamed over its name, the old
   set's files that are not written again are removed, and the final manifest is written.

An error or a signal before step 3 removes the temporary files and puts the old manifest back:
the old set is untouched. Readers see old and new files side by side only during step 3, a few
renames long; a signal that arrives then is delivered when step 3 is complete.
"""

from __future__ import annotations

import errno
import hashlib
import os
import secrets
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._display import VALUE_WIDTH, printable
from .._signals import Held, signals_held
from .lock import check_unlocked, folder_lock
from .manifest import MANIFEST_LIMIT, TEMP_PREFIX, manifest_bytes, parse_manifest, version_of

__all__ = ["Destination", "check_folder", "command_error", "probe_folder", "write_folder", "written_before"]

#: Bytes written and removed by :func:`probe_folder`.
PROBE_BYTES = 64 * 1024

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_FLAGS = getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
_DIR_FD = {os.open, os.stat, os.unlink, os.rename} <= os.supports_dir_fd and hasattr(os, "O_DIRECTORY")


@dataclass(frozen=True)
class Destination:
    """A folder checked for writing: what it is, and what of it an earlier set recorded as its own.

    Attributes
    ----------
    path : str
        Absolute path, with symbolic links in its parents resolved.
    given : str
        The folder as the caller named it, for messages and the returned paths.
    manifest : str
        File name of the manifest.
    exists : bool
        Whether the folder exists.
    recorded : dict
        From the old manifest: file name to the versions (size and SHA-256) recorded.
    stale : tuple of str
        Recorded files present and unchanged that the new set does not write: removed.
    temporary : tuple of str
        Temporary files of an interrupted earlier write, recorded and present: removed.
    old_manifest : bytes or None
        The old manifest as read, put back when a write fails.
    """

    path: str
    given: str
    manifest: str
    exists: bool = False
    recorded: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    stale: tuple[str, ...] = ()
    temporary: tuple[str, ...] = ()
    old_manifest: bytes | None = None

    @property
    def where(self) -> str:
        """``out='...'``: the folder as messages name it."""
        return f"out={printable(repr(self.given), VALUE_WIDTH)}"

    def shown(self, name: str) -> str:
        """A file of the folder as messages name it (under the name the caller gave the folder)."""
        return os.path.join(self.given, name)


class _Folder:
    """An open folder: every operation is relative to it and follows no link in the names it is given."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW | _FLAGS) if _DIR_FD else None

    def __enter__(self) -> _Folder:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.fd is not None:
            os.close(self.fd)

    def _at(self, name: str) -> str:
        return name if self.fd is not None else os.path.join(self.path, name)

    def lstat(self, name: str) -> os.stat_result | None:
        try:
            return os.stat(self._at(name), dir_fd=self.fd, follow_symlinks=False)
        except FileNotFoundError:
            return None

    def read(self, name: str, limit: int) -> bytes:
        fd = os.open(self._at(name), os.O_RDONLY | _NOFOLLOW | _FLAGS, dir_fd=self.fd)
        with os.fdopen(fd, "rb") as fh:
            return fh.read(limit)

    def digest(self, name: str) -> dict[str, Any]:
        h, size = hashlib.sha256(), 0
        fd = os.open(self._at(name), os.O_RDONLY | _NOFOLLOW | _FLAGS, dir_fd=self.fd)
        with os.fdopen(fd, "rb") as fh:
            while chunk := fh.read(1 << 20):
                h.update(chunk)
                size += len(chunk)
        return {"size": size, "sha256": h.hexdigest()}

    def create(self, name: str, data: bytes) -> None:
        """Write a new file (never an existing name, never through a link) and flush it to disk."""
        fd = os.open(self._at(name), os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _FLAGS, 0o666,
                     dir_fd=self.fd)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)

    def replace(self, src: str, dst: str) -> None:
        os.replace(self._at(src), self._at(dst), src_dir_fd=self.fd, dst_dir_fd=self.fd)

    def unlink(self, name: str) -> None:
        os.unlink(self._at(name), dir_fd=self.fd)

    def sync(self) -> None:
        """Flush the folder's entries (the renames) to disk, where the platform allows."""
        try:
            os.fsync(self.fd if self.fd is not None else -1)
        except OSError:
            pass


def _read_manifest(folder: _Folder, dest: Destination) -> tuple[bytes | None, dict, list[str]]:
    """The old manifest's bytes, recorded files and temporary files (none when there is no manifest)."""
    st = folder.lstat(dest.manifest)
    if st is None:
        return None, {}, []
    parsed = None
    if stat.S_ISREG(st.st_mode) and st.st_size <= MANIFEST_LIMIT:
        data = folder.read(dest.manifest, MANIFEST_LIMIT + 1)
        parsed = parse_manifest(data)
    if parsed is None:
        raise FileExistsError(f"{dest.where}: {printable(repr(dest.shown(dest.manifest)), VALUE_WIDTH)} is not a "
                              "manifest xcorrstat wrote; move it away or name another folder")
    return data, *parsed


def _foreign(folder: _Folder, name: str, versions: list[dict[str, Any]]) -> str | None:
    """Why the entry ``name`` is not a file this tool may replace, or None (missing, or recorded and unchanged)."""
    st = folder.lstat(name)
    if st is None:
        return None
    if stat.S_ISLNK(st.st_mode):
        return "a symbolic link"
    if stat.S_ISDIR(st.st_mode):
        return "a folder"
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file"
    if not versions:
        return "a file that no manifest of xcorrstat records"
    if not any(v["size"] == st.st_size for v in versions) or folder.digest(name) not in versions:
        return "a file changed since xcorrstat wrote it"
    return None


def _inspect(folder: _Folder, dest: Destination, names: Sequence[str], overwrite: bool, holds: str) -> Destination:
    """``dest`` with what its folder holds; FileExistsError when the new set cannot be written there."""
    old, recorded, temporary = _read_manifest(folder, dest)
    reasons = {name: _foreign(folder, name, recorded.get(name, [])) for name in {*recorded, *names}}
    ours = {name for name in recorded if reasons[name] is None and folder.lstat(name) is not None}
    if ours and not overwrite:
        raise FileExistsError(f"{dest.where} already exists and holds {holds}; pass overwrite=True "
                              "(--overwrite on the command line) to replace it")
    for name in names:
        if reasons[name] is not None:
            raise FileExistsError(
                f"{dest.where}: {printable(repr(dest.shown(name)), VALUE_WIDTH)} is {reasons[name]}; xcorrstat "
                f"replaces only files it wrote (listed in {dest.manifest}): move it away or name another folder")
    temps = tuple(t for t in temporary if (st := folder.lstat(t)) is not None and stat.S_ISREG(st.st_mode))
    return Destination(dest.path, dest.given, dest.manifest, True, {n: v for n, v in recorded.items() if n in ours},
                       tuple(sorted(ours - set(names))), temps, old)


def check_folder(out: str | os.PathLike[str], names: Sequence[str], *, manifest: str, overwrite: bool = False,
                 holds: str = "earlier files") -> Destination:
    """Check that the files ``names`` (and the manifest) may be written to folder ``out``.

    Parameters
    ----------
    out : str or path
        The folder: missing (made when written), or a folder. Symbolic links in its
        parents are resolved; ``out`` itself must not be one.
    names : sequence of str
        The file names to write.
    manifest : str
        File name of the manifest.
    overwrite : bool, default False
        Allow replacing files an earlier manifest records.
    holds : str
        What an earlier set is, for the message (``"a report"``).

    Returns
    -------
    Destination

    Raises
    ------
    FileExistsError
        If ``out`` is a link or not a folder, if a name is taken by anything the
        manifest does not record as written and unchanged, or if an earlier set is
        there and ``overwrite`` is False.
    """
    given = os.fspath(out)
    path = os.path.abspath(given)
    dest = Destination(path, given, manifest)
    if os.path.islink(path):
        raise FileExistsError(f"{dest.where} is a symbolic link; a report is never written through a link: "
                              "name a directory")
    parent, base = os.path.split(path)
    dest = Destination(os.path.join(os.path.realpath(parent), base), given, manifest)
    if not os.path.lexists(dest.path):
        return dest
    if os.path.islink(dest.path) or not os.path.isdir(dest.path):
        raise FileExistsError(f"{dest.where} exists and is not a directory")
    with _Folder(dest.path) as folder:
        return _inspect(folder, dest, names, overwrite, holds)


def _make_dirs(path: str) -> list[str]:
    """Make folder ``path`` and its missing parents; the folders made, outermost first."""
    missing = []
    while not os.path.lexists(path):
        missing.append(path)
        path = os.path.dirname(path)
    for folder in reversed(missing):
        os.mkdir(folder)
    return missing[::-1]


def _remove_dirs(made: Sequence[str]) -> None:
    """Remove the folders of :func:`_make_dirs` that are still empty, innermost first."""
    for folder in reversed(made):
        try:
            os.rmdir(folder)
        except OSError:
            return


def _cannot_write(dest: Destination, err: OSError, doing: str) -> OSError:
    """An OSError whose text names the folder, what failed and why."""
    text = err.strerror or str(err) or type(err).__name__
    cause = OSError(f"{dest.where} cannot be written: {text} ({doing})")
    cause.errno = err.errno
    return cause


def probe_folder(dest: Destination) -> None:
    """Check, by writing, that folder ``dest`` can take files: make it, write and remove a probe file.

    What it makes is removed again. Catches a read-only folder or file system, missing
    permissions and a full disk before anything is computed.

    Raises
    ------
    OSError
        Naming the folder and what failed.
    """
    name = f"{TEMP_PREFIX}probe-{secrets.token_hex(4)}"
    check_unlocked(dest.path, where=dest.where, overwrite=True)  # a live run here: refused before computing
    with signals_held():
        try:
            made = _make_dirs(dest.path)
        except OSError as err:
            shown = printable(repr(err.filename or dest.given), VALUE_WIDTH)
            raise _cannot_write(dest, err, f"making the folder {shown}") from None
        try:
            with _Folder(dest.path) as folder:
                try:
                    folder.create(name, bytes(PROBE_BYTES))
                finally:
                    _discard(folder, [name])
        except OSError as err:
            raise _cannot_write(dest, err, f"writing a test file of {PROBE_BYTES // 1024} KiB in it") from None
        finally:
            _remove_dirs(made)


def _put(folder: _Folder, dest: Destination, name: str, data: bytes) -> None:
    """Write ``data`` to a temporary file and rename it to ``name``; errors name ``name``."""
    tmp = f"{TEMP_PREFIX}{secrets.token_hex(4)}-{name}"
    try:
        folder.create(tmp, data)
        folder.replace(tmp, name)
    except OSError as err:
        _discard(folder, [tmp])
        raise OSError(err.errno or errno.EIO, err.strerror or str(err), dest.shown(name)) from None


def _discard(folder: _Folder, names: Sequence[str]) -> None:
    for name in names:
        try:
            folder.unlink(name)
        except OSError:
            pass


class _Stopped(Exception):
    """A signal came while the temporary files were written: undo them."""


def _write_temporaries(folder: _Folder, dest: Destination, files: Mapping[str, bytes], temps: dict[str, str],
                       held: Held) -> None:
    """Step 2, stopped by a signal between two files; errors name the file."""
    for name, data in files.items():
        if held:
            raise _Stopped
        try:
            folder.create(temps[name], data)
        except OSError as err:
            raise OSError(err.errno or errno.EIO, err.strerror or str(err), dest.shown(name)) from None
    if held:
        raise _Stopped


def _commit(folder: _Folder, dest: Destination, files: Mapping[str, bytes], temps: dict[str, str]) -> None:
    """Step 3: the renames, the removal of the old set's other files, the final manifest."""
    for name in files:
        folder.replace(temps[name], name)
    for name in (*dest.stale, *dest.temporary):
        st = folder.lstat(name)
        if st is not None and stat.S_ISREG(st.st_mode):
            folder.unlink(name)
    _put(folder, dest, dest.manifest, manifest_bytes({n: [version_of(d)] for n, d in files.items()}))
    folder.sync()


def _write(folder: _Folder, dest: Destination, files: Mapping[str, bytes], held: Held) -> bool:
    """Steps 1 to 3, with the signals held; False when a signal stopped it before step 3 (nothing changed)."""
    token = secrets.token_hex(4)
    temps = {name: f"{TEMP_PREFIX}{token}-{name}" for name in files}
    both = {n: list(v) for n, v in dest.recorded.items()}
    for name, data in files.items():
        both.setdefault(name, []).append(version_of(data))
    try:
        _put(folder, dest, dest.manifest, manifest_bytes(both, [*dest.temporary, *temps.values()]))
        _write_temporaries(folder, dest, files, temps, held)
    except BaseException as exc:
        _discard(folder, list(temps.values()))
        _restore_manifest(folder, dest)
        if isinstance(exc, _Stopped):
            return False
        raise
    _commit(folder, dest, files, temps)
    return True


def _restore_manifest(folder: _Folder, dest: Destination) -> None:
    """Put the old manifest back (best effort: the step-1 manifest also records the old files)."""
    try:
        if dest.old_manifest is None:
            _discard(folder, [dest.manifest])
        else:
            _put(folder, dest, dest.manifest, dest.old_manifest)
    except OSError:
        pass


#: Attribute set on a signal's exception raised after the files were all written.
_WRITTEN = "xcorrstat_files_written"


def written_before(exc: BaseException) -> bool:
    """Whether ``exc`` (a signal's, from :func:`write_folder`) came once every file was in place."""
    return bool(getattr(exc, _WRITTEN, False))


def write_folder(out: str | os.PathLike[str], files: Mapping[str, bytes], *, manifest: str,
                 overwrite: bool = False, holds: str = "earlier files") -> Destination:
    """Write ``files`` (name to content) and their manifest into folder ``out``, replacing an earlier set.

    The folder is checked again first (see :func:`check_folder`), and made with its
    missing parents; what was made is removed again if the write fails or is stopped.
    SIGINT and SIGTERM are held back while writing: one that comes before the files are
    renamed into place undoes the write, then is delivered (its exception raised); one
    that comes later is delivered once the write is complete, and its exception then
    satisfies :func:`written_before`. See the module docstring for what a reader may see.

    Returns
    -------
    Destination
        The folder as checked before writing.

    Raises
    ------
    FileExistsError
        As :func:`check_folder`.
    OSError
        A failed write, naming the file (``filename``): the folder holds the old set.
    """
    dest = check_folder(out, list(files), manifest=manifest, overwrite=overwrite, holds=holds)
    done = False
    try:
        with signals_held() as held:
            made = _make_dirs(dest.path)
            try:
                with folder_lock(dest.path, where=dest.where, overwrite=overwrite):  # checked again, alone
                    dest = check_folder(out, list(files), manifest=manifest, overwrite=overwrite, holds=holds)
                    with _Folder(dest.path) as folder:
                        done = _write(folder, dest, files, held)
            finally:
                if not done:
                    _remove_dirs(made)
    except BaseException as exc:
        if done:
            setattr(exc, _WRITTEN, True)
        if isinstance(exc, OSError) and not os.path.isdir(dest.path):  # not the names of files never made
            raise _cannot_write(dest, exc, "the folder was removed or moved while the files were written") from None
        raise
    return dest


def command_error(err: OSError) -> OSError:
    """``err`` as the command line says it: ``--out`` for ``out=``, ``--overwrite`` for ``overwrite=True``.

    Examples
    --------
    >>> str(command_error(FileExistsError("out='r' already exists and holds a report; pass overwrite=True "
    ...                                   "(--overwrite on the command line) to replace it")))
    "--out 'r' already exists and holds a report; pass --overwrite to replace it"
    """
    if err.filename is not None or not str(err).startswith("out="):
        return err
    text = str(err).replace("out=", "--out ", 1).replace(
        "pass overwrite=True (--overwrite on the command line)", "pass --overwrite")
    new = type(err)(text)
    new.errno = err.errno
    return new
