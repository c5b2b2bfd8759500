"""Bootstrap and Fisher confidence intervals of level correlations (labelled API)."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any, NamedTuple

import numpy as np
import xarray as xr

from .._capabilities import check, check_levels, check_refinements
from .._docs import fill_doc
from .._kernels.custom import own_name
from .._resampling.settings import Bootstrap, interval_draws
from .._types import Average, CIMethod, Epsilon, Level, Levels, Method, Seed, Statistic, Variant
from .._kernels.levels import AVERAGES, fisher_n
from .._options import OPTIONS
from .._resampling.draws import resolve_seed
from .._resampling.engine import (
    RESAMPLE_DIM,
    batch_plan,
    bootstrap_draws,
    client_active,
    cluster_scores,
    compute_with_progress,
    default_batch,
    default_metric_chunk,
)
from .._resampling.intervals import basic_ci, bca_ci, fisher_ci, percentile_ci
from .._resampling.memory import calibration_metrics
from .._resampling.schemes import drawn_dims, parse_resample
from .._resampling.statistics import resampled_calibration, resampled_level_correlation
from .._notes import add_notes
from .._schema import INPUT, SYSTEM, scores_notes
from .._selection import split_scores
from .._validation import (
    check_batch,
    check_choice,
    check_confidence_level,
    check_epsilon,
    check_min_pairs,
    check_draw_count,
    warn_few_draws,
)
from .estimates import level_statistic, target_attr
from .._warn import one_call

__all__ = ["bootstrap", "fisher", "fisher_sample_size"]

CI_METHODS = ("percentile", "basic", "bca")
def _check_min_pairs(min_pairs) -> int:
    return check_min_pairs(OPTIONS["min_pairs"] if min_pairs is None else min_pairs)


def _bootstrap_levels(level, method, variant, epsilon) -> list[Level]:
    """``level``: one level, or a non-empty list of distinct levels (the runs stacked along ``level``),
    each with ``method`` and ``variant`` supported by the bootstrap (re-calibrating ties if asked)."""
    if isinstance(epsilon, str) and epsilon != "calibrate":
        raise ValueError(f"epsilon must be a number >= 0 or 'calibrate', got {epsilon!r}")
    operation = "bootstrap(epsilon='calibrate')" if epsilon == "calibrate" else "bootstrap"
    return check_levels(operation, level, method=method, variant=variant)


def _bootstrap_epsilon(epsilon: Epsilon, *, method, variant, ci) -> Epsilon:
    """``epsilon``: a metric-tie threshold >= 0, or ``"calibrate"`` (re-calibrated in every draw; the
    method, variant and levels it needs are checked with the levels)."""
    if isinstance(epsilon, str):
        if ci == "bca":
            raise ValueError("ci='bca' is not available with epsilon='calibrate'; use 'percentile' or 'basic'")
        return epsilon
    epsilon = check_epsilon(epsilon, " or 'calibrate'")
    if epsilon and method != "kendall":
        raise ValueError(f"epsilon applies to method='kendall' only, got method={method!r}")
    if epsilon and variant == "c":
        raise ValueError("epsilon > 0 is not defined for tau-c (its m counts distinct values); use another variant")
    return epsilon


class _BootstrapOptions(NamedTuple):
    levels: list[Level]
    min_pairs: int
    dims: tuple[str, ...]
    n_resamples: int
    batch: int | None
    confidence_level: float
    epsilon: float | str
    seed: int


def _bootstrap_iv(*, level: Levels, method: Statistic, variant: Variant, epsilon: Epsilon, average: Average,
                  resample: str | Sequence[str], n_resamples: int, confidence_level: float, ci: CIMethod, rng: Seed,
                  batch: int | None, min_pairs: int | None) -> _BootstrapOptions:
    """Every option of :func:`bootstrap`, checked once and normalised (every level of a list at once)."""
    levels = _bootstrap_levels(level, method, variant, epsilon)
    min_pairs = _check_min_pairs(min_pairs)
    check_choice(average, AVERAGES, "average")
    dims = parse_resample(resample)
    n_resamples = check_draw_count(n_resamples, "n_resamples")
    batch = check_batch(batch)
    confidence_level = check_confidence_level(confidence_level)
    warn_few_draws(n_resamples, confidence_level=confidence_level)
    check_choice(ci, CI_METHODS, "ci")
    epsilon = _bootstrap_epsilon(epsilon, method=method, variant=variant, ci=ci)
    if ci == "bca" and len(dims) != 1:
        raise ValueError(
            f"ci='bca' needs exactly one resampled dim (its jackknife is over that dim's units), "
            f"got resample={dims}; use ci='percentile' or 'basic' for BOOT-BOTH"
        )
    return _BootstrapOptions(levels, min_pairs, dims, n_resamples, batch, confidence_level, epsilon,
                             resolve_seed(rng))


def _jackknife(x, z, dim, kw):
    """Leave-one-unit-out statistics along ``dim`` (..., n) as 'draws' without one unit."""
    size = x.sizes[dim]
    keep = np.array([np.delete(np.arange(size), j) for j in range(size)])  # (n, n-1)

    def run(xv, zv):
        idx = {"sys_idx" if dim == SYSTEM else "inp_idx": keep}
        return resampled_level_correlation(xv, zv, **idx, **kw)[0]

    return xr.apply_ufunc(
        run, x, z,
        input_core_dims=[[SYSTEM, INPUT], [SYSTEM, INPUT]],
        output_core_dims=[["_jackknife"]],
        dask="parallelized",
        output_dtypes=[np.float64],
        dask_gufunc_kwargs={"output_sizes": {"_jackknife": size}},
    )


@one_call
@fill_doc
def bootstrap(
    data: xr.Dataset | xr.DataArray,
    *,
    target: Hashable | Sequence[Hashable],
    metrics: Sequence[Hashable] | None = None,
    level: Levels = "system",
    method: Statistic = "pearson",
    variant: Variant = "b",
    epsilon: Epsilon = 0.0,
    average: Average = "macro",
    resample: str | Sequence[str] | Bootstrap = ("system", "input"),
    confidence_level: float = 0.95,
    ci: CIMethod = "percentile",
    skipna: bool = True,
    complete_inputs: bool = False,
    min_pairs: int | None = None,
) -> xr.Dataset:
    """Bootstrap confidence intervals of every metric's level correlation.

    Draw ``r`` resamples the named dims with replacement (``("system",)`` =
    BOOT-SYSTEMS, ``("input",)`` = BOOT-INPUTS, both = BOOT-BOTH); its statistic is
    the level correlation of the expanded resample, computed from count vectors.
    Draws are keyed by draw id, so the same ``rng`` seed gives the same numbers
    whatever ``batch``, chunking or scheduler; every metric sees the same draws.

    Parameters
    ----------
    %(data)s
    %(targets)s
    %(level)s
        A list of levels adds a ``level`` dim, every level seeing the same draws. At
        within-system level, resampling inputs draws the items of each system's
        correlation and resampling systems draws the groups averaged.
    %(method)s
    %(variant)s
        At global level the draws support tau-b and tau-c only.
    epsilon : float or "calibrate", default 0
        Kendall: a pair whose metric scores differ by at most epsilon is a metric tie.
        ``"calibrate"`` (with ``variant="acc23"`` or ``"23"``, at system, input or
        within-system level)
        calibrates epsilon as :func:`xcorrstat.calibrate_ties` does, on the data and
        again in every draw, so the interval includes the uncertainty of the choice of
        epsilon; the result then also has ``epsilon`` and its interval
        ``epsilon_low``/``epsilon_high``. ``min_pairs`` does not apply there: as in
        ``calibrate_ties``, every group with a valid pair counts.
    %(average)s
    resample : str, tuple of str or Bootstrap, default ("system", "input")
        Dims to resample: ``"system"`` (BOOT-SYSTEMS), ``"input"`` (BOOT-INPUTS) or both
        (BOOT-BOTH); the labels themselves are accepted too (any case). A
        :class:`xcorrstat.Bootstrap` sets the draws too: ``n_resamples`` (default 1,000),
        ``rng`` and ``keep_distribution`` (also return every draw's statistic,
        ``distribution``).
    %(metrics)s
    %(confidence_level)s
    ci : {"percentile", "basic", "bca"}, default "percentile"
        Interval type. BCa needs exactly one resampled dim (its jackknife is over
        that dim's units).
    %(skipna)s
    %(complete_inputs)s
    %(min_pairs)s

    Returns
    -------
    Dataset
        ``correlation`` (the point estimate) with its ``n``, ``low``, ``high``,
        ``n_undefined`` (draws whose statistic is undefined, left out of the
        quantiles) and optionally ``distribution``; attrs record every option.
        Dask-backed input gives a lazy result. NumPy input is computed at once:
        on the active ``dask.distributed`` Client if there is one, else on Dask's
        threaded scheduler, or -- for small problems -- directly in the calling thread.

    Examples
    --------
    >>> import xcorrstat
    >>> ds = xcorrstat.datasets.summeval()
    >>> res = xcorrstat.bootstrap(ds, target="expert_relevance", metrics=["rouge_2_f1"], method="kendall",
    ...                           resample=xcorrstat.Bootstrap(n_resamples=200, rng=0))
    >>> float(res["low"][0]) < float(res["correlation"][0]) < float(res["high"][0])
    True
    """
    drawn = interval_draws(resample)  # the draws' settings, checked once
    n_resamples, rng, keep_distribution = drawn["n_resamples"], drawn["rng"], drawn["keep_distribution"]
    opts = _bootstrap_iv(level=level, method=method, variant=variant, epsilon=epsilon, average=average,
                         resample=drawn["resample"], n_resamples=n_resamples, confidence_level=confidence_level,
                         ci=ci, rng=rng, batch=OPTIONS["batch"], min_pairs=min_pairs)
    check_refinements("bootstrap", level=opts.levels, method=method, variant=variant, average=average,
                      complete_inputs=complete_inputs)
    runs = [
        _bootstrap_level(data, lev, opts, target=target, metrics=metrics, method=method, variant=variant,
                         average=average, ci=ci, keep_distribution=keep_distribution, skipna=skipna,
                         complete_inputs=complete_inputs)
        for lev in opts.levels
    ]
    for run in runs:
        add_notes(run.attrs, *scores_notes(data, target, metrics))
    if isinstance(level, str):
        return runs[0]
    # several levels: one run each, with the same draws, along a `level` dim
    out = xr.concat(runs, dim="level", coords="different", compat="equals", combine_attrs="drop_conflicts")
    out = out.assign_coords(level=opts.levels)
    out.attrs = {**out.attrs, "level": list(opts.levels)}  # options that differ by level (batch) are left out
    return out


def _bootstrap_level(data, level: Level, opts: _BootstrapOptions, *, target, metrics, method, variant, average, ci,
                     keep_distribution, skipna, complete_inputs) -> xr.Dataset:
    """:func:`bootstrap` at one level, its options checked."""
    dims, n_resamples, epsilon = drawn_dims(data, opts.dims), opts.n_resamples, opts.epsilon  # BOOT-SYSTEMS
    calibrate = epsilon == "calibrate"
    x, z, _ = split_scores(data, target=target, metrics=metrics, level=level, along=dims)
    lazy = x.chunks is not None or z.chunks is not None
    if not lazy and client_active():  # on a cluster: the point estimates run there too, from data sent once
        x, z = cluster_scores(x, z)
    batch = opts.batch
    if batch is None:
        batch = default_batch(default_metric_chunk(x.sizes["metric"]), x.sizes[SYSTEM], x.sizes[INPUT], level, method,
                              calibrate=calibrate)
    batch = min(batch, n_resamples)
    plan = batch_plan(xr.broadcast(x, z)[0], n_resamples, batch, level=level, method=method, calibrate=calibrate)
    kw: dict[str, Any] = {"level": level, "method": method, "variant": variant, "min_pairs": opts.min_pairs,
                          "complete_inputs": bool(complete_inputs), "skipna": bool(skipna), "epsilon": epsilon,
                          "average": average}
    if calibrate:  # each metric's pair table within the budget (refused when one alone is over it)
        step = calibration_metrics(x.size // (x.sizes[SYSTEM] * x.sizes[INPUT]), x.sizes[SYSTEM], x.sizes[INPUT],
                                   level, whole=True)
    point = _calibrated_point(x, z, level, variant, step) if calibrate else _point(x, z, kw)
    draws, n_draws, *eps_draws = bootstrap_draws(x, z, seed=opts.seed, resample=dims, n_resamples=n_resamples,
                                                 batch=batch, **kw)
    jackknife = [_jackknife(x, z, dims[0], kw)] if ci == "bca" else []
    low, high = _interval(draws, point["correlation"], jackknife, ci, opts.confidence_level)
    out = xr.Dataset({"correlation": point["correlation"], "low": low, "high": high,
                      "n_undefined": (~draws.notnull()).sum(RESAMPLE_DIM)})
    out = out.assign_coords(n=point["n"])
    if calibrate:
        _add_epsilon(out, point["epsilon"], eps_draws[0], opts.confidence_level)
    if keep_distribution:
        out["distribution"] = draws
        out["distribution_n"] = n_draws
        if calibrate:
            out["epsilon_distribution"] = eps_draws[0]
    out.attrs = {
        "statistic": "level correlation with human judgments",
        "target": target_attr(target),
        "level": level, "method": own_name(method), "variant": variant if method == "kendall" else "",
        "epsilon": epsilon if method == "kendall" else 0.0, "average": average,
        "resample": list(dims), "n_resamples": n_resamples, "confidence_level": opts.confidence_level,
        "ci": ci, "rng": opts.seed, "batch": batch, "draws_per_batch": plan[0], "draws_per_task": plan[1],
        "skipna": int(bool(skipna)),
        "complete_inputs": int(bool(complete_inputs)), "min_pairs": opts.min_pairs,
    }
    _describe(out, opts.confidence_level, ci)
    if lazy:
        return out
    return compute_with_progress(out, True)


def _interval(draws: xr.DataArray, estimate: xr.DataArray, jackknife: list[xr.DataArray], ci: str,
              confidence_level: float) -> tuple[xr.DataArray, xr.DataArray]:
    """``ci`` bounds of the draws (NaN draws left out); BCa also needs the jackknife statistics."""

    def interval(d, est, *jack):
        if ci == "percentile":
            return percentile_ci(d, confidence_level)
        if ci == "basic":
            return basic_ci(d, est, confidence_level)
        return bca_ci(d, est, jack[0], confidence_level)

    if draws.chunks is not None:  # one concatenation per block of metrics, not a rechunk graph of small pieces
        draws = draws.chunk({RESAMPLE_DIM: -1})
    return xr.apply_ufunc(
        interval, draws, estimate, *jackknife,
        input_core_dims=[[RESAMPLE_DIM], []] + [["_jackknife"]] * len(jackknife),
        output_core_dims=[[], []],
        dask="parallelized",
        output_dtypes=[np.float64, np.float64],
        dask_gufunc_kwargs={"allow_rechunk": True},
    )


def _add_epsilon(out: xr.Dataset, epsilon: xr.DataArray, draws: xr.DataArray, confidence_level: float) -> None:
    """The calibrated epsilon of the data and the percentile interval of the per-draw calibrated ones."""
    out["epsilon"] = epsilon
    out["epsilon_low"], out["epsilon_high"] = xr.apply_ufunc(
        percentile_ci, draws, kwargs={"confidence_level": confidence_level},
        input_core_dims=[[RESAMPLE_DIM]], output_core_dims=[[], []], dask="parallelized",
        output_dtypes=[np.float64, np.float64], dask_gufunc_kwargs={"allow_rechunk": True},
    )
    out["epsilon"].attrs["long_name"] = "metric-tie threshold calibrated on the data"
    out["epsilon_low"].attrs["long_name"] = f"lower bound of the {confidence_level:g} percentile interval " \
                                            "of the per-draw calibrated epsilon"
    out["epsilon_high"].attrs["long_name"] = f"upper bound of the {confidence_level:g} percentile interval " \
                                             "of the per-draw calibrated epsilon"


def _describe(out: xr.Dataset, confidence_level: float, ci: str) -> None:
    """Long names of a bootstrap result's bounds and undefined-draw count."""
    out["low"].attrs["long_name"] = f"lower bound of the {confidence_level:g} {ci} interval"
    out["high"].attrs["long_name"] = f"upper bound of the {confidence_level:g} {ci} interval"
    out["n_undefined"].attrs["long_name"] = "draws whose statistic is undefined (NaN), left out of the interval"


def _point(x, z, kw):
    r, n = level_statistic(x, z, **kw)
    return xr.Dataset({"correlation": r, "n": n})


def _calibrated_point(x, z, level, variant, step):
    """Tie calibration on the data itself: the draw in which every unit appears once, ``step`` metrics
    (rows of the leading dims) at a time."""

    def run(xv, zv):
        xv, zv = np.broadcast_arrays(xv, zv)
        lead, (s, i) = xv.shape[:-2], xv.shape[-2:]
        xf, zf = xv.reshape(-1, s, i), zv.reshape(-1, s, i)
        parts = [resampled_calibration(xf[k:k + step], zf[k:k + step], level=level, variant=variant,
                                       sys_idx=np.arange(s)[None], inp_idx=np.arange(i)[None])
                 for k in range(0, xf.shape[0], step)]
        return tuple(np.concatenate([p[j] for p in parts]).reshape(lead + (1,)) for j in range(3))

    if x.chunks is not None or z.chunks is not None:
        x, z = x.chunk({SYSTEM: -1, INPUT: -1}), z.chunk({SYSTEM: -1, INPUT: -1})
    r, n, eps = xr.apply_ufunc(
        lambda xv, zv: tuple(a[..., 0] for a in run(xv, zv)), x, z,
        input_core_dims=[[SYSTEM, INPUT], [SYSTEM, INPUT]], output_core_dims=[[], [], []],
        dask="parallelized", output_dtypes=[np.float64, np.int64, np.float64],
    )
    return xr.Dataset({"correlation": r, "n": n, "epsilon": eps})


def _fisher_iv(level, method, variant, min_pairs, confidence_level) -> tuple[int, float]:
    """Every option of :func:`fisher`, checked once: ``(min_pairs, confidence_level)``."""
    check("fisher", level=level, method=method, variant=variant)
    return _check_min_pairs(min_pairs), check_confidence_level(confidence_level)


def fisher_sample_size(n: xr.DataArray, x: xr.DataArray, z: xr.DataArray, level: str) -> xr.DataArray:
    """The ``n`` of a Fisher interval: the pairs correlated (``n`` of the level correlation), and for an
    average of correlations the largest number of pairs of any one of them.

    Input level averages per-input correlations over systems: the most systems correlated for one input.
    Within-system level averages per-system correlations over inputs: the most inputs correlated for one
    system (the same rule, the dims' roles swapped).
    """
    if level not in ("input", "within_system"):
        return n
    valid = x.notnull() & z.notnull()
    return xr.apply_ufunc(fisher_n, valid, n, kwargs={"level": level},
                          input_core_dims=[[SYSTEM, INPUT], []]).astype(np.int64)


@one_call
@fill_doc
def fisher(
    data: xr.Dataset | xr.DataArray,
    *,
    target: Hashable | Sequence[Hashable],
    level: Level = "system",
    method: Method = "pearson",
    variant: Variant = "b",
    metrics: Sequence[Hashable] | None = None,
    confidence_level: float = 0.95,
    skipna: bool = True,
    complete_inputs: bool = False,
    min_pairs: int | None = None,
) -> xr.Dataset:
    """Fisher-transformation confidence intervals with the Bonett & Wright (2000) constants.

    ``z = artanh(r)``; bounds ``tanh(z -/+ z_{alpha/2} c / sqrt(n - b))`` with
    ``(b, c) = (3, 1)`` for Pearson, ``(3, sqrt(1 + r^2/2))`` for Spearman and
    ``(4, sqrt(0.437))`` for Kendall. ``n`` is the number of pairs correlated: systems
    at system level, cells at global level, at input level the largest number of
    systems correlated for any one input (the per-input sample size; the input
    average is not an n-sample correlation, so this interval is conservative there)
    and at within-system level, likewise, the largest number of inputs correlated for
    any one system. Returned as ``sample_size``; NaN bounds where it is ``<= b``. The coordinate
    ``n`` counts the units as :func:`correlate` does.

    Parameters
    ----------
    %(data)s
    %(targets)s
    %(level)s
    %(method)s
    variant : {"b", "c"}, default "b"
        Kendall's variant: tau-b or tau-c (the interval's constants are the same).
    %(metrics)s
    %(confidence_level)s
    %(skipna)s
    %(complete_inputs)s
    %(min_pairs)s

    Returns
    -------
    Dataset
        ``correlation``, ``low``, ``high`` and ``sample_size`` (the interval's n), with the coordinate
        ``n``; attrs record the options.

    Examples
    --------
    >>> import xcorrstat
    >>> ds = xcorrstat.datasets.summeval()
    >>> res = ds.corrstat.fisher(target="expert_relevance", level="system", metrics=["qa_eval_f1"])
    >>> int(res["n"][0])
    16
    """
    min_pairs, confidence_level = _fisher_iv(level, method, variant, min_pairs, confidence_level)
    check_refinements("fisher", level=level, method=method, variant=variant, complete_inputs=complete_inputs)
    x, z, _ = split_scores(data, target=target, metrics=metrics, level=level)
    kw = {"level": level, "method": method, "variant": variant, "min_pairs": min_pairs,
          "complete_inputs": bool(complete_inputs), "skipna": bool(skipna)}
    point = _point(x, z, kw)
    n = fisher_sample_size(point["n"], x, z, level)
    low, high = xr.apply_ufunc(
        fisher_ci, point["correlation"], n,
        kwargs={"method": method, "confidence_level": confidence_level},
        output_core_dims=[[], []], dask="parallelized", output_dtypes=[np.float64, np.float64],
    )
    n.attrs["long_name"] = ("the n of Fisher's z interval: pairs correlated" +
                            {"input": " (most systems correlated for one input)",
                             "within_system": " (most inputs correlated for one system)"}.get(level, ""))
    out = xr.Dataset({"correlation": point["correlation"], "low": low, "high": high,
                      "sample_size": n.reset_coords(drop=True)}).assign_coords(n=point["n"])
    out.attrs = {
        "statistic": "level correlation with human judgments",
        "target": target_attr(target),
        "level": level, "method": own_name(method), "variant": variant if method == "kendall" else "",
        "ci": "fisher", "confidence_level": confidence_level,
    }
    add_notes(out.attrs, *scores_notes(data, target, metrics))
    return out
