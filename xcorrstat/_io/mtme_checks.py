"""The checks mt-metrics-eval makes of a metric score file, with the file, line and system named.

mt-metrics-eval's ``EvalSet.CheckScores`` refuses a metric file that scores a system the test
set does not have ("Unknown system"), that holds ``None`` ("contains None elements"), or, in its
strict mode, that lacks a system it should score. :func:`check_metric_files` makes the same
three checks of every metric file :func:`~xcorrstat._io.mtme.read_mtme` read:

* **unknown system**: a system that is neither in ``system-outputs/<lp>/`` nor in a human
  score file read of the language pair (with a "did you mean" when a known name is close:
  the same after dropping blanks and invisible characters such as a zero-width space, or
  nearly the same letters); a language pair with neither has no names to check against;
* **no score**: a line whose score is ``None`` (or ``nan``);
* **missing system**: a system (at the ``domain`` level a system and domain) that a human
  score read of the language pair rates at the file's level -- has at least one score -- and that
  the file has no line for; the references the metric uses are exempt (a metric does not score
  its own reference), and so are the human systems when they are left out.

Each is a ValueError of one line by default. With ``allow_incomplete=True`` the file is kept
as read (NaN where it has no score; an unknown system becomes a system of its own) and each
problem becomes a note (:mod:`xcorrstat._notes`) naming the metric, the language pair, the
level and the units it lacks.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np

from .._display import cut, did_you_mean as suggest
from .mtme_files import ScoreFile

__all__ = ["ALLOW_ARGUMENT", "ALLOW_HINT", "MetricFacts", "check_metric_files", "command_hint", "did_you_mean",
           "metric_facts"]

#: The argument that keeps a metric file that fails a check, as messages name it (:func:`command_hint`).
ALLOW_ARGUMENT = "allow_incomplete=True (xcorrstat wmt --allow-incomplete)"

#: How to keep a metric file that fails a check; ends every message.
ALLOW_HINT = f"pass {ALLOW_ARGUMENT} to keep the metric, marked"

#: Systems named in one message or note at most.
_SHOWN = 5

_UNIT = {"seg": "segment", "doc": "document", "domain": "domain", "sys": "system"}


@dataclass
class MetricFacts:
    """What the checks need of one metric file, taken when it is parsed."""

    file: ScoreFile
    systems: list[str]  # the systems of the file
    codes: np.ndarray  # the system of each line: its position in `systems`
    present: set = field(default_factory=set)  # systems (domain level: (system, domain) pairs) with a line
    none_lines: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # 1-based lines without score
    none_systems: list[str] = field(default_factory=list)  # the system of each such line

    def first_line(self, system: str) -> int:
        """The first line (1-based) of `system`."""
        return int(np.argmax(self.codes == self.systems.index(system))) + 1


def metric_facts(f: ScoreFile, labels: list, values: np.ndarray) -> MetricFacts:
    """The facts of one parsed metric file: its label columns (categorical, system last) and scores.

    Its categories are the systems the file names (the parser makes them of the values read).
    """
    system = labels[-1]
    codes = np.asarray(system.codes)
    names = [str(s) for s in system.categories]
    if f.level == "domain":
        domains = np.asarray(labels[0].categories, dtype=object)[np.asarray(labels[0].codes, dtype=np.int64)]
        present: set = set(zip((names[c] for c in codes.tolist()), (str(d) for d in domains)))
    else:
        present = set(names)
    rows = np.flatnonzero(np.isnan(values))
    return MetricFacts(f, names, codes, present, rows + 1, [names[c] for c in codes[rows].tolist()])


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """``" (did you mean 'x'?)"`` for the known name closest to `name`, or ``""`` when none is close:
    :func:`xcorrstat._display.did_you_mean` with a strict cutoff (system names differ by a letter).

    Examples
    --------
    >>> did_you_mean("ONLINE-B\\u200b", ["ONLINE-A", "ONLINE-B"])
    " (did you mean 'ONLINE-B'?)"
    >>> did_you_mean("zzz", ["ONLINE-A"])
    ''
    """
    return suggest(name, sorted(known), n=1, cutoff=0.8, parenthesised=True)


def _names(systems: list[str]) -> str:
    """Up to :data:`_SHOWN` system names, and how many more."""
    shown = ", ".join(cut(s) for s in systems[:_SHOWN])
    return shown + (f" and {len(systems) - _SHOWN} more" if len(systems) > _SHOWN else "")


def _line_text(path: str, line: int, encoding: str) -> str:
    """The score field of line `line` of `path` as written (``None``, ``nan`` ...)."""
    with open(path, encoding=encoding) as fh:
        text = next(itertools.islice(fh, line - 1, None), "")
    fields = text.split()
    return fields[-1] if len(fields) > 1 else ""


def _what(f: ScoreFile) -> str:
    """How a note names a metric file's metric: ``BLEU-refA (en-de, sys)``."""
    return f"metric {f.name} ({f.lp}, {f.level})"


def _unknown(facts: MetricFacts, known: set[str]) -> list[tuple[str, str]]:
    """(error, note) for each system of the file that the test set does not have."""
    f, out = facts.file, []
    for name in facts.systems:
        if name in known:
            continue
        line = facts.first_line(name)
        hint = did_you_mean(name, known)
        out.append((f"{f.path!r}, line {line}: system {cut(name)} is not a system of {f.lp} (none of its system "
                    f"outputs or human scores){hint}; mt-metrics-eval refuses an unknown system",
                    f"{_what(f)} scores {cut(name)}, not a system of {f.lp}{hint} ({f.rel}, line {line}): kept as "
                    "a system of its own"))
    return out


def _none(facts: MetricFacts, encoding: str) -> list[tuple[str, str]]:
    """(error, note) for the lines of the file without a score."""
    f = facts.file
    if not facts.none_lines.size:
        return []
    line, system = int(facts.none_lines[0]), facts.none_systems[0]
    systems = list(dict.fromkeys(facts.none_systems))
    n, unit = facts.none_lines.size, _UNIT[f.level]
    return [(f"{f.path!r}, line {line}: system {cut(system)} has no score ({_line_text(f.path, line, encoding)}); a "
             f"metric file scores every {unit} of its systems ({n} line{'s' if n > 1 else ''} without a score); "
             "mt-metrics-eval refuses None in metric scores",
             f"{_what(f)} lacks {n} score{'s' if n > 1 else ''} of system{'s' if len(systems) > 1 else ''} "
             f"{_names(systems)}: None in {f.rel} (first on line {line})")]


def _missing(facts: MetricFacts, rated: Mapping[object, list[str]], exempt: set[str]) -> list[tuple[str, str]]:
    """(error, note) for the rated systems (or system, domain pairs) the file has no line for."""
    f = facts.file
    lacking = [key for key in rated if key not in facts.present
               and (key[0] if isinstance(key, tuple) else key) not in exempt]
    if not lacking:
        return []
    humans = sorted({h for key in lacking for h in rated[key]})
    scores = f"human score{'s' if len(humans) > 1 else ''} {', '.join(cut(h) for h in humans)}"
    if f.level == "domain":
        units = [f"{cut(key[0])} in domain {cut(key[1])}" for key in lacking if isinstance(key, tuple)]
        shown = ", ".join(units[:_SHOWN]) + (f" and {len(units) - _SHOWN} more" if len(units) > _SHOWN else "")
        what = f"system{'s' if len(units) > 1 else ''} {shown}"
    else:
        what = f"system{'s' if len(lacking) > 1 else ''} {_names([str(k) for k in lacking])}"
    return [(f"{f.path!r}: no line for {what}, which the {scores} rate{'s' if len(humans) == 1 else ''} in {f.lp}; "
             "a metric file scores every rated system but its own references (mt-metrics-eval's strict mode)",
             f"{_what(f)} lacks {what}, which the {scores} rate{'s' if len(humans) == 1 else ''}: {f.rel} has "
             f"no line for {'them' if len(lacking) > 1 else 'it'}")]


def _rated(parts: Mapping[str, Mapping[str, tuple]], sources: Mapping[str, list[ScoreFile]]
           ) -> dict[tuple[str, str], dict[object, list[str]]]:
    """(lp, level) -> each rated system (domain level: (system, domain)) -> the human scores rating it."""
    out: dict[tuple[str, str], dict[object, list[str]]] = {}
    for var, by_lp in parts.items():
        first = sources[var][0]
        if not first.human:
            continue
        for lp, (systems, block, items) in by_lp.items():
            found = out.setdefault((lp, first.level), {})
            scored = ~np.isnan(block)
            if first.level == "domain":
                keys: Iterable[object] = ((str(systems[s]), str(items[d])) for s, d in zip(*np.nonzero(scored)))
            else:
                keys = (str(systems[s]) for s in np.flatnonzero(scored.any(axis=1)))
            for key in keys:
                found.setdefault(key, []).append(first.name)
    return out


def _exempt(f: ScoreFile, lp_refs: set[str], dropped: set[str]) -> set[str]:
    """The systems a metric file need not score: the references it uses, and the systems left out."""
    refs = f.name.rpartition("-")[2]
    used = set() if refs == "src" else set(lp_refs) if refs == "all" else set(refs.split("."))
    return used | dropped


def check_metric_files(facts: list[MetricFacts], parts: Mapping[str, Mapping[str, tuple]],
                       sources: Mapping[str, list[ScoreFile]], known: Mapping[str, set[str]],
                       lp_refs: Mapping[str, set[str]], dropped: set[str], *, allow: bool,
                       encoding: str) -> list[str]:
    """Check every metric file (see the module docstring); the notes of what was accepted.

    ``known``: each language pair's systems (an empty set: nothing to check names against);
    ``lp_refs``: its references; ``dropped``: the systems left out of the Dataset. Raises the
    first problem, in the order the files were read, unless `allow`.
    """
    rated = _rated(parts, sources)
    notes = []
    for fact in facts:
        f = fact.file
        problems = _unknown(fact, known[f.lp]) if known.get(f.lp) else []
        problems += _none(fact, encoding)
        problems += _missing(fact, rated.get((f.lp, f.level), {}), _exempt(f, lp_refs.get(f.lp, set()), dropped))
        if problems and not allow:
            raise ValueError(f"{problems[0][0]}; {ALLOW_HINT}")
        notes += [note for _, note in problems]
    return notes


def command_hint(err: ValueError) -> ValueError:
    """``err`` as a command says it: ``--allow-incomplete`` for ``allow_incomplete=True`` (the command that
    runs names its own flag); ``err`` itself when it names no such argument.

    Examples
    --------
    >>> str(command_hint(ValueError(f"'x.sys.score': no line for system 'B'; {ALLOW_HINT}")))
    "'x.sys.score': no line for system 'B'; pass --allow-incomplete to keep the metric, marked"
    """
    text = str(err)
    if ALLOW_ARGUMENT not in text:
        return err
    return type(err)(text.replace(ALLOW_ARGUMENT, "--allow-incomplete"))
