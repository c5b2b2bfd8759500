"""The scores role: ``ds.corrstat`` on scores, and :class:`ScoresAccessor` for type checkers.

Part two of its methods: MT statistics, agreement of labels along any dim, and the diagnostics
of which interval and test to trust (part one, in :mod:`.inference`: correlations, intervals,
tests, the report). Written out with each function's keyword-only parameters; the docstrings
are the functions' own, copied at import.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import cast

import numpy as np
import xarray as xr

from .._mt.pairwise import kendall_like, pairwise_accuracy, pairwise_difference_pearson
from .._mt.softpairwise import soft_pairwise_accuracy
from .._mt.spatest import soft_pairwise_accuracy_test
from .._mt.ties import calibrate_ties
from .._types import Draws, Level, Levels, Method, MissingRule, Seed, TieVariant, Variant
from ..agreement import jaccard, leaderboard, leaderboard_agreement, matrix
from ..diagnostics import ci_coverage, normality, power_analysis
from .base import copy_docs
from .inference import INFERENCE, InferenceMethods

__all__ = ["SCORES", "ScoresAccessor"]


class ScoresAccessor(InferenceMethods):
    """The analyses of scores: ``ds.corrstat`` on a Dataset, DataArray or DataFrame of scores.

    ``ds.corrstat.correlate(...)`` is ``xcorrstat.correlate(ds, ...)``, and so for every method:
    the same keyword-only options, types and docstring. ``ds.corrstat`` is typed ``Any`` for
    editors and type checkers (xarray's attribute lookup), so annotate it, or build this object,
    to have each method's real signature checked: ``sc: xcorrstat.ScoresAccessor = ds.corrstat``
    or ``sc = xcorrstat.ScoresAccessor(ds)``. Built explicitly it also analyses a result as
    scores (e.g. the correlations of many tasks in
    :func:`~xcorrstat.agreement.leaderboard_agreement`).

    Parameters
    ----------
    obj : Dataset, DataArray or pandas DataFrame
        Scores with ``system`` (and usually ``input``) dims; a DataFrame is read as
        :func:`xcorrstat.from_dataframe` reads it, its label columns guessed from their names.

    Examples
    --------
    >>> import xcorrstat
    >>> ds = xcorrstat.datasets.summeval()
    >>> sc: xcorrstat.ScoresAccessor = ds.corrstat
    >>> r = sc.correlate(target="expert_relevance", level="system", method="kendall")
    >>> round(float(r.sel(metric="bertscore_recall")), 2)
    0.75
    """

    def calibrate_ties(self, *, target: Hashable, metrics: Sequence[Hashable] | None = None,
            level: Level = "input", variant: TieVariant = "acc23", keep_curve: bool = False,
            sample_rate: float = 1.0, rng: Seed | np.random.RandomState = None) -> xr.Dataset:
        return calibrate_ties(self._data(), target=target, metrics=metrics, level=level, variant=variant,
            keep_curve=keep_curve, sample_rate=sample_rate, rng=rng)

    def pairwise_accuracy(self, *, target: Hashable, metrics: Sequence[Hashable] | None = None,
            level: Level = "system", pool: str | Sequence[str] | None = None) -> xr.Dataset:
        return pairwise_accuracy(self._data(), target=target, metrics=metrics, level=level, pool=pool)

    def kendall_like(self, *, target: Hashable, metrics: Sequence[Hashable] | None = None,
            threshold: float = 25.0, level: Level = "input",
            pool: str | Sequence[str] | None = None) -> xr.Dataset:
        return kendall_like(self._data(), target=target, metrics=metrics, threshold=threshold, level=level,
            pool=pool)

    def pairwise_difference_pearson(self, *, target: Hashable, metrics: Sequence[Hashable] | None = None,
            level: Level = "input", pool: str | Sequence[str] | None = None) -> xr.Dataset:
        return pairwise_difference_pearson(self._data(), target=target, metrics=metrics, level=level, pool=pool)

    def soft_pairwise_accuracy(self, *, target: Hashable, metrics: Sequence[Hashable] | None = None,
            n_resamples: int = 1000, rng: Seed = None, draws: Draws = "by-id") -> xr.Dataset:
        return soft_pairwise_accuracy(self._data(), target=target, metrics=metrics, n_resamples=n_resamples,
            rng=rng, draws=draws)

    def soft_pairwise_accuracy_test(self, *, target: Hashable, metrics: Hashable | Sequence[Hashable] | None = None,
            n_resamples: int = 1000, rng: Seed = None, spa_resamples: int = 1000, spa_rng: Seed = None,
            draws: Draws = 'by-id') -> xr.Dataset:
        data = cast(xr.Dataset, self._data())  # a DataArray gets the function's own message
        return soft_pairwise_accuracy_test(data, target=target, metrics=metrics, n_resamples=n_resamples, rng=rng,
            spa_resamples=spa_resamples, spa_rng=spa_rng, draws=draws)

    def matrix(self, *, var: Hashable | None = None, over: Hashable | None = None,
            along: Hashable | Sequence[Hashable] | None = None, level: Level | None = None,
            metrics: Sequence[Hashable] | None = None, method: Method = "pearson", variant: Variant = "b",
            complete_inputs: bool = False, min_pairs: int | None = None) -> xr.DataArray:
        return matrix(self._data(), var=var, over=over, along=along, level=level, metrics=metrics, method=method,
            variant=variant, complete_inputs=complete_inputs, min_pairs=min_pairs)

    def jaccard(self, *, var: Hashable | None = None, over: Hashable, item: Hashable,
            union: Hashable | Sequence[Hashable] | None = None,
            along: Hashable | Sequence[Hashable] | None = None, empty: float = 1.0,
            distance: bool = False) -> xr.DataArray:
        return jaccard(self._data(), var=var, over=over, item=item, union=union, along=along, empty=empty,
            distance=distance)

    def leaderboard(self, *, var: Hashable | Sequence[Hashable] | None = None, competitor: Hashable,
            condition: Hashable, rank: bool = False, missing: MissingRule = "complete",
            higher_is_better: bool = True) -> xr.Dataset:
        return leaderboard(self._data(), var=var, competitor=competitor, condition=condition, rank=rank,
            missing=missing, higher_is_better=higher_is_better)

    def leaderboard_agreement(self, *, var: Hashable | Sequence[Hashable] | None = None, competitor: Hashable,
            condition: Hashable, between: Hashable | None = None, rank: bool = False,
            missing: MissingRule = 'complete', higher_is_better: bool = True, n_resamples: int | None = 1000,
            confidence_level: float = 0.95, rng: Seed = None, keep_distribution: bool = False,
            min_pairs: int | None = None) -> xr.Dataset:
        return leaderboard_agreement(self._data(), var=var, competitor=competitor, condition=condition,
            between=between, rank=rank, missing=missing, higher_is_better=higher_is_better, n_resamples=n_resamples,
            confidence_level=confidence_level, rng=rng, keep_distribution=keep_distribution, min_pairs=min_pairs)

    def ci_coverage(self, *, target: Hashable, metrics: Hashable | Sequence[Hashable] | None = None,
            level: Levels = ('system', 'input'), method: Method = 'pearson', variant: Variant = 'b',
            methods: Sequence[str] = ('fisher', 'BOOT-SYSTEMS', 'BOOT-INPUTS', 'BOOT-BOTH'), n_trials: int = 1000,
            n_resamples: int = 1000, confidence_level: float = 0.95, rng: Seed = None,
            skipna: bool = True, min_pairs: int | None = None) -> xr.Dataset:
        return ci_coverage(self._data(), target=target, metrics=metrics, level=level, method=method,
            variant=variant, methods=methods, n_trials=n_trials, n_resamples=n_resamples,
            confidence_level=confidence_level, rng=rng, skipna=skipna, min_pairs=min_pairs)

    def power_analysis(self, *, target: Hashable, metric: Hashable, degraded: xr.DataArray | None = None,
            noise: Sequence[float] = (0.0, 0.25, 0.5, 1.0, 2.0),
            tests: Sequence[str] = ('PERM-BOTH', 'BOOT-BOTH', 'williams'), level: Level = 'system',
            method: Method = 'pearson', n_trials: int = 100, n_resamples: int = 1000, alpha: float = 0.05,
            n_inputs: int | None = None, type_one: bool = True, rng: Seed = None) -> xr.Dataset:
        return power_analysis(self._data(), target=target, metric=metric, degraded=degraded, noise=noise,
            tests=tests, level=level, method=method, n_trials=n_trials, n_resamples=n_resamples, alpha=alpha,
            n_inputs=n_inputs, type_one=type_one, rng=rng)

    def normality(self, *, metrics: Sequence[Hashable] | None = None, alpha: float = 0.05) -> xr.Dataset:
        return normality(self._data(), metrics=metrics, alpha=alpha)


#: The functions behind the methods of :class:`ScoresAccessor`, in the order of its methods.
SCORES = (*INFERENCE, calibrate_ties, pairwise_accuracy, kendall_like, pairwise_difference_pearson,
          soft_pairwise_accuracy, soft_pairwise_accuracy_test, matrix, jaccard, leaderboard,
          leaderboard_agreement, ci_coverage, power_analysis, normality)
copy_docs(ScoresAccessor, SCORES)
