"""Correlation matrices along a dim against pandas ``DataFrame.corr`` and loop oracles.

The wide table of a (label, a, b) array has one row per (a, b) combination and one
column per label; ``matrix(..., min_pairs=k)`` must equal
``DataFrame.corr(method=..., min_periods=k)`` on it, NaN for NaN, with the one
documented difference: pandas' Kendall writes 1.0 on the diagonal of a constant
column, where the package gives NaN.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from scipy import stats

import xcorrstat  # noqa: F401  (registers the accessors)
from xcorrstat.agreement import matrix

ATOL = 1e-12
METHODS = ["pearson", "spearman", "kendall"]


def random_table(g, *, n_labels, n_a, n_b, nan_frac, ties, constant_col):
    shape = (n_labels, n_a, n_b)
    v = g.integers(0, 4, size=shape).astype(float) if ties else g.normal(size=shape)
    v[g.random(shape) < nan_frac] = np.nan
    if constant_col:
        v[g.integers(n_labels)] = 2.0
    return xr.DataArray(
        v, dims=("label", "a", "b"),
        coords={"label": [f"L{k}" for k in range(n_labels)], "a": np.arange(n_a), "b": np.arange(n_b)},
        name="score",
    )


def wide(da: xr.DataArray, over: str, along: tuple[str, ...]) -> pd.DataFrame:
    arr = da.transpose(*along, over).values.reshape(-1, da.sizes[over])
    return pd.DataFrame(arr, columns=da[over].values)


def pandas_corr(df, method, min_periods):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return df.corr(method=method, min_periods=min_periods).to_numpy().copy()


def constant_columns(df, min_periods):
    """Columns with fewer than min_periods values or a single value: their Kendall diagonal differs."""
    return np.array([(df[c].count() < min_periods) or (df[c].nunique() < 2) for c in df.columns])


CASES = [(method, seed) for method in METHODS for seed in range(40)]


@pytest.mark.parametrize("method,seed", CASES)
def test_equals_pandas_corr(method, seed):
    g = np.random.default_rng(seed)
    da = random_table(g, n_labels=int(g.integers(2, 7)), n_a=int(g.integers(1, 5)), n_b=int(g.integers(2, 6)),
                      nan_frac=[0.0, 0.1, 0.4][seed % 3], ties=seed % 2 == 1, constant_col=seed % 5 == 0)
    k = [2, 3, 5][seed % 3]
    got = matrix(da, over="label", along=("a", "b"), method=method, min_pairs=k)
    df = wide(da, "label", ("a", "b"))
    expected = pandas_corr(df, method, k)
    if method == "kendall":  # documented difference: NaN, not 1.0, on the diagonal of a constant column
        idx = np.flatnonzero(constant_columns(df, k))
        expected[idx, idx] = np.nan
    np.testing.assert_allclose(got.transpose("label", "other_label").values, expected, rtol=0, atol=ATOL)
    # n counts the rows where both columns are present
    present = df.notna().to_numpy().astype(int)
    np.testing.assert_array_equal(got["n"].values, present.T @ present)


@pytest.mark.parametrize("method", METHODS)
def test_pandas_default_min_periods_is_min_pairs_2(method):
    g = np.random.default_rng(7)
    da = random_table(g, n_labels=5, n_a=2, n_b=3, nan_frac=0.5, ties=False, constant_col=False)
    df = wide(da, "label", ("a", "b"))
    expected = pandas_corr(df, method, 1)
    if method == "kendall":  # pandas' 1.0 on the diagonal of a column with one value
        idx = np.flatnonzero(constant_columns(df, 2))
        expected[idx, idx] = np.nan
    got = matrix(da, over="label", along=("a", "b"), method=method, min_pairs=2).values
    np.testing.assert_allclose(got, expected, rtol=0, atol=ATOL)
    # at least one cell is undefined only because of the threshold 3
    stricter = matrix(da, over="label", along=("a", "b"), method=method, min_pairs=3).values
    assert np.isnan(stricter).sum() > np.isnan(got).sum()


def test_kendall_constant_column_diagonal_differs_from_pandas():
    da = xr.DataArray([[1.0, 2, 3, 4], [5, 5, 5, 5]], dims=("label", "obs"), coords={"label": ["x", "c"]})
    got = matrix(da, over="label", method="kendall")
    assert float(got.sel(label="x", other_label="x")) == 1.0
    assert np.isnan(float(got.sel(label="c", other_label="c")))
    assert pd.DataFrame({"x": [1.0, 2, 3, 4], "c": [5.0] * 4}).corr(method="kendall").loc["c", "c"] == 1.0


def test_spearman_ranks_each_pair_afresh():
    # a is missing where b has its extreme value: b's ranks over the common rows differ from its own ranks
    df = pd.DataFrame({"a": [1.0, 2, 3, 4, np.nan, 6], "b": [2.0, 1, 4, 3, -100, 5], "c": [3.0, 1, 2, 6, 5, 4]})
    da = xr.DataArray(df.to_numpy().T, dims=("label", "row"), coords={"label": list(df.columns)})
    got = matrix(da, over="label", method="spearman", min_pairs=2).values
    np.testing.assert_allclose(got, df.corr(method="spearman").to_numpy(), rtol=0, atol=ATOL)
    valid = df[["a", "b"]].dropna()
    assert got[0, 1] == pytest.approx(stats.spearmanr(valid["a"], valid["b"]).statistic, abs=ATOL)


def test_batch_dims_and_default_along():
    g = np.random.default_rng(3)
    v = g.normal(size=(3, 4, 5, 6))
    v[g.random(v.shape) < 0.2] = np.nan
    da = xr.DataArray(v, dims=("group", "label", "a", "b"), coords={"group": ["g0", "g1", "g2"]})
    got = matrix(da, over="label", along=("a", "b"), method="spearman")
    assert got.dims == ("group", "label", "other_label")
    for grp in got["group"].values:
        df = wide(da.sel(group=grp), "label", ("a", "b"))
        np.testing.assert_allclose(got.sel(group=grp).values, pandas_corr(df, "spearman", 3), rtol=0, atol=ATOL)
    everything = matrix(da, over="label")  # along = every other dim
    df = wide(da, "label", ("group", "a", "b"))
    np.testing.assert_allclose(everything.values, pandas_corr(df, "pearson", 3), rtol=0, atol=ATOL)
    assert everything.attrs["along"] == ["group", "a", "b"]


def test_exactly_symmetric_and_labelled():
    g = np.random.default_rng(4)
    da = random_table(g, n_labels=6, n_a=3, n_b=7, nan_frac=0.2, ties=False, constant_col=False)
    ds = da.to_dataset()
    got = matrix(ds, var="score", over="label", method="pearson")
    np.testing.assert_array_equal(got.values, got.values.T)
    assert list(got["other_label"].values) == list(da["label"].values)
    assert got.name == "correlation"
    assert got.attrs["method"] == "pearson" and got.attrs["over"] == "label" and got.attrs["min_pairs"] == 3
    np.testing.assert_array_equal(np.diag(got.values), 1.0)


def test_dask_matches_eager():
    g = np.random.default_rng(5)
    v = g.normal(size=(4, 5, 30))
    v[g.random(v.shape) < 0.1] = np.nan
    da = xr.DataArray(v, dims=("group", "label", "obs"))
    eager = matrix(da, over="label", along="obs", method="kendall")
    lazy = matrix(da.chunk({"group": 1, "obs": 10}), over="label", along="obs", method="kendall")
    assert lazy.chunks is not None
    xr.testing.assert_identical(eager, lazy.compute())


def test_min_pairs_option():
    g = np.random.default_rng(6)
    da = random_table(g, n_labels=4, n_a=2, n_b=3, nan_frac=0.45, ties=False, constant_col=False)
    with xcorrstat.set_options(min_pairs=4):
        got = matrix(da, over="label")
    df = wide(da, "label", ("a", "b"))
    np.testing.assert_allclose(got.values, pandas_corr(df, "pearson", 4), rtol=0, atol=ATOL)
    assert got.attrs["min_pairs"] == 4


# --- scores of a score Dataset at a level -----------------------------------


def score_dataset(g, *, n_scores=4, n_systems=7, n_inputs=9, nan_frac=0.0):
    data = {}
    for k in range(n_scores):
        v = g.normal(size=(n_systems, n_inputs))
        v[g.random(v.shape) < nan_frac] = np.nan
        data[f"s{k}"] = (("system", "input"), v)
    return xr.Dataset(data, coords={"system": [f"S{i}" for i in range(n_systems)],
                                    "input": [f"d{j}" for j in range(n_inputs)]})


def scipy_stat(a, b, method):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if method == "pearson":
            return stats.pearsonr(a, b).statistic
        if method == "spearman":
            return stats.spearmanr(a, b).statistic
        return stats.kendalltau(a, b, variant="b").statistic


@pytest.mark.parametrize("method", METHODS)
def test_system_level_equals_pandas_on_system_means(method):
    ds = score_dataset(np.random.default_rng(10))
    got = matrix(ds, level="system", method=method)
    table = ds.to_dataframe().groupby("system").mean()
    np.testing.assert_allclose(got.values, table.corr(method=method).to_numpy(), rtol=0, atol=ATOL)
    assert got.dims == ("metric", "other_metric") and list(got["metric"].values) == list(ds.data_vars)


@pytest.mark.parametrize("method", METHODS)
def test_system_level_with_gaps_uses_cells_present_in_both(method):
    ds = score_dataset(np.random.default_rng(11), nan_frac=0.3)
    got = matrix(ds, level="system", method=method)
    names = list(ds.data_vars)
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            x, z = ds[a].values, ds[b].values
            both = ~np.isnan(x) & ~np.isnan(z)
            keep = both.any(axis=1)
            mx = np.array([x[s][both[s]].mean() for s in range(x.shape[0]) if keep[s]])
            mz = np.array([z[s][both[s]].mean() for s in range(z.shape[0]) if keep[s]])
            expected = scipy_stat(mx, mz, method) if len(mx) >= 3 else np.nan
            assert got.values[i, j] == pytest.approx(expected, abs=1e-10, nan_ok=True)


@pytest.mark.parametrize("method", METHODS)
def test_input_level_is_mean_of_per_input_pandas_matrices(method):
    ds = score_dataset(np.random.default_rng(12), nan_frac=0.15)
    got = matrix(ds, level="input", method=method)
    table = ds.to_dataframe()
    per_input = np.stack([pandas_corr(table.xs(d, level="input"), method, 3) for d in ds["input"].values])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = np.nanmean(per_input, axis=0)
    if method == "kendall":
        # the diagonal differs only where pandas' constant-column 1.0 enters; off-diagonal must agree
        off = ~np.eye(len(ds.data_vars), dtype=bool)
        np.testing.assert_allclose(got.values[off], expected[off], rtol=0, atol=ATOL)
    else:
        np.testing.assert_allclose(got.values, expected, rtol=0, atol=ATOL)
    np.testing.assert_array_equal(got["n"].values, np.sum(~np.isnan(per_input), axis=0))


def test_global_level_equals_pandas_over_cells():
    ds = score_dataset(np.random.default_rng(13), nan_frac=0.2)
    got = matrix(ds, level="global", method="spearman", metrics=["s2", "s0", "s3"])
    table = ds.to_dataframe()[["s2", "s0", "s3"]]
    np.testing.assert_allclose(got.values, pandas_corr(table, "spearman", 3), rtol=0, atol=ATOL)
    assert list(got["other_metric"].values) == ["s2", "s0", "s3"]


def test_level_default_includes_human_scores(summeval):
    got = matrix(summeval[["rouge_2_f1", "qa_eval_f1", "expert_relevance"]], level="system", method="kendall")
    assert "expert_relevance" in got["metric"].values
    expected = stats.kendalltau(summeval["qa_eval_f1"].mean("input"), summeval["expert_relevance"].mean("input"))
    assert float(got.sel(metric="qa_eval_f1", other_metric="expert_relevance")) == pytest.approx(expected.statistic)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(over="nope"), "over must name a dim"),
        (dict(over="label", along="label"), "already used by over"),
        (dict(over="label", along=("a", "a")), "names a dim twice"),
        (dict(over="label", method="cosine"), "method must be one of"),
        (dict(over="label", min_pairs=1), "min_pairs must be an integer >= 2"),
        (dict(over="label", metrics=["x"]), "metrics: only used with level"),
    ],
)
def test_errors_name_the_argument(kwargs, match):
    da = random_table(np.random.default_rng(0), n_labels=3, n_a=2, n_b=3, nan_frac=0, ties=False,
                      constant_col=False)
    with pytest.raises(ValueError, match=match):
        matrix(da, **kwargs)


def test_errors_dataset_and_level():
    ds = score_dataset(np.random.default_rng(0))
    with pytest.raises(ValueError, match="var: data is a Dataset"):
        matrix(ds, over="system")
    with pytest.raises(ValueError, match="along and var: not used with level"):
        matrix(ds, level="system", along="input")
    with pytest.raises(ValueError, match="level must be one of"):
        matrix(ds, level="corpus")
    with pytest.raises(ValueError, match="duplicate labels"):
        matrix(xr.DataArray(np.zeros((2, 3)), dims=("label", "obs"), coords={"label": ["a", "a"]}), over="label")
    with pytest.raises(ValueError, match="infinite"):
        matrix(xr.DataArray([[1.0, np.inf, 2], [1, 2, 3]], dims=("label", "obs")), over="label")
