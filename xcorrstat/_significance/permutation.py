"""Permutation test of the difference between two metrics' correlations with a target.

H0 (``alternative="greater"``): ``rho(X, Z) - rho(Y, Z) <= 0``. X and Y are first
standardised (z-scores over all their non-missing cells), then each draw swaps X and
Y under a 0/1 mask keyed by draw id (:func:`.draws.permutation_masks`): per
(system, input) cell for PERM-BOTH (Algorithm 2 of Deutsch, Dror & Roth 2021), per
system row (PERM-SYSTEMS), per input column (PERM-INPUTS), or -- for parity with
nlpstats -- a row flip XOR a column flip. A draw's statistic is
``r(X', Z) - r(Y', Z)`` at the requested level (system, input, global or within-system: every swap unit
applies at every level).

Draws are computed in batches of masks with array algebra, never one at a time:
Pearson at every level and Kendall's tau-b at input level use the mask-linear and
mask-bilinear kernels of :mod:`xcorrstat._kernels.swap` when X and Y are missing in
the same cells; other cases evaluate the batch of swapped matrices with the
vectorised level kernels. At system level those swapped means come from exact sums
of the raw scores mapped by the z-score map, so ties between system means survive
standardisation. Both routes give the statistic of the explicitly swapped matrices.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import xarray as xr

from .._notes import add_notes
from .._docs import fill_doc
from .._resampling.settings import Permutation, as_settings, single_test_draws
from .._types import Alternative, Average, Level, PValue, Seed, Standardise, Statistic, SwapUnit, Variant
from .._capabilities import check, check_refinements
from .._kernels import level_correlation
from .._kernels.custom import is_own, own_name
from .._options import OPTIONS
from .._resampling.draws import DRAW_BLOCK, BlockMemo, fill_draws, permutation_masks, resolve_seed
from .._resampling.engine import (BLAS_ONE_THREAD, block_elems, compute_with_progress, draws_within, progress_line,
                                  raised_batch, runs_in_one_block)
from .._resampling.pvalues import ALTERNATIVES, PVALUES, extreme_count, permutation_pvalue
from .._resampling.schemes import (
    SCHEME_DIMS,
    STANDARDISED,
    check_standardise,
    drawn_scheme,
    parse_permute,
    permutation_label,
)
from .._resampling.sequential import settled
from .._resampling.swapstats import draw_deltas, standardise as zscore_cells
from .._schema import INPUT, SYSTEM, check_finite
from .._selection import metric_pair, split_scores, system_mean_grid
from .._validation import (
    check_average,
    check_batch,
    check_choice,
    check_min_pairs,
    check_draw_count,
    check_unit_interval,
)
from .common import pair_notes
from .pairoutcome import Swap, dispatched
from .tietests import run_permutation_test
from .._warn import one_call

__all__ = ["own_scale", "permutation_test"]


def own_scale(scores: xr.DataArray) -> xr.DataArray:
    """Scores z-scored over their cells (the permutation tests' standardisation): what a function of
    one's own sees in a permutation test -- each metric's and the target's -- so its observed value and
    its draws agree and all are on one scale."""
    if scores.chunks is not None:
        scores = scores.chunk({SYSTEM: -1, INPUT: -1})
    return xr.apply_ufunc(zscore_cells, scores, input_core_dims=[[SYSTEM, INPUT]],
                          output_core_dims=[[SYSTEM, INPUT]], dask="parallelized", output_dtypes=[np.float64])


class _EarlyStop:
    """``after(start, end)`` of :func:`~xcorrstat._resampling.draws.fill_draws`: stop once every decision is settled.

    Counts the extreme and defined draws of each test batch by batch; a test's
    ``made`` is the end of its first settled look (each test stops on its own,
    whatever else shares the block).
    """

    def __init__(self, out: np.ndarray, n_resamples: int, batch: int, alpha: float, risk: float,
                 alternative: Alternative) -> None:
        self.out, self.n_resamples, self.batch = out, n_resamples, batch
        self.alpha, self.risk, self.alternative = alpha, risk, alternative
        self.made = np.full(out.shape[:-1], n_resamples, dtype=np.int64)  # draws kept per test
        self.open = np.ones(out.shape[:-1], dtype=bool)
        self.k: np.ndarray | int = 0  # extreme draws so far
        self.b: np.ndarray | int = 0  # defined draws so far

    def __call__(self, start: int, end: int) -> bool:
        if end >= self.n_resamples:
            return False
        out = self.out
        dk, db = extreme_count(out[..., 1 + start : 1 + end], out[..., 0], self.alternative)
        self.k, self.b = self.k + dk, self.b + db
        done = settled(self.k, self.b, alpha=self.alpha, risk=self.risk,
                       n_looks=-(-self.n_resamples // self.batch))
        done |= (self.b == 0) | np.isnan(out[..., 0])
        self.made = np.where(self.open & done, end, self.made)
        self.open &= ~done
        return not self.open.any()


def _delta_block(x, y, z, *, seed, scheme, n_resamples, batch, kw, stop=None):
    """Observed delta, the draws' deltas and the number of draws made: returns (..., 2 + B).

    With ``stop = (alpha, risk, alternative)`` drawing ends after the first batch at
    which every decision at ``alpha`` is settled (:mod:`.sequential`); draws not made are NaN.
    """
    check_finite(x, "x scores")
    check_finite(y, "y scores")
    check_finite(z, "target scores")
    x, y, z = np.broadcast_arrays(x, y, z)
    out = np.full(x.shape[:-2] + (2 + n_resamples,), np.nan)
    # correlations are unchanged by the z-score map, so the observed delta uses the raw scores
    out[..., 0] = level_correlation(x, z, **kw)[0] - level_correlation(y, z, **kw)[0]
    s, i = x.shape[-2:]
    memo = BlockMemo()  # a block of draw ids two batches cut is drawn once
    masks = lambda ids: [permutation_masks(seed, ids, s, i, scheme, memo=memo)]  # noqa: E731  (B, S, I)
    after = None if stop is None else _EarlyStop(out, n_resamples, batch, *stop)
    # batches of draws, each one array computation; masks are made once per block of draw ids. BLAS on one
    # thread, as in every task of draws: eager data run here, in the calling thread, and the kernels' many
    # small products (one per input) are several times slower with BLAS threads
    with BLAS_ONE_THREAD:
        fill_draws(out[..., 1:-1], np.arange(n_resamples), batch, masks, draw_deltas(x, y, z, kw), after=after)
    if after is None:
        out[..., -1] = n_resamples
        return out
    unused = np.arange(n_resamples) >= after.made[..., None]
    out[..., 1 : 1 + n_resamples] = np.where(unused, np.nan, out[..., 1 : 1 + n_resamples])
    out[..., -1] = after.made
    return out


@dataclass(frozen=True)
class _Options:
    """Normalised arguments of :func:`permutation_test`."""

    xs: xr.DataArray
    ys: xr.DataArray
    z: xr.DataArray
    kw: dict
    scheme: SwapUnit
    n_resamples: int
    batch: int  # draws per batch, as recorded in attrs
    step: int  # draws computed together
    stop: tuple[float, float, Alternative] | None
    seed: int
    standardise: Standardise


def _draw_plan(cells: int, batch: int | None, n_resamples: int, early: bool) -> tuple[int, int]:
    """``(batch, step)``: the batch recorded in attrs and the draws computed together.

    At least ~8 MB of temporaries per batch unless batches are the looks of early stopping
    (then 100 draws by default).
    """
    given = batch
    if batch is None:
        batch = draws_within(block_elems(), 8 * cells)
    step = min(batch, n_resamples)
    if not early:
        step = raised_batch(batch, 8 * cells, n_resamples)
        if step > DRAW_BLOCK:  # whole blocks of draw ids: a batch takes its block's masks as they are
            step -= step % DRAW_BLOCK
    elif given is None:
        batch = step = min(batch, 100)
    return batch, step


def _permutation_test_iv(data: xr.Dataset | xr.DataArray, draws: Mapping[str, Any], *, x: Hashable, y: Hashable,
                         target: Hashable, level: Level, method: Statistic, variant: Variant,
                         alternative: Alternative, skipna: bool, min_pairs: int | None,
                         average: Average) -> _Options:
    """Check and normalise every argument of :func:`permutation_test` (``draws``: its
    :class:`~xcorrstat.Permutation`'s fields, :func:`~xcorrstat._resampling.settings.single_test_draws`);
    split the scores."""
    permute, n_resamples, rng, pvalue = draws["permute"], draws["n_resamples"], draws["rng"], draws["pvalue"]
    early_stop, risk, standardise = draws["early_stop"], draws.get("risk", 1e-3), draws["standardise"]
    batch = OPTIONS["batch"]
    check("permutation_test", level=level, method=method, variant=variant)
    check_refinements("permutation_test", level=level, method=method, variant=variant, average=average)
    average = check_average(average)
    check_choice(alternative, ALTERNATIVES, "alternative")
    check_choice(pvalue, PVALUES, "pvalue")
    batch = check_batch(batch)
    min_pairs = check_min_pairs(OPTIONS["min_pairs"] if min_pairs is None else min_pairs)
    n_resamples = check_draw_count(n_resamples, "n_resamples")
    scheme = drawn_scheme(data, parse_permute(permute))  # PERM-SYSTEMS on system-level data
    standardise = check_standardise(standardise, level=level, scheme=scheme)
    ds = metric_pair(data, target=target, x=x, y=y)
    scores, z, _ = split_scores(ds, target=target, metrics=[x, y], level=level, along=SCHEME_DIMS[scheme])
    xs, ys = scores.isel(metric=0, drop=True), scores.isel(metric=1, drop=True)
    if standardise == "system-means":  # mt-metrics-eval's test: the system means are the data
        xs, ys, z = (system_mean_grid(v) for v in (xs, ys, z))
    stop = None
    if early_stop is not None:
        stop = (check_unit_interval(early_stop, "early_stop", " (or None: off)"),
                check_unit_interval(risk, "risk"), alternative)
    batch, step = _draw_plan(xs.sizes[SYSTEM] * xs.sizes[INPUT], batch, n_resamples, stop is not None)
    kw: dict[str, Any] = dict(level=level, method=method, variant=variant, min_pairs=min_pairs, skipna=bool(skipna))
    if average != "macro":
        kw["average"] = average
    return _Options(xs=xs, ys=ys, z=z, kw=kw, scheme=scheme, n_resamples=n_resamples, batch=batch, step=step,
                    stop=stop, seed=resolve_seed(rng), standardise=standardise)


def _attrs(o: _Options, x, y, target, alternative, pvalue) -> dict:
    kw = o.kw
    return {
        "test": "permutation", "x": str(x), "y": str(y), "target": str(target),
        "level": kw["level"], "method": own_name(kw["method"]), "variant": kw["variant"] if kw["method"] == "kendall" else "",
        "permute": o.scheme, "n_resamples": o.n_resamples, "alternative": alternative, "pvalue": pvalue,
        "early_stop": "off" if o.stop is None else f"alpha={o.stop[0]:g}, risk={o.stop[1]:g}",
        "rng": o.seed, "batch": o.batch, "draws_per_batch": o.step, "skipna": int(kw["skipna"]),
        "min_pairs": kw["min_pairs"],
        **({"average": kw.get("average", "macro")} if kw["level"] in ("input", "within_system") else {}),
        "standardise": o.standardise,
        "standardised": STANDARDISED[o.standardise] + (" (and the target too: a statistic of one's own sees "
                                                       "z-scores)" if is_own(kw["method"]) else ""),
        "scheme": permutation_label(o.scheme),
    }


@one_call
@fill_doc
def permutation_test(
    data: xr.Dataset | xr.DataArray,
    *,
    x: Hashable,
    y: Hashable,
    target: Hashable,
    test: Permutation | Literal["permutation"] = "permutation",
    level: Level = "system",
    method: Statistic = "pearson",
    variant: Variant = "b",
    average: Average = "macro",
    alternative: Alternative = "greater",
    skipna: bool = True,
    min_pairs: int | None = None,
) -> xr.Dataset:
    """Permutation test of ``rho(x, target) - rho(y, target)`` at a level.

    Parameters
    ----------
    %(data)s
    x, y : str
        The two metrics compared; H0 for ``"greater"``: x correlates no better than y.
    %(target)s
    test : Permutation, default Permutation()
        The draws: which dims are swapped (``permute``; every swap unit applies at every
        level), ``n_resamples`` (default 1,000), ``rng``, what a draw swaps (``swap``:
        ``"scores"``, the metrics' standardised scores; ``"pairs"``, the two metrics' verdicts
        on pairs of items within each group, each at its own ``epsilon`` -- mt-metrics-eval's
        ``PairwisePermutationSigDiff``, WMT's segment-level test since 2023; it needs
        ``method="kendall"`` and a variant of ``"acc23"``, ``"23"``, ``"b"``, ``"a"``, and
        ``level="input"`` groups each input's systems, ``"within_system"`` each system's
        inputs, ``"global"`` all cells), ``pvalue``, ``keep_distribution``, and ``early_stop``
        at ``risk``: stop drawing once the decision "p <= early_stop" is settled -- after each
        look of 100 draws an exact Clopper-Pearson interval for the Monte-Carlo p-value at
        confidence ``1 - risk / looks`` lies wholly below or above it
        (:mod:`xcorrstat._resampling.sequential`); draws after it are NaN and not counted.
    %(level)s
    %(method)s
    %(variant)s
    %(average)s
    %(alternative)s
    %(skipna)s
    %(min_pairs)s

    Returns
    -------
    Dataset
        ``delta`` (observed), ``pvalue``, ``n_resamples_used`` (draws made: all of
        them unless ``early_stop`` ended the test sooner), ``n_undefined`` (draws whose delta is
        undefined, left out) and optionally ``distribution``; attrs record every option
        (``permute`` the swap unit, ``scheme`` its label, e.g. ``"PERM-BOTH"``). With
        ``swap="pairs"`` also ``epsilon_x`` and ``epsilon_y``, and attrs ``swap``, ``epsilon``,
        ``grouping`` and ``average_by``; ``scheme`` is ``"PERM-PAIRS"``.

    Examples
    --------
    >>> import xcorrstat
    >>> ds = xcorrstat.datasets.summeval()
    >>> res = xcorrstat.permutation_test(ds, x="qa_eval_f1", y="rouge_2_f1", target="expert_relevance",
    ...                                  test=xcorrstat.Permutation(n_resamples=200, rng=0))
    >>> 0 < float(res["pvalue"]) <= 1, res.attrs["scheme"]
    (True, 'PERM-BOTH')
    >>> wmt = xcorrstat.permutation_test(ds, x="qa_eval_f1", y="rouge_2_f1", target="expert_relevance",
    ...                                  level="input", method="kendall", variant="acc23",
    ...                                  test=xcorrstat.Permutation(swap="pairs", n_resamples=200, rng=0))
    >>> wmt.attrs["scheme"], wmt.attrs["average_by"], wmt.attrs["epsilon"]
    ('PERM-PAIRS', 'item', 'calibrate')
    """
    drawn = single_test_draws(as_settings(test, "test", (Permutation,)))  # the draws' settings, checked once
    if dispatched(drawn["swap"], drawn["epsilon"]):
        if average != "macro":
            raise ValueError(f"average={average!r} is an option of swap='scores'; the pair-outcome test "
                             "averages the groups equally, as mt-metrics-eval does")
        drawn.pop("risk", None)
        res = run_permutation_test(data, x=x, y=y, target=target, level=level, method=method, variant=variant,
                                   alternative=alternative, batch=OPTIONS["batch"], skipna=skipna,
                                   min_pairs=min_pairs, **drawn)
        add_notes(res.attrs, *pair_notes(data, x=x, y=y, target=target))
        return res
    o = _permutation_test_iv(data, drawn, x=x, y=y, target=target, level=level, method=method, variant=variant,
                             alternative=alternative, skipna=skipna, min_pairs=min_pairs, average=average)
    xs, ys, z = o.xs, o.ys, o.z
    if is_own(method):  # the statistic sees z-scores, as the draws swap them, in the observed delta too
        xs, ys, z = own_scale(xs), own_scale(ys), own_scale(z)
    lazy = any(v.chunks is not None for v in (xs, ys, z))
    if lazy:
        xs, ys, z = (v.chunk({SYSTEM: -1, INPUT: -1}) for v in (xs, ys, z))
    elif not runs_in_one_block(max(xs.size, ys.size, z.size) * o.n_resamples):  # eager draws, here: seconds
        progress_line(f"permutation test of {x} against {y}: {o.n_resamples:,} draws of {permutation_label(o.scheme)} "
                      f"at {level} level" + ("" if o.stop is None else ", until the decision is settled"))
    both = xr.apply_ufunc(
        _delta_block, xs, ys, z,
        input_core_dims=[[SYSTEM, INPUT]] * 3,
        output_core_dims=[["_draws"]],
        dask="parallelized",
        output_dtypes=[np.float64],
        dask_gufunc_kwargs={"output_sizes": {"_draws": 2 + o.n_resamples}},
        kwargs=dict(seed=o.seed, scheme=o.scheme, n_resamples=o.n_resamples, batch=o.step, kw=o.kw, stop=o.stop),
    )
    observed = both.isel(_draws=0, drop=True)
    draws = both.isel(_draws=slice(1, -1)).rename(_draws="resample")
    used = both.isel(_draws=-1, drop=True).astype(np.int64)
    p = xr.apply_ufunc(
        permutation_pvalue, draws, observed,
        input_core_dims=[["resample"], []],
        kwargs=dict(alternative=alternative, pvalue=drawn["pvalue"]),
        dask="parallelized", output_dtypes=[np.float64],
    )
    n_undefined = draws.isnull().sum("resample") - (o.n_resamples - used)
    out = xr.Dataset({"delta": observed, "pvalue": p, "n_resamples_used": used, "n_undefined": n_undefined})
    if drawn["keep_distribution"]:
        out["distribution"] = draws
    out.attrs = _attrs(o, x, y, target, alternative, drawn["pvalue"])
    add_notes(out.attrs, *pair_notes(data, x=x, y=y, target=target))
    out["delta"].attrs["long_name"] = f"{method} correlation of x minus that of y, {level} level"
    if lazy:
        return out
    return compute_with_progress(out, True)
