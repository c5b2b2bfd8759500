"""Correlation matrices between the labels of any dim (label x label').

Two forms:

* **any dim** -- ``matrix(da, over="batch_size", along=("dataset", "strategy"))``:
  each label of ``over`` is a vector of observations over the ``along`` dims, and
  every pair of labels is correlated, as ``DataFrame.corr`` does with the columns
  of the wide table whose rows are the ``along`` combinations and whose columns
  are the labels of ``over``;
* **scores at a level** -- ``matrix(ds, level="system")``: the score x score
  matrix of system-, input- or global-level correlations of a score Dataset
  (dims ``system`` and ``input``), by the rules of :func:`xcorrstat.correlate`.

Dims that are neither compared nor observed are batch dims: the result has one
matrix per batch label.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any

import numpy as np
import xarray as xr

from .._docs import fill_doc
from .._types import Level, Method, Variant
from .._capabilities import check, check_refinements
from .._kernels import corr, level_correlation
from .._labelled import (
    as_float,
    check_dim,
    check_dims,
    check_labels,
    check_new_dim,
    label_coords,
    pair_dim,
    pick_variable,
    symmetric_pairs,
)
from .._options import OPTIONS
from .._schema import INPUT, METRIC, SYSTEM, as_dataset
from .._selection import select_scores, stack_scores
from .._validation import check_min_pairs
from .._warn import one_call

__all__ = ["matrix"]


def _generic_kernel(values, *, n_along, method, variant, min_pairs):
    x = as_float(values, "data")
    x = x.reshape(x.shape[: x.ndim - n_along] + (-1,))

    def stat(a, b):
        return corr(a, b, method=method, variant=variant, min_pairs=min_pairs)

    return symmetric_pairs(x, stat, core_ndim=1)


def _level_kernel(values, **kw):
    x = as_float(values, "scores")

    def stat(a, b):
        return level_correlation(a, b, **kw)

    return symmetric_pairs(x, stat, core_ndim=2)


def _apply(da: xr.DataArray, over: Hashable, core: Sequence[Hashable], func: Callable[..., Any],
           kwargs: dict[str, Any]) -> xr.DataArray:
    """Run ``func`` over core dims ``(over, *core)`` -> ``(over, other_over)``; returns r with coord n."""
    other = pair_dim(over)
    if da.chunks is not None:
        da = da.chunk({d: -1 for d in (over, *core)})
    r, n = xr.apply_ufunc(
        func,
        da,
        input_core_dims=[[over, *core]],
        output_core_dims=[[over, other], [over, other]],
        dask="parallelized",
        output_dtypes=[np.float64, np.int64],
        dask_gufunc_kwargs={"output_sizes": {other: da.sizes[over]}},
        kwargs=kwargs,
    )
    drop = [c for c in r.coords if set(r[c].dims) & {over, other} and c not in (over,)]
    r = r.drop_vars(drop).assign_coords(label_coords(da, over))
    n = n.drop_vars([c for c in drop if c in n.coords]).assign_coords(label_coords(da, over))
    return r.assign_coords(n=n)


def _matrix_iv(
    data: xr.Dataset | xr.DataArray, var: Hashable | None, over: Hashable | None,
    along: Hashable | Sequence[Hashable] | None, level: Level | None, metrics: Sequence[Hashable] | None,
    method: Method, variant: Variant, complete_inputs: bool, min_pairs: int | None,
) -> tuple[xr.DataArray, Hashable, tuple[Hashable, ...], Callable[..., Any], dict[str, Any], dict[str, Any]]:
    """``(data array, compared dim, observed dims, kernel, its options, attrs)`` of a :func:`matrix` call."""
    check("agreement.matrix", level=level, method=method, variant=variant)
    check_refinements("agreement.matrix", level=level, method=method, variant=variant, complete_inputs=complete_inputs)
    min_pairs = check_min_pairs(OPTIONS["min_pairs"] if min_pairs is None else min_pairs)
    attrs: dict[str, Any] = {"long_name": "correlation", "method": method,
                             "variant": variant if method == "kendall" else "", "min_pairs": min_pairs,
                             "missing": "pairwise deletion"}
    if level is None:
        if metrics is not None:
            raise ValueError("metrics: only used with level=...; pick the variable with var=...")
        da = pick_variable(data, var)
        over = check_dim(da, over, "over")
        check_labels(da, over, "over")
        check_new_dim(da, pair_dim(over), "over")
        core = check_dims(da, along, "along", taken={over: "over"}) or tuple(d for d in da.dims if d != over)
        if not core:
            raise ValueError(f"along: the data has no dim besides over={over!r} to correlate along")
        attrs.update(variable=str(da.name) if da.name is not None else "", over=str(over),
                     along=[str(d) for d in core], n_meaning="valid pairs")
        return da, over, core, _generic_kernel, dict(n_along=len(core), method=method, variant=variant,
                                                     min_pairs=min_pairs), attrs
    if over not in (None, METRIC):
        raise ValueError(f"over: with level=... the compared labels are the scores (dim {METRIC!r}), got {over!r}")
    if along is not None or var is not None:
        raise ValueError("along and var: not used with level=...; the level fixes the observations "
                         "(system and input) and metrics=... picks the variables")
    ds = as_dataset(data)
    default = [k for k, v in ds.data_vars.items()
               if v.dtype.kind in "biuf" and SYSTEM in v.dims and INPUT in v.dims]
    names = select_scores(ds, metrics, default, "metrics")
    x = stack_scores(ds, names, METRIC)
    check_new_dim(x, pair_dim(METRIC), "metrics")
    attrs.update(level=level, over=METRIC, along=[SYSTEM, INPUT], complete_inputs=int(bool(complete_inputs)),
                 n_meaning="systems (system level), defined inputs (input level), cells (global level), "
                          "defined systems (within-system level)")
    return x, METRIC, (SYSTEM, INPUT), _level_kernel, dict(level=level, method=method, variant=variant,
                                                         min_pairs=min_pairs,
                                                         complete_inputs=bool(complete_inputs)), attrs


@one_call
@fill_doc
def matrix(
    data: xr.Dataset | xr.DataArray,
    *,
    var: Hashable | None = None,
    over: Hashable | None = None,
    along: Hashable | Sequence[Hashable] | None = None,
    level: Level | None = None,
    metrics: Sequence[Hashable] | None = None,
    method: Method = "pearson",
    variant: Variant = "b",
    complete_inputs: bool = False,
    min_pairs: int | None = None,
) -> xr.DataArray:
    """Correlations between every pair of labels of a dim: a (label, label') matrix.

    Parameters
    ----------
    data : Dataset or DataArray
        The values to correlate (any dims), or, with ``level``, a score Dataset with
        ``system`` and ``input`` dims (see :mod:`xcorrstat._schema`).
    var : str, optional
        The variable of a Dataset to use (not needed for a DataArray or a Dataset
        with one variable). Not used with ``level``.
    over : str
        The dim whose labels are compared (for example the values of a
        hyperparameter). The result has this dim and its copy ``f"other_{over}"``.
        With ``level`` it is ``"metric"`` (the scores) and may be omitted.
    along : str or list of str, optional
        The dims whose combinations are the paired observations; default every dim
        except ``over``. Dims in neither ``over`` nor ``along`` are batch dims: one
        matrix per batch label. Not used with ``level``.
    level : {"system", "input", "global", "within_system"}, optional
        Compare the scores of a score Dataset at this level (as
        :func:`xcorrstat.correlate` correlates a metric with a target).
    metrics : list of str, optional
        With ``level``: the scores to compare; default every numeric variable with
        ``system`` and ``input`` dims, human judgments included.
    %(method)s
    %(variant)s
    complete_inputs : bool, default False
        With ``level="system"``: average each system over only the inputs present
        for every system.
    %(min_pairs)s

    Returns
    -------
    DataArray
        Named ``correlation`` with dims ``(over, other_over)`` plus any batch dims,
        symmetric, with coordinate ``n`` (the valid pairs of each cell; with
        ``level``: the units used, as in :func:`xcorrstat.correlate`) and attrs
        recording how it was made.

    Notes
    -----
    Missing values (NaN) are deleted pairwise: a pair of labels is correlated over
    the observations where both are present, so a gap in one label removes
    observations from its own pairs only. A cell is NaN when fewer than
    ``min_pairs`` pairs remain or when either label is constant over them. The
    diagonal is exactly 1 where a label's own vector is defined (at least
    ``min_pairs`` values, not constant), NaN otherwise.

    This is ``pandas.DataFrame.corr(method=..., min_periods=k)`` on the wide table
    for ``min_pairs=k`` (any ``k >= 2``); pandas' default ``min_periods=1`` equals
    ``min_pairs=2``, since one pair gives no correlation under either. One
    difference: pandas' Kendall puts 1.0 on the diagonal of a constant column,
    where this gives NaN (a constant vector has no correlation, even with itself).
    Spearman ranks each pair's common observations afresh, as pandas does.

    Examples
    --------
    >>> import xcorrstat.agreement as agr
    >>> bench = agr.synthetic_benchmark(rng=0)
    >>> r = agr.matrix(bench, var="accuracy", over="batch_size", along=("dataset", "strategy"))
    >>> r.dims, float(r.isel(batch_size=0, other_batch_size=0))
    (('batch_size', 'other_batch_size'), 1.0)
    """
    da, over, core, kernel, kwargs, attrs = _matrix_iv(data, var, over, along, level, metrics, method, variant,
                                                       complete_inputs, min_pairs)
    out = _apply(da, over, core, kernel, kwargs)
    out.name = "correlation"
    out.attrs = attrs
    out.coords["n"].attrs["long_name"] = "number of units the correlation used"
    return out
