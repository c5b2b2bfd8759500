"""The WMT metrics-task definitions as data: one small, editable :class:`Task` per ranked list.

A task says which scores to correlate (language pairs, level, gold human score,
reference, whether human translations count as systems), which statistic ranks the
metrics and which significance test draws the clusters, and how much it weighs in
the overall ranking. :func:`task_set` gives the official lists of WMT22, WMT23 and
WMT24; edit them with :func:`dataclasses.replace`, or build tasks from dicts
(``Task(**spec)``) for a task list kept in a JSON or YAML file.

The statistics, and the significance test each one runs (``n_resamples`` draws):

* ``accuracy``: system-level pairwise accuracy, the pairs of systems pooled over the language
  pairs; permutation test swapping each (language pair, system) cell (z-scores over all cells).
* ``pearson``: Pearson at system level (``level="sys"``: system scores, systems swapped) or over
  all segments (``level="seg"``, no grouping: cells swapped).
* ``kendall``: Kendall's tau-b over all segments (WMT22); cells swapped.
* ``acc_eq``: segment-level acc_eq with tie calibration, item-wise (the pairs of systems of each
  segment); the pair-outcome permutation test, each metric keeping its calibrated epsilon.
* ``soft_accuracy``: soft pairwise accuracy (1 - PCE) of the system ranking, from segment scores;
  cells swapped (:func:`~xcorrstat.soft_pairwise_accuracy_test`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

__all__ = ["STATISTICS", "TASK_SETS", "Task", "task_set"]

Statistic = Literal["accuracy", "pearson", "kendall", "acc_eq", "soft_accuracy"]

#: The statistics a task can rank by.
STATISTICS: tuple[str, ...] = ("accuracy", "pearson", "kendall", "acc_eq", "soft_accuracy")


@dataclass(frozen=True)
class Task:
    """One ranked list of a metrics task.

    Parameters
    ----------
    lps : tuple of str
        Language pairs; several only for ``statistic="accuracy"`` (pairs pooled).
    level : {"sys", "seg"}
        Score files used: system-level (``<name>.sys`` variables of
        :func:`~xcorrstat.read_mtme`) or segment-level.
    statistic : {"accuracy", "pearson", "kendall", "acc_eq", "soft_accuracy"}
        See the module docstring.
    gold : str, optional
        Human score name (``"mqm"``, ``"da-sqm"`` ...); default the test set's standard one.
    refs : tuple of str, optional
        Reference(s) a metric may use, one entry per language pair, each one reference
        name or several joined by ``"."`` (``"refA.refB"``); default the standard reference.
        Reference-free metrics (``-src``) always count.
    human : bool, default False
        Count human translations (references other than the task's) as systems.
    outliers : tuple of str, default ()
        Systems left out (the test set's outlier systems).
    weight : float, default 1.0
        Weight in the overall ranking (normalised over the task list).
    name : str, optional
        Label; default built from the fields (``"en-de seg acc_eq"``).

    Examples
    --------
    >>> t = Task(lps=("en-de",), level="seg", statistic="acc_eq")
    >>> t.label
    'en-de seg acc_eq'
    """

    lps: tuple[str, ...]
    level: Literal["sys", "seg"]
    statistic: Statistic
    gold: str | None = None
    refs: tuple[str, ...] | None = None
    human: bool = False
    outliers: tuple[str, ...] = ()
    weight: float = 1.0
    name: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        lps = (self.lps,) if isinstance(self.lps, str) else tuple(self.lps)
        object.__setattr__(self, "lps", lps)
        object.__setattr__(self, "outliers", tuple([self.outliers] if isinstance(self.outliers, str)
                                                   else self.outliers))
        if self.refs is not None:
            object.__setattr__(self, "refs", (self.refs,) if isinstance(self.refs, str) else tuple(self.refs))
        _check_task(self)

    @property
    def label(self) -> str:
        """The task's name, or one built from its fields."""
        return self.name or f"{','.join(self.lps)} {self.level} {self.statistic}"


def _check_task(t: Task) -> None:
    if not t.lps or not all(isinstance(lp, str) and lp for lp in t.lps):
        raise ValueError(f"Task.lps must name at least one language pair, got {t.lps!r}")
    if t.level not in ("sys", "seg"):
        raise ValueError(f"Task.level must be 'sys' or 'seg', got {t.level!r}")
    if t.statistic not in STATISTICS:
        raise ValueError(f"Task.statistic must be one of {STATISTICS}, got {t.statistic!r}")
    if len(t.lps) > 1 and t.statistic != "accuracy":
        raise ValueError(f"Task.lps: only statistic='accuracy' pools language pairs, got {t.lps!r} "
                         f"with {t.statistic!r}")
    need = {"accuracy": "sys", "acc_eq": "seg", "kendall": "seg", "soft_accuracy": "sys"}.get(t.statistic)
    if need is not None and t.level != need:
        raise ValueError(f"Task.level: statistic={t.statistic!r} uses level={need!r}, got {t.level!r}")
    if t.refs is not None and len(t.refs) != len(t.lps):
        raise ValueError(f"Task.refs must give one entry per language pair ({len(t.lps)}), got {t.refs!r}")
    if not (isinstance(t.weight, (int, float)) and t.weight >= 0):
        raise ValueError(f"Task.weight must be a number >= 0, got {t.weight!r}")


def _wmt22(lps: Sequence[str]) -> list[Task]:
    """System-level accuracy over every pair (weight: the number of pairs), then per pair
    system Pearson and segment Kendall tau-b over all segments."""
    tasks = [Task(lps=tuple(lps), level="sys", statistic="accuracy", weight=float(len(lps)))]
    for lp in lps:
        tasks += [Task(lps=(lp,), level="sys", statistic="pearson"),
                  Task(lps=(lp,), level="seg", statistic="kendall")]
    return tasks


def _wmt23(lps: Sequence[str], human_lps: frozenset[str] = frozenset({"en-he", "he-en"})) -> list[Task]:
    """mt-metrics-eval's ``tasks.WMT23``: accuracy over every pair (weight: the number of pairs),
    then per pair system Pearson, segment Pearson and item-wise acc_eq (weight 1 each)."""
    tasks = [Task(lps=tuple(lps), level="sys", statistic="accuracy", weight=float(len(lps)),
                  human=bool(human_lps & set(lps)))]
    for lp in lps:
        human = lp in human_lps
        tasks += [Task(lps=(lp,), level="sys", statistic="pearson", human=human),
                  Task(lps=(lp,), level="seg", statistic="pearson", human=human),
                  Task(lps=(lp,), level="seg", statistic="acc_eq", human=human)]
    return tasks


def _wmt24(lps: Sequence[str], human_lps: frozenset[str] = frozenset({"en-de"})) -> list[Task]:
    """mt-metrics-eval's ``tasks.WMT24``: per pair, system-level soft pairwise accuracy and
    item-wise acc_eq, equal weights."""
    tasks = []
    for lp in lps:
        human = lp in human_lps
        tasks += [Task(lps=(lp,), level="sys", statistic="soft_accuracy", human=human),
                  Task(lps=(lp,), level="seg", statistic="acc_eq", human=human)]
    return tasks


#: Each official task list: builder, default language pairs, standard gold, the standard reference of
#: the pairs whose reference is not refA, and the outlier systems of each pair (as mt-metrics-eval's
#: ``meta_info`` records them).
TASK_SETS = {
    "wmt22": (_wmt22, ("en-de", "en-ru", "zh-en"), "mqm", {"cs-en": "refB", "en-cs": "refB"},
              {"en-de": ("M2M100_1.2B-B4",)}),
    "wmt23": (_wmt23, ("en-de", "he-en", "zh-en"), "mqm", {"he-en": "refB", "en-he": "refB"},
              {"en-de": ("synthetic_ref",), "zh-en": ("synthetic_ref",)}),
    "wmt24": (_wmt24, ("en-de", "en-es", "ja-zh"), "mqm", {"en-de": "refB"}, {}),
}


def task_set(testset: str, lps: Sequence[str] | None = None, *, gold: str | None = None) -> list[Task]:
    """The official task list of a WMT metrics task.

    Parameters
    ----------
    testset : {"wmt22", "wmt23", "wmt24"}
    lps : sequence of str, optional
        Language pairs (sorted); default the year's official ones.
    gold : str, optional
        Human score of every task; default the year's standard (``"mqm"``).

    Returns
    -------
    list of Task
        With their weights (not yet normalised), gold, standard references and outlier
        systems filled in.

    Examples
    --------
    >>> [t.label for t in task_set("wmt23", ["en-de", "zh-en"])][:3]
    ['en-de,zh-en sys accuracy', 'en-de sys pearson', 'en-de seg pearson']
    """
    if testset not in TASK_SETS:
        raise ValueError(f"testset must be one of {sorted(TASK_SETS)}, got {testset!r}")
    build, default_lps, std_gold, std_refs, outliers = TASK_SETS[testset]
    chosen = sorted(default_lps if lps is None else ([lps] if isinstance(lps, str) else lps))
    if not chosen:
        raise ValueError("lps must name at least one language pair")
    return [replace(t, gold=gold or std_gold, refs=tuple(std_refs.get(lp, "refA") for lp in t.lps),
                    outliers=tuple(sorted({o for lp in t.lps for o in outliers.get(lp, ())})))
            for t in build(chosen)]
