"""Plots of confidence intervals and significance tests.

* :func:`plot_ci` -- forest plot of the intervals of :func:`xcorrstat.bootstrap`
  or :func:`xcorrstat.fisher` (one row per metric).
* :func:`plot_significance` -- pairwise significance matrix of
  :func:`xcorrstat.compare`, in the style of Deutsch, Dror & Roth (TACL 2021),
  Figure 5: a cell is filled when the uncorrected p-value is at most ``alpha``
  and outlined when it stays significant after the multiple-testing correction.
* :func:`plot_distribution` -- histogram of the resampled draws kept with
  ``keep_distribution=True``.

The artists carry a ``gid`` (``"correlation"``, ``"interval"``, ``"significant"``,
``"cluster"``, ``"observed"``, ``"low"``, ``"high"``) so they can be found again
on the returned Axes.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
import xarray as xr

from .._display import figure_text
from ..validation import check_unit_interval
from .backend import FIGURE_LABEL_WIDTH, label_inches, pyplot

__all__ = ["plot_ci", "plot_distribution", "plot_significance"]

_CI_NAMES = {
    "percentile": "percentile bootstrap",
    "basic": "basic bootstrap",
    "bca": "BCa bootstrap",
    "fisher": "Fisher z",
}


def _require(result: Any, names: Sequence[str], what: str) -> xr.Dataset:
    if not isinstance(result, xr.Dataset):
        raise TypeError(f"result must be the Dataset returned by {what}, got {type(result).__name__}")
    missing = [n for n in names if n not in result.variables]
    if missing:
        raise ValueError(
            f"result must be the Dataset returned by {what}, with variables {list(names)}; "
            f"missing {missing} (has {sorted(map(str, result.data_vars))})"
        )
    return result


def _check_dims(da: xr.DataArray, allowed: Sequence[Hashable], name: str) -> None:
    extra = [d for d in da.dims if d not in allowed]
    if extra:
        raise ValueError(
            f"result[{name!r}] has dims {tuple(da.dims)}; only {tuple(allowed)} can be drawn, "
            f"select one label of {extra} first, e.g. result.sel({extra[0]}=...)"
        )


def _order(correlation: np.ndarray, tiebreak: np.ndarray | None = None) -> np.ndarray:
    """Indices sorting by correlation, best first, NaN last (stable; ties by ``tiebreak``)."""
    key = -np.asarray(correlation, dtype=np.float64)
    if tiebreak is None:
        return np.argsort(key, kind="stable")
    return np.lexsort((np.asarray(tiebreak), key))


def _describe(attrs: dict, *, with_level: bool = True) -> str:
    method = str(attrs.get("method", "")).capitalize() or "Level"
    text = f"{method} correlation"
    if attrs.get("target") is not None:
        text += f" with {figure_text(attrs['target'], FIGURE_LABEL_WIDTH)}"
    if with_level and attrs.get("level"):
        text += f", {figure_text(attrs['level'], FIGURE_LABEL_WIDTH)} level"
    return text


def _ci_text(attrs: dict) -> str:
    ci = attrs.get("ci")
    if ci is None:
        return ""
    level = attrs.get("confidence_level")
    pct = f"{float(level) * 100:g}% " if level is not None else ""
    return f"{pct}{_CI_NAMES.get(str(ci), str(ci))} CI"


def _draw_ci(ax: Any, corr: np.ndarray, low: np.ndarray, high: np.ndarray, labels: list[str],
             color: Any, reference: float | None) -> None:
    y = np.arange(len(labels))
    ax.hlines(y, low, high, color=color, linewidth=1.6, gid="interval")
    ax.plot(corr, y, "o", color=color, markersize=4.5, gid="correlation", zorder=3)
    if reference is not None:
        ax.axvline(reference, color="0.6", linewidth=0.8, linestyle="--", zorder=0, gid="reference")
    ax.set_yticks(y, [figure_text(label, FIGURE_LABEL_WIDTH) for label in labels])
    ax.set_ylim(len(labels) - 0.5, -0.5)  # best metric on top
    ax.grid(axis="x", color="0.9", linewidth=0.6)
    ax.set_axisbelow(True)


def _plot_ci_iv(result: Any, level_dim: Hashable, ax: Any) -> tuple[xr.Dataset, list[str], list[Any] | None]:
    """The interval variables of ``result`` (computed), its metric names, and the Axes given per level."""
    result = _require(result, ("correlation", "low", "high"), "xcorrstat.bootstrap or xcorrstat.fisher")
    if "metric" not in result.dims:
        raise ValueError(f"result must have a 'metric' dim, got dims {tuple(result.dims)}")
    allowed = ("metric", level_dim) if level_dim in result.dims else ("metric",)
    for name in ("correlation", "low", "high"):
        _check_dims(result[name], allowed, name)
    result = result[["correlation", "low", "high"]].compute()
    metrics = [str(m) for m in result["metric"].values]
    if level_dim not in result.dims or ax is None:
        return result, metrics, None
    n = result.sizes[level_dim]
    axes = list(np.ravel(np.asarray(ax, dtype=object)))
    if len(axes) != n:
        raise ValueError(f"ax must hold one Axes per {level_dim!r} label ({n}), got {len(axes)}")
    return result, metrics, axes


def plot_ci(
    result: xr.Dataset,
    *,
    ax: Any = None,
    sort: bool = True,
    level_dim: Hashable = "level",
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
        ``low`` and ``high`` over ``metric``. It may also have a ``level_dim`` dim
        (results of several levels concatenated along it); the levels are then drawn
        side by side, sharing the metric axis.
    ax : matplotlib Axes, optional
        Where to draw; default a new figure whose height grows with the number of
        metrics. With a ``level_dim`` dim, a sequence of one Axes per level.
    sort : bool, default True
        Order the metrics by correlation, best on top (NaN last); with several levels,
        by the correlation of the first level.
    level_dim : str, default "level"
        Name of the dim holding the levels.
    color : matplotlib colour, default "C0"
        Colour of the points and intervals.
    reference : float or None, default 0.0
        Draw a dashed vertical line at this value (None: no line).
    title : str, optional
        Title; the default names the method, target, level and interval, e.g.
        "Kendall correlation with expert_relevance, system level, 95% percentile bootstrap CI".
    xlabel : str, optional
        Label of the correlation axis; default the method and target.

    Returns
    -------
    matplotlib.axes.Axes, or matplotlib.figure.Figure with a ``level_dim`` dim
        (one Axes per level in ``figure.axes``).

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
    plt = pyplot()
    result, metrics, axes = _plot_ci_iv(result, level_dim, ax)
    attrs = dict(result.attrs)
    if level_dim not in result.dims:
        corr, low, high = (np.asarray(result[v].values, dtype=np.float64) for v in ("correlation", "low", "high"))
        order = _order(corr) if sort else np.arange(len(metrics))
        if ax is None:
            _, ax = plt.subplots(figsize=(5.0 + label_inches(metrics), 1.3 + 0.24 * len(metrics)),
                                 layout="constrained")
        _draw_ci(ax, corr[order], low[order], high[order], [metrics[i] for i in order], color, reference)
        ax.set_xlabel(xlabel if xlabel is not None else _describe(attrs, with_level=False))
        ax.set_ylabel("metric")
        if title is None:
            title = ", ".join(t for t in (_describe(attrs), _ci_text(attrs)) if t)
        ax.set_title(title, fontsize="medium")
        return ax

    levels = result[level_dim].values if level_dim in result.coords else np.arange(result.sizes[level_dim])
    if axes is None:
        size = (0.4 + label_inches(metrics) + 3.6 * len(levels), 1.3 + 0.24 * len(metrics))
        fig, grid = plt.subplots(1, len(levels), figsize=size, sharey=True, squeeze=False, layout="constrained")
        axes = list(grid[0])
    else:
        fig = axes[0].figure
    first = np.asarray(result["correlation"].isel({level_dim: 0}).values, dtype=np.float64)
    order = _order(first) if sort else np.arange(len(metrics))
    labels = [metrics[i] for i in order]
    for k, (a, lab) in enumerate(zip(axes, levels)):
        sub = result.isel({level_dim: k}).transpose("metric")
        corr, low, high = (np.asarray(sub[v].values, dtype=np.float64)[order] for v in ("correlation", "low", "high"))
        _draw_ci(a, corr, low, high, labels, color, reference)
        a.set_title(figure_text(f"{lab} level" if level_dim == "level" else f"{level_dim} = {lab}",
                                FIGURE_LABEL_WIDTH), fontsize="medium")
        a.set_xlabel(xlabel if xlabel is not None else _describe(attrs, with_level=False))
        if k == 0:
            a.set_ylabel("metric")
        else:
            a.tick_params(axis="y", labelleft=False)
    if title is None:
        title = ", ".join(t for t in (_describe(attrs, with_level=False), _ci_text(attrs)) if t)
    fig.suptitle(title, fontsize="medium")
    return fig


def _plot_significance_iv(result: Any, alpha: float | None) -> tuple[xr.Dataset, float]:
    """The variables of a compare result that are drawn (computed), and ``alpha`` (default the result's)."""
    result = _require(result, ("pvalue", "significant", "correlation"), "xcorrstat.compare")
    pair = ("metric", "other_metric")
    for name in ("pvalue", "significant"):
        if set(result[name].dims) != set(pair):
            _check_dims(result[name], pair, name)
            raise ValueError(f"result[{name!r}] must have dims {pair}, got {tuple(result[name].dims)}")
    _check_dims(result["correlation"], ("metric",), "correlation")
    if alpha is None:
        alpha = float(result.attrs.get("alpha", 0.05))
    alpha = check_unit_interval(alpha, "alpha")
    keep = ["pvalue", "significant", "correlation"] + (["cluster"] if "cluster" in result.variables else [])
    result = result[keep].compute()
    metrics = [str(m) for m in result["metric"].values]
    others = [str(m) for m in result["other_metric"].values]
    if sorted(metrics) != sorted(others):
        raise ValueError("result's metric and other_metric must hold the same metrics")
    return result, alpha


def _significance_order(result: xr.Dataset) -> tuple[np.ndarray, np.ndarray | None]:
    """The metrics' order (by correlation, then cluster; undefined last) and their clusters, if any."""
    corr = np.asarray(result["correlation"].values, dtype=np.float64)
    if "cluster" not in result.variables:
        return _order(corr), None
    cluster = np.asarray(result["cluster"].values)
    # cluster 0 marks an undefined correlation: keep it last
    tie = np.where(cluster > 0, cluster, np.iinfo(np.int64).max)
    return _order(corr, tie), cluster


def _draw_significance(ax: Any, pvalue: np.ndarray, significant: np.ndarray, *, alpha: float, cmap: str) -> Any:
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


def _significance_ticks(ax: Any, names: list[str]) -> None:
    """One tick per metric on both axes, a light grid between cells, and the axis labels."""
    n = len(names)
    ticks = np.arange(n)
    shown = [figure_text(name, FIGURE_LABEL_WIDTH) for name in names]
    ax.set_xticks(ticks, shown, rotation=90, fontsize="small")
    ax.set_yticks(ticks, shown, fontsize="small")
    ax.set_xticks(ticks[:-1] + 0.5, minor=True)
    ax.set_yticks(ticks[:-1] + 0.5, minor=True)
    ax.grid(which="minor", color="0.88", linewidth=0.5)
    ax.tick_params(which="minor", length=0)
    ax.set_xlim(-0.5, n - 0.5)
    ax.set_ylim(n - 0.5, -0.5)
    ax.set_ylabel("metric (better)")
    ax.set_xlabel("other metric")


def plot_significance(
    result: xr.Dataset,
    *,
    ax: Any = None,
    alpha: float | None = None,
    cmap: str = "Greens_r",
    clusters: bool = True,
    colorbar: bool = True,
    title: str | None = None,
) -> Any:
    """Pairwise significance matrix of :func:`xcorrstat.compare`.

    Rows (``metric``, the one tested as better) and columns (``other_metric``) are
    ordered by correlation, best first. A cell is filled, coloured by its p-value,
    when the uncorrected ``pvalue`` is at most ``alpha``, and outlined in black when
    the comparison is still ``significant`` after the multiple-testing correction
    (as in Figure 5 of Deutsch, Dror & Roth, TACL 2021). Lines separate the
    significance clusters.

    Parameters
    ----------
    result : Dataset
        Returned by :func:`xcorrstat.compare`: ``pvalue`` and ``significant`` over
        (metric, other_metric), ``correlation`` over metric, optionally ``cluster``.
        Select one label of any other dim first.
    ax : matplotlib Axes, optional
        Where to draw; default a new square figure sized by the number of metrics.
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

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import xcorrstat
    >>> ds = xcorrstat.datasets.summeval()
    >>> res = ds.corrstat.compare(target="expert_relevance", metrics=["meteor", "rouge_2_f1", "qa_eval_f1"],
    ...                           level="system", n_resamples=100, rng=0, correction="holm")
    >>> ax = plot_significance(res)
    >>> ax.get_ylabel(), ax.get_xlabel()
    ('metric (better)', 'other metric')
    """
    plt = pyplot()
    result, alpha = _plot_significance_iv(result, alpha)
    pair = ("metric", "other_metric")
    order, cluster = _significance_order(result)
    names = [str(result["metric"].values[i]) for i in order]
    sub = result.sel(metric=names, other_metric=names).transpose(*pair)
    pvalue = np.asarray(sub["pvalue"].values, dtype=np.float64)
    significant = np.asarray(sub["significant"].values, dtype=bool)

    if ax is None:
        side = 1.0 + 0.26 * len(names) + label_inches(names, size=0.075)
        _, ax = plt.subplots(figsize=(side + (1.0 if colorbar else 0.0), side), layout="constrained")
    image = _draw_significance(ax, pvalue, significant, alpha=alpha, cmap=cmap)
    if clusters and cluster is not None:
        ordered = cluster[order]
        for k in np.nonzero(ordered[1:] != ordered[:-1])[0]:
            ax.axhline(k + 0.5, color="C3", linewidth=1.0, gid="cluster")
            ax.axvline(k + 0.5, color="C3", linewidth=1.0, gid="cluster")
    _significance_ticks(ax, names)
    if colorbar:
        bar = ax.figure.colorbar(image, ax=ax, shrink=0.6)
        bar.set_label(f"p-value (filled: p <= {alpha:g})")
    if title is None:
        attrs = result.attrs
        test = str(attrs.get("test", "")).capitalize()
        correction = attrs.get("correction")
        extra = f", outlined: {correction}-corrected" if correction else ""
        title = f"{_describe(attrs)}\n{test} test, alpha = {alpha:g}{extra}".strip()
    ax.set_title(title, fontsize="medium")
    return ax


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
        _check_dims(dist, ("resample",), "distribution")
        if metric is not None:
            raise ValueError("metric is only valid when result has a 'metric' dim")
        return observed_name, [(None, result)]
    _check_dims(dist, ("metric", "resample"), "distribution")
    available = [str(m) for m in result["metric"].values]
    if metric is None:
        corr = np.asarray(result[observed_name].values, dtype=np.float64)
        chosen = [available[int(_order(corr)[0])]]
    else:
        chosen = [str(metric)] if isinstance(metric, (str, bytes)) or not isinstance(metric, Sequence) \
            else [str(m) for m in metric]
        unknown = [m for m in chosen if m not in available]
        if unknown or not chosen:
            raise ValueError(f"metric must name metrics of result, got {unknown or chosen}; "
                             f"available: {available}")
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
        ax.set_xlabel(_describe(attrs, with_level=False))
        default = f"Bootstrap distribution, {_describe(attrs)}"
        if attrs.get("ci"):
            default += f"\n{_ci_text(attrs)}"
        return default
    x, y = attrs.get("x"), attrs.get("y")
    pair = "r(metric) - r(other metric)"
    if x is not None and y is not None:
        pair = f"r({figure_text(x, FIGURE_LABEL_WIDTH)}) - r({figure_text(y, FIGURE_LABEL_WIDTH)})"
    ax.set_xlabel(f"delta = {pair}")
    test = str(attrs.get("test", "resampling")).capitalize()
    return f"{test} distribution of delta, {_describe(attrs)}"


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
    ...                           n_resamples=100, rng=0, keep_distribution=True)
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
    for k, ((name, piece), values) in enumerate(zip(pieces, draws)):
        color = f"C{k % 10}"
        label = figure_text(name, FIGURE_LABEL_WIDTH) if name is not None else None
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
    ax.set_title(title if title is not None else default, fontsize="medium")
    if any(line.get_label() and not line.get_label().startswith("_") for line in ax.lines) or len(pieces) > 1:
        ax.legend(fontsize="small")
    return ax
