"""Columns of a score table: scores, text labels, and the checks that name a bad entry.

Helpers of :func:`xcorrstat.io.from_dataframe`: numeric columns become float64 scores
(converted together, in time linear in the number of columns), text columns become
coordinates on the fewest label dims they are a function of.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Hashable
from typing import Any

import numpy as np
import pandas as pd

from .._display import cut
from ..schema import METRIC, TARGET

__all__ = [
    "check_labels",
    "is_score_dtype",
    "is_text_column",
    "long_scores",
    "row_name",
    "score_array",
    "text_coordinates",
    "wide_scores",
]


def row_name(position: int) -> str:
    """How a row is named in messages: its 1-based position among the data rows."""
    return f"data row {position + 1}"


def _reads_as_number(values: pd.Series) -> np.ndarray:
    """Which entries of ``values`` read as numbers (the one rule for "is this entry a score?")."""
    return pd.to_numeric(values, errors="coerce").notna().to_numpy()


def _first_non_numeric(values: Any) -> str:
    """' (first: data row k holds 'abc')' for a column with a non-numeric entry, else ''."""
    if not isinstance(values, pd.Series):
        return ""
    bad = np.flatnonzero(~_reads_as_number(values) & values.notna().to_numpy())
    if bad.size == 0:
        return ""
    return f"; first non-numeric entry: {cut(values.iloc[bad[0]])} in {row_name(int(bad[0]))}"


def _numbers_in_objects(values: Any) -> bool:
    """Whether an object column holds only numbers (or missing values), as JSON Lines may give."""
    if not isinstance(values, pd.Series) or values.dtype != object:
        return False
    present = values.dropna()
    return all(isinstance(v, (int, float, np.number)) for v in present)


def score_array(values: Any, dtype: Any, what: str) -> np.ndarray:
    """Check that scores are bool/int/float and finite-or-NaN; return float64."""
    if _numbers_in_objects(values):
        values = values.astype(np.float64)
        dtype = values.dtype
    if not (pd.api.types.is_bool_dtype(dtype) or pd.api.types.is_integer_dtype(dtype)
            or pd.api.types.is_float_dtype(dtype)):
        raise TypeError(f"{what} has dtype {dtype}; scores must be numeric "
                        f"(bool, integer or float){_first_non_numeric(values)}")
    if isinstance(values, pd.Series):
        out = values.to_numpy(dtype=np.float64, na_value=np.nan)
    else:
        out = np.asarray(values, dtype=np.float64)
    inf = np.flatnonzero(np.isinf(out))
    if inf.size:
        where = f" (first in {row_name(int(inf[0]))})" if out.ndim == 1 else ""
        raise ValueError(f"{what} has {inf.size} infinite value(s){where}; scores must be "
                         "finite, with NaN for missing cells")
    return out


def is_score_dtype(dtype: Any) -> bool:
    if isinstance(dtype, np.dtype):
        return dtype.kind in "biuf"
    return (pd.api.types.is_bool_dtype(dtype) or pd.api.types.is_integer_dtype(dtype)
            or pd.api.types.is_float_dtype(dtype))


def is_text_column(values: pd.Series) -> bool:
    """Whether a non-numeric column holds labels (text) rather than scores with a few bad entries.

    A column whose non-missing entries are mostly (more than half) numbers is a score
    column, and its other entries are errors; an entirely missing column is a score too.
    """
    if is_score_dtype(values.dtype):
        return False
    present = values.dropna()
    if len(present) == 0:
        return False
    return bool(_reads_as_number(present).mean() <= 0.5)


def _coordinate(values: pd.Series, codes: list[np.ndarray], coords: dict[Hashable, np.ndarray],
                out_dims: list[str]) -> tuple[tuple[str, ...], Any] | None:
    """A text column as a coordinate on the fewest label dims it is a function of, else None."""
    col_codes, uniques = pd.factorize(values, sort=False)
    labels = np.asarray(uniques, dtype=object)
    for size in range(len(out_dims) + 1):
        for subset in itertools.combinations(range(len(out_dims)), size):
            shape = tuple(len(coords[out_dims[i]]) for i in subset)
            group = (np.ravel_multi_index([codes[i] for i in subset], shape) if subset
                     else np.zeros(len(col_codes), dtype=np.intp))
            first = np.full(int(np.prod(shape)), -2, dtype=np.intp)
            first[group] = col_codes
            if not np.array_equal(first[group], col_codes):
                continue
            out = np.full(first.shape, None, dtype=object)
            known = first >= 0
            out[known] = labels[first[known]]
            dims = tuple(out_dims[i] for i in subset)
            return dims, (out.reshape(shape) if dims else out[0])
    return None


def text_coordinates(df: pd.DataFrame, text_cols: list[Hashable], codes: list[np.ndarray],
                      coords: dict[Hashable, np.ndarray], out_dims: list[str]) -> dict[Hashable, Any]:
    """Coordinates for the text columns; a column that is not a function of the labels is left out."""
    out: dict[Hashable, Any] = {}
    for col in text_cols:
        found = None if col in (METRIC, TARGET) else _coordinate(df[col], codes, coords, out_dims)
        if found is None:
            why = ("its name is reserved for a dim of the results" if col in (METRIC, TARGET) else
                   f"it is not a function of the labels ({', '.join(out_dims)})")
            warnings.warn(f"column {cut(col)} holds text and was left out: {why}", UserWarning, stacklevel=3)
            continue
        out[col] = found
        present = df[col].dropna()
        numbers = int(_reads_as_number(present).sum())
        if numbers:
            warnings.warn(f"column {cut(col)} holds text ({numbers} of {len(present)} entries are numbers): kept "
                          f"as a coordinate along {found[0]}, not analysed as a score", UserWarning, stacklevel=3)
    return out


def wide_scores(df: pd.DataFrame, others: list[Hashable]) -> tuple[list[Hashable], list[Hashable], np.ndarray]:
    """Score columns, text columns and the scores as a float64 ``(score, row)`` block.

    Numeric columns are converted together (time linear in the number of columns);
    the others one by one, to name the column and row of a bad entry.
    """
    dtypes = dict(zip(df.columns, df.dtypes))
    numeric = [c for c in others if is_score_dtype(dtypes[c])]
    rest = [c for c in others if not is_score_dtype(dtypes[c])]
    text = [c for c in rest if is_text_column(df[c])]
    converted = {c: score_array(df[c], dtypes[c], f"column {cut(c)}") for c in rest if c not in set(text)}
    score_cols = [c for c in others if c not in set(text)]
    block = np.empty((len(score_cols), len(df)))
    if numeric:
        values = df[numeric].to_numpy(dtype=np.float64, na_value=np.nan).T
        if np.isinf(values).any():
            first = numeric[int(np.flatnonzero(np.isinf(values).any(axis=1))[0])]
            score_array(df[first], dtypes[first], f"column {cut(first)}")  # raises, naming the row
        position = {c: k for k, c in enumerate(score_cols)}
        block[[position[c] for c in numeric]] = values
    for k, col in enumerate(score_cols):
        if col in converted:
            block[k] = converted[col]
    return score_cols, text, block


def check_labels(df: pd.DataFrame, label_cols: list[Hashable], args: dict[Hashable, str]) -> None:
    """Every row has every label, and each combination of labels appears once."""
    for col in label_cols:
        missing = np.flatnonzero(df[col].isna().to_numpy())
        if missing.size:
            raise ValueError(f"{args[col]}: {missing.size} missing label(s), first in "
                             f"{row_name(int(missing[0]))}; every row needs a label")
    dup = df[label_cols].duplicated(keep="first").to_numpy()  # not df.duplicated: it visits every column
    n_dup = int(dup.sum())
    if n_dup:
        pos = int(np.flatnonzero(dup)[0])
        first = tuple(df[label_cols].iloc[pos].tolist())
        same = df[label_cols].iloc[:pos].eq(df[label_cols].iloc[pos]).all(axis=1).to_numpy()
        earlier = int(np.flatnonzero(same)[0])
        raise ValueError(f"{n_dup} duplicate row(s) for ({', '.join(map(str, label_cols))}): "
                         f"{row_name(pos)} repeats {row_name(earlier)}, {cut(first)}; each combination "
                         "must appear only once")


def long_scores(names_col: pd.Series, vals: np.ndarray, flat: np.ndarray, shape: tuple[int, ...],
                 size: int, metric: str, out_dims: list[str]) -> dict[Hashable, np.ndarray]:
    m_codes, m_uniques = pd.factorize(names_col, sort=False)
    names = [str(m) for m in m_uniques]
    if len(set(names)) != len(names):
        raise ValueError(f"metric={metric!r}: names are not unique as strings: {cut(names, 300)}")
    clash = [n for n in names if n in out_dims]
    if clash:
        raise ValueError(f"metric={metric!r}: score name(s) {clash} clash with "
                         f"output dim names {out_dims}")
    arr = np.full((len(names), size), np.nan)
    arr[m_codes, flat] = vals
    return {name: arr[i].reshape(shape) for i, name in enumerate(names)}
