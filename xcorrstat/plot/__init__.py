"""Plots of xcorrstat results (needs matplotlib: ``pip install "xcorrstat[plot]"``).

matplotlib is imported only when a plot is drawn, so importing this package
works without it.
"""

from ._agreement import plot_jaccard, plot_leaderboard_agreement, plot_matrix
from ._distribution import plot_distribution
from ._forest import plot_ci
from ._significance import plot_significance

__all__ = [
    "plot_ci",
    "plot_distribution",
    "plot_jaccard",
    "plot_leaderboard_agreement",
    "plot_matrix",
    "plot_significance",
]
