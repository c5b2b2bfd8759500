"""``xcorrstat wmt``: run the WMT metrics tasks on an mt-metrics-eval test set folder."""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
from typing import IO

import xarray as xr

from ._display import VALUE_WIDTH, printable
from .io.mtme import read_mtme
from .reporting.files import check_destination
from .reporting.tables import TABLE_FORMATS, format_table, to_latex, to_markdown
from .tidy import tidy
from .wmt import TASK_SETS, run_tasks, task_set

__all__ = ["WMT_FILES", "add_wmt_parser", "wmt_command", "write_task_files"]

#: The files ``xcorrstat wmt --out DIR`` writes.
WMT_FILES = ("ranking.csv", "tasks.csv", "pairs.csv", "table.tex", "table.md")


def add_wmt_parser(sub: argparse._SubParsersAction) -> None:
    """The ``wmt`` subcommand and its options (named as the arguments of run_tasks)."""
    w = sub.add_parser(
        "wmt", help="run the official WMT metrics tasks on an mt-metrics-eval folder",
        description="Read ROOT/TESTSET in mt-metrics-eval's layout, run the year's official task list "
        "(rankings with significance clusters, averaged over the tasks) and print the table.")
    w.add_argument("root", help="folder holding the test sets (mt-metrics-eval-v2)")
    w.add_argument("--testset", required=True, help="test set folder name, e.g. wmt23")
    w.add_argument("--tasks", choices=sorted(TASK_SETS), default=None,
                   help="official task list (default: the one named like --testset)")
    w.add_argument("--lps", default=None, help="comma-separated language pairs (default: the year's official)")
    w.add_argument("--gold", default=None, help="human score of every task (default: mqm)")
    w.add_argument("--n-resamples", type=int, default=1000, help="draws of every significance test")
    w.add_argument("--seed", type=int, default=0, help="seed of the draws (default 0)")
    w.add_argument("--alpha", type=float, default=0.05, help="significance level of the clusters")
    w.add_argument("--table-format", choices=TABLE_FORMATS, default="text")
    w.add_argument("--digits", type=int, default=3, help="decimals in the table (default 3)")
    w.add_argument("--out", default=None, help="also write the tables (CSV, LaTeX, Markdown) to this folder")
    w.add_argument("--overwrite", action="store_true", help="replace the files of a previous run in --out")


def write_task_files(result: xr.Dataset, out: str, *, overwrite: bool = False) -> list[str]:
    """Write :data:`WMT_FILES` of a run_tasks result to folder ``out``, all or nothing.

    ``out`` must be missing or empty, or hold only these files (with ``overwrite``).
    """
    dest = os.path.abspath(out)
    if os.path.isdir(dest) and os.listdir(dest):
        others = sorted(set(os.listdir(dest)) - set(WMT_FILES))
        if others:
            raise FileExistsError(f"out={printable(repr(out), VALUE_WIDTH)} holds other files "
                                  f"(e.g. {others[0]!r}); name a new or empty folder")
        if not overwrite:
            raise FileExistsError(f"out={printable(repr(out), VALUE_WIDTH)} holds a previous run; "
                                  "pass --overwrite to replace it")
    elif os.path.lexists(dest):
        check_destination(out)  # a file or a link: the same error as a report's
    parent = os.path.dirname(dest)
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=f".{os.path.basename(dest)}.partial-", dir=parent)
    try:
        result[["average_rank", "average_score"]].to_dataframe().to_csv(os.path.join(tmp, "ranking.csv"))
        tidy(result[["correlation", "cluster"]]).to_csv(os.path.join(tmp, "tasks.csv"), index=False)
        tidy(result[["pvalue", "significant"]]).to_csv(os.path.join(tmp, "pairs.csv"), index=False)
        with open(os.path.join(tmp, "table.tex"), "w", encoding="utf-8") as fh:
            fh.write(to_latex(result))
        with open(os.path.join(tmp, "table.md"), "w", encoding="utf-8") as fh:
            fh.write(to_markdown(result))
        if os.path.isdir(dest):
            shutil.rmtree(dest)
        os.replace(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return [os.path.join(out, name) for name in WMT_FILES]


def wmt_command(args: argparse.Namespace, out: IO[str], err: IO[str] | None) -> None:
    """Run ``xcorrstat wmt``: read, run the tasks, print the table, write the files."""
    lps = None if args.lps is None else [lp.strip() for lp in args.lps.split(",") if lp.strip()]
    tasks = task_set(args.tasks or args.testset, lps, gold=args.gold)
    needed = sorted({lp for t in tasks for lp in t.lps})
    if err is not None:
        print(f"xcorrstat wmt: {len(tasks)} tasks on {args.testset} ({', '.join(needed)})", file=err, flush=True)
    ds = read_mtme(args.root, args.testset, needed)
    result = run_tasks(ds, tasks, n_resamples=args.n_resamples, rng=args.seed, alpha=args.alpha)
    out.write(format_table(result, args.table_format, digits=args.digits))
    out.flush()
    if args.out is not None:
        written = write_task_files(result, args.out, overwrite=args.overwrite)
        if err is not None:
            print("wrote " + ", ".join(written), file=err, flush=True)
