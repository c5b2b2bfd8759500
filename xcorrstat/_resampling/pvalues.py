"""Monte-Carlo p-values from the draws of a test statistic (NumPy only).

One counter serves every resampling test: a draw is *as extreme* as the observed
value when it lies beyond it in the direction of the alternative, within
:data:`TIE_TOLERANCE`. The permutation test compares the draws themselves; the
paired bootstrap compares the centred draws ``delta* - delta`` (the bootstrap
distribution shifted to the null).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._types import Alternative, PValue
from .._validation import check_choice

__all__ = ["ALTERNATIVES", "PVALUES", "TIE_TOLERANCE", "extreme_count", "permutation_pvalue",
           "paired_bootstrap_pvalue"]

#: Directions of the alternative hypothesis.
ALTERNATIVES: tuple[Alternative, ...] = ("greater", "less", "two-sided")
#: Monte-Carlo conventions: ``(1 + k) / (1 + B)`` or ``k / B``.
PVALUES: tuple[PValue, ...] = ("plus-one", "fraction")
#: |difference| below which a draw counts as equal to the observed value.
TIE_TOLERANCE = 1e-12


def extreme_count(draws: ArrayLike, observed: ArrayLike, alternative: Alternative) -> tuple[np.ndarray, np.ndarray]:
    """Draws at least as extreme as ``observed``, and defined draws, over the last axis of ``draws``.

    Examples
    --------
    >>> k, b = extreme_count(np.array([0.1, 0.3, np.nan, 0.5]), 0.3, "greater")
    >>> int(k), int(b)
    (2, 3)
    """
    draws = np.asarray(draws, dtype=np.float64)
    observed = np.asarray(observed, dtype=np.float64)[..., None]
    defined = ~np.isnan(draws)
    with np.errstate(invalid="ignore"):
        if alternative == "greater":
            extreme = draws >= observed - TIE_TOLERANCE
        elif alternative == "less":
            extreme = draws <= observed + TIE_TOLERANCE
        else:
            extreme = np.abs(draws) >= np.abs(observed) - TIE_TOLERANCE
    return np.sum(extreme & defined, axis=-1), defined.sum(axis=-1)


def _from_counts(count: np.ndarray, b: np.ndarray, observed: ArrayLike, pvalue: PValue) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        p = (1.0 + count) / (1.0 + b) if pvalue == "plus-one" else count / b
    return np.where((b > 0) & ~np.isnan(np.asarray(observed, dtype=np.float64)), p, np.nan)


def permutation_pvalue(draws: ArrayLike, observed: ArrayLike, *, alternative: Alternative = "greater",
                       pvalue: PValue = "plus-one") -> np.ndarray:
    """Monte-Carlo p-value of a permutation test over the defined draws (last axis).

    ``plus-one``: ``(1 + #{as extreme}) / (1 + B)``, a valid test that is never 0;
    ``fraction``: ``#{as extreme} / B``. Two-sided compares ``|draw|`` with
    ``|observed|``. NaN where ``observed`` is NaN or no draw is defined.

    Examples
    --------
    >>> float(permutation_pvalue(np.array([0.1, 0.3, np.nan, 0.5]), 0.3))  # (1 + 2) / (1 + 3)
    0.75
    """
    count, b = extreme_count(draws, observed, alternative)
    return _from_counts(count, b, observed, pvalue)


def paired_bootstrap_pvalue(
    draws: ArrayLike,
    observed: ArrayLike,
    *,
    alternative: Alternative = "greater",
    pvalue: PValue = "plus-one",
) -> np.ndarray:
    """P-value of the paired bootstrap test from the draws of ``delta`` (NumPy only).

    With ``delta`` the observed difference and ``delta*_b`` the defined (non-NaN)
    draws, ``B`` of them, the count ``k`` is taken over the centred draws
    ``delta*_b - delta``:

    * ``"greater"`` (H1: ``delta > 0``): ``k = #{delta*_b - delta >= delta}``,
      i.e. ``delta*_b >= 2 delta``;
    * ``"less"`` (H1: ``delta < 0``): ``k = #{delta*_b - delta <= delta}``;
    * ``"two-sided"`` (H1: ``delta != 0``): ``k = #{|delta*_b - delta| >= |delta|}``.

    A centred draw within :data:`TIE_TOLERANCE` (1e-12) of the boundary counts as
    extreme. ``pvalue="plus-one"`` gives ``(1 + k) / (1 + B)``, ``"fraction"``
    gives ``k / B``.

    Parameters
    ----------
    draws : array_like (..., B)
        ``delta*`` of every draw along the last axis; NaN draws are left out.
    observed : array_like (...)
        The observed ``delta``; broadcast against ``draws`` without its last axis.
    alternative : {"greater", "less", "two-sided"}
        Direction of the alternative hypothesis.
    pvalue : {"plus-one", "fraction"}
        Monte-Carlo convention.

    Returns
    -------
    ndarray (...)
        The p-value; NaN where ``observed`` is NaN or no draw is defined.

    Examples
    --------
    >>> draws = np.array([0.1, 0.2, 0.45, np.nan, 0.5])
    >>> float(paired_bootstrap_pvalue(draws, 0.2, pvalue="fraction"))  # draws >= 0.4: 2 of 4
    0.5
    >>> float(paired_bootstrap_pvalue(draws, 0.2))  # (1 + 2) / (1 + 4)
    0.6
    """
    check_choice(alternative, ALTERNATIVES, "alternative")
    check_choice(pvalue, PVALUES, "pvalue")
    draws = np.asarray(draws, dtype=np.float64)
    observed = np.asarray(observed, dtype=np.float64)
    if draws.ndim == 0:
        raise ValueError("draws must have a last axis of draws, got a scalar")
    with np.errstate(invalid="ignore"):
        centred = draws - observed[..., None]
    count, b = extreme_count(centred, observed, alternative)
    return _from_counts(count, b, observed, pvalue)
