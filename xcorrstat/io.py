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


def _names(value: Sequence[Hashable] | str | None, arg: str) -> list[Hashable]:
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


def _row(position: int) -> str:
    """How a row is named in messages: its 1-based position among the data rows."""
    return f"data row {position + 1}"


def _first_non_numeric(values: Any) -> str:
    """' (first: data row k holds 'abc')' for a column with a non-numeric entry, else ''."""
    if not isinstance(values, pd.Series):
        return ""
    numeric = pd.to_numeric(values, errors="coerce")
    bad = np.flatnonzero(numeric.isna().to_numpy() & values.notna().to_numpy())
    if bad.size == 0:
        return ""
    return f"; first non-numeric entry: {values.iloc[bad[0]]!r} in {_row(int(bad[0]))}"


def _score_array(values: Any, dtype: Any, what: str) -> np.ndarray:
    """Check that scores are bool/int/float and finite-or-NaN; return float64."""
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
        where = f" (first in {_row(int(inf[0]))})" if out.ndim == 1 else ""
        raise ValueError(f"{what} has {inf.size} infinite value(s){where}; scores must be "
                         "finite, with NaN for missing cells")
    return out


def _labels(uniques: pd.Index) -> np.ndarray:
    """Label coordinate values: strings as Python ``str`` objects, numbers as numbers."""
    if pd.api.types.is_string_dtype(uniques.dtype) or isinstance(
            uniques.dtype, pd.CategoricalDtype):
        return np.asarray(uniques, dtype=object)
    return np.asarray(uniques)


def _set_roles(ds: xr.Dataset, human: Sequence[Hashable] | str | None) -> xr.Dataset:
    if human is None:
        return ds
    names = _names(human, "human")
    unknown = [n for n in names if n not in ds.data_vars]
    if unknown:
        raise ValueError(f"human={human!r}: unknown variable(s) {unknown}; "
                         f"data variables are {list(ds.data_vars)}")
    for name in ds.data_vars:
        ds[name].attrs["role"] = "human" if name in names else "metric"
    return ds


def from_dataframe(
    df: pd.DataFrame,
    *,
    system: str = "system",
    input: str = "input",
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
        always named ``"system"`` and ``"input"``.
    metric, value : str, optional
        Give both for a long table: `metric` names the column of score names
        (each becomes a data variable, converted to ``str``) and `value` the
        column of scores.  Other columns of a long table are ignored.
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
        not sorted); combinations absent from the table are NaN.

    Raises
    ------
    TypeError
        If `df` is not a DataFrame or a score column is not bool/int/float.
    ValueError
        If a named column is missing, the table has no rows, labels are
        missing, rows are duplicated, scores are infinite, or `human` names
        unknown variables.

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
    """
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"df must be a pandas DataFrame, got {type(df).__name__}")
    if (metric is None) != (value is None):
        raise ValueError("give both metric= and value= for a long table, or neither "
                         f"for a wide table; got metric={metric!r}, value={value!r}")
    extra = _names(dims, "dims")
    args = {system: f"system={system!r}", input: f"input={input!r}"}
    for d in extra:
        args.setdefault(d, f"dims entry {d!r}")
    keys = [system, input, *extra]
    if len(set(keys)) != len(keys):
        raise ValueError(f"system={system!r}, input={input!r} and dims={extra!r} "
                         "must name distinct columns")
    out_dims = [*_DIMS, *extra]
    if len(set(out_dims)) != len(out_dims):
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
                             f"{list(df.columns)}")

    label_cols = keys if metric is None else [*keys, metric]
    for col in label_cols:
        missing = np.flatnonzero(df[col].isna().to_numpy())
        if missing.size:
            raise ValueError(f"{args[col]}: {missing.size} missing label(s), first in "
                             f"{_row(int(missing[0]))}; every row needs a label")
    dup = df.duplicated(subset=label_cols, keep="first").to_numpy()
    n_dup = int(dup.sum())
    if n_dup:
        pos = int(np.flatnonzero(dup)[0])
        first = tuple(df[label_cols].iloc[pos].tolist())
        same = df[label_cols].iloc[:pos].eq(df[label_cols].iloc[pos]).all(axis=1).to_numpy()
        earlier = int(np.flatnonzero(same)[0])
        raise ValueError(f"{n_dup} duplicate row(s) for ({', '.join(map(str, label_cols))}): "
                         f"{_row(pos)} repeats {_row(earlier)}, {first!r}; each combination "
                         "must appear only once")

    if metric is None:
        score_cols = [c for c in df.columns if c not in keys]
        if not score_cols:
            raise ValueError(f"df has no score columns besides the labels {keys}")
        clash = [c for c in score_cols if c in out_dims]
        if clash:
            raise ValueError(f"score column(s) {clash} clash with output dim names "
                             f"{out_dims}; rename them")
        scores = {c: _score_array(df[c], df[c].dtype, f"column {c!r}") for c in score_cols}
    else:
        vals = _score_array(df[value], df[value].dtype, f"value={value!r} column")

    codes, coords = [], {}
    for col, dim in zip(keys, out_dims):
        c, uniques = pd.factorize(df[col], sort=False)
        codes.append(c)
        coords[dim] = _labels(uniques)
    shape = tuple(len(coords[d]) for d in out_dims)
    size = int(np.prod(shape))
    flat = np.ravel_multi_index(codes, shape)

    data: dict[Hashable, np.ndarray] = {}
    if metric is None:
        for col, v in scores.items():
            arr = np.full(size, np.nan)
            arr[flat] = v
            data[col] = arr.reshape(shape)
    else:
        m_codes, m_uniques = pd.factorize(df[metric], sort=False)
        names = [str(m) for m in m_uniques]
        if len(set(names)) != len(names):
            raise ValueError(f"metric={metric!r}: names are not unique as strings: {names}")
        clash = [n for n in names if n in out_dims]
        if clash:
            raise ValueError(f"metric={metric!r}: score name(s) {clash} clash with "
                             f"output dim names {out_dims}")
        arr = np.full((len(names), size), np.nan)
        arr[m_codes, flat] = vals
        for i, name in enumerate(names):
            data[name] = arr[i].reshape(shape)

    ds = xr.Dataset({k: (out_dims, v) for k, v in data.items()}, coords=coords)
    return _set_roles(ds, human)


#: Column names tried, in order (case-insensitive), when a file's label columns are not named.
LABEL_GUESSES = {
    "system": ("system", "sys", "system_id", "system_name", "sys_id", "sys_name", "model", "model_name",
               "model_id", "mt_system"),
    "input": ("input", "input_id", "doc", "doc_id", "document", "document_id", "segment", "seg_id",
              "segment_id", "item", "item_id", "example", "example_id", "instance_id", "source_id", "id"),
}


def guess_label_columns(columns: Sequence[Hashable], *, system: str | None = None,
                        input: str | None = None) -> tuple[str, str]:
    """The system and input label columns of a table: the given names, else the first of
    :data:`LABEL_GUESSES` present (case-insensitive).

    Raises ValueError naming the columns tried and the columns the table has when none is found.

    Examples
    --------
    >>> guess_label_columns(["sys_name", "doc_id", "bleu", "human"])
    ('sys_name', 'doc_id')
    """
    names = [str(c) for c in columns]
    lower = {n.lower(): n for n in reversed(names)}
    found = {}
    for dim, given in (("system", system), ("input", input)):
        if given is not None:
            found[dim] = given
            continue
        hit = next((lower[g] for g in LABEL_GUESSES[dim] if g in lower and lower[g] not in found.values()), None)
        if hit is None:
            option = "system" if dim == "system" else "input"
            raise ValueError(f"no {dim} label column found: tried {list(LABEL_GUESSES[dim])}; the table has "
                             f"columns {names}; name it with {option}=... (--{option}-col on the command line)")
        found[dim] = hit
    return found["system"], found["input"]


def _format_of(path: str, format: str | None) -> tuple[str, bool]:
    """Return (format, gzip-compressed) for `path`."""
    name = os.path.basename(path).lower()
    gz = name.endswith(".gz")
    if gz:
        name = name[:-3]
    if format is not None:
        fmt = _ALIASES.get(str(format).lower().lstrip("."))
        if fmt is None:
            raise ValueError(f"format={format!r} is not supported; supported formats are "
                             f"{list(SUPPORTED_FORMATS)}")
    else:
        fmt = _EXTENSIONS.get(os.path.splitext(name)[1])
        if fmt is None:
            raise ValueError(
                f"cannot tell the format of {path!r} from its extension; supported: "
                f"{', '.join(_EXTENSIONS)} (and .gz for {', '.join(_GZIP_OK)}), or "
                f"pass format= one of {list(SUPPORTED_FORMATS)}")
    if gz and fmt not in _GZIP_OK:
        raise ValueError(f"{path!r}: gzip compression is supported only for "
                         f"{', '.join(_GZIP_OK)}, not {fmt}")
    return fmt, gz


def _from_netcdf(ds: xr.Dataset, path: str, *, system: str = "system",
                 input: str = "input", metric: str | None = None,
                 value: str | None = None, dims: Sequence[str] = (),
                 human: Sequence[str] | str | None = None) -> xr.Dataset:
    if metric is not None or value is not None:
        raise ValueError(f"{path!r}: metric= and value= describe long tables and do "
                         "not apply to netCDF files")
    rename = {old: new for old, new in zip((system, input), _DIMS)
              if old != new and old in ds.dims}
    ds = ds.rename(rename)
    for arg, old, dim in (("system", system, "system"), ("input", input, "input")):
        if dim not in ds.dims:
            raise ValueError(f"{path!r}: the netCDF dataset has no {dim!r} dimension "
                             f"({arg}={old!r}); its dims are {list(ds.dims)}")
    for d in _names(dims, "dims"):
        if d not in ds.dims:
            raise ValueError(f"{path!r}: dims entry {d!r} is not a dimension of the "
                             f"dataset; its dims are {list(ds.dims)}")
    if not ds.data_vars:
        raise ValueError(f"{path!r}: the netCDF dataset has no data variables")
    for name, var in ds.data_vars.items():
        values = _score_array(var.values, var.dtype, f"variable {name!r}")
        ds[name] = var.copy(data=values)
    return _set_roles(ds, human)


def read(path: str | os.PathLike[str], *, format: str | None = None,
         **kwargs: Any) -> xr.Dataset:
    """Read a score table or netCDF file into a ``(system, input)`` Dataset.

    Parameters
    ----------
    path : str or path-like
        File to read.  The format comes from the extension: ``.csv``,
        ``.tsv``/``.tab``, ``.jsonl``/``.ndjson`` (JSON Lines),
        ``.parquet``/``.pq``, ``.nc``/``.netcdf``; the text formats may be
        gzip-compressed (``.csv.gz``, ``.tsv.gz``, ``.jsonl.gz``).
    format : {"csv", "tsv", "jsonl", "parquet", "netcdf"}, optional
        Override the format implied by the extension.
    **kwargs
        Passed on to :func:`from_dataframe` (``system``, ``input``,
        ``metric``, ``value``, ``dims``, ``human``).  For table formats a
        missing or None ``system``/``input`` is guessed from the columns
        (:func:`guess_label_columns`: ``system``, ``sys``, ``model`` ...;
        ``input``, ``doc``, ``doc_id``, ``segment``, ``item`` ...).  For netCDF files
        ``system``/``input`` rename those dims, ``dims`` must name existing
        dims, ``human`` sets roles, and ``metric``/``value`` are errors.

    Returns
    -------
    xarray.Dataset
        As :func:`from_dataframe`; netCDF files keep their own label order.

    Raises
    ------
    FileNotFoundError
        If `path` does not exist.
    ValueError
        If the format is unknown, the file is empty, or the contents fail
        validation.
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
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or path-like, got {type(path).__name__}")
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no such file: {path!r}")
    fmt, _ = _format_of(path, format)
    if os.path.getsize(path) == 0:
        raise ValueError(f"file is empty: {path!r}")

    if fmt == "netcdf":
        kwargs = {k: v for k, v in kwargs.items() if not (k in _DIMS and v is None)}
        return _from_netcdf(xr.load_dataset(path), path, **kwargs)
    if fmt == "parquet" and importlib.util.find_spec("pyarrow") is None:
        raise ImportError("reading Parquet needs pyarrow: install pyarrow to read "
                          f"Parquet files such as {path!r}")
    try:
        if fmt == "csv":
            df = pd.read_csv(path)
        elif fmt == "tsv":
            df = pd.read_csv(path, sep="\t")
        elif fmt == "jsonl":
            # dtype=False keeps string labels such as "001" as strings
            df = pd.read_json(path, lines=True, dtype=False, precise_float=True)
        else:
            df = pd.read_parquet(path, engine="pyarrow")
    except pd.errors.EmptyDataError:
        raise ValueError(f"file is empty: {path!r}") from None
    if len(df) == 0:
        raise ValueError(f"no rows in {path!r}")
    if kwargs.get("system") is None or kwargs.get("input") is None:
        kwargs["system"], kwargs["input"] = guess_label_columns(
            df.columns, system=kwargs.get("system"), input=kwargs.get("input"))
    return from_dataframe(df, **kwargs)
