"""Write a report to a directory: tables (CSV, JSON), figures (PNG, SVG) and an HTML page."""

from __future__ import annotations

import json
import os
import secrets
import shutil
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._display import VALUE_WIDTH, printable

__all__ = ["FIGURE_FORMATS", "REPORT_FILES", "check_destination", "write_all"]

FIGURE_FORMATS = ("png", "svg", "pdf")


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


REPORT_FILES = ("correlations.csv", "comparisons.csv", "report.json", "report.html")
"""The files of a report besides its figures (``ci.*``, ``significance.*``)."""


def _is_report_file(name: str) -> bool:
    stem, _, ext = name.rpartition(".")
    return name in REPORT_FILES or (stem in ("ci", "significance") and ext in FIGURE_FORMATS)


def check_destination(out: str | os.PathLike[str], *, overwrite: bool = False) -> str:
    """The absolute path of report directory ``out``, or an error saying why it cannot be written.

    Parameters
    ----------
    out : str or path
        May be missing or an empty directory; a directory holding a previous report
        needs ``overwrite=True``.
    overwrite : bool, default False
        Allow replacing a previous report.

    Returns
    -------
    str
        ``out`` as an absolute path.

    Raises
    ------
    FileExistsError
        If ``out`` is a symbolic link, a file, a directory holding other files, the
        current directory (or one holding it), or a previous report without
        ``overwrite=True``.
    """
    name = printable(repr(os.fspath(out)), VALUE_WIDTH)
    dest = os.path.abspath(os.fspath(out))
    if os.path.islink(dest):
        raise FileExistsError(f"out={name} is a symbolic link; a report is never written through a link: "
                              "name a directory")
    if not os.path.lexists(dest):
        return dest
    if not os.path.isdir(dest):
        raise FileExistsError(f"out={name} exists and is not a directory")
    try:
        holds_cwd = os.path.commonpath([dest, os.getcwd()]) == dest
    except ValueError:  # another drive
        holds_cwd = False
    if holds_cwd:
        raise FileExistsError(f"out={name} is the current directory or holds it: name a new directory")
    entries = sorted(os.listdir(dest))
    if not entries:
        return dest
    others = [e for e in entries if not _is_report_file(e)]
    if others:
        raise FileExistsError(
            f"out={name} already exists and holds files that are not part of a report "
            f"(e.g. {printable(others[0], 60)!r}); name a new or empty directory")
    if not overwrite:
        raise FileExistsError(f"out={name} already exists and holds a report; pass overwrite=True "
                              "(--overwrite on the command line) to replace it")
    return dest


def _fresh_name(dest: str, tag: str) -> str:
    parent, base = os.path.split(dest)
    return os.path.join(parent, f".{base}.{tag}-{os.getpid()}-{secrets.token_hex(4)}")


def _move_into_place(tmp: str, dest: str) -> None:
    """Replace ``dest`` (missing, empty or an old report) by directory ``tmp`` with renames."""
    if not os.path.lexists(dest):
        os.rename(tmp, dest)
        return
    old = _fresh_name(dest, "old")
    os.rename(dest, old)
    try:
        os.rename(tmp, dest)
    except BaseException:
        os.rename(old, dest)
        raise
    shutil.rmtree(old, ignore_errors=True)


def _write_all_iv(out: str | os.PathLike[str], formats: str | Sequence[str],
                  overwrite: bool) -> tuple[list[str], str]:
    """The figure formats as a list, and ``out`` as an absolute path that may be written."""
    formats = [formats] if isinstance(formats, str) else list(formats)
    for fmt in formats:
        if fmt not in FIGURE_FORMATS:
            raise ValueError(f"formats must hold figure formats from {FIGURE_FORMATS}, "
                             f"got {printable(repr(fmt), 60)}")
    return formats, check_destination(out, overwrite=overwrite)


def write_all(report: Any, out: str | os.PathLike[str], *, formats: str | Sequence[str] = ("png", "svg"),
              dpi: int = 150, overwrite: bool = False) -> dict[str, str]:
    """Write every output of ``report`` to directory ``out``, all or nothing.

    The files are written to a new folder beside ``out`` and moved into place when
    all are written; on any error or interrupt the folder is removed and ``out`` is
    left as it was. See :func:`check_destination` for what ``out`` may be.
    """
    formats, dest = _write_all_iv(out, formats, overwrite)
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    tmp = _fresh_name(dest, "partial")
    os.mkdir(tmp)
    try:
        names = _write_files(report, tmp, formats=formats, dpi=dpi)
        check_destination(out, overwrite=overwrite)  # unchanged while we wrote
        _move_into_place(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    shown = os.fspath(out)
    return {what: os.path.join(shown, name) for what, name in names.items()}


def _write_files(report: Any, out: str, *, formats: Sequence[str], dpi: int) -> dict[str, str]:
    """Write the tables, figures and page into the new directory ``out``; file name per item."""
    written: dict[str, str] = {}
    table = report.table()
    pairs = report.pairs()
    table.to_csv(os.path.join(out, "correlations.csv"), index=False, float_format="%.6f")
    written["table (CSV)"] = "correlations.csv"
    pairs.to_csv(os.path.join(out, "comparisons.csv"), index=False, float_format="%.6g")
    written["pairwise tests (CSV)"] = "comparisons.csv"
    doc = {"settings": {k: _jsonable(v) for k, v in report.settings.items()},
           "correlations": _records(table), "comparisons": _records(pairs)}
    with open(os.path.join(out, "report.json"), "x", encoding="utf-8") as fh:
        json.dump(doc, fh, indent=1)
        fh.write("\n")
    written["table and tests (JSON)"] = "report.json"

    from ..plot.backend import pyplot
    from .html import page_html

    plt = pyplot()
    figures = report.figures()
    png: dict[str, bytes] = {}
    try:
        for name, fig in figures.items():
            for fmt in formats:
                fig.savefig(os.path.join(out, f"{name}.{fmt}"), dpi=dpi)
                written[f"{name} figure ({fmt.upper()})"] = f"{name}.{fmt}"
            if "png" in formats:  # the page shows the file just written: no second drawing
                with open(os.path.join(out, f"{name}.png"), "rb") as img:
                    png[name] = img.read()
        with open(os.path.join(out, "report.html"), "x", encoding="utf-8") as fh:
            fh.write(page_html(report, figures, png=png))
        written["page (HTML)"] = "report.html"
    finally:
        for fig in figures.values():
            plt.close(fig)
    return written
