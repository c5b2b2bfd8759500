"""The statistic of permutation draws: ``delta' = r(X', Z) - r(Y', Z)`` for a batch of swap masks.

X and Y are first standardised (z-scores over all their non-missing cells); a draw
swaps them under a 0/1 mask (:func:`.draws.permutation_masks`). At system level every
method and every pattern of missing cells takes the mask-linear kernel of
:mod:`xcorrstat._kernels.linear.system_swap` (exact sums of the raw scores mapped by the z-score
map, so ties between system means survive standardisation), except Pearson on complete
data (:mod:`xcorrstat._kernels.swap`). Pearson at input and global level and Kendall's
tau-b (tau-a, tau_eq, acc_eq) at input level use the mask-linear and mask-bilinear kernels
of :mod:`xcorrstat._kernels.swap`, whatever the missing cells (:mod:`xcorrstat._kernels.linear.gaps`:
a cell's validity in a draw is linear in the mask too); Kendall at global
level counts every draw over one sorted table of the 2n scores of X and Y
(:func:`xcorrstat._kernels.rank.global_swap.swap_global_kendall`, any missing cells). At
within-system level (:mod:`xcorrstat._kernels.swap`, every average, any missing cells)
Pearson is the input level of the transposed matrices and Kendall (without epsilon) one sorted
table per system; the input level takes the same kernels on the transposed matrices for every
average but "macro", for tau-c and from :data:`~xcorrstat._kernels.swap.GROUP_SYSTEMS` systems on
(:func:`~xcorrstat._kernels.swap.input_by_groups`). Spearman at input, within-system and global
level sorts each group's scores of X and Y once and ranks every draw by a walk along them
(:mod:`xcorrstat._kernels.rank.spearman_swap`, every average, any missing cells); at input level, a
pair of metrics over few systems without ties between two systems' cells takes tau-a's pair forms
instead, and so does input-level tau-c (:mod:`xcorrstat._kernels.rank.untied_forms`: one matrix
product per input for every pair of metrics). Other cases evaluate the swapped matrices with the
vectorised level kernels, a block of rows and draws at a time within
:func:`~.engine.block_elems` (slower, linear in the cells). Every
route gives the statistic of the explicitly swapped matrices.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from .._kernels import level_correlation
from .._kernels.custom import is_own
from .._kernels.rank.global_swap import swap_global_kendall
from .._kernels.scaling import pow2_normalise, remove_offset
from .._kernels.swap import (WITHIN_METHODS, SwapDeltas, input_by_groups, prepare_swap, prepare_within_swap,
                             swap_supported)
from .._kernels.linear.system_swap import prepare_system_swap
from .._kernels.rank.input_tau_c import input_tau_c_split, split_rows
from .._kernels.rank.untied_forms import input_untied_swap_means, untied_rows
from .._kernels.rank.spearman_swap import prepare_spearman_swap
from .memory import materialised_steps

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


def _system_deltas(x: np.ndarray, y: np.ndarray, z: np.ndarray,
                   kw: Mapping[str, Any]) -> Callable[[np.ndarray], np.ndarray]:
    """System level at any method and missing cells: each row's (X, Y) as a pair of the all-pairs
    kernel (:mod:`xcorrstat._kernels.linear.system_swap`), rows sharing a target computed together."""
    lead = x.shape[:-2]
    s, i = x.shape[-2:]
    x, y, z = (np.broadcast_to(a, lead + (s, i)).reshape(-1, s, i) for a in (x, y, z))
    rows = np.arange(x.shape[0])
    shared = all(np.array_equal(z[0], z[r], equal_nan=True) for r in range(1, z.shape[0]))
    opts = {k: kw[k] for k in ("method", "variant", "min_pairs", "skipna")}
    if shared:  # one target: one kernel over the 2 P rows
        runs = [(rows, prepare_system_swap(np.concatenate([x, y]), z[0], (rows, rows + rows.size), **opts))]
    else:  # a target per row (e.g. a language pair each)
        runs = [(np.array([r]), prepare_system_swap(np.stack([x[r], y[r]]), z[r], ([0], [1]), **opts))
                for r in rows]

    def deltas(m: np.ndarray) -> np.ndarray:
        out = np.empty((rows.size, m.shape[0]))
        for where, run in runs:
            out[where] = run(m)
        return out.reshape(lead + (m.shape[0],))

    return deltas


def _complete(*arrays: np.ndarray) -> bool:
    return not any(np.isnan(a).any() for a in arrays)


def _own_deltas(zx: np.ndarray, zy: np.ndarray, z: np.ndarray,
                kw: Mapping[str, Any]) -> Callable[[np.ndarray], np.ndarray]:
    """Deltas of a function of one's own: the swapped (standardised) scores of each draw, explicitly."""
    opts = {k: v for k, v in kw.items() if k in ("level", "method", "min_pairs", "skipna", "average")}
    zz = z[..., None, :, :]

    def deltas(m: np.ndarray) -> np.ndarray:  # (B, S, I) -> (..., B)
        a, b = zx[..., None, :, :], zy[..., None, :, :]
        swapped_x, swapped_y = np.where(m, b, a), np.where(m, a, b)
        return (level_correlation(swapped_x, zz, **opts)[0] - level_correlation(swapped_y, zz, **opts)[0])

    return deltas


def draw_deltas(x: np.ndarray, y: np.ndarray, z: np.ndarray, kw: Mapping[str, Any],
                standardised: tuple[np.ndarray, np.ndarray] | None = None) -> Callable[[np.ndarray], np.ndarray]:
    """A function ``deltas(m)`` giving delta' of every draw of a mask batch ``m`` (B, S, I) as (..., B).

    x, y, z are raw (..., S, I) scores of equal shape. Work that does not depend on
    the masks (z-scores, the kernels' precomputed pair matrices) is done once here;
    ``standardised`` gives ``(standardise(x), standardise(y))`` when the caller has them
    (each metric standardised once for all its pairs).
    """
    level = kw["level"]
    # cell-wise: equal raw cells stay equal
    zx, zy = (standardise(x), standardise(y)) if standardised is None else standardised
    if is_own(kw["method"]):
        return _own_deltas(zx, zy, z, kw)
    missing = None
    if not kw["skipna"]:
        missing = (np.isnan(x) | np.isnan(y) | np.isnan(z)).any(axis=(-2, -1))[..., None]
    if level == "global" and kw["method"] == "kendall" and not kw.get("epsilon"):
        counted = swap_global_kendall(zx, zy, z, variant=kw["variant"], min_pairs=kw["min_pairs"])

        def global_kendall(m: np.ndarray) -> np.ndarray:
            delta = counted(m)
            return delta if missing is None else np.where(missing, np.nan, delta)

        return global_kendall
    if level == "within_system" and kw["method"] in WITHIN_METHODS and not kw.get("epsilon"):
        return _within_deltas(zx, zy, z, kw, missing)
    if level == "input" and kw["method"] == "kendall" and kw["variant"] == "c" and not kw.get("epsilon"):
        return _tau_c_deltas(zx, zy, z, kw, missing)
    if level == "input" and not kw.get("epsilon") and input_by_groups(
            zx.shape, method=kw["method"], variant=kw["variant"], average=kw.get("average", "macro")):
        return _within_deltas(zx, zy, z, kw, missing, transposed=True)
    if level == "system" and not (kw["method"] == "pearson" and _complete(zx, zy, z)):
        return _system_deltas(x, y, z, kw)
    if kw.get("average", "macro") == "macro" and swap_supported(zx, zy, level=level, method=kw["method"],
                                                                 variant=kw["variant"]):
        lead = x.shape[:-2]
        flat = [a.reshape((-1,) + a.shape[-2:]) for a in (zx, zy, z)]
        fast = prepare_swap(*flat, level=level, method=kw["method"], min_pairs=kw["min_pairs"],
                            variant=kw["variant"])

        # no recursion here: a closure calling itself is a reference cycle, and the precomputed
        # operands it holds would wait for the cyclic garbage collector after every task
        def deltas(m: np.ndarray) -> np.ndarray:
            delta = fast(m).reshape(lead + (m.shape[0],))
            return delta if missing is None else np.where(missing, np.nan, delta)

        return deltas
    if kw["method"] == "spearman":  # input, within-system and global level (system level: above)
        return _spearman_deltas(zx, zy, z, kw, missing)
    return _materialised(zx, zy, z, kw, missing)


def _spearman_deltas(zx: np.ndarray, zy: np.ndarray, z: np.ndarray, kw: Mapping[str, Any],
                     missing: np.ndarray | None) -> Callable[[np.ndarray], np.ndarray]:
    """Input, within-system and global Spearman: each group's scores sorted once, every draw's mid-ranks a
    walk along them (:mod:`xcorrstat._kernels.rank.spearman_swap`), every average and any missing cells; at
    input level (``"macro"``) the rows without ties between systems take tau-a's pair forms."""
    def walk(*flat: np.ndarray) -> SwapDeltas:
        return prepare_spearman_swap(*flat, level=kw["level"], min_pairs=kw["min_pairs"],
                                     average=kw.get("average", "macro"))

    return _untied_or(zx, zy, z, kw, missing, walk)


def _tau_c_deltas(zx: np.ndarray, zy: np.ndarray, z: np.ndarray, kw: Mapping[str, Any],
                  missing: np.ndarray | None) -> Callable[[np.ndarray], np.ndarray]:
    """Input-level tau-c (``"macro"``): tau-a's pair forms for the rows without ties between systems; for the
    others, the forms where an input's divisor is fixed and one sorted table for each other input
    (:mod:`xcorrstat._kernels.rank.input_tau_c`), or one sorted table per input (the within-system kernels
    of the transposed matrices) when X and Y miss different cells, and for every other average."""
    def tables(x: np.ndarray, y: np.ndarray, z: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
        return _within_deltas(x, y, z, kw, None, transposed=True)

    def split(x: np.ndarray, y: np.ndarray, z: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
        return input_tau_c_split(x, y, z, min_pairs=kw["min_pairs"])

    def tied(x: np.ndarray, y: np.ndarray, z: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
        if kw.get("average", "macro") != "macro":
            return tables(x, y, z)
        return _by_rows([x, y, z], split_rows(x, y, z), split, tables)

    return _untied_or(zx, zy, z, kw, missing, tied)


def _untied_or(zx: np.ndarray, zy: np.ndarray, z: np.ndarray, kw: Mapping[str, Any], missing: np.ndarray | None,
               other: Callable[..., Callable[[np.ndarray], np.ndarray]]) -> Callable[[np.ndarray], np.ndarray]:
    """Rows (pairs of metrics) that :func:`~xcorrstat._kernels.rank.untied_forms.untied_rows` admits by
    tau-a's pair forms (input level, ``"macro"``), the others by ``other(x, y, z)``; each row by its own
    scores, so a row takes the same route in any block of pairs."""
    lead = zx.shape[:-2]
    flat = [a.reshape((-1,) + a.shape[-2:]) for a in np.broadcast_arrays(zx, zy, z)]
    forms: np.ndarray = np.zeros(len(flat[0]), dtype=np.bool_)
    if kw["level"] == "input" and kw.get("average", "macro") == "macro":
        forms = untied_rows(*flat)

    def pairs(x: np.ndarray, y: np.ndarray, z: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
        means = input_untied_swap_means(x, y, z, method=kw["method"], min_pairs=kw["min_pairs"])

        def deltas(m: np.ndarray) -> np.ndarray:
            mx, my = means(m)
            return mx - my

        return deltas

    rows = _by_rows(flat, forms, pairs, other)
    return lambda m: _with_missing(rows(m).reshape(lead + (m.shape[0],)), missing)


def _by_rows(flat: list[np.ndarray], keep: np.ndarray, first: Callable[..., Callable[[np.ndarray], np.ndarray]],
             second: Callable[..., Callable[[np.ndarray], np.ndarray]]) -> Callable[[np.ndarray], np.ndarray]:
    """``deltas(m) -> (R, B)``: the rows ``keep`` of the (R, S, I) arrays ``flat`` by ``first(x, y, z)``, the
    others by ``second``."""
    def rows(which: np.ndarray) -> list[np.ndarray]:
        return flat if which.all() else [a[which] for a in flat]

    one = first(*rows(keep)) if keep.any() else None
    other = second(*rows(~keep)) if not keep.all() else None

    def deltas(m: np.ndarray) -> np.ndarray:
        if other is None and one is not None:
            return one(m)
        out = np.empty((keep.size, m.shape[0]))
        if other is not None:
            out[~keep] = other(m)
        if one is not None:
            out[keep] = one(m)
        return out

    return deltas


def _with_missing(delta: np.ndarray, missing: np.ndarray | None) -> np.ndarray:
    """NaN for the rows where ``skipna=False`` and a cell is missing (``missing`` (..., 1) or None)."""
    return delta if missing is None else np.where(missing, np.nan, delta)


def _within_deltas(zx: np.ndarray, zy: np.ndarray, z: np.ndarray, kw: Mapping[str, Any],
                   missing: np.ndarray | None, transposed: bool = False) -> Callable[[np.ndarray], np.ndarray]:
    """Within-system level: the mask-linear (Pearson) or sorted-table (Kendall) kernel of
    :mod:`xcorrstat._kernels.swap`, every average and any missing cells. ``transposed``: the input level,
    as the within-system level of the (input, system) matrices (each input a group of systems)."""
    lead = zx.shape[:-2]
    flat = [a.reshape((-1,) + a.shape[-2:]) for a in np.broadcast_arrays(zx, zy, z)]
    if transposed:
        flat = [np.ascontiguousarray(np.swapaxes(a, -1, -2)) for a in flat]
    fast = prepare_within_swap(*flat, method=kw["method"], min_pairs=kw["min_pairs"], variant=kw["variant"],
                               average=kw.get("average", "macro"))

    def deltas(m: np.ndarray) -> np.ndarray:
        d = fast(np.swapaxes(m, -1, -2) if transposed else m)
        return _with_missing(d.reshape(lead + (m.shape[0],)), missing)

    return deltas


def _materialised(zx: np.ndarray, zy: np.ndarray, z: np.ndarray, kw: Mapping[str, Any],
                  missing: np.ndarray | None) -> Callable[[np.ndarray], np.ndarray]:
    """Any level and method: the level kernels on the explicitly swapped (standardised) matrices,
    a block of rows and draws at a time within :func:`~.memory.block_elems` (the tests' oracle)."""
    lead = zx.shape[:-2]
    rows = int(np.prod(lead, dtype=np.int64))
    flat = [a.reshape((rows,) + a.shape[-2:]) for a in np.broadcast_arrays(zx, zy, z)]
    cells = int(np.prod(zx.shape[-2:], dtype=np.int64))

    def materialised(m: np.ndarray) -> np.ndarray:
        # the swapped matrices of a block of rows and draws at a time: within the block budget
        b = m.shape[0]
        row_step, draw_step = materialised_steps(rows, cells)
        delta = np.empty((rows, b))
        for r0 in range(0, rows, row_step):
            xs, ys, zs = (a[r0:r0 + row_step, None] for a in flat)
            for b0 in range(0, b, draw_step):
                mb = m[b0:b0 + draw_step]
                xp, yp = np.where(mb, ys, xs), np.where(mb, xs, ys)
                zb = np.broadcast_to(zs, xp.shape)
                delta[r0:r0 + row_step, b0:b0 + draw_step] = (level_correlation(xp, zb, **kw)[0]
                                                              - level_correlation(yp, zb, **kw)[0])
                del xp, yp, zb
        return _with_missing(delta.reshape(lead + (b,)), missing)

    return materialised
