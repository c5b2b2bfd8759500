"""One ranked list of a WMT metrics task as data: :class:`Task`.

A task says which scores to correlate (language pairs, level, domain, gold human score,
references, whether human translations and outlier systems count as systems, whether only the
primary metrics are ranked), which statistic ranks the metrics and how the statistic groups the
segments, and how much the task weighs in the overall ranking. What is left unset comes from the
test set's roles (:func:`~xcorrstat.wmt.roles`) when the task runs (standard gold and reference,
outliers, primary metrics), as in mt-metrics-eval's ``Task``.

The statistics, with the significance test each runs (``n_resamples`` draws):

* ``accuracy`` (``level="sys"``): pairwise accuracy of the system ranking, the pairs of systems
  pooled over the task's language pairs; permutation test swapping each (language pair,
  system) cell between the two metrics (scores z-scored over all cells).
* ``pearson``, ``kendall`` (tau-b): at ``level="sys"`` over the system scores (systems
  swapped); at ``level="seg"`` over the segment scores with ``grouping="none"`` (all
  segments at once), ``"item"`` (across systems for each segment, averaged) or ``"system"``
  (across segments for each system, averaged); cells swapped.
* ``acc_eq`` (``level="seg"``): acc_eq with the tie threshold calibrated for each metric,
  item-wise by default; the pair-outcome permutation test, each metric keeping its epsilon.
* ``soft_accuracy`` (``level="sys"``): soft pairwise accuracy (1 - pairwise confidence error)
  of the system ranking, from segment scores; cells swapped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

__all__ = ["GROUPINGS", "STATISTICS", "Grouping", "Statistic", "Task"]

Statistic = Literal["accuracy", "pearson", "kendall", "acc_eq", "soft_accuracy"]
Grouping = Literal["none", "item", "system"]

#: The statistics a task can rank by.
STATISTICS: tuple[str, ...] = ("accuracy", "pearson", "kendall", "acc_eq", "soft_accuracy")
#: How a segment-level task groups the segments: mt-metrics-eval's ``avg_by`` none / item / sys.
GROUPINGS: tuple[str, ...] = ("none", "item", "system")

#: The levels of each statistic.
_LEVELS = {"accuracy": ("sys",), "soft_accuracy": ("sys",), "pearson": ("sys", "seg"), "kendall": ("sys", "seg"),
           "acc_eq": ("seg",)}


def default_grouping(statistic: str, level: str) -> str:
    """The grouping a task has when it names none: item-wise for acc_eq, none otherwise."""
    return "item" if statistic == "acc_eq" and level == "seg" else "none"


@dataclass(frozen=True)
class Task:
    """One ranked list of a metrics task.

    Parameters
    ----------
    lps : tuple of str
        Language pairs; several only for ``statistic="accuracy"`` (pairs of systems pooled).
    level : {"sys", "seg"}
        System-level scores (the ``.sys`` score files; with a ``domain``, the ``.domain``
        files) or segment-level scores.
    statistic : {"accuracy", "pearson", "kendall", "acc_eq", "soft_accuracy"}
        See the module docstring. ``soft_accuracy`` is system-level but computed from
        segment scores.
    grouping : {"none", "item", "system"}, optional
        Segment level: correlate all segments at once, across the systems of each segment
        (averaged over segments), or across the segments of each system (averaged over
        systems). Default ``"item"`` for acc_eq, ``"none"`` otherwise.
    domain : str, optional
        Only the segments (at ``level="sys"``: the domain-level scores) of this domain.
    human : bool, default False
        Count human translations (references other than the task's, scored as systems) as
        systems.
    gold : str, optional
        Human score name (``"mqm"``, ``"esa"`` ...); default each language pair's standard one.
    refs : tuple of str, optional
        Reference(s) the metrics may use, one entry per language pair, each a reference name or
        several joined by ``"."`` (``"refA.refB"``); default each language pair's standard
        reference. Reference-free metrics (``-src``) always count.
    use_outliers : bool, default False
        Keep the language pairs' outlier systems.
    primary : bool, default True
        Rank only the primary metrics and the baselines of the language pairs' roles (all
        metrics where the roles name no primary metric); False ranks every metric.
    weight : float, default 1.0
        Weight in the overall ranking (normalised over the tasks that run).
    name : str, optional
        Label; default built from the fields (``"en-de seg acc_eq"``).

    Examples
    --------
    >>> Task(lps=("en-de",), level="seg", statistic="acc_eq").label
    'en-de seg acc_eq'
    >>> Task(lps="zh-en", level="seg", statistic="kendall", grouping="item", domain="news", human=True).label
    'zh-en/news seg kendall by item +human'
    """

    lps: tuple[str, ...]
    level: Literal["sys", "seg"]
    statistic: Statistic
    grouping: Grouping | None = None
    domain: str | None = None
    human: bool = False
    gold: str | None = None
    refs: tuple[str, ...] | None = None
    use_outliers: bool = False
    primary: bool = True
    weight: float = 1.0
    name: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "lps", (self.lps,) if isinstance(self.lps, str) else tuple(self.lps))
        if self.refs is not None:
            object.__setattr__(self, "refs", (self.refs,) if isinstance(self.refs, str) else tuple(self.refs))
        if self.grouping is None and self.level in ("sys", "seg") and isinstance(self.statistic, str):
            object.__setattr__(self, "grouping", default_grouping(self.statistic, self.level))
        _check_task(self)

    @property
    def label(self) -> str:
        """The task's name, or one built from its fields."""
        if self.name:
            return self.name
        where = ",".join(self.lps) + (f"/{self.domain}" if self.domain is not None else "")
        grouping = "" if self.grouping == default_grouping(self.statistic, self.level) else f" by {self.grouping}"
        return f"{where} {self.level} {self.statistic}{grouping}{' +human' if self.human else ''}"


def _check_fields(t: Task) -> None:
    if not t.lps or not all(isinstance(lp, str) and lp for lp in t.lps):
        raise ValueError(f"Task.lps must name at least one language pair, got {t.lps!r}")
    if len(set(t.lps)) < len(t.lps):
        raise ValueError(f"Task.lps must be distinct, got {t.lps!r}")
    if t.level not in ("sys", "seg"):
        raise ValueError(f"Task.level must be 'sys' or 'seg', got {t.level!r}")
    if t.statistic not in STATISTICS:
        raise ValueError(f"Task.statistic must be one of {STATISTICS}, got {t.statistic!r}")
    if t.grouping not in GROUPINGS:
        raise ValueError(f"Task.grouping must be one of {GROUPINGS}, got {t.grouping!r}")
    for name in ("human", "use_outliers", "primary"):
        if not isinstance(getattr(t, name), bool):
            raise ValueError(f"Task.{name} must be True or False, got {getattr(t, name)!r}")
    for name in ("domain", "gold"):
        value = getattr(t, name)
        if value is not None and not (isinstance(value, str) and value):
            raise ValueError(f"Task.{name} must be a name or None, got {value!r}")
    if isinstance(t.weight, bool) or not isinstance(t.weight, (int, float)) or not t.weight >= 0:
        raise ValueError(f"Task.weight must be a number >= 0, got {t.weight!r}")


def _check_task(t: Task) -> None:
    _check_fields(t)
    if t.level not in _LEVELS[t.statistic]:
        raise ValueError(f"Task.level: statistic={t.statistic!r} uses level "
                         f"{' or '.join(map(repr, _LEVELS[t.statistic]))}, got {t.level!r}")
    if t.level == "sys" and t.grouping != "none":
        raise ValueError(f"Task.grouping: a system-level task has one score per system (grouping='none'), "
                         f"got {t.grouping!r}")
    if len(t.lps) > 1 and t.statistic != "accuracy":
        raise ValueError(f"Task.lps: only statistic='accuracy' pools language pairs, got {t.lps!r} "
                         f"with {t.statistic!r}")
    if t.refs is not None and (len(t.refs) != len(t.lps) or not all(isinstance(r, str) and r for r in t.refs)):
        raise ValueError(f"Task.refs must give one reference name per language pair ({len(t.lps)}), got {t.refs!r}")
