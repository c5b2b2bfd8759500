"""Global-level Kendall (all cells, mt-metrics-eval's "no grouping") in bootstrap and permutation draws,
side by side with the peers, in one run.

1. Bootstrap CIs against nlpstats 0.0.1 (installed from PyPI into a throw-away virtual environment, or
   ``--baseline-python``): BOOT-SYSTEMS and BOOT-BOTH at 25 x 50 and 16 x 100, 1,000 draws, one metric
   against the human scores (goal: >= 20x nlpstats). Printed: both times and the ratio, both intervals, and
   the point estimate against scipy's kendalltau on all cells.
2. The permutation test against mt-metrics-eval (MTME) on WMT-shaped data (14 systems x 1,875 segments,
   an MQM-like human score with many ties, metrics on their own scales): MTME's ``data.CompareMetrics``
   with ``scipy.stats.kendalltau`` and ``average_by="none"`` (``stats.PermutationSigDiff`` for every pair
   of 6 metrics, 15 pairs, PERM-BOTH) against ``xcorrstat.compare(level="global", method="kendall",
   test=xcorrstat.Permutation(("system", "input")))``, and one pair against ``xcorrstat.permutation_test`` (goal: >= 20x,
   ideally >= 100x). MTME runs on fewer metrics, its time extrapolated by pairs, when it would take over
   ``--mtme-budget`` seconds. Printed: times, ratios, the correlations (to 1e-9) and the p-values (within
   Monte-Carlo error: three standard errors of the difference of two estimates plus 1/k), the decisions.

3. The same comparison as 2 with its fixed costs: each side in a fresh process (Python's start, the imports,
   making the data, numba's loading of its compiled loops from the cache, the compare, the exit), timed
   from outside, alternately, best of ``--repeats`` (goal: >= 20x MTME at k=100). The first xcorrstat run
   is not counted: after an install, the first process compiles the loops.

MTME is not a dependency and not on PyPI (the package of that name there is another project): point
``--mtme-source`` at a checkout of google-research/mt-metrics-eval (the folder holding
``mt_metrics_eval/``); without it part 2 runs xcorrstat only. Times are wall-clock
(``time.perf_counter``); MTME and nlpstats run single-threaded, xcorrstat on Dask threads.

    python benchmarks/bench_global_kendall.py --mtme-source PATH [--k 100] [--skip-baseline]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import textwrap
import time
import warnings

import numpy as np
import scipy.stats
import xarray as xr

import xcorrstat
from peers import baseline_python, load_mtme  # benchmarks/peers.py

N_BOOT = 1000
BOOT_CASES = [(25, 50), (16, 100)]
SCHEMES = {"BOOT-SYSTEMS": ("system", "systems"), "BOOT-BOTH": (("system", "input"), "both")}
ALPHA = 0.05

BASELINE = textwrap.dedent(
    """
    import json, sys, time, warnings
    import numpy as np
    from nlpstats.correlations import bootstrap
    warnings.simplefilter("ignore")
    s, i, how, n, seed = json.loads(sys.argv[1])
    rng = np.random.default_rng(seed)
    X, Z = rng.normal(size=(s, i)), rng.normal(size=(s, i))
    t0 = time.perf_counter()
    res = bootstrap(X, Z, "global", "kendall", how, n_resamples=n)
    print(json.dumps({"seconds": time.perf_counter() - t0, "lower": res.lower, "upper": res.upper}))
    """
)


def best_of(fn, repeats: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return min(times), out


# ----------------------------------------------------------------------------- part 1: bootstrap


def bootstrap_part(args) -> None:
    python = None if args.skip_baseline else baseline_python(args.baseline_python)
    print(f"\n[1] bootstrap CI of global-level Kendall tau-b, one metric, {N_BOOT} draws "
          f"(xcorrstat best of {args.repeats})")
    head = f"  {'case':26s} {'xcorrstat':>10s} {'nlpstats':>9s} {'ratio':>7s}  CIs (xcorrstat | nlpstats)"
    print(head)
    for seed, (s, i) in enumerate(BOOT_CASES):
        rng = np.random.default_rng(seed)
        X, Z = rng.normal(size=(s, i)), rng.normal(size=(s, i))
        ds = xr.Dataset({"metric": (("system", "input"), X), "human": (("system", "input"), Z)})
        tau = float(scipy.stats.kendalltau(X.ravel(), Z.ravel()).statistic)
        for label, (resample, how) in SCHEMES.items():
            def run(ds=ds, resample=resample, seed=seed):
                return ds.corrstat.bootstrap(target="human", level="global", method="kendall",
                                             resample=xcorrstat.Bootstrap(resample, n_resamples=N_BOOT, rng=seed))
            t_ours, res = best_of(run, args.repeats)
            point = float(res["correlation"][0])
            line = f"  {label + f' {s}x{i}':26s} {t_ours:9.3f}s"
            ours_ci = f"[{float(res['low'][0]):+.3f}, {float(res['high'][0]):+.3f}]"
            if python:
                cmd = [python, "-c", BASELINE, json.dumps([s, i, how, N_BOOT, seed])]
                base = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
                line += (f" {base['seconds']:8.2f}s {base['seconds'] / t_ours:6.0f}x  {ours_ci} | "
                         f"[{base['lower']:+.3f}, {base['upper']:+.3f}]")
            else:
                line += f" {'-':>9s} {'-':>7s}  {ours_ci}"
            print(line + f"; tau {point:+.6f} (scipy {tau:+.6f}, |diff| {abs(point - tau):.0e})", flush=True)


# ----------------------------------------------------------------------------- part 2: permutation


def wmt_data(n_sys: int, n_seg: int, n_met: int, seed: int) -> tuple[np.ndarray, dict[str, np.ndarray], xr.Dataset]:
    """WMT-shaped scores: an MQM-like human score (error levels, most segments 0) and noisy metrics."""
    rng = np.random.default_rng(seed)
    latent = (0.5 * rng.normal(size=(n_sys, 1)) - 0.9 * rng.normal(size=(1, n_seg))
              + rng.normal(size=(n_sys, n_seg)) + 0.3)
    human = -np.clip(np.round(np.maximum(0.0, -latent) * 1.5), 0, 25)
    noise = np.linspace(1.5, 1.65, n_met)  # close metrics: p-values across the range
    metrics = {f"metric{k}": np.exp(rng.uniform(-3, 3)) * (latent + noise[k] * rng.normal(size=latent.shape))
               + rng.normal(0, 5) for k in range(n_met)}
    dims = ("system", "input")
    grid = xr.Dataset({"mqm": (dims, human), **{m: (dims, v) for m, v in metrics.items()}},
                      coords={"system": [f"sys{s:02d}" for s in range(n_sys)], "input": np.arange(n_seg)})
    return human, metrics, grid


def mtme_compare(mtme, human, metrics, names, k, seed):
    """MTME's CompareMetrics (early stopping off); returns (seconds, correlations, p-values)."""
    gold = human.ravel().tolist()  # system-major, as EvalSet packs it
    corrs = {m: mtme.stats.Correlation(human.shape[0], gold, metrics[m].ravel().tolist()) for m in names}
    psd = mtme.stats.PermutationSigDiffParams(block_size=max(k, 1))
    np.random.seed(seed)  # MTME draws from NumPy's global generator
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ranks, sig, _, _ = mtme.data.CompareMetrics(corrs, scipy.stats.kendalltau, "none", k, psd, ALPHA)
    seconds = time.perf_counter() - start
    order = list(ranks)
    pvals = {(order[a], order[b]): float(sig[a, b]) for a in range(len(order)) for b in range(a + 1, len(order))}
    return seconds, {m: float(ranks[m][0]) for m in order}, pvals


def mtme_pair(mtme, human, metrics, better, worse, k, seed):
    gold = human.ravel().tolist()
    c1 = mtme.stats.Correlation(human.shape[0], gold, metrics[worse].ravel().tolist())
    c2 = mtme.stats.Correlation(human.shape[0], gold, metrics[better].ravel().tolist())
    psd = mtme.stats.PermutationSigDiffParams(block_size=max(k, 1))
    np.random.seed(seed)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p = mtme.stats.PermutationSigDiff(c1, c2, scipy.stats.kendalltau, "none", k, psd)[0]
    return time.perf_counter() - start, float(p)


def mc_tolerance(p: float, k1: int, k2: int) -> float:
    p = min(max(p, 1.0 / max(k1, k2)), 1 - 1.0 / max(k1, k2))
    return 3 * math.sqrt(p * (1 - p) * (1 / k1 + 1 / k2)) + 1.0 / min(k1, k2)


def xc_compare(grid, names, k, seed):
    return xcorrstat.compare(grid, target="mqm", metrics=names, level="global", method="kendall", variant="b",
                             test=xcorrstat.Permutation(("system", "input"), n_resamples=k, rng=seed,
                                                        pvalue="fraction"), alpha=ALPHA)


def permutation_part(args) -> None:
    human, metrics, grid = wmt_data(args.systems, args.segments, args.metrics, args.seed)
    names = list(metrics)
    n_pairs = len(names) * (len(names) - 1) // 2
    k = args.k
    print(f"\n[2] permutation test, global-level Kendall tau-b, PERM-BOTH: {args.systems} x {args.segments} cells, "
          f"{len(names)} metrics ({n_pairs} pairs), k={k}; human: {np.unique(human).size} levels, "
          f"{(human == 0).mean():.0%} at 0")
    xc_compare(grid.isel(system=slice(0, 4), input=slice(0, 30)), names[:3], 10, 0)  # warm-up: numba, Dask
    t_xc, res = best_of(lambda: xc_compare(grid, names, k, args.seed), args.repeats)
    xcorrstat.permutation_test(grid.isel(input=slice(0, 30)), x=names[0], y=names[1], target="mqm",
                               level="global", method="kendall", test=xcorrstat.Permutation(n_resamples=10, rng=0))
    t_one, one = best_of(lambda: xcorrstat.permutation_test(
        grid, x=names[0], y=names[1], target="mqm", level="global", method="kendall",
        test=xcorrstat.Permutation(n_resamples=k, rng=args.seed, pvalue="fraction")), args.repeats)
    print(f"  xcorrstat compare: {t_xc:.3f} s (best of {args.repeats}); "
          f"permutation_test, one pair: {t_one:.3f} s", flush=True)
    if not args.mtme_source:
        print("  MTME: skipped (no --mtme-source)")
        return
    mtme = load_mtme(args.mtme_source)
    t_pair, p_pair = mtme_pair(mtme, human, metrics, names[0], names[1], k, args.seed)
    estimate = t_pair * n_pairs
    sub = names if estimate <= args.mtme_budget else names[: max(2, int(len(names) * args.mtme_budget / estimate))]
    t_mtme, corr, pvals = mtme_compare(mtme, human, metrics, sub, k, args.seed)
    sub_pairs = len(sub) * (len(sub) - 1) // 2
    full = t_mtme * n_pairs / sub_pairs
    how = "measured" if sub == names else f"extrapolated from {len(sub)} metrics ({sub_pairs} pairs), {t_mtme:.1f} s"
    ours = {m: float(res["correlation"].sel(metric=m)) for m in corr}
    diff = max(abs(ours[m] - corr[m]) for m in corr)
    rows = [(a, b, p, float(res["pvalue"].sel(metric=a, other_metric=b))) for (a, b), p in pvals.items()]
    within = sum(abs(p - q) <= mc_tolerance((p + q) / 2, k, k) for _, _, p, q in rows)
    same = sum((p <= ALPHA) == (q <= ALPHA) for _, _, p, q in rows)
    print(f"  MTME CompareMetrics: {full:.2f} s ({how}) -> compare is {full / t_xc:.0f}x faster")
    print(f"  MTME PermutationSigDiff, one pair: {t_pair:.2f} s -> permutation_test is {t_pair / t_one:.0f}x faster; "
          f"p {p_pair:.3f} (MTME) / {float(one['pvalue']):.3f} (xcorrstat; p that {names[0]} beats {names[1]})")
    if args.k_pair and args.k_pair != k:  # one pair at the default n_resamples: fixed costs weigh less
        t_big, one_big = best_of(lambda: xcorrstat.permutation_test(
            grid, x=names[0], y=names[1], target="mqm", level="global", method="kendall",
            test=xcorrstat.Permutation(n_resamples=args.k_pair, rng=args.seed, pvalue="fraction")), args.repeats)
        t_pair_big, p_pair_big = mtme_pair(mtme, human, metrics, names[0], names[1], args.k_pair, args.seed)
        print(f"  one pair at k={args.k_pair}: MTME {t_pair_big:.2f} s, xcorrstat {t_big:.3f} s -> "
              f"{t_pair_big / t_big:.0f}x; p {p_pair_big:.3f} (MTME) / {float(one_big['pvalue']):.3f} (xcorrstat)")
    print(f"  correlations: max |diff| {diff:.1e} over {len(corr)} metrics ({'ok' if diff <= 1e-9 else 'DIFFER'}); "
          f"p-values within Monte-Carlo error {within}/{len(rows)}, same decision at {ALPHA} {same}/{len(rows)}")
    for a, b, p, q in rows:
        print(f"    {a} vs {b}: p {p:.3f} (MTME) {q:.3f} (xcorrstat)")


# ----------------------------------------------------------------------------- part 3: fresh processes

FRESH_DATA = textwrap.dedent("""
    import sys, json
    import numpy as np
    n_sys, n_seg, n_met, seed, k = json.loads(sys.argv[1])
    rng = np.random.default_rng(seed)
    latent = (0.5 * rng.normal(size=(n_sys, 1)) - 0.9 * rng.normal(size=(1, n_seg))
              + rng.normal(size=(n_sys, n_seg)) + 0.3)
    human = -np.clip(np.round(np.maximum(0.0, -latent) * 1.5), 0, 25)
    noise = np.linspace(1.5, 1.65, n_met)
    metrics = {f"metric{i}": np.exp(rng.uniform(-3, 3)) * (latent + noise[i] * rng.normal(size=latent.shape))
               + rng.normal(0, 5) for i in range(n_met)}
""")  # the data of wmt_data, made in the child without importing this module (and so xcorrstat)

FRESH_OURS = FRESH_DATA + textwrap.dedent("""
    import xarray as xr, xcorrstat
    dims = ("system", "input")
    grid = xr.Dataset({"mqm": (dims, human), **{m: (dims, v) for m, v in metrics.items()}})
    xcorrstat.compare(grid, target="mqm", level="global", method="kendall", variant="b", alpha=0.05,
                      test=xcorrstat.Permutation(("system", "input"), n_resamples=k, rng=seed, pvalue="fraction"))
""")

FRESH_MTME = FRESH_DATA + textwrap.dedent("""
    import types, warnings, scipy.stats
    for stub in ("apache_beam", "dacite"):
        sys.modules.setdefault(stub, types.ModuleType(stub))
    from mt_metrics_eval import data, stats
    gold = human.ravel().tolist()
    corrs = {m: stats.Correlation(n_sys, gold, v.ravel().tolist()) for m, v in metrics.items()}
    np.random.seed(seed)
    warnings.simplefilter("ignore")
    data.CompareMetrics(corrs, scipy.stats.kendalltau, "none", k, stats.PermutationSigDiffParams(block_size=k), 0.05)
""")


def _fresh(cmd: list[str], env: dict[str, str] | None = None, cwd: str | None = None) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of one fresh process, measured from outside."""
    before = os.times()
    start = time.perf_counter()
    subprocess.run(cmd, check=True, env=env, cwd=cwd, capture_output=True)
    wall = time.perf_counter() - start
    after = os.times()
    return wall, (after.children_user - before.children_user) + (after.children_system - before.children_system)


def fresh_part(args) -> None:
    payload = json.dumps([args.systems, args.segments, args.metrics, args.seed, args.k])
    ours = [sys.executable, "-c", FRESH_OURS, payload]
    print(f"\n[3] fresh processes, everything counted: {args.systems} x {args.segments}, {args.metrics} metrics, "
          f"k={args.k} (best of {args.repeats}; wall / CPU seconds)")
    first = _fresh(ours)
    print(f"  xcorrstat, first process (may compile the loops, not counted): {first[0]:.2f} / {first[1]:.2f} s")
    mtme_cmd = env = root = None
    if args.mtme_source:
        root = os.path.abspath(os.path.expanduser(args.mtme_source))
        env = {**os.environ, "PYTHONPATH": root}
        mtme_cmd = [sys.executable, "-c", FRESH_MTME, payload]
    times: dict[str, list[tuple[float, float]]] = {"xcorrstat": [], "MTME": []}
    for _ in range(args.repeats):
        times["xcorrstat"].append(_fresh(ours))
        if mtme_cmd:
            times["MTME"].append(_fresh(mtme_cmd, env=env, cwd=root))
    best = {name: (min(w for w, _ in t), min(c for _, c in t)) for name, t in times.items() if t}
    for name, (wall, cpu) in best.items():
        print(f"  {name}: {wall:.2f} / {cpu:.2f} s")
    if "MTME" in best:
        print(f"  -> xcorrstat is {best['MTME'][0] / best['xcorrstat'][0]:.1f}x faster by wall clock, "
              f"{best['MTME'][1] / best['xcorrstat'][1]:.1f}x by CPU time (goal >= 20x)")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mtme-source", help="folder of an mt-metrics-eval checkout (holds mt_metrics_eval/)")
    p.add_argument("--mtme-budget", type=float, default=600.0,
                   help="seconds MTME's compare may take before it runs on fewer metrics (default 600)")
    p.add_argument("--baseline-python", help="a Python with nlpstats 0.0.1 installed (default: make one)")
    p.add_argument("--skip-baseline", action="store_true", help="no nlpstats")
    p.add_argument("--parts", default="1,2,3",
                   help="parts to run: 1 (bootstrap), 2 (permutation), 3 (fresh processes), e.g. 2,3")
    p.add_argument("--k", type=int, default=100, help="permutation draws (default 100)")
    p.add_argument("--k-pair", type=int, default=1000, help="draws of the one-pair timing repeated at this k (0: no)")
    p.add_argument("--systems", type=int, default=14)
    p.add_argument("--segments", type=int, default=1875)
    p.add_argument("--metrics", type=int, default=6)
    p.add_argument("--repeats", type=int, default=3, help="xcorrstat runs per case, the best is shown")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    parts = {s.strip() for s in args.parts.split(",")}
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"xcorrstat {xcorrstat.__version__} on {cores} core(s)")
    if "1" in parts:
        bootstrap_part(args)
    if "2" in parts:
        permutation_part(args)
    if "3" in parts:
        fresh_part(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
