"""Speed matrix: seconds and peak memory of every working cell of the capability table, at two memory budgets.

Every cell the capability table (``xcorrstat._capabilities``) supports -- an operation at a level,
coefficient and Kendall variant -- is called as ``benchmarks/api_support.py`` calls it (its
enumeration is imported, not repeated), on data of two shapes:

* ``shared``: a shared task, 52 metrics x 15 systems x 2,000 segments with 10% of the cells missing;
* ``wide``: many systems, 5,000 systems x 20 inputs (3 metrics and the target), and 1,000 x 20 beside
  it: the ``x1k`` column is the ratio of the two times (5 for time linear in the systems);

each at 1,000 draws, at the default memory budget and at 256 MiB (``set_options(memory_budget=...)``).
Each cell runs in a fresh process, which first calls it on a small slice (so numba's loading and the
imports are not counted) and then times the call; its peak RSS (``getrusage``, the whole process) is
measured in that process. The table gives the cell, its seconds, the peak RSS in MiB, the ratio to
the Pearson cell of its operation and level (the same scheme), and, where a peer computes the same,
its seconds and the ratio: mt-metrics-eval's ``PermutationSigDiff`` (``--mtme-source``) for the
permutation test at the input and global levels, nlpstats 0.0.1's ``bootstrap``
(``--baseline-python``) for bootstrap intervals at the system, input and global levels. A cell is
flagged ``MEM`` when its peak RSS is over the budget + 300 MiB and ``SLOW`` when it is over 10x its
Pearson cell.

    python benchmarks/speed_matrix.py --quick                       # small sizes, few draws, < 3 min
    python benchmarks/speed_matrix.py --only "permutation_test|global" --mtme-source PATH
    python benchmarks/speed_matrix.py --out speed.md                # everything (hours)

``--quick`` runs small shapes with 10 draws in one process per shape and budget (not one per cell),
without the warm-up call (a cell's seconds may include numba's loading), the 256 MiB budget on the
shared shape only; its memory column is that process's peak so far. ``--only`` keeps the cells whose ``operation|level|method|variant``
matches a regular expression.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import textwrap
import time
import warnings
from typing import Any

import numpy as np
import xarray as xr

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from api_support import METRICS, TARGET, _calls, own_statistic  # noqa: E402  (the enumeration of the cells)

from xcorrstat._capabilities import OPERATIONS, cells  # noqa: E402

MIB = 2**20
FULL = {"shared": dict(metrics=52, systems=15, inputs=2000, missing=0.1),
        "wide": dict(metrics=4, systems=5000, inputs=20, missing=0.0),
        "wide-1k": dict(metrics=4, systems=1000, inputs=20, missing=0.0)}
QUICK = {"shared": dict(metrics=5, systems=5, inputs=30, missing=0.1),
         "wide": dict(metrics=4, systems=150, inputs=6, missing=0.0),
         "wide-1k": dict(metrics=4, systems=30, inputs=6, missing=0.0)}
BUDGETS = {"default": None, "256MiB": 256 * MIB}


def scores(metrics: int, systems: int, inputs: int, missing: float, seed: int = 0) -> xr.Dataset:
    """Synthetic scores under api_support's names: the target, its metrics, then ``metric_NN``; a share
    ``missing`` of the cells NaN in every variable (segments without a human score, whose metric scores
    are left out too, so that mt-metrics-eval's pair test applies)."""
    rng = np.random.default_rng(seed)
    quality = rng.normal(size=(systems, 1)) + rng.normal(size=(1, inputs))
    names = [*METRICS, *(f"metric_{k:02d}" for k in range(max(0, metrics - len(METRICS))))][:metrics - 1]
    gaps = rng.random(quality.shape) < missing
    data = {TARGET: np.where(gaps, np.nan, quality + rng.normal(size=quality.shape))}
    for name in names:
        data[name] = np.where(gaps, np.nan, quality + rng.uniform(0.5, 2.0) * rng.normal(size=quality.shape))
    dims = ("system", "input")
    return xr.Dataset({k: (dims, v) for k, v in data.items()},
                      coords={"system": [f"s{s}" for s in range(systems)], "input": np.arange(inputs)})


def _kw(operation: str, level: str, method: str, variant: str) -> dict[str, Any]:
    kw = {"level": level, "method": own_statistic if method == "callable" else method, "variant": variant}
    return {k: v for k, v in kw.items() if k in OPERATIONS[operation].arguments}


def child(spec: dict[str, Any]) -> None:
    """Run the cells of ``spec`` in this process; print one JSON line per cell."""
    import scipy.stats  # noqa: F401  (imported on first use by some cells: a cost of the process, not of a cell)

    import xcorrstat

    if spec["budget"] is not None:
        xcorrstat.set_options(memory_budget=spec["budget"])
    ds = scores(**spec["shape"])
    small = _calls(ds.isel(system=slice(0, 6), input=slice(0, 10)), 5, 1)
    calls = _calls(ds, spec["n_resamples"], spec["trials"])
    for operation, level, method, variant in spec["cells"]:
        kw = _kw(operation, level, method, variant)
        out = {"cell": [operation, level, method, variant], "error": ""}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                if spec["warm"]:
                    small[operation](**kw)  # numba's loops loaded, the imports done
                start = time.perf_counter()
                calls[operation](**kw)
                out["seconds"] = time.perf_counter() - start
            except Exception as err:  # noqa: BLE001 (reported in the table)
                out["error"] = f"{type(err).__name__}: {err}"[:200]
        out["peak_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / MIB  # Linux: KiB
        print(json.dumps(out), flush=True)


def _spawn(spec: dict[str, Any], timeout: float) -> list[dict[str, Any]]:
    cmd = [sys.executable, os.path.abspath(__file__), "--child", json.dumps(spec)]
    try:
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return [{"cell": c, "error": f"timeout after {timeout:.0f} s", "peak_mib": float("nan")}
                for c in spec["cells"]]
    rows = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    done = {tuple(r["cell"]) for r in rows}
    rows += [{"cell": c, "error": (run.stderr.strip().splitlines() or ["died"])[-1][:200], "peak_mib": float("nan")}
             for c in spec["cells"] if tuple(c) not in done]
    return rows


# ----------------------------------------------------------------------------- peers

MTME_CODE = textwrap.dedent("""
    import json, sys, time, types, warnings
    for stub in ("apache_beam", "dacite"):
        sys.modules.setdefault(stub, types.ModuleType(stub))
    import numpy as np, scipy.stats
    from mt_metrics_eval import stats
    x, y, z, average_by, method, k = json.loads(sys.stdin.read())
    n_sys = len(z)
    x, y, z = np.array(x, float), np.array(y, float), np.array(z, float)
    z[np.isnan(x) | np.isnan(y)] = np.nan  # MTME drops the items the gold lacks; metrics have no gaps
    gold = [None if v != v else v for v in z.ravel().tolist()]
    c1 = stats.Correlation(n_sys, gold, np.nan_to_num(x).ravel().tolist())
    c2 = stats.Correlation(n_sys, gold, np.nan_to_num(y).ravel().tolist())
    fcn = {"pearson": scipy.stats.pearsonr, "kendall": scipy.stats.kendalltau}[method]
    np.random.seed(0)
    warnings.simplefilter("ignore")
    start = time.perf_counter()
    stats.PermutationSigDiff(c1, c2, fcn, average_by, k, stats.PermutationSigDiffParams(block_size=k))
    print(json.dumps({"seconds": time.perf_counter() - start}))
""")

NLPSTATS_CODE = textwrap.dedent("""
    import json, sys, time, warnings
    import numpy as np
    from nlpstats.correlations import bootstrap
    x, z, level, method, k = json.loads(sys.stdin.read())
    warnings.simplefilter("ignore")
    start = time.perf_counter()
    bootstrap(np.array(x, float), np.array(z, float), level, method, "both", n_resamples=k)
    print(json.dumps({"seconds": time.perf_counter() - start}))
""")


def peer_seconds(args: argparse.Namespace, cell: tuple[str, ...], ds: xr.Dataset, k: int) -> float | None:
    """A peer's seconds for the same computation, in a fresh process, or None where none computes it."""
    operation, level, method, variant = cell
    x, y = (ds[m].values.tolist() for m in METRICS[:2])
    z = ds[TARGET].values.tolist()
    if (args.mtme_source and operation == "permutation_test" and level in ("input", "global")
            and method in ("pearson", "kendall") and variant == "b"):
        env = {**os.environ, "PYTHONPATH": os.path.abspath(args.mtme_source)}
        payload = [x, y, z, {"input": "item", "global": "none"}[level], method, k]
        cmd, cwd = [sys.executable, "-c", MTME_CODE], os.path.abspath(args.mtme_source)
    elif (args.baseline_python and operation == "bootstrap" and level in ("system", "input", "global")
          and method in ("pearson", "spearman", "kendall") and variant == "b" and not np.isnan(ds[METRICS[0]]).any()):
        env, cwd = dict(os.environ), None
        cmd, payload = [args.baseline_python, "-c", NLPSTATS_CODE], [x, z, level, method, k]
    else:
        return None
    try:
        run = subprocess.run(cmd, input=json.dumps(payload), capture_output=True, text=True, env=env, cwd=cwd,
                             timeout=args.timeout)  # the scores on stdin: too long for an argument
        return float(json.loads(run.stdout.strip().splitlines()[-1])["seconds"])
    except (subprocess.TimeoutExpired, IndexError, ValueError, KeyError):
        return None


# ----------------------------------------------------------------------------- the table


def _label(cell: tuple[str, ...]) -> str:
    operation, level, method, variant = cell
    return f"{operation} {level} {method}" + (f" {variant}" if method == "kendall" else "")


def table(rows: list[dict[str, Any]]) -> list[list[str]]:
    """Rows of the printed table, with the ratios and flags."""
    by = {(r["shape"], r["budget"], tuple(r["cell"])): r for r in rows}
    out = []
    for r in rows:
        op, level, method, variant = r["cell"]
        if r["shape"] == "wide-1k":
            continue
        secs = r.get("seconds")
        pearson = by.get((r["shape"], r["budget"], (op, level, "pearson", "b")), {}).get("seconds")
        ratio = secs / pearson if secs is not None and pearson else None
        small = by.get(("wide-1k", r["budget"], tuple(r["cell"])), {}).get("seconds") if r["shape"] == "wide" else None
        limit = (r["budget_bytes"] / MIB) + 300
        flags = [f for f, bad in (("MEM", r["peak_mib"] > limit), ("SLOW", ratio is not None and ratio > 10),
                                  ("ERROR", bool(r["error"]))) if bad]
        peer = r.get("peer")
        out.append([r["shape"], r["budget"], _label(r["cell"]),
                    "-" if secs is None else f"{secs:.3f}", f"{r['peak_mib']:.0f}",
                    "-" if ratio is None else f"{ratio:.1f}",
                    "-" if small is None or secs is None or not small else f"{secs / small:.1f}",
                    "-" if peer is None else f"{peer:.2f}",
                    "-" if peer is None or not secs else f"{peer / secs:.2g}x",
                    " ".join(flags) + (f" {r['error']}" if r["error"] else "")])
    return out


HEAD = ["shape", "budget", "cell", "seconds", "peak RSS MiB", "/ Pearson", "x1k", "peer s", "peer ratio", "flags"]


def markdown(rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(HEAD) + " |", "|" + "---|" * len(HEAD)]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="small shapes, 10 draws, one process per shape and budget")
    p.add_argument("--only", help="regular expression on 'operation|level|method|variant'")
    p.add_argument("--shapes", default="shared,wide,wide-1k", help="shapes to run (shared, wide, wide-1k)")
    p.add_argument("--budgets", default="default,256MiB", help="budgets to run (default, 256MiB)")
    p.add_argument("--n-resamples", type=int, help="draws (default 1,000; --quick 10)")
    p.add_argument("--trials", type=int, help="trials of the diagnostics (default 20; --quick 1)")
    p.add_argument("--timeout", type=float, default=1800.0, help="seconds a cell's process may take")
    p.add_argument("--mtme-source", help="folder of an mt-metrics-eval checkout (holds mt_metrics_eval/)")
    p.add_argument("--baseline-python", help="a Python with nlpstats 0.0.1 installed (benchmarks/peers.py)")
    p.add_argument("--out", help="also write the table as Markdown to this file")
    p.add_argument("--child", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        child(json.loads(args.child))
        return 0
    shapes = QUICK if args.quick else FULL
    k = args.n_resamples or (10 if args.quick else 1000)
    trials = args.trials or (1 if args.quick else 20)
    import xcorrstat

    default_budget = xcorrstat.get_options()["memory_budget"]
    todo = [c[:4] for c in cells() if c[4] == "yes"]
    if args.only:
        todo = [c for c in todo if re.search(args.only, "|".join(c))]
    rows: list[dict[str, Any]] = []
    start = time.perf_counter()
    for shape in args.shapes.split(","):
        for budget in args.budgets.split(","):
            if args.quick and budget != "default" and shape != "shared":
                continue  # --quick: the small budget on the shared task only
            spec = {"shape": shapes[shape], "budget": BUDGETS[budget], "n_resamples": k, "trials": trials,
                    "warm": not args.quick}
            groups = [todo] if args.quick else [[c] for c in todo]
            for group in groups:
                for r in _spawn({**spec, "cells": group}, args.timeout):
                    r.update(shape=shape, budget=budget, budget_bytes=BUDGETS[budget] or default_budget)
                    if budget == "default" and shape != "wide-1k":
                        r["peer"] = peer_seconds(args, tuple(r["cell"]), scores(**shapes[shape]), k)
                    rows.append(r)
                    print(f"  {shape} {budget} {_label(tuple(r['cell']))}: "
                          f"{r.get('seconds', float('nan')):.3f} s, {r['peak_mib']:.0f} MiB {r['error']}",
                          file=sys.stderr, flush=True)
    shown = table(rows)
    widths = [max(len(h), *(len(row[i]) for row in shown)) if shown else len(h) for i, h in enumerate(HEAD)]
    print("  ".join(h.ljust(w) for h, w in zip(HEAD, widths)))
    for row in shown:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)))
    flagged = [row for row in shown if row[-1]]
    print(f"\n{len(shown)} cells in {time.perf_counter() - start:.0f} s, {k} draws; {len(flagged)} flagged "
          f"(MEM: peak RSS over budget + 300 MiB; SLOW: over 10x the Pearson cell)")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write(markdown(shown))
    return 0


if __name__ == "__main__":
    sys.exit(main())
