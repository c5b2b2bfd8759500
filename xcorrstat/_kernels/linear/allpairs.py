"""Pearson deltas of every pair of metrics under a batch of swap masks, at once, at every level.

**System level** (:func:`prepare_allpairs`, complete data).
A permutation draw of the pair (i, k) swaps the standardised metrics ``X_i`` and ``X_k``
cell by cell under a 0/1 mask m: ``X' = X_i + m (X_k - X_i)``, ``Y' = X_k - m (X_k - X_i)``.
On complete data every system mean of ``X'`` and ``Y'`` is

    mean_s(X') = (T_i[s] + A_s[k] - A_s[i]) / I,   mean_s(Y') = (T_k[s] - A_s[k] + A_s[i]) / I,

with ``T_j[s]`` the sum of metric j's cells of system s and ``A_s = M_s Z_s^T`` one
matrix product per system over **all** metrics (``M_s`` the (B, I) masks of system s,
``Z_s`` the (metrics, I) scores of system s). Every pair is then a subtraction of two
columns, not a product of its own: the work is ``3 B S I M`` for the products plus
``B S P`` for the pairs, instead of ``B S I P``. Whole-row masks (PERM-SYSTEMS) need no
product at all: ``A_s = m_s T_s``. The formula holds for any 0/1 mask (PERM-BOTH,
PERM-INPUTS, system-xor-input).

The sums ``T`` and ``A`` are exact: each score is split into three fixed-point parts
(:func:`.exactsum.exact_parts`) whose 0/1-weighted sums are exact in any order, and
the three part sums are added in a fixed order. So a draw's value does not depend on
the batch, on BLAS or on its threads, bit for bit.

Each draw's delta is ``r(mean(X'), mean(Z)) - r(mean(Y'), mean(Z))`` over the S
systems, by the conventions of :func:`xcorrstat._kernels.swap.swapped_deltas` at
system level: the target is centred first (:func:`.scaling.centre_cells`), r is NaN
with fewer than ``max(min_pairs, 2)`` systems or constant means (exactly equal), and
the draws equal the statistic of the explicitly swapped matrices (tests: 1e-12).

Rounding and constant means. Swapped means that are exactly equal (say ``X'`` is a
constant matrix) come out of the sums above equal only up to rounding. So a vector
of means whose spread is within their rounding bound (``64 eps`` times the largest
sum of ``|X_i| + |X_k|`` over a system's inputs, divided by I: about four times the worst
case) is recomputed from the swapped cells with exactly rounded sums
(:func:`math.fsum`) before Pearson is taken: exact ties then decide constancy.
Ordinary data never come near that bound.

**Input, global and within-system level** (:func:`prepare_allpairs_input`, any missing cells).
The sums behind an input's Pearson r of a swapped metric are linear in the mask
(:mod:`xcorrstat._kernels.linear.gaps`), and linear in the metrics too: for the pair (i, k),
``X'`` takes ``X_i``'s cell where the mask is 0 and ``X_k``'s where it is 1, so each of the
six sums over an input's valid cells (count, x, x**2, z, z**2, xz) is

    S(X') = T_i + F_k - F_i,    S(Y') = T_k - F_k + F_i,

with ``T_j`` metric j's sum over its valid cells and ``F_j = sum_s m_s t_j[s]`` the same sum
over the swapped cells only. One matrix product per input over **all** metrics gives every
``F``: the work is ``6 B S I M`` for the products plus a few operations per pair, input and draw,
instead of ``6 B S I P``. Missing cells, in the same or in different cells of two metrics,
need nothing more: a cell counts in each sum with its validity (the target's included).

Each input's r is taken from the six sums. The level's value is the mean over the inputs
defined in the draw, added input after input in input order (global level: all cells as the
systems of one input; within-system level (macro average): the input level of the transposed
(input, system) matrices and masks, each system an "input" whose "systems" are the inputs).
Exact constancy decides NaN: an input where the target has fewer than ``max(min_pairs, 2)`` cells
or one value over them is NaN in every draw and is skipped (real MQM tables have such inputs: no
error in any rated output); a vector found nearly constant by the sums is checked on its swapped
cells in the compiled loop (X' or the target with one value over the draw's valid cells: NaN, the
rule of :func:`~.correlation.pearson`), and only the others, rare, are recomputed from the swapped
cells and added after all the other values, in input order. So the work and memory stay linear in
the cells whatever the missing-cell pattern. The pair (k, i) is the pair (i, k) with X' and Y'
exchanged, so each
unordered pair is computed once, and only the metrics of the asked pairs are laid out. The
swapped sums, the per-pair arithmetic and the running sums are fused in a compiled loop
(:mod:`xcorrstat._kernels.linear.allpairs_jit`), a block of inputs at a time; the values
it flags are recomputed here. Blocks of inputs never change a value; the tests check the draws
against the explicitly swapped matrices to 1e-12, and bit for bit against a NumPy evaluation
of the same operations.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from .._compiled import loops
from ..correlation import constant_over_valid, pearson
from ..exactsum import exact_parts
from ..scaling import centre_cells
from ..swap import SwapDeltas
from .gaps import NEAR_CONSTANT

__all__ = ["PAIR_BLOCK_ELEMS", "allpairs_system_deltas", "prepare_allpairs", "prepare_allpairs_input"]

#: float64 elements of one block: pairs (system level) or inputs (input level) are cut to this size.
PAIR_BLOCK_ELEMS = 1 << 19
#: Flagged values the compiled loop records in one pass (more: a second pass records them all).
FLAG_ROOM = 1024


def allpairs_system_deltas(zx: ArrayLike, z: ArrayLike, masks: ArrayLike, pairs: tuple[ArrayLike, ArrayLike], *,
                           min_pairs: int) -> np.ndarray:
    """``r(X_i', Z) - r(X_k', Z)`` at system level for every pair and mask: (P, B).

    ``zx`` (M, S, I) are the standardised metrics, ``z`` (S, I) the target, both with
    no missing cell; ``masks`` (B, S, I) bools (True = swap); ``pairs = (pi, pk)`` the
    metric positions of the P pairs. NaN where a correlation is undefined (fewer than
    ``min_pairs`` systems, constant means).

    Examples
    --------
    >>> zx = np.stack([np.arange(12.0).reshape(3, 4), np.arange(12.0)[::-1].reshape(3, 4)])
    >>> masks = np.zeros((2, 3, 4), dtype=bool); masks[1] = True  # no swap, then every cell swapped
    >>> allpairs_system_deltas(zx, zx[0], masks, ([0], [1]), min_pairs=2).tolist()
    [[2.0, -2.0]]
    """
    return prepare_allpairs(zx, z, pairs, min_pairs=min_pairs)(masks)


def prepare_allpairs(zx: ArrayLike, z: ArrayLike, pairs: tuple[ArrayLike, ArrayLike], *,
                     min_pairs: int) -> SwapDeltas:
    """Precompute what does not depend on the masks; returns ``deltas(masks) -> (P, B)``.

    Examples
    --------
    >>> zx = np.stack([np.arange(12.0).reshape(3, 4), np.arange(12.0)[::-1].reshape(3, 4)])
    >>> deltas = prepare_allpairs(zx, zx[0], ([0, 1], [1, 0]), min_pairs=2)
    >>> deltas(np.ones((1, 3, 4), dtype=bool)).tolist()
    [[-2.0], [2.0]]
    """
    ax = np.asarray(zx, dtype=np.float64)
    az = centre_cells(np.asarray(z, dtype=np.float64))  # as the per-pair kernel: its means never round an offset
    if ax.ndim != 3 or az.shape != ax.shape[1:]:
        raise ValueError(f"zx must be (M, S, I) and z (S, I), got {ax.shape} and {az.shape}")
    if np.isnan(ax).any() or np.isnan(az).any():
        raise ValueError("the all-pairs swap kernel needs complete data (no NaN in the metrics or the target)")
    pi, pk = (np.asarray(p, dtype=np.intp).reshape(-1) for p in pairs)
    n_sys, n_inp = ax.shape[1:]
    mean_z = az.sum(axis=-1) / n_inp
    if n_sys < max(int(min_pairs), 2) or not mean_z.min() < mean_z.max():
        return lambda masks: np.full((pi.size, np.shape(masks)[0]), np.nan)
    ops = _SystemOperands(ax, mean_z, pi, pk, min_pairs)

    def deltas(masks: ArrayLike) -> np.ndarray:
        m = np.asarray(masks, dtype=bool)
        if m.ndim != 3 or m.shape[1:] != ax.shape[1:]:
            raise ValueError(f"masks must be (B, S, I) = (B, {n_sys}, {n_inp}), got {m.shape}")
        if m.shape[0] == 1:  # computed as two draws: the reductions over systems keep their order
            return deltas(np.concatenate([m, m]))[:, :1]
        return ops.deltas(m)

    return deltas


class _SystemOperands:
    """The mask-independent arrays of one (metrics, target) problem, and the batch computation."""

    def __init__(self, zx: np.ndarray, mean_z: np.ndarray, pi: np.ndarray, pk: np.ndarray, min_pairs: int) -> None:
        n_met, n_sys, n_inp = zx.shape
        self.zx, self.mean_z, self.pi, self.pk, self.min_pairs = zx, mean_z, pi, pk, min_pairs
        self.n_inp = n_inp
        # three fixed-point parts per score whose 0/1-weighted sums are exact in any order, system by system
        self.by_system = np.empty((n_sys, 3 * n_met, n_inp))  # (S, 3 M, I): part 0 of every metric, then 1, 2
        self.totals = np.empty((n_sys, n_met))
        for s in range(n_sys):
            parts = exact_parts(zx[:, s, :], n_inp)  # (3, M, I), exponents per metric and system
            self.by_system[s] = parts.reshape(3 * n_met, n_inp)
            self.totals[s] = _join_parts(parts.sum(axis=-1))
        dz = mean_z - mean_z.sum() / n_sys  # target means centred, with the mean's rounding error kept
        self.dz, self.cz = dz, dz.sum() / n_sys
        self.szz = float(dz @ dz - n_sys * self.cz * self.cz)
        # bound on the spread of constant means after rounding (module docstring)
        self.abs_totals = np.abs(zx).sum(axis=-1)  # (M, S)
        self.spread_bound = 64.0 * np.finfo(np.float64).eps / n_inp

    def column_sums(self, m: np.ndarray) -> np.ndarray:
        """``A[s, j, b]``: the sum of metric j's cells of system s that draw b swaps. (S, M, B).

        Exact sums of the three parts, added in a fixed order: the same bits whatever the
        batch, the BLAS or its threads.
        """
        b = m.shape[0]
        n_sys, n_met = self.totals.shape
        rows = m[:, :, 0]
        if (m == rows[:, :, None]).all():  # whole systems swap: no product needed
            return self.totals[:, :, None] * rows.T[:, None, :]
        sums = np.empty((n_sys, 3 * n_met, b))
        mf = np.empty((b, self.n_inp))
        for s in range(n_sys):  # one product per system, over every metric
            np.copyto(mf, m[:, s, :])
            np.matmul(self.by_system[s], mf.T, out=sums[s])
        return _join_parts(sums.reshape(n_sys, 3, n_met, b).transpose(1, 0, 2, 3))

    def deltas(self, m: np.ndarray) -> np.ndarray:
        """(P, B) deltas of a batch of masks, blocks of pairs at a time."""
        a = self.column_sums(m)
        n_sys, _, b = a.shape
        out = np.empty((self.pi.size, b))
        step = max(1, PAIR_BLOCK_ELEMS // max(n_sys * b, 1))
        for start in range(0, self.pi.size, step):
            sl = slice(start, start + step)
            out[sl] = self._block(a, m, self.pi[sl], self.pk[sl])
        return out

    def _block(self, a: np.ndarray, m: np.ndarray, pi: np.ndarray, pk: np.ndarray) -> np.ndarray:
        """Deltas of one block of pairs: (Pb, B)."""
        d = a[:, pk] - a[:, pi]  # (S, Pb, B): swapped sum of X_k minus that of X_i
        tol = self.spread_bound * np.max(self.abs_totals[pi] + self.abs_totals[pk], axis=-1)[:, None]  # (Pb, 1)
        mean_x = self.totals[:, pi, None] + d
        mean_x /= self.n_inp
        rx = self._pearson(mean_x, tol, m, pi, pk)
        np.subtract(self.totals[:, pk, None], d, out=d)
        d /= self.n_inp
        ry = self._pearson(d, tol, m, pk, pi)
        return rx - ry

    def _pearson(self, means: np.ndarray, tol: np.ndarray, m: np.ndarray, keep: np.ndarray,
                 swap_in: np.ndarray) -> np.ndarray:
        """r of swapped means (S, Pb, B) with the target's; ``keep``/``swap_in``: the metric kept where m is 0 / 1.

        Centred before the sums, with the centred values' mean (the mean's rounding error)
        taken out as in :func:`xcorrstat._kernels.pearson`. ``means`` is overwritten.
        """
        n_sys = means.shape[0]
        low, high = means.min(axis=0), means.max(axis=0)
        near = high - low <= tol  # constant, or within rounding of it: decided on exact sums below
        means -= means.sum(axis=0) / n_sys
        c = means.sum(axis=0) / n_sys
        sxx = np.einsum("spb,spb->pb", means, means) - n_sys * c * c
        sxz = np.einsum("s,spb->pb", self.dz, means) - n_sys * c * self.cz  # no BLAS: the same bits in any batch
        with np.errstate(invalid="ignore", divide="ignore"):
            r = np.clip(sxz / np.sqrt(sxx * self.szz), -1.0, 1.0)
        for p, b in zip(*np.nonzero(near)):
            r[p, b] = self._exact(m[b], int(keep[p]), int(swap_in[p]))
        return r

    def _exact(self, m: np.ndarray, keep: int, swap_in: int) -> float:
        """r of the swapped matrix ``where(m, X_swap_in, X_keep)`` from exactly rounded system means."""
        cells = np.where(m, self.zx[swap_in], self.zx[keep])
        means = np.array([math.fsum(row) / self.n_inp for row in cells])
        return float(pearson(means, self.mean_z, min_pairs=self.min_pairs)[0])


def _join_parts(sums: np.ndarray) -> np.ndarray:
    """The three exact part sums (3, ...) added in a fixed order."""
    return (sums[0] + sums[1]) + sums[2]


# -- input, global and within-system level ------------------------------------------------------------


def prepare_allpairs_input(zx: ArrayLike, z: ArrayLike, pairs: tuple[ArrayLike, ArrayLike], *, level: str,
                           min_pairs: int) -> SwapDeltas:
    """``deltas(masks) -> (P, B)``: ``r(X_i', Z) - r(X_k', Z)`` at input, global or within-system level for
    every pair (the per-input or per-system correlations averaged with equal weights).

    ``zx`` (M, S, I) are the standardised metrics and ``z`` (S, I) the target, with any
    missing cells; ``masks`` (B, S, I) bools (True = swap); ``pairs = (pi, pk)``.

    Examples
    --------
    >>> zx = np.stack([np.arange(12.0).reshape(3, 4), np.arange(12.0)[::-1].reshape(3, 4)])
    >>> deltas = prepare_allpairs_input(zx, zx[0], ([0], [1]), level="input", min_pairs=2)
    >>> deltas(np.stack([np.zeros((3, 4), bool), np.ones((3, 4), bool)])).tolist()  # none, then all swapped
    [[2.0, -2.0]]
    """
    ax = np.asarray(zx, dtype=np.float64)
    az = centre_cells(np.asarray(z, dtype=np.float64))
    if ax.ndim != 3 or az.shape != ax.shape[1:]:
        raise ValueError(f"zx must be (M, S, I) and z (S, I), got {ax.shape} and {az.shape}")
    pi, pk = (np.asarray(p, dtype=np.intp).reshape(-1) for p in pairs)
    shape = ax.shape
    used = np.unique(np.concatenate([pi, pk]))  # the sums of metrics in no pair are not formed
    ax, pi, pk = ax[used], np.searchsorted(used, pi), np.searchsorted(used, pk)
    if level == "global":  # the cells as the systems of one input
        ax, az = ax.reshape(ax.shape[0], -1, 1), az.reshape(-1, 1)
    elif level == "within_system":  # the input level of the transposed (input, system) matrices
        ax, az = np.ascontiguousarray(np.swapaxes(ax, 1, 2)), np.ascontiguousarray(az.T)
    elif level != "input":
        raise ValueError(f"level must be 'input', 'global' or 'within_system', got {level!r}")
    ops = _InputOperands(ax, az, pi, pk, int(min_pairs))
    within = level == "within_system"

    def deltas(masks: ArrayLike) -> np.ndarray:
        m = np.asarray(masks, dtype=bool)
        if m.ndim != 3 or m.shape[1:] != shape[1:]:
            raise ValueError(f"masks must be (B, S, I) = (B, {shape[1]}, {shape[2]}), got {m.shape}")
        return ops.deltas(np.swapaxes(m, 1, 2) if within else m.reshape(m.shape[0], *ax.shape[1:]))

    return deltas


class _InputOperands:
    """Each metric's six per-input sums and their terms per system, and the batch computation."""

    def __init__(self, zx: np.ndarray, z: np.ndarray, pi: np.ndarray, pk: np.ndarray, min_pairs: int) -> None:
        n_met, n_sys, n_inp = zx.shape
        zv = ~np.isnan(z)
        zc = np.where(zv, z - np.where(zv, z, 0.0).sum(axis=0) / np.maximum(zv.sum(axis=0), 1), 0.0)  # per input
        valid = ~np.isnan(zx) & zv
        x = np.where(valid, zx, 0.0)
        zm = np.where(valid, zc, 0.0)
        self.x, self.zm, self.valid, self.zc = x, zm, valid, zc  # the terms are laid out a block at a time
        self.full = np.ascontiguousarray((valid == zv).all(axis=1).T)  # (I, M): every cell the target has
        self.totals = np.stack([valid.sum(axis=1), x.sum(axis=1), (x * x).sum(axis=1), zm.sum(axis=1),
                                (zm * zm).sum(axis=1), (x * zc).sum(axis=1)]).transpose(2, 0, 1).copy()  # (I, 6, M)
        # (k, i) is (i, k) with X' and Y' exchanged: each unordered pair once, its delta negated for the other
        lo, hi = np.minimum(pi, pk), np.maximum(pi, pk)
        keys, self.inverse = np.unique(lo * n_met + hi, return_inverse=True)
        self.sign = np.where(pi <= pk, 1.0, -1.0)[:, None]
        self.lo, self.hi = (keys // n_met).astype(np.intp), (keys % n_met).astype(np.intp)
        self.zx, self.z = zx, z
        self.min_pairs, self.need = min_pairs, max(min_pairs, 2)
        # a target with too few cells on an input, or a single value over them, makes every swap NaN there
        self.live = (zv.sum(axis=0) >= self.need) & ~constant_over_valid(z.T, zv.T)

    def deltas(self, m: np.ndarray) -> np.ndarray:
        """(P, B) deltas of a (B, S, I) batch."""
        totals, counts = self._sums(m)  # (2, Q, B) each
        with np.errstate(invalid="ignore", divide="ignore"):
            means = np.where(counts > 0, totals / counts, np.nan)
        return self.sign * (means[0] - means[1])[self.inverse]

    def _sums(self, m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Totals and counts of the defined r (2, Q, B) by the compiled loop: blocks of inputs, all pairs
        and draws at once, then the flagged values recomputed."""
        jit = loops("linear.allpairs_jit")
        b, n_sys, n_inp = m.shape
        q = self.lo.size
        ib = max(1, min(n_inp, PAIR_BLOCK_ELEMS // (n_sys * max(b, 6 * self.x.shape[0]))))
        totals = np.zeros((2, q, b))
        counts = np.zeros((2, q, b), dtype=np.int64)
        flagged: list[tuple[np.ndarray, ...]] = []
        records = np.empty((FLAG_ROOM, 4), dtype=np.int64)
        for i0 in range(0, n_inp, ib):
            blk = slice(i0, min(i0 + ib, n_inp))
            ms = np.transpose(m[:, :, blk], (2, 1, 0)).astype(np.float64, order="C")  # (ib, S, B)
            cells = np.ascontiguousarray(self.zx[:, :, blk].transpose(2, 0, 1))  # (ib, M, S)
            args = (ms, self._terms(blk), self.totals[blk], self.full[blk], self.live[blk], cells,
                    np.ascontiguousarray(self.z[:, blk].T), self.lo, self.hi, self.need, NEAR_CONSTANT, totals, counts)
            n = jit.swapped_add(*args, records, True)
            if n > records.shape[0]:  # the values are added; record them all with room enough
                records = np.empty((n, 4), dtype=np.int64)
                jit.swapped_add(*args, records, False)
            i, d, p, which = records[:n].T
            flagged.append(self._exact(m, which, i + i0, d, p))
        self._add_flagged(flagged, totals, counts)
        return totals, counts

    def _exact(self, m: np.ndarray, which: np.ndarray, i: np.ndarray, b: np.ndarray,
               q: np.ndarray) -> tuple[np.ndarray, ...]:
        """``(which, input, draw, pair, r)`` of flagged values (``which`` 0: X', 1: Y'), each r
        recomputed from the explicitly swapped cells."""
        if not i.size:
            return which, i, b, q, np.empty(0)
        keep = np.where(which == 0, self.lo[q], self.hi[q])
        move = np.where(which == 0, self.hi[q], self.lo[q])
        cells = np.where(m[b, :, i], self.zx[move, :, i], self.zx[keep, :, i])  # (flagged, S)
        return which, i, b, q, pearson(cells, self.z[:, i].T, min_pairs=self.min_pairs)[0]

    @staticmethod
    def _add_flagged(flagged: list[tuple[np.ndarray, ...]], totals: np.ndarray, counts: np.ndarray) -> None:
        """Add the recomputed values to totals and counts (2, Q, B) after all others, in input order
        (whatever the blocks)."""
        if not flagged:
            return
        which, i, b, q, r = (np.concatenate(parts) for parts in zip(*flagged))
        order = np.lexsort((b, q, which, i))
        which, b, q, r = which[order], b[order], q[order], r[order]
        defined = ~np.isnan(r)
        np.add.at(totals, (which[defined], q[defined], b[defined]), r[defined])
        np.add.at(counts, (which[defined], q[defined], b[defined]), 1)

    def _terms(self, blk: slice) -> np.ndarray:
        """The six terms of every metric's cells on the inputs ``blk``: (ib, S, 6, M)."""
        x, zm = self.x[:, :, blk], self.zm[:, :, blk]
        forms = (self.valid[:, :, blk], x, x * x, zm, zm * zm, x * self.zc[:, blk])
        return np.ascontiguousarray(np.stack(forms, axis=0).transpose(3, 2, 0, 1), dtype=np.float64)
