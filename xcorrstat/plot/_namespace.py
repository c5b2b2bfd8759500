"""``result.corrstat.plot``: the plots of :mod:`xcorrstat.plot`, bound to a result.

``res.corrstat.plot()`` picks the plot that fits the result (a compare result gives the
significance matrix, an interval result the forest plot); ``res.corrstat.plot.ci()``,
``.significance()``, ``.distribution()``, ``.matrix()``, ``.jaccard()`` and
``.leaderboard_agreement()`` name one.
"""

from __future__ import annotations

from typing import Any

import xarray as xr

from . import _agreement as _agreement
from . import _distribution as _distribution
from . import _forest as _forest
from . import _significance as _significance

# the shared docstrings' examples call the functions by name: doctests of this module find them here
from ._agreement import plot_jaccard, plot_leaderboard_agreement, plot_matrix  # noqa: F401
from ._distribution import plot_distribution  # noqa: F401
from ._forest import plot_ci  # noqa: F401
from ._significance import plot_significance  # noqa: F401

__all__ = ["PlotMethods"]


class PlotMethods:
    """The plots of one result; see :mod:`xcorrstat.plot` for each one's options."""

    def __init__(self, obj: xr.Dataset | xr.DataArray) -> None:
        # each plot checks that the object is the result it draws
        self._obj: Any = obj

    def __call__(self, **kwargs: Any) -> Any:
        """The plot that fits the result: significance matrix, CI forest plot or distribution."""
        obj = self._obj
        names = set(obj.variables) if isinstance(obj, xr.Dataset) else set()
        if {"pvalue", "significant"} <= names and "other_metric" in obj.dims:
            return self.significance(**kwargs)
        if {"correlation", "low", "high"} <= names:
            return self.ci(**kwargs)
        if "distribution" in names:
            return self.distribution(**kwargs)
        raise ValueError(
            "no default plot for this result: a compare() result (pvalue, significant), an interval "
            "result (correlation, low, high) or a result kept with keep_distribution=True is expected; "
            "call a named plot instead, e.g. .corrstat.plot.matrix()"
        )

    def ci(self, **kwargs: Any) -> Any:
        return _forest.plot_ci(self._obj, **kwargs)

    def significance(self, **kwargs: Any) -> Any:
        return _significance.plot_significance(self._obj, **kwargs)

    def distribution(self, **kwargs: Any) -> Any:
        return _distribution.plot_distribution(self._obj, **kwargs)

    def matrix(self, **kwargs: Any) -> Any:
        return _agreement.plot_matrix(self._obj, **kwargs)

    def jaccard(self, **kwargs: Any) -> Any:
        return _agreement.plot_jaccard(self._obj, **kwargs)

    def leaderboard_agreement(self, **kwargs: Any) -> Any:
        return _agreement.plot_leaderboard_agreement(self._obj, **kwargs)

    ci.__doc__ = _forest.plot_ci.__doc__
    significance.__doc__ = _significance.plot_significance.__doc__
    distribution.__doc__ = _distribution.plot_distribution.__doc__
    matrix.__doc__ = _agreement.plot_matrix.__doc__
    jaccard.__doc__ = _agreement.plot_jaccard.__doc__
    leaderboard_agreement.__doc__ = _agreement.plot_leaderboard_agreement.__doc__
