""":func:`xcorrstat.permutation_test`'s two tests with tie thresholds: the pair-outcome test
(``swap="pairs"``, :mod:`.pairoutcome`) of two metrics, and the score test that re-calibrates both
metrics in every draw (``swap="scores", epsilon="calibrate"``, mt-metrics-eval's ``PermutationSigDiff``
with ``corr_fcn=KendallWithTiesOpt``).

Both build one graph per label of the extra dims -- the label's prepared tables, then its batches
of draws as tasks -- so Dask-backed scores give a lazy result and eager scores run the same graph
at once.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
import xarray as xr

from .._capabilities import check
from .._kernels.mt.swap_ties import swap_pair_table, swapped_calibration
from .._kernels.mt.ties import calibrate_epsilon
from .._mt.ties import TIE_LEVELS, group_shape, level_groups
from .._resampling.draws import permutation_masks, resolve_seed
from .._resampling.engine import RESAMPLE_DIM, compute_with_progress
from .._resampling.memory import swap_calibration_batch
from .._resampling.pvalues import permutation_pvalue
from .._resampling.schemes import parse_permute, permutation_label
from .._resampling.swapstats import standardise as zscores
from .._selection import metric_pair, split_scores
from .._types import Alternative, Level, PValue, Standardise, Statistic, SwapUnit, Variant
from .pairoutcome import (PairScores, Swap, calibrated_epsilons, check_group_size, common_iv, draw_batches, grouped,
                          pair_attrs, pair_draws, scores_of, stacked, thresholds)

__all__ = ["run_permutation_test"]


def _best(mats: np.ndarray, gz: np.ndarray, level: str, variant: Variant) -> np.ndarray:
    """The calibrated acc_eq (tau_eq) of each (..., S, I) matrix."""
    return calibrate_epsilon(level_groups(mats, mats, level)[0], gz, variant=variant)[1]


def _recalibrated_task(table: dict[str, np.ndarray], ids: np.ndarray, *, shape: tuple[int, int], level: str,
                       variant: Variant, seed: int, scheme: SwapUnit) -> np.ndarray:
    """delta' of draws ``ids``: each draw a walk along the sorted pairings of the pairs (``table``)."""
    m = permutation_masks(seed, ids, shape[0], shape[1], scheme)
    best_x, best_y = swapped_calibration(table, level_groups(m, m, level)[0], variant=variant)
    return best_x - best_y


def _recalibrated_prepared(x: np.ndarray, z: np.ndarray, names: Sequence[str], *, level: str, variant: Variant,
                           skipna: bool) -> tuple:
    """One label's sorted table of its pairs' pairings, which the draws walk along (:func:`swap_pair_table`
    of the z-scores), observed calibrated statistics (2,), whether a cell is missing (NaN without
    ``skipna``) and the thresholds calibrated on the raw scores (2,)."""
    gx, gz = grouped(x, z, names, level)
    zx, zy = zscores(x)  # mt-metrics-eval z-scores each metric over all its cells
    gap = not skipna and bool(np.isnan(x).any() or np.isnan(z).any())
    gzx, gzy = (level_groups(v, v, level)[0] for v in (zx, zy))
    table = swap_pair_table(gzx, gzy, gz)  # sorted once for every draw
    return table, _best(np.stack([zx, zy]), gz, level, variant), gap, calibrated_epsilons(gx, gz, variant)


def _recalibrated_finished(prepared: tuple, *parts: np.ndarray) -> tuple[np.ndarray, ...]:
    """One label's observed statistics (2,), draws' delta' (B,) and thresholds (2,)."""
    observed, gap, eps = prepared[1:]
    draws = np.concatenate(parts)
    if gap:
        return np.full_like(observed, np.nan), np.full_like(draws, np.nan), eps
    return observed, draws, eps


def _recalibrated_draws(s: PairScores, *, level: str, variant: Variant, scheme: SwapUnit, seed: int,
                        n_resamples: int, batch: int | None, skipna: bool) -> tuple[Any, Any, Any, int]:
    """The score test with per-draw calibration: observed (*lead, 2), draws' delta' (*lead, n) and the
    thresholds of the observed scores (*lead, 2), lazy."""
    import dask

    groups, items = group_shape(level, s.x.shape[-2], s.x.shape[-1])
    b = swap_calibration_batch(groups, items, n_resamples, batch)  # the table is checked against the budget here
    kw = {"level": level, "variant": variant, "seed": seed, "scheme": scheme, "shape": s.x.shape[-2:]}
    labels = []
    for idx in np.ndindex(*s.outer):
        prep = dask.delayed(_recalibrated_prepared, nout=4)(s.x[idx], s.z[idx], s.names, level=level,
                                                            variant=variant, skipna=skipna)
        tasks = [dask.delayed(_recalibrated_task)(prep[0], ids, **kw)
                 for ids in draw_batches(n_resamples, b)]
        labels.append(dask.delayed(_recalibrated_finished, nout=3)(prep, *tasks))
    shapes = [(2,), (n_resamples,), (2,)]
    parts = [stacked([d[k] for d in labels], shape, np.float64, s.outer) for k, shape in enumerate(shapes)]
    return parts[0], parts[1], parts[2], b


def _two_metric_iv(data: xr.Dataset | xr.DataArray, *, x: Hashable, y: Hashable, target: Hashable, level: Level,
                   method: Statistic, variant: Variant, permute: str | tuple[str, ...], standardise: Standardise,
                   early_stop: float | None, swap: Swap, n_resamples: int, alternative: Alternative, pvalue: PValue,
                   batch: int | None, min_pairs: int | None) -> tuple[PairScores, int, int | None, int]:
    operation = "permutation_test(test=Permutation(swap='pairs'))"
    if swap == "scores":  # re-calibrated in every draw
        operation = "permutation_test(test=Permutation(epsilon='calibrate'))"
        check(operation, level=level, method=method, variant=variant)
        if standardise != "cells" or early_stop is not None:
            raise ValueError("swap='scores' with epsilon='calibrate' takes standardise='cells' and early_stop=None")
        parse_permute(permute)
    n_resamples, batch, min_pairs = common_iv(operation, level=level, method=method, variant=variant,
                                              permute=permute if swap == "pairs" else ("system", "input"),
                                              standardise=standardise, early_stop=early_stop,
                                              n_resamples=n_resamples, alternative=alternative, pvalue=pvalue,
                                              batch=batch, min_pairs=min_pairs)
    ds = metric_pair(data, target=target, x=x, y=y)
    scores, z, _ = split_scores(ds, target=target, metrics=[x, y], level=level)
    return scores_of(scores, z), n_resamples, batch, min_pairs


def run_permutation_test(data, *, x, y, target, level, method, variant, permute, standardise, early_stop, swap,
                         epsilon, n_resamples, alternative, rng, pvalue, batch, keep_distribution, skipna,
                         min_pairs) -> xr.Dataset:
    """:func:`xcorrstat.permutation_test` with ``swap="pairs"``, or ``swap="scores"`` with
    ``epsilon="calibrate"`` (see its docstring)."""
    s, n_resamples, batch, min_pairs = _two_metric_iv(data, x=x, y=y, target=target, level=level, method=method,
                                                      variant=variant, permute=permute, standardise=standardise,
                                                      early_stop=early_stop, swap=swap, n_resamples=n_resamples,
                                                      alternative=alternative, pvalue=pvalue, batch=batch,
                                                      min_pairs=min_pairs)
    seed = resolve_seed(rng)
    if swap == "pairs":
        given, how = thresholds(epsilon, s, level, variant)
        res = pair_draws(s, given, level=level, variant=variant, min_pairs=min_pairs, skipna=skipna, seed=seed,
                          n_resamples=n_resamples, batch=batch, pi=np.array([0]), pk=np.array([1]))
        observed, draws, eps, per_batch = res.observed, res.draws[..., 0, :], res.epsilon, res.per_batch
        attrs = pair_attrs(level=level, how=how, n_resamples=n_resamples, alternative=alternative, pvalue=pvalue,
                       seed=seed, batch=batch, per_batch=per_batch, skipna=skipna, min_pairs=min_pairs,
                       variant=variant)
    else:
        scheme = parse_permute(permute)
        check_group_size(s, level)
        observed, draws, eps, per_batch = _recalibrated_draws(s, level=level, variant=variant, scheme=scheme,
                                                              seed=seed, n_resamples=n_resamples, batch=batch,
                                                              skipna=skipna)
        attrs = {"level": level, "method": "kendall", "variant": variant, "swap": "scores",
                 "epsilon": "calibrate in every draw", "grouping": TIE_LEVELS[level], "permute": scheme,
                 "scheme": permutation_label(scheme), "standardise": "cells", "n_resamples": n_resamples,
                 "alternative": alternative, "pvalue": pvalue, "rng": seed, "draws_per_batch": per_batch,
                 "batch": per_batch if batch is None else batch, "skipna": int(skipna)}
    dims = s.lead
    dist = xr.DataArray(draws, dims=(*dims, RESAMPLE_DIM), coords=s.coords)
    delta = xr.DataArray(observed[..., 0] - observed[..., 1], dims=dims, coords=s.coords)
    p = xr.apply_ufunc(permutation_pvalue, dist, delta, input_core_dims=[[RESAMPLE_DIM], []], dask="parallelized",
                       output_dtypes=[np.float64], kwargs={"alternative": alternative, "pvalue": pvalue})
    out = xr.Dataset({
        "delta": delta, "pvalue": p, "n_resamples_used": (dims, np.full(delta.shape, n_resamples)),
        "n_undefined": dist.isnull().sum(RESAMPLE_DIM), "epsilon_x": (dims, eps[..., 0]),
        "epsilon_y": (dims, eps[..., 1]),
    }, coords=s.coords)
    if keep_distribution:
        out["distribution"] = dist
    out.attrs = {"test": "permutation", "x": str(x), "y": str(y), "target": str(target), **attrs}
    out["delta"].attrs["long_name"] = f"Kendall {variant} of x minus that of y, {level} level, own epsilons"
    return out if s.lazy else compute_with_progress(out, True)
