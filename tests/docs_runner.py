"""Run a documentation page top to bottom, as a reader would, and check what it prints.

:func:`page_blocks` reads the fenced code blocks of a MyST page (or of the README) in order.
:func:`run_page` runs them in one namespace in a given folder:

- ```` ```python ```` blocks, and the ```` ```{code-cell} ```` cells of a MyST-NB page, with
  ``exec`` (stdout captured). As in a notebook or the interactive interpreter, a block that ends in
  a bare expression also prints that value's ``repr`` unless it is None, so
  ``rep.to_dataframe()`` as the last line shows the table.
- ```` ```bash ```` lines that start with ``xcorrstat`` as ``python -m xcorrstat`` in a subprocess
  (which must exit 0). Other shell lines (``python -m pip install ...``) are not run.
- the code of a ``.. plot::`` directive in an ```` ```{eval-rst} ```` block, as Sphinx's plot
  directive runs it: in a namespace of the plot directives of its own (shared between directives
  with a ``:context:`` option, new after ``:context: reset`` or without the option), not the page's.
- ```` ```console ```` blocks: each ``$ xcorrstat ...`` line is run the same way, and the lines up
  to the next ``$`` are what it prints.

A ```` ```text ```` block right after a code block (nothing but blank lines between) is what that
block prints: the output must equal it, trailing spaces ignored. A line ``...`` alone in it stands
for any number of lines (so ``...`` last means "the output starts with"). Other blocks (``json``,
other directives, a ``text`` block after prose) are not run, and what a plot directive prints is
not compared.

**Blocks that are not run.** A block that cannot run here -- it needs a reader's own file, or
times a machine -- carries a marker on the line right above its fence, with the reason:

    % not run: needs your own scores.csv

(a MyST comment, so it is visible in the page's source and nowhere in the built site). In a
file that plain Markdown renders (README.md) the same marker is an HTML comment,
``<!-- not run: ... -->``. Keep such blocks few: the docs tests count the markers of each page.

**Data a page reads.** A page that reads files a reader would have downloaded (an mt-metrics-eval
folder) gets them from :data:`PAGE_SETUP`, which writes them into the folder before the page runs.

**Running and regenerating pages.** ``python tests/docs_runner.py docs/PAGE.md`` runs a page as
the tests do. After a change of defaults (numbers of draws, corrections), rewrite a page's
```` ```text ```` blocks (and the output lines of its console blocks) with what its code prints now,
one command per page (several pages may be given)::

    python tests/docs_runner.py --update docs/significance.md

A ``...`` line is kept where the new output still matches, and a block of the form
``head`` + ``...`` keeps that many head lines. The page is rewritten only if every block ran and
nobody edited the page meanwhile; check the change with ``git diff`` before keeping it.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import io
import os
import re
import shlex
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

FENCE = re.compile(r"^```(\S*)(?:\s+(\S.*))?\s*$")
NOT_RUN = re.compile(r"^(?:%\s*not run:\s*(?P<a>\S.*?)|<!--\s*not run:\s*(?P<b>\S.*?)\s*-->)\s*$")
CODE = ("python", "bash", "console")


@dataclass
class Block:
    lang: str
    code: str
    line: int  # 1-based line of the opening fence
    expected: str | None = None  # the text block after it, if any
    not_run: str | None = None  # the reason given by a "not run:" marker above the fence
    context: str | None = None  # a plot directive's :context: option
    outputs: list[str] = field(default_factory=list, repr=False)  # what each shell command printed
    expected_lines: tuple[int, int] | None = field(default=None, repr=False)  # 0-based [start, end) of its text


def _lang(fence: str) -> str:
    return "python" if fence == "{code-cell}" else fence


def _plot_directive(rst: str) -> tuple[str, str | None]:
    """The code of a ``.. plot::`` directive and its ``:context:`` option (None without one)."""
    body = rst.splitlines()[1:]
    context = None
    while body and body[0].strip().startswith(":"):
        name, _, value = body.pop(0).strip()[1:].partition(":")
        if name == "context":
            context = value.strip()
    return textwrap.dedent("\n".join(body)).strip("\n") + "\n", context


def page_blocks(path: str) -> list[Block]:
    """The page's fenced blocks, each code block with the text block that follows it."""
    with open(path, encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    blocks: list[tuple[Block, int]] = []  # each block with the 0-based line after its closing fence
    number = 0
    while number < len(lines):
        match = FENCE.match(lines[number])
        if not (match and match.group(1)):
            number += 1
            continue
        end = number + 1
        while end < len(lines) and lines[end].rstrip() != "```":
            end += 1
        marker = NOT_RUN.match(lines[number - 1].strip()) if number else None
        block = Block(_lang(match.group(1)), "".join(f"{x}\n" for x in lines[number + 1:end]),
                      number + 1, not_run=(marker.group("a") or marker.group("b")) if marker else None)
        if block.lang == "{eval-rst}" and block.code.startswith(".. plot::"):
            block.lang, block.code, block.context = "plot", *_plot_directive(block.code)
        blocks.append((block, end + 1))
        number = end + 1
    out: list[Block] = []
    after = -1  # the line after the previous code block's closing fence
    for block, next_line in blocks:
        between = range(after, block.line - 1) if after >= 0 else range(0)
        adjacent = after >= 0 and all(not lines[k].strip() for k in between)
        if (block.lang == "text" and adjacent and out[-1].expected is None and out[-1].lang in CODE
                and out[-1].lang != "console"):
            out[-1].expected = block.code
            out[-1].expected_lines = (block.line, next_line - 1)
            after = -1
        else:
            out.append(block)
            after = next_line if block.lang in CODE else -1
    return out


def _matches(got: list[str], expected: list[str]) -> bool:
    if not expected:
        return not got
    if expected[0] == "...":
        return any(_matches(got[k:], expected[1:]) for k in range(len(got) + 1))
    return bool(got) and got[0] == expected[0] and _matches(got[1:], expected[1:])


def _norm(text: str) -> list[str]:
    return [line.rstrip() for line in text.strip("\n").splitlines()]


def _same(got: str, expected: str) -> bool:
    return _matches(_norm(got), _norm(expected))


def _run_command(line: str, env: dict[str, str]) -> str:
    run = subprocess.run([sys.executable, "-m", *shlex.split(line)], capture_output=True, text=True, env=env)
    assert run.returncode == 0, f"{line!r} exited {run.returncode}: {run.stderr[-2000:]}"
    return run.stdout


def _shell_commands(block: Block) -> list[str]:
    """The ``xcorrstat`` commands of a bash or console block, in order."""
    out = []
    for line in block.code.splitlines():
        if block.lang == "console":
            if not line.startswith("$ "):
                continue
            line = line[2:]
        line = line.split(" #", 1)[0].strip()
        if line.startswith("xcorrstat"):
            out.append(line)
    return out


def console_output(block: Block) -> str | None:
    """What a console block shows its commands print (the lines that are not ``$`` commands)."""
    shown = [line for line in block.code.splitlines() if not line.startswith("$ ")]
    return "\n".join(shown) if _shell_commands(block) else None


def _exec_python(code: str, name: str, namespace: dict) -> str:
    """Run ``code`` as a notebook cell: a final bare expression's value is printed."""
    tree = ast.parse(code, name)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        exec(compile(tree, name, "exec"), namespace)
        if last is not None:
            value = eval(compile(ast.Expression(last.value), name, "eval"), namespace)
            if value is not None:
                print(repr(value))
    return buffer.getvalue()


def runs(block: Block) -> bool:
    """Whether :func:`run_page` runs the block."""
    if block.not_run is not None:
        return False
    return block.lang in ("python", "plot") or (block.lang in ("bash", "console") and bool(_shell_commands(block)))


@contextlib.contextmanager
def _inside(folder: str):
    """Work in ``folder`` for a while (contextlib.chdir is Python 3.11+)."""
    here = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(here)


def run_blocks(path: str, folder: str) -> Iterator[tuple[Block, str]]:
    """Run the page's blocks in ``folder``, one at a time: yields each block that ran with what it
    printed."""
    path = os.path.abspath(path)
    namespace: dict = {"__name__": "__docs__"}
    plots: dict = {}  # the namespace that plot directives with a :context: share
    env = dict(os.environ, MPLBACKEND="Agg")
    with _inside(folder), _backend():
        for block in page_blocks(path):
            if not runs(block):
                continue
            if block.lang == "python":
                got = _exec_python(block.code, f"{path}:{block.line}", namespace)
            elif block.lang == "plot":
                if block.context in (None, "reset"):
                    plots = {"__name__": "__docs__"}
                got = _exec_python(block.code, f"{path}:{block.line}", plots)
                _close_figures()
            else:
                block.outputs = [_run_command(line, env) for line in _shell_commands(block)]
                got = "".join(block.outputs)
            yield block, got


def _close_figures() -> None:
    import matplotlib.pyplot as plt

    plt.close("all")


@contextlib.contextmanager
def _backend():
    """Figures drawn by a page go to a non-interactive matplotlib backend and are closed after; the
    page's pandas display format is undone."""
    try:
        import matplotlib
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - plotting pages need the plot extra
        yield
        return
    import pandas as pd

    before = matplotlib.get_backend()
    plt.switch_backend("Agg")
    try:
        # a notebook page may set pandas' display options for itself (the tutorial does)
        with pd.option_context("display.float_format", pd.get_option("display.float_format")):
            yield
    finally:
        plt.close("all")
        plt.switch_backend(before)


def _expected(block: Block) -> str | None:
    return console_output(block) if block.lang == "console" else block.expected


def run_page(path: str, folder: str) -> int:
    """Run the page's blocks in ``folder``; returns how many blocks ran. Fails on the first block that
    raises, exits non-zero or prints other than the page shows."""
    ran = 0
    for block, got in run_blocks(path, folder):
        ran += 1
        expected = _expected(block)
        if expected is not None:
            assert _same(got, expected), f"{path}:{block.line} printed\n{got}\nbut the page shows\n{expected}"
    return ran


# --- data that pages read, written before they run -------------------------------------------------------


def _mtme_tree(folder: str) -> None:
    """A small mt-metrics-eval folder ``mt-metrics-eval-v2/wmt23``, as docs/data.md and docs/report.md
    name it (generated scores; the layout of the real download)."""
    import numpy as np
    from mtme_tree import write_mtme_tree

    write_mtme_tree(os.path.join(folder, "mt-metrics-eval-v2"), "wmt23", ["en-de", "zh-en"], 5, 24,
                    ["BLEU", "COMET"], ["refA", "refB"], ["mqm"], np.random.default_rng(7),
                    noref_metrics=["CometKiwi"])


def _wmt_tree(folder: str) -> None:
    """The tree of docs/wmt.md (as tests/test_docs_wmt.py writes it)."""
    import numpy as np
    from mtme_tree import write_mtme_tree

    write_mtme_tree(os.path.join(folder, "mt-metrics-eval-v2"), "wmt23", ["en-de", "he-en", "zh-en"], 5, 24,
                    ["BLEU", "COMET", "MetricX-23", "XCOMET-Ensemble", "MyMetric", "lendiff"], ["refA", "refB"],
                    ["mqm"], np.random.default_rng(7), noref_metrics=["CometKiwi", "MetricX-23-QE"],
                    levels=("seg", "domain", "sys"))


PAGE_SETUP: dict[str, Callable[[str], None]] = {
    "data.md": _mtme_tree,
    "wmt.md": _wmt_tree,
}


def prepare(path: str, folder: str) -> None:
    """Write the files the page at ``path`` reads into ``folder`` (nothing for most pages)."""
    setup = PAGE_SETUP.get(os.path.basename(path))
    if setup is not None:
        setup(folder)


# --- rewriting a page's outputs ---------------------------------------------------------------------------


def _refreshed(got: str, old: str) -> list[str]:
    """The lines a text block shows for output ``got``: ``got`` itself, unless ``old`` elides lines."""
    new, pattern = _norm(got), _norm(old)
    if "..." in pattern and _matches(new, pattern):
        return [line.rstrip() for line in old.strip("\n").splitlines()]
    if "..." in pattern and pattern.index("...") == len(pattern) - 1:
        return new[:len(pattern) - 1] + ["..."]
    return new


def _console_refreshed(block: Block) -> list[str]:
    """The lines of a console block with each ``$ xcorrstat`` command followed by what it printed."""
    out, outputs, skipping = [], iter(block.outputs), False
    for line in block.code.splitlines():
        if line.startswith("$ "):
            out.append(line)
            skipping = line[2:].split(" #", 1)[0].strip().startswith("xcorrstat")
            if skipping:
                out += [x.rstrip() for x in next(outputs).strip("\n").splitlines()]
        elif not skipping:
            out.append(line)
    return out


def update_page(path: str, folder: str) -> list[str]:
    """Rewrite the ```text blocks of the page at ``path`` with what its code prints now (run in
    ``folder``); returns one line per block that changed. In a console block, the lines after each
    ``$ xcorrstat`` command are rewritten."""
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    lines = text.splitlines()
    changes, edits = [], []
    for block, got in list(run_blocks(path, folder)):
        if block.lang == "console":
            if not _same(got, console_output(block) or ""):
                start = block.line  # the first line inside the fence
                edits.append((start, start + len(block.code.splitlines()), _console_refreshed(block)))
                changes.append(f"{path}:{block.line} output updated")
            continue
        if block.expected is None or block.expected_lines is None:
            if got.strip() and block.lang == "python":
                changes.append(f"{path}:{block.line} prints but has no text block after it")
            continue
        if _same(got, block.expected):
            continue
        start, end = block.expected_lines
        edits.append((start, end, _refreshed(got, block.expected)))
        changes.append(f"{path}:{block.line} output updated")
    for start, end, new in sorted(edits, reverse=True):
        lines[start:end] = new
    with open(path, encoding="utf-8") as fh:
        if fh.read() != text:
            raise RuntimeError(f"{path} was edited while its code ran; run the update again")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    return changes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run documentation pages, or rewrite their outputs.")
    parser.add_argument("pages", nargs="+", help="Markdown pages (docs/PAGE.md, README.md)")
    parser.add_argument("--update", action="store_true", help="rewrite each page's ```text blocks")
    args = parser.parse_args(argv)
    for page in args.pages:
        with tempfile.TemporaryDirectory() as folder:
            prepare(page, folder)
            page = os.path.abspath(page)
            if args.update:
                for change in update_page(page, folder) or [f"{page}: up to date"]:
                    print(change)
            else:
                print(f"{page}: {run_page(page, folder)} blocks ran")
    return 0


if __name__ == "__main__":
    sys.exit(main())
