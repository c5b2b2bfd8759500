"""Level correlations of a batch of bootstrap draws, as array algebra.

A draw resamples systems (indices ``sys_idx``, counts ``w``), inputs (``inp_idx``,
counts ``c``) or both. Every value returned equals
:func:`xcorrstat._kernels.level_correlation` on the explicitly expanded matrices
``x[..., sys_idx[b]][..., inp_idx[b]]``:

* system level: per-system means under input counts are one matmul
  (``X C^T / sum c``); the correlation across systems uses system weights (rank statistics over
  many systems by sorting each draw's means, :mod:`xcorrstat._kernels.rank.sorted_counts`);
* input level: per-input correlations are fixed (inputs only) or computed for all
  weight vectors at once (:func:`wpearson_rows`, :func:`wkendall_rows`; Spearman, and Kendall over
  many systems, each row sorted once and its weighted mid-ranks or counts taken per draw, as the
  global level's); the average over inputs is weighted by the input counts;
* global level: every statistic takes the draw's cell weights ``w_s c_i`` over the valid
  cells, found (and sorted) once: Kendall's tau over one sorted table of the cells
  (:func:`xcorrstat._kernels.rank.global_counts.weighted_global_kendall`), Pearson and Spearman
  by weighted sums and weighted midranks
  (:func:`xcorrstat._kernels.linear.global_corr.weighted_global_corr`); O(S I) per draw, no gather.

:func:`resampled_calibration` re-calibrates the metric-tie threshold of acc_eq /
tau_eq in every draw: at input and within-system level from one sorted pair table per
metric and the draws' count vectors (:mod:`xcorrstat._kernels.mt.tie_sweeps`), at system level
on the draw's per-system means.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._types import Average, Level, Method, Variant
from .._kernels.custom import is_own
from .._kernels.correlation import EPSILON_MAX_N, corr
from .._kernels.exactsum import exact_weighted_sums
from .._kernels.linear.global_corr import GlobalCells, global_cells, weighted_global_corr
from .._kernels.rank.global_counts import CellTable, cell_tables, weighted_global_kendall
from .._kernels.levels import group_weights, level_correlation, value_range
from .._kernels.scaling import centre_cells, pow2_normalise
from .._kernels.mt.tie_sweeps import row_calibration, sorted_pairs, weighted_calibration
from .._kernels.weighted import DISTINCT_PAIR_VARIANTS, wcorr
from .._kernels.rank.weighted_rows import wkendall_rows
from .._kernels.linear.weighted_rows import wpearson_rows
from .._kernels.rank.sorted_counts import sorted_form
from .draws import counts_from_indices

__all__ = [
    "resampled_level_correlation",
    "resampled_calibration",
    "calibration_table",
    "global_tables",
]

def _stacked(x: ArrayLike, z: ArrayLike) -> tuple[np.ndarray, np.ndarray, tuple[int, ...]]:
    x = np.asarray(x, dtype=np.float64)
    z = np.asarray(z, dtype=np.float64)
    x, z = np.broadcast_arrays(x, z)
    lead = x.shape[:-2]
    s, i = x.shape[-2:]
    return x.reshape(-1, s, i), z.reshape(-1, s, i), lead


def _n_draws(sys_idx: np.ndarray | None, inp_idx: np.ndarray | None, caller: str) -> int:
    """The draws of a batch: the rows of the drawn system or input indices (at least one is given)."""
    drawn = sys_idx if sys_idx is not None else inp_idx
    if drawn is None:
        raise ValueError(f"{caller} needs sys_idx or inp_idx")
    return int(drawn.shape[0])


def _weighted_means(x: np.ndarray, z: np.ndarray, valid: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-system means (M, S, B) over inputs weighted by counts c (B, I) or (M, B, I)."""
    ct = np.swapaxes(c, -1, -2).astype(np.float64)
    cnt = valid.astype(np.float64) @ ct  # integers: exact
    with np.errstate(invalid="ignore", divide="ignore"):
        # exact sums: a draw's means (and ties between them) do not depend on the batch
        mx = exact_weighted_sums(np.where(valid, x, 0.0), c) / cnt
        mz = exact_weighted_sums(np.where(valid, z, 0.0), c) / cnt
    # within each system's range: equal scores give exactly that mean (a constant metric stays undefined)
    (lx, hx), (lz, hz) = value_range(x, valid), value_range(z, valid)
    mx, mz = np.clip(mx, lx[..., None], hx[..., None]), np.clip(mz, lz[..., None], hz[..., None])
    return np.where(cnt > 0, mx, np.nan), np.where(cnt > 0, mz, np.nan)


def _system_level(x: np.ndarray, z: np.ndarray, w: np.ndarray, c: np.ndarray | None, kw: dict[str, Any],
                  complete_inputs: bool) -> tuple[np.ndarray, np.ndarray]:
    valid = ~np.isnan(x) & ~np.isnan(z)
    s = x.shape[-2]
    if complete_inputs:
        # an input is complete when every *drawn* system has both scores there
        missing = (~valid).astype(np.float64)  # (M, S, I)
        incomplete = np.einsum("bs,msi->mbi", (w > 0).astype(np.float64), missing)
        c = (c if c is not None else np.ones((w.shape[0], x.shape[-1])))[None] * (incomplete == 0)
        mx, mz = _weighted_means(x, z, valid, c)  # (M, S, B)
        return wcorr(np.swapaxes(mx, -1, -2), np.swapaxes(mz, -1, -2), w[None, :, :], **kw)
    if c is None:
        count = valid.sum(axis=-1)
        with np.errstate(invalid="ignore", divide="ignore"):
            mx = np.where(count > 0, np.clip(np.sum(x, axis=-1, where=valid) / count, *value_range(x, valid)), np.nan)
            mz = np.where(count > 0, np.clip(np.sum(z, axis=-1, where=valid) / count, *value_range(z, valid)), np.nan)
        if kw["method"] == "kendall" and sorted_form(s):  # Kendall over many systems: each draw's means sorted
            return wcorr(mx[:, None, :], mz[:, None, :], w[None, :, :], **kw)
        return _rows_under_draws(mx, mz, w, kw)  # Spearman: each metric's means sorted once, for every draw
    mx, mz = _weighted_means(x, z, valid, c)  # (M, S, B)
    return wcorr(np.swapaxes(mx, -1, -2), np.swapaxes(mz, -1, -2), w[None, :, :], **kw)


def _rows_as_cells(x: np.ndarray, z: np.ndarray, w: np.ndarray,
                   kw: dict[str, Any]) -> tuple[np.ndarray, np.ndarray] | None:
    """Fixed rows (R, S) under B weight vectors (B, S), each row a one-system table of cells:
    its valid units found and sorted once, then O(S) (Spearman's weighted midranks) or O(S log S)
    (Kendall's counts) per draw, by the global level's kernels (the variants that compare distinct
    units only count the pairs of copies of distinct units, as the pair form); None where they do not apply."""
    if kw["method"] == "spearman":
        return weighted_global_corr(x[:, None, :], z[:, None, :], None, w, method="spearman",
                                    min_pairs=kw["min_pairs"])
    if kw["method"] == "kendall" and _weighted_kendall_covers(kw["variant"], kw["epsilon"], x.shape[-1]):
        return weighted_global_kendall(x[:, None, :], z[:, None, :], None, w, variant=kw["variant"],
                                       min_pairs=kw["min_pairs"], epsilon=kw["epsilon"],
                                       distinct=kw["variant"] in DISTINCT_PAIR_VARIANTS)
    return None


def _rows_under_draws(x: np.ndarray, z: np.ndarray, w: np.ndarray, kw: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """Fixed rows (R, S) under B weight vectors (B, S): Pearson and Kendall of short rows draw by draw
    (:func:`wpearson_rows`, :func:`wkendall_rows`); Spearman at any length, and Kendall of long rows (the
    row length alone decides: :func:`sorted_form`), by sorting each row once (:func:`_rows_as_cells`):
    O(S) a draw for Spearman's weighted mid-ranks, where the pair form costs O(S**2) (40 to 50 times the
    time at 3 to 64 units)."""
    if kw["method"] == "spearman" or (kw["method"] == "kendall" and sorted_form(x.shape[-1])):
        by_cells = _rows_as_cells(x, z, w, kw)
        if by_cells is not None:
            return by_cells
    if kw["method"] == "pearson":
        return wpearson_rows(x, z, w, min_pairs=kw["min_pairs"])
    if kw["method"] == "kendall":
        return wkendall_rows(x, z, w, variant=kw["variant"], min_pairs=kw["min_pairs"], epsilon=kw["epsilon"])
    raise ValueError(f"method must be pearson, spearman or kendall, got {kw['method']!r}")


def _input_level(x: np.ndarray, z: np.ndarray, w: np.ndarray | None, c: np.ndarray, kw: dict[str, Any],
                 average: Average = "macro") -> tuple[np.ndarray, np.ndarray]:
    """Groups along the last axis (inputs, counts ``c``), items along axis -2 (systems,
    weights ``w`` or fixed); ``average="weighted"`` weights each group by its valid items,
    ``"pairs"`` by their pairs (see :func:`~xcorrstat._kernels.levels.group_weights`)."""
    m, s, i = x.shape
    # contiguous rows: NumPy sums a strided row in another order, and with one metric in the
    # block the reshape would be a strided view (a draw's value would depend on the block)
    xt = np.ascontiguousarray(np.swapaxes(x, -1, -2).reshape(m * i, s))
    zt = np.ascontiguousarray(np.swapaxes(z, -1, -2).reshape(m * i, s))
    if w is None:
        r_in, n_in = corr(xt, zt, **kw)  # fixed per-input correlations
        r_in = r_in.reshape(m, i)
        defined = ~np.isnan(r_in)
        fixed = group_weights(n_in.reshape(m, i), average)
        size: np.ndarray | float = 1.0 if fixed is None else fixed
        # same bits whatever the batch
        num = exact_weighted_sums(np.where(defined, r_in * size, 0.0), c)
        den = np.where(defined, size, 0.0) @ c.T
        count = defined.astype(np.float64) @ c.T
    else:
        r_in, n_in = _rows_under_draws(xt, zt, w, kw)  # (M*I, B)
        r_in = r_in.reshape(m, i, -1)
        defined = ~np.isnan(r_in)
        drawn = group_weights(n_in.reshape(m, i, -1), average)
        size = np.ones(r_in.shape) if drawn is None else drawn
        size = np.where(defined, size, 0.0)
        # (M, B, I) contiguous rows: each draw's sum over inputs is reduced the same way in any batch
        weighted = np.ascontiguousarray(np.moveaxis(np.where(defined, r_in * size, 0.0), 1, 2)) * c[None]
        num = weighted.sum(axis=-1)
        den = np.einsum("mib,bi->mb", size, c)
        count = np.einsum("mib,bi->mb", defined.astype(np.float64), c)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = num / den
    return np.where(den > 0, r, np.nan), count.astype(np.int64)


def _weighted_kendall_covers(variant: object, epsilon: float, cells: int) -> bool:
    """Whether global-level Kendall draws take the weighted table route (tau-c has no epsilon, and
    epsilon ties are for at most ``EPSILON_MAX_N`` cells: the plain kernel raises those errors)."""
    return not epsilon or (variant != "c" and cells <= EPSILON_MAX_N)


#: What global-level draws reuse across batches (:func:`global_tables`)
Tables = list[CellTable] | GlobalCells


def global_tables(x: ArrayLike, z: ArrayLike, *, level: Level, method: Method, variant: Variant = "b",
                  epsilon: float = 0.0, **options: Any) -> Tables | None:
    """The valid cells (sorted where needed) that global-level draws reuse (pass them to
    :func:`resampled_level_correlation` as ``tables`` for every batch of the same scores);
    None for other levels and methods. Takes the keywords of :func:`resampled_level_correlation`.

    Examples
    --------
    >>> x = np.arange(6.0).reshape(2, 3)
    >>> len(global_tables(x, x, level="global", method="kendall")), global_tables(x, x, level="input", method="kendall")
    (1, None)
    """
    del options  # the other keywords of resampled_level_correlation do not change the tables
    if level != "global" or is_own(method):
        return None
    xf, zf, _ = _stacked(x, z)
    if method in ("pearson", "spearman"):
        return global_cells(xf, zf, ranked=method == "spearman")
    if method != "kendall" or not _weighted_kendall_covers(variant, epsilon, xf[0].size):
        return None
    return cell_tables(xf, zf, epsilon=float(epsilon))


def _global_level(x: np.ndarray, z: np.ndarray, sys_idx: np.ndarray | None, inp_idx: np.ndarray | None,
                  b: int, kw: dict[str, Any], tables: Tables | None) -> tuple[np.ndarray, np.ndarray]:
    m, s, i = x.shape
    w = counts_from_indices(sys_idx, s) if sys_idx is not None else None
    c = counts_from_indices(inp_idx, i) if inp_idx is not None else None
    if kw["method"] in ("pearson", "spearman"):
        # cells keep their scores, only their multiplicities w_s c_i change: weighted sums and ranks
        return weighted_global_corr(x, z, w, c, method=kw["method"], min_pairs=kw["min_pairs"],
                                    cells=tables if isinstance(tables, GlobalCells) else None)
    if kw["method"] == "kendall" and _weighted_kendall_covers(kw["variant"], kw["epsilon"], s * i):
        # one sort per metric (once per block when the tables are given)
        return weighted_global_kendall(x, z, w, c, variant=kw["variant"], min_pairs=kw["min_pairs"],
                                       epsilon=kw["epsilon"], tables=tables if isinstance(tables, list) else None)
    sys_idx = sys_idx if sys_idx is not None else np.broadcast_to(np.arange(s), (b, s))
    inp_idx = inp_idx if inp_idx is not None else np.broadcast_to(np.arange(i), (b, i))
    cells = (sys_idx[:, :, None] * i + inp_idx[:, None, :]).reshape(sys_idx.shape[0], -1)  # (B, S*I)
    xf = np.ascontiguousarray(x.reshape(m, s * i)[:, cells])  # (M, B, S*I), rows contiguous
    zf = np.ascontiguousarray(z.reshape(m, s * i)[:, cells])
    return corr(xf, zf, **kw)


def _expanded_level(x: ArrayLike, z: ArrayLike, sys_idx: np.ndarray | None, inp_idx: np.ndarray | None, *,
                    skipna: bool, **kw: Any) -> tuple[np.ndarray, np.ndarray]:
    """A function of one's own has no count-weighted form: the level statistic of each expanded
    resample ``x[..., sys_idx[b], :][..., inp_idx[b]]`` (B at once), as (..., B)."""
    ax, az = np.asarray(x, dtype=np.float64), np.asarray(z, dtype=np.float64)
    s, i = ax.shape[-2:]
    b = _n_draws(sys_idx, inp_idx, "resampled_level_correlation")
    rows = (sys_idx if sys_idx is not None else np.broadcast_to(np.arange(s), (b, s)))[:, :, None]
    cols = (inp_idx if inp_idx is not None else np.broadcast_to(np.arange(i), (b, i)))[:, None, :]
    cells = (rows * i + cols).reshape(b, s * i)

    def expanded(a: np.ndarray) -> np.ndarray:  # (..., B, S, I) in order: one gather, no copy to reshape it
        lead = a.shape[:-2]
        return np.take(a.reshape(lead + (s * i,)), cells, axis=-1).reshape(lead + (b, s, i))

    r, n = level_correlation(expanded(ax), expanded(az), **kw)  # (..., B, S, I) -> (..., B); z once, not per metric
    if not skipna:  # as the built-in coefficients: a missing cell anywhere in the data
        missing = np.asarray(np.isnan(ax).any(axis=(-2, -1)) | np.isnan(az).any(axis=(-2, -1)))
        r = np.where(missing[..., None], np.nan, r)
    return r, n


def _own_system_level(x: ArrayLike, z: ArrayLike, sys_idx: np.ndarray | None, inp_idx: np.ndarray | None, *,
                      skipna: bool, min_pairs: int, method: Any) -> tuple[np.ndarray, np.ndarray]:
    """A function of one's own at system level sees the drawn systems' means only: each draw's per-system
    means over its drawn inputs (count-weighted exact sums, as the coefficients take them), the drawn
    systems' rows gathered from them (S values a draw, not the expanded matrix), then ``f`` on them
    (:func:`level_correlation` of one-input matrices, whose system means are those values)."""
    ax, az, lead = _stacked(x, z)
    s, i = ax.shape[-2:]
    b = _n_draws(sys_idx, inp_idx, "resampled_level_correlation")
    c = counts_from_indices(inp_idx, i).astype(np.float64) if inp_idx is not None else np.ones((b, i))
    valid = ~np.isnan(ax) & ~np.isnan(az)  # the raw scores: f need not be scale-invariant
    mx, mz = _weighted_means(ax, az, valid, c)  # (M, S, B)
    rows = sys_idx if sys_idx is not None else np.broadcast_to(np.arange(s), (b, s))  # (B, S)
    gx = np.take_along_axis(np.swapaxes(mx, 1, 2), rows[None], axis=-1)[..., None]  # (M, B, S, 1)
    gz = np.take_along_axis(np.swapaxes(mz, 1, 2), rows[None], axis=-1)[..., None]
    r, n = level_correlation(gx, gz, level="system", method=method, min_pairs=min_pairs)  # (M, B)
    if not skipna:  # as the built-in coefficients: a missing cell anywhere in the data
        missing = np.isnan(ax).any(axis=(-2, -1)) | np.isnan(az).any(axis=(-2, -1))
        r = np.where(missing[:, None], np.nan, r)
    return r.reshape(lead + (b,)), np.asarray(n, dtype=np.int64).reshape(lead + (b,))


def resampled_level_correlation(
    x: ArrayLike,
    z: ArrayLike,
    *,
    level: Level,
    method: Method,
    variant: Variant = "b",
    sys_idx: np.ndarray | None = None,
    inp_idx: np.ndarray | None = None,
    min_pairs: int = 3,
    complete_inputs: bool = False,
    skipna: bool = True,
    epsilon: float = 0.0,
    average: Average = "macro",
    tables: Tables | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Level correlation of every draw in a batch.

    Parameters
    ----------
    x, z : array_like (..., S, I)
        Scores; leading axes broadcast.
    level : {"system", "input", "global", "within_system"}
        Within-system level is input level with the roles of the dims swapped: each
        drawn system's correlation across its drawn inputs, averaged over the systems.
    method : {"pearson", "spearman", "kendall"}
    variant : {"b", "c", "a", "23", "acc23"}
        Kendall's variant.
    epsilon : float
        Kendall: metric differences of at most epsilon are ties.
    sys_idx : ndarray (B, S) of int, optional
        Drawn system indices; ``None`` keeps the systems fixed.
    inp_idx : ndarray (B, I) of int, optional
        Drawn input indices; ``None`` keeps the inputs fixed. At least one of the
        two must be given (it sets B).
    min_pairs, complete_inputs, skipna, average
        As in :func:`xcorrstat._kernels.level_correlation`.
    tables : list, optional
        :func:`global_tables` of the same scores and options: global-level draws then
        find and sort the cells once for many batches.

    Returns
    -------
    r, n : ndarray (..., B)
        Statistic and units used for every draw, equal to the plain level
        correlation of the expanded resample (with ``skipna=False``, every draw is
        NaN when the data -- not only the resample -- has a missing cell).
    """
    if is_own(method) and level == "system" and not complete_inputs and (sys_idx is not None or inp_idx is not None):
        return _own_system_level(x, z, sys_idx, inp_idx, skipna=skipna, min_pairs=min_pairs, method=method)
    if is_own(method):
        return _expanded_level(x, z, sys_idx, inp_idx, level=level, method=method, min_pairs=min_pairs,
                               complete_inputs=complete_inputs, skipna=skipna, average=average)
    x, z, lead = _stacked(x, z)
    m, s, i = x.shape
    b = _n_draws(sys_idx, inp_idx, "resampled_level_correlation")
    w = counts_from_indices(sys_idx, s).astype(np.float64) if sys_idx is not None else None
    c = counts_from_indices(inp_idx, i).astype(np.float64) if inp_idx is not None else None
    kw: dict[str, Any] = dict(method=method, variant=variant, min_pairs=min_pairs, epsilon=float(epsilon))
    if level == "system":
        if method == "pearson":  # shift-invariant: centre so a large offset never rounds the means
            x, z = centre_cells(x), centre_cells(z)
        else:  # exact, and only for extreme matrices: no count-weighted mean overflows
            x, z = pow2_normalise(x, axis=(-2, -1)), pow2_normalise(z, axis=(-2, -1))
        r, n = _system_level(x, z, w if w is not None else np.ones((b, s)), c, kw, complete_inputs)
    elif level == "input":
        r, n = _input_level(x, z, w, c if c is not None else np.ones((b, i)), kw, average)
    elif level == "within_system":
        # groups are the systems (counts w), items the inputs (weights c)
        r, n = _input_level(np.swapaxes(x, -1, -2), np.swapaxes(z, -1, -2), c,
                            w if w is not None else np.ones((b, s)), kw, average)
    elif level == "global":
        r, n = _global_level(x, z, sys_idx, inp_idx, b, kw, tables)
    else:
        raise ValueError(f"level must be system, input, global or within_system, got {level!r}")
    r = np.asarray(r, dtype=np.float64).reshape(m, b)
    n = np.asarray(n, dtype=np.int64).reshape(m, b)
    if not skipna:
        missing = np.isnan(x).any(axis=(-2, -1)) | np.isnan(z).any(axis=(-2, -1))
        r = np.where(missing[:, None], np.nan, r)
    return r.reshape(lead + (b,)), n.reshape(lead + (b,))


def calibration_table(x: ArrayLike, z: ArrayLike, *, level: Level) -> dict[str, np.ndarray] | None:
    """The sorted pair table :func:`resampled_calibration` needs at input level (None at system
    level, whose pairs change with every draw's means)."""
    if level == "system":
        return None
    x, z, _ = _stacked(x, z)
    return _pair_table(x, z, level)


def _pair_table(x: np.ndarray, z: np.ndarray, level: Level) -> dict[str, np.ndarray]:
    """The sorted pairs of (M, S, I) scores: the systems of each input at input level,
    the inputs of each system otherwise."""
    return sorted_pairs(*((np.swapaxes(x, -1, -2), np.swapaxes(z, -1, -2)) if level == "input" else (x, z)))


def resampled_calibration(
    x: ArrayLike,
    z: ArrayLike,
    *,
    level: Level,
    variant: Variant = "acc23",
    sys_idx: np.ndarray | None = None,
    inp_idx: np.ndarray | None = None,
    table: dict[str, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Tie calibration re-done in every draw of a batch: the acc_eq (tau_eq) optimum of each.

    Parameters
    ----------
    x, z : array_like (..., S, I)
        Scores; leading axes broadcast.
    level : {"input", "within_system", "system"}
        Groups as in :func:`xcorrstat.calibrate_ties`: the systems of each input (one
        epsilon shared by all inputs), the inputs of each system, or the per-system means. The pairs of a draw are
        pairs of distinct drawn systems (two copies of one system are not compared).
    variant : {"acc23", "23"}
    sys_idx, inp_idx : ndarray (B, S), (B, I) of int, optional
        Drawn indices (at least one).
    table : dict, optional
        :func:`calibration_table` of the data, to sort the pairs once for many batches.

    Returns
    -------
    r, n, epsilon : ndarray (..., B)
        The objective at the draw's optimal threshold, the drawn groups with a pair
        (inputs counted with multiplicity; at system level the drawn systems), and the
        threshold; equal to :func:`xcorrstat.calibrate_ties` on the expanded resample
        with the pairs of copies of one system left out.
    """
    x, z, lead = _stacked(x, z)
    m, s, i = x.shape
    b = _n_draws(sys_idx, inp_idx, "resampled_calibration")
    if level in ("input", "within_system"):
        w = counts_from_indices(sys_idx, s) if sys_idx is not None else np.ones((b, s))
        c = counts_from_indices(inp_idx, i) if inp_idx is not None else np.ones((b, i))
        if table is None:
            table = _pair_table(x, z, level)
        # input level: groups are inputs, items systems; within-system level the other way round
        items, groups = (w, c) if level == "input" else (c, w)
        eps, r, n = weighted_calibration(table, items, groups, variant=variant)
    elif level == "system":
        valid = ~np.isnan(x) & ~np.isnan(z)
        c = counts_from_indices(inp_idx, i).astype(np.float64) if inp_idx is not None else np.ones((b, i))
        mx, mz = _weighted_means(x, z, valid, c)  # (M, S, B)
        w = counts_from_indices(sys_idx, s) if sys_idx is not None else np.ones((b, s))
        eps, r, n = row_calibration(np.swapaxes(mx, -1, -2), np.swapaxes(mz, -1, -2), w[None], variant=variant)
    else:
        raise ValueError(f"re-calibrating epsilon in every draw is supported at level system, input or within_system, "
                         f"got {level!r}")
    shape = lead + (b,)
    return (np.asarray(r, np.float64).reshape(shape), np.asarray(n).astype(np.int64).reshape(shape),
            np.asarray(eps, np.float64).reshape(shape))
