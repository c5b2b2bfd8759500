"""Correlations of every metric with a human target, and their confidence intervals.

* :func:`correlate`: the level correlations (system, input, global, within-system);
* :func:`bootstrap`: bootstrap intervals along named dims (BOOT-SYSTEMS/INPUTS/BOTH);
* :func:`fisher`: Fisher-transformation intervals;
* :func:`mean_ci`, :func:`paired_difference_ci`, :func:`format_ci`: intervals of mean scores.
"""

from .confidence import bootstrap, fisher
from .estimates import correlate, level_statistic
from .meanscore import format_ci, mean_ci, paired_difference_ci

__all__ = ["bootstrap", "correlate", "fisher", "format_ci", "level_statistic", "mean_ci", "paired_difference_ci"]
