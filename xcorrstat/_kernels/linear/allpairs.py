"""System-level Pearson deltas of every pair of metrics under a batch of swap masks, at once.

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
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from ..correlation import pearson
from ..exactsum import exact_parts
from ..scaling import centre_cells
from ..swap import SwapDeltas

__all__ = ["PAIR_BLOCK_ELEMS", "allpairs_system_deltas", "prepare_allpairs"]

#: float64 elements of one (S, pairs, B) temporary: pairs are taken in blocks of at most this size.
PAIR_BLOCK_ELEMS = 1 << 19


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
    ops = _Operands(ax, mean_z, pi, pk, min_pairs)

    def deltas(masks: ArrayLike) -> np.ndarray:
        m = np.asarray(masks, dtype=bool)
        if m.ndim != 3 or m.shape[1:] != ax.shape[1:]:
            raise ValueError(f"masks must be (B, S, I) = (B, {n_sys}, {n_inp}), got {m.shape}")
        if m.shape[0] == 1:  # computed as two draws: the reductions over systems keep their order
            return deltas(np.concatenate([m, m]))[:, :1]
        return ops.deltas(m)

    return deltas


class _Operands:
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
