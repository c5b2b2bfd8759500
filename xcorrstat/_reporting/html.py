"""A report as HTML: tables for a notebook, and a self-contained page with the figures."""

from __future__ import annotations

import base64
import html
import io
from typing import Any

import numpy as np
import pandas as pd

from .._display import VALUE_WIDTH
from .._escape import html_text
from .._version import __version__
from .facts import cluster_note, header_lines
from .tables import label_text, report_groups

_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto; max-width: 72em;
       color: #222; line-height: 1.45; padding: 0 1em; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; }
table.xcorrstat { border-collapse: collapse; font-size: 0.9em; margin: 0.5em 0 1.5em; }
table.xcorrstat th, table.xcorrstat td { padding: 0.2em 0.7em; border-bottom: 1px solid #ddd; }
table.xcorrstat th { text-align: left; background: #f4f4f4; }
table.xcorrstat td.num { text-align: right; font-variant-numeric: tabular-nums; }
.levels { display: flex; flex-wrap: wrap; gap: 2em; align-items: flex-start; }
figure { margin: 1em 0; }
figure img.natural { display: block; max-width: none; max-height: none; }
figcaption { font-size: 0.9em; color: #555; max-width: 60em; }
.settings { font-size: 0.9em; color: #444; }
dl.facts { display: grid; grid-template-columns: max-content auto; gap: 0.15em 1em; margin: 0.5em 0 1em; }
dl.facts dt { font-weight: 600; } dl.facts dd { margin: 0; }
.caveat { border-left: 3px solid #c80; background: #fdf8ee; padding: 0.4em 0.8em; max-width: 60em; }
"""


def _text(value: Any) -> str:
    """A label shown literally in HTML: control characters escaped, markup escaped."""
    return html_text(value, VALUE_WIDTH)


def _num(value: float, digits: int = 3) -> str:
    return "nan" if value is None or np.isnan(value) else f"{value:.{digits}f}"


def _level_table(rows: pd.DataFrame) -> str:
    head = "<tr><th>rank</th><th>metric</th><th>r</th><th>CI low</th><th>CI high</th><th>cluster</th></tr>"
    body = []
    for row in rows.itertuples():
        body.append(
            "<tr>"
            f"<td class='num'>{row.rank if row.rank else '-'}</td><td>{html_text(row.metric)}</td>"
            f"<td class='num'>{_num(row.correlation)}</td><td class='num'>{_num(row.low)}</td>"
            f"<td class='num'>{_num(row.high)}</td><td class='num'>{row.cluster if row.cluster else '-'}</td>"
            "</tr>"
        )
    return f"<table class='xcorrstat'>{head}{''.join(body)}</table>"


def _settings_html(report: Any) -> str:
    """The heading's facts (:func:`~xcorrstat._reporting.facts.header_lines`), escaped: the title and the
    schemes as a paragraph, the draws, the open decisions and the data as a list (the notes follow)."""
    lines = [(label, text) for label, text in header_lines(report) if label != "note"]
    lead = "<br>".join(html.escape(text) for label, text in lines if not label)
    items = "".join(f"<dt>{html.escape(label.capitalize())}</dt><dd>{html.escape(text)}</dd>"
                    for label, text in lines if label)
    return f"<p class='settings'>{lead}</p>\n<dl class='settings facts'>{items}</dl>"


def cluster_html(report: Any) -> str:
    """The note on what a significance cluster claims and does not (escaped)."""
    return f"<p class='caveat'><strong>Reading a cluster boundary.</strong> {html.escape(cluster_note(report))}</p>"


def notes_html(report: Any) -> str:
    """The report's notes (what the data or the analysis changed, dropped or left out) as a list, or ""."""
    notes = report.notes
    if not notes:
        return ""
    items = "".join(f"<li>{html_text(note, 100_000)}</li>" for note in notes)
    return f"<p class='settings'>Notes:</p>\n<ul class='notes'>{items}</ul>"


_NOTEBOOK_STYLE = (
    "<style>.xcorrstat-report .levels { display: flex; flex-wrap: wrap; gap: 2em; align-items: flex-start; }"
    " .xcorrstat-report table.xcorrstat th, .xcorrstat-report table.xcorrstat td { padding: 0.15em 0.6em; }"
    " .xcorrstat-report td.num { text-align: right; font-variant-numeric: tabular-nums; }"
    " .xcorrstat-report caption { font-weight: bold; text-align: left; }</style>"
)


def _group_title(level: str, labels: dict) -> str:
    """"System level", or "System level, lp = en-de" for a label of the extra dims (escaped)."""
    return html.escape(f"{level.replace('_', '-').capitalize()} level" + (f", {label_text(labels)}" if labels else ""))


def tables_html(report: Any) -> str:
    """The ranked tables side by side (a notebook's rich repr): one per level (and label of the extra dims)."""
    parts = []
    for lev, labels, rows in report_groups(report):
        caption = f"<caption>{_group_title(lev, labels)}</caption>"
        parts.append(f"<div>{_level_table(rows).replace('>', '>' + caption, 1)}</div>")
    return (f"<div class='xcorrstat-report'>{_NOTEBOOK_STYLE}{_settings_html(report)}{notes_html(report)}"
            f"<div class='levels'>{''.join(parts)}</div></div>")


def _ranked_html(report: Any) -> str:
    """The page's ranked tables, one per level (and label of the extra dims), each under its heading."""
    return "".join(f"<div><h3>{_group_title(lev, labels)}</h3>{_level_table(rows)}</div>"
                   for lev, labels, rows in report_groups(report))


#: Most pixels of an embedded figure: beyond, it is embedded at fewer pixels per inch (never under SCREEN_DPI).
MAX_PIXELS = 16_000_000


def figure_img(fig: Any, alt: str, *, dpi: float | None = None, png: bytes | None = None) -> str:
    """An ``<img>`` of ``fig`` shown at its natural size: one figure inch is one CSS inch (96 CSS pixels).

    The figure is embedded as a PNG: ``png`` if given (the figure already saved, at
    any resolution), else drawn at ``dpi`` pixels per inch (default twice
    ``SCREEN_DPI``, for sharp text on high-density screens, fewer for a very large
    figure). The ``width`` and ``height`` attributes are the figure's size in CSS
    pixels, so a font of ``p`` points is drawn ``p * 96 / 72`` CSS pixels tall. The
    page's style never scales it down (``max-width: none``): a figure wider than the
    text column moves left, up to the window's edge, and one wider than the window
    scrolls with the page.
    """
    from ..plot._backend import SCREEN_DPI

    width, height = (float(v) for v in fig.get_size_inches())
    if png is None:
        if dpi is None:
            dpi = max(float(SCREEN_DPI), min(2.0 * SCREEN_DPI, (MAX_PIXELS / (width * height)) ** 0.5))
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=dpi)
        png = buf.getvalue()
    uri = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
    shown = round(width * SCREEN_DPI)
    # a figure wider than the text column moves left, up to the window's edge, instead of being cut by it
    shift = f"margin-left: max(calc(50% - 50vw + 1em), min(0px, calc(100% - {shown}px)))"
    return (f'<img class="natural" src="{uri}" width="{shown}" height="{round(height * SCREEN_DPI)}" '
            f'style="{shift}" alt="{html.escape(alt)}">')


def _panel_captions(report: Any) -> tuple[str, str, str]:
    """How the panels of the two figures are laid out, for their captions (escaped)."""
    extra = list(report.extra_dims)
    if not extra:
        return "Each level's panel", "that level's", "One matrix per level."
    dims = " and ".join(_text(d) for d in extra)
    layout = (f"One panel per label of {dims}" if len(report.levels) == 1
              else f"One row of panels per label of {dims}, one panel per level in a row")
    return (f"{layout}; each panel", "that panel's", f"One matrix per label of {dims} and level, label by label.")


def page_html(report: Any, figures: dict[str, Any], *, dpi: float | None = None,
              png: dict[str, bytes] | None = None) -> str:
    """A self-contained HTML page: settings, ranked tables and both figures (embedded PNGs, natural size).

    ``png`` maps a figure's name to the PNG already saved of it, embedded as is; the
    others are drawn at ``dpi`` (see :func:`figure_img`).
    """
    s = report.settings
    png = png or {}
    ci_img = figure_img(figures["ci"], "Forest plot of every metric's correlation with its confidence interval",
                        dpi=dpi, png=png.get("ci"))
    sig_img = figure_img(figures["significance"], "Pairwise significance matrix of the metric comparisons",
                         dpi=dpi, png=png.get("significance"))
    ci_panels, ci_own, sig_panels = _panel_captions(report)
    outline = (f"still significant after the {html.escape(s['correction'])} correction" if s["correction"]
               else "significant (no correction: every filled cell)")
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>xcorrstat report: correlation with {_text(s['target'])}</title>
<style>{_STYLE}</style>
</head>
<body>
<h1>Metric correlations with <code>{_text(s['target'])}</code></h1>
{_settings_html(report)}
{notes_html(report)}
<h2>Ranked metrics</h2>
<p>Significance clusters, in order of correlation: a metric opens a new cluster when a metric of the
current cluster is significantly better than it (after the correction), so within a cluster no metric is
significantly better than one ranked below it. Rank 0 and cluster "-" mark an undefined correlation.</p>
{cluster_html(report)}
<div class='levels'>{_ranked_html(report)}</div>
<h2>Confidence intervals</h2>
<figure>{ci_img}
<figcaption>Point: the correlation; bar: its {s['confidence_level']:.0%} {s['ci_scheme']} percentile bootstrap
interval. {ci_panels} lists the metrics in its own order: by significance cluster (bands, every other one
shaded; the cluster number on the right), then by {ci_own} correlation.</figcaption></figure>
<h2>Pairwise significance</h2>
<figure>{sig_img}
<figcaption>{sig_panels} Row metric tested as better than column metric
({html.escape(s['test_scheme'])}), in the order of the ranked table. Filled cell: p &le; {s['alpha']:g}, coloured by
the p-value; black outline: {outline}; red lines separate the
significance clusters.</figcaption></figure>
<p class='settings'>Made with xcorrstat {html.escape(__version__)}.</p>
</body>
</html>
"""
