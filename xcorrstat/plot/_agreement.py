"""Heatmaps of the agreement analyses (:mod:`xcorrstat.agreement`).

Each analysis has its own diverging colour map, with the agreeing end in its
colour, so the three are told apart at a glance: blue for correlations (Pearson,
Spearman), green for Jaccard similarity, orange for Kendall's tau (correlation
matrices with ``method="kendall"`` and leaderboard agreement).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

from .._display import figure_text
from .._escape import figure_labels
from ._backend import FIGURE_LABEL_WIDTH, pyplot
from .._warn import one_call

__all__ = ["CMAPS", "heatmap", "plot_jaccard", "plot_leaderboard_agreement", "plot_matrix"]

#: The diverging colour map of each analysis (the high, agreeing end in the analysis' colour).
CMAPS: dict[str, str] = {
    "pearson": "RdBu",  # blue
    "spearman": "RdBu",  # blue
    "kendall": "PuOr_r",  # orange
    "jaccard": "PiYG",  # green
}


def _as_2d(da: Any, what: str) -> xr.DataArray:
    if not isinstance(da, xr.DataArray):
        raise TypeError(f"{what} must be an xarray DataArray, got {type(da).__name__}")
    if da.ndim != 2:
        hint = f"; select one label of the others first, e.g. .sel({da.dims[0]}=...)" if da.ndim > 2 else ""
        raise ValueError(f"{what} must have exactly 2 dims to draw as a heatmap, got dims {tuple(da.dims)}{hint}")
    return da.compute()


def _labels(da: xr.DataArray, dim) -> list[str]:
    values = da[dim].values if dim in da.coords else np.arange(da.sizes[dim])
    return figure_labels(values, FIGURE_LABEL_WIDTH)


def _heatmap_iv(da: Any, text: Any) -> tuple[xr.DataArray, np.ndarray, np.ndarray | None]:
    """``da`` (2-D, computed), its values as floats and the annotations ``text`` as an array, checked."""
    da = _as_2d(da, "da")
    values = np.asarray(da.values, dtype=np.float64)
    cells = np.asarray(text) if text is not None else None
    if cells is not None and cells.shape != values.shape:
        raise ValueError(f"text must have the shape of da {values.shape}, got {cells.shape}")
    return da, values, cells


def heatmap(
    da: xr.DataArray,
    *,
    ax: Any = None,
    cmap: str = "RdBu",
    vmin: float = -1.0,
    vmax: float = 1.0,
    annotate: bool = True,
    fmt: str = ".2f",
    text: xr.DataArray | np.ndarray | None = None,
    colorbar: bool = True,
    colorbar_label: str | None = None,
    title: str | None = None,
) -> Any:
    """Draw a 2-D DataArray as an annotated heatmap (rows: first dim, columns: second dim).

    Parameters
    ----------
    da : DataArray
        Exactly two dims; NaN cells are left blank.
    ax : matplotlib Axes, optional
        Where to draw; default a new figure.
    cmap : str
        A matplotlib colour map name.
    vmin, vmax : float
        Range of the colour map.
    annotate : bool
        Write each cell's value (``format(value, fmt)``, or ``text``) in the cell.
    fmt : str
        Format of the annotations.
    text : array of str, optional
        Annotations to use instead of the formatted values, shaped like ``da``.
    colorbar : bool
        Add a colour bar.
    colorbar_label : str, optional
        Label of the colour bar.
    title : str, optional
        Axes title.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import xarray as xr
    >>> ax = heatmap(xr.DataArray([[1.0, 0.5], [0.5, 1.0]], dims=("a", "a_2")))
    >>> ax.get_ylabel(), len(ax.texts)
    ('a', 4)
    """
    plt = pyplot()
    da, values, cells = _heatmap_iv(da, text)
    if ax is None:
        lines = [str(c).split("\n") for c in cells.ravel()] if cells is not None else [[format(1.0, fmt)]]
        chars = max(len(line) for cell in lines for line in cell)
        n_lines = max(len(cell) for cell in lines)
        width = 2.6 + da.shape[1] * max(0.55, 0.07 * chars + 0.15)
        height = 1.6 + da.shape[0] * (0.32 + 0.18 * n_lines)
        _, ax = plt.subplots(figsize=(width, height), layout="constrained")
    image = ax.imshow(np.ma.masked_invalid(values), cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto")
    rows, cols = da.dims
    ax.set_xticks(np.arange(da.shape[1]), _labels(da, cols), rotation=45, ha="right", rotation_mode="anchor")
    ax.set_yticks(np.arange(da.shape[0]), _labels(da, rows))
    ax.set_xlabel(figure_text(cols, FIGURE_LABEL_WIDTH))
    ax.set_ylabel(figure_text(rows, FIGURE_LABEL_WIDTH))
    if annotate:
        for (i, j), v in np.ndenumerate(values):
            label = str(cells[i, j]) if cells is not None else ("" if np.isnan(v) else format(v, fmt))
            if not label:
                continue
            rgba = image.cmap(image.norm(v)) if not np.isnan(v) else (1.0, 1.0, 1.0, 1.0)
            dark = 0.299 * rgba[0] + 0.587 * rgba[1] + 0.114 * rgba[2] < 0.5
            ax.text(j, i, label, ha="center", va="center", fontsize="small", color="white" if dark else "black")
    if colorbar:
        bar = ax.figure.colorbar(image, ax=ax, shrink=0.85)
        if colorbar_label:
            bar.set_label(colorbar_label)
    if title:
        ax.set_title(title)
    return ax


@one_call
def plot_matrix(result: xr.DataArray, *, ax: Any = None, annotate: bool = True, fmt: str = ".2f",
                cmap: str | None = None, title: str | None = None) -> Any:
    """Heatmap of a correlation matrix from :func:`xcorrstat.agreement.matrix`.

    Blue (``RdBu``) for Pearson and Spearman, orange (``PuOr_r``) for Kendall,
    on the range -1 to 1.

    Parameters
    ----------
    result : DataArray
        A (label, label') matrix; select one label of any batch dim first.
    ax : matplotlib Axes, optional
        Where to draw; default a new figure.
    annotate : bool, default True
        Write each cell's value in the cell.
    fmt : str, default ".2f"
        Format of the annotations.
    title : str, optional
        Axes title; the default names the method, the compared dim and the level.
    cmap : str, optional
        Override the colour map.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import xcorrstat.agreement as agr
    >>> r = agr.matrix(agr.synthetic_benchmark(), var="accuracy", over="batch_size")
    >>> plot_matrix(r).images[0].get_cmap().name
    'RdBu'
    """
    method = result.attrs.get("method", "pearson")
    level = result.attrs.get("level")
    if title is None:
        over = result.attrs.get("over", result.dims[0] if result.dims else "")
        title = figure_text(f"{method.capitalize()} correlation of {over}" + (f" ({level} level)" if level else ""))
    return heatmap(result, ax=ax, cmap=cmap or CMAPS.get(method, "RdBu"), vmin=-1.0, vmax=1.0,
                   annotate=annotate, fmt=fmt, colorbar_label=method, title=title)


@one_call
def plot_jaccard(result: xr.DataArray, *, ax: Any = None, annotate: bool = True, fmt: str = ".2f",
                 cmap: str | None = None, title: str | None = None) -> Any:
    """Heatmap of Jaccard similarities (or distances) from :func:`xcorrstat.agreement.jaccard`.

    Green (``PiYG``) on the range 0 to 1; for distances the map is reversed
    (``PiYG_r``) so that similar sets stay green.

    Parameters
    ----------
    result : DataArray
        A (label, label') matrix; select one label of any kept dim first.
    ax : matplotlib Axes, optional
        Where to draw; default a new figure.
    annotate : bool, default True
        Write each cell's value in the cell.
    fmt : str, default ".2f"
        Format of the annotations.
    title : str, optional
        Axes title; the default names the analysis.
    cmap : str, optional
        Override the colour map.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import xcorrstat.agreement as agr
    >>> j = agr.jaccard(agr.synthetic_benchmark(), var="selected", over="strategy", item="item", union="cycle")
    >>> plot_jaccard(j).images[0].get_cmap().name
    'PiYG'
    """
    distance = bool(result.attrs.get("distance", 0))
    label = "Jaccard distance" if distance else "Jaccard similarity"
    if title is None:
        title = figure_text(f"{label}, {result.attrs.get('over', result.dims[0])}")
    default = CMAPS["jaccard"] + ("_r" if distance else "")
    return heatmap(result, ax=ax, cmap=cmap or default, vmin=0.0, vmax=1.0, annotate=annotate, fmt=fmt,
                   colorbar_label=label, title=title)


def _plot_leaderboard_agreement_iv(result: Any) -> xr.DataArray:
    """``result["tau"]`` (2-D, computed), once ``result`` is checked to be a leaderboard agreement result."""
    if not isinstance(result, xr.Dataset) or "tau" not in result:
        raise TypeError("result must be the Dataset returned by leaderboard_agreement (with a 'tau' variable)")
    return _as_2d(result["tau"], "result['tau']")


@one_call
def plot_leaderboard_agreement(result: xr.Dataset, *, ax: Any = None, annotate: bool = True,
                               show_ci: bool = True, fmt: str = ".2f", cmap: str | None = None,
                               title: str | None = None) -> Any:
    """Heatmap of Kendall tau-b between leaderboards from :func:`xcorrstat.agreement.leaderboard_agreement`.

    Orange (``PuOr_r``) on the range -1 to 1; with ``show_ci`` each cell also
    shows its bootstrap interval ``[low, high]`` when the result has one.

    Parameters
    ----------
    result : Dataset
        The result, with ``tau`` of exactly two dims (select one label of any batch
        dim first).
    ax : matplotlib Axes, optional
        Where to draw; default a new figure.
    annotate : bool, default True
        Write each cell's value in the cell.
    fmt : str, default ".2f"
        Format of the annotations.
    title : str, optional
        Axes title; the default names the analysis.
    show_ci : bool
        Write the interval under the estimate in each off-diagonal cell.
    cmap : str, optional
        Override the colour map.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import xcorrstat.agreement as agr
    >>> res = agr.leaderboard_agreement(agr.synthetic_benchmark(), var="accuracy", competitor="strategy",
    ...                                 condition="dataset", between="batch_size", rng=0)
    >>> plot_leaderboard_agreement(res).images[0].get_cmap().name
    'PuOr_r'
    """
    tau = _plot_leaderboard_agreement_iv(result)
    text = None
    if annotate and show_ci and "low" in result and "high" in result:
        low = np.asarray(result["low"].transpose(*tau.dims).values)
        high = np.asarray(result["high"].transpose(*tau.dims).values)
        text = np.empty(tau.shape, dtype=object)
        for (i, j), v in np.ndenumerate(tau.values):
            if np.isnan(v):
                text[i, j] = ""
            elif i == j or np.isnan(low[i, j]):
                text[i, j] = format(v, fmt)
            else:
                text[i, j] = f"{v:{fmt}}\n[{low[i, j]:{fmt}}, {high[i, j]:{fmt}}]"
    if title is None:
        title = figure_text(f"Leaderboard agreement ({result.attrs.get('competitor', 'competitors')})")
    return heatmap(tau, ax=ax, cmap=cmap or CMAPS["kendall"], vmin=-1.0, vmax=1.0, annotate=annotate, fmt=fmt,
                   text=text, colorbar_label="Kendall tau-b", title=title)
