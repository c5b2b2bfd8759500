"""What every plot shares: matplotlib, imported when a plot is drawn, and text sizes.

matplotlib is an optional dependency: :func:`pyplot` imports it on first use and
says how to install it when it is missing, so importing :mod:`xcorrstat.plot`
works without it.

Figures are sized from their text: :func:`text_inches` measures labels as matplotlib
draws them and :func:`wrap_text` breaks a title into lines that fit a width. A figure
shown at its natural size on a screen (``SCREEN_DPI`` pixels per inch, as a browser
draws one CSS inch) shows a font of ``p`` points at ``p * SCREEN_DPI / 72`` pixels; no
text of the plots is smaller than ``MIN_FONT_POINTS`` (8 pixels at that size).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._display import figure_text

__all__ = ["FIGURE_LABEL_WIDTH", "MIN_FONT_POINTS", "SCREEN_DPI", "font_points", "label_inches", "pyplot",
           "text_inches", "wrap_text"]

#: Longest label drawn whole in a figure; longer ones are cut.
FIGURE_LABEL_WIDTH = 40

#: Pixels per inch of a figure shown at its natural size (one CSS inch is 96 CSS pixels).
SCREEN_DPI = 96

#: Smallest font of the plots, in points: 8 pixels at ``SCREEN_DPI``.
MIN_FONT_POINTS = 8 * 72 / SCREEN_DPI


def pyplot() -> Any:
    """``matplotlib.pyplot``, or an ImportError saying how to install it.

    Examples
    --------
    >>> pyplot().__name__
    'matplotlib.pyplot'
    """
    try:
        import matplotlib.pyplot as plt
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ImportError(
            'xcorrstat plots need matplotlib; install the plot extra with: pip install "xcorrstat[plot]"'
        ) from err
    return plt


def label_inches(labels: Sequence[str], *, size: float = 0.085) -> float:
    """Room, in inches, for the longest label as drawn (at least 1.4 inches, as for a short name).

    Parameters
    ----------
    labels : sequence of str
        The tick labels, before they are cut to ``FIGURE_LABEL_WIDTH`` characters.
    size : float, default 0.085
        Width of one character, in inches.

    Returns
    -------
    float

    Examples
    --------
    >>> label_inches(["bleu"]), label_inches(["x" * 20], size=0.125)
    (1.4, 2.5)
    """
    longest = max((len(figure_text(label, FIGURE_LABEL_WIDTH)) for label in labels), default=0)
    return max(1.4, size * longest)


def font_points(fontsize: float | str) -> float:
    """A matplotlib font size (points, or a name such as ``"small"``) in points.

    Examples
    --------
    >>> font_points(9), round(font_points("small"), 2)
    (9.0, 8.33)
    """
    from matplotlib.font_manager import FontProperties

    return float(FontProperties(size=fontsize).get_size_in_points())


def _width_points(text: str, fontsize: float) -> float:
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import text_to_path

    prop = FontProperties(size=fontsize)
    # figure_text escapes "$" as "\$", drawn as one "$"
    width, _, _ = text_to_path.get_text_width_height_descent(text.replace("\\$", "$"), prop, ismath=False)
    return float(width)


def text_inches(texts: Sequence[str], *, fontsize: float | str = "medium") -> float:
    """Width, in inches, of the widest of ``texts`` drawn in one line at ``fontsize`` (0 for none).

    The texts are measured with the font matplotlib draws them in, plus 5% for the
    hinting of raster output.

    Examples
    --------
    >>> 0.3 < text_inches(["rouge_2_f1"], fontsize=10) < 0.9
    True
    >>> text_inches([])
    0.0
    """
    size = font_points(fontsize)
    return max((1.05 * _width_points(str(t), size) / 72.0 for t in texts), default=0.0)


def _split_word(word: str, limit: float, size: float) -> list[str]:
    """``word`` cut into pieces no wider than ``limit`` points (one character at least)."""
    pieces, current = [], ""
    for char in word:
        if current and _width_points(current + char, size) > limit:
            pieces.append(current)
            current = ""
        current += char
    return pieces + [current]


def _wrap_words(words: list[str], line: str, limit: float, size: float) -> tuple[list[str], str]:
    """Add ``words`` to the current ``line``: the lines completed, and the line still open."""
    out: list[str] = []
    for word in words:
        candidate = f"{line} {word}" if line else word
        if not line or _width_points(candidate, size) <= limit:
            line = candidate
        else:
            out.append(line)
            line = word
        if _width_points(line, size) > limit:
            *done, line = _split_word(line, limit, size)
            out.extend(done)
    return out, line


def wrap_text(text: str, width: float, *, fontsize: float | str = "medium") -> str:
    """``text`` with line breaks so that no line is wider than ``width`` inches at ``fontsize``.

    Lines break after a comma when the next clause does not fit, else between words;
    a word wider than ``width`` is cut. The line breaks already in ``text`` stay.

    Parameters
    ----------
    text : str
    width : float
        Available width, in inches.
    fontsize : float or str, default "medium"
        As matplotlib takes it: points, or a name such as ``"small"``.

    Returns
    -------
    str

    Examples
    --------
    >>> wrap_text("Pearson correlation with human, system level, 95% CI", 3.0, fontsize=10)
    'Pearson correlation with human,\\nsystem level, 95% CI'
    >>> wrap_text("Pearson correlation with human", 1.5, fontsize=10)
    'Pearson correlation\\nwith human'
    """
    size = font_points(fontsize)
    limit = 72.0 * max(float(width), 0.1) / 1.05
    out: list[str] = []
    for paragraph in text.split("\n"):
        line = ""
        clauses = paragraph.split(", ")
        for k, clause in enumerate(clauses):
            clause += "," if k < len(clauses) - 1 else ""
            if line and _width_points(f"{line} {clause}", size) > limit:
                out.append(line)
                line = ""
            done, line = _wrap_words(clause.split(" "), line, limit, size)
            out.extend(done)
        out.append(line)
    return "\n".join(out)
