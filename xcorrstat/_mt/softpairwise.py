"""Soft pairwise accuracy (1 - pairwise confidence error): agreement of per-pair significance.

Thompson et al. (2024) compare how sure the humans and the metric are that system i beats
system j: for each pair, a paired sign-flip permutation test on the per-input score
differences gives a p-value from the human scores and one from the metric scores, and

    SPA = 1 - mean over pairs i < j of |p_human(i, j) - p_metric(i, j)|.

The test of a pair: ``p = share of draws with sum_k s_k d_k >= sum_k d_k``, with
``d_k = score_i - score_j`` on input k and random signs ``s_k``. The same sign draws serve
every pair, the target and every metric. Two sources of signs (``draws=``):

* ``"by-id"``: draw r comes from ``SeedSequence(seed, ...)`` by its id like every draw of
  the library; a cell missing in the metric or the target leaves that input out of both,
  for each pair of systems.
* ``"mt-metrics-eval"``: the sign matrix of mt-metrics-eval's ``pce.compute_pairwise_p_values``
  and its float32 arithmetic, to reproduce published numbers.

Empty units are left out (docs: missing values): a pair of systems with no input where both
have both scores has no test, so it is not in the mean (it would count as agreement, both
p-values being 1), and ``n_pairs`` counts the pairs averaged. In the ``"mt-metrics-eval"``
mode a system without any such cell is dropped before the inputs are chosen, as
mt-metrics-eval's ``data.GetCorrelations`` drops the systems without a gold score.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
import xarray as xr

from .._docs import fill_doc
from .._types import Draws, Seed
from .._kernels.scaling import pow2_exponent
from .._resampling.draws import permutation_masks, resolve_seed, seeded_generator
from .._resampling.engine import blocks_of_cells
from .._selection import aligned_scores
from .._validation import check_choice, check_draw_count
from .._warn import one_call

__all__ = ["DRAWS", "MTME_SEED", "Draws", "mtme_signs", "pairs_with_data", "pairwise_pvalues",
           "soft_pairwise_accuracy"]

#: The sources of sign draws of :func:`soft_pairwise_accuracy`.
DRAWS: tuple[Draws, ...] = ("by-id", "mt-metrics-eval")
#: mt-metrics-eval's seed of the sign matrix (``compute_pairwise_p_values(..., seed=4)``).
MTME_SEED = 4


def pairwise_pvalues(scores, signs):
    """One-sided sign-flip p-values of every system pair: scores (..., S, I), signs (B, I) -> (..., P).

    Pairs are ``np.triu_indices(S, 1)``; ``p[i, j]`` is the share of draws whose sign-flipped
    sum of differences reaches the observed sum (no +1: the share of draws itself). A NaN
    difference counts as 0 (the input is left out of that pair); a pair without any input
    gets 1 (see :func:`pairs_with_data` to leave it out).
    """
    scores = np.asarray(scores, dtype=np.float64)
    a, b = np.triu_indices(scores.shape[-2], 1)
    with np.errstate(invalid="ignore"):
        d = scores[..., a, :] - scores[..., b, :]  # (..., P, I)
    d = np.where(np.isnan(d), 0.0, d)
    observed = d.sum(axis=-1)  # (..., P)
    flipped = np.einsum("...pi,bi->...pb", d, np.asarray(signs, dtype=np.float64))
    # the observed sum is one of the draws' sums when all signs are +1: compare with a tolerance of rounding,
    # relative to the differences' size (an absolute floor would make every draw a tie for tiny scores)
    tol = 1e-9 * np.abs(d).sum(axis=-1)
    return (flipped >= (observed - tol)[..., None]).mean(axis=-1)


def pairs_with_data(scores: np.ndarray) -> np.ndarray:
    """Whether each system pair (``np.triu_indices(S, 1)``) has an input where both systems have a
    score: scores (..., S, I) -> (..., P) bool.

    Examples
    --------
    >>> pairs_with_data(np.array([[1.0, np.nan], [np.nan, 2.0], [3.0, 4.0]])).tolist()  # (0,1) (0,2) (1,2)
    [False, True, True]
    """
    a, b = np.triu_indices(scores.shape[-2], 1)
    present = ~np.isnan(scores)
    return (present[..., a, :] & present[..., b, :]).any(axis=-1)


def _one_minus_mean(diff: np.ndarray, used: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``1 - mean`` of ``diff`` (..., P) over the ``used`` pairs, and their number; NaN without one."""
    n = used.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        spa = 1.0 - np.where(used, diff, 0.0).sum(axis=-1) / n
    return np.where(n > 0, spa, np.nan), n


def mtme_signs(seed: int, n_resamples: int, n_inputs: int) -> np.ndarray:
    """mt-metrics-eval's sign matrix: ``(n_resamples, n_inputs)`` float32 of -1 and +1.

    ``default_rng(seed).random((n_resamples, n_inputs), dtype=float32)``, rounded half to
    even (``rint``) to 0 or 1 and mapped to ``2 m - 1``. The generator is
    :func:`~xcorrstat._resampling.draws.seeded_generator` of the int ``seed``, as
    mt-metrics-eval seeds it.

    Examples
    --------
    >>> s = mtme_signs(4, 1000, 3)
    >>> s.shape, s.dtype.name, sorted(set(s.ravel().tolist()))
    ((1000, 3), 'float32', [-1.0, 1.0])
    """
    u = seeded_generator(seed).random((n_resamples, n_inputs), dtype=np.float32)
    return np.rint(u) * np.float32(2.0) - np.float32(1.0)


def _mtme_pvalues(scores: np.ndarray, signs: np.ndarray) -> np.ndarray:
    """p-values as mt-metrics-eval computes them: scores (..., S, L), float32 signs (B, L) -> (..., P).

    float32 throughout: system scores are float32 sums, each draw's system sums a float32
    matrix product, and a draw counts when its difference reaches the observed one exactly.
    """
    # an exact power-of-two scaling per score matrix keeps any finite float64 scores within float32's range
    # and changes no bit of the float32 arithmetic for scores already within it
    s32 = np.ascontiguousarray(np.ldexp(scores, -pow2_exponent(scores, axis=(-2, -1))), dtype=np.float32)
    sums = s32.sum(axis=-1)  # (..., S)
    partial = np.matmul(signs, np.swapaxes(s32, -1, -2))  # (..., B, S)
    a, b = np.triu_indices(s32.shape[-2], 1)
    null = partial[..., a] - partial[..., b]  # (..., B, P)
    observed = sums[..., a] - sums[..., b]  # (..., P)
    return (null >= observed[..., None, :]).sum(axis=-2) / signs.shape[0]


def _spa_mtme(x: np.ndarray, z: np.ndarray, seed: int,
              n_resamples: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """SPA of (..., S, I) metric scores against the target, mt-metrics-eval's way: the SPA, the inputs
    used and the system pairs averaged, each (...)."""
    lead, (n_sys, n_inp) = x.shape[:-2], x.shape[-2:]
    xf, zf = x.reshape(-1, n_sys, n_inp), z.reshape(-1, n_sys, n_inp)
    valid = ~(np.isnan(xf) | np.isnan(zf))
    # a system without a valid cell is dropped (mt-metrics-eval drops the systems without a gold score);
    # an input is used when every other system has both scores there
    rated = valid.any(axis=-1)  # (R, S)
    kept = (valid | ~rated[..., None]).all(axis=-2)  # (R, I)
    spa = np.full(xf.shape[0], np.nan)
    n_pairs = np.zeros(xf.shape[0], dtype=np.int64)
    patterns, which = np.unique(np.concatenate([rated, kept], axis=-1), axis=0, return_inverse=True)
    which = np.asarray(which).reshape(-1)
    for k, pattern in enumerate(patterns):  # one sign matrix per distinct set of used systems and inputs
        systems, inputs = pattern[:n_sys], pattern[n_sys:]
        used = int(systems.sum())
        if used < 2 or not inputs.any():
            continue
        rows = which == k
        signs = mtme_signs(seed, n_resamples, int(inputs.sum()))
        xs, zs = (v[rows] if systems.all() else v[rows][:, systems] for v in (xf, zf))
        p_metric = _mtme_pvalues(xs[..., inputs], signs)
        p_gold = _mtme_pvalues(zs[..., inputs], signs)
        spa[rows] = 1.0 - np.abs(p_gold - p_metric).mean(axis=-1)
        n_pairs[rows] = used * (used - 1) // 2
    return spa.reshape(lead), kept.sum(axis=-1).reshape(lead), n_pairs.reshape(lead)


def _mtme_seed(rng) -> int:
    """The int seed of mt-metrics-eval's sign matrix: ``rng`` as given (default ``MTME_SEED``).

    Not :func:`~xcorrstat._resampling.draws.resolve_seed`: mt-metrics-eval seeds ``default_rng``
    with an int, so a Generator or SeedSequence could not give its draws.
    """
    if rng is None:
        return MTME_SEED
    if isinstance(rng, bool) or not isinstance(rng, (int, np.integer)) or rng < 0:
        raise ValueError(f"rng must be a non-negative int seed with draws='mt-metrics-eval' (mt-metrics-eval "
                         f"seeds default_rng with an int; its default is {MTME_SEED}), got {rng!r}")
    return int(rng)


def _soft_pairwise_accuracy_iv(data, target, metrics, n_resamples, rng,
                               draws) -> tuple[int, int, xr.DataArray, xr.DataArray, list]:
    """Every option of :func:`soft_pairwise_accuracy`, checked once: n_resamples, the seed, aligned X and Z
    ``(*batch, system, input)`` and the batch dims."""
    n_resamples = check_draw_count(n_resamples, "n_resamples")
    check_choice(draws, DRAWS, "draws")
    seed = _mtme_seed(rng) if draws == "mt-metrics-eval" else resolve_seed(rng)
    x, z, batch = aligned_scores(data, target=target, metrics=metrics)
    return n_resamples, seed, x, z, batch


def _spa_by_id(x: np.ndarray, z: np.ndarray, seed: int, n_resamples: int) -> tuple[np.ndarray, np.ndarray]:
    """SPA of (..., S, I) metric scores against the target with the library's sign draws (keyed by draw id),
    and the system pairs averaged: the pairs with an input where both systems have both scores."""
    # a cell missing in the metric or the target is left out of both (the library's one rule)
    x, z = np.where(np.isnan(z), np.nan, x), np.where(np.isnan(x), np.nan, z)
    signs = 1.0 - 2.0 * permutation_masks(seed, np.arange(n_resamples), 1, x.shape[-1], "cells")[:, 0, :]
    p_metric = pairwise_pvalues(x, signs)
    p_gold = pairwise_pvalues(z, signs)
    return _one_minus_mean(np.abs(p_gold - p_metric), pairs_with_data(x))


def _spa_block(x: np.ndarray, z: np.ndarray, *, seed: int, n_resamples: int,
               draws: Draws) -> tuple[np.ndarray, ...]:
    """The outputs of :func:`soft_pairwise_accuracy` (see :func:`_outputs`) of (..., S, I) scores. The scores
    are C-ordered first, so the sums run in one order whatever the layout of the array or block (the means
    over pairs of several rows at once still depend on the rows a call holds: lazy scores come in whole)."""
    x, z = np.ascontiguousarray(x), np.ascontiguousarray(z)
    if draws == "mt-metrics-eval":
        return _spa_mtme(x, z, seed, n_resamples)
    return _spa_by_id(x, z, seed, n_resamples)


def _outputs(draws: Draws) -> list[tuple[str, type]]:
    """The data variables of :func:`soft_pairwise_accuracy` and their dtypes, in order."""
    middle = [("n_inputs", np.int64)] if draws == "mt-metrics-eval" else []
    return [("soft_pairwise_accuracy", np.float64), *middle, ("n_pairs", np.int64)]


@one_call
@fill_doc
def soft_pairwise_accuracy(
    data: xr.Dataset | xr.DataArray,
    *,
    target: Hashable,
    metrics: Sequence[Hashable] | None = None,
    n_resamples: int = 1000,
    rng: Seed = None,
    draws: Draws = "by-id",
) -> xr.Dataset:
    """Soft pairwise accuracy of every metric's system ranking (1 - pairwise confidence error).

    Parameters
    ----------
    %(data)s
    %(target)s
    %(metrics)s
    n_resamples : int, default 1000
        Sign-flip draws of each pair's test (shared by every pair and metric).
    rng : int, Generator, SeedSequence or None
        Seed of the draws; recorded in attrs. With ``draws="by-id"`` it is read as
        everywhere in the library: draw ``r`` depends on the seed and on ``r`` alone. With
        ``draws="mt-metrics-eval"`` it must be an int (default there: 4, mt-metrics-eval's
        seed), which seeds ``default_rng`` as mt-metrics-eval does.
    draws : {"by-id", "mt-metrics-eval"}, default "by-id"
        ``"by-id"``: the library's draws, keyed by draw id; a cell missing in the metric or
        the target is left out of both, for each pair of systems. ``"mt-metrics-eval"``:
        mt-metrics-eval's sign matrix, to reproduce its (and WMT's published) values; see
        Notes.

    Returns
    -------
    Dataset
        ``soft_pairwise_accuracy`` over ``metric`` and ``n_pairs``, the system pairs
        averaged (NaN and 0 without one); with ``draws="mt-metrics-eval"`` also
        ``n_inputs``, the inputs used. A pair of systems without an input where both have
        the metric's and the target's score has no test and is left out of the mean, never
        counted as agreement: a system without any score of the target (or of the metric)
        is in no pair. Dask-backed scores give a Dask-backed result (one task over the whole
        scores): the same values as the eager call, whatever the chunks.

    Notes
    -----
    ``draws="mt-metrics-eval"`` reproduces ``pce.compute_pairwise_p_values``: one
    ``(n_resamples, L)`` matrix ``np.random.default_rng(seed).random(..., dtype=float32)``,
    rounded with ``rint`` and mapped to ``2 m - 1``, serves every pair, the target and the
    metric. Systems without a cell where both scores are present are dropped first, as
    mt-metrics-eval's ``data.GetCorrelations`` drops the systems without any gold score
    (they are in no pair). ``L`` is the number of inputs left after dropping every input
    where any other system lacks the metric or the target score: mt-metrics-eval drops
    missing entries from its flat vectors before reshaping them to (system, input), which
    lines up only when every system misses the same inputs, and dropping whole inputs is
    that case. Without an input left, no pair has a test: the result is NaN. A metric whose scores
    miss other inputs than another's gets its own ``L`` and so its own sign matrix. The
    arithmetic follows mt-metrics-eval too: float32 scores, system scores as float32 sums,
    each draw's sums from a float32 matrix product, and a draw counts when its difference
    reaches the observed one exactly (``"by-id"`` works in float64 with a rounding
    tolerance). On integer scores both are exact and agree; on fractional scores float32
    rounding moves a few p-values by a draw or two, which is why this mode keeps it (a
    different BLAS may still round a matrix product differently).

    Examples
    --------
    >>> import xcorrstat
    >>> ds = xcorrstat.datasets.summeval()
    >>> spa = xcorrstat.soft_pairwise_accuracy(ds, target="expert_relevance", metrics=["qa_eval_f1"], rng=0)
    >>> 0 <= float(spa["soft_pairwise_accuracy"][0]) <= 1
    True
    >>> wmt = xcorrstat.soft_pairwise_accuracy(ds, target="expert_relevance", metrics=["qa_eval_f1"],
    ...                                        draws="mt-metrics-eval")
    >>> wmt.attrs["draws"], wmt.attrs["rng"]
    ('mt-metrics-eval', 4)
    """
    n_resamples, seed, x, zb, batch = _soft_pairwise_accuracy_iv(data, target, metrics, n_resamples, rng, draws)
    coords = {d: x[d] for d in batch}
    names, kinds = zip(*_outputs(draws))
    options: dict[str, Any] = {"seed": seed, "n_resamples": n_resamples, "draws": draws}
    if x.chunks is not None or zb.chunks is not None:
        # lazy, one task: its means over the pairs of several rows at once round as in the eager call, bit for bit
        parts = [p.transpose(*batch).data for p in blocks_of_cells(_spa_block, x.chunk(-1), zb.chunk(-1), **options,
                                                                   outputs=[((), k) for k in kinds])]
    else:
        parts = list(_spa_block(x.values, zb.values, **options))
    out = xr.Dataset({name: (batch, part) for name, part in zip(names, parts)}, coords=coords)
    out.attrs = {"statistic": "soft pairwise accuracy = 1 - mean |p_human - p_metric| over system pairs",
                 "test": "one-sided paired sign-flip test of the summed per-input differences",
                 "target": str(target), "n_resamples": n_resamples, "rng": seed, "draws": draws}
    return out
