"""System-level bootstrap and permutation test over many systems: time and peak memory of one run.

Run one case per process (the peak RSS is the process's)::

    python benchmarks/bench_many_systems.py bootstrap kendall 10000 3 1000 [budget]

prints ``kind method systems inputs draws seconds peak_MiB``.
"""

from __future__ import annotations

import resource
import sys
import time

import numpy as np
import xarray as xr

import xcorrstat


def scores(n_sys: int, n_inp: int, n_metrics: int = 2, seed: int = 0) -> xr.Dataset:
    """Integer-valued scores (ties between system means) for ``n_metrics`` metrics and a target."""
    rng = np.random.default_rng(seed)
    dims = ("system", "input")
    data = {f"m{k}": (dims, rng.integers(0, 50, (n_sys, n_inp)).astype(float)) for k in range(n_metrics)}
    data["human"] = (dims, rng.integers(0, 50, (n_sys, n_inp)).astype(float))
    ds = xr.Dataset(data, coords={"system": [f"S{s}" for s in range(n_sys)],
                                  "input": [f"d{j}" for j in range(n_inp)]})
    ds["human"].attrs["role"] = "human"
    return ds


def run(kind: str, method: str, n_sys: int, n_inp: int, draws: int, budget: str) -> float:
    ds = scores(n_sys, n_inp)
    xcorrstat.set_options(memory_budget=budget)
    start = time.perf_counter()
    if kind == "bootstrap":
        xcorrstat.bootstrap(ds, target="human", level="system", method=method,
                            resample=xcorrstat.Bootstrap(("system", "input"), n_resamples=draws, rng=0))
    else:
        xcorrstat.permutation_test(ds, x="m0", y="m1", target="human", level="system", method=method,
                                   test=xcorrstat.Permutation(("system", "input"), n_resamples=draws, rng=0))
    return time.perf_counter() - start


def main() -> None:
    kind, method, n_sys, n_inp, draws = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:6])
    budget = sys.argv[6] if len(sys.argv) > 6 else "1GiB"
    seconds = run(kind, method, n_sys, n_inp, draws, budget)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{kind} {method} {n_sys} {n_inp} {draws} {seconds:.2f}s {peak:.0f}MiB")


if __name__ == "__main__":
    main()
