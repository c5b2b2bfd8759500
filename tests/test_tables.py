"""Ranked results as LaTeX and Markdown tables (xcorrstat._reporting.tables)."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest
import xarray as xr

import xcorrstat
from xcorrstat._reporting.tables import format_table, ranked_frame, to_latex, to_markdown

METRICS = ["qa_eval_f1", "rouge_2_f1", "meteor", "bertscore_f1"]


@pytest.fixture(scope="module")
def summeval() -> xr.Dataset:
    return xcorrstat.datasets.summeval()


@pytest.fixture(scope="module")
def result(summeval: xr.Dataset) -> xr.Dataset:
    return xcorrstat.compare(summeval, target="expert_relevance", metrics=METRICS, level="system",
                             test=xcorrstat.Permutation(n_resamples=300, rng=1))


@pytest.fixture(scope="module")
def rep(summeval: xr.Dataset) -> xcorrstat.Report:
    return xcorrstat.report(summeval, target="expert_coherence", metrics=METRICS[:3], n_resamples=100, rng=0)


def _markdown_rows(text: str) -> list[list[str]]:
    """Cells of every row of the GitHub-flavoured tables in ``text`` (the separator row included)."""
    rows = []
    for line in text.splitlines():
        if line.startswith("|"):
            assert line.endswith("|"), line
            rows.append([c.strip() for c in line[1:-1].split(" | ")])
    return rows


def test_ranked_frame_order_and_wins(result: xr.Dataset) -> None:
    frame = ranked_frame(result)
    assert sorted(frame["metric"]) == sorted(METRICS)
    # best first: clusters never decrease, and within a cluster correlations never increase
    assert np.all(np.diff(frame["cluster"]) >= 0)
    for _, sub in frame.groupby("cluster"):
        assert np.all(np.diff(sub["correlation"]) <= 0)
    for row in frame.itertuples():
        expected = int(result["significant"].sel(metric=row.metric).sum())
        assert row.wins == expected
        assert row.correlation == float(result["correlation"].sel(metric=row.metric))


def test_markdown_is_a_table_with_the_numbers(result: xr.Dataset) -> None:
    rows = _markdown_rows(to_markdown(result, digits=4))
    header, rule, body = rows[0], rows[1], rows[2:]
    assert header == ["Rank", "Metric", "Correlation", "Wins"]
    assert all(set(c) <= set(":-") and "-" in c for c in rule)
    assert all(len(r) == len(header) for r in rows)
    frame = ranked_frame(result)
    for cells, row in zip(body, frame.itertuples()):
        name = cells[1].strip("*")
        assert name == row.metric
        assert cells[1].startswith("**") == (row.cluster == 1)
        assert cells[0] == str(row.cluster)
        assert cells[2] == f"{row.correlation:.4f}"
        assert cells[3] == str(row.wins)


def test_markdown_renders_with_a_markdown_parser(result: xr.Dataset) -> None:
    markdown_it = pytest.importorskip("markdown_it")
    html = markdown_it.MarkdownIt("commonmark").enable("table").render(to_markdown(result))
    assert html.count("<table>") == 1
    assert html.count("<tr>") == 1 + len(METRICS)
    assert "<strong>" in html


def test_report_tables_have_one_block_per_level(rep: xcorrstat.Report) -> None:
    md = rep.to_markdown()
    assert md.count("**System level**") == 1 and md.count("**Input level**") == 1
    rows = _markdown_rows(md)
    assert rows[0] == ["Rank", "Metric", "Correlation", "95% CI", "Wins"]
    table = rep.table()
    first = table[table["level"] == "system"].sort_values(["cluster", "correlation"],
                                                          ascending=[True, False]).iloc[0]
    assert rows[2][3] == f"[{first['low']:.3f}, {first['high']:.3f}]"
    tex = rep.to_latex()
    assert tex.count(r"\begin{table}") == 2 == tex.count(r"\end{table}")
    assert r"\caption{System level}" in tex and r"95\% CI" in tex


def _odd_names(summeval: xr.Dataset) -> xr.Dataset:
    return summeval[["expert_relevance", "qa_eval_f1", "rouge_2_f1"]].rename(
        {"qa_eval_f1": "qa_f1 & 50% {#1}", "rouge_2_f1": "rouge|2"})


def test_latex_escapes_names_and_marks_the_top_cluster(summeval: xr.Dataset) -> None:
    res = xcorrstat.compare(_odd_names(summeval), target="expert_relevance", level="system",
                            test=xcorrstat.Permutation(n_resamples=200, rng=0))
    tex = to_latex(res)
    assert r"qa\_f1 \& 50\% \{\#1\}" in tex
    assert tex.startswith(r"\begin{tabular}{rlrr}") and r"\toprule" in tex and r"\bottomrule" in tex
    top = ranked_frame(res).iloc[0]
    assert top["cluster"] == 1
    line = next(s for s in tex.splitlines() if s.startswith("1 &"))
    assert r"\bfseries" in line
    md = to_markdown(res)
    assert r"rouge\|2" in md  # a pipe in a name does not split the cell
    assert all(len(r) == 4 for r in _markdown_rows(md))


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="no TeX engine (pdflatex) on this machine")
def test_latex_compiles(tmp_path, rep: xcorrstat.Report, summeval: xr.Dataset) -> None:
    res = xcorrstat.compare(_odd_names(summeval), target="expert_relevance", level="system",
                            test=xcorrstat.Permutation(n_resamples=100, rng=0))
    body = rep.to_latex() + "\n" + to_latex(res)
    doc = "\\documentclass{article}\n\\usepackage{booktabs}\n\\begin{document}\n" + body + "\\end{document}\n"
    (tmp_path / "t.tex").write_text(doc)
    run = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "t.tex"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout[-2000:]
    assert (tmp_path / "t.pdf").exists()


def test_aggregate_tasks_result(summeval: xr.Dataset) -> None:
    two = xr.concat([summeval, summeval], dim="task").assign_coords(task=["a", "b"])
    res = xcorrstat.compare(two, target="expert_relevance", metrics=METRICS[:3], level="system",
                            test=xcorrstat.Permutation(n_resamples=100, rng=0, keep_distribution=True))
    with pytest.raises(ValueError, match=r"dims \['task'\]"):
        ranked_frame(res)
    avg = xcorrstat.aggregate_tasks(res)
    frame = ranked_frame(avg)
    assert list(frame["metric"]) == list(ranked_frame(res.sel(task="a"))["metric"])
    assert "| Rank |" in avg.corrstat.to_markdown()


def test_bad_arguments(result: xr.Dataset, rep: xcorrstat.Report) -> None:
    with pytest.raises(TypeError, match="Report or a compare"):
        ranked_frame(result.to_dataframe())
    with pytest.raises(ValueError, match="'correlation' and 'cluster'"):
        ranked_frame(result.drop_vars("cluster"))
    with pytest.raises(ValueError, match="table_format must be one of"):
        format_table(result, "html")
    with pytest.raises(ValueError, match="needs a Report or a run_tasks"):
        format_table(result, "text")
    with pytest.raises(ValueError, match="digits"):
        to_latex(result, digits=-1)
    assert format_table(rep, "text") == rep.to_text()


def test_cli_table_format(capsys) -> None:
    from xcorrstat._cli import main

    code = main(["report", "--no-files", "--quiet", "--n-resamples", "50", "--metrics", "qa_eval_f1",
                 "rouge_2_f1", "--table-format", "latex"])
    assert code == 0
    out = capsys.readouterr().out
    assert out.count(r"\begin{tabular}") == 2 and r"qa\_eval\_f1" in out
