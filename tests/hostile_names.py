"""Metric names that try to break every output format, each with the text a reader must see.

``HOSTILE`` maps a name to its visible form, written out by hand: the name itself when every
character of it is printable, else the name with each control, format (bidi, zero-width,
BOM) or separator character written as its Python escape. The payloads that would run in a
browser set a ``data-pwned`` attribute on the page, so a headless browser's DOM shows whether
one ran.
"""

from __future__ import annotations

#: Three names of 60 characters that differ only in their last characters (as in issue 25: three metrics
#: with r = .997, -.253 and -.923 were shown under one label).
_LONG = "cometkiwi_xl_estimate_of_the_overall_quality_calibrated_23"
LONG_TAILS = [_LONG + "_a", _LONG + "_b", _LONG + "_c"]

#: Two names of 61 characters that differ only in the middle.
LONG_MIDDLES = ["segment_level_metric_trained_on_" + c + "_" + "x" * 14 + "_da_and_mqm_scores" for c in "12"]

_VISIBLE = {
    # HTML and JavaScript
    "<script>alert(1)</script>": None,
    "<script>document.body.dataset.pwned=1</script>": None,
    "<img src=x onerror=document.body.dataset.pwned=2>": None,
    "<svg onload=document.body.dataset.pwned=3>": None,
    '<a href="javascript:document.body.dataset.pwned=4">x</a>': None,
    "javascript:alert(1)": None,
    "&amp;lt;b&amp;gt;": None,
    # Markdown
    "[x](javascript:alert(1))": None,
    "![x](javascript:alert(1))": None,
    "**bold**": None,
    "_emph_": None,
    "trailing\\": None,
    "`code`": None,
    "a|b": None,
    "x{: onclick=alert(1) }": None,
    " padded ": None,
    "~~gone~~": None,
    # LaTeX
    "\\input{/etc/passwd}": None,
    "$x^2$": None,
    "100%": None,
    "#1": None,
    "{braces}": None,
    "~tilde": None,
    "a--b": None,
    "<less>|bar": None,
    # control, bidi and invisible characters
    "\x1b]0;title\x07": "\\x1b]0;title\\x07",
    "\x1b[2J": "\\x1b[2J",
    "unit\x1fsep": "unit\\x1fsep",
    "new\nline": "new\\nline",
    "carriage\rreturn": "carriage\\rreturn",
    "line\u2028sep": "line\\u2028sep",
    "para\u2029sep": "para\\u2029sep",
    "\u202eevil": "\\u202eevil",
    "iso\u2066late\u2069": "iso\\u2066late\\u2069",
    "zero\u200bwidth": "zero\\u200bwidth",
    "\ufeffbom": "\\ufeffbom",
    "del\x7f": "del\\x7f",
    "c1\x85next": "c1\\x85next",
    # separators
    "comma,name": None,
    "semi;colon": None,
    "tab\tname": "tab\\tname",
    # formula prefixes (CSV)
    "=cmd|' /C calc'!A0": None,
    "+1": None,
    "-1": None,
    "@SUM(A1)": None,
    # very long and near-identical names
    **dict.fromkeys(LONG_TAILS + LONG_MIDDLES),
    # an ordinary name
    "qa_eval_f1": None,
}

#: name -> the text a reader must see for it (before any cut).
HOSTILE: dict[str, str] = {name: name if shown is None else shown for name, shown in _VISIBLE.items()}

#: Names that can be the name of a file (mt-metrics-eval's layout: a metric is a file ``<name>-<ref>.seg.score``).
FILE_NAMES: list[str] = [n for n in HOSTILE if "/" not in n and n.strip(" ") == n and not n.startswith("-")]

#: The markers a payload sets when it runs in a browser.
PWNED = "data-pwned"
