"""Peak memory and wall time of ``compare`` with missing cells, against the same runs on complete data.

Each case runs in a fresh subprocess, which reports the wall time of the call and its peak
resident set size (``resource.getrusage(RUSAGE_SELF).ru_maxrss``). The data: a latent quality
per (system, input), metrics that are noisy copies of it and a human score that is the latent
score plus noise; with missing cells, 30% of the human column's cells and 1% of each metric's
cells are missing at random (every metric its own cells). The default shape is 52 metrics x 14
systems x 1,875 inputs, 1,000 draws: ``compare`` (permutation test, PERM-BOTH) at system and
input level, Pearson and Kendall's tau-b, at the default budget and at 256 MiB.

Each case prints its peak RSS against ``budget + 300 MiB`` and its time as a ratio to the same
run on complete data (goals: within the budget + 300 MiB, within 2x); then system-level
Kendall's time as a ratio to system-level Pearson's (goal: within 2x).

    python benchmarks/bench_missing.py [--quick] [--metrics 52] [--systems 14] [--inputs 1875] [--k 1000]
        [--levels system,input] [--methods pearson,kendall]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

MiB = 2**20
ALLOWANCE = 300 * MiB
DEFAULT_BUDGET = 2**30

CHILD = r"""
import json, resource, sys, time
import numpy as np
import xarray as xr
import xcorrstat

n_metrics, n_systems, n_inputs, k, level, method, budget, missing = json.loads(sys.argv[1])
rng = np.random.default_rng(12345)
latent = rng.normal(size=(n_systems, n_inputs)) + rng.normal(size=(n_systems, 1))
noise = rng.uniform(0.3, 2.0, size=n_metrics)
dims = ("system", "input")
data = {}
for j in range(n_metrics):
    values = latent + noise[j] * rng.normal(size=latent.shape)
    if missing:
        values[rng.random(latent.shape) < 0.01] = np.nan
    data[f"m{j:02d}"] = (dims, values)
human = latent + rng.normal(size=latent.shape)
if missing:
    human[rng.random(latent.shape) < 0.30] = np.nan
data["human"] = (dims, human)
coords = {"system": [f"S{j}" for j in range(n_systems)], "input": [f"doc{j}" for j in range(n_inputs)]}
ds = xr.Dataset(data, coords=coords)
start = time.perf_counter()
with xcorrstat.set_options(memory_budget=budget):
    res = xcorrstat.compare(ds, target="human", level=level, method=method, variant="b",
                            test=xcorrstat.Permutation(("system", "input"), n_resamples=k, rng=0))
    res = res.compute()
wall = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux
print(json.dumps({"wall_s": wall, "peak_rss": peak, "finite": int(np.isfinite(res["pvalue"].values).sum())}))
"""


def run(metrics: int, systems: int, inputs: int, k: int, level: str, method: str, budget: int,
        missing: bool) -> dict:
    """One case in a fresh interpreter: its wall time (s) and peak RSS (bytes)."""
    args = json.dumps([metrics, systems, inputs, k, level, method, budget, int(missing)])
    proc = subprocess.run([sys.executable, "-c", CHILD, args], capture_output=True, text=True)
    if proc.returncode:
        raise RuntimeError(proc.stderr)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _line(label: str, res: dict, budget: int, base: dict | None) -> str:
    limit = budget + ALLOWANCE
    rss = res["peak_rss"]
    verdict = "ok" if rss <= limit else "OVER"
    ratio = "" if base is None else f", {res['wall_s'] / base['wall_s']:.2f}x the complete-data time"
    return (f"{label:<44} wall {res['wall_s']:7.2f} s, peak RSS {rss / MiB:7.0f} MiB "
            f"(limit {limit / MiB:.0f} MiB: {verdict}){ratio}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small shape: 12 metrics x 8 systems x 400 inputs")
    parser.add_argument("--metrics", type=int, default=52)
    parser.add_argument("--systems", type=int, default=14)
    parser.add_argument("--inputs", type=int, default=1875)
    parser.add_argument("--k", type=int, default=1000, help="n_resamples")
    parser.add_argument("--levels", default="system,input")
    parser.add_argument("--methods", default="pearson,kendall")
    args = parser.parse_args()
    if args.quick:
        args.metrics, args.systems, args.inputs = 12, 8, 400
    shape = (args.metrics, args.systems, args.inputs, args.k)
    print(f"compare(test=Permutation(('system', 'input'), n_resamples={args.k:,})): {args.metrics} metrics "
          f"x {args.systems} systems x {args.inputs:,} inputs; missing: 30% of the target, 1% of each metric")
    times: dict[tuple[str, str, int, bool], dict] = {}
    for level in args.levels.split(","):
        for method in args.methods.split(","):
            for budget in (DEFAULT_BUDGET, 256 * MiB):
                complete = run(*shape, level, method, budget, False)
                gaps = run(*shape, level, method, budget, True)
                times[level, method, budget, False], times[level, method, budget, True] = complete, gaps
                name = f"{level} {method}, budget {budget // MiB} MiB"
                print(_line(f"{name}, complete", complete, budget, None))
                print(_line(f"{name}, missing cells", gaps, budget, complete))
    for missing in (False, True):
        pearson = times.get(("system", "pearson", DEFAULT_BUDGET, missing))
        kendall = times.get(("system", "kendall", DEFAULT_BUDGET, missing))
        if pearson and kendall:
            what = "missing cells" if missing else "complete data"
            print(f"system-level Kendall / Pearson time, {what}: {kendall['wall_s'] / pearson['wall_s']:.2f}x "
                  f"({kendall['wall_s']:.2f} s / {pearson['wall_s']:.2f} s)")


if __name__ == "__main__":
    main()
