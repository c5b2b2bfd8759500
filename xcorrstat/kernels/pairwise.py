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

__all__ = ["agreement_counts", "difference_sums", "kendall_like_counts"]


def _pairs(x, z):
    x = np.asarray(x, dtype=np.float64)
    z = np.asarray(z, dtype=np.float64)
    x, z = np.broadcast_arrays(x, z)
    a, b = np.triu_indices(x.shape[-1], 1)
    valid = ~np.isnan(x) & ~np.isnan(z)
    ok = valid[..., a] & valid[..., b]
    with np.errstate(invalid="ignore"):
        return x[..., a] - x[..., b], z[..., a] - z[..., b], ok


def agreement_counts(x, z):
    """``(agree, pairs)``: valid pairs with ``sign(dx) == sign(dz)``, and all valid pairs."""
    dx, dz, ok = _pairs(x, z)
    agree = np.sum((np.sign(dx) == np.sign(dz)) & ok, axis=-1, dtype=np.int64)
    return agree, ok.sum(axis=-1, dtype=np.int64)


def kendall_like_counts(x, z, *, threshold: float):
    """``(concordant, discordant)`` over the valid pairs with ``|dz| >= threshold`` (DARR)."""
    dx, dz, ok = _pairs(x, z)
    with np.errstate(invalid="ignore"):
        used = ok & (np.abs(dz) >= threshold)
        concordant = used & (np.sign(dx) == np.sign(dz)) & (dx != 0)
    c = concordant.sum(axis=-1, dtype=np.int64)
    return c, used.sum(axis=-1, dtype=np.int64) - c


def difference_sums(x, z):
    """``(sum dx dz, sum dx^2, sum dz^2, pairs)`` over the valid pairs: the parts of the pairwise
    difference Pearson correlation (an uncentred correlation of pair differences).

    The sums are pooled over groups by the caller, so scaling is the caller's: scores of extreme
    magnitude are first brought into range by one exact power of two per metric
    (:func:`xcorrstat.pairwise.pdp_statistic` does this)."""
    dx, dz, ok = _pairs(x, z)
    dx, dz = np.where(ok, dx, 0.0), np.where(ok, dz, 0.0)
    return ((dx * dz).sum(axis=-1), (dx * dx).sum(axis=-1), (dz * dz).sum(axis=-1),
            ok.sum(axis=-1, dtype=np.int64))
