"""How often does a confidence interval cover the correlation of new data? (split-half simulation)

Deutsch, Dror & Roth (2021, Table 1): in each trial the systems and the inputs are
split at random into two halves, A and B. An interval is built on the quadrant
A systems x A inputs and checked against the correlation on the disjoint quadrant
B x B. A method whose intervals contain that held-out correlation about as often
as their confidence level says describes the variation of new systems and new
inputs; one that covers it far less often is too narrow for that purpose.

Every trial is a set of count vectors over the full data: the quadrant's
bootstrap draws put zero weight outside A, and the held-out correlation is the
level correlation under the 0/1 weights of B. So trials x resamples are one batch
of draws for :func:`xcorrstat._resampling.statistics.resampled_level_correlation`,
and blocks of trials are Dask tasks. Trial t's split and draws come from
``SeedSequence(seed, spawn_key=(t,))`` only, so the result does not depend on how
trials are blocked or scheduled.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any, NamedTuple, cast

import numpy as np
import xarray as xr

from .._docs import fill_doc
from .._types import Levels, Method, Seed, Variant
from .._capabilities import check_levels, check_refinements
from .._kernels import level_correlation
from .._kernels.levels import fisher_n
from .._options import OPTIONS
from .._resampling.draws import (
    MAX_DRAW_TASKS,
    bootstrap_indices,
    keyed_generator,
    resolve_seed,
)
from .._resampling.engine import compute_with_progress
from .._resampling.intervals import fisher_ci, percentile_ci
from .._resampling.schemes import BOOTSTRAP_SCHEMES
from .._resampling.statistics import resampled_level_correlation
from .._schema import INPUT, SYSTEM, check_finite
from .._selection import split_scores
from .._validation import (
    check_min_pairs,
    check_draw_count,
    check_positive_int,
    check_unit_interval,
)
from ._labels import parse_labels
from .._warn import one_call

__all__ = ["CI_METHODS", "ci_coverage", "split_trial"]

#: Interval methods of :func:`ci_coverage`, and the dims each bootstrap resamples
#: (the BOOT-* labels of :mod:`xcorrstat._resampling.schemes`, matched in any case).
CI_METHODS: dict[str, tuple[str, ...] | None] = {"fisher": None, **BOOTSTRAP_SCHEMES}


def split_trial(seed: int, trial: int, n_systems: int, n_inputs: int,
                n_resamples: int) -> tuple[np.ndarray, ...]:
    """Trial ``trial``'s split and bootstrap draws, from ``SeedSequence(seed, spawn_key=(trial,))`` alone.

    Returns ``(a_sys, b_sys, a_inp, b_inp, sys_draws, inp_draws)``: the sorted label
    positions of the two halves (A gets ``n // 2``, B the rest) and, for the
    quadrant A x A, ``n_resamples`` draws with replacement of positions *within* A
    (``a_sys[sys_draws]`` are the drawn systems). The draws are keyed by draw id
    (:func:`xcorrstat._resampling.draws.bootstrap_indices`, with a seed the trial's
    generator gives after the split), so the first k draws of an n-draw trial are
    the draws of a k-draw trial.

    Examples
    --------
    >>> a_sys, b_sys, a_inp, b_inp, sys_draws, inp_draws = split_trial(0, 3, 5, 6, 10)
    >>> len(a_sys), len(b_sys), sys_draws.shape
    (2, 3, (10, 2))
    """
    gen = keyed_generator(seed, trial)
    ps, pi = gen.permutation(n_systems), gen.permutation(n_inputs)
    hs, hi = n_systems // 2, n_inputs // 2
    a_sys, b_sys = np.sort(ps[:hs]), np.sort(ps[hs:])
    a_inp, b_inp = np.sort(pi[:hi]), np.sort(pi[hi:])
    draw_seed = int(gen.integers(2**63))
    sys_draws, inp_draws = bootstrap_indices(draw_seed, np.arange(n_resamples), [hs, hi])
    return a_sys, b_sys, a_inp, b_inp, sys_draws, inp_draws


def _quadrant(a, sys_pos, inp_pos):
    return a[..., sys_pos, :][..., inp_pos]


def _one_trial(x, z, split, *, level, methods, confidence_level, kw):
    """(M, K, 3): [low, high, held-out correlation] of each method for one trial.

    The quadrants are gathered first, so each bootstrap works on (S/2, I/2) matrices;
    a dim that is not resampled keeps its fixed-unit fast path.
    """
    a_sys, b_sys, a_inp, b_inp, sys_draws, inp_draws = split
    xa, za = _quadrant(x, a_sys, a_inp), _quadrant(z, a_sys, a_inp)
    xb, zb = _quadrant(x, b_sys, b_inp), _quadrant(z, b_sys, b_inp)
    point_kw = dict(kw, complete_inputs=False)
    truth, _ = level_correlation(xb, zb, level=level, **point_kw)
    out = np.full(x.shape[:-2] + (len(methods), 3), np.nan)
    out[..., 2] = truth[..., None]
    for k, name in enumerate(methods):
        dims = CI_METHODS[name]
        if dims is None:
            r, n = level_correlation(xa, za, level=level, **point_kw)
            n = fisher_n(~np.isnan(xa) & ~np.isnan(za), n, level)  # as fisher()
            low, high = fisher_ci(r, n, method=kw["method"], confidence_level=confidence_level)
        else:
            r, _ = resampled_level_correlation(
                xa, za, level=level, sys_idx=sys_draws if SYSTEM in dims else None,
                inp_idx=inp_draws if INPUT in dims else None, **kw)
            low, high = percentile_ci(r, confidence_level)
        out[..., k, 0] = low
        out[..., k, 1] = high
    return out


def _trial_block(x, z, trials, *, seed, level, methods, n_resamples, confidence_level, kw):
    """(M, K, T, 3) array of [low, high, held-out correlation] for each method k and trial t."""
    s, i = x.shape[-2:]
    # one trial at a time, each a vectorised computation over all its draws and metrics
    parts = [_one_trial(x, z, split_trial(seed, t, s, i, n_resamples), level=level, methods=methods,
                        confidence_level=confidence_level, kw=kw) for t in trials]
    return np.stack(parts, axis=-2)


def _default_trial_block(n_trials: int) -> int:
    # a few dozen tasks: enough to keep every core busy, few enough to schedule cheaply
    return int(max(1, min(50, -(-n_trials // 32))))


class _Coverage(NamedTuple):
    """The normalised arguments of :func:`ci_coverage`."""

    xv: np.ndarray  # (M, S, I) metric scores
    zv: np.ndarray  # (S, I) target scores
    metrics: np.ndarray  # the metric labels
    levels: list[str]
    methods: list[str]  # CI_METHODS keys
    names: list[str]  # the methods as the result labels them
    n_trials: int
    n_resamples: int
    confidence_level: float
    min_pairs: int
    seed: int
    block: int  # trials per task
    kw: dict[str, Any]  # options of the correlation


def _ci_coverage_iv(data: xr.Dataset | xr.DataArray, *, target: Hashable, metric: Hashable | Sequence[Hashable],
                    level: Levels, method: Method, variant: Variant, methods: Sequence[str], n_trials: int,
                    n_resamples: int, confidence_level: float, rng: Seed, skipna: bool,
                    min_pairs: int | None) -> _Coverage:
    levels: list[str] = list(check_levels("diagnostics.ci_coverage", level, method=method, variant=variant))
    check_refinements("diagnostics.ci_coverage", level=levels, method=method, variant=variant)
    labels, names = parse_labels(methods, tuple(CI_METHODS), "methods")
    n_trials = check_positive_int(n_trials, "n_trials")
    n_resamples = check_draw_count(n_resamples, "n_resamples")
    confidence_level = check_unit_interval(confidence_level, "confidence_level")
    min_pairs = check_min_pairs(OPTIONS["min_pairs"] if min_pairs is None else min_pairs)
    seed = resolve_seed(rng)
    metrics = [metric] if isinstance(metric, str) else list(cast(Sequence[Hashable], metric))
    x, z, _ = split_scores(data, target=target, metrics=metrics, level=level)
    extra = [d for d in x.dims if d not in ("metric", SYSTEM, INPUT)]
    if extra or z.ndim != 2:
        raise ValueError(f"ci_coverage needs data with only system and input dims (and metric); "
                         f"select one label of {extra or list(z.dims)} first")
    x = x.transpose("metric", SYSTEM, INPUT)
    z = z.transpose(SYSTEM, INPUT)
    xv = np.asarray(x.values, dtype=np.float64)
    zv = np.asarray(z.values, dtype=np.float64)
    check_finite(xv, "metric scores")
    check_finite(zv, "target scores")
    s, i = zv.shape
    if s < 4 or i < 2:
        raise ValueError(f"ci_coverage needs at least 4 systems and 2 inputs to split in halves, got {s} x {i}")
    block = OPTIONS["trial_batch"] or _default_trial_block(n_trials)
    block = max(block, -(-n_trials // MAX_DRAW_TASKS))  # a bounded number of tasks
    kw = dict(method=method, variant=variant, min_pairs=int(min_pairs), skipna=bool(skipna))
    return _Coverage(xv, zv, x["metric"].values, levels, labels,
                     names, n_trials, n_resamples,
                     confidence_level, min_pairs, seed, block, kw)


def _coverage_trials(a: _Coverage, progress: bool) -> np.ndarray:
    """(M, L, K, T, 3): [low, high, held-out correlation] per metric, level, method and trial."""
    import dask
    import dask.array as da

    per_level = []
    for lev in a.levels:
        parts = []
        for start in range(0, a.n_trials, a.block):
            trials = range(start, min(start + a.block, a.n_trials))
            task = dask.delayed(_trial_block)(a.xv, a.zv, trials, seed=a.seed, level=lev, methods=a.methods,
                                              n_resamples=a.n_resamples, confidence_level=a.confidence_level,
                                              kw=a.kw)
            parts.append(da.from_delayed(task, shape=(len(a.metrics), len(a.methods), len(trials), 3),
                                         dtype=np.float64))
        per_level.append(da.concatenate(parts, axis=2))
    return compute_with_progress(da.stack(per_level, axis=1), bool(progress))


def _coverage_result(values: np.ndarray, a: _Coverage, target: Hashable, method: str, variant: str,
                     skipna: bool) -> xr.Dataset:
    """The shares of trials inside, above and below the intervals, with every option in attrs."""
    low, high, truth = values[..., 0], values[..., 1], values[..., 2]
    ok = ~np.isnan(low) & ~np.isnan(high) & ~np.isnan(truth)
    count = ok.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        inside = np.where(ok, (truth >= low) & (truth <= high), False).sum(axis=-1) / count
        above = np.where(ok, truth > high, False).sum(axis=-1) / count
        below = np.where(ok, truth < low, False).sum(axis=-1) / count
        width = np.where(ok, high - low, 0.0).sum(axis=-1) / count
        se = np.sqrt(inside * (1 - inside) / count)
    dims = ("metric", "level", "ci_method")
    coords = {"metric": a.metrics, "level": a.levels, "ci_method": a.names}
    out = xr.Dataset(
        {"contained": (dims, inside), "too_high": (dims, above), "too_low": (dims, below),
         "mc_se": (dims, se), "width": (dims, width), "n_trials": (dims, count.astype(np.int64))},
        coords=coords,
    )
    out["contained"].attrs["long_name"] = "share of trials whose held-out (B x B) correlation is in the interval"
    out["too_high"].attrs["long_name"] = "share of trials whose held-out correlation is above the interval"
    out["too_low"].attrs["long_name"] = "share of trials whose held-out correlation is below the interval"
    out["mc_se"].attrs["long_name"] = "Monte-Carlo standard error of contained"
    out.attrs = {
        "statistic": "split-half coverage of confidence intervals", "target": str(target),
        "method": method, "variant": variant if method == "kendall" else "", "n_trials": a.n_trials,
        "n_resamples": a.n_resamples, "confidence_level": a.confidence_level, "rng": a.seed,
        "split": "systems and inputs each split in halves A (n // 2) and B (the rest); interval on A x A, "
                 "checked against the correlation on B x B",
        "min_pairs": int(a.min_pairs), "skipna": int(bool(skipna)),
    }
    return out


@one_call
@fill_doc
def ci_coverage(
    data: xr.Dataset | xr.DataArray,
    *,
    target: Hashable,
    metrics: Hashable | Sequence[Hashable] | None = None,
    level: Levels = ("system", "input"),
    method: Method = "pearson",
    variant: Variant = "b",
    methods: Sequence[str] = ("fisher", "BOOT-SYSTEMS", "BOOT-INPUTS", "BOOT-BOTH"),
    n_trials: int = 1000,
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    rng: Seed = None,
    skipna: bool = True,
    min_pairs: int | None = None,
) -> xr.Dataset:
    """Coverage of confidence intervals on held-out data, by split-half simulation.

    Each trial splits the systems and the inputs at random into halves A and B,
    builds each interval on the quadrant A x A and checks whether the correlation
    on the quadrant B x B falls inside it (Deutsch, Dror & Roth, 2021, Table 1).

    Parameters
    ----------
    %(data)s
    %(target)s
    metrics : str or list of str
        Metric(s); several metrics share the trials and draws.
    level : str or list of str, default ("system", "input")
        ``"system"``, ``"input"``, ``"global"`` or ``"within_system"``, or a list of them.
    %(method)s
    variant : {"b", "c"}
        Kendall's tau variant (the Fisher interval's constants are known for these two).
    methods : sequence of str
        From ``"fisher"`` and the bootstrap labels ``"BOOT-SYSTEMS"``,
        ``"BOOT-INPUTS"`` and ``"BOOT-BOTH"`` (percentile intervals resampling the
        systems, the inputs or both; any case). The result labels each method by its
        canonical spelling, so results of different calls align.
    n_trials : int, default 1000
        Random splits.
    n_resamples : int, default 1000
        Bootstrap draws per trial and interval.
    %(confidence_level)s
    rng : int, Generator, SeedSequence or None
        Seed; trial t uses ``SeedSequence(seed, spawn_key=(t,))`` alone.
    %(skipna)s
    %(min_pairs)s

    Returns
    -------
    Dataset
        Over (``metric``, ``level``, ``ci_method``): ``contained`` (share of trials whose
        held-out correlation lies in the interval), ``too_high`` (the held-out value is
        above the interval), ``too_low``, ``mc_se`` (Monte-Carlo standard error of
        ``contained``), ``width`` (mean interval width) and ``n_trials`` (trials where
        both the interval and the held-out correlation are defined; the others are left
        out of the shares). Attrs record every option and the seed.

    Examples
    --------
    >>> import xcorrstat
    >>> ds = xcorrstat.datasets.summeval()
    >>> cov = xcorrstat.diagnostics.ci_coverage(ds, target="expert_relevance", metrics="qa_eval_f1",
    ...                                         n_trials=50, n_resamples=200, rng=0)
    >>> sorted(cov["contained"].dims), cov["ci_method"].values.tolist()
    (['ci_method', 'level', 'metric'], ['fisher', 'BOOT-SYSTEMS', 'BOOT-INPUTS', 'BOOT-BOTH'])
    """
    progress = True
    if metrics is None:
        raise TypeError("ci_coverage() needs metrics=: the metric(s) whose intervals are checked")
    a = _ci_coverage_iv(data, target=target, metric=metrics, level=level, method=method, variant=variant,
                        methods=methods, n_trials=n_trials, n_resamples=n_resamples,
                        confidence_level=confidence_level, rng=rng, skipna=skipna, min_pairs=min_pairs)
    values = _coverage_trials(a, progress)  # (M, L, K, T, 3)
    return _coverage_result(values, a, target, method, variant, skipna)
