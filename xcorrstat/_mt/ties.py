"""Tie calibration on labelled data: the epsilon at which each metric's acc_eq (or tau_eq) is highest.

The numerical work is :func:`xcorrstat._kernels.mt.ties.calibrate_epsilon` (one sort and
one cumulative sum per metric); this module lays the scores out in groups by level.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Hashable, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any

import numpy as np
import xarray as xr

from .._capabilities import check
from .._docs import fill_doc
from .._types import Level, Seed, TieVariant
from .._kernels.levels import system_means
from .._kernels.mt.ties import calibrate_epsilon, sample_pairs, valid_pairs
from .._resampling.draws import resolve_seed, seeded_generator
from .._resampling.engine import blocks_of_cells
from .._schema import INPUT, METRIC, SYSTEM
from .._selection import aligned_scores
from .._warn import one_call

__all__ = ["MAX_GROUP", "N_MEANING", "TIE_LEVELS", "TieVariant", "calibrate_ties", "group_shape", "level_groups"]


#: Levels of :func:`calibrate_ties` and the groups whose pairs they compare.
TIE_LEVELS = {
    "input": "pairs of systems within each input (mt-metrics-eval: average_by='item')",
    "within_system": "pairs of inputs within each system (average_by='sys')",
    "global": "pairs of all (system, input) cells (average_by='none')",
    "system": "pairs of per-system means",
}
MAX_GROUP = 5000  # items per group: pairs grow with its square


def level_groups(x: np.ndarray, z: np.ndarray, level: str) -> tuple[np.ndarray, np.ndarray]:
    """(..., G, n) groups of items for a level, from (..., S, I) scores."""
    if level == "input":
        return np.swapaxes(x, -1, -2), np.swapaxes(z, -1, -2)
    if level == "within_system":
        return x, z
    if level == "global":
        return x.reshape(x.shape[:-2] + (1, -1)), np.broadcast_to(z, x.shape).reshape(x.shape[:-2] + (1, -1))
    mx, mz = system_means(x, z)
    return mx[..., None, :], mz[..., None, :]


#: What the ``n`` of a :func:`calibrate_ties` result counts at each level (as ``correlate``'s ``n``).
N_MEANING = {
    "input": "inputs averaged (those with a valid pair)",
    "within_system": "systems averaged (those with a valid pair)",
    "global": "valid cells",
    "system": "systems with a mean",
}


def _units(gx: np.ndarray, gz: np.ndarray, level: str, keep: np.ndarray | None) -> np.ndarray:
    """The ``n`` of a result (..., G, n) groups: the groups with a (kept) valid pair at input and
    within-system level, the valid items of the one group otherwise."""
    if level in ("input", "within_system"):
        pairs = valid_pairs(gx, gz)
        if keep is not None:
            pairs = pairs & keep
        return pairs.any(axis=-1).sum(axis=-1)
    return (~np.isnan(gx) & ~np.isnan(gz)).sum(axis=(-2, -1))


def _check_sample_rate(sample_rate) -> float:
    ok = isinstance(sample_rate, (int, float, np.integer, np.floating)) and not isinstance(sample_rate, bool)
    if not ok or not 0.0 < float(sample_rate) <= 1.0:
        raise ValueError(f"sample_rate must be a number in (0, 1] (the share of pairs kept), got {sample_rate!r}")
    return float(sample_rate)


#: ``random(k)``: k uniforms in [0, 1) in one call.
Uniforms = Callable[[int], np.ndarray]


def _seeded_uniforms(seed: int) -> Uniforms:
    """The uniforms of the stream of ``seed``, from its start."""
    return seeded_generator(seed).random


def _restored_uniforms(state: dict[str, Any] | tuple[Any, ...]) -> Uniforms:
    """The uniforms of a numpy ``RandomState`` restored to ``state``."""
    legacy = np.random.RandomState()
    legacy.set_state(state)
    return legacy.random_sample


def _uniform_source(rng, *, lazy: bool = False) -> tuple[Callable[[], Uniforms], dict]:
    """``(source, attrs)``: ``source()`` gives ``random``, where ``random(k)`` gives k uniforms in one call;
    attrs record the seed.

    ``rng`` is read as everywhere in the library (:func:`~xcorrstat._resampling.draws.resolve_seed`,
    the stream :func:`~xcorrstat._resampling.draws.seeded_generator` of the seed), except a numpy
    ``RandomState``: mt-metrics-eval draws from numpy's legacy global generator, so to reproduce it
    a RandomState is drawn from as it stands. For a ``lazy`` result ``source`` is a picklable
    function of a seed or of a copy of the RandomState's state (which is then not advanced), so
    every computation of the result draws the same numbers.

    Examples
    --------
    >>> source, attrs = _uniform_source(7, lazy=True)
    >>> bool((source()(3) == np.random.default_rng(7).random(3)).all()), attrs
    (True, {'rng': 7})
    """
    if isinstance(rng, np.random.RandomState):
        # numpy's legacy generator (what np.random.seed drives): its stream is used as it stands
        drawn = {"rng": "numpy.random.RandomState"}
        if lazy:
            return partial(_restored_uniforms, rng.get_state()), drawn
        return lambda: rng.random_sample, drawn
    seed = resolve_seed(rng)
    return partial(_seeded_uniforms, seed), {"rng": seed}


def _sampled_pairs(gx: np.ndarray, gz: np.ndarray, metric_axis: int | None, sample_rate: float,
                   random: Uniforms) -> np.ndarray:
    """The kept pairs (..., G, P_g): one draw per pair some metric (along ``metric_axis``) can use."""
    valid = valid_pairs(gx, gz)
    # every metric is calibrated on the same draws: a pair gets one if some metric can use it
    eligible = valid if metric_axis is None else valid.any(axis=metric_axis, keepdims=True)
    return np.broadcast_to(sample_pairs(eligible, sample_rate, random), valid.shape)


def _calibrate_ties_iv(data, target, metrics, level, variant, sample_rate, rng):
    """Every option of :func:`calibrate_ties`, checked once: the sample rate, aligned scores X
    ``(*batch, system, input)``, the batch dims, the level's groups of X and Z, and the source of the
    pair draws (:func:`_uniform_source`) with its attrs (None and no attrs when every pair is used;
    ``rng`` is then ignored)."""
    check("calibrate_ties", level=level, variant=variant)
    sample_rate = _check_sample_rate(sample_rate)
    x, z, batch = aligned_scores(data, target=target, metrics=metrics, level=level)
    items = group_shape(level, x.sizes[SYSTEM], x.sizes[INPUT])[1]
    if items > MAX_GROUP:
        raise ValueError(f"level={level!r} compares groups of {items} items ({items ** 2 // 2} "
                         f"pairs each); more than {MAX_GROUP} items per group is not supported, use "
                         f"level='input' or 'within_system'")
    lazy = x.chunks is not None or z.chunks is not None
    source, drawn = _uniform_source(rng, lazy=lazy) if sample_rate < 1 else (None, {})
    return sample_rate, x, z, batch, source, drawn


def group_shape(level: str, systems: int, inputs: int) -> tuple[int, int]:
    """``(groups, items per group)`` of :func:`level_groups` for ``systems x inputs`` cells.

    Examples
    --------
    >>> group_shape("input", 3, 5), group_shape("global", 3, 5)
    ((5, 3), (1, 15))
    """
    return {"input": (inputs, systems), "within_system": (systems, inputs), "global": (1, systems * inputs),
            "system": (1, systems)}[level]


def _calibrated_block(x: np.ndarray, z: np.ndarray, *, level: str, variant: TieVariant, sample_rate: float = 1.0,
                      source: Callable[[], Uniforms] | None = None,
                      metric_axis: int | None = None) -> tuple[np.ndarray, ...]:
    """Aligned (..., S, I) scores -> epsilon, correlation, n, thresholds and objective over (...); with a
    ``source`` of draws, on the pairs :func:`_sampled_pairs` keeps (the metrics along ``metric_axis``)."""
    gx, gz = level_groups(x.astype(np.float64), z.astype(np.float64), level)
    keep = None if source is None else _sampled_pairs(gx, gz, metric_axis, sample_rate, source())
    eps, best, thresholds, objective = _calibrate_in_blocks(gx, gz, variant, keep)
    return eps, best, _units(gx, gz, level, keep), thresholds, objective


def _calibrated(x: xr.DataArray, z: xr.DataArray, batch: list, level: str, variant: TieVariant,
                sample_rate: float, source: Callable[[], Uniforms] | None) -> tuple[xr.DataArray, ...]:
    """Epsilon, correlation, n, thresholds and objective (the last two over ``candidate``) of aligned
    scores: lazy for Dask-backed scores (one task, which draws the kept pairs and calibrates the rows
    on threads as the eager call does)."""
    # X and Z have every batch dim in the order of ``batch``, in a block as in the eager array
    metric_axis = batch.index(METRIC) if METRIC in batch else None
    options: dict[str, Any] = {"level": level, "variant": variant, "sample_rate": sample_rate, "source": source,
                               "metric_axis": metric_axis}
    if x.chunks is not None or z.chunks is not None:
        groups, items = group_shape(level, x.sizes[SYSTEM], x.sizes[INPUT])
        # one block: the curve's running sums see the rows in the layout of the eager call, and the
        # pair draws fall on the pairs of the whole batch in the order of the eager call, bit for bit
        return blocks_of_cells(_calibrated_block, x.chunk(-1), z.chunk(-1), **options,
                               outputs=[((), np.float64), ((), np.float64), ((), np.int64),
                                        (("candidate",), np.float64), (("candidate",), np.float64)],
                               sizes={"candidate": groups * (items * (items - 1) // 2) + 1})
    parts = _calibrated_block(x.values, z.values, **options)
    dims = [batch] * 3 + [[*batch, "candidate"]] * 2
    return tuple(xr.DataArray(p, dims=d) for p, d in zip(parts, dims))


#: Pairs in one block of calibrations (a block's pair tables take about 40 bytes a pair).
BLOCK_PAIRS = 2_000_000


def _calibrate_in_blocks(gx: np.ndarray, gz: np.ndarray, variant: TieVariant,
                         keep: np.ndarray | None) -> tuple[np.ndarray, ...]:
    """:func:`calibrate_epsilon` over blocks of the leading (metric, extra-dim) rows, on threads: memory
    bounded by ``BLOCK_PAIRS`` pairs a thread whatever the number of metrics; each row's result is the
    same as in one call."""
    gx, gz = np.broadcast_arrays(gx, gz)
    lead, (groups, items) = gx.shape[:-2], gx.shape[-2:]
    rows = int(np.prod(lead, dtype=np.int64))
    fx, fz = gx.reshape(rows, groups, items), gz.reshape(rows, groups, items)
    fk = None if keep is None else np.broadcast_to(keep, (*lead, *np.shape(keep)[-2:])).reshape(rows, groups, -1)
    per = max(1, BLOCK_PAIRS // max(1, groups * items * (items - 1) // 2))
    blocks = [slice(i, i + per) for i in range(0, rows, per)] or [slice(0, 0)]

    def one(block: slice) -> tuple[np.ndarray, ...]:
        return calibrate_epsilon(fx[block], fz[block], variant=variant, keep=None if fk is None else fk[block])

    with ThreadPoolExecutor(max_workers=min(len(blocks), os.cpu_count() or 1)) as pool:
        parts = list(pool.map(one, blocks))
    return tuple(np.concatenate([p[i] for p in parts]).reshape(lead + parts[0][i].shape[1:]) for i in range(4))


@one_call
@fill_doc
def calibrate_ties(
    data: xr.Dataset | xr.DataArray,
    *,
    target: Hashable,
    metrics: Sequence[Hashable] | None = None,
    level: Level = "input",
    variant: TieVariant = "acc23",
    keep_curve: bool = False,
    sample_rate: float = 1.0,
    rng: Seed | np.random.RandomState = None,
) -> xr.Dataset:
    """The metric-tie threshold epsilon that maximises pairwise accuracy with ties, per metric.

    A pair of items is a metric tie when the metric's scores differ by at most
    epsilon (gold ties need exact equality). acc_eq = (concordant pairs + pairs tied in
    both) / pairs, computed per group and averaged over the groups with at least one
    pair; one epsilon is shared by all groups (Deutsch et al., 2023, "Ties Matter").
    tau_eq = 2 acc_eq - 1 has the same optimum.

    Parameters
    ----------
    %(data)s
        Extra dims are calibrated label by label.
    %(target)s
    %(metrics)s
    level : {"input", "within_system", "global", "system"}, default "input"
        The groups: each input's systems; each system's inputs; all cells as one
        group; or the per-system means as one group.
    variant : {"acc23", "23"}
        Report acc_eq or tau_eq at the optimum.
    keep_curve : bool, default False
        Also return ``threshold`` and ``objective`` over a ``candidate`` dim: the
        objective at every candidate threshold (NaN padding where a value repeats).
    sample_rate : float, default 1.0
        In (0, 1]: the share of pairs to use, mt-metrics-eval's ``sample_rate``. Below 1,
        each valid pair is kept when a uniform draw is ``<= sample_rate``, and the candidate
        thresholds and the objective come from the kept pairs only (see Notes).
    rng : int, Generator, SeedSequence, RandomState or None
        Source of the pair draws when ``sample_rate < 1`` (ignored at 1). An int seed ``s``
        draws from ``np.random.default_rng(s)``, a Generator or SeedSequence gives such a
        seed (recorded in attrs), None fresh entropy. A ``numpy.random.RandomState`` is
        drawn from as it stands (to reproduce mt-metrics-eval, which draws from numpy's
        legacy global generator): ``RandomState(123)`` gives what ``np.random.seed(123)``
        gives mt-metrics-eval. With Dask-backed data the result stays lazy and the pairs are
        drawn when it is computed, the same numbers as the eager call's: from the seed, or
        from a copy of the RandomState's state at the call (which is then not advanced).

    Returns
    -------
    Dataset
        ``epsilon`` (the smallest optimal threshold: 0 or a pair's ``|metric
        difference|``) and ``correlation`` (acc_eq or tau_eq there) over ``metric``, with
        the coordinate ``n``; NaN where no group has a valid pair. Pairs with a missing score are
        left out, and a group without a valid pair (an input without any target score, a
        system without any at within-system level) is left out of the average: ``n``
        counts the groups averaged at input and within-system level (the valid cells at
        global level, the systems with a mean at system level), as ``correlate``'s ``n``.
        ``correlation`` is computed from each group's integer counts at ``epsilon``: it is
        what :func:`xcorrstat.correlate` gives with ``method="kendall"``, this
        ``variant``, ``epsilon`` and ``min_pairs=2`` (exactly: 1.0 when every pair agrees).

    Notes
    -----
    Exact: every candidate threshold is evaluated, by sorting all pairs once by
    their metric difference and accumulating each pair's change of agreement, so
    the search needs no pair sampling; ``sample_rate`` is there to reproduce
    mt-metrics-eval's sampled results. Thresholds are compared on exact values (integer
    counts over a common denominator), so of two thresholds with the same objective the
    smaller is taken whatever the rounding of the running sum; the ``objective`` curve of
    ``keep_curve`` is that running sum (within about one rounding error per pair).

    With ``sample_rate < 1`` the pairs are drawn as mt-metrics-eval draws them: one
    uniform per valid pair, group by group in group order (the inputs at level
    ``"input"``, the systems at ``"within_system"``) and within a group in row-major
    ``i < j`` order over its valid items; a group left without a kept pair drops out of
    the average. All draws come from one call of the generator, which gives the same
    numbers as one call per pair. Every metric is calibrated on the same draws: a pair
    gets one draw if some metric can use it, so metrics with scores on the same cells are
    calibrated on the same sample of pairs, and each metric then gets the draws
    mt-metrics-eval would give it after the same seeding (calibrate a metric on its own
    to reproduce mt-metrics-eval when the metrics miss different cells). Each label of
    an extra dim draws from the start of the same stream.

    Examples
    --------
    >>> import xcorrstat
    >>> ds = xcorrstat.datasets.summeval()
    >>> res = xcorrstat.calibrate_ties(ds, target="expert_relevance", metrics=["rouge_2_f1", "qa_eval_f1"])
    >>> list(res.data_vars), int(res["n"].sel(metric="qa_eval_f1"))
    (['epsilon', 'correlation'], 100)
    >>> half = xcorrstat.calibrate_ties(ds, target="expert_relevance", metrics=["qa_eval_f1"], sample_rate=0.5, rng=0)
    >>> half.attrs["sample_rate"], half.attrs["rng"]
    (0.5, 0)
    """
    sample_rate, x, z, batch, source, drawn = _calibrate_ties_iv(data, target, metrics, level, variant,
                                                                 sample_rate, rng)
    eps, best, n, thresholds, objective = _calibrated(x, z, batch, level, variant, sample_rate, source)
    out = xr.Dataset({"epsilon": eps, "correlation": best}, coords={d: x[d] for d in batch}).assign_coords(n=n)
    if keep_curve:
        out["threshold"] = thresholds
        out["objective"] = objective
    out["epsilon"].attrs["long_name"] = "metric-tie threshold maximising the objective (|dm| <= epsilon ties)"
    out["n"].attrs["long_name"] = N_MEANING[level]
    out["correlation"].attrs["long_name"] = {"acc23": "acc_eq", "23": "tau_eq"}[variant] + " at epsilon"
    out.attrs = {"statistic": "tie calibration", "target": str(target), "level": level, "variant": variant,
                 "groups": TIE_LEVELS[level], "objective": "mean over groups with a pair of the group's value",
                 "sample_rate": sample_rate, **drawn}
    return out
