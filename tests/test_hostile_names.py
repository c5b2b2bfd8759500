"""Every output shows the hostile names of hostile_names.py as text, in the right cell, under distinct labels.

The outputs: ``xcorrstat correlate`` (table, CSV, JSON), ``xcorrstat report`` (``--table-format
text|markdown|latex`` and its files: CSV, JSON, HTML, SVG), ``xcorrstat wmt`` (its tables and
files) and the Python table functions. Each is read back by a parser of its own format
(hostile_outputs.py); the names a reader must see are written out in hostile_names.py.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from conftest import make_scores
from hostile_names import FILE_NAMES, HOSTILE, LONG_MIDDLES, LONG_TAILS
from hostile_outputs import (REPORT_ROW, correlate_row, html_page, latex_rows, markdown_tables, raw_controls,
                             right_column)
from mtme_tree import write_mtme_tree

import xcorrstat
from xcorrstat._cli import main

NAMES = list(HOSTILE)
WIDTH = 40  # the longest label of a terminal table or a figure
MARKS = ("", "_", "*")  # the wmt tables mark baselines and contrastive metrics
pytest.importorskip("markdown_it")


def run(argv: list[str]) -> str:
    """``xcorrstat ARGV``'s standard output; fails on a non-zero exit code."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    assert code == 0, err.getvalue()
    return out.getvalue()


@pytest.fixture(scope="module")
def scores():
    ds = make_scores(n_metrics=len(NAMES), n_systems=6, n_inputs=8, seed=3)
    return ds.rename({f"m{k}": name for k, name in enumerate(NAMES)})


@pytest.fixture(scope="module")
def data_file(tmp_path_factory, scores):
    """The scores as JSON lines (a CSV header cannot hold a carriage return for the reader)."""
    path = tmp_path_factory.mktemp("data") / "scores.jsonl"
    scores.to_dataframe().reset_index().to_json(path, orient="records", lines=True)
    return str(path)


@pytest.fixture(scope="module")
def report_run(tmp_path_factory, data_file):
    """``xcorrstat report`` with its files: (the text table, the folder)."""
    out = tmp_path_factory.mktemp("report") / "rep"
    text = run(["report", data_file, "--target", "human", "--n-resamples", "20", "--out", str(out), "--quiet",
                "--formats", "svg"])
    return text, out


@pytest.fixture(scope="module")
def system_oracle(scores):
    """Each name's system-level Pearson correlation, from numpy on the system means."""
    human = scores["human"].mean("input").values
    return {name: np.corrcoef(scores[name].mean("input").values, human)[0, 1] for name in NAMES}


@pytest.fixture(scope="module")
def wmt_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("mtme")
    write_mtme_tree(root, "wmt23", ["en-de"], 5, 24, FILE_NAMES, ["refA", "refB"], ["mqm"],
                    np.random.default_rng(2))
    return str(root)


def wmt(root: str, *options: str) -> str:
    return run(["wmt", root, "--testset", "wmt23", "--lps", "en-de", "--all-metrics", "--n-resamples", "20",
                "--quiet", *options])


def explains(label: str, visible: str, width: int | None) -> bool:
    """Whether ``label`` shows the name whose visible form is ``visible``: whole, or cut to its start and end
    (or to its start and a tag of its hash) in at most ``width`` characters."""
    if width is None or len(visible) <= width:
        return label == visible
    head, cut, tail = label.partition("...")
    tail = re.sub(r"~[0-9a-f]{6,}$", "", tail)
    return bool(cut) and len(label) <= width and len(head) >= width // 2 and visible.startswith(head) \
        and visible.endswith(tail)


def check_labels(labels: list[str], names: list[str], width: int | None, marks=("",), padded=True) -> None:
    """``labels`` are distinct, one per name, each showing a name and each name shown. Without ``padded`` the
    labels were read from a text table, where a name's trailing spaces cannot be told from the padding."""
    assert len(labels) == len(names) == len(set(labels))
    forms = {n: [m + HOSTILE[n] if padded else (m + HOSTILE[n]).rstrip(" ") for m in marks] for n in names}
    for label in labels:
        assert not raw_controls(label), label
        assert any(explains(label, v, width) for n in names for v in forms[n]), label
    for name in names:
        assert any(explains(label, v, width) for label in labels for v in forms[name]), name


def test_the_corpus_is_as_described():
    assert len(set(HOSTILE.values())) == len(HOSTILE)
    assert all(len(n) >= 60 for n in LONG_TAILS + LONG_MIDDLES)
    assert len({n[:-1] for n in LONG_TAILS}) == 1


# -- terminal text --------------------------------------------------------------------------------


def test_report_text_table(report_run):
    text, _ = report_run
    assert not raw_controls(text)
    blocks = text.split("\n\n")[1:]
    assert len(blocks) == 2  # the system and the input level
    for block in blocks:
        rows = [REPORT_ROW.match(line) for line in block.splitlines()[2:]]
        assert all(rows), block
        check_labels([r["label"] for r in rows], NAMES, WIDTH, padded=False)


def test_correlate_text_table(data_file, system_oracle):
    text = run(["correlate", data_file, "--target", "human", "--level", "system", "input"])
    assert not raw_controls(text)
    lines = text.splitlines()
    start = next(k for k, line in enumerate(lines) if line.startswith("metric ")) + 1
    rows = [correlate_row(6).match(line) for line in lines[start:] if line.strip()]
    assert all(rows), lines[start:]
    check_labels([r["label"] for r in rows], NAMES, WIDTH, padded=False)
    for r in rows:  # each label in the row of its name's values (the first column: system-level Pearson)
        shown = [n for n in NAMES if explains(r["label"], HOSTILE[n].rstrip(" "), WIDTH)]
        assert r["numbers"].split()[0] in {f"{system_oracle[n]:.3f}" for n in shown}, r["label"]


def test_wmt_text_table(wmt_root):
    text = wmt(wmt_root)
    assert not raw_controls(text)
    lines = text.split("\n\n")[0].splitlines()
    check_labels(right_column(lines, "Metric"), FILE_NAMES, WIDTH, MARKS, padded=False)


# -- Markdown -------------------------------------------------------------------------------------


def check_markdown(text: str, names: list[str], *, marks=("",), oracle=None) -> None:
    """Every table of ``text`` has one row per name and the header's number of cells; the Metric cells
    render the names' visible forms; no raw HTML, link, image or code anywhere."""
    tables = markdown_tables(text)
    assert tables
    for table in tables:
        header = [cell for cell, _ in table[0]]
        metric = header.index("Metric")
        assert len(table) == 1 + len(names) and all(len(r) == len(header) for r in table)
        check_labels([r[metric][0] for r in table[1:]], names, None, marks)
        assert any(cell[1] for r in table[1:] for cell in r)  # the top cluster in bold
    if oracle is not None:  # the first table is the system level: the values in the names' rows
        by_visible = {HOSTILE[n]: n for n in names}
        for cells in tables[0][1:]:
            assert cells[2][0] == f"{oracle[by_visible[cells[1][0]]]:.3f}"


def test_report_markdown(data_file, system_oracle):
    text = run(["report", data_file, "--target", "human", "--level", "system", "--n-resamples", "20",
                "--table-format", "markdown", "--no-files", "--quiet"])
    check_markdown(text, NAMES, oracle=system_oracle)
    assert not raw_controls(text)


def test_to_markdown_of_a_compare_result(scores, system_oracle):
    res = xcorrstat.compare(scores, target="human", metrics=NAMES, level="system",
                            test=xcorrstat.Permutation(n_resamples=20, rng=0))
    check_markdown(res.corrstat.to_markdown(), NAMES, oracle=system_oracle)
    assert xcorrstat._reporting.tables.format_table(res, "markdown") == res.corrstat.to_markdown()


def test_wmt_markdown(wmt_root, tmp_path):
    shown = wmt(wmt_root, "--table-format", "markdown", "--out", str(tmp_path / "out"))
    check_markdown(shown, FILE_NAMES, marks=MARKS)
    assert (tmp_path / "out" / "table.md").read_text(encoding="utf-8") == shown


def test_markdown_in_python_markdown(data_file):
    """The renderer of MkDocs, which reads ``\\<`` as a backslash and raw HTML."""
    markdown = pytest.importorskip("markdown")
    text = run(["report", data_file, "--target", "human", "--level", "system", "--n-resamples", "20",
                "--table-format", "markdown", "--no-files", "--quiet"])
    page = html_page(markdown.markdown(text, extensions=["tables"]))
    assert set(page.tags) <= {"p", "strong", "table", "thead", "tbody", "tr", "th", "td"}
    assert not [a for a in page.attributes if a != "style"]
    check_labels(page.cells[1::5], NAMES, None)


# -- LaTeX ----------------------------------------------------------------------------------------


def latex_outputs(data_file, scores, wmt_root) -> dict[str, str]:
    res = xcorrstat.compare(scores, target="human", metrics=NAMES, level="system",
                            test=xcorrstat.Permutation(n_resamples=20, rng=0))
    return {"report": run(["report", data_file, "--target", "human", "--level", "system", "--n-resamples", "20",
                           "--table-format", "latex", "--no-files", "--quiet"]),
            "compare": res.corrstat.to_latex(), "wmt": wmt(wmt_root, "--table-format", "latex")}


@pytest.fixture(scope="module")
def latex(data_file, scores, wmt_root):
    return latex_outputs(data_file, scores, wmt_root)


def test_latex_rows_and_escapes(latex):
    for what, tex in latex.items():
        assert not raw_controls(tex), what
        rows = latex_rows(tex)
        assert all(len(r) == len(rows[0]) for r in rows), what
        assert len(rows) == 1 + (len(FILE_NAMES) if what == "wmt" else len(NAMES)), what
        body = "\n".join(line for line in tex.splitlines() if not line.startswith("%"))
        assert "\\input{" not in body and not re.search(r"(?<!\\)[$#%]", body), what


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="no pdflatex on this machine")
def test_latex_compiles(latex, tmp_path):
    body = "\n".join(latex.values())
    doc = ("\\documentclass{article}\n\\usepackage{booktabs}\n\\tracinglostchars=3\n\\begin{document}\n"
           f"{body}\n\\end{{document}}\n")
    (tmp_path / "t.tex").write_text(doc, encoding="utf-8")
    run_tex = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape",
                              "t.tex"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert run_tex.returncode == 0, run_tex.stdout[-3000:]
    assert "Missing character" not in (tmp_path / "t.log").read_text(errors="replace")


# -- data: CSV and JSON keep the exact names ---------------------------------------------------------


def test_correlate_csv_and_json_keep_exact_names(data_file):
    rows = list(csv.DictReader(io.StringIO(run(["correlate", data_file, "--target", "human", "--table-format", "csv"]),
                                           newline="")))
    assert [r["metric"] for r in rows] == NAMES  # formula prefixes too: CSV is data
    text = run(["correlate", data_file, "--target", "human", "--table-format", "json"])
    assert text.isascii() and not raw_controls(text)
    assert list(dict.fromkeys(r["metric"] for r in json.loads(text))) == NAMES


def csv_names(path) -> list[str]:
    with open(path, newline="", encoding="utf-8") as fh:
        return [r["metric"] for r in csv.DictReader(fh)]


def test_report_files_keep_exact_names(report_run):
    _, out = report_run
    doc = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert {r["metric"] for r in doc["correlations"]} == set(NAMES)
    for name in ("correlations.csv", "comparisons.csv"):  # a carriage return too: the file is quoted for it
        assert set(csv_names(out / name)) == set(NAMES), name


def test_wmt_csv_files_keep_exact_names(wmt_root, tmp_path):
    wmt(wmt_root, "--out", str(tmp_path / "out"))
    assert sorted(csv_names(tmp_path / "out" / "ranking.csv")) == sorted(FILE_NAMES)
    assert set(csv_names(tmp_path / "out" / "tasks.csv")) == set(FILE_NAMES)


# -- HTML and SVG ---------------------------------------------------------------------------------


def test_report_html(report_run):
    _, out = report_run
    page = html_page((out / "report.html").read_text(encoding="utf-8"))
    assert "script" not in page.tags and "svg" not in page.tags and page.tags.count("img") == 2
    assert not [a for a in page.attributes if a.startswith("on")]
    shown = set(page.cells)
    assert all(HOSTILE[n] in shown for n in NAMES)  # full names, control characters escaped


def test_report_svgs(report_run):
    _, out = report_run
    for name in ("ci.svg", "significance.svg"):
        root = ET.parse(out / name).getroot()
        tags = {el.tag.rpartition("}")[2] for el in root.iter()}
        assert not tags & {"script", "foreignObject", "a", "iframe"}, name
        assert not [k for el in root.iter() for k in el.attrib if k.lower().startswith("on")], name


def test_figure_labels_are_distinct(scores):
    rep = xcorrstat.report(scores, target="human", level=["system"], n_resamples=20, rng=0)
    figures = rep.figures()
    try:
        for fig in figures.values():
            fig.canvas.draw()
        ticks = {"ci": figures["ci"].axes[0].get_yticklabels(),
                 "significance": figures["significance"].axes[0].get_xticklabels()}
        for what, labels in ticks.items():
            texts = [t._preprocess_math(t.get_text()) for t in labels]
            assert not [s for s, math in texts if math], what  # drawn literally: no mathtext
            check_labels([s for s, _ in texts], NAMES, WIDTH)
    finally:
        import matplotlib.pyplot as plt

        for fig in figures.values():
            plt.close(fig)
