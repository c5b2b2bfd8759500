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

Pair sampling (mt-metrics-eval's ``sample_rate``): :func:`sample_pairs` keeps each
valid pair with a given probability, one uniform draw per pair in mt-metrics-eval's
order, and ``keep=`` restricts the sweep to the kept pairs.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike

from .._types import Variant

__all__ = ["TIE_VARIANTS", "best_threshold", "calibrate_epsilon", "pair_table", "sample_pairs", "valid_pairs"]

#: The Kendall variants a tie threshold is calibrated for: acc_eq and tau_eq.
TIE_VARIANTS: tuple[Variant, ...] = ("acc23", "23")


def valid_pairs(x: ArrayLike, z: ArrayLike) -> np.ndarray:
    """``(..., G, P_g)`` bools: pair ``k`` of ``np.triu_indices(n, 1)`` of each group has both
    items with both scores. ``x`` and ``z`` are (..., G, n), broadcast together.

    Examples
    --------
    >>> valid_pairs([[1.0, np.nan, 3.0]], [[1.0, 2.0, 3.0]]).tolist()  # pairs (0, 1), (0, 2), (1, 2)
    [[False, True, False]]
    """
    ax, az = np.broadcast_arrays(np.asarray(x, dtype=np.float64), np.asarray(z, dtype=np.float64))
    a, b = np.triu_indices(ax.shape[-1], 1)
    valid = ~np.isnan(ax) & ~np.isnan(az)
    return valid[..., a] & valid[..., b]


def sample_pairs(eligible: ArrayLike, sample_rate: float, random: Callable[[int], ArrayLike]) -> np.ndarray:
    """Keep each eligible pair when its uniform draw is ``<= sample_rate``: a bool mask like ``eligible``.

    Parameters
    ----------
    eligible : array_like of bool (..., G, P_g)
        The pairs that get a draw, e.g. :func:`valid_pairs`; leading axes are separate
        calibrations.
    sample_rate : float
        In (0, 1].
    random : callable
        ``random(k)`` returns ``k`` uniforms in [0, 1) in one call, e.g.
        ``np.random.RandomState(123).random_sample``.

    Returns
    -------
    ndarray of bool, like ``eligible``
        The kept pairs. Draws fall on the eligible pairs group by group and, within a group,
        in row-major ``i < j`` order, mt-metrics-eval's loop; every leading index takes the
        same stream from its start (the k-th eligible pair of each gets draw k), so one call
        of ``random`` serves them all.

    Examples
    --------
    >>> import numpy as np
    >>> keep = sample_pairs(np.ones((1, 6), bool), 0.5, np.random.RandomState(123).random_sample)
    >>> keep.astype(int).tolist()
    [[0, 1, 1, 0, 0, 1]]
    """
    pairs = np.asarray(eligible, dtype=bool)
    flat = pairs.reshape(pairs.shape[:-2] + (-1,))
    rank = np.cumsum(flat, axis=-1) - 1  # the k-th eligible pair of its calibration gets draw k
    need = int(flat.sum(axis=-1).max(initial=0))
    u = np.asarray(random(need), dtype=np.float64).reshape(-1)
    if u.size != need:
        raise ValueError(f"random({need}) returned {u.size} numbers")
    drawn = u[np.clip(rank, 0, max(need - 1, 0))] if need else np.ones(flat.shape)
    return (flat & (drawn <= sample_rate)).reshape(pairs.shape)


def pair_table(
    x: ArrayLike, z: ArrayLike, keep: ArrayLike | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every valid pair (a < b) of every group: ``(|dm|, before, after, weight)``, each (..., P).

    ``x`` and ``z`` are (..., G, n): G groups of n items. A pair is valid when both
    items have both scores (and ``keep``, a (..., G, P_g) mask such as
    :func:`sample_pairs` gives, keeps it). ``before``/``after`` are the pair's agreement
    (0/1) while it is not / is a metric tie; ``weight`` is ``1 / (G_used * N_g)``, with
    ``G_used`` the groups that have a pair, so summed agreements are the mean over groups
    of each group's accuracy. Invalid pairs get ``|dm| = inf`` and weight 0.

    Examples
    --------
    >>> dist, before, after, weight = pair_table([[1.0, 2.0, 2.0]], [[1.0, 3.0, 3.0]])
    >>> dist.tolist(), before.tolist(), after.tolist()
    ([1.0, 1.0, 0.0], [1.0, 1.0, 1.0], [0.0, 0.0, 1.0])
    """
    ax = np.asarray(x, dtype=np.float64)
    az = np.asarray(z, dtype=np.float64)
    ax, az = np.broadcast_arrays(ax, az)
    n = ax.shape[-1]
    a, b = np.triu_indices(n, 1)
    ok = valid_pairs(ax, az)  # (..., G, P_g)
    if keep is not None:
        ok = ok & np.asarray(keep, dtype=bool)
    with np.errstate(invalid="ignore"):
        dm = ax[..., a] - ax[..., b]
        dg = az[..., a] - az[..., b]
    before = (np.sign(dm) == np.sign(dg)) & ok
    after = (dg == 0) & ok
    n_pairs = ok.sum(axis=-1, keepdims=True)  # (..., G, 1)
    groups = (n_pairs > 0).sum(axis=-2, keepdims=True)  # (..., 1, 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        weight = np.where(ok, 1.0 / (n_pairs * groups), 0.0)
    dist = np.where(ok, np.abs(dm), np.inf)
    lead = ax.shape[:-2]
    flat = lead + (-1,)
    return (dist.reshape(flat), before.reshape(flat).astype(np.float64), after.reshape(flat).astype(np.float64),
            weight.reshape(flat))


def best_threshold(dist: ArrayLike, level: np.ndarray, base: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The smallest candidate threshold with the highest objective, and that objective.

    ``dist`` (..., P) sorted ``|dm|`` (inf for invalid pairs; it may be a broadcast view);
    ``level`` (..., P) the objective once pairs 0..k are metric ties; ``base`` (...) the
    objective at 0 ties. Candidates are 0 and the last pair of each distinct finite
    ``|dm|``; values within 1e-12 of the maximum count as equal, so summation order cannot
    move the optimum.

    Examples
    --------
    >>> eps, best = best_threshold([0.5, 0.5, 1.0], np.array([0.6, 0.7, 0.4]), np.array(0.65))
    >>> float(eps), float(best)  # both pairs at 0.5 tie together
    (0.5, 0.7)
    """
    d = np.asarray(dist)
    last = np.ones(d.shape, dtype=bool)
    last[..., :-1] = d[..., 1:] != d[..., :-1]
    last &= np.isfinite(d)
    filled = np.where(last, level, -np.inf)
    top = np.maximum(filled.max(axis=-1), base)[..., None]
    at = np.argmax(filled >= top - 1e-12, axis=-1)[..., None]
    # epsilon = 0 is a candidate even when no pair is an exact metric tie: its objective is the base
    at_zero = base >= top[..., 0] - 1e-12
    eps = np.where(at_zero, 0.0, np.take_along_axis(np.broadcast_to(d, level.shape), at, axis=-1)[..., 0])
    best = np.where(at_zero, base, np.take_along_axis(level, at, axis=-1)[..., 0])
    return eps, best


def calibrate_epsilon(
    x: ArrayLike, z: ArrayLike, *, variant: Variant = "acc23", keep: ArrayLike | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The threshold maximising the group-averaged acc_eq (or tau_eq) of ``x`` against ``z``.

    Parameters
    ----------
    x, z : array_like (..., G, n)
        Metric and gold scores, G groups of n items; leading axes broadcast (one
        calibration per leading index, e.g. per metric).
    variant : {"acc23", "23"}
        The objective: acc_eq, or tau_eq = 2 acc_eq - 1 (same optimum).
    keep : array_like of bool (..., G, P_g), optional
        Only these pairs count (candidates and objective), e.g. from :func:`sample_pairs`;
        a group without a kept pair drops out of the average.

    Returns
    -------
    epsilon, best : ndarray (...)
        The smallest optimal threshold (candidates are 0 and every distinct ``|dm|``
        of a valid pair; a pair with ``|dm| <= epsilon`` is a metric tie) and the
        objective there. NaN where no group has a pair.
    thresholds, objective : ndarray (..., P + 1)
        Every candidate (sorted; repeated values and padding are NaN) and the objective
        there, for plots of the calibration curve.

    Examples
    --------
    >>> eps, best, thresholds, objective = calibrate_epsilon([[1.0, 2.0, 2.1]], [[1.0, 3.0, 3.0]])
    >>> round(float(eps), 6), float(best)  # tying 2.0 and 2.1 makes every pair agree
    (0.1, 1.0)
    """
    if variant not in TIE_VARIANTS:
        raise ValueError(f"variant must be one of {TIE_VARIANTS} for tie calibration, got {variant!r}")
    dist, before, after, weight = pair_table(x, z, keep)
    order = np.argsort(dist, axis=-1, kind="stable")
    d = np.take_along_axis(dist, order, axis=-1)
    gain = np.take_along_axis((after - before) * weight, order, axis=-1)
    base = (before * weight).sum(axis=-1, keepdims=True)
    level = base + np.cumsum(gain, axis=-1)  # objective once pairs 0..k are ties
    eps, best = best_threshold(d, level, base[..., 0])
    # the curve: a candidate is the last pair of each distinct |dm| (all pairs at that distance tie together)
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
    if variant == "23":
        best = 2.0 * best - 1.0
        objective = 2.0 * objective - 1.0
    return (np.where(has_pair, eps, np.nan), np.where(has_pair, best, np.nan), thresholds, objective)
