"""Swap kernels for two metrics missing in different cells: the valid set of a draw is linear in its mask.

When X and Y are missing in different cells, a swap changes which cells count. Per
input, a system's cell of ``X'`` is valid with ``V_s = c_s + m_s d_s``, where
``c_s`` is 1 when X's cell and the target's are there and ``d_s`` (-1, 0 or 1) the
change when Y's cell replaces it; ``Y'`` is valid with ``c_s + d_s - m_s d_s``. So:

* **Pearson** (:func:`input_pearson_gaps`): the six sums of r over the valid cells of an
  input (count, sums of x, x**2, z, z**2, xz) are each a constant plus a linear form in
  the mask, as on complete data: one matrix product per batch gives every draw.
  Vectors found (nearly) constant by these sums are recomputed from the swapped cells
  (:func:`xcorrstat._kernels.correlation.pearson`), so exact constancy decides NaN.
* **Kendall** (:class:`GapCounts`, used by :mod:`xcorrstat._kernels.swap_kendall`): the
  valid systems ``sum_s V_s`` are linear in the mask (one product with the rows
  ``[m_s | 1]``); the valid pairs of systems tied in the target, ``sum_{a<b} W_ab V_a V_b``
  (``W_ab = 1`` for a tie), are a constant, a linear form with coefficients ``d_s (W c)_s``
  and a quadratic part ``m_a m_b d_a d_b W_ab`` that is non-zero only where both systems
  change validity -- a sparse list of terms. The numerator and metric ties need no change:
  a missing cell compares as neither above nor below, and its pairs are weighted out.

Every value equals the statistic of the explicitly swapped matrices (the tests check
this to 1e-12 against scipy and pair counting); the work stays linear in the cells.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..correlation import pearson
from .forms import SwapRun, linear, linear_forms, per_input_masks

__all__ = ["NEAR_CONSTANT", "GapCounts", "exact_where_flagged", "from_sums", "gap_counts", "input_pearson_gaps"]

#: Sums whose variance is within this fraction of their sum of squares are checked on the swapped cells.
NEAR_CONSTANT = 1e-9


def _shifted(zx: np.ndarray, zy: np.ndarray, z: np.ndarray) -> tuple[np.ndarray, ...]:
    """The valid cells of X, Y (one common shift per input) and of the target (centred), 0 elsewhere."""
    zv = ~np.isnan(z)
    vx, vy = ~np.isnan(zx) & zv, ~np.isnan(zy) & zv
    count = np.maximum(vx.sum(axis=-2) + vy.sum(axis=-2), 1)
    shift = ((np.where(vx, zx, 0.0).sum(axis=-2) + np.where(vy, zy, 0.0).sum(axis=-2)) / count)[..., None, :]
    nz = np.maximum(zv.sum(axis=-2), 1)
    zc = np.where(zv, z - (np.where(zv, z, 0.0).sum(axis=-2) / nz)[..., None, :], 0.0)
    return vx, vy, np.where(vx, zx - shift, 0.0), np.where(vy, zy - shift, 0.0), zc


def input_pearson_gaps(zx: np.ndarray, zy: np.ndarray, z: np.ndarray, min_pairs: int) -> SwapRun:
    """Per-input Pearson r of X' and Y' with Z, any missing cells: ``run(m) -> two (P, I, B) arrays``.

    zx, zy, z are (P, S, I); an input with fewer than ``max(min_pairs, 2)`` valid
    systems in a draw, or with a constant X' (Y') or target over them, is NaN.

    Examples
    --------
    >>> zx = np.array([[[1.0], [2.0], [3.0], [np.nan]]]); zy = np.array([[[np.nan], [3.0], [2.0], [1.0]]])
    >>> z = np.array([[[1.0], [2.0], [3.0], [4.0]]])
    >>> rx, ry = input_pearson_gaps(zx, zy, z, 2)(np.zeros((1, 4, 1), dtype=bool))
    >>> float(rx[0, 0, 0]), float(ry[0, 0, 0])
    (1.0, -1.0)
    """
    vx, vy, e, f, zc = _shifted(zx, zy, z)
    ze, zf = np.where(vx, zc, 0.0), np.where(vy, zc, 0.0)
    parts_x = np.stack([vx.astype(np.float64), e, e * e, ze, ze * ze, e * zc], axis=1)  # (P, 6, S, I)
    parts_y = np.stack([vy.astype(np.float64), f, f * f, zf, zf * zf, f * zc], axis=1)
    coef = linear_forms(parts_y - parts_x)
    base = parts_x.sum(axis=-2)[..., None]  # (P, 6, I, 1)
    total = base + parts_y.sum(axis=-2)[..., None]
    del parts_x, parts_y
    need = max(int(min_pairs), 2)

    def run(m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        m = np.asarray(m, dtype=bool)
        sx = base + linear(per_input_masks(m, np.float64), coef)  # (P, 6, I, B)
        rx = from_sums(*(sx[:, k] for k in range(6)), need=need)
        np.subtract(total, sx, out=sx)
        ry = from_sums(*(sx[:, k] for k in range(6)), need=need)
        for r, swap_in, keep in ((rx, zy, zx), (ry, zx, zy)):
            exact_where_flagged(r, m, swap_in, keep, z, min_pairs)
        return rx, ry

    return run


def from_sums(n: np.ndarray, sx: np.ndarray, sxx: np.ndarray, sz: np.ndarray, szz: np.ndarray, sxz: np.ndarray,
              *, need: int) -> np.ndarray:
    """Pearson's r from the sums over the valid cells (count, x, x**2, z, z**2, xz); NaN with fewer than
    ``need`` cells, and a flag (``inf``) where x or the target is nearly constant, for an exact check.

    Examples
    --------
    >>> x, z = np.array([1.0, 2.0, 4.0]), np.array([1.0, 3.0, 2.0])
    >>> sums = (np.array([v]) for v in (3.0, x.sum(), x @ x, z.sum(), z @ z, x @ z))
    >>> from_sums(*sums, need=2).round(6).tolist()
    [0.327327]
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        varx = n * sxx - sx * sx
        varz = n * szz - sz * sz
        r = np.clip((n * sxz - sx * sz) / np.sqrt(varx * varz), -1.0, 1.0)
    flagged = (varx <= NEAR_CONSTANT * n * sxx) | (varz <= NEAR_CONSTANT * n * szz)
    r[flagged] = np.inf
    r[n < need] = np.nan
    return r


def exact_where_flagged(r: np.ndarray, m: np.ndarray, swap_in: np.ndarray, keep: np.ndarray, z: np.ndarray,
                         min_pairs: int) -> None:
    """Replace the flagged values (``inf``) of r (P, I, B) by Pearson's r of the explicitly swapped cells."""
    p, i, b = np.nonzero(np.isinf(r))
    if p.size:
        cells = np.where(m[b, :, i], swap_in[p, :, i], keep[p, :, i])  # (flagged, S)
        r[p, i, b] = pearson(cells, z[p, :, i], min_pairs=min_pairs)[0]


class GapCounts(NamedTuple):
    """Valid systems and target-tied valid pairs of X' and Y' per input, as forms in the mask.

    The forms are operands over the rows ``[m_s | 1]`` of a draw's mask on an input (the first
    ``S + 1`` rows of :func:`~xcorrstat._kernels.swapmath.mask_products`): ``systems`` (I, S + 1, P)
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
