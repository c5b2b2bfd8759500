"""Who is who in a WMT test set: standard reference and human scores, outlier systems, primary
metrics and baselines, per language pair -- as data.

The facts of every WMT metrics task since 2019 ship in ``roles.json`` beside this module (as the
WMT organisers' mt-metrics-eval records them in its ``meta_info``; WMT22's baselines from its
evaluation notebook). :func:`roles` reads them, or a file of yours in the same format, into one
:class:`Roles` per language pair; edit them with :func:`dataclasses.replace` and pass them to
:func:`~xcorrstat.wmt.run_tasks`.

The file's format: ``{"testsets": {name: {"default": {...}, "lps": {lp: {...}}}}}``, where
``default`` holds every field of :class:`Roles` and each language pair what differs from it::

    {"testsets": {"mytest": {
        "default": {"std_ref": "refA", "std_gold": {"seg": "mqm", "sys": "mqm"},
                    "outliers": [], "primary": ["MyMetric", "BLEU"], "baselines": ["BLEU"]},
        "lps": {"en-de": {"outliers": ["bad-system"]}, "zh-en": {"std_ref": "refB"}}}}}
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Literal

from .._display import cut, did_you_mean
from .._warn import one_call

__all__ = ["ROLES_FILE", "Roles", "metric_status", "roles", "testsets"]

#: The bundled facts of the WMT test sets.
ROLES_FILE = os.path.join(os.path.dirname(__file__), "roles.json")

Status = Literal["primary", "baseline", "contrastive"]
_FIELDS = ("std_ref", "std_gold", "outliers", "primary", "baselines")


@dataclass(frozen=True)
class Roles:
    """The roles of one language pair of a test set.

    Parameters
    ----------
    std_ref : str, default "refA"
        The standard reference: metrics that use another one are not ranked, and the
        system that is this reference is not a system.
    std_gold : mapping of str to str
        The standard human score of each level (``"seg"``, ``"domain"``, ``"sys"``); a task
        without a ``gold`` of its own uses it. Empty: the language pair has no standard
        human score (its tasks are skipped unless they name one).
    outliers : frozenset of str
        Systems left out of every task (unless a task uses outliers).
    primary : frozenset of str
        Base names of the primary submissions (metric names without ``-refA`` / ``-src``).
        Empty: every metric counts as primary.
    baselines : frozenset of str
        Base names of the baselines. Tasks rank the primary metrics and the baselines.

    Examples
    --------
    >>> from dataclasses import replace
    >>> r = roles("wmt23")["en-de"]
    >>> r.std_ref, r.std_gold["seg"], sorted(r.outliers)
    ('refA', 'mqm', ['synthetic_ref'])
    >>> mine = replace(r, primary=r.primary | {"MyMetric"})
    >>> "MyMetric" in mine.ranked
    True
    """

    std_ref: str = "refA"
    std_gold: Mapping[str, str] = field(default_factory=dict)
    outliers: frozenset[str] = frozenset()
    primary: frozenset[str] = frozenset()
    baselines: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        if not isinstance(self.std_ref, str) or not self.std_ref:
            raise ValueError(f"Roles.std_ref must be a reference name, got {cut(self.std_ref)}")
        if not isinstance(self.std_gold, Mapping) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in self.std_gold.items()):
            raise ValueError(f"Roles.std_gold must map levels to human score names, got {cut(self.std_gold)}")
        object.__setattr__(self, "std_gold", dict(self.std_gold))
        for name in ("outliers", "primary", "baselines"):
            object.__setattr__(self, name, _names(getattr(self, name), f"Roles.{name}"))

    @property
    def ranked(self) -> frozenset[str]:
        """Base names of the metrics ranked by default: the primary metrics and the baselines
        (empty: every metric)."""
        return self.primary | self.baselines if self.primary else frozenset()

    def status(self, basename: str) -> Status:
        """``"baseline"``, ``"primary"`` or ``"contrastive"`` (a metric that is neither)."""
        if basename in self.baselines:
            return "baseline"
        return "primary" if not self.primary or basename in self.primary else "contrastive"


def _names(value: Any, arg: str) -> frozenset[str]:
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, Iterable) or not all(isinstance(v, str) for v in values):
        raise ValueError(f"{arg} must be a collection of names, got {cut(value)}")
    return frozenset(values)


def _lp_roles(default: Mapping[str, Any], override: Mapping[str, Any], where: str) -> Roles:
    unknown = sorted(set(default) - set(_FIELDS)) + sorted(set(override) - set(_FIELDS))
    if unknown:
        raise ValueError(f"{where}: unknown field {unknown[0]!r}; the fields are {list(_FIELDS)}"
                         f"{did_you_mean(unknown[0], _FIELDS)}")
    return Roles(**{**default, **override})


@cache
def _load(path: str) -> dict[str, dict[str, Roles]]:
    try:
        return _read_roles(path)
    except RecursionError:  # json and repr recurse per level of nesting
        raise ValueError(f"{path!r}: its JSON is nested too deeply to read (arrays or objects within each other "
                         "hundreds of levels deep); a roles file is an object of test sets, 'default' and 'lps'") \
            from None


def _read_roles(path: str) -> dict[str, dict[str, Roles]]:
    try:
        with open(path, encoding="utf-8") as fh:
            raw = json.load(fh)
    except json.JSONDecodeError as err:
        raise ValueError(f"{path!r} is not valid JSON (line {err.lineno}: {err.msg})") from None
    sets = raw.get("testsets") if isinstance(raw, dict) else None
    if not isinstance(sets, dict):
        raise ValueError(f"{path!r}: expected an object with a 'testsets' object, see xcorrstat.wmt.roles")
    out: dict[str, dict[str, Roles]] = {}
    for name, spec in sets.items():
        if not isinstance(spec, dict) or not isinstance(spec.get("lps"), dict):
            raise ValueError(f"{path!r}: test set {name!r} needs 'default' and 'lps' objects")
        try:
            out[name] = {lp: _lp_roles(spec.get("default", {}), o or {}, f"{path!r} {name} {lp}")
                         for lp, o in spec["lps"].items()}
        except (TypeError, ValueError) as err:
            raise ValueError(f"{path!r}, test set {name!r}: {err}") from None
    return out


def testsets(source: str | os.PathLike[str] | None = None) -> list[str]:
    """The test sets whose roles are known (bundled, or in the file ``source``).

    Examples
    --------
    >>> {"wmt22", "wmt23", "wmt24", "wmt25"} <= set(testsets())
    True
    """
    return sorted(_load(os.path.abspath(os.fspath(source or ROLES_FILE))))


@one_call
def roles(testset: str, *, source: str | os.PathLike[str] | None = None) -> dict[str, Roles]:
    """The roles of every language pair of a test set.

    Parameters
    ----------
    testset : str
        ``"wmt19"`` ... ``"wmt25"``, ``"wmt21.news"``, ``"wmt24pp"`` ... (see :func:`testsets`).
    source : str or path, optional
        A JSON file in the format of the bundled one (see the module docstring); default the
        bundled facts.

    Returns
    -------
    dict of str to Roles
        One per language pair (a new dict: edit it freely).

    Examples
    --------
    >>> r = roles("wmt24")
    >>> r["en-de"].std_ref, sorted(r["en-es"].outliers), "BLEU" in r["ja-zh"].baselines
    ('refB', ['MSLC'], True)
    """
    path = os.path.abspath(os.fspath(source or ROLES_FILE))
    known = _load(path)
    if testset not in known:
        raise ValueError(f"testset={cut(testset)} has no roles in {'the bundled data' if source is None else repr(path)};"
                         f" known: {cut(sorted(known), 300)}")
    return dict(known[testset])


def metric_status(basename: str, lps_roles: Iterable[Roles]) -> Status:
    """A metric's status over several language pairs: baseline or primary where any says so.

    Examples
    --------
    >>> metric_status("BLEU", roles("wmt23").values()), metric_status("Foo", roles("wmt23").values())
    ('baseline', 'contrastive')
    """
    found = {r.status(basename) for r in lps_roles}
    for status in ("baseline", "primary"):
        if status in found:
            return status
    return "contrastive"
