"""xcorrstat against mt-metrics-eval (MTME), the official WMT meta-evaluation code, in one process.

Both libraries run, alternating protocol by protocol, on the same random WMT-shaped data: 14
systems x 1,875 segments, 52 metrics, an MQM-like human score (a latent system quality plus a
segment difficulty plus noise, turned into a few integer error levels, most segments at 0: many
ties), and metrics that are noisy versions of the latent score (segment noise and a per-system
bias that vary across metrics, so that their correlations spread; each metric on its own scale).
The script prints the time of each side, the ratio and whether the numbers agree, as a table.

MTME is not a dependency of xcorrstat and is not on PyPI (the package of that name there is an
unrelated project). Point ``--mtme-source`` at a checkout of google-research/mt-metrics-eval (the
folder that holds ``mt_metrics_eval/``); it is imported by path, with stand-ins for
``apache_beam`` and ``dacite``, which the statistics never use. Without it the script says so and
exits with status 0 (skipped).

Usage::

    python benchmarks/bench_mtme.py --mtme-source PATH/TO/mt-metrics-eval
    python benchmarks/bench_mtme.py --mtme-source ... --protocols 3,4,tau --k-segment 50
    python benchmarks/bench_mtme.py --mtme-source ... --mtme-budget 0     # run MTME in full (hours)

Protocols (k = ``--k`` draws, 1,000 by default):

1. System-level Pearson, every pair of metrics, permutation test. MTME does what its WMT tasks do:
   ``data.CompareMetrics`` on system-level ``Correlation`` objects (one score per system: the
   per-system means), i.e. ``stats.PermutationSigDiff`` swapping whole systems' (z-scored) scores,
   and ``data.AssignRanks`` for the significance clusters. xcorrstat: ``compare(level="system",
   method="pearson", test=xcorrstat.Permutation())`` on the system x segment grid, with its default
   PERM-BOTH (each cell swapped), with ``Permutation("system")`` (PERM-SYSTEMS, cells z-scored) and with
   ``Permutation("system", standardise="system-means")``: MTME's own test, run on the grid.
2. The same on per-system means (a Dataset with a ``system`` dim only): xcorrstat
   ``compare(..., test=Permutation("system"))``. This is the very test MTME runs, so the p-values must agree
   up to Monte-Carlo error; the MTME time is that of protocol 1.
3. Segment-level Kendall tau-b with no grouping (WMT21/22): MTME ``PermutationSigDiff`` with
   ``corr_fcn=scipy.stats.kendalltau, average_by="none"`` (PERM-BOTH over all cells) on
   ``--segment-metrics`` metrics at ``--k-segment`` draws; xcorrstat ``compare(level="global",
   method="kendall", variant="b", test=Permutation(("system", "input")))`` on the same metrics and draws.
   Both are also extrapolated to all 52 metrics at k draws.
4. Segment-level item-wise acc_eq with tie calibration (WMT23+): the pair-outcome test. MTME:
   ``CompareMetrics(corr_fcn=KendallWithTiesOpt, average_by="item", perm_test="pairs")``, i.e.
   ``PairwisePermutationSigDiff(variant="acc23", average_by="item")`` with each metric's optimal
   epsilon (``KendallWithTiesOpt``, every pair: sample_rate 1; re-calibrated in every pair of
   metrics, as WMT runs it), on ``--segment-metrics`` metrics at ``--k-segment`` draws (fewer if the
   budget says so), extrapolated to all 52 metrics at k draws. xcorrstat: ``compare(level="input",
   method="kendall", variant="acc23", test=Permutation(swap="pairs", epsilon="calibrate"))`` on all 52 metrics at k
   draws (measured), and on MTME's metrics at MTME's draws (like-for-like). The same test: the
   p-values must agree up to Monte-Carlo error, the calibrated acc_eq exactly.
tau. Tie calibration of one metric: ``tau_optimization.tau_optimization`` (acc_23, every pair)
   against ``xcorrstat.calibrate_ties(level="input")``; the epsilon and acc_eq must agree.

Time budget: where MTME would take longer than ``--mtme-budget`` seconds for a protocol, it runs
on fewer metrics (an evenly spaced subset: fewer pairs; ``--subset-metrics`` forces the number),
or, when even one pair is too slow, on fewer draws. Its time for the requested work is then
extrapolated linearly, from a cost model measured in the same run (seconds per metric for the
correlations, per pair for the set-up of a test, per draw of a pair), and the output says so and
from what. Early stopping is off on both sides (MTME's ``block_size`` is set to the number of
draws; WMT's ``Task`` defaults to ``block_size=100``, which stops a clear pair after 100 draws).

xcorrstat is warmed up on tiny data first (imports, Dask start-up), outside the timings. Times are
wall-clock (``time.perf_counter``): MTME runs single-threaded, xcorrstat on Dask threads (all
cores the process may use; the header says how many). p-values are k_extreme / k on both sides
(xcorrstat ``Permutation(pvalue="fraction")``), clusters at p <= 0.05 with no correction, as in MTME.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import sys
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.stats
import xarray as xr

import xcorrstat
from peers import load_mtme  # benchmarks/peers.py

ALPHA = 0.05
ALL_PROTOCOLS = ("1", "2", "3", "4", "tau")


# ----------------------------------------------------------------------------- data


@dataclasses.dataclass
class Data:
    human: np.ndarray  # (system, segment)
    metrics: dict[str, np.ndarray]  # name -> (system, segment)
    grid: xr.Dataset  # system x input, every metric and "mqm"
    means: xr.Dataset  # per-system means, system dim only

    @property
    def names(self) -> list[str]:
        return list(self.metrics)


def make_data(n_sys: int, n_seg: int, n_met: int, seed: int) -> Data:
    """WMT-shaped random scores: MQM-like human score with ties, metrics with spread correlations."""
    rng = np.random.default_rng(seed)
    quality = rng.normal(0.0, 1.0, n_sys)  # latent system quality
    difficulty = rng.normal(0.0, 1.0, n_seg)  # segment difficulty
    latent = 0.5 * quality[:, None] - 0.9 * difficulty[None, :] + rng.normal(0.0, 1.0, (n_sys, n_seg)) + 0.3
    human = -np.clip(np.round(np.maximum(0.0, -latent) * 1.5), 0, 25)  # error levels 0, -1, -2, ...
    seg_noise = rng.permutation(np.linspace(1.2, 5.0, n_met))
    sys_bias = rng.permutation(np.geomspace(0.03, 0.6, n_met))
    scale = np.exp(rng.uniform(np.log(0.05), np.log(20.0), n_met))
    metrics = {}
    for k in range(n_met):
        noisy = latent + sys_bias[k] * rng.normal(0.0, 1.0, n_sys)[:, None]
        noisy = noisy + rng.normal(0.0, seg_noise[k], (n_sys, n_seg))
        metrics[f"metric{k:02d}"] = scale[k] * noisy + rng.normal(0.0, 5.0)
    dims = ("system", "input")
    coords = {"system": [f"sys{s:02d}" for s in range(n_sys)], "input": np.arange(n_seg)}
    grid = xr.Dataset({"mqm": (dims, human), **{m: (dims, v) for m, v in metrics.items()}}, coords=coords)
    grid["mqm"].attrs["role"] = "human"
    means = grid.mean("input")
    for name in means.data_vars:
        means[name].attrs = dict(grid[name].attrs)
    return Data(human, metrics, grid, means)


def evenly_spaced(names: list[str], n: int) -> list[str]:
    idx = np.unique(np.round(np.linspace(0, len(names) - 1, max(1, n))).astype(int))
    return [names[i] for i in idx]


def n_pairs(n: int) -> int:
    return n * (n - 1) // 2


# ----------------------------------------------------------------------------- MTME


@dataclasses.dataclass
class MtmeTask:
    """One MTME CompareMetrics call, as a WMT Task would make it."""

    label: str
    corrs: dict[str, Any]  # metric -> stats.Correlation, the requested metrics
    corr_fcn: Callable
    average_by: str
    k: int  # requested draws
    perm_test: str = "scores"
    corr_args: dict[str, Any] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class Cost:
    """Linear cost model of CompareMetrics: metrics x per_metric + pairs x (per_pair + draws x per_draw)."""

    per_metric: float
    per_pair: float
    per_draw: float

    def predict(self, n_metrics: int, k: int) -> float:
        return n_metrics * self.per_metric + n_pairs(n_metrics) * (self.per_pair + k * self.per_draw)


@dataclasses.dataclass
class MtmeRun:
    metrics: list[str]  # in MTME's order (decreasing correlation)
    corr: dict[str, float]
    rank: dict[str, int]
    sig: np.ndarray  # sig[i, j]: p-value that metrics[i] beats metrics[j], j > i
    k: int
    seconds: float
    cost: Cost

    def pvalues(self) -> dict[tuple[str, str], float]:
        m = self.metrics
        return {(m[i], m[j]): float(self.sig[i, j]) for i in range(len(m)) for j in range(i + 1, len(m))}

    def estimate(self, n_metrics: int, k: int) -> tuple[float, bool]:
        """Seconds for n_metrics at k draws, and whether that is what was measured."""
        if n_metrics == len(self.metrics) and k == self.k:
            return self.seconds, True
        return self.cost.predict(n_metrics, k), False

    def provenance(self) -> str:
        c = self.cost
        return (f"measured on {len(self.metrics)} metrics ({n_pairs(len(self.metrics))} pairs) at k={self.k} "
                f"in {self.seconds:.1f} s; model: {c.per_metric:.4f} s/metric + {c.per_pair:.4f} s/pair "
                f"+ {c.per_draw * 1e3:.3f} ms/draw/pair")


def _pair_test(mtme, task: MtmeTask, better, worse, k: int):
    """One pair as ComputeSigMatrix runs it (H1: `better` beats `worse`), early stopping off."""
    psd = mtme.stats.PermutationSigDiffParams(block_size=max(k, 1))
    if task.perm_test == "pairs":
        return mtme.stats.PairwisePermutationSigDiff(
            worse, better, task.corr_args.get("variant", "acc23"), task.average_by, k, psd,
            sample_rate=task.corr_args.get("sample_rate", 1.0))
    return mtme.stats.PermutationSigDiff(worse, better, task.corr_fcn, task.average_by, k, psd, **task.corr_args)


def probe_cost(mtme, task: MtmeTask, k_probe: int) -> Cost:
    """Rough cost model from one metric's correlation and one pair at 0 and k_probe draws."""
    first, second = list(task.corrs.values())[:2]
    wrapper = mtme.stats.AverageCorrelation(task.corr_fcn, first.num_sys, task.average_by, filter_nones=False,
                                            **task.corr_args)
    start = time.perf_counter()
    wrapper(first.gold_scores, first.metric_scores)
    per_metric = time.perf_counter() - start
    start = time.perf_counter()
    _pair_test(mtme, task, first, second, 0)
    per_pair = time.perf_counter() - start
    start = time.perf_counter()
    _pair_test(mtme, task, first, second, k_probe)
    per_draw = max(0.0, time.perf_counter() - start - per_pair) / max(k_probe, 1)
    return Cost(per_metric, per_pair, per_draw)


def plan(cost: Cost, n_req: int, k_req: int, budget: float, subset: int | None) -> tuple[int, int]:
    """Metrics and draws for the measured MTME run: as requested if it fits the budget."""
    if subset:
        return max(2, min(subset, n_req)), k_req
    if budget <= 0:
        return n_req, k_req
    n = n_req
    while n > 2 and cost.predict(n, k_req) > budget:
        n -= 1
    k = k_req
    if cost.predict(2, k_req) > budget and cost.per_draw > 0:
        k = int((budget - 2 * cost.per_metric - cost.per_pair) / cost.per_draw)
        k = min(k_req, max(10, k))
    return n, k


def run_mtme(mtme, task: MtmeTask, n: int, k: int, seed: int, probe: Cost) -> MtmeRun:
    names = evenly_spaced(list(task.corrs), n)
    corrs = {m: task.corrs[m] for m in names}
    psd = mtme.stats.PermutationSigDiffParams(block_size=max(k, 1))
    np.random.seed(seed)  # MTME draws from NumPy's global generator
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ranks, sig, _, _ = mtme.data.CompareMetrics(
            corrs, task.corr_fcn, task.average_by, k, psd, ALPHA, perm_test=task.perm_test, **task.corr_args)
    seconds = time.perf_counter() - start
    fixed = n * probe.per_metric + n_pairs(n) * probe.per_pair
    per_draw = max(0.0, seconds - fixed) / (n_pairs(n) * k) if k else probe.per_draw
    cost = Cost(probe.per_metric, probe.per_pair, per_draw)
    order = list(ranks)
    return MtmeRun(order, {m: float(ranks[m][0]) for m in order}, {m: int(ranks[m][1]) for m in order},
                   np.asarray(sig), k, seconds, cost)


def mtme_protocol(mtme, task: MtmeTask, args) -> MtmeRun:
    n_req = len(task.corrs)
    probe = probe_cost(mtme, task, min(task.k, 20))
    n, k = plan(probe, n_req, task.k, args.mtme_budget, args.subset_metrics)
    full = probe.predict(n_req, task.k)
    print(f"  MTME {task.label}: requested {n_req} metrics ({n_pairs(n_req)} pairs) at k={task.k}, "
          f"probe estimate {full:.0f} s; running {n} metrics at k={k}", flush=True)
    run = run_mtme(mtme, task, n, k, args.seed, probe)
    print(f"  MTME {task.label}: {run.provenance()}", flush=True)
    return run


def system_corrs(mtme, d: Data) -> dict[str, Any]:
    gold = d.human.mean(axis=1).tolist()
    return {m: mtme.stats.Correlation(d.human.shape[0], gold, v.mean(axis=1).tolist()) for m, v in d.metrics.items()}


def segment_corrs(mtme, d: Data, names: list[str]) -> dict[str, Any]:
    gold = d.human.ravel().tolist()  # system-major, as EvalSet.Correlation packs it
    return {m: mtme.stats.Correlation(d.human.shape[0], gold, d.metrics[m].ravel().tolist()) for m in names}


# ----------------------------------------------------------------------------- xcorrstat


def timed(fn: Callable, *a, **kw) -> tuple[Any, float]:
    start = time.perf_counter()
    out = fn(*a, **kw)
    return out, time.perf_counter() - start


def warm_up(d: Data) -> float:
    small = d.grid.isel(system=slice(0, 5), input=slice(0, 30))
    few = d.names[:3]
    common = {"target": "mqm", "metrics": few}
    draws = {"n_resamples": 20, "rng": 0}
    perm = xcorrstat.Permutation(**draws)
    systems = xcorrstat.Permutation("system", **draws)
    start = time.perf_counter()
    xcorrstat.correlate(small, target="mqm", level=["system", "input", "global"], method=["pearson", "kendall"])
    xcorrstat.compare(small, level="system", method="pearson", test=perm, **common)
    xcorrstat.compare(small, level="system", method="pearson", test=systems, **common)
    xcorrstat.compare(d.means.isel(system=slice(0, 5)), level="system", test=systems, **common)
    xcorrstat.compare(small, level="global", method="kendall", test=perm, **common)
    xcorrstat.compare(small, level="input", method="kendall", variant="acc23", test=perm, **common)
    xcorrstat.compare(small, level="input", method="kendall", variant="acc23",
                      test=xcorrstat.Permutation(swap="pairs", **draws), **common)
    xcorrstat.calibrate_ties(small, target="mqm", metrics=few[:1], level="input")
    return time.perf_counter() - start


PERMUTATION_SETTINGS = ("permute", "swap", "standardise", "epsilon")  # fields of xcorrstat.Permutation


def xc_compare(data: xr.Dataset, metrics: list[str] | None, k: int, seed: int, **kw) -> tuple[xr.Dataset, float]:
    """compare() with the permutation test at k draws; ``kw`` holds compare's own arguments and the
    test's settings (``permute``, ``swap``, ``standardise``, ``epsilon``), which go to Permutation."""
    settings = {name: kw.pop(name) for name in PERMUTATION_SETTINGS if name in kw}
    test = xcorrstat.Permutation(n_resamples=k, rng=seed, pvalue="fraction", **settings)
    return timed(xcorrstat.compare, data, target="mqm", metrics=metrics, test=test, alpha=ALPHA, **kw)


def xc_clusters(res: xr.Dataset, names: list[str]) -> dict[str, int]:
    """xcorrstat's greedy clusters on a subset of metrics (its draws are shared, so a subset's
    p-values are those of a compare() on that subset)."""
    sub = res.sel(metric=names, other_metric=names)
    corr = sub["correlation"].values
    better = sub["significant"].values  # [j, i]: metric j significantly better than metric i
    try:
        from xcorrstat._kernels.clusters import greedy_clusters
    except ImportError:  # same rule, written out
        greedy_clusters = _greedy
    return dict(zip(names, (int(c) for c in greedy_clusters(corr, better))))


def _greedy(corr: np.ndarray, better: np.ndarray) -> np.ndarray:
    out, cluster, members = np.zeros(corr.size, dtype=int), 0, []
    for k in np.argsort(-corr, kind="stable"):
        if not members or better[members, k].any():
            cluster, members = cluster + 1, []
        members.append(k)
        out[k] = cluster
    return out


# ----------------------------------------------------------------------------- agreement


def mc_tolerance(p: float, k1: int, k2: int) -> float:
    """Three Monte-Carlo standard errors of a difference of two independent p-value estimates."""
    p = min(max(p, 1.0 / max(k1, k2)), 1 - 1.0 / max(k1, k2))
    return 3 * math.sqrt(p * (1 - p) * (1 / k1 + 1 / k2)) + 1.0 / min(k1, k2)


def compare_pvalues(run: MtmeRun, res: xr.Dataset, k_xc: int, same_test: bool) -> dict[str, Any]:
    pv = res["pvalue"]
    rows = [(a, b, p, float(pv.sel(metric=a, other_metric=b))) for (a, b), p in run.pvalues().items()]
    same = sum((p <= ALPHA) == (q <= ALPHA) for _, _, p, q in rows)
    within = sum(abs(p - q) <= mc_tolerance((p + q) / 2, run.k, k_xc) for _, _, p, q in rows)
    ours = xc_clusters(res, run.metrics)
    clusters = sum(ours[m] == run.rank[m] for m in run.metrics)
    out = {"rows": rows, "same": same, "within": within, "clusters": clusters}
    parts = [f"same decision {same}/{len(rows)}"]
    if same_test:
        parts.append(f"p within MC error {within}/{len(rows)}")
    parts.append(f"clusters {clusters}/{len(run.metrics)}")
    out["summary"] = ", ".join(parts)
    return out


def print_pairs(title: str, run: MtmeRun, results: dict[str, xr.Dataset], show: int) -> None:
    """A few pairs side by side: adjacent metrics in MTME's ranking (where the p-values are not 0)."""
    m = run.metrics
    pairs = [(m[i], m[i + 1]) for i in range(len(m) - 1)][:show]
    if len(m) > 2:
        pairs.append((m[0], m[-1]))
    head = f"    {'metric':>9} {'other':>9} {'MTME p':>8}" + "".join(f" {lab:>14}" for lab in results)
    print(f"  {title}\n{head}")
    pvals = run.pvalues()
    for a, b in pairs:
        line = f"    {a:>9} {b:>9} {pvals[(a, b)]:8.3f}"
        line += "".join(f" {float(r['pvalue'].sel(metric=a, other_metric=b)):14.3f}" for r in results.values())
        print(line)
    ours = [xc_clusters(r, m) for r in results.values()]
    print("    clusters (MTME / " + " / ".join(results) + "): "
          + ", ".join(f"{x}:{run.rank[x]}/" + "/".join(str(c[x]) for c in ours) for x in m))


def corr_check(mine: dict[str, float], theirs: dict[str, float]) -> tuple[float, str]:
    diff = max(abs(mine[m] - theirs[m]) for m in theirs)
    return diff, f"r {'ok' if diff <= 1e-9 else 'DIFFERS'} (max|diff| {diff:.0e}, {len(theirs)} m)"


# ----------------------------------------------------------------------------- protocols


@dataclasses.dataclass
class Row:
    protocol: str
    mtme: str
    xc: str
    ratio: str
    agreement: str


def fmt_num(seconds: float) -> str:
    return f"{seconds:.3g}" if seconds < 100 else f"{seconds:,.0f}"


def fmt_s(seconds: float, measured: bool) -> str:
    return f"{fmt_num(seconds)} ({'measured' if measured else 'extrapolated'})"


def fmt_ratio(mtme_s: float, xc_s: float) -> str:
    return f"{fmt_num(mtme_s / xc_s)}x" if xc_s > 0 else "-"


def protocol_system(mtme, d: Data, args, which: set[str], rows: list[Row], notes: list[str]) -> None:
    m_all, k = len(d.names), args.k
    print(f"\n[1/2] system-level Pearson, all {n_pairs(m_all)} pairs, k={k}", flush=True)
    task = MtmeTask("system-level Pearson (CompareMetrics on per-system scores)", system_corrs(mtme, d),
                    scipy.stats.pearsonr, "none", k)
    run = mtme_protocol(mtme, task, args)
    mtme_s, measured = run.estimate(m_all, k)
    if not measured:
        notes.append(f"protocols 1-2, MTME: extrapolated to {m_all} metrics at k={k} from a run {run.provenance()}.")
    theirs = {m: float(task.corrs[m].Pearson()[0]) for m in d.names}
    r_xc = xcorrstat.correlate(d.grid, target="mqm", level="system", method="pearson")
    _, r_text = corr_check({m: float(r_xc.sel(metric=m)) for m in d.names}, theirs)
    results = {}
    if "1" in which:
        variants = (("1a", "PERM-BOTH", ("system", "input"), "cells", "different test"),
                    ("1b", "PERM-SYSTEMS", "system", "cells", "same units"),
                    ("1c", "PERM-SYSTEMS system-means", "system", "system-means", "same test"))
        for tag, label, permute, standardise, kind in variants:
            res, secs = xc_compare(d.grid, None, k, args.seed, level="system", method="pearson", permute=permute,
                                   standardise=standardise)
            results[f"grid {label}"] = res
            agree = compare_pvalues(run, res, k, same_test=kind == "same test")
            rows.append(Row(f"{tag} sys Pearson, grid, xc {label} ({m_all} m, k={k})",
                            fmt_s(mtme_s, measured), fmt_num(secs), fmt_ratio(mtme_s, secs),
                            f"{r_text}; {kind}: {agree['summary']}"))
    if "2" in which:
        r_means = xcorrstat.correlate(d.means, target="mqm", level="system", method="pearson")
        _, r2_text = corr_check({m: float(r_means.sel(metric=m)) for m in d.names}, theirs)
        res, secs = xc_compare(d.means, None, k, args.seed, level="system", method="pearson", permute="system")
        results["means PERM-SYS"] = res
        agree = compare_pvalues(run, res, k, same_test=True)
        rows.append(Row(f"2  sys Pearson, per-system means, PERM-SYSTEMS ({m_all} m, k={k})",
                        fmt_s(mtme_s, measured), fmt_num(secs),
                        fmt_ratio(mtme_s, secs), f"{r2_text}; same test: {agree['summary']}"))
    print_pairs(f"p-values (H1: metric beats other), MTME at k={run.k}, xcorrstat at k={k}:", run, results,
                args.show_pairs)
    notes.append("protocol 1: MTME's system-level test swaps whole systems' z-scored per-system scores; "
                 "xcorrstat PERM-BOTH swaps (z-scored) cells of the grid, a different and more powerful test, "
                 "so its decisions differ; PERM-SYSTEMS on the grid swaps the same units as MTME but "
                 f"standardises over cells, not over the {d.human.shape[0]} means; 1c (standardise='system-means') "
                 "and protocol 2 are MTME's test exactly (their MTME time is that of the same run).")
    notes.append(f"protocols 1-2, p-values and clusters compared on the {len(run.metrics)} metrics "
                 f"({n_pairs(len(run.metrics))} pairs) MTME ran; xcorrstat's draws are shared by all pairs, so its "
                 "p-values on a subset are those of a compare() on that subset.")


def protocol_segment_kendall(mtme, d: Data, args, rows: list[Row], notes: list[str]) -> None:
    names = evenly_spaced(d.names, args.segment_metrics)
    ks, k, m_all = args.k_segment, args.k, len(d.names)
    print(f"\n[3] segment-level Kendall tau-b, no grouping, PERM-BOTH: {len(names)} metrics, k={ks}", flush=True)
    task = MtmeTask("seg Kendall tau-b (PermutationSigDiff kendalltau, average_by=none)",
                    segment_corrs(mtme, d, names), scipy.stats.kendalltau, "none", ks)
    run = mtme_protocol(mtme, task, args)
    res, secs = xc_compare(d.grid, names, ks, args.seed, level="global", method="kendall", variant="b",
                           permute=("system", "input"))
    r_text = corr_check({m: float(res["correlation"].sel(metric=m)) for m in run.metrics}, run.corr)[1]
    agree = compare_pvalues(run, res, ks, same_test=True)
    mtme_s, measured = run.estimate(len(names), ks)
    rows.append(Row(f"3  seg Kendall tau-b, no grouping, PERM-BOTH ({len(names)} m, k={ks})",
                    fmt_s(mtme_s, measured), f"{fmt_num(secs)} (measured)", fmt_ratio(mtme_s, secs),
                    f"{r_text}; same test: {agree['summary']}"))
    big_mtme, _ = run.estimate(m_all, k)
    big_xc = secs * (n_pairs(m_all) / n_pairs(len(names))) * (k / ks)
    rows.append(Row(f"3' same at WMT size ({m_all} m, {n_pairs(m_all)} pairs, k={k})",
                    fmt_s(big_mtme, False), f"{fmt_num(big_xc)} (extrapolated)", fmt_ratio(big_mtme, big_xc),
                    "both scaled linearly (pairs, draws)"))
    print_pairs(f"p-values, both at k={ks}:", run, {"xc PERM-BOTH": res}, args.show_pairs)
    notes.append(f"protocol 3, MTME: {run.provenance()}. xcorrstat measured on {len(names)} metrics at k={ks}, "
                 f"its WMT-size time scaled linearly by pairs and draws.")


def protocol_segment_acc(mtme, d: Data, args, rows: list[Row], notes: list[str]) -> None:
    names = evenly_spaced(d.names, args.segment_metrics)
    ks, k, m_all = args.k_segment, args.k, len(d.names)
    print(f"\n[4] segment-level item-wise acc_eq, calibrated epsilons, pair-outcome test: MTME on {len(names)} "
          f"metrics at k={ks}, xcorrstat on {m_all} metrics at k={k}", flush=True)
    task = MtmeTask("seg acc_eq item-wise, 'pairs' test (CompareMetrics perm_test=pairs)",
                    segment_corrs(mtme, d, names), mtme.stats.KendallWithTiesOpt, "item", ks,
                    perm_test="pairs", corr_args={"sample_rate": 1.0})
    run = mtme_protocol(mtme, task, args)
    common = {"level": "input", "method": "kendall", "variant": "acc23", "swap": "pairs", "epsilon": "calibrate"}
    res, secs = xc_compare(d.grid, None, k, args.seed, **common)  # every metric, WMT size, measured
    sub, sub_secs = xc_compare(d.grid, run.metrics, run.k, args.seed, **common)  # MTME's metrics and draws
    r_text = corr_check({m: float(res["correlation"].sel(metric=m)) for m in run.metrics}, run.corr)[1]
    eps_text = epsilon_check(mtme, d, res, run.metrics)
    agree = compare_pvalues(run, res, k, same_test=True)
    agree_sub = compare_pvalues(run, sub, run.k, same_test=True)
    mtme_sub, measured = run.estimate(len(run.metrics), run.k)
    rows.append(Row(f"4  seg acc_eq item-wise, pairs test, calibrated eps ({len(run.metrics)} m, k={run.k})",
                    fmt_s(mtme_sub, measured), f"{fmt_num(sub_secs)} (measured)", fmt_ratio(mtme_sub, sub_secs),
                    f"{r_text}; {eps_text}; same test: {agree_sub['summary']}"))
    big_mtme, _ = run.estimate(m_all, k)
    rows.append(Row(f"4' same at WMT size ({m_all} m, {n_pairs(m_all)} pairs, k={k})",
                    fmt_s(big_mtme, False), f"{fmt_num(secs)} (measured)", fmt_ratio(big_mtme, secs),
                    f"MTME extrapolated; xc p-values at k={k} vs MTME's: {agree['summary']}"))
    print_pairs(f"p-values (same test), MTME at k={run.k}, xcorrstat at k={run.k} / {k}:", run,
                {f"xc k={run.k}": sub, f"xc k={k}": res}, args.show_pairs)
    notes.append(f"protocol 4, MTME: {run.provenance()}; CompareMetrics re-calibrates both metrics' epsilons "
                 f"(KendallWithTiesOpt, every pair) in each pair of metrics: 2 x {n_pairs(m_all)} calibrations at "
                 f"WMT size. xcorrstat calibrates each metric once and shares one set of draws between all pairs "
                 f"(measured on all {m_all} metrics at k={k}: {fmt_num(secs)} s, calibration included).")
    notes.append("protocol 4: p-values count draws within 1e-12 of delta as extreme in xcorrstat; MTME's float "
                 "comparison drops some exact ties, so with few pairs per group its p-values can be slightly lower.")


def epsilon_check(mtme, d: Data, res: xr.Dataset, names: list[str]) -> str:
    """xcorrstat's calibrated epsilons against MTME's KendallWithTiesOpt (item-wise, every pair)."""
    gold = d.human.ravel().tolist()
    same = 0
    for m in names:
        _, theirs, _ = mtme.stats.KendallWithTiesOpt(gold, d.metrics[m].ravel().tolist(), "acc23",
                                                     d.human.shape[0], "item", 1.0)
        same += abs(float(res["epsilon"].sel(metric=m)) - float(theirs)) <= 1e-12
    return f"epsilon equal {same}/{len(names)}"


def protocol_tau(mtme, d: Data, args, rows: list[Row], notes: list[str]) -> None:
    name = d.names[0]
    print(f"\n[tau] tie calibration of {name} (acc_eq, item-wise, every pair)", flush=True)
    metric_by_item = d.metrics[name].T  # rows are segments, as KendallWithTiesOpt(average_by="item")
    human_by_item = d.human.T
    theirs, t_mtme = timed(mtme.tau.tau_optimization, metric_by_item, human_by_item,
                           mtme.tau.TauSufficientStats.acc_23, 1.0)
    ours, t_xc = timed(xcorrstat.calibrate_ties, d.grid, target="mqm", metrics=[name], level="input",
                       variant="acc23")
    de = abs(float(ours["epsilon"].item()) - float(theirs.best_threshold))
    dt = abs(float(ours["correlation"].item()) - float(theirs.best_tau))
    ok = "ok" if max(de, dt) <= 1e-9 else "DIFFERS"
    rows.append(Row(f"tau tau_optimization / calibrate_ties (1 m, {d.human.shape[1] * n_pairs(d.human.shape[0]):,} pairs)",
                    fmt_s(t_mtme, True), fmt_num(t_xc), fmt_ratio(t_mtme, t_xc),
                    f"{ok}: epsilon |diff| {de:.0e}, acc_eq |diff| {dt:.0e}"))
    notes.append(f"tau: epsilon {theirs.best_threshold:.6g} (MTME) / {float(ours['epsilon'].item()):.6g} "
                 f"(xcorrstat), acc_eq {theirs.best_tau:.6f} / {float(ours['correlation'].item()):.6f}.")


# ----------------------------------------------------------------------------- main


def print_table(rows: list[Row]) -> None:
    head = Row("protocol", "MTME s", "xcorrstat s", "ratio", "agreement")
    cells = [head] + rows
    widths = [max(len(getattr(r, f.name)) for r in cells) for f in dataclasses.fields(Row)]
    for i, r in enumerate(cells):
        vals = [getattr(r, f.name) for f in dataclasses.fields(Row)]
        print("| " + " | ".join(v.ljust(w) for v, w in zip(vals, widths)) + " |")
        if i == 0:
            print("|" + "|".join("-" * (w + 2) for w in widths) + "|")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mtme-source", default=None,
                   help="folder of an mt-metrics-eval checkout (holds mt_metrics_eval/); none: skip")
    p.add_argument("--systems", type=int, default=14)
    p.add_argument("--segments", type=int, default=1875)
    p.add_argument("--metrics", type=int, default=52)
    p.add_argument("--k", type=int, default=1000, help="draws of the permutation tests (protocols 1-2, WMT size)")
    p.add_argument("--k-segment", type=int, default=100, help="draws measured in protocols 3-4 (as the issue)")
    p.add_argument("--segment-metrics", type=int, default=6, help="metrics of protocols 3-4")
    p.add_argument("--subset-metrics", type=int, default=None,
                   help="run MTME on this many metrics of each protocol (evenly spaced) and extrapolate")
    p.add_argument("--mtme-budget", type=float, default=150.0,
                   help="seconds an MTME protocol may take before it runs on a subset and is extrapolated "
                        "(0: no limit)")
    p.add_argument("--protocols", default="all", help=f"comma-separated, of {','.join(ALL_PROTOCOLS)}, or all")
    p.add_argument("--show-pairs", type=int, default=6, help="pairs printed side by side per protocol")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    which = set(ALL_PROTOCOLS) if args.protocols == "all" else {s.strip() for s in args.protocols.split(",")}
    if which - set(ALL_PROTOCOLS):
        p.error(f"unknown protocol(s) {sorted(which - set(ALL_PROTOCOLS))}; choose from {ALL_PROTOCOLS}")
    args.which = which
    if args.metrics < 2 or args.segment_metrics < 2:
        p.error("need at least 2 metrics")
    args.segment_metrics = min(args.segment_metrics, args.metrics)
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if not args.mtme_source:
        print("bench_mtme: skipped: no --mtme-source given (a checkout of google-research/mt-metrics-eval; "
              "the PyPI package of that name is a different project).")
        return 0
    mtme = load_mtme(args.mtme_source)
    d = make_data(args.systems, args.segments, args.metrics, args.seed)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    levels = np.unique(d.human)
    print(f"data: {args.systems} systems x {args.segments} segments, {args.metrics} metrics, seed {args.seed}; "
          f"human (MQM-like): {levels.size} levels {levels.min():g}..{levels.max():g}, "
          f"{(d.human == 0).mean():.0%} of segments at 0")
    print(f"xcorrstat {getattr(xcorrstat, '__version__', '?')} on {cores} core(s) (Dask threads); "
          f"MTME single-threaded; MTME budget {args.mtme_budget:g} s per protocol")
    print(f"xcorrstat warm-up (excluded): {warm_up(d):.1f} s", flush=True)
    rows: list[Row] = []
    notes: list[str] = []
    start = time.perf_counter()
    if args.which & {"1", "2"}:
        protocol_system(mtme, d, args, args.which, rows, notes)
    if "3" in args.which:
        protocol_segment_kendall(mtme, d, args, rows, notes)
    if "4" in args.which:
        protocol_segment_acc(mtme, d, args, rows, notes)
    if "tau" in args.which:
        protocol_tau(mtme, d, args, rows, notes)
    print(f"\nResults (m = metrics; ratio = MTME s / xcorrstat s; xc = xcorrstat; "
          f"total run {time.perf_counter() - start:.0f} s)\n")
    print_table(rows)
    print("\nNotes:")
    for note in notes + [
        ("p-values: k_extreme / k on both sides (xcorrstat Permutation(pvalue='fraction')); decisions and clusters at "
         f"p <= {ALPHA} without correction (MTME's AssignRanks; xcorrstat's greedy clusters on the same metrics)."),
        "'p within MC error': |p_MTME - p_xcorrstat| <= 3 Monte-Carlo SEs + 1/k (independent draws).",
    ]:
        print(f"- {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
