"""Weighted Pearson of fixed rows under bootstrap count vectors (:mod:`xcorrstat._kernels.linear.weighted_rows`).

Oracles: (1) scipy.stats.pearsonr on the explicitly expanded resample (each unit repeated its
count times), with the plain undefined rule (fewer than ``min_pairs`` units, or a constant
vector over the drawn valid units); (2) :func:`numpy_rows`, the kernel's operations in the
same order as NumPy array operations over (rows, draws), blocks of rows at a time: the
kernel's compiled loop gives the same floats. A value does not depend on the batch or on the
other rows.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import weighted_rows
from scipy import stats

from xcorrstat._kernels.scaling import SAFE_SUM_BOUNDS
from xcorrstat._kernels.weighted import wcorr_gemm
from xcorrstat._kernels.linear.weighted_rows import wpearson_rows

#: float64 elements of one (rows, draws) temporary of :func:`numpy_rows`.
ROW_BLOCK_ELEMS = 1 << 18


def numpy_rows(x, z, weights, *, min_pairs=3, block_elems=ROW_BLOCK_ELEMS):
    """:func:`wpearson_rows` by NumPy array operations, blocks of rows at a time."""
    xa = np.asarray(x, dtype=np.float64)
    za = np.asarray(z, dtype=np.float64)
    wt = np.ascontiguousarray(np.asarray(weights, dtype=np.float64).T)  # (S, B)
    valid = ~np.isnan(xa) & ~np.isnan(za)
    xv, zv = np.where(valid, xa, 0.0), np.where(valid, za, 0.0)
    out = np.empty((2, xa.shape[0], wt.shape[1]))
    step = max(1, block_elems // max(wt.shape[1], 1))
    with np.errstate(invalid="ignore", divide="ignore", over="ignore", under="ignore"):
        for r0 in range(0, xa.shape[0], step):
            sl = slice(r0, r0 + step)
            out[:, sl] = _rows(xv[sl], zv[sl], valid[sl], wt, float(min_pairs))
    r, n = out
    unsafe = np.isinf(r)  # sums of squares out of the safe range: rescaled by the general kernel
    if unsafe.any():
        rows = np.flatnonzero(unsafe.any(axis=1))
        again, _ = wcorr_gemm(xa[rows], za[rows], wt.T, method="pearson", min_pairs=min_pairs)
        r[rows] = np.where(unsafe[rows], again, r[rows])
    return r, n.astype(np.int64)


def _rows(xv, zv, valid, wt, need):
    """(2, R, B): r and n of a block of rows; ``inf`` where a sum of squares is out of the safe range."""
    shape = (xv.shape[0], wt.shape[1])
    n, sx, sz = np.zeros(shape), np.zeros(shape), np.zeros(shape)
    lo_x, hi_x = np.full(shape, np.inf), np.full(shape, -np.inf)
    lo_z, hi_z = np.full(shape, np.inf), np.full(shape, -np.inf)
    for s in range(wt.shape[0]):
        ws = valid[:, s, None] * wt[s]
        drawn = ws > 0
        n += ws
        sx += xv[:, s, None] * ws
        sz += zv[:, s, None] * ws
        lo_x, hi_x = _extend(lo_x, hi_x, xv[:, s, None], drawn)
        lo_z, hi_z = _extend(lo_z, hi_z, zv[:, s, None], drawn)
    mx, mz = sx / n, sz / n
    cx, cz, sxx, szz, sxz = (np.zeros(shape) for _ in range(5))
    for s in range(wt.shape[0]):
        ws = valid[:, s, None] * wt[s]
        drawn = ws > 0
        dx = np.where(drawn, xv[:, s, None] - mx, 0.0)
        dz = np.where(drawn, zv[:, s, None] - mz, 0.0)
        wdx, wdz = ws * dx, ws * dz
        cx += wdx
        cz += wdz
        sxx += wdx * dx
        szz += wdz * dz
        sxz += wdx * dz
    cx, cz = cx / n, cz / n
    sxx -= n * cx * cx
    szz -= n * cz * cz
    sxz -= n * cx * cz
    r = sxz / np.sqrt(sxx) / np.sqrt(szz)
    return np.stack([_finish(r, n, sxx, szz, lo_x, hi_x, lo_z, hi_z, need), n])


def _extend(lo, hi, v, drawn):
    """The least and greatest drawn values so far."""
    return np.where(drawn & (v < lo), v, lo), np.where(drawn & (v > hi), v, hi)


def _finish(r, n, sxx, szz, lo_x, hi_x, lo_z, hi_z, need):
    """r clipped; NaN where undefined, ``inf`` where a sum of squares is out of the safe range."""
    low, high = SAFE_SUM_BOUNDS
    undefined = (n < need) | (n <= 0) | (lo_x == hi_x) | (lo_z == hi_z)
    unsafe = ~((sxx > low) & (sxx < high) & (szz > low) & (szz < high))
    r = np.where(r > 1.0, 1.0, np.where(r < -1.0, -1.0, r))
    return np.where(undefined, np.nan, np.where(unsafe, np.inf, r))


def _oracle(x, z, w, min_pairs):
    keep = ~np.isnan(x) & ~np.isnan(z)
    xe, ze = np.repeat(x[keep], w[keep]), np.repeat(z[keep], w[keep])
    if xe.size < max(min_pairs, 1) or np.ptp(xe) == 0 or np.ptp(ze) == 0:
        return np.nan, xe.size
    return stats.pearsonr(xe, ze)[0], xe.size


def _data(seed, rows=12, s=7, b=40):
    return weighted_rows(seed, rows, s, b, unit=2)


@pytest.mark.parametrize("min_pairs", [1, 3, 6])
def test_every_row_and_draw_equals_scipy_on_the_expanded_resample(min_pairs):
    x, z, w = _data(1)
    r, n = wpearson_rows(x, z, w, min_pairs=min_pairs)
    plain = numpy_rows(x, z, w, min_pairs=min_pairs)
    np.testing.assert_array_equal(r, plain[0])
    np.testing.assert_array_equal(n, plain[1])
    for i in range(x.shape[0]):
        for b in range(w.shape[0]):
            want, size = _oracle(x[i], z[i], w[b], min_pairs)
            assert n[i, b] == size
            if np.isnan(want):
                assert np.isnan(r[i, b]), (i, b)
            else:
                assert r[i, b] == pytest.approx(want, abs=1e-12), (i, b)


def test_extreme_magnitudes_are_rescaled():
    x, z, w = _data(2)
    big = wpearson_rows(x * 1e200, z * 1e-200, w)[0]
    np.testing.assert_allclose(big, wpearson_rows(x, z, w)[0], rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(big, numpy_rows(x * 1e200, z * 1e-200, w)[0])


def test_loop_equals_the_numpy_oracle_bit_for_bit():
    x, z, w = _data(3, rows=30, b=130)
    compiled = wpearson_rows(x, z, w)
    plain = numpy_rows(x, z, w)
    np.testing.assert_array_equal(compiled[0], plain[0])
    np.testing.assert_array_equal(compiled[1], plain[1])


def test_batches_and_row_blocks_change_nothing():
    x, z, w = _data(4, rows=20, b=50)
    whole = wpearson_rows(x, z, w)[0]
    np.testing.assert_array_equal(np.concatenate([wpearson_rows(x, z, w[:17])[0], wpearson_rows(x, z, w[17:])[0]],
                                                 axis=1), whole)
    np.testing.assert_array_equal(wpearson_rows(x[5:9], z[5:9], w)[0], whole[5:9])
    np.testing.assert_array_equal(numpy_rows(x, z, w, block_elems=1)[0], whole)  # the oracle row by row


def test_agrees_with_the_matrix_product_kernel():
    x, z, w = _data(5, rows=25, b=60)
    old, n_old = wcorr_gemm(x, z, w, method="pearson", min_pairs=3)
    new, n_new = wpearson_rows(x, z, w, min_pairs=3)
    np.testing.assert_array_equal(n_new, n_old)
    np.testing.assert_allclose(new, old, rtol=0, atol=1e-13)
