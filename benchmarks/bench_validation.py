"""Method validation on SummEval: the CI-coverage table (paper Table 1) and power / type-I error.

Runs, on the bundled SummEval data (QAEval-F1 vs expert_relevance, Pearson):

* ``ci_coverage`` with 1,000 trials and 1,000 resamples per interval, at system and input
  level, timed (goal: under 2 minutes on 2 cores), printed next to the values of Deutsch,
  Dror & Roth (2021), Table 1 (SummEval / Fabbri et al. columns);
* ``power_analysis`` at input and system level (PERM-BOTH, BOOT-BOTH, and Williams at system level)
  with the built-in noise degradation: power curves, and each test's type-I error with its 3-SE band.

    python benchmarks/bench_validation.py [--trials 1000] [--power-trials 200] [--skip-power]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import xcorrstat
from xcorrstat.diagnostics import ci_coverage, power_analysis

# Deutsch, Dror & Roth (2021), Table 1, QAEval-F1 / expert relevance: (system, input) coverage
PAPER = {
    "BOOT-BOTH": (0.98, 0.93),
    "BOOT-SYSTEMS": (0.81, 0.73),
    "BOOT-INPUTS": (0.70, 0.73),
    "fisher": (0.87, 1.00),
}


def coverage(args) -> None:
    ds = xcorrstat.datasets.summeval()
    start, cpu = time.perf_counter(), time.process_time()
    cov = ci_coverage(ds, target="expert_relevance", metrics="qa_eval_f1", level=["system", "input"],
                      method="pearson", n_trials=args.trials, n_resamples=args.resamples, rng=args.seed)
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    c = cov.sel(metric="qa_eval_f1")
    print(f"CI coverage, QAEval-F1 vs expert_relevance, Pearson: {args.trials} trials x {args.resamples} "
          f"resamples, seed {args.seed}")
    print(f"{'method':<18}{'system':>9}{'(paper)':>9}{'input':>9}{'(paper)':>9}   too high/low (system; input)")
    for name, (p_sys, p_inp) in PAPER.items():
        row = c.sel(ci_method=name)
        s, i = (float(row["contained"].sel(level=lev)) for lev in ("system", "input"))
        hi = [float(row["too_high"].sel(level=lev)) for lev in ("system", "input")]
        lo = [float(row["too_low"].sel(level=lev)) for lev in ("system", "input")]
        print(f"{name:<18}{s:>9.3f}{p_sys:>9.2f}{i:>9.3f}{p_inp:>9.2f}   "
              f"{hi[0]:.3f}/{lo[0]:.3f}; {hi[1]:.3f}/{lo[1]:.3f}")
    print(f"Monte-Carlo SE of each share <= {float(c['mc_se'].max()):.4f}")
    print(f"time for the whole table (both levels, 4 methods): {elapsed:.1f} s, {cpu:.1f} CPU s (goal: < 120 s on 2 cores)")


def power(args) -> None:
    ds = xcorrstat.datasets.summeval()
    noise = [0.0, 0.1, 0.2, 0.3, 0.5]
    for level, tests in (("input", ["PERM-BOTH", "BOOT-BOTH"]), ("system", ["PERM-BOTH", "BOOT-BOTH", "williams"])):
        start = time.perf_counter()
        pw = power_analysis(ds, target="expert_relevance", metric="qa_eval_f1", level=level, method="pearson",
                            noise=noise, tests=tests, n_trials=args.power_trials, n_resamples=args.resamples,
                            rng=args.seed)
        elapsed = time.perf_counter() - start
        print(f"\nPower at {level} level, QAEval-F1 vs QAEval-F1 + noise * sd * e (Pearson, alpha 0.05), "
              f"{args.power_trials} trials x {args.resamples} draws ({elapsed:.0f} s)")
        print(f"{'noise':>6}" + "".join(f"{t:>22}" for t in pw["test"].values))
        for k, a in enumerate(noise):
            cells = [f"{float(pw['power'].sel(test=t)[k]):.3f} +/- {float(pw['power_se'].sel(test=t)[k]):.3f}"
                     for t in pw["test"].values]
            print(f"{a:>6.2f}" + "".join(f"{c:>22}" for c in cells))
        band = 3 * np.sqrt(0.05 * 0.95 / args.power_trials)
        print(f"type-I error (two exchangeable noisy copies), alpha 0.05, 3 MC SE = {band:.3f}:")
        for t in pw["test"].values:
            errs = pw["type1_error"].sel(test=t).values[1:]
            inside = np.all(np.abs(errs - 0.05) <= band)
            print(f"  {t:<10} " + " ".join(f"{e:.3f}" for e in errs) + f"   all within 3 SE: {inside}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--trials", type=int, default=1000)
    p.add_argument("--resamples", type=int, default=1000)
    p.add_argument("--power-trials", type=int, default=200)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--skip-power", action="store_true")
    p.add_argument("--skip-coverage", action="store_true")
    args = p.parse_args()
    if not args.skip_coverage:
        coverage(args)
    if not args.skip_power:
        power(args)


if __name__ == "__main__":
    main()
