"""``xcorrstat report`` on a WMT-shaped file of 52 metrics: wall time, peak memory, and its clusters
against those of a fixed 20,000-draw run.

The file: 14 systems x 1,875 segments, a latent quality per (system, segment); 52 metrics that are
noisy copies of it (1% of each metric's cells missing at random), the target ``human_mqm`` (an
MQM-like score: minus a count of errors, many ties, 30% of its cells missing) and four other human
columns with gaps of their own (``human_da``, ``human_esa``, ``human_sqm``, ``human_mqm_raw``), left
in the file as a user would. It has the missing-cell patterns of a real WMT table (WMT22 zh-en's
``mqm``), which cells missing at random lack: two systems the target does not rate; a last
system (a human reference) that four metrics do not score (those computed against it); a few
segments where every output the target rates has no error (the target takes one value there,
so every swap's correlation is undefined), and a few where only the reference has one, so the
target is constant over the cells of the metrics that miss the reference; and one segment
missing for one metric. The report runs as a user runs it, in a fresh process:

    xcorrstat report FILE --target human_mqm --out DIR --quiet

and prints its wall time, its CPU time and peak resident set size (goals: under 5 minutes and 2 GiB),
and the draws its header states (docs/speed.md, "The report at its defaults", keeps the figure). Then ``compare`` with a fixed 20,000 draws (same seed, same correction)
gives each level's clusters; the script prints how many metrics have the same cluster in both.

    python benchmarks/bench_report.py [--metrics 52] [--systems 14] [--inputs 1875] [--fixed 20000]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np
import pandas as pd

GiB = 2**30
HUMAN_EXTRA = ("human_da", "human_esa", "human_sqm", "human_mqm_raw")


def write_file(path: str, n_metrics: int, n_systems: int, n_inputs: int) -> None:
    """The WMT-shaped CSV described in the module docstring."""
    rng = np.random.default_rng(2024)
    latent = rng.normal(size=(n_systems, n_inputs)) + rng.normal(scale=0.6, size=(n_systems, 1))
    rows = {"system": np.repeat([f"sys{j:02d}" for j in range(n_systems)], n_inputs),
            "doc": np.tile([f"seg{j:04d}" for j in range(n_inputs)], n_systems)}
    errors = np.clip(np.round(2.0 - latent + rng.normal(scale=0.8, size=latent.shape)), 0, None)
    flawless = rng.choice(n_inputs, size=2 * max(1, n_inputs // 375), replace=False)  # 5 + 5 of 1,875 (as WMT22)
    errors[:, flawless] = 0.0
    errors[-1, flawless[flawless.size // 2:]] = 1.0  # ... but for the reference, on half of them
    mqm = -errors
    mqm[rng.random(mqm.shape) < 0.30] = np.nan
    mqm[-1, flawless] = -errors[-1, flawless]  # the reference rated on those segments
    mqm[[0, n_systems // 2]] = np.nan  # systems the target does not rate
    rows["human_mqm"] = mqm.ravel()
    for k, name in enumerate(HUMAN_EXTRA):
        other = latent + rng.normal(scale=0.5 + 0.3 * k, size=latent.shape)
        other[rng.random(other.shape) < 0.2 + 0.1 * k] = np.nan
        rows[name] = other.ravel()
    noise = np.linspace(0.2, 4.0, n_metrics)
    for j in range(n_metrics):
        values = latent + noise[j] * rng.normal(size=latent.shape)
        if j % 13 == 12:  # a few metrics that disagree with the humans
            values = -values
        values[rng.random(values.shape) < 0.01] = np.nan
        if j % 13 == 5:  # a metric computed against the reference does not score it
            values[-1] = np.nan
        if j == 7:  # a segment missing for one metric
            values[:, n_inputs // 3] = np.nan
        rows[f"metric{j:02d}"] = values.ravel()
    pd.DataFrame(rows).to_csv(path, index=False, float_format="%.6g")


def run_report(path: str, out: str) -> tuple[float, float, int, str]:
    """The CLI report in a child process: wall time (s), its CPU time (s), the child's peak RSS (bytes), its stdout."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "xcorrstat", "report", path, "--target", "human_mqm", "--out", out,
                           "--quiet"], capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode:
        raise RuntimeError(proc.stderr)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall, cpu, after.ru_maxrss * 1024, proc.stdout  # ru_maxrss: KiB on Linux


def fixed_clusters(path: str, levels: list[str], n_resamples: int) -> pd.DataFrame:
    """Each level's clusters from compare() with a fixed number of draws (the report's seed and correction)."""
    import xcorrstat

    frame = pd.read_csv(path)
    ds = frame.set_index(["system", "doc"]).to_xarray().rename(doc="input")
    ds = ds.drop_vars(list(HUMAN_EXTRA))
    out = []
    for level in levels:
        res = xcorrstat.compare(ds, target="human_mqm", level=level,
                                test=xcorrstat.Permutation(n_resamples=n_resamples, rng=0))
        out.append(pd.DataFrame({"level": level, "metric": res["metric"].values,
                                 "cluster_fixed": res["cluster"].values}))
    return pd.concat(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--metrics", type=int, default=52)
    parser.add_argument("--systems", type=int, default=14)
    parser.add_argument("--inputs", type=int, default=1875)
    parser.add_argument("--fixed", type=int, default=20_000, help="draws of the fixed run (0: skip it)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "scores.csv")
        write_file(path, args.metrics, args.systems, args.inputs)
        out = os.path.join(tmp, "report")
        wall, cpu, peak, stdout = run_report(path, out)
        header = [line for line in stdout.splitlines() if "resamples" in line or "draws" in line]
        print(f"xcorrstat report: {args.metrics} metrics x {args.systems} systems x {args.inputs:,} inputs "
              f"(+ {len(HUMAN_EXTRA)} other human columns with gaps)")
        print(f"  wall {wall:.1f} s (goal < 300 s: {'ok' if wall < 300 else 'OVER'}), CPU {cpu:.1f} s, peak RSS {peak / GiB:.2f} GiB "
              f"(goal < 2 GiB: {'ok' if peak < 2 * GiB else 'OVER'})")
        for line in header[:3]:
            print(f"  header: {line.strip()}")
        table = pd.read_csv(os.path.join(out, "correlations.csv"))
        if args.fixed:
            start = time.perf_counter()
            fixed = fixed_clusters(path, sorted(set(table["level"])), args.fixed)
            both = table.merge(fixed, on=["level", "metric"])
            same = (both["cluster"] == both["cluster_fixed"]).groupby(both["level"]).agg(["sum", "size"])
            print(f"  fixed run of {args.fixed:,} draws ({time.perf_counter() - start:.0f} s):")
            for level, row in same.iterrows():
                print(f"    {level}: {row['sum']} of {row['size']} metrics in the same cluster "
                      f"({both[both.level == level]['cluster'].max()} clusters in the report)")
            diff = both[both["cluster"] != both["cluster_fixed"]]
            if len(diff):
                print(diff[["level", "metric", "correlation", "cluster", "cluster_fixed"]].to_string(index=False))


if __name__ == "__main__":
    main()
