"""Correlations and intervals ranked by value: the tables a paper prints of a correlate, bootstrap or fisher result.

A result of correlations (:func:`~xcorrstat.correlate`) or of intervals
(:func:`~xcorrstat.bootstrap`, :func:`~xcorrstat.fisher`) has no significance clusters:
its metrics are ranked by correlation, highest first; equal correlations share a rank
(the lowest of their places: 1, 2, 2, 4) and an undefined (NaN) correlation comes last,
shown as undefined and without a rank. A result with dims besides ``metric`` (a language
pair ``lp``, several levels or coefficients) gives one column per label (every combination
of the labels of those dims, in the result's order), and the rows are ranked by the first
label: select or reorder the labels to rank by another (``r.sel(lp=["zh-en", "en-de"])``).
The heading names what the numbers are: target, level, coefficient, units, interval and draws.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from .._display import LABEL_WIDTH, printable
from .._escape import latex_text, markdown_table, markdown_text
from .._notes import notes_of
from .._schema import METRIC
from ..plot._common import correlations_of

__all__ = ["label_text", "statistic_frame", "statistic_heading", "statistic_latex", "statistic_markdown"]

_UNITS = {"system": "systems", "input": "inputs", "global": "cells", "within_system": "systems"}
_CI_NAMES = {"percentile": "percentile bootstrap", "basic": "basic bootstrap", "bca": "BCa bootstrap",
             "fisher": "Fisher z"}
_METHODS = {"pearson": "Pearson", "spearman": "Spearman", "kendall": "Kendall"}


def label_text(labels: Mapping[Hashable, Any]) -> str:
    """The labels of a ranked list's extra dims as shown: control characters escaped, long ones cut.

    Examples
    --------
    >>> label_text({"lp": "en-de", "domain": "news"})
    'lp = en-de, domain = news'
    """
    return ", ".join(f"{printable(dim, LABEL_WIDTH)} = {printable(value, LABEL_WIDTH)}"
                     for dim, value in labels.items())


def _labels(corr: xr.DataArray, extra: list[Hashable]) -> list[dict[Hashable, Any]]:
    """Every combination of the labels of the ``extra`` dims, in the result's (row-major) order."""
    values = [corr[d].values if d in corr.coords else np.arange(corr.sizes[d]) for d in extra]
    return [dict(zip(extra, combo)) for combo in itertools.product(*values)]


def _columns(result: xr.Dataset | xr.DataArray, corr: xr.DataArray) -> dict[str, np.ndarray]:
    """``correlation``, ``n`` (when the result has it), ``low`` and ``high`` (intervals) as metric x label."""
    extra = [d for d in corr.dims if d != METRIC]
    arrays = {"correlation": corr}
    if "n" in corr.coords:
        arrays["n"] = corr.coords["n"].reset_coords(drop=True)
    if isinstance(result, xr.Dataset) and "low" in result and "high" in result:
        arrays["low"], arrays["high"] = result["low"], result["high"]
    out = {}
    for name, da in arrays.items():
        da = da.broadcast_like(corr).transpose(METRIC, *extra).compute()
        out[name] = np.asarray(da.values).reshape(corr.sizes[METRIC], -1)
    return out


def _order_and_rank(corr: np.ndarray) -> tuple[np.ndarray, pd.Series]:
    """Rows best first (NaN last, ties in the result's order) and each row's rank (equal values share one)."""
    key = np.where(np.isnan(corr), np.inf, -corr)
    order = np.argsort(key, kind="stable")
    ranks = pd.Series(-corr[order]).rank(method="min").astype("Int64")
    return order, ranks


def statistic_frame(result: xr.Dataset | xr.DataArray) -> pd.DataFrame:
    """The ranked rows of a result of correlations or intervals (see the module's rules).

    Columns ``rank``, ``metric``, ``correlation``, ``n`` (when the result has it) and ``low``
    and ``high`` (intervals); with extra dims each value column is one per label, named
    ``"correlation (lp = en-de)"`` and so on. ``attrs["notes"]`` holds the result's notes.
    """
    corr = correlations_of(result)
    if corr is None:
        raise TypeError(f"result must be a result of correlations or intervals over 'metric', "
                        f"got {type(result).__name__}")
    extra = [d for d in corr.dims if d != METRIC]
    columns = _columns(result, corr)
    order, ranks = _order_and_rank(np.asarray(columns["correlation"][:, 0], dtype=np.float64))
    frame = pd.DataFrame({"rank": ranks, "metric": corr[METRIC].values[order].astype(str)})
    labels = _labels(corr, extra) if extra else [{}]
    for k, labelled in enumerate(labels):
        suffix = f" ({label_text(labelled)})" if labelled else ""
        for name, values in columns.items():
            frame[name + suffix] = values[order, k]
    frame.attrs["notes"] = notes_of(result)
    return frame


def _listed(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, (list, tuple)) else [str(value)]


def _method_text(attrs: Mapping[str, Any]) -> str:
    """"Kendall tau-b correlation", or the statistic's own name (``attrs["statistic"]``) without a method."""
    if attrs.get("method") is None and attrs.get("statistic"):
        return str(attrs["statistic"])
    variant = str(attrs.get("variant") or "")
    names = [f"Kendall tau-{variant}" if m == "kendall" and variant else _METHODS.get(m, m)
             for m in _listed(attrs.get("method", "pearson"))]
    return f"{' and '.join(names)} correlation{'s' if len(names) > 1 else ''}"


def _n_text(n: np.ndarray | None, levels: list[str]) -> str:
    if n is None or not np.isfinite(n.astype(np.float64)).any():
        return ""
    n = n[np.isfinite(n.astype(np.float64))].astype(np.int64)
    units = f" {_UNITS[levels[0]]}" if len(levels) == 1 and levels[0] in _UNITS else ""
    return f" (n = {n.min()}{units})" if n.min() == n.max() else f" (n = {n.min()} to {n.max()}{units})"


def _interval_text(attrs: Mapping[str, Any]) -> str:
    parts = []
    if attrs.get("confidence_level") is not None:
        parts.append(f"{float(attrs['confidence_level']) * 100:g}%")
    ci = attrs.get("ci")
    parts.append(f"{_CI_NAMES.get(str(ci), str(ci)) if ci else ''} intervals".strip())
    draws = []
    if attrs.get("resample"):
        draws.append(" and ".join(_UNITS.get(d, d) for d in _listed(attrs["resample"])) + " resampled")
    if attrs.get("n_resamples"):
        draws.append(f"{attrs['n_resamples']} draws")
    if attrs.get("rng") is not None and draws:
        draws.append(f"seed {attrs['rng']}")
    return " ".join(parts) + (f" ({', '.join(draws)})" if draws else "")


def statistic_heading(result: xr.Dataset | xr.DataArray) -> str:
    """One line naming what the table shows: coefficient, target, level, units, interval and draws.

    Examples
    --------
    >>> import xcorrstat
    >>> ds = xcorrstat.datasets.summeval()
    >>> statistic_heading(ds.corrstat.correlate(target="expert_relevance", metrics=["meteor"], method="kendall"))
    'Kendall tau-b correlation with expert_relevance, system level (n = 16 systems)'
    """
    attrs = result.attrs
    levels = _listed(attrs["level"]) if attrs.get("level") else []
    text = _method_text(attrs)
    if attrs.get("target") is not None:
        text += f" with {', '.join(_listed(attrs['target']))}"
    if levels:
        text += f", {' and '.join(levels)} level"
    corr = correlations_of(result)
    n = corr.coords["n"].values if corr is not None and "n" in corr.coords else None
    text += _n_text(None if n is None else np.asarray(n).ravel(), levels)
    if isinstance(result, xr.Dataset) and "low" in result and "high" in result:
        text += f"; {_interval_text(attrs)}"
    return printable(text)


def _number(value: Any, digits: int, undefined: str) -> str:
    if value is None or value is pd.NA or (isinstance(value, (float, np.floating)) and np.isnan(value)):
        return undefined
    if isinstance(value, (float, np.floating)):
        return f"{value:.{digits}f}"
    return str(value)


def _cells(frame: pd.DataFrame, labels: list[str], digits: int, undefined: str,
           ci: str) -> tuple[list[str], list[list[str]]]:
    """Header and rows as text: Rank, Metric, then per label the correlation ([low, high] beside it)."""
    intervals = any(c.startswith("low") for c in frame.columns)
    n_cols = [c for c in frame.columns if c == "n" or c.startswith("n (")]
    varying_n = bool(n_cols) and frame[n_cols].nunique(dropna=True).max() > 1
    header = ["Rank", "Metric"]
    for label in labels:
        name = label or "Correlation"
        header += [name] + ([ci if not label else f"{label} {ci}"] if intervals else []) + \
            (["n" if not label else f"{label} n"] if varying_n else [])
    rows = []
    for _, row in frame.iterrows():
        cells = [_number(row["rank"], digits, "-"), str(row["metric"])]
        for label in labels:
            suffix = f" ({label})" if label else ""
            cells.append(_number(row["correlation" + suffix], digits, undefined))
            if intervals:
                low, high = row["low" + suffix], row["high" + suffix]
                cells.append(f"[{_number(low, digits, undefined)}, {_number(high, digits, undefined)}]"
                             if np.isfinite(low) and np.isfinite(high) else undefined)
            if varying_n:
                cells.append(_number(row["n" + suffix], digits, undefined))
        rows.append(cells)
    return header, rows


def _ci_header(attrs: Mapping[str, Any]) -> str:
    level = attrs.get("confidence_level")
    return f"{float(level) * 100:g}% CI" if level is not None else "CI"


def _frame_labels(result: xr.Dataset | xr.DataArray) -> list[str]:
    corr = correlations_of(result)
    assert corr is not None
    extra = [d for d in corr.dims if d != METRIC]
    return [label_text(labelled) for labelled in _labels(corr, extra)] if extra else [""]


def statistic_latex(result: xr.Dataset | xr.DataArray, *, digits: int) -> str:
    r"""The ranked table as a LaTeX ``table`` (booktabs rules) captioned with :func:`statistic_heading`."""
    header, rows = _cells(statistic_frame(result), _frame_labels(result), digits, "--", _ci_header(result.attrs))
    align = "rl" + "r" * (len(header) - 2)
    lines = [r"\begin{table}", r"\centering", rf"\caption{{{latex_text(statistic_heading(result))}}}",
             rf"\begin{{tabular}}{{{align}}}", r"\toprule", " & ".join(map(latex_text, header)) + r" \\",
             r"\midrule"]
    # the numbers are written here (digits, minus signs, brackets, "--"): only the names need escaping
    lines += [" & ".join([cells[0], latex_text(cells[1]), *cells[2:]]) + r" \\" for cells in rows]
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines) + "\n"


def statistic_markdown(result: xr.Dataset | xr.DataArray, *, digits: int) -> str:
    """The ranked table as a GitHub-flavoured Markdown table under its heading in bold."""
    header, rows = _cells(statistic_frame(result), _frame_labels(result), digits, "-", _ci_header(result.attrs))
    # the numbers are written here: only the names need escaping
    table = markdown_table([markdown_text(c) for c in header], [[r[0], markdown_text(r[1]), *r[2:]] for r in rows],
                           "rl" + "r" * (len(header) - 2))
    return f"**{markdown_text(statistic_heading(result))}**\n\n{table}"
