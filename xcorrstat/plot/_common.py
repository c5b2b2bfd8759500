"""What the plots of results share: checks of the result, the metrics' order and the default texts.

:func:`metric_order` is the one order of the forest plot and the significance matrix:
by significance cluster when the result has one, then by correlation, best first; an
undefined correlation (NaN, cluster 0) last.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
import xarray as xr

from .._display import did_you_mean, figure_text
from ._backend import FIGURE_LABEL_WIDTH, wrap_text

__all__ = ["CI_NAMES", "TITLE_SIZE", "check_by", "check_plot_dims", "ci_text", "correlations_of", "describe", "fit_text",
           "label_panels", "level_title", "metric_order", "panel_title", "require_result", "set_title", "title_width"]

#: Names of the interval kinds, as the titles spell them.
CI_NAMES = {
    "percentile": "percentile bootstrap",
    "basic": "basic bootstrap",
    "bca": "BCa bootstrap",
    "fisher": "Fisher z",
}

#: Font size of the titles (matplotlib's name).
TITLE_SIZE = "medium"


def require_result(result: Any, names: Sequence[str], what: str) -> xr.Dataset:
    """``result`` if it is a Dataset holding the variables ``names``; else an error naming ``what`` returns it."""
    if not isinstance(result, xr.Dataset):
        raise TypeError(f"result must be the Dataset returned by {what}, got {type(result).__name__}")
    missing = [n for n in names if n not in result.variables]
    if missing:
        raise ValueError(
            f"result must be the Dataset returned by {what}, with variables {list(names)}; "
            f"missing {missing} (has {sorted(map(str, result.data_vars))})"
        )
    return result


def correlations_of(result: Any) -> xr.DataArray | None:
    """The correlations of a result of correlations or intervals, or None for any other result.

    That is a :func:`~xcorrstat.correlate` DataArray (named ``correlation``), or a Dataset
    with a ``correlation`` variable (intervals add ``low`` and ``high``), over a ``metric``
    dim; not a ranked result (``cluster``), an all-pairs one (``other_metric``) or a test of
    two metrics (attrs ``x`` and ``y``), which have tables and figures of their own.

    Examples
    --------
    >>> r = xr.DataArray([0.5, 0.2], dims="metric", name="correlation")
    >>> correlations_of(r) is r
    True
    >>> correlations_of(r.to_dataset().assign(cluster=("metric", [1, 2]))) is None
    True
    """
    if isinstance(result, xr.DataArray):
        corr = result if result.name == "correlation" else None
    elif (isinstance(result, xr.Dataset) and "correlation" in result.data_vars and "cluster" not in result
          and "other_metric" not in result.dims):
        corr = None if {"x", "y"} <= set(result.attrs) else result["correlation"]
    else:
        corr = None
    if corr is None or "metric" not in corr.dims or "other_metric" in corr.dims:
        return None
    return corr


def check_plot_dims(da: xr.DataArray, allowed: Sequence[Hashable], name: str, *, by: bool = False) -> None:
    """An error saying which label to select when ``da`` has a dim not in ``allowed``.

    With ``by``, the message also names the plot's ``by=`` option (a panel per label).
    """
    extra = [d for d in da.dims if d not in allowed]
    if extra:
        hint = f", or draw one panel per label with by={[str(d) for d in extra]!r}" if by else ""
        raise ValueError(
            f"result[{name!r}] has dims {tuple(da.dims)}; only {tuple(allowed)} can be drawn, "
            f"select one label of {extra} first, e.g. result.sel({extra[0]}=...){hint}"
        )


def check_by(result: xr.Dataset, by: Hashable | Sequence[Hashable] | None, taken: Sequence[Hashable]) -> list[Hashable]:
    """``by`` as a list of dims of ``result``, none of them in ``taken`` (the metric and level dims)."""
    if by is None:
        return []
    dims = [by] if isinstance(by, str) or not isinstance(by, Sequence) else list(by)
    for dim in dims:
        if dim not in result.dims or dim in taken:
            raise ValueError(f"by must name dims of the result other than {tuple(map(str, taken))}, got "
                             f"{figure_text(repr(dim), FIGURE_LABEL_WIDTH)}; the result's dims are "
                             f"{tuple(map(str, result.dims))}"
                             f"{did_you_mean(dim, [d for d in result.dims if d not in taken])}")
    if len(set(dims)) != len(dims):
        raise ValueError(f"by names a dim twice: {dims!r}")
    return dims


def label_panels(result: xr.Dataset, by: Sequence[Hashable]) -> list[tuple[dict[Hashable, int], dict[Hashable, Any]]]:
    """Every combination of the labels of the ``by`` dims, in order: (positions, labels) per panel.

    Examples
    --------
    >>> ds = xr.Dataset(coords={"lp": ["en-de", "zh-en"]})
    >>> [(where, str(labels["lp"])) for where, labels in label_panels(ds, ["lp"])]
    [({'lp': 0}, 'en-de'), ({'lp': 1}, 'zh-en')]
    """
    ranges = [range(result.sizes[d]) for d in by]
    panels = []
    for positions in itertools.product(*ranges):
        where = dict(zip(by, positions))
        labels = {d: (result[d].values[k] if d in result.coords else k) for d, k in where.items()}
        panels.append((where, labels))
    return panels


def metric_order(correlation: Any, cluster: Any = None) -> np.ndarray:
    """Indices ordering the metrics by cluster (0, undefined, last), then by correlation, best first.

    Without clusters, by correlation only; NaN last. Ties keep the given order.

    Examples
    --------
    >>> metric_order([0.2, float("nan"), 0.9, 0.5]).tolist()
    [2, 3, 0, 1]
    >>> metric_order([0.2, 0.1, 0.9, 0.5], cluster=[2, 0, 1, 2]).tolist()
    [2, 3, 0, 1]
    """
    key = -np.asarray(correlation, dtype=np.float64)
    if cluster is None:
        return np.argsort(key, kind="stable")
    groups = np.asarray(cluster, dtype=np.int64)
    groups = np.where(groups > 0, groups, np.iinfo(np.int64).max)
    return np.lexsort((key, groups))


def describe(attrs: dict, *, level: Any = None, with_level: bool = True) -> str:
    """"Kendall correlation with <target>, <level> level" from a result's attrs (or the given ``level``)."""
    method = str(attrs.get("method", "")).capitalize() or "Level"
    text = f"{method} correlation"
    if attrs.get("target") is not None:
        text += f" with {figure_text(attrs['target'], FIGURE_LABEL_WIDTH)}"
    shown = level if level is not None else attrs.get("level")
    if with_level and shown:
        text += f", {figure_text(shown, FIGURE_LABEL_WIDTH)} level"
    return text


def ci_text(attrs: dict) -> str:
    """"95% percentile bootstrap CI" from a result's attrs ("" without an interval kind)."""
    ci = attrs.get("ci")
    if ci is None:
        return ""
    level = attrs.get("confidence_level")
    pct = f"{float(level) * 100:g}% " if level is not None else ""
    return f"{pct}{CI_NAMES.get(str(ci), str(ci))} CI"


def level_title(label: Any, level_dim: Hashable) -> str:
    """The title of one level's panel: "system level", or "<dim> = <label>"."""
    text = f"{label} level" if level_dim == "level" else f"{level_dim} = {label}"
    return figure_text(text, FIGURE_LABEL_WIDTH)


def panel_title(level: Any, level_dim: Hashable | None, labels: dict[Hashable, Any]) -> str:
    """The title of one panel: its level's ("system level") and its labels' ("lp = en-de"), joined.

    Examples
    --------
    >>> panel_title("system", "level", {"lp": "en-de"})
    'system level, lp = en-de'
    >>> panel_title(None, None, {"lp": "en-de"})
    'lp = en-de'
    """
    parts = [] if level_dim is None else [level_title(level, level_dim)]
    parts += [f"{figure_text(d, FIGURE_LABEL_WIDTH)} = {figure_text(v, FIGURE_LABEL_WIDTH)}" for d, v in labels.items()]
    return ", ".join(parts)


def title_width(ax: Any) -> float:
    """Inches a title centred on ``ax`` may span without leaving the figure (at its present position)."""
    box = ax.get_position()
    width = float(ax.figure.get_figwidth())
    centre = (box.x0 + box.x1) / 2 * width
    return max(2 * min(centre, width - centre) - 0.1, 1.0)


def fit_text(text: str, width: float, *, fontsize: float | str = TITLE_SIZE) -> str:
    """``text`` broken into lines of at most ``width`` inches; a text with a formula (``$...$``) stays whole."""
    if re.search(r"(?<!\\)\$", text):
        return text
    return wrap_text(text, width, fontsize=fontsize)


def set_title(ax: Any, title: str, width: float) -> None:
    """Title ``ax`` with ``title`` broken into lines of at most ``width`` inches (see :func:`fit_text`)."""
    ax.set_title(fit_text(title, width), fontsize=TITLE_SIZE)
