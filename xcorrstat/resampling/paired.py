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

import numpy as np
import xarray as xr

from ..correlate import level_statistic
from ..kernels import LEVELS, METHODS
from ..options import OPTIONS
from ..schema import INPUT, METRIC, SYSTEM, as_dataset, select_scores, split_scores
from ..validation import check_batch, check_choice, check_confidence_level, check_min_pairs, check_positive_int
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
from .intervals import percentile_ci
from .statistics import check_bootstrap_variant

__all__ = ["paired_bootstrap_test", "paired_bootstrap_pvalue", "ALTERNATIVES", "PVALUES", "TIE_TOLERANCE"]

ALTERNATIVES = ("greater", "less", "two-sided")
PVALUES = ("plus-one", "fraction")
# |difference| below which a centred draw counts as equal to the observed delta
TIE_TOLERANCE = 1e-12


def paired_bootstrap_pvalue(
    draws: np.ndarray,
    observed: np.ndarray,
    *,
    alternative: Literal["greater", "less", "two-sided"] = "greater",
    pvalue: Literal["plus-one", "fraction"] = "plus-one",
) -> np.ndarray:
    """P-value of the paired bootstrap test from the draws of ``delta`` (NumPy only).

    With ``delta`` the observed difference and ``delta*_b`` the defined (non-NaN)
    draws, ``B`` of them, the count ``k`` is taken over the centred draws
    ``delta*_b - delta``:

    * ``"greater"`` (H1: ``delta > 0``): ``k = #{delta*_b - delta >= delta}``,
      i.e. ``delta*_b >= 2 delta``;
    * ``"less"`` (H1: ``delta < 0``): ``k = #{delta*_b - delta <= delta}``;
    * ``"two-sided"`` (H1: ``delta != 0``): ``k = #{|delta*_b - delta| >= |delta|}``.

    A centred draw within :data:`TIE_TOLERANCE` (1e-12) of the boundary counts as
    extreme. ``pvalue="plus-one"`` gives ``(1 + k) / (1 + B)``, ``"fraction"``
    gives ``k / B``.

    Parameters
    ----------
    draws : array_like (..., B)
        ``delta*`` of every draw along the last axis; NaN draws are left out.
    observed : array_like (...)
        The observed ``delta``; broadcast against ``draws`` without its last axis.
    alternative : {"greater", "less", "two-sided"}
        Direction of the alternative hypothesis.
    pvalue : {"plus-one", "fraction"}
        Monte-Carlo convention.

    Returns
    -------
    ndarray (...)
        The p-value; NaN where ``observed`` is NaN or no draw is defined.

    Examples
    --------
    >>> draws = np.array([0.1, 0.2, 0.45, np.nan, 0.5])
    >>> float(paired_bootstrap_pvalue(draws, 0.2, pvalue="fraction"))  # draws >= 0.4: 2 of 4
    0.5
    >>> float(paired_bootstrap_pvalue(draws, 0.2))  # (1 + 2) / (1 + 4)
    0.6
    """
    check_choice(alternative, ALTERNATIVES, "alternative")
    check_choice(pvalue, PVALUES, "pvalue")
    draws = np.asarray(draws, dtype=np.float64)
    observed = np.asarray(observed, dtype=np.float64)
    if draws.ndim == 0:
        raise ValueError("draws must have a last axis of draws, got a scalar")
    obs = observed[..., None]
    defined = ~np.isnan(draws)
    with np.errstate(invalid="ignore"):
        centred = draws - obs
        if alternative == "greater":
            extreme = centred >= obs - TIE_TOLERANCE
        elif alternative == "less":
            extreme = centred <= obs + TIE_TOLERANCE
        else:
            extreme = np.abs(centred) >= np.abs(obs) - TIE_TOLERANCE
    count = np.sum(extreme & defined, axis=-1)
    b = np.sum(defined, axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = (1.0 + count) / (1.0 + b) if pvalue == "plus-one" else count / b
    return np.where((b > 0) & ~np.isnan(observed), p, np.nan)


def _check_name(ds: xr.Dataset, name, argument: str) -> None:
    if not isinstance(name, Hashable):
        raise TypeError(f"{argument} must be one score name, got {name!r}")
    select_scores(ds, [name], [], argument)


def paired_bootstrap_test(
    data: xr.Dataset | xr.DataArray,
    *,
    x: Hashable,
    y: Hashable,
    target: Hashable,
    level: Literal["system", "input", "global"] = "system",
    method: Literal["pearson", "spearman", "kendall"] = "pearson",
    variant: Literal["b", "c", "a", "23", "acc23"] = "b",
    resample: str | Sequence[str] = ("system", "input"),
    n_resamples: int = 1000,
    alternative: Literal["greater", "less", "two-sided"] = "greater",
    confidence_level: float = 0.95,
    rng: int | np.random.Generator | np.random.SeedSequence | None = None,
    pvalue: Literal["plus-one", "fraction"] = "plus-one",
    batch: int | None = None,
    keep_distribution: bool = False,
    skipna: bool = True,
    min_pairs: int | None = None,
    progress: bool = False,
) -> xr.Dataset:
    """Paired bootstrap test of ``delta = rho(x, target) - rho(y, target)`` at a level.

    Each draw resamples the dims named by ``resample`` with replacement and
    computes both correlations on that same resample (paired), giving
    ``delta*_b = rho*_b(x) - rho*_b(y)``. The ``rho*_b`` are exactly the draws
    :func:`xcorrstat.bootstrap` gives each metric with the same ``rng``; they are
    keyed by draw id, so the numbers do not depend on ``batch``, chunking or scheduler.

    Parameters
    ----------
    data : Dataset or DataArray
        Scores with ``system`` and ``input`` dims (extra dims are batch dims).
    x, y : str
        The two metrics compared. With the default ``alternative="greater"``,
        H1 is that ``x`` correlates better with the target than ``y``.
    target : str
        Human score.
    level, method, variant, skipna, min_pairs
        As in :func:`xcorrstat.correlate`.
    resample : str or tuple of str
        Dims to resample: ``"system"`` (BOOT-SYSTEMS), ``"input"`` (BOOT-INPUTS)
        or ``("system", "input")`` (BOOT-BOTH, the default).
    n_resamples : int
        Number of draws ``B``.
    alternative : {"greater", "less", "two-sided"}
        Direction of H1 (see Notes).
    confidence_level : float
        Level of the two-sided percentile interval of ``delta``.
    rng : int, Generator, SeedSequence or None
        Seed; the one used is recorded in ``attrs["seed"]``.
    pvalue : {"plus-one", "fraction"}
        ``(1 + k) / (1 + B)`` (default) or ``k / B`` as in the paper's experiment code (see Notes).
    batch : int, optional
        Draws computed together, as in :func:`xcorrstat.bootstrap` (attrs ``batch``,
        ``draws_per_batch`` and ``draws_per_task``). The numbers do not depend on them.
    keep_distribution : bool
        Also return ``distribution`` (every ``delta*_b``) and ``metric_distribution``
        (``rho*_b`` of x and of y, along ``metric``), both along a ``resample`` dim.
    progress : bool
        Show a progress bar while computing (eager data only).

    Returns
    -------
    Dataset
        ``delta`` (observed), ``pvalue``, ``low`` and ``high`` (percentile interval of
        ``delta``), ``n_undefined`` (draws whose ``delta*_b`` is NaN -- either
        correlation undefined -- left out of the p-value and the interval) and
        ``correlation`` (the observed ``rho`` of x and y along ``metric``, with
        coordinate ``n``); optionally the distributions. Attrs record every option.
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
    >>> from xcorrstat.resampling.paired import paired_bootstrap_test
    >>> ds = xcorrstat.datasets.summeval()
    >>> res = paired_bootstrap_test(ds, x="qa_eval_f1", y="rouge_2_f1", target="expert_relevance",
    ...                             level="system", method="kendall", n_resamples=200, rng=0)
    >>> 0 < float(res["pvalue"]) <= 1
    True
    >>> bool(res["low"] <= res["high"])
    True
    """
    check_choice(level, LEVELS, "level")
    check_choice(method, METHODS, "method")
    check_bootstrap_variant(level, method, variant)
    check_choice(alternative, ALTERNATIVES, "alternative")
    check_choice(pvalue, PVALUES, "pvalue")
    if not isinstance(skipna, (bool, np.bool_)):
        raise TypeError(f"skipna must be True or False, got {skipna!r}")
    min_pairs = check_min_pairs(OPTIONS["min_pairs"] if min_pairs is None else min_pairs)
    dims = check_resample(resample)
    n_resamples = check_positive_int(n_resamples, "n_resamples")
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
    lazy = scores.chunks is not None or z.chunks is not None
    if batch is None:
        batch = default_batch(default_metric_chunk(2), scores.sizes[SYSTEM], scores.sizes[INPUT], level, method)
    batch = min(batch, n_resamples)
    plan = batch_plan(xr.broadcast(scores, z)[0], n_resamples, batch, level=level, method=method)
    seed = resolve_seed(rng)
    kw = dict(level=level, method=method, variant=variant, min_pairs=min_pairs,
              complete_inputs=False, skipna=bool(skipna))

    r, n = level_statistic(scores, z, **kw)
    delta = r.isel({METRIC: 0}, drop=True) - r.isel({METRIC: 1}, drop=True)
    per_metric, _ = bootstrap_draws(scores, z, seed=seed, resample=dims, n_resamples=n_resamples,
                                    batch=batch, **kw)
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
        kwargs=dict(confidence_level=confidence_level),
        dask="parallelized", output_dtypes=[np.float64, np.float64],
        dask_gufunc_kwargs={"allow_rechunk": True},
    )
    out = xr.Dataset({
        "delta": delta, "pvalue": p, "low": low, "high": high,
        "n_undefined": draws.isnull().sum(RESAMPLE_DIM),
        "correlation": r.assign_coords(n=n),
    })
    if keep_distribution:
        out["distribution"] = draws
        out["metric_distribution"] = per_metric
    out.attrs = {
        "test": "paired-bootstrap", "x": str(x), "y": str(y), "target": str(target),
        "level": level, "method": method, "variant": variant if method == "kendall" else "",
        "resample": list(dims), "n_resamples": n_resamples, "alternative": alternative,
        "pvalue": pvalue, "confidence_level": confidence_level, "ci": "percentile",
        "seed": seed, "batch": batch, "draws_per_batch": plan[0], "draws_per_task": plan[1],
        "skipna": int(bool(skipna)), "min_pairs": min_pairs,
        "null": "shifted bootstrap: delta*_b - delta stands for the null distribution of delta",
    }
    out["delta"].attrs["long_name"] = f"{method} correlation of x minus that of y, {level} level"
    out["pvalue"].attrs["long_name"] = f"paired bootstrap p-value ({alternative}, {pvalue})"
    out["low"].attrs["long_name"] = f"lower bound of the {confidence_level:g} percentile interval of delta"
    out["high"].attrs["long_name"] = f"upper bound of the {confidence_level:g} percentile interval of delta"
    out["n_undefined"].attrs["long_name"] = "draws whose delta is undefined (NaN), left out"
    if lazy:
        return out
    return compute_with_progress(out, progress)
