"""Notes that travel with data and results: what a reader or an analysis changed, dropped or left out.

A note is one line of plain text that names what it is about (a file and line, a column, a label, a
metric and the units it lacks). Notes live in ``attrs["notes"]`` of a Dataset or DataArray, as a tuple
of strings in the order they were made, without repeats. A reader adds them to the Dataset it returns;
every analysis copies the notes of its input into its result and adds its own; the printed headers of
``report``, ``correlate`` and ``wmt``, the report's page and its JSON show them.

The rule they serve: the data a result stands on is the data given, or the difference is said.
Anything a result does not stand on is either refused with a one-line error or named in a note.

>>> import xarray as xr
>>> ds = xr.Dataset()
>>> add_notes(ds.attrs, "column 'x,y' read as text: decimal commas", "column 'x,y' read as text: decimal commas")
>>> notes_of(ds)
("column 'x,y' read as text: decimal commas",)
"""

from __future__ import annotations

from collections.abc import Iterable, MutableMapping
from typing import Any

__all__ = ["NOTES", "add_notes", "carry_notes", "notes_of", "one_line"]

#: The attrs key holding the notes.
NOTES = "notes"


def one_line(text: str) -> str:
    """``text`` on one line: newlines and runs of blanks become single spaces."""
    return " ".join(str(text).split())


def notes_of(obj: Any) -> tuple[str, ...]:
    """The notes of a Dataset, DataArray, Report or attrs mapping (an empty tuple when it has none)."""
    attrs = obj if isinstance(obj, MutableMapping) else getattr(obj, "attrs", None)
    if attrs is None:
        return ()
    value = attrs.get(NOTES, ())
    if isinstance(value, str):
        return (value,) if value else ()
    return tuple(str(v) for v in value)


def add_notes(attrs: MutableMapping[str, Any], *notes: str) -> None:
    """Append ``notes`` (each made one line) to ``attrs["notes"]``, skipping repeats and empty ones."""
    have = list(notes_of(attrs))
    for note in notes:
        line = one_line(note)
        if line and line not in have:
            have.append(line)
    if have:
        attrs[NOTES] = tuple(have)


def carry_notes(attrs: MutableMapping[str, Any], sources: Iterable[Any]) -> None:
    """Add to ``attrs`` the notes of every object in ``sources`` (inputs of an analysis), in order."""
    for source in sources:
        add_notes(attrs, *notes_of(source))
