"""The pair-outcome permutation test: mt-metrics-eval's ``PairwisePermutationSigDiff`` (WMT23 onwards).

:func:`xcorrstat.permutation_test` and :func:`xcorrstat.compare` run it with
``swap="pairs"``. Within each group of items -- each input's systems (``level="input"``,
mt-metrics-eval's ``average_by="item"``), each system's inputs (``"within_system"``,
``"sys"``) or all cells (``"global"``, ``"none"``) -- every pair of items gets a verdict
from each metric (the sign of its difference, a tie within the metric's own epsilon) and
from the target. A draw exchanges the two metrics' verdicts on a random half of the pairs
(a fair coin per pair) and recomputes the Kendall variant of both hybrid pair tables,
averaged over the groups. Each metric keeps its own epsilon, given or calibrated once on
the observed data (:func:`xcorrstat._kernels.mt.ties.calibrated_threshold`), so metrics on
different scales are compared without re-calibrating in every draw.

Draws are keyed by draw id (:func:`pair_swap_bits`) and shared by every pair of metrics;
the statistics come from :mod:`xcorrstat._kernels.mt.pair_outcomes` (products of the swap
bits with per-pair tables; exact integer sums). Cells without a target score are left
out, as mt-metrics-eval's ``_ReshapeAndFilter`` drops them; a metric score missing where
the target has one is an error. Dask-backed scores give a lazy result: each
label's pair tables and its batches of draws are tasks of one graph (eager scores run the same
graph at once).

:mod:`.tietests` runs the two-metric test on these parts, and the score test that
re-calibrates both metrics in every draw.
"""

from __future__ import annotations

import sys
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import xarray as xr

if TYPE_CHECKING:
    import dask.array as dsa

from .._capabilities import check
from .._types import Alternative, Correction, Family, Level, PValue, Standardise, Statistic, Variant
from .._kernels.mt.pair_outcomes import LINEAR_VARIANTS, PAIR_KEY, hybrid_deltas, prepare_pair_outcomes
from .._kernels.mt.ties import TIE_VARIANTS, calibrated_threshold
from .._mt.ties import MAX_GROUP, TIE_LEVELS, group_shape, level_groups
from .._options import OPTIONS
from .._resampling.draws import DRAW_BLOCK, keyed_generator, resolve_seed
from .._resampling.engine import BLAS_ONE_THREAD, RESAMPLE_DIM, block_elems, compute_with_progress
from .._resampling.memory import FLOAT_BYTES
from .._resampling.pvalues import ALTERNATIVES, PVALUES
from .._resampling.schemes import parse_permute
from .._schema import INPUT, METRIC, SYSTEM, is_dask_array
from .._selection import split_scores
from .._validation import check_batch, check_choice, check_epsilon, check_min_pairs, check_positive_int
from .._validation import check_unit_interval
from .decisions import OTHER, check_correction, decide, pair_pvalues

__all__ = [
    "AVERAGE_BY", "PAIR_KEY", "PAIR_SCHEME", "SWAPS", "PairScores", "Swap", "calibrated_epsilons", "check_group_size",
    "check_pair_options", "common_iv", "compare_pair_outcomes", "dispatched", "draw_batches", "grouped", "pair_attrs",
    "pair_draws", "pair_swap_bits", "pair_swap_words", "scores_of", "stacked", "thresholds", "uses_pairs",
]

#: What a permutation draw swaps: the metrics' scores (cells, rows or columns) or the outcomes of pairs.
Swap = Literal["scores", "pairs"]
SWAPS: tuple[Swap, ...] = ("scores", "pairs")
#: The levels of the pair-outcome test and mt-metrics-eval's name of their grouping (``average_by``).
AVERAGE_BY = {"input": "item", "within_system": "sys", "global": "none"}
#: The label of the pair-outcome test in results' attrs.
PAIR_SCHEME = "PERM-PAIRS"
#: The dim of the metric pairs (pi, pk) in a draw's deltas before they become a (metric, other_metric) matrix.
PAIR_DIM = "metric_pair"
_STREAM = 0x70616972  # first key of every stream of pair swap bits ("pair"): apart from other keyed streams


def uses_pairs(swap: object, epsilon: object) -> bool:
    """Whether a permutation test swaps pair outcomes; checks ``swap`` and that ``epsilon`` fits it.

    Examples
    --------
    >>> uses_pairs("pairs", None), uses_pairs("scores", None)
    (True, False)
    """
    check_choice(swap, SWAPS, "swap")
    exact = isinstance(epsilon, (int, float, np.integer, np.floating)) and not isinstance(epsilon, bool) \
        and epsilon == 0
    if swap == "scores" and epsilon is not None and not exact:
        raise ValueError(f"epsilon={epsilon!r} is an option of swap='pairs' (each metric's own tie threshold); "
                         "swap='scores' swaps standardised scores and compares them with exact ties (epsilon 0), "
                         "or, in permutation_test only, re-calibrates in every draw (epsilon='calibrate')")
    return swap == "pairs"


def dispatched(swap: object, epsilon: object) -> bool:
    """Whether :func:`xcorrstat.permutation_test` hands the call to :func:`.tietests.run_permutation_test`: the
    pair-outcome test, or the score test with ``epsilon="calibrate"`` (re-calibrated in every draw).

    Examples
    --------
    >>> dispatched("scores", "calibrate"), dispatched("scores", None)
    (True, False)
    """
    if swap == "scores" and isinstance(epsilon, str) and epsilon == "calibrate":
        return True
    return uses_pairs(swap, epsilon)


def check_pair_options(*, operation: str, level: object, method: object, variant: object, permute: object,
                       standardise: object, early_stop: object = None) -> None:
    """Raise a clear error for an option the pair-outcome test does not take (``operation``: its row of
    the capability table)."""
    check(operation, level=level, method=method, variant=variant)
    if parse_permute(permute) != "cells":
        raise ValueError(f"permute={permute!r} does not apply to swap='pairs' (a draw swaps the outcome of each "
                         "pair of items within a group, set by level); leave permute at its default")
    if standardise != "cells":
        raise ValueError(f"standardise={standardise!r} does not apply to swap='pairs' (pair outcomes do not "
                         "depend on a metric's scale); leave it at 'cells'")
    if early_stop is not None:
        raise ValueError("early_stop is not available with swap='pairs'; use early_stop=None")


def pair_swap_bits(seed: int, draws: object, start: int, stop: int, *, cache: dict | None = None) -> np.ndarray:
    """Swap bits ``(len(draws), stop - start)`` uint8 of pairs ``start..stop-1``: 1 where the verdicts swap.

    Bit ``(r, p)`` comes from the stream ``keyed_generator(seed, STREAM, r // DRAW_BLOCK,
    p // PAIR_KEY)``: row ``r % DRAW_BLOCK``, column ``p % PAIR_KEY`` of the bits of
    ``integers(0, 256, (DRAW_BLOCK, PAIR_KEY / 8), uint8)`` (``np.unpackbits``). So a draw
    depends only on the seed and its id, whatever the batch or the blocks of pairs, and the
    first k draws of a run are those of a k-draw run. ``cache`` (a dict) keeps the streams
    of this call for the next one. The draws use them packed (:func:`pair_swap_words`).

    Examples
    --------
    >>> bits = pair_swap_bits(0, [0, 300], 10, 20)
    >>> bits.shape, bool((pair_swap_bits(0, [300], 0, 40)[0, 10:20] == bits[1]).all())
    ((2, 10), True)
    """
    ids = np.atleast_1d(np.asarray(draws, dtype=np.int64))
    if stop <= start:
        return np.empty((ids.size, 0), dtype=np.uint8)
    k0, k1 = start // PAIR_KEY, -(-stop // PAIR_KEY)
    words = pair_swap_words(seed, ids, k0, k1, cache=cache)
    lo = start - k0 * PAIR_KEY
    return np.unpackbits(words.reshape(ids.size, -1), axis=1)[:, lo:lo + stop - start]


def pair_swap_words(seed: int, draws: object, k0: int, k1: int, *, cache: dict | None = None) -> np.ndarray:
    """The swap bits of :func:`pair_swap_bits`, packed: ``(len(draws), k1 - k0, PAIR_KEY / 8)`` uint8, the bits
    of pairs ``k0 * PAIR_KEY ... k1 * PAIR_KEY - 1`` as ``np.packbits`` packs them (the
    :data:`~xcorrstat._kernels.mt.pair_outcomes.SwapBits` of the kernels): each stream's bytes as they
    come (:func:`_stream_bytes`). ``cache`` keeps the streams of the last call for the next one.

    Examples
    --------
    >>> words = pair_swap_words(0, np.array([0, 300]), 0, 1)
    >>> words.shape, bool((np.unpackbits(words[:, 0], axis=1)[:, :40] == pair_swap_bits(0, [0, 300], 0, 40)).all())
    ((2, 1, 1024), True)
    """
    ids = np.atleast_1d(np.asarray(draws, dtype=np.int64))
    if ids.size and ids.min() < 0:
        raise ValueError("draw ids must be non-negative")
    out = np.empty((ids.size, k1 - k0, PAIR_KEY // 8), dtype=np.uint8)
    kept = {} if cache is None else cache
    fresh = {}
    blocks = ids // DRAW_BLOCK
    for block in np.unique(blocks):
        mine = np.flatnonzero(blocks == block)
        rows = ids[mine] % DRAW_BLOCK
        run = mine.size == ids.size and bool((np.diff(rows) == 1).all())  # consecutive ids: slices
        for key in range(k0, k1):
            stream = kept.get((int(block), key))
            if stream is None:
                stream = _stream_bytes(keyed_generator(seed, _STREAM, int(block), key))
            fresh[(int(block), key)] = stream
            if run:
                out[:, key - k0] = stream[rows[0]:rows[-1] + 1]
            else:
                out[mine, key - k0] = stream[rows]
    if cache is not None:
        cache.clear()
        cache.update(fresh)
    return out


def _stream_bytes(g: np.random.Generator) -> np.ndarray:
    """``g.integers(0, 256, (DRAW_BLOCK, PAIR_KEY / 8), uint8)`` of a new generator: the bytes of its 32-bit
    words, low byte first, and of its 64-bit outputs, low half first, so on a little-endian machine the
    bytes of ``random_raw`` (three times faster)."""
    if sys.byteorder != "little" or g.bit_generator.state.get("bit_generator") != "PCG64":
        return g.integers(0, 256, size=(DRAW_BLOCK, PAIR_KEY // 8), dtype=np.uint8)
    raw = g.bit_generator.random_raw(DRAW_BLOCK * PAIR_KEY // 64)
    return raw.view(np.uint8).reshape(DRAW_BLOCK, PAIR_KEY // 8)


@dataclass(frozen=True)
class PairScores:
    """One test's scores as (lazy or NumPy) arrays: x (*lead, M, S, I), z (*lead, S, I), and the lead dims'
    labels. Dask-backed scores stay lazy: each label's arrays go into its tasks."""

    x: Any
    z: Any
    names: list[str]
    lead: list[Hashable]
    coords: dict

    @property
    def outer(self) -> tuple[int, ...]:
        return tuple(self.x.shape[:-3])

    @property
    def lazy(self) -> bool:
        return is_dask_array(self.x) or is_dask_array(self.z)


def scores_of(x: xr.DataArray, z: xr.DataArray) -> PairScores:
    """Metric and target scores as (*lead, M, S, I) and (*lead, S, I) float64 arrays (Dask-backed stay lazy)."""
    xb, zb = xr.broadcast(x, z)
    lead = [d for d in xb.dims if d not in (METRIC, SYSTEM, INPUT)]
    coords = {d: xb[d] for d in lead if d in xb.coords}
    xv = xb.transpose(*lead, METRIC, SYSTEM, INPUT).data.astype(np.float64)
    zv = zb.isel({METRIC: 0}, drop=True).transpose(*lead, SYSTEM, INPUT).data.astype(np.float64)
    return PairScores(xv, zv, [str(m) for m in x[METRIC].values], lead, coords)


def _epsilon_array(epsilon: object, s: PairScores) -> tuple[np.ndarray, str]:
    """Given thresholds as (*lead, M): a number, a mapping metric -> number, or a DataArray over metric."""
    shape = s.x.shape[:-2]
    if isinstance(epsilon, xr.DataArray):
        if METRIC not in epsilon.dims or set(epsilon.dims) - {METRIC, *s.lead}:
            raise ValueError(f"epsilon as a DataArray needs a {METRIC!r} dim and no dim the scores lack, "
                             f"got dims {epsilon.dims}")
        labels = [str(m) for m in epsilon[METRIC].values]
        missing = sorted(set(s.names) - set(labels))
        if missing:
            raise ValueError(f"epsilon has no threshold for metric(s) {missing}")
        given = epsilon.assign_coords({METRIC: labels}).sel({METRIC: s.names})
        template = xr.DataArray(np.zeros(shape), dims=[*s.lead, METRIC], coords={**s.coords, METRIC: s.names})
        values = given.broadcast_like(template).transpose(*s.lead, METRIC).values
        for name, v in zip(s.names, np.moveaxis(values, -1, 0)):
            for e in np.ravel(v):
                check_epsilon(e, f" (the threshold of metric {name!r})")
        return np.array(values, dtype=np.float64), "given per metric"
    if isinstance(epsilon, Mapping):
        by_name = {str(k): v for k, v in epsilon.items()}
        missing = [n for n in s.names if n not in by_name]
        if missing:
            raise ValueError(f"epsilon has no threshold for metric(s) {missing}")
        values = np.array([check_epsilon(by_name[n], f" (the threshold of metric {n!r})") for n in s.names])
        return np.broadcast_to(values, shape).copy(), "given per metric"
    if isinstance(epsilon, str):
        raise ValueError(f"epsilon must be a number >= 0, 'calibrate', a mapping metric -> number or a DataArray "  # noqa: TRY004
                         f"over metric, got {epsilon!r}")
    value = check_epsilon(epsilon, ", 'calibrate', a mapping metric -> number or a DataArray over metric")
    return np.full(shape, value), f"{value:g}"


def check_group_size(s: PairScores, level: str) -> None:
    """Calibration compares every pair of a group's items: refuse groups too large, from the shapes."""
    items = group_shape(level, s.x.shape[-2], s.x.shape[-1])[1]
    if items > MAX_GROUP:
        raise ValueError(f"epsilon='calibrate' at level={level!r} compares every pair of {items} items; "
                         f"more than {MAX_GROUP} items per group is not supported: give epsilon a number or "
                         "per-metric thresholds")


def calibrated_epsilons(gx: np.ndarray, gz: np.ndarray, variant: Variant) -> np.ndarray:
    """Each metric's epsilon maximising its acc_eq (tau_eq) on one label's groups (M, G, n): (M,)."""
    pairs = gx.shape[-2] * gx.shape[-1] * max(gx.shape[-1] - 1, 1) // 2
    step = max(1, block_elems() // pairs)  # a few metrics a call when their keys fit (8 bytes a pair)
    eps = np.empty(gx.shape[0])
    for m in range(0, gx.shape[0], step):
        eps[m:m + step] = calibrated_threshold(gx[m:m + step], gz[None], variant=variant)
    return np.where(np.isnan(eps), 0.0, eps)  # no valid pair: nothing to calibrate


def thresholds(epsilon: object, s: PairScores, level: str, variant: Variant) -> tuple[np.ndarray | None, str]:
    """Each metric's given tie threshold (*lead, M), or None to calibrate them in each label's task, and how
    they are chosen (for attrs)."""
    if epsilon is None:
        epsilon = "calibrate" if variant in TIE_VARIANTS else 0.0
    if isinstance(epsilon, str) and epsilon == "calibrate":
        if variant not in TIE_VARIANTS:
            raise ValueError(f"epsilon='calibrate' maximises acc_eq or tau_eq, so it needs variant 'acc23' or '23'; "
                             f"with variant={variant!r} give epsilon a number (e.g. 0) or per-metric thresholds")
        check_group_size(s, level)
        return None, "calibrate"
    return _epsilon_array(epsilon, s)


@dataclass(frozen=True)
class _Draws:
    observed: Any  # (*lead, M), lazy for lazy scores
    draws: Any  # (*lead, n_pairs, n_resamples): delta' of the metric pairs (pi, pk)
    n_groups: Any  # (*lead,) groups averaged
    epsilon: Any  # (*lead, M) the thresholds used
    per_batch: int  # draws computed together


def _draw_plan(n_groups: int, m: int, variant: Variant, batch: int | None, n_resamples: int) -> tuple[int, int]:
    """``(draws per batch, pairs per block)``: temporaries within about block_elems() float64 elements."""
    q = 1 if variant in LINEAR_VARIANTS else 2
    b = DRAW_BLOCK if variant in LINEAR_VARIANTS else block_elems() // (4 * n_groups * q * m)
    b = int(max(1, min(b, DRAW_BLOCK, batch or DRAW_BLOCK, n_resamples)))
    # a pair takes b / 8 bytes of packed swap bits, twice (the streams kept and the block's copy), and 2 q m
    # bits of packed quantities; a quarter of the share leaves room for the rest
    pairs = block_elems() * 16 // (2 * b + 2 * q * m + 8)  # (block_elems() x 8 bytes) / 4 / ((2 b + 2 q m + 8) / 8)
    return b, int(max(PAIR_KEY, pairs // PAIR_KEY * PAIR_KEY))


def draw_batches(n_resamples: int, b: int) -> list[np.ndarray]:
    """Draw ids in batches of at most ``b`` that never straddle a block of draw ids."""
    out = []
    for start in range(0, n_resamples, DRAW_BLOCK):
        ids = np.arange(start, min(start + DRAW_BLOCK, n_resamples))
        out += [ids[k:k + b] for k in range(0, ids.size, b)]
    return out


def _task(prep, ids: np.ndarray, seed: int, pi: np.ndarray, pk: np.ndarray) -> np.ndarray:
    cache: dict = {}

    def bits(draws: np.ndarray, k0: int, k1: int) -> np.ndarray:
        return pair_swap_words(seed, draws, k0, k1, cache=cache)

    with BLAS_ONE_THREAD:  # one task per core; small batched products slow down with BLAS threads
        return hybrid_deltas(prep, ids, bits, pi, pk)


def grouped(x: np.ndarray, z: np.ndarray, names: Sequence[str], level: str) -> tuple[np.ndarray, np.ndarray]:
    """(M, G, n) metric and (G, n) target groups of one label; a metric missing where the target has a
    score is an error."""
    gx, _ = level_groups(x, x, level)
    gz, _ = level_groups(z, z, level)
    gap = np.isnan(gx) & ~np.isnan(gz)
    if gap.any():
        bad = [names[int(m)] for m in np.flatnonzero(gap.any(axis=(1, 2)))]
        raise ValueError(f"swap='pairs' needs every metric's score wherever the target has one (cells without a "
                         f"target score are left out, as mt-metrics-eval does); metric(s) {bad[:5]} miss "
                         f"{int(gap.sum())} such cell(s): drop those systems or inputs first")
    return gx, gz


def _prepared(x: np.ndarray, z: np.ndarray, eps: np.ndarray | None, names: Sequence[str], *, level: str,
              variant: Variant, min_pairs: int, max_pairs: int, skipna: bool, cache_bytes: int) -> tuple:
    """One label's pair tables, its thresholds (calibrated when ``eps`` is None) and the metrics that
    miss a cell (NaN without ``skipna``, as in the score-swapping test)."""
    gx, gz = grouped(x, z, names, level)
    eps = calibrated_epsilons(gx, gz, variant) if eps is None else eps
    prep = prepare_pair_outcomes(gx, gz, eps, variant=variant, min_pairs=min_pairs, max_pairs=max_pairs,
                                 cache_bytes=cache_bytes)
    gap = np.zeros(len(names), dtype=bool)
    if not skipna:
        gap = np.isnan(x).any(axis=(-2, -1)) | np.isnan(z).any()
    return prep, eps, gap


def _finished(prepared: tuple, pi: np.ndarray, pk: np.ndarray, *parts: np.ndarray) -> tuple[np.ndarray, ...]:
    """One label's observed statistics (M,), draws (P, B), groups averaged and thresholds (M,)."""
    prep, eps, gap = prepared
    observed = np.where(gap, np.nan, prep.observed)
    draws = np.where((gap[pi] | gap[pk])[:, None], np.nan, np.concatenate(parts, axis=1))
    return observed, draws, np.int64(prep.n_groups), np.asarray(eps, dtype=np.float64)


def stacked(labels: list, shape: tuple[int, ...], dtype: Any, outer: tuple[int, ...]) -> dsa.Array:
    """Each label's delayed array of ``shape`` as one lazy (*outer, *shape) array."""
    import dask.array as dsa

    parts = [dsa.from_delayed(d, shape=shape, dtype=dtype) for d in labels]
    return dsa.stack(parts).reshape(outer + shape)


def pair_draws(s: PairScores, eps: np.ndarray | None, *, level: str, variant: Variant, min_pairs: int,
                skipna: bool, seed: int, n_resamples: int, batch: int | None, pi: np.ndarray,
                pk: np.ndarray) -> _Draws:
    """Observed statistic of every metric and the draws of delta' of metric pairs ``(pi, pk)``, per label:
    lazy arrays, one graph per label (its pair tables, then its batches of draws as tasks)."""
    import dask

    m = len(s.names)
    n_groups = group_shape(level, s.x.shape[-2], s.x.shape[-1])[0]
    per_batch, max_pairs = _draw_plan(n_groups, m, variant, batch, n_resamples)
    kw = {"level": level, "variant": variant, "min_pairs": min_pairs, "max_pairs": max_pairs, "skipna": skipna,
          "cache_bytes": FLOAT_BYTES * block_elems() // 2}  # packed pairs kept: half a task's share
    labels = []
    for idx in np.ndindex(*s.outer):
        prepared = dask.delayed(_prepared)(s.x[idx], s.z[idx], None if eps is None else eps[idx], s.names, **kw)
        tasks = [dask.delayed(_task)(prepared[0], ids, seed, pi, pk) for ids in draw_batches(n_resamples, per_batch)]
        labels.append(dask.delayed(_finished, nout=4)(prepared, pi, pk, *tasks))
    shapes = [((m,), np.float64), ((pi.size, n_resamples), np.float64), ((), np.int64), ((m,), np.float64)]
    parts = [stacked([d[k] for d in labels], shape, dtype, s.outer) for k, (shape, dtype) in enumerate(shapes)]
    return _Draws(parts[0], parts[1], parts[2], parts[3], per_batch)


def pair_attrs(*, level: str, how: str, n_resamples: int, alternative: str, pvalue: str, seed: int,
               batch: int | None, per_batch: int, skipna: bool, min_pairs: int, variant: str) -> dict:
    return {
        "level": level, "method": "kendall", "variant": variant, "swap": "pairs", "epsilon": how,
        "grouping": TIE_LEVELS[level], "average_by": AVERAGE_BY[level], "n_resamples": n_resamples,
        "alternative": alternative, "pvalue": pvalue, "rng": seed, "batch": per_batch if batch is None else batch,
        "draws_per_batch": per_batch, "skipna": int(skipna), "min_pairs": min_pairs, "scheme": PAIR_SCHEME,
    }


def common_iv(operation: str, *, level: Level, method: Statistic, variant: Variant, permute: str | tuple[str, ...],
              standardise: Standardise, early_stop: float | None, n_resamples: int, alternative: Alternative,
              pvalue: PValue, batch: int | None, min_pairs: int | None) -> tuple[int, int | None, int]:
    check_pair_options(operation=operation, level=level, method=method, variant=variant, permute=permute, standardise=standardise,
                       early_stop=early_stop)
    check_choice(alternative, ALTERNATIVES, "alternative")
    check_choice(pvalue, PVALUES, "pvalue")
    return (check_positive_int(n_resamples, "n_resamples"), check_batch(batch),
            check_min_pairs(OPTIONS["min_pairs"] if min_pairs is None else min_pairs))


def _matrix(draws: np.ndarray, *, pi: np.ndarray, pk: np.ndarray, m: int) -> np.ndarray:
    """Pair draws (..., P, B) -> (..., M, M, B): +draws at (i, k), -draws at (k, i), NaN on the diagonal."""
    out = np.full(draws.shape[:-2] + (m, m, draws.shape[-1]), np.nan)
    out[..., pi, pk, :] = draws
    out[..., pk, pi, :] = -draws
    return out


def compare_pair_outcomes(data, *, target, metrics, level, method, variant, permute, standardise, epsilon,
                          n_resamples, alternative: Alternative, rng, pvalue: PValue,
                          correction: Correction | None, family: Family, alpha, keep_distribution, skipna,
                          min_pairs, batch) -> xr.Dataset:
    """:func:`xcorrstat.compare` with ``test="permutation", swap="pairs"`` (see its docstring)."""
    n_resamples, batch, min_pairs = common_iv("compare(test=Permutation(swap='pairs'))", level=level, method=method,
                                              variant=variant, permute=permute, standardise=standardise,
                                              early_stop=None, n_resamples=n_resamples, alternative=alternative,
                                              pvalue=pvalue, batch=batch, min_pairs=min_pairs)
    check_correction(correction, family)
    alpha = check_unit_interval(alpha, "alpha")
    x, z, _ = split_scores(data, target=target, metrics=metrics, level=level)
    m = x.sizes[METRIC]
    if m < 2:
        raise ValueError(f"metrics must name at least two metrics to compare, got {list(map(str, x[METRIC].values))}")
    s = scores_of(x, z)
    given, how = thresholds(epsilon, s, level, variant)
    seed = resolve_seed(rng)
    pi, pk = np.triu_indices(m, 1)
    res = pair_draws(s, given, level=level, variant=variant, min_pairs=min_pairs, skipna=skipna, seed=seed,
                      n_resamples=n_resamples, batch=batch, pi=pi, pk=pk)
    coords = {**s.coords, METRIC: s.names}
    r = xr.DataArray(res.observed, dims=[*s.lead, METRIC], coords=coords)
    delta = r - r.rename({METRIC: OTHER}).assign_coords({OTHER: s.names})
    dist = xr.DataArray(res.draws, dims=[*s.lead, PAIR_DIM, RESAMPLE_DIM], coords=s.coords)
    dist = xr.apply_ufunc(_matrix, dist, input_core_dims=[[PAIR_DIM, RESAMPLE_DIM]],
                          output_core_dims=[[METRIC, OTHER, RESAMPLE_DIM]], dask="parallelized",
                          output_dtypes=[np.float64], kwargs={"pi": pi, "pk": pk, "m": m},
                          dask_gufunc_kwargs={"output_sizes": {METRIC: m, OTHER: m}})
    dist = dist.assign_coords({METRIC: s.names, OTHER: s.names})
    p = pair_pvalues(dist, delta, test="permutation", alternative=alternative, pvalue=pvalue)
    p_adj, significant, cluster = decide(p, r, delta, correction=correction, family=family,
                                         alternative=alternative, alpha=alpha)
    n = xr.DataArray(res.n_groups, dims=s.lead, coords=s.coords).broadcast_like(r)
    out = xr.Dataset({"correlation": r, "cluster": cluster, "delta": delta, "pvalue": p, "pvalue_corrected": p_adj,
                      "significant": significant,
                      "epsilon": xr.DataArray(res.epsilon, dims=[*s.lead, METRIC], coords=coords)}).assign_coords(n=n)
    if keep_distribution:
        out["distribution"] = dist
    out.attrs = {
        "test": "permutation", "target": target if isinstance(target, str) else [str(t) for t in target],
        "correction": correction or "none", "family": family, "alpha": float(alpha),
        "clusters": "greedy: a metric opens a new cluster when a member of the current one is significantly better",
        **pair_attrs(level=level, how=how, n_resamples=n_resamples, alternative=alternative, pvalue=pvalue, seed=seed,
                 batch=batch, per_batch=res.per_batch, skipna=skipna, min_pairs=min_pairs, variant=variant),
    }
    out["delta"].attrs["long_name"] = "correlation of metric minus that of other_metric"
    relation = {"greater": "better than", "less": "worse than"}.get(alternative, "differs from")
    out["pvalue"].attrs["long_name"] = f"p-value of H1: metric {relation} other_metric"
    out["epsilon"].attrs["long_name"] = "each metric's tie threshold (|metric difference| <= epsilon ties)"
    return out if s.lazy else compute_with_progress(out, True)
