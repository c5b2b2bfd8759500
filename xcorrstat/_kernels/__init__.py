"""Pure-NumPy kernels: correlations along an axis and level correlations.

No xarray, no Dask: arrays and axes only. The xarray adapter calls these through
:func:`xarray.apply_ufunc`.
"""

from .correlation import corr, kendall, pearson, spearman
from .corrections import CORRECTIONS, adjust_pvalues, reject
from .dependent import ALTERNATIVES, DependentTest, Interval, steiger_z, williams, zou_ci
from .levels import average_defined, level_correlation, system_means

__all__ = [
    "ALTERNATIVES",
    "CORRECTIONS",
    "DependentTest",
    "Interval",
    "adjust_pvalues",
    "average_defined",
    "corr",
    "kendall",
    "level_correlation",
    "pearson",
    "reject",
    "spearman",
    "steiger_z",
    "system_means",
    "williams",
    "zou_ci",
]
