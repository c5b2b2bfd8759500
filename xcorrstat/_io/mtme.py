"""Read a test set stored in mt-metrics-eval's folder layout into one labelled Dataset.

mt-metrics-eval (the WMT metrics task's toolkit) keeps each test set in a folder
``<root>/<testset>/`` holding, for every language pair ``<lp>`` (``en-de``):

* ``human-scores/<lp>.<name>.<level>.score`` -- human judgments (``mqm``, ``wmt-raw`` ...);
* ``metric-scores/<lp>/<metric>-<ref>.<level>.score`` -- metric scores; ``<ref>`` names the
  reference(s) used (``refA``, ``refA.refB``), ``src`` (none) or ``all``;
* ``documents/<lp>.docs`` -- ``DOMAIN DOC`` for each segment, one line per segment;
* ``sources/<lp>.txt``, ``references/<lp>.<ref>.txt``, ``system-outputs/<lp>/<system>.txt`` --
  the texts, one segment per line.

A score file holds whitespace-separated ``SYSTEM SCORE`` lines (``DOMAIN SYSTEM SCORE`` at the
``domain`` level), ``None`` marking a missing score: one line per system (``sys``), or one block
per system with a line per segment (``seg``) or per document (``doc``), in order. A reference
that is also scored as a system (a file ``system-outputs/<lp>/refB.txt``) is a *human system*.
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from .._display import cut, did_you_mean
from .._notes import add_notes
from .._schema import SYSTEM_LEVEL_ATTR
from .limits import check_tree_file, follow_links_default, memory_guard
from .mtme_checks import MetricFacts, check_metric_files, metric_facts
from .mtme_files import (
    MTME_LEVELS,
    NO_TRANSLATION,
    Layout,
    MtmeLevel,
    ScoreFile,
    language_pairs,
    load_scores,
    output_files,
    place_scores,
    read_layout,
    read_texts,
    reference_names,
    score_files,
    tree_paths,
)
from .._warn import one_call

__all__ = ["MTME_LEVELS", "NO_TRANSLATION", "is_mtme_testset", "mtme_level", "read_mtme"]

_ITEM_DIM = {"seg": "input", "doc": "document", "domain": "domain_name"}
_Names = str | Sequence[str] | None
#: Threads that parse score files.
_THREADS = min(4, os.cpu_count() or 1)


def is_mtme_testset(path: str | os.PathLike[str]) -> bool:
    """Whether `path` is a test set folder of mt-metrics-eval (it holds ``human-scores`` or
    ``metric-scores``).

    Examples
    --------
    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> is_mtme_testset(folder)
    False
    >>> os.mkdir(os.path.join(folder, "human-scores"))
    >>> is_mtme_testset(folder)
    True
    """
    path = os.fspath(path)
    return os.path.isdir(os.path.join(path, "human-scores")) or os.path.isdir(os.path.join(path, "metric-scores"))


# ------------------------------------------------------------------------------------ assembly


def _names_arg(value: _Names, arg: str) -> list[str] | None:
    if value is None:
        return None
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, Sequence) or not all(isinstance(v, str) for v in names):
        raise TypeError(f"{arg} must be a name, a sequence of names or None, got {cut(value)}")
    return list(names)


def _folders(root: str | os.PathLike[str]) -> list[str]:
    """The folders in ``root`` (the test sets a mistyped ``testset`` may have meant); none if it is not one."""
    path = os.path.expanduser(os.fspath(root))
    try:
        return sorted(e.name for e in os.scandir(path) if e.is_dir())
    except OSError:
        return []


def _chosen(files: list[ScoreFile], lps: list[str], levels: Sequence[str], human: list[str] | None,
            metrics: list[str] | None, refs: list[str] | None) -> list[ScoreFile]:
    """The files of the chosen language pairs, levels and names; a name that matches no file is an error."""
    files = [f for f in files if f.lp in lps]
    metric_files = [f for f in files if not f.human]
    checks = (("human", human, [f.name for f in files if f.human]),
              ("metrics", metrics, [f.name for f in metric_files] + [f.name.rpartition("-")[0] for f in metric_files]),
              ("refs", refs, [f.name.rpartition("-")[2] for f in metric_files]))
    for arg, wanted, known in checks:
        unknown = [w for w in wanted or () if w not in known]
        if unknown:
            raise ValueError(f"{arg}={cut(wanted)}: {cut(unknown[0])} names no score file of "
                             f"{'/'.join(lps)}; found {cut(sorted(set(known)), 300)}"
                             f"{did_you_mean(unknown[0], sorted(set(known)))}")

    def keep(f: ScoreFile) -> bool:
        if f.human:
            return human is None or f.name in human
        base, _, ref = f.name.rpartition("-")
        return (metrics is None or f.name in metrics or base in metrics) and (refs is None or ref in refs)

    return [f for f in files if f.level in levels and keep(f)]


def _read_all(files: list[ScoreFile], layouts: dict[str, Layout], encoding: str
              ) -> tuple[dict[str, dict[str, tuple]], dict[str, list[ScoreFile]], list[MetricFacts]]:
    """variable -> lp -> (systems, scores, items), variable -> its files, and what the checks of the
    metric files need (:func:`~xcorrstat._io.mtme_checks.metric_facts`).

    The files are parsed on a few threads (pandas' parser releases the GIL), then placed in
    order, so the first bad file in that order is the one reported.
    """
    parts: dict[str, dict[str, tuple]] = {}
    sources: dict[str, list[ScoreFile]] = {}
    facts: list[MetricFacts] = []
    ordered = sorted(files, key=lambda f: (f.level != "seg", not f.human, f.name, f.level, f.lp))
    for f in ordered:
        seen = sources.setdefault(f.variable, [f])
        if (seen[0].name, seen[0].level, seen[0].human) != (f.name, f.level, f.human):
            raise ValueError(f"{f.path!r} and {seen[0].path!r} would both be the variable {cut(f.variable)}; rename one")
        if seen[-1] is not f:
            seen.append(f)
    pool = ThreadPoolExecutor(max_workers=_THREADS)
    try:
        loaded = pool.map(lambda f: load_scores(f, encoding), ordered)
        for f, (labels, values) in zip(ordered, loaded):
            parts.setdefault(f.variable, {})[f.lp] = place_scores(f, labels, values, layouts[f.lp])
            if not f.human:
                facts.append(metric_facts(f, labels, values))
    finally:
        pool.shutdown(cancel_futures=True)  # after an error, parse no further file
    return parts, sources, facts


def _checks(folder: str, lps: list[str], parts: dict[str, dict[str, tuple]], sources: dict[str, list[ScoreFile]],
            facts: list[MetricFacts], include_human_systems: bool, allow: bool, encoding: str) -> list[str]:
    """mt-metrics-eval's checks of the metric files (:mod:`~xcorrstat._io.mtme_checks`): the notes of
    what `allow` accepted, else the first problem raised."""
    known = {lp: set(output_files(folder, lp)) for lp in lps}
    for var, by_lp in parts.items():
        if sources[var][0].human:
            for lp, (systems, _, _) in by_lp.items():
                known[lp].update(str(s) for s in systems)
    lp_refs = {lp: reference_names(folder, lp, [f for fs in sources.values() for f in fs if f.lp == lp])
               for lp in lps}
    dropped = set() if include_human_systems else set().union(*lp_refs.values())
    return check_metric_files(facts, parts, sources, known, lp_refs, dropped, allow=allow, encoding=encoding)


def _item_labels(parts: dict[str, dict[str, tuple]], sources: dict[str, list[ScoreFile]],
                 layouts: dict[str, Layout], text: bool) -> dict[str, list]:
    """The labels of each level's item dim, joined over the language pairs."""
    found: dict[str, dict] = {}
    for var, by_lp in parts.items():
        level = sources[var][0].level
        if level in ("doc", "domain"):
            for _, _, items in by_lp.values():
                found.setdefault(level, {}).update(dict.fromkeys(items))
    labels: dict[str, list] = {level: list(items) for level, items in found.items()}
    if "seg" in {f[0].level for f in sources.values()} or text:
        n = max((lay.n for lay in layouts.values() if lay.n is not None), default=0)
        labels["seg"] = list(range(n))
    if "domain" in labels:
        labels["domain"] = sorted(labels["domain"])
    return labels


def _grid(by_lp: dict[str, tuple], lps: list[str], systems: pd.Index, items: pd.Index | None) -> np.ndarray:
    """One variable as a (lp, system[, item]) array, NaN where a file has no score."""
    arr = np.full((len(lps), len(systems)) + (() if items is None else (len(items),)), np.nan)
    for k, lp in enumerate(lps):
        if lp not in by_lp:
            continue
        file_systems, block, file_items = by_lp[lp]
        rows = systems.get_indexer(file_systems)
        keep = rows >= 0  # human systems left out
        if items is None:
            arr[k, rows[keep]] = block[keep, 0]
        elif isinstance(file_items, range):  # segments: positions 0..n-1
            arr[k, rows[keep], : len(file_items)] = block[keep]
        else:
            arr[k][np.ix_(rows[keep], items.get_indexer(file_items))] = block[keep]
    return arr


def _variables(parts: dict[str, dict[str, tuple]], sources: dict[str, list[ScoreFile]], lps: list[str],
               systems: pd.Index, labels: dict[str, list]) -> dict[str, xr.Variable]:
    out = {}
    for var, by_lp in parts.items():
        first = sources[var][0]
        dim = _ITEM_DIM.get(first.level)
        items = None if dim is None else pd.Index(labels[first.level])
        data = _grid(by_lp, lps, systems, items)
        dims = ("lp", "system") + (() if dim is None else (dim,))
        attrs: dict[str, Any] = {"role": "human" if first.human else "metric", "level": first.level,
                                 "mtme_name": first.name}
        if not first.human:
            attrs["basename"], _, attrs["refs"] = first.name.rpartition("-")
        attrs["files"] = [f.rel for f in sources[var]]
        out[var] = xr.Variable(dims, data, attrs)
    return out


def _segment_coords(lps: list[str], layouts: dict[str, Layout], systems: pd.Index, n: int,
                    texts: dict[str, dict[str, dict[str, np.ndarray]]] | None) -> dict[str, tuple]:
    """doc and domain along (lp, input); with `texts` the source, references and outputs too."""
    coords: dict[str, tuple] = {}
    if any(lay.doc is not None for lay in layouts.values()):
        for name in ("doc", "domain"):
            arr = np.full((len(lps), n), None, dtype=object)
            for k, lp in enumerate(lps):
                values = getattr(layouts[lp], name)
                if values is not None:
                    arr[k, : len(values)] = values
            coords[name] = (("lp", "input"), arr)
    if texts is None:
        return coords
    refs = sorted({ref for found in texts.values() for ref in found["reference"]})
    source = np.full((len(lps), n), None, dtype=object)
    reference = np.full((len(lps), len(refs), n), None, dtype=object)
    output = np.full((len(lps), len(systems), n), None, dtype=object)
    for k, lp in enumerate(lps):
        for lines in texts[lp]["source"].values():
            source[k, : len(lines)] = lines
        for ref, lines in texts[lp]["reference"].items():
            reference[k, refs.index(ref), : len(lines)] = lines
        for name, lines in texts[lp]["output"].items():
            output[k, systems.get_loc(name), : len(lines)] = lines
    coords.update(source=(("lp", "input"), source), reference=(("lp", "ref", "input"), reference),
                  output=(("lp", "system", "input"), output), ref=(("ref",), np.array(refs, dtype=object)))
    return coords


# ---------------------------------------------------------------------------------- public API


def _read_mtme_iv(root, testset, lps, levels, include_human_systems, text, encoding,
                  allow_incomplete=False) -> tuple[str, list[str], bool]:
    """The test set folder, the language pairs asked for (None: all) and whether one lp was named as a str."""
    if not isinstance(root, (str, os.PathLike)):
        raise TypeError(f"root must be a str or path-like, got {type(root).__name__}")
    if not isinstance(testset, str) or not testset:
        raise TypeError(f"testset must be the name of a test set folder (a non-empty str), got {cut(testset)}")
    levels_list = [levels] if isinstance(levels, str) else list(levels)
    if not levels_list or any(lev not in MTME_LEVELS for lev in levels_list) or len(set(levels_list)) < len(levels_list):
        odd = [lev for lev in levels_list if lev not in MTME_LEVELS]
        raise ValueError(f"levels must be one or more distinct levels of {list(MTME_LEVELS)}, got {cut(levels)}"
                         f"{did_you_mean(odd[0], MTME_LEVELS) if odd else ''}")
    for arg, value in (("include_human_systems", include_human_systems), ("text", text),
                       ("allow_incomplete", allow_incomplete)):
        if not isinstance(value, bool):
            raise TypeError(f"{arg} must be True or False, got {cut(value)}")
    try:
        codecs.lookup(encoding)
    except (LookupError, TypeError):
        raise ValueError(f"encoding={cut(encoding)} is not a known text encoding") from None
    folder = os.path.join(os.path.expanduser(os.fspath(root)), testset)
    if not os.path.isdir(folder):
        hint = (f"; {os.fspath(root)!r} is itself a test set folder: pass its parent as root and its name as "
                "testset" if is_mtme_testset(root) else did_you_mean(testset, _folders(root)))
        raise FileNotFoundError(f"no test set folder {folder!r} (root={os.fspath(root)!r}, testset={testset!r}){hint}")
    names = _names_arg(lps, "lps")
    if names is not None and (not names or len(set(names)) < len(names)):
        raise ValueError(f"lps must name one or more distinct language pairs, got {cut(lps)}")
    return folder, names or [], isinstance(lps, str)


@one_call
def read_mtme(root: str | os.PathLike[str], testset: str, lps: str | Sequence[str] | None = None, *,
              levels: MtmeLevel | Sequence[MtmeLevel] = ("seg", "domain", "sys"), human: _Names = None,
              metrics: _Names = None, refs: _Names = None, include_human_systems: bool = True,
              text: bool = False, encoding: str = "utf-8", follow_links: bool | None = None,
              allow_incomplete: bool = False) -> xr.Dataset:
    """Read a test set in mt-metrics-eval's folder layout into one Dataset.

    Parameters
    ----------
    root : str or path-like
        The folder that holds the test sets (mt-metrics-eval downloads it as
        ``~/.mt-metrics-eval/mt-metrics-eval-v2``; ``~`` is expanded).
    testset : str
        The test set's folder name, for example ``"wmt23"``.
    lps : str or sequence of str, optional
        Language pairs (``"en-de"``). One given as a str gives Datasets without an ``lp`` dim
        (``lp`` is then a scalar coordinate); a sequence, or None (every language pair of the
        test set), gives an ``lp`` dim.
    levels : {"seg", "doc", "domain", "sys"} or sequence of them
        The score files read (default segment, domain and system scores). Segment scores are
        named as in mt-metrics-eval (``"mqm"``, ``"BLEU-refA"``); the other levels' get the
        level as a suffix (``"mqm.sys"``, ``"BLEU-refA.domain"``), so the levels of a score live
        side by side.
    human, metrics, refs : str or sequence of str, optional
        Read only these human scores (``"mqm"``), these metrics (full names such as
        ``"BLEU-refA"`` or base names such as ``"BLEU"``) and the metric variants that used
        these references (the part after the last ``-``: ``"refA"``, ``"src"`` for
        reference-free metrics, ``"all"``). ``[]`` reads none. A name that matches no file is
        a ValueError.
    include_human_systems : bool
        Keep the systems that are references (``refB`` scored as a system).
    text : bool
        Also read the source, the references and the system outputs, as the coordinates
        ``source`` (along ``input``), ``reference`` (``ref``, ``input``) and ``output``
        (``system``, ``input``); a missing translation (a line ``[No translation supplied]``)
        is NaN, as is every text of a segment or system that a language pair lacks.
    encoding : str
        Text encoding of every file.
    follow_links : bool, optional
        Read files that are links (or lie under linked folders) resolving outside the test set
        folder. None (the default) leaves it to the environment variable
        ``XCORRSTAT_FOLLOW_LINKS`` (``1`` allows them), else they are refused. Whatever it says,
        every file read must be a regular file (not a FIFO, device or socket) within the
        reading limit (the ``memory_budget`` option).
    allow_incomplete : bool, default False
        Keep the metric files that fail mt-metrics-eval's checks (see Raises): they are read as
        they are (NaN where a file has no score; a system the test set lacks becomes a system of
        its own), and each problem is a note in ``attrs["notes"]`` naming the metric, language
        pair, level and the systems or scores it lacks.

    Returns
    -------
    xarray.Dataset
        Segment scores with dims ``(lp, system, input)`` (input = the segment's 0-based
        position), document scores ``(lp, system, document)``, domain scores ``(lp, system,
        domain_name)``, system scores ``(lp, system)``. Systems are the sorted union of the
        systems of every file read (and of ``system-outputs``); language pairs and items are
        joined the same way, so a system or segment missing from a file -- a metric's own
        reference, a language pair with fewer segments -- and ``None`` in a file are NaN.
        Coordinates: ``doc`` and ``domain`` along ``input`` (from ``documents/<lp>.docs``; NaN
        past a language pair's last segment), ``human_system`` (bool) along ``system``,
        ``n_references`` (how many references the language pair has) along ``lp``. Each
        variable's attrs give its ``role`` (``"human"``/``"metric"``), ``level``,
        ``mtme_name``, ``files`` (relative to the test set folder) and, for metrics,
        ``basename`` and ``refs``; the Dataset's give ``testset``, ``lps``, ``levels``,
        ``references``, ``human_systems`` (found, kept or not) and, when known,
        ``n_segments``, and ``notes`` when `allow_incomplete` kept a metric file that fails a
        check. Only system scores read: the attr ``system_level = 1``.
        :func:`mtme_level` takes out one level, ready for the analyses.

    Raises
    ------
    FileNotFoundError
        If the test set folder, a language pair's score files, or a documents file that
        document-level scores need is missing.
    ValueError
        If a file is not in the format; the message names the file and the line: a line with too
        few or too many fields, a score that is not a number or ``None`` (or is infinite), a blank
        line, a system with more or fewer lines than the segments (or documents), a system (or
        system and domain) given twice in a ``sys`` (or ``domain``) file, files that disagree on
        the number of segments; if a file is not a regular file, is larger than the reading
        limit, or is a link out of the folder that `follow_links` does not allow (these before
        any file is opened); if memory runs out while reading (a ``MemoryError`` too). Unless
        `allow_incomplete`, if a metric file fails one of mt-metrics-eval's checks (its
        ``CheckScores``, strict): it scores a system that is neither in ``system-outputs/<lp>/``
        nor in a human score file (with a "did you mean" when a known name is close), a score is
        ``None`` or ``nan``, or it has no line for a system that the human scores of its level
        rate (its own references and the human systems left out are exempt); the message names
        the file, the line where there is one, and the system.

    Examples
    --------
    >>> import os, tempfile
    >>> root = tempfile.mkdtemp()
    >>> os.makedirs(os.path.join(root, "wmt", "human-scores"))
    >>> os.makedirs(os.path.join(root, "wmt", "metric-scores", "en-de"))
    >>> with open(os.path.join(root, "wmt", "human-scores", "en-de.mqm.seg.score"), "w") as fh:
    ...     _ = fh.write("A\\t-1\\nA\\tNone\\nB\\t0\\nB\\t-5\\n")
    >>> with open(os.path.join(root, "wmt", "metric-scores", "en-de", "BLEU-refA.seg.score"), "w") as fh:
    ...     _ = fh.write("A 0.3\\nA 0.1\\nB 0.5\\nB 0.2\\n")
    >>> ds = read_mtme(root, "wmt", "en-de")
    >>> ds["mqm"].values
    array([[-1., nan],
           [ 0., -5.]])
    >>> ds["BLEU-refA"].attrs["refs"], list(ds["system"].values), ds["mqm"].attrs["role"]
    ('refA', ['A', 'B'], 'human')
    """
    folder, lp_list, single = _read_mtme_iv(root, testset, lps, levels, include_human_systems, text, encoding,
                                            allow_incomplete)
    level_list = [levels] if isinstance(levels, str) else list(levels)
    every = score_files(folder)
    found = language_pairs(folder, every)
    unknown = [lp for lp in lp_list if lp not in found]
    if unknown or not found:
        raise FileNotFoundError(f"lps={cut(lps)}: no data for {cut(unknown[0]) if unknown else 'any language pair'} "
                                f"in {folder!r}; its language pairs are {cut(found, 300)}"
                                f"{did_you_mean(unknown[0], found) if unknown else ''}")
    lp_list = lp_list or found
    files = _chosen(every, lp_list, level_list, _names_arg(human, "human"), _names_arg(metrics, "metrics"),
                    _names_arg(refs, "refs"))
    empty = [lp for lp in lp_list if not any(f.lp == lp for f in files)]
    if empty:
        raise FileNotFoundError(f"no score files for {empty[0]!r} at levels {level_list} (with the human=, metrics=, "
                                f"refs= chosen) in {folder!r}: expected human-scores/{empty[0]}.<name>.<level>.score "
                                f"or metric-scores/{empty[0]}/<metric>-<ref>.<level>.score")
    follow = follow_links_default() if follow_links is None else follow_links
    for path in tree_paths(folder, lp_list, files, text):  # before any is opened
        check_tree_file(path, os.path.realpath(folder), bool(follow))
    with memory_guard(repr(folder)):
        layouts = {lp: read_layout(folder, lp, encoding) for lp in lp_list}
        parts, sources, facts = _read_all(files, layouts, encoding)
        notes = _checks(folder, lp_list, parts, sources, facts, include_human_systems, allow_incomplete, encoding)
        ds = _dataset(folder, testset, lp_list, single, level_list, parts, sources, layouts,
                      include_human_systems, text, encoding)
        add_notes(ds.attrs, *notes)
        return ds


def _dataset(folder: str, testset: str, lps: list[str], single: bool, levels: Sequence[str],
             parts: dict[str, dict[str, tuple]], sources: dict[str, list[ScoreFile]], layouts: dict[str, Layout],
             include_human_systems: bool, text: bool, encoding: str) -> xr.Dataset:
    """The Dataset of the files read: labels joined over the files and language pairs."""
    lp_refs = [reference_names(folder, lp, [f for fs in sources.values() for f in fs if f.lp == lp]) for lp in lps]
    refs = sorted(set().union(*lp_refs))
    names = {s for by_lp in parts.values() for systems, _, _ in by_lp.values() for s in systems}
    names.update(s for lp in lps for s in output_files(folder, lp))
    human_systems = sorted(names & set(refs))
    systems = pd.Index(sorted(names if include_human_systems else names - set(refs)), dtype=object)
    texts = read_texts(folder, lps, layouts, systems, encoding) if text else None
    labels = _item_labels(parts, sources, layouts, text)
    coords: dict[str, tuple] = {"lp": (("lp",), np.array(lps, dtype=object)),
                                "n_references": (("lp",), np.array([len(r) for r in lp_refs], dtype=np.int64)),
                                "system": (("system",), np.asarray(systems, dtype=object)),
                                "human_system": (("system",), np.isin(np.asarray(systems, dtype=object), refs))}
    if "seg" in labels:
        coords["input"] = (("input",), np.array(labels["seg"], dtype=np.int64))
        coords.update(_segment_coords(lps, layouts, systems, len(labels["seg"]), texts))
    for level in ("doc", "domain"):
        if level in labels:
            coords[_ITEM_DIM[level]] = ((_ITEM_DIM[level],), np.array(labels[level], dtype=object))
    attrs: dict[str, Any] = {"format": "mt-metrics-eval", "testset": testset, "lps": list(lps), "levels": list(levels),
             "references": refs, "human_systems": human_systems}
    if all(lay.n is not None for lay in layouts.values()):
        attrs["n_segments"] = [int(layouts[lp].n or 0) for lp in lps]
    if not any(dim in labels for dim in ("seg", "doc", "domain")):
        attrs[SYSTEM_LEVEL_ATTR] = 1
    ds = xr.Dataset(_variables(parts, sources, lps, systems, labels), coords=coords, attrs=attrs)
    return ds.isel(lp=0) if single else ds


@one_call
def mtme_level(ds: xr.Dataset, level: MtmeLevel = "sys") -> xr.Dataset:
    """The scores of one level of a :func:`read_mtme` Dataset, named as in mt-metrics-eval, ready for
    the analyses.

    System scores become a system-level Dataset (attr ``system_level = 1``); document and domain
    scores get their item dim renamed ``input``; segment scores are returned as they are.

    Examples
    --------
    >>> ds = xr.Dataset({"mqm.sys": ("system", [1.0, 2.0]), "mqm": (("system", "input"), [[1.0], [2.0]])},
    ...                 coords={"system": ["A", "B"]})
    >>> ds["mqm.sys"].attrs.update(level="sys", mtme_name="mqm")
    >>> ds["mqm"].attrs.update(level="seg", mtme_name="mqm")
    >>> list(mtme_level(ds, "sys").data_vars), mtme_level(ds, "sys").attrs["system_level"]
    (['mqm'], 1)
    """
    if not isinstance(ds, xr.Dataset):
        raise TypeError(f"ds must be a Dataset from read_mtme, got {type(ds).__name__}")
    if level not in MTME_LEVELS:
        raise ValueError(f"level must be one of {list(MTME_LEVELS)}, got {cut(level)}"
                         f"{did_you_mean(level, MTME_LEVELS)}")
    chosen = [k for k, v in ds.data_vars.items() if v.attrs.get("level") == level]
    if not chosen:
        found = sorted({str(v.attrs.get("level")) for v in ds.data_vars.values()})
        raise ValueError(f"level={level!r}: the data hold no {level}-level scores (levels found: {found})")
    sub = ds[chosen].rename({k: ds[k].attrs.get("mtme_name", k) for k in chosen})
    sub.attrs = {**ds.attrs, "levels": [level]}
    if level == "sys":
        sub.attrs[SYSTEM_LEVEL_ATTR] = 1
    elif level != "seg":
        sub = sub.rename({_ITEM_DIM[level]: "input"})
    return sub
