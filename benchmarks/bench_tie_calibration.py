"""Tie calibration at WMT size: the sort-and-sweep against a grid of full recomputations, side by side.

Data: 15 systems x 2,000 inputs, 10 metrics with MQM-like ties (gold mostly 0), input level
(pairs of systems within each input: 210,000 pairs per metric). Goal: the optimal epsilon of
a metric in under 2 s.

Also timed: bootstrap intervals that re-calibrate epsilon in every draw (BOOT-BOTH), the
library's one sort per metric with count-vector weights against sorting each draw's pairs
anew (the same numbers, checked on the first draws). With ``--summeval``, only the bundled data's case
of docs/confidence-intervals.md: every metric's interval with per-draw calibration, 1,000 draws; with
``--score-test``, only the score test of two metrics that calibrates both again in every draw
(docs/significance.md), at 14 systems x 1,875 inputs and ``--draws`` draws.

    python benchmarks/bench_tie_calibration.py [--systems 15] [--inputs 2000] [--metrics 10] [--summeval]
        [--score-test --draws 100]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import xarray as xr

import xcorrstat
from xcorrstat._kernels.mt.ties import pair_table
from xcorrstat._kernels.mt.tie_sweeps import sorted_pairs, weighted_calibration
from xcorrstat._resampling.draws import bootstrap_indices


def data(n_sys, n_inp, n_met, seed=0):
    rng = np.random.default_rng(seed)
    gold = -np.round(rng.exponential(1.0, (n_sys, n_inp)) * (rng.random((n_sys, n_inp)) < 0.3), 0)
    dims = ("system", "input")
    ds = xr.Dataset({"mqm": (dims, gold)})
    ds["mqm"].attrs["role"] = "human"
    for k in range(n_met):
        ds[f"metric{k}"] = (dims, gold + rng.normal(0, 0.5 + 0.1 * k, gold.shape))
    return ds


def grid(x, z, thresholds):
    """The objective recomputed from scratch at each threshold (vectorised over pairs)."""
    dist, before, after, weight = pair_table(x, z)
    sign_ok = before  # agreement when the pair is not a metric tie
    return np.array([((np.where(dist <= t, after, sign_ok)) * weight).sum() for t in thresholds])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--systems", type=int, default=15)
    p.add_argument("--inputs", type=int, default=2000)
    p.add_argument("--metrics", type=int, default=10)
    p.add_argument("--grid", type=int, default=100, help="candidates the grid recomputes (it extrapolates)")
    p.add_argument("--draws", type=int, default=200, help="bootstrap draws of the per-draw calibration")
    p.add_argument("--summeval", action="store_true",
                   help="only the bundled data's case (docs/confidence-intervals.md): 1,000 draws, 34 metrics")
    p.add_argument("--score-test", action="store_true",
                   help="only the score test that re-calibrates in every draw (docs/significance.md), "
                   "14 systems x 1,875 inputs, --draws draws")
    args = p.parse_args()
    if args.summeval:
        summeval_case()
        return
    if args.score_test:
        score_test_case(args.draws)
        return
    ds = data(args.systems, args.inputs, args.metrics)
    pairs = args.inputs * args.systems * (args.systems - 1) // 2
    xcorrstat.calibrate_ties(ds[["mqm", "metric0"]].isel(input=slice(0, 20)), target="mqm", level="input")  # warm-up
    start, cpu = time.perf_counter(), time.process_time()
    res = xcorrstat.calibrate_ties(ds, target="mqm", level="input", keep_curve=True)
    sweep, cpu = time.perf_counter() - start, time.process_time() - cpu
    n_cand = int(np.isfinite(res["threshold"].isel(metric=0)).sum())
    print(f"{args.metrics} metrics, {args.systems} systems x {args.inputs} inputs, {pairs:,} pairs per metric")
    print(f"sweep: {sweep:.3f} s for all metrics = {sweep / args.metrics:.3f} s per metric (goal < 2 s; CPU "
          f"{cpu / args.metrics:.3f} s per metric), "
          f"{n_cand:,} candidate thresholds for metric0")
    x = ds["metric0"].values.T
    z = ds["mqm"].values.T
    thresholds = res["threshold"].isel(metric=0).values
    thresholds = thresholds[np.isfinite(thresholds)]
    pick = thresholds[:: max(1, thresholds.size // args.grid)][: args.grid]
    start = time.perf_counter()
    values = grid(x, z, pick)
    per = (time.perf_counter() - start) / pick.size
    curve = dict(zip(res["threshold"].isel(metric=0).values, res["objective"].isel(metric=0).values))
    worst = max(abs(values[k] - curve[t]) for k, t in enumerate(pick))
    print(f"grid of full recomputations: {per * 1e3:.1f} ms per candidate -> {per * n_cand:.0f} s for all "
          f"{n_cand:,} candidates of one metric; sweep is {per * n_cand / (sweep / args.metrics):,.0f}x faster")
    print(f"max |sweep - grid| over the {pick.size} recomputed candidates: {worst:.2e}")
    print("optimal epsilon per metric:", np.round(res["epsilon"].values, 4).tolist())
    per_draw(ds, args.draws)


def draw_anew(x, z, sys_idx, inp_idx):
    """One draw calibrated from scratch: its drawn inputs (with repeats) sorted anew, each system
    weighted by how often it was drawn (copies of a system are not paired)."""
    table = sorted_pairs(x[:, inp_idx].T[None], z[:, inp_idx].T[None])
    counts = np.bincount(sys_idx, minlength=x.shape[0]).astype(float)[None]
    eps, best, _ = weighted_calibration(table, counts, np.ones((1, inp_idx.size)))
    return eps[0, 0], best[0, 0]


def per_draw(ds, n_draws):
    """Per-draw re-calibration of one metric: the weighted sweep against calibrating each draw anew."""
    one = ds[["metric0", "mqm"]]
    start = time.perf_counter()
    res = xcorrstat.bootstrap(one, target="mqm", level="input", method="kendall", variant="acc23",
                              epsilon="calibrate",
                              resample=xcorrstat.Bootstrap(n_resamples=n_draws, rng=0, keep_distribution=True))
    sweep = time.perf_counter() - start
    x, z = ds["metric0"].values, ds["mqm"].values
    s_idx, i_idx = bootstrap_indices(0, np.arange(n_draws), [x.shape[0], x.shape[1]])
    k = min(n_draws, 5)
    start = time.perf_counter()
    anew = [draw_anew(x, z, s_idx[b], i_idx[b]) for b in range(k)]  # timed on a few draws, extrapolated
    per_anew = (time.perf_counter() - start) / k
    diff = max(abs(float(res["distribution"][0, b]) - anew[b][1]) for b in range(k))
    print(f"bootstrap with per-draw calibration, 1 metric, {n_draws} draws: {sweep:.2f} s "
          f"({sweep / n_draws * 1e3:.1f} ms per draw); sorting each draw anew: "
          f"{per_anew * 1e3:.0f} ms per draw -> {per_anew * n_draws / sweep:.1f}x slower; "
          f"max |difference| on {k} draws: {diff:.1e}")


def summeval_case(n_draws: int = 1000) -> None:
    """BOOT-BOTH intervals of every SummEval metric's input-level acc_eq with ``epsilon="calibrate"``
    (re-calibrated in every draw) against expert relevance: wall and CPU seconds of the call."""
    ds = xcorrstat.datasets.summeval()
    kw = dict(target="expert_relevance", level="input", method="kendall", variant="acc23", epsilon="calibrate")
    xcorrstat.bootstrap(ds, metrics=["rouge_1_f1"], resample=xcorrstat.Bootstrap(n_resamples=40, rng=0), **kw)
    cpu, start = time.process_time(), time.perf_counter()  # after a warm-up call: the loops are loaded
    res = xcorrstat.bootstrap(ds, resample=xcorrstat.Bootstrap(n_resamples=n_draws, rng=0), **kw)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    print(f"SummEval, {res.sizes['metric']} metrics, input-level acc_eq, epsilon='calibrate', BOOT-BOTH, "
          f"{n_draws} draws: {wall:.1f} s wall, {cpu:.1f} s CPU")


def score_test_case(n_draws: int) -> None:
    """``permutation_test(..., test=Permutation(epsilon="calibrate"))`` of two metrics at input level,
    14 systems x 1,875 inputs: each draw swaps the cells and calibrates both swapped metrics again.
    Wall and CPU seconds per draw."""
    ds = data(14, 1875, 2)
    kw = dict(x="metric0", y="metric1", target="mqm", level="input", method="kendall", variant="acc23")
    xcorrstat.permutation_test(ds.isel(input=slice(0, 50)), test=xcorrstat.Permutation(epsilon="calibrate",
                               n_resamples=2, rng=0), **kw)  # warm-up: the loops are loaded
    cpu, start = time.process_time(), time.perf_counter()
    xcorrstat.permutation_test(ds, test=xcorrstat.Permutation(epsilon="calibrate", n_resamples=n_draws, rng=0), **kw)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    print(f"score test re-calibrating in every draw, 14 systems x 1,875 inputs, {n_draws} draws: {wall:.1f} s "
          f"wall ({wall / n_draws:.3f} s a draw), {cpu:.1f} s CPU ({cpu / n_draws:.3f} s a draw)")


if __name__ == "__main__":
    main()
