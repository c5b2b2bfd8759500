"""docs/missing-values.md runs top to bottom as written and prints what the page shows (the rules of
missing values, empty units and exact ratios of counts, on its worked examples)."""

from __future__ import annotations

import os

from docs_runner import page_blocks, run_page

PAGE = os.path.join(os.path.dirname(__file__), os.pardir, "docs", "missing-values.md")


def test_missing_values_page_runs_as_written(tmp_path):
    ran = run_page(PAGE, str(tmp_path))
    assert ran == sum(b.lang == "python" for b in page_blocks(PAGE)) >= 10
