"""The result role: ``res.corrstat`` on what an analysis returned, and :class:`ResultAccessor`.

A result is recognised by the attrs the analyses write (:data:`~.base.RESULT_ATTRS`). Its methods
turn it into a tidy frame, a ranked table for a paper, or a plot; each is written out with the
function's keyword-only parameters and carries the function's docstring.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import pandas as pd
import xarray as xr

from .._reporting import ranked_frame, to_latex, to_markdown
from .._reporting.tables import Result
from .._tidy import tidy
from ..plot._namespace import PlotMethods
from .base import Bound, copy_docs

__all__ = ["RESULTS", "ResultAccessor"]


class ResultAccessor(Bound):
    """The methods of a result: ``res.corrstat`` on what an analysis returned.

    ``res.corrstat.tidy()`` is ``xcorrstat.tidy(res)``, and so for ``ranked_frame``,
    ``to_latex`` and ``to_markdown``; ``res.corrstat.plot()`` draws the plot that fits the
    result and ``res.corrstat.plot.ci()``, ``.significance()`` ... name one. For type checkers,
    ``rc: xcorrstat.ResultAccessor = res.corrstat`` or ``xcorrstat.ResultAccessor(res)`` gives each
    method's real signature.

    Parameters
    ----------
    obj : Dataset or DataArray
        A result of an analysis of xcorrstat.

    Examples
    --------
    >>> import xcorrstat
    >>> ds = xcorrstat.datasets.summeval()
    >>> r = ds.corrstat.correlate(target="expert_relevance", metrics=["meteor", "rouge_l_f1"])
    >>> rc: xcorrstat.ResultAccessor = r.corrstat
    >>> rc.tidy()[["metric", "correlation"]].round(2).values.tolist()
    [['meteor', 0.63], ['rouge_l_f1', 0.61]]
    """

    _takes: ClassVar[tuple[type, ...]] = (xr.Dataset, xr.DataArray)

    def __init__(self, obj: xr.Dataset | xr.DataArray) -> None:
        super().__init__(obj)

    def tidy(self, *, attrs: Sequence[str] = ("target", "level", "method", "variant", "x", "y"),
            distribution: bool = False) -> pd.DataFrame:
        return tidy(self._obj, attrs=attrs, distribution=distribution)

    def ranked_frame(self) -> pd.DataFrame:
        return ranked_frame(self._obj)

    def to_latex(self, *, digits: int = 3) -> str:
        return to_latex(self._obj, digits=digits)

    def to_markdown(self, *, digits: int = 3) -> str:
        return to_markdown(self._obj, digits=digits)

    @property
    def plot(self) -> PlotMethods:
        """The plots of this result: ``.plot()`` picks one, ``.plot.ci()``, ``.plot.significance()`` ... name one."""
        return PlotMethods(self._obj)


#: The functions behind the methods of :class:`ResultAccessor` (``plot`` is :class:`PlotMethods`).
RESULTS = (tidy, ranked_frame, to_latex, to_markdown)
copy_docs(ResultAccessor, RESULTS)
