"""``xcorrstat wmt`` end to end on a WMT-sized test set: read, run the WMT23 tasks, print the table.

Writes, in a temporary folder, a test set ``wmt23`` in mt-metrics-eval's layout (tests/mtme_tree.py):
the 3 language pairs of WMT23 (en-de, he-en, zh-en), each with 15 MT systems plus the alternative
reference scored as a system, 2,000 segments, 20 metrics x (refA, refB), 2 human scores (``mqm`` with
10% ``None``, ``wmt-raw``), segment- and system-level files. Then it times ``read_mtme`` and the whole
command ``xcorrstat wmt ROOT --testset wmt23 --n-resamples 1000`` in a fresh process (the WMT23 task
list: 10 tasks, 1,000 draws each). Goals: reading < 5 s, the command < 2 minutes on 2 cores.
``--testset wmt24`` writes WMT24's language pairs (en-de, en-es, ja-zh) and runs its task list
(per pair: soft pairwise accuracy with its permutation test, and item-wise acc_eq).

    python benchmarks/bench_wmt.py [--testset wmt23] [--segments 2000] [--systems 15] [--metrics 20] [--k 1000]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from xcorrstat.io.mtme import read_mtme
from xcorrstat.wmt import protocol, protocols

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "tests"))
from mtme_tree import write_mtme_tree  # the tree writer of the tests


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--testset", default="wmt23", choices=protocols(), help="task list and language pairs")
    parser.add_argument("--segments", type=int, default=2000, help="segments per language pair")
    parser.add_argument("--systems", type=int, default=15, help="MT systems per language pair")
    parser.add_argument("--metrics", type=int, default=20, help="metrics, each with refA and refB")
    parser.add_argument("--k", type=int, default=1000, help="draws of every task's test")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as root:
        lps = protocol(args.testset)["lps"]
        write_mtme_tree(root, args.testset, lps, args.systems, args.segments,
                        [f"metric{k:02d}" for k in range(args.metrics)], ["refA", "refB"], ["mqm", "wmt-raw"],
                        np.random.default_rng(0), n_docs=20, text=False, none_frac=0.1)
        start = time.perf_counter()
        ds = read_mtme(root, args.testset)
        print(f"read_mtme: {time.perf_counter() - start:.2f} s, {dict(ds.sizes)}, {len(ds.data_vars)} variables")
        command = [sys.executable, "-m", "xcorrstat", "wmt", root, "--testset", args.testset,
                   "--n-resamples", str(args.k), "--all-metrics"]
        start = time.perf_counter()
        run = subprocess.run(command, capture_output=True, text=True)
        wall = time.perf_counter() - start
        if run.returncode:
            sys.exit(run.stderr)
        print(run.stdout.splitlines()[0])
        print("\n".join(run.stdout.splitlines()[1:4]))
        print(f"xcorrstat wmt --testset {args.testset} --n-resamples {args.k}: {wall:.1f} s "
              f"({len(run.stdout.splitlines()) - 1} metrics ranked; goal < 120 s)")


if __name__ == "__main__":
    main()
