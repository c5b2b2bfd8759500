"""Every time and memory figure of the README and the docs names the benchmark that measures it, and the
README's promise about the automatic draws is the code's.

The docs pages themselves run top to bottom in tests/test_docs_pages.py (so every printed number they
show is executed); what a page cannot execute is a figure of a machine: a time or a memory size. Such a
figure is kept true by naming, in the same paragraph, the script of ``benchmarks/`` that prints it and
the machine it ran on (its cores), or docs/speed.md, where the measured tables are kept with their
machine and date. A paragraph here is a run of non-blank lines outside fenced code blocks, or an item
of a list; a table counts as one paragraph with the prose right above it (its caption). A size that is
a setting or a limit rather than a measurement (the memory budget's default, a reader's refusal of a
6 GiB file) may instead name the test that checks it. docs/speed.md is the page of measured tables
itself: each of its sections names the script it runs.

The automatic draws stop at a cap (``max_resamples``); the pages that promise draws "until every
decision is settled" state that cap as the code has it and what becomes of a decision still open there.
"""

from __future__ import annotations

import glob
import os
import re

import pytest

import xcorrstat
from xcorrstat._significance.defaults import DEFAULTS

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir)
PAGES = ["README.md"] + sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "docs", "*.md")))

NUMBER = r"\d(?:[\d,.]*\d)?"
TIME = re.compile(rf"{NUMBER}\s*(?:ms|s|seconds?|minutes?|hours?)\b|\b(?:seconds|minutes|hours|a minute)\b"
                  rf"|{NUMBER}\s*times (?:faster|slower)|{NUMBER}×(?!\s*\d)")
SIZE = re.compile(rf"{NUMBER}\s*(?:[KMGT]i?B)\b")
BENCH = re.compile(r"benchmarks/(\w+\.py)")
SPEED = re.compile(r"\bspeed\.md\b")
TEST = re.compile(r"tests/(test_\w+\.py)")
SPEED_PAGE = os.path.join("docs", "speed.md")
CORES = re.compile(r"\b(?:\d+|two) cores\b")
ITEM = re.compile(r"\s*(?:[-*+]|\d+\.)\s")


def _paragraphs(path: str) -> list[tuple[int, str]]:
    """``(first line, text)`` of every paragraph outside fenced blocks; a table joins the prose above it."""
    out: list[tuple[int, list[str]]] = []
    fence, gap = False, True
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    for no, line in enumerate(lines, 1):
        if line.lstrip().startswith("```"):
            fence, gap = not fence, True
            continue
        if fence or line.startswith("%") or line.lstrip().startswith("<!--"):
            continue
        if not line.strip():
            gap = True
            continue
        table_after_prose = line.startswith("|") and out and not out[-1][1][-1].startswith("|")
        if gap and not table_after_prose or ITEM.match(line):
            out.append((no, []))
        out[-1][1].append(line)
        gap = False
    return [(no, " ".join(text)) for no, text in out]


def _unsupported(path: str) -> list[str]:
    bad = []
    for no, text in _paragraphs(path):
        times, sizes = TIME.findall(text), SIZE.findall(text)
        if not times and not sizes:
            continue
        benches = [b for b in BENCH.findall(text) if os.path.exists(os.path.join(ROOT, "benchmarks", b))]
        measured = bool(benches) or bool(SPEED.search(text))
        tested = any(os.path.exists(os.path.join(ROOT, "tests", t)) for t in TEST.findall(text))
        machine = bool(CORES.search(text)) or bool(SPEED.search(text))
        if times and not (measured and machine) or sizes and not (measured or tested):
            bad.append(f"{os.path.relpath(path, ROOT)}:{no}: {', '.join(times + sizes)}")
    return bad


@pytest.mark.parametrize("page", [p for p in PAGES if p != SPEED_PAGE])
def test_every_timing_names_its_benchmark(page):
    assert _unsupported(os.path.join(ROOT, page)) == []


def test_every_section_of_the_speed_page_names_its_script():
    with open(os.path.join(ROOT, SPEED_PAGE), encoding="utf-8") as f:
        sections = re.split(r"^## ", f.read(), flags=re.M)[1:]
    assert len(sections) >= 3
    for section in sections:
        named = BENCH.findall(section)
        assert named and all(os.path.exists(os.path.join(ROOT, "benchmarks", b)) for b in named), section[:60]


@pytest.mark.parametrize("page", PAGES)
def test_every_named_benchmark_exists(page):
    with open(os.path.join(ROOT, page), encoding="utf-8") as f:
        named = set(BENCH.findall(f.read()))
    assert {b for b in named if not os.path.exists(os.path.join(ROOT, "benchmarks", b))} == set()


def test_the_rule_sees_times_sizes_tables_and_references(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("Prose: it takes about 2 minutes on 2 cores.\n\nIt takes 3 s (benchmarks/bench_wide.py).\n\n"
                    "A 3 MB file is refused (tests/test_io.py).\n\nShown below (benchmarks/bench_wide.py, 2 cores):\n\n"
                    "| case | time |\n|---|---|\n| read | 3.2 s |\n\n"
                    "```text\n4 s in a block is an output, not a claim\n```\n\nNo figure: 16 systems × 100 inputs.\n"
                    "\nThe 0.5 GiB peak: docs/speed.md.\n\nIt takes seconds (benchmarks/no_such_script.py).\n"
                    "\n- a list item of 8 MB (tests/test_io.py)\n- and one of 2 s\n", encoding="utf-8")
    assert [no for no, _ in _paragraphs(str(page))] == [1, 3, 5, 7, 17, 19, 21, 23, 24]
    assert [line.split(":")[1] for line in _unsupported(str(page))] == ["1", "3", "21", "24"]


def _cap() -> int:
    cap = int(DEFAULTS["max_resamples"].python)
    assert cap == xcorrstat.Permutation().max_resamples == xcorrstat.Bootstrap().max_resamples
    return cap


def _sentences(path: str) -> list[str]:
    text = " ".join(t for _, t in _paragraphs(path))
    return re.split(r"(?<=[.;:])\s+(?=[A-Z(`*])", text)


OPEN = re.compile(r"\bopen\b|\bunsettled\b")


@pytest.mark.parametrize("page", ["README.md", "docs/report.md", "docs/significance.md", "docs/defaults.md"])
def test_pages_say_what_happens_to_decisions_open_at_the_cap(page):
    """Each page that promises draws "until every decision is settled" says where they stop (the code's
    cap, read from the defaults) and what becomes of a decision still open there."""
    cap, start = _cap(), int(DEFAULTS["start_resamples"].python)
    sentences = _sentences(os.path.join(ROOT, page))
    about_cap = [s for s in sentences if f"{cap:,}" in s]
    assert about_cap, f"{page} does not state the cap of {cap:,} draws"
    assert any(f"{start:,}" in s for s in about_cap), f"{page}: the first block of {start:,} draws"
    opened = [s for s in sentences if OPEN.search(s) and "decision" in s]
    assert any("count" in s for s in opened), f"{page}: how decisions left open are counted"
    assert any("cluster" in s for s in opened), f"{page}: what clusters do with decisions left open"
    assert any("correct" in s for s in opened), f"{page}: what the correction does with decisions left open"
    every_figure = {int(x.replace(",", "")) for s in sentences for x in re.findall(r"\b\d{1,3},\d{3}\b(?= draws)", s)}
    assert max(every_figure, default=cap) <= cap


def test_readme_states_the_codes_cap():
    cap = _cap()
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = " ".join(f.read().split())
    assert f"from {int(DEFAULTS['start_resamples'].python):,} up to {cap:,}" in readme


def test_readme_counts_the_open_decisions_the_report_page_prints():
    """docs/report.md shows the heading of the bundled run (executed by tests/test_docs_pages.py); the
    count of the decisions it leaves open that the README and the page's prose give is that one."""
    with open(os.path.join(ROOT, "docs", "report.md"), encoding="utf-8") as f:
        page = f.read()
    printed = re.findall(r"at most a pair, (\d+) decisions left open", page)
    assert len(set(printed)) == 1
    assert f"On this data {printed[0]} of them do" in " ".join(page.split())
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = " ".join(f.read().split())
    assert f"{printed[0]} decisions are still open at {_cap():,} draws" in readme
