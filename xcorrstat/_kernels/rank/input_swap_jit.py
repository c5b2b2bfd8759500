"""Compiled loops of the input-level Kendall swap kernel (numba): :mod:`.input_swap` and its gap mode
:mod:`.input_gaps`.

Only those two modules import this module, on their first call. Both loops release the GIL (Dask
threads run them in parallel).

* :func:`prepare` makes, input after input, every pair of metrics' operands: the constant, linear
  (per system, through the pair incidence) and quadratic (per system pair) parts of each variant's
  integer forms, summed over the input's pairs of systems (a < b) straight into the laid-out
  arrays, with no temporary larger than one input's row of pairs. Every part is a sum of small
  integers (int64), so it is exact in the operands' dtype.
* :func:`gap_add` takes a block's numerators and per-draw counts, forms each input's value with
  the operations of :func:`.input_gaps.gap_stats` (on the same exact integers: the same floats)
  and adds the defined ones to the running totals, input after input: one pass over the block,
  without temporaries. Where no count has a tie, the loop over pairs is free of branches (the
  compiler runs it on vector registers; IEEE operations, no reassociation).
"""

from __future__ import annotations

import importlib
import math

import numpy as np

numba = importlib.import_module("numba")

__all__ = ["gap_add", "prepare"]

_jit = numba.njit(nogil=True, cache=True, boundscheck=False, error_model="numpy")
_A, _B, _EQ, _ACC = 0, 1, 2, 3  # the variant codes of input_swap and input_gaps
_SP = 4  # Spearman's numerator: the target's difference (doubled mid-ranks) in place of its sign


@_jit
def _sgn(d, e):
    """sgn_eps(d): 0 within ``e`` and for NaN."""
    return (1 if d > e else 0) - (1 if d < -e else 0)


@_jit
def prepare(zx, zy, z, eps, variant, adjust, value, value_diff, ties, ties_diff, counts, tied):
    """The forms of every pair of metrics and input into the operands.

    zx, zy (P, S, I) float64, z (P, S, I) (stride 0 along P for a target shared by the pairs),
    eps (P, 2, 2); ``variant`` a code of :mod:`.input_gaps`; ``adjust``: add acc_eq's pairs not
    tied in the target to the constant of X' (X and Y missing in the same cells). Writes value
    (I, S + 1 + K, P) and value_diff (I, S + 1, P) whole (``_SP``: the forms of Spearman's numerator,
    ``sum (z_a - z_b) sgn(X'_a - X'_b)`` over the pairs, z integer doubled mid-ranks, no metric ties);
    ties and ties_diff (zeros on entry, or (0, 0, 0) but for tau-b) only where a metric tie makes them
    nonzero; counts (2, I, P) the valid pairs and the valid pairs tied in the target; tied (P,) bool, set
    for the pairs with a metric tie.
    """
    p, s, n_inp = zx.shape
    shared = p > 1 and z.strides[0] == 0
    pz = 1 if shared else p
    acc = variant == _EQ or variant == _ACC
    is_b = variant == _B and ties.shape[0] > 0
    xi, yi, zi = np.empty((s, p)), np.empty((s, p)), np.empty((s, pz))
    lin = np.zeros((4, s, p), dtype=np.int64)  # X' and Y' - X' of the numerator, then of the metric ties
    const = np.zeros((4, p), dtype=np.int64)  # X' and Y' of the numerator, then of the metric ties
    cnt = np.zeros((2, p), dtype=np.int64)  # valid pairs, valid pairs tied in the target
    anytie = np.zeros(p, dtype=np.bool_)
    no_ties = np.zeros((0, p), dtype=ties.dtype)
    for i in range(n_inp):
        for a in range(s):
            for q in range(p):
                xi[a, q] = zx[q, a, i]
                yi[a, q] = zy[q, a, i]
            for q in range(pz):
                zi[a, q] = z[q, a, i]
        lin[:] = 0
        const[:] = 0
        cnt[:] = 0
        anytie[:] = False
        _pairs(xi, yi, zi, eps, shared, variant, value[i], ties[i] if is_b else no_ties, lin, const, cnt, anytie)
        _store(i, acc and adjust, is_b, value, value_diff, ties, ties_diff, counts, tied, lin, const, cnt, anytie)


@_jit
def _pairs(xi, yi, zi, eps, shared, variant, value, ties, lin, const, cnt, anytie):
    """One input's pairs of systems (a < b): the quadratic parts into ``value`` (rows, P) and, for tau-b
    with ``ties`` (rows, P), ``ties``; the sums of the constant and linear parts, the counts and which
    pairs of metrics have a metric tie into the accumulators."""
    s, p = xi.shape
    acc = variant == _EQ or variant == _ACC
    is_b = ties.shape[0] > 0
    look = variant != _A and variant != _SP
    weighed = variant == _SP
    row = s + 1
    for a in range(s - 1):
        for b in range(a + 1, s):
            for q in range(p):
                qz = 0 if shared else q
                za, zb = zi[a, qz], zi[b, qz]
                dz = za - zb
                zok = not (math.isnan(za) or math.isnan(zb))
                g = int(dz) if weighed and zok else _sgn(dz, 0.0)
                xa, xb, ya, yb = xi[a, q], xi[b, q], yi[a, q], yi[b, q]
                vxa = zok and not math.isnan(xa)  # both ends' targets valid: the pair's validity
                vxb = not math.isnan(xb)
                vya = zok and not math.isnan(ya)
                vyb = not math.isnan(yb)
                w = vxa and vxb
                cnt[0, q] += 1 if w else 0
                cnt[1, q] += 1 if w and dz == 0.0 else 0
                d00, d01, d10, d11 = xa - xb, xa - yb, ya - xb, ya - yb
                e00, e01, e10, e11 = eps[q, 0, 0], eps[q, 0, 1], eps[q, 1, 0], eps[q, 1, 1]
                f00 = g * _sgn(d00, e00)
                f01 = g * _sgn(d01, e01)
                f10 = g * _sgn(d10, e10)
                f11 = g * _sgn(d11, e11)
                if look:  # a tie within eps between valid cells
                    t00 = 1 if (vxa and vxb and not (d00 > e00 or d00 < -e00)) else 0
                    t01 = 1 if (vxa and vyb and not (d01 > e01 or d01 < -e01)) else 0
                    t10 = 1 if (vya and vxb and not (d10 > e10 or d10 < -e10)) else 0
                    t11 = 1 if (vya and vyb and not (d11 > e11 or d11 < -e11)) else 0
                    if t00 + t01 + t10 + t11 > 0:
                        anytie[q] = True
                        if acc:  # acc_eq weighs a tie +2 on a gold tie and -1 otherwise
                            wt = 2 if dz == 0.0 else -1
                            f00, f01, f10, f11 = f00 + wt * t00, f01 + wt * t01, f10 + wt * t10, f11 + wt * t11
                        elif is_b:
                            ties[row, q] = t00 - t01 - t10 + t11
                            _add(lin, const, 2, a, b, q, t00, t01, t10, t11)
                value[row, q] = f00 - f01 - f10 + f11
                _add(lin, const, 0, a, b, q, f00, f01, f10, f11)
            row += 1


@_jit
def _add(lin, const, r, a, b, q, f00, f01, f10, f11):
    """A pair's constant and linear parts of X' and of Y' - X' (rows r and r + 1 of the accumulators)."""
    const[r, q] += f00
    const[r + 1, q] += f11
    lin[r, a, q] += f10 - f00  # X' at the first system of the pair
    lin[r, b, q] += f01 - f00  # ... at the second
    own, cross = f00 - f11, f01 - f10
    lin[r + 1, a, q] += own + cross
    lin[r + 1, b, q] += own - cross


@_jit
def _store(i, adjust, is_b, value, value_diff, ties, ties_diff, counts, tied, lin, const, cnt, anytie):
    """One input's constant and linear parts and counts into the operands (tau-b's ties where nonzero)."""
    s, p = lin.shape[1:]
    for q in range(p):
        cx = const[0, q]
        if adjust:  # acc_eq's agreement count: + pairs not tied in the target
            cx += cnt[0, q] - cnt[1, q]
        value[i, s, q] = cx
        value_diff[i, s, q] = const[1, q] - const[0, q]
        counts[0, i, q] = cnt[0, q]
        counts[1, i, q] = cnt[1, q]
        if anytie[q]:
            tied[q] = True
    for a in range(s):
        for q in range(p):
            value[i, a, q] = lin[0, a, q]
            value_diff[i, a, q] = lin[1, a, q]
    if is_b:
        for q in range(p):
            if anytie[q]:
                ties[i, s, q] = const[2, q]
                ties_diff[i, s, q] = const[3, q] - const[2, q]
                for a in range(s):
                    ties[i, a, q] = lin[2, a, q]
                    ties_diff[i, a, q] = lin[3, a, q]


@_jit
def _plain(v, valid, total, k, variant, need, totals, counts):
    """X' (k = 0) or Y' (k = 1) without tied counts: tau-a and tau-b ``v / N``, acc_eq, tau_eq."""
    n_inp, n_draws, p = v.shape
    kf, sign = float(k), 1.0 - 2.0 * k  # the valid systems: those of X', or the total minus those
    ratio, eq = variant == _A or variant == _B, variant == _EQ
    for i in range(n_inp):
        for b in range(n_draws):
            for q in range(p):
                s = kf * total[i, 0, q] + sign * valid[i, b, q]
                n0 = (s - 1.0) * s / 2.0
                if ratio:
                    stat = v[i, b, q] / n0
                else:
                    stat = (v[i, b, q] + n0) / (n0 * 2.0)
                    if eq:
                        stat = stat * 2.0 - 1.0
                ok = s >= need
                totals[k, b, q] = totals[k, b, q] + stat if ok else totals[k, b, q]
                counts[k, b, q] += ok


@_jit
def _tied(v, valid, total, gold, ties, col, k, variant, need, totals, counts):
    """X' (k = 0) or Y' (k = 1) with target ties (``gold``, or empty) or metric ties (``ties`` of the pairs
    whose ``col`` is not -1)."""
    n_inp, n_draws, p = v.shape
    kf, sign = float(k), 1.0 - 2.0 * k
    for i in range(n_inp):
        for b in range(n_draws):
            for q in range(p):
                s = kf * total[i, 0, q] + sign * valid[i, b, q]
                n0 = (s - 1.0) * s / 2.0
                g = n0 - gold[i, b, k * p + q] if gold.shape[2] else n0
                ok = s >= need
                if variant == _A:
                    stat = v[i, b, q] / n0
                elif variant == _B:
                    untied = n0 - ties[i, b, col[q]] if col[q] >= 0 else n0
                    ok = ok and untied > 0 and g > 0
                    stat = v[i, b, q] / math.sqrt(untied * g)
                else:
                    stat = (v[i, b, q] + g) / (n0 * 2.0)
                    if variant == _EQ:
                        stat = stat * 2.0 - 1.0
                if ok:
                    totals[k, b, q] += stat
                counts[k, b, q] += ok


@_jit
def gap_add(vx, vy, valid, total, gold, tx, ty, col, variant, need, totals, counts):
    """Add the defined values of X' and Y' on a block to ``totals`` (2, B, P) and count them in ``counts``.

    vx, vy and valid (inputs, B, P): the numerators and the valid systems of X'; total (inputs, 1, P)
    the valid systems of X' and Y' together; gold (inputs, B, 2 P) float64 the target-tied valid
    pairs of X' then Y', or (inputs, B, 0) without any; tx, ty (inputs, B, Pt) the metric ties of
    the pairs whose ``col`` (P,) is not -1, or (inputs, B, 0); ``variant`` a code of
    :mod:`.input_gaps`. Inputs are added in order.
    """
    if gold.shape[2] > 0 or tx.shape[2] > 0:
        _tied(vx, valid, total, gold, tx, col, 0, variant, need, totals, counts)
        _tied(vy, valid, total, gold, ty, col, 1, variant, need, totals, counts)
    else:
        _plain(vx, valid, total, 0, variant, need, totals, counts)
        _plain(vy, valid, total, 1, variant, need, totals, counts)
