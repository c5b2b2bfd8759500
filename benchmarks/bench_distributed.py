"""Multi-process scaling: the same ``bootstrap`` on a ``LocalCluster`` of 1 and of 2 worker processes.

Data the size of a WMT metrics task (50 metrics x 15 systems x 2,000 inputs, random
scores), BOOT-BOTH, 1,000 draws, at input level by default. For each cluster size the
cluster is started (``LocalCluster(n_workers=n, threads_per_worker=1, processes=True)``),
a short warm-up call runs (so imports and start-up on the workers are excluded), and the
call is timed ``--repeats`` times (the best time is kept). Printed: both times, their
ratio and whether the two clusters gave identical numbers (every variable, bit for bit).
Goal: 2 workers at least 1.6x faster than 1.

    python benchmarks/bench_distributed.py [--level input] [--method kendall] [--k 1000] [--repeats 2]
        [--metrics 50] [--systems 15] [--inputs 2000] [--workers 1 2] [--profile]

``--profile`` prints, per cluster, the number of tasks and their total compute and
transfer time, from the scheduler's task stream.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import resource
import time

import numpy as np
import xarray as xr

import xcorrstat


def wmt_like(n_metrics: int, n_systems: int, n_inputs: int, seed: int = 0) -> xr.Dataset:
    """Random scores: metrics ``metric00 ..`` and the target ``human`` over (system, input)."""
    rng = np.random.default_rng(seed)
    shape = (n_systems, n_inputs)
    ds = xr.Dataset({f"metric{k:02d}": (("system", "input"), rng.normal(size=shape)) for k in range(n_metrics)})
    ds["human"] = (("system", "input"), rng.normal(size=shape))
    return ds


def stream_summary(stream: list[dict]) -> str:
    """Tasks, compute seconds and transfer seconds in a task stream."""
    compute = transfer = 0.0
    for task in stream:
        for part in task.get("startstops", ()):
            span = part["stop"] - part["start"]
            if part["action"] == "compute":
                compute += span
            elif part["action"] == "transfer":
                transfer += span
    return f"{len(stream)} tasks, compute {compute:.1f} s, transfer {transfer:.2f} s"


def cpu_seconds() -> float:
    """User + system CPU seconds of this process so far."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def timed_runs(n_workers: int, ds: xr.Dataset, kw: dict, repeats: int, profile: bool) -> tuple[float, xr.Dataset]:
    """Best wall time of ``repeats`` calls on a fresh cluster of ``n_workers`` processes, and the result.

    Each run also prints the CPU seconds of every worker and of this process (which runs the
    scheduler of a LocalCluster) and the machine's load average: on a shared machine, a wall
    time well above the busiest worker's CPU time means other processes took the cores.
    """
    from dask.distributed import Client, LocalCluster, get_task_stream

    with LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        warm = dataclasses.replace(kw["resample"], n_resamples=40)
        xcorrstat.bootstrap(ds, **dict(kw, resample=warm))  # warm-up: imports on the workers
        best, result = float("inf"), None
        for _ in range(repeats):
            before, here = client.run(cpu_seconds), cpu_seconds()
            with get_task_stream() as stream:
                start = time.perf_counter()
                result = xcorrstat.bootstrap(ds, **kw)
                wall = time.perf_counter() - start
            after, here = client.run(cpu_seconds), cpu_seconds() - here
            best = min(best, wall)
            workers = ", ".join(f"{after[w] - before[w]:.1f}" for w in sorted(after))
            print(f"  {n_workers} worker(s): {wall:.2f} s; CPU s of the workers {workers}, of this process "
                  f"{here:.1f}; load average {os.getloadavg()[0]:.1f}")
            if profile:
                print(f"    {stream_summary(stream.data)}")
    assert result is not None
    return best, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--level", default="input")
    parser.add_argument("--method", default="kendall")
    parser.add_argument("--k", type=int, default=1000, help="n_resamples")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--metrics", type=int, default=50)
    parser.add_argument("--systems", type=int, default=15)
    parser.add_argument("--inputs", type=int, default=2000)
    parser.add_argument("--workers", type=int, nargs=2, default=[1, 2])
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    ds = wmt_like(args.metrics, args.systems, args.inputs)
    kw = dict(target="human", level=args.level, method=args.method,
              resample=xcorrstat.Bootstrap(("system", "input"), n_resamples=args.k, rng=0))
    print(f"bootstrap(level={args.level!r}, method={args.method!r}, resample=Bootstrap(('system', 'input'), "
          f"n_resamples={args.k:,})): {args.metrics} metrics x {args.systems} systems x {args.inputs:,} inputs")
    times, results = [], []
    for n in args.workers:
        seconds, res = timed_runs(n, ds, kw, args.repeats, args.profile)
        times.append(seconds)
        results.append(res)
        print(f"{n} worker process(es), 1 thread each: {seconds:.2f} s")
    same = results[0].identical(results[1])
    print(f"speed-up {args.workers[1]} vs {args.workers[0]} workers: {times[0] / times[1]:.2f}x; "
          f"identical numbers: {same}")


if __name__ == "__main__":
    main()
