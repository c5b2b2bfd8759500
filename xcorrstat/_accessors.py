"""The ``.corrstat`` accessors on Dataset, DataArray and pandas DataFrame.

Thin and stateless: each method forwards to the functional API with the object as
its data (same signature and docstring). Importing :mod:`xcorrstat` registers them.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import pandas as pd
import xarray as xr

from .agreement import jaccard, leaderboard, leaderboard_agreement, matrix
from ._correlation.confidence import bootstrap, fisher
from ._correlation.estimates import correlate
from ._correlation.meanscore import mean_ci, paired_difference_ci
from .diagnostics import ci_coverage, normality, power_analysis
from ._io.columns import table_labels
from ._io.tables import from_dataframe
from ._mt.pairwise import (
    kendall_like,
    pairwise_accuracy,
    pairwise_difference_pearson,
    pairwise_differences,
)
from ._mt.softpairwise import soft_pairwise_accuracy
from ._mt.spatest import soft_pairwise_accuracy_test
from ._mt.ties import calibrate_ties
from .plot._namespace import PlotMethods
from ._reporting import ranked_frame, report, to_latex, to_markdown
from ._significance.allpairs import compare
from ._significance.paired import paired_bootstrap_test
from ._significance.permutation import permutation_test
from ._significance.williams import williams_test
from ._tidy import tidy

__all__ = ["CorrstatAccessor", "CorrstatFrameAccessor"]


def _forward(func: Callable[..., Any]) -> Callable[..., Any]:
    """An accessor method calling ``func(self._data(), **kwargs)``, with func's signature and doc."""

    def method(self, **kwargs: Any) -> Any:
        return func(self._data(), **kwargs)

    sig = inspect.signature(func)
    params = list(sig.parameters.values())[1:]  # drop `data`
    self_param = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    method.__signature__ = sig.replace(parameters=[self_param, *params])  # type: ignore[attr-defined]
    method.__name__ = func.__name__
    method.__qualname__ = func.__name__
    method.__doc__ = func.__doc__
    return method


class _Common:
    _obj: Any

    def _data(self) -> Any:
        return self._obj

    correlate = _forward(correlate)
    bootstrap = _forward(bootstrap)
    fisher = _forward(fisher)
    mean_ci = _forward(mean_ci)
    paired_difference_ci = _forward(paired_difference_ci)
    permutation_test = _forward(permutation_test)
    paired_bootstrap_test = _forward(paired_bootstrap_test)
    williams_test = _forward(williams_test)
    compare = _forward(compare)
    report = _forward(report)
    ci_coverage = _forward(ci_coverage)
    power_analysis = _forward(power_analysis)
    normality = _forward(normality)
    calibrate_ties = _forward(calibrate_ties)
    pairwise_accuracy = _forward(pairwise_accuracy)
    kendall_like = _forward(kendall_like)
    pairwise_difference_pearson = _forward(pairwise_difference_pearson)
    pairwise_differences = _forward(pairwise_differences)
    soft_pairwise_accuracy = _forward(soft_pairwise_accuracy)
    soft_pairwise_accuracy_test = _forward(soft_pairwise_accuracy_test)


@xr.register_dataset_accessor("corrstat")
@xr.register_dataarray_accessor("corrstat")
class CorrstatAccessor(_Common):
    """``ds.corrstat`` / ``da.corrstat``: meta-evaluation of the scores in an xarray object."""

    def __init__(self, obj: xr.Dataset | xr.DataArray) -> None:
        self._obj = obj

    # agreement analyses work on any dims, so they live on xarray objects only
    matrix = _forward(matrix)
    jaccard = _forward(jaccard)
    leaderboard = _forward(leaderboard)
    leaderboard_agreement = _forward(leaderboard_agreement)
    # results are xarray objects: a tidy frame of one, and its plots
    tidy = _forward(tidy)
    # a ranked result (compare, aggregate_tasks) as a table for a paper
    ranked_frame = _forward(ranked_frame)
    to_latex = _forward(to_latex)
    to_markdown = _forward(to_markdown)

    @property
    def plot(self) -> PlotMethods:
        """The plots of this result: ``.plot()`` picks one, ``.plot.ci()``, ``.plot.significance()`` ... name one."""
        return PlotMethods(self._obj)


@pd.api.extensions.register_dataframe_accessor("corrstat")
class CorrstatFrameAccessor(_Common):
    """``df.corrstat``: the same calls on a wide table with system and input label columns.

    The label columns (or index levels) are found as :func:`xcorrstat.read` and the command
    line find them (:func:`xcorrstat._io.columns.table_labels`): ``system``, ``sys``, ``model`` ...
    and ``input``, ``segment``, ``doc``, ``doc_id``, ``item`` ... (any case); a table without an
    input column whose system labels do not repeat is a system-level table (one row per
    system, scores with a ``system`` dim only). Text columns become coordinates, as in
    :func:`xcorrstat.from_dataframe`. A table carries no marker of which columns are human
    judgments, so every other numeric column except the target counts as a metric, but for
    columns named like human judgments (``human_*``, ``expert_*``, ``mqm`` ..., left out with a
    warning): pass ``metrics=[...]``, or build the Dataset with :func:`xcorrstat.from_dataframe`
    (``human=``, long tables).

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"sys": ["A", "A", "B", "B"], "doc_id": [1, 2, 1, 2], "bleu": [0.1, 0.4, 0.3, 0.2]})
    >>> dict(df.corrstat.to_dataset().sizes)
    {'system': 2, 'input': 2}
    """

    def __init__(self, obj: pd.DataFrame) -> None:
        self._obj = obj

    def to_dataset(self, **kwargs: Any) -> xr.Dataset:
        """The Dataset this table maps to; keyword arguments go to :func:`xcorrstat.from_dataframe`.

        ``system`` and ``input`` not given are guessed from the column names; ``input=None``
        reads the table as system-level (one row per system).
        """
        given_input = kwargs.get("input", None) if "input" in kwargs else None
        system, input = table_labels(self._obj, system=kwargs.get("system"),
                                     input=False if "input" in kwargs and given_input is None else given_input)
        return from_dataframe(self._obj, **{**kwargs, "system": system, "input": input})

    def _data(self) -> xr.Dataset:
        return self.to_dataset()
