"""Bootstrap CIs: xcorrstat vs nlpstats 0.0.1, side by side in one run; WMT-sized timing and memory.

Installs nlpstats 0.0.1 from PyPI into a throw-away virtual environment (or uses
``--baseline-python``), then times, on the same random matrices and 1,000 draws:

* BOOT-BOTH input-level Kendall at 16 x 100 and 58 x 48 (goal: >= 300x nlpstats);
* BOOT-BOTH system-level Pearson at 16 x 100 (goal: >= 30x);

and, in a child process so its peak memory is its own, WMT-sized data (50 metrics x
15 systems x 2,000 inputs, 1,000 draws, BOOT-BOTH, system + input level Kendall;
goal: under 30 s with peak memory under 2 GiB at the default batch). ``--wmt-batch 25 400`` runs
the input level of that case again at each ``set_options(batch=...)`` given, a child process each:
the time and peak memory of docs/scale-out.md's table of batches (``--skip-small`` leaves out the
cases before it).

    python benchmarks/bench_bootstrap.py [--baseline-resamples 1000] [--skip-baseline] [--skip-small]
        [--wmt-batch 25 400]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import textwrap
import time

import numpy as np
import xarray as xr

import xcorrstat
from peers import baseline_python  # benchmarks/peers.py

N_RESAMPLES = 1000
CASES = [  # (label, systems, inputs, level, method)
    ("input-level Kendall 16x100", 16, 100, "input", "kendall"),
    ("input-level Kendall 58x48", 58, 48, "input", "kendall"),
    ("system-level Pearson 16x100", 16, 100, "system", "pearson"),
]
GOALS = {"input": 300, "system": 30}

BASELINE = textwrap.dedent(
    """
    import json, sys, time, warnings
    import numpy as np
    from nlpstats.correlations import bootstrap
    warnings.simplefilter("ignore")
    s, i, level, method, n, seed = json.loads(sys.argv[1])
    rng = np.random.default_rng(seed)
    X, Z = rng.normal(size=(s, i)), rng.normal(size=(s, i))
    t0 = time.perf_counter()
    res = bootstrap(X, Z, level, method, "both", n_resamples=n)
    print(json.dumps({"seconds": time.perf_counter() - t0, "lower": res.lower, "upper": res.upper}))
    """
)

WMT_CHILD = textwrap.dedent(
    """
    import json, resource, sys, time
    import numpy as np, xarray as xr
    import xcorrstat
    batch, levels = json.loads(sys.argv[1])
    rng = np.random.default_rng(0)
    data = {f"m{k}": (("system", "input"), rng.normal(size=(15, 2000))) for k in range(50)}
    data["human"] = (("system", "input"), rng.normal(size=(15, 2000)))
    ds = xr.Dataset(data)
    out = {}
    t0, c0 = time.perf_counter(), time.process_time()
    for level in levels:
        t = time.perf_counter()
        with xcorrstat.set_options(batch=batch):
            res = ds.corrstat.bootstrap(target="human", level=level, method="kendall",
                                        resample=xcorrstat.Bootstrap(n_resamples=1000, rng=1))
        out[level] = time.perf_counter() - t
        out[level + "_batch"] = res.attrs["draws_per_batch"]
    out["total"], out["cpu"] = time.perf_counter() - t0, time.process_time() - c0
    out["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(out))
    """
)


def ours(s, i, level, method, seed):
    rng = np.random.default_rng(seed)
    X, Z = rng.normal(size=(s, i)), rng.normal(size=(s, i))
    ds = xr.Dataset({"metric": (("system", "input"), X), "human": (("system", "input"), Z)})
    times = []
    for _ in range(3):  # best of three: the baseline's run-to-run spread is small next to its time
        t0 = time.perf_counter()
        res = ds.corrstat.bootstrap(target="human", level=level, method=method,
                                    resample=xcorrstat.Bootstrap(("system", "input"), n_resamples=N_RESAMPLES, rng=seed))
        times.append(time.perf_counter() - t0)
    return min(times), float(res["low"][0]), float(res["high"][0])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--baseline-python", help="a Python with nlpstats 0.0.1 installed (default: make one)")
    p.add_argument("--baseline-resamples", type=int, default=N_RESAMPLES,
                   help="draws for the baseline; fewer are scaled linearly to 1,000 (default 1,000)")
    p.add_argument("--skip-baseline", action="store_true")
    p.add_argument("--skip-small", action="store_true", help="only the WMT-sized runs")
    p.add_argument("--wmt-batch", type=int, nargs="*", default=[], help="input-level WMT runs at these batches")
    args = p.parse_args()
    if not args.skip_small:
        small(args)
    wmt(None, ["system", "input"])
    for batch in args.wmt_batch:
        wmt(batch, ["input"])


def small(args: argparse.Namespace) -> None:
    """The cases beside nlpstats."""
    ours(16, 20, "input", "kendall", 0)  # warm-up: imports, thread pools
    python = None if args.skip_baseline else baseline_python(args.baseline_python)
    print(f"xcorrstat {xcorrstat.__version__}; {N_RESAMPLES} draws, BOOT-BOTH, random matrices")
    for k, (label, s, i, level, method) in enumerate(CASES):
        t_ours, lo, hi = ours(s, i, level, method, seed=k)
        line = f"{label:30s} xcorrstat {t_ours:7.3f} s (best of 3)  CI [{lo:+.3f}, {hi:+.3f}]"
        if python:
            cmd = [python, "-c", BASELINE, json.dumps([s, i, level, method, args.baseline_resamples, k])]
            base = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
            t_base = base["seconds"] * N_RESAMPLES / args.baseline_resamples
            scaled = "" if args.baseline_resamples == N_RESAMPLES else " (scaled)"
            line += (f" | nlpstats {t_base:8.2f} s{scaled} CI [{base['lower']:+.3f}, {base['upper']:+.3f}]"
                     f" | speed-up {t_base / t_ours:7.1f}x (goal >= {GOALS[level]}x)")
        print(line, flush=True)


def wmt(batch: int | None, levels: list[str]) -> None:
    """The WMT-sized case in a child process (its peak memory its own), at ``batch`` (None: the default)."""
    child = subprocess.run([sys.executable, "-c", WMT_CHILD, json.dumps([batch, levels])], check=True,
                           capture_output=True, text=True)
    res = json.loads(child.stdout)
    times = ", ".join(f"{lev} {res[lev]:.1f} s (batch {res[lev + '_batch']})" for lev in levels)
    print(f"WMT-sized 50 metrics x 15 systems x 2,000 inputs, Kendall BOOT-BOTH, batch "
          f"{'default' if batch is None else batch}: {times}, total {res['total']:.1f} s, {res['cpu']:.1f} CPU s "
          f"(goal < 30 s); peak RSS {res['peak_rss_mib']:.0f} MiB (goal < 2048)", flush=True)


if __name__ == "__main__":
    main()
