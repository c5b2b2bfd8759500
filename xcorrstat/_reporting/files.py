"""Write a report to a folder: tables (CSV, JSON), figures (PNG, SVG, PDF), an HTML page and their manifest."""

from __future__ import annotations

import io
import json
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._display import printable
from .._escape import csv_text
from .facts import FACTS, header_text
from .folder import check_folder, probe_folder, write_folder

__all__ = ["CSV_METADATA", "FIGURE_FORMATS", "MANIFEST", "REPORT_FILES", "check_destination", "csv_metadata",
           "report_names", "write_all"]

FIGURE_FORMATS = ("png", "svg", "pdf")

#: The metadata of a report's CSV tables, under the name by which CSV on the Web (W3C) finds the metadata of
#: the CSV files of a folder.
CSV_METADATA = "csv-metadata.json"


def _jsonable(value: Any) -> Any:
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating,)):
        return None if np.isnan(value) else float(value)
    if isinstance(value, float) and np.isnan(value):
        return None
    if isinstance(value, (np.bool_,)):
        return bool(value)
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


def _records(frame: Any) -> list[dict]:
    return [{k: _jsonable(v) for k, v in row.items()} for row in frame.to_dict(orient="records")]


REPORT_FILES = ("correlations.csv", "comparisons.csv", CSV_METADATA, "report.json", "report.html")
"""The files of a report besides its figures (``ci.*``, ``significance.*``)."""

#: What each CSV table of a report holds, for its metadata.
_CSV_TABLES = {"correlations.csv": "The ranked table: one row per (level, metric), best first within each level.",
               "comparisons.csv": "Every ordered pair's test: one row per (level, metric, other_metric)."}


def csv_metadata(report: Any, facts: dict[str, Any]) -> dict[str, Any]:
    """The CSV tables' metadata (:data:`CSV_METADATA`), as CSV on the Web (W3C) finds it beside them.

    A CSV file has no place for the heading's facts (a commented first line would break
    readers that take the first line for the column names), so they travel in this file:
    ``dc:description`` holds the heading as the command line prints it, ``notes`` the facts
    as :func:`~xcorrstat._reporting.facts.report_facts` gives them (``report.json`` holds them too).
    """
    return {"@context": "http://www.w3.org/ns/csvw",
            "dc:title": f"xcorrstat report: correlation with {facts['target']!r}",
            "dc:description": header_text(report), "dc:creator": f"xcorrstat {facts['xcorrstat']}",
            "tables": [{"url": name, "dc:description": what} for name, what in _CSV_TABLES.items()],
            "notes": [facts]}

#: The manifest of a report folder: the files a report wrote there, with their sizes and SHA-256.
MANIFEST = "xcorrstat-manifest.json"

#: Set at save time so that the same report gives the same bytes: matplotlib's SVG ids are hashes
#: salted with ``svg.hashsalt`` (random unless set), and its SVG and PDF files carry a date unless
#: told not to (PNG files carry none).
_SAVE_METADATA: dict[str, dict[str, Any]] = {"svg": {"Date": None}, "pdf": {"CreationDate": None, "ModDate": None},
                                             "png": {}}


def report_names(formats: Sequence[str]) -> list[str]:
    """The files a report with figures in ``formats`` writes (besides its manifest).

    Examples
    --------
    >>> report_names(["png"])  # doctest: +NORMALIZE_WHITESPACE
    ['correlations.csv', 'comparisons.csv', 'csv-metadata.json', 'report.json',
     'ci.png', 'significance.png', 'report.html']
    """
    figures = [f"{name}.{fmt}" for name in ("ci", "significance") for fmt in formats]
    return [*REPORT_FILES[:4], *figures, REPORT_FILES[4]]


def _formats(formats: str | Sequence[str]) -> list[str]:
    formats = [formats] if isinstance(formats, str) else list(formats)
    for fmt in formats:
        if fmt not in FIGURE_FORMATS:
            raise ValueError(f"formats must hold figure formats from {FIGURE_FORMATS}, "
                             f"got {printable(repr(fmt), 60)}")
    return list(dict.fromkeys(formats))


def check_destination(out: str | os.PathLike[str], *, overwrite: bool = False,
                      formats: str | Sequence[str] = ("png", "svg"), probe: bool = False) -> str:
    """The folder report files go to, or an error saying why ``out`` cannot take them.

    Parameters
    ----------
    out : str or path
        A missing folder (made when the report is written) or a folder. Other files in
        it are left alone; the names a report writes must be free, or hold files of an
        earlier report that its manifest (``xcorrstat-manifest.json``) records and that
        are unchanged since.
    overwrite : bool, default False
        Allow replacing an earlier report.
    formats : sequence of {"png", "svg", "pdf"}, default ("png", "svg")
        Figure formats of the report to write.
    probe : bool, default False
        Also check by writing: make the folder, write and remove a test file (and
        remove what was made), so that a read-only or full disk is found now.

    Returns
    -------
    str
        The folder as an absolute path, symbolic links in its parents resolved.

    Raises
    ------
    FileExistsError
        If ``out`` is a symbolic link or not a folder, if a report file's name is taken
        by anything the manifest does not record (a folder, a link, a file of the
        user's or one changed since), or if a report is there and ``overwrite`` is False.
    OSError
        With ``probe=True``: the folder cannot be written, and why.
    """
    dest = check_folder(out, report_names(_formats(formats)), manifest=MANIFEST, overwrite=overwrite,
                        holds="a report")
    if probe:
        probe_folder(dest)
    return dest.path


def write_all(report: Any, out: str | os.PathLike[str], *, formats: str | Sequence[str] = ("png", "svg"),
              dpi: int = 150, overwrite: bool = False) -> dict[str, str]:
    """Write every output of ``report`` to folder ``out``, with a manifest of the files written.

    The folder is checked first (see :func:`check_destination`); the files are drawn in
    memory, then written each to a temporary file in the folder and renamed into place
    when all are written (see :mod:`xcorrstat._reporting.folder`): an error or an
    interrupt leaves an earlier report as it was.

    Returns
    -------
    dict
        From what was written (``"table (CSV)"``) to its path under ``out``.
    """
    formats = _formats(formats)
    check_destination(out, overwrite=overwrite, formats=formats)
    what, files = _report_files(report, formats=formats, dpi=dpi)
    write_folder(out, files, manifest=MANIFEST, overwrite=overwrite, holds="a report")
    shown = os.fspath(out)
    return {label: os.path.join(shown, name) for label, name in what.items()}


#: The metadata field of each figure format that holds the report's heading (a figure is cited on its own).
_ABOUT = {"png": "Description", "svg": "Description", "pdf": "Subject"}


def _figure_bytes(fig: Any, fmt: str, dpi: int, about: str) -> bytes:
    """``fig`` saved as ``fmt``, with the heading ``about`` in its metadata: the same bytes for the same
    figure (no date, fixed ids)."""
    import matplotlib

    buf = io.BytesIO()
    with matplotlib.rc_context({"svg.hashsalt": "xcorrstat"}):
        fig.savefig(buf, format=fmt, dpi=dpi, metadata={**_SAVE_METADATA[fmt], _ABOUT[fmt]: about})
    return buf.getvalue()


def _tables(report: Any) -> tuple[dict[str, str], dict[str, bytes]]:
    """The CSV and JSON files: what each is, and its bytes."""
    table, pairs = report.table(), report.pairs()
    facts = table.attrs[FACTS]
    doc = {FACTS: facts, "settings": {k: _jsonable(v) for k, v in report.settings.items()},
           "correlations": _records(table), "comparisons": _records(pairs)}
    files = {"correlations.csv": csv_text(table, index=False, float_format="%.6f").encode("utf-8"),
             "comparisons.csv": csv_text(pairs, index=False, float_format="%.6g").encode("utf-8"),
             CSV_METADATA: _json_bytes(csv_metadata(report, facts)),
             "report.json": _json_bytes(doc)}
    what = {"table (CSV)": "correlations.csv", "pairwise tests (CSV)": "comparisons.csv",
            "the tables' facts (JSON)": CSV_METADATA, "table and tests (JSON)": "report.json"}
    return what, files


def _json_bytes(doc: Any) -> bytes:
    return (json.dumps(doc, indent=1) + "\n").encode("utf-8")


def _report_files(report: Any, *, formats: Sequence[str], dpi: int) -> tuple[dict[str, str], dict[str, bytes]]:
    """Every file of the report, drawn in memory: what each is (to its name), and name to bytes."""
    what, files = _tables(report)

    from ..plot._backend import pyplot
    from .html import page_html

    plt = pyplot()
    about = header_text(report)
    figures = report.figures()
    try:
        for name, fig in figures.items():
            for fmt in formats:
                files[f"{name}.{fmt}"] = _figure_bytes(fig, fmt, dpi, about)
                what[f"{name} figure ({fmt.upper()})"] = f"{name}.{fmt}"
        png = {name: files[f"{name}.png"] for name in figures if f"{name}.png" in files}
        files["report.html"] = page_html(report, figures, png=png).encode("utf-8")  # the page shows the PNGs above
        what["page (HTML)"] = "report.html"
    finally:
        for fig in figures.values():
            plt.close(fig)
    return what, files
