"""The ``.corrstat`` accessors on Dataset, DataArray and pandas DataFrame: one name, two roles.

``obj.corrstat`` is chosen from the object when first looked up: on scores it is a
:class:`ScoresAccessor` (the analyses: correlate, bootstrap, compare, report, ...); on the
result of an analysis, recognised by the attrs the analyses write
(:data:`~xcorrstat._accessors.base.RESULT_ATTRS`), a :class:`ResultAccessor` (tidy,
ranked_frame, to_latex, to_markdown, plot). Tab completion lists only the methods of the role;
a method of the other role fails with a one-line message saying what the object is and what
to call instead. A DataFrame is always scores. Both classes are public, for type checkers
(xarray's attribute lookup types ``ds.corrstat`` as ``Any``) and to pick a role explicitly.
Importing :mod:`xcorrstat` registers the accessors.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import xarray as xr

from .base import frame_to_dataset, is_result, method_names
from .results import ResultAccessor
from .scores import ScoresAccessor

__all__ = ["ResultAccessor", "ScoresAccessor"]


@xr.register_dataset_accessor("corrstat")
@xr.register_dataarray_accessor("corrstat")
class Corrstat(ScoresAccessor):
    """``obj.corrstat``: the :class:`ScoresAccessor` of scores, the :class:`ResultAccessor` of a result."""

    def __new__(cls, obj: xr.Dataset | xr.DataArray) -> Any:
        if is_result(obj):
            return ResultAccessor(obj)
        return ScoresAccessor(obj)


@pd.api.extensions.register_dataframe_accessor("corrstat")
class CorrstatFrame(ScoresAccessor):
    """``df.corrstat``: the analyses on a wide table with system and input label columns.

    The label columns (or index levels) are found as :func:`xcorrstat.read` and the command
    line find them: ``system``, ``sys``, ``model`` ... and ``input``, ``segment``, ``doc``,
    ``doc_id``, ``item`` ... (any case); a table without an input column whose system labels do
    not repeat is a system-level table (one row per system, scores with a ``system`` dim only).
    Text columns become coordinates, as in :func:`xcorrstat.from_dataframe`. A table carries no
    marker of which columns are human judgments, so every other numeric column except the target
    counts as a metric, but for columns named like human judgments (``human_*``, ``expert_*``,
    ``mqm`` ..., left out with a warning): pass ``metrics=[...]``, or build the Dataset with
    :func:`xcorrstat.from_dataframe` (``human=``, long tables).

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"sys": ["A", "A", "B", "B"], "doc_id": [1, 2, 1, 2], "bleu": [0.1, 0.4, 0.3, 0.2]})
    >>> dict(df.corrstat.to_dataset().sizes)
    {'system': 2, 'input': 2}
    """

    def __init__(self, obj: pd.DataFrame) -> None:
        super().__init__(obj)

    def to_dataset(self, **kwargs: Any) -> xr.Dataset:
        """The Dataset this table maps to; keyword arguments go to :func:`xcorrstat.from_dataframe`.

        ``system`` and ``input`` not given are guessed from the column names; ``input=None``
        reads the table as system-level (one row per system).
        """
        return frame_to_dataset(self._obj, **kwargs)


def _wrong_role_hints() -> None:
    """What each role says when a method of the other is called on it."""
    ScoresAccessor._elsewhere = {
        name: f"{name} is a method of a result: call it on what an analysis returns, "
              f"e.g. ds.corrstat.bootstrap(...).corrstat.{name}(), or xcorrstat.ResultAccessor(obj).{name}()"
        for name in method_names(ResultAccessor)}
    ResultAccessor._elsewhere = {
        name: f"{name} analyses scores: call it on the scores the result came from "
              f"(scores.corrstat.{name}(...)), or analyse this result as scores with "
              f"xcorrstat.ScoresAccessor(result).{name}(...)"
        for name in method_names(ScoresAccessor)}


_wrong_role_hints()
