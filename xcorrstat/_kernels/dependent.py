"""Comparing two dependent, overlapping correlations: Williams, Steiger and Zou.

Two metrics ``k`` and ``h`` are correlated with the same human target ``j`` over
the same ``n`` units: ``r_jk`` and ``r_jh`` share the variable ``j`` and are
dependent through ``r_kh``, the correlation between the two metrics. Each
function takes the three correlations and ``n`` as array_likes that broadcast
against each other, so a whole grid of metric pairs is tested in one call.

Undefined results are NaN, never an error: a NaN input; any ``|r| >= 1``; ``n <= 3``;
or a triple that is not a valid correlation matrix (negative determinant
``|R| = 1 - r_jk² - r_jh² - r_kh² + 2 r_jk r_jh r_kh``) gives a NaN statistic and a
NaN p-value (a NaN interval for :func:`zou_ci`).

References
----------
E. J. Williams (1959), *The comparison of regression variables*, JRSS B 21, 396-399.
J. H. Steiger (1980), *Tests for comparing elements of a correlation matrix*,
Psychological Bulletin 87, 245-251 (Williams' T2, eq. 7; Z with pooled r, eqs. 3, 14).
G. Y. Zou (2007), *Toward using confidence intervals to compare correlations*,
Psychological Methods 12, 399-413.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple, get_args

import numpy as np
from numpy.typing import ArrayLike

from .._docs import fill_doc
from .._types import Alternative
from .._validation import check_choice, check_confidence_level

__all__ = ["ALTERNATIVES", "DependentTest", "Interval", "steiger_z", "williams", "zou_ci"]

#: Directions of the alternative hypothesis: the members of :data:`xcorrstat._types.Alternative`.
ALTERNATIVES: tuple[Alternative, ...] = get_args(Alternative)


class DependentTest(NamedTuple):
    """A test statistic and its p-value (arrays over the broadcast shape)."""

    statistic: np.ndarray
    pvalue: np.ndarray


class Interval(NamedTuple):
    """Lower and upper confidence limits (arrays over the broadcast shape)."""

    low: np.ndarray
    high: np.ndarray


def _prepare(
    r_jk: ArrayLike, r_jh: ArrayLike, r_kh: ArrayLike, n: ArrayLike
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Broadcast float64 arrays, with NaN wherever the comparison is undefined, and |R|."""
    a, b, c, n = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in (r_jk, r_jh, r_kh, n)))
    with np.errstate(invalid="ignore"):
        det = 1.0 - a * a - b * b - c * c + 2.0 * a * b * c
        valid = (np.abs(a) < 1) & (np.abs(b) < 1) & (np.abs(c) < 1) & (n > 3) & (det >= 0)
    a, b, c, n, det = (np.where(valid, v, np.nan) for v in (a, b, c, n, det))
    return a, b, c, n, det


def _pvalue(stat: np.ndarray, alternative: Alternative, sf: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """p-value of ``stat`` from a symmetric distribution with survival function ``sf``."""
    if alternative == "greater":
        return sf(stat)
    if alternative == "less":
        return sf(-stat)
    return np.minimum(2.0 * sf(np.abs(stat)), 1.0)


def williams(
    r_jk: ArrayLike,
    r_jh: ArrayLike,
    r_kh: ArrayLike,
    n: ArrayLike,
    *,
    alternative: Alternative,
    absolute: bool = False,
) -> DependentTest:
    """Williams' t test of ``r_jk`` against ``r_jh`` (dependent, overlapping).

    ``t = (r_jk - r_jh) * sqrt((n-1)(1+r_kh) / (2 (n-1)/(n-3) |R| + rbar² (1-r_kh)³))``
    with ``rbar = (r_jk + r_jh) / 2``, referred to Student's t with ``n - 3`` degrees
    of freedom (Williams 1959; Steiger 1980, T2).

    Parameters
    ----------
    r_jk, r_jh : array_like
        Correlations of metrics ``k`` and ``h`` with the target ``j``.
    r_kh : array_like
        Correlation between the two metrics.
    n : array_like
        Number of units each correlation was computed over.
    alternative : {"greater", "less", "two-sided"}
        Required: the callers state the direction (``williams_test`` defaults to ``"greater"``).
        ``"greater"``: H1 is ``r_jk > r_jh``, ``p = P(T > t)``; ``"less"``: H1 is
        ``r_jk < r_jh``, ``p = P(T < t)``; ``"two-sided"``: ``p = 2 P(T > |t|)``.
    absolute : bool
        If True, ``r_jk``, ``r_jh`` and ``r_kh`` are replaced by their absolute values
        before the test, so strength of association is compared whatever its sign
        (a metric such as TER that falls as quality rises is compared on ``|r|``).
        This is the convention of the WMT metrics-task scripts and of nlpstats'
        ``williams_test``. If False (default), the signed correlations are used, as in
        R ``psych::r.test`` and ``cocor``.

    Returns
    -------
    DependentTest
        ``(statistic, pvalue)``, NaN where undefined (see the module docstring).

    Notes
    -----
    ``psych::r.test(n, r12=r_jk, r13=r_jh, r23=r_kh)`` reports signed ``r`` and
    ``p = P(T > |t|)`` (doubled when ``twotailed=TRUE``, the default): its one-tailed
    p-value is ours with ``alternative="greater"`` when ``r_jk >= r_jh`` (``t >= 0``)
    and with ``"less"`` otherwise, i.e. it always tests the observed direction. Here
    the direction is fixed by ``alternative`` before looking at the data, so a
    "greater" p-value is above 0.5 when ``r_jk < r_jh``.

    Examples
    --------
    >>> t, p = williams(0.3, 0.4, 0.5, 100, alternative="two-sided")
    >>> round(float(t), 4), round(float(p), 4)
    (-1.0767, 0.2843)
    >>> t, p = williams([0.9, 0.8], 0.6, 0.65, 11, alternative="greater")
    >>> p.shape
    (2,)
    """
    check_choice(alternative, ALTERNATIVES, "alternative")
    if absolute:
        r_jk, r_jh, r_kh = (np.abs(np.asarray(v, dtype=np.float64)) for v in (r_jk, r_jh, r_kh))
    a, b, c, m, det = _prepare(r_jk, r_jh, r_kh, n)
    rbar = (a + b) / 2.0
    with np.errstate(divide="ignore", invalid="ignore"):
        denom = 2.0 * (m - 1.0) / (m - 3.0) * det + rbar * rbar * (1.0 - c) ** 3
        t = (a - b) * np.sqrt((m - 1.0) * (1.0 + c) / denom)
    df = m - 3.0
    from scipy import special  # on use: about a fifth of a second to import

    p = _pvalue(t, alternative, lambda x: special.stdtr(df, -x))
    return DependentTest(t[()], p[()])


def steiger_z(
    r_jk: ArrayLike,
    r_jh: ArrayLike,
    r_kh: ArrayLike,
    n: ArrayLike,
    *,
    alternative: Alternative,
) -> DependentTest:
    """Steiger's (1980) Z test of ``r_jk`` against ``r_jh`` with the pooled correlation.

    ``Z = (atanh r_jk - atanh r_jh) * sqrt((n - 3) / (2 - 2 s))``, where ``s`` is the
    correlation of the two Fisher z's evaluated at ``rbar = (r_jk + r_jh) / 2``:
    ``s = psi / (1 - rbar²)²``, ``psi = r_kh (1 - 2 rbar²) - rbar² (1 - 2 rbar² - r_kh²) / 2``.
    Z is referred to the standard normal (``cocor``'s ``steiger1980``).

    Parameters
    ----------
    r_jk, r_jh, r_kh, n : array_like
        As in :func:`williams`; broadcast against each other.
    alternative : {"greater", "less", "two-sided"}
        ``"greater"``: H1 is ``r_jk > r_jh``, ``p = P(N > z)``; ``"less"``: ``P(N < z)``;
        ``"two-sided"``: ``2 P(N > |z|)``.

    Returns
    -------
    DependentTest
        ``(statistic, pvalue)``, NaN where undefined (see the module docstring).

    Examples
    --------
    >>> z, p = steiger_z(0.3, 0.4, 0.5, 100, alternative="two-sided")
    >>> round(float(z), 4), round(float(p), 4)
    (-1.0718, 0.2838)
    """
    check_choice(alternative, ALTERNATIVES, "alternative")
    a, b, c, m, _ = _prepare(r_jk, r_jh, r_kh, n)
    r2 = ((a + b) / 2.0) ** 2
    psi = c * (1.0 - 2.0 * r2) - 0.5 * r2 * (1.0 - 2.0 * r2 - c * c)
    s = psi / (1.0 - r2) ** 2
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (np.arctanh(a) - np.arctanh(b)) * np.sqrt((m - 3.0) / (2.0 - 2.0 * s))
    from scipy import special

    p = _pvalue(z, alternative, lambda x: special.ndtr(-x))
    return DependentTest(z[()], p[()])


@fill_doc
def zou_ci(
    r_jk: ArrayLike,
    r_jh: ArrayLike,
    r_kh: ArrayLike,
    n: ArrayLike,
    *,
    confidence_level: float = 0.95,
) -> Interval:
    """Zou's (2007) confidence interval for ``r_jk - r_jh`` (dependent, overlapping).

    With ``(l1, u1)`` and ``(l2, u2)`` the Fisher-z intervals of ``r_jk`` and ``r_jh``
    (``tanh(atanh r ± q / sqrt(n - 3))``, ``q`` the normal quantile) and
    ``c = ((r_kh - r_jk r_jh / 2)(1 - r_jk² - r_jh² - r_kh²) + r_kh³) / ((1 - r_jk²)(1 - r_jh²))``
    the correlation between ``r_jk`` and ``r_jh``::

        low  = d - sqrt((r_jk - l1)² + (u2 - r_jh)² - 2 c (r_jk - l1)(u2 - r_jh))
        high = d + sqrt((u1 - r_jk)² + (r_jh - l2)² - 2 c (u1 - r_jk)(r_jh - l2))

    where ``d = r_jk - r_jh``. The difference is significant at level
    ``1 - confidence_level`` (two-sided) when the interval excludes 0.

    Parameters
    ----------
    r_jk, r_jh, r_kh, n : array_like
        As in :func:`williams`; broadcast against each other.
    %(confidence_level)s

    Returns
    -------
    Interval
        ``(low, high)``, NaN where undefined (see the module docstring).

    Examples
    --------
    >>> low, high = zou_ci(0.396, 0.179, 0.088, 66)
    >>> round(float(low), 3), round(float(high), 3)
    (-0.093, 0.517)
    """
    level = check_confidence_level(confidence_level)
    a, b, c, m, _ = _prepare(r_jk, r_jh, r_kh, n)
    from scipy import special

    half = special.ndtri(0.5 + level / 2.0) / np.sqrt(m - 3.0)
    l1, u1 = np.tanh(np.arctanh(a) - half), np.tanh(np.arctanh(a) + half)
    l2, u2 = np.tanh(np.arctanh(b) - half), np.tanh(np.arctanh(b) + half)
    corr = ((c - 0.5 * a * b) * (1.0 - a * a - b * b - c * c) + c**3) / ((1.0 - a * a) * (1.0 - b * b))
    d = a - b
    with np.errstate(invalid="ignore"):
        low = d - np.sqrt((a - l1) ** 2 + (u2 - b) ** 2 - 2.0 * corr * (a - l1) * (u2 - b))
        high = d + np.sqrt((u1 - a) ** 2 + (b - l2) ** 2 - 2.0 * corr * (u1 - a) * (b - l2))
    return Interval(low[()], high[()])
