"""The compiled inversion count of Kendall's tau by sorting (``_kernels/rank/merge_count.py``) against the NumPy
merge count it replaced, kept here as its oracle, and against the count of every pair; exact integers."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats

from xcorrstat._kernels.rank.merge_count import inversions
from xcorrstat._kernels.rank.tau import kendall_sorted


def numpy_inversions(seq: np.ndarray) -> np.ndarray:
    """Pairs i < j with seq[i] > seq[j] per row: a bottom-up merge count in NumPy (the earlier kernel)."""
    rows, length = seq.shape
    size = 1
    while size < length:
        size *= 2
    big = int(seq.max(initial=0)) + 1
    a = np.full((rows, size), big, dtype=np.int64)
    a[:, :length] = seq
    key_span = big + 1
    counts = np.zeros(rows, dtype=np.int64)
    width = 1
    while width < size:
        blocks = a.reshape(rows, size // (2 * width), 2, width)
        nblk = rows * (size // (2 * width))
        offset = (np.arange(nblk, dtype=np.int64) * key_span).reshape(rows, -1, 1)
        left = (blocks[:, :, 0, :] + offset).ravel()
        right = blocks[:, :, 1, :] + offset
        pos = np.searchsorted(left, right.ravel(), side="right").reshape(right.shape)
        block_start = (np.arange(nblk, dtype=np.int64) * width).reshape(rows, -1, 1)
        counts += (width - (pos - block_start)).sum(axis=(1, 2))
        a = np.sort(a.reshape(rows, size // (2 * width), 2 * width), axis=-1).reshape(rows, size)
        width *= 2
    return counts


def every_pair(seq: np.ndarray) -> np.ndarray:
    return (seq[:, :, None] > seq[:, None, :])[:, np.triu_indices(seq.shape[1], 1)[0],
                                                 np.triu_indices(seq.shape[1], 1)[1]].sum(axis=1)


@pytest.mark.parametrize("length", [0, 1, 2, 3, 7, 8, 9, 64, 100, 257])
@pytest.mark.parametrize("levels", [2, 5, 1000])
def test_inversions_are_the_numpy_merge_count(length, levels):
    rng = np.random.default_rng(length * 1000 + levels)
    seq = rng.integers(0, levels, size=(6, length))
    got = inversions(seq)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, numpy_inversions(seq) if length else np.zeros(6, np.int64))
    if length:
        np.testing.assert_array_equal(got, every_pair(seq))


def test_kendall_sorted_is_scipys_with_ties():
    rng = np.random.default_rng(3)
    x = rng.integers(0, 7, size=(4, 300)).astype(float)
    z = x + rng.integers(0, 4, size=x.shape)
    valid = rng.random(x.shape) > 0.1
    got = kendall_sorted(x, z, valid)
    want = [scipy.stats.kendalltau(x[r, valid[r]], z[r, valid[r]]).statistic for r in range(4)]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
