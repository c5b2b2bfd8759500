"""Command line: ``xcorrstat correlate [FILE] --target COL``.

With no FILE the bundled SummEval data is used (target ``expert_relevance``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import pandas as pd

from ._version import __version__
from .correlate import correlate
from .datasets import summeval
from .io import read
from .kernels import LEVELS, METHODS

__all__ = ["main", "correlation_table"]

DEFAULT_TARGET = "expert_relevance"


def correlation_table(result) -> pd.DataFrame:
    """A (metric × (level, method)) frame from a correlate() result with level and method dims."""
    frame = result.to_series().unstack(["level", "coefficient"])
    levels = list(result["level"].values)
    methods = list(result["coefficient"].values)
    frame = frame.reindex(columns=pd.MultiIndex.from_product([levels, methods], names=["level", "method"]))
    return frame.reindex(list(result["metric"].values))


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="xcorrstat",
        description="Meta-evaluate automatic metrics against human judgments.",
    )
    p.add_argument("--version", action="version", version=f"xcorrstat {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    c = sub.add_parser(
        "correlate",
        help="correlate every metric with a human target at system, input and global level",
        description="Correlate every metric column of FILE with a human target column, at each level "
        "and with each method, and print a table (one row per metric).",
    )
    c.add_argument("file", nargs="?", help="CSV/TSV/JSONL/Parquet/netCDF file, one row per (system, input); "
                   "default: the bundled SummEval data")
    c.add_argument("--target", help=f"human score column (default for the bundled data: {DEFAULT_TARGET})")
    c.add_argument("--level", nargs="+", choices=LEVELS, default=list(LEVELS))
    c.add_argument("--method", nargs="+", choices=METHODS, default=list(METHODS))
    c.add_argument("--variant", choices=("b", "c"), default="b", help="Kendall tau variant (default b)")
    c.add_argument("--metrics", nargs="+", help="metric columns (default: every column but the target "
                   "and --human columns)")
    c.add_argument("--human", nargs="+", default=None, help="other human columns to leave out of the metrics")
    c.add_argument("--system-col", default="system", help="column of system labels (default: system)")
    c.add_argument("--input-col", default="input", help="column of input labels (default: input)")
    c.add_argument("--format", choices=("table", "csv", "json"), default="table")
    c.add_argument("--digits", type=int, default=3, help="decimals in the table (default 3)")
    return p


def _load(args):
    if args.file is None:
        return summeval(), args.target or DEFAULT_TARGET, "bundled SummEval data"
    if not args.target:
        raise ValueError("--target is required with a FILE: name the human score column")
    ds = read(args.file, system=args.system_col, input=args.input_col, human=args.human)
    return ds, args.target, args.file


def _correlate_command(args, out) -> None:
    ds, target, source = _load(args)
    result = correlate(
        ds, target=target, level=list(args.level), method=list(args.method),
        variant=args.variant, metrics=args.metrics,
    )
    table = correlation_table(result)
    if args.format == "csv":
        table.to_csv(out, float_format=f"%.{max(args.digits, 6)}f")
        return
    if args.format == "json":
        long = result.to_dataframe().reset_index()[["metric", "level", "coefficient", "correlation", "n"]]
        out.write(long.to_json(orient="records", indent=1) + "\n")
        return
    n = result["n"].to_series().unstack(["level", "coefficient"]).max()
    units = {"system": "systems", "input": "inputs", "global": "cells"}
    used = ", ".join(f"{lev}: n={int(n[lev].max())} {units[lev]}" for lev in args.level)
    kendall = f", Kendall tau-{args.variant}" if "kendall" in args.method else ""
    out.write(f"Correlation with {target!r} ({source}; {table.shape[0]} metrics{kendall})\n{used}\n\n")
    with pd.option_context("display.max_rows", None, "display.max_columns", None, "display.width", 200):
        out.write(table.to_string(float_format=lambda v: f"{v:.{args.digits}f}", na_rep="nan") + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``xcorrstat`` command; returns the exit code."""
    args = _parser().parse_args(argv)
    try:
        if args.command == "correlate":
            _correlate_command(args, sys.stdout)
    except (ValueError, TypeError, KeyError, FileNotFoundError, ImportError) as err:
        print(f"xcorrstat: error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
