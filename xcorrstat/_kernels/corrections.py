"""Multiple-testing corrections of p-values along an axis: Bonferroni, Holm, Benjamini-Hochberg.

Each 1-D slice along ``axis`` is one family of hypotheses; every other axis is a
batch of independent families, handled at once. NaN p-values are not hypotheses:
they are ignored, stay NaN in the output (and are never rejected), and the family
size ``m`` counts only the non-NaN p-values of the slice.

With ``p_(1) <= ... <= p_(m)`` the sorted p-values of a family, the adjusted
p-values are

* ``"bonferroni"``: ``min(1, m p_i)``;
* ``"holm"`` (step-down, Holm 1979): ``min(1, max_{j <= i} (m - j + 1) p_(j))``;
* ``"fdr_bh"`` (step-up, Benjamini & Hochberg 1995): ``min(1, min_{j >= i} m p_(j) / j)``.

Both step-wise adjustments are monotone in the p-values, and tied p-values get
the same adjusted value. A hypothesis is rejected at level ``alpha`` iff its
adjusted p-value is ``<= alpha``, which is the same as running the step-down
(Holm) or step-up (BH) procedure at ``alpha``.
"""

from __future__ import annotations

from typing import get_args

import numpy as np
from numpy.typing import ArrayLike

from .._types import Correction
from .._validation import check_choice, check_unit_interval

__all__ = ["CORRECTIONS", "adjust_pvalues", "reject"]

#: The multiple-testing corrections: the members of :data:`xcorrstat._types.Correction`.
CORRECTIONS: tuple[Correction, ...] = get_args(Correction)


def adjust_pvalues(p: ArrayLike, *, method: Correction = "holm", axis: int = -1) -> np.ndarray:
    """Adjusted p-values of each family of hypotheses along ``axis``.

    Parameters
    ----------
    p : array_like
        p-values in ``[0, 1]``; NaN marks a missing hypothesis.
    method : {"bonferroni", "holm", "fdr_bh"}
        Bonferroni (family-wise error), Holm step-down (family-wise error) or
        Benjamini-Hochberg step-up (false discovery rate, independent or positively
        dependent tests). See the module docstring for the formulas.
    axis : int
        The axis along which the p-values form one family.

    Returns
    -------
    ndarray
        Adjusted p-values, same shape as ``p``, clipped at 1, NaN where ``p`` is NaN.

    Raises
    ------
    ValueError
        If ``method`` is unknown or a non-NaN p-value is outside ``[0, 1]``.

    Examples
    --------
    >>> adjust_pvalues([0.01, 0.04, 0.03], method="holm")
    array([0.03, 0.06, 0.06])
    >>> adjust_pvalues([0.01, float("nan"), 0.02], method="bonferroni")
    array([0.02,  nan, 0.04])
    """
    check_choice(method, CORRECTIONS, "method")
    pa = np.asarray(p, dtype=np.float64)
    if np.any((pa < 0) | (pa > 1)):
        raise ValueError("p-values must lie in [0, 1] (or be NaN)")
    if pa.ndim == 0:
        return adjust_pvalues(pa.reshape(1), method=method)[0]
    x = np.moveaxis(pa, axis, -1)
    missing = np.isnan(x)
    m = np.sum(~missing, axis=-1, keepdims=True).astype(np.float64)
    if method == "bonferroni":
        out = np.minimum(x * m, 1.0)
    else:
        order = np.argsort(x, axis=-1, kind="stable")  # NaN sort last
        ps = np.take_along_axis(x, order, axis=-1)
        rank = np.arange(1, x.shape[-1] + 1, dtype=np.float64)
        present = rank <= m
        if method == "holm":
            adj = np.maximum.accumulate(np.where(present, (m - rank + 1.0) * ps, 0.0), axis=-1)
        else:
            steps = np.where(present, ps * (m / rank), np.inf)  # m / m == 1: the largest p stays p
            adj = np.flip(np.minimum.accumulate(np.flip(steps, axis=-1), axis=-1), axis=-1)
        out = np.empty_like(x)
        np.put_along_axis(out, order, np.minimum(adj, 1.0), axis=-1)
    out = np.where(missing, np.nan, out)
    return np.moveaxis(out, -1, axis)


def reject(
    p: ArrayLike, *, alpha: float = 0.05, method: Correction = "holm", axis: int = -1
) -> np.ndarray:
    """Which hypotheses are rejected at level ``alpha`` after the correction.

    Parameters
    ----------
    p : array_like
        p-values in ``[0, 1]``; NaN marks a missing hypothesis (never rejected).
    alpha : float
        Family-wise error rate (Bonferroni, Holm) or false discovery rate (BH),
        strictly between 0 and 1.
    method : {"bonferroni", "holm", "fdr_bh"}
        As in :func:`adjust_pvalues`.
    axis : int
        The axis along which the p-values form one family.

    Returns
    -------
    ndarray of bool
        True where the adjusted p-value is ``<= alpha``; same shape as ``p``.

    Examples
    --------
    >>> reject([0.168, 0.297, 0.357, 0.019, 0.218, 0.001], alpha=0.10, method="holm")
    array([False, False, False,  True, False,  True])
    """
    alpha = check_unit_interval(alpha, "alpha")
    return adjust_pvalues(p, method=method, axis=axis) <= alpha
