"""Level correlations on (..., system, input) arrays.

* ``system``: correlate per-system means (over the inputs where both scores are
  present) across systems;
* ``input``: correlate across systems for each input, then average the defined
  per-input correlations;
* ``global``: correlate all (system, input) cells;
* ``within_system``: correlate across inputs for each system, then average the
  defined per-system correlations (mt-metrics-eval's ``average_by="sys"``).

The two averaging levels take ``average="macro"`` (each group counts once),
``"weighted"`` (each group weighted by its number of valid items ``n``) or ``"pairs"``
(weighted by its ``n (n - 1) / 2`` pairs: a share of pairs, such as acc_eq or tau-a, then
equals the share among the pooled pairs of every group, and is computed as that ratio of
pooled integer counts, :func:`pooled_share`).

Systems are on axis -2 and inputs on axis -1; all leading axes broadcast, so one
call serves every metric (and every extra batch dim) at once.
"""

from __future__ import annotations

from typing import get_args

import numpy as np
from numpy.typing import ArrayLike

from .._capabilities import LEVELS
from .._docs import fill_doc
from .._types import Average, Level, Method, Variant
from .correlation import corr
from .scaling import centre_cells

__all__ = ["AVERAGES", "COUNT_VARIANTS", "average_defined", "average_groups", "fisher_n",
           "group_weights", "level_correlation", "pooled_share", "system_means"]

#: How per-group correlations are averaged: the members of :data:`xcorrstat._types.Average`
AVERAGES: tuple[Average, ...] = get_args(Average)
#: Kendall variants that are a ratio of pair counts over the group's ``n (n - 1) / 2`` pairs
COUNT_VARIANTS: tuple[Variant, ...] = ("a", "23", "acc23")


def system_means(x: ArrayLike, z: ArrayLike, *, complete_inputs: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Per-system means of ``x`` and ``z`` over the inputs where both are present.

    Returns ``(mean_x, mean_z)`` of shape ``(..., system)``; a system with no usable
    input has NaN means. With ``complete_inputs`` only the inputs present for every
    system are used.

    Examples
    --------
    >>> mx, mz = system_means([[1.0, 2.0], [3.0, np.nan]], [[1.0, 1.0], [2.0, 4.0]])
    >>> mx.tolist(), mz.tolist()
    ([1.5, 3.0], [1.0, 2.0])
    """
    ax = np.asarray(x, dtype=np.float64)
    az = np.asarray(z, dtype=np.float64)
    if not complete_inputs and not (np.isnan(ax).any() or np.isnan(az).any()):
        return _bounded_mean(ax, None), _bounded_mean(az, None)
    ax, az = np.broadcast_arrays(ax, az)
    valid = ~np.isnan(ax) & ~np.isnan(az)
    if complete_inputs:
        valid = valid & valid.all(axis=-2, keepdims=True)
    return _bounded_mean(ax, valid), _bounded_mean(az, valid)


def value_range(a: np.ndarray, valid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(low, high)`` of ``a`` (..., S, I) over the ``valid`` cells of each row (inf, -inf if none).

    A mean of any subset of a row's valid cells lies in this range; clipping a rounded
    mean to it keeps a row of equal scores at exactly that score.

    Examples
    --------
    >>> low, high = value_range(np.array([[1.0, 5.0, 3.0]]), np.array([[True, False, True]]))
    >>> low.tolist(), high.tolist()
    ([1.0], [3.0])
    """
    low = np.min(a, axis=-1, where=valid, initial=np.inf)
    high = np.max(a, axis=-1, where=valid, initial=-np.inf)
    return low, high


def _bounded_mean(a: np.ndarray, valid: np.ndarray | None) -> np.ndarray:
    """Mean along the last axis over ``valid`` (NaN if none), kept within the values' range.

    A rounded mean can fall outside ``[min, max]``; then it is the nearer bound, so a
    system whose scores are all equal has exactly that score as its mean (a constant
    metric stays constant, and undefined, however large its values).
    """
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        if valid is None:
            mean, low, high = a.mean(axis=-1), a.min(axis=-1), a.max(axis=-1)
        else:
            count = valid.sum(axis=-1)
            mean = np.where(count > 0, np.sum(a, axis=-1, where=valid) / count, np.nan)
            low, high = value_range(a, valid)
    mean = _rescued_overflow(a, valid, mean, low, high)
    return np.where(np.isnan(mean), mean, np.clip(mean, low, high))


def _rescued_overflow(
    a: np.ndarray, valid: np.ndarray | None, mean: np.ndarray, low: np.ndarray, high: np.ndarray
) -> np.ndarray:
    """``mean`` with the rows whose sum overflowed (finite values, non-finite mean) redone scaled.

    Those rows are summed after an exact power-of-two scaling that brings their largest
    magnitude into ``[0.5, 1)`` (so the sum of any number of them stays finite), and the mean
    scaled back; every other row is left as it is, bit for bit.
    """
    finite = np.isfinite(low) & np.isfinite(high)
    redo = finite & ~np.isfinite(mean)
    if not redo.any():
        return mean
    e = np.frexp(np.maximum(np.abs(low), np.abs(high)))[1]
    scaled = np.ldexp(a, -e[..., None])
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        if valid is None:
            again = scaled.mean(axis=-1)
        else:
            again = np.sum(scaled, axis=-1, where=valid) / valid.sum(axis=-1)
        again = np.ldexp(again, e)
    return np.where(redo, again, mean)


def average_defined(
    r: ArrayLike, axis: int = -1, weights: ArrayLike | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Mean of the non-NaN values along ``axis`` and their count (NaN, 0 if none).

    With ``weights`` (broadcast to ``r``) the mean is weighted.

    Examples
    --------
    >>> mean, count = average_defined([0.5, np.nan, 0.25])
    >>> float(mean), int(count)
    (0.375, 2)
    """
    ar = np.asarray(r, dtype=np.float64)
    defined = ~np.isnan(ar)
    count = defined.sum(axis=axis)
    with np.errstate(invalid="ignore", divide="ignore"):
        if weights is None and ar.flags.c_contiguous:  # equal weights: their sum is the count, ar * 1 is ar
            mean = np.sum(ar, axis=axis, where=defined) / count
        else:
            w = np.ones_like(ar) if weights is None else np.broadcast_to(np.asarray(weights, dtype=np.float64),
                                                                         ar.shape)
            mean = np.sum(ar * w, axis=axis, where=defined) / np.sum(w, axis=axis, where=defined)
    return np.where(count > 0, mean, np.nan), count.astype(np.int64)


def pooled_share(r: ArrayLike, n: ArrayLike, axis: int = -1) -> tuple[np.ndarray, np.ndarray]:
    """The share among the pooled pairs of the defined groups, from per-group shares of pairs.

    ``r`` is a ratio of counts over each group's ``N = n (n - 1) / 2`` pairs (acc_eq, tau_eq,
    tau-a), so ``rint(r N)`` is the group's integer count exactly; the result is the sum of
    the counts over the sum of the ``N`` (one division, as pooling the pairs gives it), with
    the number of groups. NaN groups are left out; NaN, 0 if none is defined.

    Examples
    --------
    >>> share, groups = pooled_share([2 / 3, np.nan, 0.5], [3, 5, 4])  # (2 + 3) / (3 + 6)
    >>> float(share) == 5 / 9, int(groups)
    (True, 2)
    """
    ar = np.asarray(r, dtype=np.float64)
    items = np.asarray(n, dtype=np.float64)
    size = np.broadcast_to(items * (items - 1.0) / 2.0, ar.shape)
    defined = ~np.isnan(ar)
    counts = np.where(defined, np.rint(np.where(defined, ar, 0.0) * size), 0.0)
    total = np.where(defined, size, 0.0).sum(axis=axis)
    count = defined.sum(axis=axis)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, counts.sum(axis=axis) / total, np.nan), count.astype(np.int64)


def group_weights(n: ArrayLike, average: Average) -> np.ndarray | None:
    """Weights of the groups averaged at input and within-system level (None: equal weights).

    Examples
    --------
    >>> group_weights(np.array([3, 4]), "pairs").tolist()
    [3.0, 6.0]
    """
    if average == "macro":
        return None
    size = np.asarray(n, dtype=np.float64)
    return size if average == "weighted" else size * (size - 1.0) / 2.0


def average_groups(r: ArrayLike, n: ArrayLike, *, method: Method, variant: Variant,
                   average: Average) -> tuple[np.ndarray, np.ndarray]:
    """The average over the last axis of per-group correlations ``r`` of ``n`` valid items each.

    The rule of the input and within-system levels: ``"macro"`` and ``"weighted"`` average
    the defined groups (:func:`average_defined` with :func:`group_weights`); ``"pairs"``
    with a Kendall variant that is a share of pairs (:data:`COUNT_VARIANTS`) is the share
    among the pooled pairs (:func:`pooled_share`). Returns the average and the number of
    defined groups.

    Examples
    --------
    >>> r, groups = average_groups([0.5, np.nan, 0.25], [3, 9, 4], method="pearson", variant="b",
    ...                            average="weighted")
    >>> round(float(r), 6), int(groups)  # (3 * 0.5 + 4 * 0.25) / 7
    (0.357143, 2)
    """
    if average == "pairs" and method == "kendall" and variant in COUNT_VARIANTS:
        return pooled_share(r, n, axis=-1)  # exact: the pooled counts' ratio
    return average_defined(r, axis=-1, weights=group_weights(n, average))


@fill_doc
def level_correlation(
    x: ArrayLike,
    z: ArrayLike,
    *,
    level: Level = "system",
    method: Method = "pearson",
    variant: Variant = "b",
    min_pairs: int = 3,
    complete_inputs: bool = False,
    skipna: bool = True,
    epsilon: float = 0.0,
    average: Average = "macro",
) -> tuple[np.ndarray, np.ndarray]:
    """Correlation of ``x`` with ``z`` at a level, over arrays shaped ``(..., S, I)``.

    Parameters
    ----------
    x, z : array_like
        Scores with systems on axis -2 and inputs on axis -1; leading axes broadcast.
    %(level)s
    %(method)s
    %(variant)s
    min_pairs : int
        Fewest valid pairs for a defined correlation.
    %(complete_inputs)s
    %(skipna)s
    epsilon : float
        Kendall only: metric differences of at most epsilon are ties.
    %(average)s

    Returns
    -------
    r : ndarray
        The level correlation over the broadcast leading shape.
    n : ndarray of int64
        Systems (system level), defined inputs (input level), defined systems
        (within-system level) or cells (global level) used.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([[1., 2], [2, 3], [3, 5]]); z = np.array([[1., 1], [2, 3], [4, 2]])
    >>> r, n = level_correlation(x, z, level="system", method="pearson")
    >>> round(float(r), 4), int(n)  # means x: 1.5, 2.5, 4; z: 1, 2.5, 3
    (0.9226, 3)
    """
    ax = np.asarray(x, dtype=np.float64)
    az = np.asarray(z, dtype=np.float64)
    if ax.ndim < 2 or az.ndim < 2:
        raise ValueError("x and z need a system axis (-2) and an input axis (-1)")
    if ax.shape[-2:] != az.shape[-2:]:
        raise ValueError(f"x and z must share (system, input) shape, got {ax.shape[-2:]} and {az.shape[-2:]}")
    if average not in AVERAGES:
        raise ValueError(f"average must be one of {AVERAGES!r}, got {average!r}")

    def correlate(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return corr(a, b, method=method, variant=variant, min_pairs=min_pairs, epsilon=epsilon)

    if level == "system":
        # Pearson's r is shift-invariant: centre first so a large offset never rounds the means
        cx, cz = (centre_cells(ax), centre_cells(az)) if method == "pearson" else (ax, az)
        mx, mz = system_means(cx, cz, complete_inputs=complete_inputs)
        r, n = correlate(mx, mz)
    elif level in ("input", "within_system"):
        if level == "input":
            ax, az = np.swapaxes(ax, -1, -2), np.swapaxes(az, -1, -2)
        r, n = average_groups(*correlate(ax, az), method=method, variant=variant, average=average)
    elif level == "global":
        r, n = correlate(ax.reshape(ax.shape[:-2] + (-1,)), az.reshape(az.shape[:-2] + (-1,)))
    else:
        raise ValueError(f"level must be one of {LEVELS!r}, got {level!r}")
    if not skipna:
        missing = np.isnan(ax).any(axis=(-2, -1)) | np.isnan(az).any(axis=(-2, -1))
        r = np.where(missing, np.nan, r)
    return r, n


def fisher_n(valid: np.ndarray, n: np.ndarray, level: Level) -> np.ndarray:
    """The ``n`` of a Fisher interval from the valid cells ``(..., S, I)`` and the level's ``n``.

    An average of correlations counts as its largest member: at input level the most
    systems correlated for one input, at within-system level the most inputs
    correlated for one system (the same rule, the dims' roles swapped); other
    levels keep ``n``.

    Examples
    --------
    >>> valid = np.array([[True, True], [True, False], [True, True]])  # 3 systems x 2 inputs
    >>> int(fisher_n(valid, np.array(5), "input")), int(fisher_n(valid, np.array(5), "within_system"))
    (3, 2)
    """
    if level == "input":
        return np.asarray(valid.sum(axis=-2).max(axis=-1))
    if level == "within_system":
        return np.asarray(valid.sum(axis=-1).max(axis=-1))
    return n

