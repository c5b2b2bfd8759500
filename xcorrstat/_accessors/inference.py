"""The scores role, part one: correlations, intervals, significance tests and the report.

Each method is written out with the function's keyword-only parameters, so editors and type
checkers see its real signature; ``tests/test_accessors.py`` checks each against the function's
(parameters after ``data``, their types and defaults, and the return type), so they cannot drift.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import IO, Literal

import pandas as pd
import xarray as xr

from .._correlation.confidence import bootstrap, fisher
from .._correlation.estimates import correlate
from .._correlation.meanscore import mean_ci, paired_difference_ci
from .._reporting import Report, report
from .._significance.allpairs import compare
from .._significance.paired import paired_bootstrap_test
from .._significance.pairoutcome import Swap
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
    PValue,
    Seed,
    Standardise,
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

    def correlate(self, *, target: Hashable | Sequence[Hashable], level: Levels = "system",
            method: Method | Sequence[Method] = "pearson", variant: Variant = "b",
            metrics: Sequence[Hashable] | None = None, skipna: bool = True, complete_inputs: bool = False,
            min_pairs: int | None = None, epsilon: float = 0.0, average: Average = "macro",
            pdp: bool = False) -> xr.DataArray:
        return correlate(self._data(), target=target, level=level, method=method, variant=variant,
            metrics=metrics, skipna=skipna, complete_inputs=complete_inputs, min_pairs=min_pairs,
            epsilon=epsilon, average=average, pdp=pdp)

    def bootstrap(self, *, target: Hashable | Sequence[Hashable], level: Levels = "system",
            method: Method = "pearson", variant: Variant = "b", epsilon: Epsilon = 0.0,
            average: Average = "macro", metrics: Sequence[Hashable] | None = None,
            resample: str | Sequence[str] = ("system", "input"), n_resamples: int = 1000,
            confidence_level: float = 0.95, ci: CIMethod = "percentile", rng: Seed = None,
            batch: int | None = None, keep_distribution: bool = False, skipna: bool = True,
            complete_inputs: bool = False, min_pairs: int | None = None, progress: bool = False) -> xr.Dataset:
        return bootstrap(self._data(), target=target, level=level, method=method, variant=variant,
            epsilon=epsilon, average=average, metrics=metrics, resample=resample, n_resamples=n_resamples,
            confidence_level=confidence_level, ci=ci, rng=rng, batch=batch, keep_distribution=keep_distribution,
            skipna=skipna, complete_inputs=complete_inputs, min_pairs=min_pairs, progress=progress)

    def fisher(self, *, target: Hashable | Sequence[Hashable], level: Level = "system",
            method: Method = "pearson", variant: Variant = "b", metrics: Sequence[Hashable] | None = None,
            confidence_level: float = 0.95, skipna: bool = True, complete_inputs: bool = False,
            min_pairs: int | None = None) -> xr.Dataset:
        return fisher(self._data(), target=target, level=level, method=method, variant=variant, metrics=metrics,
            confidence_level=confidence_level, skipna=skipna, complete_inputs=complete_inputs,
            min_pairs=min_pairs)

    def mean_ci(self, *, metrics: Sequence[Hashable] | Hashable | None = None, dim: str = "input",
            n_resamples: int = 1000, confidence_level: float = 0.95, rng: Seed = None,
            batch: int | None = None, skipna: bool = True, keep_distribution: bool = False) -> xr.Dataset:
        return mean_ci(self._data(), metrics=metrics, dim=dim, n_resamples=n_resamples,
            confidence_level=confidence_level, rng=rng, batch=batch, skipna=skipna,
            keep_distribution=keep_distribution)

    def paired_difference_ci(self, *, system_a: Hashable, system_b: Hashable,
            metrics: Sequence[Hashable] | Hashable | None = None, dim: str = "input", n_resamples: int = 1000,
            confidence_level: float = 0.95, rng: Seed = None, batch: int | None = None,
            keep_distribution: bool = False) -> xr.Dataset:
        return paired_difference_ci(self._data(), system_a=system_a, system_b=system_b, metrics=metrics,
            dim=dim, n_resamples=n_resamples, confidence_level=confidence_level, rng=rng, batch=batch,
            keep_distribution=keep_distribution)

    def permutation_test(self, *, x: Hashable, y: Hashable, target: Hashable, level: Level = "system",
            method: Method = "pearson", variant: Variant = "b",
            permute: str | tuple[str, ...] = ("system", "input"), n_resamples: int = 1000,
            alternative: Alternative = "greater", rng: Seed = None, pvalue: PValue = "plus-one",
            batch: int | None = None, keep_distribution: bool = False, skipna: bool = True,
            min_pairs: int | None = None, early_stop: float | None = None, risk: float = 0.001,
            progress: bool = False, standardise: Standardise = "cells", average: Average = "macro",
            swap: Swap = "scores",
            epsilon: float | str | Mapping[Hashable, float] | xr.DataArray | None = None) -> xr.Dataset:
        return permutation_test(self._data(), x=x, y=y, target=target, level=level, method=method,
            variant=variant, permute=permute, n_resamples=n_resamples, alternative=alternative, rng=rng,
            pvalue=pvalue, batch=batch, keep_distribution=keep_distribution, skipna=skipna, min_pairs=min_pairs,
            early_stop=early_stop, risk=risk, progress=progress, standardise=standardise, average=average,
            swap=swap, epsilon=epsilon)

    def paired_bootstrap_test(self, *, x: Hashable, y: Hashable, target: Hashable, level: Level = "system",
            method: Method = "pearson", variant: Variant = "b",
            resample: str | Sequence[str] = ("system", "input"), n_resamples: int = 1000,
            alternative: Alternative = "greater", confidence_level: float = 0.95, rng: Seed = None,
            pvalue: PValue = "plus-one", batch: int | None = None, keep_distribution: bool = False,
            skipna: bool = True, min_pairs: int | None = None, progress: bool = False) -> xr.Dataset:
        return paired_bootstrap_test(self._data(), x=x, y=y, target=target, level=level, method=method,
            variant=variant, resample=resample, n_resamples=n_resamples, alternative=alternative,
            confidence_level=confidence_level, rng=rng, pvalue=pvalue, batch=batch,
            keep_distribution=keep_distribution, skipna=skipna, min_pairs=min_pairs, progress=progress)

    def williams_test(self, *, x: Hashable, y: Hashable, target: Hashable, level: Level = "system",
            method: Method = "pearson", alternative: Alternative = "greater", absolute: bool = False,
            confidence_level: float = 0.95) -> xr.Dataset:
        return williams_test(self._data(), x=x, y=y, target=target, level=level, method=method,
            alternative=alternative, absolute=absolute, confidence_level=confidence_level)

    def compare(self, *, target: Hashable | Sequence[Hashable], metrics: Sequence[Hashable] | None = None,
            test: Test = "permutation", level: Level = "system", method: Method = "pearson",
            variant: Variant = "b", permute: str | tuple[str, ...] = ("system", "input"),
            resample: str | tuple[str, ...] = ("system", "input"), n_resamples: int | Literal['auto'] = "auto",
            alternative: Alternative = "greater", rng: Seed = None, pvalue: PValue = "plus-one",
            correction: Correction | None = "holm", family: Family = "row", alpha: float = 0.05,
            absolute: bool = False, keep_distribution: bool = False, skipna: bool = True,
            min_pairs: int | None = None, batch: int | None = None, progress: bool = False,
            standardise: Standardise = "cells", average: Average = "macro", swap: Swap = "scores",
            epsilon: float | str | Mapping[Hashable, float] | xr.DataArray | None = None,
            max_resamples: int = 20000) -> xr.Dataset:
        return compare(self._data(), target=target, metrics=metrics, test=test, level=level, method=method,
            variant=variant, permute=permute, resample=resample, n_resamples=n_resamples,
            alternative=alternative, rng=rng, pvalue=pvalue, correction=correction, family=family, alpha=alpha,
            absolute=absolute, keep_distribution=keep_distribution, skipna=skipna, min_pairs=min_pairs,
            batch=batch, progress=progress, standardise=standardise, average=average, swap=swap,
            epsilon=epsilon, max_resamples=max_resamples)

    def report(self, *, target: Hashable, metrics: Sequence[Hashable] | None = None,
            level: Levels | None = None, method: Method = "pearson", variant: Variant = "b",
            resample: str | Sequence[str] | None = None, test: Test = "permutation",
            permute: str | Sequence[str] | None = None, n_resamples: int | Literal['auto'] = "auto",
            confidence_level: float = 0.95, alpha: float = 0.05, correction: Correction | None = "holm",
            rng: Seed = None, progress: bool = False, log: IO[str] | None = None, source: str = "",
            max_resamples: int = 20000) -> Report:
        return report(self._data(), target=target, metrics=metrics, level=level, method=method, variant=variant,
            resample=resample, test=test, permute=permute, n_resamples=n_resamples,
            confidence_level=confidence_level, alpha=alpha, correction=correction, rng=rng, progress=progress,
            log=log, source=source, max_resamples=max_resamples)
