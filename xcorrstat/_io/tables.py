"""Turn score tables into labelled ``(system, input)`` Datasets.

Every score in xcorrstat lives in an :class:`xarray.Dataset` with one data
variable per metric or human judgment, each with dims ``(system, input)``
plus optional extra dims (for example a language pair).  This module builds
such Datasets from pandas DataFrames (:func:`from_dataframe`) and from files
on disk (:func:`read`).

Label order: systems, inputs and the labels of extra dims keep the order in
which they first appear in the table (they are *not* sorted).
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from .._display import cut, did_you_mean, name_list
from .._notes import add_notes
from .._schema import SYSTEM_LEVEL_ATTR
from .._warn import one_call, warn
from .checks import check_spellings, unnamed_columns
from .columns import (
    LABEL_GUESSES,
    check_labels,
    check_nested,
    guess_label_columns,
    is_text_column,
    long_scores,
    name_seq,
    row_name,
    score_array,
    set_roles,
    table_labels,
    text_coordinates,
    wide_scores,
)
from .limits import check_file, memory_guard
from .mtme import is_mtme_testset, read_mtme
from .netcdf import read_netcdf
from .readers import FORMAT_OPTION, load_table, located

__all__ = ["LABEL_GUESSES", "SUPPORTED_FORMATS", "from_dataframe", "guess_label_columns", "read"]

#: Formats understood by :func:`read`.
SUPPORTED_FORMATS = ("csv", "tsv", "jsonl", "parquet", "netcdf")

_EXTENSIONS = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".nc": "netcdf",
    ".netcdf": "netcdf",
}
_ALIASES = {ext.lstrip("."): fmt for ext, fmt in _EXTENSIONS.items()}
_GZIP_OK = ("csv", "tsv", "jsonl")
_DIMS = ("system", "input")


def _labels(uniques: pd.Index) -> np.ndarray:
    """Label coordinate values: strings as Python ``str`` objects, numbers as numbers."""
    if pd.api.types.is_string_dtype(uniques.dtype) or isinstance(
            uniques.dtype, pd.CategoricalDtype):
        return np.asarray(uniques, dtype=object)
    return np.asarray(uniques)


def _check_columns(df: pd.DataFrame) -> None:
    dup = df.columns[df.columns.duplicated()]
    if len(dup):
        where = [i + 1 for i, c in enumerate(df.columns) if c == dup[0]]
        raise ValueError(f"df: column name {cut(dup[0])} appears {len(where)} times (columns "
                         f"{', '.join(map(str, where))}); each column needs its own name")


def _from_dataframe_iv(df, system, input, metric, value,
                       dims) -> tuple[pd.DataFrame, list[Hashable], list[str]]:
    """The table (label index levels made columns), its label columns and the output dims."""
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"df must be a pandas DataFrame, got {type(df).__name__}")
    if (metric is None) != (value is None):
        raise ValueError("give both metric= and value= for a long table, or neither "
                         f"for a wide table; got metric={cut(metric)}, value={cut(value)}")
    _check_columns(df)
    check_nested(df)
    extra = name_seq(dims, "dims")
    args: dict[Hashable, str] = {system: f"system={system!r}"}
    if input is not None:
        args[input] = f"input={input!r}"
    for d in extra:
        args.setdefault(d, f"dims entry {d!r}")
    keys = [system, *([] if input is None else [input]), *extra]
    if len(set(keys)) != len(keys):
        raise ValueError(f"system={system!r}, input={input!r} and dims={extra!r} "
                         "must name distinct columns")
    out_dims = [*(_DIMS if input is not None else _DIMS[:1]), *extra]
    if len(set(out_dims)) != len(out_dims) or (input is None and "input" in extra):
        raise ValueError(f"dims={extra!r} may not contain 'system' or 'input' "
                         "(those names are taken by the system and input dims)")
    named = list(keys)
    if metric is not None:
        args[metric] = f"metric={metric!r}"
        args[value] = f"value={value!r}"
        if len({*keys, metric, value}) != len(keys) + 2:
            raise ValueError(f"metric={metric!r} and value={value!r} must be distinct "
                             "from each other and from the label columns")
        named += [metric, value]

    in_index = [c for c in named if c not in df.columns and c in df.index.names]
    if in_index:
        df = df.reset_index(level=in_index)
    if len(df) == 0:
        raise ValueError("df has no rows")
    for col in named:
        if col not in df.columns:
            raise ValueError(f"{args[col]}: no such column; available columns are "
                             f"{name_list(df.columns, near=col)}{did_you_mean(col, df.columns)}")

    label_cols = keys if metric is None else [*keys, metric]
    check_labels(df, label_cols, args)
    return df, keys, out_dims


def _table_scores(df: pd.DataFrame, keys: list[Hashable], out_dims: list[str], metric: str | None,
                  value: str | None) -> tuple[list[Hashable], list[Hashable], np.ndarray, list[str]]:
    """Score columns, text columns, the scores (a ``(score, row)`` block of a wide table, the value
    column of a long one, whose score columns are given by the metric column) and notes on unnamed
    columns left out."""
    if metric is None:
        others, notes = unnamed_columns(df, [c for c in df.columns if c not in keys])
        clash = [c for c in others if c in out_dims]
        if clash:
            raise ValueError(f"score column(s) {clash} clash with output dim names "
                             f"{out_dims}; rename them")
        score_cols, text, block = wide_scores(df, others)
        if not score_cols:
            raise ValueError(f"df has no score columns besides the labels {keys}"
                             + (f" and the text columns {cut(text, 200)}" if text else ""))
        return score_cols, text, block, notes
    vals = score_array(df[value], df[value].dtype, f"value={value!r} column")
    text = [c for c in df.columns if c not in {*keys, metric, value} and is_text_column(df[c])]
    return [], text, vals, []


@one_call
def from_dataframe(
    df: pd.DataFrame,
    *,
    system: str = "system",
    input: str | None = "input",
    metric: str | None = None,
    value: str | None = None,
    dims: Sequence[str] = (),
    human: Sequence[str] | str | None = None,
) -> xr.Dataset:
    """Build a ``(system, input)`` Dataset from a wide or long table.

    Parameters
    ----------
    df : pandas.DataFrame
        Wide table: one row per ``(system, input, *dims)`` and one column per
        metric or human score.  Long table: one row per
        ``(system, input, *dims, metric)`` with the score in column `value`.
        Label columns may also be index levels.
    system, input : str
        Columns holding the system and input labels.  The output dims are
        always named ``"system"`` and ``"input"``.  ``input=None`` reads a
        system-level table (one row per system): the scores get a ``system``
        dim only and the Dataset the attr ``system_level = 1``.
    metric, value : str, optional
        Give both for a long table: `metric` names the column of score names
        (each becomes a data variable, converted to ``str``) and `value` the
        column of scores.  Other numeric columns of a long table are
        ignored; its text columns become coordinates as in a wide table
        (one that varies between the rows of one cell is left out with a
        warning).
    dims : sequence of str
        Further label columns, kept as extra dims with their own names.
    human : str or sequence of str, optional
        Variables that are human judgments.  When given, every variable gets
        ``attrs["role"]``: ``"human"`` for these and ``"metric"`` for the rest.

    Returns
    -------
    xarray.Dataset
        float64 data variables with dims ``("system", "input", *dims)``.
        Labels keep their type and their order of first appearance (they are
        not sorted); combinations absent from the table are NaN.  Text
        columns of a wide table (mostly non-numeric entries, such as WMT's
        ``domain`` and ``doc``) become coordinates on the fewest label dims
        they are a function of; one that is a function of none is left out
        with a warning.  What was left out or kept as given (a text column,
        an unnamed column -- the row index ``DataFrame.to_csv`` writes, an
        empty one --, labels with surrounding whitespace) is named in
        ``attrs["notes"]``, one line each, and in a ``UserWarning``.

    Raises
    ------
    TypeError
        If `df` is not a DataFrame or a score column holds non-numeric entries.
    ValueError
        If a named column is missing, a column name repeats, the table has no
        rows, labels are missing, rows are duplicated, scores are infinite,
        or `human` names unknown variables or a text column; if two labels
        of one dim differ only in whitespace, invisible characters, Unicode
        normalisation or type (``"s1"`` and ``"s1 "``, ``3`` and ``"3"``),
        a text column holds numbers written with a decimal comma, or a
        column named ``Unnamed: k`` (an empty header field) holds values.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"sys": ["A", "A", "B", "B"], "doc": ["d1", "d2", "d1", "d2"],
    ...                    "bleu": [0.1, 0.2, 0.3, 0.4], "human": [1, 2, 3, 4]})
    >>> ds = from_dataframe(df, system="sys", input="doc", human="human")
    >>> ds["bleu"].dims, ds["human"].attrs["role"]
    (('system', 'input'), 'human')
    >>> long = df.melt(id_vars=["sys", "doc"], var_name="name", value_name="score")
    >>> from_dataframe(long, system="sys", input="doc", metric="name",
    ...                value="score", human="human").equals(ds)
    True
    >>> from_dataframe(df.assign(domain=["news", "chat", "news", "chat"]),
    ...                system="sys", input="doc")["domain"].dims
    ('input',)
    """
    ds, notes = _dataset(df, system=system, input=input, metric=metric, value=value, dims=dims, human=human)
    return _published(ds, notes)


def _published(ds: xr.Dataset, notes: list[str]) -> xr.Dataset:
    """``ds`` with ``notes`` in its attrs, each also given as a UserWarning (at the user's line)."""
    for note in notes:
        warn(note, UserWarning)
    add_notes(ds.attrs, *notes)
    return ds


def _first_row(codes: np.ndarray) -> Any:
    """``where(k)``: the data row where the ``k``-th label of ``codes`` first appears."""
    return lambda k: row_name(int(np.flatnonzero(codes == k)[0]))


def _spellings(df: pd.DataFrame, col: Hashable, dim: str, codes: np.ndarray, labels: np.ndarray) -> list[str]:
    """:func:`check_spellings` of one label column."""
    what = f"{dim} labels" if col == dim else f"{dim} labels (column {cut(col)})"
    return check_spellings(labels, what, _first_row(codes))


def _dataset(df: pd.DataFrame, *, system: str, input: str | None, metric: str | None, value: str | None,
             dims: Sequence[str], human: Sequence[str] | str | None) -> tuple[xr.Dataset, list[str]]:
    """:func:`from_dataframe`'s Dataset, and its notes."""
    df, keys, out_dims = _from_dataframe_iv(df, system, input, metric, value, dims)
    score_cols, text, scores, notes = _table_scores(df, keys, out_dims, metric, value)
    codes: list[np.ndarray] = []
    coords: dict[Hashable, np.ndarray] = {}
    for col, dim in zip(keys, out_dims):
        c, uniques = pd.factorize(df[col], sort=False)
        codes.append(c)
        coords[dim] = _labels(uniques)
        notes += _spellings(df, col, dim, c, coords[dim])
    shape = tuple(len(coords[d]) for d in out_dims)
    size = int(np.prod(shape))
    flat = np.ravel_multi_index(codes, shape)

    data: dict[Hashable, np.ndarray] = {}
    if metric is None:
        arr = np.full((len(score_cols), size), np.nan)
        arr[:, flat] = scores
        data = {col: arr[k].reshape(shape) for k, col in enumerate(score_cols)}
    else:
        m_codes, m_names = pd.factorize(df[metric], sort=False)
        notes += check_spellings(m_names, f"score names (column {cut(metric)})", _first_row(m_codes))
        data = long_scores(df[metric], scores, flat, shape, size, metric, out_dims)

    all_coords: dict[Hashable, Any] = dict(coords)
    text_coords, text_notes = text_coordinates(df, text, codes, coords, out_dims)
    all_coords.update(text_coords)
    ds = xr.Dataset({k: (out_dims, v) for k, v in data.items()}, coords=all_coords)
    if input is None:
        ds.attrs[SYSTEM_LEVEL_ATTR] = 1
    return set_roles(ds, human), notes + text_notes


def _format_of(path: str, format: str | None) -> tuple[str, bool]:
    """Return (format, gzip-compressed) for `path`."""
    name = os.path.basename(path).lower()
    gz = name.endswith(".gz")
    if gz:
        name = name[:-3]
    if format is not None:
        fmt = _ALIASES.get(str(format).lower().lstrip("."))
        if fmt is None:
            raise ValueError(f"format={cut(format)} is not supported; supported formats are "
                             f"{list(SUPPORTED_FORMATS)}{did_you_mean(str(format), [*SUPPORTED_FORMATS, *_ALIASES])}")
    else:
        fmt = _EXTENSIONS.get(os.path.splitext(name)[1])
        if fmt is None:
            raise ValueError(
                f"cannot tell the format of {path!r} from its extension; supported: "
                f"{', '.join(_EXTENSIONS)} (and .gz for {', '.join(_GZIP_OK)}), or "
                f"pass one of {list(SUPPORTED_FORMATS)} with {FORMAT_OPTION}")
    if gz and fmt not in _GZIP_OK:
        raise ValueError(f"{path!r}: gzip compression is supported only for "
                         f"{', '.join(_GZIP_OK)}, not {fmt}")
    return fmt, gz


def _read_iv(path, format: str | None, encoding: str | None) -> tuple[str, str, bool]:
    """The file's path as a str, its format and whether it is gzip-compressed."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or path-like, got {type(path).__name__}")
    path = os.fspath(path)
    if os.path.isdir(path):
        raise IsADirectoryError(f"path {path!r} is a folder; give a file")
    size = check_file(path)  # a regular file within the reading limit, before it is opened
    fmt, gz = _format_of(path, format)
    if encoding is not None and fmt not in ("csv", "tsv", "jsonl"):
        raise ValueError(f"encoding={cut(encoding)} applies to CSV, TSV and JSON Lines files, not to {fmt} "
                         f"files such as {path!r}")
    if size == 0:
        raise ValueError(f"file is empty: {path!r}")
    if fmt == "parquet" and importlib.util.find_spec("pyarrow") is None:
        raise ImportError("reading Parquet needs pyarrow: install pyarrow to read "
                          f"Parquet files such as {path!r}")
    return path, fmt, gz


@one_call
def read(path: str | os.PathLike[str], *, format: str | None = None,
         encoding: str | None = None, **kwargs: Any) -> xr.Dataset:
    """Read a score table or netCDF file into a ``(system, input)`` Dataset.

    Parameters
    ----------
    path : str or path-like
        File to read, or the folder of an mt-metrics-eval test set
        (``.../mt-metrics-eval-v2/wmt23``), which :func:`~xcorrstat._io.mtme.read_mtme`
        reads (``**kwargs`` are then its options).  The format comes from the extension: ``.csv``,
        ``.tsv``/``.tab``, ``.jsonl``/``.ndjson`` (JSON Lines),
        ``.parquet``/``.pq``, ``.nc``/``.netcdf``; the text formats may be
        gzip-compressed (``.csv.gz``, ``.tsv.gz``, ``.jsonl.gz``).
    format : {"csv", "tsv", "jsonl", "parquet", "netcdf"}, optional
        Override the format implied by the extension.
    encoding : str, optional
        Text encoding of a CSV, TSV or JSON Lines file.  By default a
        byte-order mark decides (UTF-8, UTF-16 or UTF-32), else UTF-8.
    **kwargs
        Passed on to :func:`from_dataframe` (``system``, ``input``,
        ``metric``, ``value``, ``dims``, ``human``).  For table formats a
        missing or None ``system``/``input`` is guessed from the columns
        (:func:`guess_label_columns`: ``system``, ``sys``, ``model`` ...;
        ``input``, ``segment``, ``seg_id``, ``doc``, ``doc_id``, ``item`` ...); a table
        with no input column is read as a system-level table (one row per
        system), and ``input=False`` reads any table so.  For netCDF files
        ``system``/``input`` rename those dims, ``dims`` must name existing
        dims, ``human`` sets roles, and ``metric``/``value`` are errors.

    Returns
    -------
    xarray.Dataset
        As :func:`from_dataframe`; netCDF files keep their own label order.
        ``attrs["notes"]`` names, with the file, what was left out or kept
        as given (also given as a ``UserWarning``): a text column or
        variable, an unnamed column, empty fields past the header, a netCDF
        variable without the ``(system, input)`` dims.

    Raises
    ------
    FileNotFoundError
        If `path` does not exist.
    ValueError
        If the format or encoding is unknown, the file is empty, corrupt or
        not in its format, or the contents fail validation (as
        :func:`from_dataframe`'s, and a line with fewer fields than the
        header names, or every line with more that are not empty); the
        message names the file (and the line, where there is one). Also, before the file is
        opened, if it is not a regular file (a FIFO, a device) or holds more
        than the reading limit (the ``memory_budget`` option; for ``.gz`` the
        text it expands to, counted as it is read), or has more than 200,000
        columns (``xcorrstat._io.limits.MAX_COLUMNS``); and if memory runs out
        while reading (a ``MemoryError`` too).
    TypeError
        If a score column holds non-numeric entries (file and line named).
    ImportError
        If a Parquet file is read without pyarrow installed.

    Examples
    --------
    >>> import os, tempfile
    >>> import pandas as pd
    >>> df = pd.DataFrame({"system": ["A", "B"], "input": ["d1", "d1"], "bleu": [0.5, 0.7]})
    >>> path = os.path.join(tempfile.mkdtemp(), "scores.csv")
    >>> df.to_csv(path, index=False)
    >>> read(path)["bleu"].sizes
    Frozen({'system': 2, 'input': 1})
    """
    if isinstance(path, (str, os.PathLike)) and is_mtme_testset(path):
        return _read_mtme_folder(os.fspath(path), format, encoding, kwargs)
    path, fmt, gz = _read_iv(path, format, encoding)
    try:
        with memory_guard(repr(path)):
            if fmt == "netcdf":
                ds, notes = read_netcdf(path, kwargs)
            else:
                df, read_notes = load_table(path, fmt, gz, encoding)
                ds, notes = _table_dataset(df, kwargs)
                notes = read_notes + notes
    except (ValueError, TypeError) as err:
        message = str(err)
        if repr(path) in message:
            raise
        try:
            located_err = type(err)(located(message, path, fmt))
        except TypeError:  # an exception type with another constructor: keep its kind
            located_err = (TypeError if isinstance(err, TypeError) else ValueError)(located(message, path, fmt))
        raise located_err from None
    return _published(ds, [located(note, path, fmt) for note in notes])


_TABLE_OPTIONS = ("system", "input", "metric", "value", "dims")


def _read_mtme_folder(path: str, format: str | None, encoding: str | None, kwargs: dict[str, Any]) -> xr.Dataset:
    """`read` of an mt-metrics-eval test set folder: read_mtme on its parent folder and its name."""
    given = [k for k in _TABLE_OPTIONS if kwargs.get(k) not in (None, ())] + (["format"] if format else [])
    if given:
        raise ValueError(f"{path!r} is an mt-metrics-eval test set folder: {', '.join(given)}= apply to tables "
                         "only; read_mtme's options (lps=, levels=, human=, metrics=, refs=, ...) apply here")
    folder = os.path.abspath(path)
    options = {k: v for k, v in kwargs.items() if k not in _TABLE_OPTIONS}
    return read_mtme(os.path.dirname(folder), os.path.basename(folder), encoding=encoding or "utf-8", **options)


def _table_dataset(df: pd.DataFrame, kwargs: dict[str, Any]) -> tuple[xr.Dataset, list[str]]:
    kwargs = dict(kwargs)
    kwargs["system"], kwargs["input"] = table_labels(df, system=kwargs.get("system"), input=kwargs.get("input"))
    options = {"metric": None, "value": None, "dims": (), "human": None, **kwargs}
    return _dataset(df, **options)
