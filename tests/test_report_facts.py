"""The report's facts -- draws per phase, open decisions, notes, seed, version, sizes -- are the same in the
command line's header, report.html, report.json, csv-metadata.json and the tables' attrs, and equal to what
the tests computed; the page says what a cluster boundary claims."""

import contextlib
import html
import io
import json
import re
import warnings

import numpy as np
import pandas as pd
import pytest

import xcorrstat
from conftest import make_scores
from xcorrstat._cli import main
from xcorrstat._notes import add_notes
from xcorrstat._significance.auto import OpenDecisionsWarning, draw_schedule, open_decisions
from xcorrstat._significance.defaults import DEFAULTS
from xcorrstat._version import __version__

pytest.importorskip("matplotlib")

#: 12 SummEval metrics: with draws capped at 1,000 many Holm decisions stay open at both levels
METRICS = ["rouge_1_precision", "rouge_1_recall", "rouge_1_f1", "rouge_2_precision", "rouge_2_recall",
           "rouge_2_f1", "rouge_3_precision", "rouge_3_recall", "meteor", "bertscore_recall", "qa_eval_f1",
           "s3_pyr"]
CAP = 1000


def _header(out: str) -> dict[str, str]:
    """The labelled lines of the printed heading (before the first table): label -> sentence."""
    head = out.split("\n\n")[0].splitlines()
    return {line.split(": ", 1)[0]: line.split(": ", 1)[1] for line in head[2:]}


def _files(out_dir):
    page = (out_dir / "report.html").read_text(encoding="utf-8")
    doc = json.loads((out_dir / "report.json").read_text(encoding="utf-8"))
    meta = json.loads((out_dir / "csv-metadata.json").read_text(encoding="utf-8"))
    return page, doc, meta


@pytest.fixture(scope="module")
def open_run(tmp_path_factory):
    """``xcorrstat report`` on 12 SummEval metrics, draws capped at 1,000: decisions stay open (stdout, stderr,
    folder; the fixture is module-scoped, so the output is captured here)."""
    out_dir = tmp_path_factory.mktemp("open") / "rep"
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["report", "--metrics", *METRICS, "--max-resamples", str(CAP), "--out", str(out_dir)])
    assert code == 0, err.getvalue()
    return out.getvalue(), err.getvalue(), out_dir


def _open_flagged(res, cap: int) -> tuple[int, int]:
    """The open decisions of an "auto" result recomputed from its p-values and draws, and how many of them
    are flagged significant: the extreme counts are k = p (b + 1) - 1 (plus-one; no undefined draws here)."""
    p = res["pvalue"].transpose("metric", "other_metric").values
    if "n_resamples_used" in res:
        b = res["n_resamples_used"].transpose("metric", "other_metric").values.astype(float)
    else:  # a rerun test: every pair drew the same
        b = np.full(p.shape, float(res.attrs["n_resamples_used"]))
    k = np.round(p * (b + 1) - 1)
    still = open_decisions(k, b, p, correction="holm", family="row", alternative="greater", alpha=0.05,
                           risk=float(DEFAULTS["risk"].python), n_looks=len(draw_schedule(1000, cap)))
    flagged = res["significant"].transpose("metric", "other_metric").values
    return int(still.sum()), int((still & flagged).sum())


def _oracle(level: str):
    """compare on the same data and settings as the report, its open decisions (recomputed) and how many of
    them are flagged significant."""
    ds = xcorrstat.datasets.summeval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OpenDecisionsWarning)
        res = xcorrstat.compare(ds, target="expert_relevance", metrics=METRICS, level=level,
                                test=xcorrstat.Permutation(max_resamples=CAP, rng=0), correction="holm")
    return (res, *_open_flagged(res, CAP))


def test_open_decisions_are_counted_and_split_by_their_flags():
    for level in ("system", "input"):
        res, n_open, n_flagged = _oracle(level)
        assert res.attrs["n_open"] == n_open > 0
        assert res.attrs["n_open_significant"] == n_flagged
        assert 0 <= n_flagged <= n_open


def test_a_rerun_test_counts_its_open_decisions_as_well():
    ds = xcorrstat.datasets.summeval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OpenDecisionsWarning)
        res = xcorrstat.compare(ds, target="expert_relevance", metrics=METRICS[5:], level="input", method="kendall",
                                test=xcorrstat.Permutation(swap="pairs", max_resamples=CAP, rng=0))
    n_open, n_flagged = _open_flagged(res, CAP)
    assert res.attrs["n_open"] == n_open > 0 and res.attrs["n_open_significant"] == n_flagged


def test_the_page_json_and_csv_metadata_say_what_the_header_says(open_run):
    out, err, out_dir = open_run
    page, doc, meta = _files(out_dir)
    facts = doc["facts"]
    head = _header(out)
    # the header's figures: open decisions in its second line, then the labelled lines
    n_open = int(re.search(r"at most a pair, (\d+) decisions left open\)", out).group(1))
    assert n_open > 0 and facts["open"] == n_open
    assert f"{n_open} of " in head["open decisions"]
    # equal to what the tests computed
    oracles = {lev: _oracle(lev) for lev in ("system", "input")}
    assert n_open == sum(o[1] for o in oracles.values())
    assert facts["open_significant"] == sum(o[2] for o in oracles.values())
    assert f"({facts['open_significant']} flagged significant, {n_open - facts['open_significant']} not)" \
        in head["open decisions"]
    for lev, (res, lev_open, lev_flagged) in oracles.items():
        f = facts["tests"]["levels"][lev]
        used = res["n_resamples_used"].values[np.triu_indices(len(METRICS), 1)]
        assert (f["open"], f["open_significant"]) == (lev_open, lev_flagged)
        assert (f["fewest"], f["most"], f["at_cap"]) == (used.min(), used.max(), int((used == CAP).sum()))
        assert f["pairs"] == len(METRICS) * (len(METRICS) - 1) // 2
        assert f["decisions"] == len(METRICS) * (len(METRICS) - 1)
        assert f"{lev} level {f['fewest']}" in head["draws"]
    # the same sentences on the page (escaped) and in the CSV tables' metadata
    for label in ("draws", "open decisions", "data"):
        assert f"<dt>{label.capitalize()}</dt><dd>{html.escape(head[label])}</dd>" in page
    assert "permutation draws for each pair" in head["draws"] and f"up to {CAP}" in head["draws"]
    header = out.split("\n\n")[0]
    assert meta["dc:description"] == header
    assert meta["notes"] == [facts]
    assert [t["url"] for t in meta["tables"]] == ["correlations.csv", "comparisons.csv"]
    # the seed, the version and the sizes
    assert facts["seed"] == doc["settings"]["rng"] == 0 and "seed 0" in header and "seed 0" in page
    assert facts["xcorrstat"] == __version__ and f"xcorrstat {__version__}" in head["data"]
    assert facts["sizes"] == {"metric": 12, "system": 16, "input": 100}
    assert head["data"].startswith("12 metrics, 16 systems, 100 inputs")
    assert facts["intervals"]["n_resamples"] == 1000
    assert "1000 bootstrap resamples for each interval" in head["draws"]
    # the stderr note gives the same counts, one line per level
    told = [int(n) for n in re.findall(r"note: n_resamples='auto': (\d+) corrected", err)]
    assert sorted(told) == sorted(o[1] for o in oracles.values())


def test_the_pairs_draws_match_the_comparisons_table(open_run):
    _, _, out_dir = open_run
    _, doc, _ = _files(out_dir)
    pairs = pd.read_csv(out_dir / "comparisons.csv")
    for lev, f in doc["facts"]["tests"]["levels"].items():
        used = pairs.loc[pairs["level"] == lev, "n_resamples_used"]
        assert (f["fewest"], f["most"]) == (used.min(), used.max())
        assert f["at_cap"] == int((used == CAP).sum()) // 2  # each unordered pair: two ordered rows


def test_the_page_says_what_a_cluster_boundary_claims(open_run):
    _, _, out_dir = open_run
    page, doc, _ = _files(out_dir)
    note = doc["facts"]["clusters"]
    assert "<strong>Reading a cluster boundary.</strong> " + html.escape(note) in page
    for part in ("no metric in it is significantly better than another member", "alpha = 0.05",
                 "holm correction", "PERM-BOTH", "intervals can overlap", "a few more draws",
                 "With few systems (16 here)"):
        assert part in note


def test_tables_carry_the_facts_in_their_attrs():
    ds = make_scores(n_metrics=3, n_systems=6, n_inputs=8, seed=1)
    rep = xcorrstat.report(ds, target="human", level="system", n_resamples=60, rng=7)
    facts = rep.facts()
    assert rep.table().attrs["facts"] == rep.pairs().attrs["facts"] == facts
    # fixed draws: the tests' draws per pair, nothing open, nothing about open decisions in the heading
    assert facts["tests"]["draws"] == 60 and facts["open"] is None and facts["seed"] == 7
    assert facts["tests"]["levels"]["system"] == {"decisions": 6, "pairs": 3, "fewest": 60, "most": 60}
    text = rep.to_text()
    assert "draws: 60 bootstrap resamples for each interval; 60 permutation draws for each pair's test" in text
    assert "open decisions" not in text and "Open decisions" not in rep._repr_html_()


def test_none_open_says_so(tmp_path):
    metrics = ["qa_eval_f1", "rouge_2_f1", "meteor", "bertscore_recall", "s3_pyr", "rouge_l_f1"]
    rep = xcorrstat.report(xcorrstat.datasets.summeval(), target="expert_relevance", metrics=metrics,
                           level="system", rng=0, test=xcorrstat.Permutation(max_resamples=2000))
    facts = rep.facts()
    assert facts["open"] == 0 == facts["open_significant"] and rep.settings["n_open"] == {"system": 0}
    line = "open decisions: none: every corrected decision at alpha = 0.05 was settled by the cap of 2000 draws"
    assert line in rep.to_text().splitlines()
    rep.save(tmp_path / "rep", formats=["svg"])
    page, doc, _ = _files(tmp_path / "rep")
    assert doc["facts"]["open"] == 0
    assert "<dt>Open decisions</dt><dd>none: every corrected decision" in page


def test_williams_draws_nothing():
    rep = xcorrstat.report(make_scores(n_metrics=3, seed=2), target="human", level="system", n_resamples=50,
                           test="williams", rng=0)
    facts = rep.facts()
    assert facts["tests"]["draws"] is None and facts["open"] is None
    assert "draws: 50 bootstrap resamples for each interval; the williams tests draw nothing" in rep.to_text()


def test_notes_reach_every_file_escaped(tmp_path):
    ds = make_scores(n_metrics=3, n_systems=6, n_inputs=8, seed=3)
    note = "column <b>x</b> & 'y' \x1b[31m left out"
    add_notes(ds.attrs, note)
    rep = xcorrstat.report(ds, target="human", level="system", n_resamples=60, rng=0)
    assert rep.facts()["notes"] == [" ".join(note.split())]
    shown = "column <b>x</b> & 'y' \\x1b[31m left out"
    assert f"note: {shown}" in rep.to_text().splitlines()
    rep.save(tmp_path / "rep", formats=["svg"])
    page, doc, meta = _files(tmp_path / "rep")
    assert doc["facts"]["notes"] == meta["notes"][0]["notes"] == list(rep.notes)
    assert f"note: {shown}" in meta["dc:description"].splitlines()
    assert html.escape(shown) in page and "<b>x</b>" not in page and "\x1b" not in page


def test_the_figures_carry_the_heading_in_their_metadata(open_run):
    from PIL import Image

    out, _, out_dir = open_run
    header = out.split("\n\n")[0]
    for name in ("ci", "significance"):
        with Image.open(out_dir / f"{name}.png") as im:
            assert im.info["Description"] == header
        svg = (out_dir / f"{name}.svg").read_text(encoding="utf-8")
        assert f"<dc:description>{html.escape(header, quote=False)}</dc:description>" in svg
