"""Correlations with multiplicity weights: a bootstrap draw as a count vector.

Resampling systems with replacement gives each system a count ``w_s``; a statistic
on the explicitly expanded resample (each system repeated ``w_s`` times) equals a
weighted statistic with weights ``w``:

* Pearson: weighted means and co-moments;
* Spearman: mid-ranks are linear in ``w``,
  ``R_a = sum_b w_b [x_b < x_a] + (sum_b w_b [x_b = x_a] + 1) / 2``;
* Kendall: with pair weight ``w_a w_b``, ``C - D = sum_{a<b} w_a w_b s^x_ab s^z_ab``;
  ties ``t_x = sum_{a<b} w_a w_b [x_a = x_b] + sum_a w_a (w_a - 1) / 2`` (copies of one
  system are tied with each other, in both variables), ``n = sum w`` and
  ``n0 = n (n - 1) / 2``. Every variant of :func:`xcorrstat._kernels.kendall` follows
  from these weighted counts; with ``epsilon``, a pair with ``|x_a - x_b| <= epsilon``
  is a tie in x.
* The pair-share variants -- tau-a, tau_eq (``"23"``) and acc_eq (``"acc23"``) -- compare
  *distinct* units only: two copies of one unit are not a pair (acc_eq and tau_eq would
  count such a pair, tied in both, as agreement, shifting every draw up by about
  ``(1 - acc) / S``). Their pairs number ``n0 = (n^2 - sum w^2) / 2``, with no self ties.

The undefined rule is the plain one on the expanded vectors: fewer than
``min_pairs`` expanded pairs, or a vector constant over the drawn units (for
Kendall: every expanded pair tied, ``t_x == n0``; tau_eq and acc_eq stay defined).

Over more than :data:`.rank.sorted_counts.SORTED_MIN_UNITS` units (the row length alone decides),
:func:`wcorr` takes Kendall's counts and Spearman's mid-ranks by sorting each row
(:mod:`xcorrstat._kernels.rank.sorted_counts`, O(S log S) a row) instead of from every pair: the same
integer counts, so the same statistic bit for bit.

Two layouts: :func:`wcorr` takes weights that broadcast against the data (one set
per row), :func:`wcorr_gemm` takes fixed rows and a batch of weight vectors and
turns every sum into a matrix product over draws (Pearson and Spearman; Kendall's
fixed rows go draw by draw through :func:`xcorrstat._kernels.rank.weighted_rows.wkendall_rows`).
Bootstrap draws take Spearman's fixed rows by sorting each row once instead
(:mod:`xcorrstat._resampling.statistics`); the matrix-product form stays as the tests' check of it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._types import Method, Variant
from .correlation import constant_over_valid
from .scaling import rescaled_where_unsafe
from .rank.tau import count_distinct, tau_from_counts
from .rank.sorted_counts import sorted_form, sorted_kendall_counts, sorted_midranks

__all__ = ["DISTINCT_PAIR_VARIANTS", "wcorr", "wcorr_gemm"]


def _pair_index(length: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices ``(a, b)`` of the pairs ``a < b`` of ``length`` units."""
    return np.triu_indices(length, 1)


def _signs(d: np.ndarray) -> np.ndarray:
    """Signs of ``d`` as int8 (0 for 0 and NaN)."""
    return (d > 0).astype(np.int8) - (d < 0).astype(np.int8)


#: Kendall variants whose draws compare distinct units only.
DISTINCT_PAIR_VARIANTS: tuple[Variant, ...] = ("a", "23", "acc23")


def _kendall_undefined(
    n: np.ndarray,
    n0: np.ndarray,
    tx0: np.ndarray,
    tx: np.ndarray,
    tz: np.ndarray,
    variant: Variant,
    min_pairs: int,
) -> np.ndarray:
    """The plain Kendall kernel's undefined rule on weighted counts of the expanded vectors.

    ``tx0`` counts exact ties in x, ``tx`` ties within epsilon: tau_eq and acc_eq need two
    items only; the other variants are undefined for a constant vector, and tau-b also when
    every pair is tied in x within epsilon (a zero denominator).
    """
    if variant in ("23", "acc23"):
        return (n < max(int(min_pairs), 2)) | (n0 <= 0)
    undefined = (n < min_pairs) | (tx0 >= n0) | (tz >= n0)
    return undefined | (tx >= n0) if variant == "b" else undefined


def _wpearson(x: np.ndarray, z: np.ndarray, wv: np.ndarray, n: np.ndarray, undefined: np.ndarray) -> np.ndarray:
    """Weighted Pearson r by the corrected two-pass method, safe at any magnitude
    (:func:`.scaling.rescaled_where_unsafe`; rows already ``undefined`` are not redone)."""
    return rescaled_where_unsafe(_wpearson_sums, x, z, wv, n, skip=undefined)


def _wpearson_sums(
    x: np.ndarray, z: np.ndarray, wv: np.ndarray, n: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """r, sxx, szz of the weighted Pearson correlation, centred before products."""
    with np.errstate(invalid="ignore", divide="ignore", over="ignore", under="ignore"):
        mx = np.sum(np.where(wv > 0, x, 0.0) * wv, axis=-1) / n
        mz = np.sum(np.where(wv > 0, z, 0.0) * wv, axis=-1) / n
        dx = np.where(wv > 0, x - mx[..., None], 0.0)
        dz = np.where(wv > 0, z - mz[..., None], 0.0)
        # corrected two-pass: remove the rounding error of the means (cx, cz) from the sums
        wdx, wdz = wv * dx, wv * dz
        cx, cz = np.sum(wdx, axis=-1) / n, np.sum(wdz, axis=-1) / n
        sxx = np.sum(wdx * dx, axis=-1) - n * cx * cx
        szz = np.sum(wdz * dz, axis=-1) - n * cz * cz
        sxz = np.sum(wdx * dz, axis=-1) - n * cx * cz
        return sxz / np.sqrt(sxx) / np.sqrt(szz), sxx, szz


def _wranks(a: np.ndarray, wv: np.ndarray) -> np.ndarray:
    """Weighted mid-ranks of ``a`` (..., S) with weights ``wv`` (0 for missing)."""
    less = (a[..., None, :] < a[..., :, None]).astype(np.float64)
    equal = (a[..., None, :] == a[..., :, None]).astype(np.float64)
    return np.einsum("...ab,...b->...a", less, wv) + (np.einsum("...ab,...b->...a", equal, wv) + 1.0) / 2.0


def _kendall_counts(x: np.ndarray, z: np.ndarray, wv: np.ndarray, n: np.ndarray, valid: np.ndarray,
                    variant: Variant, epsilon: float) -> tuple[Any, ...]:
    """``(C - D, n0, tx0, tx, tz, txz, m)`` of weighted Kendall along the last axis (``m`` for tau-c, else
    None): by sorting for long rows (:func:`.rank.sorted_counts.sorted_kendall_counts`), else from every pair
    at once -- the same integer counts either way."""
    distinct = variant in DISTINCT_PAIR_VARIANTS
    self_ties: float | np.ndarray = 0.0 if distinct else np.sum(wv * (wv - 1.0) / 2.0, axis=-1)
    n0 = (n * n - np.sum(wv * wv, axis=-1)) / 2.0 if distinct else n * (n - 1.0) / 2.0
    if sorted_form(x.shape[-1]):
        cmd, tx0, tx, tz, txz, fewest = sorted_kendall_counts(x, z, wv, epsilon)
        m = fewest if variant == "c" else None
        return cmd, n0, tx0 + self_ties, tx + self_ties, tz + self_ties, txz + self_ties, m
    i, j = _pair_index(x.shape[-1])
    pw = wv[..., i] * wv[..., j]
    dx = x[..., i] - x[..., j]
    dz = z[..., i] - z[..., j]
    tie_x = np.abs(dx) <= epsilon
    tx0 = np.sum(pw * (dx == 0), axis=-1) + self_ties
    tx = np.sum(pw * tie_x, axis=-1) + self_ties if epsilon else tx0
    tz = np.sum(pw * (dz == 0), axis=-1) + self_ties
    txz = np.sum(pw * (tie_x & (dz == 0)), axis=-1) + self_ties
    cmd = np.sum(pw * np.where(tie_x, 0, _signs(dx)) * _signs(dz), axis=-1)
    m = np.minimum(count_distinct(x, valid), count_distinct(z, valid)) if variant == "c" else None
    return cmd, n0, tx0, tx, tz, txz, m


def wcorr(
    x: ArrayLike,
    z: ArrayLike,
    w: ArrayLike,
    *,
    method: Method = "pearson",
    variant: Variant = "b",
    min_pairs: int = 3,
    epsilon: float = 0.0,
) -> tuple[np.ndarray, np.ndarray]:
    """Weighted correlation along the last axis; ``x``, ``z``, ``w`` broadcast.

    ``w`` holds non-negative integer multiplicities. Returns ``(r, n)`` with ``n`` the
    number of expanded valid pairs; the result equals the unweighted statistic on the
    expanded vectors, including the undefined rule. ``variant`` and ``epsilon`` are
    Kendall's (see :func:`xcorrstat._kernels.kendall`).

    Examples
    --------
    >>> r, n = wcorr([1.0, 2.0, 3.0], [1.0, 3.0, 2.0], [2, 1, 1])  # as [1, 1, 2, 3] with [1, 1, 3, 2]
    >>> round(float(r), 4), int(n)
    (0.6364, 4)
    """
    x, z, wa = np.broadcast_arrays(
        np.asarray(x, dtype=np.float64), np.asarray(z, dtype=np.float64), np.asarray(w, dtype=np.float64)
    )
    valid = ~np.isnan(x) & ~np.isnan(z) & (wa > 0)
    wv = np.where(valid, wa, 0.0)
    n = wv.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        if method == "kendall":
            cmd, n0, tx0, tx, tz, txz, m = _kendall_counts(x, z, wv, n, valid, variant, epsilon)
            undefined = _kendall_undefined(n, n0, tx0, tx, tz, variant, min_pairs)
            r = tau_from_counts(cmd, n0, tx, tz, n, m, variant, txz)
        elif method in ("pearson", "spearman"):
            undefined = (n < min_pairs) | constant_over_valid(x, valid) | constant_over_valid(z, valid)
            if method == "spearman":
                ranks = sorted_midranks if sorted_form(x.shape[-1]) else _wranks
                x, z = ranks(np.where(valid, x, np.nan), wv), ranks(np.where(valid, z, np.nan), wv)
            r = _wpearson(x, z, wv, n, undefined)
        else:
            raise ValueError(f"method must be pearson, spearman or kendall, got {method!r}")
    r = np.where(undefined, np.nan, np.clip(r, -1.0, 1.0))
    return r, n.astype(np.int64)


def wcorr_gemm(
    x: ArrayLike,
    z: ArrayLike,
    weights: ArrayLike,
    *,
    method: Method = "pearson",
    min_pairs: int = 3,
) -> tuple[np.ndarray, np.ndarray]:
    """Weighted Pearson or Spearman correlation of fixed rows for a batch of weight vectors.

    Kendall's tau of fixed rows under a batch of weight vectors is
    :func:`xcorrstat._kernels.rank.weighted_rows.wkendall_rows`.

    Parameters
    ----------
    x, z : ndarray (R, S)
        Rows to correlate along S (e.g. one row per (metric, input)).
    weights : ndarray (B, S)
        Multiplicities of the S units in each of B draws.

    Returns
    -------
    r, n : ndarray (R, B)
        The statistic of every row under every draw, and the expanded valid pairs.

    Examples
    --------
    >>> r, n = wcorr_gemm([[1.0, 2.0, 3.0]], [[1.0, 3.0, 2.0]], [[1, 1, 1], [2, 1, 1]])
    >>> np.round(r, 4).tolist(), n.tolist()
    ([[0.5, 0.6364]], [[3, 4]])
    """
    if method not in ("pearson", "spearman"):
        raise ValueError(f"method must be pearson or spearman, got {method!r}")
    x = np.asarray(x, dtype=np.float64)
    z = np.asarray(z, dtype=np.float64)
    W = np.asarray(weights, dtype=np.float64)
    valid = ~np.isnan(x) & ~np.isnan(z)
    V = valid.astype(np.float64)
    n = V @ W.T
    i, j = _pair_index(x.shape[-1])
    pv = valid[:, i] & valid[:, j]
    # pair weights and pair indicators are small integers: float32 GEMMs are exact
    # (every partial sum stays far below 2**24) and twice as fast as float64
    wt = np.ascontiguousarray(W.T, dtype=np.float32)  # (S, B): row gathers below are fast
    PW = wt[i] * wt[j]  # (P, B) pair weights
    with np.errstate(invalid="ignore"):
        dx = x[:, i] - x[:, j]
        dz = z[:, i] - z[:, j]
    parts = [(dx == 0) & pv, (dz == 0) & pv]
    sums = np.concatenate([p.astype(np.float32) for p in parts]) @ PW  # one GEMM for both tie sums
    sums = sums.astype(np.float64).reshape(len(parts), x.shape[0], -1)
    self_ties = V @ (W * (W - 1.0) / 2.0).T
    n0 = n * (n - 1.0) / 2.0
    # a vector constant over the drawn units: every expanded pair tied
    undefined = (n < min_pairs) | (sums[0] + self_ties >= n0) | (sums[1] + self_ties >= n0)
    with np.errstate(invalid="ignore", divide="ignore"):
        if method == "spearman":
            xr_, zr_ = _ranks_gemm(x, valid, W), _ranks_gemm(z, valid, W)  # (R, S, B)
        else:
            xr_ = np.broadcast_to(x[:, :, None], x.shape + (W.shape[0],))
            zr_ = np.broadcast_to(z[:, :, None], z.shape + (W.shape[0],))
        wv = valid[:, :, None] * W.T[None, :, :]  # (R, S, B)
        r = _wpearson(np.moveaxis(xr_, 1, -1), np.moveaxis(zr_, 1, -1), np.moveaxis(wv, 1, -1), n, undefined)
    r = np.where(undefined, np.nan, np.clip(r, -1.0, 1.0))
    return r, n.astype(np.int64)


def _ranks_gemm(a: np.ndarray, valid: np.ndarray, W: np.ndarray) -> np.ndarray:
    """Weighted mid-ranks (R, S, B) of fixed rows under each weight vector."""
    rows, length = a.shape
    less = (a[:, None, :] < a[:, :, None]) & valid[:, None, :]
    equal = (a[:, None, :] == a[:, :, None]) & valid[:, None, :]
    lw = less.reshape(rows * length, length).astype(np.float64) @ W.T
    ew = equal.reshape(rows * length, length).astype(np.float64) @ W.T
    return (lw + (ew + 1.0) / 2.0).reshape(rows, length, -1)
