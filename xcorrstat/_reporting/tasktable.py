"""The table of a :func:`~xcorrstat.wmt.run_tasks` result, as in the WMT metrics-task papers.

One row per metric, best first by the weighted average of its cluster ranks; the average rank
and the average score (rescaled to [0, 1]), then for every task that ran the metric's statistic
with its cluster rank in parentheses. The top cluster of each task is set in bold in LaTeX and
Markdown. Each metric's status is marked as mt-metrics-eval's tables mark it: in LaTeX
baselines are underlined and contrastive (non-primary) metrics set in italics; in text and
Markdown a baseline's name starts with ``_`` and a contrastive metric's with ``*``; a legend
says so. A metric that lacks units a task's gold rates (``run_tasks(allow_incomplete=True)``,
the coordinate ``lacks``) has a ``†`` after its name and after its value in each such task, and
a line under the table names what it lacks. Tasks that did not run are listed under the table
with the reason.
"""

from __future__ import annotations

from typing import TypeGuard

import numpy as np
import pandas as pd
import xarray as xr

from .._notes import notes_of
from .._display import LABEL_WIDTH
from .._escape import distinct_labels, latex_text, markdown_table, markdown_text, terminal_text

__all__ = ["LACKS_MARK", "is_task_result", "task_frame", "task_latex", "task_markdown", "task_text"]

_PREFIX = {"baseline": "_", "contrastive": "*"}
#: The mark of a metric that lacks units a task's gold rates.
LACKS_MARK = "\u2020"
_LEGEND = {"baseline": "_ baseline", "contrastive": "* contrastive (not a primary submission)"}


def is_task_result(result: object) -> TypeGuard[xr.Dataset]:
    """Whether ``result`` comes from :func:`~xcorrstat.wmt.run_tasks`."""
    return isinstance(result, xr.Dataset) and "average_rank" in result and "task" in result.dims


def _statuses(result: xr.Dataset) -> list[str]:
    if "status" in result.coords:
        return [str(s) for s in result["status"].values]
    return ["primary"] * result.sizes["metric"]


def _skipped(result: xr.Dataset) -> dict[str, str]:
    if "skipped" not in result.coords:
        return {}
    return {str(t): str(why) for t, why in zip(result["task"].values, result["skipped"].values) if str(why)}


def _lacks(result: xr.Dataset) -> dict[str, dict[str, str]]:
    """metric -> task -> the units it lacks there (from the coordinate ``lacks``; empty without one)."""
    if "lacks" not in result.coords:
        return {}
    lacks = result["lacks"].transpose("task", "metric").values
    out: dict[str, dict[str, str]] = {}
    for i, j in zip(*np.nonzero(lacks != "")):
        out.setdefault(str(result["metric"].values[j]), {})[str(result["task"].values[i])] = str(lacks[i, j])
    return out


def task_frame(result: xr.Dataset) -> pd.DataFrame:
    """The numbers of the table: ``status``, ``average_rank``, ``average_score``, then per task that ran its
    value and cluster.

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
    frame = pd.DataFrame({"status": _statuses(result), "average_rank": result["average_rank"].values,
                          "average_score": result["average_score"].values},
                         index=pd.Index([str(m) for m in result["metric"].values], name="metric"))
    skipped = _skipped(result)
    for task in result["task"].values:
        if str(task) in skipped:
            continue
        frame[(str(task), "value")] = result["correlation"].sel(task=task).values
        frame[(str(task), "cluster")] = result["cluster"].sel(task=task).values
    rank = frame["average_rank"].to_numpy(dtype=np.float64)
    order = np.lexsort((-np.nan_to_num(frame["average_score"].to_numpy(dtype=np.float64), nan=-np.inf),
                        np.where(np.isnan(rank), np.inf, rank)))
    return frame.iloc[order]


def _cells(frame: pd.DataFrame, digits: int, bold: tuple[str, str] | None, marks: bool,
           lacks: dict[str, dict[str, str]]) -> pd.DataFrame:
    """Display strings: averages, then ``value (cluster)`` per task; ``bold`` wraps a task's top cluster;
    :data:`LACKS_MARK` follows a metric that lacks units, and its values in those tasks."""
    names = [str(m) for m in frame.index]
    if marks:
        names = [_PREFIX.get(s, "") + m for m, s in zip(names, frame["status"])]
    names = [shown + (LACKS_MARK if str(m) in lacks else "") for shown, m in zip(names, frame.index)]
    shown = pd.DataFrame({"Metric": names})
    shown["Avg rank"] = [f"{v:.2f}" if np.isfinite(v) else "-" for v in frame["average_rank"]]
    shown["Avg score"] = [f"{v:.{digits}f}" if np.isfinite(v) else "-" for v in frame["average_score"]]
    tasks = [c[0] for c in frame.columns if isinstance(c, tuple) and c[1] == "value"]
    for task in tasks:
        cells = []
        for m, v, c in zip(frame.index, frame[(task, "value")], frame[(task, "cluster")]):
            if not np.isfinite(v):
                cells.append("-")
                continue
            text = f"{v:.{digits}f} ({int(c)})" if np.isfinite(c) and c > 0 else f"{v:.{digits}f}"
            text = f"{bold[0]}{text}{bold[1]}" if bold and c == 1 else text
            cells.append(text + (LACKS_MARK if task in lacks.get(str(m), {}) else ""))
        shown[task] = cells
    return shown


def _notes(result: xr.Dataset, frame: pd.DataFrame, marks: bool) -> list[str]:
    """The legend of the status marks used and one line per skipped task."""
    used = [_LEGEND[s] for s in ("baseline", "contrastive") if marks and s in set(frame["status"])]
    lines = ["Marks: " + "; ".join(used) + "."] if used else []
    lines += _lacks_lines(_lacks(result), [str(m) for m in frame.index])
    lines += [f"Skipped task {task}: {why}." for task, why in _skipped(result).items()]
    return lines


def _lacks_lines(lacks: dict[str, dict[str, str]], order: list[str]) -> list[str]:
    """One line per metric that lacks units: what, in which tasks (which rank every metric on the rest)."""
    lines = []
    for metric in (m for m in order if m in lacks):
        by_units: dict[str, list[str]] = {}
        for task, units in lacks[metric].items():
            by_units.setdefault(units, []).append(task)
        what = "; ".join(f"{units} in {', '.join(tasks)}" for units, tasks in by_units.items())
        lines.append(f"{LACKS_MARK} {metric} lacks {what}, which the gold rates: these tasks rank every metric on "
                     "the units all of them score.")
    return lines


def task_text(result: xr.Dataset, *, digits: int = 3) -> str:
    """The table as plain text: names escaped and cut to distinct labels, as a terminal shows them."""
    frame = task_frame(result)
    shown = _cells(frame, digits, None, True, _lacks(result))
    shown["Metric"] = distinct_labels(shown["Metric"], LABEL_WIDTH)
    shown.columns = [terminal_text(c, LABEL_WIDTH) for c in shown.columns]
    text = shown.to_string(index=False) + "\n"
    head = "".join(f"note: {terminal_text(note)}\n" for note in notes_of(result))
    notes = [terminal_text(line) for line in _notes(result, frame, True)]
    return head + text + ("\n" + "\n".join(notes) + "\n" if notes else "")


def _latex_name(name: str, status: str) -> str:
    """A metric's name in LaTeX, escaped; baselines underlined, contrastive metrics in italics."""
    text = latex_text(name)
    return {"baseline": rf"\underline{{{text}}}", "contrastive": rf"\textit{{{text}}}"}.get(status, text)


def task_latex(result: xr.Dataset, *, digits: int = 3) -> str:
    """The table as a LaTeX ``tabular`` (booktabs); names escaped, each task's top cluster in bold, status
    marked (baselines underlined, contrastive metrics in italics); skipped tasks as comments."""
    frame = task_frame(result)
    shown = _cells(frame, digits, None, False, _lacks(result))
    shown["Metric"] = [_latex_name(m, s) for m, s in zip(shown["Metric"], frame["status"])]
    styler = shown.style.hide(axis="index").format(escape="latex", subset=list(shown.columns[1:]))
    styler = styler.format_index(formatter=latex_text, axis=1)
    for task in shown.columns[3:]:
        top = (frame[(task, "cluster")] == 1).to_numpy()
        styler = styler.apply(lambda col, top=top: np.where(top, "font-weight: bold", ""), axis=0, subset=[task])
    align = "l" + "r" * (len(shown.columns) - 1)
    text = styler.to_latex(hrules=True, convert_css=True, column_format=align)
    notes = _notes(result, frame, False)
    return text + "".join(f"% {terminal_text(line)}\n" for line in notes)


def task_markdown(result: xr.Dataset, *, digits: int = 3) -> str:
    """The table as GitHub-flavoured Markdown; each task's top cluster in bold."""
    frame = task_frame(result)
    shown = _cells(frame, digits, ("**", "**"), True, _lacks(result))
    shown["Metric"] = [markdown_text(m) for m in shown["Metric"]]
    header = [markdown_text(c) for c in shown.columns]
    align = ["l" if c == "Metric" else "r" for c in shown.columns]
    text = markdown_table(header, shown.astype(str).values.tolist(), align)
    notes = [markdown_text(line) for line in _notes(result, frame, True)]
    return text + ("\n" + "\n\n".join(notes) + "\n" if notes else "")
