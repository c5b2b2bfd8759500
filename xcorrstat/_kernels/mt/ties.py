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

The running sum is rounded, and two thresholds whose objective is the same fraction can
differ in its last bits. So the optimum is chosen on exact values (:func:`exact_optimum`:
integer counts over a common denominator, for the candidates the running sum puts within
its rounding bound of the top), and the reported value is recomputed from each group's
integer counts at the chosen threshold, as :func:`xcorrstat.correlate` computes acc_eq
(tau_eq) at that epsilon: ``A_g / N_g`` per group, then the mean over the groups with a pair.

:func:`calibrated_threshold` finds the same epsilon without the curve, in a fraction of the memory:
the pairs of one calibration are formed group by group in compiled loops (:mod:`.ties_jit`), each
pair whose agreement changes once it ties kept as one 8-byte sort key (``|dm|`` and the sign of the
change) in its class's run; the runs are sorted and merged twice (the top of the running sum, then
the exact comparison, as in :func:`exact_optimum`, of the candidates within its rounding bound of
the top).

Pair sampling (mt-metrics-eval's ``sample_rate``): :func:`sample_pairs` keeps each
valid pair with a given probability, one uniform draw per pair in mt-metrics-eval's
order, and ``keep=`` restricts the sweep to the kept pairs.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike

from ..._types import Variant
from .._compiled import loops
from ..levels import average_defined

__all__ = ["TIE_VARIANTS", "best_threshold", "calibrate_epsilon", "calibrated_threshold", "exact_optimum",
           "group_objective", "pair_table", "sample_pairs", "valid_pairs"]

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


def _pair_parts(x: ArrayLike, z: ArrayLike,
                keep: ArrayLike | None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(dist, before, after, ok)`` of every pair (a < b) of every group, each (..., G, P_g):
    ``|dm|`` (inf for an invalid pair), agreement while not / while a metric tie, validity."""
    ax = np.asarray(x, dtype=np.float64)
    az = np.asarray(z, dtype=np.float64)
    ax, az = np.broadcast_arrays(ax, az)
    a, b = np.triu_indices(ax.shape[-1], 1)
    ok = valid_pairs(ax, az)  # (..., G, P_g)
    if keep is not None:
        ok = ok & np.asarray(keep, dtype=bool)
    with np.errstate(invalid="ignore"):
        dm = ax[..., a] - ax[..., b]
        dg = az[..., a] - az[..., b]
    before = (np.sign(dm) == np.sign(dg)) & ok
    after = (dg == 0) & ok
    return np.where(ok, np.abs(dm), np.inf), before, after, ok


def _weights(ok: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each pair's weight ``1 / (G_used N_g)`` (..., G, P_g), the groups' pairs ``N_g`` (..., G) and
    the groups with a pair ``G_used`` (...)."""
    n_pairs = ok.sum(axis=-1, keepdims=True)  # (..., G, 1)
    groups = (n_pairs > 0).sum(axis=-2, keepdims=True)  # (..., 1, 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        weight = np.where(ok, 1.0 / (n_pairs * groups), 0.0)
    return weight, n_pairs[..., 0], groups[..., 0, 0]


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
    dist, before, after, ok = _pair_parts(x, z, keep)
    weight = _weights(ok)[0]
    flat = dist.shape[:-2] + (-1,)
    return (dist.reshape(flat), before.reshape(flat).astype(np.float64), after.reshape(flat).astype(np.float64),
            weight.reshape(flat))


def group_objective(dist: np.ndarray, before: np.ndarray, after: np.ndarray, n_pairs: np.ndarray,
                    epsilon: ArrayLike, variant: Variant) -> tuple[np.ndarray, np.ndarray]:
    """acc_eq (tau_eq) at ``epsilon`` from each group's integer counts: the mean over the groups with a
    pair of ``A_g / N_g`` (``(2 A_g - N_g) / N_g``), and the number of such groups.

    ``dist``, ``before``, ``after`` (..., G, P_g) as :func:`pair_table` builds them before
    flattening, ``n_pairs`` (..., G) the groups' valid pairs, ``epsilon`` (...). Each group's
    value is one division of two integers and the mean is
    :func:`~xcorrstat._kernels.levels.average_defined`'s, so the result is what
    :func:`xcorrstat.correlate` gives at this epsilon (``min_pairs=2``), bit for bit.

    Examples
    --------
    >>> dist, before, after, ok = _pair_parts([[1.0, 2.0, 2.1]], [[1.0, 3.0, 3.0]], None)
    >>> value, groups = group_objective(dist, before, after, ok.sum(axis=-1), 0.2, "acc23")
    >>> float(value), int(groups)
    (1.0, 1)
    """
    with np.errstate(invalid="ignore"):
        tie = dist <= np.asarray(epsilon, dtype=np.float64)[..., None, None]
    agree = np.where(tie, after, before).sum(axis=-1, dtype=np.int64)
    num = agree if variant == "acc23" else 2 * agree - n_pairs
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.where(n_pairs > 0, num / n_pairs, np.nan)
    return average_defined(r, axis=-1)


def best_threshold(dist: ArrayLike, level: np.ndarray, base: np.ndarray,
                   tol: ArrayLike = 1e-12) -> tuple[np.ndarray, np.ndarray]:
    """The smallest candidate threshold with the highest objective, and that objective.

    ``dist`` (..., P) sorted ``|dm|`` (inf for invalid pairs; it may be a broadcast view);
    ``level`` (..., P) the objective once pairs 0..k are metric ties; ``base`` (...) the
    objective at 0 ties. Candidates are 0 and the last pair of each distinct finite
    ``|dm|``; values within ``tol`` (broadcast to ``base``) of the maximum count as equal,
    so summation order cannot move the optimum (``tol=0`` for exact values, such as
    integer counts).

    Examples
    --------
    >>> eps, best = best_threshold([0.5, 0.5, 1.0], np.array([0.6, 0.7, 0.4]), np.array(0.65))
    >>> float(eps), float(best)  # both pairs at 0.5 tie together
    (0.5, 0.7)
    """
    d = np.asarray(dist)
    tol = np.asarray(tol, dtype=np.float64)
    filled = np.where(_candidates(d), level, -np.inf)
    top = np.maximum(filled.max(axis=-1), base)[..., None]
    at = np.argmax(filled >= top - tol[..., None], axis=-1)[..., None]
    # epsilon = 0 is a candidate even when no pair is an exact metric tie: its objective is the base
    at_zero = base >= top[..., 0] - tol
    eps = np.where(at_zero, 0.0, np.take_along_axis(np.broadcast_to(d, level.shape), at, axis=-1)[..., 0])
    best = np.where(at_zero, base, np.take_along_axis(level, at, axis=-1)[..., 0])
    return eps, best


def _candidates(d: np.ndarray) -> np.ndarray:
    """The last pair of each distinct finite ``|dm|`` of sorted ``d`` (..., P): the candidate thresholds."""
    last = np.ones(d.shape, dtype=bool)
    last[..., :-1] = d[..., 1:] != d[..., :-1]
    return last & np.isfinite(d)


def _class_counts(gain: np.ndarray, cls: np.ndarray, base_counts: np.ndarray, rows: np.ndarray,
                  pos: np.ndarray) -> np.ndarray:
    """Agreeing pairs per class of groups (n_entries, K) once the sorted pairs 0..pos of row ``rows`` tie
    (``pos = -1``: none), from the base counts (R, K) and the sorted gains and classes (R, P)."""
    counts = base_counts[rows].astype(np.int64)
    tied = pos >= 0
    for k in range(base_counts.shape[-1]):  # one pass per class of groups (their pair count)
        cum = np.cumsum(np.where(cls == k, gain, 0), axis=-1, dtype=np.int64)
        counts[tied, k] += cum[rows[tied], pos[tied]]
    return counts


def _exact_values(counts: np.ndarray, denominators: np.ndarray) -> np.ndarray:
    """``sum_k C_k L / N_k`` per entry (counts (n, K) >= 0): the objective times ``G L`` (L the lcm of the
    N_k), exactly: in int64 when the largest possible sum fits, else in Python ints."""
    common = math.lcm(*(int(v) for v in denominators)) if denominators.size else 1
    scale = [common // int(v) for v in denominators]
    top = counts.max(axis=0, initial=0).tolist() if counts.size else [0] * len(scale)
    if sum(int(c) * f for c, f in zip(top, scale)) < 2**62:
        return counts @ np.array(scale, dtype=np.int64)
    return counts.astype(object) @ np.array(scale, dtype=object)


def exact_optimum(d: np.ndarray, level: np.ndarray, base: np.ndarray, gain: np.ndarray, cls: np.ndarray,
                  base_counts: np.ndarray, denominators: np.ndarray) -> np.ndarray:
    """The smallest threshold whose objective is the highest, compared on exact values: (...).

    The objective is ``1 / G`` times ``sum_k C_k / N_k``, with ``C_k`` the agreeing pairs of the groups
    of class k (those with ``N_k`` pairs). The rounded running sum ``level`` (..., P) (and ``base``)
    shortlists the candidates within its rounding bound of the top (``(4 P + 8) 2^-53``: the weights
    of all pairs sum to 1); their class counts are then counted exactly and compared as integers over
    the lcm of the ``N_k``. ``d`` (..., P) is the sorted ``|dm|``; ``gain`` (..., P) int each sorted
    pair's change of agreement once it ties, ``cls`` (..., P) its group's class (-1: invalid);
    ``base_counts`` (..., K) the agreeing pairs per class with no tie; ``denominators`` (K,) the
    ``N_k``. Rows without a pair get 0.

    Examples
    --------
    >>> d = np.array([0.5, 1.0]); level = np.array([1 / 3 + 1 / 3, 2 / 3])  # two pairs of one group of 3
    >>> float(exact_optimum(d, level, np.array(1 / 3), np.array([1, 0]), np.array([0, 0]), np.array([1]),
    ...                     np.array([3])))
    0.5
    """
    lead, n = d.shape[:-1], d.shape[-1]
    rows_total = int(np.prod(lead, dtype=np.int64))
    if not rows_total:
        return np.zeros(lead)
    tol = (4.0 * n + 8.0) * 2.0**-53
    last = _candidates(d)
    top = np.maximum(np.where(last, level, -np.inf).max(axis=-1, initial=-np.inf), base)
    near = (last & (level >= (top - 2 * tol)[..., None])).reshape(rows_total, n)
    rows, pos = np.nonzero(near)
    first = np.flatnonzero((base >= top - 2 * tol).reshape(rows_total))
    rows, pos = np.concatenate([first, rows]), np.concatenate([np.full(first.size, -1), pos])
    order = np.lexsort((pos, rows))
    rows, pos = rows[order], pos[order]
    counts = _class_counts(gain.reshape(rows_total, n), cls.reshape(rows_total, n),
                           base_counts.reshape(rows_total, -1), rows, pos)
    values = _exact_values(counts, denominators)
    rank = np.unique(values, return_inverse=True)[1].reshape(-1)
    starts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]])
    segment = np.cumsum(np.r_[False, rows[1:] != rows[:-1]])
    best = np.maximum.reduceat(rank, starts)[segment] == rank
    chosen = np.unique(rows[best], return_index=True)[1]  # the first (smallest threshold) of each row
    eps = np.zeros(rows_total)
    at = np.flatnonzero(best)[chosen]
    flat_d = d.reshape(rows_total, n)
    eps[rows[at]] = np.where(pos[at] >= 0, flat_d[rows[at], np.maximum(pos[at], 0)], 0.0)
    return eps.reshape(lead)


def _exact_parts(before: np.ndarray, after: np.ndarray, ok: np.ndarray, n_pairs: np.ndarray,
                 order: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """What :func:`exact_optimum` needs from (..., G, P_g) pair tables sorted by ``order`` (..., P):
    the sorted gains and classes, the base counts per class and the classes' pair counts."""
    denominators = np.unique(n_pairs[n_pairs > 0])
    group_cls = np.searchsorted(denominators, n_pairs)  # (..., G); groups without a pair have no valid pair
    flat = before.shape[:-2] + (-1,)
    gain = (after.astype(np.int8) - before.astype(np.int8)).reshape(flat)
    cls = np.where(ok, group_cls[..., None], -1).reshape(flat)
    member = (group_cls[..., None] == np.arange(denominators.size)) & (n_pairs > 0)[..., None]  # (..., G, K)
    base_counts = np.einsum("...g,...gk->...k", before.sum(axis=-1, dtype=np.int64), member.astype(np.int64))
    return (np.take_along_axis(gain, order, axis=-1), np.take_along_axis(cls, order, axis=-1), base_counts,
            denominators)


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
        of a valid pair; a pair with ``|dm| <= epsilon`` is a metric tie; chosen on exact
        values) and the objective there, from each group's counts (:func:`group_objective`:
        what ``correlate`` gives at that epsilon). NaN where no group has a pair.
    thresholds, objective : ndarray (..., P + 1)
        Every candidate (sorted; repeated values and padding are NaN) and the objective
        there (the running sum, within about ``P`` rounding errors of the exact values),
        for plots of the calibration curve.

    Examples
    --------
    >>> eps, best, thresholds, objective = calibrate_epsilon([[1.0, 2.0, 2.1]], [[1.0, 3.0, 3.0]])
    >>> round(float(eps), 6), float(best)  # tying 2.0 and 2.1 makes every pair agree
    (0.1, 1.0)
    """
    if variant not in TIE_VARIANTS:
        raise ValueError(f"variant must be one of {TIE_VARIANTS} for tie calibration, got {variant!r}")
    dist, before, after, ok = _pair_parts(x, z, keep)
    weight, n_pairs, _ = _weights(ok)
    flat = dist.shape[:-2] + (-1,)
    fdist, fweight = dist.reshape(flat), weight.reshape(flat)
    fbefore, fafter = before.reshape(flat).astype(np.float64), after.reshape(flat).astype(np.float64)
    order = np.argsort(fdist, axis=-1)  # pairs at one distance tie together: their order is free
    d = np.take_along_axis(fdist, order, axis=-1)
    gain = np.take_along_axis((fafter - fbefore) * fweight, order, axis=-1)
    base = (fbefore * fweight).sum(axis=-1, keepdims=True)
    level = base + np.cumsum(gain, axis=-1)  # objective once pairs 0..k are ties
    eps = exact_optimum(d, level, base[..., 0], *_exact_parts(before, after, ok, n_pairs, order))
    best, _ = group_objective(dist, before, after, n_pairs, eps, variant)
    # the curve: a candidate is the last pair of each distinct |dm| (all pairs at that distance tie together)
    last = _candidates(d)
    thresholds = np.where(last, d, np.nan)
    objective = np.where(last, level, np.nan)
    # epsilon = 0 is always a candidate: if no pair is an exact metric tie, its objective is the base
    zero_missing = ~np.any(last & (d == 0), axis=-1, keepdims=True)
    thresholds = np.concatenate([np.where(zero_missing, 0.0, np.nan), thresholds], axis=-1)
    objective = np.concatenate([np.where(zero_missing, base, np.nan), objective], axis=-1)
    has_pair = np.isfinite(d[..., :1])[..., 0]
    if variant == "23":
        objective = 2.0 * objective - 1.0
    return (np.where(has_pair, eps, np.nan), np.where(has_pair, best, np.nan), thresholds, objective)


#: Class counts the exact comparison of :func:`calibrated_threshold` takes at a time (its buffer).
_NEAR_COUNTS = 1 << 20


def _row(a: np.ndarray, idx: tuple[int, ...], lead: tuple[int, ...]) -> np.ndarray:
    """The (G, n) block of ``a`` at leading index ``idx`` of the broadcast ``lead``, as a C-contiguous array."""
    full = a.reshape((1,) * (len(lead) + 2 - a.ndim) + a.shape)
    dims: tuple[int, ...] = full.shape[:len(lead)]
    at = tuple(i if dims[k] > 1 else 0 for k, i in enumerate(idx))
    return np.ascontiguousarray(full[at])


def _run_keys(x: np.ndarray, z: np.ndarray) -> dict[str, np.ndarray]:
    """One calibration's sorted runs of pair keys (:mod:`.ties_jit`) from (G, n) scores: ``keys`` with
    each class's run at ``starts``..``ends``, the classes' ``base`` counts and pair counts
    (``denominators``), the groups with a pair and the valid pairs with a finite ``|dm|``."""
    valid = ~np.isnan(x) & ~np.isnan(z)
    items = valid.sum(axis=-1, dtype=np.int64)
    n_pairs = items * (items - 1) // 2
    denominators = np.unique(n_pairs[n_pairs > 0])
    group_cls = np.searchsorted(denominators, n_pairs)  # groups without a pair have no valid pair
    room = np.bincount(group_cls, weights=n_pairs, minlength=denominators.size)[:denominators.size]
    room = room.astype(np.int64)  # each class's pairs: the room of its run
    starts = np.concatenate([[0], np.cumsum(room)[:-1]]).astype(np.int64)
    used, base = np.zeros(denominators.size, dtype=np.int64), np.zeros(denominators.size, dtype=np.int64)
    keys = np.empty(int(room.sum()), dtype=np.uint64)
    finite = 0
    if keys.size:
        finite = loops("mt.ties_jit").fill_keys(x, z, valid, group_cls, starts, used, keys, base)
    for start, n in zip(starts, used):
        keys[start:start + n].sort()
    return {"keys": keys, "starts": starts, "ends": starts + used, "base": base, "denominators": denominators,
            "groups": np.int64((n_pairs > 0).sum()), "finite": np.int64(finite)}


def _near_optimum(runs: dict[str, np.ndarray], weight: np.ndarray, base: float, floor: float) -> float:
    """The smallest candidate threshold with the highest exact objective among those whose running sum
    is ``>= floor``; the candidates come from the compiled sweep a buffer at a time."""
    jit = loops("mt.ties_jit")
    keys, denominators = runs["keys"], runs["denominators"]
    k = denominators.size
    best: tuple[np.ndarray, np.ndarray] | None = None  # class counts (1, K) and threshold (1,) of the best so far
    if base >= floor:
        best = runs["base"][None].copy(), np.zeros(1)
    pos, heap = np.empty(k, dtype=np.int64), np.empty(k, dtype=np.int64)
    state = np.array([jit.start_heap(keys, runs["starts"], runs["ends"], pos, heap)], dtype=np.int64)
    level, counts = np.array([base]), runs["base"].copy()
    out_counts = np.empty((max(16, _NEAR_COUNTS // k), k), dtype=np.int64)
    out_bits = np.empty(out_counts.shape[0], dtype=np.uint64)
    while state[0] > 0:
        got = jit.near_top(keys, runs["ends"], pos, heap, state, level, counts, weight, floor, out_counts,
                           out_bits)
        rows, eps = out_counts[:got], out_bits[:got].view(np.float64)
        if best is not None:
            rows, eps = np.concatenate([best[0], rows]), np.concatenate([best[1], eps])
        if rows.shape[0]:
            at = int(np.argmax(_exact_values(rows, denominators)))  # the first: the smallest threshold
            best = rows[at:at + 1].copy(), eps[at:at + 1].copy()
    if best is None:
        raise AssertionError("no candidate within the rounding bound of the top")
    return float(best[1][0])


def calibrated_threshold(x: ArrayLike, z: ArrayLike, *, variant: Variant = "acc23") -> np.ndarray:
    """The threshold maximising the group-averaged acc_eq (or tau_eq): ``calibrate_epsilon(x, z)[0]``,
    bit for bit, in a fraction of its memory and time, without the calibration curve.

    Parameters
    ----------
    x, z : array_like (..., G, n)
        Metric and gold scores, G groups of n items; leading axes broadcast (one calibration per
        leading index, run one after another).
    variant : {"acc23", "23"}
        The objective: acc_eq, or tau_eq = 2 acc_eq - 1 (same optimum).

    Returns
    -------
    ndarray (...)
        The smallest optimal threshold (candidates are 0 and every distinct finite ``|dm|`` of a
        valid pair; chosen on exact values, as :func:`exact_optimum` chooses); NaN where no group
        has a pair with a finite ``|dm|``. A calibration holds 8 bytes per valid pair (one sort key)
        and a few per group.

    Examples
    --------
    >>> float(np.round(calibrated_threshold([[1.0, 2.0, 2.1]], [[1.0, 3.0, 3.0]]), 6))
    0.1
    """
    if variant not in TIE_VARIANTS:
        raise ValueError(f"variant must be one of {TIE_VARIANTS} for tie calibration, got {variant!r}")
    ax, az = np.asarray(x, dtype=np.float64), np.asarray(z, dtype=np.float64)
    shape = np.broadcast_shapes(ax.shape, az.shape)
    out = np.full(shape[:-2], np.nan)
    slots = shape[-2] * shape[-1] * (shape[-1] - 1) // 2
    for idx in np.ndindex(*out.shape):
        runs = _run_keys(_row(ax, idx, shape[:-2]), _row(az, idx, shape[:-2]))
        if not runs["finite"]:
            continue
        weight = 1.0 / (runs["denominators"] * runs["groups"])
        base = float((runs["base"] * weight).sum())
        top = loops("mt.ties_jit").top_level(runs["keys"], runs["starts"], runs["ends"], weight, base)
        tol = (4.0 * slots + 8.0) * 2.0**-53  # the bound of exact_optimum: the weights sum to 1
        out[idx] = _near_optimum(runs, weight, base, top - 2 * tol)
    return out
