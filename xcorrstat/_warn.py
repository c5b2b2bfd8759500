"""Warnings that name the user's line, once per public call.

Every warning of the package goes through :func:`warn`, which

* reports the line that called into the package (the caller of its outermost frame), whatever
  the depth of the internal call that found the problem, as ``pandas`` does: a warning raised
  by ``xcorrstat.report(...)`` in a script or a test names that script's or that test's line;
* says each warning once per public call: a public function is marked :func:`one_call`, and a
  warning (its category and text) already given during the call is not given again, so a
  ``report`` whose intervals and tests both find the same human-like columns, or whose levels
  each draw too few, warns once. Nested public calls (a ``report`` calling ``compare``) belong
  to the outermost call.

The record of what a call has said lives in a :class:`contextvars.ContextVar`: each thread (and
each asyncio task) has its own, so concurrent calls from several threads do not silence each
other, and a worker thread of Dask, which starts without the caller's context, warns as a call of
its own.

>>> import warnings
>>> @one_call
... def twice() -> None:
...     warn("said once", UserWarning)
...     warn("said once", UserWarning)
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     twice()
>>> [str(w.message) for w in caught]
['said once']
"""

from __future__ import annotations

import contextvars
import functools
import os
import sys
import threading
import warnings
from collections.abc import Callable
from typing import ParamSpec, TypeVar

__all__ = ["in_package", "one_call", "user_stacklevel", "warn"]

_P = ParamSpec("_P")
_R = TypeVar("_R")

#: The package's folder, ending in a separator: a frame whose file is under it is the package's.
PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep

#: What the current public call has warned: (category, text) pairs; None outside any call.
_SAID: contextvars.ContextVar[set[tuple[type[Warning], str]] | None] = contextvars.ContextVar(
    "xcorrstat_said", default=None)

_LOCK = threading.Lock()


@functools.lru_cache(maxsize=4096)
def in_package(filename: str) -> bool:
    """Whether ``filename`` (a frame's ``co_filename``) is a file of the package.

    Examples
    --------
    >>> in_package(__file__), in_package("<doctest>")
    (True, False)
    """
    return os.path.abspath(filename).startswith(PACKAGE_DIR) if filename[:1] != "<" else False


def user_stacklevel() -> int:
    """The ``stacklevel`` that makes a ``warnings.warn`` in the caller of this function name the line
    that called into the package: the caller of the outermost frame of the package on the stack.

    Frames of other libraries between two of the package's (xarray, Dask and NumPy calling back into
    it) count as the package's; frames after the outermost one, the user's, do not. When the
    package's frames reach the bottom of the stack (a thread the package started) the outermost of
    them is named; a caller outside the package gets 1, its own line.

    Examples
    --------
    >>> user_stacklevel() >= 1
    True
    """
    frame = sys._getframe(1)  # the function that will call warnings.warn: stacklevel 1
    level, outermost = 1, 0
    while frame is not None:
        if in_package(frame.f_code.co_filename):
            outermost = level
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    if outermost == 0:  # called from outside the package: its own line
        return 1
    return outermost + 1 if outermost + 1 < level else outermost


def warn(message: str, category: type[Warning] = UserWarning) -> None:
    """``warnings.warn(message, category)`` at the user's line (:func:`user_stacklevel`), unless the
    current public call (:func:`one_call`) has already given this warning.

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn("a warning", UserWarning)
    >>> print(caught[0].message)
    a warning
    """
    said = _SAID.get()
    if said is not None:
        key = (category, str(message))
        with _LOCK:
            if key in said:
                return
            said.add(key)
    warnings.warn(message, category, stacklevel=user_stacklevel())


def one_call(func: Callable[_P, _R]) -> Callable[_P, _R]:
    """Mark ``func`` a public call: inside it, each warning of :func:`warn` is given once.

    A call inside another marked call belongs to the outer one. The wrapper keeps ``func``'s name,
    docstring and signature (``__wrapped__``).
    """

    @functools.wraps(func)
    def call(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        if _SAID.get() is not None:
            return func(*args, **kwargs)
        token = _SAID.set(set())
        try:
            return func(*args, **kwargs)
        finally:
            _SAID.reset(token)

    call.one_call = True  # type: ignore[attr-defined]
    return call
