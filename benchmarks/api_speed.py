"""The public calls' speed in the working tree and in an earlier commit, side by side in one run.

A change of the API surface (settings objects, options, private modules) must not slow the
calls users make. This script checks out ``--baseline`` into a temporary ``git worktree`` and
times the same operations in both trees, each in fresh Python processes that alternate tree by
tree (``--rounds`` of them; the best time of each side is kept, a short case timed up to 10 times a
process), on the bundled SummEval data
(16 systems x 100 inputs, 34 metrics) and on WMT-shaped random data (15 systems x 2,000 inputs,
20 metrics). Each process warms up (imports, the first call's compilation) before it times.
The calls are spelled as each tree spells them (the earlier flat keywords, or the settings
objects). Printed: both times, their ratio (current / baseline) and whether it is within 10%.

``--cluster`` times instead what a user runs on a cluster: the shared-task-sized bootstrap (50
metrics x 15 systems x 2,000 inputs, input-level Kendall, BOOT-BOTH, 1,000 draws, the case of
``bench_distributed.py``) and compare (20 metrics, input level, PERM-INPUTS), each process with a
``LocalCluster`` of 2 worker processes of 1 thread (started by nannies, with the allocator
settings they give their workers) and every setting at its default.

``--full`` times the shared-task-sized calls of ``bench_report.py`` and ``bench_multitask.py`` in
one process each, at their defaults: ``report`` on 52 metrics x 14 systems x 1,875 inputs with
missing cells (draws "auto", as the command line runs it) and ``compare`` of 20 metrics on three
language pairs (input-level acc_eq, PERM-BOTH, 1,000 draws).

    python benchmarks/api_speed.py [--baseline REV] [--rounds 3] [--quick] [--cluster | --full]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
TREE = HERE.parent

# One process: time every case on the tree first on sys.path; print {case: seconds} as JSON.
CHILD = r'''
import json, sys, time
import numpy as np
import xcorrstat
assert xcorrstat.__file__.startswith(sys.argv[1]), xcorrstat.__file__
quick = sys.argv[2] == "1"
draws = 200 if quick else 1000
new = hasattr(xcorrstat, "Permutation")
se = xcorrstat.datasets.summeval()
T = "expert_relevance"
se = se[[T] + [v for v in se.data_vars if not v.startswith(("expert", "turker"))]]
rng = np.random.default_rng(0)
latent = rng.normal(size=(15, 2000))
import xarray as xr
data = {f"m{k}": (("system", "input"), latent + rng.normal(scale=0.5 + k / 10, size=latent.shape)) for k in range(20)}
data["human"] = (("system", "input"), np.round(latent + rng.normal(size=latent.shape)))
wm = xr.Dataset(data, coords={"system": [f"s{k}" for k in range(15)], "input": np.arange(2000)})

def boot(ds, target, dims, **kw):
    if new:
        return xcorrstat.bootstrap(ds, target=target, resample=xcorrstat.Bootstrap(dims, n_resamples=draws, rng=0), **kw)
    return xcorrstat.bootstrap(ds, target=target, resample=dims, n_resamples=draws, rng=0, **kw)

def perm(ds, x, y, target, dims, **kw):
    if new:
        return xcorrstat.permutation_test(ds, x=x, y=y, target=target, test=xcorrstat.Permutation(dims, n_resamples=draws, rng=0), **kw)
    return xcorrstat.permutation_test(ds, x=x, y=y, target=target, permute=dims, n_resamples=draws, rng=0, **kw)

def paired(ds, x, y, target, dims, **kw):
    if new:
        return xcorrstat.paired_bootstrap_test(ds, x=x, y=y, target=target, test=xcorrstat.Bootstrap(dims, n_resamples=draws, rng=0), **kw)
    return xcorrstat.paired_bootstrap_test(ds, x=x, y=y, target=target, resample=dims, n_resamples=draws, rng=0, **kw)

def comp(ds, target, dims, **kw):
    if new:
        return xcorrstat.compare(ds, target=target, test=xcorrstat.Permutation(dims, n_resamples=draws, rng=0), **kw)
    return xcorrstat.compare(ds, target=target, permute=dims, n_resamples=draws, rng=0, **kw)

if sys.argv[3] == "2":  # shared-task-sized, as bench_report.py and bench_multitask.py
    sys.path.insert(0, sys.argv[4])
    import bench_multitask, bench_report, os, tempfile
    import pandas as pd
    path = os.path.join(tempfile.mkdtemp(), "scores.csv")
    bench_report.write_file(path, 52, 14, 1875)
    frame = pd.read_csv(path)
    rep = frame.set_index(["system", "doc"]).to_xarray().rename(doc="input")
    for name in bench_report.HUMAN_EXTRA:
        rep[name].attrs["role"] = "human"
    tasks = bench_multitask.data(20, 15, 2000, 3)
    WARM = [lambda: xcorrstat.report(rep.isel(input=slice(0, 60)), target="human_mqm", n_resamples=50, rng=0),
            lambda: comp(tasks.isel(input=slice(0, 60)), "mqm", ("system", "input"), level="input", method="kendall",
                         variant="acc23")]
    CASES = {
        "full report 52 metrics missing cells (auto draws)": lambda: xcorrstat.report(rep, target="human_mqm", rng=0),
        "full compare 20 metrics x 3 tasks acc23 PERM-BOTH": lambda: comp(tasks, "mqm", ("system", "input"), level="input", method="kendall", variant="acc23"),
    }
elif sys.argv[3] == "1":  # on a cluster of 2 worker processes, as bench_distributed.py
    from dask.distributed import Client, LocalCluster
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    client = Client(cluster)
    big = xr.Dataset({f"m{k:02d}": (("system", "input"), rng.normal(size=(15, 2000))) for k in range(50)})
    big["human"] = (("system", "input"), rng.normal(size=(15, 2000)))
    WARM = [lambda: boot(big.isel(input=slice(0, 60)), "human", ("system", "input"), level="input", method="kendall"),
            lambda: comp(wm.isel(input=slice(0, 60)), "human", "input", level="input", method="kendall")]
    CASES = {
        "cluster bootstrap 50 metrics input kendall BOOT-BOTH": lambda: boot(big, "human", ("system", "input"), level="input", method="kendall"),
        "cluster compare wmt input kendall PERM-INPUTS": lambda: comp(wm, "human", "input", level="input", method="kendall"),
    }
else:
  CASES = {
    "correlate summeval 4 levels kendall": lambda: xcorrstat.correlate(se, target=T, level=["system", "input", "global", "within_system"], method="kendall"),
    "bootstrap summeval system pearson BOOT-BOTH": lambda: boot(se, T, ("system", "input")),
    "bootstrap summeval input kendall BOOT-BOTH": lambda: boot(se, T, ("system", "input"), level="input", method="kendall"),
    "bootstrap wmt input kendall BOOT-INPUTS": lambda: boot(wm, "human", "input", level="input", method="kendall"),
    "permutation_test summeval system pearson PERM-BOTH": lambda: perm(se, "qa_eval_f1", "meteor", T, ("system", "input")),
    "permutation_test wmt input kendall PERM-BOTH": lambda: perm(wm, "m0", "m1", "human", ("system", "input"), level="input", method="kendall"),
    "paired_bootstrap_test summeval system kendall": lambda: paired(se, "qa_eval_f1", "meteor", T, ("system", "input"), method="kendall"),
    "compare summeval system pearson PERM-BOTH": lambda: comp(se, T, ("system", "input")),
    "compare wmt input kendall PERM-INPUTS": lambda: comp(wm, "human", "input", level="input", method="kendall"),
    "report summeval 12 metrics": lambda: xcorrstat.report(se[[T] + list(se.data_vars)[1:13]], target=T, n_resamples=draws, rng=0),
  }
  WARM = list(CASES.values())
for f in WARM:  # warm up: imports, compiled loops, caches (the large cases on a slice of their data)
    f()
out = {}
least = 2 if sys.argv[3] == "0" else 1  # a large case is timed once a process
for name, f in CASES.items():
    best, spent, runs = float("inf"), 0.0, 0
    while runs < least or (spent < 2.0 and runs < 10):  # short cases are timed more often: the best of them
        start = time.perf_counter()
        f()
        took = time.perf_counter() - start
        best, spent, runs = min(best, took), spent + took, runs + 1
    out[name] = best
print(json.dumps(out))
'''


def _run(tree: Path, quick: bool, mode: str) -> dict[str, float]:
    env = dict(os.environ, PYTHONPATH=str(tree))
    done = subprocess.run([sys.executable, "-c", CHILD, str(tree), "1" if quick else "0", mode, str(HERE)],
                          capture_output=True, text=True, env=env, cwd=tempfile.gettempdir())
    if done.returncode != 0:
        raise SystemExit(f"the run in {tree} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="HEAD", help="the earlier commit (default HEAD)")
    parser.add_argument("--rounds", type=int, default=3, help="processes per tree, alternating (default 3)")
    parser.add_argument("--quick", action="store_true", help="200 draws instead of 1,000")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--cluster", action="store_true", help="the shared-task-sized calls on a 2-process LocalCluster")
    group.add_argument("--full", action="store_true", help="report and compare at shared-task size, in one process")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="xcorrstat-speed-"))
    base = work / "baseline"
    subprocess.run(["git", "-C", str(TREE), "worktree", "add", "--detach", str(base), args.baseline],
                   check=True, capture_output=True)
    try:
        best: dict[str, dict[str, float]] = {"baseline": {}, "current": {}}
        for _ in range(args.rounds):
            for side, tree in (("baseline", base), ("current", TREE)):
                mode = "2" if args.full else "1" if args.cluster else "0"
                for case, seconds in _run(tree, args.quick, mode).items():
                    best[side][case] = min(seconds, best[side].get(case, float("inf")))
    finally:
        subprocess.run(["git", "-C", str(TREE), "worktree", "remove", "--force", str(base)], capture_output=True)
        shutil.rmtree(work, ignore_errors=True)
    width = max(map(len, best["current"]))
    print(f"{'case':<{width}}  baseline  current  ratio")
    worst = 0.0
    for case, now in best["current"].items():
        then = best["baseline"][case]
        ratio = now / then
        worst = max(worst, ratio)
        print(f"{case:<{width}}  {then:8.3f}  {now:7.3f}  {ratio:5.2f}{'' if ratio <= 1.10 else '  slower'}")
    print(f"slowest ratio {worst:.2f} (goal <= 1.10)")
    return 0 if worst <= 1.10 else 1


if __name__ == "__main__":
    raise SystemExit(main())
