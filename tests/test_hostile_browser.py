"""No payload of hostile_names.py runs in a browser: report.html, the SVGs and the Markdown tables as HTML.

Headless Chromium loads each page and prints its DOM after the scripts ran. A payload that
runs sets ``data-pwned`` on the page; positive controls (the same payloads written raw, and
the names' Markdown table written without escaping) show that it would. Skipped without
Chromium.
"""

from __future__ import annotations

import contextlib
import io
import shutil
import subprocess

import pytest
from conftest import make_scores
from hostile_names import HOSTILE, PWNED

from xcorrstat._cli import main

BROWSER = next((b for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)
pytestmark = pytest.mark.skipif(BROWSER is None, reason="no headless Chromium on this machine")
NAMES = list(HOSTILE)
PAYLOADS = [n for n in NAMES if "pwned" in n]


def dom(path) -> str:
    """The page's DOM after its scripts ran, as headless Chromium prints it."""
    run = subprocess.run([str(BROWSER), "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=3000",
                          "--dump-dom", path.as_uri()], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    return run.stdout


def page(body: str) -> str:
    return f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>t</title></head><body>{body}</body></html>"


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    """report.html, the SVGs and the report's Markdown table rendered by markdown-it-py (raw HTML allowed)."""
    from markdown_it import MarkdownIt

    folder = tmp_path_factory.mktemp("browser")
    ds = make_scores(n_metrics=len(NAMES), n_systems=6, n_inputs=8, seed=3)
    ds = ds.rename({f"m{k}": name for k, name in enumerate(NAMES)})
    ds.to_dataframe().reset_index().to_json(folder / "scores.jsonl", orient="records", lines=True)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(["report", str(folder / "scores.jsonl"), "--target", "human", "--level", "system",
                     "--n-resamples", "20", "--table-format", "markdown", "--quiet", "--out", str(folder / "rep"),
                     "--formats", "svg"])
    assert code == 0
    (folder / "markdown.html").write_text(page(MarkdownIt("commonmark").enable("table").render(out.getvalue())),
                                          encoding="utf-8")
    return [folder / "rep" / "report.html", folder / "rep" / "ci.svg", folder / "rep" / "significance.svg",
            folder / "markdown.html"]


@pytest.fixture(scope="module")
def controls(tmp_path_factory):
    """Pages that do run the payloads: raw in HTML, raw through markdown-it-py, a script in an SVG."""
    from markdown_it import MarkdownIt

    folder = tmp_path_factory.mktemp("controls")
    raw = "| Metric |\n| :-- |\n" + "".join(f"| {n} |\n" for n in PAYLOADS)
    pages = {"raw.html": page("".join(PAYLOADS)),
             "raw-markdown.html": page(MarkdownIt("commonmark").enable("table").render(raw)),
             "script.svg": "<svg xmlns='http://www.w3.org/2000/svg'><script>"
                           f"document.documentElement.setAttribute('{PWNED}', 'svg')</script></svg>"}
    for name, text in pages.items():
        (folder / name).write_text(text, encoding="utf-8")
    return [folder / name for name in pages]


def test_the_controls_run(controls):
    for path in controls:
        assert f'{PWNED}="' in dom(path), path.name


def test_no_payload_runs(outputs):
    for path in outputs:
        shown = dom(path)
        assert f'{PWNED}="' not in shown, path.name
        assert "<script" not in shown.lower() and "<img src=x" not in shown, path.name
