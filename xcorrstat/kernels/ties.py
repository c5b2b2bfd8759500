"""Tie calibration: the metric-tie threshold epsilon that maximises acc_eq (or tau_eq), by one sweep.

Deutsch et al. (2023, "Ties Matter") let a metric declare a tie between two items
when its scores differ by at most epsilon, and choose epsilon to maximise the
pairwise accuracy with ties,

    acc_eq = (C + T_gm) / N

(concordant pairs plus pairs tied in both, over all pairs), averaged over groups
(e.g. one group per input, pairs of systems within it), with one epsilon shared by
all groups. ``tau_eq = 2 acc_eq - 1`` has the same optimum.

The sweep: a pair agrees before it becomes a metric tie when
``sign(dm) == sign(dg)`` and after when the gold ties it (``dg == 0``). Sorting all
pairs of all groups by ``|dm|`` and accumulating ``(after - before) / N_g`` in that
order gives the objective at every candidate threshold (0 and each distinct
``|dm|``) at once: one sort and one cumulative sum per metric, instead of a full
recomputation per candidate.
"""

from __future__ import annotations

import numpy as np

__all__ = ["TIE_VARIANTS", "calibrate_epsilon", "pair_table"]

TIE_VARIANTS = ("acc23", "23")


def pair_table(x, z):
    """Every valid pair (a < b) of every group: ``(|dm|, before, after, weight)``, each (..., P).

    ``x`` and ``z`` are (..., G, n): G groups of n items. A pair is valid when both
    items have both scores. ``before``/``after`` are the pair's agreement (0/1) while
    it is not / is a metric tie; ``weight`` is ``1 / (G_used * N_g)``, with ``G_used`` the
    groups that have a pair, so summed agreements are the mean over groups of each
    group's accuracy. Invalid pairs get ``|dm| = inf`` and weight 0.
    """
    x = np.asarray(x, dtype=np.float64)
    z = np.asarray(z, dtype=np.float64)
    x, z = np.broadcast_arrays(x, z)
    n = x.shape[-1]
    a, b = np.triu_indices(n, 1)
    valid = ~np.isnan(x) & ~np.isnan(z)
    ok = valid[..., a] & valid[..., b]  # (..., G, P_g)
    with np.errstate(invalid="ignore"):
        dm = x[..., a] - x[..., b]
        dg = z[..., a] - z[..., b]
    before = (np.sign(dm) == np.sign(dg)) & ok
    after = (dg == 0) & ok
    n_pairs = ok.sum(axis=-1, keepdims=True)  # (..., G, 1)
    groups = (n_pairs > 0).sum(axis=-2, keepdims=True)  # (..., 1, 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        weight = np.where(ok, 1.0 / (n_pairs * groups), 0.0)
    dist = np.where(ok, np.abs(dm), np.inf)
    lead = x.shape[:-2]
    flat = lead + (-1,)
    return (dist.reshape(flat), before.reshape(flat).astype(np.float64), after.reshape(flat).astype(np.float64),
            weight.reshape(flat))


def calibrate_epsilon(x, z, *, variant: str = "acc23"):
    """The threshold maximising the group-averaged acc_eq (or tau_eq) of ``x`` against ``z``.

    Parameters
    ----------
    x, z : array_like (..., G, n)
        Metric and gold scores, G groups of n items; leading axes broadcast (one
        calibration per leading index, e.g. per metric).
    variant : {"acc23", "23"}
        The objective: acc_eq, or tau_eq = 2 acc_eq - 1 (same optimum).

    Returns
    -------
    epsilon, best : ndarray (...)
        The smallest optimal threshold (candidates are 0 and every distinct ``|dm|``
        of a valid pair; a pair with ``|dm| <= epsilon`` is a metric tie) and the
        objective there. NaN where no group has a pair.
    thresholds, objective : ndarray (..., P + 1)
        Every candidate (sorted; repeated values and padding are NaN) and the objective
        there, for plots of the calibration curve.
    """
    if variant not in TIE_VARIANTS:
        raise ValueError(f"variant must be one of {TIE_VARIANTS} for tie calibration, got {variant!r}")
    dist, before, after, weight = pair_table(x, z)
    order = np.argsort(dist, axis=-1, kind="stable")
    d = np.take_along_axis(dist, order, axis=-1)
    gain = np.take_along_axis((after - before) * weight, order, axis=-1)
    base = (before * weight).sum(axis=-1, keepdims=True)
    level = base + np.cumsum(gain, axis=-1)  # objective once pairs 0..k are ties
    # a candidate is the last pair of each distinct |dm| (all pairs at that distance tie together)
    last = np.ones(d.shape, dtype=bool)
    last[..., :-1] = d[..., 1:] != d[..., :-1]
    last &= np.isfinite(d)
    thresholds = np.where(last, d, np.nan)
    objective = np.where(last, level, np.nan)
    # epsilon = 0 is always a candidate: if no pair is an exact metric tie, its objective is the base
    zero_missing = ~np.any(last & (d == 0), axis=-1, keepdims=True)
    thresholds = np.concatenate([np.where(zero_missing, 0.0, np.nan), thresholds], axis=-1)
    objective = np.concatenate([np.where(zero_missing, base, np.nan), objective], axis=-1)
    has_pair = np.isfinite(d[..., :1])[..., 0]
    filled = np.where(np.isnan(objective), -np.inf, objective)
    # the first maximum in threshold order (ascending along the axis) = the smallest optimal epsilon;
    # values within 1e-12 of the maximum count as equal, so summation order cannot move the optimum
    top = filled.max(axis=-1, keepdims=True)
    best_at = np.argmax(filled >= top - 1e-12, axis=-1)
    eps = np.take_along_axis(thresholds, best_at[..., None], axis=-1)[..., 0]
    best = np.take_along_axis(objective, best_at[..., None], axis=-1)[..., 0]
    if variant == "23":
        best = 2.0 * best - 1.0
        objective = 2.0 * objective - 1.0
    return (np.where(has_pair, eps, np.nan), np.where(has_pair, best, np.nan), thresholds, objective)
