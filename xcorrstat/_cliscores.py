"""The scores a command works on: the bundled data, a table file or an mt-metrics-eval folder, with the
target, the metrics and where they came from (what ``xcorrstat correlate`` and ``report`` read)."""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from typing import Any, NamedTuple, cast

import xarray as xr

from ._display import VALUE_WIDTH, did_you_mean, name_list, printable
from .datasets import summeval
from ._io.mtme import is_mtme_testset, mtme_level
from ._io.mtme_checks import command_hint
from ._io.mtme_files import MtmeLevel
from ._io.tables import SUPPORTED_FORMATS, read
from ._notes import add_notes
from ._schema import as_dataset, guessed_out, is_system_level
from ._selection import declare_lower_is_better

__all__ = ["ALLOW_CORRELATE", "ALLOW_INCOMPLETE_HELP", "ALLOW_REPORT", "DEFAULT_TARGET", "MESSAGE_WIDTH",
           "add_data_options", "load_scores", "lower_is_better_names"]

DEFAULT_TARGET = "expert_relevance"
MESSAGE_WIDTH = 600

#: What --allow-incomplete keeps, in the help of every command that has it (what becomes of the metric follows).
ALLOW_INCOMPLETE_HELP = ("keep a metric file that lacks a rated system, has None scores or names a system the test "
                         "set lacks (refused by default, as mt-metrics-eval does)")
#: What becomes of such a metric in ``xcorrstat correlate`` and ``report`` (FILE an mt-metrics-eval test set folder).
ALLOW_CORRELATE = ("FILE an mt-metrics-eval test set folder: a note under the heading names the metric and what it "
                   "lacks, and its correlations use the units it scores (its n in --table-format json)")
ALLOW_REPORT = ("FILE an mt-metrics-eval test set folder: a note in the heading and the report's files names the "
                "metric and what it lacks, and the tests and clusters compare every metric on the units all of them "
                "score (--common-cells)")


def add_data_options(p: argparse.ArgumentParser, *, allow: str) -> None:
    """The options of how FILE is read (``allow``: what --allow-incomplete does in the command)."""
    p.add_argument("--system-col", default=None,
                   help="column of system labels (default: guessed: system, sys, model, ...)")
    p.add_argument("--input-col", default=None,
                   help="column of input labels (default: guessed: input, doc, doc_id, segment, item, ...; "
                   "a file without one holds system-level scores); 'none': read the file as system-level "
                   "scores, one row per system")
    p.add_argument("--dims", nargs="+", metavar="COL", default=None,
                   help="columns of extra dims, e.g. lp: one result per label (a netCDF file's own dims, "
                   "an mt-metrics-eval test set's lp, are extra dims without it)")
    p.add_argument("--lower-is-better", nargs="+", metavar="NAME", default=None,
                   help="scores where lower is better (TER, error counts), comma- or space-separated: "
                   "negated before every statistic, as if higher were better")
    p.add_argument("--file-format", choices=SUPPORTED_FORMATS, default=None,
                   help="format of FILE when its extension does not say it")
    p.add_argument("--encoding", default=None,
                   help="text encoding of a CSV, TSV or JSON Lines FILE (default: its byte-order mark, else UTF-8)")
    p.add_argument("--allow-incomplete", action="store_true", help=f"{ALLOW_INCOMPLETE_HELP}; {allow}")


def _system_level_requested(args: argparse.Namespace) -> bool:
    return args.input_col is not None and args.input_col.strip().lower() == "none"


class _Scores(NamedTuple):
    """What a command analyses: the data, the target, the metrics asked for (None: the default) and the source."""

    data: xr.Dataset
    target: str
    metrics: list[str] | None
    source: str


def _note(args: argparse.Namespace, text: str) -> None:
    """One line ``xcorrstat: note: ...`` on stderr, unless --quiet."""
    if not getattr(args, "quiet", False):
        print(f"xcorrstat: note: {printable(text, MESSAGE_WIDTH)}", file=sys.stderr)


def load_scores(args: argparse.Namespace) -> _Scores:
    """The data of the command, with the scores where lower is better declared so, and the scores named
    like human judgments left out of the default metrics (said in a note)."""
    ds, target, metrics, source = _read_scores(args)
    if args.lower_is_better:
        names, notes = lower_is_better_names(ds, args.lower_is_better)
        ds = declare_lower_is_better(ds, names, "--lower-is-better")
        for note in notes:
            _note(args, note)
        add_notes(ds.attrs, *notes)
    if metrics is None and target in ds.data_vars:
        for role, guessed, what in guessed_out(as_dataset(ds), [target]):  # system-level data too (input dim added)
            ds = ds.copy()
            for name in guessed:
                ds[name].attrs = {**ds[name].attrs, "role": role, "role_from": "name"}
            _note(args, f"left out of the metrics, as their names look like {what}: {name_list(guessed)}; "
                  "to analyse them as metrics name every metric with --metrics")
    return _Scores(ds, target, metrics, source)


def lower_is_better_names(ds: xr.Dataset, items: list[str]) -> tuple[list[str], list[str]]:
    """The scores ``--lower-is-better`` names, and notes: an item that is the name of a score is that score
    (a name may hold commas, ``TER,v2``); any other item is split at its commas (``TER,v2``: ``TER`` and
    ``v2``). When both readings name scores, the note says which was taken and how to write the other.

    Examples
    --------
    >>> ds = xr.Dataset({"TER": ("system", [1.0]), "v2": ("system", [2.0]), "TER,v2": ("system", [3.0])})
    >>> lower_is_better_names(ds, ["TER,v2"])[0], lower_is_better_names(ds, ["TER", "v2"])[0]
    (['TER,v2'], ['TER', 'v2'])
    >>> lower_is_better_names(ds.drop_vars("TER,v2"), ["TER,v2"])
    (['TER', 'v2'], [])
    """
    names: list[str] = []
    notes: list[str] = []
    for item in items:
        parts = [n.strip() for n in item.split(",") if n.strip()]
        if item in ds.data_vars or item.strip() in ds.data_vars:
            whole = item if item in ds.data_vars else item.strip()
            names.append(whole)
            if len(parts) > 1 and all(p in ds.data_vars for p in parts):
                notes.append(f"--lower-is-better {printable(repr(item), VALUE_WIDTH)} read as the score of that name, "
                             f"not as the scores {name_list(parts)}: to declare those, give them as separate words "
                             f"(--lower-is-better {' '.join(parts)})")
        else:
            names.extend(parts)
    return list(dict.fromkeys(names)), notes


def _read_scores(args: argparse.Namespace) -> _Scores:
    """The data of the command: the bundled data, FILE, or the score files of one level of a test set folder."""
    if args.file is None:
        if args.allow_incomplete:
            raise ValueError("--allow-incomplete applies to an mt-metrics-eval test set folder (FILE), not to the "
                             "bundled SummEval data")
        return _Scores(summeval(), args.target or DEFAULT_TARGET, args.metrics, "bundled SummEval data")
    if not args.target:
        raise ValueError("--target is required with a FILE: name the human score column")
    input_col = False if _system_level_requested(args) else args.input_col  # False: system-level
    folder = os.path.isdir(args.file)  # an mt-metrics-eval test set: its human scores say their role
    options: dict[str, Any] = {"human": None if folder else args.human}
    if folder:  # read the score files of the target's level only
        options["levels"] = [_file_level(args.target)]
        options["allow_incomplete"] = args.allow_incomplete
    if args.allow_incomplete and not is_mtme_testset(args.file):
        raise ValueError(f"--allow-incomplete applies to an mt-metrics-eval test set folder (its metric files are "
                         f"checked as mt-metrics-eval checks them), not to {printable(repr(args.file), VALUE_WIDTH)}")
    if args.dims:
        options["dims"] = args.dims
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            ds = read(args.file, system=args.system_col, input=input_col, format=args.file_format,
                      encoding=args.encoding, **options)
        except ValueError as err:  # a metric file refused: the hint names this command's flag
            raise command_hint(err) from None
    for note in caught:
        if note.category is UserWarning:  # e.g. a text column left out: one line, not a Python warning
            _note(args, str(note.message))
        else:  # another library's warning: as Python would show it
            warnings.warn_explicit(note.message, note.category, note.filename, note.lineno)
    target, metrics, human = args.target, args.metrics, args.human if folder else None
    source = printable(args.file, VALUE_WIDTH)
    level = _mtme_level_of(ds, target)
    if level is not None:
        ds, target, metrics = _mtme_scores(ds, target, metrics, human, quiet=args.quiet)
        source += f", {_MTME_LEVEL_NAMES[level]}-level score files"
    elif human:
        ds = _mark_human(ds, human)
    return _Scores(ds, target, metrics, source)


_MTME_LEVEL_NAMES = {"seg": "segment", "doc": "document", "domain": "domain", "sys": "system"}


def _file_level(target: str) -> str:
    """The level of the mt-metrics-eval score files a target names: ``mqm.sys`` the system files, ``mqm`` the
    segment files."""
    for level in ("sys", "doc", "domain"):
        if target.endswith(f".{level}") and len(target) > len(level) + 1:
            return level
    return "seg"


def _mtme_level_of(ds: xr.Dataset, target: str) -> str | None:
    """The level of the score files ``target`` comes from, in mt-metrics-eval data (read_mtme's); else None."""
    if ds.attrs.get("format") != "mt-metrics-eval" or target not in ds.data_vars:
        return None
    level = str(ds[target].attrs.get("level", ""))
    return level if level in _MTME_LEVEL_NAMES else None


def _mtme_scores(ds: xr.Dataset, target: str, metrics: list[str] | None,
                 human: list[str] | None, *, quiet: bool = False) -> tuple[xr.Dataset, str, list[str] | None]:
    """The score files of the target's level, named as in mt-metrics-eval (:func:`xcorrstat.mtme_level`):
    the data, the target and the metrics asked for, with the ``human`` scores marked as such.

    Names given in the variables' form (``BLEU-refA.sys``) or in mt-metrics-eval's (``BLEU-refA``) both
    work. One line on stderr says which level's files are used.
    """
    level = str(ds[target].attrs["level"])
    renamed = {str(k): str(v.attrs.get("mtme_name", k)) for k, v in ds.data_vars.items()
               if str(v.attrs.get("level")) == level}
    sub = mtme_level(ds, cast(MtmeLevel, level))

    def named(names: list[str] | None) -> list[str] | None:
        return None if names is None else [renamed.get(n, n) for n in names]

    new_target, metrics, human = renamed[target], named(metrics), named(human)
    if human:
        sub = _mark_human(sub, human)
    roles = [str(v.attrs.get("role", "metric")) for k, v in sub.data_vars.items() if k != new_target]
    n_metrics = roles.count("metric") if metrics is None else len(metrics)
    other, other_level = (f"{new_target}.sys", "sys") if level == "seg" else (new_target, "seg")
    if quiet:
        return sub, new_target, metrics
    print(f"xcorrstat: note: mt-metrics-eval data: the target {printable(repr(target), VALUE_WIDTH)} names the "
          f"{_MTME_LEVEL_NAMES[level]}-level score files, so only those are analysed: "
          f"{n_metrics} metric{'' if n_metrics == 1 else 's'}"
          f"{' (every metric score of that level; its human scores are not metrics)' if metrics is None else ''}; "
          f"the target {printable(repr(other), VALUE_WIDTH)} names the {_MTME_LEVEL_NAMES[other_level]}-level files",
          file=sys.stderr)
    return sub, new_target, metrics


def _mark_human(ds: xr.Dataset, names: list[str]) -> xr.Dataset:
    """``ds`` with the scores ``names`` marked as human judgments (never metrics by default)."""
    unknown = [n for n in names if n not in ds.data_vars]
    if unknown:
        hint = did_you_mean(unknown[0], ds.data_vars)
        raise ValueError(f"--human {printable(repr(unknown[0]), VALUE_WIDTH)}: no such score in the data; its "
                         f"scores are {name_list(ds.data_vars, near=unknown[0])}{hint}")
    ds = ds.copy()
    for name in names:
        ds[name].attrs = {**ds[name].attrs, "role": "human"}
    return ds
