"""Every pair of metrics compared at once: deltas, p-values, corrections, significance clusters.

``compare`` runs one test over all ordered pairs (metric, other_metric). The draws are
shared: a permutation draw's masks and a bootstrap draw's indices come from the draw
id and the seed only, so every pair sees the same draws, and pair (i, k) gives exactly
the result of the two-metric test with the same ``rng``.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Literal

import numpy as np
import xarray as xr

from .correlate import level_statistic
from .kernels import LEVELS, METHODS, VARIANTS
from .kernels.correlation import KENDALL_VARIANTS
from .kernels.clusters import greedy_clusters
from .kernels.corrections import CORRECTIONS, adjust_pvalues
from .options import OPTIONS
from .resampling.draws import resolve_seed
from .resampling.engine import RESAMPLE_DIM, bootstrap_draws, check_resample, compute_with_progress, default_batch
from .resampling.paired import paired_bootstrap_pvalue
from .resampling.pairs import PAIR_DIM, pair_permutation_draws
from .resampling.permutation import ALTERNATIVES, PVALUES, SCHEME_DIMS, _scheme, permutation_pvalue
from .resampling.statistics import check_bootstrap_variant
from .schema import INPUT, METRIC, SYSTEM, split_scores
from .validation import check_batch, check_choice, check_min_pairs, check_positive_int, check_unit_interval
from .williams import _check as _check_williams
from .williams import dependent_correlations
from .kernels.dependent import williams

__all__ = ["compare"]

TESTS = ("permutation", "bootstrap", "williams")
FAMILIES = ("row", "all")
OTHER = "other_metric"


def _as_matrix(draws, pi, pk, m):
    """Pair draws (..., P) -> (..., M, M): +draws at (i, k), -draws at (k, i), NaN on the diagonal."""
    out = np.full(draws.shape[:-1] + (m, m), np.nan)
    out[..., pi, pk] = draws
    out[..., pk, pi] = -draws
    return out


def _adjust(p, *, correction, family, alternative):
    """Corrected p-values of an (..., M, M) matrix; the family is each row or all pairs."""
    if correction is None:
        return p
    m = p.shape[-1]
    if family == "row":
        return adjust_pvalues(p, method=correction, axis=-1)
    if alternative == "two-sided":  # (i, k) and (k, i) are one hypothesis: correct the upper triangle
        iu = np.triu_indices(m, 1)
        adj = adjust_pvalues(p[..., iu[0], iu[1]], method=correction, axis=-1)
        out = np.full(p.shape, np.nan)
        out[..., iu[0], iu[1]] = adj
        out[..., iu[1], iu[0]] = adj
        return out
    flat = p.reshape(p.shape[:-2] + (m * m,))
    return adjust_pvalues(flat, method=correction, axis=-1).reshape(p.shape)


def _clusters(r, significant, delta, *, alternative):
    """Cluster per metric from the flags: ``better[j, i]`` = j significantly better than i."""
    if alternative == "greater":
        better = significant
    elif alternative == "less":
        better = np.swapaxes(significant, -1, -2)
    else:
        better = significant & (delta > 0)
    flat_r = r.reshape(-1, r.shape[-1])
    flat_b = better.reshape(-1, *better.shape[-2:])
    out = np.stack([greedy_clusters(a, b) for a, b in zip(flat_r, flat_b)])  # one per extra-dim label
    return out.reshape(r.shape)


def _check_targets(target) -> None:
    """One score name, or a non-empty list of them (a ``target`` dim, as in ``correlate``)."""
    if isinstance(target, str):
        return
    if not isinstance(target, (list, tuple)) or not target or not all(isinstance(t, str) for t in target):
        raise ValueError(f"target must be a score name or a non-empty list of score names, got {target!r}")
    if len(set(target)) != len(target):
        raise ValueError(f"target names a score twice: {list(target)!r}")


def compare(
    data: xr.Dataset | xr.DataArray,
    *,
    target: Hashable | Sequence[Hashable],
    metrics: Sequence[Hashable] | None = None,
    test: Literal["permutation", "bootstrap", "williams"] = "permutation",
    level: Literal["system", "input", "global"] = "system",
    method: Literal["pearson", "spearman", "kendall"] = "pearson",
    variant: Literal["b", "c", "a", "23", "acc23"] = "b",
    permute: str | tuple[str, ...] = ("system", "input"),
    resample: str | tuple[str, ...] = ("system", "input"),
    n_resamples: int = 1000,
    alternative: Literal["greater", "less", "two-sided"] = "greater",
    rng: int | np.random.Generator | np.random.SeedSequence | None = None,
    pvalue: Literal["plus-one", "fraction"] = "plus-one",
    correction: Literal["bonferroni", "holm", "fdr_bh"] | None = None,
    family: Literal["row", "all"] = "row",
    alpha: float = 0.05,
    absolute: bool = False,
    keep_distribution: bool = False,
    skipna: bool = True,
    min_pairs: int | None = None,
    batch: int | None = None,
    progress: bool = False,
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
    target : str or list of str
        Human score; a list adds a ``target`` dim (each target compared on its own,
        with the same draws), as in :func:`xcorrstat.correlate`.
    metrics : list of str, optional
        Metrics to compare (default: every non-human variable).
    test : {"permutation", "bootstrap", "williams"}
        :func:`xcorrstat.permutation_test` (``permute``), the paired bootstrap test
        (``resample``), or Williams' t (system or global level, no draws).
    level, method, variant, skipna, min_pairs
        As in :func:`xcorrstat.correlate`.
    permute : str or tuple
        Swap units of the permutation test (default PERM-BOTH).
    resample : str or tuple
        Resampled dims of the bootstrap test (default BOOT-BOTH).
    n_resamples : int
        Draws, shared by every pair.
    alternative : {"greater", "less", "two-sided"}
    rng : int, Generator, SeedSequence or None
        Seed; the one used is in ``attrs["seed"]``.
    pvalue : {"plus-one", "fraction"}
        Monte-Carlo p-value rule (see :func:`xcorrstat.permutation_test`).
    correction : {None, "bonferroni", "holm", "fdr_bh"}
        Multiple-testing correction of the p-values.
    family : {"row", "all"}
        ``"row"``: each metric's comparisons with the others form one family (M - 1
        tests); ``"all"``: every ordered pair (two-sided: every unordered pair) at once.
    alpha : float
        Level of the ``significant`` flag (corrected p-value <= alpha).
    absolute : bool
        Williams' test only: compare ``|r|`` (WMT convention).
    keep_distribution : bool
        Also return every draw's delta, ``distribution`` (metric, other_metric, resample).
    batch : int, optional
        Draws computed together inside a task (memory ~ batch x pairs per task x
        inputs). A task computes at least ``ceil(n_resamples / 256)`` draws, so a run
        never has more than 256 blocks of draws; the numbers do not depend on either.
    progress : bool
        Show a progress bar on stderr.

    Returns
    -------
    Dataset
        ``correlation`` (metric) and its ``cluster`` (1 = best; see Notes), and over
        (metric, other_metric): ``delta`` = r(metric) - r(other_metric), ``pvalue``,
        ``pvalue_corrected`` (equal to ``pvalue`` when ``correction`` is None) and
        ``significant``. NaN on the diagonal. Attrs record every option.

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
    >>> res = ds.corrstat.compare(target="expert_relevance", metrics=["qa_eval_f1", "rouge_2_f1", "meteor"],
    ...                           level="system", n_resamples=200, rng=0, correction="holm")
    >>> res["pvalue"].dims
    ('metric', 'other_metric')
    """
    check_choice(test, TESTS, "test")
    check_choice(level, LEVELS, "level")
    check_choice(method, METHODS, "method")
    check_choice(variant, KENDALL_VARIANTS, "variant", " (Kendall's variant)")
    if variant not in VARIANTS and test == "williams":
        raise ValueError(f"variant={variant!r} is available with test='permutation' or 'bootstrap'; the williams "
                         f"test supports {VARIANTS}")
    if test == "bootstrap":
        check_bootstrap_variant(level, method, variant)
    check_choice(alternative, ALTERNATIVES, "alternative")
    check_choice(pvalue, PVALUES, "pvalue")
    check_choice(family, FAMILIES, "family")
    if correction is not None:
        check_choice(correction, CORRECTIONS, "correction", " or None")
    alpha = check_unit_interval(alpha, "alpha")
    min_pairs = check_min_pairs(OPTIONS["min_pairs"] if min_pairs is None else min_pairs)
    n_resamples = check_positive_int(n_resamples, "n_resamples")
    batch = check_batch(batch)
    _check_targets(target)
    if test == "williams":
        _check_williams(level, method)
        if keep_distribution:
            raise ValueError("keep_distribution=True needs draws, and test='williams' makes none; "
                             "use test='permutation' or 'bootstrap', or keep_distribution=False")
    scheme = _scheme(permute) if test == "permutation" else None
    dims = check_resample(resample) if test == "bootstrap" else None
    along = SCHEME_DIMS[scheme] if scheme is not None else dims
    x, z, _ = split_scores(data, target=target, metrics=metrics, level=level, along=along)
    m = x.sizes[METRIC]
    if m < 2:
        raise ValueError(f"metrics must name at least two metrics to compare, got {list(map(str, x[METRIC].values))}")
    kw = dict(level=level, method=method, variant=variant, min_pairs=min_pairs, skipna=bool(skipna))
    lazy = x.chunks is not None or z.chunks is not None
    labels = x[METRIC].values
    r, n = level_statistic(x, z, complete_inputs=False, **kw)
    delta = r - r.rename({METRIC: OTHER}).assign_coords({OTHER: labels})
    seed = None
    attrs = {}

    if test == "williams":
        p = _williams_matrix(x, z, level=level, method=method, alternative=alternative, absolute=absolute)
        dist = None
        attrs.update(absolute=int(bool(absolute)))
    else:
        seed = resolve_seed(rng)
        if test == "permutation":
            pi, pk = np.triu_indices(m, 1)
            pair_draws = pair_permutation_draws(x, z, pairs=(pi, pk), seed=seed, scheme=scheme,
                                                n_resamples=n_resamples, kw=kw, batch=batch)
            # draws stay a loop dim here: their blocks are joined only for the p-values below
            dist = xr.apply_ufunc(
                _as_matrix, pair_draws.chunk({PAIR_DIM: -1}) if pair_draws.chunks is not None else pair_draws,
                input_core_dims=[[PAIR_DIM]],
                output_core_dims=[[METRIC, OTHER]],
                kwargs=dict(pi=pi, pk=pk, m=m),
                dask="parallelized", output_dtypes=[np.float64],
                dask_gufunc_kwargs={"output_sizes": {METRIC: m, OTHER: m}},
            ).assign_coords({METRIC: labels, OTHER: labels}).transpose(..., METRIC, OTHER, RESAMPLE_DIM)
            attrs.update(permute=scheme)

            def pfunc(d, obs):
                return permutation_pvalue(d, obs, alternative=alternative, pvalue=pvalue)
        else:
            b = batch or default_batch(x.sizes[METRIC], x.sizes[SYSTEM], x.sizes[INPUT], level, method)
            b = min(b, n_resamples)
            draws, _ = bootstrap_draws(x, z, seed=seed, resample=dims, n_resamples=n_resamples, batch=b,
                                       complete_inputs=False, **kw)
            dist = draws - draws.rename({METRIC: OTHER}).assign_coords({OTHER: labels})
            attrs.update(resample=list(dims))

            def pfunc(d, obs):
                return paired_bootstrap_pvalue(d, obs, alternative=alternative, pvalue=pvalue)

        if dist.chunks is not None:
            dist = dist.chunk({RESAMPLE_DIM: -1})
        p = xr.apply_ufunc(
            pfunc, dist, delta,
            input_core_dims=[[RESAMPLE_DIM], []],
            dask="parallelized", output_dtypes=[np.float64],
        )
        diagonal = xr.DataArray(np.eye(m, dtype=bool), dims=(METRIC, OTHER))
        p = p.where(~diagonal)
        attrs.update(n_resamples=n_resamples, pvalue=pvalue, seed=seed)

    if any(v.chunks is not None for v in (p, r, delta)):  # the correction and the clusters see whole (metric, other_metric) matrices
        p, r, delta = p.chunk({METRIC: -1, OTHER: -1}), r.chunk({METRIC: -1}), delta.chunk({METRIC: -1, OTHER: -1})
    p_adj = xr.apply_ufunc(
        _adjust, p, input_core_dims=[[METRIC, OTHER]], output_core_dims=[[METRIC, OTHER]],
        kwargs=dict(correction=correction, family=family, alternative=alternative),
        dask="parallelized", output_dtypes=[np.float64],
    )
    significant = (p_adj <= alpha).fillna(False) & p_adj.notnull()
    cluster = xr.apply_ufunc(
        _clusters, r, significant, delta,
        input_core_dims=[[METRIC], [METRIC, OTHER], [METRIC, OTHER]],
        output_core_dims=[[METRIC]],
        kwargs=dict(alternative=alternative),
        dask="parallelized", output_dtypes=[np.int64],
    )
    out = xr.Dataset({
        "correlation": r, "cluster": cluster, "delta": delta, "pvalue": p,
        "pvalue_corrected": p_adj, "significant": significant,
    }).assign_coords(n=n)
    if keep_distribution and dist is not None:
        out["distribution"] = dist
    out.attrs = {
        "test": test, "target": target if isinstance(target, str) else list(map(str, target)),
        "level": level, "method": method,
        "variant": variant if method == "kendall" else "", "alternative": alternative,
        "correction": correction or "none", "family": family, "alpha": float(alpha),
        "skipna": int(bool(skipna)), "min_pairs": min_pairs,
        "clusters": "greedy: a metric opens a new cluster when a member of the current one is significantly better",
        **attrs,
    }
    out["delta"].attrs["long_name"] = "correlation of metric minus that of other_metric"
    out["pvalue"].attrs["long_name"] = f"p-value of H1: metric {'better than' if alternative == 'greater' else 'worse than' if alternative == 'less' else 'differs from'} other_metric"
    if lazy:
        return out
    return compute_with_progress(out, progress)


def _williams_matrix(x, z, *, level, method, alternative, absolute):
    """Williams p-values of every ordered pair: (..., metric, other_metric)."""
    labels = x[METRIC].values
    other = x.rename({METRIC: OTHER}).assign_coords({OTHER: labels})
    if x.chunks is not None or z.chunks is not None:
        x, other, z = (v.chunk({SYSTEM: -1, INPUT: -1}) for v in (x, other, z))

    def kernel(a, b, c):
        r_xz, r_yz, r_xy, n = dependent_correlations(a, b, c, level=level, method=method)
        if absolute:
            r_xz, r_yz, r_xy = np.abs(r_xz), np.abs(r_yz), np.abs(r_xy)
        return np.asarray(williams(r_xz, r_yz, r_xy, n, alternative=alternative).pvalue, dtype=np.float64)

    p = xr.apply_ufunc(
        kernel, x, other, z,
        input_core_dims=[[SYSTEM, INPUT]] * 3,
        dask="parallelized", output_dtypes=[np.float64],
    )
    p = p.transpose(..., METRIC, OTHER)
    diagonal = xr.DataArray(np.eye(len(labels), dtype=bool), dims=(METRIC, OTHER))
    return p.where(~diagonal)
