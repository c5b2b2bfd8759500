"""xarray adapter for level correlations: named dims in, labelled results out.

The numerical work is :func:`xcorrstat._kernels.level_correlation`, applied with
:func:`xarray.apply_ufunc` over the core dims ``(system, input)``. Dask-backed data
stays lazy: chunks along ``metric`` (or any batch dim) become parallel tasks,
while ``system`` and ``input`` are always kept whole.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import NamedTuple, cast

import numpy as np
import xarray as xr

from .._docs import fill_doc
from .._kernels.custom import is_own, own_name
from .._capabilities import LEVELS, METHODS, check, check_refinements
from .._types import Average, Levels, Method, Statistic, Variant
from .._kernels import level_correlation
from .._kernels.levels import AVERAGES
from .._options import OPTIONS
from .._notes import add_notes
from .._schema import INPUT, SYSTEM, check_finite, scores_notes
from .._selection import split_scores
from .._validation import check_choice, check_epsilon, check_min_pairs
from .._warn import one_call

__all__ = ["METHOD_DIM", "correlate", "level_statistic", "target_attr"]

# the dim a list of methods adds ("method" would clash with DataArray.sel(method=...))
METHOD_DIM = "coefficient"


def _choices(value, allowed: Sequence[str], argument: str) -> tuple[list[str], bool]:
    """``value`` (one of ``allowed`` or a list of them) as a list, and whether a list was given."""
    values = [value] if isinstance(value, str) else list(value) if isinstance(value, Sequence) else None
    if not values:
        raise ValueError(f"{argument} must be one of {tuple(allowed)} or a list of them, got {value!r}")
    for v in values:
        check_choice(v, allowed, argument)
    return values, not isinstance(value, str)


def target_attr(target: Hashable | Sequence[Hashable]) -> str | list[str]:
    """The ``target`` attr of a result: the name, or the list of names as strings."""
    if isinstance(target, str):
        return target
    return list(map(str, cast(Sequence[Hashable], target)))


def _kernel(x, z, **kwargs):
    check_finite(x, "metric scores")
    check_finite(z, "target scores")
    return level_correlation(x, z, **kwargs)


def level_statistic(x: xr.DataArray, z: xr.DataArray, **kwargs) -> tuple[xr.DataArray, xr.DataArray]:
    """Level correlation and n of X (metric, system, input, ...) against Z, lazily if Dask-backed."""
    if x.chunks is not None or z.chunks is not None:
        # core dims must be whole chunks; batch dims keep the user's chunking
        x = x.chunk({SYSTEM: -1, INPUT: -1})
        z = z.chunk({SYSTEM: -1, INPUT: -1})
    return xr.apply_ufunc(
        _kernel,
        x,
        z,
        input_core_dims=[[SYSTEM, INPUT], [SYSTEM, INPUT]],
        output_core_dims=[[], []],
        dask="parallelized",
        output_dtypes=[np.float64, np.int64],
        kwargs=kwargs,
    )


def _stack(parts: list[xr.Dataset], dim: str, labels: list[str]) -> xr.Dataset:
    # statistic and n get the new dim; scalar coords (e.g. a selected batch label) stay scalar
    return xr.concat(parts, dim=dim, data_vars="all", coords="minimal", compat="override").assign_coords(
        {dim: labels}
    )


class _CorrelateOptions(NamedTuple):
    levels: list[str]
    level_dim: bool  # a list of levels was given: the result has a `level` dim
    methods: list[str]
    method_dim: bool  # a list of methods was given: the result has a `coefficient` dim
    epsilon: float
    min_pairs: int


def _correlate_iv(level, method, variant, skipna, complete_inputs, min_pairs, epsilon, average) -> _CorrelateOptions:
    """Every option of :func:`correlate`, checked once and normalised."""
    levels, level_dim = _choices(level, LEVELS, "level")
    methods, method_dim = ([method], False) if is_own(method) else _choices(method, METHODS, "method")
    for lev in levels:
        for meth in methods:
            check("correlate", level=lev, method=meth, variant=variant)
    check_refinements("correlate", level=levels, method=methods, variant=variant, average=average,
                      complete_inputs=complete_inputs)
    check_choice(average, AVERAGES, "average")
    epsilon = check_epsilon(epsilon)
    if epsilon and methods != ["kendall"]:
        raise ValueError(f"epsilon applies to method='kendall' only, got method={method!r}")
    if not isinstance(skipna, (bool, np.bool_)):
        raise TypeError(f"skipna must be True or False, got {skipna!r}")
    min_pairs = check_min_pairs(OPTIONS["min_pairs"] if min_pairs is None else min_pairs)
    return _CorrelateOptions(levels, level_dim, methods, method_dim, epsilon, min_pairs)


@one_call
@fill_doc
def correlate(
    data: xr.Dataset | xr.DataArray,
    *,
    target: Hashable | Sequence[Hashable],
    level: Levels = "system",
    method: Statistic | Sequence[Method] = "pearson",
    variant: Variant = "b",
    metrics: Sequence[Hashable] | None = None,
    skipna: bool = True,
    complete_inputs: bool = False,
    min_pairs: int | None = None,
    epsilon: float = 0.0,
    average: Average = "macro",
) -> xr.DataArray:
    """Correlate every metric with a human target at a level, in one call.

    Parameters
    ----------
    %(data)s
    %(targets)s
    %(level)s
        A list of levels adds a ``level`` dim.
    %(method)s
        A list of them adds a ``coefficient`` dim (``r.sel(coefficient="kendall")``).
    %(variant)s
    %(metrics)s
    %(skipna)s
    %(complete_inputs)s
    %(min_pairs)s
    epsilon : float, default 0
        Kendall only: a pair whose metric scores differ by at most epsilon is a metric
        tie (target ties need exact equality); see :func:`xcorrstat.calibrate_ties`.
    %(average)s
    Returns
    -------
    DataArray
        Named ``correlation`` with dim ``metric`` (plus ``target``/``level``/``coefficient``
        and any extra batch dims), a coordinate ``n`` with the systems (system level),
        defined inputs (input level) or cells (global level) used, and attrs recording
        how it was made. Undefined correlations are NaN, never 0.

    Examples
    --------
    >>> import xcorrstat
    >>> ds = xcorrstat.datasets.summeval()
    >>> r = xcorrstat.correlate(ds, target="expert_relevance", level="system", method="kendall")
    >>> round(float(r.sel(metric="qa_eval_f1")), 2)
    0.77
    """
    opts = _correlate_iv(level, method, variant, skipna, complete_inputs, min_pairs, epsilon, average)
    x, z, _ = split_scores(data, target=target, metrics=metrics, level=level)
    rows = []
    for lev in opts.levels:
        cols = []
        for meth in opts.methods:
            r, n = level_statistic(
                x, z, level=lev, method=meth, variant=variant, min_pairs=int(opts.min_pairs),
                complete_inputs=bool(complete_inputs), skipna=bool(skipna), epsilon=float(opts.epsilon),
                average=average,
            )
            cols.append(xr.Dataset({"correlation": r, "n": n}))
        rows.append(_stack(cols, METHOD_DIM, opts.methods) if opts.method_dim else cols[0])
    both = _stack(rows, "level", opts.levels) if opts.level_dim else rows[0]
    out = both["correlation"].assign_coords(n=both["n"])
    out.name = "correlation"
    out.attrs = _correlate_attrs(opts, target=target, level=level, method=method, variant=variant, skipna=skipna,
                                 complete_inputs=complete_inputs, average=average)
    out.coords["n"].attrs["long_name"] = "number of units the correlation used"
    add_notes(out.attrs, *scores_notes(data, target, metrics))
    return out


def _correlate_attrs(opts: _CorrelateOptions, *, target, level, method, variant, skipna, complete_inputs,
                     average) -> dict:
    """The attrs of a :func:`correlate` result: how it was made."""
    return {
        "long_name": "correlation with human judgments",
        "target": target_attr(target),
        "level": level if isinstance(level, str) else list(opts.levels),
        "method": own_name(method) if isinstance(method, str) or is_own(method) else list(opts.methods),
        "variant": variant if "kendall" in opts.methods else "",
        "skipna": int(bool(skipna)),
        "complete_inputs": int(bool(complete_inputs)),
        "min_pairs": int(opts.min_pairs),
        "epsilon": float(opts.epsilon),
        "average": average,
        "n_meaning": "systems (system level), defined inputs (input level), defined systems "
                     "(within-system level), cells (global level)",
    }
