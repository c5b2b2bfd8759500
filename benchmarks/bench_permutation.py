"""Permutation tests: xcorrstat vs nlpstats 0.0.1, side by side in one run; all pairs on SummEval.

Installs nlpstats 0.0.1 from PyPI into a throw-away virtual environment (or uses
``--baseline-python``), then times, on the same random matrices and 1,000 permutations:

* PERM-BOTH input-level Kendall at 16 x 100, 58 x 48 and 200 x 48 (goal: >= 300x nlpstats; the wide
  cells take the sort form of the swap kernel, O(S log S) per input and draw);
* PERM-BOTH system-level Pearson at 16 x 100 (goal: >= 30x).

nlpstats' ``"both"`` flips a whole row XOR a whole column; xcorrstat's PERM-BOTH swaps
each cell (Algorithm 2 of Deutsch, Dror & Roth 2021). Both are timed for xcorrstat
(``Permutation(("system", "input"))`` and ``Permutation("system-xor-input")``, the latter the
same scheme as the baseline). Finally ``compare()`` over all 34 SummEval metrics
(561 pairs) against expert_relevance, PERM-BOTH, input-level Kendall, 1,000
permutations (goal: under 60 s on 2 cores).

    python benchmarks/bench_permutation.py [--baseline-resamples 1000] [--skip-baseline] [--skip-compare]
                                           [--cases 58x48 200x48]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import textwrap
import time

import numpy as np
import xarray as xr

import xcorrstat
from peers import baseline_python  # benchmarks/peers.py

N_RESAMPLES = 1000
CASES = [  # (label, systems, inputs, level, method)
    ("input-level Kendall 16x100", 16, 100, "input", "kendall"),
    ("input-level Kendall 58x48", 58, 48, "input", "kendall"),
    ("input-level Kendall 200x48", 200, 48, "input", "kendall"),
    ("system-level Pearson 16x100", 16, 100, "system", "pearson"),
]
GOALS = {"input": 300, "system": 30}

BASELINE = textwrap.dedent(
    """
    import json, sys, time, warnings
    import numpy as np
    from nlpstats.correlations import permutation_test
    warnings.simplefilter("ignore")
    s, i, level, method, n, seed = json.loads(sys.argv[1])
    rng = np.random.default_rng(seed)
    X, Y, Z = (rng.normal(size=(s, i)) for _ in range(3))
    t0 = time.perf_counter()
    res = permutation_test(X, Y, Z, level, method, "both", alternative="greater", n_resamples=n)
    print(json.dumps({"seconds": time.perf_counter() - t0, "pvalue": res.pvalue}))
    """
)


def ours(s, i, level, method, seed, permute):
    rng = np.random.default_rng(seed)
    X, Y, Z = (rng.normal(size=(s, i)) for _ in range(3))
    ds = xr.Dataset({name: (("system", "input"), a) for name, a in (("x", X), ("y", Y), ("human", Z))})
    times = []
    for _ in range(3):  # best of three
        t0 = time.perf_counter()
        res = ds.corrstat.permutation_test(x="x", y="y", target="human", level=level, method=method,
                                           test=xcorrstat.Permutation(permute, n_resamples=N_RESAMPLES, rng=seed))
        times.append(time.perf_counter() - t0)
    return min(times), float(res["pvalue"])


def all_pairs():
    ds = xcorrstat.datasets.summeval()
    t0, c0 = time.perf_counter(), time.process_time()
    res = ds.corrstat.compare(target="expert_relevance", level="input", method="kendall",
                              test=xcorrstat.Permutation(("system", "input"), n_resamples=N_RESAMPLES, rng=0))
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    n = res.sizes["metric"]
    return seconds, cpu, n, n * (n - 1) // 2


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--baseline-python", help="a Python with nlpstats 0.0.1 installed (default: make one)")
    p.add_argument("--baseline-resamples", type=int, default=N_RESAMPLES,
                   help="permutations for the baseline; fewer are scaled linearly to 1,000 (default 1,000)")
    p.add_argument("--skip-baseline", action="store_true")
    p.add_argument("--skip-compare", action="store_true")
    p.add_argument("--cases", nargs="*", metavar="SxI", help="only these cells, e.g. 58x48 200x48 (default: all)")
    args = p.parse_args()

    ours(16, 20, "input", "kendall", 0, ("system", "input"))  # warm-up: imports, thread pools
    python = None if args.skip_baseline else baseline_python(args.baseline_python)
    print(f"xcorrstat {xcorrstat.__version__}; {N_RESAMPLES} permutations, random matrices, alternative 'greater'")
    for k, (label, s, i, level, method) in enumerate(CASES):
        if args.cases and f"{s}x{i}" not in args.cases:
            continue
        t_cells, p_cells = ours(s, i, level, method, k, ("system", "input"))
        t_xor, p_xor = ours(s, i, level, method, k, "system-xor-input")
        line = (f"{label:28s} xcorrstat PERM-BOTH {t_cells:6.3f} s (p {p_cells:.3f}),"
                f" system-xor-input {t_xor:6.3f} s (p {p_xor:.3f})")
        if python:
            cmd = [python, "-c", BASELINE, json.dumps([s, i, level, method, args.baseline_resamples, k])]
            base = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
            t_base = base["seconds"] * N_RESAMPLES / args.baseline_resamples
            scaled = " (scaled)" if args.baseline_resamples != N_RESAMPLES else ""
            line += (f" | nlpstats 'both' {t_base:7.2f} s{scaled} (p {base['pvalue']:.3f})"
                     f" | speed-up {t_base / t_cells:6.1f}x / {t_base / t_xor:6.1f}x (goal >= {GOALS[level]}x)")
        print(line, flush=True)
    if not args.skip_compare:
        seconds, cpu, n, pairs = all_pairs()
        print(f"compare(): {n} SummEval metrics ({pairs} pairs), PERM-BOTH input-level Kendall, "
              f"{N_RESAMPLES} permutations: {seconds:.1f} s, {cpu:.1f} CPU s (goal < 60 s)")


if __name__ == "__main__":
    main()
