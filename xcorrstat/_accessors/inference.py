"""The scores role, part one: correlations, intervals, significance tests and the report.

Each method is written out with the function's keyword-only parameters, so editors and type
checkers see its real signature; ``tests/test_accessors.py`` checks each against the function's
(parameters after ``data``, their types and defaults, and the return type), so they cannot drift.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Literal

import pandas as pd
import xarray as xr

from .._correlation.confidence import bootstrap, fisher
from .._correlation.estimates import correlate
from .._correlation.meanscore import mean_ci, paired_difference_ci
from .._reporting import Report, report
from .._significance.allpairs import compare
from .._significance.paired import paired_bootstrap_test
from .._resampling.settings import Bootstrap, Permutation, Settings, Williams
from .._significance.permutation import permutation_test
from .._significance.williams import williams_test
from .._types import (
    Alternative,
    Average,
    CIMethod,
    Correction,
    Epsilon,
    Family,
    Level,
    Levels,
    Method,
    Seed,
    Statistic,
    Test,
    Variant,
)
from .base import Bound, frame_to_dataset

__all__ = ["INFERENCE", "InferenceMethods"]

#: The functions behind the methods of :class:`InferenceMethods`.
INFERENCE = (correlate, bootstrap, fisher, mean_ci, paired_difference_ci, permutation_test,
             paired_bootstrap_test, williams_test, compare, report)


class InferenceMethods(Bound):
    """Correlations, intervals, tests and the report of the scores this object is bound to."""

    def _data(self) -> xr.Dataset | xr.DataArray:
        """The scores as an xarray object (a DataFrame read with its guessed label columns)."""
        obj = self._obj
        return frame_to_dataset(obj) if isinstance(obj, pd.DataFrame) else obj

    def correlate(self, *, target: Hashable | Sequence[Hashable], level: Levels = 'system',
            method: Statistic | Sequence[Method] = 'pearson', variant: Variant = 'b',
            metrics: Sequence[Hashable] | None = None, skipna: bool = True, complete_inputs: bool = False,
            min_pairs: int | None = None, epsilon: float = 0.0, average: Average = 'macro') -> xr.DataArray:
        return correlate(self._data(), target=target, level=level, method=method, variant=variant, metrics=metrics,
            skipna=skipna, complete_inputs=complete_inputs, min_pairs=min_pairs, epsilon=epsilon, average=average)

    def bootstrap(self, *, target: Hashable | Sequence[Hashable], metrics: Sequence[Hashable] | None = None,
            level: Levels = 'system', method: Statistic = 'pearson', variant: Variant = 'b', epsilon: Epsilon = 0.0,
            average: Average = 'macro', resample: str | Sequence[str] | Bootstrap = ('system', 'input'),
            confidence_level: float = 0.95, ci: CIMethod = 'percentile', skipna: bool = True,
            complete_inputs: bool = False, min_pairs: int | None = None) -> xr.Dataset:
        return bootstrap(self._data(), target=target, metrics=metrics, level=level, method=method, variant=variant,
            epsilon=epsilon, average=average, resample=resample, confidence_level=confidence_level, ci=ci,
            skipna=skipna, complete_inputs=complete_inputs, min_pairs=min_pairs)

    def fisher(self, *, target: Hashable | Sequence[Hashable], level: Level = "system",
            method: Method = "pearson", variant: Variant = "b", metrics: Sequence[Hashable] | None = None,
            confidence_level: float = 0.95, skipna: bool = True, complete_inputs: bool = False,
            min_pairs: int | None = None) -> xr.Dataset:
        return fisher(self._data(), target=target, level=level, method=method, variant=variant, metrics=metrics,
            confidence_level=confidence_level, skipna=skipna, complete_inputs=complete_inputs,
            min_pairs=min_pairs)

    def mean_ci(self, *, metrics: Sequence[Hashable] | Hashable | None = None, dim: str = 'input',
            n_resamples: int = 1000, confidence_level: float = 0.95, rng: Seed = None, skipna: bool = True,
            keep_distribution: bool = False) -> xr.Dataset:
        return mean_ci(self._data(), metrics=metrics, dim=dim, n_resamples=n_resamples,
            confidence_level=confidence_level, rng=rng, skipna=skipna, keep_distribution=keep_distribution)

    def paired_difference_ci(self, *, system_a: Hashable, system_b: Hashable,
            metrics: Sequence[Hashable] | Hashable | None = None, dim: str = 'input', n_resamples: int = 1000,
            confidence_level: float = 0.95, rng: Seed = None, keep_distribution: bool = False) -> xr.Dataset:
        return paired_difference_ci(self._data(), system_a=system_a, system_b=system_b, metrics=metrics, dim=dim,
            n_resamples=n_resamples, confidence_level=confidence_level, rng=rng,
            keep_distribution=keep_distribution)

    def permutation_test(self, *, x: Hashable, y: Hashable, target: Hashable,
            test: Permutation | Literal['permutation'] = 'permutation', level: Level = 'system',
            method: Statistic = 'pearson', variant: Variant = 'b', average: Average = 'macro',
            alternative: Alternative = 'greater', skipna: bool = True, min_pairs: int | None = None) -> xr.Dataset:
        return permutation_test(self._data(), x=x, y=y, target=target, test=test, level=level, method=method,
            variant=variant, average=average, alternative=alternative, skipna=skipna, min_pairs=min_pairs)

    def paired_bootstrap_test(self, *, x: Hashable, y: Hashable, target: Hashable,
            test: Bootstrap | Literal['bootstrap'] = 'bootstrap', level: Level = 'system',
            method: Statistic = 'pearson', variant: Variant = 'b', alternative: Alternative = 'greater',
            confidence_level: float = 0.95, skipna: bool = True, min_pairs: int | None = None) -> xr.Dataset:
        return paired_bootstrap_test(self._data(), x=x, y=y, target=target, test=test, level=level, method=method,
            variant=variant, alternative=alternative, confidence_level=confidence_level, skipna=skipna,
            min_pairs=min_pairs)

    def williams_test(self, *, x: Hashable, y: Hashable, target: Hashable, level: Level = 'system',
            method: Method = 'pearson', test: Williams | Literal['williams'] = 'williams',
            alternative: Alternative = 'greater', confidence_level: float = 0.95) -> xr.Dataset:
        return williams_test(self._data(), x=x, y=y, target=target, level=level, method=method, test=test,
            alternative=alternative, confidence_level=confidence_level)

    def compare(self, *, target: Hashable | Sequence[Hashable], metrics: Sequence[Hashable] | None = None,
            test: Test | Settings = 'permutation', level: Level = 'system', method: Statistic = 'pearson',
            variant: Variant = 'b', average: Average = 'macro', alternative: Alternative = 'greater',
            correction: Correction | None = 'holm', family: Family = 'row', alpha: float = 0.05,
            skipna: bool = True, min_pairs: int | None = None, common_cells: bool = True) -> xr.Dataset:
        return compare(self._data(), target=target, metrics=metrics, test=test, level=level, method=method,
            variant=variant, average=average, alternative=alternative, correction=correction, family=family,
            alpha=alpha, skipna=skipna, min_pairs=min_pairs, common_cells=common_cells)

    def report(self, *, target: Hashable, metrics: Sequence[Hashable] | None = None, level: Levels | None = None,
            method: Statistic = 'pearson', variant: Variant = 'b', resample: str | Sequence[str] | None = None,
            test: Test | Settings = 'permutation', n_resamples: int | Literal['auto'] = 'auto',
            confidence_level: float = 0.95, alpha: float = 0.05, correction: Correction | None = 'holm',
            rng: Seed = None, common_cells: bool = True) -> Report:
        return report(self._data(), target=target, metrics=metrics, level=level, method=method, variant=variant,
            resample=resample, test=test, n_resamples=n_resamples, confidence_level=confidence_level, alpha=alpha,
            correction=correction, rng=rng, common_cells=common_cells)
