"""Compiled loop of :mod:`xcorrstat._kernels.rank.weighted_rows` (numba).

Only :mod:`xcorrstat._kernels.rank.weighted_rows` imports this module, on its first call.
:func:`rows` takes a row at a time. For each valid unit ``a`` it forms, over the later valid
units ``c`` and with the draws innermost, the sums ``t[b] = sum_c part(a, c) w[c, b]`` of the
pair parts that are not zero (the sign product where x is not tied within epsilon, the exact
ties in x and in z, the ties within epsilon, the joint ties), then adds ``w[a, b] t[b]`` to
the row's counts. Every count is an integer held exactly in float64, so no order of the sums
changes a bit. Per draw it then applies the formulas of
:func:`xcorrstat._kernels.rank.tau.tau_from_counts` and the plain kernel's undefined rule, in the
operation order of :func:`xcorrstat._kernels.weighted.wcorr` (NaN where undefined, tau
clipped to [-1, 1]). It releases the GIL.
"""

from __future__ import annotations

import importlib

import numpy as np

numba = importlib.import_module("numba")

__all__ = ["VARIANT_CODES", "rows"]

_jit = numba.njit(nogil=True, cache=True, boundscheck=False, error_model="numpy")

#: The loop's code of each Kendall variant.
VARIANT_CODES = {"a": 0, "b": 1, "c": 2, "23": 3, "acc23": 4}
_A, _B, _C, _EQ, _ACC = 0, 1, 2, 3, 4

# the pair parts: rows of the (5, B) count and scratch tables, bits of a unit's parts in use
_SIGN, _TIE_X, _TIE_Z, _TIE_EPS, _TIE_XZ = 0, 1, 2, 3, 4


@_jit
def _unit_sums(valid, wt, row, n, self_ties, squares):
    """Per draw: expanded valid units, self ties ``sum w (w - 1) / 2`` and ``sum w^2``."""
    n[:] = 0.0
    self_ties[:] = 0.0
    squares[:] = 0.0
    for s in range(wt.shape[0]):
        if not valid[row, s]:
            continue
        for b in range(wt.shape[1]):
            w = wt[s, b]
            n[b] += w
            self_ties[b] += w * (w - 1.0) / 2.0
            squares[b] += w * w


@_jit
def _add(t, part, wt, c, used):
    """``t[part] (+)= w[c]`` over the draws (the first term of a unit sets the sum); ``used`` with the part's bit."""
    sums = t[part]
    if used & (1 << part):
        for b in range(wt.shape[1]):
            sums[b] += wt[c, b]
    else:
        for b in range(wt.shape[1]):
            sums[b] = wt[c, b]
    return used | (1 << part)


@_jit
def _ties(wt, c, dx, dz, tie, epsilon, joint, t, used):
    """The tie parts of the pair (a, c): exact in x, exact in z, within epsilon in x, in both."""
    if dx == 0:
        used = _add(t, _TIE_X, wt, c, used)
    if dz == 0:
        used = _add(t, _TIE_Z, wt, c, used)
    if tie and epsilon > 0:
        used = _add(t, _TIE_EPS, wt, c, used)
    if tie and dz == 0 and joint:
        used = _add(t, _TIE_XZ, wt, c, used)
    return used


@_jit
def _pair_sums(x, z, valid, wt, row, epsilon, joint, counts, t):
    """counts (5, B): the weighted sums over the row's valid pairs (a, c) of each pair part.

    Per unit a, ``t[part, b] = sum_c part(a, c) w[c, b]`` over the parts that are not zero
    (bits of ``used``), then ``counts[part, b] += w[a, b] t[part, b]``.
    """
    counts[:] = 0.0
    signs = t[_SIGN]
    for a in range(wt.shape[0]):
        if not valid[row, a]:
            continue
        xa, za = x[row, a], z[row, a]
        used = 0
        for c in range(a + 1, wt.shape[0]):
            if not valid[row, c]:
                continue
            dx = xa - x[row, c]
            dz = za - z[row, c]
            tie = abs(dx) <= epsilon
            sign = 0.0 if tie else float((dx > 0) - (dx < 0)) * float((dz > 0) - (dz < 0))
            if sign != 0.0:  # the common case, inline
                if used & 1:
                    for b in range(wt.shape[1]):
                        signs[b] += sign * wt[c, b]
                else:
                    for b in range(wt.shape[1]):
                        signs[b] = sign * wt[c, b]
                    used |= 1
            if tie or dx == 0 or dz == 0:
                used = _ties(wt, c, dx, dz, tie, epsilon, joint, t, used)
        for part in range(5):
            if used & (1 << part):
                total, sums = counts[part], t[part]
                for b in range(wt.shape[1]):
                    total[b] += wt[a, b] * sums[b]


@_jit
def _distinct(v, valid, wt, row, m, first):
    """m (B): the distinct values of ``v[row]`` among the drawn valid units of each draw."""
    m[:] = 0.0
    for s in range(wt.shape[0]):
        if not valid[row, s]:
            continue
        for b in range(wt.shape[1]):
            first[b] = 1.0 if wt[s, b] > 0 else 0.0
        for e in range(s):  # a value counts at its first drawn unit
            if valid[row, e] and v[row, e] == v[row, s]:
                for b in range(wt.shape[1]):
                    first[b] = 0.0 if wt[e, b] > 0 else first[b]
        for b in range(wt.shape[1]):
            m[b] += first[b]


@_jit
def _tau(variant, cmd, n0, tx, tz, n, m, txz):
    """:func:`xcorrstat._kernels.rank.tau.tau_from_counts` on one draw's counts."""
    if variant == _A:
        return cmd / n0
    if variant == _EQ:
        return (cmd + 3.0 * txz - tx - tz) / n0
    if variant == _ACC:
        return ((n0 - tx - tz + txz + cmd) / 2.0 + txz) / n0
    if variant == _B:
        return cmd / np.sqrt(n0 - tx) / np.sqrt(n0 - tz)
    return 2.0 * cmd / (n * n * (m - 1.0) / m)


@_jit
def _finish(variant, need, need_eq, has_epsilon, row, n, self_ties, squares, counts, mx, mz, out):
    """out[:, row]: tau (NaN where undefined, else clipped) and n of every draw."""
    distinct = (variant == _A) | (variant == _EQ) | (variant == _ACC)
    for b in range(n.shape[0]):
        nb = n[b]
        own = 0.0 if distinct else self_ties[b]
        tx0 = counts[_TIE_X, b] + own
        tz = counts[_TIE_Z, b] + own
        n0 = (nb * nb - squares[b]) / 2.0 if distinct else nb * (nb - 1.0) / 2.0
        tx = counts[_TIE_EPS, b] + own if has_epsilon else tx0
        txz = counts[_TIE_XZ, b] + own
        if (variant == _EQ) | (variant == _ACC):
            undefined = (nb < need_eq) | (n0 <= 0)
        else:
            undefined = (nb < need) | (tx0 >= n0) | (tz >= n0) | ((variant == _B) & (tx >= n0))
        r = _tau(variant, counts[_SIGN, b], n0, tx, tz, nb, min(mx[b], mz[b]), txz)
        r = 1.0 if r > 1.0 else (-1.0 if r < -1.0 else r)
        out[0, row, b] = np.nan if undefined else r
        out[1, row, b] = nb


@_jit
def rows(x, z, valid, wt, variant, need, need_eq, epsilon, out):
    """out (2, R, B): tau and n of every row (x, z, valid (R, S)) under every draw (wt (S, B)).

    ``need`` is ``min_pairs``, ``need_eq`` the bound of tau_eq and acc_eq (at least 2).
    """
    n_draws = wt.shape[1]
    n, self_ties, squares = np.empty(n_draws), np.empty(n_draws), np.empty(n_draws)
    counts, t = np.empty((5, n_draws)), np.empty((5, n_draws))
    mx, mz, first = np.zeros(n_draws), np.zeros(n_draws), np.empty(n_draws)
    joint = (variant == _EQ) | (variant == _ACC)
    for row in range(x.shape[0]):
        _unit_sums(valid, wt, row, n, self_ties, squares)
        _pair_sums(x, z, valid, wt, row, epsilon, joint, counts, t)
        if variant == _C:
            _distinct(x, valid, wt, row, mx, first)
            _distinct(z, valid, wt, row, mz, first)
        _finish(variant, need, need_eq, epsilon != 0.0, row, n, self_ties, squares, counts, mx, mz, out)
