"""Input-level Spearman and tau-c of swapped metrics without ties between systems: tau-a's pair forms.

Within one input of n valid systems, when no two systems' candidate cells tie (X_a, Y_a against X_b,
Y_b for a != b), every draw's swapped metric X' has n distinct values, so what tau-a's forms leave out
is fixed:

* **Spearman.** The mid-ranks R of X' are a permutation of 1 ... n: their spread is fixed,
  ``sum (R - mean)^2 = (n^3 - n) / 12``, and since ``R_s = 1 + sum_t (1 + sgn(X'_s - X'_t)) / 2``, the
  numerator of Pearson's r of the ranks (q the target's mid-ranks) is
  ``sum_s R_s (q_s - mean q) = 1/2 sum_{a < b} (q_a - q_b) sgn(X'_a - X'_b)``: tau-a's numerator with
  the target's difference in place of its sign. With ``w = 2 q`` (integers) and ``v`` that sum over
  ``w``, ``rho = v / sqrt((n^3 - n) / 3 * sum (w - (n + 1))^2)``.
* **tau-c.** ``2 (C - D) / (n^2 (m - 1) / m)`` with m the smaller number of distinct values, of X'
  (n) and of the target (fixed): tau-a's numerator over a fixed divisor.

Both numerators are bilinear in the mask, so the mask products of
:mod:`~xcorrstat._kernels.rank.input_swap` give every draw of every pair of metrics with one matrix
product per input: exact integers up to the last divisions, so a draw's value is the same float whatever
the blocks, the batch or the pairs beside it (and the same as the walk of
:mod:`~xcorrstat._kernels.rank.spearman_swap` or the sorted tables of
:mod:`~xcorrstat._kernels.rank.global_swap` give). :func:`untied_rows` says which rows (pairs of
metrics) qualify -- from their scores alone: at most :data:`FORM_SYSTEMS` systems, X and Y missing in
the same cells, finite scores, no such tie. Undefined: fewer than ``max(min_pairs, 2)`` valid systems or
a constant target on the input.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._compiled import loops
from ..linear.forms import SwapRun
from .input_swap import empty_operands, finish_forms, means_run

__all__ = ["FORM_SYSTEMS", "form_rows", "input_untied_swap_means", "untied_rows"]

#: Systems up to which an input's pairs of systems are laid out as forms (their count grows with the square).
#: Measured for Spearman, one pair of metrics at 1,000 draws, against the walk: 0.22x its time at 15
#: systems, 0.6x at 64, 1.7x at 100 (pairs of metrics in one call share the mask products: the forms gain more).
FORM_SYSTEMS = 64
_A, _SP = 0, 4  # the codes of rank.input_swap_jit: tau-a's numerator, Spearman's


def untied_rows(zx: ArrayLike, zy: ArrayLike, z: ArrayLike) -> np.ndarray:
    """(R,) bool: the rows of (R, S, I) scores whose draws :func:`input_untied_swap_means` gives.

    Examples
    --------
    >>> x = np.arange(12.0).reshape(1, 4, 3); y = -x
    >>> untied_rows(np.concatenate([x, x]), np.concatenate([y, x + 3]), x).tolist()  # X_1 = Y_0 + 3
    [True, False]
    """
    ok, ax, ay, valid = form_rows(zx, zy, z)
    if not ok.any():
        return ok
    s = ax.shape[1]
    cand = np.concatenate([np.where(valid, ax, np.nan), np.where(valid, ay, np.nan)], axis=1)  # (R, 2S, I)
    order = np.argsort(cand, axis=1, kind="stable")
    values, system = np.take_along_axis(cand, order, axis=1), order % s
    # a run of equal values that holds two systems has two of them side by side
    tie = ((values[:, 1:] == values[:, :-1]) & (system[:, 1:] != system[:, :-1])).any(axis=(1, 2))
    return ok & ~tie


def form_rows(zx: ArrayLike, zy: ArrayLike, z: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(ok, x, y, valid)``: the rows of (R, S, I) scores that pair forms may take -- at most
    :data:`FORM_SYSTEMS` systems, X and Y valid in the same cells, finite valid scores -- as an (R,) bool, with
    the broadcast float64 scores of X and Y and the cells valid in X and the target.

    Examples
    --------
    >>> x = np.arange(6.0).reshape(1, 3, 2); y = x.copy(); y[0, 0, 0] = np.nan
    >>> form_rows(np.concatenate([x, x]), np.concatenate([-x, y]), x)[0].tolist()  # Y misses a cell X has
    [True, False]
    """
    ax, ay, az = np.broadcast_arrays(*(np.asarray(a, dtype=np.float64) for a in (zx, zy, z)))
    r, s, _ = ax.shape
    valid = ~np.isnan(ax) & ~np.isnan(az)
    if not 2 <= s <= FORM_SYSTEMS:
        return np.zeros(r, dtype=bool), ax, ay, valid
    same = (valid == (~np.isnan(ay) & ~np.isnan(az))).all(axis=(1, 2))
    finite = (np.isfinite(ax) & np.isfinite(ay) & np.isfinite(az) | ~valid).all(axis=(1, 2))
    return same & finite, ax, ay, valid


def input_untied_swap_means(zx: ArrayLike, zy: ArrayLike, z: ArrayLike, *, method: str, min_pairs: int) -> SwapRun:
    """Input-level Spearman (``method="spearman"``) or tau-c (``"kendall"``) of X' and Y', the mean over the
    inputs defined in each draw, of rows that :func:`untied_rows` admits; returns ``run(m) -> two (P, B)
    arrays`` for (B, S, I) masks.

    Examples
    --------
    >>> x = np.array([[[1.0, 1.0], [2.0, 3.0], [3.0, 2.0]]]); y = -x  # P=1, S=3, I=2
    >>> mx, my = input_untied_swap_means(x, y, x, method="spearman", min_pairs=2)(np.zeros((1, 3, 2), dtype=bool))
    >>> float(mx[0, 0]), float(my[0, 0])
    (1.0, -1.0)
    """
    from scipy.stats import rankdata  # imported on use: scipy.stats takes about a second to import

    ax, ay = (np.ascontiguousarray(a, dtype=np.float64) for a in np.broadcast_arrays(zx, zy))
    az = np.broadcast_to(np.asarray(z, dtype=np.float64), ax.shape)
    p, s, i = ax.shape
    valid = ~np.isnan(ax) & ~np.isnan(az)
    q = rankdata(np.where(valid, az, np.nan), axis=-2, nan_policy="omit")  # mid-ranks of the valid; NaN elsewhere
    spearman = method == "spearman"
    w = np.ascontiguousarray(2.0 * q if spearman else az)
    o = empty_operands(ax, ay, w, "a", spread=2 * s if spearman else 1)
    none = np.zeros((0, 0, 0), dtype=o.value.dtype)
    loops("rank.input_swap_jit").prepare(ax, ay, w, np.zeros((p, 2, 2)), _SP if spearman else _A, True, o.value,
                                           o.value_diff, none, none, o.counts, o.tied)
    forms = finish_forms(o.value, o.value_diff, None, None, o.tied, o.counts, valid, "a", int(min_pairs))
    n = valid.sum(axis=-2).T.astype(np.float64)  # (I, P)
    if spearman:
        spread = np.nansum((w - (n.T[:, None, :] + 1.0)) ** 2, axis=-2).T  # exact: sums of small integers
        with np.errstate(invalid="ignore"):
            scale = np.sqrt((n * n * n - n) / 3.0 * spread)
        return means_run(forms._replace(scale=scale, undefined=forms.undefined | (spread == 0)), "a")
    m = np.minimum(n, _distinct(az, valid).T)  # X' has n distinct values
    with np.errstate(invalid="ignore", divide="ignore"):
        scale = n * n * (m - 1.0) / m / 2.0  # 2 (C - D) / (n^2 (m - 1) / m), the division by 2 exact
    return means_run(forms._replace(scale=scale, undefined=forms.undefined | (m <= 1)), "c")


def _distinct(a: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """(P, I): the distinct values of ``a`` (P, S, I) among the valid systems of each input."""
    v = np.sort(np.where(valid, a, np.inf), axis=-2)
    new = np.concatenate([np.ones_like(v[:, :1], dtype=bool), v[:, 1:] != v[:, :-1]], axis=1)
    return (new & np.isfinite(v)).sum(axis=-2).astype(np.float64)
