"""Weighted Pearson of fixed rows under bootstrap count vectors (:mod:`xcorrstat._kernels.wpearson_rows`).

Oracle: scipy.stats.pearsonr on the explicitly expanded resample (each unit repeated its
count times), with the plain undefined rule (fewer than ``min_pairs`` units, or a constant
vector over the drawn valid units). The compiled loop and the NumPy path give the same
floats; a value does not depend on the batch or on the other rows.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from xcorrstat import set_options
from xcorrstat._kernels import wpearson_rows as module
from xcorrstat._kernels.weighted import wcorr_gemm
from xcorrstat._kernels.wpearson_rows import wpearson_rows


def _oracle(x, z, w, min_pairs):
    keep = ~np.isnan(x) & ~np.isnan(z)
    xe, ze = np.repeat(x[keep], w[keep]), np.repeat(z[keep], w[keep])
    if xe.size < max(min_pairs, 1) or np.ptp(xe) == 0 or np.ptp(ze) == 0:
        return np.nan, xe.size
    return stats.pearsonr(xe, ze)[0], xe.size


def _data(seed, rows=12, s=7, b=40):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 4, (rows, s)).astype(float) + rng.normal(scale=0.3, size=(rows, s)) * (rng.random((rows, 1)) < .5)
    z = rng.integers(0, 3, (rows, s)).astype(float)
    x[rng.random(x.shape) < 0.15] = np.nan
    z[rng.random(z.shape) < 0.1] = np.nan
    x[0] = 2.0  # a constant row
    z[1, :] = np.nan  # a row with no valid unit
    w = rng.multinomial(s, np.full(s, 1.0 / s), size=b)
    w[0] = 0
    w[0, 2] = s  # one unit drawn s times
    return x, z, w


@pytest.mark.parametrize("min_pairs", [1, 3, 6])
def test_every_row_and_draw_equals_scipy_on_the_expanded_resample(path, min_pairs):
    x, z, w = _data(1)
    r, n = wpearson_rows(x, z, w, min_pairs=min_pairs)
    for i in range(x.shape[0]):
        for b in range(w.shape[0]):
            want, size = _oracle(x[i], z[i], w[b], min_pairs)
            assert n[i, b] == size
            if np.isnan(want):
                assert np.isnan(r[i, b]), (i, b)
            else:
                assert r[i, b] == pytest.approx(want, abs=1e-12), (i, b)


def test_extreme_magnitudes_are_rescaled(path):
    x, z, w = _data(2)
    big = wpearson_rows(x * 1e200, z * 1e-200, w)[0]
    np.testing.assert_allclose(big, wpearson_rows(x, z, w)[0], rtol=1e-12, atol=1e-12)


def test_compiled_and_numpy_paths_give_the_same_floats():
    pytest.importorskip("numba")
    x, z, w = _data(3, rows=30, b=130)
    compiled = wpearson_rows(x, z, w)
    with set_options(compiled=False):
        plain = wpearson_rows(x, z, w)
    np.testing.assert_array_equal(compiled[0], plain[0])
    np.testing.assert_array_equal(compiled[1], plain[1])


def test_batches_and_row_blocks_change_nothing(path, monkeypatch):
    x, z, w = _data(4, rows=20, b=50)
    whole = wpearson_rows(x, z, w)[0]
    np.testing.assert_array_equal(np.concatenate([wpearson_rows(x, z, w[:17])[0], wpearson_rows(x, z, w[17:])[0]],
                                                 axis=1), whole)
    np.testing.assert_array_equal(wpearson_rows(x[5:9], z[5:9], w)[0], whole[5:9])
    monkeypatch.setattr(module, "ROW_BLOCK_ELEMS", 1)
    np.testing.assert_array_equal(wpearson_rows(x, z, w)[0], whole)


def test_agrees_with_the_matrix_product_kernel():
    x, z, w = _data(5, rows=25, b=60)
    old, n_old = wcorr_gemm(x, z, w, method="pearson", min_pairs=3)
    new, n_new = wpearson_rows(x, z, w, min_pairs=3)
    np.testing.assert_array_equal(n_new, n_old)
    np.testing.assert_allclose(new, old, rtol=0, atol=1e-13)
