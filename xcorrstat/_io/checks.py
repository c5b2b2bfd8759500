"""Checks that keep a table as it was given: labels compared as written, no score column lost, no column
made up.

Helpers of :func:`xcorrstat._io.from_dataframe` and :func:`xcorrstat._io.read`. Each case is either
refused (a one-line ``ValueError`` naming the column, the labels and the row) or named in a note
(:mod:`xcorrstat._notes`) when nothing an analysis uses changed:

* two labels of one dim that differ only in whitespace, invisible characters (zero-width spaces, a
  byte-order mark), Unicode normalisation or type (``3`` and ``"3"``) are refused: they would be two
  systems or two inputs, splitting what is one; a label kept as given that has surrounding whitespace
  or invisible characters, and a label column that mixes types, are named in a note;
* a text column whose entries are all numbers written with a decimal comma (``"0,300"``) is refused:
  it is a score column a locale wrote, not text;
* a column without a name in the header (pandas calls it ``Unnamed: k``) is left out with a note when it
  is empty (a comma at the end of the header line) or is the first column and holds distinct whole
  numbers (the row index :meth:`pandas.DataFrame.to_csv` writes); one that holds anything else is refused.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .._display import cut, name_list

__all__ = ["check_spellings", "decimal_comma_error", "label_key", "looks_decimal_comma", "unnamed_columns"]

_DECIMAL_COMMA = r"\s*[+-]?(?:\d{1,3}(?:\.\d{3})+,\d*|\d+,\d*|,\d+|\d+)(?:[eE][+-]?\d+)?\s*"  # 1.234,5 too
_UNNAMED = re.compile(r"Unnamed: (\d+)")
_SHOWN = 5


def _visible(text: str) -> str:
    """``text`` without its format characters (Unicode category Cf: zero-width spaces and joiners, BOM)."""
    return "".join(ch for ch in text if unicodedata.category(ch) != "Cf")


def label_key(value: Any) -> str:
    """What a label reads as: NFC-normalised text without invisible characters, whitespace runs made one
    space and trimmed; a number as its text. Two labels with one key are two spellings of one label.

    Examples
    --------
    >>> label_key("s1 "), label_key("s\u200b1"), label_key("s\u00a01"), label_key(3)
    ('s1', 's1', 's 1', '3')
    """
    if not isinstance(value, str):
        return str(value)
    return " ".join(_visible(unicodedata.normalize("NFC", value)).split())


def _difference(a: Any, b: Any) -> str:
    """How two labels with one key differ."""
    if isinstance(a, str) != isinstance(b, str) or type(a) is not type(b):
        return f"type ({type(a).__name__} and {type(b).__name__})"
    kinds = []
    if " ".join(a.split()) != a or " ".join(b.split()) != b:
        kinds.append("whitespace")
    if _visible(a) != a or _visible(b) != b:
        kinds.append("invisible characters")
    if unicodedata.normalize("NFC", a) != a or unicodedata.normalize("NFC", b) != b:
        kinds.append("Unicode normalisation")
    return " and ".join(kinds) or "whitespace"


def _odd(value: Any) -> bool:
    """Whether a text label has surrounding or repeated whitespace or invisible characters."""
    return isinstance(value, str) and (" ".join(value.split()) != value or _visible(value) != value)


def check_spellings(labels: Any, what: str, where: Any = None) -> list[str]:
    """Refuse two labels that are spellings of one (:func:`label_key`); return notes on labels kept as given.

    Parameters
    ----------
    labels : array-like
        The distinct labels of one dim, in their order.
    what : str
        How messages name them: ``"system labels"``, ``"input labels of column 'doc'"``.
    where : callable, optional
        ``where(k)``: where the ``k``-th label first appears (``"data row 4"``), for the message.

    Examples
    --------
    >>> check_spellings(["s1", "s2"], "system labels")
    []
    >>> check_spellings(["s1", "s1 "], "system labels")
    Traceback (most recent call last):
    ...
    ValueError: system labels 's1' and 's1 ' differ only in whitespace: labels are compared as given, so they would be two; write them the same way (or make them clearly different)
    """
    values = list(np.asarray(labels, dtype=object).ravel())
    if all(type(v) is str and v.isascii() and " ".join(v.split()) == v for v in values):
        return []  # plain ASCII labels without odd whitespace are their own keys
    seen: dict[str, int] = {}
    for k, value in enumerate(values):
        first = seen.setdefault(label_key(value), k)
        if first != k:
            a, b = values[first], value
            rows = f", first in {where(first)} and {where(k)}" if where is not None else ""
            how = _difference(a, b)
            shown = [ascii(v)[:80] if "normalisation" in how else cut(v) for v in (a, b)]  # the code points
            raise ValueError(f"{what} {shown[0]} and {shown[1]} differ only in {how}{rows}: labels are "
                             "compared as given, so they would be two; write them the same way (or make them "
                             "clearly different)")
    notes = []
    odd = [v for v in values if _odd(v)]
    if odd:
        more = f" and {len(odd) - _SHOWN} more" if len(odd) > _SHOWN else ""
        notes.append(f"{what} kept as given, with surrounding or repeated whitespace or invisible characters: "
                     f"{len(odd)} of {len(values)}, {name_list(odd[:_SHOWN])}{more}")
    kinds = sorted({type(v).__name__ for v in values})
    if len(kinds) > 1:
        notes.append(f"{what} mix types ({', '.join(kinds)}), kept as given")
    return notes


def looks_decimal_comma(value: Any) -> bool:
    """Whether ``value`` is text of a number written with a decimal comma (``"0,300"``)."""
    return isinstance(value, str) and "," in value and re.fullmatch(_DECIMAL_COMMA, value) is not None


def decimal_comma_error(values: pd.Series, name: Hashable, row_name: Any) -> str | None:
    """The message refusing a text column whose entries all read as numbers written with a decimal comma
    (``"0,300"``, some may be whole numbers), else None."""
    arr = values.to_numpy(dtype=object)
    positions = np.flatnonzero(pd.notna(arr))
    if positions.size == 0 or not all(isinstance(v, str) for v in arr[positions]):
        return None
    text = pd.Series(arr[positions], dtype=object)
    if not text.str.fullmatch(_DECIMAL_COMMA).all():
        return None
    comma = np.flatnonzero(text.str.contains(",", regex=False).to_numpy())
    if comma.size == 0:
        return None
    first = int(comma[0])
    return (f"column {cut(name)} holds numbers written with a decimal comma (first: {cut(text.iloc[first])} in "
            f"{row_name(int(positions[first]))}); a score needs a decimal point (0.300): rewrite the column with "
            "points, or leave it out")


def unnamed_columns(df: pd.DataFrame, others: Sequence[Hashable]) -> tuple[list[Hashable], list[str]]:
    """The columns of ``others`` to read as scores, and notes on the unnamed ones left out.

    An unnamed column (``Unnamed: k``, pandas' name for an empty field of the header) is left out when it
    is empty, or is the first column and holds distinct whole numbers (a row index); otherwise it is an error.
    """
    keep, notes = [], []
    for col in others:
        match = _UNNAMED.fullmatch(col) if isinstance(col, str) else None
        if match is None:
            keep.append(col)
            continue
        values = df[col]
        position = list(df.columns).index(col) + 1
        named = f"column {position} ({cut(col)}: no name in the header)"
        if values.isna().all():
            notes.append(f"{named} has no values (a comma at the end of the header line?): left out")
        elif (position == 1 and pd.api.types.is_integer_dtype(values.dtype) and values.is_unique):
            notes.append(f"{named} holds distinct whole numbers, a row index (as DataFrame.to_csv writes without "
                         "index=False): left out of the scores")
        else:
            raise ValueError(f"{named} holds values: give it a name in the header to read it as a score or a "
                             "label, or leave it out")
    return keep, notes
