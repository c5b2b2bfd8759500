"""Compiled loop of :mod:`xcorrstat._kernels.swap_kendall_gaps` (numba).

Only :mod:`xcorrstat._kernels.swap_kendall_gaps` imports this module, on its first call.
:func:`gap_add` takes a block's numerators and per-draw counts, forms each input's value with
the operations of :func:`xcorrstat._kernels.swap_kendall_gaps.gap_stats` (on the same exact
integers: the same floats) and adds the defined ones to the running totals, input after input:
one pass over the block, without temporaries. Where no count has a tie, the loop over pairs is
free of branches (the compiler runs it on vector registers; IEEE operations, no reassociation).
The function releases the GIL (Dask threads run it in parallel).
"""

from __future__ import annotations

import importlib
import math

numba = importlib.import_module("numba")

__all__ = ["gap_add"]

_jit = numba.njit(nogil=True, cache=True, boundscheck=False, error_model="numpy")
_A, _B, _EQ, _ACC = 0, 1, 2, 3  # the variant codes of swap_kendall_gaps


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
    ``swap_kendall_gaps``. Inputs are added in order.
    """
    if gold.shape[2] > 0 or tx.shape[2] > 0:
        _tied(vx, valid, total, gold, tx, col, 0, variant, need, totals, counts)
        _tied(vy, valid, total, gold, ty, col, 1, variant, need, totals, counts)
    else:
        _plain(vx, valid, total, 0, variant, need, totals, counts)
        _plain(vy, valid, total, 1, variant, need, totals, counts)
