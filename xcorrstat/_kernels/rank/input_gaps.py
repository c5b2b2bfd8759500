"""Input-level Kendall of swapped metrics missing in different cells: every draw has its own counts.

The "gap mode" of :mod:`xcorrstat._kernels.rank.input_swap`. When X and Y miss different
cells, a swap changes which systems of an input are valid, so the counts in each variant's
divisor belong to the draw: the valid systems ``n`` (``N = n (n - 1) / 2`` valid pairs), the
valid pairs tied in the target ``T_g`` (:class:`~xcorrstat._kernels.rank.input_gaps.GapCounts`) and,
for tau-b, the metric ties ``T_m + T_gm``. From these exact integers and the numerator, each
value takes the float operations of the complete-data route:

* tau-a ``= v / N``;
* acc_eq ``= (v + N - T_g) / 2N`` and tau_eq ``= 2 acc_eq - 1``;
* tau-b ``= v / sqrt((N - T_m - T_gm)(N - T_g))``, which is ``v / N`` exactly when neither
  count has a tie (the square root of a square integer is exact).

An input is defined in a draw with at least ``need`` valid systems (tau-b: also a pair untied
in the metric and one untied in the target). :func:`gap_stats` writes the values of a block
of inputs (:func:`~xcorrstat._kernels.rank.input_swap.input_kendall_swap`); :func:`gap_add` forms
them and adds the defined ones to running totals input after input and counts them, by a
compiled loop (:mod:`xcorrstat._kernels.rank.input_swap_jit`): the same operations on the same
integers, so each value is the float :func:`gap_stats` writes.

The per-draw counts themselves are forms in the mask (:class:`GapCounts`, built by
:func:`gap_counts`). Per input, a system's cell of ``X'`` is valid with ``V_s = c_s + m_s d_s``
(``c_s`` is 1 when X's cell and the target's are there, ``d_s`` (-1, 0 or 1) the change when Y's
cell replaces it): the valid systems ``sum_s V_s`` are linear in the mask (one product with the
rows ``[m_s | 1]``); the valid pairs of systems tied in the target, ``sum_{a<b} W_ab V_a V_b``
(``W_ab = 1`` for a tie), are a constant, a linear form with coefficients ``d_s (W c)_s`` and a
quadratic part ``m_a m_b d_a d_b W_ab`` that is non-zero only where both systems change validity
-- a sparse list of terms. The numerator and metric ties need no change: a missing cell compares
as neither above nor below, and its pairs are weighted out.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..._types import Variant
from .._compiled import loops

__all__ = ["ACC_VARIANTS", "DrawCounts", "GapCounts", "gap_add", "gap_counts", "gap_stats"]

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
class GapCounts(NamedTuple):
    """Valid systems and target-tied valid pairs of X' and Y' per input, as forms in the mask.

    The forms are operands over the rows ``[m_s | 1]`` of a draw's mask on an input (the first
    ``S + 1`` rows of :func:`~xcorrstat._kernels.linear.forms.mask_products`): ``systems`` (I, S + 1, P)
    gives the valid systems of X' (Y' has ``total`` (I, P) minus those), ``tied`` (I, S + 1, 2 P)
    the target-tied valid pairs of X' then of Y' but for the quadratic part: ``terms`` (pair, input,
    system a, system b, coefficient), sorted by input, shared by X' and Y' (``tied`` is (I, S + 1, 0)
    when the target ties no valid pair). ``tie_inputs`` (I,) marks the inputs where some draw has a
    target-tied valid pair.
    """

    systems: np.ndarray
    total: np.ndarray
    tied: np.ndarray
    tie_inputs: np.ndarray
    terms: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]

    def evaluate(self, a: np.ndarray, mt: np.ndarray, blk: slice) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """For a block of inputs: ``(valid, total, tied)``: the valid systems of X' (inputs, B, P), those of
        X' and Y' together (inputs, 1, P), and the target-tied valid pairs of X' then Y' (inputs, B, 2 P)
        float64, or None when the target has no tie among these inputs' valid pairs in any draw.

        ``a`` (inputs, B, S + 1) holds the block's rows ``[m_s | 1]`` as numbers (the dtype of the
        forms: every count is an exact integer), ``mt`` (S, I, B) all masks as bool.
        """
        valid = np.matmul(a, self.systems[blk])
        total = self.total[blk][:, None, :]
        if not self.tie_inputs[blk].any():
            return valid, total, None
        p = self.total.shape[-1]
        tied = np.matmul(a, self.tied[blk]).astype(np.float64)  # (n, B, 2P)
        tp, ti, ta, tb, tc = self.terms
        lo, hi = np.searchsorted(ti, [blk.start, blk.stop])
        if hi > lo:
            ins = ti[lo:hi]
            quad = (mt[ta[lo:hi], ins] & mt[tb[lo:hi], ins]) * tc[lo:hi, None]  # (terms, B)
            for k in (0, 1):
                np.add.at(tied[..., k * p:(k + 1) * p].transpose(0, 2, 1), (ins - blk.start, tp[lo:hi]), quad)
        return valid, total, tied


class _Builder:
    """Collects :class:`GapCounts` block by block (blocks of pairs and inputs of the Kendall kernel)."""

    def __init__(self, p: int, s: int, i: int, dtype: np.dtype) -> None:
        self.systems = np.empty((i, s + 1, p), dtype=dtype)
        self.total = np.empty((i, p), dtype=dtype)
        self.tied_shape = (i, s + 1, 2, p)
        self.tied: np.ndarray | None = None  # zeros, laid out at the first target tie
        self.terms: list[tuple[np.ndarray, ...]] = []

    def add(self, ps: slice, ins: slice, vx: np.ndarray, vy: np.ndarray, zt: np.ndarray) -> None:
        """A block: validity (Pb, Ib, S) of X and Y (target included), the target (1 or Pb, Ib, S)."""
        c = vx.astype(np.float64)
        d = vy.astype(np.float64) - c
        cd = c + d
        s = c.shape[-1]
        self.systems[ins, :s, ps] = np.transpose(d, (1, 2, 0))
        self.systems[ins, s, ps] = c.sum(-1).T
        self.total[ins, ps] = (c.sum(-1) + cd.sum(-1)).T
        tie = zt[..., :, None] == zt[..., None, :]  # NaN never ties: missing target cells drop out
        idx = np.arange(s)
        tie[..., idx, idx] = False
        if not tie.any():  # no valid pair tied in the target, whatever the draw
            return
        if self.tied is None:
            self.tied = np.zeros(self.tied_shape, dtype=self.systems.dtype)
        w = tie.astype(np.float64)
        wc, wcd = np.einsum("...ab,...b->...a", w, c), np.einsum("...ab,...b->...a", w, cd)
        self.tied[ins, :s, :, ps] = np.transpose(np.stack([d * wc, -d * wcd], axis=-1), (1, 2, 3, 0))
        self.tied[ins, s, :, ps] = np.transpose(np.stack([(c * wc).sum(-1) / 2, (cd * wcd).sum(-1) / 2]), (2, 0, 1))
        changes = d != 0
        many = np.nonzero(changes.sum(axis=-1) >= 2)  # (pair, input) with two systems changing validity
        if many[0].size:
            a_idx, b_idx = np.triu_indices(s, 1)
            ties = np.broadcast_to(tie, d.shape + d.shape[-1:])[many][:, a_idx, b_idx]
            dm = d[many]
            coef = dm[:, a_idx] * dm[:, b_idx] * ties  # (cases, K)
            case, k = np.nonzero(coef)
            self.terms.append((many[0][case] + ps.start, many[1][case] + ins.start, a_idx[k], b_idx[k],
                               coef[case, k]))

    def finish(self) -> GapCounts:
        i, rows = self.tied_shape[:2]
        # no target tie anywhere: an empty operand, never used (no input has a tie)
        tied = np.zeros((i, rows, 0), dtype=self.systems.dtype) if self.tied is None else self.tied
        tied = tied.reshape(i, rows, -1)
        if self.terms:
            tp, ti, ta, tb, tc = (np.concatenate(parts) for parts in zip(*self.terms))
            order = np.argsort(ti, kind="stable")
            terms = (tp[order], ti[order], ta[order], tb[order], tc[order])
        else:
            empty = np.zeros(0, dtype=np.intp)
            terms = (empty, empty, empty, empty, np.zeros(0))
        tie_inputs = np.asarray(tied.any(axis=(1, 2)), dtype=bool)
        tie_inputs[terms[1]] = True
        return GapCounts(self.systems, self.total, tied, tie_inputs, terms)


def gap_counts(p: int, s: int, i: int, dtype: np.dtype) -> _Builder:
    """A builder of :class:`GapCounts` for P pairs of metrics, S systems and I inputs (``add`` then ``finish``).

    Examples
    --------
    >>> vx = np.array([[[True, True, False]]]); vy = np.array([[[True, False, True]]])  # P=1, I=1, S=3
    >>> zt = np.array([[[1.0, 1.0, 1.0]]])  # every pair tied in the target
    >>> b = gap_counts(1, 3, 1, np.dtype(np.float64)); b.add(slice(0, 1), slice(0, 1), vx, vy, zt)
    >>> m = np.array([[[0], [0], [1]]], dtype=bool)  # (B, S, I): swap system 2
    >>> rows = np.concatenate([np.transpose(m, (2, 0, 1)), np.ones((1, 1, 1))], axis=-1)  # (I, B, S + 1): [m | 1]
    >>> valid, total, tied = b.finish().evaluate(rows, np.transpose(m, (1, 2, 0)), slice(0, 1))
    >>> float(valid[0, 0, 0]), float(total[0, 0, 0]), tied[0, 0].tolist()  # X' valid everywhere; Y' at 0
    (3.0, 4.0, [3.0, 0.0])
    """
    return _Builder(p, s, i, dtype)
