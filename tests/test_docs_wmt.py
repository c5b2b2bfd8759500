"""docs/wmt.md runs top to bottom as written, on a generated tree named as the page names it
(``mt-metrics-eval-v2/wmt23``), and prints what the page shows."""

from __future__ import annotations

import os
import warnings

import numpy as np
from docs_runner import page_blocks, run_page
from mtme_tree import write_mtme_tree

PAGE = os.path.join(os.path.dirname(__file__), os.pardir, "docs", "wmt.md")


def test_wmt_page_runs_as_written(tmp_path):
    write_mtme_tree(tmp_path / "mt-metrics-eval-v2", "wmt23", ["en-de", "he-en", "zh-en"], 5, 24,
                    ["BLEU", "COMET", "MetricX-23", "XCOMET-Ensemble", "MyMetric", "lendiff"], ["refA", "refB"],
                    ["mqm"], np.random.default_rng(7), noref_metrics=["CometKiwi", "MetricX-23-QE"],
                    levels=("seg", "domain", "sys"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ran = run_page(PAGE, str(tmp_path))
    assert ran == sum(b.lang in ("python", "bash") for b in page_blocks(PAGE)) >= 6
    assert sorted(os.listdir(tmp_path / "wmt23-results")) == ["pairs.csv", "ranking.csv", "table.md", "table.tex",
                                                             "tasks.csv", "xcorrstat-wmt-manifest.json"]
