"""Soft pairwise accuracy of two metrics whose cells are swapped: the draws of its permutation test.

A draw swaps cells between metrics A and B with a 0/1 mask ``m`` over (system, input):
``A' = A - m * A + m * B`` and ``B' = B - m * B + m * A``. The statistic (see
:mod:`xcorrstat._mt.softpairwise`) runs a fixed sign-flip test per pair of systems: with
the fixed sign matrix ``T`` (R, L), the flipped sums of the systems are ``A' T^T``. They are
linear in the masked scores, and the masked part of each metric does not depend on the
other metric of the pair:

    A' T^T = A T^T - U_A + U_B,    B' T^T = B T^T - U_B + U_A,    U_X = (m * X) T^T,

so a batch of draws costs one matrix product per metric and system (:func:`masked_flips`),
shared by every pair of metrics the metric is in. The system sums are linear the same
way. A pair of systems (a, b) counts the sign draws whose flipped difference reaches the
observed one less a rounding tolerance of ``1e-9`` times a bound on the summed absolute
per-input differences of (a, b) (:func:`pair_scale`).

The counts come from one loop per kind (:func:`_pair_counts`, :func:`_swapped_pair_counts`),
compiled with numba (no temporary per pair; the GIL is released, so Dask threads run them in
parallel). The tests compare them with a vectorised NumPy algorithm.
"""

from __future__ import annotations

import numpy as np

from .._compiled import jit

__all__ = ["masked_flips", "pair_pvalues_from_sums", "pair_scale", "spa_from_flips", "spa_swap_draws", "swapped_spa"]

def pair_pvalues_from_sums(flipped: np.ndarray, sums: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """p-values of every system pair from flipped sums (..., S, R) and system sums (..., S) -> (..., P).

    ``p(a, b)`` is the share of the R sign draws whose flipped difference ``f_a - f_b``
    reaches the observed ``s_a - s_b`` less ``1e-9 * scale(a, b)``; pairs are
    ``np.triu_indices(S, 1)``; one compiled loop counts them (:func:`_pair_counts`).

    Examples
    --------
    >>> flipped = np.array([[3.0, 1.0], [1.0, 3.0]])  # two systems, two sign draws
    >>> pair_pvalues_from_sums(flipped, np.array([3.0, 1.0]), np.array([2.0])).tolist()
    [0.5]
    """
    n_sys = sums.shape[-1]
    a, b = np.triu_indices(n_sys, 1)
    observed = sums[..., a] - sums[..., b] - 1e-9 * scale  # (..., P)
    lead = observed.shape[:-1]
    flat = np.broadcast_to(flipped, lead + flipped.shape[-2:]).reshape(-1, *flipped.shape[-2:])
    flat = np.ascontiguousarray(flat, dtype=np.float64)
    obs = np.ascontiguousarray(observed.reshape(-1, observed.shape[-1]))
    return _pair_counts(flat, obs).reshape(observed.shape) / flipped.shape[-1]


def pair_scale(*xs: np.ndarray) -> np.ndarray:
    """Per system pair (a < b): ``sum_k max_X |X_a,k| + max_X |X_b,k|`` over the score matrices (S, L) given.

    A bound on ``sum_k |x_a,k - x_b,k|`` for any matrix ``x`` whose every cell comes from one
    of them (so the same tolerance serves every swap of the cells).

    Examples
    --------
    >>> pair_scale(np.array([[1.0, -2.0], [0.5, 0.0]])).tolist()
    [3.5]
    """
    top = np.max(np.abs(np.stack(xs)), axis=0)  # (S, L)
    a, b = np.triu_indices(top.shape[0], 1)
    return (top[a] + top[b]).sum(axis=-1)


def masked_flips(x: np.ndarray, signs: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``U = (m * X) T^T`` per draw, and the masked system sums.

    Shapes: X (S, L), signs T (R, L), masks (B, S, L) -> U (B, S, R) and sums (B, S).

    Examples
    --------
    >>> u, s = masked_flips(np.ones((2, 3)), np.ones((4, 3)), np.ones((1, 2, 3), dtype=bool))
    >>> u.shape, s.tolist()
    ((1, 2, 4), [[3.0, 3.0]])
    """
    mx = masks * x  # (B, S, L)
    n_draws, n_sys, n_inp = mx.shape
    return (mx.reshape(-1, n_inp) @ signs.T).reshape(n_draws, n_sys, -1), mx.sum(axis=-1)


def spa_from_flips(flipped: np.ndarray, sums: np.ndarray, scale: np.ndarray, p_gold: np.ndarray) -> np.ndarray:
    """SPA ``1 - mean |p_gold - p|`` from a metric's flipped sums (B, S, R) and system sums (B, S) -> (B,)."""
    return 1.0 - np.abs(p_gold - pair_pvalues_from_sums(flipped, sums, scale)).mean(axis=-1)


def swapped_spa(fixed: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
                moved: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray], scale: np.ndarray,
                p_gold: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """SPA of ``A'`` and ``B'`` in a batch of draws, from each metric's fixed and masked parts.

    ``fixed = (A T^T, B T^T, A's system sums, B's)`` ((S, R), (S, R), (S,), (S,)) and
    ``moved = (U_A, U_B, A's masked sums, B's)`` ((B, S, R) x2, (B, S) x2) from
    :func:`masked_flips`: ``A' = A + (U_B - U_A)`` and ``B' = B - (U_B - U_A)``. The two metrics'
    counts come from one fused loop (:func:`_swapped_pair_counts`), without their flipped sums.
    """
    fa, fb, sum_a, sum_b = fixed
    ua, ub, ma, mb = moved
    shift = mb - ma
    a, b = np.triu_indices(fa.shape[0], 1)
    obs_a, obs_b = sum_a + shift, sum_b - shift
    tol = 1e-9 * scale
    ca, cb = _swapped_pair_counts(fa, fb, ua, ub, np.ascontiguousarray(obs_a[:, a] - obs_a[:, b] - tol),
                                     np.ascontiguousarray(obs_b[:, a] - obs_b[:, b] - tol))
    n = fa.shape[-1]
    return 1.0 - np.abs(p_gold - ca / n).mean(axis=-1), 1.0 - np.abs(p_gold - cb / n).mean(axis=-1)


def spa_swap_draws(xa: np.ndarray, xb: np.ndarray, z: np.ndarray, signs: np.ndarray,
                   masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """SPA of the swapped metrics ``(A', B')`` in every draw: (S, L) scores, (R, L) signs, (B, S, L) masks -> (B,) x2.

    Complete scores only (the caller keeps the inputs where A, B and the target are all
    defined). Equal, up to rounding, to :func:`xcorrstat.soft_pairwise_accuracy` (with these
    signs) of the explicitly swapped score matrices.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> xa, xb, z = rng.normal(size=(3, 4, 30))
    >>> signs = np.where(rng.random((200, 30)) < 0.5, -1.0, 1.0)
    >>> none = np.zeros((1, 4, 30), dtype=bool)
    >>> sa, sb = spa_swap_draws(xa, xb, z, signs, np.concatenate([none, ~none]))
    >>> bool(np.isclose(sa[0], sb[1]) and np.isclose(sb[0], sa[1]))  # no swap; the full swap exchanges them
    True
    """
    if xa.shape[0] < 2:
        return np.full(masks.shape[0], np.nan), np.full(masks.shape[0], np.nan)
    signs = np.asarray(signs, dtype=np.float64)
    p_gold = pair_pvalues_from_sums(z @ signs.T, z.sum(axis=-1), pair_scale(z))
    fixed = (xa @ signs.T, xb @ signs.T, xa.sum(axis=-1), xb.sum(axis=-1))
    (ua, sa), (ub, sb) = masked_flips(xa, signs, masks), masked_flips(xb, signs, masks)
    return swapped_spa(fixed, (ua, ub, sa, sb), pair_scale(xa, xb), p_gold)


@jit
def _pair_counts(flipped, observed):
    """Sign draws r with ``f[a, r] - f[b, r] >= observed[q]`` per pair q = (a, b), a < b, in triu order.

    ``flipped`` (B, S, R) float64, ``observed`` (B, P) float64 -> (B, P) int64.
    """
    n_draws, n_sys, n_signs = flipped.shape
    out = np.zeros((n_draws, observed.shape[1]), np.int64)
    for d in range(n_draws):
        q = 0
        for a in range(n_sys - 1):
            fa = flipped[d, a]
            for b in range(a + 1, n_sys):
                fb = flipped[d, b]
                c = observed[d, q]
                k = 0
                for r in range(n_signs):
                    if fa[r] - fb[r] >= c:
                        k += 1
                out[d, q] = k
                q += 1
    return out


@jit
def _swapped_pair_counts(fa, fb, ua, ub, observed_a, observed_b):
    """:func:`_pair_counts` of both swapped metrics without building their flipped sums.

    ``A' = fa - ua + ub`` and ``B' = fb - ub + ua`` row by row, one draw at a time: ``fa``, ``fb``
    (S, R), ``ua``, ``ub`` (B, S, R), observed (B, P) each -> two (B, P) int64.
    """
    n_draws, n_sys, n_signs = ua.shape
    n_pairs = observed_a.shape[1]
    out_a = np.zeros((n_draws, n_pairs), np.int64)
    out_b = np.zeros((n_draws, n_pairs), np.int64)
    rows_a = np.empty((n_sys, n_signs))
    rows_b = np.empty((n_sys, n_signs))
    for d in range(n_draws):
        for s in range(n_sys):
            for r in range(n_signs):
                moved = ub[d, s, r] - ua[d, s, r]
                rows_a[s, r] = fa[s, r] + moved
                rows_b[s, r] = fb[s, r] - moved
        q = 0
        for a in range(n_sys - 1):
            for b in range(a + 1, n_sys):
                ca = observed_a[d, q]
                cb = observed_b[d, q]
                ka = 0
                kb = 0
                for r in range(n_signs):
                    if rows_a[a, r] - rows_a[b, r] >= ca:
                        ka += 1
                    if rows_b[a, r] - rows_b[b, r] >= cb:
                        kb += 1
                out_a[d, q] = ka
                out_b[d, q] = kb
                q += 1
    return out_a, out_b
