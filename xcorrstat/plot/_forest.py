"""Forest plot of confidence intervals: :func:`plot_ci`, one row per metric.

The artists carry a ``gid`` (``"correlation"``, ``"interval"``, ``"reference"``,
``"cluster"``) so they can be found again on the returned Axes. With a ``cluster``
variable, each significance cluster is a band (every other one shaded) and its
number is written on the right-hand axis (``"-"`` for an undefined correlation).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import numpy as np
import xarray as xr

from .._escape import figure_labels
from ._backend import FIGURE_LABEL_WIDTH, font_points, pyplot, text_inches
from ._common import (
    TITLE_SIZE,
    check_by,
    check_plot_dims,
    ci_text,
    describe,
    fit_text,
    label_panels,
    metric_order,
    panel_title,
    require_result,
    set_title,
    title_width,
)
from .._warn import one_call

__all__ = ["plot_ci"]

_VARIABLES = ("correlation", "low", "high")
#: Inches per metric row, per panel of intervals, and for the column of cluster numbers.
_ROW, _PANEL, _CLUSTER_COLUMN = 0.24, 3.6, 0.45
#: Most panels a row when the panels are labels of one level.
_ROW_PANELS = 3
#: Inches between two rows of panels: the upper row's tick labels and axis label, the lower row's title.
_ROW_GAP = 1.25


@dataclass
class _Panel:
    """The values of one panel, in the result's metric order."""

    corr: np.ndarray
    low: np.ndarray
    high: np.ndarray
    cluster: np.ndarray | None


def _panel(result: xr.Dataset, with_clusters: bool) -> _Panel:
    def values(name: str) -> np.ndarray:
        return np.asarray(result[name].transpose("metric").values, dtype=np.float64)

    cluster = None
    if with_clusters and "cluster" in result.variables:
        cluster = np.asarray(result["cluster"].transpose("metric").values, dtype=np.int64)
    return _Panel(values("correlation"), values("low"), values("high"), cluster)


def _plot_ci_iv(result: Any, level_dim: Hashable, ax: Any, align: bool,
                by: Any) -> tuple[xr.Dataset, list[str], list[Any] | None, list[Hashable]]:
    """The variables drawn (computed), the metric names, the Axes given per panel and the ``by`` dims."""
    result = require_result(result, _VARIABLES, "xcorrstat.bootstrap or xcorrstat.fisher")
    if "metric" not in result.dims:
        raise ValueError(f"result must have a 'metric' dim, got dims {tuple(result.dims)}")
    levels = (level_dim,) if level_dim in result.dims else ()
    by_dims = check_by(result, by, ("metric", *levels))
    keep = list(_VARIABLES) + (["cluster"] if "cluster" in result.variables else [])
    for name in keep:
        check_plot_dims(result[name], ("metric", *levels, *by_dims), name, by=True)
    result = result[keep].compute()
    metrics = [str(m) for m in result["metric"].values]
    if not (levels or by_dims) or ax is None:
        return result, metrics, None, by_dims
    n = int(np.prod([result.sizes[d] for d in (*levels, *by_dims)]))
    axes = list(np.ravel(np.asarray(ax, dtype=object)))
    if len(axes) != n:
        what = " x ".join(repr(str(d)) for d in (*by_dims, *levels))
        raise ValueError(f"ax must hold one Axes per {what} label ({n}), got {len(axes)}")
    shared = any(axes[0].get_shared_y_axes().joined(a, b) for a in axes for b in axes if a is not b)
    if shared and not align:
        raise ValueError("ax shares its y axis between panels, but with align=False each panel lists the "
                         "metrics in its own order: pass Axes that do not share y, or align=True")
    return result, metrics, axes, by_dims


def _draw_clusters(ax: Any, cluster: np.ndarray) -> None:
    """A band per run of one cluster (every other one shaded) and the cluster numbers on the right."""
    edges = np.flatnonzero(np.r_[True, cluster[1:] != cluster[:-1], True])
    centres, numbers = [], []
    for k, (start, stop) in enumerate(pairwise(edges)):
        ax.axhspan(start - 0.5, stop - 0.5, facecolor="0.91" if k % 2 == 0 else "none", edgecolor="none",
                   zorder=0, gid="cluster")
        centres.append((start + stop - 1) / 2)
        numbers.append(str(cluster[start]) if cluster[start] > 0 else "-")
    side = ax.secondary_yaxis("right")
    side.set_ticks(centres, labels=numbers)
    side.tick_params(length=0)
    side.set_ylabel("cluster")
    side.set_gid("cluster")


def _draw_panel(ax: Any, panel: _Panel, order: np.ndarray, labels: list[str], *, color: Any,
                reference: float | None, show_labels: bool) -> None:
    y = np.arange(len(order))
    ax.hlines(y, panel.low[order], panel.high[order], color=color, linewidth=1.6, gid="interval")
    ax.plot(panel.corr[order], y, "o", color=color, markersize=4.5, gid="correlation", zorder=3)
    if reference is not None:
        ax.axvline(reference, color="0.6", linewidth=0.8, linestyle="--", zorder=0, gid="reference")
    if show_labels:
        shown = figure_labels(labels, FIGURE_LABEL_WIDTH)
        ax.set_yticks(y, [shown[i] for i in order])
    else:
        ax.tick_params(axis="y", labelleft=False)
    ax.set_ylim(len(order) - 0.5, -0.5)  # best metric on top
    ax.grid(axis="x", color="0.9", linewidth=0.6)
    ax.set_axisbelow(True)
    if panel.cluster is not None:
        _draw_clusters(ax, panel.cluster[order])


def _orders(panels: list[_Panel], *, sort: bool, align: bool) -> list[np.ndarray]:
    """Each panel's order: its own (cluster, correlation), the first panel's with ``align``, or none."""
    if not sort:
        return [np.arange(len(p.corr)) for p in panels]
    if align:
        first = metric_order(panels[0].corr, panels[0].cluster)
        return [first] * len(panels)
    return [metric_order(p.corr, p.cluster) for p in panels]


def _figure_size(metrics: list[str], n_panels: int, *, labels_each: bool, clusters: bool,
                 title_lines: int, rows: int = 1) -> tuple[float, float]:
    """Inches for the metric names, the rows and panels (``n_panels`` a row), and the title's lines."""
    plt = pyplot()
    shown = figure_labels(metrics, FIGURE_LABEL_WIDTH)
    names = text_inches(shown, fontsize=font_points(plt.rcParams["ytick.labelsize"])) + 0.15
    panel = _PANEL + (_CLUSTER_COLUMN if clusters else 0.0) + 0.2
    width = 0.45 + (n_panels * (names + panel) if labels_each else names + n_panels * panel)
    title = title_lines * 1.3 * font_points(TITLE_SIZE) / 72 + 0.1
    row = _ROW * max(len(metrics), 2)
    height = 0.95 + title + (0.3 if n_panels * rows > 1 else 0.0) + row + (rows - 1) * (row + _ROW_GAP)
    return width, height


def _label_width(ax: Any, planned: bool) -> float:
    """Inches an axis label of ``ax`` may span: a panel's width for a figure made here, else the Axes'."""
    if planned:
        return _PANEL
    return max(float(ax.get_position().width * ax.figure.get_figwidth()), 1.0)


def _xlabel(ax: Any, text: str, planned: bool) -> None:
    ax.set_xlabel(fit_text(text, _label_width(ax, planned), fontsize=font_points(pyplot().rcParams["axes.labelsize"])))


def _single_title(attrs: dict, title: str | None) -> str:
    return title if title is not None else ", ".join(t for t in (describe(attrs), ci_text(attrs)) if t)


def _draw_one(result: xr.Dataset, metrics: list[str], ax: Any, options: dict) -> Any:
    """The forest plot of a result without levels, on ``ax`` or a new figure."""
    panel = _panel(result, options["clusters"])
    (order,) = _orders([panel], sort=options["sort"], align=False)
    title = _single_title(result.attrs, options["title"])
    planned = ax is None
    if planned:
        clusters = panel.cluster is not None
        names = text_inches(figure_labels(metrics, FIGURE_LABEL_WIDTH))
        right = _PANEL / 2 + (_CLUSTER_COLUMN if clusters else 0.0) + 0.15
        width = 2 * min(right, 0.6 + names + _PANEL / 2) - 0.1
        size = _figure_size(metrics, 1, labels_each=True, clusters=clusters,
                            title_lines=fit_text(title, width).count("\n") + 1)
        _, ax = pyplot().subplots(figsize=size, layout="constrained")
    else:
        width = title_width(ax)
    _draw_panel(ax, panel, order, metrics, color=options["color"], reference=options["reference"],
                show_labels=True)
    _xlabel(ax, options["xlabel"] if options["xlabel"] is not None else describe(result.attrs, with_level=False),
            planned)
    ax.set_ylabel("metric")
    set_title(ax, title, width)
    return ax


def _suptitle(attrs: dict, title: str | None, *, first_panel: str, sort: bool, align: bool) -> str:
    if title is None:
        title = ", ".join(t for t in (describe(attrs, with_level=False), ci_text(attrs)) if t)
    if sort and align:
        title += f"\nEvery panel lists the metrics in the order of the {first_panel}"
    return title


def _panels(result: xr.Dataset, level_dim: Hashable, by: list[Hashable],
            clusters: bool) -> tuple[list[_Panel], list[str], int]:
    """The panels, label by label of the ``by`` dims and level by level within a label; their titles;
    the number of levels (panels a row)."""
    has_level = level_dim in result.dims
    n = result.sizes[level_dim] if has_level else 1
    levels = (result[level_dim].values if level_dim in result.coords else np.arange(n)) if has_level else [None]
    panels, titles = [], []
    for where, labels in label_panels(result, by) if by else [({}, {})]:
        row = result.isel(where)
        for k in range(n):
            panels.append(_panel(row.isel({level_dim: k}) if has_level else row, clusters))
            titles.append(panel_title(levels[k], level_dim if has_level else None, labels))
    return panels, titles, n


def _draw_levels(result: xr.Dataset, metrics: list[str], axes: list[Any] | None, options: dict,
                 level_dim: Hashable, by: list[Hashable]) -> Any:
    """The forest plot of every level side by side (a row per label of the ``by`` dims); the Figure.

    With one level, the labels' panels go side by side instead, up to ``_ROW_PANELS`` a row.
    """
    panels, titles, cols = _panels(result, level_dim, by, options["clusters"])
    if cols == 1:
        cols = min(len(panels), _ROW_PANELS)
    rows = -(-len(panels) // cols)
    align = options["align"]
    orders = _orders(panels, sort=options["sort"], align=align)
    suptitle = _suptitle(result.attrs, options["title"], first_panel=titles[0], sort=options["sort"], align=align)
    planned = axes is None
    if axes is None:
        layout: dict[str, Any] = {"labels_each": not align, "clusters": panels[0].cluster is not None,
                                  "rows": rows}
        width, _ = _figure_size(metrics, cols, title_lines=0, **layout)
        suptitle = fit_text(suptitle, width - 0.2)
        size = _figure_size(metrics, cols, title_lines=suptitle.count("\n") + 1, **layout)
        fig, grid = pyplot().subplots(rows, cols, figsize=size, sharey=align, squeeze=False, layout="constrained")
        axes = list(grid.ravel())
        for spare in axes[len(panels):]:  # the end of the last row
            fig.delaxes(spare)
        axes = axes[:len(panels)]
    else:
        fig = axes[0].figure
        suptitle = fit_text(suptitle, float(fig.get_figwidth()) - 0.2)
    xlabel = options["xlabel"] if options["xlabel"] is not None else describe(result.attrs, with_level=False)
    for k, (a, panel, order) in enumerate(zip(axes, panels, orders)):
        _draw_panel(a, panel, order, metrics, color=options["color"], reference=options["reference"],
                    show_labels=k % cols == 0 or not align)
        set_title(a, titles[k], _label_width(a, planned))
        _xlabel(a, xlabel, planned)
        if k % cols == 0:
            a.set_ylabel("metric")
    fig.suptitle(suptitle, fontsize=TITLE_SIZE)
    return fig


@one_call
def plot_ci(
    result: xr.Dataset,
    *,
    ax: Any = None,
    sort: bool = True,
    align: bool = False,
    clusters: bool = True,
    level_dim: Hashable = "level",
    by: Hashable | Sequence[Hashable] | None = None,
    color: Any = "C0",
    reference: float | None = 0.0,
    title: str | None = None,
    xlabel: str | None = None,
) -> Any:
    """Forest plot of correlations with their confidence intervals, one row per metric.

    Parameters
    ----------
    result : Dataset
        Returned by :func:`xcorrstat.bootstrap` or :func:`xcorrstat.fisher`: ``correlation``,
        ``low`` and ``high`` over ``metric``, and optionally ``cluster`` (the significance
        clusters of :func:`xcorrstat.compare`, as in :attr:`xcorrstat.Report.intervals`).
        It may also have a ``level_dim`` dim (results of several levels concatenated
        along it); the levels are then drawn side by side. Other dims (a language pair
        ``lp`` ...) must be named in ``by``.
    ax : matplotlib Axes, optional
        Where to draw; default a new figure sized by the number of metrics and the
        length of their names. With a ``level_dim`` dim, a sequence of one Axes per level
        (sharing their y axis only with ``align=True``); with ``by``, one per panel, in
        the order of the panels.
    sort : bool, default True
        Order the metrics by significance cluster when ``result`` has ``cluster``, then
        by correlation, best on top (undefined last). False keeps the result's order.
    align : bool, default False
        With several levels: False orders each panel by its own level, with its own
        metric names; True lists the metrics of every panel in the first level's order
        (so a row is one metric across the panels), as the figure's title says.
    clusters : bool, default True
        When ``result`` has ``cluster``: draw each significance cluster as a band (every
        other one shaded, gid ``"cluster"``) with its number on the right-hand axis
        ("-" for an undefined correlation).
    level_dim : str, default "level"
        Name of the dim holding the levels.
    by : str or sequence of str, optional
        Dims of ``result`` to draw one panel per label of (every combination of their
        labels): a row of panels per label, its levels side by side (with one level,
        the labels side by side, three a row), titled "system level, lp = en-de".
        Without it, a dim besides ``metric`` and ``level_dim`` is an error.
    color : matplotlib colour, default "C0"
        Colour of the points and intervals.
    reference : float or None, default 0.0
        Draw a dashed vertical line at this value (None: no line).
    title : str, optional
        Title; the default names the method, target, level and interval, e.g.
        "Kendall correlation with expert_relevance, system level, 95% percentile bootstrap CI".
        Broken into lines that fit the figure (unless it holds a ``$...$`` formula).
    xlabel : str, optional
        Label of the correlation axis; default the method and target.

    Returns
    -------
    matplotlib.axes.Axes, or matplotlib.figure.Figure with a ``level_dim`` dim or ``by``
        (one Axes per panel in ``figure.axes``).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import xcorrstat
    >>> ds = xcorrstat.datasets.summeval()
    >>> res = ds.corrstat.fisher(target="expert_relevance", metrics=["meteor", "rouge_2_f1"],
    ...                          level="system", method="kendall")
    >>> ax = plot_ci(res)
    >>> [t.get_text() for t in ax.get_yticklabels()]
    ['meteor', 'rouge_2_f1']
    """
    result, metrics, axes, by_dims = _plot_ci_iv(result, level_dim, ax, align, by)
    options = {"sort": sort, "align": align, "clusters": clusters, "color": color, "reference": reference,
               "title": title, "xlabel": xlabel}
    if level_dim not in result.dims and not by_dims:
        return _draw_one(result, metrics, ax, options)
    return _draw_levels(result, metrics, axes, options, level_dim, by_dims)
