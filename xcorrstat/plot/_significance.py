"""Pairwise significance matrix of :func:`xcorrstat.compare`: :func:`plot_significance`.

In the style of Deutsch, Dror & Roth (TACL 2021), Figure 5: a cell is filled when the
uncorrected p-value is at most ``alpha`` and outlined when it stays significant after
the multiple-testing correction. The artists carry a ``gid`` (``"significant"`` for
the outlines, ``"cluster"`` for the lines between clusters).

The figure is sized from the metrics: a cell of at least 0.26 inch per metric, room
for the longest name (measured as drawn), titles and colour-bar label broken into
lines that fit, so nothing is cut and no text is scaled down however many metrics
there are.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import xarray as xr

from .._escape import figure_labels
from .._validation import check_unit_interval
from ._backend import FIGURE_LABEL_WIDTH, font_points, pyplot, text_inches
from ._common import (
    TITLE_SIZE,
    check_by,
    check_plot_dims,
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

__all__ = ["plot_significance"]

_PAIR = ("metric", "other_metric")
#: Font size of the metric names and of the colour bar's label.
_LABEL_SIZE = "small"


@dataclass
class _Layout:
    """Inches of one matrix panel: names, cells, colour bar, and what the title and bar label may span."""

    n: int
    labels: float
    colorbar: bool

    @property
    def side(self) -> float:
        return max(0.26 * self.n, 2.2)

    @property
    def left(self) -> float:
        return 0.45 + self.labels

    @property
    def right(self) -> float:
        return 1.2 if self.colorbar else 0.15

    @property
    def width(self) -> float:
        return self.left + self.side + self.right

    @property
    def title_width(self) -> float:
        return self.side + 2 * min(self.left, self.right) - 0.15

    def height(self, title_lines: int) -> float:
        return title_lines * 1.3 * font_points(TITLE_SIZE) / 72 + 0.25 + self.side + self.labels + 0.55


def _bar_shrink(side: float) -> float:
    """Fraction of the matrix' height given to the colour bar: all of a small one, 60% (3 inches at least) else."""
    return 1.0 if side <= 3.0 else max(0.6, 3.0 / side)


def _plot_significance_iv(result: Any, alpha: float | None, level_dim: Hashable, ax: Any,
                          by: Any) -> tuple[xr.Dataset, float, list[Any] | None, list[Hashable]]:
    """The variables drawn (computed), ``alpha`` (default the result's), the Axes given per panel and
    the ``by`` dims."""
    result = require_result(result, ("pvalue", "significant", "correlation"), "xcorrstat.compare")
    levels = (level_dim,) if level_dim in result.dims else ()
    by_dims = check_by(result, by, (*_PAIR, *levels))
    panels = (*levels, *by_dims)
    for name in ("pvalue", "significant"):
        if set(result[name].dims) != set(_PAIR + panels):
            check_plot_dims(result[name], _PAIR + panels, name, by=True)
            raise ValueError(f"result[{name!r}] must have dims {_PAIR + panels}, got {tuple(result[name].dims)}")
    keep = ["pvalue", "significant", "correlation"] + (["cluster"] if "cluster" in result.variables else [])
    for name in keep[2:]:
        check_plot_dims(result[name], ("metric",) + panels, name, by=True)
    if alpha is None:
        alpha = float(result.attrs.get("alpha", 0.05))
    alpha = check_unit_interval(alpha, "alpha")
    result = result[keep].compute()
    metrics = [str(m) for m in result["metric"].values]
    others = [str(m) for m in result["other_metric"].values]
    if sorted(metrics) != sorted(others):
        raise ValueError("result's metric and other_metric must hold the same metrics")
    if not panels or ax is None:
        return result, alpha, None, by_dims
    n = int(np.prod([result.sizes[d] for d in panels]))
    axes = list(np.ravel(np.asarray(ax, dtype=object)))
    if len(axes) != n:
        what = " x ".join(repr(str(d)) for d in (*by_dims, *levels))
        raise ValueError(f"ax must hold one Axes per {what} label ({n}), got {len(axes)}")
    return result, alpha, axes, by_dims


def _draw_cells(ax: Any, pvalue: np.ndarray, significant: np.ndarray, *, alpha: float, cmap: str) -> Any:
    """Fill the cells with ``pvalue <= alpha`` and outline the significant ones; the image of the fills."""
    from matplotlib import colormaps
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Rectangle

    filled = np.ma.masked_where(~(pvalue <= alpha), pvalue)  # NaN (diagonal) stays empty
    # the light part of the map only, so the black outlines stay visible on every cell
    base = colormaps[cmap]
    light = ListedColormap(base(np.linspace(0.3, 0.95, 256)), name=f"{base.name}_light")
    image = ax.imshow(filled, cmap=light, vmin=0.0, vmax=float(alpha), aspect="equal", interpolation="nearest")
    for i, j in zip(*np.nonzero(significant)):
        ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1.0, 1.0, fill=False, edgecolor="black",
                               linewidth=1.4, gid="significant"))
    return image


def _ticks(ax: Any, names: list[str]) -> None:
    """One tick per metric on both axes, a light grid between cells, and the axis labels."""
    n = len(names)
    ticks = np.arange(n)
    shown = figure_labels(names, FIGURE_LABEL_WIDTH)
    ax.set_xticks(ticks, shown, rotation=90, fontsize=_LABEL_SIZE)
    ax.set_yticks(ticks, shown, fontsize=_LABEL_SIZE)
    ax.set_xticks(ticks[:-1] + 0.5, minor=True)
    ax.set_yticks(ticks[:-1] + 0.5, minor=True)
    ax.grid(which="minor", color="0.88", linewidth=0.5)
    ax.tick_params(which="minor", length=0)
    ax.set_xlim(-0.5, n - 0.5)
    ax.set_ylim(n - 0.5, -0.5)
    ax.set_ylabel("metric (better)")
    ax.set_xlabel("other metric")


def _colorbar(ax: Any, image: Any, alpha: float, side: float | None) -> None:
    """A colour bar 0.2 inch thick beside the matrix (``side`` inches), as long as it or 3 inches at least.

    The bar is an inset of the matrix' Axes, so it follows the matrix, whatever room
    the layout gives it, and never reaches the title above; its label is broken to fit
    its length.
    """
    if side is None:  # an Axes given: its size before the layout
        box = ax.get_position()
        side = float(min(box.width * ax.figure.get_figwidth(), box.height * ax.figure.get_figheight()))
    side = max(side, 0.5)
    shrink = _bar_shrink(side)
    cax = ax.inset_axes((1.0 + 0.12 / side, (1.0 - shrink) / 2, 0.2 / side, shrink))
    bar = ax.figure.colorbar(image, cax=cax)
    label = fit_text(f"p-value (filled: p <= {alpha:g})", shrink * side - 0.1, fontsize=_LABEL_SIZE)
    bar.set_label(label, fontsize=_LABEL_SIZE)


def _default_title(attrs: dict, alpha: float, level: Any) -> str:
    test = str(attrs.get("test", "")).capitalize()
    correction = attrs.get("correction")
    if correction and correction != "none":
        extra = f", outlined: {correction}-corrected"
    else:
        extra = ", no correction"
    return f"{describe(attrs, level=level)}\n{test} test, alpha = {alpha:g}{extra}".strip()


def _draw_matrix(ax: Any, result: xr.Dataset, options: dict, *, title: str, width: float) -> None:
    """One significance matrix on ``ax``, its colour bar and its title (broken to ``width`` inches)."""
    corr = np.asarray(result["correlation"].values, dtype=np.float64)
    cluster = np.asarray(result["cluster"].values) if "cluster" in result.variables else None
    order = metric_order(corr, cluster)
    sub = result.isel(metric=order).sel(other_metric=result["metric"].values[order]).transpose(*_PAIR)
    alpha = options["alpha"]
    image = _draw_cells(ax, np.asarray(sub["pvalue"].values, dtype=np.float64),
                        np.asarray(sub["significant"].values, dtype=bool), alpha=alpha, cmap=options["cmap"])
    if options["clusters"] and cluster is not None:
        ordered = cluster[order]
        for k in np.nonzero(ordered[1:] != ordered[:-1])[0]:
            ax.axhline(k + 0.5, color="C3", linewidth=1.0, gid="cluster")
            ax.axvline(k + 0.5, color="C3", linewidth=1.0, gid="cluster")
    _ticks(ax, [str(m) for m in sub["metric"].values])
    if options["colorbar"]:
        _colorbar(ax, image, alpha, options["side"])
    set_title(ax, title, width)


def _new_figure(result: xr.Dataset, titles: list[str], colorbar: bool) -> tuple[list[Any], _Layout]:
    """One matrix per title, stacked in a new figure sized from the names, metrics and title lines."""
    names = figure_labels(result["metric"].values, FIGURE_LABEL_WIDTH)
    layout = _Layout(len(names), text_inches(names, fontsize=_LABEL_SIZE) + 0.1, colorbar)
    heights = [layout.height(fit_text(t, layout.title_width).count("\n") + 1) for t in titles]
    _, grid = pyplot().subplots(len(titles), 1, figsize=(layout.width, sum(heights)), squeeze=False,
                                height_ratios=heights, layout="constrained")
    return list(grid[:, 0]), layout


def _matrix_panels(result: xr.Dataset, level_dim: Hashable, by: list[Hashable], alpha: float,
                   title: str | None) -> tuple[list[xr.Dataset], list[str]]:
    """The matrices, label by label of the ``by`` dims and level by level within a label, and their titles."""
    has_level = level_dim in result.dims
    if has_level:
        levels = result[level_dim].values if level_dim in result.coords else np.arange(result.sizes[level_dim])
    else:
        levels = np.array([None])
    parts, titles = [], []
    for where, labels in label_panels(result, by) if by else [({}, {})]:
        row = result.isel(where)
        for k, lab in enumerate(levels):
            parts.append(row.isel({level_dim: k}) if has_level else row)
            named = has_level and level_dim != "level"  # a level of another name is named in the prefix
            prefix = panel_title(lab, level_dim if named else None, labels)
            shown = lab if has_level and not named else None
            titles.append(title if title is not None
                          else (f"{prefix}: " if prefix else "") + _default_title(result.attrs, alpha, shown))
    return parts, titles


@one_call
def plot_significance(
    result: xr.Dataset,
    *,
    ax: Any = None,
    alpha: float | None = None,
    cmap: str = "Greens_r",
    clusters: bool = True,
    colorbar: bool = True,
    title: str | None = None,
    level_dim: Hashable = "level",
    by: Hashable | Sequence[Hashable] | None = None,
) -> Any:
    """Pairwise significance matrix of :func:`xcorrstat.compare`.

    Rows (``metric``, the one tested as better) and columns (``other_metric``) are
    ordered by significance cluster, then by correlation, best first. A cell is
    filled, coloured by its p-value, when the uncorrected ``pvalue`` is at most
    ``alpha``, and outlined in black when the comparison is still ``significant``
    after the multiple-testing correction (as in Figure 5 of Deutsch, Dror & Roth,
    TACL 2021). Lines separate the significance clusters.

    A new figure is sized so that every name is drawn whole in the "small" font (8.3
    points) with a cell of at least 0.26 inch per metric: it grows with the number of
    metrics instead of shrinking its text.

    Parameters
    ----------
    result : Dataset
        Returned by :func:`xcorrstat.compare`: ``pvalue`` and ``significant`` over
        (metric, other_metric), ``correlation`` over metric, optionally ``cluster``.
        It may also have a ``level_dim`` dim (as :attr:`xcorrstat.Report.comparisons`):
        one matrix per level, stacked. Name any other dim in ``by``, or select one of
        its labels first.
    ax : matplotlib Axes, optional
        Where to draw; default a new figure sized by the number of metrics and the
        length of their names. With a ``level_dim`` dim, a sequence of one Axes per level;
        with ``by``, one per matrix, in their order.
    alpha : float, optional
        Threshold of the filled cells; default ``result.attrs["alpha"]`` (else 0.05).
    cmap : str, default "Greens_r"
        Colour map of the filled cells' p-values (0 to ``alpha``); its lightest 70% is used.
    clusters : bool, default True
        Draw lines between significance clusters (needs ``cluster``).
    colorbar : bool, default True
        Add a colour bar of the p-values.
    title : str, optional
        Axes title; the default names the test, correction, method, target and level.
        Broken into lines that fit the figure (unless it holds a ``$...$`` formula).
    level_dim : str, default "level"
        Name of the dim holding the levels.
    by : str or sequence of str, optional
        Dims of ``result`` to draw one matrix per label of (every combination of their
        labels), stacked label by label, the levels of a label one under another; each
        title starts with the labels ("lp = en-de: ...").

    Returns
    -------
    matplotlib.axes.Axes, or matplotlib.figure.Figure with a ``level_dim`` dim or ``by``
        (the matrices are the first Axes of ``figure.axes``, one per level and label).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import xcorrstat
    >>> ds = xcorrstat.datasets.summeval()
    >>> res = ds.corrstat.compare(target="expert_relevance", metrics=["meteor", "rouge_2_f1", "qa_eval_f1"],
    ...                           test=xcorrstat.Permutation(n_resamples=100, rng=0))
    >>> ax = plot_significance(res)
    >>> ax.get_ylabel(), ax.get_xlabel()
    ('metric (better)', 'other metric')
    """
    result, alpha, axes, by_dims = _plot_significance_iv(result, alpha, level_dim, ax, by)
    parts, titles = _matrix_panels(result, level_dim, by_dims, alpha, title)
    if level_dim not in result.dims and not by_dims:
        axes = None if ax is None else [ax]
    options = {"alpha": alpha, "cmap": cmap, "clusters": clusters, "colorbar": colorbar, "side": None}
    layout = None
    if axes is None:
        axes, layout = _new_figure(result, titles, colorbar)
        options["side"] = layout.side
    for a, part, text in zip(axes, parts, titles):
        width = layout.title_width if layout is not None else title_width(a)
        _draw_matrix(a, part, options, title=text, width=width)
    if level_dim in result.dims or by_dims:
        return axes[0].figure
    return axes[0]
