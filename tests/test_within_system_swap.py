"""Within-system permutation draws through the fast kernels, against the explicitly swapped matrices.

The within-system level correlates each system's row across its inputs and averages the
per-system correlations. Its permutation draws take the mask-linear sums of the input level
on the transposed matrices (Pearson) and one sorted table per system (Kendall), never the
swapped matrices. Every draw must equal the statistic of the explicitly swapped matrices:
``level_correlation`` on ``np.where(mask, Y, X)`` (and the engine's materialised path, which
does just that a block at a time), Pearson to 1e-12 and Kendall's exact counts bit for bit;
for complete data and missing cells in the same and in different cells of X and Y, every
average. The results of ``compare`` and ``permutation_test`` do not depend on the memory
budget, bit for bit.
"""

from __future__ import annotations

import itertools

import dask
import numpy as np
import pytest
import xarray as xr

import xcorrstat
from xcorrstat._kernels import level_correlation
from xcorrstat._kernels.rank.global_swap import swap_group_kendall
from xcorrstat._kernels.linear.allpairs import prepare_allpairs_input
from xcorrstat._resampling import swapstats
from xcorrstat._resampling.draws import permutation_masks
from xcorrstat._resampling.swapstats import _materialised, draw_deltas, standardise

ATOL = 1e-12
LEVEL = "within_system"
KENDALL_VARIANTS = ["b", "a", "c", "23", "acc23"]
CASES = [("pearson", "b")] + [("kendall", v) for v in KENDALL_VARIANTS]
AVERAGES = ["macro", "weighted", "pairs"]
GAPS = ["complete", "same-cells", "different-cells"]


def scores(seed: int, gaps: str, *, rows: int = 3, s: int = 6, i: int = 30) -> tuple[np.ndarray, ...]:
    """x, y, z (rows, S, I): ties in the metrics and in the target, a system with no valid cell
    and one with too few, a constant system row."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 5, (rows, s, i)).astype(float) + rng.normal(scale=0.1, size=(rows, s, i)).round(1)
    y = rng.integers(0, 5, (rows, s, i)).astype(float) - x * (rng.random((rows, 1, 1)) < 0.5)
    z = rng.integers(0, 6, (rows, s, i)).astype(float)
    if gaps == "same-cells":
        holes = rng.random(x.shape) < 0.2
        x[holes] = np.nan
        y[holes] = np.nan
    elif gaps == "different-cells":
        x[rng.random(x.shape) < 0.2] = np.nan
        y[rng.random(y.shape) < 0.2] = np.nan
        z[rng.random(z.shape) < 0.1] = np.nan
    if gaps != "complete":
        x[0, 1] = y[0, 1] = np.nan  # a system with no valid cell
        x[0, 2, 2:] = y[0, 2, 2:] = np.nan  # a system with two valid cells
    x[1, 3] = 2.0  # a constant system row of X
    return x, y, z


def swapped_oracle(x, y, z, masks, kw):
    """level_correlation of the explicitly swapped z-scores, draw by draw: (rows, B)."""
    zx, zy = standardise(x), standardise(y)
    out = np.empty(x.shape[:1] + masks.shape[:1])
    for b, m in enumerate(masks):
        rx, _ = level_correlation(np.where(m, zy, zx), z, **kw)
        ry, _ = level_correlation(np.where(m, zx, zy), z, **kw)
        out[:, b] = rx - ry
    return out


def check(fast, oracle, method):
    np.testing.assert_array_equal(np.isnan(fast), np.isnan(oracle))
    if method == "kendall":  # exact integer counts: bit for bit
        np.testing.assert_array_equal(fast, oracle)
    else:
        np.testing.assert_allclose(fast, oracle, rtol=0, atol=ATOL)


@pytest.mark.parametrize("gaps", GAPS)
@pytest.mark.parametrize("average", AVERAGES)
@pytest.mark.parametrize(("method", "variant"), CASES, ids=[f"{m}-{v}" for m, v in CASES])
def test_draws_equal_the_explicitly_swapped_matrices(method, variant, average, gaps, monkeypatch):
    x, y, z = scores(11, gaps)
    masks = permutation_masks(3, np.arange(9), x.shape[1], x.shape[2], "cells")
    kw = dict(level=LEVEL, method=method, variant=variant, min_pairs=3, skipna=True, average=average)
    oracle = swapped_oracle(x, y, z, masks, kw)
    materialised = _materialised(standardise(x), standardise(y), z, kw, None)(masks)
    check(materialised, oracle, method)
    # the fast path never evaluates the swapped matrices
    monkeypatch.setattr(swapstats, "level_correlation", None)
    fast = draw_deltas(x, y, z, kw)(masks)
    check(fast, oracle, method)
    assert np.isfinite(fast).any()


@pytest.mark.parametrize("scheme", ["cells", "system", "input", "system-xor-input"])
@pytest.mark.parametrize(("method", "variant"), [("pearson", "b"), ("kendall", "b")])
def test_every_mask_scheme_and_single_draws(method, variant, scheme):
    x, y, z = scores(5, "different-cells", rows=2, s=5, i=25)
    masks = permutation_masks(8, np.arange(5), x.shape[1], x.shape[2], scheme)
    kw = dict(level=LEVEL, method=method, variant=variant, min_pairs=2, skipna=True)
    deltas = draw_deltas(x, y, z, kw)
    whole = deltas(masks)
    check(whole, swapped_oracle(x, y, z, masks, kw), method)
    one_by_one = np.concatenate([deltas(masks[b:b + 1]) for b in range(masks.shape[0])], axis=-1)
    check(one_by_one, whole, method)


@pytest.mark.parametrize("method", ["pearson", "kendall"])
def test_skipna_false_leaves_rows_with_a_missing_cell_undefined(method):
    x, y, z = scores(2, "complete")
    x[1, 0, 0] = np.nan
    masks = permutation_masks(1, np.arange(4), x.shape[1], x.shape[2], "cells")
    kw = dict(level=LEVEL, method=method, variant="b", min_pairs=3, skipna=False)
    fast = draw_deltas(x, y, z, kw)(masks)
    assert np.isnan(fast[1]).all() and np.isfinite(fast[[0, 2]]).all()
    check(fast, swapped_oracle(x, y, z, masks, kw), method)


@pytest.mark.parametrize("gaps", GAPS)
def test_group_taus_and_counts_are_those_of_each_swapped_row(gaps):
    x, y, z = scores(4, gaps, rows=2, s=4, i=20)
    zx, zy = standardise(x), standardise(y)
    masks = permutation_masks(2, np.arange(6), 4, 20, "cells")
    rx, ry, nx, ny = swap_group_kendall(zx, zy, z, variant="b", min_pairs=3)(masks)
    assert rx.shape == nx.shape == (2, 6, 4)
    for b, m in enumerate(masks):
        for swapped, r, n in ((np.where(m, zy, zx), rx, nx), (np.where(m, zx, zy), ry, ny)):
            want_r, want_n = xcorrstat._kernels.kendall(swapped, z, variant="b", min_pairs=3)
            np.testing.assert_array_equal(r[:, b], want_r)
            np.testing.assert_array_equal(n[:, b], want_n)


@pytest.mark.parametrize("gaps", GAPS)
def test_allpairs_within_system_pearson_equals_the_swapped_matrices(gaps):
    rng = np.random.default_rng(7)
    x = rng.normal(size=(4, 5, 40)).round(2)
    z = rng.integers(0, 5, (5, 40)).astype(float)
    if gaps != "complete":
        holes = rng.random(x.shape[1:]) < 0.2
        x[:, holes] = np.nan
    if gaps == "different-cells":
        x[rng.random(x.shape) < 0.15] = np.nan
        z[rng.random(z.shape) < 0.1] = np.nan
    x[2, 1] = 1.5  # a constant system row
    pi, pk = np.array([0, 0, 1, 3, 2]), np.array([1, 2, 3, 0, 0])
    masks = permutation_masks(4, np.arange(7), 5, 40, "cells")
    fast = prepare_allpairs_input(standardise(x), z, (pi, pk), level=LEVEL, min_pairs=3)(masks)
    kw = dict(level=LEVEL, method="pearson", variant="b", min_pairs=3, skipna=True)
    oracle = swapped_oracle(x[pi], x[pk], np.broadcast_to(z, x[pi].shape), masks, kw)
    check(fast, oracle, "pearson")


@pytest.fixture
def two_cores(monkeypatch):
    """Block sizes as on a 2-core machine, so that the budgets below do give other blocks."""
    monkeypatch.setattr(dask.system, "CPU_COUNT", 2)


def _dataset(seed: int, n_metrics: int = 4, s: int = 6, i: int = 400) -> xr.Dataset:
    rng = np.random.default_rng(seed)
    latent = rng.integers(0, 8, (s, i)).astype(float)
    data = {f"m{k}": (("system", "input"), latent + rng.normal(size=(s, i)).round(1)) for k in range(n_metrics)}
    data["human"] = (("system", "input"), latent + rng.integers(0, 3, (s, i)))
    ds = xr.Dataset(data, coords={"system": [f"S{k}" for k in range(s)], "input": [f"d{j}" for j in range(i)]})
    ds["m1"] = ds["m1"].where(rng.random((s, i)) > 0.1)  # missing in other cells than the other metrics
    ds["human"] = ds["human"].where(rng.random((s, i)) > 0.05)
    ds["human"].attrs["role"] = "human"
    return ds


def _same(a: xr.Dataset, b: xr.Dataset) -> None:
    assert set(a.variables) == set(b.variables)
    for name in a.variables:
        np.testing.assert_array_equal(np.asarray(a[name]), np.asarray(b[name]), err_msg=str(name))


@pytest.mark.parametrize(("method", "average"), [("pearson", "macro"), ("pearson", "weighted"),
                                                  ("kendall", "macro"), ("kendall", "pairs")])
def test_compare_and_permutation_test_do_not_depend_on_the_budget(two_cores, method, average):
    ds = _dataset(1)
    test = xcorrstat.Permutation(("system", "input"), n_resamples=150, rng=3, keep_distribution=True)
    variant = "a" if average == "pairs" else "b"
    runs, single = {}, {}
    for budget in ("16MiB", "4GiB"):
        with xcorrstat.set_options(memory_budget=budget):
            runs[budget] = xcorrstat.compare(ds, target="human", common_cells=False, level=LEVEL, method=method, variant=variant,
                                             average=average, test=test).compute()
            single[budget] = xcorrstat.permutation_test(ds, x="m0", y="m1", target="human", level=LEVEL,
                                                        method=method, variant=variant, average=average,
                                                        test=test).compute()
    _same(runs["16MiB"], runs["4GiB"])
    _same(single["16MiB"], single["4GiB"])
    # every pair's draws in compare are those of the pair's own permutation test (the same masks)
    pair = runs["4GiB"]["distribution"].sel(metric="m0", other_metric="m1").values
    check(pair, single["4GiB"]["distribution"].values, method)


def test_compare_draws_equal_the_oracle_for_every_pair():
    ds = _dataset(2, n_metrics=3, s=5, i=60)
    n = 12
    for method, average in itertools.product(["pearson", "kendall"], ["macro", "weighted"]):
        res = xcorrstat.compare(ds, target="human", common_cells=False, level=LEVEL, method=method, average=average,
                                test=xcorrstat.Permutation(("system", "input"), n_resamples=n, rng=9,
                                                           keep_distribution=True)).compute()
        names = list(res["metric"].values)
        x = np.stack([ds[m].values for m in names])
        masks = permutation_masks(9, np.arange(n), 5, 60, "cells")
        kw = dict(level=LEVEL, method=method, variant="b", min_pairs=3, skipna=True, average=average)
        for a, b in itertools.combinations(range(len(names)), 2):
            oracle = swapped_oracle(x[a][None], x[b][None], ds["human"].values[None], masks, kw)[0]
            got = res["distribution"].sel(metric=names[a], other_metric=names[b]).values
            check(got, oracle, method)


@pytest.mark.parametrize("seed", range(8))
def test_group_tables_are_the_rows_tables_end_to_end(seed):
    # all rows' tables sorted at once equal each row's own table (the oracle: one row at a time)
    from xcorrstat._kernels.rank.global_swap import _swap_row, group_tables

    rng = np.random.default_rng(seed)
    for trial in range(30):
        r, n = int(rng.integers(1, 8)), int(rng.integers(1, 12))
        levels = int(rng.choice([2, 3, 6, 1000]))
        xf, yf = (rng.integers(0, levels, (r, n)) / 3.0 for _ in range(2))
        zf = rng.integers(0, int(rng.choice([2, 4, 50])), (r, n)).astype(float)
        xf[xf == 0] = -0.0  # equal to 0.0
        if trial % 2:
            for a in (xf, yf, zf):
                a[rng.random((r, n)) < 0.25] = np.nan
        if trial % 3 == 0:  # X and Y valid in the same cells: the linear form
            yf = np.where(np.isnan(xf), np.nan, np.nan_to_num(yf, nan=1.0))
        cell, src, zr, e_off, nbits, runs, run_off, lin, c0, fixed, linear = group_tables(xf, yf, zf)
        for k in range(r):
            row = _swap_row(xf[k:k + 1], yf[k:k + 1], zf[k:k + 1])
            part = slice(e_off[k], e_off[k + 1])
            np.testing.assert_array_equal(cell[part], row.cell)
            np.testing.assert_array_equal(src[part], row.src)
            np.testing.assert_array_equal(zr[part], row.table.zr)
            assert nbits[k] == row.table.nbits
            for j in range(7):
                np.testing.assert_array_equal(runs[j][run_off[j, k]:run_off[j, k + 1]], row.groups[j])
            assert bool(linear[k]) == (row.linear is not None)
            if row.linear is not None:
                np.testing.assert_array_equal(lin[k * n:(k + 1) * n], row.linear[0])
                assert c0[k] == row.linear[1] and tuple(fixed[:, k]) == row.fixed
