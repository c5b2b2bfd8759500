"""The table of a :func:`~xcorrstat.wmt.run_tasks` result, as in the WMT metrics-task papers.

One row per metric, best first by the weighted average of its cluster ranks; the
average rank and the average score (rescaled to [0, 1]), then for every task the
metric's statistic with its cluster rank in parentheses. The top cluster of each task
is set in bold in LaTeX and Markdown.
"""

from __future__ import annotations

from typing import TypeGuard

import numpy as np
import pandas as pd
import xarray as xr

__all__ = ["is_task_result", "task_frame", "task_latex", "task_markdown", "task_text"]


def is_task_result(result: object) -> TypeGuard[xr.Dataset]:
    """Whether ``result`` comes from :func:`~xcorrstat.wmt.run_tasks`."""
    return isinstance(result, xr.Dataset) and "average_rank" in result and "task" in result.dims


def task_frame(result: xr.Dataset) -> pd.DataFrame:
    """The numbers of the table: ``average_rank``, ``average_score``, then per task its value and cluster.

    Examples
    --------
    >>> import xarray as xr
    >>> res = xr.Dataset({"correlation": (("task", "metric"), [[0.5, 0.7]]),
    ...                   "cluster": (("task", "metric"), [[2, 1]]),
    ...                   "average_rank": ("metric", [2.0, 1.0]), "average_score": ("metric", [0.75, 0.85])},
    ...                  coords={"task": ["en-de sys pearson"], "metric": ["A", "B"]})
    >>> task_frame(res).index.tolist()
    ['B', 'A']
    """
    frame = pd.DataFrame({"average_rank": result["average_rank"].values,
                          "average_score": result["average_score"].values},
                         index=pd.Index([str(m) for m in result["metric"].values], name="metric"))
    for task in result["task"].values:
        frame[(str(task), "value")] = result["correlation"].sel(task=task).values
        frame[(str(task), "cluster")] = result["cluster"].sel(task=task).values
    rank = frame["average_rank"].to_numpy(dtype=np.float64)
    order = np.lexsort((-np.nan_to_num(frame["average_score"].to_numpy(dtype=np.float64), nan=-np.inf),
                        np.where(np.isnan(rank), np.inf, rank)))
    return frame.iloc[order]


def _cells(frame: pd.DataFrame, digits: int, bold: tuple[str, str] | None) -> pd.DataFrame:
    """Display strings: averages, then ``value (cluster)`` per task; ``bold`` wraps a task's top cluster."""
    shown = pd.DataFrame(index=frame.index)
    shown["Avg rank"] = [f"{v:.2f}" if np.isfinite(v) else "-" for v in frame["average_rank"]]
    shown["Avg score"] = [f"{v:.{digits}f}" if np.isfinite(v) else "-" for v in frame["average_score"]]
    tasks = [c[0] for c in frame.columns if isinstance(c, tuple) and c[1] == "value"]
    for task in tasks:
        cells = []
        for v, c in zip(frame[(task, "value")], frame[(task, "cluster")]):
            if not np.isfinite(v):
                cells.append("-")
                continue
            text = f"{v:.{digits}f} ({int(c)})" if np.isfinite(c) and c > 0 else f"{v:.{digits}f}"
            cells.append(f"{bold[0]}{text}{bold[1]}" if bold and c == 1 else text)
        shown[task] = cells
    shown.index.name = "Metric"
    return shown.reset_index()


def task_text(result: xr.Dataset, *, digits: int = 3) -> str:
    """The table as plain text."""
    shown = _cells(task_frame(result), digits, None)
    return shown.to_string(index=False) + "\n"


def task_latex(result: xr.Dataset, *, digits: int = 3) -> str:
    """The table as a LaTeX ``tabular`` (booktabs); names escaped, each task's top cluster in bold."""
    frame = task_frame(result)
    shown = _cells(frame, digits, None)
    styler = shown.style.hide(axis="index").format(escape="latex").format_index(escape="latex", axis=1)
    for task in shown.columns[3:]:
        top = (frame[(task, "cluster")] == 1).to_numpy()
        styler = styler.apply(lambda col, top=top: np.where(top, "font-weight: bold", ""), axis=0, subset=[task])
    align = "l" + "r" * (len(shown.columns) - 1)
    return styler.to_latex(hrules=True, convert_css=True, column_format=align)


def task_markdown(result: xr.Dataset, *, digits: int = 3) -> str:
    """The table as GitHub-flavoured Markdown; each task's top cluster in bold."""
    shown = _cells(task_frame(result), digits, ("**", "**"))
    shown["Metric"] = shown["Metric"].str.replace("|", r"\|", regex=False)
    text = shown.style.hide(axis="index").to_string(delimiter="\x1f")
    rows = [line.split("\x1f") for line in text.splitlines()]
    rule = [":--" if c == "Metric" else "--:" for c in shown.columns]
    return "\n".join("| " + " | ".join(r) + " |" for r in [rows[0], rule, *rows[1:]]) + "\n"
