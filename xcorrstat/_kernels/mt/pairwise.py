"""Pair counts of a metric against a target along the last axis: agreement and WMT's DARR Kendall-like.

* Agreement (pairwise accuracy): a pair agrees when ``sign(dm) == sign(dg)``, so a pair
  tied in both agrees and a pair tied in only one does not (mt-metrics-eval's ``Agreement``).
* Kendall-like (WMT DARR): only pairs with ``|dg| >= threshold`` count; such a pair is
  concordant when the metric orders it the same way strictly, and discordant otherwise,
  a metric tie included. ``tau = (C - D) / (C + D)``.

A pair is valid when both items have both scores. Every count is an exact integer, summed
over the pairs of the last axis and broadcast over the leading axes.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..rank.tau import PerRow

__all__ = ["agreement_counts", "difference_sums", "kendall_like_counts"]


def _pairs(x: ArrayLike, z: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Differences ``dx``, ``dz`` of every pair ``a < b`` of the last axis, and whether the pair is valid."""
    ax, az = np.broadcast_arrays(np.asarray(x, dtype=np.float64), np.asarray(z, dtype=np.float64))
    a, b = np.triu_indices(ax.shape[-1], 1)
    valid = ~np.isnan(ax) & ~np.isnan(az)
    ok = valid[..., a] & valid[..., b]
    with np.errstate(invalid="ignore"):
        return ax[..., a] - ax[..., b], az[..., a] - az[..., b], ok


def agreement_counts(x: ArrayLike, z: ArrayLike) -> tuple[PerRow, PerRow]:
    """``(agree, pairs)``: valid pairs with ``sign(dx) == sign(dz)``, and all valid pairs.

    Examples
    --------
    >>> agree, pairs = agreement_counts([1.0, 2.0, 2.0], [1.0, 3.0, 2.0])
    >>> int(agree), int(pairs)
    (2, 3)
    """
    dx, dz, ok = _pairs(x, z)
    agree = np.sum((np.sign(dx) == np.sign(dz)) & ok, axis=-1, dtype=np.int64)
    return agree, ok.sum(axis=-1, dtype=np.int64)


def kendall_like_counts(x: ArrayLike, z: ArrayLike, *, threshold: float) -> tuple[PerRow, PerRow]:
    """``(concordant, discordant)`` over the valid pairs with ``|dz| >= threshold`` (DARR).

    Examples
    --------
    >>> c, d = kendall_like_counts([1.0, 2.0, 2.0], [1.0, 3.0, 2.0], threshold=1.0)
    >>> int(c), int(d)  # the last pair ties in the metric: discordant
    (2, 1)
    """
    dx, dz, ok = _pairs(x, z)
    with np.errstate(invalid="ignore"):
        used = ok & (np.abs(dz) >= threshold)
        concordant = used & (np.sign(dx) == np.sign(dz)) & (dx != 0)
    c = concordant.sum(axis=-1, dtype=np.int64)
    return c, used.sum(axis=-1, dtype=np.int64) - c


def difference_sums(x: ArrayLike, z: ArrayLike) -> tuple[PerRow, PerRow, PerRow, PerRow]:
    """``(sum dx dz, sum dx^2, sum dz^2, pairs)`` over the valid pairs: the parts of the pairwise
    difference Pearson correlation (an uncentred correlation of pair differences).

    The sums are pooled over groups by the caller, so scaling is the caller's: scores of extreme
    magnitude are first brought into range by one exact power of two per metric
    (:func:`xcorrstat.pairwise_difference_pearson` does this).

    Examples
    --------
    >>> [float(v) for v in difference_sums([1.0, 2.0, 4.0], [1.0, 3.0, 2.0])]
    [3.0, 14.0, 6.0, 3.0]
    """
    dx, dz, ok = _pairs(x, z)
    dx, dz = np.where(ok, dx, 0.0), np.where(ok, dz, 0.0)
    return ((dx * dz).sum(axis=-1), (dx * dx).sum(axis=-1), (dz * dz).sum(axis=-1),
            ok.sum(axis=-1, dtype=np.int64))
