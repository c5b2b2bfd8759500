"""Tidy tables of results: one row per metric (or per metric pair), plain columns.

Every result of xcorrstat is an xarray object; :func:`tidy` turns one into the
long :class:`pandas.DataFrame` a paper table or a plotting library wants, with the
settings that vary between results (target, level, method) as columns, so tables
of several calls concatenate cleanly.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import pandas as pd
import xarray as xr
from ._warn import one_call

__all__ = ["tidy"]

# the dims of resampling distributions (dropped unless asked for)
_DRAW_DIMS = ("resample", "draw", "trial")
# columns first, in this order, when present
_FIRST = ("target", "level", "method", "variant", "coefficient", "metric", "other_metric", "x", "y")
_VALUES = ("correlation", "mean", "other_correlation", "delta", "statistic", "low", "high", "n", "pvalue",
           "pvalue_corrected", "significant", "cluster", "rank")


def _attr_columns(result: xr.Dataset, names: Sequence[str], taken: set) -> dict[str, object]:
    out: dict[str, object] = {}
    for name in names:
        value = result.attrs.get(name)
        if name in taken or value is None or value == "" or not isinstance(value, (str, int, float)):
            continue
        out[name] = value
    return out


def _tidy_iv(result) -> xr.Dataset:
    """The result as a Dataset (a DataArray becomes its one variable, keeping its attrs)."""
    if isinstance(result, xr.DataArray):
        name = result.name if result.name is not None else "value"
        attrs_of = dict(result.attrs)
        result = result.to_dataset(name=name)
        result.attrs = attrs_of
    if not isinstance(result, xr.Dataset):
        raise TypeError(f"result must be an xarray Dataset or DataArray, got {type(result).__name__}")
    return result


@one_call
def tidy(
    result: xr.Dataset | xr.DataArray,
    *,
    attrs: Sequence[str] = ("target", "level", "method", "variant", "x", "y"),
    distribution: bool = False,
) -> pd.DataFrame:
    """A long DataFrame of a result: one row per metric (or metric pair), plain columns.

    Parameters
    ----------
    result : Dataset or DataArray
        Any xcorrstat result: :func:`~xcorrstat.correlate`, :func:`~xcorrstat.bootstrap`,
        :func:`~xcorrstat.fisher`, :func:`~xcorrstat.permutation_test`,
        :func:`~xcorrstat.compare`, :func:`~xcorrstat.williams_test`, ...
    attrs : sequence of str
        Attributes to add as constant columns when the result has no dim or
        variable of that name (so tables of several calls concatenate cleanly).
        Only string or number attributes are added; empty ones are skipped.
    distribution : bool, default False
        Keep variables with a resampling dim (``resample``), one row per draw.
        By default they are dropped: a table holds the summary.

    Returns
    -------
    DataFrame
        Columns: the labels (``target``, ``level``, ``metric``, ``other_metric`` ...)
        first, then the values (``correlation``, ``low``, ``high``, ``n``, ``pvalue``,
        ``pvalue_corrected``, ``significant``, ``cluster`` ...), then any other
        variable. For :func:`~xcorrstat.compare` there is one row per ordered pair,
        (a metric against itself is left out), with the correlation of each metric
        (``correlation``, ``other_correlation``) and the metric's significance ``cluster``;
        a variable over a dim the pairs lack (the ``task_correlation`` and ``weight`` of
        :func:`~xcorrstat.aggregate_tasks`) is left out: tidy it on its own.

    Examples
    --------
    >>> import xcorrstat
    >>> ds = xcorrstat.datasets.summeval()
    >>> ci = ds.corrstat.fisher(target="expert_relevance", metrics=["qa_eval_f1", "rouge_2_f1"])
    >>> list(xcorrstat.tidy(ci).columns)
    ['target', 'level', 'method', 'metric', 'correlation', 'low', 'high', 'n', 'sample_size']
    """
    ds = _tidy_iv(result)
    if not distribution:
        drop = [v for v in ds.data_vars if any(d in _DRAW_DIMS for d in ds[v].dims)]
        ds = ds.drop_vars(drop)
    if "other_metric" in ds.dims:
        frame = _pair_frame(ds)
    elif ds.dims:
        frame = ds.to_dataframe().reset_index()
    else:
        frame = _scalar_frame(ds)
    labels = [d for d in ds.dims if d in frame.columns]
    # scalar coords of a selection (e.g. level after .sel(level=...)) become columns too
    for name, coord in ds.coords.items():
        if coord.ndim == 0 and name not in frame.columns:
            frame[name] = coord.item()
    frame = frame.assign(**_attr_columns(ds, attrs, set(frame.columns)))
    first: list[Hashable] = [c for c in _FIRST if c in frame.columns]
    first += [c for c in labels if c not in first]
    values = [c for c in _VALUES if c in frame.columns]
    rest = [c for c in frame.columns if c not in first and c not in values]
    return frame[first + values + rest].reset_index(drop=True)


def _scalar_frame(result: xr.Dataset) -> pd.DataFrame:
    row = {name: result[name].item() for name in result.variables}
    return pd.DataFrame([row])


def _pair_frame(result: xr.Dataset) -> pd.DataFrame:
    pair_dims = {d for v in result.data_vars if "other_metric" in result[v].dims for d in result[v].dims}
    # a variable over a dim the pairs lack (aggregate_tasks' task_correlation, weight) has no place in a pair's row
    apart = [v for v in result.data_vars if not set(result[v].dims) <= pair_dims]
    result = result.drop_vars(apart)
    per_metric = [v for v in result.data_vars if "other_metric" not in result[v].dims]
    per_pair = result.drop_vars(per_metric)
    frame = per_pair.to_dataframe().reset_index()
    frame = frame[frame["metric"] != frame["other_metric"]]  # a metric against itself is no comparison
    if "n" in frame.columns and "n" in result.coords and "other_metric" not in result["n"].dims:
        frame = frame.drop(columns="n")
    if per_metric:
        left = result[per_metric].to_dataframe()
        left = left.drop(columns=[c for c in left.columns if c in frame.columns and c != "metric"])
        keys = [d for d in left.index.names]
        frame = frame.merge(left.reset_index(), on=keys, how="left")
        if "correlation" in result:
            other = result["correlation"].rename({"metric": "other_metric"}).rename("other_correlation")
            other_keys: list[Hashable] = ["other_metric" if k == "metric" else k for k in keys]
            odf = other.to_dataframe().reset_index()
            odf = odf[[*other_keys, "other_correlation"]]
            frame = frame.merge(odf, on=other_keys, how="left")
    return frame
