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
:mod:`.allpairs`). Counts and target sums are taken over the cells where the target
is present, shared by every metric, minus a sparse correction over each metric's own
missing cells (work proportional to those cells).

Sums are exact (:func:`..exactsum.exact_parts` of the raw scores, per part, added in a
fixed order), and a system's mean is the z-score map of the raw mean (means commute with
it): systems whose raw sums tie keep tied means, which rank statistics need, and a draw's
value does not depend on the batch. The terms are laid out (system, metric, draw); a block of
pairs takes its S means per draw and their statistic at once:

* Pearson (any S): the compiled loop of :mod:`.system_swap_jit`, each pair's means taken draw by draw
  and r's sums fused (no (systems, pairs, draws) temporary), added in system order (rows whose sums of
  squares leave float64's comfortable range recomputed, :func:`flagged_pearson`);
* Kendall and Spearman: the rank family's statistics of S means per draw (:mod:`..rank.system_swap`):
  over a few dozen systems its compiled loop takes the same per-metric terms and counts every pair of
  systems, fused likewise; over many, and for Spearman, the block's means (:func:`swapped_means`)
  go to :func:`..rank.system_swap.system_statistic`.

The means of a block are laid out (S, ...): system by system, each a plane over the block's pairs
and draws (or any rows); what the module does beside the loops works plane by plane, vectorised
over the rows, with a loop over the S systems only: :class:`SystemTerms` (a batch's per-metric
terms), :func:`swapped_means` (the means of a block at once, in the loops' order) and
:func:`flagged_pearson`.

Every value equals the statistic of the explicitly swapped matrices (tests: scipy on the
expanded swaps, with missing cells).
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

if TYPE_CHECKING:
    import scipy.sparse as sp

from ..._types import Method, Variant
from .._compiled import loops
from ..correlation import pearson
from ..exactsum import exact_parts
from ..rank.sorted_counts import sorted_form
from ..rank.system_swap import COUNT_NAMES, system_statistic, tau_of_counts
from ..scaling import SAFE_SUM_BOUNDS, pow2_exponent, pow2_normalise
from ..swap import SwapDeltas

__all__ = ["SYSTEM_BLOCK_ELEMS", "SystemTerms", "flagged_pearson", "prepare_system_swap", "swapped_means",
           "system_swap_deltas", "zscore_map"]


#: float64 elements of one (pairs, B) block of a batch's deltas: pairs are taken in blocks of
#: ``SYSTEM_BLOCK_ELEMS // B`` (the compiled loops keep no (systems, pairs, B) temporary).
SYSTEM_BLOCK_ELEMS = 1 << 17

#: float64 elements of the masks (systems, inputs, B) one product of a block of systems takes.
_MASK_BLOCK_ELEMS = 1 << 20

class SystemTerms(NamedTuple):
    """A batch's per-metric terms of the swapped system sums, each (S, M, B) (system, metric, draw).

    The swapped metric ``X'`` of a pair keeps metric ``keep``'s cells where the mask is 0 and takes
    metric ``moved``'s where it is 1: its sum over system s is ``kept[s, keep] + took[s, moved]``,
    its count of valid cells ``kept_count[s, keep] + took_count[s, moved]``, and the target's three
    exact parts over those cells ``kept_z[:, s, keep] + took_z[:, s, moved]`` ((3, S, M, B) each).
    """

    kept: np.ndarray
    took: np.ndarray
    kept_count: np.ndarray
    took_count: np.ndarray
    kept_z: np.ndarray
    took_z: np.ndarray


def swapped_means(terms: SystemTerms, keep: np.ndarray, moved: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """System means (S, Pb, B) of the swapped metric and of the target over its valid cells (NaN without one).

    The target's sum is its three exact part sums added in a fixed order, ``(z0 + z1) + z2``.

    Examples
    --------
    >>> one = np.ones((2, 1, 1))
    >>> terms = SystemTerms(2 * one, 4 * one, one, one, np.stack([one, 0 * one, 0 * one]), np.zeros((3, 2, 1, 1)))
    >>> mean, zmean = swapped_means(terms, np.array([0]), np.array([0]))
    >>> mean[:, 0, 0].tolist(), zmean[:, 0, 0].tolist()
    ([3.0, 3.0], [0.5, 0.5])
    """
    return _combined(*(a[..., keep, :] if k % 2 == 0 else a[..., moved, :] for k, a in enumerate(terms)))


def _combined(kept: np.ndarray, took: np.ndarray, kept_count: np.ndarray, took_count: np.ndarray,
              kept_z: np.ndarray, took_z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The means of :func:`swapped_means` from its gathered terms (new arrays: overwritten here)."""
    count = kept_count
    count += took_count
    mean = kept
    mean += took
    parts = kept_z
    parts += took_z
    zmean = parts[0]
    zmean += parts[1]
    zmean += parts[2]
    with np.errstate(invalid="ignore", divide="ignore"):
        mean /= count
        zmean /= count
    if not (count > 0).all():
        empty = ~(count > 0)
        mean[empty] = np.nan
        zmean[empty] = np.nan
    return mean, zmean


def flagged_pearson(r: np.ndarray, terms: SystemTerms, keep: np.ndarray, moved: np.ndarray,
                    min_pairs: int) -> np.ndarray:
    """``r`` (Pb, B) of a block's pairs ``keep``/``moved``, its flagged (``inf``) rows recomputed.

    The loop flags a defined row whose sums of squares left :data:`.scaling.SAFE_SUM_BOUNDS` (scores
    beyond about 2**250 or below 2**-250). The flagged rows' means are taken as :func:`swapped_means`
    takes them, and their r by :func:`.correlation.pearson` (an exact power-of-two scaling first).
    ``r`` is changed in place.
    """
    p, b = np.nonzero(np.isinf(r))
    if p.size:  # each term at (s, metric, draw) of every flagged row: (S, R) or (3, S, R)
        gathered = (a[..., keep[p] if k % 2 == 0 else moved[p], b] for k, a in enumerate(terms))
        mean, zmean = _combined(*gathered)
        r[p, b] = pearson(mean.T, zmean.T, min_pairs=min_pairs)[0]
    return r


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
    # exact power-of-two scaling of extreme matrices (none else): no mean or sum of theirs overflows
    ax, az = pow2_normalise(ax, axis=(-2, -1)), pow2_normalise(az, axis=(-2, -1))
    pi, pk = (np.asarray(p, dtype=np.intp).reshape(-1) for p in pairs)
    used = np.unique(np.concatenate([pi, pk]))
    if used.size < ax.shape[0]:  # the parts of metrics in no pair are not formed
        ax, pi, pk = ax[used], np.searchsorted(used, pi), np.searchsorted(used, pk)
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
        zp = exact_parts(np.where(vz, z, 0.0), n_inp)  # (3, S, I)
        own = ~np.isnan(x) & vz  # (M, S, I): the cells each metric counts
        self.by_system = _by_system(x, vz, zp)  # (S, 3 M + 4, I)
        self.totals = self.by_system[:, : 3 * n_met].sum(axis=-1).reshape(n_sys, 3, n_met).transpose(1, 0, 2).copy()
        self.counts = own.sum(axis=-1).T.astype(np.float64)  # (S, M)
        self.ztotals = np.einsum("psi,msi->psm", zp, own.astype(np.float64))  # (3, S, M), exact per part
        # what each metric's own missing cells take off the target's count and parts (sparse: few cells)
        gap_cells = vz[None] & np.isnan(x)  # (M, S, I)
        self.gaps = [(s, _Gaps.of(gap_cells[:, s, :], zp[:, s, :])) for s in np.flatnonzero(gap_cells.any(axis=(0, 2)))]
        self.n_met = n_met

    def sums(self, m: np.ndarray) -> SystemTerms:
        """A batch's swapped parts, counts and target parts per metric (exact), as :meth:`_terms`."""
        b = m.shape[0]
        n_sys, n_met = self.by_system.shape[0], self.n_met
        rows = m[:, :, 0]
        out = np.empty((n_sys, 3 * n_met + 4, b))
        if (m == rows[:, :, None]).all():  # whole systems swap: the totals, no product
            full = self.by_system.sum(axis=-1)  # (S, 3 M + 4), exact per part
            np.multiply(full[:, :, None], rows.T[:, None, :], out=out)
        else:  # one product per system over every metric, a block of systems at a time (exact: any order)
            step = max(1, _MASK_BLOCK_ELEMS // max(b * self.n_inp, 1))
            for s0 in range(0, n_sys, step):
                mf = np.ascontiguousarray(m[:, s0:s0 + step, :].transpose(1, 2, 0), dtype=np.float64)  # (s, I, B)
                np.matmul(self.by_system[s0:s0 + step], mf, out=out[s0:s0 + step])
        gaps = np.zeros((n_sys, 4, n_met, b))
        for s, gap in self.gaps:  # the systems with a metric's cell missing where the target is present
            gap.add_sums(m[:, s, :], gaps[s])
        parts = out[:, : 3 * n_met].reshape(n_sys, 3, n_met, b).transpose(1, 0, 2, 3)  # (3, S, M, B)
        base = out[:, 3 * n_met:]  # (S, 4, B): the target's count and parts over its present cells
        took_count = base[:, 0, None, :] - gaps[:, 0]  # (S, M, B)
        took_z = np.empty((3, n_sys, n_met, b))
        np.subtract(base[:, 1:, None, :].transpose(1, 0, 2, 3), gaps[:, 1:].transpose(1, 0, 2, 3), out=took_z)
        return self._terms(parts, took_count, took_z)

    def _terms(self, took: np.ndarray, took_count: np.ndarray, took_z: np.ndarray) -> SystemTerms:
        """Per system, metric and draw (S, M, B): a metric's term in a swapped sum where it is kept (mask 0)
        and where it is moved in (mask 1), the counts of those cells, and the target's parts over them."""
        kept = (self.totals[k, :, :, None] - took[k] for k in range(3))  # exact per part
        kept_count = self.counts[:, :, None] - took_count
        scale, shift = self.scale[:, None], self.shift[:, None]
        with np.errstate(invalid="ignore", divide="ignore"):  # a constant metric has no z-score map
            return SystemTerms(scale * _join(tuple(kept)) + shift * kept_count,
                               scale * _join(took) + shift * took_count, kept_count, took_count,
                               self.ztotals[:, :, :, None] - took_z, took_z)

    def deltas(self, m: np.ndarray) -> np.ndarray:
        """(P, B) deltas of a batch of masks, blocks of pairs at a time."""
        terms = self.sums(m)
        b = m.shape[0]
        out = np.empty((self.pi.size, b))
        step = max(1, SYSTEM_BLOCK_ELEMS // max(b, 1))
        for start in range(0, self.pi.size, step):
            sl = slice(start, start + step)
            out[sl] = self._statistic(terms, self.pi[sl], self.pk[sl])
            out[sl] -= self._statistic(terms, self.pk[sl], self.pi[sl])  # Y' keeps X_k, takes X_i where m is 1
        return out

    def _statistic(self, terms: SystemTerms, keep: np.ndarray, moved: np.ndarray) -> np.ndarray:
        """The statistic (Pb, B) of the swapped metric that keeps ``keep``'s cells where the mask is 0 and
        takes ``moved``'s where it is 1 (see the module docstring for which algorithm takes which case)."""
        kw, n_sys, b = self.kw, terms.kept.shape[0], terms.kept.shape[-1]
        if kw["method"] == "pearson":
            r = np.empty((keep.size, b))
            loops("linear.system_swap_jit").pearson_rows(*terms, keep, moved, max(kw["min_pairs"], 2), *SAFE_SUM_BOUNDS, r)
            return flagged_pearson(r, terms, keep, moved, kw["min_pairs"])
        if kw["method"] == "kendall" and not sorted_form(n_sys):
            counts = np.empty((len(COUNT_NAMES), keep.size, b), dtype=np.int64)
            loops("rank.system_swap_jit").kendall_counts(*terms, keep, moved, kw["variant"] == "c", counts)
            return tau_of_counts(counts, kw["variant"], kw["min_pairs"])
        mx, mz = swapped_means(terms, keep, moved)
        return system_statistic(np.moveaxis(mx, 0, -1), np.moveaxis(mz, 0, -1), **kw)


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


def _by_system(x: np.ndarray, vz: np.ndarray, zp: np.ndarray) -> np.ndarray:
    """(S, 3 M + 4, I): per system, the three exact parts of every metric's raw scores (0 where the metric
    or the target is missing; exponents per metric and system, as the explicit swap's exact sums take
    them), then the target's presence and its three parts where present: one product per system."""
    n_met, n_sys, n_inp = x.shape
    out = np.empty((n_sys, 3 * n_met + 4, n_inp))
    parts = exact_parts(np.where(np.isnan(x), 0.0, x), n_inp)  # (3, M, S, I): exponents per metric and system
    np.multiply(parts.transpose(2, 0, 1, 3).reshape(n_sys, 3 * n_met, n_inp), vz[:, None, :],
                out=out[:, : 3 * n_met])
    out[:, 3 * n_met] = vz
    np.multiply(zp.transpose(1, 0, 2), vz[:, None, :], out=out[:, 3 * n_met + 1:])
    return out


class _Gaps(NamedTuple):
    """One system's cells where a metric is missing and the target present, metric after metric."""

    inputs: np.ndarray  # (n,) the cells' inputs
    forms: sp.csr_array  # (4 K, n): per metric with a cell (K of them), 1 and the target's three parts at its cells
    metrics: np.ndarray  # (K,) those metrics

    @classmethod
    def of(cls, gap: np.ndarray, zp: np.ndarray) -> _Gaps:
        """From the (M, I) cells and the target's (3, I) parts."""
        import scipy.sparse as sp  # on use: about a tenth of a second to import

        met, inp = np.nonzero(gap)
        metrics, owner = np.unique(met, return_inverse=True)
        values = np.concatenate([np.ones(inp.size), zp[:, inp].reshape(-1)])
        rows = np.concatenate([owner + k * metrics.size for k in range(4)])
        forms = sp.csr_array((values, (rows, np.tile(np.arange(inp.size), 4))), shape=(4 * metrics.size, inp.size))
        return cls(inp, forms, metrics)

    def add_sums(self, m: np.ndarray, out: np.ndarray) -> None:
        """``out`` (4, M, B) gets, per metric, the count of its cells the system's masks ``m`` (B, I) swap and
        the target's three parts over them (exact: 0/1 weights of exact parts)."""
        if self.inputs.size:
            taken = np.empty((self.inputs.size, m.shape[0]))  # (n, B), C-contiguous for the sparse product
            np.copyto(taken, m[:, self.inputs].T)
            out[:, self.metrics] = (self.forms @ taken).reshape(4, self.metrics.size, m.shape[0])


def _join(parts: np.ndarray | tuple[np.ndarray, ...]) -> np.ndarray:
    """The three exact part sums (3, ...) added in a fixed order (that of the explicit swap's sums)."""
    return (parts[0] + parts[1]) + parts[2]
