"""Support probe: every operation on every level x method x Kendall variant, against the capability table.

Each cell of the capability table (``xcorrstat._capabilities``) is called on a small slice of the
bundled SummEval data with few draws. A cell the table supports must work; a cell it refuses must
raise ValueError with exactly the table's message for that cell. The probe prints one line per
operation and level (``yes``, or ``no`` for a refusal) and a summary, and exits with status 1 if any
cell disagrees with the table.

    python benchmarks/api_support.py [--systems 8] [--inputs 12] [--n-resamples 9] [--verbose]

Another script (or a test) imports :func:`probe`, which returns one row per cell as a DataFrame.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

import xcorrstat
from xcorrstat._capabilities import OPERATIONS, cells, limit_of, message

TARGET = "expert_relevance"
METRICS = ("rouge_1_f1", "bertscore_f1", "meteor")


def small_data(systems: int = 8, inputs: int = 12) -> xr.Dataset:
    """The bundled SummEval scores: the target and three metrics on the first systems and inputs."""
    ds = xcorrstat.datasets.summeval()
    return ds[[TARGET, *METRICS]].isel(system=slice(0, systems), input=slice(0, inputs))


def _calls(ds: xr.Dataset, n: int, trials: int) -> dict[str, Callable[..., Any]]:
    """One call per operation of the table; ``kw`` holds the level, method and variant it takes."""
    t, (a, b) = TARGET, METRICS[:2]
    draws: dict[str, Any] = {"n_resamples": n, "rng": 0}
    perm, boot = xcorrstat.Permutation, xcorrstat.Bootstrap
    return {
        "correlate": lambda **kw: xcorrstat.correlate(ds, target=t, **kw),
        "bootstrap": lambda **kw: xcorrstat.bootstrap(ds, target=t, resample=boot(**draws), **kw),
        "bootstrap(epsilon='calibrate')": lambda **kw: xcorrstat.bootstrap(ds, target=t, epsilon="calibrate",
                                                                           resample=boot(**draws), **kw),
        "fisher": lambda **kw: xcorrstat.fisher(ds, target=t, **kw),
        "permutation_test": lambda **kw: xcorrstat.permutation_test(ds, x=a, y=b, target=t, test=perm(**draws),
                                                                    **kw),
        "permutation_test(test=Permutation(swap='pairs'))": lambda **kw: xcorrstat.permutation_test(
            ds, x=a, y=b, target=t, test=perm(swap="pairs", **draws), **kw),
        "permutation_test(test=Permutation(epsilon='calibrate'))": lambda **kw: xcorrstat.permutation_test(
            ds, x=a, y=b, target=t, test=perm(epsilon="calibrate", **draws), **kw),
        "paired_bootstrap_test": lambda **kw: xcorrstat.paired_bootstrap_test(ds, x=a, y=b, target=t,
                                                                              test=boot(**draws), **kw),
        "williams_test": lambda **kw: xcorrstat.williams_test(ds, x=a, y=b, target=t, **kw),
        "compare": lambda **kw: xcorrstat.compare(ds, target=t, test=perm(**draws), **kw),
        "compare(test=Permutation(swap='pairs'))": lambda **kw: xcorrstat.compare(ds, target=t, test=perm(swap="pairs", **draws), **kw),
        "compare(test='bootstrap')": lambda **kw: xcorrstat.compare(ds, target=t, test=boot(**draws), **kw),
        "compare(test='williams')": lambda **kw: xcorrstat.compare(ds, target=t, test="williams", **kw),
        "report": lambda **kw: xcorrstat.report(ds, target=t, **kw, **draws),
        "diagnostics.ci_coverage": lambda **kw: xcorrstat.diagnostics.ci_coverage(
            ds, target=t, metrics=[a], n_trials=trials, **kw, **draws),
        "diagnostics.power_analysis": lambda **kw: xcorrstat.diagnostics.power_analysis(
            ds, target=t, metric=a, noise=(1.0,), type_one=False, n_trials=trials, **kw, **draws),
        "agreement.matrix": lambda **kw: xcorrstat.agreement.matrix(ds, **kw),
        "calibrate_ties": lambda **kw: xcorrstat.calibrate_ties(ds, target=t, **kw),
    }


def _expected_message(operation: str, level: str, method: str, variant: str) -> str:
    limit = limit_of(operation, level=level, method=method, variant=variant)
    if limit is None:
        return ""
    value = {"level": level, "method": method, "variant": variant}[limit.argument]
    return message(operation, limit, value)


def own_statistic(x: np.ndarray, z: np.ndarray) -> np.ndarray:
    """A statistic of one's own for the table's "callable" column: the covariance along the last axis."""
    return ((x - x.mean(axis=-1, keepdims=True)) * (z - z.mean(axis=-1, keepdims=True))).mean(axis=-1)


def probe(*, systems: int = 8, inputs: int = 12, n_resamples: int = 9, n_trials: int = 2) -> pd.DataFrame:
    """Call every cell of the capability table; one row per cell.

    Columns: ``operation``, ``level``, ``method``, ``variant``, ``table`` (the table's "yes", "no" or
    "n/a": an argument the operation does not take), ``outcome`` ("works", "refused", "error" or
    "n/a"), ``message`` (the error raised, if any), ``expected`` (the table's message for a "no"
    cell), ``agrees`` (the outcome is the table's, and a refusal's message is the table's) and
    ``seconds``.
    """
    calls = _calls(small_data(systems, inputs), n_resamples, n_trials)
    rows = []
    for operation, level, method, variant, status in cells():
        kw = {"level": level, "method": own_statistic if method == "callable" else method, "variant": variant}
        kw = {k: v for k, v in kw.items() if k in OPERATIONS[operation].arguments}
        outcome, text, start = "n/a", "", time.perf_counter()
        if status != "n/a":
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    calls[operation](**kw)
                outcome = "works"
            except ValueError as err:
                outcome, text = "refused", str(err)
            except Exception as err:  # noqa: BLE001 (any other failure is reported, not raised)
                outcome, text = "error", f"{type(err).__name__}: {err}"
        expected = _expected_message(operation, level, method, variant) if status == "no" else ""
        agrees = {"yes": outcome == "works", "n/a": True}.get(status, outcome == "refused" and text == expected)
        rows.append({"operation": operation, "level": level, "method": method, "variant": variant,
                     "table": status, "outcome": outcome, "message": text, "expected": expected,
                     "agrees": agrees, "seconds": time.perf_counter() - start})
    return pd.DataFrame(rows)


def support_frame(result: pd.DataFrame, column: str = "outcome") -> pd.DataFrame:
    """One row per operation and level, one column per coefficient (Kendall's per variant)."""
    out = result.assign(coefficient=[m if m != "kendall" else f"kendall {v}"
                                     for m, v in zip(result["method"], result["variant"])])
    order = list(dict.fromkeys(out["coefficient"]))
    frame = out.pivot_table(index=["operation", "level"], columns="coefficient", values=column,
                            aggfunc="first", sort=False)
    return frame[order]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--systems", type=int, default=8)
    parser.add_argument("--inputs", type=int, default=12)
    parser.add_argument("--n-resamples", type=int, default=9)
    parser.add_argument("--n-trials", type=int, default=2)
    parser.add_argument("--verbose", action="store_true", help="print every refusal's message")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    result = probe(systems=args.systems, inputs=args.inputs, n_resamples=args.n_resamples, n_trials=args.n_trials)
    shown = result.assign(outcome=result["outcome"].map({"works": "yes", "refused": "no", "n/a": "-",
                                                          "error": "ERROR"}))
    with pd.option_context("display.width", 200, "display.max_rows", 500, "display.max_columns", 20):
        print(support_frame(shown))
    called = result[result["table"] != "n/a"]
    print(f"\n{len(called)} cells called in {time.perf_counter() - start:.1f} s: "
          f"{(called['outcome'] == 'works').sum()} work, {(called['outcome'] == 'refused').sum()} refused, "
          f"{(called['outcome'] == 'error').sum()} other errors; "
          f"{(~result['agrees']).sum()} disagree with the capability table")
    per_op = called.groupby("operation", sort=False)["outcome"].apply(lambda s: int((s == "works").sum()))
    print("working cells per operation:", ", ".join(f"{op} {k}" for op, k in per_op.items()))
    for row in result[~result["agrees"] | (args.verbose & (result["outcome"] == "refused"))].itertuples():
        flag = "" if row.agrees else "DISAGREES "
        print(f"{flag}{row.operation} level={row.level} method={row.method} variant={row.variant}: "
              f"table {row.table}, {row.outcome}: {row.message}")
    return 0 if result["agrees"].all() else 1


if __name__ == "__main__":
    sys.exit(main())
