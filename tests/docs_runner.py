"""Run a documentation page top to bottom, as a reader would, and check what it prints.

:func:`page_blocks` reads the fenced code blocks of a MyST page in order. :func:`run_page` runs
them in one namespace in a given folder: ```` ```python ```` blocks with ``exec`` (stdout
captured), ```` ```bash ```` lines that start with ``xcorrstat`` as ``python -m xcorrstat`` in a
subprocess (which must exit 0). A ```` ```text ```` block right after a code block is what that
block prints: the output must equal it (trailing spaces ignored). Other blocks (``json``, ``{...}``
directives) are not run.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass

FENCE = re.compile(r"^```(\S*)\s*$")


@dataclass
class Block:
    lang: str
    code: str
    line: int  # 1-based line of the opening fence
    expected: str | None = None  # the text block after it, if any


def page_blocks(path: str) -> list[Block]:
    """The page's fenced blocks, each code block with the text block that follows it."""
    blocks: list[Block] = []
    lang, start, lines = None, 0, []
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            match = FENCE.match(line.rstrip("\n"))
            if lang is None and match and match.group(1):
                lang, start, lines = match.group(1), number, []
            elif lang is not None and line.rstrip() == "```":
                blocks.append(Block(lang, "".join(lines), start))
                lang = None
            elif lang is not None:
                lines.append(line)
    out: list[Block] = []
    for block in blocks:
        if block.lang == "text" and out and out[-1].expected is None and out[-1].lang in ("python", "bash"):
            out[-1].expected = block.code
        else:
            out.append(block)
    return out


def _same(got: str, expected: str) -> bool:
    def norm(text: str) -> list[str]:
        return [line.rstrip() for line in text.strip("\n").splitlines()]

    return norm(got) == norm(expected)


def _run_bash(code: str, env: dict[str, str]) -> str:
    out = []
    for line in code.splitlines():
        line = line.split(" #", 1)[0].strip()
        if not line.startswith("xcorrstat"):
            continue
        run = subprocess.run([sys.executable, "-m", *shlex.split(line)], capture_output=True, text=True, env=env)
        assert run.returncode == 0, f"{line!r} exited {run.returncode}: {run.stderr[-2000:]}"
        out.append(run.stdout)
    return "".join(out)


@contextlib.contextmanager
def _inside(folder: str):
    """Work in ``folder`` for a while (contextlib.chdir is Python 3.11+)."""
    here = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(here)


def run_page(path: str, folder: str) -> int:
    """Run the page's blocks in ``folder``; returns how many blocks ran. Fails on the first block that
    raises, exits non-zero or prints other than the page shows."""
    namespace: dict = {"__name__": "__docs__"}
    env = dict(os.environ)
    ran = 0
    with _inside(folder):
        for block in page_blocks(path):
            if block.lang == "python":
                buffer = io.StringIO()
                with contextlib.redirect_stdout(buffer):
                    exec(compile(block.code, f"{path}:{block.line}", "exec"), namespace)
                got = buffer.getvalue()
            elif block.lang == "bash":
                got = _run_bash(block.code, env)
            else:
                continue
            ran += 1
            if block.expected is not None:
                assert _same(got, block.expected), (f"{path}:{block.line} printed\n{got}\nbut the page shows\n"
                                                    f"{block.expected}")
    return ran
