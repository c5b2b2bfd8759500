"""xarray adapter for level correlations: named dims in, labelled results out.

The numerical work is :func:`xcorrstat.kernels.level_correlation`, applied with
:func:`xarray.apply_ufunc` over the core dims ``(system, input)``. Dask-backed data
stays lazy: chunks along ``metric`` (or any batch dim) become parallel tasks,
while ``system`` and ``input`` are always kept whole.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Literal

import numpy as np
import xarray as xr

from .kernels import METHODS, level_correlation
from .kernels.correlation import KENDALL_VARIANTS
from .kernels.levels import AVERAGES, CORRELATE_LEVELS
from .options import OPTIONS
from .pairwise import pdp_statistic
from .schema import INPUT, SYSTEM, TARGET, check_finite, split_scores
from .validation import check_choice, check_epsilon, check_min_pairs

__all__ = ["correlate", "METHOD_DIM"]

# the dim a list of methods adds ("method" would clash with DataArray.sel(method=...))
METHOD_DIM = "coefficient"

Level = Literal["system", "input", "global", "within_system"]
Method = Literal["pearson", "spearman", "kendall"]


def _choices(value, allowed: Sequence[str], argument: str, dim: str) -> tuple[list[str], bool]:
    values = [value] if isinstance(value, str) else list(value) if isinstance(value, Sequence) else None
    if not values:
        raise ValueError(f"{argument} must be one of {tuple(allowed)} or a list of them, got {value!r}")
    for v in values:
        if v not in allowed:
            raise ValueError(f"{argument} must be one of {tuple(allowed)}, got {v!r}")
    return values, not isinstance(value, str)


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


def pdp_level_statistic(x: xr.DataArray, z: xr.DataArray, *, level: str, min_pairs: int,
                        skipna: bool) -> tuple[xr.DataArray, xr.DataArray]:
    """Pairwise difference Pearson and its number of valid pairs, of X (metric, ...) against one target Z."""
    x, z = xr.broadcast(x, z)
    batch = [d for d in x.dims if d not in (SYSTEM, INPUT)]
    x, z = x.transpose(*batch, SYSTEM, INPUT), z.transpose(*batch, SYSTEM, INPUT)
    check_finite(x.values, "metric scores")
    check_finite(z.values, "target scores")
    r, n = pdp_statistic(x, z, level=level)
    r = r.where(n >= min_pairs)
    if not skipna:  # any missing cell makes the correlation undefined
        r = r.where(~(x.isnull() | z.isnull()).any([SYSTEM, INPUT]))
    return r, n


def _pdp_result(x: xr.DataArray, z: xr.DataArray, *, level: str, min_pairs: int, skipna: bool) -> xr.Dataset:
    """``correlation`` and ``n`` of ``correlate(pdp=True)`` at one level, with a ``target`` dim for several."""
    if TARGET not in z.dims:
        r, n = pdp_level_statistic(x, z, level=level, min_pairs=min_pairs, skipna=skipna)
        return xr.Dataset({"correlation": r, "n": n})
    labels = list(z[TARGET].values)
    parts = [_pdp_result(x, z.sel({TARGET: t}, drop=True), level=level, min_pairs=min_pairs, skipna=skipna)
             for t in labels]
    return _stack(parts, TARGET, labels)


def _stack(parts: list[xr.Dataset], dim: str, labels: list[str]) -> xr.Dataset:
    # statistic and n get the new dim; scalar coords (e.g. a selected batch label) stay scalar
    return xr.concat(parts, dim=dim, data_vars="all", coords="minimal", compat="override").assign_coords(
        {dim: labels}
    )


def correlate(
    data: xr.Dataset | xr.DataArray,
    *,
    target: Hashable | Sequence[Hashable],
    level: Level | Sequence[Level] = "system",
    method: Method | Sequence[Method] = "pearson",
    variant: Literal["b", "c", "a", "23", "acc23"] = "b",
    metrics: Sequence[Hashable] | None = None,
    skipna: bool = True,
    complete_inputs: bool = False,
    min_pairs: int | None = None,
    epsilon: float = 0.0,
    average: Literal["macro", "weighted"] = "macro",
    pdp: bool = False,
) -> xr.DataArray:
    """Correlate every metric with a human target at a level, in one call.

    Parameters
    ----------
    data : Dataset or DataArray
        Scores with ``system`` and ``input`` dims (see :mod:`xcorrstat.schema`).
    target : str or list of str
        Human score(s) to correlate against; a list adds a ``target`` dim.
    level : {"system", "input", "global", "within_system"} or list of them
        System level correlates per-system means; input level averages the per-input
        correlations across systems; global level correlates all cells; within-system
        level averages each system's correlation across its inputs. A list adds a
        ``level`` dim.
    method : {"pearson", "spearman", "kendall"} or list of them
        A list adds a ``coefficient`` dim (``r.sel(coefficient="kendall")``).
    variant : {"b", "c", "a", "23", "acc23"}
        Kendall's variant: tau-b (ties in both variables), tau-c (Stuart's), tau-a,
        tau_eq (``"23"``) or acc_eq (``"acc23"``, pairwise accuracy with ties; Deutsch et
        al., 2023). tau_eq and acc_eq stay defined for a constant metric.
    metrics : list of str, optional
        Scores to correlate; default every score that is not a target and not marked
        ``attrs["role"] == "human"``.
    skipna : bool, default True
        Drop missing cells pairwise. If False, any missing cell gives NaN.
    complete_inputs : bool, default False
        System level: average each system over only the inputs present for all systems.
    min_pairs : int, optional
        Fewest valid pairs for a defined correlation (default ``set_options(min_pairs=3)``).
    epsilon : float, default 0
        Kendall only: a pair whose metric scores differ by at most epsilon is a metric
        tie (target ties need exact equality); see :func:`xcorrstat.calibrate_ties`.
    average : {"macro", "weighted"}, default "macro"
        Input and within-system levels: each defined group counts once, or is weighted
        by its number of valid items.
    pdp : bool, default False
        Pearson only: the pairwise difference Pearson correlation of each level instead
        (mt-metrics-eval's ``Pearson(pdp=True)``; :func:`xcorrstat.pairwise_difference_pearson`):
        Pearson's r, uncentred, of the metric's and the target's differences over every
        valid pair of the level's groups (the systems of each input, the inputs of each
        system, all cells, or the per-system means), pooled. ``n`` is then the number of
        valid pairs, ``min_pairs`` applies to it, and it is computed eagerly.

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
    >>> pdp = xcorrstat.correlate(ds, target="expert_relevance", level="input", pdp=True)
    >>> pdp.attrs["pdp"], int(pdp["n"].sel(metric="qa_eval_f1"))
    (1, 12000)
    """
    levels, level_dim = _choices(level, CORRELATE_LEVELS, "level", "level")
    methods, method_dim = _choices(method, METHODS, "method", METHOD_DIM)
    check_choice(variant, KENDALL_VARIANTS, "variant", " (Kendall's variant)")
    check_choice(average, AVERAGES, "average")
    epsilon = check_epsilon(epsilon)
    if epsilon and methods != ["kendall"]:
        raise ValueError(f"epsilon applies to method='kendall' only, got method={method!r}")
    if not isinstance(skipna, (bool, np.bool_)):
        raise TypeError(f"skipna must be True or False, got {skipna!r}")
    if not isinstance(pdp, (bool, np.bool_)):
        raise TypeError(f"pdp must be True or False, got {pdp!r}")
    if pdp and methods != ["pearson"]:
        raise ValueError(f"pdp=True is the pairwise difference Pearson correlation: it needs method='pearson', "
                         f"got method={method!r}")
    if pdp and (complete_inputs or average != "macro"):
        raise ValueError("pdp=True pools the pairs of every group: complete_inputs=True and average='weighted' "
                         "do not apply to it")
    min_pairs = check_min_pairs(OPTIONS["min_pairs"] if min_pairs is None else min_pairs)
    x, z, _ = split_scores(data, target=target, metrics=metrics, level=level)

    rows = []
    for lev in levels:
        cols = []
        for meth in methods:
            if pdp:
                cols.append(_pdp_result(x, z, level=lev, min_pairs=int(min_pairs), skipna=bool(skipna)))
                continue
            r, n = level_statistic(
                x, z, level=lev, method=meth, variant=variant, min_pairs=int(min_pairs),
                complete_inputs=bool(complete_inputs), skipna=bool(skipna), epsilon=float(epsilon),
                average=average,
            )
            cols.append(xr.Dataset({"correlation": r, "n": n}))
        rows.append(_stack(cols, METHOD_DIM, methods) if method_dim else cols[0])
    both = _stack(rows, "level", levels) if level_dim else rows[0]
    out = both["correlation"].assign_coords(n=both["n"])
    out.name = "correlation"
    out.attrs = {
        "long_name": "correlation with human judgments",
        "target": target if isinstance(target, str) else list(map(str, target)),
        "level": level if isinstance(level, str) else list(levels),
        "method": method if isinstance(method, str) else list(methods),
        "variant": variant if "kendall" in methods else "",
        "skipna": int(bool(skipna)),
        "complete_inputs": int(bool(complete_inputs)),
        "min_pairs": int(min_pairs),
        "epsilon": float(epsilon),
        "average": average,
        "pdp": int(bool(pdp)),
        "n_meaning": "valid pairs whose differences were correlated" if pdp else
                     "systems (system level), defined inputs (input level), defined systems "
                     "(within-system level), cells (global level)",
    }
    out.coords["n"].attrs["long_name"] = "number of units the correlation used"
    return out
