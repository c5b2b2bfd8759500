"""Every pair of metrics compared at once: deltas, p-values, corrections, significance clusters.

``compare`` runs one test over all ordered pairs (metric, other_metric). The draws are
shared: a permutation draw's masks and a bootstrap draw's indices come from the draw
id and the seed only, so every pair sees the same draws, and pair (i, k) gives exactly
the result of the two-metric test with the same ``rng``.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np
import xarray as xr

from .._docs import fill_doc
from .._types import (
    Alternative,
    Average,
    Correction,
    Family,
    Level,
    PValue,
    Seed,
    Standardise,
    Statistic,
    SwapUnit,
    Test,
    Variant,
)
from .._correlation.estimates import level_statistic
from .._capabilities import check, check_refinements
from .._kernels.custom import is_own, own_name
from .._kernels.dependent import williams
from .._options import OPTIONS
from .._resampling.draws import resolve_seed
from .._resampling.engine import RESAMPLE_DIM, bootstrap_draws, compute_with_progress, default_batch, progress_line
from .._resampling.memory import block_elems
from .._resampling.pairs import PAIR_DIM, pair_permutation_draws
from .._resampling.pvalues import ALTERNATIVES, PVALUES
from .._resampling.settings import Bootstrap, Permutation, Settings, Williams, as_settings, flat, settings_name
from .._resampling.workers import rechunked
from .._resampling.schemes import (
    SCHEME_DIMS,
    bootstrap_label,
    check_standardise,
    drawn_dims,
    drawn_scheme,
    parse_permute,
    parse_resample,
    permutation_label,
)
from .._notes import add_notes
from .._schema import INPUT, METRIC, SYSTEM, scores_notes
from .._selection import split_scores, system_mean_grid
from .._validation import (
    check_average,
    check_batch,
    check_choice,
    check_min_pairs,
    check_unit_interval,
    warn_few_draws,
)
from .common import common_ground, common_scores
from .auto import PairDraws, auto_pair_pvalues, auto_rerun, check_draws
from .decisions import OTHER, check_correction, decide, off_diagonal, pair_pvalues
from .defaults import DEFAULTS
from .pairoutcome import Swap, compare_pair_outcomes, uses_pairs
from .permutation import own_scale
from .williams import dependent_correlations
from .._warn import one_call

__all__ = ["compare"]

TESTS = ("permutation", "bootstrap", "williams")


@dataclass(frozen=True)
class _Options:
    """Normalised arguments of :func:`compare`."""

    x: xr.DataArray  # (metric, system, input, ...)
    z: xr.DataArray
    kw: dict  # level, method, variant, min_pairs, skipna
    test: str
    scheme: SwapUnit | None  # swap unit of the permutation test
    dims: tuple[str, ...] | None  # resampled dims of the bootstrap test
    n_resamples: int
    batch: int | None
    alpha: float
    min_pairs: int
    seed: int | None  # None for Williams' test (no draws)
    standardise: Standardise = "cells"
    max_resamples: int | None = None  # n_resamples="auto": the cap (n_resamples is then the first block)


def _long_names(out: xr.Dataset, alternative: str) -> None:
    out["delta"].attrs["long_name"] = "correlation of metric minus that of other_metric"
    relation = {"greater": "better than", "less": "worse than"}.get(alternative, "differs from")
    out["pvalue"].attrs["long_name"] = f"p-value of H1: metric {relation} other_metric"


def _as_matrix(draws, pi, pk, m):
    """Pair draws (..., P) -> (..., M, M): +draws at (i, k), -draws at (k, i), NaN on the diagonal."""
    out = np.full(draws.shape[:-1] + (m, m), np.nan)
    out[..., pi, pk] = draws
    out[..., pk, pi] = -draws
    return out


def _check_targets(target) -> None:
    """One score name, or a non-empty list of them (a ``target`` dim, as in ``correlate``)."""
    if isinstance(target, str):
        return
    if not isinstance(target, (list, tuple)) or not target or not all(isinstance(t, str) for t in target):
        raise ValueError(f"target must be a score name or a non-empty list of score names, got {target!r}")
    if len(set(target)) != len(target):
        raise ValueError(f"target names a score twice: {list(target)!r}")


#: The operation of the capability table each test of :func:`compare` is.
_OPERATIONS = {"permutation": "compare", "bootstrap": "compare(test='bootstrap')",
               "williams": "compare(test='williams')"}


def _compare_iv(data: xr.Dataset | xr.DataArray, *, target: Hashable | Sequence[Hashable],
                metrics: Sequence[Hashable] | None, test: Test, level: Level, method: Statistic, variant: Variant,
                permute: str | tuple[str, ...], resample: str | tuple[str, ...], n_resamples: int | Literal["auto"],
                alternative: Alternative, rng: Seed, pvalue: PValue, correction: Correction | None, family: Family,
                alpha: float, keep_distribution: bool, skipna: bool, min_pairs: int | None, batch: int | None,
                standardise: Standardise, average: Average, max_resamples: int | None = None) -> _Options:
    """Check and normalise every argument of :func:`compare`; split the scores."""
    check_choice(test, TESTS, "test")
    check(_OPERATIONS[test], level=level, method=method, variant=variant)
    check_refinements("compare", level=level, method=method, variant=variant, average=average)
    average = check_average(average)
    if average != "macro" and test == "williams":
        raise ValueError(f"average={average!r} needs test='permutation' or 'bootstrap'; the williams test "
                         "correlates units, it averages no groups")
    check_choice(alternative, ALTERNATIVES, "alternative")
    check_choice(pvalue, PVALUES, "pvalue")
    check_correction(correction, family)
    alpha = check_unit_interval(alpha, "alpha")
    min_pairs = check_min_pairs(OPTIONS["min_pairs"] if min_pairs is None else min_pairs)
    n_resamples, cap = check_draws(n_resamples, max_resamples)
    if test != "williams" and pvalue == "plus-one":
        warn_few_draws(n_resamples if cap is None else cap, alpha=alpha)
    batch = check_batch(batch)
    _check_targets(target)
    if test == "williams" and keep_distribution:
        raise ValueError("keep_distribution=True needs draws, and test='williams' makes none; "
                         "use test='permutation' or 'bootstrap', or keep_distribution=False")
    scheme = parse_permute(permute) if test == "permutation" else None
    dims = parse_resample(resample) if test == "bootstrap" else None
    # on system-level data the one input goes with its system: the draws are PERM-/BOOT-SYSTEMS
    scheme = drawn_scheme(data, scheme) if scheme is not None else None
    dims = drawn_dims(data, dims) if dims is not None else None
    if scheme is not None:
        standardise = check_standardise(standardise, level=level, scheme=scheme)
    elif standardise != "cells":
        raise ValueError(f"standardise={standardise!r} is an option of the permutation test; got test={test!r}")
    along = SCHEME_DIMS[scheme] if scheme is not None else dims
    x, z, _ = split_scores(data, target=target, metrics=metrics, level=level, along=along)
    if standardise == "system-means":  # mt-metrics-eval's test: the system means are the data
        x, z = system_mean_grid(x), system_mean_grid(z)
    if x.sizes[METRIC] < 2:
        raise ValueError(f"metrics must name at least two metrics to compare, got {list(map(str, x[METRIC].values))}")
    kw: dict[str, Any] = dict(level=level, method=method, variant=variant, min_pairs=min_pairs, skipna=bool(skipna))
    if average != "macro":
        kw["average"] = average
    seed = None if test == "williams" else resolve_seed(rng)
    return _Options(x=x, z=z, kw=kw, test=test, scheme=scheme, dims=dims, n_resamples=n_resamples, batch=batch,
                    alpha=alpha, min_pairs=min_pairs, seed=seed, standardise=standardise, max_resamples=cap)


def _permutation_distribution(o: _Options) -> xr.DataArray:
    """Draws of every pair's delta from shared swap masks: (..., metric, other_metric, resample)."""
    assert o.scheme is not None and o.seed is not None
    m = o.x.sizes[METRIC]
    labels = o.x[METRIC].values
    pi, pk = np.triu_indices(m, 1)
    pair_draws = pair_permutation_draws(o.x, o.z, pairs=(pi, pk), seed=o.seed, scheme=o.scheme,
                                        n_resamples=o.n_resamples, kw=o.kw, batch=o.batch)
    # draws stay a loop dim here: their blocks are joined only for the p-values
    return xr.apply_ufunc(
        _as_matrix, rechunked(pair_draws, {PAIR_DIM: -1}) if pair_draws.chunks is not None else pair_draws,
        input_core_dims=[[PAIR_DIM]],
        output_core_dims=[[METRIC, OTHER]],
        kwargs=dict(pi=pi, pk=pk, m=m),
        dask="parallelized", output_dtypes=[np.float64],
        dask_gufunc_kwargs={"output_sizes": {METRIC: m, OTHER: m}},
    ).assign_coords({METRIC: labels, OTHER: labels}).transpose(..., METRIC, OTHER, RESAMPLE_DIM)


def _bootstrap_distribution(o: _Options) -> xr.DataArray:
    """Draws of every pair's delta from shared resamples: (..., metric, other_metric, resample)."""
    assert o.dims is not None and o.seed is not None
    x, kw = o.x, o.kw
    b = o.batch or default_batch(x.sizes[METRIC], x.sizes[SYSTEM], x.sizes[INPUT], kw["level"], kw["method"])
    b = min(b, o.n_resamples)
    draws, _ = bootstrap_draws(x, o.z, seed=o.seed, resample=o.dims, n_resamples=o.n_resamples, batch=b,
                               complete_inputs=False, **kw)
    return draws - draws.rename({METRIC: OTHER}).assign_coords({OTHER: x[METRIC].values})


def _williams_matrix(x, z, *, level, method, alternative, absolute):
    """Williams p-values of every ordered pair: (..., metric, other_metric)."""
    labels = x[METRIC].values
    other = x.rename({METRIC: OTHER}).assign_coords({OTHER: labels})
    if x.chunks is not None or z.chunks is not None:
        x, other, z = (v.chunk({SYSTEM: -1, INPUT: -1}) for v in (x, other, z))

    def kernel(a, b, c):  # (..., M, 1, S, I), (..., 1, M, S, I) and the target: a block of metrics' rows at a time
        shape = np.broadcast_shapes(a.shape, b.shape, c.shape)
        out = np.empty(shape[:-2])
        rows = shape[-4]
        step = max(1, min(rows, block_elems() // max(1, 8 * int(np.prod(shape[-3:])))))  # ~8 temporaries a cell

        def part(v: np.ndarray, block: slice) -> np.ndarray:
            return v[..., block, :, :, :] if v.ndim >= 4 and v.shape[-4] > 1 else v

        for r0 in range(0, rows, step):
            block = slice(r0, r0 + step)
            r_xz, r_yz, r_xy, n = dependent_correlations(part(a, block), part(b, block), part(c, block), level=level,
                                                         method=method)
            if absolute:
                r_xz, r_yz, r_xy = np.abs(r_xz), np.abs(r_yz), np.abs(r_xy)
            out[..., block, :] = williams(r_xz, r_yz, r_xy, n, alternative=alternative).pvalue
        return out

    p = xr.apply_ufunc(
        kernel, x, other, z,
        input_core_dims=[[SYSTEM, INPUT]] * 3,
        dask="parallelized", output_dtypes=[np.float64],
    )
    return off_diagonal(p.transpose(..., METRIC, OTHER), len(labels))


def _test_attrs(o: _Options, absolute: bool, pvalue: str) -> dict:
    """The attrs of the test itself: its draws (scheme, seed) or Williams' ``absolute``."""
    if o.test == "williams":
        return {"absolute": int(bool(absolute))}
    if o.scheme is not None:
        drawn: dict = {"permute": o.scheme, "standardise": o.standardise}
        label = permutation_label(o.scheme)
    else:
        assert o.dims is not None
        drawn, label = {"resample": list(o.dims)}, bootstrap_label(o.dims)
    return {**drawn, "n_resamples": o.n_resamples, "pvalue": pvalue, "rng": o.seed, "scheme": label}


def _attrs(o: _Options, target, alternative, correction, family, absolute, pvalue) -> dict:
    kw = o.kw
    return {
        "test": o.test, "target": target if isinstance(target, str) else [str(t) for t in target],
        "level": kw["level"], "method": own_name(kw["method"]),
        "variant": kw["variant"] if kw["method"] == "kendall" else "", "alternative": alternative,
        "correction": correction or "none", "family": family, "alpha": float(o.alpha),
        "skipna": int(kw["skipna"]), "min_pairs": o.min_pairs,
        **({"average": kw.get("average", "macro")} if kw["level"] in ("input", "within_system") else {}),
        "clusters": "greedy: a metric opens a new cluster when a member of the current one is significantly better",
        **_test_attrs(o, absolute, pvalue),
    }


@one_call
@fill_doc
def compare(
    data: xr.Dataset | xr.DataArray,
    *,
    target: Hashable | Sequence[Hashable],
    metrics: Sequence[Hashable] | None = None,
    test: Test | Settings = "permutation",
    level: Level = "system",
    method: Statistic = "pearson",
    variant: Variant = "b",
    average: Average = "macro",
    alternative: Alternative = "greater",
    correction: Correction | None = DEFAULTS["correction"].python,
    family: Family = "row",
    alpha: float = 0.05,
    skipna: bool = True,
    min_pairs: int | None = None,
    common_cells: bool = True,
) -> xr.Dataset:
    """Compare every pair of metrics' correlations with a target: p-values, corrections, clusters.

    For each ordered pair (``metric``, ``other_metric``) the test asks whether
    ``metric`` correlates better with the target than ``other_metric``
    (``alternative="greater"``; ``"less"`` and ``"two-sided"`` as in the two-metric tests).

    Parameters
    ----------
    data : Dataset or DataArray
        Scores with ``system`` and ``input`` dims; extra dims (e.g. a language pair)
        are compared label by label.
    %(targets)s
        Each target is compared on its own, with the same draws.
    %(metrics)s
    test : "permutation", "bootstrap", "williams", Permutation, Bootstrap or Williams
        The test of every pair and its settings: :func:`xcorrstat.permutation_test`
        (:class:`xcorrstat.Permutation`), the paired bootstrap test (:class:`xcorrstat.Bootstrap`),
        or Williams' t (:class:`xcorrstat.Williams`; system or global level, no draws). A name
        stands for the default settings, with ``n_resamples="auto"``: a first block of 1,000
        draws, then the pairs whose corrected decision at ``alpha`` is not yet settled draw on
        (about 60% more a look) until every decision is settled or ``max_resamples`` is reached
        (:mod:`xcorrstat._significance.auto`; an ``OpenDecisionsWarning`` when decisions stay
        open). Each p-value is then that of a fixed run with the pair's own draws,
        ``n_resamples_used``. With ``swap="pairs"`` the test is rerun with more draws instead.
        Draws are shared by every pair.
    %(level)s
    %(method)s
    %(variant)s
    %(average)s
    %(alternative)s
    correction : {"holm", "bonferroni", "fdr_bh", None}, default "holm"
        Multiple-testing correction of the p-values (the default of ``xcorrstat report``
        too, so that both give the same clusters).
    family : {"row", "all"}
        ``"row"``: each metric's comparisons with the others form one family (M - 1
        tests); ``"all"``: every ordered pair (two-sided: every unordered pair) at once.
    alpha : float
        Level of the ``significant`` flag (corrected p-value <= alpha).
    %(skipna)s
    %(min_pairs)s
    %(common_cells)s

    Returns
    -------
    Dataset
        ``correlation`` (metric) and its ``cluster`` (1 = best; see Notes), and over
        (metric, other_metric): ``delta`` = r(metric) - r(other_metric), ``pvalue``,
        ``pvalue_corrected`` (equal to ``pvalue`` when ``correction`` is None) and
        ``significant``. NaN on the diagonal. With ``keep_distribution``, ``distribution``
        (metric, other_metric, resample): every draw's delta. Attrs record every option (with
        draws, ``scheme`` is the label of the permutation or resampling scheme). With
        ``swap="pairs"``, ``correlation`` is each metric's statistic at its own epsilon,
        ``epsilon`` (metric) holds the thresholds, ``n`` the groups averaged, and attrs add
        ``swap``, ``epsilon``, ``grouping`` and ``average_by`` (``scheme`` ``"PERM-PAIRS"``).
        With ``n_resamples="auto"``: ``n_resamples_used`` (metric, other_metric), the draws of
        each pair, and attrs ``draws="auto"``, ``n_resamples`` (the most draws of a pair),
        ``max_resamples``, ``risk``, ``pvalue_floor`` (the smallest corrected p-value the draws
        can give), ``n_open`` (decisions left open by the cap) and ``n_open_significant`` (how
        many of those the p-values at the cap flag significant: an open decision is decided as a
        fixed run of ``max_resamples`` draws decides it). On system-level data the
        draws of PERM-BOTH / BOOT-BOTH are those of PERM-SYSTEMS / BOOT-SYSTEMS (the one input
        goes with its system) and ``scheme`` says so.

    Warns
    -----
    OpenDecisionsWarning
        With ``n_resamples="auto"``, when ``max_resamples`` leaves corrected decisions open.

    Notes
    -----
    Significance clusters follow the greedy rule of mt-metrics-eval: metrics sorted
    by correlation, best first; a metric opens a new cluster when any metric already
    in the current cluster is significantly better than it (``significant`` after the
    correction, in the favour of the better-ranked metric), and joins it otherwise.
    So no metric in a cluster is significantly beaten by another member. Metrics
    with an undefined correlation get cluster 0.

    Examples
    --------
    >>> import xcorrstat
    >>> ds = xcorrstat.datasets.summeval()
    >>> res = xcorrstat.compare(ds, target="expert_relevance", metrics=["qa_eval_f1", "rouge_2_f1", "meteor"],
    ...                         test=xcorrstat.Permutation(n_resamples=200, rng=0))
    >>> res["pvalue"].dims, res.attrs["scheme"]
    (('metric', 'other_metric'), 'PERM-BOTH')
    """
    settings = as_settings(test, "test", (Permutation, Bootstrap, Williams))
    drawn = _drawn_settings(settings)
    if uses_pairs(drawn["swap"], drawn["epsilon"]):
        _check_targets(target)
        notes = scores_notes(data, target, metrics)
        data, ground = common_ground(data, target=target, metrics=metrics, common_cells=common_cells,
                                     mask_target=True)
        notes = (*notes, *([ground] if ground else []))
        return _noted(_compare_pair_outcomes(data, drawn, target=target, metrics=metrics, level=level, method=method,
                                      variant=variant, average=average, alternative=alternative,
                                      correction=correction, family=family, alpha=alpha, skipna=skipna,
                                      min_pairs=min_pairs), notes, common_cells)
    test = settings_name(settings)
    keep_distribution, pvalue, absolute = drawn["keep_distribution"], drawn["pvalue"], drawn["absolute"]
    o = _compare_iv(data, target=target, metrics=metrics, test=test, level=level, method=method, variant=variant,
                    permute=drawn["permute"], resample=drawn["resample"], n_resamples=drawn["n_resamples"],
                    alternative=alternative, rng=drawn["rng"], pvalue=pvalue, correction=correction, family=family,
                    alpha=alpha, keep_distribution=keep_distribution, skipna=skipna, min_pairs=min_pairs,
                    batch=OPTIONS["batch"], standardise=drawn["standardise"], average=average,
                    max_resamples=drawn["max_resamples"])
    x, z, ground = common_scores(o.x, o.z, common_cells=common_cells, mask_target=not is_own(method))
    notes = (*scores_notes(data, target, metrics), *([ground] if ground else []))
    o = replace(o, x=x, z=z)
    if is_own(method) and o.test == "permutation":  # the statistic sees z-scores, as the draws swap them
        x, z = own_scale(x), own_scale(z)
        o = replace(o, x=x, z=z)
    lazy = x.chunks is not None or z.chunks is not None
    r, n = level_statistic(x, z, complete_inputs=False, **o.kw)
    delta = r - r.rename({METRIC: OTHER}).assign_coords({OTHER: x[METRIC].values})
    dist, used = None, None
    if o.test == "williams":
        p = _williams_matrix(x, z, level=level, method=method, alternative=alternative, absolute=absolute)
    elif o.max_resamples is not None:  # n_resamples="auto"
        assert o.seed is not None
        draw = PairDraws(x, z, o.kw, o.seed, scheme=o.scheme, dims=o.dims, batch=o.batch)
        p, used, dist, auto = auto_pair_pvalues(draw, delta, test=o.test, alternative=alternative, pvalue=pvalue,
                                                correction=correction, family=family, alpha=o.alpha,
                                                start=o.n_resamples, cap=o.max_resamples, risk=drawn["risk"],
                                                keep_distribution=keep_distribution)
    else:
        if not lazy:  # computed below, with the bar of its task graph if it has one
            m = x.sizes[METRIC]
            progress_line(f"{o.test} draws of {m * (m - 1) // 2} metric pair(s): {o.n_resamples:,} draws")
        dist = _permutation_distribution(o) if o.test == "permutation" else _bootstrap_distribution(o)
        p = pair_pvalues(dist, delta, test=o.test, alternative=alternative, pvalue=pvalue)
    p_adj, significant, cluster = decide(p, r, delta, correction=correction, family=family,
                                         alternative=alternative, alpha=o.alpha)
    out = xr.Dataset({
        "correlation": r, "cluster": cluster, "delta": delta, "pvalue": p,
        "pvalue_corrected": p_adj, "significant": significant,
    }).assign_coords(n=n)
    if keep_distribution and dist is not None:
        out["distribution"] = dist
    out.attrs = _attrs(o, target, alternative, correction, family, absolute, pvalue)
    if used is not None:
        out["n_resamples_used"] = used
        out.attrs.update(auto)
    _long_names(out, alternative)
    _noted(out, notes, common_cells)
    return out if lazy else compute_with_progress(out, True)


def _noted(out: xr.Dataset, notes: Sequence[str], common_cells: bool) -> xr.Dataset:
    """``out`` with attrs ``common_cells`` and the notes of its data and of its common ground."""
    out.attrs["common_cells"] = int(bool(common_cells))
    add_notes(out.attrs, *notes)
    return out


def _drawn_settings(settings: Settings) -> dict[str, Any]:
    """The fields of a test's settings object, with those another test's object has at their defaults
    (a bootstrap never swaps, Williams' test never draws) and ``n_resamples`` "auto" when not given."""
    if isinstance(settings, Permutation) and settings.early_stop is not None:
        raise ValueError("test=Permutation(early_stop=...) stops a two-metric test; all-pairs comparisons "
                         "draw enough for their corrected decisions with n_resamples='auto'")
    drawn: dict[str, Any] = {"permute": ("system", "input"), "resample": ("system", "input"), "n_resamples": "auto",
                             "rng": None, "pvalue": "plus-one", "keep_distribution": False, "swap": "scores",
                             "standardise": "cells", "epsilon": None, "absolute": False,
                             "max_resamples": DEFAULTS["max_resamples"].python, "risk": None}
    drawn.update(flat(settings, n_resamples="auto"))
    return drawn


def _compare_pair_outcomes(data: xr.Dataset | xr.DataArray, drawn: Mapping[str, Any], *, average: Average,
                           **common: Any) -> xr.Dataset:
    """:func:`compare` with ``swap="pairs"`` (or a calibrated epsilon): the pair-outcome test, rerun with more
    draws while decisions are open."""
    if average != "macro":
        raise ValueError(f"average={average!r} is an option of swap='scores'; the pair-outcome test "
                         "averages the groups equally, as mt-metrics-eval does")
    rerun = {k: common[k] for k in ("correction", "family", "alternative", "alpha")}
    return auto_rerun(lambda n, seed: compare_pair_outcomes(
        data, permute=drawn["permute"], standardise=drawn["standardise"], epsilon=drawn["epsilon"], n_resamples=n,
        rng=seed, pvalue=drawn["pvalue"], keep_distribution=drawn["keep_distribution"], batch=OPTIONS["batch"],
        **common), n_resamples=drawn["n_resamples"], max_resamples=drawn["max_resamples"], rng=drawn["rng"],
        pvalue=drawn["pvalue"], **rerun)
