"""Dot chart of correlations without intervals: :func:`plot_correlations`, one row per metric.

The figure of a :func:`~xcorrstat.correlate` result: a point per metric, sorted by
correlation, best on top; a metric whose correlation is undefined (NaN) is listed last,
without a point. With dims besides ``metric`` (a language pair ``lp``, several levels or
coefficients), one series of points per label, in a colour of its own and named in the
legend; the rows are then in the order of the first label's correlations (select or
reorder the labels to rank by another: ``r.sel(lp=["zh-en", "en-de"])``), the rule of the
result's tables (:meth:`ResultAccessor.ranked_frame <xcorrstat.ResultAccessor.ranked_frame>`).
The points carry the ``gid`` ``"correlation"``, the dashed line ``"reference"``. A result
with intervals is drawn by :func:`~xcorrstat.plot.plot_ci`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

from .._escape import figure_labels
from ._backend import FIGURE_LABEL_WIDTH, pyplot, text_inches
from ._common import correlations_of, describe, fit_text, label_panels, metric_order, panel_title, set_title, \
    title_width

__all__ = ["plot_correlations"]

#: Inches per metric row, and for the points beside the names.
_ROW, _PANEL = 0.24, 4.0


def _plot_correlations_iv(result: Any) -> tuple[xr.DataArray, list[str], np.ndarray, list[str]]:
    """The correlations (computed, metric first), the metric names, the values (metric x label), the labels."""
    corr = correlations_of(result)
    if corr is None:
        raise TypeError("result must be a result of correlations over a 'metric' dim (xcorrstat.correlate, "
                        f"or a Dataset with a 'correlation' variable), got {type(result).__name__}")
    extra = [d for d in corr.dims if d != "metric"]
    corr = corr.transpose("metric", *extra).compute()
    metrics = [str(m) for m in corr["metric"].values]
    values = np.asarray(corr.values, dtype=np.float64).reshape(len(metrics), -1)
    labels = [panel_title(None, None, where) for _, where in label_panels(corr.to_dataset(name="_"), extra)] \
        if extra else [""]
    return corr, metrics, values, labels


def _described(attrs: dict, *, with_level: bool = True) -> str:
    """"Kendall correlation with <target>, system level", leaving out what varies along a dim (lists)."""
    return describe({k: v for k, v in attrs.items() if not isinstance(v, (list, tuple))}, with_level=with_level)


def plot_correlations(result: xr.DataArray | xr.Dataset, *, ax: Any = None, sort: bool = True,
                      reference: float | None = 0.0, title: str | None = None, xlabel: str | None = None) -> Any:
    """Dot chart of a result's correlations, one row per metric, best on top.

    Parameters
    ----------
    result : DataArray or Dataset
        Returned by :func:`xcorrstat.correlate` (or a Dataset with a ``correlation``
        variable over ``metric``). Other dims give one series of points per label.
    ax : matplotlib Axes, optional
        Where to draw; default a new figure sized by the number of metrics and the length
        of their names.
    sort : bool, default True
        Order the metrics by correlation (the first label's), best on top, undefined last.
        False keeps the result's order.
    reference : float or None, default 0.0
        Draw a dashed vertical line at this value (None: no line).
    title : str, optional
        Title; default the method, target and level, e.g. "Kendall correlation with
        expert_relevance, system level".
    xlabel : str, optional
        Label of the correlation axis; default the method and target.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import xcorrstat
    >>> ds = xcorrstat.datasets.summeval()
    >>> r = ds.corrstat.correlate(target="expert_relevance", metrics=["rouge_2_f1", "meteor"], method="kendall")
    >>> ax = plot_correlations(r)
    >>> [t.get_text() for t in ax.get_yticklabels()]
    ['meteor', 'rouge_2_f1']
    """
    corr, metrics, values, labels = _plot_correlations_iv(result)
    order = metric_order(values[:, 0]) if sort else np.arange(len(metrics))
    title = _described(corr.attrs) if title is None else title
    if ax is None:
        names = text_inches(figure_labels(metrics, FIGURE_LABEL_WIDTH)) + 0.6
        legend = text_inches(labels, fontsize="small") + 0.6 if len(labels) > 1 else 0.0
        lines = fit_text(title, names + _PANEL - 0.2).count("\n") + 1
        rows = max(len(metrics), 2, 0.8 * len(labels) if legend else 0)
        size = (names + _PANEL + legend, 1.1 + 0.3 * lines + _ROW * rows)
        _, ax = pyplot().subplots(figsize=size, layout="constrained")
    y = np.arange(len(metrics))
    for k, label in enumerate(labels):
        ax.plot(values[order, k], y, "o", color=f"C{k % 10}", markersize=4.5, gid="correlation", zorder=3,
                label=label or None)
    if reference is not None:
        ax.axvline(reference, color="0.6", linewidth=0.8, linestyle="--", zorder=0, gid="reference")
    shown = figure_labels(metrics, FIGURE_LABEL_WIDTH)
    ax.set_yticks(y, [shown[i] for i in order])
    ax.set_ylim(len(metrics) - 0.5, -0.5)  # best metric on top
    ax.grid(axis="x", color="0.9", linewidth=0.6)
    ax.set_axisbelow(True)
    if len(labels) > 1:
        ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    ax.set_xlabel(xlabel if xlabel is not None else _described(corr.attrs, with_level=False))
    ax.set_ylabel("metric")
    set_title(ax, title, title_width(ax))
    return ax
