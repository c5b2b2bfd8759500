"""``xcorrstat wmt`` on a tree with one language pair lacking its system-level metric files: the tasks that
read those files are skipped with one line each, the others run, the tables list the skipped ones, exit 0."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
from mtme_tree import write_wmt_tree

SKIPPED = ["en-de,he-en,zh-en sys accuracy +human", "he-en sys pearson +human"]


def test_a_tree_without_system_files_runs_the_other_tasks(tmp_path):
    write_wmt_tree(tmp_path, "wmt23", np.random.default_rng(3), k_systems=4, n_segments=20, n_docs=4,
                   no_sys_metrics_lp="he-en")
    out = tmp_path / "out"
    run = subprocess.run([sys.executable, "-m", "xcorrstat", "wmt", str(tmp_path), "--testset", "wmt23",
                          "--n-resamples", "0", "--out", str(out)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    lines = [line for line in run.stderr.splitlines() if "skipped task" in line]
    assert [line.split("'")[1] for line in lines] == SKIPPED
    assert all("no sys-level metric scores for he-en" in line for line in lines)
    tasks = pd.read_csv(out / "tasks.csv")
    skipped = tasks.groupby("task")["skipped"].first().fillna("")
    assert sorted(skipped[skipped != ""].index) == sorted(SKIPPED)
    assert len(skipped) == 10  # the WMT23 list: 8 tasks ran
    ran = tasks[tasks["task"].isin(skipped[skipped == ""].index)]
    assert ran["correlation"].notna().all()
    for name in ("table.md", "table.tex"):
        text = (out / name).read_text(encoding="utf-8")
        assert all(task in text for task in SKIPPED), name
    assert all(f"Skipped task {task}" in run.stdout for task in SKIPPED)
