"""The fixed costs of a fresh process: the imports, compiling numba's loops once, loading them later.

Each step runs in a new Python process with ``NUMBA_CACHE_DIR`` set to an empty temporary folder
(or ``--cache``), so the first process compiles and the next ones load from that cache:

1. ``import xcorrstat``: CPU seconds and the resident set size after it (what a worker process
   needs before its first task);
2. a small Kendall permutation test and bootstrap interval (9 draws, 5 systems x 12 inputs) at the
   input, global and system levels, timed call by call (wall and CPU seconds), in the first process
   (compiling) and in a second one (the cache);
3. in a third process, ``compare`` of 6 metrics at global level, Kendall's tau, PERM-BOTH, 100 draws on
   14 systems x 1,875 segments: the CPU seconds of the process up to the end of the call (imports
   included), of the call, and of a second, identical call (numba's loading done);
4. the resident set of a ``dask.distributed`` worker process (``LocalCluster``, one worker) before
   and after it imports xcorrstat, and after a small Kendall bootstrap runs in it (numba's loops loaded
   from the cache): what the 300 MiB asked of a worker's ``memory_limit`` covers.

docs/scale-out.md ("The first call: compiling, then the cache") states these figures.

    python benchmarks/bench_cold_start.py [--cache FOLDER]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

IMPORT = r"""
import json, resource, time
c = time.process_time()
import xcorrstat
print(json.dumps({"import_cpu": time.process_time() - c,
                  "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

SMALL = r"""
import json, time
import numpy as np, xarray as xr
import xcorrstat
rng = np.random.default_rng(0)
ds = xr.DataArray(rng.normal(size=(3, 5, 12)), dims=("metric", "system", "input"),
                  coords={"metric": ["h", "a", "b"]}).to_dataset(dim="metric")
out = {}
for level in ("input", "global", "system"):
    for name, call in (
            ("permutation_test", lambda: xcorrstat.permutation_test(
                ds, target="h", x="a", y="b", level=level, method="kendall",
                test=xcorrstat.Permutation(("system", "input"), n_resamples=9, rng=1))),
            ("bootstrap", lambda: xcorrstat.bootstrap(
                ds, target="h", level=level, method="kendall",
                resample=xcorrstat.Bootstrap(("system", "input"), n_resamples=9, rng=1)))):
        w, c = time.perf_counter(), time.process_time()
        call()
        out[f"{name} {level}"] = [time.perf_counter() - w, time.process_time() - c]
print(json.dumps(out))
"""

COMPARE = r"""
import json, time
import numpy as np, xarray as xr
import xcorrstat
rng = np.random.default_rng(0)
latent = rng.normal(size=(14, 1875))
ds = xr.Dataset({f"m{k}": (("system", "input"), latent + rng.normal(scale=1 + k / 3, size=latent.shape))
                 for k in range(6)})
ds["human"] = (("system", "input"), np.round(latent + rng.normal(size=latent.shape)))
kw = dict(target="human", level="global", method="kendall",
          test=xcorrstat.Permutation(("system", "input"), n_resamples=100, rng=0))
c = time.process_time()
xcorrstat.compare(ds, **kw)
total = time.process_time()
first = total - c
c = time.process_time()
xcorrstat.compare(ds, **kw)
print(json.dumps({"call_cpu": first, "again_cpu": time.process_time() - c, "process_cpu": total}))
"""


WORKER = r"""
import json, resource
from distributed import Client, LocalCluster
def rss(step):
    if step == "before":
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    import xcorrstat
    if step == "call":
        import numpy as np, xarray as xr
        ds = xr.Dataset({k: (("system", "input"), np.random.default_rng(0).normal(size=(5, 12))) for k in "ha"})
        xcorrstat.bootstrap(ds, target="h", level="input", method="kendall",
                            resample=xcorrstat.Bootstrap(n_resamples=9, rng=1))
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
        Client(cluster) as client:
    before = list(client.run(rss, "before").values())[0]
    after = list(client.run(rss, "import").values())[0]
    call = list(client.run(rss, "call").values())[0]
print(json.dumps({"before_mib": before, "after_mib": after, "call_mib": call}))
"""


def run(code: str, cache: str) -> dict:
    """Run ``code`` in a fresh interpreter with the given numba cache; its last line is JSON."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {**os.environ, "NUMBA_CACHE_DIR": cache,
           "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", help="numba cache folder (default: a new empty one)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        cache = args.cache or folder
        first = run(SMALL, cache)
        second = run(SMALL, cache)
        imported = run(IMPORT, cache)
        compare = run(COMPARE, cache)
        worker = run(WORKER, cache)
    print(f"import xcorrstat: {imported['import_cpu']:.2f} CPU s, resident set {imported['rss_mib']:.0f} MiB")
    print(f"{'small Kendall call (9 draws)':<34} {'first process s (CPU s)':>24} {'next process s (CPU s)':>24}")
    for name, (wall, cpu) in first.items():
        wall2, cpu2 = second[name]
        print(f"{name:<34} {wall:>15.2f} ({cpu:5.2f}) {wall2:>15.2f} ({cpu2:5.2f})")
    print(f"all small calls: {sum(w for w, _ in first.values()):.1f} s in the first process, "
          f"{sum(w for w, _ in second.values()):.1f} s in the next")
    print(f"compare, 6 metrics, global Kendall, PERM-BOTH, 100 draws, 14 x 1,875 (fresh process, cache warm): "
          f"{compare['process_cpu']:.2f} CPU s in all (imports included), {compare['call_cpu']:.2f} for the first "
          "call, "
          f"{compare['again_cpu']:.2f} for the same call again")
    print(f"dask.distributed worker process: resident set {worker['before_mib']:.0f} MiB, "
          f"{worker['after_mib']:.0f} MiB after import xcorrstat, {worker['call_mib']:.0f} MiB after a small "
          "Kendall bootstrap in it (the cache warm)")


if __name__ == "__main__":
    main()
