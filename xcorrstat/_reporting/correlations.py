"""A :func:`~xcorrstat.correlate` result as the tables of ``xcorrstat correlate``.

One row per metric and a column per (level, method). A result with extra dims (a
language pair ``lp``, a domain ...) holds one table per label: the text output prints
a block per label under a line naming it, the CSV and JSON outputs gain a column per
extra dim.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable
from typing import IO, Any

import pandas as pd
import xarray as xr

from .._notes import notes_of
from .._display import LABEL_WIDTH, printable
from .._escape import csv_options, distinct_labels
from .tables import label_text

__all__ = ["correlation_json", "correlation_table", "correlation_text", "extra_dims", "flat_columns",
           "write_csv"]

#: The dims of a correlate() result that are not labels of the data.
_RESULT_DIMS = ("level", "coefficient", "metric")
_UNITS = {"system": "systems", "input": "inputs", "global": "cells", "within_system": "systems"}


def extra_dims(result: xr.DataArray) -> list[Hashable]:
    """The dims of a correlate() result besides level, coefficient and metric (e.g. ``["lp"]``).

    Examples
    --------
    >>> import xcorrstat
    >>> r = xcorrstat.correlate(xcorrstat.datasets.summeval(), target="expert_relevance", metrics=["meteor"])
    >>> extra_dims(r)
    []
    """
    return [d for d in result.dims if d not in _RESULT_DIMS]


def _labels(result: xr.DataArray, dim: Hashable) -> list[Any]:
    return list(result[dim].values) if dim in result.coords else list(range(result.sizes[dim]))


def correlation_table(result: xr.DataArray) -> pd.DataFrame:
    """A (metric × (level, method)) frame from a correlate() result with level and method dims.

    With extra dims (``lp`` ...) the rows are (label..., metric): label by label in the
    data's order, the metrics in the result's order within a label.

    Examples
    --------
    >>> import xcorrstat
    >>> r = xcorrstat.correlate(xcorrstat.datasets.summeval(), target="expert_relevance", metrics=["meteor"],
    ...                         level=["system", "input"], method=["pearson", "kendall"])
    >>> list(correlation_table(r).columns)
    [('system', 'pearson'), ('system', 'kendall'), ('input', 'pearson'), ('input', 'kendall')]
    """
    extra = extra_dims(result)
    frame = result.to_series().unstack(["level", "coefficient"])
    levels = list(result["level"].values)
    methods = list(result["coefficient"].values)
    frame = frame.reindex(columns=pd.MultiIndex.from_product([levels, methods], names=["level", "method"]))
    metrics = list(result["metric"].values)
    if not extra:
        return frame.reindex(metrics)
    rows = pd.MultiIndex.from_tuples(
        [(*labels, m) for labels in itertools.product(*(_labels(result, d) for d in extra)) for m in metrics],
        names=[*extra, "metric"])
    return frame.reorder_levels(rows.names).reindex(rows)


def flat_columns(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with its (level, method) columns named ``level_method`` (one CSV header row).

    Examples
    --------
    >>> import pandas as pd
    >>> table = pd.DataFrame([[0.5]], index=["bleu"], columns=pd.MultiIndex.from_tuples([("system", "kendall")]))
    >>> flat = flat_columns(table)
    >>> list(flat.columns), flat.index.name
    (['system_kendall'], 'metric')
    """
    flat = table.copy()
    flat.columns = [f"{lev}_{method}" for lev, method in table.columns]
    if flat.index.nlevels == 1:
        flat.index.name = "metric"
    return flat


def correlation_json(result: xr.DataArray) -> str:
    """The result as JSON records: ``metric``, ``level``, ``coefficient``, ``correlation``, ``n``,
    after a field per extra dim (label by label). ASCII only: names keep every character, escaped.

    Examples
    --------
    >>> import json, xcorrstat
    >>> r = xcorrstat.correlate(xcorrstat.datasets.summeval(), target="expert_relevance", metrics=["meteor"],
    ...                         level=["system"], method=["kendall"])
    >>> json.loads(correlation_json(r))
    [{'metric': 'meteor', 'level': 'system', 'coefficient': 'kendall', 'correlation': 0.5, 'n': 16}]
    """
    extra = extra_dims(result)
    ordered = result.transpose(*extra, *(d for d in result.dims if d not in extra))
    columns = [*extra, "metric", "level", "coefficient", "correlation", "n"]
    long = ordered.to_dataframe().reset_index()[columns]
    # ASCII only: the writer escapes the other controls, DEL (valid in a JSON string) is escaped too
    return long.to_json(orient="records", indent=1).replace("\x7f", "\\u007f") + "\n"


def write_csv(result: xr.DataArray, out: IO[str], *, digits: int) -> None:
    """The table as CSV: a column per extra dim, then ``metric``, then ``level_method`` columns.

    A terminal gets the labels as :func:`~xcorrstat._display.printable` shows them;
    a file or pipe gets them as they are: CSV is data, so a name starting with ``=``, ``+``,
    ``-`` or ``@`` is written unchanged (a spreadsheet should open the file as text).
    """
    flat = flat_columns(correlation_table(result))
    if out.isatty():
        if flat.index.nlevels == 1:
            flat.index = pd.Index([printable(m) for m in flat.index], name="metric")
        else:
            flat.index = pd.MultiIndex.from_tuples([tuple(printable(v) for v in row) for row in flat.index],
                                                   names=flat.index.names)
    flat.to_csv(out, float_format=f"%.{max(digits, 6)}f", **csv_options(flat))


def _n_range(n: xr.DataArray) -> str:
    """"16", or "9 to 10" when the metrics used different numbers of units."""
    low, high = int(n.min()), int(n.max())
    return f"{high}" if low == high else f"{low} to {high}"


def _block(result: xr.DataArray, levels: list[str], digits: int) -> str:
    """The n line and the table of one label (or of a result without extra dims)."""
    used = ", ".join(f"{lev}: n={_n_range(result['n'].sel(level=lev))} {_UNITS[lev]}" for lev in levels)
    table = correlation_table(result)
    table.index = distinct_labels(table.index, LABEL_WIDTH)
    table.index.name = "metric"
    with pd.option_context("display.max_rows", None, "display.max_columns", None, "display.width", 200):
        text = table.to_string(float_format=lambda v: f"{v:.{digits}f}", na_rep="nan")
    return f"{used}\n\n{text}\n"


def correlation_text(result: xr.DataArray, *, heading: str, levels: list[str], digits: int) -> str:
    """``heading``, a line ``note: ...`` per note of the result (:func:`~xcorrstat._notes.notes_of`), then
    the table; with extra dims, a table per label under a line naming it.

    Examples
    --------
    >>> import xcorrstat
    >>> r = xcorrstat.correlate(xcorrstat.datasets.summeval(), target="expert_relevance", metrics=["meteor"],
    ...                         level=["system"], method=["kendall"])
    >>> print(correlation_text(r, heading="Kendall", levels=["system"], digits=2))
    Kendall
    system: n=16 systems
    <BLANKLINE>
    level   system
    method kendall
    metric        
    meteor    0.50
    <BLANKLINE>
    """
    extra = extra_dims(result)
    heading += "".join(f"\nnote: {note}" for note in notes_of(result))
    if not extra:
        return f"{heading}\n{_block(result, levels, digits)}"
    blocks = [f"{heading}\n"]
    for positions in itertools.product(*(range(result.sizes[d]) for d in extra)):
        where = dict(zip(extra, positions))
        labels = {d: _labels(result, d)[k] for d, k in where.items()}
        blocks.append(f"{label_text(labels)}\n{_block(result.isel(where), levels, digits)}")
    return "\n".join(blocks)
