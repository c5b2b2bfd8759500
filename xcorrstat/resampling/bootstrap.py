"""Bootstrap and Fisher confidence intervals of level correlations (labelled API)."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Literal

import numpy as np
import xarray as xr

from ..correlate import level_statistic
from ..kernels import LEVELS, METHODS, VARIANTS
from ..kernels.correlation import KENDALL_VARIANTS
from ..kernels.levels import AVERAGES, CORRELATE_LEVELS
from ..kernels.ties import TIE_VARIANTS
from ..options import OPTIONS
from ..schema import INPUT, SYSTEM, split_scores
from .draws import resolve_seed
from .engine import (
    RESAMPLE_DIM,
    batch_plan,
    bootstrap_draws,
    check_resample,
    compute_with_progress,
    default_batch,
    default_metric_chunk,
)
from ..validation import (
    check_batch,
    check_choice,
    check_confidence_level,
    check_epsilon,
    check_min_pairs,
    check_positive_int,
)
from .intervals import basic_ci, bca_ci, fisher_ci, percentile_ci
from .statistics import (
    CALIBRATE_LEVELS,
    check_bootstrap_variant,
    resampled_calibration,
    resampled_level_correlation,
)

__all__ = ["bootstrap", "fisher"]

CI_METHODS = ("percentile", "basic", "bca")


def _check_common(level, method, variant, min_pairs, variants=VARIANTS, levels=LEVELS):
    check_choice(level, levels, "level")
    check_choice(method, METHODS, "method")
    check_choice(variant, variants, "variant", " (Kendall's variant)")
    return check_min_pairs(OPTIONS["min_pairs"] if min_pairs is None else min_pairs)


def _check_epsilon(epsilon, *, level, method, variant, ci):
    """``epsilon``: a metric-tie threshold >= 0, or ``"calibrate"`` (re-calibrated in every draw)."""
    if isinstance(epsilon, str):
        if epsilon != "calibrate":
            raise ValueError(f"epsilon must be a number >= 0 or 'calibrate', got {epsilon!r}")
        if method != "kendall" or variant not in TIE_VARIANTS:
            raise ValueError(f"epsilon='calibrate' calibrates acc_eq or tau_eq: it needs method='kendall' and "
                             f"variant in {TIE_VARIANTS}, got method={method!r}, variant={variant!r}")
        check_choice(level, CALIBRATE_LEVELS, "level", " (epsilon='calibrate' re-calibrates per draw there)")
        if ci == "bca":
            raise ValueError("ci='bca' is not available with epsilon='calibrate'; use 'percentile' or 'basic'")
        return epsilon
    epsilon = check_epsilon(epsilon, " or 'calibrate'")
    if epsilon and method != "kendall":
        raise ValueError(f"epsilon applies to method='kendall' only, got method={method!r}")
    if epsilon and variant == "c":
        raise ValueError("epsilon > 0 is not defined for tau-c (its m counts distinct values); use another variant")
    return epsilon


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


def bootstrap(
    data: xr.Dataset | xr.DataArray,
    *,
    target: Hashable | Sequence[Hashable],
    level: Literal["system", "input", "global", "within_system"] | Sequence[str] = "system",
    method: Literal["pearson", "spearman", "kendall"] = "pearson",
    variant: Literal["b", "c", "a", "23", "acc23"] = "b",
    epsilon: float | Literal["calibrate"] = 0.0,
    average: Literal["macro", "weighted"] = "macro",
    metrics: Sequence[Hashable] | None = None,
    resample: str | Sequence[str] = ("system", "input"),
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    ci: Literal["percentile", "basic", "bca"] = "percentile",
    rng: int | np.random.Generator | np.random.SeedSequence | None = None,
    batch: int | None = None,
    keep_distribution: bool = False,
    skipna: bool = True,
    complete_inputs: bool = False,
    min_pairs: int | None = None,
    progress: bool = False,
) -> xr.Dataset:
    """Bootstrap confidence intervals of every metric's level correlation.

    Draw ``r`` resamples the named dims with replacement (``("system",)`` =
    BOOT-SYSTEMS, ``("input",)`` = BOOT-INPUTS, both = BOOT-BOTH); its statistic is
    the level correlation of the expanded resample, computed from count vectors.
    Draws are keyed by draw id, so the same ``rng`` seed gives the same numbers
    whatever ``batch``, chunking or scheduler; every metric sees the same draws.

    Parameters
    ----------
    data, target, level, method, variant, metrics, skipna, complete_inputs, min_pairs, average
        As in :func:`xcorrstat.correlate` (one method here; a list of levels adds a
        ``level`` dim, every level seeing the same draws). At
        within-system level, resampling inputs draws the items of each system's
        correlation and resampling systems draws the groups averaged.
    epsilon : float or "calibrate", default 0
        Kendall: a pair whose metric scores differ by at most epsilon is a metric tie.
        ``"calibrate"`` (with ``variant="acc23"`` or ``"23"``, at system, input or
        within-system level)
        calibrates epsilon as :func:`xcorrstat.calibrate_ties` does, on the data and
        again in every draw, so the interval includes the uncertainty of the choice of
        epsilon; the result then also has ``epsilon`` and its interval
        ``epsilon_low``/``epsilon_high``. ``min_pairs`` does not apply there: as in
        ``calibrate_ties``, every group with a valid pair counts.
    resample : str or tuple of str
        Dims to resample: ``"system"``, ``"input"`` or both.
    n_resamples : int
        Number of draws.
    confidence_level : float
        Two-sided confidence level.
    ci : {"percentile", "basic", "bca"}
        Interval type. BCa needs exactly one resampled dim (its jackknife is over
        that dim's units).
    rng : int, Generator, SeedSequence or None
        Seed; the seed actually used is recorded in ``attrs["seed"]``.
    batch : int, optional
        Draws computed together; the default keeps a task's temporaries near 256 MB.
        On tiny data it is raised to the draws whose temporaries fit in about 8 MB
        (one draw at a time would cost more in overhead than in arithmetic), and a
        Dask task computes at least ``ceil(n_resamples / 256)`` draws, so a run never
        has more than 256 blocks of draws. Attrs record ``batch`` (as given),
        ``draws_per_batch`` and ``draws_per_task``. The numbers do not depend on them.
    keep_distribution : bool
        Also return every draw along a ``resample`` dim.
    progress : bool
        Show a progress bar while computing (eager data only).

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
    >>> res = ds.corrstat.bootstrap(target="expert_relevance", level="system", method="kendall",
    ...                             metrics=["rouge_2_f1"], n_resamples=200, rng=0)
    >>> float(res["low"][0]) < float(res["correlation"][0]) < float(res["high"][0])
    True
    """
    if not isinstance(level, str):  # several levels: one run each, with the same draws, along a `level` dim
        return _by_level(bootstrap, dict(locals()))
    min_pairs = _check_common(level, method, variant, min_pairs, KENDALL_VARIANTS, CORRELATE_LEVELS)
    check_choice(average, AVERAGES, "average")
    check_bootstrap_variant(level, method, variant)
    dims = check_resample(resample)
    n_resamples = check_positive_int(n_resamples, "n_resamples")
    batch = check_batch(batch)
    confidence_level = check_confidence_level(confidence_level)
    check_choice(ci, CI_METHODS, "ci")
    epsilon = _check_epsilon(epsilon, level=level, method=method, variant=variant, ci=ci)
    calibrate = epsilon == "calibrate"
    if ci == "bca" and len(dims) != 1:
        raise ValueError(
            f"ci='bca' needs exactly one resampled dim (its jackknife is over that dim's units), "
            f"got resample={dims}; use ci='percentile' or 'basic' for BOOT-BOTH"
        )
    x, z, _ = split_scores(data, target=target, metrics=metrics, level=level, along=dims)
    lazy = x.chunks is not None or z.chunks is not None
    if batch is None:
        batch = default_batch(default_metric_chunk(x.sizes["metric"]), x.sizes[SYSTEM], x.sizes[INPUT], level, method,
                              calibrate=calibrate)
    batch = min(batch, n_resamples)
    plan = batch_plan(xr.broadcast(x, z)[0], n_resamples, batch, level=level, method=method, calibrate=calibrate)
    seed = resolve_seed(rng)
    kw = dict(level=level, method=method, variant=variant, min_pairs=min_pairs,
              complete_inputs=bool(complete_inputs), skipna=bool(skipna), epsilon=epsilon, average=average)

    point = _calibrated_point(x, z, level, variant) if calibrate else _point(x, z, kw)
    draws, n_draws, *eps_draws = bootstrap_draws(x, z, seed=seed, resample=dims, n_resamples=n_resamples,
                                                 batch=batch, **kw)
    defined = draws.notnull()
    n_undefined = (~defined).sum(RESAMPLE_DIM)

    def interval(d, est, *jack):
        if ci == "percentile":
            return percentile_ci(d, confidence_level)
        if ci == "basic":
            return basic_ci(d, est, confidence_level)
        return bca_ci(d, est, jack[0], confidence_level)

    extra = [_jackknife(x, z, dims[0], kw)] if ci == "bca" else []
    low, high = xr.apply_ufunc(
        interval, draws, point["correlation"], *extra,
        input_core_dims=[[RESAMPLE_DIM], []] + [["_jackknife"]] * len(extra),
        output_core_dims=[[], []],
        dask="parallelized",
        output_dtypes=[np.float64, np.float64],
        dask_gufunc_kwargs={"allow_rechunk": True},
    )
    out = xr.Dataset({"correlation": point["correlation"], "low": low, "high": high, "n_undefined": n_undefined})
    out = out.assign_coords(n=point["n"])
    if calibrate:
        out["epsilon"] = point["epsilon"]
        out["epsilon_low"], out["epsilon_high"] = xr.apply_ufunc(
            percentile_ci, eps_draws[0], kwargs=dict(confidence_level=confidence_level),
            input_core_dims=[[RESAMPLE_DIM]], output_core_dims=[[], []], dask="parallelized",
            output_dtypes=[np.float64, np.float64], dask_gufunc_kwargs={"allow_rechunk": True},
        )
        out["epsilon"].attrs["long_name"] = "metric-tie threshold calibrated on the data"
        out["epsilon_low"].attrs["long_name"] = f"lower bound of the {confidence_level:g} percentile interval " \
                                                "of the per-draw calibrated epsilon"
        out["epsilon_high"].attrs["long_name"] = f"upper bound of the {confidence_level:g} percentile interval " \
                                                 "of the per-draw calibrated epsilon"
    if keep_distribution:
        out["distribution"] = draws
        out["distribution_n"] = n_draws
        if calibrate:
            out["epsilon_distribution"] = eps_draws[0]
    out.attrs = {
        "statistic": "level correlation with human judgments",
        "target": target if isinstance(target, str) else list(map(str, target)),
        "level": level, "method": method, "variant": variant if method == "kendall" else "",
        "epsilon": epsilon if method == "kendall" else 0.0, "average": average,
        "resample": list(dims), "n_resamples": n_resamples, "confidence_level": confidence_level,
        "ci": ci, "seed": seed, "batch": batch, "draws_per_batch": plan[0], "draws_per_task": plan[1],
        "skipna": int(bool(skipna)),
        "complete_inputs": int(bool(complete_inputs)), "min_pairs": min_pairs,
    }
    out["low"].attrs["long_name"] = f"lower bound of the {confidence_level:g} {ci} interval"
    out["high"].attrs["long_name"] = f"upper bound of the {confidence_level:g} {ci} interval"
    out["n_undefined"].attrs["long_name"] = "draws whose statistic is undefined (NaN), left out of the interval"
    if lazy:
        return out
    return compute_with_progress(out, progress)


def _by_level(func, options: dict) -> xr.Dataset:
    """``func`` run at each of ``options["level"]`` with one seed, stacked along a ``level`` dim."""
    level = options["level"]
    try:
        levels = list(level)
    except TypeError:
        raise ValueError(f"level must be one of {CORRELATE_LEVELS} or a list of them, got {level!r}") from None
    if not levels:
        raise ValueError(f"level must be one of {CORRELATE_LEVELS} or a list of them, got an empty list")
    if len(set(map(str, levels))) != len(levels):
        raise ValueError(f"level names a level twice: {levels!r}")
    for lev in levels:
        check_choice(lev, CORRELATE_LEVELS, "level")
    seed = resolve_seed(options["rng"])
    runs = [func(**{**options, "level": lev, "rng": seed}) for lev in levels]
    out = xr.concat(runs, dim="level", coords="different", compat="equals", combine_attrs="drop_conflicts")
    out = out.assign_coords(level=levels)
    out.attrs = {**out.attrs, "level": list(levels)}  # options that differ by level (batch) are left out
    return out


def _point(x, z, kw):
    r, n = level_statistic(x, z, **kw)
    return xr.Dataset({"correlation": r, "n": n})


def _calibrated_point(x, z, level, variant):
    """Tie calibration on the data itself: the draw in which every unit appears once."""

    def run(xv, zv):
        s, i = xv.shape[-2:]
        return resampled_calibration(xv, zv, level=level, variant=variant, sys_idx=np.arange(s)[None],
                                     inp_idx=np.arange(i)[None])

    if x.chunks is not None or z.chunks is not None:
        x, z = x.chunk({SYSTEM: -1, INPUT: -1}), z.chunk({SYSTEM: -1, INPUT: -1})
    r, n, eps = xr.apply_ufunc(
        lambda xv, zv: tuple(a[..., 0] for a in run(xv, zv)), x, z,
        input_core_dims=[[SYSTEM, INPUT], [SYSTEM, INPUT]], output_core_dims=[[], [], []],
        dask="parallelized", output_dtypes=[np.float64, np.int64, np.float64],
    )
    return xr.Dataset({"correlation": r, "n": n, "epsilon": eps})


def fisher(
    data: xr.Dataset | xr.DataArray,
    *,
    target: Hashable | Sequence[Hashable],
    level: Literal["system", "input", "global"] = "system",
    method: Literal["pearson", "spearman", "kendall"] = "pearson",
    variant: Literal["b", "c"] = "b",
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
    at system level, cells at global level, and at input level the largest number
    of systems correlated for any one input (the per-input sample size; the input
    average is not an n-sample correlation, so this interval is conservative there).
    Returned as coordinate ``n``; NaN bounds where ``n <= b``.

    Examples
    --------
    >>> import xcorrstat
    >>> ds = xcorrstat.datasets.summeval()
    >>> res = ds.corrstat.fisher(target="expert_relevance", level="system", metrics=["qa_eval_f1"])
    >>> int(res["n"][0])
    16
    """
    min_pairs = _check_common(level, method, variant, min_pairs)
    confidence_level = check_confidence_level(confidence_level)
    x, z, _ = split_scores(data, target=target, metrics=metrics, level=level)
    kw = dict(level=level, method=method, variant=variant, min_pairs=min_pairs,
              complete_inputs=bool(complete_inputs), skipna=bool(skipna))
    point = _point(x, z, kw)
    n = point["n"]
    if level == "input":
        valid = x.notnull() & z.notnull()
        n = valid.sum(SYSTEM).max(INPUT).astype(np.int64)
    low, high = xr.apply_ufunc(
        fisher_ci, point["correlation"], n,
        kwargs=dict(method=method, confidence_level=confidence_level),
        output_core_dims=[[], []], dask="parallelized", output_dtypes=[np.float64, np.float64],
    )
    out = xr.Dataset({"correlation": point["correlation"], "low": low, "high": high}).assign_coords(n=n)
    out.attrs = {
        "statistic": "level correlation with human judgments",
        "target": target if isinstance(target, str) else list(map(str, target)),
        "level": level, "method": method, "variant": variant if method == "kendall" else "",
        "ci": "fisher", "confidence_level": confidence_level,
        "n_meaning": "pairs correlated (input level: most systems correlated for one input)",
    }
    return out
