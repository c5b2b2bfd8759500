"""Input-level Kendall of swapped metrics missing in different cells: every draw has its own counts.

The "gap mode" of :mod:`xcorrstat._kernels.swap_kendall`. When X and Y miss different
cells, a swap changes which systems of an input are valid, so the counts in each variant's
divisor belong to the draw: the valid systems ``n`` (``N = n (n - 1) / 2`` valid pairs), the
valid pairs tied in the target ``T_g`` (:class:`~xcorrstat._kernels.swap_gaps.GapCounts`) and,
for tau-b, the metric ties ``T_m + T_gm``. From these exact integers and the numerator, each
value takes the float operations of the complete-data route:

* tau-a ``= v / N``;
* acc_eq ``= (v + N - T_g) / 2N`` and tau_eq ``= 2 acc_eq - 1``;
* tau-b ``= v / sqrt((N - T_m - T_gm)(N - T_g))``, which is ``v / N`` exactly when neither
  count has a tie (the square root of a square integer is exact).

An input is defined in a draw with at least ``need`` valid systems (tau-b: also a pair untied
in the metric and one untied in the target). :func:`gap_stats` writes the values of a block
of inputs (:func:`~xcorrstat._kernels.swap_kendall.input_kendall_swap`); :func:`gap_add` forms
them and adds the defined ones to running totals input after input and counts them, by a
compiled loop (:mod:`xcorrstat._kernels.swap_kendall_jit`): the same operations on the same
integers, so each value is the float :func:`gap_stats` writes.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..._types import Variant
from .._compiled import loops

__all__ = ["ACC_VARIANTS", "DrawCounts", "gap_add", "gap_stats"]

#: The variants that count metric ties as agreement.
ACC_VARIANTS = ("acc23", "23")
#: Variant codes of the compiled loop.
_CODES = {"a": 0, "b": 1, "23": 2, "acc23": 3}


class DrawCounts(NamedTuple):
    """The counts of each draw on a block of inputs, arrays of exact integers."""

    valid: np.ndarray  # (inputs, B, P) valid systems of X'
    total: np.ndarray  # (inputs, 1, P) valid systems of X' plus those of Y', the same in every draw
    gold_tied: np.ndarray | None  # (inputs, B, 2P) float64 valid pairs tied in the target, X' then Y'; or None
    ties: tuple[np.ndarray, np.ndarray] | None  # tau-b: metric ties (inputs, B, Pt) of the pairs ``tied``
    tied: np.ndarray  # (Pt,) positions of the pairs of metrics with a metric tie somewhere

    def systems(self, k: int) -> np.ndarray:
        """The valid systems of X' (k = 0) or of Y' (k = 1)."""
        return self.valid if k == 0 else self.total - self.valid

    def gold(self, k: int) -> np.ndarray:
        """The target-tied valid pairs of X' (k = 0) or of Y' (k = 1); only when ``gold_tied`` is there."""
        assert self.gold_tied is not None
        p = self.valid.shape[-1]
        return self.gold_tied[..., k * p:(k + 1) * p]


def _values(k: int, v: np.ndarray, c: DrawCounts, variant: Variant, need: int,
            out: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The variant of X' (k = 0) or Y' (k = 1) on a block into ``out`` (float64, arbitrary where
    undefined), and where it is defined."""
    with np.errstate(invalid="ignore", divide="ignore"):  # undefined values: arbitrary
        return _divided(k, v, c, variant, need, out)


def _divided(k: int, v: np.ndarray, c: DrawCounts, variant: Variant, need: int,
             out: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_values` without the floating-point warnings of undefined values."""
    n = c.systems(k)
    n0 = np.subtract(n, 1.0, dtype=np.float64)
    n0 *= n
    n0 /= 2.0  # N = n (n - 1) / 2, exact
    defined = n >= need  # need >= 2: N > 0
    gold = n0 if c.gold_tied is None else n0 - c.gold(k)
    if variant == "a":
        return np.divide(v, n0, out=out), defined
    if variant in ACC_VARIANTS:  # (numerator + N - T_g) / 2N
        stat = np.add(v, gold, out=out)
        n0 *= 2.0
        stat /= n0
        if variant == "23":
            stat *= 2.0
            stat -= 1.0
        return stat, defined
    if c.ties is None and c.gold_tied is None:  # sqrt(N * N) = N
        return np.divide(v, n0, out=out), defined
    untied = n0.copy()
    if c.ties is not None:
        untied[..., c.tied] -= c.ties[k]
    defined &= (untied > 0) & (gold > 0)
    untied *= gold
    np.sqrt(untied, out=untied)
    return np.divide(v, untied, out=out), defined


def gap_stats(v: tuple[np.ndarray, np.ndarray], c: DrawCounts, out: np.ndarray, variant: Variant, need: int,
              fill: float) -> None:
    """The variant of X' and Y' on a block of inputs into ``out`` (2, inputs, B, P); ``fill`` where undefined.

    Examples
    --------
    >>> n = np.array([[[3.0, 1.0]]])  # one input, one draw, two pairs: 3 and 1 valid systems (X' and Y')
    >>> c = DrawCounts(n, 2 * n, None, None, np.zeros(0, dtype=np.intp))
    >>> v = np.array([[[1.0, 0.0]]])  # C - D
    >>> out = np.empty((2, 1, 1, 2)); gap_stats((v, v), c, out, "a", 2, np.nan); out[0, 0, 0].tolist()
    [0.3333333333333333, nan]
    """
    for k in (0, 1):
        _, defined = _values(k, v[k], c, variant, need, out[k])
        np.copyto(out[k], fill, where=~defined)


def gap_add(v: tuple[np.ndarray, np.ndarray], c: DrawCounts, totals: np.ndarray, counts: np.ndarray,
            variant: Variant, need: int) -> None:
    """Add the defined values of X' and Y' on a block of inputs to ``totals`` (2, B, P), input after input
    in input order, and count them in ``counts`` (2, B, P) int64.

    One pass of the compiled loop over the block; each value is the float :func:`gap_stats` writes.

    Examples
    --------
    >>> n = np.array([[[3.0, 1.0]]]); v = np.array([[[1.0, 0.0]]])
    >>> c = DrawCounts(n, 2 * n, None, None, np.zeros(0, dtype=np.intp))
    >>> totals, counts = np.zeros((2, 1, 2)), np.zeros((2, 1, 2), dtype=np.int64)
    >>> gap_add((v, -v), c, totals, counts, "b", 2)
    >>> totals[:, 0].tolist(), counts[:, 0].tolist()
    ([[0.3333333333333333, 0.0], [-0.3333333333333333, 0.0]], [[1, 0], [1, 0]])
    """
    none = np.zeros(v[0].shape[:-1] + (0,), dtype=v[0].dtype)  # (inputs, B, 0): counts that are not there
    col = np.full(v[0].shape[-1], -1, dtype=np.intp)
    tx, ty = none, none
    if c.ties is not None:
        col[c.tied] = np.arange(c.tied.size)
        tx, ty = c.ties
    gold = none.astype(np.float64) if c.gold_tied is None else c.gold_tied
    jit = loops("rank.input_swap_jit")
    jit.gap_add(v[0], v[1], c.valid, c.total, gold, tx, ty, col, _CODES[variant], need, totals, counts)


