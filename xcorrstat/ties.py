"""Tie calibration on labelled data: the epsilon at which each metric's acc_eq (or tau_eq) is highest.

The numerical work is :func:`xcorrstat.kernels.ties.calibrate_epsilon` (one sort and
one cumulative sum per metric); this module lays the scores out in groups by level.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Literal

import numpy as np
import xarray as xr

from .kernels.ties import TIE_VARIANTS, calibrate_epsilon
from .kernels.levels import system_means
from .schema import aligned_scores
from .validation import check_choice

__all__ = ["TIE_LEVELS", "calibrate_ties"]

#: Levels of :func:`calibrate_ties` and the groups whose pairs they compare.
TIE_LEVELS = {
    "input": "pairs of systems within each input (mt-metrics-eval: average_by='item')",
    "within_system": "pairs of inputs within each system (average_by='sys')",
    "global": "pairs of all (system, input) cells (average_by='none')",
    "system": "pairs of per-system means",
}
MAX_GROUP = 5000  # items per group: pairs grow with its square


def _groups(x: np.ndarray, z: np.ndarray, level: str) -> tuple[np.ndarray, np.ndarray]:
    """(..., G, n) groups of items for a level, from (..., S, I) scores."""
    if level == "input":
        return np.swapaxes(x, -1, -2), np.swapaxes(z, -1, -2)
    if level == "within_system":
        return x, z
    if level == "global":
        return x.reshape(x.shape[:-2] + (1, -1)), np.broadcast_to(z, x.shape).reshape(x.shape[:-2] + (1, -1))
    mx, mz = system_means(x, z)
    return mx[..., None, :], mz[..., None, :]


def calibrate_ties(
    data: xr.Dataset | xr.DataArray,
    *,
    target: Hashable,
    metrics: Sequence[Hashable] | None = None,
    level: Literal["input", "within_system", "global", "system"] = "input",
    variant: Literal["acc23", "23"] = "acc23",
    keep_curve: bool = False,
) -> xr.Dataset:
    """The metric-tie threshold epsilon that maximises pairwise accuracy with ties, per metric.

    A pair of items is a metric tie when the metric's scores differ by at most
    epsilon (gold ties need exact equality). acc_eq = (concordant pairs + pairs tied in
    both) / pairs, computed per group and averaged over the groups with at least one
    pair; one epsilon is shared by all groups (Deutsch et al., 2023, "Ties Matter").
    tau_eq = 2 acc_eq - 1 has the same optimum.

    Parameters
    ----------
    data : Dataset or DataArray
        Scores with ``system`` and ``input`` dims; extra dims are calibrated label by label.
    target : str
        Human score.
    metrics : list of str, optional
        Default every non-human variable.
    level : {"input", "within_system", "global", "system"}, default "input"
        The groups: each input's systems; each system's inputs; all cells as one
        group; or the per-system means as one group.
    variant : {"acc23", "23"}
        Report acc_eq or tau_eq at the optimum.
    keep_curve : bool, default False
        Also return ``threshold`` and ``objective`` over a ``candidate`` dim: the
        objective at every candidate threshold (NaN padding where a value repeats).

    Returns
    -------
    Dataset
        ``epsilon`` (the smallest optimal threshold: 0 or a pair's ``|metric
        difference|``) and ``correlation`` (acc_eq or tau_eq there) over ``metric``;
        NaN where no group has a valid pair. Pairs with a missing score are left out.

    Notes
    -----
    Exact: every candidate threshold is evaluated, by sorting all pairs once by
    their metric difference and accumulating each pair's change of agreement, so
    there is no need to sample pairs (mt-metrics-eval's ``sample_rate``).

    Examples
    --------
    >>> import xcorrstat
    >>> ds = xcorrstat.datasets.summeval()
    >>> res = xcorrstat.calibrate_ties(ds, target="expert_relevance", metrics=["rouge_2_f1", "qa_eval_f1"])
    >>> list(res.data_vars)
    ['epsilon', 'correlation']
    """
    check_choice(level, tuple(TIE_LEVELS), "level")
    check_choice(variant, TIE_VARIANTS, "variant", " (acc_eq or tau_eq)")
    x, z, batch = aligned_scores(data, target=target, metrics=metrics)
    gx, gz = _groups(x.values.astype(np.float64), z.values.astype(np.float64), level)
    if gx.shape[-1] > MAX_GROUP:
        raise ValueError(f"level={level!r} compares groups of {gx.shape[-1]} items ({gx.shape[-1] ** 2 // 2} "
                         f"pairs each); more than {MAX_GROUP} items per group is not supported, use "
                         f"level='input' or 'within_system'")
    eps, best, thresholds, objective = calibrate_epsilon(gx, gz, variant=variant)
    coords = {d: x[d] for d in batch}
    out = xr.Dataset({"epsilon": (batch, eps), "correlation": (batch, best)}, coords=coords)
    if keep_curve:
        out["threshold"] = ((*batch, "candidate"), thresholds)
        out["objective"] = ((*batch, "candidate"), objective)
    out["epsilon"].attrs["long_name"] = "metric-tie threshold maximising the objective (|dm| <= epsilon ties)"
    out["correlation"].attrs["long_name"] = {"acc23": "acc_eq", "23": "tau_eq"}[variant] + " at epsilon"
    out.attrs = {"statistic": "tie calibration", "target": str(target), "level": level, "variant": variant,
                 "groups": TIE_LEVELS[level], "objective": "mean over groups with a pair of the group's value"}
    return out
