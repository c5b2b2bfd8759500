"""What the plots of results share: checks of the result, the metrics' order and the default texts.

:func:`metric_order` is the one order of the forest plot and the significance matrix:
by significance cluster when the result has one, then by correlation, best first; an
undefined correlation (NaN, cluster 0) last.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
import xarray as xr

from .._display import figure_text
from .backend import FIGURE_LABEL_WIDTH, wrap_text

__all__ = ["CI_NAMES", "TITLE_SIZE", "check_plot_dims", "ci_text", "describe", "fit_text", "level_title",
           "metric_order", "require_result", "set_title", "title_width"]

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


def check_plot_dims(da: xr.DataArray, allowed: Sequence[Hashable], name: str) -> None:
    """An error saying which label to select when ``da`` has a dim not in ``allowed``."""
    extra = [d for d in da.dims if d not in allowed]
    if extra:
        raise ValueError(
            f"result[{name!r}] has dims {tuple(da.dims)}; only {tuple(allowed)} can be drawn, "
            f"select one label of {extra} first, e.g. result.sel({extra[0]}=...)"
        )


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
