"""``xcorrstat wmt``: run the WMT metrics tasks on an mt-metrics-eval test set folder."""

from __future__ import annotations

import argparse
import os
import warnings
from typing import IO, Any

import numpy as np
import pandas as pd
import xarray as xr

from ._display import VALUE_WIDTH, did_you_mean, printable
from ._escape import csv_text
from ._cliscores import ALLOW_INCOMPLETE_HELP
from ._io.mtme import read_mtme
from ._io.mtme_checks import command_hint
from ._reporting.folder import check_folder, command_error, probe_folder, write_folder
from ._reporting.tables import TABLE_FORMATS, format_table, to_latex, to_markdown
from ._significance.auto import OpenDecisionsWarning
from ._significance.defaults import DEFAULTS
from ._tidy import tidy
from ._validation import TooFewDrawsWarning, check_draw_count
from .wmt import TaskSkippedWarning, protocol, roles, run_tasks, task_set
from .wmt._protocols import protocols

__all__ = ["WMT_FILES", "WMT_MANIFEST", "add_draw_options", "add_wmt_parser", "check_task_folder", "draws_type",
           "wmt_command", "write_task_files"]

#: The files ``xcorrstat wmt --out DIR`` writes.
WMT_FILES = ("ranking.csv", "tasks.csv", "pairs.csv", "table.tex", "table.md")

#: The manifest of the files ``xcorrstat wmt --out DIR`` wrote (names, sizes, SHA-256).
WMT_MANIFEST = "xcorrstat-wmt-manifest.json"

WMT_HOLDS = "the files of an earlier run"


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
    """``--n-resamples`` and ``--max-resamples``, with the defaults of :data:`~xcorrstat._significance.defaults.DEFAULTS`."""
    n, cap = DEFAULTS["n_resamples"].cli, DEFAULTS["max_resamples"].cli
    p.add_argument("--n-resamples", type=draws_type, default=n, metavar="{N,auto}",
                   help=f"{what}: a number, or auto (default {n}): draws until every corrected decision at "
                   f"--alpha is settled, from {DEFAULTS['start_resamples'].cli} up to --max-resamples")
    p.add_argument("--max-resamples", type=_max_resamples, default=cap,
                   help=f"cap on the draws of --n-resamples auto (default {cap}): a decision still open there "
                   "keeps the p-value of that many draws in the correction and the clusters, and a note line "
                   "counts the decisions left open")


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
    w.add_argument("--rng", type=int, default=DEFAULTS["rng"].cli,
                   help=f"seed of the draws, rng= of the functions (default {DEFAULTS['rng'].cli})")
    w.add_argument("--alpha", type=float, default=DEFAULTS["alpha"].cli, help="significance level of the clusters")
    w.add_argument("--table-format", choices=TABLE_FORMATS, default="text")
    w.add_argument("--digits", type=int, default=3, help="decimals in the table (default 3)")
    w.add_argument("--out", default=None, help="also write the tables (CSV, LaTeX, Markdown) to this folder, with "
                   f"{WMT_MANIFEST} listing them; checked before reading")
    w.add_argument("--overwrite", action="store_true",
                   help="replace the files of a previous run in --out (only those its manifest lists, unchanged)")
    w.add_argument("--quiet", "-q", action="store_true", help="no status lines on stderr (skipped tasks still are)")
    w.add_argument("--progress", action="store_true",
                   help="a line per task (task i of n) even when stderr is not a terminal (by default a log gets none)")
    w.add_argument("--follow-links", action="store_true",
                   help="read files that are links out of the test set folder (refused by default)")
    w.add_argument("--allow-incomplete", action="store_true",
                   help=f"{ALLOW_INCOMPLETE_HELP}: each task then ranks every metric on the units all of them score, "
                   "and the tables mark that metric with \u2020")


def _lacks_frames(result: xr.Dataset) -> tuple[pd.Series, pd.DataFrame]:
    """Per metric, what it lacks (``task: units`` joined by `` | ``; empty for a complete metric), and the
    (task, metric, lacks) rows; empty without the coordinate ``lacks``."""
    metrics = pd.Index([str(m) for m in result["metric"].values], name="metric")
    if "lacks" not in result.coords:
        return pd.Series("", index=metrics, name="lacks"), pd.DataFrame(columns=["task", "metric", "lacks"])
    lacks = result["lacks"].transpose("task", "metric").values
    tasks = [str(t) for t in result["task"].values]
    per_metric = [" | ".join(f"{t}: {lacks[i, j]}" for i, t in enumerate(tasks) if lacks[i, j])
                  for j in range(len(metrics))]
    rows = pd.DataFrame({"task": np.repeat(tasks, len(metrics)), "metric": np.tile(metrics, len(tasks)),
                         "lacks": lacks.reshape(-1).astype(str)})
    return pd.Series(per_metric, index=metrics, name="lacks"), rows


def _csv_files(result: xr.Dataset) -> dict[str, bytes]:
    """ranking.csv (average rank and score, status, what the metric lacks), tasks.csv (each task's value
    and cluster and what the metric lacks there, or why the task was skipped) and pairs.csv (each task's
    p-values; no rows without tests)."""
    lacks, lack_rows = _lacks_frames(result)
    ranking = result[["average_rank", "average_score"]].to_dataframe()[["status", "average_rank", "average_score"]]
    ranking["lacks"] = lacks.reindex(ranking.index.astype(str)).to_numpy()
    dropped = [c for c in ("status", "skipped", "lacks") if c in result.coords]
    per_task = result[["correlation", "cluster"]].reset_coords(dropped, drop=True)
    skipped = result["skipped"].reset_coords(drop=True).to_dataframe().reset_index()
    tasks = tidy(per_task).merge(skipped, on="task", how="right")
    if len(lack_rows):
        tasks = tasks.merge(lack_rows, on=["task", "metric"], how="left")
    pairs = "task,metric,other_metric,pvalue,significant\n"
    if "pvalue" in result:
        ran = result["skipped"].values == ""
        found = result[["pvalue", "significant"]].isel(task=ran).reset_coords(dropped, drop=True)
        pairs = csv_text(tidy(found).dropna(subset=["pvalue"]), index=False)
    return {"ranking.csv": csv_text(ranking).encode("utf-8"), "tasks.csv": csv_text(tasks, index=False).encode("utf-8"),
            "pairs.csv": pairs.encode("utf-8")}


def check_task_folder(out: str, *, overwrite: bool = False) -> None:
    """Fail when folder ``out`` cannot take :data:`WMT_FILES`: before anything is read or computed.

    As a report's folder (see :func:`~xcorrstat._reporting.files.check_destination`), with the
    manifest :data:`WMT_MANIFEST`; checked by writing a test file there.
    """
    probe_folder(check_folder(out, WMT_FILES, manifest=WMT_MANIFEST, overwrite=overwrite, holds=WMT_HOLDS))


def write_task_files(result: xr.Dataset, out: str, *, overwrite: bool = False) -> list[str]:
    """Write :data:`WMT_FILES` of a run_tasks result, and their manifest, to folder ``out``.

    Only the names are taken: other files of ``out`` are left alone. With ``overwrite``,
    the files an earlier run's manifest (:data:`WMT_MANIFEST`) records, unchanged, are
    replaced; a name taken by anything else is a ``FileExistsError``. The files are
    written in full or not at all, as a report's (see :mod:`xcorrstat._reporting.folder`).
    """
    files = _csv_files(result)
    files["table.tex"] = to_latex(result).encode("utf-8")
    files["table.md"] = to_markdown(result).encode("utf-8")
    write_folder(out, {name: files[name] for name in WMT_FILES}, manifest=WMT_MANIFEST, overwrite=overwrite,
                 holds=WMT_HOLDS)
    return [os.path.join(out, name) for name in WMT_FILES]


def _encodable(text: str, out: IO[str]) -> str:
    """`text` as `out` can write it: a character its encoding lacks (the mark \u2020 on an ASCII terminal)
    as its escape."""
    encoding = getattr(out, "encoding", None)
    if not isinstance(encoding, str):
        return text
    try:
        return text.encode(encoding, "backslashreplace").decode(encoding)
    except LookupError:
        return text


def _protocol_name(args: argparse.Namespace) -> str:
    name = args.tasks or args.testset
    if name not in protocols():
        typo = args.tasks is not None or not os.path.isdir(os.path.join(os.path.expanduser(args.root), args.testset))
        option = "--tasks" if args.tasks is not None else "--testset"
        raise ValueError(f"{option} {name!r} has no official task list of its name; choose one with "
                         f"--tasks ({', '.join(protocols())}){did_you_mean(name, protocols()) if typo else ''}")
    return name


def _check_gold(gold: str | None, ds: xr.Dataset, testset: str) -> None:
    """A ``--gold`` that is no human score of the data read is a typo: one line, with a "did you mean"."""
    humans = sorted({str(v.attrs.get("mtme_name", k)) for k, v in ds.data_vars.items()
                     if v.attrs.get("role") == "human"})
    if gold is not None and humans and gold not in humans:
        raise ValueError(f"--gold {gold!r} is not a human score of {testset}; its human scores are "
                         f"{humans}{did_you_mean(gold, humans)}")


def wmt_command(args: argparse.Namespace, out: IO[str], err: IO[str] | None) -> None:
    """Run ``xcorrstat wmt``: read, run the tasks, print the table, write the files."""
    if args.n_resamples != "auto" and args.n_resamples < 0:
        raise ValueError(f"--n-resamples must be 0 or more, got {args.n_resamples}")
    if args.n_resamples != "auto" and args.n_resamples > 0:
        check_draw_count(args.n_resamples, "--n-resamples")
    check_draw_count(args.max_resamples, "--max-resamples")
    name = _protocol_name(args)
    if args.out is not None:
        try:
            check_task_folder(args.out, overwrite=args.overwrite)
        except OSError as err:
            raise command_error(err) from None
    lps = None if args.lps is None else [lp.strip() for lp in args.lps.split(",") if lp.strip()]
    needed = sorted(lps or protocol(name)["lps"])
    log = None if args.quiet else err
    if log is not None:
        print(f"xcorrstat wmt: reading {args.testset} ({', '.join(needed)})", file=log, flush=True)
    try:
        ds = read_mtme(args.root, args.testset, needed, follow_links=args.follow_links or None,
                       allow_incomplete=args.allow_incomplete)
    except ValueError as oops:  # a metric file refused: the hint names this command's flag
        raise command_hint(oops) from None
    _check_gold(args.gold, ds, args.testset)
    tasks = task_set(name, needed, data=ds, gold=args.gold, primary=not args.all_metrics)
    lp_roles = None if args.roles is None else roles(args.testset, source=args.roles)
    if log is not None:
        draws = (f"auto draws (up to {args.max_resamples})" if args.n_resamples == "auto"
                 else f"{args.n_resamples} draws")
        print(f"xcorrstat wmt: {len(tasks)} tasks ({name}), {draws} each", file=log, flush=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", TaskSkippedWarning)
        warnings.simplefilter("always", OpenDecisionsWarning)
        warnings.simplefilter("always", TooFewDrawsWarning)
        try:
            result = run_tasks(ds, tasks, roles=lp_roles, n_resamples=args.n_resamples, rng=args.rng, alpha=args.alpha,
                               max_resamples=args.max_resamples, allow_incomplete=args.allow_incomplete)
        except ValueError as oops:  # a metric that lacks units of a task's gold: the hint names this command's flag
            raise command_hint(oops) from None
    told: set[str] = set()
    for note in caught:
        if issubclass(note.category, TaskSkippedWarning) and err is not None:
            print(f"xcorrstat wmt: {printable(note.message, 600)}", file=err, flush=True)
        elif issubclass(note.category, (OpenDecisionsWarning, TooFewDrawsWarning)) and err is not None:
            if (log is not None or issubclass(note.category, OpenDecisionsWarning)) and str(note.message) not in told:
                told.add(str(note.message))
                print(f"xcorrstat wmt: note: {printable(note.message, 2000)}", file=err, flush=True)
        elif not issubclass(note.category, (TaskSkippedWarning, OpenDecisionsWarning, TooFewDrawsWarning)):
            warnings.warn_explicit(note.message, note.category, note.filename, note.lineno)
    out.write(_encodable(format_table(result, args.table_format, digits=args.digits), out))
    out.flush()
    if args.out is not None:
        try:
            written = write_task_files(result, args.out, overwrite=args.overwrite)
        except OSError as err:
            raise command_error(err) from None
        if log is not None:
            print("wrote " + ", ".join(written), file=log, flush=True)
