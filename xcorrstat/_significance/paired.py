"""Paired bootstrap test of the difference between two metrics' correlations with a target.

The statistic is ``delta = rho(X, Z) - rho(Y, Z)`` at a level. Draw ``b`` resamples
the named dims with replacement -- systems (BOOT-SYSTEMS), inputs (BOOT-INPUTS) or
both (BOOT-BOTH), as in Deutsch, Dror & Roth (TACL 2021) -- and uses the *same*
drawn systems and inputs for X, Y and Z, so ``delta*_b`` is paired. The draws come
from the bootstrap engine run on the two-metric stack ``[X, Y]``: the engine gives
every metric the same draws (keyed by draw id), so ``delta*_b`` is the difference of
the two metrics' ``b``-th bootstrap correlations, exactly as :func:`~xcorrstat.bootstrap`
computes them.

The p-value uses the shifted (centred) bootstrap distribution: ``delta*_b - delta``
estimates the null distribution of ``delta``, and the test counts how often it is
at least as extreme as the observed ``delta`` (:func:`paired_bootstrap_pvalue`).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Literal
from dataclasses import dataclass

import numpy as np
import xarray as xr

from .._notes import add_notes
from .._docs import fill_doc
from .._kernels.custom import own_name
from .._resampling.settings import Bootstrap, as_settings, single_test_draws
from .._types import Alternative, Level, PValue, Seed, Statistic, Variant
from .._correlation.estimates import level_statistic
from .._capabilities import check, check_refinements
from .._options import OPTIONS
from .._resampling.draws import resolve_seed
from .._resampling.engine import (
    RESAMPLE_DIM,
    batch_plan,
    bootstrap_draws,
    compute_with_progress,
    default_batch,
    default_metric_chunk,
)
from .._resampling.intervals import percentile_ci
from .._resampling.pvalues import ALTERNATIVES, PVALUES, paired_bootstrap_pvalue
from .._resampling.schemes import bootstrap_label, drawn_dims, parse_resample
from .._schema import INPUT, METRIC, SYSTEM, as_dataset
from .._selection import select_scores, split_scores
from .._validation import check_batch, check_choice, check_confidence_level, check_min_pairs, check_draw_count
from .common import pair_notes
from .._warn import one_call

__all__ = ["paired_bootstrap_test"]


@dataclass(frozen=True)
class _Options:
    """Normalised arguments of :func:`paired_bootstrap_test`."""

    scores: xr.DataArray  # (metric: [x, y], system, input, ...)
    z: xr.DataArray
    kw: dict
    dims: tuple[str, ...]
    n_resamples: int
    batch: int
    plan: tuple[int, int]  # draws per batch, draws per task
    confidence_level: float
    seed: int


def _check_name(ds: xr.Dataset, name, argument: str) -> None:
    if not isinstance(name, Hashable):
        raise TypeError(f"{argument} must be one score name, got {name!r}")
    select_scores(ds, [name], [], argument)


def _paired_bootstrap_test_iv(data: xr.Dataset | xr.DataArray, *, x: Hashable, y: Hashable, target: Hashable,
                              level: Level, method: Statistic, variant: Variant, resample: str | Sequence[str],
                              n_resamples: int, alternative: Alternative, confidence_level: float, rng: Seed,
                              pvalue: PValue, batch: int | None, skipna: bool, min_pairs: int | None) -> _Options:
    """Check and normalise every argument of :func:`paired_bootstrap_test`; split the scores."""
    check("paired_bootstrap_test", level=level, method=method, variant=variant)
    check_refinements("paired_bootstrap_test", level=level, method=method, variant=variant)
    check_choice(alternative, ALTERNATIVES, "alternative")
    check_choice(pvalue, PVALUES, "pvalue")
    if not isinstance(skipna, (bool, np.bool_)):
        raise TypeError(f"skipna must be True or False, got {skipna!r}")
    min_pairs = check_min_pairs(OPTIONS["min_pairs"] if min_pairs is None else min_pairs)
    dims = drawn_dims(data, parse_resample(resample))  # BOOT-SYSTEMS on system-level data
    n_resamples = check_draw_count(n_resamples, "n_resamples")
    batch = check_batch(batch)
    confidence_level = check_confidence_level(confidence_level)
    if not isinstance(target, str):
        raise TypeError(f"target must be one score name, got {target!r}")
    ds = as_dataset(data)
    _check_name(ds, x, "x")
    _check_name(ds, y, "y")
    if x == y:
        raise ValueError(f"x and y must be two different metrics, got x=y={x!r}")
    scores, z, _ = split_scores(ds, target=target, metrics=[x, y], level=level, along=dims)
    if batch is None:
        batch = default_batch(default_metric_chunk(2), scores.sizes[SYSTEM], scores.sizes[INPUT], level, method)
    batch = min(batch, n_resamples)
    plan = batch_plan(xr.broadcast(scores, z)[0], n_resamples, batch, level=level, method=method)
    kw = dict(level=level, method=method, variant=variant, min_pairs=min_pairs,
              complete_inputs=False, skipna=bool(skipna))
    return _Options(scores=scores, z=z, kw=kw, dims=dims, n_resamples=n_resamples, batch=batch, plan=plan,
                    confidence_level=confidence_level, seed=resolve_seed(rng))


def _attrs(o: _Options, x, y, target, alternative, pvalue) -> dict:
    kw = o.kw
    return {
        "test": "paired-bootstrap", "x": str(x), "y": str(y), "target": str(target),
        "level": kw["level"], "method": own_name(kw["method"]), "variant": kw["variant"] if kw["method"] == "kendall" else "",
        "resample": list(o.dims), "n_resamples": o.n_resamples, "alternative": alternative,
        "pvalue": pvalue, "confidence_level": o.confidence_level, "ci": "percentile",
        "rng": o.seed, "batch": o.batch, "draws_per_batch": o.plan[0], "draws_per_task": o.plan[1],
        "skipna": int(kw["skipna"]), "min_pairs": kw["min_pairs"],
        "null": "shifted bootstrap: delta*_b - delta stands for the null distribution of delta",
        "scheme": bootstrap_label(o.dims),
    }


def _long_names(out: xr.Dataset, method, level, alternative, pvalue, confidence_level: float) -> None:
    out["delta"].attrs["long_name"] = f"{method} correlation of x minus that of y, {level} level"
    out["pvalue"].attrs["long_name"] = f"paired bootstrap p-value ({alternative}, {pvalue})"
    out["low"].attrs["long_name"] = f"lower bound of the {confidence_level:g} percentile interval of delta"
    out["high"].attrs["long_name"] = f"upper bound of the {confidence_level:g} percentile interval of delta"
    out["n_undefined"].attrs["long_name"] = "draws whose delta is undefined (NaN), left out"


@one_call
@fill_doc
def paired_bootstrap_test(
    data: xr.Dataset | xr.DataArray,
    *,
    x: Hashable,
    y: Hashable,
    target: Hashable,
    test: Bootstrap | Literal["bootstrap"] = "bootstrap",
    level: Level = "system",
    method: Statistic = "pearson",
    variant: Variant = "b",
    alternative: Alternative = "greater",
    confidence_level: float = 0.95,
    skipna: bool = True,
    min_pairs: int | None = None,
) -> xr.Dataset:
    """Paired bootstrap test of ``delta = rho(x, target) - rho(y, target)`` at a level.

    Each draw resamples the dims named by ``resample`` with replacement and
    computes both correlations on that same resample (paired), giving
    ``delta*_b = rho*_b(x) - rho*_b(y)``. The ``rho*_b`` are exactly the draws
    :func:`xcorrstat.bootstrap` gives each metric with the same ``rng``; they are
    keyed by draw id, so the numbers do not depend on ``batch``, chunking or scheduler.

    Parameters
    ----------
    %(data)s
        Extra dims are batch dims.
    x, y : str
        The two metrics compared. With the default ``alternative="greater"``,
        H1 is that ``x`` correlates better with the target than ``y``.
    %(target)s
    test : Bootstrap, default Bootstrap()
        The draws: the dims resampled (``resample``, default BOOT-BOTH), ``n_resamples``
        (default 1,000), ``rng``, ``pvalue`` (see Notes) and ``keep_distribution`` (also
        return ``distribution``, every ``delta*_b``, and ``metric_distribution``, ``rho*_b``
        of x and of y along ``metric``, both along a ``resample`` dim).
    %(level)s
        At within-system level, resampling inputs draws the items of each system's
        correlation and resampling systems draws the correlations averaged.
    %(method)s
    %(variant)s
    %(alternative)s
        See Notes.
    confidence_level : float, default 0.95
        Level of the two-sided percentile interval of ``delta``.
    %(skipna)s
    %(min_pairs)s

    Returns
    -------
    Dataset
        ``delta`` (observed), ``pvalue``, ``low`` and ``high`` (percentile interval of
        ``delta``), ``n_undefined`` (draws whose ``delta*_b`` is NaN -- either
        correlation undefined -- left out of the p-value and the interval) and
        ``correlation`` (the observed ``rho`` of x and y along ``metric``, with
        coordinate ``n``); optionally the distributions. Attrs record every option
        (``resample`` the dims, ``scheme`` their label, e.g. ``"BOOT-BOTH"``).
        Dask-backed input gives a lazy result; NumPy input is computed.

    Notes
    -----
    The p-value follows the paired bootstrap test in the experiment code of
    Deutsch, Dror & Roth (TACL 2021; ``bootstrap_diff_test``), the shifted-distribution
    test of Efron & Tibshirani (1993) as in Berg-Kirkpatrick et al. (2012): the centred draws ``delta*_b - delta``
    stand for the null distribution of ``delta``, and over the ``B`` defined draws

    * ``"greater"`` counts ``k = #{delta*_b - delta >= delta}`` (``delta*_b >= 2 delta``),
      the paper's one-tailed rule;
    * ``"less"`` counts ``k = #{delta*_b - delta <= delta}``;
    * ``"two-sided"`` counts ``k = #{|delta*_b - delta| >= |delta|}``, both tails
      of the centred distribution. (The paper's code instead compares
      ``|delta*_b| >= 2 |delta|``, which for draws centred near ``delta`` counts
      almost only one tail, so it is close to the one-sided p-value.)

    Ties count as extreme (``>=``, within 1e-12), so identical metrics get p = 1.
    ``pvalue="fraction"`` reports ``k / B``, the paper's value. The default
    ``"plus-one"`` reports ``(1 + k) / (1 + B)`` (Davison & Hinkley 1997): never 0
    with finite ``B``, at most ``1 / (1 + B)`` above ``k / B``, and the same
    convention as :func:`xcorrstat.permutation_test`. The p-value is NaN when
    ``delta`` is undefined or no draw is defined. The interval ``[low, high]`` holds
    the ``(1 -/+ confidence_level) / 2`` quantiles (NumPy's default linear method)
    of the defined ``delta*_b``, whatever ``alternative``.

    Examples
    --------
    >>> import xcorrstat
    >>> ds = xcorrstat.datasets.summeval()
    >>> res = xcorrstat.paired_bootstrap_test(ds, x="qa_eval_f1", y="rouge_2_f1", target="expert_relevance",
    ...                                       method="kendall", test=xcorrstat.Bootstrap(n_resamples=200, rng=0))
    >>> 0 < float(res["pvalue"]) <= 1, res.attrs["scheme"]
    (True, 'BOOT-BOTH')
    >>> bool(res["low"] <= res["high"])
    True
    """
    settings = as_settings(test, "test", (Bootstrap,))
    drawn = single_test_draws(settings)  # the draws' settings, checked once
    pvalue = drawn["pvalue"]
    o = _paired_bootstrap_test_iv(data, x=x, y=y, target=target, level=level, method=method, variant=variant,
                                  resample=drawn["resample"], n_resamples=drawn["n_resamples"],
                                  alternative=alternative, confidence_level=confidence_level, rng=drawn["rng"],
                                  pvalue=pvalue, batch=OPTIONS["batch"], skipna=skipna, min_pairs=min_pairs)
    scores, z = o.scores, o.z
    lazy = scores.chunks is not None or z.chunks is not None
    r, n = level_statistic(scores, z, **o.kw)
    delta = r.isel({METRIC: 0}, drop=True) - r.isel({METRIC: 1}, drop=True)
    per_metric, _ = bootstrap_draws(scores, z, seed=o.seed, resample=o.dims, n_resamples=o.n_resamples,
                                    batch=o.batch, **o.kw)
    draws = per_metric.isel({METRIC: 0}, drop=True) - per_metric.isel({METRIC: 1}, drop=True)
    p = xr.apply_ufunc(
        paired_bootstrap_pvalue, draws, delta,
        input_core_dims=[[RESAMPLE_DIM], []],
        kwargs=dict(alternative=alternative, pvalue=pvalue),
        dask="parallelized", output_dtypes=[np.float64],
        dask_gufunc_kwargs={"allow_rechunk": True},
    )
    low, high = xr.apply_ufunc(
        percentile_ci, draws,
        input_core_dims=[[RESAMPLE_DIM]],
        output_core_dims=[[], []],
        kwargs=dict(confidence_level=o.confidence_level),
        dask="parallelized", output_dtypes=[np.float64, np.float64],
        dask_gufunc_kwargs={"allow_rechunk": True},
    )
    out = xr.Dataset({
        "delta": delta, "pvalue": p, "low": low, "high": high,
        "n_undefined": draws.isnull().sum(RESAMPLE_DIM),
        "correlation": r.assign_coords(n=n),
    })
    if drawn["keep_distribution"]:
        out["distribution"] = draws
        out["metric_distribution"] = per_metric
    out.attrs = _attrs(o, x, y, target, alternative, pvalue)
    add_notes(out.attrs, *pair_notes(data, x=x, y=y, target=target))
    _long_names(out, method, level, alternative, pvalue, o.confidence_level)
    if lazy:
        return out
    return compute_with_progress(out, True)
