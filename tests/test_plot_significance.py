"""Significance and interval plots: positions, order, fills and outlines match the results."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

import xcorrstat  # noqa: E402
from xcorrstat import plot as xplot  # noqa: E402
from xcorrstat.plot._namespace import PlotMethods  # noqa: E402

TARGET = "expert_relevance"
SUBSET = ["qa_eval_f1", "rouge_2_recall", "meteor", "rouge_1_f1", "bertscore_f1", "rouge_1_precision",
          "bewte_precision", "s3_pyr"]


@pytest.fixture(scope="module")
def ds():
    return xcorrstat.datasets.summeval()


@pytest.fixture(scope="module")
def boot(ds):
    return ds.corrstat.bootstrap(target=TARGET, level="system", method="kendall",
                                 resample=xcorrstat.Bootstrap(n_resamples=200, rng=0, keep_distribution=True))


@pytest.fixture(scope="module")
def comp(ds):
    return ds.corrstat.compare(target=TARGET, metrics=SUBSET, level="system", method="kendall",
                               test=xcorrstat.Permutation(n_resamples=300, rng=0), correction="holm")


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def ylabels(ax):
    return [t.get_text() for t in ax.get_yticklabels()]


def by_gid(artists, gid):
    return [a for a in artists if a.get_gid() == gid]


def sorted_metrics(res):
    corr = res["correlation"].values
    return [str(m) for m in res["metric"].values[np.argsort(-corr, kind="stable")]]


def check_forest(ax, res):
    order = sorted_metrics(res)
    assert ylabels(ax) == order
    sel = res.sel(metric=order)
    (points,) = by_gid(ax.lines, "correlation")
    np.testing.assert_allclose(points.get_xdata(), sel["correlation"].values)
    np.testing.assert_array_equal(points.get_ydata(), np.arange(len(order)))
    (intervals,) = by_gid(ax.collections, "interval")
    segments = intervals.get_segments()
    assert len(segments) == res.sizes["metric"]
    np.testing.assert_allclose([s[0][0] for s in segments], sel["low"].values)
    np.testing.assert_allclose([s[1][0] for s in segments], sel["high"].values)
    np.testing.assert_array_equal([s[0][1] for s in segments], np.arange(len(order)))
    # best metric at the top
    bottom, top = ax.get_ylim()
    assert top < bottom


# ---------------------------------------------------------------- plot_ci


def test_plot_ci_bootstrap(boot):
    ax = xplot.plot_ci(boot)
    assert isinstance(ax, matplotlib.axes.Axes)
    check_forest(ax, boot)
    # the title is broken into lines that fit the figure
    assert " ".join(ax.get_title().split()) == (
        "Kendall correlation with expert_relevance, system level, 95% percentile bootstrap CI")
    assert "Kendall" in ax.get_xlabel() and TARGET in ax.get_xlabel()
    # height grows with the number of metrics (34 here)
    small = xplot.plot_ci(boot.isel(metric=slice(0, 4)))
    assert ax.figure.get_figheight() > small.figure.get_figheight() + 5
    assert len(ylabels(small)) == 4


def test_plot_ci_fisher_unsorted_and_given_ax(ds):
    f = ds.corrstat.fisher(target=TARGET, metrics=SUBSET, level="input", method="spearman")
    _, ax = plt.subplots()
    out = xplot.plot_ci(f, ax=ax, sort=False, title="mine")
    assert out is ax
    assert ylabels(ax) == SUBSET
    (points,) = by_gid(ax.lines, "correlation")
    np.testing.assert_allclose(points.get_xdata(), f["correlation"].values)
    assert ax.get_title() == "mine"
    default = xplot.plot_ci(f)
    assert "Spearman" in default.get_title() and "input level" in default.get_title()
    assert "95% Fisher z CI" in default.get_title()


def test_plot_ci_levels_side_by_side(ds, boot):
    fi = ds.corrstat.fisher(target=TARGET, level="input", method="kendall")
    fs = ds.corrstat.fisher(target=TARGET, level="system", method="kendall")
    both = xr.concat([fs, fi], dim=xr.DataArray(["system", "input"], dims="level", name="level"),
                     combine_attrs="drop_conflicts")
    # default: each panel ordered by its own level, with its own names
    fig = xplot.plot_ci(both)
    assert isinstance(fig, matplotlib.figure.Figure)
    axes = fig.axes
    assert len(axes) == 2
    assert [a.get_title() for a in axes] == ["system level", "input level"]
    assert not axes[0].get_shared_y_axes().joined(axes[0], axes[1])
    for a, res in zip(axes, (fs, fi)):
        check_forest(a, res)
    assert sorted_metrics(fs) != sorted_metrics(fi)
    assert "Kendall" in fig.get_suptitle() and "Fisher" in fig.get_suptitle()
    # align=True: one shared order (the first level's), said in the title
    fig = xplot.plot_ci(both, align=True)
    axes = fig.axes
    order = sorted_metrics(fs)
    assert ylabels(axes[0]) == order
    assert axes[0].get_shared_y_axes().joined(axes[0], axes[1])
    for a, res in zip(axes, (fs, fi)):
        (points,) = by_gid(a.lines, "correlation")
        np.testing.assert_allclose(points.get_xdata(), res.sel(metric=order)["correlation"].values)
        (intervals,) = by_gid(a.collections, "interval")
        np.testing.assert_allclose([s[0][0] for s in intervals.get_segments()], res.sel(metric=order)["low"].values)
    assert "in the order of the system level" in " ".join(fig.get_suptitle().split())
    # own orders on Axes that share y would mislabel the panels
    _, shared = plt.subplots(1, 2, sharey=True)
    with pytest.raises(ValueError, match="align=True"):
        xplot.plot_ci(both, ax=shared)
    assert xplot.plot_ci(both, ax=shared, align=True) is shared[0].figure


def test_plot_ci_errors(boot):
    with pytest.raises(ValueError, match=r"missing \['low', 'high'\]"):
        xplot.plot_ci(boot[["correlation"]])
    with pytest.raises(TypeError, match="Dataset"):
        xplot.plot_ci(boot["correlation"])
    extra = xr.concat([boot, boot], dim="lang")
    with pytest.raises(ValueError, match="lang"):
        xplot.plot_ci(extra)


# ------------------------------------------------------- plot_significance


def check_matrix(ax, res, alpha):
    order = sorted_metrics(res)
    assert ylabels(ax) == order
    assert [t.get_text() for t in ax.get_xticklabels()] == order
    sel = res.sel(metric=order, other_metric=order)
    data = ax.images[0].get_array()
    filled = ~np.ma.getmaskarray(data)
    expected = (sel["pvalue"].values <= alpha)
    np.testing.assert_array_equal(filled, expected)
    np.testing.assert_allclose(data[filled], sel["pvalue"].values[expected])
    boxes = by_gid(ax.patches, "significant")
    assert all(isinstance(b, Rectangle) for b in boxes)
    outlined = np.zeros_like(filled)
    for b in boxes:
        x, y = b.get_xy()
        assert b.get_width() == b.get_height() == 1.0 and not b.get_fill()
        outlined[int(round(y + 0.5)), int(round(x + 0.5))] = True
    assert len(boxes) == int(outlined.sum())
    np.testing.assert_array_equal(outlined, sel["significant"].values)
    return order


def test_plot_significance(comp):
    alpha = comp.attrs["alpha"]
    assert 0 < int((comp["pvalue"] <= alpha).sum()) < comp.sizes["metric"] ** 2
    ax = xplot.plot_significance(comp)
    order = check_matrix(ax, comp, alpha)
    assert ax.get_ylabel() == "metric (better)" and ax.get_xlabel() == "other metric"
    assert "Kendall" in ax.get_title() and "system level" in ax.get_title() and "holm" in ax.get_title()
    # cluster boundaries: a line after each position where the cluster changes
    clusters = comp["cluster"].sel(metric=order).values
    expected = [k + 0.5 for k in range(len(order) - 1) if clusters[k] != clusters[k + 1]]
    lines = by_gid(ax.lines, "cluster")
    horizontal = sorted(line.get_ydata()[0] for line in lines if line.get_ydata()[0] == line.get_ydata()[1])
    assert horizontal == expected
    assert len(lines) == 2 * len(expected)


def test_plot_significance_outlines_follow_significant(comp):
    # a known pattern of corrected significance, independent of the test's outcome
    rng = np.random.default_rng(1)
    fake = comp.copy()
    fake["significant"] = comp["significant"].copy(data=rng.random(comp["significant"].shape) < 0.3)
    fake["cluster"] = comp["cluster"].copy(data=np.ones(comp.sizes["metric"], dtype=int))
    assert fake["significant"].any()
    ax = xplot.plot_significance(fake, alpha=0.2, colorbar=False)
    check_matrix(ax, fake, 0.2)
    assert not by_gid(ax.lines, "cluster")


def test_plot_significance_errors(comp):
    with pytest.raises(ValueError, match="significant"):
        xplot.plot_significance(comp.drop_vars("significant"))
    with pytest.raises(ValueError, match="alpha"):
        xplot.plot_significance(comp, alpha=1.5)
    with pytest.raises(ValueError, match="lang"):
        xplot.plot_significance(xr.concat([comp, comp], dim="lang"))


# ------------------------------------------------------- plot_distribution


def vlines(ax, gid):
    return [line.get_xdata()[0] for line in by_gid(ax.lines, gid)]


def test_plot_distribution_bootstrap(boot):
    ax = xplot.plot_distribution(boot, metric="meteor", bins=20)
    one = boot.sel(metric="meteor")
    assert vlines(ax, "observed") == pytest.approx([float(one["correlation"])])
    assert vlines(ax, "low") == pytest.approx([float(one["low"])])
    assert vlines(ax, "high") == pytest.approx([float(one["high"])])
    bars = ax.patches
    assert len(bars) == 20
    assert sum(b.get_height() for b in bars) == np.isfinite(one["distribution"].values).sum()
    assert "Kendall" in ax.get_title() and "system level" in ax.get_title()
    # default: the best metric
    best = sorted_metrics(boot)[0]
    ax = xplot.plot_distribution(boot)
    assert vlines(ax, "observed") == pytest.approx([float(boot["correlation"].sel(metric=best))])


def test_plot_distribution_several_metrics(boot):
    names = ["meteor", "rouge_2_f1", "qa_eval_f1"]
    ax = xplot.plot_distribution(boot, metric=names, bins=15)
    assert vlines(ax, "observed") == pytest.approx(boot["correlation"].sel(metric=names).values)
    assert vlines(ax, "high") == pytest.approx(boot["high"].sel(metric=names).values)
    assert len(ax.patches) == 15 * len(names)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == names


def test_plot_distribution_permutation(ds):
    p = xcorrstat.permutation_test(ds, x="rouge_2_f1", y="meteor", target=TARGET, method="kendall",
                                   test=xcorrstat.Permutation(n_resamples=100, rng=0, keep_distribution=True))
    ax = xplot.plot_distribution(p)
    assert vlines(ax, "observed") == pytest.approx([float(p["delta"])])
    assert not vlines(ax, "low")
    assert "r(rouge_2_f1) - r(meteor)" in ax.get_xlabel()
    assert "Permutation" in ax.get_title()


def test_plot_distribution_errors(boot):
    with pytest.raises(ValueError, match="keep_distribution=True"):
        xplot.plot_distribution(boot.drop_vars("distribution"))
    with pytest.raises(ValueError, match="nope"):
        xplot.plot_distribution(boot, metric="nope")
    with pytest.raises(ValueError, match="correlation"):
        xplot.plot_distribution(boot[["distribution"]])


def test_accessor_plot_namespace(summeval):
    metrics = ["meteor", "rouge_2_f1", "qa_eval_f1"]
    cmp = summeval.corrstat.compare(target="expert_relevance", metrics=metrics,
                                    test=xcorrstat.Permutation(n_resamples=50, rng=0))
    ax = cmp.corrstat.plot()
    assert ax.get_ylabel() == "metric (better)"
    ci = summeval.corrstat.fisher(target="expert_relevance", metrics=metrics)
    ax = ci.corrstat.plot()
    assert sorted(t.get_text() for t in ax.get_yticklabels()) == sorted(metrics)
    assert ci.corrstat.plot.ci(sort=False).get_yticklabels()[0].get_text() == "meteor"
    boot = summeval.corrstat.bootstrap(target="expert_relevance", metrics=metrics,
                                       resample=xcorrstat.Bootstrap(n_resamples=50, rng=0, keep_distribution=True))
    assert boot.corrstat.plot.distribution() is not None
    assert xcorrstat.plot.plot_ci.__doc__ == type(ci.corrstat.plot).ci.__doc__
    # correlations without intervals: a dot chart, best on top
    r = summeval.corrstat.correlate(target="expert_relevance", metrics=metrics)
    ax = r.corrstat.plot()
    assert [t.get_text() for t in ax.get_yticklabels()] == [str(m) for m in r.sortby(-r)["metric"].values]
    # a result no plot fits: not offered by its accessor, refused by the plot namespace
    test = summeval.corrstat.williams_test(x="meteor", y="rouge_2_f1", target="expert_relevance")
    with pytest.raises(AttributeError, match="plot does not apply to a test of two metrics"):
        test.corrstat.plot  # noqa: B018
    with pytest.raises(ValueError, match="no default plot for this result"):
        PlotMethods(test)()
    with pytest.raises(AttributeError, match="this Dataset holds scores.*plot is a method of a result"):
        summeval[metrics].corrstat.plot()
    plt.close("all")
