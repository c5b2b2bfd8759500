"""Rank statistics of S system means per draw: Kendall's tau (every variant) from exact pair counts and
Spearman's rho from mid-ranks, for the system-level permutation draws of every pair
(:mod:`..linear.system_swap`, which forms each draw's swapped means).

* Kendall over a few dozen systems: the compiled loop of :mod:`.system_swap_jit` counts every pair of
  systems of each draw (:data:`COUNT_NAMES`), and :func:`tau_of_counts` turns the counts into a variant;
* Kendall over many systems (:func:`.sorted_counts.sorted_form`, the number of systems alone): the same
  exact counts by sorting each draw's means (:func:`.sorted_counts.sorted_kendall_counts`, O(S log S)
  per pair and draw);
* Spearman: Pearson's r of the mid-ranks, counted with a loop over the S systems vectorised over every
  row (:func:`rank_statistic`) or, over many systems, sorted (:func:`.sorted_counts.sorted_midranks`):
  the same numbers either way.

Every value equals the statistic of the explicitly swapped matrices (tests: scipy on the expanded swaps,
with missing cells).
"""

from __future__ import annotations

import numpy as np

from ..._types import Method, Variant
from ..correlation import pearson
from .sorted_counts import sorted_form, sorted_kendall_counts, sorted_midranks
from .tau import tau_from_counts

__all__ = ["COUNT_NAMES", "rank_statistic", "system_statistic", "tau_of_counts"]

#: The rows of Kendall's pair counts (:func:`.system_swap_jit.kendall_counts`): C - D, pairs tied in
#: x, in z, in both, valid systems, and the smaller number of distinct values (tau-c only; 0 otherwise).
COUNT_NAMES = ("con_minus_dis", "tx", "tz", "txz", "n", "distinct")


def tau_of_counts(counts: np.ndarray, variant: Variant, min_pairs: int) -> np.ndarray:
    """A Kendall variant from the pair counts (6, ...) of :data:`COUNT_NAMES`: NaN with fewer than ``max(min_pairs, 2)``
    valid systems and, but for tau_eq and acc_eq, where either vector is constant.

    Examples
    --------
    >>> tau_of_counts(np.array([4, 0, 0, 0, 4, 0]), "b", 3).round(4).tolist()
    0.6667
    """
    cmd, tx, tz, txz, n, distinct = counts
    tot = n * (n - 1) // 2
    tau = tau_from_counts(cmd, tot, tx, tz, n, distinct if variant == "c" else None, variant, txz)
    undefined = n < max(int(min_pairs), 2)
    if variant not in ("23", "acc23"):  # a constant vector: every valid pair tied
        undefined |= (tx == tot) | (tz == tot)
    return np.where(undefined, np.nan, np.clip(tau, -1.0, 1.0))


def _midranks(at: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Mid-ranks (S, R) of each column's valid values among themselves (NaN elsewhere), by counting."""
    ranks = np.empty(at.shape)
    for s in range(at.shape[0]):
        below = ((at < at[s]) & valid).sum(axis=0)
        tied = ((at == at[s]) & valid).sum(axis=0)  # itself included
        ranks[s] = below + (tied + 1) / 2.0
    return np.where(valid, ranks, np.nan)


def rank_statistic(xt: np.ndarray, zt: np.ndarray, *, min_pairs: int) -> np.ndarray:
    """Spearman's rho of each row of means (S, R) against the target's: (R,).

    Pearson's r (:func:`.correlation.pearson`) of the mid-ranks of the valid pairs, counted.

    Examples
    --------
    >>> xt = np.array([[1.0], [2.0], [3.0], [4.0]]); zt = np.array([[1.0], [3.0], [2.0], [4.0]])
    >>> rank_statistic(xt, zt, min_pairs=3).round(4).tolist()
    [0.8]
    """
    valid = ~np.isnan(xt) & ~np.isnan(zt)
    return pearson(_midranks(xt, valid).T, _midranks(zt, valid).T, min_pairs=min_pairs)[0]


def system_statistic(means: np.ndarray, target: np.ndarray, *, method: Method, variant: Variant,
                     min_pairs: int) -> np.ndarray:
    """Spearman's rho, or Kendall's tau over many systems (:func:`.sorted_counts.sorted_form`), of each
    row of S system means (..., S) against the target's, NaN-aware.

    Over many systems both statistics come from sorting each row (:mod:`.sorted_counts`, O(S log S) a
    row): Kendall's exact pair counts (:func:`tau_of_counts`), Spearman's
    mid-ranks; over fewer systems, Spearman's mid-ranks are counted with a loop over the S systems
    vectorised over every row (:func:`rank_statistic`). The mid-ranks are the
    same numbers either way, and Pearson's r of them is :func:`.correlation.pearson`'s. Pearson, and
    Kendall over fewer systems, are the compiled loops' (they take the per-metric terms, not the means).

    Raises
    ------
    ValueError
        For Pearson, or Kendall over fewer systems.

    Examples
    --------
    >>> system_statistic(np.array([[1.0, 2.0, 3.0, 4.0]]), np.array([[1.0, 3.0, 2.0, 4.0]]), method="spearman",
    ...                  variant="b", min_pairs=3).round(4).tolist()
    [0.8]
    """
    n_sys = means.shape[-1]
    means, target = np.broadcast_arrays(means, target)
    if sorted_form(n_sys) and method != "pearson":
        valid = ~np.isnan(means) & ~np.isnan(target)
        if method == "kendall":
            counts = sorted_kendall_counts(means, target, valid)
            cmd, _, tx, tz, txz, distinct = (np.rint(c).astype(np.int64) for c in counts)
            return tau_of_counts(np.stack([cmd, tx, tz, txz, valid.sum(axis=-1), distinct]), variant, min_pairs)
        ranks = (sorted_midranks(np.where(valid, a, np.nan), valid) for a in (means, target))
        return pearson(*(np.where(valid, r, np.nan) for r in ranks), min_pairs=min_pairs)[0]
    if method != "spearman":
        raise ValueError(f"{method} over {n_sys} systems is computed by the compiled loops, from the terms")
    lead = means.shape[:-1]
    xt = np.ascontiguousarray(means.reshape(-1, n_sys).T)  # (S, R): a system's row is contiguous
    zt = np.ascontiguousarray(target.reshape(-1, n_sys).T)
    return rank_statistic(xt, zt, min_pairs=min_pairs).reshape(lead)


