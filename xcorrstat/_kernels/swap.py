"""Level correlations of swapped score matrices, for a batch of swap masks at once.

A permutation draw swaps two standardised metrics X and Y cell by cell under a 0/1
mask m: ``X' = X + m (Y - X)``, ``Y' = Y - m (Y - X)``. Because ``m**2 == m``:

* the sums behind Pearson's r are **linear** in m (per input, per system or over all
  cells), so a batch of masks times a few precomputed arrays gives every draw;
* Kendall's numerator and tie counts at input level are **bilinear** in m: with the
  four sign matrices ``sign(u_a - v_b)`` for u, v in {X, Y}, the sign of a pair of
  swapped cells is ``P00 + m_a (P10 - P00) + m_b (P01 - P00) + m_a m_b Q`` with
  ``Q = P00 - P01 - P10 + P11``; Y' is X' under the mask ``1 - m`` and shares the
  quadratic part. No sorting or comparison happens per draw. Tau-a, tau-b, tau_eq and
  acc_eq are all such forms (:mod:`xcorrstat._kernels.rank.input_swap`).

The integer-valued forms are summed in float32 when that is exact (every partial sum
below 2**24) and float64 otherwise. Every result equals the statistic of
:func:`xcorrstat._kernels.level_correlation` on the explicitly swapped matrices
(the tests check this to 1e-12).

When X and Y are missing in different cells the valid set of a correlation changes
with the draw, linearly in the mask (:mod:`xcorrstat._kernels.linear.gaps`), so the same
forms cover it at input and global level. :func:`swap_supported` says whether a case
is covered; other cases are computed on the swapped matrices themselves.

The within-system level (:func:`prepare_within_swap`) correlates each system's row across its
inputs, then averages the per-system correlations (:func:`xcorrstat._kernels.levels.average_groups`):

* **Pearson** is the input level of the transposed (input, system) matrices: each system is
  an "input" whose "systems" are the inputs, and the mask is transposed with them, so the
  mask-linear sums of :func:`input_pearson_run` (any missing cells) give every system's r in
  every draw. The weights of ``average="weighted"`` and ``"pairs"`` are the valid items of each
  system's row: fixed when X and Y are valid in the same cells, linear in the mask otherwise.
* **Kendall** would be quadratic in the inputs as an input level (a pair matrix of I x I per
  system); instead each system's row is a global-level Kendall over its I cells, counted over
  one sorted table of its 2 I scores of X and Y
  (:func:`xcorrstat._kernels.rank.global_swap.swap_group_kendall`): exact integer counts,
  every variant, any missing cells (bit for bit; Pearson to 1e-12).

The input level takes the same kernels on the transposed matrices (each input a group of systems) where the
forms above do not reach or cost more (:func:`input_by_groups`): every average but ``"macro"``, tau-c, and
Kendall over :data:`GROUP_SYSTEMS` systems or more, whose pair forms or one-off sorted pass are quadratic in
the systems.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike

from .._types import Average, Level, Method, Variant
from .correlation import pearson
from .levels import average_groups
from .scaling import centre_cells
from .linear.forms import LinearForms, SwapRun, linear, linear_forms, per_input_masks
from .linear.gaps import input_pearson_gaps
from .rank.global_swap import swap_group_kendall
from .rank.input_swap import SWAP_KENDALL_VARIANTS, input_kendall_swap_means

__all__ = ["WITHIN_METHODS", "SwapDeltas", "input_by_groups", "input_pearson_run", "prepare_swap",
           "prepare_within_swap", "swap_supported", "swapped_deltas"]

#: Systems from which input-level Kendall draws take one sorted table per input (:func:`input_by_groups`). Below,
#: the sort form of :mod:`~xcorrstat._kernels.rank.input_sort` (or the pair forms) is faster per draw; from here
#: on its one-off pass over every input's pairs of systems costs more than the draws save. Measured with one
#: pair of metrics at 1,000 draws: the tables take 1.4x the time at 200 systems, 0.9x at 600, 0.4x at 5,000.
GROUP_SYSTEMS = 500

#: ``deltas(masks) -> (P, B)``: the statistic's difference under each of a batch of masks.
SwapDeltas = Callable[[ArrayLike], np.ndarray]


def swap_supported(zx: ArrayLike, zy: ArrayLike, *, level: Level, method: Method, variant: Variant) -> bool:
    """True when :func:`swapped_deltas` covers this level, method and missing-value pattern.

    Examples
    --------
    >>> zx = np.zeros((1, 3, 2)); zy = zx.copy(); zy[0, 0, 0] = np.nan
    >>> swap_supported(zx, zx, level="input", method="kendall", variant="b")
    True
    >>> swap_supported(zx, zy, level="input", method="kendall", variant="b")  # missing in different cells
    True
    >>> swap_supported(zx, zy, level="system", method="pearson", variant="b")
    False
    """
    if method == "pearson":
        if level == "system" and not np.array_equal(np.isnan(zx), np.isnan(zy)):
            return False
        return level in ("system", "input", "global")
    return method == "kendall" and variant in SWAP_KENDALL_VARIANTS and level == "input"


def input_by_groups(shape: tuple[int, ...], *, method: str, variant: Variant, average: Average) -> bool:
    """Whether input-level draws of (P, S, I) scores take the within-system kernels of the transposed matrices
    (:func:`prepare_within_swap`: each input one group whose items are the systems) rather than the forms of
    :func:`prepare_swap`: every average but ``"macro"``, Kendall's tau-c, and Kendall from :data:`GROUP_SYSTEMS`
    systems on (from the shape alone, never from a budget or a batch, so how the work is blocked never changes a
    number). Epsilon ties are the caller's to route (the forms of :func:`prepare_swap` take them).

    Examples
    --------
    >>> input_by_groups((1, 16, 100), method="kendall", variant="b", average="macro")
    False
    >>> input_by_groups((1, 5000, 20), method="kendall", variant="b", average="macro")
    True
    >>> input_by_groups((1, 16, 100), method="pearson", variant="b", average="weighted")
    True
    """
    if average != "macro":
        return method in WITHIN_METHODS
    return method == "kendall" and (variant not in SWAP_KENDALL_VARIANTS or shape[-2] >= GROUP_SYSTEMS)


def swapped_deltas(
    zx: ArrayLike,
    zy: ArrayLike,
    z: ArrayLike,
    masks: ArrayLike,
    *,
    level: Level,
    method: Method,
    min_pairs: int,
    variant: Variant = "b",
) -> np.ndarray:
    """``r(X', Z) - r(Y', Z)`` for every mask: zx, zy, z ``(P, S, I)``, masks ``(B, S, I)`` -> ``(P, B)``.

    ``zx`` and ``zy`` are the standardised metrics (missing in the same cells), ``z``
    the target. Undefined correlations follow the library's rule (fewer than
    ``min_pairs`` valid pairs or a constant vector give NaN; at input level the
    average runs over the inputs defined in that draw).

    Examples
    --------
    >>> zx = np.arange(12.0).reshape(1, 3, 4); zy = zx[:, ::-1]  # Y ranks the systems backwards
    >>> masks = np.zeros((2, 3, 4), dtype=bool); masks[1] = True  # no swap, then every cell swapped
    >>> swapped_deltas(zx, zy, zx, masks, level="input", method="kendall", min_pairs=2).tolist()
    [[2.0, -2.0]]
    """
    return prepare_swap(zx, zy, z, level=level, method=method, min_pairs=min_pairs, variant=variant)(masks)


def prepare_swap(
    zx: ArrayLike, zy: ArrayLike, z: ArrayLike, *, level: Level, method: Method, min_pairs: int, variant: Variant = "b"
) -> SwapDeltas:
    """Precompute what does not depend on the masks; returns ``deltas(masks) -> (P, B)``.

    Use it when many batches of masks meet the same matrices (the precomputed pair
    matrices of Kendall's tau are the costly part).

    Examples
    --------
    >>> zx = np.arange(12.0).reshape(1, 3, 4); zy = zx[:, ::-1]
    >>> deltas = prepare_swap(zx, zy, zx, level="system", method="pearson", min_pairs=2)
    >>> deltas(np.ones((1, 3, 4), dtype=bool)).tolist()
    [[-2.0]]
    """
    ax, ay, az = (np.asarray(a, dtype=np.float64) for a in (zx, zy, z))
    if method == "pearson":  # scale (exactly) and centre the target: no sum of its squares
        az = centre_cells(az)  # overflows and a large offset never rounds its means
    if level == "system":
        return lambda masks: _system_pearson(ax, ay, az, np.asarray(masks, dtype=bool), min_pairs)
    if level == "global":
        return _global_deltas(ax, ay, az, min_pairs)
    if method == "kendall":  # the means over inputs, without the per-input values of every draw
        means = input_kendall_swap_means(ax, ay, az, min_pairs=min_pairs, variant=variant)

        def kendall_deltas(masks: ArrayLike) -> np.ndarray:
            mx, my = means(np.asarray(masks, dtype=bool))
            return mx - my

        return kendall_deltas
    run = input_pearson_run(ax, ay, az, min_pairs)

    def deltas(masks: ArrayLike) -> np.ndarray:
        rx, ry = run(np.asarray(masks, dtype=bool))
        return _average_defined(rx) - _average_defined(ry)

    return deltas


def input_pearson_run(zx: np.ndarray, zy: np.ndarray, z: np.ndarray, min_pairs: int) -> SwapRun:
    """Per-input Pearson of X' and Y': the kernel for shared missing cells, or for any missing cells."""
    if np.array_equal(np.isnan(zx), np.isnan(zy)):
        return _input_pearson(zx, zy, z, min_pairs)
    return input_pearson_gaps(zx, zy, z, min_pairs)


def _global_deltas(zx: np.ndarray, zy: np.ndarray, z: np.ndarray, min_pairs: int) -> SwapDeltas:
    """Global level: the cells of each matrix as the systems of one input."""
    shape = zx.shape[:-2] + (-1, 1)
    run = input_pearson_run(zx.reshape(shape), zy.reshape(shape), z.reshape(shape), min_pairs)

    def deltas(masks: ArrayLike) -> np.ndarray:
        m = np.asarray(masks, dtype=bool)
        rx, ry = run(m.reshape(m.shape[0], -1, 1))
        return rx[..., 0, :] - ry[..., 0, :]

    return deltas


def _average_defined(r: np.ndarray) -> np.ndarray:
    """Mean over axis -2 (inputs) of the defined values: (P, I, B) -> (P, B).

    Each draw's values are summed as one contiguous row: NumPy sums a strided axis in another
    order than a contiguous one, and with one draw in the batch the axis would be contiguous.
    """
    defined = ~np.isnan(r)
    count = defined.sum(axis=-2)
    total = np.ascontiguousarray(np.swapaxes(np.where(defined, r, 0.0), -1, -2)).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / count, np.nan)


def _constant_forms(a: np.ndarray, b: np.ndarray, valid: np.ndarray) -> list[tuple[np.ndarray, np.ndarray, LinearForms]]:
    """What :func:`_constant_swapped` needs of X (a) and Y (b), whatever the mask: per candidate value,
    the valid cells equal to it in X and in Y per input (P, I) and the forms of their change."""
    s0 = np.argmax(valid, axis=-2)  # (P, I)
    out = []
    for src in (a, b):  # the two candidate values
        v = np.take_along_axis(src, s0[:, None, :], axis=-2)  # (P, 1, I)
        ea = (valid & (a == v)).astype(np.float64)
        eb = (valid & (b == v)).astype(np.float64)
        out.append((ea.sum(axis=-2), eb.sum(axis=-2), linear_forms((eb - ea)[:, None])))
    return out


def _constant_swapped(forms: list[tuple[np.ndarray, np.ndarray, LinearForms]], n: np.ndarray,
                      mt: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Whether X' (X swapped with Y) and Y' are constant per input and draw: two (P, I, B) bool arrays.

    X'[s0] is X[s0] or Y[s0] for the first valid system s0, so X' is constant iff every
    valid cell of X' equals one of those two values -- a count that is linear in m
    (:func:`_constant_forms`).
    """
    const_x = np.zeros(n.shape + (mt.shape[1],), dtype=bool)
    const_y = np.zeros_like(const_x)
    for ea, eb, change in forms:
        lin = linear(mt, change)[:, 0]  # (P, I, B)
        const_x |= ea[..., None] + lin == n[..., None]
        const_y |= eb[..., None] - lin == n[..., None]
    return const_x, const_y


def _input_pearson(zx: np.ndarray, zy: np.ndarray, z: np.ndarray, min_pairs: int) -> SwapRun:
    """Per-input Pearson r of X' and Y' with Z: returns ``run(m) -> two (P, I, B) arrays``."""
    valid = ~np.isnan(zx) & ~np.isnan(z)
    n = valid.sum(axis=-2)  # (P, I)
    nn = np.maximum(n, 1)
    a = np.where(valid, zx, 0.0)
    b = np.where(valid, zy, 0.0)
    c = np.where(valid, z, 0.0)
    # a common shift of X and Y per input leaves every r unchanged and keeps the sums small
    shift = ((a + b).sum(axis=-2) / (2 * nn))[:, None, :]
    a = np.where(valid, a - shift, 0.0)
    b = np.where(valid, b - shift, 0.0)
    c = np.where(valid, c - (c.sum(axis=-2) / nn)[:, None, :], 0.0)
    d = b - a
    coef = linear_forms(np.stack([d, b * b - a * a, d * c], axis=1))
    base = np.stack([a, a * a, a * c, b, b * b, b * c], axis=1).sum(axis=-2)[..., None]  # (P, 6, I, 1)
    szz = (c * c).sum(axis=-2)[..., None]
    constant = _constant_forms(np.where(valid, zx, 0.0), np.where(valid, zy, 0.0), valid)
    zmin = np.min(z, axis=-2, where=valid, initial=np.inf)
    zmax = np.max(z, axis=-2, where=valid, initial=-np.inf)
    bad = ((n < max(int(min_pairs), 2)) | ~(zmin < zmax))[..., None]

    def run(m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        mt = per_input_masks(m, np.float64)
        lin = linear(mt, coef)  # (P, 3, I, B)
        const_x, const_y = _constant_swapped(constant, n, mt)
        out = []
        for sign, k, const in ((1.0, 0, const_x), (-1.0, 3, const_y)):
            s1 = base[:, k] + sign * lin[:, 0]
            s2 = base[:, k + 1] + sign * lin[:, 1]
            s3 = base[:, k + 2] + sign * lin[:, 2]
            with np.errstate(invalid="ignore", divide="ignore"):
                var = np.maximum(s2 - s1 * s1 / nn[..., None], 0.0)
                r = np.clip(s3 / np.sqrt(var * szz), -1.0, 1.0)
            out.append(np.where(bad | const, np.nan, r))
        return out[0], out[1]

    return run


def _system_pearson(zx: np.ndarray, zy: np.ndarray, z: np.ndarray, m: np.ndarray, min_pairs: int) -> np.ndarray:
    """System-level Pearson delta: per-draw system means are linear in m. Returns (P, B)."""
    valid = ~np.isnan(zx) & ~np.isnan(z)
    count = valid.sum(axis=-1)  # (P, S)
    a = np.where(valid, zx, 0.0)
    d = np.where(valid, zy, 0.0) - a
    mf = m.astype(np.float64)
    swapped = np.einsum("bsi,psi->pbs", mf, d)  # sum over inputs of m * d, per system and draw
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_x = np.where(count[:, None] > 0, (a.sum(axis=-1)[:, None] + swapped) / count[:, None], np.nan)
        mean_y = np.where(count[:, None] > 0,
                          (np.where(valid, zy, 0.0).sum(axis=-1)[:, None] - swapped) / count[:, None], np.nan)
        mean_z = np.where(count > 0, np.where(valid, z, 0.0).sum(axis=-1) / count, np.nan)[:, None]
    rx, _ = pearson(mean_x, mean_z, min_pairs=min_pairs)
    ry, _ = pearson(mean_y, mean_z, min_pairs=min_pairs)
    return rx - ry


# -- within-system level ------------------------------------------------------------------------------------

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
