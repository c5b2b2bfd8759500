"""The files of an mt-metrics-eval test set: their names, and each one parsed on its own.

Helpers of :func:`xcorrstat._io.mtme.read_mtme` (whose module describes the layout). A score
file is parsed with pandas' C parser; only a file that does not parse as numbers is read again
as text, to name the first bad line. Every error names the file, and the line where there is one.
"""

from __future__ import annotations

import csv
import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from .._display import cut
from .readers import undecodable

__all__ = [
    "MTME_LEVELS", "NO_TRANSLATION", "Layout", "MtmeLevel", "ScoreFile", "language_pairs", "listdir", "load_scores",
    "output_files", "place_scores", "read_layout", "read_texts", "reference_names", "score_files", "tree_paths",
]

#: A granularity of mt-metrics-eval score files.
MtmeLevel = Literal["seg", "doc", "domain", "sys"]
MTME_LEVELS: tuple[MtmeLevel, ...] = ("seg", "doc", "domain", "sys")
#: A text line that stands for a missing translation (read as None).
NO_TRANSLATION = "[No translation supplied]"


class _BadFile(ValueError):
    """A score file that is not in the format: the message names the file (and the line)."""


@dataclass
class ScoreFile:
    """One score file: where it is and what it holds."""

    lp: str
    name: str  # mt-metrics-eval's name: "mqm", "BLEU-refA"
    level: str
    human: bool
    path: str
    rel: str  # path relative to the test set folder, as the Dataset's attrs record it

    @property
    def variable(self) -> str:
        """The name of its Dataset variable: the score's name, with ``.<level>`` unless ``seg``."""
        return self.name if self.level == "seg" else f"{self.name}.{self.level}"


@dataclass
class Layout:
    """What a language pair's documents and sources say about its segments."""

    n: int | None
    origin: str  # the file that fixed n
    doc: np.ndarray | None = None
    domain: np.ndarray | None = None


def listdir(folder: str) -> list[str]:
    """The sorted names in `folder`; none if it does not exist."""
    return sorted(os.listdir(folder)) if os.path.isdir(folder) else []


def _parse_human(fn: str, path: str) -> tuple[str, str, str]:
    parts = fn.split(".")
    if len(parts) < 4 or not all(parts):
        raise ValueError(f"{path!r}: a human score file is named <lp>.<name>.<level>.score")
    return parts[0], ".".join(parts[1:-2]), parts[-2]


def _parse_metric(fn: str, path: str) -> tuple[str, str]:
    name, _, level = fn[: -len(".score")].rpartition(".")
    if "-" not in name.strip("-") or level not in MTME_LEVELS:
        raise ValueError(f"{path!r}: a metric score file is named <metric>-<ref>.<level>.score with <level> "
                         f"one of {list(MTME_LEVELS)}")
    return name, level


def score_files(folder: str) -> list[ScoreFile]:
    """Every score file of the test set, human scores first, each group sorted by name."""
    files = []
    for fn in listdir(os.path.join(folder, "human-scores")):
        if fn.endswith(".score"):
            rel = f"human-scores/{fn}"
            lp, name, level = _parse_human(fn, os.path.join(folder, rel))
            if level not in MTME_LEVELS:
                raise ValueError(f"{os.path.join(folder, rel)!r}: level {cut(level)} is not one of {list(MTME_LEVELS)}")
            files.append(ScoreFile(lp, name, level, True, os.path.join(folder, rel), rel))
    for lp in listdir(os.path.join(folder, "metric-scores")):
        for fn in listdir(os.path.join(folder, "metric-scores", lp)):
            if fn.endswith(".score"):
                rel = f"metric-scores/{lp}/{fn}"
                name, level = _parse_metric(fn, os.path.join(folder, rel))
                files.append(ScoreFile(lp, name, level, False, os.path.join(folder, rel), rel))
    return files


def language_pairs(folder: str, files: list[ScoreFile]) -> list[str]:
    """Every language pair of the test set: of its score files, documents, sources and outputs."""
    found = {f.lp for f in files}
    for sub, ext in (("documents", ".docs"), ("sources", ".txt"), ("sources", ".jsonl")):
        found.update(fn[: -len(ext)] for fn in listdir(os.path.join(folder, sub)) if fn.endswith(ext))
    found.update(d for d in listdir(os.path.join(folder, "system-outputs"))
                 if os.path.isdir(os.path.join(folder, "system-outputs", d)))
    return sorted(found)


def tree_paths(folder: str, lps: list[str], files: list[ScoreFile], text: bool) -> list[str]:
    """Every file a reading of `files` (and, with `text`, of the texts) of `lps` may open."""
    paths = [f.path for f in files]
    for lp in lps:
        names = [f"documents/{lp}.docs", f"sources/{lp}.txt", f"sources/{lp}.jsonl"]
        if text:
            names += [f"references/{fn}" for fn in listdir(os.path.join(folder, "references"))
                      if fn.startswith(lp + ".")]
            names += list(output_files(folder, lp).values())
        paths += [os.path.join(folder, n) for n in names if os.path.exists(os.path.join(folder, n))]
    return paths


# ------------------------------------------------------------------------------------- parsing


def _read_fields(path: str, labels: list[str], encoding: str, text: bool) -> pd.DataFrame:
    """The file's whitespace-separated fields: `labels` then ``score``, row k = line k + 1.

    As numbers (``text=False``, the fast path) a field that is not a number or ``None`` or a
    blank line raises ValueError without saying where; as text every field is kept, and
    ``_extra`` holds a further one. Too many fields on a line are a _BadFile naming it.
    """
    try:
        with open(path, encoding=encoding) as fh:
            first = fh.readline().split()
    except UnicodeDecodeError:
        first = []  # reported below
    if len(first) > len(labels) + 1:  # pandas would drop the extra fields of line 1, with a warning
        raise _BadFile(f"{path!r}, line 1: {len(first)} fields; expected {' '.join(s.upper() for s in labels)} SCORE")
    kw: dict = {"sep": r"\s+", "header": None, "index_col": False, "skip_blank_lines": False,
                "quoting": csv.QUOTE_NONE, "engine": "c", "encoding": encoding}
    if text:
        kw.update(names=[*labels, "score", "_extra"], dtype=str, na_filter=False)
    else:
        kw.update(names=[*labels, "score"], dtype={**dict.fromkeys(labels, "category"), "score": np.float64},
                  na_values={"score": ["None"]}, keep_default_na=False)
    try:
        return pd.read_csv(path, **kw)
    except pd.errors.EmptyDataError:
        raise _BadFile(f"{path!r} is empty") from None
    except pd.errors.ParserError as err:
        line = re.search(r"line (\d+), saw (\d+)", str(err))
        if line is None:
            raise _BadFile(f"{path!r}: not a score file ({cut(str(err), 200)})") from None
        raise _BadFile(f"{path!r}, line {line.group(1)}: {line.group(2)} fields; expected "
                       f"{' '.join(s.upper() for s in labels)} SCORE") from None
    except UnicodeDecodeError as err:
        raise _BadFile(undecodable(path, encoding, err)) from None


def _check_text_rows(df: pd.DataFrame, path: str, labels: list[str]) -> np.ndarray:
    """The scores of a file read as text, NaN for ``None``; ValueError names the first bad line."""
    first = df[labels[0]].to_numpy(dtype=object)
    raw = df["score"].to_numpy(dtype=object)
    values = pd.to_numeric(df["score"], errors="coerce").to_numpy(dtype=np.float64)
    missing = np.isin(raw, ["None", "nan", "NaN"])
    checks = [(first == "", "the line is blank"),
              (raw == "", f"too few fields; expected {' '.join(s.upper() for s in labels)} SCORE"),
              (df["_extra"].to_numpy(dtype=object) != "", "too many fields"),
              (np.isnan(values) & ~missing & (raw != ""), "the score {raw} is neither a number nor None"),
              (np.isinf(values), "the score {raw} is infinite; scores must be finite (None: missing)")]
    for bad, message in checks:
        rows = np.flatnonzero(bad)
        if rows.size:
            raise ValueError(f"{path!r}, line {rows[0] + 1}: " + message.format(raw=cut(raw[rows[0]])))
    return np.where(missing, np.nan, values)


def load_scores(f: ScoreFile, encoding: str) -> tuple[list[pd.Categorical], np.ndarray]:
    """The label columns (categorical) and the scores (float64, NaN = None) of a score file."""
    labels = ["domain", "system"] if f.level == "domain" else ["system"]
    try:
        df = _read_fields(f.path, labels, encoding, text=False)
        values = df["score"].to_numpy(dtype=np.float64)
        clean = not np.isinf(values).any()
    except _BadFile as err:
        raise ValueError(str(err)) from None
    except ValueError:  # a field that is not a number, or a blank line
        clean = False
    if not clean:  # read as text to find the bad line
        try:
            df = _read_fields(f.path, labels, encoding, text=True)
        except _BadFile as err:
            raise ValueError(str(err)) from None
        values = _check_text_rows(df, f.path, labels)
        return [pd.Categorical(df[c]) for c in labels], values
    if len(df) == 0:
        raise ValueError(f"{f.path!r} is empty")
    return [df[c].array for c in labels], values


def _blocks(f: ScoreFile, system: pd.Categorical, values: np.ndarray, n: int | None,
            origin: str) -> tuple[np.ndarray, np.ndarray, int]:
    """(systems, (system, item) scores, n) of a file with one block of n lines per system.

    The k-th line of a system holds its k-th item; n comes from `origin`, or, if None, from
    the number of lines of the system on line 1.
    """
    codes = np.asarray(system.codes, dtype=np.int64)
    counts = np.bincount(codes, minlength=len(system.categories))
    order = np.argsort(codes, kind="stable")
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    if n is None:
        n, origin = int(counts[codes[0]]), f"{f.rel!r} (the lines of its first system)"
    bad = np.flatnonzero(counts != n)
    if bad.size:
        s = int(bad[0])
        what = "segments" if f.level == "seg" else "documents"
        more = counts[s] > n
        line = order[starts[s] + (n if more else counts[s] - 1)] + 1
        where = f"this is its line {n + 1}" if more else "this is its last"
        raise ValueError(f"{f.path!r}, line {line}: system {cut(system.categories[s])} has {counts[s]} lines "
                         f"({where}), {'more' if more else 'fewer'} than the {n} {what} (from {origin}); a "
                         f"{f.level} file holds one line per system and {what[:-1]}")
    return np.asarray(system.categories, dtype=object), values[order].reshape(len(counts), n), n


def _singles(f: ScoreFile, labels: list[pd.Categorical], values: np.ndarray,
             domains: list[str] | None) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """(systems, (system, item) scores, items) of a sys file (one item) or a domain file."""
    system = labels[-1]
    n_sys = len(system.categories)
    if f.level == "sys":
        item, items = np.zeros(len(values), np.int64), ["all"]
    else:
        dom = labels[0]
        names = [str(d) for d in dom.categories]
        items = sorted(names) if domains is None else domains
        lookup = pd.Index(items).get_indexer(names)
        unknown = np.flatnonzero(lookup[np.asarray(dom.codes)] < 0)
        if unknown.size:
            raise ValueError(f"{f.path!r}, line {unknown[0] + 1}: domain {cut(dom[unknown[0]])} is not in the "
                             f"documents file, whose domains are {cut(items, 200)}")
        item = lookup[np.asarray(dom.codes)]
    key = np.asarray(system.codes, dtype=np.int64) * len(items) + item
    seen = pd.Series(key).duplicated().to_numpy()
    if seen.any():
        row = int(np.flatnonzero(seen)[0])
        first = int(np.flatnonzero(key == key[row])[0])
        what = f"system {cut(system[row])}" + ("" if f.level == "sys" else f" in domain {cut(labels[0][row])}")
        raise ValueError(f"{f.path!r}, line {row + 1}: {what} was already scored on line {first + 1}; a "
                         f"{f.level} file holds one line per system" + ("" if f.level == "sys" else " and domain"))
    out = np.full(n_sys * len(items), np.nan)
    out[key] = values
    return np.asarray(system.categories, dtype=object), out.reshape(n_sys, len(items)), items


# ------------------------------------------------------------------------------ language pairs


def _fields_error(err: Exception, path: str, expected: str) -> ValueError:
    line = re.search(r"line (\d+)", str(err))
    where = f", line {line.group(1)}" if line else ""
    return ValueError(f"{path!r}{where}: expected {expected} ({cut(str(err), 120)})")


def _count_lines(path: str) -> int:
    with open(path, "rb") as fh:
        data = fh.read()
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def read_layout(folder: str, lp: str, encoding: str) -> Layout:
    """The segments of `lp`: their number, and their documents and domains when there is a documents file."""
    rel = f"documents/{lp}.docs"
    layout = Layout(None, "")
    if os.path.isfile(os.path.join(folder, rel)):
        try:
            df = pd.read_csv(os.path.join(folder, rel), sep=r"\s+", header=None, names=["domain", "doc", "_x"],
                             index_col=False, skip_blank_lines=False, quoting=csv.QUOTE_NONE, engine="c", dtype=str,
                             na_filter=False, encoding=encoding)
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as err:
            raise _fields_error(err, os.path.join(folder, rel), "DOMAIN DOC on each line") from None
        bad = np.flatnonzero(df["doc"].to_numpy(dtype=object) == "")
        if bad.size:
            raise ValueError(f"{os.path.join(folder, rel)!r}, line {bad[0] + 1}: expected DOMAIN DOC (two fields)")
        layout = Layout(len(df), repr(rel), df["doc"].to_numpy(dtype=object), df["domain"].to_numpy(dtype=object))
    for ext in (".txt", ".jsonl"):
        src = f"sources/{lp}{ext}"
        if os.path.isfile(os.path.join(folder, src)):
            n = _count_lines(os.path.join(folder, src))
            if layout.n is not None and n != layout.n:
                raise ValueError(f"{os.path.join(folder, src)!r} has {n} lines but {rel!r} has {layout.n}; both "
                                 "hold one line per segment")
            layout.n, layout.origin = n, layout.origin or repr(src)
            break
    return layout


def place_scores(f: ScoreFile, labels: list[pd.Categorical], values: np.ndarray,
                 layout: Layout) -> tuple[np.ndarray, np.ndarray, Sequence]:
    """(systems, (system, item) scores, item labels) of one file's labels and scores; a seg file
    without a known number of segments fixes it for the language pair."""
    if f.level == "seg":
        systems, block, layout.n = _blocks(f, labels[0], values, layout.n, layout.origin)
        if not layout.origin:
            layout.origin = repr(f.rel)
        return systems, block, range(layout.n)
    if f.level == "doc":
        if layout.doc is None:
            raise FileNotFoundError(f"{f.path!r}: reading document-level scores needs documents/{f.lp}.docs, "
                                    "which gives the order of the documents")
        docs = list(pd.unique(layout.doc))
        systems, block, _ = _blocks(f, labels[0], values, len(docs), f"documents/{f.lp}.docs")
        return systems, block, docs
    domains = None if layout.domain is None else sorted(set(layout.domain))
    return _singles(f, labels, values, domains)


def reference_names(folder: str, lp: str, files: list[ScoreFile]) -> set[str]:
    """Names of the references of `lp`: its reference files and the references metrics name."""
    refs = set()
    for fn in listdir(os.path.join(folder, "references")):
        stem, _, ext = fn.rpartition(".")
        if fn.startswith(lp + ".") and ext in ("txt", "jsonl"):
            refs.add(stem[len(lp) + 1:])
    for f in files:
        ref = f.name.rpartition("-")[2]
        if not f.human and ref not in ("src", "all"):
            refs.update(ref.split("."))
    return refs


def output_files(folder: str, lp: str) -> dict[str, str]:
    """System name -> path of its output file (relative to the test set folder)."""
    sub = f"system-outputs/{lp}"
    return {fn.rpartition(".")[0]: f"{sub}/{fn}" for fn in listdir(os.path.join(folder, sub))
            if fn.endswith((".txt", ".jsonl"))}


def _text_lines(folder: str, rel: str, field: str, layout: Layout, encoding: str) -> np.ndarray:
    """The lines of a text file (``field`` of each object of a .jsonl file), ``NO_TRANSLATION`` as None."""
    path = os.path.join(folder, rel)
    try:
        with open(path, encoding=encoding) as fh:
            text = fh.read()
    except UnicodeDecodeError as err:
        raise ValueError(undecodable(path, encoding, err)) from None
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    if rel.endswith(".jsonl"):
        try:
            lines = [json.loads(line)[field] for line in lines]
        except (ValueError, KeyError, TypeError) as err:
            raise ValueError(f"{path!r}: each line must be a JSON object with a {field!r} field ({cut(str(err))})") \
                from None
    else:
        lines = [line.rstrip() for line in lines]
    if layout.n is None:
        layout.n, layout.origin = len(lines), repr(rel)
    if len(lines) != layout.n:
        raise ValueError(f"{path!r} has {len(lines)} lines, but there are {layout.n} segments (from {layout.origin})")
    return np.array([None if t == NO_TRANSLATION else t for t in lines], dtype=object)


def read_texts(folder: str, lps: list[str], layouts: dict[str, Layout], systems: pd.Index,
               encoding: str) -> dict[str, dict[str, dict[str, np.ndarray]]]:
    """lp -> {"source": {"": lines}, "reference": {ref: lines}, "output": {system: lines}}."""
    texts: dict[str, dict[str, dict[str, np.ndarray]]] = {}
    for lp in lps:
        found: dict[str, dict[str, np.ndarray]] = {"source": {}, "reference": {}, "output": {}}
        for ext in (".txt", ".jsonl"):
            if os.path.isfile(os.path.join(folder, f"sources/{lp}{ext}")):
                found["source"][""] = _text_lines(folder, f"sources/{lp}{ext}", "source", layouts[lp], encoding)
                break
        for fn in listdir(os.path.join(folder, "references")):
            ref, _, ext = fn[len(lp) + 1:].rpartition(".")
            if fn.startswith(lp + ".") and ext in ("txt", "jsonl"):
                found["reference"][ref] = _text_lines(folder, f"references/{fn}", "target", layouts[lp], encoding)
        for name, rel in output_files(folder, lp).items():
            if name in systems:
                found["output"][name] = _text_lines(folder, rel, "hypothesis", layouts[lp], encoding)
        texts[lp] = found
    return texts
