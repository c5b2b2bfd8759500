"""The pair-outcome permutation test: mt-metrics-eval's ``PairwisePermutationSigDiff`` (WMT23 onwards).

:func:`xcorrstat.permutation_test` and :func:`xcorrstat.compare` run it with
``swap="pairs"``. Within each group of items -- each input's systems (``level="input"``,
mt-metrics-eval's ``average_by="item"``), each system's inputs (``"within_system"``,
``"sys"``) or all cells (``"global"``, ``"none"``) -- every pair of items gets a verdict
from each metric (the sign of its difference, a tie within the metric's own epsilon) and
from the target. A draw exchanges the two metrics' verdicts on a random half of the pairs
(a fair coin per pair) and recomputes the Kendall variant of both hybrid pair tables,
averaged over the groups. Each metric keeps its own epsilon, given or calibrated once on
the observed data (:func:`xcorrstat._kernels.ties.calibrate_epsilon`), so metrics on
different scales are compared without re-calibrating in every draw.

Draws are keyed by draw id (:func:`pair_swap_bits`) and shared by every pair of metrics;
the statistics come from :mod:`xcorrstat._kernels.pairoutcome` (products of the swap
bits with per-pair tables; exact integer sums). Cells without a target score are left
out, as mt-metrics-eval's ``_ReshapeAndFilter`` drops them; a metric score missing where
the target has one is an error. The computation is eager (Dask-backed data are loaded),
its draws run as Dask tasks.

The module also runs the score test that re-calibrates both metrics in every draw
(``permutation_test(swap="scores", epsilon="calibrate")``, mt-metrics-eval's
``PermutationSigDiff`` with ``corr_fcn=KendallWithTiesOpt``).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import dask
import numpy as np
import xarray as xr

from .._capabilities import check
from .._types import Alternative, Correction, Family, PValue, SwapUnit, Variant
from .._kernels.corrections import CORRECTIONS
from .._kernels.pairoutcome import LINEAR_VARIANTS, hybrid_deltas, prepare_pair_outcomes
from .._kernels.ties import TIE_VARIANTS, calibrate_epsilon
from .._mt.ties import MAX_GROUP, TIE_LEVELS, level_groups
from .._options import OPTIONS
from .._resampling.draws import DRAW_BLOCK, keyed_generator, permutation_masks, resolve_seed
from .._resampling.engine import BLAS_ONE_THREAD, RESAMPLE_DIM, block_elems
from .._resampling.pvalues import ALTERNATIVES, PVALUES, permutation_pvalue
from .._resampling.schemes import parse_permute, permutation_label
from .._resampling.swapstats import standardise as zscores
from .._schema import INPUT, METRIC, SYSTEM, metric_pair, split_scores
from .._validation import check_batch, check_choice, check_epsilon, check_min_pairs, check_positive_int
from .._validation import check_unit_interval
from .decisions import FAMILIES, OTHER, decide, pair_pvalues

__all__ = [
    "AVERAGE_BY", "PAIR_KEY", "PAIR_SCHEME", "SWAPS", "Swap", "check_pair_options", "compare_pair_outcomes",
    "dispatched", "pair_swap_bits", "run_permutation_test", "uses_pairs",
]

#: What a permutation draw swaps: the metrics' scores (cells, rows or columns) or the outcomes of pairs.
Swap = Literal["scores", "pairs"]
SWAPS: tuple[Swap, ...] = ("scores", "pairs")
#: The levels of the pair-outcome test and mt-metrics-eval's name of their grouping (``average_by``).
AVERAGE_BY = {"input": "item", "within_system": "sys", "global": "none"}
#: The label of the pair-outcome test in results' attrs.
PAIR_SCHEME = "PERM-PAIRS"
#: Pairs per keyed stream of swap bits.
PAIR_KEY = 1 << 13
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
    """Whether :func:`xcorrstat.permutation_test` hands the call to :func:`run_permutation_test`: the
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
    of this call for the next one.

    Examples
    --------
    >>> bits = pair_swap_bits(0, [0, 300], 10, 20)
    >>> bits.shape, bool((pair_swap_bits(0, [300], 0, 40)[0, 10:20] == bits[1]).all())
    ((2, 10), True)
    """
    ids = np.atleast_1d(np.asarray(draws, dtype=np.int64))
    if ids.size and ids.min() < 0:
        raise ValueError("draw ids must be non-negative")
    out = np.empty((ids.size, max(stop - start, 0)), dtype=np.uint8)
    kept = {} if cache is None else cache
    fresh = {}
    blocks = ids // DRAW_BLOCK
    keys = range(start // PAIR_KEY, -(-stop // PAIR_KEY)) if stop > start else range(0)
    for block in np.unique(blocks):
        mine = np.flatnonzero(blocks == block)
        rows = ids[mine] % DRAW_BLOCK
        for key in keys:
            bits = kept.get((int(block), key))
            if bits is None:
                g = keyed_generator(seed, _STREAM, int(block), key)
                bits = np.unpackbits(g.integers(0, 256, size=(DRAW_BLOCK, PAIR_KEY // 8), dtype=np.uint8), axis=1)
            fresh[(int(block), key)] = bits
            lo, hi = max(start, key * PAIR_KEY), min(stop, (key + 1) * PAIR_KEY)
            out[mine, lo - start:hi - start] = bits[rows, lo - key * PAIR_KEY:hi - key * PAIR_KEY]
    if cache is not None:
        cache.clear()
        cache.update(fresh)
    return out


@dataclass(frozen=True)
class _Scores:
    """One test's scores as arrays: x (*lead, M, S, I), z (*lead, S, I), and the lead dims' labels."""

    x: np.ndarray
    z: np.ndarray
    names: list[str]
    lead: list[Hashable]
    coords: dict


def _scores(x: xr.DataArray, z: xr.DataArray) -> _Scores:
    xb, zb = xr.broadcast(x, z)
    lead = [d for d in xb.dims if d not in (METRIC, SYSTEM, INPUT)]
    coords = {d: xb[d] for d in lead if d in xb.coords}
    xv = xb.transpose(*lead, METRIC, SYSTEM, INPUT).values.astype(np.float64)
    zv = zb.isel({METRIC: 0}, drop=True).transpose(*lead, SYSTEM, INPUT).values.astype(np.float64)
    return _Scores(xv, zv, [str(m) for m in x[METRIC].values], lead, coords)


def _epsilon_array(epsilon: object, s: _Scores) -> tuple[np.ndarray, str]:
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


def _calibrated(s: _Scores, level: str, variant: Variant) -> np.ndarray:
    """Each metric's epsilon maximising its acc_eq (tau_eq) on the observed data: (*lead, M)."""
    gx, _ = level_groups(s.x, s.x, level)
    gz, _ = level_groups(s.z, s.z, level)
    if gx.shape[-1] > MAX_GROUP:
        raise ValueError(f"epsilon='calibrate' at level={level!r} compares every pair of {gx.shape[-1]} items; "
                         f"more than {MAX_GROUP} items per group is not supported: give epsilon a number or "
                         "per-metric thresholds")
    flat_x = gx.reshape((-1,) + gx.shape[-3:])  # (L, M, G, n)
    flat_z = gz.reshape((-1, 1) + gz.shape[-2:])
    pairs = gx.shape[-2] * gx.shape[-1] * max(gx.shape[-1] - 1, 1) // 2
    step = max(1, block_elems() // (8 * pairs))  # pair tables of a few metrics at a time
    shape: tuple[int, ...] = flat_x.shape
    eps = np.empty(shape[:2])
    for label in range(shape[0]):
        for m in range(0, shape[1], step):
            got = calibrate_epsilon(flat_x[label, m:m + step], flat_z[label], variant=variant)[0]
            eps[label, m:m + step] = got
    return np.where(np.isnan(eps), 0.0, eps).reshape(gx.shape[:-2])  # no valid pair: nothing to calibrate


def _epsilons(epsilon: object, s: _Scores, level: str, variant: Variant) -> tuple[np.ndarray, str]:
    """Each metric's tie threshold (*lead, M) and how it was chosen (for attrs)."""
    if epsilon is None:
        epsilon = "calibrate" if variant in TIE_VARIANTS else 0.0
    if isinstance(epsilon, str) and epsilon == "calibrate":
        if variant not in TIE_VARIANTS:
            raise ValueError(f"epsilon='calibrate' maximises acc_eq or tau_eq, so it needs variant 'acc23' or '23'; "
                             f"with variant={variant!r} give epsilon a number (e.g. 0) or per-metric thresholds")
        return _calibrated(s, level, variant), "calibrate"
    return _epsilon_array(epsilon, s)


@dataclass(frozen=True)
class _Draws:
    observed: np.ndarray  # (*lead, M)
    draws: np.ndarray  # (*lead, n_pairs, n_resamples): delta' of the metric pairs (pi, pk)
    n_groups: np.ndarray  # (*lead,) groups averaged
    per_batch: int  # draws computed together


def _draw_plan(n_groups: int, m: int, variant: Variant, batch: int | None, n_resamples: int) -> tuple[int, int]:
    """``(draws per batch, pairs per block)``: temporaries within about block_elems() float64 elements."""
    q = 1 if variant in LINEAR_VARIANTS else 2
    b = DRAW_BLOCK if variant in LINEAR_VARIANTS else block_elems() // (4 * n_groups * q * m)
    b = int(max(1, min(b, DRAW_BLOCK, batch or DRAW_BLOCK, n_resamples)))
    pairs = block_elems() // (2 * b + 8 * q * m)  # swap bits and their float32 copy; pair tables
    return b, int(max(PAIR_KEY, pairs // PAIR_KEY * PAIR_KEY))


def _batches(n_resamples: int, b: int) -> list[np.ndarray]:
    """Draw ids in batches of at most ``b`` that never straddle a block of draw ids."""
    out = []
    for start in range(0, n_resamples, DRAW_BLOCK):
        ids = np.arange(start, min(start + DRAW_BLOCK, n_resamples))
        out += [ids[k:k + b] for k in range(0, ids.size, b)]
    return out


def _task(prep, ids: np.ndarray, seed: int, pi: np.ndarray, pk: np.ndarray) -> np.ndarray:
    cache: dict = {}

    def bits(draws: np.ndarray, start: int, stop: int) -> np.ndarray:
        return pair_swap_bits(seed, draws, start, stop, cache=cache)

    with BLAS_ONE_THREAD:  # one task per core; small batched products slow down with BLAS threads
        return hybrid_deltas(prep, ids, bits, pi, pk)


def _grouped(x: np.ndarray, z: np.ndarray, names: Sequence[str], level: str) -> tuple[np.ndarray, np.ndarray]:
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


def _pair_draws(s: _Scores, eps: np.ndarray, *, level: str, variant: Variant, min_pairs: int, skipna: bool,
                seed: int, n_resamples: int, batch: int | None, pi: np.ndarray, pk: np.ndarray) -> _Draws:
    """Observed statistic of every metric and the draws of delta' of metric pairs ``(pi, pk)``, per label."""
    outer, m = s.x.shape[:-3], len(s.names)
    observed = np.full(outer + (m,), np.nan)
    draws = np.full(outer + (pi.size, n_resamples), np.nan)
    used = np.zeros(outer, dtype=np.int64)
    per_batch = 1
    for idx in np.ndindex(*outer):
        gx, gz = _grouped(s.x[idx], s.z[idx], s.names, level)
        per_batch, max_pairs = _draw_plan(gx.shape[1], m, variant, batch, n_resamples)
        prep = prepare_pair_outcomes(gx, gz, eps[idx], variant=variant, min_pairs=min_pairs, max_pairs=max_pairs)
        tasks = [dask.delayed(_task)(prep, ids, seed, pi, pk) for ids in _batches(n_resamples, per_batch)]
        draws[idx] = np.concatenate(dask.compute(*tasks), axis=1)
        observed[idx], used[idx] = prep.observed, prep.n_groups
        if not skipna:  # any missing cell gives NaN, as in the score-swapping test
            gap = np.isnan(s.x[idx]).any(axis=(-2, -1)) | np.isnan(s.z[idx]).any()
            observed[idx] = np.where(gap, np.nan, observed[idx])
            draws[idx] = np.where((gap[pi] | gap[pk])[:, None], np.nan, draws[idx])
    return _Draws(observed, draws, used, per_batch)


def _attrs(*, level: str, how: str, n_resamples: int, alternative: str, pvalue: str, seed: int,
           batch: int | None, per_batch: int, skipna: bool, min_pairs: int, variant: str) -> dict:
    return {
        "level": level, "method": "kendall", "variant": variant, "swap": "pairs", "epsilon": how,
        "grouping": TIE_LEVELS[level], "average_by": AVERAGE_BY[level], "n_resamples": n_resamples,
        "alternative": alternative, "pvalue": pvalue, "rng": seed, "batch": per_batch if batch is None else batch,
        "draws_per_batch": per_batch, "skipna": int(skipna), "min_pairs": min_pairs, "scheme": PAIR_SCHEME,
    }


def _common_iv(operation, level, method, variant, permute, standardise, early_stop, n_resamples, alternative,
               pvalue, batch, min_pairs) -> tuple[int, int | None, int]:
    check_pair_options(operation=operation, level=level, method=method, variant=variant, permute=permute, standardise=standardise,
                       early_stop=early_stop)
    check_choice(alternative, ALTERNATIVES, "alternative")
    check_choice(pvalue, PVALUES, "pvalue")
    return (check_positive_int(n_resamples, "n_resamples"), check_batch(batch),
            check_min_pairs(OPTIONS["min_pairs"] if min_pairs is None else min_pairs))


def _best(mats: np.ndarray, gz: np.ndarray, level: str, variant: Variant) -> np.ndarray:
    """The calibrated acc_eq (tau_eq) of each (..., S, I) matrix."""
    return calibrate_epsilon(level_groups(mats, mats, level)[0], gz, variant=variant)[1]


def _recalibrated_task(zx: np.ndarray, zy: np.ndarray, gz: np.ndarray, ids: np.ndarray, *, level: str,
                       variant: Variant, seed: int, scheme: SwapUnit) -> np.ndarray:
    m = permutation_masks(seed, ids, zx.shape[0], zx.shape[1], scheme)
    return _best(np.where(m, zy, zx), gz, level, variant) - _best(np.where(m, zx, zy), gz, level, variant)


def _recalibrated_draws(s: _Scores, *, level: str, variant: Variant, scheme: SwapUnit, seed: int,
                        n_resamples: int, batch: int | None, skipna: bool) -> tuple[np.ndarray, np.ndarray, int]:
    """The score test with per-draw calibration: observed (*lead, 2) and draws' delta' (*lead, n)."""
    outer = s.x.shape[:-3]
    observed, draws = np.full(outer + (2,), np.nan), np.full(outer + (n_resamples,), np.nan)
    b = 1
    kw = {"level": level, "variant": variant, "seed": seed, "scheme": scheme}
    for idx in np.ndindex(*outer):
        _, gz = _grouped(s.x[idx], s.z[idx], s.names, level)
        zx, zy = zscores(s.x[idx])  # mt-metrics-eval z-scores each metric over all its cells
        pairs = gz.size * max(gz.shape[-1] - 1, 1) // 2
        b = int(max(1, min(DRAW_BLOCK, batch or DRAW_BLOCK, block_elems() // (16 * pairs), n_resamples)))
        observed[idx] = _best(np.stack([zx, zy]), gz, level, variant)
        tasks = [dask.delayed(_recalibrated_task)(zx, zy, gz, ids, **kw) for ids in _batches(n_resamples, b)]
        draws[idx] = np.concatenate(dask.compute(*tasks))
        if not skipna and (np.isnan(s.x[idx]).any() or np.isnan(s.z[idx]).any()):
            observed[idx], draws[idx] = np.nan, np.nan
    return observed, draws, b


def _two_metric_iv(data, x, y, target, level, method, variant, permute, standardise, early_stop, swap,
                   n_resamples, alternative, pvalue, batch, min_pairs) -> tuple[_Scores, int, int | None, int]:
    operation = "permutation_test(test=Permutation(swap='pairs'))"
    if swap == "scores":  # re-calibrated in every draw
        operation = "permutation_test(test=Permutation(epsilon='calibrate'))"
        check(operation, level=level, method=method, variant=variant)
        if standardise != "cells" or early_stop is not None:
            raise ValueError("swap='scores' with epsilon='calibrate' takes standardise='cells' and early_stop=None")
        parse_permute(permute)
    n_resamples, batch, min_pairs = _common_iv(operation, level, method, variant, permute if swap == "pairs" else
                                               ("system", "input"), standardise, early_stop, n_resamples,
                                               alternative, pvalue, batch, min_pairs)
    ds = metric_pair(data, target=target, x=x, y=y)
    scores, z, _ = split_scores(ds, target=target, metrics=[x, y], level=level)
    return _scores(scores, z), n_resamples, batch, min_pairs


def run_permutation_test(data, *, x, y, target, level, method, variant, permute, standardise, early_stop, swap,
                         epsilon, n_resamples, alternative, rng, pvalue, batch, keep_distribution, skipna,
                         min_pairs) -> xr.Dataset:
    """:func:`xcorrstat.permutation_test` with ``swap="pairs"``, or ``swap="scores"`` with
    ``epsilon="calibrate"`` (see its docstring)."""
    s, n_resamples, batch, min_pairs = _two_metric_iv(data, x, y, target, level, method, variant, permute,
                                                      standardise, early_stop, swap, n_resamples, alternative,
                                                      pvalue, batch, min_pairs)
    seed = resolve_seed(rng)
    if swap == "pairs":
        eps, how = _epsilons(epsilon, s, level, variant)
        res = _pair_draws(s, eps, level=level, variant=variant, min_pairs=min_pairs, skipna=skipna, seed=seed,
                          n_resamples=n_resamples, batch=batch, pi=np.array([0]), pk=np.array([1]))
        observed, draws, per_batch = res.observed, res.draws[..., 0, :], res.per_batch
        attrs = _attrs(level=level, how=how, n_resamples=n_resamples, alternative=alternative, pvalue=pvalue,
                       seed=seed, batch=batch, per_batch=per_batch, skipna=skipna, min_pairs=min_pairs,
                       variant=variant)
    else:
        scheme = parse_permute(permute)
        eps = _calibrated(s, level, variant)
        observed, draws, per_batch = _recalibrated_draws(s, level=level, variant=variant, scheme=scheme,
                                                         seed=seed, n_resamples=n_resamples, batch=batch,
                                                         skipna=skipna)
        attrs = {"level": level, "method": "kendall", "variant": variant, "swap": "scores",
                 "epsilon": "calibrate in every draw", "grouping": TIE_LEVELS[level], "permute": scheme,
                 "scheme": permutation_label(scheme), "standardise": "cells", "n_resamples": n_resamples,
                 "alternative": alternative, "pvalue": pvalue, "rng": seed, "draws_per_batch": per_batch,
                 "batch": per_batch if batch is None else batch, "skipna": int(skipna)}
    delta = observed[..., 0] - observed[..., 1]
    p = permutation_pvalue(draws, delta, alternative=alternative, pvalue=pvalue)
    dims = s.lead
    out = xr.Dataset({
        "delta": (dims, delta), "pvalue": (dims, p), "n_resamples_used": (dims, np.full(delta.shape, n_resamples)),
        "n_undefined": (dims, np.isnan(draws).sum(axis=-1)), "epsilon_x": (dims, eps[..., 0]),
        "epsilon_y": (dims, eps[..., 1]),
    }, coords=s.coords)
    if keep_distribution:
        out["distribution"] = ((*dims, RESAMPLE_DIM), draws)
    out.attrs = {"test": "permutation", "x": str(x), "y": str(y), "target": str(target), **attrs}
    out["delta"].attrs["long_name"] = f"Kendall {variant} of x minus that of y, {level} level, own epsilons"
    return out


def _matrix(draws: np.ndarray, pi: np.ndarray, pk: np.ndarray, m: int) -> np.ndarray:
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
    n_resamples, batch, min_pairs = _common_iv("compare(test=Permutation(swap='pairs'))", level, method, variant, permute,
                                               standardise, None, n_resamples, alternative, pvalue, batch,
                                               min_pairs)
    check_choice(family, FAMILIES, "family")
    if correction is not None:
        check_choice(correction, CORRECTIONS, "correction", " or None")
    alpha = check_unit_interval(alpha, "alpha")
    x, z, _ = split_scores(data, target=target, metrics=metrics, level=level)
    m = x.sizes[METRIC]
    if m < 2:
        raise ValueError(f"metrics must name at least two metrics to compare, got {list(map(str, x[METRIC].values))}")
    s = _scores(x, z)
    eps, how = _epsilons(epsilon, s, level, variant)
    seed = resolve_seed(rng)
    pi, pk = np.triu_indices(m, 1)
    res = _pair_draws(s, eps, level=level, variant=variant, min_pairs=min_pairs, skipna=skipna, seed=seed,
                      n_resamples=n_resamples, batch=batch, pi=pi, pk=pk)
    coords = {**s.coords, METRIC: s.names}
    r = xr.DataArray(res.observed, dims=[*s.lead, METRIC], coords=coords)
    delta = r - r.rename({METRIC: OTHER}).assign_coords({OTHER: s.names})
    dist = xr.DataArray(_matrix(res.draws, pi, pk, m), dims=[*s.lead, METRIC, OTHER, RESAMPLE_DIM],
                        coords={**coords, OTHER: s.names})
    p = pair_pvalues(dist, delta, test="permutation", alternative=alternative, pvalue=pvalue)
    p_adj, significant, cluster = decide(p, r, delta, correction=correction, family=family,
                                         alternative=alternative, alpha=alpha)
    n = xr.DataArray(np.broadcast_to(res.n_groups[..., None], r.shape), dims=r.dims, coords=r.coords)
    out = xr.Dataset({"correlation": r, "cluster": cluster, "delta": delta, "pvalue": p, "pvalue_corrected": p_adj,
                      "significant": significant, "epsilon": ([*s.lead, METRIC], eps)}).assign_coords(n=n)
    if keep_distribution:
        out["distribution"] = dist
    out.attrs = {
        "test": "permutation", "target": target if isinstance(target, str) else [str(t) for t in target],
        "correction": correction or "none", "family": family, "alpha": float(alpha),
        "clusters": "greedy: a metric opens a new cluster when a member of the current one is significantly better",
        **_attrs(level=level, how=how, n_resamples=n_resamples, alternative=alternative, pvalue=pvalue, seed=seed,
                 batch=batch, per_batch=res.per_batch, skipna=skipna, min_pairs=min_pairs, variant=variant),
    }
    out["delta"].attrs["long_name"] = "correlation of metric minus that of other_metric"
    relation = {"greater": "better than", "less": "worse than"}.get(alternative, "differs from")
    out["pvalue"].attrs["long_name"] = f"p-value of H1: metric {relation} other_metric"
    out["epsilon"].attrs["long_name"] = "each metric's tie threshold (|metric difference| <= epsilon ties)"
    return out
