"""The statistic of permutation draws: ``delta' = r(X', Z) - r(Y', Z)`` for a batch of swap masks.

X and Y are first standardised (z-scores over all their non-missing cells); a draw
swaps them under a 0/1 mask (:func:`.draws.permutation_masks`). Pearson at every
level and Kendall's tau-b at input level use the mask-linear and mask-bilinear
kernels of :mod:`xcorrstat.kernels.swap` when X and Y are missing in the same cells;
Kendall at global level counts every draw over one sorted table of the 2n scores of X and Y
(:func:`xcorrstat.kernels.global_kendall_swap.swap_global_kendall`, any missing cells); other
cases evaluate the batch of swapped matrices with the vectorised level kernels. At system level those swapped means come from exact sums of the raw
scores mapped by the z-score map, so ties between system means survive
standardisation. Both routes give the statistic of the explicitly swapped matrices.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ..kernels import corr, level_correlation
from ..kernels.exactsum import exact_parts
from ..kernels.global_kendall_swap import swap_global_kendall
from ..kernels.scaling import pow2_exponent, pow2_normalise, remove_offset
from ..kernels.swap import prepare_swap, swap_supported

__all__ = ["standardise", "draw_deltas"]


def standardise(a: np.ndarray) -> np.ndarray:
    """z-scores over all non-missing cells of each (..., S, I) matrix (population std).

    Examples
    --------
    >>> standardise(np.array([[1.0, 2.0], [3.0, np.nan]])).round(3).tolist()
    [[-1.225, 0.0], [1.225, nan]]
    """
    # exact: no square overflows or underflows, and no large offset rounds the mean
    a = remove_offset(pow2_normalise(a, axis=(-2, -1)))
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.nanmean(a, axis=(-2, -1), keepdims=True)
        std = np.nanstd(a, axis=(-2, -1), keepdims=True)
        return (a - mean) / std


def _affine(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Scale and shift of the z-score map of each (..., S, I) matrix: z = scale * a + shift."""
    e = pow2_exponent(a, axis=(-2, -1))  # a * 2**-e is exact and its square cannot overflow
    a = np.ldexp(a, -e)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.nanmean(a, axis=(-2, -1), keepdims=True)
        scale = 1.0 / np.nanstd(a, axis=(-2, -1), keepdims=True)
    return np.ldexp(scale, -e), -mean * scale


def _swapped_system_means(x: np.ndarray, y: np.ndarray, z: np.ndarray,
                          m: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per-draw system means of X', Y' (z-scored) and Z over the cells both present: (..., B, S) each.

    Means are taken of the raw scores with exact sums, then mapped by the z-score
    map (means commute with it): systems whose raw sums tie keep tied means, which
    rank statistics need. Swapping rounded z-scores cell by cell would break them.
    """
    (sx, hx), (sy, hy) = _affine(x), _affine(y)
    vz = ~np.isnan(z)[..., None, :, :]
    vx = ~np.isnan(x)[..., None, :, :]
    vy = ~np.isnan(y)[..., None, :, :]
    keep = ~m
    parts = {k: exact_parts(np.where(np.isnan(a), 0.0, a), a.shape[-1])[..., None, :, :]
             for k, a in (("x", x), ("y", y), ("z", z))}

    def exact_sum(name: str, mask: np.ndarray) -> np.ndarray:
        return sum(np.sum(p * mask, axis=-1) for p in parts[name])  # each part's sum is exact

    out = []
    for from_x, from_y in ((keep & vx & vz, m & vy & vz), (m & vx & vz, keep & vy & vz)):
        cx, cy = from_x.sum(axis=-1), from_y.sum(axis=-1)
        count = cx + cy
        with np.errstate(invalid="ignore", divide="ignore"):  # a constant score has no z-score map
            sums = sx[..., None, 0, :] * exact_sum("x", from_x) + hx[..., None, 0, :] * cx
            sums = sums + (sy[..., None, 0, :] * exact_sum("y", from_y) + hy[..., None, 0, :] * cy)
            mean = np.where(count > 0, sums / count, np.nan)
            zmean = np.where(count > 0, exact_sum("z", from_x | from_y) / count, np.nan)
        out.append((mean, zmean))
    return out


def draw_deltas(x: np.ndarray, y: np.ndarray, z: np.ndarray,
                kw: Mapping[str, Any]) -> Callable[[np.ndarray], np.ndarray]:
    """A function ``deltas(m)`` giving delta' of every draw of a mask batch ``m`` (B, S, I) as (..., B).

    x, y, z are raw (..., S, I) scores of equal shape. Work that does not depend on
    the masks (z-scores, the kernels' precomputed pair matrices) is done once here.
    """
    level = kw["level"]
    zx, zy = standardise(x), standardise(y)  # cell-wise: equal raw cells stay equal
    missing = None
    if not kw["skipna"]:
        missing = (np.isnan(x) | np.isnan(y) | np.isnan(z)).any(axis=(-2, -1))[..., None]
    if level == "global" and kw["method"] == "kendall" and not kw.get("epsilon"):
        counted = swap_global_kendall(zx, zy, z, variant=kw["variant"], min_pairs=kw["min_pairs"])

        def global_kendall(m: np.ndarray) -> np.ndarray:
            delta = counted(m)
            return delta if missing is None else np.where(missing, np.nan, delta)

        return global_kendall
    if kw.get("average", "macro") == "macro" and swap_supported(zx, zy, level=level, method=kw["method"],
                                                                 variant=kw["variant"]):
        lead = x.shape[:-2]
        flat = [a.reshape((-1,) + a.shape[-2:]) for a in (zx, zy, z)]
        fast = prepare_swap(*flat, level=level, method=kw["method"], min_pairs=kw["min_pairs"],
                            variant=kw["variant"])

        # no recursion here: a closure calling itself is a reference cycle, and the precomputed
        # operands it holds would wait for the cyclic garbage collector after every task
        def deltas(m: np.ndarray) -> np.ndarray:
            b = m.shape[0]
            if b == 1:  # a one-row matrix product may round otherwise (BLAS gemv): use two rows
                m = np.concatenate([m, m])
            delta = fast(m).reshape(lead + (m.shape[0],))[..., :b]
            return delta if missing is None else np.where(missing, np.nan, delta)

        return deltas
    corr_kw = {k: kw[k] for k in ("method", "variant", "min_pairs")}

    def materialised(m: np.ndarray) -> np.ndarray:
        if level == "system":
            (mx, zmx), (my, zmy) = _swapped_system_means(x, y, z, m)
            delta = corr(mx, zmx, **corr_kw)[0] - corr(my, zmy, **corr_kw)[0]
        else:
            xs, ys, zs = zx[..., None, :, :], zy[..., None, :, :], z[..., None, :, :]
            xp = np.where(m, ys, xs)
            yp = np.where(m, xs, ys)
            zb = np.broadcast_to(zs, xp.shape)
            delta = level_correlation(xp, zb, **kw)[0] - level_correlation(yp, zb, **kw)[0]
        return delta if missing is None else np.where(missing, np.nan, delta)

    return materialised
