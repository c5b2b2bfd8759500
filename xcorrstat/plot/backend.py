"""What every plot shares: matplotlib, imported when a plot is drawn, and label sizes.

matplotlib is an optional dependency: :func:`pyplot` imports it on first use and
says how to install it when it is missing, so importing :mod:`xcorrstat.plot`
works without it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._display import figure_text

__all__ = ["FIGURE_LABEL_WIDTH", "label_inches", "pyplot"]

#: Longest label drawn whole in a figure; longer ones are cut.
FIGURE_LABEL_WIDTH = 40


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
