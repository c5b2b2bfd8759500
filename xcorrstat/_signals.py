"""SIGINT (Ctrl-C) and SIGTERM: one line from the command, and file writes they cannot cut in half.

This module imports only the standard library. ``xcorrstat/__init__.py`` imports it first, and it
runs :func:`quiet_start` when imported, so that a signal that comes while the rest of the package is
still being imported (a second or more) is handled too.

- :func:`quiet_start`, in the ``xcorrstat`` command only, until the command's own handling begins:
  a signal prints ``xcorrstat: interrupted`` (or ``terminated``) and exits with 128 + the signal
  number (130, 143). Nothing has been written yet, so there is nothing to clean up.
- :func:`command_signals`, around a command: SIGINT raises :class:`KeyboardInterrupt` and SIGTERM
  :class:`Terminated` where the command is, so that it cleans up on the way out; once the command
  is done, they are ignored while Python shuts down. Where Python cannot raise (a weakref or
  garbage-collection callback, ``__del__``, a ctypes callback), it drops the exception: the signal
  is then made pending again, and raised at the next point where it can be. A Ctrl-C the command
  caught leaves nothing that makes Python kill the process with SIGINT at exit.
- :func:`unwrapped`, inside the command's handling: a signal's exception that Python wrapped in
  another (Python 3.11 wraps one raised in ``__set_name__``, as classes are made on import, in a
  RuntimeError) is raised as itself, so that the command stops with its one line.
- :func:`signals_held`, around a few file operations that must complete or be undone: the
  signals are noted, not acted on, and the first one is delivered when the block ends.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from _thread import interrupt_main
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import Any

__all__ = ["EXIT_CODES", "Held", "Terminated", "command_signals", "is_command", "quiet_start", "signals_held",
           "unwrapped"]

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


#: How long after Python dropped a signal's exception it is tripped again (see :func:`_redeliver`).
RETRIP_SECONDS = 0.005

#: The signal each exception of :func:`command_signals` stands for.
SIGNAL_OF: dict[type[BaseException], int] = {KeyboardInterrupt: signal.SIGINT, Terminated: signal.SIGTERM}


def _redeliver(previous: Any, unraisable: Any) -> None:
    """``sys.unraisablehook`` in the command: a signal's exception that Python dropped is made pending again.

    Python drops an exception raised in a weakref or garbage-collection callback, a ``__del__``
    or a ctypes callback, after printing it: a signal that came while one ran would be lost, and
    the command would go on to write its report. The signal is tripped again a few milliseconds
    later, from a timer thread (:func:`_thread.interrupt_main`), once this hook has returned: its
    handler then runs at the next point where Python can raise; if that is another such callback,
    this happens again. (Tripped from here, it would run in the hook, and be dropped again.) If the
    timer trips it before the hook has returned, the hook catches it and starts another timer.
    Other exceptions go to ``previous``.
    """
    signum = next((s for kind, s in SIGNAL_OF.items() if isinstance(unraisable.exc_value, kind)), None)
    if signum is None:
        previous(unraisable)
        return
    while True:
        try:
            timer = threading.Timer(RETRIP_SECONDS, interrupt_main, (signum,))
            timer.daemon = True
            timer.start()
            return
        except (KeyboardInterrupt, Terminated):  # the timer's trip came before the return: start another
            continue


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
    hook = sys.unraisablehook
    if old:
        sys.unraisablehook = partial(_redeliver, hook)
    try:
        yield
    finally:
        sys.unraisablehook = hook
        for signum, handler in old.items():
            after = signal.SIG_IGN if handler is _leave else handler if handler is not None else signal.SIG_DFL
            signal.signal(signum, after)
    _forget_caught_interrupt()


def _forget_caught_interrupt() -> None:
    """Make CPython forget a KeyboardInterrupt that left code run by ``exec`` or ``eval`` of a string.

    CPython notes such an interrupt even when it is caught later (here, by the command), and a
    process started with ``python -m`` then kills itself with SIGINT when it exits, instead of
    exiting with its code (exit status -2, not 130). Code made that way runs on import
    (dataclasses, named tuples), so a Ctrl-C during an import inside the command could do this.
    The note is cleared at the start of every such run, so one empty run clears it. Called once
    the block has ended without an exception, with the handlers put back.
    """
    exec("None")  # noqa: S102 - a constant: only the side effect above is wanted


def signal_within(err: BaseException) -> BaseException | None:
    """The KeyboardInterrupt or :class:`Terminated` that ``err`` was raised from or while handling, if any.

    A context that ``raise ... from None`` suppressed was handled on purpose, and is not followed:
    the command's own message of an interrupted write is raised that way.

    Examples
    --------
    >>> try:
    ...     try:
    ...         raise KeyboardInterrupt
    ...     except KeyboardInterrupt as stop:
    ...         raise RuntimeError("Error calling __set_name__") from stop
    ... except RuntimeError as err:
    ...     type(signal_within(err)).__name__
    'KeyboardInterrupt'
    >>> try:
    ...     try:
    ...         raise KeyboardInterrupt
    ...     except KeyboardInterrupt:
    ...         raise RuntimeError("interrupted while writing") from None
    ... except RuntimeError as err:
    ...     signal_within(err) is None
    True
    """
    seen: set[int] = set()
    at: BaseException | None = err
    while at is not None and id(at) not in seen:
        if isinstance(at, tuple(SIGNAL_OF)):
            return at
        seen.add(id(at))
        at = at.__cause__ if at.__cause__ is not None else None if at.__suppress_context__ else at.__context__
    return None


@contextmanager
def unwrapped() -> Iterator[None]:
    """Raise a signal's exception that Python wrapped in another exception as itself.

    Python 3.11 raises a RuntimeError from an exception of ``__set_name__`` (called as a class is
    made, as on import): a Ctrl-C that came then would otherwise end the command with a
    traceback and exit code 1.
    """
    try:
        yield
    except Exception as err:
        stop = signal_within(err)
        if stop is None:
            raise
        raise stop from None


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
