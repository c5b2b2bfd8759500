"""Leaderboards and their rank invariance (Kendall tau-b, bootstrap over conditions).

A leaderboard orders the *competitors* (for example strategies) by their score
aggregated over the *conditions* (for example datasets): the mean score, or with
``rank=True`` the mean of the per-condition ranks. Two leaderboards -- two
settings of a hyperparameter, two evaluation measures -- agree when they order
the competitors the same way, measured by Kendall's tau-b between their position
vectors. Its bootstrap interval resamples the conditions: draw ``r`` takes
``bootstrap_indices(seed, [r], [n_conditions])``, so the same seed gives the same
draws however they are batched or chunked.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any, NamedTuple

import numpy as np
import xarray as xr

from .._docs import fill_doc
from .._types import MissingRule, Seed
from .._kernels import kendall
from .._labelled import (
    as_float,
    check_dim,
    check_labels,
    check_new_dim,
    label_coords,
    pair_dim,
    pick_variable,
    symmetric_pairs,
)
from .._options import OPTIONS
from .._resampling import engine as engine
from .._resampling.draws import (
    bootstrap_indices,
    counts_from_indices,
    draws_per_task,
    fill_draws,
    resolve_seed,
)
from .._resampling.intervals import percentile_ci
from .._validation import (
    check_batch,
    check_choice,
    check_confidence_level,
    check_min_pairs,
    check_draw_count,
)
from .._warn import one_call

__all__ = ["MISSING_RULES", "VARIABLE_DIM", "leaderboard", "leaderboard_agreement"]

#: The missing-cell rules of :func:`leaderboard`.
MISSING_RULES: tuple[MissingRule, ...] = ("complete", "available")
#: The dim a list of variables is stacked along.
VARIABLE_DIM = "variable"
RESAMPLE_DIM = "resample"


def _ranks(values: np.ndarray, axis: int) -> np.ndarray:
    """Mid-ranks (1 = smallest) along ``axis``; NaN stays NaN and is not ranked."""
    from scipy.stats import rankdata  # imported on use: scipy.stats takes about a second to import

    return rankdata(values, axis=axis, nan_policy="omit")


def _cell_values(values, *, rank, missing, higher_is_better):
    """Per-cell values to average and the mask of cells used, over (..., K, C)."""
    present = ~np.isnan(values)
    use = present.all(axis=-2, keepdims=True) & present if missing == "complete" else present
    if rank:
        key = -values if higher_is_better else values
        values = _ranks(np.where(use, key, np.nan), axis=-2)  # 1 = best within each condition
    return np.where(use, values, 0.0), use


def _aggregate(vals, use, weights, *, rank, higher_is_better):
    """Weighted aggregate (..., K), its positions (1 = best) and conditions used."""
    w = np.where(use, weights, 0.0)
    count = w.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        agg = np.where(count > 0, (vals * w).sum(axis=-1) / count, np.nan)
    key = -agg if (higher_is_better and not rank) else agg
    return agg, _ranks(key, axis=-1), count


def _leaderboard_kernel(values, *, rank, missing, higher_is_better):
    values = as_float(values, "data")
    vals, use = _cell_values(values, rank=rank, missing=missing, higher_is_better=higher_is_better)
    agg, pos, count = _aggregate(vals, use, 1.0, rank=rank, higher_is_better=higher_is_better)
    return agg, pos, np.rint(count).astype(np.int64)


def _check_common(da, competitor, condition, rank, missing, higher_is_better):
    competitor = check_dim(da, competitor, "competitor")
    condition = check_dim(da, condition, "condition")
    if competitor == condition:
        raise ValueError(f"competitor and condition must be different dims, both are {competitor!r}")
    check_labels(da, competitor, "competitor")
    check_choice(missing, MISSING_RULES, "missing")
    for name, value in (("rank", rank), ("higher_is_better", higher_is_better)):
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"{name} must be True or False, got {value!r}")
    if da.dtype.kind not in "biuf":
        raise TypeError(f"data must hold numeric scores, got dtype {da.dtype}")
    return competitor, condition


def _stack_vars(data, var):
    """The scores: one variable, or several stacked along ``variable``."""
    if isinstance(var, Sequence) and not isinstance(var, str):
        if not isinstance(data, xr.Dataset):
            raise TypeError("var: a list of variables needs a Dataset")
        names = list(var)
        if len(names) < 1 or len(set(names)) != len(names):
            raise ValueError(f"var must list distinct variables, got {var!r}")
        parts = [pick_variable(data, v).astype(np.float64) for v in names]
        da = xr.concat(parts, dim=VARIABLE_DIM, coords="minimal", compat="override", join="outer")
        return da.assign_coords({VARIABLE_DIM: [str(v) for v in names]}).rename(None)
    return pick_variable(data, var)


def _var_attr(var, da):
    if isinstance(var, Sequence) and not isinstance(var, str):
        return [str(v) for v in var]
    return str(da.name) if da.name is not None else ""


def _rules_attrs(competitor, condition, rank, missing, higher_is_better):
    return {"competitor": str(competitor), "condition": str(condition), "rank": int(bool(rank)),
            "missing": missing, "higher_is_better": int(bool(higher_is_better))}


def _leaderboard_iv(data, var, competitor, condition, rank, missing,
                    higher_is_better) -> tuple[xr.DataArray, Hashable, Hashable, dict[str, Any]]:
    da = _stack_vars(data, var)
    competitor, condition = _check_common(da, competitor, condition, rank, missing, higher_is_better)
    rules = dict(rank=bool(rank), missing=missing, higher_is_better=bool(higher_is_better))
    return da, competitor, condition, rules


def _leaderboard(da: xr.DataArray, competitor: Hashable, condition: Hashable, rules: dict[str, Any]) -> xr.Dataset:
    """Score, position and conditions averaged of each competitor (validated arguments, no Dataset attrs)."""
    if da.chunks is not None:
        da = da.chunk({competitor: -1, condition: -1})
    score, position, count = xr.apply_ufunc(
        _leaderboard_kernel, da,
        input_core_dims=[[competitor, condition]],
        output_core_dims=[[competitor]] * 3,
        dask="parallelized",
        output_dtypes=[np.float64, np.float64, np.int64],
        kwargs=rules,
    )
    out = xr.Dataset({"score": score, "position": position}).assign_coords(n_conditions=count)
    out["score"].attrs["long_name"] = "mean rank" if rules["rank"] else "mean score"
    out["position"].attrs["long_name"] = "leaderboard position (1 = best)"
    out.coords["n_conditions"].attrs["long_name"] = "conditions averaged"
    return out


@one_call
def leaderboard(
    data: xr.Dataset | xr.DataArray,
    *,
    var: Hashable | Sequence[Hashable] | None = None,
    competitor: Hashable,
    condition: Hashable,
    rank: bool = False,
    missing: MissingRule = "complete",
    higher_is_better: bool = True,
) -> xr.Dataset:
    """The leaderboard of competitors over conditions: aggregate score and position.

    Parameters
    ----------
    data : Dataset or DataArray
        Scores with a competitor dim and a condition dim (for example strategy x
        dataset); any other dims are batch dims (one leaderboard per label).
    var : str or list of str, optional
        The variable of a Dataset; a list stacks several along a ``variable`` dim.
    competitor : str
        The dim of the things ranked.
    condition : str
        The dim averaged over.
    rank : bool, default False
        Rank the competitors within each condition (1 = best, ties share the mean
        rank) and average the ranks, instead of averaging the scores.
    missing : {"complete", "available"}
        What a missing cell (NaN) does. ``"complete"``: a condition where any
        competitor lacks a score is left out for every competitor, so all are
        averaged over the same conditions. ``"available"``: each competitor is
        averaged over its own scored conditions (with ``rank``, each condition ranks
        the competitors scored there).
    higher_is_better : bool, default True
        Whether a higher score is better.

    Returns
    -------
    Dataset
        ``score`` (mean score, or mean rank with ``rank``) and ``position`` (1 =
        best; ties share the mean position) over the competitor and batch dims, and
        coordinate ``n_conditions`` (the conditions averaged). A competitor with no
        condition left has NaN score and position.

    Examples
    --------
    >>> import xcorrstat.agreement as agr
    >>> bench = agr.synthetic_benchmark(rng=0)
    >>> lb = agr.leaderboard(bench.sel(batch_size=10), var="accuracy", competitor="strategy",
    ...                      condition="dataset")
    >>> sorted(lb["position"].values.tolist())
    [1.0, 2.0, 3.0, 4.0, 5.0]
    """
    da, competitor, condition, rules = _leaderboard_iv(data, var, competitor, condition, rank, missing,
                                                       higher_is_better)
    out = _leaderboard(da, competitor, condition, rules)
    out.attrs = {"variable": _var_attr(var, da),
                 **_rules_attrs(competitor, condition, rank, missing, higher_is_better)}
    return out


def _tau_matrix(positions, min_pairs):
    """Kendall tau-b between every pair of leaderboards: (..., L, K) -> (..., L, L)."""
    def stat(a, b):
        return kendall(a, b, variant="b", min_pairs=min_pairs)

    return symmetric_pairs(positions, stat, core_ndim=1)


def _agreement_kernel(values, *, rank, missing, higher_is_better, min_pairs):
    values = as_float(values, "data")
    vals, use = _cell_values(values, rank=rank, missing=missing, higher_is_better=higher_is_better)
    _, pos, _ = _aggregate(vals, use, 1.0, rank=rank, higher_is_better=higher_is_better)
    tau, n = _tau_matrix(pos, min_pairs)
    return tau, n


def _draws_kernel(values, ids, *, n_lead, seed, batch, rank, missing, higher_is_better, min_pairs):
    """Tau-b of draws ``ids``: values (lead..., [1,] L, K, C), ids (R,) -> (lead..., R, L, L).

    apply_ufunc broadcasts the draw dim as the last loop dim: values get a length-1
    axis for it after their ``n_lead`` batch axes (none when there are no batch dims).
    """
    values = as_float(values, "data")
    if values.ndim > n_lead + 3:
        values = values[..., 0, :, :, :]
    ids = np.asarray(ids).reshape(-1)
    n_cond = values.shape[-1]
    vals, use = _cell_values(values, rank=rank, missing=missing, higher_is_better=higher_is_better)
    n_lb = values.shape[-3]
    out = np.empty(values.shape[:-3] + (ids.size, n_lb, n_lb), dtype=np.float64)

    def make(chunk):  # once per block of draw ids
        return bootstrap_indices(seed, chunk, [n_cond])

    def tau_of(idx):  # one batch of draws, never one at a time
        counts = counts_from_indices(idx, n_cond).astype(np.float64)  # (B, C)
        w = counts.reshape((idx.shape[0],) + (1,) * (values.ndim - 1) + (n_cond,))
        _, pos, _ = _aggregate(vals[None], use[None], w, rank=rank, higher_is_better=higher_is_better)
        tau, _ = _tau_matrix(pos, min_pairs)  # (B, ..., L, L)
        return np.moveaxis(tau, 0, -3)

    return fill_draws(out, ids, batch, make, tau_of, axis=-3)


class _Agreement(NamedTuple):
    """The normalised arguments of :func:`leaderboard_agreement`."""

    da: xr.DataArray
    competitor: Hashable
    condition: Hashable
    between: Hashable
    rules: dict[str, Any]
    min_pairs: int
    n_resamples: int | None
    batch: int | None
    confidence_level: float
    seed: int | None  # None without draws


def _leaderboard_agreement_iv(data: xr.Dataset | xr.DataArray, *, var: Hashable | Sequence[Hashable] | None,
                              competitor: Hashable, condition: Hashable, between: Hashable | None, rank: bool,
                              missing: MissingRule, higher_is_better: bool, n_resamples: int | None,
                              confidence_level: float, rng: Seed, batch: int | None,
                              min_pairs: int | None) -> _Agreement:
    da = _stack_vars(data, var)
    if between is None and isinstance(var, Sequence) and not isinstance(var, str):
        between = VARIABLE_DIM
    competitor, condition = _check_common(da, competitor, condition, rank, missing, higher_is_better)
    between = check_dim(da, between, "between")
    if between in (competitor, condition):
        raise ValueError(f"between must differ from competitor and condition, got {between!r}")
    check_labels(da, between, "between")
    check_new_dim(da, pair_dim(between), "between")
    min_pairs = check_min_pairs(OPTIONS["min_pairs"] if min_pairs is None else min_pairs)
    if n_resamples is not None:
        n_resamples = check_draw_count(n_resamples, "n_resamples")
    batch = check_batch(batch)
    confidence_level = check_confidence_level(confidence_level)
    rules = dict(rank=bool(rank), missing=missing, higher_is_better=bool(higher_is_better))
    seed = resolve_seed(rng) if n_resamples is not None else None
    return _Agreement(da, competitor, condition, between, rules, min_pairs, n_resamples, batch,
                      confidence_level, seed)


def _agreement_point(a: _Agreement, da: xr.DataArray, core: list[Hashable]) -> xr.Dataset:
    """Tau-b between every pair of leaderboards, with coordinate ``n``."""
    other = pair_dim(a.between)
    tau, n = xr.apply_ufunc(
        _agreement_kernel, da,
        input_core_dims=[core], output_core_dims=[[a.between, other]] * 2,
        dask="parallelized", output_dtypes=[np.float64, np.int64],
        dask_gufunc_kwargs={"output_sizes": {other: da.sizes[a.between]}},
        kwargs=dict(min_pairs=a.min_pairs, **a.rules),
    )
    labels = label_coords(da, a.between)
    out = xr.Dataset({"tau": tau.assign_coords(labels).assign_coords(n=n.assign_coords(labels))})
    return out.drop_vars([c for c in out.coords if set(out[c].dims) & {a.competitor, a.condition}])


def _agreement_draws(a: _Agreement, da: xr.DataArray, core: list[Hashable],
                     n_resamples: int, seed: int) -> tuple[xr.DataArray, int, int]:
    """Tau-b of every bootstrap draw over the conditions, the batch and the draws per batch."""
    other = pair_dim(a.between)
    # the engine's one batch policy: a draw's weighted table holds every cell
    batch = a.batch if a.batch is not None else engine.draws_within(engine.block_elems(), da.size)
    step = engine.raised_batch(batch, da.size, n_resamples)
    batch = min(batch, n_resamples)
    ids = xr.DataArray(np.arange(n_resamples), dims=[RESAMPLE_DIM])
    if da.chunks is not None:  # at most MAX_DRAW_TASKS blocks of draws, however small `batch` is
        ids = ids.chunk({RESAMPLE_DIM: draws_per_task(n_resamples, step)})
    draws = xr.apply_ufunc(
        _draws_kernel, da, ids,
        input_core_dims=[core, []], output_core_dims=[[a.between, other]],
        dask="parallelized", output_dtypes=[np.float64],
        dask_gufunc_kwargs={"output_sizes": {other: da.sizes[a.between]}},
        kwargs=dict(n_lead=da.ndim - 3, seed=seed, batch=step, min_pairs=a.min_pairs, **a.rules),
    ).assign_coords(label_coords(da, a.between))
    draws = draws.drop_vars([c for c in draws.coords if set(draws[c].dims) & {a.competitor, a.condition}])
    return draws, batch, step


def _add_interval(out: xr.Dataset, draws: xr.DataArray, confidence_level: float, keep_distribution: bool) -> None:
    """``low``, ``high``, ``n_undefined`` (and ``distribution``) of the draws, into ``out``."""
    low, high = xr.apply_ufunc(
        percentile_ci, draws, input_core_dims=[[RESAMPLE_DIM]], output_core_dims=[[], []],
        dask="parallelized", output_dtypes=[np.float64, np.float64],
        dask_gufunc_kwargs={"allow_rechunk": True}, kwargs={"confidence_level": confidence_level},
    )
    out["low"], out["high"] = low, high
    out["n_undefined"] = draws.isnull().sum(RESAMPLE_DIM).astype(np.int64)
    out["low"].attrs["long_name"] = f"lower bound of the {confidence_level:g} percentile interval"
    out["high"].attrs["long_name"] = f"upper bound of the {confidence_level:g} percentile interval"
    out["n_undefined"].attrs["long_name"] = "draws whose tau is undefined (NaN), left out of the interval"
    if keep_distribution:
        out["distribution"] = draws.transpose(..., RESAMPLE_DIM)


def _agreement_attrs(a: _Agreement, var, rank: bool, missing: str, higher_is_better: bool) -> dict[str, Any]:
    return {"statistic": "Kendall tau-b between leaderboard positions", "variable": _var_attr(var, a.da),
            "between": str(a.between),
            **_rules_attrs(a.competitor, a.condition, rank, missing, higher_is_better), "min_pairs": a.min_pairs}


@one_call
@fill_doc
def leaderboard_agreement(
    data: xr.Dataset | xr.DataArray,
    *,
    var: Hashable | Sequence[Hashable] | None = None,
    competitor: Hashable,
    condition: Hashable,
    between: Hashable | None = None,
    rank: bool = False,
    missing: MissingRule = "complete",
    higher_is_better: bool = True,
    n_resamples: int | None = 1000,
    confidence_level: float = 0.95,
    rng: Seed = None,
    keep_distribution: bool = False,
    min_pairs: int | None = None,
) -> xr.Dataset:
    """Do two evaluation choices rank the competitors the same way? Kendall tau-b between leaderboards.

    One leaderboard is built per label of ``between`` (see :func:`leaderboard`) and
    every pair is compared by Kendall's tau-b between their position vectors, with
    a percentile bootstrap interval from resampling the conditions. To compare two
    separate arrays, concatenate them along a new dim
    (``xr.concat([a, b], dim="setting")``) or pass two variables as ``var``.

    Parameters
    ----------
    data : Dataset or DataArray
        Scores with competitor, condition and ``between`` dims; other dims are batch dims.
    var : str or list of str, optional
        The variable of a Dataset; a list stacks several along a ``variable`` dim,
        which is then the default ``between`` (compare evaluation measures).
    competitor : str
        The dim of the things ranked.
    condition : str
        The dim averaged over, and resampled by the bootstrap.
    between : str
        The dim whose labels give the leaderboards compared (for example the values
        of a hyperparameter). Other dims are batch dims.
    rank : bool, default False
        Average per-condition ranks instead of scores (see :func:`leaderboard`).
    missing : {"complete", "available"}
        The missing-cell rule of :func:`leaderboard`, applied to each leaderboard.
    higher_is_better : bool, default True
        Whether a higher score is better.
    n_resamples : int or None, default 1000
        Bootstrap draws over the conditions; None gives the point estimate only.
    %(confidence_level)s
    %(rng)s
    %(keep_distribution)s
    min_pairs : int, optional
        Fewest competitors ranked in both leaderboards for a defined tau (default
        ``set_options(min_pairs=3)``).

    Returns
    -------
    Dataset
        ``tau`` with dims ``(between, other_between)`` plus batch dims and coordinate
        ``n`` (competitors with a position in both leaderboards); with draws,
        ``low``, ``high`` and ``n_undefined`` (draws with an undefined tau, left out
        of the interval), and optionally ``distribution``. Also ``score`` and
        ``position``: the leaderboards themselves. Attrs record every option.

    Notes
    -----
    A competitor without a position in one of the two leaderboards is left out of
    that pair (pairwise deletion); tau is NaN with fewer than ``min_pairs``
    competitors left or when either leaderboard puts them all in one tie. Draw
    ``r`` resamples the conditions with replacement (a condition drawn twice counts
    twice in every mean) with indices ``bootstrap_indices(seed, [r], [C])``;
    the per-condition ranks (``rank=True``) and the missing-cell rule do not depend
    on the draw, as they look within one condition only.

    Examples
    --------
    >>> import xcorrstat.agreement as agr
    >>> bench = agr.synthetic_benchmark(rng=0)
    >>> res = agr.leaderboard_agreement(bench, var="accuracy", competitor="strategy",
    ...                                 condition="dataset", between="batch_size", rng=0)
    >>> res["tau"].dims, res.attrs["rng"]
    (('batch_size', 'other_batch_size'), 0)
    """
    batch = OPTIONS["batch"]
    a = _leaderboard_agreement_iv(data, var=var, competitor=competitor, condition=condition, between=between,
                                  rank=rank, missing=missing, higher_is_better=higher_is_better,
                                  n_resamples=n_resamples, confidence_level=confidence_level, rng=rng, batch=batch,
                                  min_pairs=min_pairs)
    core = [a.between, a.competitor, a.condition]
    da = a.da.chunk({d: -1 for d in core}) if a.da.chunks is not None else a.da
    lb = _leaderboard(da, a.competitor, a.condition, a.rules)
    out = _agreement_point(a, da, core)
    attrs = _agreement_attrs(a, var, rank, missing, higher_is_better)
    if a.n_resamples is not None and a.seed is not None:
        draws, used_batch, step = _agreement_draws(a, da, core, a.n_resamples, a.seed)
        _add_interval(out, draws, a.confidence_level, keep_distribution)
        attrs.update(resample=str(a.condition), n_resamples=a.n_resamples, confidence_level=a.confidence_level,
                     ci="percentile", rng=a.seed, batch=used_batch, draws_per_batch=step)
    out["score"], out["position"] = lb["score"], lb["position"]
    out = out.assign_coords(n_conditions=lb["n_conditions"])
    out["tau"].attrs["long_name"] = "Kendall tau-b between leaderboards"
    out.coords["n"].attrs["long_name"] = "competitors ranked in both leaderboards"
    out.attrs = attrs
    return out.unify_chunks() if da.chunks is not None else out
