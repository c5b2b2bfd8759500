"""Soft pairwise accuracy of two metrics whose cells are swapped: the draws of its permutation test.

A draw swaps cells between metrics A and B with a 0/1 mask ``m`` over (system, input):
``A' = A - m * D`` and ``B' = B + m * D`` with ``D = A - B``. The statistic (see
:mod:`xcorrstat.mt.softpairwise`) runs a fixed sign-flip test per pair of systems: with
the fixed sign matrix ``T`` (R, L), the flipped sums of the systems are ``T A'^T``. They are
linear in the mask, and the parts without it are computed once:

    T A'^T = T A^T - T (m * D)^T,        T B'^T = T B^T + T (m * D)^T,

so a batch of draws costs one matrix product per system (``T`` against the masked
differences of that system in every draw), shared by A' and B'. The system sums are
linear the same way. A pair of systems (a, b) counts the sign draws whose flipped
difference reaches the observed one, with the statistic's rounding tolerance.
"""

from __future__ import annotations

import numpy as np

__all__ = ["pair_pvalues_from_sums", "spa_swap_draws"]


def pair_pvalues_from_sums(flipped: np.ndarray, sums: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """p-values of every system pair from flipped sums (..., R, S) and system sums (..., S) -> (..., P).

    ``p(a, b)`` is the share of the R sign draws whose flipped difference ``f_a - f_b``
    reaches the observed ``s_a - s_b`` less ``1e-9 * scale(a, b)`` (``scale``, (P,), the
    summed absolute per-input differences of the pair: the rounding tolerance of
    :func:`xcorrstat.mt.softpairwise.pairwise_pvalues`).

    Examples
    --------
    >>> flipped = np.array([[3.0, 1.0], [1.0, 3.0]])  # two sign draws, two systems
    >>> pair_pvalues_from_sums(flipped, np.array([3.0, 1.0]), np.array([2.0])).tolist()
    [0.5]
    """
    a, b = np.triu_indices(sums.shape[-1], 1)
    null = flipped[..., a] - flipped[..., b]  # (..., R, P)
    observed = sums[..., a] - sums[..., b] - 1e-9 * scale  # (..., P)
    return (null >= observed[..., None, :]).mean(axis=-2)


def _pair_scale(x: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """sum_k |x_a,k - x_b,k| of every system pair: x (..., S, L) -> (..., P)."""
    return np.abs(x[..., a, :] - x[..., b, :]).sum(axis=-1)


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
    s = xa.shape[0]
    a, b = np.triu_indices(s, 1)
    if a.size == 0:
        return np.full(masks.shape[0], np.nan), np.full(masks.shape[0], np.nan)
    signs = np.asarray(signs, dtype=np.float64)
    p_gold = pair_pvalues_from_sums(signs @ z.T, z.sum(axis=-1), _pair_scale(z, a, b))
    d = xa - xb
    md = masks * d  # (B, S, L)
    n_draws, n_inp = md.shape[0], md.shape[-1]
    moved = (md.reshape(-1, n_inp) @ signs.T).reshape(n_draws, s, -1)  # (B, S, R): one product per system
    moved = np.swapaxes(moved, -1, -2)  # (B, R, S)
    shift = md.sum(axis=-1)  # (B, S)
    p_a = pair_pvalues_from_sums((signs @ xa.T)[None] - moved, xa.sum(axis=-1) - shift,
                                 _pair_scale(xa - md, a, b))
    p_b = pair_pvalues_from_sums((signs @ xb.T)[None] + moved, xb.sum(axis=-1) + shift,
                                 _pair_scale(xb + md, a, b))
    return 1.0 - np.abs(p_gold - p_a).mean(axis=-1), 1.0 - np.abs(p_gold - p_b).mean(axis=-1)
