"""Peak memory and wall time of a bootstrap with very many draws and the smallest batch.

Each case runs in a fresh subprocess, which reports its peak resident set size
(``resource.getrusage(RUSAGE_SELF).ru_maxrss``) and the wall time of the call. The
default case is ``bootstrap(resample=Bootstrap(n_resamples=10**6))`` under ``set_options(batch=1)``
on 5 systems x 6 inputs with
two metrics (random data), eager and Dask-backed; goal: peak RSS under 1 GiB. A run
of 10**6 draws is split into at most 256 blocks of draws whatever ``batch`` says
(``attrs["draws_per_task"]``), and each block makes its random indices once per 256
draw ids, so a batch of 1 costs neither a huge task graph nor a generator per draw.

    python benchmarks/bench_memory.py [--n-resamples 1000000] [--batch 1] [--level system]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

CHILD = r"""
import json, resource, sys, time
import numpy as np
import xarray as xr
import xcorrstat

n_resamples, batch, level, lazy = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4] == "dask"
rng = np.random.default_rng(0)
dims = ("system", "input")
ds = xr.Dataset({name: (dims, rng.normal(size=(5, 6))) for name in ("m0", "m1", "human")},
                coords={"system": [f"S{k}" for k in range(5)], "input": [f"doc{k}" for k in range(6)]})
if lazy:
    ds = ds.chunk()
start = time.perf_counter()
with xcorrstat.set_options(batch=batch):
    res = xcorrstat.bootstrap(ds, target="human", level=level,
                              resample=xcorrstat.Bootstrap(n_resamples=n_resamples, rng=0))
    res = res.compute()
wall = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
print(json.dumps({"wall_s": wall, "peak_rss_mib": peak / 1024, "low": res["low"].values.tolist(),
                  "draws_per_task": res.attrs["draws_per_task"]}))
"""


def run(n_resamples: int, batch: int, level: str, backend: str) -> dict:
    """One case in a fresh interpreter: its wall time, peak RSS and interval."""
    proc = subprocess.run([sys.executable, "-c", CHILD, str(n_resamples), str(batch), level, backend],
                          capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-resamples", type=int, default=10**6)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--level", default="system")
    parser.add_argument("--backend", choices=["eager", "dask", "both"], default="both")
    args = parser.parse_args()
    backends = ["eager", "dask"] if args.backend == "both" else [args.backend]
    print(f"bootstrap(resample=Bootstrap(n_resamples={args.n_resamples:,})), set_options(batch={args.batch}), 5 systems x 6 inputs, "
          f"2 metrics, level={args.level}")
    for backend in backends:
        r = run(args.n_resamples, args.batch, args.level, backend)
        verdict = "ok" if r["peak_rss_mib"] < 1024 else "OVER 1 GiB"
        print(f"  {backend:5s}: wall {r['wall_s']:7.1f} s, peak RSS {r['peak_rss_mib']:7.1f} MiB ({verdict}), "
              f"draws per task {r['draws_per_task']:,}, low = {[round(v, 4) for v in r['low']]}")


if __name__ == "__main__":
    main()
