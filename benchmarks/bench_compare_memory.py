"""Peak memory and wall time of ``compare`` with the input-level Kendall permutation test on many pairs.

Each run happens in a fresh subprocess, which reports the wall time of the call and its
peak resident set size (``resource.getrusage(RUSAGE_SELF).ru_maxrss``). The data are
random but shaped like a meta-evaluation: a latent quality score per (system, input),
metrics that are noisy copies of it (each with its own noise level) and a human score
that is the latent score plus noise. The default case is 50 metrics (1,225 pairs) x
15 systems x 2,000 inputs, ``test=xcorrstat.Permutation(("system", "input"), n_resamples=1000)``,
Kendall's tau-b at input level; goal: peak RSS under 1.5 GiB at the default batch and chunks.

    python benchmarks/bench_compare_memory.py [--metrics 50] [--systems 15] [--inputs 2000] [--k 1000]
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

n_metrics, n_systems, n_inputs, k, keep = (int(a) for a in sys.argv[1:6])
rng = np.random.default_rng(12345)
latent = rng.normal(size=(n_systems, n_inputs)) + rng.normal(size=(n_systems, 1))
noise = rng.uniform(0.3, 2.0, size=n_metrics)
dims = ("system", "input")
data = {f"m{j:02d}": (dims, latent + noise[j] * rng.normal(size=latent.shape)) for j in range(n_metrics)}
data["human"] = (dims, latent + rng.normal(size=latent.shape))
coords = {"system": [f"S{j}" for j in range(n_systems)], "input": [f"doc{j}" for j in range(n_inputs)]}
ds = xr.Dataset(data, coords=coords)
start = time.perf_counter()
res = xcorrstat.compare(ds, target="human", level="input", method="kendall", variant="b",
                        test=xcorrstat.Permutation(("system", "input"), n_resamples=k, rng=0,
                                                   keep_distribution=bool(keep)))
res = res.compute()
wall = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
out = {"wall_s": round(wall, 2), "peak_rss_mib": round(peak / 1024, 1)}
if len(sys.argv) > 6:
    res.to_netcdf(sys.argv[6])
print(json.dumps(out))
"""


def run(metrics: int, systems: int, inputs: int, k: int, save: str | None = None) -> dict:
    """One case in a fresh interpreter: its wall time and peak RSS (and the result saved, if asked)."""
    args = [str(metrics), str(systems), str(inputs), str(k), "1" if save else "0"] + ([save] if save else [])
    proc = subprocess.run([sys.executable, "-c", CHILD, *args], capture_output=True, text=True)
    if proc.returncode:
        raise RuntimeError(proc.stderr)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--metrics", type=int, default=50)
    parser.add_argument("--systems", type=int, default=15)
    parser.add_argument("--inputs", type=int, default=2000)
    parser.add_argument("--k", type=int, default=1000, help="n_resamples")
    parser.add_argument("--save", default=None, help="write the result (with its draws) to this netCDF file")
    args = parser.parse_args()
    pairs = args.metrics * (args.metrics - 1) // 2
    print(f"compare(level='input', method='kendall', variant='b', test=Permutation(('system', 'input'), "
          f"n_resamples={args.k:,})): {args.metrics} metrics ({pairs:,} pairs) x {args.systems} systems x "
          f"{args.inputs:,} inputs")
    res = run(args.metrics, args.systems, args.inputs, args.k, args.save)
    print(f"wall {res['wall_s']:.1f} s, peak RSS {res['peak_rss_mib']:,.0f} MiB")


if __name__ == "__main__":
    main()
