"""Bootstrap confidence intervals for mean scores over a test set.

A score's mean over inputs (one number per system and metric, as reported in a
results table) gets a percentile interval from resampling the inputs with
replacement. Draw ``r`` is keyed by its id (see :mod:`xcorrstat._resampling.draws`),
so results do not depend on ``batch``; the same input draws serve every system and
metric, which makes the intervals paired across them.

Each batch of draws is one array computation: the drawn rows of the ``(inputs,
cells)`` scores of every metric and system are gathered and summed in draw order,
so a draw's mean is the same number, bit for bit, whatever the batch (a matrix
product of counts would let BLAS pick another order of summation for another
batch shape). Missing cells (NaN) are skipped: a draw's mean is the mean of the
drawn cells that are present, and a draw that picks no present cell is undefined
(NaN), counted in ``n_undefined`` and left out of the quantiles.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import xarray as xr

if TYPE_CHECKING:
    import dask.array as dsa

from .._display import did_you_mean
from .._docs import fill_doc
from .._options import OPTIONS
from .._types import Seed
from .._resampling.draws import bootstrap_indices, fill_draws, resolve_seed
from .._resampling.engine import block_elems, draws_within
from .._resampling.intervals import percentile_ci
from .._schema import INPUT, METRIC, SYSTEM, as_dataset, is_dask_array
from .._selection import select_scores, stack_scores
from .._validation import check_batch, check_confidence_level, check_draw_count, warn_few_draws
from .._warn import one_call

__all__ = ["format_ci", "mean_ci", "paired_difference_ci"]

RESAMPLE = "resample"


def _check_options(n_resamples, confidence_level, batch) -> tuple[int, float, int | None]:
    """``(n_resamples, confidence_level, batch)`` of a mean-score interval, checked."""
    n_resamples = check_draw_count(n_resamples, "n_resamples")
    confidence_level = check_confidence_level(confidence_level)
    warn_few_draws(n_resamples, confidence_level=confidence_level)
    return n_resamples, confidence_level, check_batch(batch)


def _scores(data, metrics, dim: str) -> xr.DataArray:
    """The selected scores as one float DataArray with dims ``(dim, metric, system, ...)``."""
    ds = as_dataset(data)
    if not isinstance(dim, str) or dim not in ds.dims:
        hint = did_you_mean(dim, list(map(str, ds.dims))) if isinstance(dim, str) else ""
        raise ValueError(f"dim={dim!r} is not a dim of the data; its dims are {tuple(map(str, ds.dims))}{hint}")
    if ds.sizes[dim] == 0:
        raise ValueError(f"dim={dim!r} is empty; there is nothing to average")
    default = [k for k, v in ds.data_vars.items() if v.dtype.kind in "biuf" and SYSTEM in v.dims and INPUT in v.dims]
    names = select_scores(ds, metrics, default, "metrics")
    lacking = [str(k) for k in names if dim not in ds[k].dims]
    if lacking:
        raise ValueError(f"dim={dim!r}: the scores {lacking} do not have this dim")
    x = stack_scores(ds, names, METRIC)
    rest = [d for d in (SYSTEM, INPUT) if d != dim] + [d for d in x.dims if d not in (METRIC, SYSTEM, INPUT, dim)]
    x = x.transpose(dim, METRIC, *rest)
    x.attrs = {}
    return x.rename(None)


def _default_batch(n: int, cells: int, n_resamples: int) -> int:
    """Draws per batch: those whose temporaries fit the engine's block budget, at most ``n_resamples``."""
    per_draw = 2 * n * cells + n + 3 * cells  # gathered rows (and their weights); indices; sums
    return min(n_resamples, draws_within(block_elems(), per_draw))


def _resampled_means(
    x: np.ndarray, *, seed: int, n_resamples: int, batch: int | None, skipna: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Point means ``(cells,)`` and draw means ``(n_resamples, cells)`` of ``x`` ``(n, cells)``."""
    n, cells = x.shape
    present = ~np.isnan(x)
    complete = bool(present.all())
    filled = np.where(present, x, 0.0)
    weights = None if complete else present.astype(np.float64)
    count = present.sum(axis=0)
    mean = np.full(cells, np.nan)
    np.divide(filled.sum(axis=0), count, out=mean, where=count > 0)
    if not skipna:
        broken = ~present.all(axis=0)  # a missing cell makes the mean and every draw NaN
        mean[broken] = np.nan

    def means(idx: np.ndarray) -> np.ndarray:
        sums = filled[idx].sum(axis=1)  # every metric and system at once, in draw order
        if weights is None:
            return sums / n
        drawn = weights[idx].sum(axis=1)
        block = np.full(sums.shape, np.nan)
        np.divide(sums, drawn, out=block, where=drawn > 0)
        return block

    step = _default_batch(n, cells, n_resamples) if batch is None else int(batch)
    make = lambda ids: bootstrap_indices(seed, ids, [n])
    out = fill_draws(np.empty((n_resamples, cells), dtype=np.float64), np.arange(n_resamples), step, make, means,
                     axis=0)
    if not skipna:
        out[:, broken] = np.nan
    return mean, out


def _percentile_ci(draws: np.ndarray, confidence_level: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Percentile interval per column over the defined (non-NaN) draws, and the undefined count."""
    low, high = percentile_ci(draws.T, confidence_level)
    return low, high, np.isnan(draws).sum(axis=0).astype(np.int64)


def _labelled(values: np.ndarray, template: xr.DataArray, dim: str) -> xr.DataArray:
    dims = [d for d in template.dims if d != dim]
    coords = {k: v for k, v in template.coords.items() if dim not in v.dims}
    return xr.DataArray(values.reshape([template.sizes[d] for d in dims]), dims=dims, coords=coords)


def _distribution(draws: np.ndarray, cell: xr.DataArray) -> xr.DataArray:
    """Draws ``(n_resamples, cells)`` as a DataArray over ``cell``'s dims and ``resample``."""
    n_resamples = draws.shape[0]
    return xr.DataArray(draws.T.reshape(cell.shape + (n_resamples,)), dims=cell.dims + (RESAMPLE,),
                        coords={**cell.coords, RESAMPLE: np.arange(n_resamples)})


def _summary(values: np.ndarray, *, paired: bool, confidence_level: float, seed: int, n_resamples: int,
             batch: int | None, skipna: bool) -> tuple[np.ndarray, ...]:
    """Estimate, low, high and undefined draws ``(cells,)``, and the draws ``(n_resamples, cells)`` of
    scores ``(n, cells)``, or of the difference of two halves ``(n, 2 cells)`` when ``paired``."""
    mean, draws = _resampled_means(np.asarray(values, dtype=np.float64), seed=seed, n_resamples=n_resamples,
                                   batch=batch, skipna=skipna)
    if paired:
        cells = mean.size // 2
        mean, draws = mean[:cells] - mean[cells:], draws[:, :cells] - draws[:, cells:]
    return (mean, *_percentile_ci(draws, confidence_level), draws)


def _summarised(values: np.ndarray | dsa.Array, *, n_resamples: int, paired: bool,
                **kw: Any) -> tuple[np.ndarray | dsa.Array, ...]:
    """:func:`_summary` now for NumPy scores, or lazy (one task) for Dask-backed ones."""
    if not is_dask_array(values):
        return _summary(np.asarray(values), n_resamples=n_resamples, paired=paired, **kw)
    import dask
    import dask.array as dsa

    cells = values.shape[1] // (2 if paired else 1)
    parts = dask.delayed(_summary, nout=5)(values, n_resamples=n_resamples, paired=paired, **kw)
    shapes = [((cells,), np.float64)] * 3 + [((cells,), np.int64), ((n_resamples, cells), np.float64)]
    return tuple(dsa.from_delayed(part, shape=shape, dtype=dtype) for part, (shape, dtype) in zip(parts, shapes))


def _result(name: str, parts: tuple, template: xr.DataArray, dim: str, keep_distribution: bool,
            attrs: dict) -> xr.Dataset:
    """The estimate ``name``, its percentile interval and undefined draws, labelled like ``template``."""
    estimate, low, high, undefined, draws = parts
    out = xr.Dataset(
        {
            name: _labelled(estimate, template, dim),
            "low": _labelled(low, template, dim),
            "high": _labelled(high, template, dim),
            "n_undefined": _labelled(undefined, template, dim),
        }
    )
    if keep_distribution:
        out["distribution"] = _distribution(draws, out[name])
    out.attrs = attrs
    return out


def _mean_ci_iv(data: xr.Dataset | xr.DataArray, *, metrics: Sequence[Hashable] | Hashable | None, dim: str,
                n_resamples: int, confidence_level: float, rng: Seed, batch: int | None,
                skipna: bool) -> tuple[xr.DataArray, int, float, int, int | None]:
    """Every option of :func:`mean_ci`, checked once: the scores, n_resamples, confidence_level, seed, batch."""
    n_resamples, confidence_level, batch = _check_options(n_resamples, confidence_level, batch)
    if not isinstance(skipna, (bool, np.bool_)):
        raise TypeError(f"skipna must be True or False, got {skipna!r}")
    x = _scores(data, metrics, dim)
    return x, n_resamples, confidence_level, resolve_seed(rng), batch


@one_call
@fill_doc
def mean_ci(
    data: xr.Dataset | xr.DataArray,
    *,
    metrics: Sequence[Hashable] | Hashable | None = None,
    dim: str = INPUT,
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    rng: Seed = None,
    skipna: bool = True,
    keep_distribution: bool = False,
) -> xr.Dataset:
    """Mean score of every system and metric with a percentile bootstrap interval.

    Parameters
    ----------
    %(data)s
        Dask-backed data gives a lazy result (one task).
    metrics : str or list of str, optional
        Scores to summarise; default every numeric score, human judgments included.
    dim : str, default "input"
        The dim averaged over and resampled.
    n_resamples : int, default 1000
        Number of bootstrap draws.
    %(confidence_level)s
    %(rng)s
    skipna : bool, default True
        Skip missing cells. If False, a score with any missing cell gets NaN throughout.
    keep_distribution : bool, default False
        Also return every draw's mean as ``distribution`` over a ``resample`` dim.

    Returns
    -------
    Dataset
        Dims ``(metric, system, ...)`` with variables ``mean``, ``low``, ``high`` and
        ``n_undefined`` (draws with no present cell, left out of the quantiles).
        The same input draws serve every system and metric.

    Examples
    --------
    >>> import xcorrstat
    >>> ds = xcorrstat.datasets.summeval()
    >>> r = mean_ci(ds, metrics=["rouge_2_f1"], n_resamples=2000, rng=0)
    >>> r["mean"].dims
    ('metric', 'system')
    >>> bool((r["low"] < r["mean"]).all() and (r["mean"] < r["high"]).all())
    True
    """
    batch = OPTIONS["batch"]
    x, n_resamples, confidence_level, seed, batch = _mean_ci_iv(
        data, metrics=metrics, dim=dim, n_resamples=n_resamples, confidence_level=confidence_level, rng=rng,
        batch=batch, skipna=skipna)
    parts = _summarised(x.data.reshape(x.shape[0], -1), n_resamples=n_resamples, paired=False,
                        confidence_level=confidence_level, seed=seed, batch=batch, skipna=bool(skipna))
    attrs = {"method": "percentile", "statistic": "mean", "n_resamples": n_resamples,
             "confidence_level": confidence_level, "rng": seed, "dim": dim, "skipna": int(bool(skipna))}
    return _result("mean", parts, x, dim, keep_distribution, attrs)


def _paired_difference_ci_iv(data: xr.Dataset | xr.DataArray, *, system_a: Hashable, system_b: Hashable,
                             metrics: Sequence[Hashable] | Hashable | None, dim: str, n_resamples: int,
                             confidence_level: float, rng: Seed,
                             batch: int | None) -> tuple[xr.DataArray, int, float, int, int | None]:
    """Every option of :func:`paired_difference_ci`, checked once: as :func:`_mean_ci_iv`."""
    n_resamples, confidence_level, batch = _check_options(n_resamples, confidence_level, batch)
    if dim == SYSTEM:
        raise ValueError("dim: a paired difference of systems resamples inputs, not the 'system' dim")
    x = _scores(data, metrics, dim)
    systems = x.indexes.get(SYSTEM)
    for argument, label in (("system_a", system_a), ("system_b", system_b)):
        if systems is None or label not in systems:
            shown = [] if systems is None else systems.tolist()
            raise ValueError(f"{argument}={label!r} is not a system in the data; available: {shown}"
                             f"{did_you_mean(label, shown)}")
    if system_a == system_b:
        raise ValueError(f"system_a and system_b must differ, both are {system_a!r}")
    return x, n_resamples, confidence_level, resolve_seed(rng), batch


@one_call
def paired_difference_ci(
    data: xr.Dataset | xr.DataArray,
    *,
    system_a: Hashable,
    system_b: Hashable,
    metrics: Sequence[Hashable] | Hashable | None = None,
    dim: str = INPUT,
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    rng: Seed = None,
    keep_distribution: bool = False,
) -> xr.Dataset:
    """Difference of two systems' mean scores with a paired percentile bootstrap interval.

    Each draw resamples the inputs once and applies them to both systems, so the
    interval reflects that both systems were scored on the same test set. Missing
    cells are skipped in each system's mean separately.

    Parameters
    ----------
    data : Dataset or DataArray
        Scores with ``system`` and ``input`` dims. Dask-backed data gives a lazy result.
    system_a, system_b : label
        The systems compared; the difference is ``mean(a) - mean(b)``.
    metrics : str or list of str, optional
        Scores to compare on; default every numeric score.
    dim, n_resamples, confidence_level, rng, batch
        As in :func:`mean_ci`; the same ``rng`` gives the same input draws.
    keep_distribution : bool, default False
        Also return every draw's difference as ``distribution`` over a ``resample`` dim.

    Returns
    -------
    Dataset
        Dims ``(metric, ...)`` with variables ``difference``, ``low``, ``high`` and
        ``n_undefined`` (draws where either mean is undefined).

    Examples
    --------
    >>> import xcorrstat
    >>> ds = xcorrstat.datasets.summeval()
    >>> d = paired_difference_ci(ds, system_a="M11", system_b="M0", metrics="rouge_2_f1",
    ...                          n_resamples=2000, rng=0)
    >>> sorted(d.data_vars)
    ['difference', 'high', 'low', 'n_undefined']
    """
    batch = OPTIONS["batch"]
    x, n_resamples, confidence_level, seed, batch = _paired_difference_ci_iv(
        data, system_a=system_a, system_b=system_b, metrics=metrics, dim=dim, n_resamples=n_resamples,
        confidence_level=confidence_level, rng=rng, batch=batch)
    template = x.sel({SYSTEM: system_a}, drop=True)  # (dim, metric, ...)
    both = np.stack([template.data, x.sel({SYSTEM: system_b}, drop=True).data], axis=1)  # Dask stays lazy
    parts = _summarised(both.reshape(both.shape[0], -1), n_resamples=n_resamples, paired=True,
                        confidence_level=confidence_level, seed=seed, batch=batch, skipna=True)
    attrs = {"method": "percentile", "statistic": "difference of means", "n_resamples": n_resamples,
             "confidence_level": confidence_level, "rng": seed, "dim": dim, "system_a": str(system_a),
             "system_b": str(system_b)}
    return _result("difference", parts, template, dim, keep_distribution, attrs)


def _format_ci_iv(result, digits, scale) -> str:
    """Every option of :func:`format_ci`, checked once: the name of the estimate."""
    if not isinstance(result, xr.Dataset):
        raise TypeError(f"result must be the Dataset returned by mean_ci, got {type(result).__name__}")
    estimate = next((k for k in ("mean", "difference") if k in result.data_vars), None)
    if estimate is None or "low" not in result.data_vars or "high" not in result.data_vars:
        raise ValueError(
            f"result must hold 'mean' (or 'difference'), 'low' and 'high'; found {sorted(map(str, result.data_vars))}"
        )
    if not isinstance(digits, (int, np.integer)) or isinstance(digits, bool) or digits < 0:
        raise ValueError(f"digits must be a non-negative integer, got {digits!r}")
    if not isinstance(scale, (int, float, np.integer, np.floating)) or isinstance(scale, bool) or not np.isfinite(scale):
        raise ValueError(f"scale must be a finite number, got {scale!r}")
    return estimate


@one_call
def format_ci(result: xr.Dataset, *, digits: int = 2, scale: float = 1.0) -> xr.DataArray:
    """Format each estimate and interval as a string such as ``"82.02 (81.01, 83.00)"``.

    Parameters
    ----------
    result : Dataset
        The output of :func:`mean_ci` or :func:`paired_difference_ci`.
    digits : int, default 2
        Decimal places.
    scale : float, default 1.0
        Factor applied before formatting (``scale=100`` shows 0.8202 as ``82.02``).

    Returns
    -------
    DataArray
        Strings named ``ci`` with the dims of the estimate; undefined values show as ``nan``.

    Examples
    --------
    >>> r = xr.Dataset({"mean": ("metric", [0.8202]), "low": ("metric", [0.8101]),
    ...                 "high": ("metric", [0.83])}, coords={"metric": ["acc"]})
    >>> str(format_ci(r, scale=100).sel(metric="acc").item())
    '82.02 (81.01, 83.00)'
    """
    estimate = _format_ci_iv(result, digits, scale)
    fmt = f"{{:.{int(digits)}f}}"
    est, low, high = xr.broadcast(result[estimate], result["low"], result["high"])
    cells = zip(est.values.ravel(), low.values.ravel(), high.values.ravel())
    text = [f"{fmt.format(e * scale)} ({fmt.format(lo * scale)}, {fmt.format(hi * scale)})" for e, lo, hi in cells]
    out = est.copy(data=np.array(text, dtype=object).reshape(est.shape))
    out.name = "ci"
    out.attrs = {}
    return out
