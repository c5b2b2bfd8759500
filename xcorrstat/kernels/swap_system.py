"""System-level deltas of every pair of metrics under a batch of swap masks: any method, any missing cells.

A permutation draw of the pair (i, k) swaps the standardised metrics ``X_i`` and ``X_k``
under a 0/1 mask m: ``X' = where(m, X_k, X_i)`` and ``Y' = where(m, X_i, X_k)``. A cell of
``X'`` is valid when its score and the target's are present, so its system means are

    sum_s(X') = T_i[s] - A_i[s] + A_k[s],   count_s(X') = C_i[s] - N_i[s] + N_k[s],

with ``T_j[s]`` (``C_j[s]``) the sum (count) of metric j's valid cells of system s and
``A_j[s]`` (``N_j[s]``) the same over the cells the draw swaps -- and likewise for the
target's mean over the cells valid in ``X'``. Every quantity is **linear in the mask and
per metric**, whatever the missing cells: one matrix product per system over all
metrics gives a batch's ``A``, ``N`` and target sums, and a pair is a few subtractions of
columns (work ``3 B S I M`` plus ``B S P``, as the complete-data Pearson kernel of
:mod:`.swap_allpairs`). Counts and target sums are taken over the cells where the target
is present, shared by every metric, minus a sparse correction over each metric's own
missing cells (work proportional to those cells).

Sums are exact (:func:`.exactsum.exact_parts` of the raw scores, per part, added in a
fixed order), and a system's mean is the z-score map of the raw mean (means commute with
it): systems whose raw sums tie keep tied means, which rank statistics need, and a draw's
value does not depend on the batch. The statistic of the S means of each draw and pair is
then taken by the vectorised kernels of :mod:`.correlation` (Pearson, Spearman, every
Kendall variant), over draws and pairs at once. Every value equals the statistic of the
explicitly swapped matrices (tests: scipy on the expanded swaps, with missing cells).
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from .._types import Method, Variant
from .correlation import PAIRWISE_MAX_N, corr, pearson
from .exactsum import exact_parts
from .scaling import pow2_exponent
from .swap import SwapDeltas
from .tau import count_distinct, tau_from_counts

__all__ = ["SYSTEM_BLOCK_ELEMS", "prepare_system_swap", "system_statistic", "system_swap_deltas", "zscore_map"]

#: float64 elements of one (pairs, B, S) temporary: pairs are taken in blocks of at most this size.
SYSTEM_BLOCK_ELEMS = 1 << 17


def zscore_map(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Scale and shift of the z-score map of each (..., S, I) matrix: ``z = scale * a + shift`` (keepdims).

    Examples
    --------
    >>> scale, shift = zscore_map(np.array([[1.0, 3.0], [5.0, np.nan]]))
    >>> float(scale[0, 0] * 5.0 + shift[0, 0]).__round__(4)
    1.2247
    """
    e = pow2_exponent(a, axis=(-2, -1))  # a * 2**-e is exact and its square cannot overflow
    a = np.ldexp(a, -e)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.nanmean(a, axis=(-2, -1), keepdims=True)
        scale = 1.0 / np.nanstd(a, axis=(-2, -1), keepdims=True)
        shift = -mean * scale  # NaN or inf for a constant matrix, whose statistics are NaN
    return np.ldexp(scale, -e), shift


def system_swap_deltas(x: ArrayLike, z: ArrayLike, masks: ArrayLike, pairs: tuple[ArrayLike, ArrayLike], *,
                       method: Method = "pearson", variant: Variant = "b", min_pairs: int = 3,
                       skipna: bool = True) -> np.ndarray:
    """``r(X_i', Z) - r(X_k', Z)`` at system level for every pair and mask: (P, B).

    ``x`` (M, S, I) are the raw metric scores and ``z`` (S, I) the target, NaN where
    missing; the metrics are standardised (z-scores over their present cells) before the
    swap. ``masks`` (B, S, I) bools (True = swap); ``pairs = (pi, pk)`` the metric positions.

    Examples
    --------
    >>> x = np.stack([np.arange(12.0).reshape(3, 4), np.arange(12.0)[::-1].reshape(3, 4)])
    >>> x[0, 0, 0] = np.nan
    >>> masks = np.zeros((2, 3, 4), dtype=bool); masks[1] = True  # no swap, then every cell swapped
    >>> system_swap_deltas(x, x[1], masks, ([0], [1]), method="kendall").tolist()
    [[-2.0, 2.0]]
    """
    return prepare_system_swap(x, z, pairs, method=method, variant=variant, min_pairs=min_pairs,
                               skipna=skipna)(masks)


def prepare_system_swap(x: ArrayLike, z: ArrayLike, pairs: tuple[ArrayLike, ArrayLike], *,
                        method: Method = "pearson", variant: Variant = "b", min_pairs: int = 3,
                        skipna: bool = True) -> SwapDeltas:
    """Precompute what does not depend on the masks; returns ``deltas(masks) -> (P, B)``.

    Examples
    --------
    >>> x = np.stack([np.arange(12.0).reshape(3, 4), np.arange(12.0)[::-1].reshape(3, 4)])
    >>> deltas = prepare_system_swap(x, x[0], ([0, 1], [1, 0]), method="spearman")
    >>> deltas(np.ones((1, 3, 4), dtype=bool)).tolist()
    [[-2.0], [2.0]]
    """
    ax = np.asarray(x, dtype=np.float64)
    az = np.asarray(z, dtype=np.float64)
    if ax.ndim != 3 or az.shape != ax.shape[1:]:
        raise ValueError(f"x must be (M, S, I) and z (S, I), got {ax.shape} and {az.shape}")
    pi, pk = (np.asarray(p, dtype=np.intp).reshape(-1) for p in pairs)
    ops = _Operands(ax, az, pi, pk, dict(method=method, variant=variant, min_pairs=int(min_pairs)))
    if not skipna:
        missing = np.asarray(np.isnan(ax).any(axis=(-2, -1)) | np.isnan(az).any())
        undefined = (missing[pi] | missing[pk])[:, None]
    n_sys, n_inp = ax.shape[1:]

    def deltas(masks: ArrayLike) -> np.ndarray:
        m = np.asarray(masks, dtype=bool)
        if m.ndim != 3 or m.shape[1:] != (n_sys, n_inp):
            raise ValueError(f"masks must be (B, S, I) = (B, {n_sys}, {n_inp}), got {m.shape}")
        if m.shape[0] == 1:  # computed as two draws: every reduction keeps its shape and order
            return deltas(np.concatenate([m, m]))[:, :1]
        out = ops.deltas(m)
        return out if skipna else np.where(undefined, np.nan, out)

    return deltas


class _Operands:
    """The mask-independent arrays of one (metrics, target) problem, and the batch computation."""

    def __init__(self, x: np.ndarray, z: np.ndarray, pi: np.ndarray, pk: np.ndarray, kw: dict) -> None:
        n_met, n_sys, n_inp = x.shape
        self.pi, self.pk, self.kw, self.n_inp = pi, pk, kw, n_inp
        shift = _far_from_zero(x)
        x = x - shift if shift.any() else x  # standardised scores unchanged, raw means precise
        self.scale, self.shift = (a[:, 0, 0] for a in zscore_map(x))  # (M,) each
        vz = ~np.isnan(z)
        z = z - _far_from_zero(z[None])[0]  # the target's means keep their precision too
        # parts of the raw scores as the explicit swap's exact sums take them: exponents per metric and system
        xp = exact_parts(np.where(np.isnan(x), 0.0, x), n_inp) * vz  # (3, M, S, I), 0 where the target is missing
        zp = exact_parts(np.where(vz, z, 0.0), n_inp)  # (3, S, I)
        own = ~np.isnan(x) & vz  # (M, S, I): the cells each metric counts
        self.totals = xp.sum(axis=-1)  # (3, M, S): exact per part
        self.counts = own.sum(axis=-1).astype(np.float64)  # (M, S)
        self.ztotals = np.einsum("psi,msi->pms", zp, own.astype(np.float64))  # exact per part
        # one product per system: the metrics' value parts, then the target's count and parts over its cells
        self.by_system = np.concatenate([xp.transpose(2, 0, 1, 3).reshape(n_sys, 3 * n_met, n_inp),
                                         vz[:, None, :].astype(np.float64), zp.transpose(1, 0, 2) * vz[:, None, :]],
                                        axis=1)  # (S, 3 M + 4, I)
        # what each metric's own missing cells take off the target's count and parts (sparse: few cells)
        self.gaps = [_gap_matrix(vz[s] & np.isnan(x[:, s, :]), zp[:, s, :]) for s in range(n_sys)]
        self.n_met = n_met

    def sums(self, m: np.ndarray) -> dict[str, np.ndarray]:
        """A batch's swapped parts, counts and target parts per metric (exact), as :meth:`_terms`."""
        b = m.shape[0]
        n_sys, n_met = self.by_system.shape[0], self.n_met
        rows = m[:, :, 0]
        out = np.empty((n_sys, 3 * n_met + 4, b))
        gaps = np.empty((n_sys, 4 * n_met, b))
        if (m == rows[:, :, None]).all():  # whole systems swap: the totals, no product
            full = self.by_system.sum(axis=-1)  # (S, 3 M + 4), exact per part
            np.multiply(full[:, :, None], rows.T[:, None, :], out=out)
            for s in range(n_sys):
                gaps[s] = np.asarray(self.gaps[s].sum(axis=1)).reshape(-1, 1) * rows[:, s]
        else:
            mf = np.empty((b, self.n_inp))
            for s in range(n_sys):  # one product per system over every metric
                np.copyto(mf, m[:, s, :])
                np.matmul(self.by_system[s], mf.T, out=out[s])
                gaps[s] = self.gaps[s] @ mf.T
        parts = out[:, : 3 * n_met].reshape(n_sys, 3, n_met, b).transpose(1, 2, 3, 0)  # (3, M, B, S)
        base = out[:, 3 * n_met:]  # (S, 4, B): the target's count and parts over its present cells
        gaps = gaps.reshape(n_sys, 4, n_met, b)
        took_count = (base[:, 0, None, :] - gaps[:, 0]).transpose(1, 2, 0)  # (M, B, S)
        took_z = (base[:, 1:, None, :] - gaps[:, 1:]).transpose(1, 2, 3, 0)  # (3, M, B, S)
        return self._terms(parts, took_count, took_z)

    def _terms(self, took: np.ndarray, took_count: np.ndarray, took_z: np.ndarray) -> dict[str, np.ndarray]:
        """Per metric and draw, (M, B, S) each: a metric's term in a swapped sum where it is kept (mask 0)
        and where it is moved in (mask 1), the counts of those cells, and the target's parts over them."""
        kept = self.totals[:, :, None, :] - took  # exact per part
        kept_count = self.counts[:, None, :] - took_count
        scale, shift = self.scale[:, None, None], self.shift[:, None, None]
        with np.errstate(invalid="ignore", divide="ignore"):  # a constant metric has no z-score map
            return {"kept": scale * _join(kept) + shift * kept_count, "took": scale * _join(took) + shift * took_count,
                    "kept_count": kept_count, "took_count": took_count,
                    "kept_z": self.ztotals[:, :, None, :] - took_z, "took_z": np.ascontiguousarray(took_z)}

    def deltas(self, m: np.ndarray) -> np.ndarray:
        """(P, B) deltas of a batch of masks, blocks of pairs at a time."""
        terms = self.sums(m)
        b, n_sys = m.shape[0], m.shape[1]
        out = np.empty((self.pi.size, b))
        step = max(1, SYSTEM_BLOCK_ELEMS // max(n_sys * b, 1))
        for start in range(0, self.pi.size, step):
            sl = slice(start, start + step)
            out[sl] = self._block(terms, self.pi[sl], self.pk[sl])
        return out

    @staticmethod
    def _means(terms: dict[str, np.ndarray], keep: np.ndarray, moved: np.ndarray,
               swapped_first: bool) -> tuple[np.ndarray, np.ndarray]:
        """System means (Pb, B, S) of the swapped metric and of the target over its valid cells.

        The swapped metric takes metric ``keep``'s cells where the mask is 0 and ``moved``'s where
        it is 1; ``swapped_first`` adds the moved metric's term first (the order of the explicit sums).
        """
        kept, took = terms["kept"][keep], terms["took"][moved]
        with np.errstate(invalid="ignore", divide="ignore"):
            total = took + kept if swapped_first else kept + took
            count = terms["kept_count"][keep] + terms["took_count"][moved]
            zsum = _join(terms["kept_z"][:, keep] + terms["took_z"][:, moved])  # exact per part
            mean = np.where(count > 0, total / count, np.nan)
            zmean = np.where(count > 0, zsum / count, np.nan)
        return mean, zmean

    def _block(self, terms: dict[str, np.ndarray], pi: np.ndarray, pk: np.ndarray) -> np.ndarray:
        """Deltas of one block of pairs: (Pb, B)."""
        mx, zx = self._means(terms, pi, pk, swapped_first=False)  # X' keeps X_i where the mask is 0
        rx = system_statistic(mx, zx, **self.kw)
        del mx, zx
        my, zy = self._means(terms, pk, pi, swapped_first=True)  # Y' takes X_i where the mask is 1
        return rx - system_statistic(my, zy, **self.kw)


def system_statistic(means: np.ndarray, target: np.ndarray, *, method: Method, variant: Variant,
                     min_pairs: int) -> np.ndarray:
    """The statistic of each row of S system means (..., S) against the target's, NaN-aware.

    Kendall's variants count the pairs of systems, and Spearman's mid-ranks are counted, with a
    loop over the S systems vectorised over every row (the same numbers as
    :func:`.correlation.kendall` and :func:`.correlation.spearman`); Pearson is
    :func:`.correlation.pearson`.

    Examples
    --------
    >>> system_statistic(np.array([[1.0, 2.0, 3.0, 4.0]]), np.array([[1.0, 3.0, 2.0, 4.0]]), method="kendall",
    ...                  variant="b", min_pairs=3).round(4).tolist()
    [0.6667]
    """
    if method == "pearson" or means.shape[-1] > PAIRWISE_MAX_N:
        return corr(means, target, method=method, variant=variant, min_pairs=min_pairs)[0]
    lead = means.shape[:-1]
    xt = np.ascontiguousarray(means.reshape(-1, means.shape[-1]).T)  # (S, R): a system's row is contiguous
    zt = np.ascontiguousarray(np.broadcast_to(target, means.shape).reshape(-1, means.shape[-1]).T)
    valid = ~np.isnan(xt) & ~np.isnan(zt)
    if method == "spearman":  # Pearson's r of the mid-ranks of the valid pairs
        rx, rz = _midranks(xt, valid).T, _midranks(zt, valid).T
        return pearson(rx, rz, min_pairs=min_pairs)[0].reshape(lead)
    cmd, tx, tz, txz = (np.zeros(xt.shape[1], dtype=np.int64) for _ in range(4))
    with np.errstate(invalid="ignore"):
        for s in range(xt.shape[0] - 1):  # the pairs (s, t > s) of every row at once, signs as int8
            pv = valid[s] & valid[s + 1:]
            gx, lx = xt[s] > xt[s + 1:], xt[s] < xt[s + 1:]
            gz, lz = zt[s] > zt[s + 1:], zt[s] < zt[s + 1:]
            agree = (gx.view(np.int8) - lx.view(np.int8)) * (gz.view(np.int8) - lz.view(np.int8))
            agree *= pv.view(np.int8)
            cmd += agree.sum(axis=0, dtype=np.int64)
            ex, ez = ~(gx | lx) & pv, ~(gz | lz) & pv
            tx += ex.sum(axis=0, dtype=np.int64)
            tz += ez.sum(axis=0, dtype=np.int64)
            txz += (ex & ez).sum(axis=0, dtype=np.int64)
    n = valid.sum(axis=0)
    tot = n * (n - 1) // 2
    m = None
    if variant == "c":
        m = np.minimum(count_distinct(xt.T, valid.T), count_distinct(zt.T, valid.T))
    tau = tau_from_counts(cmd, tot, tx, tz, n, m, variant, txz)
    undefined = n < max(int(min_pairs), 2)
    if variant not in ("23", "acc23"):  # a constant vector: every valid pair tied
        undefined |= (tx == tot) | (tz == tot)
    return np.where(undefined, np.nan, np.clip(tau, -1.0, 1.0)).reshape(lead)


def _far_from_zero(a: np.ndarray) -> np.ndarray:
    """Each (S, I) matrix's median where it is over 1024 times the matrix's range, else 0: (M, 1, 1).
    Subtracting it is exact (every value is within a factor 2 of it) and changes no system-level
    statistic; it keeps the raw means' precision on scores far from 0 (0 for every other matrix)."""
    flat = a.reshape(a.shape[0], -1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a matrix without a value
        med = np.nanmedian(flat, axis=-1)
        spread = np.nanmax(flat, axis=-1) - np.nanmin(flat, axis=-1)
    return np.where(np.abs(med) > 1024 * spread, med, 0.0)[:, None, None]


def _midranks(at: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Mid-ranks (S, R) of each column's valid values among themselves (NaN elsewhere), by counting."""
    ranks = np.empty(at.shape)
    for s in range(at.shape[0]):
        below = ((at < at[s]) & valid).sum(axis=0)
        tied = ((at == at[s]) & valid).sum(axis=0)  # itself included
        ranks[s] = below + (tied + 1) / 2.0
    return np.where(valid, ranks, np.nan)


def _gap_matrix(gap: np.ndarray, zp: np.ndarray) -> sp.csr_array:
    """(4 M, I) sparse rows: per metric, 1 and the target's three parts at its missing cells (``gap`` (M, I))."""
    n_met, n_inp = gap.shape
    met, inp = np.nonzero(gap)
    rows = np.concatenate([met + k * n_met for k in range(4)])
    vals = np.concatenate([np.ones(met.size)] + [zp[k, inp] for k in range(3)])
    return sp.csr_array((vals, (rows, np.tile(inp, 4))), shape=(4 * n_met, n_inp))


def _join(parts: np.ndarray) -> np.ndarray:
    """The three exact part sums (3, ...) added in a fixed order (that of the explicit swap's sums)."""
    return (parts[0] + parts[1]) + parts[2]
