"""Reading an mt-metrics-eval test set: time of ``read_mtme`` on a WMT-sized folder.

Writes, in a temporary folder, a test set in mt-metrics-eval's layout (tests/mtme_tree.py): 3
language pairs, each with 15 MT systems plus the alternative reference ``refB`` scored as a
system, 2,000 segments in 20 documents, 20 metrics x (refA, refB), 2 human scores (``mqm`` with
10% ``None``, ``wmt-raw``), segment- and system-level files: 252 score files, 3.9 million lines.
Then it times ``read_mtme`` (the first call, and the best and median of ``--repeat`` more) and
prints the Dataset's sizes. Goal: under 5 s. Then it checks the round trip: every number of every
file written equals the Dataset's (NaN where the file says ``None``).

    python benchmarks/bench_read_mtme.py [--repeat 5] [--segments 2000] [--systems 15] [--text]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

import numpy as np

from xcorrstat._io.mtme import read_mtme

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "tests"))
from mtme_tree import write_mtme_tree  # the tree writer of the tests

LPS = ["en-de", "zh-en", "en-ja"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="timed calls after the first (default 5)")
    parser.add_argument("--segments", type=int, default=2000, help="segments per language pair")
    parser.add_argument("--systems", type=int, default=15, help="MT systems per language pair")
    parser.add_argument("--metrics", type=int, default=20, help="metrics, each with refA and refB")
    parser.add_argument("--text", action="store_true", help="also write and read the texts (text=True)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as root:
        start = time.perf_counter()
        tree = write_mtme_tree(root, "wmtbench", LPS, args.systems, args.segments,
                               [f"metric{k:02d}" for k in range(args.metrics)], ["refA", "refB"], ["mqm", "wmt-raw"],
                               np.random.default_rng(0), n_docs=20, text=args.text, none_frac=0.1)
        n_lines = sum(sum(np.size(v) for v in by_sys.values()) for by_sys in tree.scores.values())
        print(f"wrote {len(tree.files)} score files, {n_lines:,} lines, in {time.perf_counter() - start:.1f} s "
              f"(cpus: {len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else os.cpu_count()})")
        times = []
        for _ in range(args.repeat + 1):
            start = time.perf_counter()
            ds = read_mtme(root, "wmtbench", text=args.text)
            times.append(time.perf_counter() - start)
        print(f"read_mtme: first {times[0]:.2f} s, best {min(times[1:] or times):.2f} s, "
              f"median {statistics.median(times[1:] or times):.2f} s over {args.repeat} more calls")
        print(f"Dataset: {dict(ds.sizes)}, {len(ds.data_vars)} variables, {ds.nbytes / 2**20:.0f} MiB")
        checked = round_trip(ds, tree)
        print(f"round trip: {checked:,} numbers in {len(tree.files)} files equal the Dataset's")


def round_trip(ds, tree) -> int:
    """Every number of every file equals the Dataset's (an AssertionError names the file otherwise)."""
    systems = list(ds["system"].values)
    checked = 0
    for (lp, name, level), by_sys in tree.scores.items():
        if level not in ("seg", "sys"):
            continue
        da = ds[name if level == "seg" else f"{name}.{level}"].sel(lp=lp)
        for sys_name, values in by_sys.items():
            row = da.values[systems.index(sys_name)]
            got = row if level == "sys" else row[: tree.n_segments[lp]]
            np.testing.assert_array_equal(got, values, err_msg=tree.files[(lp, name, level)])
            checked += np.size(values)
    return checked


if __name__ == "__main__":
    main()
