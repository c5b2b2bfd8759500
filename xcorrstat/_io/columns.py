"""Columns of a score table: scores, text labels, and the checks that name a bad entry.

Helpers of :func:`xcorrstat._io.from_dataframe`: numeric columns become float64 scores
(converted together, in time linear in the number of columns), text columns become
coordinates on the fewest label dims they are a function of.
"""

from __future__ import annotations

import decimal
import itertools
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from .._display import cut, did_you_mean, name_list
from .._schema import METRIC, TARGET
from .checks import decimal_comma_error, looks_decimal_comma

__all__ = [
    "LABEL_GUESSES",
    "check_labels",
    "check_nested",
    "guess_label_columns",
    "is_score_dtype",
    "is_text_column",
    "long_scores",
    "name_seq",
    "row_name",
    "score_array",
    "set_roles",
    "table_labels",
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
    entry = values.iloc[bad[0]]
    comma = " (a decimal comma: a score needs a decimal point)" if looks_decimal_comma(entry) else ""
    return f"; first non-numeric entry: {cut(entry)} in {row_name(int(bad[0]))}{comma}"


def _numbers_in_objects(values: Any) -> bool:
    """Whether an object column holds only numbers (or missing values), as JSON Lines may give."""
    if not isinstance(values, pd.Series) or values.dtype != object:
        return False
    present = values.dropna()
    return all(isinstance(v, (int, float, np.number, decimal.Decimal)) for v in present)


_NESTED = (list, dict, set, np.ndarray)


def check_nested(df: pd.DataFrame) -> None:
    """TypeError naming the column and row of the first nested entry (a list, dict, set or array):
    such a column is neither a score nor a label."""
    for col, dtype in zip(df.columns, df.dtypes):
        if dtype != object:
            continue
        values = df[col].to_numpy()
        nested = np.fromiter((isinstance(v, _NESTED) for v in values), dtype=bool, count=len(values))
        if nested.any():
            row = int(np.flatnonzero(nested)[0])
            raise TypeError(f"column {cut(col)} holds {type(values[row]).__name__} values (first in {row_name(row)}: "
                            f"{cut(values[row])}); a score column holds numbers and a label column text or numbers: "
                            "flatten it or leave it out")


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
                      coords: dict[Hashable, np.ndarray], out_dims: list[str]
                      ) -> tuple[dict[Hashable, Any], list[str]]:
    """Coordinates for the text columns, and notes: a column that is not a function of the labels is
    left out, one with some numbers is kept."""
    out: dict[Hashable, Any] = {}
    notes: list[str] = []
    for col in text_cols:
        found = None if col in (METRIC, TARGET) else _coordinate(df[col], codes, coords, out_dims)
        if found is None:
            why = ("its name is reserved for a dim of the results" if col in (METRIC, TARGET) else
                   f"it is not a function of the labels ({', '.join(out_dims)})")
            notes.append(f"column {cut(col)} holds text and was left out: {why}")
            continue
        out[col] = found
        present = df[col].dropna()
        numbers = int(_reads_as_number(present).sum())
        if numbers:
            notes.append(f"column {cut(col)} holds text ({numbers} of {len(present)} entries are numbers): kept "
                         f"as a coordinate along {found[0]}, not analysed as a score")
    return out, notes


def wide_scores(df: pd.DataFrame, others: list[Hashable]) -> tuple[list[Hashable], list[Hashable], np.ndarray]:
    """Score columns, text columns and the scores as a float64 ``(score, row)`` block.

    Numeric columns are converted together (time linear in the number of columns);
    the others one by one, to name the column and row of a bad entry.
    """
    dtypes = dict(zip(df.columns, df.dtypes))
    numeric = [c for c in others if is_score_dtype(dtypes[c])]
    rest = [c for c in others if not is_score_dtype(dtypes[c])]
    text = [c for c in rest if is_text_column(df[c])]
    for col in text:
        comma = decimal_comma_error(df[col], col, row_name)
        if comma:
            raise ValueError(comma)
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


#: Column names tried, in order (case-insensitive), when a table's label columns are not named
#: (:func:`xcorrstat.read`, the command line and the ``df.corrstat`` accessor).
#: Segment names come before document names: in a table with both (WMT), the segment is the input.
LABEL_GUESSES = {
    "system": ("system", "sys", "system_id", "system_name", "sys_id", "sys_name", "model", "model_name",
               "model_id", "mt_system"),
    "input": ("input", "input_id", "segment", "seg_id", "segment_id", "doc", "doc_id", "document", "document_id",
              "item", "item_id", "example", "example_id", "instance_id", "source_id", "id"),
}


def guess_label_columns(columns: Sequence[Hashable], *, system: str | None = None,
                        input: str | None = None,
                        optional_input: bool = False) -> tuple[str, str | None]:
    """The system and input label columns of a table: the given names, else the first of
    :data:`LABEL_GUESSES` present (case-insensitive).

    With ``optional_input=True`` a table without an input column gives ``input`` None
    (a system-level table, one row per system) instead of an error.

    Raises ValueError naming the columns tried and the columns the table has when none is found.

    Examples
    --------
    >>> guess_label_columns(["sys_name", "doc_id", "bleu", "human"])
    ('sys_name', 'doc_id')
    >>> guess_label_columns(["system", "bleu", "human"], optional_input=True)
    ('system', None)
    """
    names = [str(c) for c in columns]
    lower = {n.lower(): n for n in reversed(names)}
    found: dict[str, str | None] = {}
    for dim, given in (("system", system), ("input", input)):
        if given is not None:
            found[dim] = given
            continue
        hit = next((lower[g] for g in LABEL_GUESSES[dim] if g in lower and lower[g] not in found.values()), None)
        if hit is None and not (dim == "input" and optional_input):
            raise ValueError(f"no {dim} label column found: tried {list(LABEL_GUESSES[dim])}; the table has "
                             f"columns {name_list(names, near=dim)}; name it with {dim}=... (--{dim}-col on the command line)")
        found[dim] = hit
    return found["system"], found["input"]  # type: ignore[return-value]

def _label_values(df: pd.DataFrame, name: Hashable) -> pd.Series:
    """A label column, or an index level of that name."""
    if name in df.columns:
        return df[name]
    return pd.Series(df.index.get_level_values(name))


def table_labels(df: pd.DataFrame, *, system: Hashable | None = None,
                 input: Hashable | None | bool = None) -> tuple[Hashable, Hashable | None]:
    """The system and input label columns (or index levels) of a wide or long table; input None
    for a system-level table (one row per system).

    The one rule of :func:`xcorrstat.read` and the ``df.corrstat`` accessor: a label not given is
    guessed (:func:`guess_label_columns`); a table without an input column is a system-level
    table when its system labels do not repeat, and an error otherwise; ``input=False`` reads
    any table as system-level.

    Examples
    --------
    >>> df = pd.DataFrame({"sys": ["A", "A"], "doc": ["d1", "d2"], "bleu": [0.1, 0.2]})
    >>> table_labels(df), table_labels(df[["sys", "bleu"]].iloc[:1])
    (('sys', 'doc'), ('sys', None))
    """
    columns = [*df.columns, *(n for n in df.index.names if n is not None and n not in df.columns)]
    if input is False:
        return system if system is not None else guess_label_columns(columns, optional_input=True)[0], None
    if system is not None and input is not None:
        return system, input
    found_system, found_input = guess_label_columns(
        columns, system=system, input=input, optional_input=True)  # type: ignore[arg-type]
    if found_input is None and found_system in columns and _label_values(df, found_system).duplicated().any():
        raise ValueError(f"no input label column found (tried {list(LABEL_GUESSES['input'])}) and the "
                         f"system column {cut(found_system)} repeats labels, so this is not a "
                         f"system-level table (one row per system); the table has columns "
                         f"{name_list(map(str, columns), near='input')}: name the input column with input=... "
                         "(--input-col on the command line)")
    return found_system, found_input


def name_seq(value: Sequence[Hashable] | str | None, arg: str) -> list[Hashable]:
    """Normalise a name or a sequence of names to a list."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    try:
        return list(value)
    except TypeError:
        raise TypeError(f"{arg} must be a name or a sequence of names, "
                        f"got {type(value).__name__}") from None


def set_roles(ds: xr.Dataset, human: Sequence[Hashable] | str | None) -> xr.Dataset:
    """``ds`` with ``attrs["role"]`` of every variable set: ``"human"`` for ``human``, ``"metric"`` for the rest."""
    if human is None:
        return ds
    names = name_seq(human, "human")
    text = [n for n in names if n in ds.coords and n not in ds.dims]
    if text:
        raise ValueError(f"human={cut(human)}: column {cut(text[0])} holds text, not scores; it was kept as a "
                         f"coordinate along {tuple(ds.coords[text[0]].dims)}; human judgments must be numbers")
    unknown = [n for n in names if n not in ds.data_vars]
    if unknown:
        raise ValueError(f"human={cut(human)}: unknown variable(s) {cut(unknown)}; data variables are "
                         f"{name_list(ds.data_vars, near=unknown[0])}{did_you_mean(unknown[0], ds.data_vars)}")
    for name in ds.data_vars:
        ds[name].attrs["role"] = "human" if name in names else "metric"
    return ds
