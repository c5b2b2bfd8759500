"""Tie calibration under bootstrap weights: the acc_eq-optimal epsilon of every draw, one sort per metric.

A bootstrap draw gives each item of a group (a system of an input) a count ``w`` and
each group (an input) a count ``c``. On the explicitly expanded resample a pair
``(a, b)`` of distinct items of group ``g`` appears ``w_a w_b`` times; two copies of one
item are not a pair (tied in both scores, they would count as agreement at every
epsilon and shift every draw up by about ``(1 - acc_eq) / n``). Group ``g`` has
``N_g = sum_{a<b} w_a w_b`` pairs over its valid items and counts ``c_g`` times in the
average over groups. So the objective of the draw at threshold epsilon is

    acc_eq(eps) = sum_g c_g / (N_g C) sum_{p in g} w_a w_b agree_p(eps),

with ``C = sum_g c_g`` over the groups with a pair. ``agree_p`` switches once, from
``before_p`` to ``after_p``, when epsilon reaches ``|dm_p|``: the pairs are sorted by
``|dm|`` once per metric (the order does not depend on the draw) and every draw's
whole calibration curve is a cumulative sum of its pair weights times the switches.

The running sums are exact where the draw's groups share one denominator: a single group
(:func:`row_calibration`) or drawn groups with equal pair counts ``N_g`` (complete data);
there the pair weights are the integers ``c_g w_a w_b`` and thresholds are compared on
exact integer sums. Otherwise values within 1e-12 count as equal. Either way the reported
value is recomputed from the integer counts at the chosen threshold: ``A_g / N_g`` per
group (``A_g = sum w_a w_b agree_p``), averaged with the counts ``c_g``.

The sweep is compiled (:mod:`.tie_sweeps_jit`): :func:`weighted_calibration` walks each metric's
sorted pairs for a block of draws at a time (once, then as far as the thresholds), with a few
values per group and draw, and averages the groups' counts here, as
:func:`~xcorrstat._kernels.levels.average_defined` sums them. :func:`weighted_calibration_numpy`
is the same computation in NumPy, on (M, B, P) arrays of every pair of every draw: the oracle of
the tests.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..._types import Variant
from .._compiled import loops
from ..levels import average_defined
from .ties import TIE_VARIANTS, best_threshold

__all__ = ["row_calibration", "sorted_pairs", "weighted_calibration", "weighted_calibration_numpy"]


def sorted_pairs(x: ArrayLike, z: ArrayLike) -> dict[str, np.ndarray]:
    """The valid pairs of every group, sorted by ``|dm|`` per leading index.

    ``x``, ``z``: (M, G, n). Returns a dict of (M, P) arrays: ``dist`` (``|dm|``, inf for
    an invalid pair), ``before``/``after`` (agreement while not / while a metric tie),
    ``group``, ``a``, ``b`` (the pair's group and items), ``order`` (the position of each
    sorted pair among the group-by-group pairs), and ``valid`` (M, G, n).

    Examples
    --------
    >>> pairs = sorted_pairs([[[1.0, 2.0, 2.5]]], [[[1.0, 3.0, 2.0]]])
    >>> pairs["dist"].tolist(), pairs["before"].tolist()
    ([[0.5, 1.0, 1.5]], [[False, True, True]])
    """
    ax = np.asarray(x, dtype=np.float64)
    az = np.asarray(z, dtype=np.float64)
    m, g, n = ax.shape
    a, b = np.triu_indices(n, 1)
    valid = ~np.isnan(ax) & ~np.isnan(az)
    ok = valid[..., a] & valid[..., b]  # (M, G, P_g)
    with np.errstate(invalid="ignore"):
        dm = ax[..., a] - ax[..., b]
        dg = az[..., a] - az[..., b]
    dist = np.where(ok, np.abs(dm), np.inf).reshape(m, -1)
    before = ((np.sign(dm) == np.sign(dg)) & ok).reshape(m, -1)
    after = ((dg == 0) & ok).reshape(m, -1)
    group = np.repeat(np.arange(g), a.size)
    order = np.argsort(dist, axis=-1, kind="stable")

    def take(v: np.ndarray) -> np.ndarray:
        return np.take_along_axis(v, order, axis=-1)

    return {"dist": take(dist), "before": take(before), "after": take(after), "group": group[order],
            "a": np.tile(a, g)[order], "b": np.tile(b, g)[order], "valid": valid, "order": order}


def weighted_calibration(
    pairs: dict[str, np.ndarray], w: ArrayLike, c: ArrayLike, *, variant: Variant = "acc23"
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every draw's optimal epsilon and objective from one sorted pair table.

    The compiled loops (:mod:`.tie_sweeps_jit`) walk each metric's sorted pairs for up to 32
    draws at a time, once and then as far as the thresholds; besides the packed pairs they take
    a few values per group and draw of one metric. Each draw is computed on its own, so its
    values do not depend on the draws beside it.

    Parameters
    ----------
    pairs : dict
        :func:`sorted_pairs` of (M, G, n) groups.
    w : ndarray (B, n)
        Item counts of each draw (the same for every group).
    c : ndarray (B, G)
        Group counts of each draw.
    variant : {"acc23", "23"}
        Objective: acc_eq, or tau_eq = 2 acc_eq - 1 (same optimum).

    Returns
    -------
    epsilon, best, groups : ndarray (M, B)
        Optimal threshold and objective of every draw (NaN where no drawn group has a
        pair), and the drawn groups with a pair (counted with their multiplicity). Equal
        to :func:`weighted_calibration_numpy`'s bit for bit where every drawn group has the
        same pair count (integer weights); elsewhere thresholds within 1e-12 of the top
        count as equal, and the level at no tie is summed in another order than the
        oracle's (see there).

    Examples
    --------
    >>> pairs = sorted_pairs([[[1.0, 2.0, 2.5]]], [[[1.0, 3.0, 3.0]]])
    >>> eps, best, groups = weighted_calibration(pairs, [[1, 1, 1], [1, 1, 0]], [[1], [1]])
    >>> eps.tolist(), best.tolist(), groups.tolist()
    ([[0.5, 0.0]], [[1.0, 1.0]], [[1.0, 1.0]])
    """
    if variant not in TIE_VARIANTS:
        raise ValueError(f"variant must be one of {TIE_VARIANTS} for tie calibration, got {variant!r}")
    wa = np.ascontiguousarray(w, dtype=np.float64)
    ca = np.ascontiguousarray(c, dtype=np.float64)
    valid = pairs["valid"]
    m, g, n = valid.shape
    eps, best, groups = (np.empty((m, wa.shape[0])) for _ in range(3))
    jit = loops("mt.tie_sweeps_jit")
    size, factor, counts = (np.empty((wa.shape[0], g)) for _ in range(3))  # (B, G), one metric at a time
    tol = np.empty(wa.shape[0])
    for k in range(m):
        jit.draw_factors(np.ascontiguousarray(valid[k]), wa, ca, size, groups[k], factor, tol)
        table = (np.ascontiguousarray(pairs[key][k]) for key in ("dist", "before", "after", "group", "a", "b"))
        jit.draw_sweeps(*table, factor, wa, tol, eps[k], counts)
        # each group's A_g / N_g, averaged with the counts c_g as the oracle averages them
        with np.errstate(invalid="ignore", divide="ignore"):
            r = np.where(size > 0, (counts if variant == "acc23" else 2.0 * counts - size) / size, np.nan)
        best[k] = average_defined(np.where(ca > 0, r, np.nan), axis=-1, weights=ca)[0]
    undefined = groups == 0
    return np.where(undefined, np.nan, eps), np.where(undefined, np.nan, best), groups


def weighted_calibration_numpy(
    pairs: dict[str, np.ndarray], w: ArrayLike, c: ArrayLike, *, variant: Variant = "acc23"
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`weighted_calibration` in NumPy, every pair of every draw at once (the tests' oracle).

    It holds several (M, B, P) arrays (metrics, draws, pairs). The results are those of
    :func:`weighted_calibration` bit for bit where the weights are integers (one pair count
    for every drawn group); elsewhere its base (the level at no tie) is an ``np.einsum`` sum,
    whose order the compiled loop does not follow (its last bits can differ; the threshold
    and value agree unless a candidate's level is within them of the tolerance's edge).

    Parameters and results as :func:`weighted_calibration`'s.

    Examples
    --------
    >>> pairs = sorted_pairs([[[1.0, 2.0, 2.5]]], [[[1.0, 3.0, 3.0]]])
    >>> eps, best, groups = weighted_calibration_numpy(pairs, [[1, 1, 1], [1, 1, 0]], [[1], [1]])
    >>> eps.tolist(), best.tolist(), groups.tolist()
    ([[0.5, 0.0]], [[1.0, 1.0]], [[1.0, 1.0]])
    """
    if variant not in TIE_VARIANTS:
        raise ValueError(f"variant must be one of {TIE_VARIANTS} for tie calibration, got {variant!r}")
    wa = np.asarray(w, dtype=np.float64)
    ca = np.asarray(c, dtype=np.float64)
    valid = pairs["valid"].astype(np.float64)  # (M, G, n)
    n_g = valid @ wa.T  # (M, G, B)
    n_pairs = (n_g * n_g - valid @ (wa * wa).T) / 2.0  # pairs of distinct drawn items
    has_pair = n_pairs > 0
    groups = np.einsum("mgb,bg->mb", has_pair.astype(np.float64), ca)
    # one denominator for every drawn group with a pair: integer weights c_g w_a w_b, exact running sums
    drawn = has_pair & (ca.T > 0)[None]
    exact = np.where(drawn, n_pairs, np.inf).min(axis=1) == np.where(drawn, n_pairs, -np.inf).max(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        factor = np.where(has_pair, ca.T[None] / (n_pairs * groups[:, None, :]), 0.0)
    factor = np.where(exact[:, None, :] & has_pair, ca.T[None], factor)
    # (M, B, P): pair multiplicity times its group's factor, in each metric's sorted pair order
    factor = np.ascontiguousarray(factor.transpose(0, 2, 1))  # (M, B, G)
    weight = np.take_along_axis(factor, pairs["group"][:, None, :], axis=-1)
    multiplicity = np.moveaxis(np.take(wa, pairs["a"], axis=1), 0, 1) * np.moveaxis(np.take(wa, pairs["b"], axis=1),
                                                                                    0, 1)
    weight *= multiplicity
    before = pairs["before"].astype(np.float64)
    gain = pairs["after"] - before
    base = np.einsum("mbp,mp->mb", weight, before)
    level = np.cumsum(weight * gain[:, None, :], axis=-1)
    level += base[..., None]
    eps, _ = best_threshold(np.broadcast_to(pairs["dist"][:, None, :], level.shape), level, base,
                            np.where(exact, 0.0, 1e-12))
    del level, weight
    best = _weighted_objective(pairs, multiplicity, eps, n_pairs, ca, variant)
    undefined = groups == 0
    return np.where(undefined, np.nan, eps), np.where(undefined, np.nan, best), groups


def _weighted_objective(pairs: dict[str, np.ndarray], multiplicity: np.ndarray, eps: np.ndarray,
                        n_pairs: np.ndarray, c: np.ndarray, variant: Variant) -> np.ndarray:
    """Each draw's acc_eq (tau_eq) at its threshold from integer counts: ``A_g / N_g`` per group, averaged
    with the group counts ``c_g`` over the groups with a pair. (M, B)."""
    with np.errstate(invalid="ignore"):
        tie = pairs["dist"][:, None, :] <= eps[..., None]
    agreed = np.where(tie, pairs["after"][:, None, :], pairs["before"][:, None, :]) * multiplicity  # (M, B, P)
    del tie
    inverse = np.empty_like(pairs["order"])
    np.put_along_axis(inverse, pairs["order"], np.arange(inverse.shape[-1])[None], axis=-1)
    m, g = n_pairs.shape[:2]
    # back in group-by-group order: each group's sum (exact integers)
    counts = np.take_along_axis(agreed, inverse[:, None, :], axis=-1).reshape(m, agreed.shape[1], g, -1).sum(axis=-1)
    size = np.moveaxis(n_pairs, 1, 2)  # (M, B, G)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.where(size > 0, (counts if variant == "acc23" else 2.0 * counts - size) / size, np.nan)
    # a group drawn 0 times is not averaged; with every count 1 this is calibrate_ties' mean, bit for bit
    return average_defined(np.where(c[None] > 0, r, np.nan), axis=-1, weights=c[None])[0]


def row_calibration(
    x: ArrayLike, z: ArrayLike, w: ArrayLike, *, variant: Variant = "acc23"
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The optimal epsilon of each row, one group per row, its items weighted by counts.

    ``x``, ``z``, ``w`` broadcast to (..., n); each row has its own values (e.g. one draw's
    per-system means) and is sorted on its own. Pairs are pairs of distinct items, with
    multiplicity ``w_a w_b``. Returns ``epsilon``, ``best`` and the drawn valid items, each
    (...); NaN where a row has no pair.

    Examples
    --------
    >>> eps, best, items = row_calibration([1.0, 2.0, 2.5], [1.0, 3.0, 3.0], [2, 1, 1])
    >>> float(eps), float(best), float(items)
    (0.5, 1.0, 4.0)
    """
    if variant not in TIE_VARIANTS:
        raise ValueError(f"variant must be one of {TIE_VARIANTS} for tie calibration, got {variant!r}")
    ax, az, wa = np.broadcast_arrays(np.asarray(x, np.float64), np.asarray(z, np.float64), np.asarray(w, np.float64))
    a, b = np.triu_indices(ax.shape[-1], 1)
    valid = ~np.isnan(ax) & ~np.isnan(az) & (wa > 0)
    ok = valid[..., a] & valid[..., b]
    with np.errstate(invalid="ignore"):
        dm = ax[..., a] - ax[..., b]
        dg = az[..., a] - az[..., b]
    pw = np.where(ok, wa[..., a] * wa[..., b], 0.0)  # integer pair multiplicities
    n_pairs = pw.sum(axis=-1)
    order = np.argsort(np.where(ok, np.abs(dm), np.inf), axis=-1, kind="stable")

    def take(v: np.ndarray) -> np.ndarray:
        return np.take_along_axis(v, order, axis=-1)

    weight = take(pw)
    before = take((np.sign(dm) == np.sign(dg)) & ok).astype(np.float64)
    after = take((dg == 0) & ok).astype(np.float64)
    base = np.sum(weight * before, axis=-1)
    # agreeing pairs (with multiplicity) once pairs 0..k are ties: exact integer sums, compared exactly
    agree = base[..., None] + np.cumsum(weight * (after - before), axis=-1)
    eps, count = best_threshold(take(np.where(ok, np.abs(dm), np.inf)), agree, base, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        best = (count if variant == "acc23" else 2.0 * count - n_pairs) / n_pairs
    undefined = n_pairs == 0
    items = np.sum(np.where(valid, wa, 0.0), axis=-1)
    return np.where(undefined, np.nan, eps), np.where(undefined, np.nan, best), items
