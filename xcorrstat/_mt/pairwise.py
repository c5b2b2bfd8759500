"""Pairwise statistics on labelled data: pairwise accuracy, WMT's DARR Kendall-like tau,
pairwise difference Pearson, and the pairwise differences themselves.

Pairs are formed within each group of a level (the systems of each input, the inputs of
each system, all cells, or the per-system means) and, with ``pool=`` dims, within each
label of those dims too (e.g. system pairs within each language pair), then pooled.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any

import numpy as np
import xarray as xr

from .._docs import fill_doc
from .._types import Level
from .._kernels.mt.pairwise import agreement_counts, difference_sums, kendall_like_counts
from .._kernels.scaling import SAFE_EXPONENT, pow2_normalise, remove_offset
from .._labelled import check_labels, check_new_dim, pair_dim
from .._selection import aligned_scores
from .._validation import check_choice, check_epsilon
from .._resampling.engine import blocks_of_cells
from .ties import MAX_GROUP, TIE_LEVELS, group_shape, level_groups
from .._warn import one_call

__all__ = ["kendall_like", "pairwise_accuracy", "pairwise_difference_pearson", "pairwise_differences"]


def _group_sums(x: xr.DataArray, z: xr.DataArray, batch: list, level: str, func) -> xr.Dataset:
    """``func``'s parts summed over each group's pairs and over the groups, for aligned (*batch, S, I) scores
    (lazy, block by block of the batch dims, for Dask-backed scores)."""
    groups, items = group_shape(level, x.sizes["system"], x.sizes["input"])
    if items > MAX_GROUP:
        raise ValueError(f"level={level!r} compares groups of {items} items; more than {MAX_GROUP} is not "
                         "supported, use level='input' or 'within_system'")
    if items < 2:
        raise ValueError(f"level={level!r} gives groups of {items} item(s); pairs need at least 2")
    if x.chunks is not None or z.chunks is not None:
        parts = blocks_of_cells(_summed_parts, x, z, outputs=[((), k) for k in _part_kinds(func)], level=level,
                                func=func)
        return xr.Dataset({f"part{k}": part for k, part in enumerate(parts)})
    sums = _summed_parts(x.values, z.values, level=level, func=func)
    coords = {d: x[d] for d in batch}
    return xr.Dataset({f"part{k}": (batch, part) for k, part in enumerate(sums)}, coords=coords)


def _part_kinds(func) -> list[np.dtype]:
    """The dtypes of ``func``'s parts."""
    return [np.asarray(p).dtype for p in func(np.zeros((1, 2)), np.zeros((1, 2)))]


def _summed_parts(x: np.ndarray, z: np.ndarray, *, level: str, func) -> tuple[np.ndarray, ...]:
    """(*batch, S, I) scores -> ``func``'s parts summed over each group's pairs, then over the groups.

    Row by row of the batch dims, each row C-ordered: a row's float sums are then added in the same
    order whatever the array or block that holds it (numpy's order depends on the shape and layout).
    """
    x, z = np.broadcast_arrays(x, z)
    lead = x.shape[:-2]
    sums = [np.empty(lead, dtype=k) for k in _part_kinds(func)]
    for row in np.ndindex(*lead):
        gx, gz = level_groups(np.ascontiguousarray(x[row], dtype=np.float64),
                              np.ascontiguousarray(z[row], dtype=np.float64), level)
        for total, part in zip(sums, func(gx, gz)):
            total[row] = part.sum(axis=-1)
    return tuple(sums)


def _scale_free(a: xr.DataArray, level: str) -> xr.DataArray:
    """Scores scaled by a power of two per metric (exact), and rid of a large offset per (system, input)
    matrix at system level (exact, see :func:`~xcorrstat._kernels.scaling.remove_offset`): the pairwise
    difference Pearson is invariant to both, and then no square overflows or underflows and no large
    offset rounds the per-system means. Lazy for Dask-backed scores, with the eager values bit for bit."""
    axes = tuple(i for i, d in enumerate(a.dims) if d not in ("metric", "target"))
    cells = tuple(a.get_axis_num(d) for d in ("system", "input") if d in a.dims)
    if a.chunks is None:
        values = pow2_normalise(a.values.astype(np.float64), axis=axes)
        return a.copy(data=_without_offset(values, cells) if level == "system" else values)
    lazy = _lazy_pow2_normalise(a.data.astype(np.float64), axes)
    if level == "system":
        lazy = lazy.rechunk({axis: -1 for axis in cells}).map_blocks(_without_offset, cells, dtype=np.float64)
    return a.copy(data=lazy)


def _without_offset(values: np.ndarray, cells: tuple[int, ...]) -> np.ndarray:
    """:func:`~xcorrstat._kernels.scaling.remove_offset` over the ``cells`` axes, summed in C order whatever
    the memory layout of ``values`` (an eager array or a block of a Dask array)."""
    return remove_offset(np.ascontiguousarray(values), axis=cells)


def _lazy_pow2_normalise(values: Any, axes: tuple[int, ...]) -> Any:
    """:func:`~xcorrstat._kernels.scaling.pow2_normalise` of a Dask array over ``axes``, bit for bit: the
    exponents come from maxima (exact in any order) and the scaling is elementwise."""
    import dask.array as dsa

    if values.size == 0:
        return values
    finite = dsa.isfinite(values)
    magnitude = dsa.where(finite, abs(values), 0.0).max(axis=axes, keepdims=True)  # as max(where=, initial=0)
    exponent = dsa.frexp(magnitude)[1]
    moderate = abs(exponent).max() <= SAFE_EXPONENT
    return dsa.where(moderate, values, dsa.ldexp(values, -exponent))


def _grouped_scores(data, target, metrics, level, pool) -> tuple[xr.DataArray, xr.DataArray, list, list]:
    """The checks shared by the statistics over pairs of a level's groups: aligned scores X and Z
    ``(*batch, system, input)``, the batch dims and the pooled dims."""
    check_choice(level, tuple(TIE_LEVELS), "level")
    x, z, batch = aligned_scores(data, target=target, metrics=metrics, level=level)
    pooled = [pool] if isinstance(pool, str) else list(pool or [])
    for dim in pooled:
        if dim not in batch or dim == "metric":
            raise ValueError(f"pool={dim!r} must name an extra dim of the data, such as a language pair; "
                             f"the data has dims {tuple(x.dims)}")
    return x, z, batch, pooled


def _pooled_sums(x: xr.DataArray, z: xr.DataArray, batch: list, pooled: list, level: str,
                 func: Callable) -> xr.Dataset:
    """``func``'s parts summed over the pairs of every group of the level, and over the pooled dims."""
    out = _group_sums(x, z, batch, level, func)
    if pooled and out.chunks:  # lazy: each sum over the pooled dims in one block, added as the eager call adds
        out = out.chunk({d: -1 for d in pooled})
    return out.sum(pooled) if pooled else out


def _pdp(sums: xr.Dataset) -> xr.DataArray:
    """PDP from the summed parts of :func:`~xcorrstat._kernels.mt.pairwise.difference_sums`."""
    den = np.sqrt(sums["part1"] * sums["part2"])
    with np.errstate(invalid="ignore", divide="ignore"):
        return (sums["part0"] / den.where(den > 0)).clip(-1.0, 1.0)


def _pairwise_accuracy_iv(data, target, metrics, level, pool) -> tuple[xr.DataArray, xr.DataArray, list, list]:
    """Every option of :func:`pairwise_accuracy`, checked once: aligned X and Z, batch and pooled dims."""
    return _grouped_scores(data, target, metrics, level, pool)


@one_call
@fill_doc
def pairwise_accuracy(
    data: xr.Dataset | xr.DataArray,
    *,
    target: Hashable,
    metrics: Sequence[Hashable] | None = None,
    level: Level = "system",
    pool: str | Sequence[str] | None = None,
) -> xr.Dataset:
    """Share of pairs the metric orders like the target (ties agree only with ties).

    Parameters
    ----------
    %(data)s
    %(target)s
    %(metrics)s
    level : {"system", "input", "within_system", "global"}, default "system"
        Pairs of per-system means (system-ranking accuracy); of the systems within each
        input; of the inputs within each system; of all cells.
    pool : str or list of str, optional
        Extra dims (e.g. ``"lp"``) whose pairs are pooled: pairs are formed within each
        label and the counts summed, as in WMT's accuracy over many language pairs.

    Returns
    -------
    Dataset
        ``accuracy`` (agreeing pairs / valid pairs, NaN without pairs), ``n_agree`` and
        ``n_pairs`` over ``metric`` (and the dims not pooled). A pair is valid when both
        items have the metric's and the target's score: a pair with an unrated system (or,
        at input level, on an input without target scores) is no pair, neither agreement
        nor disagreement, and ``n_pairs`` shows how many pairs were counted. The accuracy
        is one division of the two integer counts.

    Examples
    --------
    >>> import xcorrstat
    >>> ds = xcorrstat.datasets.summeval()
    >>> acc = xcorrstat.pairwise_accuracy(ds, target="expert_relevance", metrics=["qa_eval_f1"])
    >>> int(acc["n_pairs"][0])
    120
    """
    x, z, batch, pooled = _pairwise_accuracy_iv(data, target, metrics, level, pool)
    counts = _pooled_sums(x, z, batch, pooled, level, agreement_counts)
    with np.errstate(invalid="ignore", divide="ignore"):
        acc = counts["part0"] / counts["part1"].where(counts["part1"] > 0)
    out = xr.Dataset({"accuracy": acc, "n_agree": counts["part0"], "n_pairs": counts["part1"]})
    out.attrs = {"statistic": "pairwise accuracy (sign agreement; ties agree only with ties)",
                 "target": str(target), "level": level, "pooled": ", ".join(map(str, pooled))}
    return out


def _kendall_like_iv(data, target, metrics, threshold, level,
                     pool) -> tuple[float, xr.DataArray, xr.DataArray, list, list]:
    """Every option of :func:`kendall_like`, checked once: the threshold, then as :func:`_pairwise_accuracy_iv`."""
    threshold = float(threshold)
    if not np.isfinite(threshold) or threshold < 0:
        raise ValueError(f"threshold must be a finite number >= 0, got {threshold!r}")
    return (threshold, *_grouped_scores(data, target, metrics, level, pool))


@one_call
def kendall_like(
    data: xr.Dataset | xr.DataArray,
    *,
    target: Hashable,
    metrics: Sequence[Hashable] | None = None,
    threshold: float = 25.0,
    level: Level = "input",
    pool: str | Sequence[str] | None = None,
) -> xr.Dataset:
    """WMT's DARR Kendall-like tau: ``(C - D) / (C + D)`` over pairs whose gold scores differ enough.

    Only pairs with ``|gold difference| >= threshold`` count (WMT: 25 points of a 0-100
    direct assessment). Such a pair is concordant when the metric orders it the same way
    strictly and discordant otherwise, metric ties included. The counts are pooled over
    all groups of the level (mt-metrics-eval's ``macro=False``, its default).

    Parameters
    ----------
    data, target, metrics, level, pool
        As in :func:`pairwise_accuracy` (default level: the systems of each input).
    threshold : float, default 25.0
        Smallest gold difference of a pair that counts.

    Returns
    -------
    Dataset
        ``correlation`` (NaN without a counted pair), ``concordant``, ``discordant`` and
        ``n_pairs`` over ``metric``.

    Examples
    --------
    >>> import xcorrstat
    >>> ds = xcorrstat.datasets.summeval()
    >>> tau = xcorrstat.kendall_like(ds, target="expert_relevance", metrics=["qa_eval_f1"], threshold=1.0)
    >>> -1 <= float(tau["correlation"][0]) <= 1
    True
    """
    threshold, x, z, batch, pooled = _kendall_like_iv(data, target, metrics, threshold, level, pool)
    counts = _pooled_sums(x, z, batch, pooled, level, lambda gx, gz: kendall_like_counts(gx, gz, threshold=threshold))
    c, d = counts["part0"], counts["part1"]
    n = c + d
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = (c - d) / n.where(n > 0)
    out = xr.Dataset({"correlation": tau, "concordant": c, "discordant": d, "n_pairs": n})
    out.attrs = {"statistic": "DARR Kendall-like tau (pooled)", "target": str(target), "level": level,
                 "threshold": threshold, "pooled": ", ".join(map(str, pooled))}
    return out


def _pairwise_difference_pearson_iv(data, target, metrics, level,
                                    pool) -> tuple[xr.DataArray, xr.DataArray, list, list]:
    """Every option of :func:`pairwise_difference_pearson`, checked once: as :func:`_pairwise_accuracy_iv`."""
    return _grouped_scores(data, target, metrics, level, pool)


@one_call
def pairwise_difference_pearson(
    data: xr.Dataset | xr.DataArray,
    *,
    target: Hashable,
    metrics: Sequence[Hashable] | None = None,
    level: Level = "input",
    pool: str | Sequence[str] | None = None,
) -> xr.Dataset:
    """Pairwise difference Pearson (PDP): Pearson's r of the metric's and the target's pair differences.

    The differences of every valid pair of every group of the level are pooled into one
    vector each, and correlated without centring (differences are antisymmetric, so their
    mean over both orders is 0): ``r = sum dm dg / sqrt(sum dm^2 sum dg^2)``. On one group it
    equals plain Pearson; mt-metrics-eval's ``Pearson(pdp=True)``.

    Parameters
    ----------
    data, target, metrics, level, pool
        As in :func:`pairwise_accuracy` (default level: the systems of each input).

    Returns
    -------
    Dataset
        ``correlation`` over ``metric`` (NaN when either side's differences are all 0) and
        ``n_pairs``, the valid pairs pooled.

    Examples
    --------
    >>> import xcorrstat
    >>> ds = xcorrstat.datasets.summeval()
    >>> pdp = xcorrstat.pairwise_difference_pearson(ds, target="expert_relevance", metrics=["qa_eval_f1"])
    >>> -1 <= float(pdp["correlation"][0]) <= 1
    True
    """
    x, z, batch, pooled = _pairwise_difference_pearson_iv(data, target, metrics, level, pool)
    sums = _pooled_sums(_scale_free(x, level), _scale_free(z, level), batch, pooled, level, difference_sums)
    out = xr.Dataset({"correlation": _pdp(sums), "n_pairs": sums["part3"]})
    out.attrs = {"statistic": "pairwise difference Pearson (uncentred, pooled over groups)",
                 "target": str(target), "level": level}
    return out


def _check_pairable(da: xr.DataArray, dim: Hashable) -> None:
    """Raise unless the labels along ``dim`` (a dim of ``da``) can be paired: 2 or more, unique, numeric
    scores, and no clash with the second copy's name."""
    if da.sizes[dim] < 2:
        raise ValueError(f"dim={dim!r} has {da.sizes[dim]} label(s); pairwise differences need at least 2")
    if da.dtype.kind not in "biuf":
        raise TypeError(f"pairwise differences need numeric scores, got dtype {da.dtype} for {da.name!r}")
    check_labels(da, dim, "dim")
    check_new_dim(da, pair_dim(dim), "dim")


def _pairwise_differences_iv(data, dim, epsilon) -> tuple[float, list[Hashable]]:
    """Every option of :func:`pairwise_differences`, checked once: epsilon, and the variables of a Dataset
    that are differenced (none for a DataArray)."""
    epsilon = check_epsilon(epsilon)
    if not isinstance(data, (xr.DataArray, xr.Dataset)):
        raise TypeError(f"data must be an xarray Dataset or DataArray, got {type(data).__name__}")
    if not isinstance(dim, Hashable) or dim not in data.dims:
        raise ValueError(f"dim must name a dim of the data {tuple(data.dims)}, got {dim!r}")
    if isinstance(data, xr.DataArray):
        _check_pairable(data, dim)
        return epsilon, []
    names = [k for k, v in data.data_vars.items() if dim in v.dims]
    if not names:
        raise ValueError(f"dim={dim!r}: no data variable has this dim")
    for name in names:
        _check_pairable(data[name], dim)
    return epsilon, names


def _differences(da: xr.DataArray, dim: Hashable, epsilon: float) -> xr.DataArray:
    other = pair_dim(dim)
    base = da.astype(np.float64)
    # the second copy carries only the labels of dim: other coords along dim stay on the first
    second = base.drop_vars([c for c in base.coords if dim in base[c].dims and c != dim]).rename({dim: other})
    diff = (second - base).transpose(dim, other, ...)
    diff = diff.where(~(np.abs(diff) <= epsilon), 0.0)  # |d| <= epsilon is a tie (0); NaN stays NaN
    diff.name = da.name
    diff.attrs = {"long_name": f"score at {other} minus score at {dim}", "epsilon": epsilon}
    return diff


def pairwise_differences(
    data: xr.Dataset | xr.DataArray,
    *,
    dim: Hashable = "system",
    epsilon: float = 0.0,
) -> xr.Dataset | xr.DataArray:
    """The difference of every ordered pair of labels along a dim: ``x[j] - x[i]``.

    mt-metrics-eval's ``PairwiseDiffs`` and its pairwise-difference matrices, labelled: the
    result has ``dim`` (label ``i``) and its second copy ``f"other_{dim}"`` (label ``j``, the
    naming of the agreement analyses' pair dims) in front of the data's other dims, so
    ``d.sel(system=i, other_system=j)`` is ``x[j] - x[i]`` on every input. Flattened in
    row-major order, the (dim, other_dim) matrix is mt-metrics-eval's.

    Parameters
    ----------
    data : Dataset or DataArray
        Numeric scores with ``dim``. For a Dataset every data variable with ``dim`` is
        differenced (variables without it are left out).
    dim : str, default "system"
        The dim whose labels are paired; it needs at least 2 labels.
    epsilon : float, default 0
        Finite, >= 0: a difference with ``|x[j] - x[i]| <= epsilon`` is a tie and set to 0
        (the diagonal always is).

    Returns
    -------
    DataArray or Dataset
        Like ``data``, with dims ``(dim, f"other_{dim}", ...)``; NaN where either score is
        missing. Lazy (Dask-backed) data stays lazy.

    Examples
    --------
    >>> import xarray as xr
    >>> import xcorrstat
    >>> x = xr.DataArray([1.0, 2.0, 2.1, 3.0], dims="system", coords={"system": list("abcd")})
    >>> d = pairwise_differences(x, epsilon=0.2)
    >>> d.dims
    ('system', 'other_system')
    >>> d.sel(system="a", other_system="d").item(), d.sel(system="b", other_system="c").item()
    (2.0, 0.0)
    """
    epsilon, names = _pairwise_differences_iv(data, dim, epsilon)
    if isinstance(data, xr.DataArray):
        return _differences(data, dim, epsilon)
    out = xr.Dataset({k: _differences(data[k], dim, epsilon) for k in names})
    out.attrs = {"statistic": f"pairwise differences x[{pair_dim(dim)}] - x[{dim}]", "epsilon": epsilon}
    return out
