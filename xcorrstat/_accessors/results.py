"""The result role: ``res.corrstat`` on what an analysis returned, and :class:`ResultAccessor`.

A result is recognised by the attrs the analyses write (:data:`~.base.RESULT_ATTRS`). Its methods
turn it into a tidy frame, a ranked table for a paper, or a plot; each is written out with the
function's keyword-only parameters and carries the function's docstring.

What a result offers depends on its kind, read from the variables and attrs the analyses write
(:func:`result_kind`, :func:`offered`): every result has ``tidy``; the tables (``ranked_frame``,
``to_latex``, ``to_markdown``) are those :func:`~xcorrstat._reporting.tables.tables_of` makes of it,
and ``plot`` is offered when a plot fits it (:func:`~xcorrstat.plot._namespace.default_plot`):

====================================  =====  ==============  ===================  ====
kind                                  tidy   ranked_frame    to_latex/markdown    plot
====================================  =====  ==============  ===================  ====
correlations (correlate)              yes    yes             yes                  yes
intervals (bootstrap, fisher)         yes    yes             yes                  yes
ranked (compare, aggregate_tasks)     yes    yes             yes                  yes
WMT task ranking (wmt.run_tasks)      yes                    yes
test of two metrics                   yes                                         kept draws
agreement matrix, leaderboard         yes                                         matrices
other (mean_ci, diagnostics ...)      yes                                         kept draws
====================================  =====  ==============  ===================  ====

The class keeps every method, so type checkers see each one's signature; at run time an object
lists only what its result offers (``dir()``, tab completion, the repr), and any other name fails
with a one-line AttributeError saying what the result is and what it offers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import pandas as pd
import xarray as xr

from .._reporting import ranked_frame, to_latex, to_markdown
from .._reporting.tables import Result, tables_of
from .._reporting.tasktable import is_task_result
from .._tidy import tidy
from ..plot._common import correlations_of
from ..plot._namespace import PlotMethods, default_plot
from .base import Bound, copy_docs, method_names

__all__ = ["RESULTS", "ResultAccessor", "offered", "result_kind"]


def result_kind(obj: object) -> str:
    """What kind of result ``obj`` is, as the accessor's messages name it.

    Examples
    --------
    >>> import xcorrstat
    >>> ds = xcorrstat.datasets.summeval()
    >>> result_kind(ds.corrstat.correlate(target="expert_relevance", metrics=["meteor"]))
    'correlations'
    >>> result_kind(ds.corrstat.williams_test(x="meteor", y="rouge_2_f1", target="expert_relevance"))
    'a test of two metrics (williams_test)'
    """
    attrs: dict[str, Any] = getattr(obj, "attrs", {})
    if is_task_result(obj):
        return "a WMT task ranking (wmt.run_tasks)"
    if {"x", "y", "test"} <= set(attrs):
        test = {"permutation": "permutation_test", "paired-bootstrap": "paired_bootstrap_test",
                "williams": "williams_test"}.get(str(attrs["test"]), str(attrs["test"]))
        return f"a test of two metrics ({test})"
    if isinstance(obj, xr.Dataset) and "correlation" in obj and "cluster" in obj:
        extra = [str(d) for d in obj["correlation"].dims if d != "metric"]
        if extra:
            return (f"a ranked comparison with one ranked list per label of {extra} (select one first for its "
                    f"tables, e.g. result.sel({extra[0]}=...))")
        return "a ranked comparison (compare, aggregate_tasks)"
    if correlations_of(obj) is not None:
        return "intervals" if isinstance(obj, xr.Dataset) and "low" in obj and "high" in obj else "correlations"
    if "variable" in attrs:
        return "an agreement result"
    return "a result without a table"


def offered(obj: object) -> tuple[str, ...]:
    """The methods of :class:`ResultAccessor` that apply to ``obj``, in the class's order.

    Examples
    --------
    >>> import xcorrstat
    >>> ds = xcorrstat.datasets.summeval()
    >>> offered(ds.corrstat.williams_test(x="meteor", y="rouge_2_f1", target="expert_relevance"))
    ('tidy',)
    """
    names = {"tidy", *tables_of(obj), *(("plot",) if default_plot(obj) is not None else ())}
    return tuple(n for n in method_names(ResultAccessor) if n in names)


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
    >>> rc
    <ResultAccessor of correlations: tidy, ranked_frame, to_latex, to_markdown, plot>
    >>> test = ds.corrstat.williams_test(x="meteor", y="rouge_l_f1", target="expert_relevance")
    >>> test.corrstat.to_latex()
    Traceback (most recent call last):
    ...
    AttributeError: .corrstat.to_latex does not apply to a test of two metrics (williams_test); this result offers tidy()
    """

    _takes: ClassVar[tuple[type, ...]] = (xr.Dataset, xr.DataArray)

    #: The methods this object's result offers (set from the result when the object is made).
    _offered: tuple[str, ...]

    def __init__(self, obj: xr.Dataset | xr.DataArray) -> None:
        super().__init__(obj)
        self._offered = offered(obj)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} of {result_kind(self._obj)}: {', '.join(self._offered)}>"

    def __dir__(self) -> list[str]:
        withheld = set(method_names(ResultAccessor)) - set(self._offered)
        return sorted(set(super().__dir__()) - withheld)

    if not TYPE_CHECKING:  # at run time only: type checkers see every method of the class

        def __getattribute__(self, name: str) -> Any:
            if name in _METHODS and name not in object.__getattribute__(self, "_offered"):
                raise AttributeError(name)  # __getattr__ says what the result offers
            return object.__getattribute__(self, name)

        def __getattr__(self, name: str) -> Any:
            if name in _METHODS:
                shown = ", ".join(f"{n}()" for n in self._offered)
                raise AttributeError(f".corrstat.{name} does not apply to {result_kind(self._obj)}; "
                                     f"this result offers {shown}") from None
            return super().__getattr__(name)

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


#: The methods of :class:`ResultAccessor`, offered or not by each result.
_METHODS = frozenset(method_names(ResultAccessor))

#: The functions behind the methods of :class:`ResultAccessor` (``plot`` is :class:`PlotMethods`).
RESULTS = (tidy, ranked_frame, to_latex, to_markdown)
copy_docs(ResultAccessor, RESULTS)
