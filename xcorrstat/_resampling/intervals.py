"""Confidence intervals from draws (percentile, basic, BCa) and Fisher's z (NumPy only).

The draws axis is the last axis. Undefined draws are NaN and are left out of the
quantiles (their number is reported by the callers).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._types import Method
from .._validation import check_confidence_level

__all__ = ["percentile_ci", "basic_ci", "bca_ci", "fisher_ci", "FISHER_CONSTANTS"]


def _quantiles(draws: ArrayLike, probs: ArrayLike) -> np.ndarray:
    """Quantiles along the last axis over the defined draws; ``probs`` broadcast to the leading shape."""
    draws = np.asarray(draws, dtype=np.float64)
    probs = np.broadcast_to(np.asarray(probs, dtype=np.float64), draws.shape[:-1])
    s = np.sort(draws, axis=-1)  # NaN last
    n = np.sum(~np.isnan(draws), axis=-1)
    # numpy's default "linear" method on the n defined values: h = (n - 1) p
    h = (n - 1) * probs
    lo = np.clip(np.floor(h).astype(np.int64), 0, np.maximum(n - 1, 0))
    hi = np.clip(lo + 1, 0, np.maximum(n - 1, 0))
    a = np.take_along_axis(s, lo[..., None], axis=-1)[..., 0]
    b = np.take_along_axis(s, hi[..., None], axis=-1)[..., 0]
    out = a + (h - lo) * (b - a)
    out = np.where(h - lo == 0, a, out)
    return np.where((n > 0) & ~np.isnan(probs), out, np.nan)


def percentile_ci(draws: ArrayLike, confidence_level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Quantiles ``alpha/2`` and ``1 - alpha/2`` of the defined draws.

    Examples
    --------
    >>> [round(float(q), 6) for q in percentile_ci(np.arange(101.0), 0.9)]
    [5.0, 95.0]
    """
    alpha = 1.0 - check_confidence_level(confidence_level)
    return _quantiles(draws, alpha / 2), _quantiles(draws, 1 - alpha / 2)


def basic_ci(draws: ArrayLike, estimate: ArrayLike, confidence_level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Basic (reverse percentile) interval ``2 theta - q(1 - alpha/2), 2 theta - q(alpha/2)``.

    Examples
    --------
    >>> [round(float(q), 6) for q in basic_ci(np.arange(101.0), 60.0, 0.9)]
    [25.0, 115.0]
    """
    low_q, high_q = percentile_ci(draws, confidence_level)
    estimate = np.asarray(estimate, dtype=np.float64)
    return 2 * estimate - high_q, 2 * estimate - low_q


def bca_ci(draws: ArrayLike, estimate: ArrayLike, jackknife: ArrayLike,
           confidence_level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Bias-corrected and accelerated interval (Efron 1987).

    Parameters
    ----------
    draws : ndarray (..., B)
    estimate : ndarray (...)
    jackknife : ndarray (..., n)
        Leave-one-unit-out statistics over the resampled dim.

    Notes
    -----
    Bias correction ``z0 = Phi^-1(share of draws below the estimate, ties counted
    half)``; acceleration ``a = sum d^3 / (6 (sum d^2)^{3/2})`` with ``d`` the
    jackknife deviations from their mean; the interval takes the quantiles
    ``Phi(z0 + (z0 + z_q) / (1 - a (z0 + z_q)))`` of the draws for ``z_q`` at
    ``alpha/2`` and ``1 - alpha/2``.
    """
    from scipy.special import ndtr, ndtri  # on use: about a fifth of a second to import

    alpha = 1.0 - check_confidence_level(confidence_level)
    draws = np.asarray(draws, dtype=np.float64)
    estimate = np.asarray(estimate, dtype=np.float64)[..., None]
    defined = ~np.isnan(draws)
    nb = defined.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        below = (np.sum(draws < estimate, axis=-1) + np.sum(draws <= estimate, axis=-1)) / (2.0 * nb)
        z0 = ndtri(below)
        jack = np.asarray(jackknife, dtype=np.float64)
        d = np.nanmean(jack, axis=-1, keepdims=True) - jack
        num = np.nansum(d**3, axis=-1)
        den = 6.0 * np.nansum(d**2, axis=-1) ** 1.5
        a = num / den
        probs = []
        for q in (alpha / 2, 1 - alpha / 2):
            zq = ndtri(q)
            probs.append(ndtr(z0 + (z0 + zq) / (1 - a * (z0 + zq))))
    return _quantiles(draws, probs[0]), _quantiles(draws, probs[1])


# Bonett & Wright (2000): (b, c) per method; c may depend on r for Spearman
FISHER_CONSTANTS: dict[str, tuple[int, str]] = {
    "pearson": (3, "1"), "spearman": (3, "sqrt(1 + r^2 / 2)"), "kendall": (4, "sqrt(0.437)"),
}


def fisher_ci(r: ArrayLike, n: ArrayLike, *, method: Method = "pearson",
              confidence_level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Fisher-z interval ``tanh(artanh(r) -/+ z_{alpha/2} c / sqrt(n - b))``.

    NaN where ``n <= b`` or ``r`` is undefined; ``|r| = 1`` gives a zero-width interval.

    Examples
    --------
    >>> [round(float(v), 3) for v in fisher_ci(0.5, 28)]
    [0.156, 0.736]
    """
    alpha = 1.0 - check_confidence_level(confidence_level)
    r = np.asarray(r, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    if method == "pearson":
        b, c = 3, np.ones_like(r)
    elif method == "spearman":
        b, c = 3, np.sqrt(1 + r**2 / 2)
    elif method == "kendall":
        b, c = 4, np.full_like(r, np.sqrt(0.437))
    else:
        raise ValueError(f"method must be pearson, spearman or kendall, got {method!r}")
    from scipy.special import ndtri

    with np.errstate(invalid="ignore", divide="ignore"):
        zr = np.arctanh(r)
        half = ndtri(1 - alpha / 2) * c / np.sqrt(n - b)
        low, high = np.tanh(zr - half), np.tanh(zr + half)
    ok = n > b
    return np.where(ok, low, np.nan), np.where(ok, high, np.nan)
