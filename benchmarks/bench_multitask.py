"""All-pairs permutation tests at WMT size: 20 metrics x 15 systems x 2,000 inputs x 3 tasks, acc_eq.

``compare`` at input level with Kendall's acc_eq (``variant="acc23"``), PERM-BOTH, 1,000 draws,
on data with a ``task`` dim (e.g. three language pairs), each task's pairs tested with the same
draws. Goal: under 5 minutes on 2 cores. Then the same call on a ``distributed.LocalCluster``
(2 workers x 1 thread), checking that its p-values equal the local ones for the same seed.

    python benchmarks/bench_multitask.py [--metrics 20] [--systems 15] [--inputs 2000] [--tasks 3]
                                         [--draws 1000] [--skip-cluster]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import xarray as xr

import xcorrstat


def data(n_met, n_sys, n_inp, n_task, seed=0):
    rng = np.random.default_rng(seed)
    shape = (n_task, n_sys, n_inp)
    # MQM-like gold: mostly 0, some negative error scores; metrics = gold + noise, coarsely rounded (ties)
    gold = -np.round(rng.exponential(1.0, shape) * (rng.random(shape) < 0.3), 0)
    dims = ("task", "system", "input")
    ds = xr.Dataset({"mqm": (dims, gold)},
                    coords={"task": [f"lp{k}" for k in range(n_task)], "system": [f"sys{s}" for s in range(n_sys)],
                            "input": np.arange(n_inp)})
    ds["mqm"].attrs["role"] = "human"
    for k in range(n_met):
        ds[f"metric{k:02d}"] = (dims, np.round(gold + rng.normal(0, 0.4 + 0.05 * k, shape), 1))
    return ds


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--metrics", type=int, default=20)
    p.add_argument("--systems", type=int, default=15)
    p.add_argument("--inputs", type=int, default=2000)
    p.add_argument("--tasks", type=int, default=3)
    p.add_argument("--draws", type=int, default=1000)
    p.add_argument("--skip-cluster", action="store_true")
    args = p.parse_args()
    ds = data(args.metrics, args.systems, args.inputs, args.tasks)
    kw = dict(target="mqm", level="input", method="kendall", variant="acc23",
              test=xcorrstat.Permutation(n_resamples=args.draws, rng=0), correction="holm")
    pairs = args.metrics * (args.metrics - 1) // 2
    start = time.perf_counter()
    local = xcorrstat.compare(ds, **kw)
    elapsed = time.perf_counter() - start
    print(f"{args.metrics} metrics ({pairs} pairs) x {args.systems} systems x {args.inputs} inputs x "
          f"{args.tasks} tasks, acc_eq at input level, PERM-BOTH, {args.draws} draws: {elapsed:.1f} s "
          f"(goal: < 300 s on 2 cores)")
    top = local["correlation"].mean("task").to_series().sort_values(ascending=False).head(3)
    print("best metrics by mean acc_eq over tasks:", {k: round(v, 4) for k, v in top.items()})
    if args.skip_cluster:
        return
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster, Client(cluster):
        start = time.perf_counter()
        remote = xcorrstat.compare(ds, **kw)
        elapsed = time.perf_counter() - start
    same = bool(np.array_equal(local["pvalue"].values, remote["pvalue"].values, equal_nan=True))
    print(f"on a distributed.LocalCluster (2 workers x 1 thread): {elapsed:.1f} s; p-values equal to the local "
          f"run: {same}")


if __name__ == "__main__":
    main()
