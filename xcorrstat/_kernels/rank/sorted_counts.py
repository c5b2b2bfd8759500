"""Weighted Kendall counts and weighted mid-ranks of long rows, by sorting: O(S log S) a row.

The pair forms of :mod:`xcorrstat._kernels.weighted` (every pair of units, ``S (S - 1) / 2`` of
them per row and draw) are right for a few dozen systems; over thousands of systems their time
and memory grow with S squared. Both statistics follow from sorting instead (the compiled loops
of :mod:`xcorrstat._kernels.rank.sorted_counts_jit`):

* Kendall: sort the drawn units by x (tie groups, dense ranks), then by z with x's order kept
  inside a z tie group; ties in x, in z and in both are weighted sums over tie groups,
  ``sum_g (W_g^2 - sum_{a in g} w_a^2) / 2``, and the discordant pairs a weighted inversion count
  of x's ranks in z order (a Fenwick tree). Then ``C - D = N - t_x - t_z + t_xz - 2 D`` over the
  ``N = (n^2 - sum w^2) / 2`` pairs of distinct units. A tie within ``epsilon`` in x is a pair
  whose float difference is at most epsilon, as in the pair form.
* Spearman: a unit's weighted mid-rank is the weight of the smaller values plus (its tie
  group's weight + 1) / 2.

Counts are sums of products of integer weights, exact in float64 whatever their order, so the
counts -- and the statistics computed from them -- equal the pair forms' bit for bit. Which form a
statistic takes depends on the row length alone (:func:`sorted_form`), never on a batch or a
memory budget.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._compiled import loops

__all__ = ["SORTED_MIN_UNITS", "sorted_form", "sorted_kendall_counts", "sorted_midranks"]

#: Rows longer than this take the sorting form (the pair form is faster on a few dozen units).
SORTED_MIN_UNITS = 64


def sorted_form(length: int) -> bool:
    """Whether rows of ``length`` units take the sorting form (the only input: the row length).

    Examples
    --------
    >>> sorted_form(15), sorted_form(10_000)
    (False, True)
    """
    return int(length) > SORTED_MIN_UNITS


def _rows(*arrays: ArrayLike) -> tuple[tuple[int, ...], list[np.ndarray]]:
    """The arrays broadcast, as contiguous float64 rows (R, S), and their leading shape."""
    full = np.broadcast_arrays(*(np.asarray(a, dtype=np.float64) for a in arrays))
    lead, length = full[0].shape[:-1], full[0].shape[-1]
    return lead, [np.ascontiguousarray(a.reshape(-1, length)) for a in full]


def sorted_kendall_counts(x: ArrayLike, z: ArrayLike, w: ArrayLike,
                          epsilon: float = 0.0) -> tuple[np.ndarray, ...]:
    """Weighted Kendall counts along the last axis over pairs of distinct units (``x``, ``z``, ``w`` broadcast).

    A unit counts where its weight is positive and neither value is NaN. Returns
    ``(con_minus_dis, tx0, tx, tz, txz, distinct)``, each of the leading shape: C - D (pairs within
    ``epsilon`` in x count as neither), the pairs tied in x exactly, in x within ``epsilon``, in z,
    in both (x within epsilon), and the smaller number of distinct x and z values among the units.
    Copies of one unit (a weight above 1) are not pairs here.

    Examples
    --------
    >>> counts = sorted_kendall_counts([1.0, 2.0, 3.0], [1.0, 3.0, 2.0], [2, 1, 1])  # [1, 1, 2, 3] with [1, 1, 3, 2]
    >>> [float(c) for c in counts]
    [3.0, 0.0, 0.0, 0.0, 0.0, 3.0]
    """
    lead, (xa, za, wa) = _rows(x, z, w)
    out = np.empty((xa.shape[0], 6))
    loops("rank.sorted_counts_jit").kendall_counts(xa, za, wa, float(epsilon), out)
    counts = [out[:, k].reshape(lead) for k in range(5)]
    return (*counts, out[:, 5].astype(np.int64).reshape(lead))


def sorted_midranks(a: ArrayLike, w: ArrayLike) -> np.ndarray:
    """Weighted mid-ranks along the last axis among the non-NaN entries (1/2 where ``a`` is NaN).

    Examples
    --------
    >>> sorted_midranks([3.0, 1.0, 3.0, np.nan], [1, 2, 1, 1]).tolist()
    [3.5, 1.5, 3.5, 0.5]
    """
    lead, (aa, wa) = _rows(a, w)
    out = np.empty(aa.shape)
    loops("rank.sorted_counts_jit").midranks(aa, wa, out)
    return out.reshape(lead + aa.shape[-1:])
