"""Permutation test of the difference between two metrics' correlations with a target.

H0 (``alternative="greater"``): ``rho(X, Z) - rho(Y, Z) <= 0``. X and Y are first
standardised (z-scores over all their non-missing cells), then each draw swaps X and
Y under a 0/1 mask keyed by draw id (:func:`.draws.permutation_masks`): per
(system, input) cell for PERM-BOTH (Algorithm 2 of Deutsch, Dror & Roth 2021), per
system row (PERM-SYSTEMS), per input column (PERM-INPUTS), or -- for parity with
nlpstats -- a row flip XOR a column flip. A draw's statistic is
``r(X', Z) - r(Y', Z)`` at the requested level.

Draws are computed in batches of masks with array algebra, never one at a time:
Pearson at every level and Kendall's tau-b at input level use the mask-linear and
mask-bilinear kernels of :mod:`xcorrstat.kernels.swap` when X and Y are missing in
the same cells; other cases evaluate the batch of swapped matrices with the
vectorised level kernels. At system level those swapped means come from exact sums
of the raw scores mapped by the z-score map, so ties between system means survive
standardisation. Both routes give the statistic of the explicitly swapped matrices.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Literal

import numpy as np
import xarray as xr

from ..kernels import LEVELS, METHODS, corr, level_correlation
from ..kernels.correlation import KENDALL_VARIANTS
from ..kernels.exactsum import exact_parts
from ..kernels.scaling import pow2_exponent, pow2_normalise, remove_offset
from ..kernels.swap import prepare_swap, swap_supported
from ..options import OPTIONS
from ..schema import INPUT, SYSTEM, as_dataset, check_finite, select_scores, split_scores
from ..validation import check_batch, check_choice, check_min_pairs, check_positive_int, check_unit_interval
from .draws import batched_draws, permutation_masks, resolve_seed
from .engine import compute_with_progress, draws_within, raised_batch
from .sequential import settled

__all__ = ["permutation_test", "standardise", "permutation_pvalue"]

ALTERNATIVES = ("greater", "less", "two-sided")
PVALUES = ("plus-one", "fraction")
# |difference| below which a draw's statistic counts as equal to the observed one
TIE_TOLERANCE = 1e-12
_BLOCK_ELEMS = 32_000_000


#: The dims each permutation scheme swaps along.
SCHEME_DIMS = {"system": (SYSTEM,), "input": (INPUT,), "cells": (SYSTEM, INPUT), "system-xor-input": (SYSTEM, INPUT)}


def _scheme(permute) -> str:
    if isinstance(permute, str):
        dims = (permute,)
    else:
        dims = tuple(permute)
    if dims == ("system-xor-input",):
        return "system-xor-input"
    if set(dims) == {SYSTEM, INPUT} and len(dims) == 2:
        return "cells"
    if dims in ((SYSTEM,), (INPUT,)):
        return dims[0]
    raise ValueError(
        "permute must be 'system' (PERM-SYSTEMS), 'input' (PERM-INPUTS), ('system', 'input') "
        f"(PERM-BOTH, per cell) or 'system-xor-input' (nlpstats' 'both'), got {permute!r}"
    )


def standardise(a: np.ndarray) -> np.ndarray:
    """z-scores over all non-missing cells of each (..., S, I) matrix (population std)."""
    # exact: no square overflows or underflows, and no large offset rounds the mean
    a = remove_offset(pow2_normalise(a, axis=(-2, -1)))
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.nanmean(a, axis=(-2, -1), keepdims=True)
        std = np.nanstd(a, axis=(-2, -1), keepdims=True)
        return (a - mean) / std


def permutation_pvalue(draws, observed, *, alternative="greater", pvalue="plus-one"):
    """Monte-Carlo p-value over the defined draws (last axis); NaN if none is defined.

    ``plus-one``: ``(1 + #{as extreme}) / (1 + B)``, a valid test that is never 0;
    ``fraction``: ``#{as extreme} / B``. Two-sided compares ``|draw|`` with ``|observed|``.
    Draws within ``TIE_TOLERANCE`` of the observed value count as extreme.
    """
    count, b = _extreme_count(draws, observed, alternative)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = (1.0 + count) / (1.0 + b) if pvalue == "plus-one" else count / b
    return np.where((b > 0) & ~np.isnan(np.asarray(observed, dtype=np.float64)), p, np.nan)


def _extreme_count(draws, observed, alternative):
    """Draws at least as extreme as the observed value, and defined draws, over the last axis."""
    draws = np.asarray(draws, dtype=np.float64)
    observed = np.asarray(observed, dtype=np.float64)[..., None]
    defined = ~np.isnan(draws)
    with np.errstate(invalid="ignore"):
        if alternative == "greater":
            extreme = draws >= observed - TIE_TOLERANCE
        elif alternative == "less":
            extreme = draws <= observed + TIE_TOLERANCE
        else:
            extreme = np.abs(draws) >= np.abs(observed) - TIE_TOLERANCE
    return np.sum(extreme & defined, axis=-1), defined.sum(axis=-1)


def _affine(a):
    """Scale and shift of the z-score map of each (..., S, I) matrix: z = scale * a + shift."""
    e = pow2_exponent(a, axis=(-2, -1))  # a * 2**-e is exact and its square cannot overflow
    a = np.ldexp(a, -e)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.nanmean(a, axis=(-2, -1), keepdims=True)
        scale = 1.0 / np.nanstd(a, axis=(-2, -1), keepdims=True)
    return np.ldexp(scale, -e), -mean * scale


def _swapped_system_means(x, y, z, m):
    """Per-draw system means of X', Y' (z-scored) and Z over the cells both present: (..., B, S) each.

    Means are taken of the raw scores with exact sums, then mapped by the z-score
    map (means commute with it): systems whose raw sums tie keep tied means, which
    rank statistics need. Swapping rounded z-scores cell by cell would break them.
    """
    (sx, hx), (sy, hy) = _affine(x), _affine(y)
    vz = ~np.isnan(z)[..., None, :, :]
    vx = ~np.isnan(x)[..., None, :, :]
    vy = ~np.isnan(y)[..., None, :, :]
    keep = ~m
    parts = {k: exact_parts(np.where(np.isnan(a), 0.0, a), a.shape[-1])[..., None, :, :]
             for k, a in (("x", x), ("y", y), ("z", z))}

    def exact_sum(name, mask):
        return sum(np.sum(p * mask, axis=-1) for p in parts[name])  # each part's sum is exact

    out = []
    for from_x, from_y in ((keep & vx & vz, m & vy & vz), (m & vx & vz, keep & vy & vz)):
        cx, cy = from_x.sum(axis=-1), from_y.sum(axis=-1)
        count = cx + cy
        with np.errstate(invalid="ignore", divide="ignore"):  # a constant score has no z-score map
            sums = sx[..., None, 0, :] * exact_sum("x", from_x) + hx[..., None, 0, :] * cx
            sums = sums + (sy[..., None, 0, :] * exact_sum("y", from_y) + hy[..., None, 0, :] * cy)
            mean = np.where(count > 0, sums / count, np.nan)
            zmean = np.where(count > 0, exact_sum("z", from_x | from_y) / count, np.nan)
        out.append((mean, zmean))
    return out


def draw_deltas(x, y, z, kw):
    """A function ``deltas(m)`` giving delta' of every draw of a mask batch ``m`` (B, S, I) as (..., B).

    x, y, z are raw (..., S, I) scores of equal shape. Work that does not depend on
    the masks (z-scores, the kernels' precomputed pair matrices) is done once here.
    """
    level = kw["level"]
    zx, zy = standardise(x), standardise(y)  # cell-wise: equal raw cells stay equal
    missing = None
    if not kw["skipna"]:
        missing = (np.isnan(x) | np.isnan(y) | np.isnan(z)).any(axis=(-2, -1))[..., None]
    if swap_supported(zx, zy, level=level, method=kw["method"], variant=kw["variant"]):
        lead = x.shape[:-2]
        flat = [a.reshape((-1,) + a.shape[-2:]) for a in (zx, zy, z)]
        fast = prepare_swap(*flat, level=level, method=kw["method"], min_pairs=kw["min_pairs"],
                            variant=kw["variant"])

        def deltas(m):
            if m.shape[0] == 1:  # a one-row matrix product may round otherwise (BLAS gemv): use two rows
                return deltas(np.concatenate([m, m]))[..., :1]
            delta = fast(m).reshape(lead + (m.shape[0],))
            return delta if missing is None else np.where(missing, np.nan, delta)

        return deltas
    corr_kw = {k: kw[k] for k in ("method", "variant", "min_pairs")}

    def materialised(m):
        if level == "system":
            (mx, zmx), (my, zmy) = _swapped_system_means(x, y, z, m)
            delta = corr(mx, zmx, **corr_kw)[0] - corr(my, zmy, **corr_kw)[0]
        else:
            xs, ys, zs = zx[..., None, :, :], zy[..., None, :, :], z[..., None, :, :]
            xp = np.where(m, ys, xs)
            yp = np.where(m, xs, ys)
            zb = np.broadcast_to(zs, xp.shape)
            delta = level_correlation(xp, zb, **kw)[0] - level_correlation(yp, zb, **kw)[0]
        return delta if missing is None else np.where(missing, np.nan, delta)

    return materialised


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
    deltas = draw_deltas(x, y, z, kw)
    made = np.full(x.shape[:-2], n_resamples, dtype=np.int64)  # draws kept per test
    open_ = np.ones(x.shape[:-2], dtype=bool)
    masks = lambda ids: [permutation_masks(seed, ids, s, i, scheme)]  # noqa: E731  (B, S, I)
    # batches of draws, each one array computation; masks are made once per block of draw ids
    k = b = 0  # extreme and defined draws so far (early stopping), counted batch by batch
    for start, end, (m,) in batched_draws(np.arange(n_resamples), batch, masks):
        out[..., 1 + start : 1 + end] = deltas(m)
        if stop is not None and end < n_resamples:
            # each test stops at its own first settled look, whatever else shares the block
            alpha, risk, alternative = stop
            dk, db = _extreme_count(out[..., 1 + start : 1 + end], out[..., 0], alternative)
            k, b = k + dk, b + db
            done = settled(k, b, alpha=alpha, risk=risk, n_looks=-(-n_resamples // batch))
            done |= (b == 0) | np.isnan(out[..., 0])
            made = np.where(open_ & done, end, made)
            open_ &= ~done
            if not open_.any():
                break
    if stop is not None:
        unused = np.arange(n_resamples) >= made[..., None]
        out[..., 1 : 1 + n_resamples] = np.where(unused, np.nan, out[..., 1 : 1 + n_resamples])
    out[..., -1] = made
    return out


def permutation_test(
    data: xr.Dataset | xr.DataArray,
    *,
    x: Hashable,
    y: Hashable,
    target: Hashable,
    level: Literal["system", "input", "global"] = "system",
    method: Literal["pearson", "spearman", "kendall"] = "pearson",
    variant: Literal["b", "c", "a", "23", "acc23"] = "b",
    permute: str | tuple[str, ...] = ("system", "input"),
    n_resamples: int = 1000,
    alternative: Literal["greater", "less", "two-sided"] = "greater",
    rng: int | np.random.Generator | np.random.SeedSequence | None = None,
    pvalue: Literal["plus-one", "fraction"] = "plus-one",
    batch: int | None = None,
    keep_distribution: bool = False,
    skipna: bool = True,
    min_pairs: int | None = None,
    early_stop: float | None = None,
    risk: float = 1e-3,
    progress: bool = False,
) -> xr.Dataset:
    """Permutation test of ``rho(x, target) - rho(y, target)`` at a level.

    Parameters
    ----------
    data : Dataset or DataArray
        Scores with ``system`` and ``input`` dims.
    x, y : str
        The two metrics compared; H0 for ``"greater"``: x correlates no better than y.
    target : str
        Human score.
    level, method, variant, skipna, min_pairs
        As in :func:`xcorrstat.correlate`.
    permute : str or tuple
        ``("system", "input")`` = PERM-BOTH (swap per cell, the default),
        ``"system"`` = PERM-SYSTEMS, ``"input"`` = PERM-INPUTS, or
        ``"system-xor-input"`` (nlpstats' "both": a row flip XOR a column flip,
        which keeps more of the row/column structure than per-cell swaps).
    n_resamples : int
        Number of permutations.
    alternative : {"greater", "less", "two-sided"}
        Two-sided compares ``|delta'|`` with ``|delta|``.
    rng : int, Generator, SeedSequence or None
        Seed; the one used is in ``attrs["seed"]``.
    pvalue : {"plus-one", "fraction"}
        ``(1 + k) / (1 + B)`` (valid, never 0) or the paper's ``k / B``.
    batch : int, optional
        Permutations computed together (memory ~ batch x systems x inputs); raised
        to about 8 MB of temporaries on tiny data unless ``early_stop`` is on (then
        batches are the looks). Attrs record ``batch`` and ``draws_per_batch``; the
        numbers do not depend on them.
    keep_distribution : bool
        Also return every draw's delta along a ``resample`` dim.
    early_stop : float, optional
        Off by default. A level ``alpha``: stop drawing once the decision "p <= alpha"
        is settled -- after each batch (a look) an exact Clopper-Pearson interval for
        the Monte-Carlo p-value at confidence ``1 - risk / looks`` lies wholly below or
        above ``alpha`` (:mod:`xcorrstat.resampling.sequential`). The chance that the
        decision differs from the one with unlimited draws is then at most ``risk``.
        Each test stops at its own first settled look (draws after it are NaN and not
        counted), so results do not depend on chunking. Looks are every ``batch``
        draws (default 100 when early stopping is on).
    risk : float
        Resampling risk of ``early_stop``, strictly between 0 and 1.

    Returns
    -------
    Dataset
        ``delta`` (observed), ``pvalue``, ``n_resamples_used`` (draws made: all of
        them unless ``early_stop`` ended the test sooner), ``n_undefined`` (draws whose delta is
        undefined, left out) and optionally ``distribution``; attrs record every option.

    Examples
    --------
    >>> import xcorrstat
    >>> ds = xcorrstat.datasets.summeval()
    >>> res = ds.corrstat.permutation_test(x="qa_eval_f1", y="rouge_2_f1", target="expert_relevance",
    ...                                    level="system", n_resamples=200, rng=0)
    >>> 0 < float(res["pvalue"]) <= 1
    True
    """
    check_choice(level, LEVELS, "level")
    check_choice(method, METHODS, "method")
    check_choice(variant, KENDALL_VARIANTS, "variant", " (Kendall's variant)")
    check_choice(alternative, ALTERNATIVES, "alternative")
    check_choice(pvalue, PVALUES, "pvalue")
    batch_arg = batch = check_batch(batch)
    min_pairs = check_min_pairs(OPTIONS["min_pairs"] if min_pairs is None else min_pairs)
    n_resamples = check_positive_int(n_resamples, "n_resamples")
    scheme = _scheme(permute)
    if not isinstance(target, str):
        raise TypeError(f"target must be one score name, got {target!r}")
    ds = as_dataset(data)
    for argument, name in (("x", x), ("y", y)):
        if not isinstance(name, Hashable):
            raise TypeError(f"{argument} must be one score name, got {name!r}")
        select_scores(ds, [name], [], argument)
    if x == y:
        raise ValueError(f"x and y must be two different metrics, got x=y={x!r}")
    scores, z, _ = split_scores(ds, target=target, metrics=[x, y], level=level, along=SCHEME_DIMS[scheme])
    xs, ys = scores.isel(metric=0, drop=True), scores.isel(metric=1, drop=True)
    cells = xs.sizes[SYSTEM] * xs.sizes[INPUT]
    if batch is None:
        batch = draws_within(_BLOCK_ELEMS, 8 * cells)
    step = min(batch, n_resamples)  # draws computed together: at least ~8 MB unless batches are looks
    if early_stop is None:
        step = raised_batch(batch, 8 * cells, n_resamples)
    stop = None
    if early_stop is not None:
        stop = (check_unit_interval(early_stop, "early_stop", " (or None: off)"),
                check_unit_interval(risk, "risk"), alternative)
        if batch_arg is None:
            batch = step = min(batch, 100)
    seed = resolve_seed(rng)
    kw = dict(level=level, method=method, variant=variant, min_pairs=min_pairs, skipna=bool(skipna))
    lazy = any(v.chunks is not None for v in (xs, ys, z))
    if lazy:
        xs, ys, z = (v.chunk({SYSTEM: -1, INPUT: -1}) for v in (xs, ys, z))
    both = xr.apply_ufunc(
        _delta_block, xs, ys, z,
        input_core_dims=[[SYSTEM, INPUT]] * 3,
        output_core_dims=[["_draws"]],
        dask="parallelized",
        output_dtypes=[np.float64],
        dask_gufunc_kwargs={"output_sizes": {"_draws": 2 + n_resamples}},
        kwargs=dict(seed=seed, scheme=scheme, n_resamples=n_resamples, batch=step, kw=kw, stop=stop),
    )
    observed = both.isel(_draws=0, drop=True)
    draws = both.isel(_draws=slice(1, -1)).rename(_draws="resample")
    used = both.isel(_draws=-1, drop=True).astype(np.int64)
    p = xr.apply_ufunc(
        permutation_pvalue, draws, observed,
        input_core_dims=[["resample"], []],
        kwargs=dict(alternative=alternative, pvalue=pvalue),
        dask="parallelized", output_dtypes=[np.float64],
    )
    n_undefined = draws.isnull().sum("resample") - (n_resamples - used)
    out = xr.Dataset({"delta": observed, "pvalue": p, "n_resamples_used": used, "n_undefined": n_undefined})
    if keep_distribution:
        out["distribution"] = draws
    out.attrs = {
        "test": "permutation", "x": str(x), "y": str(y), "target": str(target),
        "level": level, "method": method, "variant": variant if method == "kendall" else "",
        "permute": scheme, "n_resamples": n_resamples, "alternative": alternative, "pvalue": pvalue,
        "early_stop": "off" if stop is None else f"alpha={stop[0]:g}, risk={stop[1]:g}",
        "seed": seed, "batch": batch, "draws_per_batch": step, "skipna": int(bool(skipna)),
        "min_pairs": min_pairs,
        "standardised": "x and y z-scored over all their non-missing cells",
    }
    out["delta"].attrs["long_name"] = f"{method} correlation of x minus that of y, {level} level"
    if lazy:
        return out
    return compute_with_progress(out, progress)
