"""The facts a report states about itself: one source for its printed heading, its page, its JSON and its tables.

:func:`report_facts` gathers them from a :class:`~xcorrstat._reporting.Report` as plain data
(what a JSON file holds): the draws of each phase (the intervals' resamples; the tests' draws per
pair, or with ``n_resamples="auto"`` the fewest and most a pair drew and how many pairs drew up
to the cap), the decisions left open and how they were decided, the notes (what was left out or
kept to common ground), the seed, the package version and the data's sizes. :func:`header_lines`
words them, one ``(label, sentence)`` per line, for the heading of ``Report.to_text`` (the command
line's header) and the page, which escape them each for its own output.

What a left-open decision means is what the code does with it: with ``n_resamples="auto"`` a pair
whose corrected decision is still open when its draws reach ``max_resamples`` has drawn exactly
``max_resamples`` draws, so its p-value is that of a fixed run of ``max_resamples`` draws, and it
is flagged significant when its corrected p-value is at most ``alpha``, as any other pair is
(:func:`~xcorrstat._significance.auto.auto_pair_pvalues`). The clusters are built from those flags.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._display import LABEL_WIDTH, VALUE_WIDTH, printable
from .._version import __version__

__all__ = ["FACTS", "cluster_note", "header_lines", "header_text", "report_facts"]

#: The key of the facts in a table's ``DataFrame.attrs`` and in ``report.json``.
FACTS = "facts"

#: The units of each level's ``n``.
UNITS = {"system": "systems", "input": "inputs", "global": "cells", "within_system": "systems"}

_DRAWS = {"permutation": "permutation draws", "bootstrap": "bootstrap resamples"}


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _upper_pairs(values: np.ndarray) -> np.ndarray:
    """The unordered pairs' values of a (..., metric, other_metric) array: its strict upper triangle."""
    m = values.shape[-1]
    pi, pk = np.triu_indices(m, 1)
    return values[..., pi, pk].ravel()


def _level_draws(report: Any, level: str) -> dict[str, Any]:
    """The tests of one level: decisions, pairs, draws a pair made (fewest, most, at the cap), open ones."""
    s = report.settings
    comps = report.comparisons.sel(level=level)
    p = comps["pvalue"].transpose(..., "metric", "other_metric").values
    facts: dict[str, Any] = {"decisions": int(np.isfinite(p).sum()), "pairs": int(_upper_pairs(p).size)}
    if level not in s.get("n_resamples_used", {}):  # no draws: Williams, or one metric
        return facts
    if "n_resamples_used" in comps:  # n_resamples="auto": each pair its own draws
        used = _upper_pairs(comps["n_resamples_used"].transpose(..., "metric", "other_metric").values)
    else:  # every pair the same draws
        used = np.full(facts["pairs"], int(s["n_resamples_used"][level]))
    if used.size:
        facts.update(fewest=int(used.min()), most=int(used.max()))
    if s.get("draws") == "auto":
        facts.update(at_cap=int((used == s["max_resamples"]).sum()), open=int(s["n_open"].get(level, 0)),
                     open_significant=int(s.get("n_open_significant", {}).get(level, 0)))
        if level in s.get("pvalue_floor", {}):
            facts["pvalue_floor"] = float(s["pvalue_floor"][level])
    return facts


def _sizes(report: Any) -> dict[str, int]:
    """The data's sizes: metrics, then the dims of the scores (systems, inputs, labels of extra dims)."""
    sizes = {"metric": int(report.intervals.sizes["metric"])}
    sizes.update({str(k): int(v) for k, v in report.settings.get("sizes", {}).items()})
    return sizes


def report_facts(report: Any) -> dict[str, Any]:
    """The facts of ``report`` as plain data (str, int, float, None, lists and dicts of them).

    Keys: ``xcorrstat`` (the package version), ``source``, ``target``, ``seed``, ``sizes``
    (``metric`` and each dim of the data), ``intervals`` (scheme, confidence level, resamples
    per interval), ``tests`` (test, scheme, correction, alpha, ``draws`` -- ``"auto"``, the
    draws per pair, or None for no draws --, ``max_resamples``, and per level the decisions,
    the pairs, the ``fewest`` and ``most`` draws of a pair and, for ``"auto"``, ``at_cap``
    (pairs that drew ``max_resamples``), ``open`` and ``open_significant``), ``open`` (the
    decisions left open in all, None without ``"auto"``), ``open_significant``, ``notes``
    and ``clusters`` (what a cluster claims, :func:`cluster_note`).
    """
    s = report.settings
    levels = {lev: _level_draws(report, lev) for lev in report.levels}
    auto = s.get("draws") == "auto"
    return {
        "xcorrstat": __version__, "source": s["source"], "target": s["target"], "seed": s["rng"],
        "sizes": _sizes(report),
        "intervals": {"scheme": s["ci_scheme"], "confidence_level": s["confidence_level"],
                      "n_resamples": s["n_resamples"]},
        "tests": {"test": s["test"], "scheme": s["test_scheme"], "correction": s["correction"] or "none",
                  "alpha": s["alpha"], "draws": s.get("draws"), "max_resamples": s.get("max_resamples"),
                  "levels": levels},
        "open": sum(f.get("open", 0) for f in levels.values()) if auto else None,
        "open_significant": sum(f.get("open_significant", 0) for f in levels.values()) if auto else None,
        "notes": list(report.notes),
        "clusters": cluster_note(report),
    }


def _title(report: Any) -> str:
    s = report.settings
    where = f"{printable(s['source'], VALUE_WIDTH)}; " if s["source"] else ""
    target = printable(repr(s["target"]), VALUE_WIDTH)
    return (f"{s['method'].capitalize()} correlation with {target} ({where}"
            f"{_count(report.intervals.sizes['metric'], 'metric')}{_per_label(report)})")


def _per_label(report: Any) -> str:
    """"; a ranked list per lp label, 2 in all" for data with extra dims, else ""."""
    extra = report.extra_dims
    if not extra:
        return ""
    dims = " and ".join(printable(d, LABEL_WIDTH) for d in extra)
    n = int(np.prod([report.intervals.sizes[d] for d in extra]))
    return f"; a ranked list per {dims} label, {n} in all"


def _schemes(report: Any) -> str:
    """"95% BOOT-BOTH percentile CIs, 1000 resamples; clusters from PERM-BOTH tests (...); seed 0"."""
    s = report.settings
    correction = s["correction"] or "no correction"
    return (f"{s['confidence_level']:.0%} {s['ci_scheme']} percentile CIs, {s['n_resamples']} resamples; "
            f"clusters from {s['test_scheme']} tests ({correction}, alpha = {s['alpha']:g}{_auto(report)}); "
            f"seed {s['rng']}")


def _auto(report: Any) -> str:
    """"; auto draws up to 20000: 8000 at most a pair, every decision settled": the tests' draws."""
    s = report.settings
    used = s.get("n_resamples_used") or {}
    if not used or s.get("draws") != "auto":  # fixed draws: the CIs' resamples, stated before
        return ""
    per_level = ", ".join(f"{n} ({lev})" if len(used) > 1 else f"{n}" for lev, n in used.items())
    n_open = sum(s.get("n_open", {}).values())
    left = f"{n_open} decisions left open" if n_open else "every decision settled"
    return f"; auto draws up to {s['max_resamples']}: {per_level} at most a pair, {left}"


def _draws_line(facts: dict[str, Any]) -> str:
    """The draws of each phase: the intervals' resamples, then the tests' draws per pair."""
    tests = facts["tests"]
    head = f"{facts['intervals']['n_resamples']} bootstrap resamples for each interval; "
    noun = _DRAWS.get(tests["test"])
    if tests["draws"] is None or noun is None:
        return head + f"the {tests['scheme']} tests draw nothing"
    if tests["draws"] != "auto":
        return head + f"{tests['draws']} {noun} for each pair's test"
    parts = []
    for lev, f in tests["levels"].items():
        if "most" in f:
            span = f"{f['fewest']}" if f["fewest"] == f["most"] else f"{f['fewest']} to {f['most']}"
            parts.append(f"{lev.replace('_', '-')} level {span} a pair, {f['at_cap']} of "
                         f"{_count(f['pairs'], 'pair')} at the cap")
    return head + (f"{noun} for each pair's test as its decision needs, up to {tests['max_resamples']}: "
                   + "; ".join(parts or ["none made"]))


def _open_line(facts: dict[str, Any]) -> str:
    """How many decisions stayed open, and how they were decided."""
    tests, n_open = facts["tests"], facts["open"]
    alpha, cap = f"{tests['alpha']:g}", tests["max_resamples"]
    if not n_open:
        return f"none: every corrected decision at alpha = {alpha} was settled by the cap of {cap} draws"
    decisions = sum(f["decisions"] for f in tests["levels"].values())
    per_level = [f"{f.get('open', 0)} {lev.replace('_', '-')}" for lev, f in tests["levels"].items()]
    flagged = facts["open_significant"]
    return (f"{n_open} of {decisions} ({', '.join(per_level)}) still open at the cap of {cap} draws, their "
            f"p-values within Monte-Carlo error of alpha = {alpha}; each is decided as a fixed run of {cap} "
            f"draws decides it, by its corrected p-value at the cap ({flagged} flagged significant, "
            f"{n_open - flagged} not), and the clusters are built from those flags: another seed or a higher "
            "cap (max_resamples) can change them")


def _data_line(facts: dict[str, Any]) -> str:
    sizes = dict(facts["sizes"])
    parts = [_count(sizes.pop("metric"), "metric")]
    for dim, noun in (("system", "system"), ("input", "input")):
        if dim in sizes:
            parts.append(_count(sizes.pop(dim), noun))
    parts += [f"{_count(n, 'label')} of {printable(d, LABEL_WIDTH)}" for d, n in sizes.items()]
    return f"{', '.join(parts)}; xcorrstat {facts['xcorrstat']}"


def header_lines(report: Any, facts: dict[str, Any] | None = None) -> list[tuple[str, str]]:
    """The heading, one ``(label, sentence)`` a line (label "" for the first two), control characters
    escaped (each output escapes its own markup): title, schemes and seed, draws, open decisions
    (``"auto"`` draws only), data sizes and version, then one ``("note", ...)`` per note."""
    facts = report_facts(report) if facts is None else facts
    lines = [("", _title(report)), ("", _schemes(report)), ("draws", _draws_line(facts))]
    if facts["open"] is not None:
        lines.append(("open decisions", _open_line(facts)))
    lines.append(("data", _data_line(facts)))
    lines += [("note", printable(note)) for note in facts["notes"]]
    return lines


def header_text(report: Any) -> str:
    """The heading of ``Report.to_text`` (the command line's header): :func:`header_lines`, one a line."""
    return "\n".join(f"{label}: {text}" if label else text for label, text in header_lines(report))


def cluster_note(report: Any) -> str:
    """What a significance cluster claims and what it does not, in three sentences for ``report``'s settings."""
    s = report.settings
    correction = f"after the {s['correction']} correction" if s["correction"] else "without a correction"
    systems = report.settings.get("sizes", {}).get("system")
    here = f" ({systems} here)" if systems else ""
    return (f"A cluster claims only that no metric in it is significantly better than another member, at alpha = "
            f"{s['alpha']:g} {correction}, by the {s['test_scheme']} test; a metric opens the next cluster because "
            "one metric above it is significantly better, not necessarily every one. It does not claim that "
            "metrics in different clusters differ much (their intervals can overlap), nor that a boundary is "
            "stable: another seed, a few more draws or a few more systems can move it. With few "
            f"systems{here} the tests have little power, so sharing a cluster is weak evidence that metrics are "
            "equally good.")

