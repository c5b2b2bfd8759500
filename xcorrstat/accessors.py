"""The ``.corrstat`` accessors on Dataset, DataArray and pandas DataFrame.

Thin and stateless: each method forwards to the functional API with the object as
its data. Importing :mod:`xcorrstat` registers them.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import xarray as xr

from .correlate import correlate
from .io import from_dataframe
from .resampling.bootstrap import bootstrap, fisher

__all__ = ["CorrstatAccessor", "CorrstatFrameAccessor"]


class _Common:
    _obj: Any

    def _data(self):
        return self._obj

    def correlate(self, **kwargs: Any) -> xr.DataArray:
        """Correlate every metric with a human target; see :func:`xcorrstat.correlate`.

        Examples
        --------
        >>> import xcorrstat
        >>> ds = xcorrstat.datasets.summeval()
        >>> r = ds.corrstat.correlate(target="expert_relevance", level="input", method="kendall")
        >>> round(float(r.sel(metric="bertscore_recall")), 2)
        0.27
        """
        return correlate(self._data(), **kwargs)

    def bootstrap(self, **kwargs: Any) -> xr.Dataset:
        """Bootstrap CIs of every metric's level correlation; see :func:`xcorrstat.bootstrap`."""
        return bootstrap(self._data(), **kwargs)

    def fisher(self, **kwargs: Any) -> xr.Dataset:
        """Fisher-z CIs of every metric's level correlation; see :func:`xcorrstat.fisher`."""
        return fisher(self._data(), **kwargs)


@xr.register_dataset_accessor("corrstat")
@xr.register_dataarray_accessor("corrstat")
class CorrstatAccessor(_Common):
    """``ds.corrstat`` / ``da.corrstat``: meta-evaluation of the scores in an xarray object."""

    def __init__(self, obj: xr.Dataset | xr.DataArray) -> None:
        self._obj = obj


@pd.api.extensions.register_dataframe_accessor("corrstat")
class CorrstatFrameAccessor(_Common):
    """``df.corrstat``: the same calls on a wide table with ``system`` and ``input`` columns.

    The columns (or index levels) must be named ``system`` and ``input``; for other
    names, or for a long table, build the Dataset with :func:`xcorrstat.from_dataframe`.
    """

    def __init__(self, obj: pd.DataFrame) -> None:
        self._obj = obj

    def to_dataset(self, **kwargs: Any) -> xr.Dataset:
        """The Dataset this table maps to; keyword arguments go to :func:`xcorrstat.from_dataframe`."""
        df = self._obj
        wanted = {kwargs.get("system", "system"), kwargs.get("input", "input")}
        if not wanted <= set(df.columns) and wanted <= set(df.index.names):
            df = df.reset_index()
        return from_dataframe(df, **kwargs)

    def _data(self) -> xr.Dataset:
        return self.to_dataset()
