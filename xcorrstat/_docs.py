"""Parameter descriptions shared by the public functions' docstrings.

A docstring line that holds only ``%(name)s`` is replaced by the snippet ``name``,
indented as the placeholder is::

    @fill_doc
    def f(data, *, rng=None):
        '''One line.

        Parameters
        ----------
        %(rng)s
        '''

Placeholders elsewhere in a line are left alone, so a docstring needs no escaping.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable
from typing import TypeVar

__all__ = ["SNIPPETS", "fill_doc"]

F = TypeVar("F", bound=Callable)

SNIPPETS: dict[str, str] = {
    "data": """\
data : Dataset or DataArray
    Scores with ``system`` and ``input`` dims (see :mod:`xcorrstat._schema`).""",
    "target": """\
target : str
    Human score.""",
    "targets": """\
target : str or list of str
    Human score(s) to correlate against; a list adds a ``target`` dim.""",
    "metrics": """\
metrics : list of str, optional
    Scores to use; default every score that is not a target and not marked
    ``attrs["role"] == "human"``.""",
    "level": """\
level : {"system", "input", "global", "within_system"}
    System level correlates per-system means; input level averages the per-input
    correlations across systems; global level correlates all cells; within-system
    level averages each system's correlation across its inputs.""",
    "method": """\
method : {"pearson", "spearman", "kendall"} or callable
    Correlation coefficient, or a statistic of your own: ``f(x, z)`` of a metric's and the
    target's scores of paired units along the last axis, returning one value per row (as NumPy
    reductions with ``axis=-1`` do); it is called on many rows at once, rows with missing pairs
    without them (see docs/own-statistic.md).""",
    "variant": """\
variant : {"b", "c", "a", "23", "acc23"}
    Kendall's variant: tau-b (ties in both variables), tau-c (Stuart's), tau-a,
    tau_eq (``"23"``) or acc_eq (``"acc23"``, pairwise accuracy with ties; Deutsch et
    al., 2023). tau_eq and acc_eq stay defined for a constant metric.""",
    "skipna": """\
skipna : bool, default True
    Drop missing cells pairwise. If False, any missing cell gives NaN.""",
    "complete_inputs": """\
complete_inputs : bool, default False
    System level: average each system over only the inputs present for all systems.""",
    "common_cells": """\
common_cells : bool, default True
    Compare the metrics on common ground: each metric's scores are kept on the cells where every
    compared metric has a score, so no metric is ranked or tested on fewer (or easier) units than
    its rivals, and every ``n`` is the same; a note (``attrs["notes"]``) names each metric that
    lacks cells and the systems it lacks entirely. False: each metric on its own cells.""",
    "min_pairs": """\
min_pairs : int, optional
    Fewest valid pairs for a defined correlation (default ``set_options(min_pairs=3)``).""",
    "average": """\
average : {"macro", "weighted", "pairs"}, default "macro"
    Input and within-system levels: each defined group counts once, is weighted by
    its number of valid items ``n``, or by its number of pairs ``n (n - 1) / 2``
    (for a share of pairs such as acc_eq, the statistic of the pooled pairs: WMT's
    accuracy over language pairs).""",
    "resample": """\
resample : str or tuple of str, default ("system", "input")
    Dims to resample: ``"system"`` (BOOT-SYSTEMS), ``"input"`` (BOOT-INPUTS) or both
    (BOOT-BOTH); the labels themselves are accepted too (any case).""",
    "permute": """\
permute : str or tuple of str, default ("system", "input")
    ``("system", "input")`` = PERM-BOTH (swap per cell), ``"system"`` = PERM-SYSTEMS,
    ``"input"`` = PERM-INPUTS, or ``"system-xor-input"`` (nlpstats' "both": a row flip
    XOR a column flip); the labels themselves are accepted too (any case).""",
    "standardise": """\
standardise : {"cells", "system-means"}, default "cells"
    What is z-scored before swapping. ``"cells"``: each metric over all its cells,
    then cells are swapped (Algorithm 2 of Deutsch, Dror & Roth 2021; every level and
    swap unit). ``"system-means"``: each metric is first reduced to its per-system
    means (over its present inputs), which are z-scored and swapped system by system:
    mt-metrics-eval's system-level test; it needs ``level="system"`` and
    ``permute="system"``. On grid data the two are different tests and their p-values
    can differ a lot; the default is the paper's algorithm, which uses every cell.""",
    "n_resamples": """\
n_resamples : int, default 1000
    Number of draws.""",
    "confidence_level": """\
confidence_level : float, default 0.95
    Two-sided confidence level, strictly between 0 and 1.""",
    "alternative": """\
alternative : {"greater", "less", "two-sided"}, default "greater"
    Direction of the alternative hypothesis; two-sided compares absolute values.""",
    "pvalue": """\
pvalue : {"plus-one", "fraction"}, default "plus-one"
    ``(1 + k) / (1 + B)`` (a valid test, never 0) or ``k / B``.""",
    "rng": """\
rng : int, Generator, SeedSequence or None
    Seed of the draws; draw ``r`` depends on it and on ``r`` alone. The seed used
    is recorded in ``attrs["rng"]``.""",
    "batch": """\
batch : int, optional
    Draws computed together; the default keeps a task's temporaries near 256 MB.
    On tiny data it is raised to the draws whose temporaries fit in about 8 MB,
    and a Dask task computes at least ``ceil(n_resamples / 256)`` draws. Attrs
    record ``batch`` (as given), ``draws_per_batch`` and ``draws_per_task``. The
    numbers do not depend on them.""",
    "keep_distribution": """\
keep_distribution : bool, default False
    Also return every draw along a ``resample`` dim.""",
    "progress": """\
progress : bool, default False
    Show a progress bar while computing (eager data only), on stderr when it is a terminal or a
    notebook's output; ``set_options(progress="always")`` shows it in a log too.""",
}

_PLACEHOLDER = re.compile(r"^([ \t]*)%\((\w+)\)s[ \t]*$", re.MULTILINE)


def fill_doc(func: F) -> F:
    """Replace each whole-line ``%(name)s`` of ``func.__doc__`` by its snippet.

    Examples
    --------
    >>> @fill_doc
    ... def f():
    ...     '''Parameters
    ...     ----------
    ...     %(skipna)s
    ...     '''
    >>> print(f.__doc__.splitlines()[2].strip())
    skipna : bool, default True
    """
    if func.__doc__:
        def expand(match: re.Match) -> str:
            indent, name = match.groups()
            if name not in SNIPPETS:
                raise KeyError(f"{func.__qualname__}: no docstring snippet named {name!r}")
            return textwrap.indent(SNIPPETS[name], indent)

        func.__doc__ = _PLACEHOLDER.sub(expand, func.__doc__)
    return func
