"""The statistic of the swapped system means of a block of pairs and draws: the NumPy path of
:mod:`.swap_system`.

A block's means are laid out (S, ...): system by system, each a plane over the block's pairs
and draws (or any rows). Every function here works plane by plane, vectorised over the rows,
with a loop over the S systems only:

* :func:`swapped_means` -- each system's mean of the swapped metric and of the target over the
  cells valid in it, from the per-metric terms of :class:`SystemTerms` (a few additions of
  exact sums and one division);
* :func:`row_pearson` -- Pearson's r of the means, corrected two-pass, every sum over the
  systems added in system order; a row whose sums of squares left float64's comfortable range
  is flagged ``inf`` (its caller recomputes it with :func:`.correlation.pearson`);
* :func:`kendall_counts` and :func:`tau_of_counts` -- Kendall's pair counts (exact integers)
  and any variant from them; :func:`rank_statistic` adds Spearman's mid-ranks.

The compiled loops of :mod:`.swap_system_jit` do the same operations in the same order, so the
two paths give the same floats.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._types import Method, Variant
from .correlation import pearson
from .scaling import SAFE_SUM_BOUNDS
from .tau import count_distinct, tau_from_counts

__all__ = ["COUNT_NAMES", "SystemTerms", "flagged_pearson", "kendall_counts", "rank_statistic", "row_pearson",
           "swapped_means", "tau_of_counts"]

#: The rows of :func:`kendall_counts`: C - D, pairs tied in x, in z, in both, valid systems, and the
#: smaller number of distinct values (tau-c only; 0 otherwise).
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


def _ordered_sum(a: np.ndarray) -> np.ndarray:
    """The planes of ``a`` (S, ...) added in system order, from 0.0."""
    total = np.zeros(a.shape[1:])
    for plane in a:
        total += plane
    return total


def _centred(a: np.ndarray, valid: np.ndarray | None, nn: np.ndarray | float) -> tuple[np.ndarray, np.ndarray]:
    """Deviations from the mean of the valid values (0 elsewhere; ``valid`` None: every value) and their mean
    (the mean's rounding error)."""
    if valid is None:
        dev = a - _ordered_sum(a) / nn
    else:
        dev = np.where(valid, a - _ordered_sum(np.where(valid, a, 0.0)) / nn, 0.0)
    return dev, _ordered_sum(dev) / nn


def _constant(a: np.ndarray, valid: np.ndarray | None) -> np.ndarray:
    """Whether ``a`` takes one value over the valid systems (or none) of each row."""
    if valid is None:
        return ~(np.min(a, axis=0) < np.max(a, axis=0))
    low = np.min(a, axis=0, where=valid, initial=np.inf)
    high = np.max(a, axis=0, where=valid, initial=-np.inf)
    return ~(low < high)


def _products(dx: np.ndarray, dz: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The sums over the systems of dx**2, dz**2 and dx dz, each added in system order."""
    sums = np.zeros((3,) + dx.shape[1:])
    for px, pz in zip(dx, dz):
        sums[0] += px * px
        sums[1] += pz * pz
        sums[2] += px * pz
    return sums[0], sums[1], sums[2]


def row_pearson(mx: np.ndarray, mz: np.ndarray, need: int) -> np.ndarray:
    """Pearson's r over axis 0 of means (S, ...) with the target's (same shape): NaN where undefined, ``inf``
    where flagged.

    Undefined: fewer than ``need`` valid systems (both means present), or either vector constant
    over them. Flagged: a defined row whose sums of squares left :data:`.scaling.SAFE_SUM_BOUNDS`
    (scores beyond about 2**250 or below 2**-250), to be recomputed by :func:`flagged_pearson`.

    Examples
    --------
    >>> mx = np.array([[1.0, 1.0], [2.0, 1.0], [3.0, 1.0], [4.0, np.nan]])
    >>> row_pearson(mx, np.array([[1.0, 1.0], [3.0, 3.0], [2.0, 2.0], [4.0, 4.0]]), 2).round(4).tolist()
    [0.8, nan]
    """
    valid: np.ndarray | None = ~(np.isnan(mx) | np.isnan(mz))
    n = valid.sum(axis=0)  # type: ignore[union-attr]
    nn = np.maximum(n, 1).astype(np.float64)
    if valid.all():  # type: ignore[union-attr]
        valid, nn = None, float(mx.shape[0])  # the same values without the masks
    with np.errstate(invalid="ignore", divide="ignore", over="ignore", under="ignore"):
        (dx, cx), (dz, cz) = _centred(mx, valid, nn), _centred(mz, valid, nn)
        sxx, szz, sxz = _products(dx, dz)
        sxx -= nn * cx * cx
        szz -= nn * cz * cz
        sxz -= nn * cx * cz
        r = np.clip(sxz / np.sqrt(sxx * szz), -1.0, 1.0)
    undefined = (n < need) | _constant(mx, valid) | _constant(mz, valid)
    low, high = SAFE_SUM_BOUNDS
    safe = (sxx > low) & (sxx < high) & (szz > low) & (szz < high)
    r[~safe] = np.inf
    r[undefined] = np.nan
    return r


def flagged_pearson(r: np.ndarray, terms: SystemTerms, keep: np.ndarray, moved: np.ndarray,
                    min_pairs: int) -> np.ndarray:
    """``r`` (Pb, B) of a block's pairs ``keep``/``moved``, its flagged (``inf``) rows recomputed.

    The flagged rows' means are taken as :func:`swapped_means` takes them, and their r by
    :func:`.correlation.pearson` (an exact power-of-two scaling first). ``r`` is changed in place.
    """
    p, b = np.nonzero(np.isinf(r))
    if p.size:  # each term at (s, metric, draw) of every flagged row: (S, R) or (3, S, R)
        gathered = (a[..., keep[p] if k % 2 == 0 else moved[p], b] for k, a in enumerate(terms))
        mean, zmean = _combined(*gathered)
        r[p, b] = pearson(mean.T, zmean.T, min_pairs=min_pairs)[0]
    return r


def kendall_counts(xt: np.ndarray, zt: np.ndarray, distinct: bool) -> np.ndarray:
    """Kendall's pair counts (6, R) of each row of means (S, R) against the target's (:data:`COUNT_NAMES`).

    The pairs (s, t > s) of every row at once, signs as int8; ``distinct`` adds the smaller
    number of distinct values (tau-c).

    Examples
    --------
    >>> xt = np.array([[1.0], [2.0], [3.0], [4.0]]); zt = np.array([[1.0], [3.0], [2.0], [4.0]])
    >>> kendall_counts(xt, zt, False)[:, 0].tolist()
    [4, 0, 0, 0, 4, 0]
    """
    valid = ~np.isnan(xt) & ~np.isnan(zt)
    counts = np.zeros((len(COUNT_NAMES), xt.shape[1]), dtype=np.int64)
    cmd, tx, tz, txz = counts[:4]
    with np.errstate(invalid="ignore"):
        for s in range(xt.shape[0] - 1):
            pv = valid[s] & valid[s + 1:]
            gx, lx = xt[s] > xt[s + 1:], xt[s] < xt[s + 1:]
            gz, lz = zt[s] > zt[s + 1:], zt[s] < zt[s + 1:]
            agree = (gx.view(np.int8) - lx.view(np.int8)) * (gz.view(np.int8) - lz.view(np.int8))
            agree *= pv.view(np.int8)
            cmd += agree.sum(axis=0, dtype=np.int64)
            ex, ez = ~(gx | lx) & pv, ~(gz | lz) & pv
            tx += ex.sum(axis=0, dtype=np.int64)
            tz += ez.sum(axis=0, dtype=np.int64)
            txz += (ex & ez).sum(axis=0, dtype=np.int64)
    counts[4] = valid.sum(axis=0)
    if distinct:
        counts[5] = np.minimum(count_distinct(xt.T, valid.T), count_distinct(zt.T, valid.T))
    return counts


def tau_of_counts(counts: np.ndarray, variant: Variant, min_pairs: int) -> np.ndarray:
    """A Kendall variant from :func:`kendall_counts` (6, ...): NaN with fewer than ``max(min_pairs, 2)``
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


def rank_statistic(xt: np.ndarray, zt: np.ndarray, *, method: Method, variant: Variant,
                   min_pairs: int) -> np.ndarray:
    """Spearman's rho or a Kendall variant of each row of means (S, R) against the target's: (R,).

    Spearman is Pearson's r (:func:`.correlation.pearson`) of the mid-ranks of the valid pairs.

    Examples
    --------
    >>> xt = np.array([[1.0], [2.0], [3.0], [4.0]]); zt = np.array([[1.0], [3.0], [2.0], [4.0]])
    >>> rank_statistic(xt, zt, method="spearman", variant="b", min_pairs=3).round(4).tolist()
    [0.8]
    """
    if method == "spearman":
        valid = ~np.isnan(xt) & ~np.isnan(zt)
        return pearson(_midranks(xt, valid).T, _midranks(zt, valid).T, min_pairs=min_pairs)[0]
    return tau_of_counts(kendall_counts(xt, zt, variant == "c"), variant, min_pairs)
