"""Ranked results as tables for papers: LaTeX and Markdown, WMT style.

Every ranked result -- a :class:`~xcorrstat._reporting.Report`, a
:func:`~xcorrstat.compare` result, an :func:`~xcorrstat.aggregate_tasks` result --
becomes one row per metric, best first: the rank of its significance cluster, the
metric, its correlation (with the confidence interval when the result has one) and
how many other metrics it beats significantly. Metrics of the top cluster are set
in bold. Names are written by the escaping layer of each format (:mod:`xcorrstat._escape`);
the LaTeX rendering (number format, rules, bold) is pandas' Styler.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any, Literal, Protocol, Union

import numpy as np
import pandas as pd
import xarray as xr

from .._schema import METRIC
from .._validation import check_choice
from .ranking import label_text, statistic_frame, statistic_latex, statistic_markdown
from .tasktable import is_task_result, task_latex, task_markdown, task_text
from .._display import printable
from ..plot._common import correlations_of
from .._escape import latex_text, markdown_table, markdown_text

__all__ = ["TABLES", "TABLE_FORMATS", "check_digits", "format_table", "label_text", "ranked_frame", "report_groups",
           "tables_of", "to_latex", "to_markdown"]

TableFormat = Literal["text", "latex", "markdown"]

#: Formats of :func:`format_table` (and the CLI's ``--table-format``).
TABLE_FORMATS: tuple[str, ...] = ("text", "latex", "markdown")

class Ranked(Protocol):
    """A report: ranked rows per level (:class:`~xcorrstat._reporting.Report`)."""

    @property
    def levels(self) -> list[str]: ...

    @property
    def extra_dims(self) -> list[Hashable]: ...

    def table(self) -> pd.DataFrame: ...

    def pairs(self) -> pd.DataFrame: ...

    def to_text(self, *, digits: int = 3) -> str: ...


Result = Union[Ranked, xr.Dataset, xr.DataArray]

#: The table functions of this module, in the order a result's accessor lists them.
TABLES: tuple[str, ...] = ("ranked_frame", "to_latex", "to_markdown")

def check_digits(digits: Any) -> int:
    """``digits`` as the number of decimals of a table: an integer from 0 to 15."""
    if isinstance(digits, bool) or not isinstance(digits, (int, np.integer)) or not 0 <= digits <= 15:
        raise ValueError(f"digits must be an integer from 0 to 15, got {printable(repr(digits), 40)}")
    return int(digits)



_LEVEL_TITLES = {"system": "System level", "input": "Input level", "global": "Global level",
                 "within_system": "Within-system level"}


def _wins(significant: xr.DataArray | None, metrics: np.ndarray) -> np.ndarray | None:
    """How many other metrics each metric beats significantly (row sums of ``significant``)."""
    if significant is None:
        return None
    return significant.sum("other_metric").sel({METRIC: metrics}).values.astype(np.int64)


def _dataset_frame(result: xr.Dataset) -> pd.DataFrame:
    """The rows of a compare / aggregate_tasks result (one ranked list)."""
    missing = [v for v in ("correlation", "cluster") if v not in result]
    if missing:
        raise ValueError(f"result must have 'correlation' and 'cluster' variables (a compare or aggregate_tasks "
                         f"result); missing {missing}")
    extra = [d for d in result["correlation"].dims if d != METRIC]
    if extra:
        raise ValueError(f"result has dims {extra} besides 'metric': select one ranked list first, "
                         f"e.g. result.sel({extra[0]}=...)")
    metrics = result[METRIC].values
    frame = pd.DataFrame({"metric": metrics.astype(str), "correlation": result["correlation"].values,
                          "cluster": result["cluster"].values.astype(np.int64)})
    for lo, hi in (("low", "high"), ("lower", "upper")):
        if lo in result and hi in result:
            frame["low"], frame["high"] = result[lo].values, result[hi].values
    wins = _wins(result.get("significant"), metrics)
    if wins is not None:
        frame["wins"] = wins
    return frame


def _is_report(result: object) -> bool:
    return all(callable(getattr(result, name, None)) for name in ("table", "pairs", "to_text"))


def report_groups(report: Ranked) -> list[tuple[str, dict[Hashable, Any], pd.DataFrame]]:
    """``(level, labels of the extra dims, rows of report.table())`` of each ranked list of a report.

    In the table's order: level by level, and with extra dims label by label, level by
    level within a label. ``labels`` is empty without extra dims.
    """
    table = report.table()
    extra = list(report.extra_dims)
    groups = []
    for key, rows in table.groupby([*extra, "level"], sort=False, dropna=False):
        *labels, level = key
        groups.append((str(level), dict(zip(extra, labels)), rows))
    return groups


def _report_frames(report: Ranked) -> list[tuple[str, dict[Hashable, Any], pd.DataFrame]]:
    """One ranked frame per level (and label of the extra dims) of a report."""
    pairs = report.pairs()
    keys = ["level", *report.extra_dims, "metric"]
    wins = pairs.groupby(keys, dropna=False)["significant"].sum() if len(pairs) else None
    frames = []
    for level, labels, rows in report_groups(report):
        sub = rows[["metric", "correlation", "low", "high", "cluster"]].copy()
        if wins is not None:
            sub["wins"] = [int(wins.get((level, *labels.values(), m), 0)) for m in sub["metric"]]
        frames.append((level, labels, sub.reset_index(drop=True)))
    return frames


def _ranked(frame: pd.DataFrame) -> pd.DataFrame:
    """Best first: by cluster (undefined -- cluster 0 -- last), then by correlation."""
    frame = frame.assign(_undefined=frame["cluster"] <= 0)
    frame = frame.sort_values(["_undefined", "cluster", "correlation"], ascending=[True, True, False],
                              kind="stable")
    return frame.drop(columns="_undefined").reset_index(drop=True)


def tables_of(result: object) -> tuple[str, ...]:
    """Which of :data:`TABLES` make a table of ``result`` (an empty tuple when none does).

    All three for a report, a ranked Dataset with one ranked list (:func:`~xcorrstat.compare`,
    :func:`~xcorrstat.aggregate_tasks`: ``correlation`` and ``cluster`` over ``metric`` alone;
    with more dims, after selecting one label of each) and a result of
    correlations or intervals (:func:`~xcorrstat.correlate`, :func:`~xcorrstat.bootstrap`,
    :func:`~xcorrstat.fisher`); LaTeX and Markdown for a :func:`~xcorrstat.wmt.run_tasks`
    result; none for any other (a test of two metrics, an agreement or diagnostics result).

    Examples
    --------
    >>> import xcorrstat
    >>> ds = xcorrstat.datasets.summeval()
    >>> tables_of(ds.corrstat.fisher(target="expert_relevance", metrics=["meteor"]))
    ('ranked_frame', 'to_latex', 'to_markdown')
    >>> tables_of(ds.corrstat.williams_test(x="meteor", y="rouge_2_f1", target="expert_relevance"))
    ()
    """
    if is_task_result(result):
        return ("to_latex", "to_markdown")
    ranked = isinstance(result, xr.Dataset) and "correlation" in result and "cluster" in result
    if isinstance(result, xr.Dataset) and ranked and set(result["correlation"].dims) != {METRIC}:
        return ()  # several ranked lists: one is selected first (result.sel(lp=...))
    if ranked or correlations_of(result) is not None or (_is_report(result) and not isinstance(result, xr.Dataset)):
        return TABLES
    return ()


def ranked_frame(result: Result) -> pd.DataFrame:
    """The ranked rows of a result: metrics best first, with their rank, correlation and interval.

    Parameters
    ----------
    result : Report, Dataset or DataArray
        A report, or a :func:`~xcorrstat.compare` / :func:`~xcorrstat.aggregate_tasks`
        result with one ranked list (select any other dim first); or a result of
        correlations (:func:`~xcorrstat.correlate`) or intervals
        (:func:`~xcorrstat.bootstrap`, :func:`~xcorrstat.fisher`).

    Returns
    -------
    DataFrame
        For a report or a compare result, one row per metric (per level for a report),
        best first: by cluster, then by correlation; ``cluster`` 0 (an undefined
        correlation) comes last. ``low`` and ``high`` are present when the result has a
        confidence interval, ``wins`` (the number of metrics it beats significantly) when
        it has the pairwise tests.

        For correlations and intervals (no clusters): columns ``rank``, ``metric``,
        ``correlation``, ``n`` (when the result has it), and ``low`` and ``high`` for
        intervals; highest correlation first, equal correlations share a rank (1, 2, 2, 4),
        an undefined (NaN) one comes last without a rank. Dims besides ``metric`` (a
        language pair ``lp``, several levels) give each value column once per label
        (``"correlation (lp = en-de)"``), the rows ranked by the first label's correlations
        (``result.sel(lp=[...])`` reorders the labels). ``attrs["notes"]`` holds the
        result's notes.

    Examples
    --------
    >>> import xcorrstat
    >>> ds = xcorrstat.datasets.summeval()
    >>> res = xcorrstat.compare(ds, target="expert_relevance", metrics=["qa_eval_f1", "rouge_2_f1", "meteor"],
    ...                         test=xcorrstat.Permutation(n_resamples=200, rng=0))
    >>> ranked_frame(res).columns.tolist()
    ['metric', 'correlation', 'cluster', 'wins']
    >>> r = xcorrstat.correlate(ds, target="expert_relevance", metrics=["rouge_2_f1", "meteor"], method="kendall")
    >>> ranked_frame(r).round(3).values.tolist()
    [[1, 'meteor', 0.5, 16], [2, 'rouge_2_f1', 0.433, 16]]
    """
    if isinstance(result, xr.Dataset) and "cluster" in result:
        return _ranked(_dataset_frame(result))
    if isinstance(result, (xr.Dataset, xr.DataArray)) and correlations_of(result) is not None:
        return statistic_frame(result)
    if isinstance(result, xr.Dataset):
        return _ranked(_dataset_frame(result))
    if _is_report(result):
        report: Any = result
        parts = [_ranked(f).assign(level=level, **{str(d): v for d, v in labels.items()})
                 for level, labels, f in _report_frames(report)]
        frame = pd.concat(parts, ignore_index=True)
        first = ["level", *map(str, report.extra_dims)]
        return frame[[*first, *[c for c in frame.columns if c not in first]]]
    raise TypeError(f"result must be a Report or a compare/aggregate_tasks Dataset, or a result of correlations "
                    f"or intervals (correlate, bootstrap, fisher), got {type(result).__name__}")


def _display(frame: pd.DataFrame, digits: int) -> pd.DataFrame:
    """WMT-style display columns: the metric names as they are, the numbers as the table shows them."""
    out = pd.DataFrame({"Rank": [str(c) if c > 0 else "-" for c in frame["cluster"]]})
    out["Metric"] = [str(m) for m in frame["metric"]]
    out["Correlation"] = frame["correlation"].to_numpy()
    if "low" in frame:
        out["95% CI"] = [f"[{lo:.{digits}f}, {hi:.{digits}f}]" if np.isfinite(lo) and np.isfinite(hi) else "-"
                         for lo, hi in zip(frame["low"], frame["high"])]
    if "wins" in frame:
        out["Wins"] = frame["wins"].to_numpy()
    return out


def _blocks(result: Result) -> list[tuple[str | None, pd.DataFrame]]:
    """``(title, ranked frame)`` per table: one per level (and label) of a report, one for a Dataset."""
    frame = ranked_frame(result)
    if "level" not in frame:
        return [(None, frame)]
    extra = [str(d) for d in getattr(result, "extra_dims", [])]
    blocks: list[tuple[str | None, pd.DataFrame]] = []
    for key, sub in frame.groupby([*extra, "level"], sort=False, dropna=False):
        *labels, lev = key
        title = _LEVEL_TITLES.get(str(lev), str(lev))
        if extra:
            title += ", " + label_text(dict(zip(extra, labels)))
        blocks.append((title, sub.drop(columns=["level", *extra]).reset_index(drop=True)))
    return blocks


def _latex_one(frame: pd.DataFrame, digits: int, caption: str | None) -> str:
    shown = _display(frame, digits)
    top = (frame["cluster"] == 1).to_numpy()
    shown["Metric"] = [latex_text(m) for m in shown["Metric"]]
    others = [c for c in shown.columns if c != "Metric"]
    styler = (shown.style.hide(axis="index")
              .format(precision=digits, escape="latex", na_rep="--", subset=others)
              .format_index(escape="latex", axis=1)
              .apply(lambda col: np.where(top, "font-weight: bold", ""), axis=0, subset=["Metric"]))
    align = "".join("l" if c == "Metric" else "r" for c in shown.columns)
    caption = None if caption is None else latex_text(caption)
    return styler.to_latex(hrules=True, convert_css=True, column_format=align, caption=caption,
                           position_float="centering" if caption else None,
                           environment="table" if caption else None)


def to_latex(result: Result, *, digits: int = 3) -> str:
    r"""A ranked result as LaTeX tables (booktabs rules; top cluster in bold).

    Parameters
    ----------
    result : Report, Dataset or DataArray
        As in :func:`ranked_frame`, or a :func:`~xcorrstat.wmt.run_tasks` result (one
        row per metric: average rank and score, then each task's value and cluster).
    digits : int, default 3
        Decimals of the correlations and intervals.

    Returns
    -------
    str
        One ``tabular`` (a ``table`` with a caption per level for a report); needs
        ``\usepackage{booktabs}``. Metric names are escaped for LaTeX.

        For correlations and intervals, a ``table`` whose caption names what the numbers
        are (coefficient and variant, target, level, units; the interval's confidence
        level, kind and draws), then columns Rank, Metric, Correlation and the interval as
        ``[low, high]`` (one column each per label of dims besides ``metric``, ranked as
        :func:`ranked_frame` ranks them); ``n`` is a column only when it differs between
        metrics, and an undefined value is ``--``.

    Examples
    --------
    >>> import xcorrstat
    >>> ds = xcorrstat.datasets.summeval()
    >>> res = xcorrstat.compare(ds, target="expert_relevance", metrics=["qa_eval_f1", "rouge_2_f1"],
    ...                         test=xcorrstat.Permutation(n_resamples=200, rng=0))
    >>> print(to_latex(res).splitlines()[0])
    \begin{tabular}{rlrr}
    >>> ci = xcorrstat.fisher(ds, target="expert_relevance", metrics=["rouge_2_f1", "meteor"], method="kendall")
    >>> print(to_latex(ci, digits=2))
    \begin{table}
    \centering
    \caption{Kendall tau-b correlation with expert\_relevance, system level (n = 16 systems); 95\% Fisher z intervals}
    \begin{tabular}{rlrr}
    \toprule
    Rank & Metric & Correlation & 95\% CI \\
    \midrule
    1 & meteor & 0.50 & [0.17, 0.73] \\
    2 & rouge\_2\_f1 & 0.43 & [0.09, 0.68] \\
    \bottomrule
    \end{tabular}
    \end{table}
    <BLANKLINE>
    """
    digits = check_digits(digits)
    if is_task_result(result):
        return task_latex(result, digits=digits)
    if isinstance(result, (xr.Dataset, xr.DataArray)) and correlations_of(result) is not None:
        return statistic_latex(result, digits=digits)
    return "\n".join(_latex_one(f, digits, title) for title, f in _blocks(result))


def _number_cell(value: Any, digits: int) -> str:
    """A cell the table computed: floats to ``digits`` decimals, missing as ``-``, the rest as made."""
    if isinstance(value, (float, np.floating)):
        return "-" if np.isnan(value) else f"{value:.{digits}f}"
    return str(value)


def _markdown_one(frame: pd.DataFrame, digits: int, title: str | None) -> str:
    shown = _display(frame, digits)
    top = (frame["cluster"] == 1).to_numpy()
    names = [f"**{markdown_text(m)}**" if bold else markdown_text(m) for m, bold in zip(shown["Metric"], top)]
    shown["Metric"] = names
    rows = [[_number_cell(v, digits) for v in values] for values in shown.itertuples(index=False)]
    align = ["l" if c == "Metric" else "r" for c in shown.columns]
    table = markdown_table([markdown_text(c) for c in shown.columns], rows, align)
    return (f"**{markdown_text(title)}**\n\n" if title else "") + table


def to_markdown(result: Result, *, digits: int = 3) -> str:
    r"""A ranked result as Markdown (GitHub-flavoured) tables; top cluster in bold.

    Parameters
    ----------
    result : Report, Dataset or DataArray
        As in :func:`ranked_frame`, or a :func:`~xcorrstat.wmt.run_tasks` result.
    digits : int, default 3
        Decimals of the correlations and intervals.

    Returns
    -------
    str
        For correlations and intervals, the table of :func:`to_latex` under its heading
        in bold (an undefined value is ``-``).

    Examples
    --------
    >>> import xcorrstat
    >>> ds = xcorrstat.datasets.summeval()
    >>> res = xcorrstat.compare(ds, target="expert_relevance", metrics=["qa_eval_f1", "rouge_2_f1"],
    ...                         test=xcorrstat.Permutation(n_resamples=200, rng=0))
    >>> print(to_markdown(res).splitlines()[1])
    | --: | :-- | --: | --: |
    >>> r = xcorrstat.correlate(ds, target="expert_relevance", metrics=["rouge_2_f1", "meteor"], method="kendall")
    >>> print(to_markdown(r, digits=2))
    **Kendall tau-b correlation with expert_relevance, system level (n = 16 systems)**
    <BLANKLINE>
    | Rank | Metric | Correlation |
    | --: | :-- | --: |
    | 1 | meteor | 0.50 |
    | 2 | rouge_2_f1 | 0.43 |
    <BLANKLINE>
    """
    digits = check_digits(digits)
    if is_task_result(result):
        return task_markdown(result, digits=digits)
    if isinstance(result, (xr.Dataset, xr.DataArray)) and correlations_of(result) is not None:
        return statistic_markdown(result, digits=digits)
    return "\n".join(_markdown_one(f, digits, title) for title, f in _blocks(result))


def format_table(result: Result, table_format: TableFormat | str, *, digits: int = 3) -> str:
    """``result`` as ``"text"`` (reports only), ``"latex"`` or ``"markdown"``: the CLI's ``--table-format``.

    Examples
    --------
    >>> import xcorrstat
    >>> ds = xcorrstat.datasets.summeval()
    >>> res = xcorrstat.compare(ds, target="expert_relevance", metrics=["qa_eval_f1", "rouge_2_f1"],
    ...                         test=xcorrstat.Permutation(n_resamples=200, rng=0))
    >>> format_table(res, "markdown") == to_markdown(res)
    True
    """
    check_choice(table_format, TABLE_FORMATS, "table_format")
    if table_format == "latex":
        return to_latex(result, digits=digits)
    if table_format == "markdown":
        return to_markdown(result, digits=digits)
    if _is_report(result) and not isinstance(result, xr.Dataset):
        return result.to_text(digits=digits)
    if is_task_result(result):
        return task_text(result, digits=check_digits(digits))
    raise ValueError("table_format='text' needs a Report or a run_tasks result; use 'latex' or 'markdown' "
                     "for another Dataset")
