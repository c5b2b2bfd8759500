"""Wide files: time to read a CSV with many metric columns and run one correlate.

Writes CSVs of 16 systems x 100 inputs with 1,000, 5,000 and 20,000 metric columns
(random numbers) plus a human column, then times ``xcorrstat.read`` and one
system-level ``correlate`` of every metric.  Reading and correlating should grow
linearly with the number of columns (goal: 20,000 columns in under 10 s); the last
column of the table is the time per 1,000 columns, which stays flat when growth is
linear. Also printed: the CPU seconds of reading and correlating (all threads), and the peak
resident set size of the process so far (``peak MiB``: the cases run in order of the list, so
give one size per run to see each one's own peak).

    python benchmarks/bench_wide.py [--columns 1000 5000 20000] [--systems 16] [--inputs 100]

docs/data.md's figure for the widest file read (100,000 columns, the reader's limit being 200,000):

    python benchmarks/bench_wide.py --columns 100000 --systems 2 --inputs 2
"""

from __future__ import annotations

import argparse
import os
import resource
import tempfile
import time

import numpy as np
import pandas as pd

import xcorrstat


def write_table(path: str, n_columns: int, *, n_systems: int = 16, n_inputs: int = 100) -> None:
    """A wide CSV: system, input, `n_columns` random metric columns and a human column."""
    rng = np.random.default_rng(0)
    rows = n_systems * n_inputs
    labels = pd.DataFrame({"system": np.repeat([f"sys{k}" for k in range(n_systems)], n_inputs),
                           "input": np.tile([f"doc{k}" for k in range(n_inputs)], n_systems)})
    scores = pd.DataFrame(rng.random((rows, n_columns)).round(6), columns=[f"m{k}" for k in range(n_columns)])
    pd.concat([labels, scores.assign(human=rng.random(rows).round(6))], axis=1).to_csv(path, index=False)


def time_one(path: str) -> tuple[float, float, float]:
    """Seconds to read the file and to correlate every metric at system level, and the CPU seconds of both."""
    cpu = time.process_time()
    start = time.perf_counter()
    ds = xcorrstat.read(path)
    read_s = time.perf_counter() - start
    start = time.perf_counter()
    r = xcorrstat.correlate(ds, target="human", level="system")
    r.values  # noqa: B018 -- make sure the result is computed
    return read_s, time.perf_counter() - start, time.process_time() - cpu


def peak_mib() -> float:
    """The process's peak resident set size so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--columns", type=int, nargs="+", default=[1000, 5000, 20000])
    parser.add_argument("--systems", type=int, default=16)
    parser.add_argument("--inputs", type=int, default=100)
    args = parser.parse_args()
    print(f"{args.systems} systems x {args.inputs} inputs")
    print(f"{'columns':>8} {'read s':>8} {'correlate s':>12} {'total s':>8} {'s per 1k cols':>14} {'CPU s':>7} "
          f"{'peak MiB':>9}")
    with tempfile.TemporaryDirectory() as folder:
        for n in args.columns:
            path = os.path.join(folder, f"wide{n}.csv")
            write_table(path, n, n_systems=args.systems, n_inputs=args.inputs)
            read_s, corr_s, cpu_s = time_one(path)
            total = read_s + corr_s
            print(f"{n:>8} {read_s:>8.2f} {corr_s:>12.2f} {total:>8.2f} {1000 * total / n:>14.3f} {cpu_s:>7.1f} "
                  f"{peak_mib():>9.0f}")


if __name__ == "__main__":
    main()
