"""Tie calibration under swap masks: the acc_eq-optimal epsilon of both swapped metrics of every permutation
draw, exactly as :func:`~xcorrstat._kernels.mt.ties.calibrate_epsilon` finds it on the swapped matrices, with
one sort per pair of metrics instead of one per draw.

A draw gives each cell of X' the score of X or of Y (its mask) and Y' the other one, so a pair of cells
``(a, b)`` of a group has one of four metric differences in X' (``u^sa_a - u^sb_b``, ``u^0 = X``,
``u^1 = Y``, ``(sa, sb)`` the sources X' takes at ``a`` and ``b``) and Y' the one of the other two sources.
:func:`swap_pair_table` sorts the four pairings of every pair by ``|dm|`` once; a draw's pairs of X' (of Y')
are those of its sources, already in order, and its whole calibration curve is a walk along the table
(:mod:`.swap_ties_jit`: exact integer sums of ``A_g L / N_g``, as the oracle compares its candidates on
exact values). The value at the threshold is then each group's ``A_g / N_g`` averaged over the groups with
a pair, as :func:`~xcorrstat._kernels.mt.ties.group_objective` averages them, so the draws are those of
the swapped matrices bit for bit. The tests compare them with ``calibrate_epsilon`` on the swapped
matrices, draw by draw.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..._types import Variant
from .._compiled import loops
from ..levels import average_defined
from .ties import TIE_VARIANTS, calibrate_epsilon

__all__ = ["SWAP_PAIR_BYTES", "swap_pair_table", "swapped_calibration"]

#: Bytes per entry of the table (four per pair of cells) while it is built and sorted: its 21 bytes, the
#: sort's order and scratch, and one pairing's temporaries (measured: 46.5 at 8 million entries).
SWAP_PAIR_BYTES = 48


def swap_pair_table(gx: ArrayLike, gy: ArrayLike, gz: ArrayLike) -> dict[str, np.ndarray]:
    """Every pairing of every pair of cells of each group, sorted by ``|dm|``.

    ``gx``, ``gy``, ``gz`` (G, n): the two metrics' scores and the target, grouped. An entry is a pair
    ``a < b`` of a group and the sources ``(sa, sb)`` of its two cells, kept when both scores and the
    target's two cells are present. Returns ``dist`` (E,) sorted, ``group``, ``a``, ``b`` (E,) int32,
    ``flag`` (E,) uint8 (1: agrees with the target while not a metric tie, 2: while one, 4: the last entry
    of its ``|dm|``, 8: ``sa``, 16: ``sb``), and ``valid`` (2, G, n) int64: the cells of X and of Y with
    a score and a target.

    Examples
    --------
    >>> t = swap_pair_table([[1.0, 2.0]], [[2.0, 1.0]], [[1.0, 2.0]])
    >>> t["dist"].tolist(), (t["flag"] & 1).tolist()  # X-Y and Y-X differ by 0, X-X and Y-Y by 1
    ([0.0, 0.0, 1.0, 1.0], [0, 0, 1, 0])
    """
    ux, uy, uz = (np.asarray(v, dtype=np.float64) for v in (gx, gy, gz))
    g, n = ux.shape
    a, b = np.triu_indices(n, 1)
    src = np.stack([ux, uy])
    present = ~np.isnan(src) & ~np.isnan(uz)[None]
    with np.errstate(invalid="ignore"):
        dg = uz[:, a] - uz[:, b]
    oks = [present[sa][:, a] & present[sb][:, b] for sa in (0, 1) for sb in (0, 1)]
    size = int(sum(int(ok.sum()) for ok in oks))
    dist = np.empty(size)
    group, ia, ib = (np.empty(size, dtype=np.int32) for _ in range(3))
    flag = np.empty(size, dtype=np.uint8)
    at = 0
    for combo, ok in enumerate(oks):  # filled in place, one pairing at a time: no copy of the whole table
        sa, sb = divmod(combo, 2)
        rows, cols = np.nonzero(ok)
        part = slice(at, at + rows.size)
        at += rows.size
        dm = src[sa][rows, a[cols]] - src[sb][rows, b[cols]]  # as the swapped matrix's pair difference
        d = dg[rows, cols]
        dist[part] = np.abs(dm)
        flag[part] = ((np.sign(dm) == np.sign(d)).astype(np.uint8) | ((d == 0).astype(np.uint8) << 1)
                      | np.uint8(8 * sa + 16 * sb))
        group[part], ia[part], ib[part] = rows, a[cols], b[cols]
        del rows, cols, dm, d
    del oks, dg
    order = np.argsort(dist, kind="stable")
    dist = dist[order]  # one array at a time, each old one freed as its sorted copy is made
    group = group[order]
    ia = ia[order]
    ib = ib[order]
    flag = flag[order]
    del order
    if dist.size:
        last = np.ones(dist.size, dtype=bool)
        last[:-1] = dist[1:] != dist[:-1]
        flag |= last.astype(np.uint8) << 2
    return {"dist": dist, "group": group, "a": ia, "b": ib, "flag": flag, "valid": present.astype(np.int64),
            "x": ux, "y": uy, "z": uz}


def swapped_calibration(table: dict[str, np.ndarray], masks: ArrayLike, *,
                        variant: Variant = "acc23") -> tuple[np.ndarray, np.ndarray]:
    """The calibrated acc_eq (tau_eq) of X' and of Y' for every draw of a batch of grouped swap masks.

    Parameters
    ----------
    table : dict
        :func:`swap_pair_table` of the grouped scores.
    masks : array_like (B, G, n) of bool
        Each draw's swaps in the groups' layout (True: X' takes Y's score there, Y' X's).
    variant : {"acc23", "23"}

    Returns
    -------
    best_x, best_y : ndarray (B,)
        What ``calibrate_epsilon(swapped, z)[1]`` gives for each draw's X' and Y', bit for bit (NaN
        where no group has a pair).

    Examples
    --------
    >>> t = swap_pair_table([[1.0, 2.0, 3.0]], [[3.0, 2.0, 1.0]], [[1.0, 2.0, 3.0]])
    >>> bx, by = swapped_calibration(t, np.zeros((1, 1, 3), bool))
    >>> bx.tolist(), by.tolist()  # X' = X agrees in every pair, Y' = Y in none
    ([1.0], [0.0])
    """
    if variant not in TIE_VARIANTS:
        raise ValueError(f"variant must be one of {TIE_VARIANTS} for tie calibration, got {variant!r}")
    m = np.ascontiguousarray(masks, dtype=bool)
    b, g = m.shape[0], m.shape[1]
    agree, pairs = (np.empty((2, b, g), dtype=np.int64) for _ in range(2))
    eps, ok = np.empty((2, b)), np.empty((2, b), dtype=np.bool_)
    loops("mt.swap_ties_jit").swap_calibrations(table["dist"], table["group"], table["a"], table["b"],
                                                 table["flag"], table["valid"], m.view(np.uint8), agree, pairs,
                                                 eps, ok)
    num = agree if variant == "acc23" else 2 * agree - pairs
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.where(pairs > 0, num / pairs, np.nan)
    best = average_defined(r, axis=-1)[0]
    best = np.where((pairs > 0).any(axis=-1), best, np.nan)
    wide = np.flatnonzero(~ok.all(axis=0))  # sums past 64 bits: those draws on their swapped matrices
    if wide.size:
        mw = m[wide]
        for side, (first, second) in enumerate(((table["x"], table["y"]), (table["y"], table["x"]))):
            best[side, wide] = calibrate_epsilon(np.where(mw, second, first), table["z"], variant=variant)[1]
    return best[0], best[1]
