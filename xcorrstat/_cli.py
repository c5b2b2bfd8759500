"""Command line: ``xcorrstat report [FILE] --target COL`` and ``xcorrstat correlate [FILE] --target COL``.

With no FILE the bundled SummEval data is used (target ``expert_relevance``).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import logging
import os
import signal
import sys
import warnings
from collections.abc import Callable, Sequence
from typing import IO, Any, get_args

import xarray as xr

from ._display import LABEL_WIDTH, VALUE_WIDTH, printable
from ._signals import Terminated, command_signals, unwrapped
from ._types import Level, Test
from ._version import __version__
from ._correlation.estimates import correlate
from ._capabilities import choices
from ._kernels.corrections import CORRECTIONS
from ._kernels.levels import AVERAGES
from ._options import set_options
from ._reporting.build import PHASES, report
from ._reporting.correlations import (
    correlation_json,
    correlation_table,
    correlation_text,
    extra_dims,
    flat_columns,
    write_csv,
)
from ._reporting.files import FIGURE_FORMATS, check_destination
from ._reporting.folder import command_error, written_before
from ._reporting.tables import TABLE_FORMATS, format_table
from ._resampling.settings import Bootstrap, Permutation, Williams
from ._resampling.schemes import (
    bootstrap_label,
    parse_permute,
    parse_resample,
    permutation_label,
)
from ._schema import is_system_level
from ._significance.auto import OpenDecisionsWarning
from ._significance.defaults import DEFAULTS
from ._validation import TooFewDrawsWarning, check_draw_count, choice_type
from ._cliscores import (ALLOW_CORRELATE, ALLOW_REPORT, DEFAULT_TARGET, MESSAGE_WIDTH, add_data_options,
                         load_scores)
from ._wmtcli import add_draw_options, add_wmt_parser, wmt_command

#: The signal of a closed pipe: a command whose stdout is closed exits with 128 + it, as if killed by it
SIGPIPE = int(getattr(signal, "SIGPIPE", 13))

__all__ = ["correlation_table", "flat_columns", "main"]

KENDALL_NAMES = {"b": "tau-b", "c": "tau-c", "a": "tau-a", "23": "tau_eq", "acc23": "acc_eq"}
VARIANT_HELP = "Kendall variant: b, c, a, 23 (tau_eq) or acc23 (acc_eq, pairwise accuracy with ties); default b"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="xcorrstat",
        description="Meta-evaluate automatic metrics against human judgments.",
    )
    p.add_argument("--version", action="version", version=f"xcorrstat {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    _correlate_options(sub.add_parser(
        "correlate",
        help="correlate every metric with a human target at system, input and global level",
        description="Correlate every metric column of FILE with a human target column, at each level "
        "and with each method, and print a table (one row per metric).",
    ))
    _report_options(sub.add_parser(
        "report",
        help="ranked table of every metric's correlation with CI and significance cluster, plus figures",
        description="For each level: every metric's correlation with the target, its bootstrap CI "
        "(BOOT-BOTH by default) and its significance cluster from tests of all metric pairs (PERM-BOTH, "
        "Holm-corrected, by default). Prints the ranked tables and writes to --out the tables (CSV, JSON), "
        "the CI forest plot and the pairwise significance matrix (PNG, SVG) and a self-contained HTML page.",
    ))
    add_wmt_parser(sub)
    _any_case_choices(p)
    return p


def _any_case_choices(p: argparse.ArgumentParser) -> None:
    """Let every option with choices (of every subcommand) take them in any case, with "did you mean"."""
    for action in p._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                _any_case_choices(child)
        elif action.choices is not None and action.type is None and all(isinstance(c, str) for c in action.choices):
            action.type = choice_type(tuple(action.choices))


def _correlate_options(c: argparse.ArgumentParser) -> None:
    """The options of ``xcorrstat correlate``, named as the arguments of :func:`xcorrstat.correlate`."""
    c.add_argument("file", nargs="?", help="CSV/TSV/JSONL/Parquet/netCDF file, one row per (system, input); "
                   "default: the bundled SummEval data")
    c.add_argument("--target", help=f"human score column (default for the bundled data: {DEFAULT_TARGET})")
    c.add_argument("--level", nargs="+", choices=choices("correlate", "level"), default=None,
                   help="levels (default system input global, system for system-level data; also "
                   "within_system)")
    c.add_argument("--method", nargs="+", choices=choices("correlate", "method"),
                   default=list(choices("correlate", "method")))
    c.add_argument("--variant", choices=choices("correlate", "variant"), default="b", help=VARIANT_HELP)
    c.add_argument("--epsilon", type=float, default=0.0,
                   help="Kendall: metric differences of at most EPSILON are ties (default 0)")
    c.add_argument("--average", choices=AVERAGES, default="macro",
                   help="input and within-system levels: average the groups equally (macro, default) or "
                   "weighted by their valid items")
    c.add_argument("--metrics", nargs="+", help="metric columns (default: every column but the target "
                   "and --human columns)")
    c.add_argument("--human", nargs="+", default=None, help="other human columns to leave out of the metrics")
    add_data_options(c, allow=ALLOW_CORRELATE)
    c.add_argument("--table-format", choices=("text", "csv", "json"), default="text",
                   help="the printed table: plain text (default), CSV or JSON records")
    c.add_argument("--digits", type=_digits, default=3, help="decimals in the table, 0 to 15 (default 3)")
    c.add_argument("--quiet", "-q", action="store_true",
                   help="no notes on stderr (the table still goes to stdout, errors to stderr)")


def _report_options(r: argparse.ArgumentParser) -> None:
    """The options of ``xcorrstat report``, named as the arguments of :func:`xcorrstat.report`."""
    r.add_argument("file", nargs="?", help="CSV/TSV/JSONL/Parquet/netCDF file, one row per (system, input); "
                   "default: the bundled SummEval data")
    r.add_argument("--target", help=f"human score column (default for the bundled data: {DEFAULT_TARGET})")
    r.add_argument("--level", nargs="+", choices=choices("report", "level"), default=None,
                   help="levels (default: system input; system for system-level data)")
    r.add_argument("--method", choices=choices("report", "method"), default="pearson",
                   help="correlation (default pearson)")
    r.add_argument("--variant", choices=choices("report", "variant"), default="b", help=VARIANT_HELP)
    r.add_argument("--metrics", nargs="+", help="metric columns (default: every column but the target "
                   "and --human columns)")
    r.add_argument("--human", nargs="+", default=None, help="other human columns to leave out of the metrics")
    add_data_options(r, allow=ALLOW_REPORT)
    add_draw_options(r, what="bootstrap resamples and permutation draws (auto: 1000 resamples for the "
                     "CIs)")
    _scheme_options(r)
    d = {k: v.cli for k, v in DEFAULTS.items()}
    r.add_argument("--confidence-level", type=_fraction, default=d["confidence_level"],
                   help=f"of the CIs (default {d['confidence_level']})")
    r.add_argument("--alpha", type=_fraction, default=d["alpha"], help=f"significance level (default {d['alpha']})")
    r.add_argument("--correction", choices=(*CORRECTIONS, "none"), default=d["correction"],
                   help=f"multiple-testing correction of each metric's comparisons (default {d['correction']})")
    r.add_argument("--rng", type=int, default=d["rng"],
                   help=f"seed of the draws, rng= of the functions (default {d['rng']}, so a report is reproducible)")
    r.add_argument("--common-cells", action=argparse.BooleanOptionalAction, default=True,
                   help="compare the metrics on the cells every one of them scores (default); "
                   "--no-common-cells: each metric on its own cells, n per metric")
    _output_options(r)


def _scheme_options(r: argparse.ArgumentParser) -> None:
    """--resample, --test and --permute: dims or a scheme label, read as the functions read them."""
    r.add_argument("--resample", nargs="+", metavar="DIM", action=_SchemeAction, parse=parse_resample,
                   label=bootstrap_label, default=None,
                   help="dims the bootstrap resamples, or their label (any case): system input = BOOT-BOTH "
                   "(default), system = BOOT-SYSTEMS (default for system-level data), input = BOOT-INPUTS")
    r.add_argument("--test", choices=get_args(Test), default=DEFAULTS["test"].cli,
                   help=f"test of each metric pair (default {DEFAULTS['test'].cli})")
    r.add_argument("--permute", nargs="+", metavar="DIM", action=_SchemeAction, parse=parse_permute,
                   label=permutation_label, default=None,
                   help="dims the permutation test swaps along, or their label (any case): system input = "
                   "PERM-BOTH (default), system = PERM-SYSTEMS (default for system-level data), input = "
                   "PERM-INPUTS, system-xor-input = PERM-SYSTEM-XOR-INPUT")


def _output_options(r: argparse.ArgumentParser) -> None:
    """Where and how ``xcorrstat report`` writes, and what it prints."""
    r.add_argument("--out", default="xcorrstat-report",
                   help="folder for the tables, figures and HTML page (default ./xcorrstat-report), with "
                   "xcorrstat-manifest.json listing them; checked before computing, written in full or not at all")
    r.add_argument("--overwrite", action="store_true",
                   help="replace the previous report in --out: only the files its manifest lists, unchanged "
                   "(without it a report in --out is an error)")
    r.add_argument("--formats", nargs="+", choices=FIGURE_FORMATS, default=["png", "svg"],
                   help="figure file formats, formats= of Report.save (default: png svg)")
    r.add_argument("--no-files", action="store_true", help="only print the tables; write nothing")
    r.add_argument("--digits", type=_digits, default=3, help="decimals in the printed table, 0 to 15 (default 3)")
    r.add_argument("--table-format", choices=TABLE_FORMATS, default="text",
                   help="the printed table: plain text (default), LaTeX (booktabs) or Markdown")
    r.add_argument("--quiet", "-q", action="store_true",
                   help="no progress bars, status lines or notes on stderr (the tables still go to stdout)")
    r.add_argument("--progress", action="store_true",
                   help="progress of every long phase (the bootstrap's bar, a line per round of the tests' "
                   "draws) even when stderr is not a terminal (by default a log gets none)")


class _SchemeAction(argparse.Action):
    """Store the label of --resample or --permute, parsed as ``resample=`` / ``permute=`` are.

    One value is a dim or a label (any case), several are dims; a bad value is a usage error.
    """

    def __init__(self, option_strings: Sequence[str], dest: str, *, parse: Callable[[Any, str], Any],
                 label: Callable[[Any], str], **kwargs: Any) -> None:
        super().__init__(option_strings, dest, **kwargs)
        self.parse, self.label = parse, label

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        name = self.option_strings[0]
        try:
            scheme = self.parse(values[0] if len(values) == 1 else tuple(values), name)
        except ValueError as err:  # "--resample must be ...", or a message that needs the option's name
            raise argparse.ArgumentError(None if str(err).startswith(name) else self, str(err)) from None
        setattr(namespace, self.dest, self.label(scheme))


def _digits(text: str) -> int:
    """argparse type of --digits: an integer from 0 to 15."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer from 0 to 15, got {printable(repr(text), 40)}") \
            from None
    if not 0 <= value <= 15:
        raise argparse.ArgumentTypeError(f"must be an integer from 0 to 15, got {value}")
    return value


def _fraction(text: str) -> float:
    """argparse type of --confidence-level and --alpha: a number strictly between 0 and 1."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"must be a number strictly between 0 and 1, got {printable(repr(text), 40)}")
    return value



def _correlate_command(args: argparse.Namespace, out: IO[str]) -> None:
    ds, target, metrics, source = load_scores(args)
    levels = args.level
    if levels is None:
        levels = ["system"] if is_system_level(ds) else ["system", "input", "global"]
    result = correlate(
        ds, target=target, level=list(levels), method=list(args.method),
        variant=args.variant, metrics=metrics, epsilon=args.epsilon, average=args.average,
    )
    if args.table_format == "csv":
        write_csv(result, out, digits=args.digits)
        return
    if args.table_format == "json":
        out.write(correlation_json(result))
        return
    kendall = f", Kendall {KENDALL_NAMES[args.variant]}" if "kendall" in args.method else ""
    if kendall and args.epsilon:
        kendall += f" with metric ties within {args.epsilon:g}"
    extra = extra_dims(result)
    per = f"; a table per {' and '.join(printable(d, LABEL_WIDTH) for d in extra)}" if extra else ""
    shown_target = printable(repr(target), VALUE_WIDTH)
    heading = f"Correlation with {shown_target} ({source}; {result.sizes['metric']} metrics{kendall}{per})"
    out.write(correlation_text(result, heading=heading, levels=list(levels), digits=args.digits))


def _report_schemes(args: argparse.Namespace, ds: xr.Dataset,
                    log: IO[str] | None) -> tuple[list[Level], str | tuple[str, ...], str | tuple[str, ...]]:
    """Levels, ``resample`` and ``permute`` of the report: the options (labels), else the defaults for ``ds``."""
    both = ("system", "input")
    if not is_system_level(ds):
        return args.level or ["system", "input"], args.resample or both, args.permute or both
    if log is not None:
        print("system-level data (one score per system, no input column): reporting the system level with "
              "BOOT-SYSTEMS intervals and PERM-SYSTEMS tests", file=log, flush=True)
    return args.level or ["system"], args.resample or ("system",), args.permute or ("system",)


def _report_command(args: argparse.Namespace, out: IO[str], err: IO[str]) -> None:
    if args.n_resamples != "auto":
        check_draw_count(args.n_resamples, "--n-resamples")
    check_draw_count(args.max_resamples, "--max-resamples")
    if not args.no_files:
        try:
            import matplotlib
        except ImportError:
            raise ImportError('the report\'s figures need matplotlib: pip install "xcorrstat[plot]", '
                              "or pass --no-files to only print the tables") from None
        matplotlib.use("Agg")  # files only: no window, whatever the platform's default backend
        _check_out(args)
    ds, target, metrics, source = load_scores(args)
    log = None if args.quiet else err
    if log is not None:
        print(f"xcorrstat report: {source}, target {printable(repr(target), VALUE_WIDTH)}", file=log, flush=True)
    levels, resample, permute = _report_schemes(args, ds, log)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", OpenDecisionsWarning)
        warnings.simplefilter("always", TooFewDrawsWarning)
        with _phases_to(log):
            rep = report(
                ds, target=target, metrics=metrics, level=list(levels), method=args.method,
                variant=args.variant, resample=resample, test=_report_test(args, permute),
                n_resamples=args.n_resamples, confidence_level=args.confidence_level, alpha=args.alpha,
                correction=None if args.correction == "none" else args.correction, rng=args.rng,
                common_cells=args.common_cells,
            )
    rep = dataclasses.replace(rep, settings={**rep.settings, "source": source})
    told: set[str] = set()
    for note in caught:  # decisions left open by the cap (even with --quiet), too few draws: one line each
        if issubclass(note.category, (OpenDecisionsWarning, TooFewDrawsWarning)):
            stream = err if issubclass(note.category, OpenDecisionsWarning) else log
            if stream is not None and str(note.message) not in told:
                told.add(str(note.message))
                print(f"xcorrstat report: note: {note.message}", file=stream, flush=True)
        else:
            warnings.warn_explicit(note.message, note.category, note.filename, note.lineno)
    out.write(format_table(rep, args.table_format, digits=args.digits))
    out.flush()
    if args.no_files:
        return
    shown = printable(args.out, VALUE_WIDTH)
    if log is not None:
        print(f"writing tables, figures and the HTML page to {shown}", file=log, flush=True)
    try:
        written = rep.save(args.out, formats=args.formats, overwrite=args.overwrite)
    except (KeyboardInterrupt, Terminated) as stop:
        word, code = ("terminated", 143) if isinstance(stop, Terminated) else ("interrupted", 130)
        if written_before(stop):
            raise _Interrupted(f"{word} after the report was written to {shown}", code) from None
        raise _Interrupted(f"{word} while writing the report; nothing was written to {shown}", code) from None
    except OSError as oops:
        raise command_error(oops) from None
    if log is not None:
        for what, path in written.items():
            print(f"  {what}: {printable(path, VALUE_WIDTH)}", file=log)


def _report_test(args: argparse.Namespace, permute: str | tuple[str, ...]) -> Permutation | Bootstrap | Williams:
    """The settings of the report's tests from ``--test``, ``--permute`` and ``--max-resamples``."""
    if args.test == "permutation":
        return Permutation(permute, max_resamples=args.max_resamples)
    if args.test == "bootstrap":
        return Bootstrap(max_resamples=args.max_resamples)
    return Williams()


@contextlib.contextmanager
def _phases_to(log: IO[str] | None) -> Any:
    """The report's phase lines (:data:`~xcorrstat._reporting.build.PHASES`) on ``log`` meanwhile, if given."""
    if log is None:
        yield
        return
    handler = logging.StreamHandler(log)
    handler.setFormatter(logging.Formatter("%(message)s"))
    level, propagate = PHASES.level, PHASES.propagate
    PHASES.addHandler(handler)
    PHASES.setLevel(logging.INFO)
    PHASES.propagate = False
    try:
        yield
    finally:
        PHASES.removeHandler(handler)
        PHASES.setLevel(level)
        PHASES.propagate = propagate


def _check_out(args: argparse.Namespace) -> None:
    """Fail before computing when --out cannot take the report: checked by writing a test file there."""
    try:
        dest = check_destination(args.out, overwrite=args.overwrite, formats=args.formats, probe=True)
    except OSError as err:
        raise command_error(err) from None
    if not args.quiet and dest != os.path.abspath(args.out):
        print(f"xcorrstat report: a parent folder of --out is a symbolic link: writing to "
              f"{printable(dest, VALUE_WIDTH)}", file=sys.stderr, flush=True)


class _Interrupted(Exception):
    """Ctrl-C or SIGTERM, with what it left undone, and the exit code."""

    def __init__(self, text: str, code: int = 130) -> None:
        super().__init__(text)
        self.code = code


#: What to try after running out of memory, by command.
FEWER = {"correlate": "fewer metrics (--metrics)", "report": "fewer metrics (--metrics) or draws (--n-resamples)",
         "wmt": "fewer language pairs (--lps) or draws (--n-resamples), without --all-metrics"}


def _memory_hint(command: str | None) -> str:
    """The one line of a MemoryError: what to try."""
    fewer = FEWER.get(command or "", "fewer metrics")
    return (f"out of memory: try {fewer}, or run from Python with a smaller "
            "xcorrstat.set_options(memory_budget=...) or on a Dask cluster (see the scale-out page)")


def _message(err: BaseException) -> str:
    """One readable line: the error's text with control characters escaped, cut to a readable length."""
    text = err.args[0] if isinstance(err, KeyError) and len(err.args) == 1 else err
    if isinstance(err, OSError) and err.filename is not None and err.strerror:
        text = f"{err.strerror}: {err.filename!r}"
    return printable(str(text).replace("\n", " ").strip() or type(err).__name__, MESSAGE_WIDTH)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``xcorrstat`` command; returns the exit code.

    Bad input gives exit code 2 and one line ``xcorrstat: error: ...`` on stderr; running
    out of memory exit code 1 and one line with a hint; Ctrl-C (SIGINT) exit code 130 and
    SIGTERM exit code 143, with one line, after removing what was being written.

    Examples
    --------
    >>> main(["correlate", "--metrics", "meteor", "--level", "system", "--method", "kendall", "--table-format", "csv"])
    metric,system_kendall
    meteor,0.500000
    0
    """
    command = None
    with command_signals():
        try:
            with unwrapped():
                args = _parser().parse_args(argv)
                command = args.command
                _run(args)
                sys.stdout.flush()  # here, not at exit: a reader that has gone is then seen below
        except BrokenPipeError:  # the reader of stdout has closed it (``| head``): stop quietly, as Unix tools do
            _silence_stdout()
            return 128 + SIGPIPE
        except RecursionError:
            print("xcorrstat: error: an input is nested too deeply to read (hundreds of levels of arrays or "
                  "objects within each other)", file=sys.stderr)
            return 2
        except MemoryError as err:  # first: a reader's MemoryError is a ValueError too, and says what to do
            told = isinstance(err, ValueError) and str(err)
            detail = f" ({_message(err)})" if str(err) else ""
            print(f"xcorrstat: error: {_message(err) if told else _memory_hint(command) + detail}", file=sys.stderr)
            return 1
        except (ValueError, TypeError, KeyError, OSError, ImportError) as err:
            print(f"xcorrstat: error: {_message(err)}", file=sys.stderr)
            return 2
        except _Interrupted as err:
            print(f"xcorrstat: {err}", file=sys.stderr)
            return err.code
        except KeyboardInterrupt:
            print("xcorrstat: interrupted", file=sys.stderr)
            return 130
        except Terminated:
            print("xcorrstat: terminated", file=sys.stderr)
            return 143
    return 0


def _silence_stdout() -> None:
    """Point stdout at the null device, so that flushing it at exit raises no second BrokenPipeError."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # a stream without a descriptor (captured output)
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)


def _run(args: argparse.Namespace) -> None:
    """Run the command ``args`` names."""
    # a command shows progress bars on a terminal (a log gets none) unless --quiet; --progress shows them anyway
    bars = "always" if getattr(args, "progress", False) else "never" if getattr(args, "quiet", False) else "auto"
    with set_options(progress=bars):
        if args.command == "correlate":
            _correlate_command(args, sys.stdout)
        elif args.command == "report":
            _report_command(args, sys.stdout, sys.stderr)
        elif args.command == "wmt":
            wmt_command(args, sys.stdout, sys.stderr)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
