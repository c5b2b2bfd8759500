"""Figures stay readable with many metrics: text size, nothing cut, clusters, per-level order, the page.

A figure shown at its natural size (one figure inch = one CSS inch = 96 CSS pixels) draws a font of
``p`` points ``p * 96 / 72`` pixels tall; every text must be at least 8 pixels there, and lie inside
the figure once drawn (the renderer's bounding boxes, not the code's size estimates).
"""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest
import xarray as xr

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.axis import Tick
from matplotlib.text import Text

import xcorrstat
from xcorrstat import plot as xplot
from xcorrstat.plot._backend import SCREEN_DPI, wrap_text
from xcorrstat.plot._common import metric_order
from xcorrstat._reporting.html import page_html

N = 60
LONG_TARGET = "human_judgement_of_the_overall_quality_by_experts"  # 49 characters: cut to 40 in figures


def names(n):
    # names of every length up to the 40 characters drawn whole
    return [f"m{k:02d}_" + "abcdefghij" * 4 for k in range(n)]


def greedy_clusters(corr):
    """Clusters as compare gives them: non-decreasing along the correlation order, 0 for NaN."""
    order = sorted(range(len(corr)), key=lambda i: -corr[i])
    cluster = np.zeros(len(corr), dtype=np.int64)
    for rank, i in enumerate(order):
        cluster[i] = 1 + rank // 7
    return cluster


def interval_result(n=N, *, seed=0, with_cluster=True):
    rng = np.random.default_rng(seed)
    corr = rng.uniform(-0.2, 0.9, n)
    width = rng.uniform(0.05, 0.3, n)
    ds = xr.Dataset({"correlation": ("metric", corr), "low": ("metric", corr - width),
                     "high": ("metric", corr + width)},
                    coords={"metric": [s[: 4 + (k % 35)] + f"{k:02d}" for k, s in enumerate(names(n))]},
                    attrs={"method": "kendall", "target": LONG_TARGET, "level": "system", "ci": "percentile",
                           "confidence_level": 0.95})
    if with_cluster:
        ds["cluster"] = ("metric", greedy_clusters(corr))
    return ds


def compare_result(n=N, *, seed=1):
    rng = np.random.default_rng(seed)
    corr = np.sort(rng.uniform(-0.2, 0.9, n))[::-1]
    metric = [s[: 4 + (k % 35)] + f"{k:02d}" for k, s in enumerate(names(n))]
    pvalue = rng.uniform(0, 0.2, (n, n))
    np.fill_diagonal(pvalue, np.nan)
    return xr.Dataset(
        {"pvalue": (("metric", "other_metric"), pvalue),
         "significant": (("metric", "other_metric"), pvalue < 0.01),
         "correlation": ("metric", corr), "cluster": ("metric", greedy_clusters(corr))},
        coords={"metric": metric, "other_metric": metric},
        attrs={"method": "pearson", "target": LONG_TARGET, "level": "input", "test": "permutation",
               "correction": "holm", "alpha": 0.05})


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def all_axes(fig):
    out, todo = [], list(fig.axes)
    while todo:
        ax = todo.pop()
        out.append(ax)
        todo.extend(ax.child_axes)
    return out


def texts(fig):
    """The texts drawn: visible, not empty, and for tick labels only those of ticks in view."""
    in_view = set()
    for ax in all_axes(fig):
        for axis in (ax.xaxis, ax.yaxis):
            lo, hi = sorted(axis.get_view_interval())
            for tick in [*axis.get_major_ticks(), *axis.get_minor_ticks()]:
                if lo - 1e-9 <= tick.get_loc() <= hi + 1e-9:
                    in_view.update((id(tick.label1), id(tick.label2)))
    tick_labels = {id(t) for tick in fig.findobj(Tick) for t in (tick.label1, tick.label2)}
    return [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()
            and (id(t) not in tick_labels or id(t) in in_view)]


def check_readable(fig):
    """Every text at least 8 px at natural size, and inside the figure after drawing."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    box = fig.bbox
    shown = texts(fig)
    assert shown
    for t in shown:
        assert t.get_fontsize() * SCREEN_DPI / 72 >= 8.0 - 1e-9, (t.get_text(), t.get_fontsize())
        ext = t.get_window_extent(renderer)
        inside = (ext.x0 >= box.x0 - 0.5 and ext.x1 <= box.x1 + 0.5 and ext.y0 >= box.y0 - 0.5
                  and ext.y1 <= box.y1 + 0.5)
        assert inside, (t.get_text(), ext, box)
    return renderer


def check_no_overlap(labels, renderer, axis):
    """Neighbouring tick labels do not overlap (along the axis they are spread on)."""
    extents = sorted((t.get_window_extent(renderer) for t in labels), key=lambda e: e.y0 if axis == "y" else e.x0)
    for a, b in itertools.pairwise(extents):
        if axis == "y":
            assert a.y1 <= b.y0 + 0.5
        else:
            assert a.x1 <= b.x0 + 0.5


# -- the significance matrix ------------------------------------------------------------------------


def test_matrix_of_60_metrics_is_readable_and_whole():
    res = compare_result()
    ax = xplot.plot_significance(res)
    fig = ax.figure
    renderer = check_readable(fig)
    xt, yt = ax.get_xticklabels(), ax.get_yticklabels()
    assert len(xt) == len(yt) == N
    # tick labels: >= 8 px at the natural size, and at every saved resolution >= 96 dpi
    for t in [*xt, *yt]:
        assert t.get_fontsize() * SCREEN_DPI / 72 >= 8.0
    check_no_overlap(yt, renderer, "y")
    check_no_overlap(xt, renderer, "x")
    # the title and the colour bar's label lie inside the figure (check_readable), and are there
    (bar,) = ax.child_axes
    assert "p-value" in bar.get_ylabel() and "holm" in ax.get_title()
    # no name cut by the figure: the longest drawn name is whole
    longest = max((t.get_text() for t in yt), key=len)
    assert len(longest) == max(len(str(m)) for m in res["metric"].values)


@pytest.mark.parametrize("n", [2, 7])
def test_few_metrics_with_a_long_target_keep_title_and_bar_label_inside(n):
    ax = xplot.plot_significance(compare_result(n))
    check_readable(ax.figure)
    # the title was broken into lines instead of running off the figure
    assert "\n" in ax.get_title()


def test_matrix_levels_stacked_each_with_its_title():
    a, b = compare_result(12, seed=1), compare_result(12, seed=2)
    both = xr.concat([a, b], dim=xr.DataArray(["system", "input"], dims="level", name="level"),
                     combine_attrs="drop_conflicts")
    fig = xplot.plot_significance(both)
    matrices = [ax for ax in fig.axes if ax.get_ylabel() == "metric (better)"]
    assert len(matrices) == 2
    titles = [" ".join(ax.get_title().split()) for ax in matrices]
    assert "system level" in titles[0] and "input level" in titles[1]
    # stacked: the second matrix below the first
    assert matrices[1].get_position().y1 < matrices[0].get_position().y0
    check_readable(fig)


# -- the forest plot --------------------------------------------------------------------------------


def test_forest_of_60_metrics_two_levels_is_readable_and_whole():
    both = xr.concat([interval_result(seed=0), interval_result(seed=5)],
                     dim=xr.DataArray(["system", "input"], dims="level", name="level"),
                     combine_attrs="drop_conflicts")
    fig = xplot.plot_ci(both)
    renderer = check_readable(fig)
    for ax in fig.axes:
        assert len(ax.get_yticklabels()) == N
        check_no_overlap(ax.get_yticklabels(), renderer, "y")


def test_single_forest_with_a_long_target_keeps_its_title_inside():
    ax = xplot.plot_ci(interval_result(5, with_cluster=False))
    check_readable(ax.figure)
    assert "\n" in ax.get_title()


def expected_order(ds):
    """Oracle: (cluster, -correlation) with cluster 0 last, by Python's sort."""
    corr = ds["correlation"].values
    cluster = ds["cluster"].values if "cluster" in ds else np.ones(len(corr), dtype=int)
    key = [(c if c > 0 else 10**9, -r if np.isfinite(r) else np.inf, i)
           for i, (c, r) in enumerate(zip(cluster, corr))]
    return [str(ds["metric"].values[k[2]]) for k in sorted(key)]


def cluster_runs(ordered_clusters):
    runs, start = [], 0
    for i in range(1, len(ordered_clusters) + 1):
        if i == len(ordered_clusters) or ordered_clusters[i] != ordered_clusters[start]:
            runs.append((start, i, int(ordered_clusters[start])))
            start = i
    return runs


def test_forest_draws_the_clusters_in_cluster_order():
    ds = interval_result(20, seed=3)
    ds["correlation"][4] = np.nan  # undefined: cluster 0, last
    ds["cluster"][4] = 0
    ax = xplot.plot_ci(ds)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    order = expected_order(ds)
    assert labels == order
    ordered = ds["cluster"].sel(metric=order).values
    runs = cluster_runs(ordered)
    bands = [p for p in ax.patches if p.get_gid() == "cluster"]
    assert len(bands) == len(runs) > 2
    spans = sorted((round(min(p.get_y(), p.get_y() + p.get_height()) + 0.5),
                    round(max(p.get_y(), p.get_y() + p.get_height()) + 0.5)) for p in bands)
    assert spans == [(a, b) for a, b, _ in runs]
    # every other band shaded
    shaded = [p.get_facecolor()[3] > 0 for p in sorted(bands, key=lambda p: min(p.get_y(), p.get_y() + p.get_height()))]
    assert shaded == [k % 2 == 0 for k in range(len(runs))]
    # the cluster numbers on the right, "-" for the undefined one
    (side,) = [c for c in ax.child_axes if c.get_gid() == "cluster"]
    numbers = [t.get_text() for t in side.yaxis.get_ticklabels()]
    assert numbers == [str(c) if c else "-" for _, _, c in runs]
    np.testing.assert_allclose(side.get_yticks(), [(a + b - 1) / 2 for a, b, _ in runs])
    assert side.get_ylabel() == "cluster"
    check_readable(ax.figure)


def test_forest_without_clusters_draws_none():
    ax = xplot.plot_ci(interval_result(10, with_cluster=False))
    assert not [p for p in ax.patches if p.get_gid() == "cluster"] and not ax.child_axes
    ax = xplot.plot_ci(interval_result(10), clusters=False)
    assert not [p for p in ax.patches if p.get_gid() == "cluster"] and not ax.child_axes


def test_each_panel_in_its_own_order_by_default():
    sys_, inp = interval_result(15, seed=0), interval_result(15, seed=9)
    assert expected_order(sys_) != expected_order(inp)
    both = xr.concat([sys_, inp], dim=xr.DataArray(["system", "input"], dims="level", name="level"),
                     combine_attrs="drop_conflicts")
    fig = xplot.plot_ci(both)
    for ax, res in zip(fig.axes, (sys_, inp)):
        assert [t.get_text() for t in ax.get_yticklabels()] == expected_order(res)
        (points,) = [line for line in ax.lines if line.get_gid() == "correlation"]
        np.testing.assert_array_equal(points.get_xdata(), res["correlation"].sel(metric=expected_order(res)).values)
    # aligned on purpose: the first level's order everywhere, and the figure says so
    fig = xplot.plot_ci(both, align=True)
    first = expected_order(sys_)
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == first
    (points,) = [line for line in fig.axes[1].lines if line.get_gid() == "correlation"]
    np.testing.assert_array_equal(points.get_xdata(), inp["correlation"].sel(metric=first).values)
    assert "in the order of the system level" in " ".join(fig.get_suptitle().split())


# -- helpers ----------------------------------------------------------------------------------------


def test_metric_order_matches_a_sort_of_tuples():
    rng = np.random.default_rng(4)
    for _ in range(20):
        n = int(rng.integers(1, 30))
        corr = np.round(rng.uniform(-1, 1, n), 1)  # ties
        corr[rng.random(n) < 0.1] = np.nan
        cluster = np.where(np.isnan(corr), 0, rng.integers(1, 5, n))
        ds = xr.Dataset({"correlation": ("metric", corr), "cluster": ("metric", cluster)},
                        coords={"metric": [str(i) for i in range(n)]})
        assert [str(i) for i in metric_order(corr, cluster)] == expected_order(ds)
        nan_last = sorted(range(n), key=lambda i: (np.isnan(corr[i]), -np.nan_to_num(corr[i]), i))
        assert metric_order(corr).tolist() == nan_last


@pytest.mark.parametrize("width", [1.0, 2.5, 4.0])
def test_wrapped_lines_fit_as_drawn(width):
    text = ("Kendall correlation with human_judgement_of_the_overall_qua...(49 characters), input level, "
            "95% percentile bootstrap CI, and a_word_much_longer_than_one_inch_of_text_at_ten_points")
    wrapped = wrap_text(text, width, fontsize=10)
    assert "".join(wrapped.split()) == "".join(text.split())  # nothing lost, only breaks added
    fig = plt.figure(dpi=SCREEN_DPI)
    renderer = fig.canvas.get_renderer()
    for line in wrapped.split("\n"):
        drawn = fig.text(0, 0, line, fontsize=10).get_window_extent(renderer)
        assert drawn.width <= width * SCREEN_DPI + 0.5, line


# -- the HTML page ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def report60():
    rng = np.random.default_rng(0)
    human = rng.normal(size=12)
    data = {"human": ("system", human)}
    for k, name in enumerate(names(N)):
        data[name[: 4 + (k % 35)] + f"{k:02d}"] = ("system", human * (k / N) * 3 + rng.normal(size=12))
    ds = xr.Dataset(data, coords={"system": [f"s{i}" for i in range(12)]})
    return xcorrstat.report(ds, target="human", n_resamples=100, rng=0, correction=None)


def test_page_shows_figures_at_natural_size(report60):
    assert report60.intervals["cluster"].max() > 1
    figures = report60.figures()
    check_readable(figures["ci"])  # (the matrix is drawn whole by the tests above)
    for t in texts(figures["significance"]):
        assert t.get_fontsize() * SCREEN_DPI / 72 >= 8.0
    # the size shown comes from the figures, not from the PNG's pixels: stand-in bytes keep the test fast
    page = page_html(report60, figures, png={"ci": b"\x89PNG ci", "significance": b"\x89PNG sig"})
    images = re.findall(r'<img class="natural" src="data:image/png;base64,[^"]+" width="(\d+)" height="(\d+)" '
                        r'style="([^"]*)"', page)
    assert len(images) == 2
    for (w, h, style), fig in zip(images, (figures["ci"], figures["significance"])):
        width, height = fig.get_size_inches()
        assert (int(w), int(h)) == (round(width * SCREEN_DPI), round(height * SCREEN_DPI))
        assert "width" not in style and "scale" not in style and "zoom" not in style
    # no style rule scales an image down: the figures' rule says max-width: none, and none other names img
    (css,) = re.findall(r"<style>(.*?)</style>", page, re.DOTALL)
    rules = re.findall(r"([^{}]+)\{([^}]*)\}", css)
    img_rules = [(sel.strip(), body) for sel, body in rules if re.search(r"\bimg\b", sel)]
    assert img_rules
    for _, body in img_rules:
        assert "max-width: none" in body
        assert not re.search(r"(?<!max-)(?<!-)\bwidth\s*:|zoom|transform|max-width:\s*\d", body)
    assert not re.search(r"\b(zoom|transform)\s*:", css)
    # the caption describes the order the panels use
    assert "Each level's panel lists the metrics in its own order" in page
