"""``result.corrstat.plot``: the plots of :mod:`xcorrstat.plot`, bound to a result.

``res.corrstat.plot()`` picks the plot that fits the result (a compare result gives the
significance matrix, an interval result the forest plot); ``res.corrstat.plot.ci()``,
``.significance()``, ``.distribution()``, ``.matrix()``, ``.jaccard()`` and
``.leaderboard_agreement()`` name one: each is written out with its plot's keyword-only
parameters and docstring, so editors and type checkers see the real signature.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import xarray as xr

# by name: the methods call them, and the doctests of the shared docstrings find them here
from ._agreement import plot_jaccard, plot_leaderboard_agreement, plot_matrix
from ._common import correlations_of
from ._distribution import plot_distribution
from ._dots import plot_correlations
from ._forest import plot_ci
from ._significance import plot_significance

__all__ = ["PLOTS", "PlotMethods", "default_plot"]


def default_plot(obj: object) -> str | None:
    """The name of the plot ``res.corrstat.plot()`` draws for ``obj``, or None when no plot fits.

    ``"significance"`` for an all-pairs result (compare, aggregate_tasks: ``pvalue`` and
    ``significant`` over ``other_metric``), ``"ci"`` for intervals (``correlation``, ``low``,
    ``high``: bootstrap, fisher, a report's intervals), ``"correlations"`` for correlations
    without intervals (correlate: :func:`~xcorrstat.plot._dots.plot_correlations`),
    ``"matrix"``, ``"jaccard"`` and ``"leaderboard_agreement"`` for the agreement analyses, and
    ``"distribution"`` for any other result kept with ``keep_distribution=True``.

    Examples
    --------
    >>> import xcorrstat
    >>> ds = xcorrstat.datasets.summeval()
    >>> default_plot(ds.corrstat.correlate(target="expert_relevance", metrics=["meteor"]))
    'correlations'
    >>> default_plot(ds.corrstat.williams_test(x="meteor", y="rouge_2_f1", target="expert_relevance")) is None
    True
    """
    if isinstance(obj, xr.DataArray):
        if correlations_of(obj) is not None:
            return "correlations"
        if obj.ndim == 2 and "over" in obj.attrs and obj.name in ("correlation", "jaccard"):
            return "matrix" if obj.name == "correlation" else "jaccard"
        return None
    if not isinstance(obj, xr.Dataset):
        return None
    names = set(obj.variables)
    if {"pvalue", "significant"} <= names and "other_metric" in obj.dims:
        return "significance"
    if {"correlation", "low", "high"} <= names and all("metric" in obj[v].dims for v in ("correlation", "low", "high")):
        return "ci"
    if correlations_of(obj) is not None:
        return "correlations"
    if "tau" in names and obj["tau"].ndim == 2:
        return "leaderboard_agreement"
    if "distribution" in names:
        return "distribution"
    return None


class PlotMethods:
    """The plots of one result; see :mod:`xcorrstat.plot` for each one's options."""

    def __init__(self, obj: xr.Dataset | xr.DataArray) -> None:
        # each plot checks that the object is the result it draws
        self._obj: Any = obj

    def __call__(self, **kwargs: Any) -> Any:
        """The plot that fits the result (see :func:`default_plot`); keyword arguments go to that plot.

        An interval or compare result with dims besides ``metric`` (``other_metric``) and
        ``level`` (a language pair ...) is drawn with a panel per label (``by=`` those dims)
        unless ``by`` is given.
        """
        obj = self._obj
        name = default_plot(obj)
        if name is None:
            raise ValueError(
                "no default plot for this result: correlations (xcorrstat.correlate), intervals (correlation, "
                "low, high), a compare() result (pvalue, significant), an agreement matrix or a result kept "
                "with keep_distribution=True is expected; call a named plot instead, e.g. .corrstat.plot.matrix()"
            )
        if name == "correlations":
            return plot_correlations(obj, **kwargs)
        if name in ("ci", "significance") and "by" not in kwargs:
            level_dim = kwargs.get("level_dim", "level")
            drawn = obj["correlation" if name == "ci" else "pvalue"]
            extra = [d for d in drawn.dims if d not in ("metric", "other_metric", level_dim)]
            kwargs = {**kwargs, "by": extra or None}
        return getattr(self, name)(**kwargs)

    def ci(self, *, ax: Any = None, sort: bool = True, align: bool = False, clusters: bool = True,
            level_dim: Hashable = "level", by: Hashable | Sequence[Hashable] | None = None, color: Any = "C0",
            reference: float | None = 0.0, title: str | None = None, xlabel: str | None = None) -> Any:
        return plot_ci(self._obj, ax=ax, sort=sort, align=align, clusters=clusters, level_dim=level_dim, by=by,
            color=color, reference=reference, title=title, xlabel=xlabel)

    def significance(self, *, ax: Any = None, alpha: float | None = None, cmap: str = "Greens_r",
            clusters: bool = True, colorbar: bool = True, title: str | None = None,
            level_dim: Hashable = "level", by: Hashable | Sequence[Hashable] | None = None) -> Any:
        return plot_significance(self._obj, ax=ax, alpha=alpha, cmap=cmap, clusters=clusters, colorbar=colorbar,
            title=title, level_dim=level_dim, by=by)

    def distribution(self, *, metric: Hashable | Sequence[Hashable] | None = None, ax: Any = None,
            bins: int | Sequence[float] | str = 30, density: bool = False, title: str | None = None) -> Any:
        return plot_distribution(self._obj, metric=metric, ax=ax, bins=bins, density=density, title=title)

    def matrix(self, *, ax: Any = None, annotate: bool = True, fmt: str = ".2f", cmap: str | None = None,
            title: str | None = None) -> Any:
        return plot_matrix(self._obj, ax=ax, annotate=annotate, fmt=fmt, cmap=cmap, title=title)

    def jaccard(self, *, ax: Any = None, annotate: bool = True, fmt: str = ".2f", cmap: str | None = None,
            title: str | None = None) -> Any:
        return plot_jaccard(self._obj, ax=ax, annotate=annotate, fmt=fmt, cmap=cmap, title=title)

    def leaderboard_agreement(self, *, ax: Any = None, annotate: bool = True, show_ci: bool = True,
            fmt: str = ".2f", cmap: str | None = None, title: str | None = None) -> Any:
        return plot_leaderboard_agreement(self._obj, ax=ax, annotate=annotate, show_ci=show_ci, fmt=fmt,
            cmap=cmap, title=title)


#: The plot behind each named plot method of :class:`PlotMethods`.
PLOTS = {"ci": plot_ci, "significance": plot_significance, "distribution": plot_distribution,
         "matrix": plot_matrix, "jaccard": plot_jaccard, "leaderboard_agreement": plot_leaderboard_agreement}
for _name, _plot in PLOTS.items():
    getattr(PlotMethods, _name).__doc__ = _plot.__doc__
del _name, _plot
