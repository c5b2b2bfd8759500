"""The swapped system means of a block of pairs and draws, and what :mod:`.swap_system` does with them
beside its compiled loops (:mod:`.swap_system_jit`).

A block's means are laid out (S, ...): system by system, each a plane over the block's pairs
and draws (or any rows). Every function here works plane by plane, vectorised over the rows,
with a loop over the S systems only:

* :class:`SystemTerms` -- a batch's per-metric terms, from which the loops take each pair's
  means draw by draw, and :func:`swapped_means` the means of a block at once (a few additions
  of exact sums and one division, in the loops' order);
* :func:`flagged_pearson` -- the rows the Pearson loop flagged (sums of squares out of
  float64's comfortable range), recomputed by :func:`.correlation.pearson`;
* :data:`COUNT_NAMES` and :func:`tau_of_counts` -- any Kendall variant from the loop's exact
  pair counts;
* :func:`rank_statistic` -- Spearman's rho by counting mid-ranks, the one implementation of
  Spearman over at most :data:`.wrank_sorted.SORTED_MIN_UNITS` systems (over more, the same
  mid-ranks by sorting).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._types import Variant
from .correlation import pearson
from .rank.tau import tau_from_counts

__all__ = ["COUNT_NAMES", "SystemTerms", "flagged_pearson", "rank_statistic", "swapped_means", "tau_of_counts"]

#: The rows of Kendall's pair counts (:func:`.swap_system_jit.kendall_counts`): C - D, pairs tied in
#: x, in z, in both, valid systems, and the smaller number of distinct values (tau-c only; 0 otherwise).
COUNT_NAMES = ("con_minus_dis", "tx", "tz", "txz", "n", "distinct")


class SystemTerms(NamedTuple):
    """A batch's per-metric terms of the swapped system sums, each (S, M, B) (system, metric, draw).

    The swapped metric ``X'`` of a pair keeps metric ``keep``'s cells where the mask is 0 and takes
    metric ``moved``'s where it is 1: its sum over system s is ``kept[s, keep] + took[s, moved]``,
    its count of valid cells ``kept_count[s, keep] + took_count[s, moved]``, and the target's three
    exact parts over those cells ``kept_z[:, s, keep] + took_z[:, s, moved]`` ((3, S, M, B) each).
    """

    kept: np.ndarray
    took: np.ndarray
    kept_count: np.ndarray
    took_count: np.ndarray
    kept_z: np.ndarray
    took_z: np.ndarray


def swapped_means(terms: SystemTerms, keep: np.ndarray, moved: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """System means (S, Pb, B) of the swapped metric and of the target over its valid cells (NaN without one).

    The target's sum is its three exact part sums added in a fixed order, ``(z0 + z1) + z2``.

    Examples
    --------
    >>> one = np.ones((2, 1, 1))
    >>> terms = SystemTerms(2 * one, 4 * one, one, one, np.stack([one, 0 * one, 0 * one]), np.zeros((3, 2, 1, 1)))
    >>> mean, zmean = swapped_means(terms, np.array([0]), np.array([0]))
    >>> mean[:, 0, 0].tolist(), zmean[:, 0, 0].tolist()
    ([3.0, 3.0], [0.5, 0.5])
    """
    return _combined(*(a[..., keep, :] if k % 2 == 0 else a[..., moved, :] for k, a in enumerate(terms)))


def _combined(kept: np.ndarray, took: np.ndarray, kept_count: np.ndarray, took_count: np.ndarray,
              kept_z: np.ndarray, took_z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The means of :func:`swapped_means` from its gathered terms (new arrays: overwritten here)."""
    count = kept_count
    count += took_count
    mean = kept
    mean += took
    parts = kept_z
    parts += took_z
    zmean = parts[0]
    zmean += parts[1]
    zmean += parts[2]
    with np.errstate(invalid="ignore", divide="ignore"):
        mean /= count
        zmean /= count
    if not (count > 0).all():
        empty = ~(count > 0)
        mean[empty] = np.nan
        zmean[empty] = np.nan
    return mean, zmean


def flagged_pearson(r: np.ndarray, terms: SystemTerms, keep: np.ndarray, moved: np.ndarray,
                    min_pairs: int) -> np.ndarray:
    """``r`` (Pb, B) of a block's pairs ``keep``/``moved``, its flagged (``inf``) rows recomputed.

    The loop flags a defined row whose sums of squares left :data:`.scaling.SAFE_SUM_BOUNDS` (scores
    beyond about 2**250 or below 2**-250). The flagged rows' means are taken as :func:`swapped_means`
    takes them, and their r by :func:`.correlation.pearson` (an exact power-of-two scaling first).
    ``r`` is changed in place.
    """
    p, b = np.nonzero(np.isinf(r))
    if p.size:  # each term at (s, metric, draw) of every flagged row: (S, R) or (3, S, R)
        gathered = (a[..., keep[p] if k % 2 == 0 else moved[p], b] for k, a in enumerate(terms))
        mean, zmean = _combined(*gathered)
        r[p, b] = pearson(mean.T, zmean.T, min_pairs=min_pairs)[0]
    return r


def tau_of_counts(counts: np.ndarray, variant: Variant, min_pairs: int) -> np.ndarray:
    """A Kendall variant from the pair counts (6, ...) of :data:`COUNT_NAMES`: NaN with fewer than ``max(min_pairs, 2)``
    valid systems and, but for tau_eq and acc_eq, where either vector is constant.

    Examples
    --------
    >>> tau_of_counts(np.array([4, 0, 0, 0, 4, 0]), "b", 3).round(4).tolist()
    0.6667
    """
    cmd, tx, tz, txz, n, distinct = counts
    tot = n * (n - 1) // 2
    tau = tau_from_counts(cmd, tot, tx, tz, n, distinct if variant == "c" else None, variant, txz)
    undefined = n < max(int(min_pairs), 2)
    if variant not in ("23", "acc23"):  # a constant vector: every valid pair tied
        undefined |= (tx == tot) | (tz == tot)
    return np.where(undefined, np.nan, np.clip(tau, -1.0, 1.0))


def _midranks(at: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Mid-ranks (S, R) of each column's valid values among themselves (NaN elsewhere), by counting."""
    ranks = np.empty(at.shape)
    for s in range(at.shape[0]):
        below = ((at < at[s]) & valid).sum(axis=0)
        tied = ((at == at[s]) & valid).sum(axis=0)  # itself included
        ranks[s] = below + (tied + 1) / 2.0
    return np.where(valid, ranks, np.nan)


def rank_statistic(xt: np.ndarray, zt: np.ndarray, *, min_pairs: int) -> np.ndarray:
    """Spearman's rho of each row of means (S, R) against the target's: (R,).

    Pearson's r (:func:`.correlation.pearson`) of the mid-ranks of the valid pairs, counted.

    Examples
    --------
    >>> xt = np.array([[1.0], [2.0], [3.0], [4.0]]); zt = np.array([[1.0], [3.0], [2.0], [4.0]])
    >>> rank_statistic(xt, zt, min_pairs=3).round(4).tolist()
    [0.8]
    """
    valid = ~np.isnan(xt) & ~np.isnan(zt)
    return pearson(_midranks(xt, valid).T, _midranks(zt, valid).T, min_pairs=min_pairs)[0]
