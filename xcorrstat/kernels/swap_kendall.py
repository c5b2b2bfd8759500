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

import numpy as np

from .swap import _F32_EXACT, SWAP_KENDALL_VARIANTS, _linear, _per_input_masks, _quadratic, _quadratic_operand

__all__ = ["SWAP_KENDALL_VARIANTS", "input_kendall_swap"]


def _pair_forms(u, v, valid, eps):
    """sgn_eps(u_a - v_b) and [|u_a - v_b| <= eps] over valid pairs: (P, S, I) x2 -> (P, I, S, S) x2."""
    ut = np.transpose(u, (0, 2, 1))[..., :, None]
    vt = np.transpose(v, (0, 2, 1))[..., None, :]
    vv = np.transpose(valid, (0, 2, 1))
    ok = vv[..., :, None] & vv[..., None, :]
    with np.errstate(invalid="ignore"):
        d = ut - vt
        tie = ok & (np.abs(d) <= eps)
        return np.where(ok & ~tie, np.sign(d), 0.0), tie.astype(np.float64)


def input_kendall_swap(zx, zy, z, *, min_pairs: int, variant: str = "b", eps=0.0):
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
    """
    if variant not in SWAP_KENDALL_VARIANTS:
        raise ValueError(f"variant must be one of {SWAP_KENDALL_VARIANTS}, got {variant!r}")
    zx, zy, z = (np.asarray(a, dtype=np.float64) for a in (zx, zy, z))
    p, s, i = zx.shape
    eps = np.broadcast_to(np.asarray(eps, dtype=np.float64), (p, 2, 2))
    if np.any(eps < 0) or not np.all(np.isfinite(eps)):
        raise ValueError("eps must be finite and >= 0")
    valid = ~np.isnan(zx) & ~np.isnan(z)
    n = valid.sum(axis=-2)  # (P, I)
    upper = np.triu(np.ones((s, s), dtype=bool), 1)
    vt = np.transpose(valid, (0, 2, 1))
    w = (vt[..., :, None] & vt[..., None, :] & upper).astype(np.float64)  # valid pairs a < b: (P, I, S, S)
    sg, tg = _pair_forms(z, z, valid, 0.0)
    n0 = w.sum(axis=(-2, -1))
    tz = (w * tg).sum(axis=(-2, -1))
    forms = {}
    src = (zx, zy)
    for a in (0, 1):
        for b in (0, 1):
            forms[a, b] = _pair_forms(src[a], src[b], valid, eps[:, a, b][:, None, None, None])
    w_num = w * sg
    if variant in ("acc23", "23"):
        w_tie = w * (3.0 * tg - 1.0)  # agreement weight of a metric tie: +2 gold tie, -1 otherwise
        base = (w * (1.0 - tg)).sum(axis=(-2, -1))  # pairs the gold orders
    else:
        w_tie = w
        base = np.zeros_like(n0)

    def parts(weight, k, forms):
        t00, t01, t10, t11 = (forms[key][k] for key in ((0, 0), (0, 1), (1, 0), (1, 1)))
        const_x, const_y = (weight * t00).sum(axis=(-2, -1)), (weight * t11).sum(axis=(-2, -1))
        lin_x = (weight * (t10 - t00)).sum(axis=-1) + (weight * (t01 - t00)).sum(axis=-2)  # (P, I, S)
        lin_y = (weight * (t01 - t11)).sum(axis=-1) + (weight * (t10 - t11)).sum(axis=-2)
        quad = weight * (t00 - t01 - t10 + t11)
        return const_x, const_y, lin_x, lin_y, quad

    num = parts(w_num, 0, forms)
    tie = parts(w_tie, 1, forms)
    del forms, sg, tg, w, w_num, w_tie
    dtype = np.float32 if 16 * s * s < _F32_EXACT else np.float64
    coef = np.transpose(np.stack([num[2], num[3], tie[2], tie[3]], axis=1), (0, 1, 3, 2))  # (P, 4, S, I)
    quad_g = _quadratic_operand(np.stack([num[4], tie[4]], axis=1), dtype)
    few = n < max(int(min_pairs), 2)
    consts = ((num[0], tie[0]), (num[1], tie[1]))

    def run(m):
        mt = _per_input_masks(np.asarray(m, dtype=bool), dtype)  # (I, B, S)
        lin = _linear(mt, coef)  # (P, 4, I, B)
        quad = _quadratic(mt, quad_g)  # (P, 2, I, B); X' and Y' share it
        if variant in ("acc23", "23"):
            both = quad[:, 0]
            both += quad[:, 1]
        out = []
        with np.errstate(invalid="ignore", divide="ignore"):
            for k, (c_num, c_tie) in enumerate(consts):
                if variant in ("acc23", "23"):  # (numerator + gold-ordered pairs + tie form) / 2N
                    stat = lin[:, k] + lin[:, 2 + k]
                    stat += both
                    stat += (c_num + base + c_tie)[..., None]
                    stat /= (2.0 * n0)[..., None]
                    if variant == "23":
                        stat *= 2.0
                        stat -= 1.0
                elif variant == "a":
                    stat = lin[:, k] + quad[:, 0]
                    stat += c_num[..., None]
                    stat /= n0[..., None]
                else:
                    stat = lin[:, k] + quad[:, 0]
                    stat += c_num[..., None]
                    untied = lin[:, 2 + k] + quad[:, 1]
                    untied += c_tie[..., None]
                    np.subtract(n0[..., None], untied, out=untied)  # pairs not tied in the metric
                    stat[untied <= 0] = np.nan
                    untied *= (n0 - tz)[..., None]
                    np.sqrt(untied, out=untied)
                    stat /= untied
                    stat[(n0 - tz) <= 0] = np.nan
                stat[few] = np.nan
                np.clip(stat, -1.0, 1.0, out=stat)
                out.append(stat)
        return out[0], out[1]

    return run
