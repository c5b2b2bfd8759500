"""Global-level Pearson and Spearman of bootstrap draws as weighted sums over the valid cells
(xcorrstat._kernels.linear.global_corr) against the explicitly expanded resamples.

* Spearman: bit for bit the plain kernel on the expanded vectors (its sums are exact), and
  scipy within 1e-12;
* Pearson: the plain kernel and scipy within 1e-12 (the float additions run in another order);
* the undefined rule (too few cells, a constant x or z over the drawn cells), large offsets,
  extreme scales, nearly constant scores;
* a draw's value does not depend on the other draws of its batch, nor on the other rows.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from xcorrstat._kernels.correlation import pearson, spearman
from xcorrstat._kernels.linear.global_corr import global_cells, weighted_global_corr
from xcorrstat._resampling.draws import bootstrap_indices, counts_from_indices

PLAIN = {"pearson": pearson, "spearman": spearman}
SCIPY = {"pearson": lambda a, b: stats.pearsonr(a, b)[0], "spearman": lambda a, b: stats.spearmanr(a, b)[0]}


def _draws(seed, s, i, b, dims=("system", "input")):
    sizes = [{"system": s, "input": i}[d] for d in dims]
    idx = dict(zip(dims, bootstrap_indices(seed, range(b), sizes)))
    return idx.get("system"), idx.get("input")


def _expanded(x, z, sys_idx, inp_idx, b):
    """(R, B, S*I) expanded rows of x and z (R, S, I)."""
    s, i = x.shape[-2:]
    rows = sys_idx if sys_idx is not None else np.broadcast_to(np.arange(s), (b, s))
    cols = inp_idx if inp_idx is not None else np.broadcast_to(np.arange(i), (b, i))
    ex = x[:, rows[:, :, None], cols[:, None, :]].reshape(x.shape[0], b, -1)
    ez = np.broadcast_to(z, x.shape)[:, rows[:, :, None], cols[:, None, :]].reshape(x.shape[0], b, -1)
    return ex, ez


def _data(seed, r=3, s=6, i=40, nan=0.1, integer_x=False):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 5, size=(r, s, i)).astype(float) if integer_x else rng.normal(size=(r, s, i))
    x[rng.random(x.shape) < nan] = np.nan
    z = rng.integers(0, 7, size=(s, i)).astype(float)
    return x, z


def _check(x, z, sys_idx, inp_idx, method, min_pairs=3, with_scipy=True):
    b = (sys_idx if sys_idx is not None else inp_idx).shape[0]
    s, i = x.shape[-2:]
    w = None if sys_idx is None else counts_from_indices(sys_idx, s)
    c = None if inp_idx is None else counts_from_indices(inp_idx, i)
    r, n = weighted_global_corr(x, z, w, c, method=method, min_pairs=min_pairs)
    ex, ez = _expanded(x, z, sys_idx, inp_idx, b)
    r_exp, n_exp = PLAIN[method](ex, ez, min_pairs=min_pairs)
    np.testing.assert_array_equal(n, n_exp)
    np.testing.assert_array_equal(np.isnan(r), np.isnan(r_exp))
    if method == "spearman":
        np.testing.assert_array_equal(r, r_exp)  # exact sums: the same bits
    else:
        np.testing.assert_allclose(r, r_exp, rtol=0, atol=1e-12)
    for row in range(x.shape[0] if with_scipy else 0):  # scipy on the expanded valid cells
        for d in range(b):
            ok = ~np.isnan(ex[row, d]) & ~np.isnan(ez[row, d])
            if not np.isnan(r[row, d]):
                assert abs(r[row, d] - SCIPY[method](ex[row, d][ok], ez[row, d][ok])) < 1e-12
    return r, n


@pytest.mark.parametrize("method", ["pearson", "spearman"])
@pytest.mark.parametrize("dims", [("system",), ("input",), ("system", "input")], ids=lambda d: "+".join(d))
@pytest.mark.parametrize("integer_x", [False, True], ids=["real", "ties"])
def test_draws_equal_expanded_oracle(method, dims, integer_x):
    x, z = _data(3, integer_x=integer_x)
    sys_idx, inp_idx = _draws(7, 6, 40, 37, dims)  # 37 draws: more than one block of lanes
    _check(x, z, sys_idx, inp_idx, method)


@pytest.mark.parametrize("method", ["pearson", "spearman"])
def test_undefined_draws_and_min_pairs(method):
    rng = np.random.default_rng(5)
    x = rng.normal(size=(4, 3, 4))
    x[1] = np.repeat([[1.0], [2.0], [1.0]], 4, axis=1)  # constant within each system
    x[2, 0] = 7.0  # system 0 constant, the others not
    x[3] = np.nan
    x[3, 1, :2] = [1.0, 2.0]  # two valid cells
    z = rng.integers(0, 3, size=(3, 4)).astype(float)
    z[2] = 1.0
    sys_idx, inp_idx = _draws(11, 3, 4, 200)  # many draws keep a single system or tie every z
    r, _ = _check(x, z, sys_idx, inp_idx, method)
    assert np.isnan(r).any() and not np.isnan(r).all()
    _check(x, z, sys_idx, inp_idx, method, min_pairs=20)


@pytest.mark.parametrize("scale,offset", [(1e-300, 0.0), (1e300, 0.0), (1.0, 1e8), (1e-3, 1e6)])
def test_pearson_extreme_scales_and_offsets(scale, offset):
    x, z = _data(8, r=2, s=5, i=30)
    sys_idx, inp_idx = _draws(2, 5, 30, 20)
    _check(x * scale + offset, z * scale, sys_idx, inp_idx, "pearson")


def test_pearson_nearly_constant_scores_are_defined():
    x, z = _data(9, r=2, s=4, i=20, nan=0.0)
    x = 1.0 + np.round(x) * 2.0**-45  # a few distinct values within a few ulps of 1
    sys_idx, inp_idx = _draws(4, 4, 20, 16)
    r, _ = _check(x, z, sys_idx, inp_idx, "pearson", with_scipy=False)  # scipy warns: inaccurate there
    assert not np.isnan(r).any()


@pytest.mark.parametrize("method", ["pearson", "spearman"])
def test_a_draw_does_not_depend_on_its_batch_or_rows(method):
    x, z = _data(12, r=5, s=7, i=50)
    sys_idx, inp_idx = _draws(3, 7, 50, 70)
    w, c = counts_from_indices(sys_idx, 7), counts_from_indices(inp_idx, 50)
    cells = global_cells(x, z, ranked=method == "spearman")
    r, n = weighted_global_corr(x, z, w, c, method=method, cells=cells)
    for part in (slice(0, 1), slice(5, 38), slice(33, 70)):
        rp, npart = weighted_global_corr(x[1:3], z, w[part], c[part], method=method)
        assert np.array_equal(rp, r[1:3, part], equal_nan=True)
        np.testing.assert_array_equal(npart, n[1:3, part])


def test_leading_axes_broadcast_and_errors():
    x, z = _data(1, r=6, s=4, i=10)
    sys_idx, _ = _draws(1, 4, 10, 5, ("system",))
    w = counts_from_indices(sys_idx, 4)
    r, n = weighted_global_corr(x.reshape(2, 3, 4, 10), z, w, method="spearman")
    flat, _ = weighted_global_corr(x, z, w, method="spearman")
    assert r.shape == n.shape == (2, 3, 5)
    assert np.array_equal(r.reshape(6, 5), flat, equal_nan=True)
    with pytest.raises(ValueError, match="needs w"):
        weighted_global_corr(x, z)
    with pytest.raises(ValueError, match="method"):
        weighted_global_corr(x, z, w, method="kendall")
    with pytest.raises(ValueError, match="must be"):
        weighted_global_corr(x, z, w[:, :3])


@pytest.mark.parametrize("method", ["pearson", "spearman"])
def test_tables_found_once_give_the_same_draws_in_every_batch(method):
    from xcorrstat._resampling.statistics import global_tables, resampled_level_correlation

    x, z = _data(14, r=2, s=5, i=7)
    kw = {"level": "global", "method": method}
    sys_idx, inp_idx = _draws(1, 5, 7, 40)
    whole = resampled_level_correlation(x, z, sys_idx=sys_idx, inp_idx=inp_idx, **kw)
    tables = global_tables(x, z, **kw)
    parts = [resampled_level_correlation(x, z, sys_idx=sys_idx[a:b], inp_idx=inp_idx[a:b], tables=tables, **kw)
             for a, b in ((0, 5), (5, 40))]
    for k in range(2):
        np.testing.assert_array_equal(whole[k], np.concatenate([p[k] for p in parts], axis=-1))
    assert global_tables(x, z, level="system", method=method) is None
