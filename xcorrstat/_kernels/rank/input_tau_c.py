"""Input-level tau-c of swapped metrics that tie between systems: tau-a's pair forms for the inputs whose
divisor no draw changes, one sorted table for each of the others.

Within one input of n valid systems ``tau_c = 2 (C - D) / (n^2 (m - 1) / m)``, with m the smaller number
of distinct values of X' and of the target. When X and Y are valid in the same cells, n is the same in
every draw, and so is m wherever X' has at least as many distinct values as the target in every draw.
X' takes ``x_s`` or ``y_s`` in each cell s, in any combination, so the fewest distinct values it can take
is the smallest set of values holding one of each cell's two: at least the size of any set of cells
whose two values are disjoint from every other's (the cells pairwise share no value, so each needs its
own). :func:`fewest_distinct` finds such a set in one pass in system order. Where it reaches the target's
distinct values, m is the target's, and tau-a's numerator (the mask products of
:mod:`~xcorrstat._kernels.rank.input_swap`, exact integers) over that fixed divisor gives every draw of
every pair of metrics. The other inputs (few: X' must be able to tie down to the target's few levels)
take the sorted tables of :func:`~xcorrstat._kernels.rank.global_swap.swap_table_taus`.

Either way an input's value is the float the tables give it (the same exact integers, the same
operations), and the values are averaged as the tables' route averages them, so a row's draws are bit
for bit those of one sorted table per input, whatever its inputs' routes. :func:`split_rows` says which
rows (pairs of metrics) may take this route, from their scores alone: at most
:data:`~xcorrstat._kernels.rank.untied_forms.FORM_SYSTEMS` systems, X and Y valid in the same cells,
finite scores.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike

from .._compiled import jit, loops
from ..levels import average_defined
from .global_swap import swap_table_taus
from .input_swap import empty_operands, finish_forms, values_run
from .tau import count_distinct
from .untied_forms import form_rows

__all__ = ["fewest_distinct", "input_tau_c_split", "split_rows"]

_A = 0  # the code of rank.input_swap_jit: tau-a's numerator


def split_rows(zx: ArrayLike, zy: ArrayLike, z: ArrayLike) -> np.ndarray:
    """(R,) bool: the rows of (R, S, I) scores whose draws :func:`input_tau_c_split` gives.

    Examples
    --------
    >>> x = np.arange(12.0).reshape(1, 4, 3); y = x.copy(); y[0, 0, 0] = np.nan
    >>> split_rows(np.concatenate([x, x]), np.concatenate([-x, y]), x).tolist()  # Y misses a cell X has
    [True, False]
    """
    return form_rows(zx, zy, z)[0]


@jit
def _fewest_distinct(x: np.ndarray, y: np.ndarray, valid: np.ndarray, out: np.ndarray) -> None:
    """``out[p, i]``: the cells of a set found in system order whose values share none with another's."""
    rows, s, n_inputs = x.shape
    held = np.empty(2 * s)
    for p in range(rows):
        for i in range(n_inputs):
            k = 0
            cells = 0
            for a in range(s):
                if not valid[p, a, i]:
                    continue
                u, v = x[p, a, i], y[p, a, i]
                free = True
                for j in range(k):
                    if held[j] == u or held[j] == v:
                        free = False
                        break
                if free:
                    held[k] = u
                    k += 1
                    if v != u:
                        held[k] = v
                        k += 1
                    cells += 1
            out[p, i] = cells


def fewest_distinct(zx: ArrayLike, zy: ArrayLike, valid: ArrayLike) -> np.ndarray:
    """(P, I) int64: a lower bound on the distinct values of X' (each valid cell X's or Y's value) over every
    swap mask, per row and input of (P, S, I) scores.

    Examples
    --------
    >>> x = np.array([[[1.0], [2.0], [3.0]]]); y = np.array([[[2.0], [1.0], [5.0]]])
    >>> fewest_distinct(x, y, np.ones(x.shape, bool)).tolist()  # X' = (2, 2, 3) has two
    [[2]]
    """
    ax, ay = (np.ascontiguousarray(a, dtype=np.float64) for a in (zx, zy))
    ok = np.ascontiguousarray(np.broadcast_to(valid, ax.shape))
    out = np.zeros((ax.shape[0], ax.shape[2]), dtype=np.int64)
    _fewest_distinct(ax, ay, ok, out)
    return out


def input_tau_c_split(zx: ArrayLike, zy: ArrayLike, z: ArrayLike, *,
                      min_pairs: int) -> Callable[[np.ndarray], np.ndarray]:
    """``deltas(m)``: the input-level tau-c of X' minus that of Y' (the mean over the inputs defined in each
    draw), (P, B), for (B, S, I) masks, of rows that :func:`split_rows` admits.

    Examples
    --------
    >>> x = np.array([[[1.0, 1.0], [2.0, 1.0], [3.0, 2.0]]]); y = -x; z = x  # P=1, S=3, I=2
    >>> deltas = input_tau_c_split(x, y, z, min_pairs=2)
    >>> round(float(deltas(np.zeros((1, 3, 2), dtype=bool))[0, 0]), 4)  # X: 1 and 8/9 on the inputs, Y: -1, -8/9
    1.8889
    """
    ax, ay = (np.ascontiguousarray(a, dtype=np.float64) for a in np.broadcast_arrays(zx, zy))
    az = np.broadcast_to(np.asarray(z, dtype=np.float64), ax.shape)
    p = ax.shape[0]
    valid = ~np.isnan(ax) & ~np.isnan(az)
    target = count_distinct(np.swapaxes(az, -1, -2), np.swapaxes(valid, -1, -2))  # (P, I)
    fixed = fewest_distinct(ax, ay, valid) >= target
    o = empty_operands(ax, ay, az, "a")
    none = np.zeros((0, 0, 0), dtype=o.value.dtype)
    loops("rank.input_swap_jit").prepare(ax, ay, az, np.zeros((p, 2, 2)), _A, True, o.value, o.value_diff, none,
                                           none, o.counts, o.tied)
    forms = finish_forms(o.value, o.value_diff, None, None, o.tied, o.counts, valid, "a", int(min_pairs))
    n = valid.sum(axis=-2).T.astype(np.float64)  # (I, P)
    m = target.T.astype(np.float64)  # the smaller of the distinct values: the target's, where fixed
    with np.errstate(invalid="ignore", divide="ignore"):
        scale = n * n * (m - 1.0) / m / 2.0  # 2 (C - D) / (n^2 (m - 1) / m), the division by 2 exact
    values = values_run(forms._replace(scale=scale, undefined=forms.undefined | (m <= 1) | ~fixed.T), "c",
                        draws_last=False)
    rows, inputs = np.nonzero(~fixed)
    tables = None
    if rows.size:
        tables = swap_table_taus(ax[rows, :, inputs], ay[rows, :, inputs], az[rows, :, inputs], inputs,
                                 variant="c", min_pairs=min_pairs)

    def deltas(masks: np.ndarray) -> np.ndarray:
        mk = np.asarray(masks, dtype=bool)
        b = mk.shape[0]
        rx, ry = values(mk)  # (P, B, I) each, in C order: summed as the tables' route sums them
        if tables is not None:
            r, _ = tables(np.transpose(mk, (2, 0, 1)))  # each input's masks (I, B, S)
            rx[rows, :, inputs], ry[rows, :, inputs] = r[:, :b], r[:, b:]
        mean_x, _ = average_defined(rx, axis=-1)
        mean_y, _ = average_defined(ry, axis=-1)
        return mean_x - mean_y

    return deltas
