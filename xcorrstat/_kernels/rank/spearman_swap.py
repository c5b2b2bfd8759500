"""Spearman's rho of swapped metrics at input, within-system and global level, for a batch of masks.

A permutation draw swaps the standardised metrics X and Y under a 0/1 mask: ``X' = where(m, Y, X)``,
``Y' = where(m, X, Y)``. Within one group (an input at input level, a system at within-system level,
all cells at global level) Spearman's rho of X' is Pearson's r of the mid-ranks of its valid items and
of the target's over the same items, so it depends on the draw through the ranks: no form linear in
the mask gives it. But every value of X' is a value of X or of Y, so the compiled loop
(:mod:`.spearman_swap_jit`) sorts each group's 2n scores of X and Y once, and a draw's mid-ranks of X'
and Y' are one walk along that order (each sorted value belongs to one of the two): O(n) a group and
draw, no sort per draw, and the group's rho added to the draw's average (``macro``, ``weighted`` by
valid items, or by ``pairs``). Time linear in rows x draws x cells (one sort per group beforehand),
memory the (rows, draws) result and O(n) per group. Within-system level is the input level of the
transposed matrices, global level one group of every cell (views: nothing is copied).

Every value equals the level statistic of the explicitly swapped matrices (tests: scipy's spearmanr
on the expanded swaps and the materialised route), to rounding: the coefficient's sums are exact
(half-integer mid-ranks), so a draw's value is the same whatever the blocks or the batch.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..._types import Average, Level
from .._compiled import loops
from ..swap import SwapDeltas

__all__ = ["prepare_spearman_swap"]

_AVERAGES = {"macro": 0, "weighted": 1, "pairs": 2}


def prepare_spearman_swap(zx: ArrayLike, zy: ArrayLike, z: ArrayLike, *, level: Level, min_pairs: int,
                          average: Average = "macro") -> SwapDeltas:
    """``deltas(masks) -> (R, B)`` of Spearman's rho of X' minus that of Y' at ``level`` for (R, S, I) rows.

    Examples
    --------
    >>> x = np.array([[[1.0, 3.0], [2.0, 2.0], [3.0, 1.0]]]); y = x[:, ::-1]
    >>> deltas = prepare_spearman_swap(x, y, x, level="input", min_pairs=3)
    >>> deltas(np.zeros((1, 3, 2), dtype=bool)).tolist()
    [[2.0]]
    """
    if level not in ("input", "within_system", "global"):
        raise ValueError(f"level must be input, within_system or global, got {level!r}")
    if average not in _AVERAGES:
        raise ValueError(f"average must be one of {tuple(_AVERAGES)}, got {average!r}")
    ax, ay, az = (np.ascontiguousarray(a, dtype=np.float64) for a in np.broadcast_arrays(zx, zy, z))
    if ax.ndim != 3:
        raise ValueError(f"x, y and z must be (R, S, I), got {ax.shape}")
    n_sys, n_inp = ax.shape[-2:]
    transpose = level == "within_system"  # the inputs are the items, the systems the groups
    if transpose:
        ax, ay, az = (np.swapaxes(a, -1, -2) for a in (ax, ay, az))
    if level == "global":  # one group of every cell
        ax, ay, az = (a.reshape(a.shape[0], -1, 1) for a in (ax, ay, az))
    need, code = max(int(min_pairs), 2), _AVERAGES[average]

    def deltas(masks: ArrayLike) -> np.ndarray:
        m = np.asarray(masks, dtype=bool)
        if m.ndim != 3 or m.shape[1:] != (n_sys, n_inp):
            raise ValueError(f"masks must be (B, S, I) = (B, {n_sys}, {n_inp}), got {m.shape}")
        out = np.empty((ax.shape[0], m.shape[0]))
        if level == "global":
            m = np.ascontiguousarray(m).reshape(m.shape[0], -1, 1)
        grouped = np.swapaxes(m, -1, -2) if transpose else m  # (B, items, groups)
        by_group = np.ascontiguousarray(np.transpose(grouped, (2, 1, 0)))  # (groups, items, B): the draws as lanes
        loops("rank.spearman_swap_jit").swap_deltas(ax, ay, az, by_group, need, code, out)
        return out

    return deltas
