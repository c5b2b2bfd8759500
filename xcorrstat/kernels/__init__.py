"""Pure-NumPy kernels: correlations along an axis and level correlations.

No xarray, no Dask: arrays and axes only. The xarray adapter calls these through
:func:`xarray.apply_ufunc`.
"""

from .correlation import METHODS, VARIANTS, corr, kendall, pearson, spearman
from .levels import LEVELS, average_defined, level_correlation, system_means

__all__ = [
    "LEVELS",
    "METHODS",
    "VARIANTS",
    "average_defined",
    "corr",
    "kendall",
    "level_correlation",
    "pearson",
    "spearman",
    "system_means",
]
