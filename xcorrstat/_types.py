"""Type aliases of the public API: one name for each option's set of values."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal, Union

import numpy as np

__all__ = [
    "OWN", "is_own", "Alternative", "Average", "CIMethod", "Correction", "Draws", "Epsilon", "Family", "Level", "Levels",
    "Method", "MissingRule", "PValue", "Seed", "Standardise", "Statistic", "SwapUnit", "Test", "TieVariant", "Variant",
]

#: A correlation coefficient.
Method = Literal["pearson", "spearman", "kendall"]
#: A correlation coefficient, or a statistic of one's own ``f(x, z)`` along the last axis (``method=f``).
Statistic = Union[Method, Callable[[np.ndarray, np.ndarray], Any]]
#: How the capability table and messages name a statistic of one's own.
OWN = "callable"


def is_own(method: object) -> bool:
    """Whether ``method`` is a statistic of one's own (a function) rather than a coefficient's name."""
    return callable(method) and not isinstance(method, str)
#: Where correlations are taken (see the levels guide).
Level = Literal["system", "input", "global", "within_system"]
#: One level or several.
Levels = Union[Level, Sequence[Level]]
#: Kendall's tau variant: tau-b, tau-c, tau-a, WMT23 tau or WMT23's pairwise accuracy with ties.
Variant = Literal["b", "c", "a", "23", "acc23"]
#: How per-input (or per-system) correlations are averaged.
Average = Literal["macro", "weighted", "pairs"]
#: Direction of the alternative hypothesis.
Alternative = Literal["greater", "less", "two-sided"]
#: Monte-Carlo p-value convention.
PValue = Literal["plus-one", "fraction"]
#: Bootstrap confidence-interval method.
CIMethod = Literal["percentile", "basic", "bca"]
#: Multiple-testing correction.
Correction = Literal["bonferroni", "holm", "fdr_bh"]
#: The family a correction runs over in an all-pairs comparison.
Family = Literal["row", "all"]
#: A significance test between two metrics.
Test = Literal["permutation", "bootstrap", "williams"]
#: What a permutation draw swaps: whole systems, whole inputs, single cells, or a system flip XOR an input flip.
SwapUnit = Literal["system", "input", "cells", "system-xor-input"]
#: How draws treat a missing cell.
MissingRule = Literal["complete", "available"]
#: Anything that fixes the random draws: a seed, a root SeedSequence, a Generator, or None for fresh entropy.
Seed = Union[int, np.random.Generator, np.random.SeedSequence, None]
#: Kendall variants with tie calibration: acc_eq and tau_eq.
TieVariant = Literal["acc23", "23"]
#: A metric-tie threshold, or ``"calibrate"`` to choose it on the data.
Epsilon = Union[float, Literal["calibrate"]]
#: How soft pairwise accuracy's sign matrix is drawn: the library's draws or mt-metrics-eval's.
Draws = Literal["by-id", "mt-metrics-eval"]
#: What a permutation test z-scores before swapping: every cell of the grid, or the per-system means.
Standardise = Literal["cells", "system-means"]

