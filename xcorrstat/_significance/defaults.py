"""The defaults of the significance tests, in one table read by the functions and the command line.

:data:`DEFAULTS` maps each setting to its :class:`Default`: the value of the Python functions
(:func:`~xcorrstat.compare`, :func:`~xcorrstat.report`, :func:`xcorrstat.wmt.run_tasks`), the
value of the commands (``xcorrstat report``, ``xcorrstat wmt``) and, where the two differ, why.
The signatures and the argparse options take their defaults from it, and docs/defaults.md
prints it (:func:`defaults_markdown`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

__all__ = ["DEFAULTS", "Default", "defaults_markdown"]


@dataclass(frozen=True)
class Default:
    """One setting: its Python and command-line defaults, where it applies, and why they differ.

    Examples
    --------
    >>> DEFAULTS["correction"].python, DEFAULTS["correction"].cli
    ('holm', 'holm')
    """

    python: Any
    cli: Any
    applies: str
    meaning: str
    why: str = ""  # required when ``python != cli``


_BOTH_DIMS = ("system", "input")

#: Every default shared by the Python functions and the commands, by setting name.
DEFAULTS: Mapping[str, Default] = MappingProxyType({
    "test": Default(
        "permutation", "permutation", "compare, report",
        "test of each pair of metrics"),
    "permute": Default(
        _BOTH_DIMS, _BOTH_DIMS, "compare, report",
        "dims the permutation test swaps along (PERM-BOTH); on system-level data the one input goes with its "
        "system, so the draws are PERM-SYSTEMS and are labelled so"),
    "resample": Default(
        _BOTH_DIMS, _BOTH_DIMS, "compare, report",
        "dims the bootstrap resamples (BOOT-BOTH); BOOT-SYSTEMS on system-level data, labelled so"),
    "n_resamples": Default(
        "auto", "auto", "compare, report, wmt.run_tasks / xcorrstat report, xcorrstat wmt",
        "draws of the tests: 'auto' adds blocks of draws until every corrected decision at alpha is settled "
        "or max_resamples is reached"),
    "start_resamples": Default(
        1000, 1000, "n_resamples='auto'",
        "draws of the first block of an 'auto' run, and the bootstrap resamples of a report's intervals"),
    "max_resamples": Default(
        20000, 20000, "n_resamples='auto'",
        "cap on the draws of an 'auto' run (decisions still open then are counted and warned about)"),
    "risk": Default(
        0.01, 0.01, "n_resamples='auto'",
        "resampling risk of each settled decision (Clopper-Pearson bounds, spent over the looks)"),
    "alpha": Default(
        0.05, 0.05, "compare, report, wmt.run_tasks", "significance level of the corrected decisions"),
    "correction": Default(
        "holm", "holm", "compare, report",
        "multiple-testing correction of each family of comparisons"),
    "family": Default(
        "row", "row", "compare, report", "a metric's comparisons with the others form one family"),
    "alternative": Default(
        "greater", "greater", "compare, report", "H1 of pair (metric, other_metric): metric correlates better"),
    "pvalue": Default(
        "plus-one", "plus-one", "compare, report", "Monte-Carlo p-value (1 + k) / (1 + B)"),
    "confidence_level": Default(
        0.95, 0.95, "report", "level of the bootstrap intervals"),
    "rng": Default(
        None, 0, "compare, report, wmt.run_tasks (rng) / --rng",
        "seed of the draws, recorded in the result",
        why="a script keeps its seed in a variable and passes rng= to reproduce a run, and rng=None draws a "
            "fresh seed (recorded in attrs) as NumPy's default_rng does; a command has nowhere to keep a "
            "fresh seed, so it uses 0 and the same command gives the same output"),
    "wmt_correction": Default(
        None, "none", "wmt.run_tasks / xcorrstat wmt",
        "no multiple-testing correction, as mt-metrics-eval draws WMT's clusters (unlike compare)"),
    "wmt_pvalue": Default(
        "fraction", "fraction", "wmt.run_tasks / xcorrstat wmt",
        "p-value k / B, as mt-metrics-eval counts (unlike compare)"),
})


def _shown(value: Any) -> str:
    if isinstance(value, tuple):
        return " ".join(value)
    return "`None`" if value is None else f"`{value}`" if isinstance(value, str) else f"`{value:g}`"


def defaults_markdown() -> str:
    """The table of :data:`DEFAULTS` as Markdown, with a note per setting whose defaults differ.

    Examples
    --------
    >>> defaults_markdown().splitlines()[0]
    '| setting | Python | command line | applies to | meaning |'
    """
    lines = ["| setting | Python | command line | applies to | meaning |", "|---|---|---|---|---|"]
    notes = []
    for name, d in DEFAULTS.items():
        lines.append(f"| `{name}` | {_shown(d.python)} | {_shown(d.cli)} | {d.applies} | {d.meaning} |")
        if d.why:
            notes.append(f"- **`{name}`** differs: {d.why}.")
    return "\n".join(lines) + "\n\n" + "\n".join(notes) + "\n"
