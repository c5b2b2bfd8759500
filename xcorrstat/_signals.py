"""SIGINT (Ctrl-C) and SIGTERM: one line from the command, and file writes they cannot cut in half.

This module imports only the standard library. ``xcorrstat/__init__.py`` imports it first, and it
runs :func:`quiet_start` when imported, so that a signal that comes while the rest of the package is
still being imported (a second or more) is handled too.

- :func:`quiet_start`, in the ``xcorrstat`` command only, until the command's own handling begins:
  a signal prints ``xcorrstat: interrupted`` (or ``terminated``) and exits with 128 + the signal
  number (130, 143). Nothing has been written yet, so there is nothing to clean up.
- :func:`command_signals`, around a command: SIGINT raises :class:`KeyboardInterrupt` and SIGTERM
  :class:`Terminated` where the command is, so that it cleans up on the way out; once the command
  is done, they are ignored while Python shuts down.
- :func:`signals_held`, around a few file operations that must complete or be undone: the
  signals are noted, not acted on, and the first one is delivered when the block ends.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

__all__ = ["EXIT_CODES", "Held", "Terminated", "command_signals", "is_command", "quiet_start", "signals_held"]

SIGNALS = (signal.SIGINT, signal.SIGTERM)

#: Exit code of the command stopped by each signal: 128 + its number, as a shell reports it.
EXIT_CODES: dict[int, int] = {signal.SIGINT: 130, signal.SIGTERM: 143}

#: What the command's line says of each signal.
WORDS: dict[int, str] = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated"}


class Terminated(BaseException):
    """SIGTERM, raised (by :func:`command_signals`) where the command was when it came."""


def is_command(argv: list[str] | None = None, orig_argv: list[str] | None = None) -> bool:
    """Whether this process is the ``xcorrstat`` command: its console script, or ``python -m xcorrstat``.

    Examples
    --------
    >>> is_command(["/usr/bin/xcorrstat", "report"], ["python3", "/usr/bin/xcorrstat", "report"])
    True
    >>> is_command(["-m"], ["python3", "-X", "dev", "-m", "xcorrstat", "report"])
    True
    >>> is_command(["-m"], ["python3", "-m", "pytest"])
    False
    """
    argv = sys.argv if argv is None else argv
    orig = getattr(sys, "orig_argv", []) if orig_argv is None else orig_argv
    if argv and os.path.splitext(os.path.basename(argv[0]))[0] in ("xcorrstat", "xcorrstat-script"):
        return True
    k = 1
    while k < len(orig):
        arg = orig[k]
        if arg == "-m" or arg.startswith("-m"):
            return (orig[k + 1:k + 2] if arg == "-m" else [arg[2:]]) == ["xcorrstat"]
        if not arg.startswith("-") or arg.startswith("-c"):
            return False
        k += 2 if arg in ("-X", "-W", "--check-hash-based-pycs") else 1
    return False


def _leave(signum: int, frame: Any) -> None:
    """Before the command runs: one line, and exit at once (nothing is written yet)."""
    try:
        sys.stdout.flush()
    except Exception:  # noqa: BLE001 - a closed or broken stdout must not hide the line
        pass
    try:
        os.write(2, f"xcorrstat: {WORDS.get(signum, 'stopped')}\n".encode())
    finally:
        os._exit(EXIT_CODES.get(signum, 128 + signum))


def _installable(signum: int) -> bool:
    """Whether a handler may be set: main thread, and the signal not ignored (``nohup``, a background job)."""
    return threading.current_thread() is threading.main_thread() and signal.getsignal(signum) is not signal.SIG_IGN


def quiet_start() -> None:
    """In the ``xcorrstat`` command, make SIGINT and SIGTERM print one line and exit until the command runs."""
    if not is_command():
        return
    for signum in SIGNALS:
        if _installable(signum):
            signal.signal(signum, _leave)


def _terminate(signum: int, frame: Any) -> None:
    raise Terminated(f"terminated (signal {signum})")


@contextmanager
def command_signals() -> Iterator[None]:
    """For the block: SIGINT raises KeyboardInterrupt, SIGTERM :class:`Terminated`; the old handlers after it.

    In the command (after :func:`quiet_start`), the signals are ignored after the block
    instead: the work is done, and what is left is Python's shutdown, during which it
    would give the signals their default action (death without a word).
    """
    handlers = {signal.SIGINT: signal.default_int_handler, signal.SIGTERM: _terminate}
    old = {s: signal.getsignal(s) for s in SIGNALS if _installable(s)}
    for signum in old:
        signal.signal(signum, handlers[signum])
    try:
        yield
    finally:
        for signum, handler in old.items():
            after = signal.SIG_IGN if handler is _leave else handler if handler is not None else signal.SIG_DFL
            signal.signal(signum, after)


@dataclass
class Held:
    """The signals that came while :func:`signals_held` held them back, first first."""

    caught: list[int] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.caught)


def _deliver(signum: int, handler: Any) -> None:
    if callable(handler):
        handler(signum, None)
    elif handler == signal.SIG_DFL:
        signal.raise_signal(signum)


@contextmanager
def signals_held() -> Iterator[Held]:
    """Hold SIGINT and SIGTERM back for the block; deliver the first that came when it ends.

    The block polls the yielded :class:`Held` to stop early. Only the main thread
    receives signals: elsewhere nothing is held.
    """
    held = Held()
    old: dict[int, Any] = {s: signal.getsignal(s) for s in SIGNALS if _installable(s)}
    for signum in old:
        signal.signal(signum, lambda s, frame: held.caught.append(s))
    try:
        yield held
    finally:
        for signum, handler in old.items():
            signal.signal(signum, handler if handler is not None else signal.SIG_DFL)
        if held.caught:
            _deliver(held.caught[0], old[held.caught[0]])


quiet_start()
