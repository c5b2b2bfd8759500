"""Histogram of resampled draws: :func:`plot_distribution`.

The vertical lines carry a ``gid`` (``"observed"``, ``"low"``, ``"high"``) so they
can be found again on the returned Axes.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
import xarray as xr

from .._display import did_you_mean
from .._escape import figure_labels
from ._backend import FIGURE_LABEL_WIDTH, pyplot
from ._common import (
    check_plot_dims,
    ci_text,
    describe,
    metric_order,
    set_title,
    title_width,
)
from .._warn import one_call

__all__ = ["plot_distribution"]


def _plot_distribution_iv(result: Any, metric: Any) -> tuple[str, list[tuple[str | None, xr.Dataset]]]:
    """The observed statistic's name and the (metric name, result of that metric) to draw."""
    if not isinstance(result, xr.Dataset):
        raise TypeError(f"result must be a Dataset with a 'distribution' variable, got {type(result).__name__}")
    if "distribution" not in result.variables:
        raise ValueError(
            "result has no 'distribution' variable: run xcorrstat.bootstrap or xcorrstat.permutation_test "
            f"with keep_distribution=True (has {sorted(map(str, result.data_vars))})"
        )
    observed_name = "correlation" if "correlation" in result.variables else "delta"
    if observed_name not in result.variables:
        raise ValueError("result must have the observed statistic: a 'correlation' (bootstrap) "
                         "or 'delta' (permutation test) variable")
    dist = result["distribution"]
    if "resample" not in dist.dims:
        raise ValueError(f"result['distribution'] must have a 'resample' dim, got {tuple(dist.dims)}")
    if "metric" not in dist.dims:
        check_plot_dims(dist, ("resample",), "distribution")
        if metric is not None:
            raise ValueError("metric is only valid when result has a 'metric' dim")
        return observed_name, [(None, result)]
    check_plot_dims(dist, ("metric", "resample"), "distribution")
    available = [str(m) for m in result["metric"].values]
    if metric is None:
        corr = np.asarray(result[observed_name].values, dtype=np.float64)
        chosen = [available[int(metric_order(corr)[0])]]
    else:
        chosen = [str(metric)] if isinstance(metric, (str, bytes)) or not isinstance(metric, Sequence) \
            else [str(m) for m in metric]
        unknown = [m for m in chosen if m not in available]
        if unknown or not chosen:
            raise ValueError(f"metric must name metrics of result, got {unknown or chosen}; "
                             f"available: {available}{did_you_mean(unknown[0], available) if unknown else ''}")
    return observed_name, [(m, result.sel(metric=m)) for m in chosen]


def _shared_bins(draws: list[np.ndarray], bins: int | Sequence[float] | str) -> Any:
    """``bins``, with an int spread evenly over the range of every metric's draws."""
    if not isinstance(bins, (int, np.integer)):
        return bins
    everything = np.concatenate(draws) if draws else np.array([])
    lo, hi = (everything.min(), everything.max()) if everything.size else (0.0, 1.0)
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    return np.linspace(lo, hi, int(bins) + 1)


def _label_distribution(ax: Any, attrs: dict, observed_name: str) -> str:
    """Label the statistic's axis; the default title."""
    if observed_name == "correlation":
        ax.set_xlabel(describe(attrs, with_level=False))
        default = f"Bootstrap distribution, {describe(attrs)}"
        if attrs.get("ci"):
            default += f"\n{ci_text(attrs)}"
        return default
    x, y = attrs.get("x"), attrs.get("y")
    pair = "r(metric) - r(other metric)"
    if x is not None and y is not None:
        shown_x, shown_y = figure_labels([x, y], FIGURE_LABEL_WIDTH)
        pair = f"r({shown_x}) - r({shown_y})"
    ax.set_xlabel(f"delta = {pair}")
    test = str(attrs.get("test", "resampling")).capitalize()
    return f"{test} distribution of delta, {describe(attrs)}"


@one_call
def plot_distribution(
    result: xr.Dataset,
    *,
    metric: Hashable | Sequence[Hashable] | None = None,
    ax: Any = None,
    bins: int | Sequence[float] | str = 30,
    density: bool = False,
    title: str | None = None,
) -> Any:
    """Histogram of resampled draws with the observed value and the interval bounds.

    Parameters
    ----------
    result : Dataset
        With a ``distribution`` variable along ``resample`` (kept with
        ``keep_distribution=True``): from :func:`xcorrstat.bootstrap` (observed
        ``correlation``, bounds ``low`` and ``high``), or from
        :func:`xcorrstat.permutation_test` (observed ``delta``).
    metric : str or list of str, optional
        Metric(s) to draw when the result has a ``metric`` dim; default the one with the
        highest correlation. Several metrics are overlaid, each in its own colour.
    ax : matplotlib Axes, optional
        Where to draw; default a new figure.
    bins : int, sequence or str, default 30
        Histogram bins (as in :func:`numpy.histogram`); an int is spread over the
        range of every drawn metric, so overlaid histograms share their bins.
    density : bool, default False
        Normalise the histograms to densities.
    title : str, optional
        Axes title; the default names the statistic.

    Returns
    -------
    matplotlib.axes.Axes
        Vertical lines have gid ``"observed"``, ``"low"`` and ``"high"``.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import xcorrstat
    >>> ds = xcorrstat.datasets.summeval()
    >>> b = ds.corrstat.bootstrap(target="expert_relevance", metrics=["meteor"], level="system",
    ...                           resample=xcorrstat.Bootstrap(n_resamples=100, rng=0, keep_distribution=True))
    >>> ax = plot_distribution(b, metric="meteor")
    >>> sorted({line.get_gid() for line in ax.lines})
    ['high', 'low', 'observed']
    """
    plt = pyplot()
    observed_name, pieces = _plot_distribution_iv(result, metric)
    draws = [np.asarray(p["distribution"].values, dtype=np.float64) for _, p in pieces]
    draws = [d[np.isfinite(d)] for d in draws]
    edges = _shared_bins(draws, bins)
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 4.0), layout="constrained")
    legend = dict(zip([n for n, _ in pieces], figure_labels([n for n, _ in pieces], FIGURE_LABEL_WIDTH)))
    for k, ((name, piece), values) in enumerate(zip(pieces, draws)):
        color = f"C{k % 10}"
        label = legend[name] if name is not None else None
        ax.hist(values, bins=edges, density=density, color=color, alpha=0.45 if len(pieces) > 1 else 0.7,
                label=label)
        obs = float(piece[observed_name].values)
        ax.axvline(obs, color=color, linewidth=2.0, gid="observed",
                   label=f"observed {observed_name}" if len(pieces) == 1 else None)
        for bound in ("low", "high"):
            if bound in piece.variables:
                ax.axvline(float(piece[bound].values), color=color, linewidth=1.2, linestyle="--", gid=bound,
                           label=("interval bounds" if bound == "low" and len(pieces) == 1 else None))
    ax.set_ylabel("density" if density else "draws")
    default = _label_distribution(ax, result.attrs, observed_name)
    # the Axes moves right of its first position to make room for the y label: keep clear of the edge
    set_title(ax, title if title is not None else default, max(title_width(ax) - 0.5, 1.0))
    if any(line.get_label() and not line.get_label().startswith("_") for line in ax.lines) or len(pieces) > 1:
        ax.legend(fontsize="small")
    return ax
