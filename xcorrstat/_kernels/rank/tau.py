"""Vectorised Kendall tau kernels in NumPy, and the formula of every variant from pair counts.

:func:`xcorrstat._kernels.correlation.kendall` counts the pairs with the compiled loop of
:mod:`.tau_counts`; the two NumPy kernels here are the forms it is tested against, bit for bit
(``tests/test_tau_counts.py``). Both kernels take broadcast arrays ``x``, ``z`` of shape ``(..., n)`` and a boolean
``valid`` mask of the same shape, and return tau over the leading shape; the caller
applies the undefined-statistic rule. Counts are exact integers, so both kernels give
the same values as :func:`scipy.stats.kendalltau` on the valid pairs.

With ``tot = n(n-1)/2`` valid pairs, ``tx``/``tz`` pairs tied in x/z and ``txz`` pairs
tied in both, ``C - D = tot - tx - tz + txz - 2 D``. Then
``tau_b = (C - D) / sqrt((tot - tx)(tot - tz))`` and
``tau_c = 2 (C - D) / (n^2 (m - 1) / m)`` with ``m`` the smaller number of distinct
values of x and z.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..._types import Variant
from .merge_count import inversions

__all__ = ["PerRow", "count_distinct", "kendall_pairwise", "kendall_sorted", "tau_from_counts"]

#: A count or a statistic per row: an array over the leading axes, or a NumPy scalar for one 1-D row.
PerRow = np.ndarray | np.number[Any]

# bound on the temporaries of one block of the pair kernel (elements)
_PAIR_BLOCK_ELEMS = 1 << 22


def tau_from_counts(
    con_minus_dis: ArrayLike,
    tot: PerRow,
    tx: PerRow,
    tz: PerRow,
    n: PerRow,
    m: PerRow | None,
    variant: Variant,
    txz: ArrayLike | None = None,
) -> PerRow:
    """A Kendall variant from pair counts (all arrays of the same shape).

    ``tx``/``tz`` count the pairs tied in x/z (joint ties included) and ``txz`` the
    pairs tied in both (needed by ``"23"`` and ``"acc23"``). ``"a"``: (C - D) / N;
    ``"23"``: tau_eq = (C + T_xz - D - T_x_only - T_z_only) / N; ``"acc23"``: acc_eq =
    (C + T_xz) / N, with ``C = (N - tx - tz + txz + (C - D)) / 2``. ``m`` (the smaller
    number of distinct values) is needed by ``"c"`` only.

    Examples
    --------
    >>> tau = tau_from_counts(4, np.array(6), np.array(0), np.array(0), np.array(4), None, "b")
    >>> round(float(tau), 4)  # 5 concordant and 1 discordant pair of 4 items
    0.6667
    """
    con_minus_dis = np.asarray(con_minus_dis, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        if variant in ("a", "23", "acc23"):
            total = np.asarray(tot, dtype=np.float64)
            if variant == "a":
                return con_minus_dis / total
            txz = np.asarray(txz, dtype=np.float64)
            if variant == "23":
                return (con_minus_dis + 3.0 * txz - tx - tz) / total
            return ((total - tx - tz + txz + con_minus_dis) / 2.0 + txz) / total
        if variant == "b":
            return con_minus_dis / np.sqrt((tot - tx).astype(np.float64)) / np.sqrt(
                (tot - tz).astype(np.float64)
            )
        if m is None:
            raise ValueError("tau-c needs m, the smaller number of distinct values")
        mf = m.astype(np.float64)
        nf = n.astype(np.float64)
        return 2.0 * con_minus_dis / (nf * nf * (mf - 1.0) / mf)


def count_distinct(a: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Number of distinct values of ``a`` among the valid entries of each row.

    Examples
    --------
    >>> count_distinct(np.array([[1.0, 1.0, 2.0, 3.0]]), np.array([[True, True, True, False]])).tolist()
    [2]
    """
    s = np.sort(np.where(valid, a, np.nan), axis=-1)  # NaN last
    new = np.ones(s.shape, dtype=bool)
    new[..., 1:] = s[..., 1:] != s[..., :-1]
    return np.sum(new & ~np.isnan(s), axis=-1)


def _pair_block(x: np.ndarray, z: np.ndarray, valid: np.ndarray, variant: Variant, epsilon: float = 0.0) -> PerRow:
    """Tau of each row from all its pair signs at once."""
    length = x.shape[-1]
    i, j = np.triu_indices(length, 1)
    with np.errstate(invalid="ignore"):
        dx = x[..., i] - x[..., j]
        dz = z[..., i] - z[..., j]
    pv = valid[..., i] & valid[..., j]
    tie_x = np.abs(dx) <= epsilon  # epsilon = 0: exact ties
    sx = ((dx > 0).astype(np.int8) - (dx < 0).astype(np.int8)) * ~tie_x
    sz = (dz > 0).astype(np.int8) - (dz < 0).astype(np.int8)
    cmd = np.sum(sx * sz, axis=-1, where=pv, dtype=np.int64)  # C - D
    tx = np.sum(tie_x & pv, axis=-1, dtype=np.int64)
    tz = np.sum((dz == 0) & pv, axis=-1, dtype=np.int64)
    txz = np.sum(tie_x & (dz == 0) & pv, axis=-1, dtype=np.int64)
    n = valid.sum(axis=-1, dtype=np.int64)
    tot = n * (n - 1) // 2
    m = None
    if variant == "c":
        m = np.minimum(count_distinct(x, valid), count_distinct(z, valid))
    return tau_from_counts(cmd, tot, tx, tz, n, m, variant, txz)


def kendall_pairwise(
    x: np.ndarray, z: np.ndarray, valid: np.ndarray, *, variant: Variant = "b", epsilon: float = 0.0
) -> PerRow:
    """Tau from all pair signs: O(n^2) per row, vectorised over rows (short vectors).

    ``epsilon`` turns differences of x with ``|dx| <= epsilon`` into ties.

    Examples
    --------
    >>> x = np.array([[1.0, 2.0, 3.0, 4.0]]); z = np.array([[1.0, 3.0, 2.0, 4.0]])
    >>> kendall_pairwise(x, z, np.ones(x.shape, dtype=bool)).round(4).tolist()
    [0.6667]
    """
    lead = x.shape[:-1]
    length = x.shape[-1]
    rows = int(np.prod(lead, dtype=np.int64))
    pairs = max(length * (length - 1) // 2, 1)
    if rows * pairs <= _PAIR_BLOCK_ELEMS:
        return _pair_block(x, z, valid, variant, epsilon)
    xf = np.broadcast_to(x, x.shape).reshape(rows, length)
    zf = np.broadcast_to(z, z.shape).reshape(rows, length)
    vf = valid.reshape(rows, length)
    out = np.empty(rows, dtype=np.float64)
    step = max(_PAIR_BLOCK_ELEMS // pairs, 1)
    for start in range(0, rows, step):  # memory blocks, not one per metric
        stop = min(start + step, rows)
        out[start:stop] = _pair_block(xf[start:stop], zf[start:stop], vf[start:stop], variant, epsilon)
    return out.reshape(lead)


def _dense_ranks(a: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """0-based dense ranks of the valid entries per row; invalid entries get rank n."""
    length = a.shape[-1]
    order = np.argsort(np.where(valid, a, np.nan), axis=-1, kind="stable")
    s = np.take_along_axis(a, order, axis=-1)
    sv = np.take_along_axis(valid, order, axis=-1)
    new = np.zeros(s.shape, dtype=np.int64)
    new[..., 1:] = s[..., 1:] != s[..., :-1]
    dense = np.cumsum(new, axis=-1)
    dense = np.where(sv, dense, length)
    ranks = np.empty_like(dense)
    np.put_along_axis(ranks, order, dense, axis=-1)
    return ranks


def _tied_pairs(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Number of pairs with equal key per row, counting only keys below the row's sentinel.

    ``keys`` are non-negative integers; the invalid entries carry the row maximum
    sentinel and are excluded by the caller through ``n``.
    """
    s = np.sort(keys, axis=-1)
    idx = np.broadcast_to(np.arange(s.shape[-1]), s.shape)
    start = np.zeros(s.shape, dtype=np.int64)
    start[..., 1:] = np.where(s[..., 1:] != s[..., :-1], idx[..., 1:], 0)
    start = np.maximum.accumulate(start, axis=-1)
    return idx - start, s


def _ties(keys: np.ndarray, n: np.ndarray) -> PerRow:
    """Pairs with equal key per row among the first ``n`` sorted keys."""
    within, _ = _tied_pairs(keys)
    pos = np.arange(keys.shape[-1])
    return np.sum(np.where(pos < n[..., None], within, 0), axis=-1, dtype=np.int64)


def kendall_sorted(x: np.ndarray, z: np.ndarray, valid: np.ndarray, *, variant: Variant = "b") -> np.ndarray:
    """Tau by sorting and merge-counting discordant pairs (compiled: :mod:`.merge_count`): O(n log n) per row.

    Examples
    --------
    >>> x = np.array([[1.0, 2.0, 3.0, 4.0]]); z = np.array([[1.0, 3.0, 2.0, 4.0]])
    >>> kendall_sorted(x, z, np.ones(x.shape, dtype=bool)).round(4).tolist()
    [0.6667]
    """
    lead = x.shape[:-1]
    length = x.shape[-1]
    rows = int(np.prod(lead, dtype=np.int64))
    xf = np.ascontiguousarray(np.broadcast_to(x, x.shape)).reshape(rows, length)
    zf = np.ascontiguousarray(np.broadcast_to(z, z.shape)).reshape(rows, length)
    vf = valid.reshape(rows, length)
    n = vf.sum(axis=-1, dtype=np.int64)
    rx = _dense_ranks(xf, vf)
    rz = _dense_ranks(zf, vf)
    span = length + 1
    # order by z, ties broken by x ascending: pairs tied in z are never inversions
    order = np.argsort(rz * span + rx, axis=-1, kind="stable")
    dis = inversions(np.take_along_axis(rx, order, axis=-1))
    tx = _ties(rx, n)
    tz = _ties(rz, n)
    txz = _ties(rx * span + rz, n)
    tot = n * (n - 1) // 2
    cmd = tot - tx - tz + txz - 2 * dis
    m = None
    if variant == "c":
        m = np.minimum(rx.max(axis=-1, where=vf, initial=-1), rz.max(axis=-1, where=vf, initial=-1)) + 1
    return tau_from_counts(cmd, tot, tx, tz, n, m, variant, txz).reshape(lead)
