"""Input-level Kendall variants of swapped metrics, with metric ties within epsilon, for a batch of masks.

The extension of :mod:`xcorrstat.kernels.swap` to every Kendall variant and to
epsilon ties. Within one input, a pair of systems (a, b) compares the cells
``u_a`` and ``v_b``, where u and v are X or Y depending on the swap mask. Its metric
sign ``sgn_eps(u_a - v_b)`` (0 when ``|u_a - v_b| <= eps``) and its metric-tie
indicator are therefore one of four precomputed pair matrices, selected by
``(m_a, m_b)``: bilinear in the mask, as for tau-b. With the gold sign ``g`` and
gold-tie indicator ``t`` of the pair (exact ties), summed over the valid pairs:

* ``C - D = sum g * sgn``, the metric ties ``T_m + T_gm = sum e``;
* tau-a ``= (C - D) / N``; tau-b ``= (C - D) / sqrt((N - T_g - T_gm)(N - T_m - T_gm))``;
* acc_eq ``= (C + T_gm) / N = (sum g sgn + sum (1 - t) + sum e (3t - 1)) / (2N)``,
  because a pair agrees when both signs are equal: ``(g sgn + |g||sgn|) / 2 + t e``
  with ``|sgn| = 1 - e``;
* tau_eq (``"23"``) ``= (C + T_gm - D - T_g - T_m) / N = 2 acc_eq - 1``.

So each variant is a constant + a linear + a quadratic form in the mask, evaluated
for a batch of masks with a few GEMMs, exact in float32 for these integer sums.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from .._types import Variant
from .swapmath import (
    F32_EXACT,
    QuadraticOperand,
    SwapRun,
    empty_operand,
    fill_operand,
    linear,
    per_input_masks,
    quadratic,
)

__all__ = ["SWAP_KENDALL_VARIANTS", "input_kendall_swap"]

#: Input-level Kendall variants of the swap fast path.
SWAP_KENDALL_VARIANTS: tuple[Variant, ...] = ("a", "b", "23", "acc23")
_ACC_VARIANTS = ("acc23", "23")  # the variants that count metric ties as agreement
#: Cells (pairs x inputs x S x S) whose pair matrices are built at once: ~2 MB per temporary.
_PREP_CELLS = 1 << 18

#: Constant, linear and quadratic parts of one pair sum: ``(const_x, const_y, lin_x, lin_y, quad)``.
_Parts = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]
_PairForms = dict[tuple[int, int], tuple[np.ndarray, np.ndarray]]


class _Counts(NamedTuple):
    """Per-input pair counts that no mask changes, each (P, I)."""

    n0: np.ndarray  # valid pairs
    tz: np.ndarray  # valid pairs tied in the target
    base: np.ndarray  # acc_eq and tau_eq: pairs the target orders (0 for the other variants)


def _pair_forms(u: np.ndarray, v: np.ndarray, valid: np.ndarray, eps: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """sgn_eps(u_a - v_b) and [|u_a - v_b| <= eps] over valid pairs: (P, S, I) x2 -> (P, I, S, S) x2."""
    ut = np.transpose(u, (0, 2, 1))[..., :, None]
    vt = np.transpose(v, (0, 2, 1))[..., None, :]
    vv = np.transpose(valid, (0, 2, 1))
    ok = vv[..., :, None] & vv[..., None, :]
    with np.errstate(invalid="ignore"):
        d = ut - vt
        tie = ok & (np.abs(d) <= eps)
        return np.where(ok & ~tie, np.sign(d), 0.0), tie.astype(np.float64)


def input_kendall_swap(
    zx: ArrayLike, zy: ArrayLike, z: ArrayLike, *, min_pairs: int, variant: Variant = "b", eps: ArrayLike = 0.0
) -> SwapRun:
    """Per-input Kendall variant of X' and Y' with Z; returns ``run(m) -> two (P, I, B) arrays``.

    Parameters
    ----------
    zx, zy, z : (P, S, I) arrays
        The two metrics (missing in the same cells) and the target.
    min_pairs : int
        Inputs with fewer valid systems are undefined (NaN).
    variant : {"a", "b", "23", "acc23"}
    eps : float or (P, 2, 2) array
        Metric-tie threshold: ``eps[p, u, v]`` for a pair comparing a cell of metric
        u (0 = X, 1 = Y) with a cell of metric v. A scalar applies to all four.

    Undefined (NaN): fewer than ``max(min_pairs, 2)`` valid systems; for tau-b also
    every valid pair tied in the target or in the metric. acc_eq and tau_eq are
    defined whenever there is a pair (a metric constant on an input ties every pair).

    Examples
    --------
    >>> import numpy as np
    >>> zx = np.array([[[1.0], [2.0], [3.0]]]); zy = zx[:, ::-1]; z = zx  # P=1, S=3, I=1
    >>> run = input_kendall_swap(zx, zy, z, min_pairs=2)
    >>> rx, ry = run(np.zeros((1, 3, 1), dtype=bool))  # no swap: X' = X, Y' = Y
    >>> float(rx[0, 0, 0]), float(ry[0, 0, 0])
    (1.0, -1.0)
    """
    ax, ay, az, eps_p = _input_kendall_swap_iv(zx, zy, z, variant, eps)
    s = ax.shape[1]
    valid = ~np.isnan(ax) & ~np.isnan(az)
    n = valid.sum(axis=-2)  # (P, I)
    dtype = np.float32 if 16 * s * s < F32_EXACT else np.float64
    coef, quad_g, consts, counts = _prepare(ax, ay, az, valid, eps_p, variant, dtype)
    few = n < max(int(min_pairs), 2)

    def run(m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        mt = per_input_masks(np.asarray(m, dtype=bool), dtype)  # (I, B, S)
        lin = linear(mt, coef)  # (P, 4, I, B)
        quad = quadratic(mt, quad_g)  # (P, 2, I, B); X' and Y' share it
        both = quad[:, 0]  # acc_eq and tau_eq: numerator and tie forms together (in place)
        if variant in _ACC_VARIANTS:
            both += quad[:, 1]
        out = []
        with np.errstate(invalid="ignore", divide="ignore"):
            for k, (c_num, c_tie) in enumerate(consts):
                stat = _swap_stat(variant, lin[:, k], lin[:, 2 + k], quad, both, c_num, c_tie, counts)
                stat[few] = np.nan
                np.clip(stat, -1.0, 1.0, out=stat)
                out.append(stat)
        return out[0], out[1]

    return run


def _input_kendall_swap_iv(
    zx: ArrayLike, zy: ArrayLike, z: ArrayLike, variant: Variant, eps: ArrayLike
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The three (P, S, I) float64 arrays and ``eps`` as a (P, 2, 2) array, once checked."""
    if variant not in SWAP_KENDALL_VARIANTS:
        raise ValueError(f"variant must be one of {SWAP_KENDALL_VARIANTS}, got {variant!r}")
    ax, ay, az = (np.asarray(a, dtype=np.float64) for a in (zx, zy, z))
    eps_p = np.broadcast_to(np.asarray(eps, dtype=np.float64), (ax.shape[0], 2, 2))
    if np.any(eps_p < 0) or not np.all(np.isfinite(eps_p)):
        raise ValueError("eps must be finite and >= 0")
    return ax, ay, az, eps_p


def _prepare(
    zx: np.ndarray, zy: np.ndarray, z: np.ndarray, valid: np.ndarray, eps: np.ndarray, variant: Variant,
    dtype: type[np.floating],
) -> tuple[np.ndarray, QuadraticOperand, tuple[tuple[np.ndarray, np.ndarray], ...], _Counts]:
    """The linear coefficients (P, 4, S, I), the quadratic operand, the constants and the counts.

    The (S, S) pair matrices of every input are built for blocks of at most about
    ``_PREP_CELLS`` cells (pairs x inputs x S x S) at a time, so their temporaries stay
    bounded whatever the number of pairs and inputs; only the laid-out results are
    kept. Every value is a sum over one input's system pairs: blocks change none.
    """
    p, s, i = zx.shape
    pb = max(1, min(p, _PREP_CELLS // (s * s)))
    ib = max(1, min(i, _PREP_CELLS // (pb * s * s)))
    coef = np.empty((p, 4, s, i))
    quad_g = empty_operand(p, 2, i, s, dtype)
    const = np.empty((4, p, i))  # numerator of X, of Y, ties of X, of Y
    counts = _Counts(np.empty((p, i)), np.empty((p, i)), np.empty((p, i)))
    for p0 in range(0, p, pb):
        for i0 in range(0, i, ib):
            ps, cells = slice(p0, p0 + pb), (slice(p0, p0 + pb), slice(None), slice(i0, i0 + ib))
            num, tie, cnt = _swap_parts(zx[cells], zy[cells], z[cells], valid[cells], eps[ps], variant)
            coef[ps, :, :, i0:i0 + ib] = np.transpose(np.stack([num[2], num[3], tie[2], tie[3]], axis=1),
                                                      (0, 1, 3, 2))
            fill_operand(quad_g, np.stack([num[4], tie[4]], axis=1), p0, i0)
            const[:, ps, i0:i0 + ib] = (num[0], num[1], tie[0], tie[1])
            for whole, part in zip(counts, cnt):
                whole[ps, i0:i0 + ib] = part
    return coef, quad_g, ((const[0], const[2]), (const[1], const[3])), counts


def _swap_parts(
    zx: np.ndarray, zy: np.ndarray, z: np.ndarray, valid: np.ndarray, eps: np.ndarray, variant: Variant
) -> tuple[_Parts, _Parts, _Counts]:
    """The parts of the numerator and of the metric-tie sum, and the counts no mask changes."""
    s = zx.shape[1]
    upper = np.triu(np.ones((s, s), dtype=bool), 1)
    vt = np.transpose(valid, (0, 2, 1))
    w = (vt[..., :, None] & vt[..., None, :] & upper).astype(np.float64)  # valid pairs a < b: (P, I, S, S)
    sg, tg = _pair_forms(z, z, valid, 0.0)
    n0 = w.sum(axis=(-2, -1))
    tz = (w * tg).sum(axis=(-2, -1))
    forms: _PairForms = {}
    src = (zx, zy)
    for a in (0, 1):
        for b in (0, 1):
            forms[a, b] = _pair_forms(src[a], src[b], valid, eps[:, a, b][:, None, None, None])
    w_num = w * sg
    if variant in _ACC_VARIANTS:
        w_tie = w * (3.0 * tg - 1.0)  # agreement weight of a metric tie: +2 gold tie, -1 otherwise
        base = (w * (1.0 - tg)).sum(axis=(-2, -1))  # pairs the gold orders
    else:
        w_tie = w
        base = np.zeros_like(n0)
    return _parts(w_num, 0, forms), _parts(w_tie, 1, forms), _Counts(n0, tz, base)


def _parts(weight: np.ndarray, k: int, forms: _PairForms) -> _Parts:
    """Constant, linear and quadratic parts of ``sum weight * t`` with ``t`` the k-th pair form under the mask."""
    t00, t01, t10, t11 = (forms[key][k] for key in ((0, 0), (0, 1), (1, 0), (1, 1)))
    const_x, const_y = (weight * t00).sum(axis=(-2, -1)), (weight * t11).sum(axis=(-2, -1))
    lin_x = (weight * (t10 - t00)).sum(axis=-1) + (weight * (t01 - t00)).sum(axis=-2)  # (P, I, S)
    lin_y = (weight * (t01 - t11)).sum(axis=-1) + (weight * (t10 - t11)).sum(axis=-2)
    quad = weight * (t00 - t01 - t10 + t11)
    return const_x, const_y, lin_x, lin_y, quad


def _swap_stat(
    variant: Variant,
    lin_num: np.ndarray,
    lin_tie: np.ndarray,
    quad: np.ndarray,
    both: np.ndarray,
    c_num: np.ndarray,
    c_tie: np.ndarray,
    counts: _Counts,
) -> np.ndarray:
    """The variant of X' (or Y') for every draw, (P, I, B), from its parts; not yet clipped."""
    n0, tz, base = counts
    if variant in _ACC_VARIANTS:  # (numerator + gold-ordered pairs + tie form) / 2N
        stat = lin_num + lin_tie
        stat += both
        stat += (c_num + base + c_tie)[..., None]
        stat /= (2.0 * n0)[..., None]
        if variant == "23":
            stat *= 2.0
            stat -= 1.0
    elif variant == "a":
        stat = lin_num + quad[:, 0]
        stat += c_num[..., None]
        stat /= n0[..., None]
    else:
        stat = lin_num + quad[:, 0]
        stat += c_num[..., None]
        untied = lin_tie + quad[:, 1]
        untied += c_tie[..., None]
        np.subtract(n0[..., None], untied, out=untied)  # pairs not tied in the metric
        stat[untied <= 0] = np.nan
        untied *= (n0 - tz)[..., None]
        np.sqrt(untied, out=untied)
        stat /= untied
        stat[(n0 - tz) <= 0] = np.nan
    return stat
