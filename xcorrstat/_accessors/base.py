"""What both roles of ``.corrstat`` share: the object, its role, and the wrong-role message.

A *result* is recognised by the attrs the analyses write: every one records at least one of
:data:`RESULT_ATTRS` (``target`` for the statistics of metrics against a human score,
``variable`` for the agreement analyses, ``test`` for a normality report, ``confidence_level``
for mean-score intervals, ``correction`` for a WMT task ranking). Score data carry none of them:
the readers write ``role``, ``level`` or ``testset``, never these.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, ClassVar

import pandas as pd
import xarray as xr

from .._display import printable
from .._io.columns import table_labels
from .._io.tables import from_dataframe

__all__ = ["RESULT_ATTRS", "Bound", "copy_docs", "describe", "frame_to_dataset", "is_result", "method_names"]

#: Attrs of which every analysis's result records at least one, and score data none.
RESULT_ATTRS: tuple[str, ...] = ("target", "variable", "test", "confidence_level", "correction")


def is_result(obj: object) -> bool:
    """Whether ``obj`` is what an analysis returned (an xarray object with a :data:`RESULT_ATTRS` attr)."""
    return isinstance(obj, (xr.Dataset, xr.DataArray)) and any(k in obj.attrs for k in RESULT_ATTRS)


def describe(obj: object) -> str:
    """The object in a message: its type and, for a result, the attrs that make it one."""
    kind = type(obj).__name__
    if isinstance(obj, pd.DataFrame):
        return "this DataFrame is read as a table of scores (one row per system and input)"
    if not is_result(obj):
        return f"this {kind} holds scores (its attrs record no analysis: none of {', '.join(RESULT_ATTRS)})"
    assert isinstance(obj, (xr.Dataset, xr.DataArray))
    shown = ", ".join(f"{k}={printable(repr(obj.attrs[k]), 30)}" for k in RESULT_ATTRS if k in obj.attrs)
    return f"this {kind} is the result of an analysis (attrs {shown})"


def frame_to_dataset(frame: pd.DataFrame, **kwargs: Any) -> xr.Dataset:
    """The Dataset a wide table maps to; label columns not given are guessed from their names."""
    given_input = kwargs.get("input", None) if "input" in kwargs else None
    system, input = table_labels(frame, system=kwargs.get("system"),
                                 input=False if "input" in kwargs and given_input is None else given_input)
    return from_dataframe(frame, **{**kwargs, "system": system, "input": input})


def method_names(cls: type) -> list[str]:
    """The public methods and properties of an accessor class, in definition order."""
    names = [n for klass in reversed(cls.__mro__) for n in vars(klass) if not n.startswith("_")]
    return list(dict.fromkeys(names))


def copy_docs(cls: type, functions: Iterable[Callable[..., Any]]) -> None:
    """Give each method of ``cls`` the docstring of the function of the same name (so help() shows it)."""
    for func in functions:
        getattr(cls, func.__name__).__doc__ = func.__doc__


class Bound:
    """An object bound to one role; a method of the other role fails with a one-line message."""

    #: The other role's method names, each with what to call instead (set where both roles are known).
    _elsewhere: ClassVar[dict[str, str]] = {}
    #: The types a role is built on.
    _takes: ClassVar[tuple[type, ...]] = (xr.Dataset, xr.DataArray, pd.DataFrame)

    # each function checks the object it is given, as when called directly
    _obj: Any

    def __init__(self, obj: xr.Dataset | xr.DataArray | pd.DataFrame) -> None:
        if not isinstance(obj, type(self)._takes):
            names = " or ".join(t.__name__ for t in type(self)._takes)
            raise TypeError(f"{type(self).__name__} takes a {names}, got {type(obj).__name__}")
        self._obj = obj

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {', '.join(method_names(type(self)))}>"

    if not TYPE_CHECKING:  # at run time only: for type checkers a misplaced or misspelt name stays an error

        def __getattr__(self, name: str) -> Any:
            hint = type(self)._elsewhere.get(name) if not name.startswith("_") else None
            if hint is None:
                raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
            raise AttributeError(f".corrstat.{name}: {describe(self.__dict__.get('_obj'))}; {hint}")
