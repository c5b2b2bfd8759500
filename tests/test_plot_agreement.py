"""Heatmaps of the agreement analyses: axes, labels, colour maps, annotations."""

from __future__ import annotations

import builtins

import numpy as np
import pytest
import xarray as xr

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from xcorrstat import agreement as agr  # noqa: E402
from xcorrstat import plot as xplot  # noqa: E402
from xcorrstat.plot._agreement import CMAPS, heatmap  # noqa: E402


@pytest.fixture(scope="module")
def bench():
    return agr.synthetic_benchmark(rng=0)


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def tick_labels(ax, axis):
    ticks = ax.get_xticklabels() if axis == "x" else ax.get_yticklabels()
    return [t.get_text() for t in ticks]


@pytest.mark.parametrize("method,cmap", [("pearson", "RdBu"), ("spearman", "RdBu"), ("kendall", "PuOr_r")])
def test_plot_matrix(bench, method, cmap):
    r = agr.matrix(bench, var="accuracy", over="batch_size", along=("dataset", "strategy"), method=method)
    ax = xplot.plot_matrix(r)
    assert isinstance(ax, matplotlib.axes.Axes)
    image = ax.images[0]
    assert image.get_cmap().name == cmap
    assert image.get_clim() == (-1.0, 1.0)
    assert tick_labels(ax, "x") == ["5", "10", "20", "40"] == tick_labels(ax, "y")
    assert ax.get_xlabel() == "other_batch_size" and ax.get_ylabel() == "batch_size"
    assert len(ax.texts) == 16 and ax.texts[0].get_text() == "1.00"
    assert method.capitalize() in ax.get_title()


def test_plot_matrix_level_and_nan_cells(summeval):
    r = agr.matrix(summeval[["rouge_1_f1", "qa_eval_f1", "expert_relevance"]], level="system", method="kendall")
    r = r.where(r.metric != "rouge_1_f1")  # blank a row
    ax = xplot.plot_matrix(r, fmt=".1f")
    assert tick_labels(ax, "y") == ["rouge_1_f1", "qa_eval_f1", "expert_relevance"]
    assert len(ax.texts) == 6  # NaN cells are left blank
    assert "system level" in ax.get_title()


def test_plot_jaccard(bench):
    j = agr.jaccard(bench, var="selected", over="strategy", item="item", union="cycle")
    ax = xplot.plot_jaccard(j)
    assert ax.images[0].get_cmap().name == "PiYG"
    assert ax.images[0].get_clim() == (0.0, 1.0)
    assert tick_labels(ax, "y") == list(bench["strategy"].values)
    assert "Jaccard similarity" in ax.get_title()
    d = agr.jaccard(bench, var="selected", over="strategy", item="item", union="cycle", distance=True)
    assert xplot.plot_jaccard(d).images[0].get_cmap().name == "PiYG_r"


def test_plot_leaderboard_agreement_with_intervals(bench):
    res = agr.leaderboard_agreement(bench, var="accuracy", competitor="strategy", condition="dataset",
                                    between="batch_size", n_resamples=100, rng=0)
    ax = xplot.plot_leaderboard_agreement(res)
    assert ax.images[0].get_cmap().name == "PuOr_r"
    texts = [t.get_text() for t in ax.texts]
    assert len(texts) == 16
    assert texts[0] == "1.00"  # diagonal: no interval
    low, high = float(res["low"][0, 1]), float(res["high"][0, 1])
    assert texts[1] == f"{float(res['tau'][0, 1]):.2f}\n[{low:.2f}, {high:.2f}]"
    bare = xplot.plot_leaderboard_agreement(res, show_ci=False)
    assert all("\n" not in t.get_text() for t in bare.texts)


def test_three_analyses_have_distinct_colours():
    assert len({CMAPS["pearson"], CMAPS["jaccard"], CMAPS["kendall"]}) == 3
    top = {name: matplotlib.colormaps[cmap](1.0) for name, cmap in CMAPS.items()}
    r, g, b, _ = top["pearson"]
    assert b > r and b > g  # blue
    r, g, b, _ = top["jaccard"]
    assert g > r and g > b  # green
    r, g, b, _ = top["kendall"]
    assert r > g > b  # orange


def test_heatmap_on_given_axes_and_custom_text():
    fig, ax = plt.subplots()
    da = xr.DataArray(np.array([[0.1, np.nan], [0.3, 0.4]]), dims=("row", "col"),
                      coords={"row": ["a", "b"], "col": ["x", "y"]})
    out = heatmap(da, ax=ax, text=[["p", "q"], ["r", "s"]], colorbar=False, title="t")
    assert out is ax
    assert [t.get_text() for t in ax.texts] == ["p", "q", "r", "s"]
    assert ax.get_title() == "t" and tick_labels(ax, "x") == ["x", "y"]


def test_heatmap_needs_two_dims(bench):
    r = agr.matrix(bench, var="accuracy", over="batch_size", along="strategy")  # one matrix per dataset
    with pytest.raises(ValueError, match=r"exactly 2 dims.*\.sel\(dataset=\.\.\.\)"):
        xplot.plot_matrix(r)
    with pytest.raises(TypeError, match="leaderboard_agreement"):
        xplot.plot_leaderboard_agreement(r)


def test_missing_matplotlib_message(monkeypatch):
    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name.startswith("matplotlib"):
            raise ImportError("No module named 'matplotlib'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    with pytest.raises(ImportError, match=r'pip install "xcorrstat\[plot\]"'):
        heatmap(xr.DataArray(np.eye(2), dims=("a", "b")))
