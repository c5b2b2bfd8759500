"""Input-level Kendall for WMT-sized data: xcorrstat vs a per-input scipy loop, side by side.

50 metrics x 15 systems x 2,000 inputs (random scores with ties). Prints both times and
their ratio; the goal is under 1 s for xcorrstat and at least 50x the loop.

    python benchmarks/bench_input_kendall.py [--metrics 50] [--systems 15] [--inputs 2000]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import xarray as xr
from scipy.stats import kendalltau

import xcorrstat  # noqa: F401  (registers the .corrstat accessor)


def make(n_metrics, n_systems, n_inputs, seed=0):
    rng = np.random.default_rng(seed)
    data = {f"metric{k}": (("system", "input"), rng.integers(0, 20, size=(n_systems, n_inputs)).astype(float))
            for k in range(n_metrics)}
    data["human"] = (("system", "input"), rng.integers(0, 5, size=(n_systems, n_inputs)).astype(float))
    ds = xr.Dataset(data)
    ds["human"].attrs["role"] = "human"
    return ds


def scipy_loop(ds, metrics):
    z = ds["human"].values
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for m in metrics:
            x = ds[m].values
            taus = [kendalltau(x[:, j], z[:, j]).statistic for j in range(x.shape[1])]
            out[m] = np.nanmean(taus)
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--metrics", type=int, default=50)
    p.add_argument("--systems", type=int, default=15)
    p.add_argument("--inputs", type=int, default=2000)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    ds = make(args.metrics, args.systems, args.inputs)
    metrics = [k for k in ds.data_vars if k != "human"]

    times = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        r = ds.corrstat.correlate(target="human", level="input", method="kendall")
        times.append(time.perf_counter() - t0)
    ours = min(times)

    t0 = time.perf_counter()
    ref = scipy_loop(ds, metrics)
    loop = time.perf_counter() - t0

    diff = max(abs(float(r.sel(metric=m)) - ref[m]) for m in metrics)
    print(f"data: {args.metrics} metrics x {args.systems} systems x {args.inputs} inputs, input-level Kendall tau-b")
    print(f"xcorrstat (best of {args.repeat}): {ours:.3f} s")
    print(f"scipy per-input loop:      {loop:.3f} s")
    print(f"speed-up: {loop / ours:.1f}x   (goal: xcorrstat < 1 s and >= 50x)")
    print(f"max |difference|: {diff:.2e}")


if __name__ == "__main__":
    main()
