"""Early stopping of Monte-Carlo p-values with a controlled resampling risk.

A Monte-Carlo p-value estimates ``pi``, the share of all possible draws at least as
extreme as the observed statistic. The decision "reject at alpha" is settled once
we are confident on which side of ``alpha`` ``pi`` lies. After each look (a batch of
draws) an exact Clopper-Pearson interval for ``pi`` is formed from the extreme count
``k`` among the ``b`` draws so far, at confidence ``1 - risk / n_looks``; drawing stops
when the interval lies entirely below or above ``alpha``. By the union bound over the
(at most ``n_looks``) looks, the probability that the early decision differs from the
one with unlimited draws is at most ``risk`` (the "resampling risk" of Gandy 2009,
here with a simple Bonferroni spending of ``risk`` over the looks).

:func:`pvalue_bounds` gives the same interval for a Monte-Carlo p-value, widened to hold
the reported value itself (``(1 + k) / (1 + b)`` may lie just above the exact bound):
the bounds a family of corrected decisions is settled on (:mod:`xcorrstat._significance.auto`).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["clopper_pearson", "pvalue_bounds", "settled"]


def clopper_pearson(k: ArrayLike, b: ArrayLike, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Exact two-sided interval ``(low, high)`` for a binomial proportion with confidence ``level``.

    Examples
    --------
    >>> [round(float(v), 4) for v in clopper_pearson(0, 100, 0.95)]
    [0.0, 0.0362]
    """
    k = np.asarray(k, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    tail = (1.0 - level) / 2.0
    from scipy import special  # on use: about a fifth of a second to import

    with np.errstate(invalid="ignore", divide="ignore"):
        low = np.where(k > 0, special.betaincinv(k, b - k + 1.0, tail), 0.0)
        high = np.where(k < b, special.betaincinv(k + 1.0, b - k, 1.0 - tail), 1.0)
    return low, high


def settled(k: ArrayLike, b: ArrayLike, *, alpha: float, risk: float, n_looks: int) -> np.ndarray:
    """True where the decision ``pi <= alpha`` is settled after ``b`` draws with ``k`` extreme ones.

    Examples
    --------
    >>> settled(np.array([0, 15]), 100, alpha=0.2, risk=0.01, n_looks=10).tolist()
    [True, False]
    """
    low, high = clopper_pearson(k, b, 1.0 - risk / max(int(n_looks), 1))
    return (high < alpha) | (low > alpha)


def pvalue_bounds(k: ArrayLike, b: ArrayLike, p: ArrayLike, *, risk: float,
                  n_looks: int) -> tuple[np.ndarray, np.ndarray]:
    """Bounds ``(low, high)`` on the p-value ``pi`` that hold, with ``p`` itself, after ``b`` draws.

    The Clopper-Pearson interval of ``k`` extreme draws among ``b`` at confidence
    ``1 - risk / n_looks``, widened to contain the reported p-value ``p``; NaN where ``p``
    is NaN (no hypothesis).

    Examples
    --------
    >>> low, high = pvalue_bounds(np.array([0, 50]), 1000, np.array([1 / 1001, 51 / 1001]), risk=0.001, n_looks=1)
    >>> [round(float(v), 4) for v in low], [round(float(v), 4) for v in high]
    ([0.0, 0.0302], [0.0076, 0.0767])
    """
    p = np.asarray(p, dtype=np.float64)
    low, high = clopper_pearson(k, b, 1.0 - risk / max(int(n_looks), 1))
    nan = np.isnan(p)
    return np.where(nan, np.nan, np.fmin(low, p)), np.where(nan, np.nan, np.fmax(high, p))
