"""Write a report to a directory: tables (CSV, JSON), figures (PNG, SVG) and an HTML page."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence

import numpy as np

FIGURE_FORMATS = ("png", "svg", "pdf")


def _jsonable(value):
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


def _records(frame) -> list[dict]:
    return [{k: _jsonable(v) for k, v in row.items()} for row in frame.to_dict(orient="records")]


def write_all(report, out: str | os.PathLike[str], *, formats: Sequence[str] = ("png", "svg"),
              dpi: int = 150) -> dict[str, str]:
    """Write every output of ``report`` to directory ``out`` (created if missing)."""
    formats = [formats] if isinstance(formats, str) else list(formats)
    for fmt in formats:
        if fmt not in FIGURE_FORMATS:
            raise ValueError(f"formats must hold figure formats from {FIGURE_FORMATS}, got {fmt!r}")
    if os.path.exists(out) and not os.path.isdir(out):
        raise ValueError(f"out={os.fspath(out)!r} exists and is not a directory")
    os.makedirs(out, exist_ok=True)
    written: dict[str, str] = {}

    table = report.table()
    pairs = report.pairs()
    path = os.path.join(out, "correlations.csv")
    table.to_csv(path, index=False, float_format="%.6f")
    written["table (CSV)"] = path
    path = os.path.join(out, "comparisons.csv")
    pairs.to_csv(path, index=False, float_format="%.6g")
    written["pairwise tests (CSV)"] = path
    path = os.path.join(out, "report.json")
    doc = {"settings": {k: _jsonable(v) for k, v in report.settings.items()},
           "correlations": _records(table), "comparisons": _records(pairs)}
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(doc, fh, indent=1)
        fh.write("\n")
    written["table and tests (JSON)"] = path

    from ..plot.agreement import _pyplot
    from .html import page_html

    plt = _pyplot()
    figures = report.figures()
    try:
        for name, fig in figures.items():
            for fmt in formats:
                path = os.path.join(out, f"{name}.{fmt}")
                fig.savefig(path, dpi=dpi)
                written[f"{name} figure ({fmt.upper()})"] = path
        path = os.path.join(out, "report.html")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(page_html(report, figures))
        written["page (HTML)"] = path
    finally:
        for fig in figures.values():
            plt.close(fig)
    return written
