"""Within-system level correlations of swapped metrics, for a batch of swap masks at once.

The within-system level correlates each system's row across its inputs, then averages the
per-system correlations (:func:`xcorrstat._kernels.levels.average_groups`). Under a swap mask:

* **Pearson** is the input level of the transposed (input, system) matrices: each system is
  an "input" whose "systems" are the inputs, and the mask is transposed with them, so the
  mask-linear sums of :func:`xcorrstat._kernels.swap.input_pearson_run` (any missing cells)
  give every system's r in every draw. The weights of ``average="weighted"`` and ``"pairs"``
  are the valid items of each system's row: fixed when X and Y are valid in the same cells,
  linear in the mask otherwise.
* **Kendall** would be quadratic in the inputs as an input level (a pair matrix of I x I per
  system); instead each system's row is a global-level Kendall over its I cells, counted over
  one sorted table of its 2 I scores of X and Y
  (:func:`xcorrstat._kernels.global_kendall_swap.swap_group_kendall`): exact integer counts,
  every variant, any missing cells.

Every value equals the statistic of :func:`xcorrstat._kernels.level_correlation` on the
explicitly swapped matrices (the tests check Pearson to 1e-12 and Kendall bit for bit).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike

from .._types import Average, Variant
from .rank.global_swap import swap_group_kendall
from .levels import average_groups
from .scaling import centre_cells
from .swap import SwapDeltas, input_pearson_run

__all__ = ["WITHIN_METHODS", "prepare_within_swap"]

#: Methods whose within-system draws :func:`prepare_within_swap` computes (Kendall without epsilon).
WITHIN_METHODS = ("pearson", "kendall")


def prepare_within_swap(zx: ArrayLike, zy: ArrayLike, z: ArrayLike, *, method: str, min_pairs: int,
                        variant: Variant = "b", average: Average = "macro") -> SwapDeltas:
    """``deltas(masks) -> (P, B)``: within-system ``r(X', Z) - r(Y', Z)`` for every mask.

    ``zx`` and ``zy`` (P, S, I) are the standardised metrics, ``z`` (P, S, I) the target,
    with any missing cells; masks are (B, S, I) bools (True = swap). A system's correlation
    is undefined (and left out of the average) with fewer than ``max(min_pairs, 2)`` valid
    inputs or a constant row, as in :func:`xcorrstat._kernels.level_correlation`.

    Examples
    --------
    >>> zx = np.arange(12.0).reshape(1, 3, 4); zy = -zx  # Y ranks every system's inputs backwards
    >>> masks = np.zeros((2, 3, 4), dtype=bool); masks[1] = True  # no swap, then every cell swapped
    >>> prepare_within_swap(zx, zy, zx, method="kendall", min_pairs=2)(masks).tolist()
    [[2.0, -2.0]]
    >>> prepare_within_swap(zx, zy, zx, method="pearson", min_pairs=2)(masks).tolist()
    [[2.0, -2.0]]
    """
    ax, ay, az = (np.asarray(a, dtype=np.float64) for a in (zx, zy, z))
    if ax.ndim != 3 or not ax.shape == ay.shape == az.shape:
        raise ValueError(f"zx, zy and z must be (P, S, I) each, got {ax.shape}, {ay.shape} and {az.shape}")
    if method == "kendall":
        return _kendall_deltas(ax, ay, az, variant, min_pairs, average)
    if method == "pearson":
        return _pearson_deltas(ax, ay, az, min_pairs, average)
    raise ValueError(f"method must be one of {WITHIN_METHODS!r}, got {method!r}")


def _kendall_deltas(zx: np.ndarray, zy: np.ndarray, z: np.ndarray, variant: Variant, min_pairs: int,
                    average: Average) -> SwapDeltas:
    """Each system's tau of X' and Y' from its sorted table, then the level's average."""
    taus = swap_group_kendall(zx, zy, z, variant=variant, min_pairs=min_pairs)

    def deltas(masks: ArrayLike) -> np.ndarray:
        rx, ry, nx, ny = taus(masks)  # (P, B, S) each
        mean_x, _ = average_groups(rx, nx, method="kendall", variant=variant, average=average)
        mean_y, _ = average_groups(ry, ny, method="kendall", variant=variant, average=average)
        return mean_x - mean_y

    return deltas


def _pearson_deltas(zx: np.ndarray, zy: np.ndarray, z: np.ndarray, min_pairs: int,
                    average: Average) -> SwapDeltas:
    """Input-level Pearson of the transposed matrices, then the level's average over the systems."""
    zc = centre_cells(z)  # scaled (exactly) and centred per matrix: no sum of its squares overflows
    tx, ty, tz = (np.ascontiguousarray(np.swapaxes(a, -1, -2)) for a in (zx, zy, zc))  # (P, I, S)
    # one kernel per row: a matrix product's rounding may depend on its number of columns (rows x 3), so
    # a row's draws never depend on how many rows a task holds
    runs = [input_pearson_run(tx[p:p + 1], ty[p:p + 1], tz[p:p + 1], min_pairs) for p in range(tx.shape[0])]
    items = _valid_items(zx, zy, z)

    def deltas(masks: ArrayLike) -> np.ndarray:
        m = np.asarray(masks, dtype=bool)
        b = m.shape[0]
        if b == 1:  # a one-row matrix product may round otherwise (BLAS gemv): use two rows
            m = np.concatenate([m, m])
        mt = np.swapaxes(m, -1, -2)
        rx, ry = (np.concatenate(parts) for parts in zip(*(run(mt) for run in runs)))  # (P, S, B) each
        nx, ny = items(m, average)
        out = []
        for r, n in ((rx, nx), (ry, ny)):
            mean, _ = average_groups(np.ascontiguousarray(np.swapaxes(r, -1, -2)), n, method="pearson",
                                     variant="b", average=average)
            out.append(mean)
        return (out[0] - out[1])[:, :b]

    return deltas


def _valid_items(zx: np.ndarray, zy: np.ndarray,
                 z: np.ndarray) -> Callable[[np.ndarray, Average], tuple[np.ndarray, np.ndarray]]:
    """``items(masks, average) -> (n_x, n_y)``: each system's valid inputs of X' and Y' per draw,
    (P, B, S) or broadcastable to it (the averages' weights; unused by ``"macro"``)."""
    vz = ~np.isnan(z)
    vx, vy = ~np.isnan(zx) & vz, ~np.isnan(zy) & vz
    nx0, ny0 = vx.sum(axis=-1)[:, None, :], vy.sum(axis=-1)[:, None, :]  # (P, 1, S)
    shared = np.array_equal(vx, vy)
    change = vy.astype(np.float64) - vx

    def items(m: np.ndarray, average: Average) -> tuple[np.ndarray, np.ndarray]:
        if shared or average == "macro":  # every draw keeps each system's valid cells (or no weights)
            return nx0, ny0
        swapped = np.rint(np.einsum("bsi,psi->pbs", m.astype(np.float64), change)).astype(np.int64)
        return nx0 + swapped, ny0 - swapped

    return items
