"""Speed matrix: seconds and peak memory of every working cell of the capability table, at two memory budgets.

Every cell the capability table (``xcorrstat._capabilities``) supports -- an operation at a level,
coefficient and Kendall variant -- is called as ``benchmarks/api_support.py`` calls it (its
enumeration is imported, not repeated), on data of these shapes:

* ``shared``: a shared task, 52 metrics x 15 systems x 2,000 segments with 10% of the cells missing;
* ``tied``: the same with tied scores (the target in whole numbers, the metrics to one decimal), as real
  segment scores are;
* ``wide``: many systems, 5,000 systems x 20 inputs (3 metrics and the target), and ``wide-1k``, 1,000 x 20,
  beside it: the ``x1k`` column is the ratio of the two times (5 for time linear in the systems);

each at 1,000 draws, at the default memory budget and at 256 MiB (``set_options(memory_budget=...)``).

How it is measured. One fresh process per shape, budget and operation makes the data once and runs that
operation's cells one after the other. Before each cell it calls the cell on a slice of every system and
the first 20 inputs, 5 draws (numba's loops loaded or compiled, the imports done: the kernels' routes follow
the systems, the pairs and the ties, which the slice keeps, so the timed call meets no loop it has not
loaded; a slice of 6 systems took other routes, and a loop met first in the timed call was compiled
there on a fresh install, about a second), collects garbage, resets the
process's peak RSS (Linux: ``"5"`` written to ``/proc/self/clear_refs``) and reads its RSS; then it times
the call alone (``seconds``: wall clock; ``CPU s``: the process's CPU time over the call, all threads,
which other load on the machine inflates less) and reads the peak RSS (``VmHWM`` in ``/proc/self/status``).
``peak MiB`` is that peak above the RSS just before the call: the memory the call itself took, beside
the loaded data and what the warm-up left, which is what the goal "within ``memory_budget`` + 300 MiB"
bounds; ``process MiB`` is the whole process's peak RSS so far (interpreter, libraries, data and every
cell of the process up to this one). A cell whose call takes over ``--max-seconds`` (or whose warm-up
does) is reported as TIMEOUT: its process is killed, not waited for, and a new one runs the rest.

The table gives the cell, its seconds, its memory, the ratio to the Pearson cell of its operation and
level (the same scheme), the ``x1k`` ratio and, where a peer computes the same, its seconds and the
ratio: mt-metrics-eval's ``PermutationSigDiff`` (``--mtme-source``) for the permutation test at the
input and global levels, nlpstats 0.0.1's ``bootstrap`` (``--baseline-python``) for bootstrap intervals
at the system, input and global levels. Flags: ``MEM`` when ``peak MiB`` is over the budget + 300 MiB,
``SLOW`` when the seconds are over 10x the Pearson cell's, ``TIMEOUT``, ``ERROR`` (the message follows).

    python benchmarks/speed_matrix.py --quick                       # small sizes, 10 draws, a few minutes
    python benchmarks/speed_matrix.py --only "permutation_test|global" --mtme-source PATH
    python benchmarks/speed_matrix.py --shapes shared --budgets default --rows shared.jsonl   # a piece
    python benchmarks/speed_matrix.py --from-rows shared.jsonl wide.jsonl --out speed.md     # the table

``--quick`` runs small shapes with 10 draws in one process per shape and budget (not per operation), the
256 MiB budget on the shared shape only. ``--only`` keeps the cells whose ``operation|level|method|variant``
matches a regular expression. ``--rows`` appends every cell's raw row to a file as it is measured, so
that pieces run apart (other shapes, budgets, operations) make one table with ``--from-rows``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import xarray as xr

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]  # api_support, and the package of this checkout
from api_support import METRICS, TARGET, _calls, own_statistic  # noqa: E402  (the enumeration of the cells)

from xcorrstat._capabilities import OPERATIONS, cells  # noqa: E402

MIB = 2**20
FULL = {"shared": dict(metrics=52, systems=15, inputs=2000, missing=0.1),
        "tied": dict(metrics=52, systems=15, inputs=2000, missing=0.1, ties=True),
        "wide": dict(metrics=4, systems=5000, inputs=20, missing=0.0),
        "wide-1k": dict(metrics=4, systems=1000, inputs=20, missing=0.0)}
QUICK = {"shared": dict(metrics=5, systems=5, inputs=30, missing=0.1),
         "tied": dict(metrics=5, systems=5, inputs=30, missing=0.1, ties=True),
         "wide": dict(metrics=4, systems=150, inputs=6, missing=0.0),
         "wide-1k": dict(metrics=4, systems=30, inputs=6, missing=0.0)}
BUDGETS = {"default": None, "256MiB": 256 * MIB}


def scores(metrics: int, systems: int, inputs: int, missing: float, ties: bool = False,
           seed: int = 0) -> xr.Dataset:
    """Synthetic scores under api_support's names: the target, its metrics, then ``metric_NN``; a share
    ``missing`` of the cells NaN in every variable (segments without a human score, whose metric scores
    are left out too, so that mt-metrics-eval's pair test applies). With ``ties`` the target is rounded to
    whole numbers (a few levels, as MQM scores are) and every metric to one decimal: ties within and
    between systems, as real segment scores have (the kernels of untied rows do not apply)."""
    rng = np.random.default_rng(seed)
    quality = rng.normal(size=(systems, 1)) + rng.normal(size=(1, inputs))
    names = [*METRICS, *(f"metric_{k:02d}" for k in range(max(0, metrics - len(METRICS))))][:metrics - 1]
    gaps = rng.random(quality.shape) < missing
    data = {TARGET: np.where(gaps, np.nan, quality + rng.normal(size=quality.shape))}
    for name in names:
        data[name] = np.where(gaps, np.nan, quality + rng.uniform(0.5, 2.0) * rng.normal(size=quality.shape))
    if ties:
        data = {k: np.round(v) if k == TARGET else np.round(v, 1) for k, v in data.items()}
    dims = ("system", "input")
    return xr.Dataset({k: (dims, v) for k, v in data.items()},
                      coords={"system": [f"s{s}" for s in range(systems)], "input": np.arange(inputs)})


def _kw(operation: str, level: str, method: str, variant: str) -> dict[str, Any]:
    kw = {"level": level, "method": own_statistic if method == "callable" else method, "variant": variant}
    return {k: v for k, v in kw.items() if k in OPERATIONS[operation].arguments}


def _status() -> dict[str, float]:
    """VmRSS and VmHWM (the peak RSS since the last reset) of this process, in MiB."""
    with open("/proc/self/status", encoding="ascii") as fh:
        fields = dict(line.split(":", 1) for line in fh if line.startswith(("VmRSS", "VmHWM")))
    return {k: int(v.split()[0]) / 1024 for k, v in fields.items()}  # kB


def _reset_peak() -> None:
    """Reset this process's peak RSS (VmHWM) to its current RSS (Linux: clear_refs 5)."""
    with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
        fh.write("5")


def child(spec: dict[str, Any]) -> None:
    """Run the cells of ``spec`` in this process, the data made once; print JSON lines.

    Before each timed call a line ``{"begin": cell}`` (the parent's clock for ``--max-seconds`` starts
    there), after it the cell's row: its seconds, ``peak_mib`` (the peak RSS during the call above the RSS
    just before it, after loading and the warm-up) and ``process_mib`` (this process's peak RSS so far).
    """
    import gc

    import scipy.stats  # noqa: F401  (imported on first use by some cells: a cost of the process, not of a cell)

    import xcorrstat

    if spec["budget"] is not None:
        xcorrstat.set_options(memory_budget=spec["budget"])
    ds = scores(**spec["shape"])
    small = _calls(ds.isel(input=slice(0, 20)), 5, 1)  # every system: the routes of the timed call
    calls = _calls(ds, spec["n_resamples"], spec["trials"])
    process = _status()["VmHWM"]
    for operation, level, method, variant in spec["cells"]:
        kw = _kw(operation, level, method, variant)
        out: dict[str, Any] = {"cell": [operation, level, method, variant], "error": ""}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                small[operation](**kw)  # numba's loops loaded, the imports done
            except Exception:  # noqa: BLE001 (the timed call reports it)
                pass
            gc.collect()
            process = max(process, _status()["VmHWM"])
            _reset_peak()
            before = _status()["VmRSS"]
            print(json.dumps({"begin": out["cell"]}), flush=True)
            try:
                start, cpu = time.perf_counter(), time.process_time()
                calls[operation](**kw)
                out["seconds"], out["cpu"] = time.perf_counter() - start, time.process_time() - cpu
            except Exception as err:  # noqa: BLE001 (reported in the table)
                out["error"] = f"{type(err).__name__}: {err}"[:200]
        peak = _status()["VmHWM"]
        process = max(process, peak)
        out.update(peak_mib=peak - before, base_mib=before, process_mib=process)
        print(json.dumps(out), flush=True)


def _spawn(spec: dict[str, Any], max_seconds: float, emit: Callable[[dict[str, Any]], None]) -> None:
    """Run ``spec``'s cells in fresh processes: one, and a new one for the rest after a cell timed out;
    ``emit`` each cell's row as it is measured.

    A cell whose timed call exceeds ``max_seconds`` (or whose warm-up does) is reported as TIMEOUT and its
    process killed, not waited for."""
    rows: list[dict[str, Any]] = []
    left = [list(c) for c in spec["cells"]]
    while left:
        cmd = [sys.executable, os.path.abspath(__file__), "--child", json.dumps({**spec, "cells": left})]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            left = _follow(proc, left, rows, max_seconds, emit)
        finally:
            if proc.poll() is None:  # a timeout, or this run stopped (Ctrl-C, SIGTERM): the cell's process too
                proc.kill()
            proc.wait()


def _follow(proc: subprocess.Popen[str], left: list[list[str]], rows: list[dict[str, Any]], max_seconds: float,
            emit: Callable[[dict[str, Any]], None]) -> list[list[str]]:
    """Read one cell process's rows until it ends or a cell times out; return the cells left to run."""
    import queue
    import threading

    lines: queue.Queue[str | None] = queue.Queue()
    err: list[str] = []
    threading.Thread(target=lambda: [lines.put(s) for s in proc.stdout] + [lines.put(None)],  # type: ignore[union-attr]
                     daemon=True).start()
    threading.Thread(target=lambda: err.extend(proc.stderr), daemon=True).start()  # type: ignore[arg-type]
    current, deadline = left[0], time.monotonic() + 2 * max_seconds + 60  # loading and the first warm-up
    while True:
        try:
            line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            rows.append({"cell": current, "error": f"TIMEOUT: over {max_seconds:.0f} s", "timeout": True,
                         "peak_mib": float("nan")})
            emit(rows[-1])
            return left[left.index(current) + 1:]
        if line is None:
            proc.wait()
            done = {tuple(r["cell"]) for r in rows}
            for c in left:
                if tuple(c) not in done:
                    rows.append({"cell": c, "error": ("".join(err).strip().splitlines() or ["died"])[-1][:200],
                                 "peak_mib": float("nan")})
                    emit(rows[-1])
            return []
        if not line.startswith("{"):
            continue
        row = json.loads(line)
        if "begin" in row:
            current, deadline = row["begin"], time.monotonic() + max_seconds
            continue
        rows.append(row)
        emit(row)
        nxt = left.index(row["cell"]) + 1
        if nxt < len(left):
            current, deadline = left[nxt], time.monotonic() + max_seconds + 60  # its warm-up


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
                             timeout=args.max_seconds)  # the scores on stdin: too long for an argument
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
        timeout = bool(r.get("timeout"))
        flags = [f for f, bad in (("MEM", r["peak_mib"] > limit), ("SLOW", ratio is not None and ratio > 10),
                                  ("TIMEOUT", timeout), ("ERROR", bool(r["error"]) and not timeout)) if bad]
        peer = r.get("peer")
        process = r.get("process_mib")
        cpu = r.get("cpu")
        out.append([r["shape"], r["budget"], _label(r["cell"]),
                    "-" if secs is None else f"{secs:.3f}", "-" if cpu is None else f"{cpu:.2f}",
                    "-" if r["peak_mib"] != r["peak_mib"] else f"{r['peak_mib']:.0f}",
                    "-" if process is None else f"{process:.0f}",
                    "-" if ratio is None else f"{ratio:.1f}",
                    "-" if small is None or secs is None or not small else f"{secs / small:.1f}",
                    "-" if peer is None else f"{peer:.2f}",
                    "-" if peer is None or not secs else f"{peer / secs:.2g}x",
                    " ".join(flags) + (f" {r['error']}" if r["error"] and not timeout else "")])
    return out


HEAD = ["shape", "budget", "cell", "seconds", "CPU s", "peak MiB", "process MiB", "/ Pearson", "x1k", "peer s", "peer ratio",
        "flags"]


def markdown(rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(HEAD) + " |", "|" + "---|" * len(HEAD)]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="small shapes, 10 draws, one process per shape and budget")
    p.add_argument("--only", help="regular expression on 'operation|level|method|variant'")
    p.add_argument("--shapes", default="shared,tied,wide,wide-1k", help="shapes to run (shared, tied, wide, wide-1k)")
    p.add_argument("--budgets", default="default,256MiB", help="budgets to run (default, 256MiB)")
    p.add_argument("--n-resamples", type=int, help="draws (default 1,000; --quick 10)")
    p.add_argument("--trials", type=int, help="trials of the diagnostics (default 20; --quick 1)")
    p.add_argument("--max-seconds", type=float, default=300.0,
                   help="seconds a cell's timed call may take (then TIMEOUT); also bounds a peer's run")
    p.add_argument("--mtme-source", help="folder of an mt-metrics-eval checkout (holds mt_metrics_eval/)")
    p.add_argument("--baseline-python", help="a Python with nlpstats 0.0.1 installed (benchmarks/peers.py)")
    p.add_argument("--out", help="also write the table as Markdown to this file")
    p.add_argument("--rows", help="append every cell's raw row (JSON, one a line) to this file as it is measured")
    p.add_argument("--from-rows", nargs="+", help="print the table of rows saved by --rows (runs nothing)")
    p.add_argument("--child", help=argparse.SUPPRESS)
    return p


def _measure(args: argparse.Namespace, default_budget: int) -> list[dict[str, Any]]:
    """Run the selected cells, one process per shape, budget and operation (--quick: per shape and budget)."""
    shapes = QUICK if args.quick else FULL
    k = args.n_resamples or (10 if args.quick else 1000)
    trials = args.trials or (1 if args.quick else 20)
    todo = [c[:4] for c in cells() if c[4] == "yes"]
    if args.only:
        todo = [c for c in todo if re.search(args.only, "|".join(c))]
    rows: list[dict[str, Any]] = []

    def emit(r: dict[str, Any], shape: str, budget: str) -> None:
        r.update(shape=shape, budget=budget, budget_bytes=BUDGETS[budget] or default_budget, n_resamples=k)
        if budget == "default" and shape != "wide-1k":
            r["peer"] = peer_seconds(args, tuple(r["cell"]), scores(**shapes[shape]), k)
        rows.append(r)
        if args.rows:
            with open(args.rows, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(r) + "\n")
        print(f"  {shape} {budget} {_label(tuple(r['cell']))}: {r.get('seconds', float('nan')):.3f} s, "
              f"{r['peak_mib']:.0f} MiB {r['error']}", file=sys.stderr, flush=True)

    # an operation at every shape and budget before the next operation: a run cut short has whole groups
    groups = [todo] if args.quick else [[c for c in todo if c[0] == op] for op in dict.fromkeys(c[0] for c in todo)]
    for group in groups:
        for shape in args.shapes.split(","):
            for budget in args.budgets.split(","):
                if args.quick and budget != "default" and shape != "shared":
                    continue  # --quick: the small budget on the shared task only
                spec = {"shape": shapes[shape], "budget": BUDGETS[budget], "n_resamples": k, "trials": trials}
                _spawn({**spec, "cells": group}, args.max_seconds,
                       lambda r, shape=shape, budget=budget: emit(r, shape, budget))
    return rows


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.child:
        child(json.loads(args.child))
        return 0
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # `timeout` stops the cell's process too
    import xcorrstat

    start = time.perf_counter()
    if args.from_rows:
        rows = [json.loads(line) for path in args.from_rows for line in open(path, encoding="utf-8") if line.strip()]
    else:
        rows = _measure(args, xcorrstat.get_options()["memory_budget"])
    shown = table(rows)
    widths = [max(len(h), *(len(row[i]) for row in shown)) if shown else len(h) for i, h in enumerate(HEAD)]
    print("  ".join(h.ljust(w) for h, w in zip(HEAD, widths)))
    for row in shown:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)))
    flagged = [row for row in shown if row[-1]]
    k = rows[0]["n_resamples"] if rows else 0
    took = "saved rows" if args.from_rows else f"{time.perf_counter() - start:.0f} s"
    print(f"\n{len(shown)} cells ({took}), {k} draws; {len(flagged)} flagged "
          f"(MEM: peak over budget + 300 MiB; SLOW: over 10x the Pearson cell; TIMEOUT: over --max-seconds)")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write(markdown(shown))
    return 0


if __name__ == "__main__":
    sys.exit(main())
