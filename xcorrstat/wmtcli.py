"""``xcorrstat wmt``: run the WMT metrics tasks on an mt-metrics-eval test set folder."""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import warnings
from typing import IO, Any

import xarray as xr

from ._display import VALUE_WIDTH, printable
from .io.mtme import read_mtme
from .reporting.files import check_destination
from .reporting.tables import TABLE_FORMATS, format_table, to_latex, to_markdown
from .significance.auto import OpenDecisionsWarning
from .significance.defaults import DEFAULTS
from .tidy import tidy
from .wmt import TaskSkippedWarning, protocol, protocols, roles, run_tasks, task_set

__all__ = ["WMT_FILES", "add_draw_options", "add_wmt_parser", "draws_type", "wmt_command", "write_task_files"]

#: The files ``xcorrstat wmt --out DIR`` writes.
WMT_FILES = ("ranking.csv", "tasks.csv", "pairs.csv", "table.tex", "table.md")


def draws_type(text: str) -> int | str:
    """The argparse type of ``--n-resamples``: ``auto`` or an integer (its range is the command's to check)."""
    if text.strip().lower() == "auto":
        return "auto"
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r} (a number of draws, or auto)") from None


def _max_resamples(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return n


def add_draw_options(p: argparse.ArgumentParser, *, what: str) -> None:
    """``--n-resamples`` and ``--max-resamples``, with the defaults of :data:`~xcorrstat.significance.defaults.DEFAULTS`."""
    n, cap = DEFAULTS["n_resamples"].cli, DEFAULTS["max_resamples"].cli
    p.add_argument("--n-resamples", type=draws_type, default=n, metavar="{N,auto}",
                   help=f"{what}: a number, or auto (default {n}): draws until every corrected decision at "
                   f"--alpha is settled, from {DEFAULTS['start_resamples'].cli} up to --max-resamples")
    p.add_argument("--max-resamples", type=_max_resamples, default=cap,
                   help=f"cap on the draws of --n-resamples auto (default {cap})")


def add_wmt_parser(sub: argparse._SubParsersAction) -> None:
    """The ``wmt`` subcommand and its options (named as the arguments of run_tasks)."""
    w = sub.add_parser(
        "wmt", help="run the official WMT metrics tasks on an mt-metrics-eval folder",
        description="Read ROOT/TESTSET in mt-metrics-eval's layout, run a year's official task list "
        "(rankings with significance clusters, averaged over the tasks) on the primary metrics and baselines, "
        "and print the table. A task whose scores the folder lacks is skipped with a line saying why.")
    w.add_argument("root", help="folder holding the test sets (mt-metrics-eval-v2)")
    w.add_argument("--testset", required=True, help="test set folder name, e.g. wmt23")
    w.add_argument("--tasks", choices=protocols(), default=None,
                   help="official task list (default: the one named like --testset)")
    w.add_argument("--lps", default=None, help="comma-separated language pairs (default: the task list's)")
    w.add_argument("--gold", default=None, help="human score of every task (default: each pair's standard one)")
    w.add_argument("--all-metrics", action="store_true",
                   help="rank every metric, not only the primary metrics and baselines")
    w.add_argument("--roles", default=None, metavar="FILE",
                   help="JSON file of the test set's roles (standard references and gold, outliers, primary "
                   "metrics, baselines), in the format of xcorrstat.wmt.roles; default the bundled ones")
    add_draw_options(w, what="draws of every significance test (0: statistics and plain ranks, no "
                     "tests)")
    w.add_argument("--seed", type=int, default=DEFAULTS["seed"].cli,
                   help=f"seed of the draws (default {DEFAULTS['seed'].cli})")
    w.add_argument("--alpha", type=float, default=DEFAULTS["alpha"].cli, help="significance level of the clusters")
    w.add_argument("--table-format", choices=TABLE_FORMATS, default="text")
    w.add_argument("--digits", type=int, default=3, help="decimals in the table (default 3)")
    w.add_argument("--out", default=None, help="also write the tables (CSV, LaTeX, Markdown) to this folder")
    w.add_argument("--overwrite", action="store_true", help="replace the files of a previous run in --out")
    w.add_argument("--quiet", "-q", action="store_true", help="no status lines on stderr (skipped tasks still are)")


def _csv_files(result: xr.Dataset, folder: str) -> None:
    """ranking.csv (average rank and score, status), tasks.csv (each task's value and cluster, or why it
    was skipped) and pairs.csv (each task's p-values; no rows without tests)."""
    ranking = result[["average_rank", "average_score"]].to_dataframe()[["status", "average_rank", "average_score"]]
    ranking.to_csv(os.path.join(folder, "ranking.csv"))
    per_task = result[["correlation", "cluster"]].reset_coords(["status", "skipped"], drop=True)
    skipped = result["skipped"].reset_coords(drop=True).to_dataframe().reset_index()
    tasks = tidy(per_task).merge(skipped, on="task", how="right")
    tasks.to_csv(os.path.join(folder, "tasks.csv"), index=False)
    if "pvalue" in result:
        ran = result["skipped"].values == ""
        pairs = result[["pvalue", "significant"]].isel(task=ran).reset_coords(["status", "skipped"], drop=True)
        tidy(pairs).dropna(subset=["pvalue"]).to_csv(os.path.join(folder, "pairs.csv"), index=False)
    else:
        with open(os.path.join(folder, "pairs.csv"), "w", encoding="utf-8") as fh:
            fh.write("task,metric,other_metric,pvalue,significant\n")


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
        _csv_files(result, tmp)
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


def _protocol_name(args: argparse.Namespace) -> str:
    name = args.tasks or args.testset
    if name not in protocols():
        raise ValueError(f"--testset {args.testset!r} has no official task list of its name; choose one with "
                         f"--tasks ({', '.join(protocols())})")
    return name


def wmt_command(args: argparse.Namespace, out: IO[str], err: IO[str] | None) -> None:
    """Run ``xcorrstat wmt``: read, run the tasks, print the table, write the files."""
    if args.n_resamples != "auto" and args.n_resamples < 0:
        raise ValueError(f"--n-resamples must be 0 or more, got {args.n_resamples}")
    name = _protocol_name(args)
    lps = None if args.lps is None else [lp.strip() for lp in args.lps.split(",") if lp.strip()]
    needed = sorted(lps or protocol(name)["lps"])
    log = None if args.quiet else err
    if log is not None:
        print(f"xcorrstat wmt: reading {args.testset} ({', '.join(needed)})", file=log, flush=True)
    ds = read_mtme(args.root, args.testset, needed)
    tasks = task_set(name, needed, data=ds, gold=args.gold, primary=not args.all_metrics)
    lp_roles = None if args.roles is None else roles(args.testset, source=args.roles)
    if log is not None:
        draws = (f"auto draws (up to {args.max_resamples})" if args.n_resamples == "auto"
                 else f"{args.n_resamples} draws")
        print(f"xcorrstat wmt: {len(tasks)} tasks ({name}), {draws} each", file=log, flush=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", TaskSkippedWarning)
        warnings.simplefilter("always", OpenDecisionsWarning)
        result = run_tasks(ds, tasks, roles=lp_roles, n_resamples=args.n_resamples, rng=args.seed,
                           alpha=args.alpha, max_resamples=args.max_resamples)
    for note in caught:
        if issubclass(note.category, TaskSkippedWarning) and err is not None:
            print(f"xcorrstat wmt: {printable(note.message, 600)}", file=err, flush=True)
        elif issubclass(note.category, OpenDecisionsWarning) and err is not None:
            print(f"xcorrstat wmt: note: {printable(note.message, 2000)}", file=err, flush=True)
        elif not issubclass(note.category, (TaskSkippedWarning, OpenDecisionsWarning)):
            warnings.warn_explicit(note.message, note.category, note.filename, note.lineno)
    out.write(format_table(result, args.table_format, digits=args.digits))
    out.flush()
    if args.out is not None:
        written = write_task_files(result, args.out, overwrite=args.overwrite)
        if log is not None:
            print("wrote " + ", ".join(written), file=log, flush=True)
