"""Kendall's tau of plain rows from pair counts made by one compiled loop a row
(:mod:`.tau_counts_jit`): the kernel of :func:`xcorrstat._kernels.correlation.kendall`.

Short rows (systems) count every pair, long rows (inputs, cells) sort; the choice is the caller's,
from the row length (and epsilon) alone, never from a budget or a batch. A row of ``x`` or ``z`` that
the other operand broadcasts over is read in place, not copied per row (the human scores of every
metric), and z's row is sorted once however many rows of x it is paired with. The counts are integers,
the same as those of the NumPy kernels :func:`.tau.kendall_pairwise` and :func:`.tau.kendall_sorted`
(the oracles of the tests), and tau follows from them by the same formula
(:func:`.tau.tau_from_counts`), so the values are the same bit for bit.
"""

from __future__ import annotations

import numpy as np

from ..._types import Variant
from .._compiled import loops
from .tau import tau_from_counts

__all__ = ["kendall_counts"]


def _rows(a: np.ndarray, lead: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """``a`` (..., n) as its own rows (rows, n), and the row of it each row of ``lead`` reads."""
    own = a.shape[:-1]
    count = int(np.prod(own, dtype=np.int64))
    index = np.broadcast_to(np.arange(count, dtype=np.int64).reshape(own), lead)
    return np.ascontiguousarray(a.reshape(count, a.shape[-1])), np.ascontiguousarray(index).reshape(-1)


def kendall_counts(
    x: np.ndarray, z: np.ndarray, valid: np.ndarray, *, variant: Variant = "b", epsilon: float = 0.0,
    by_sorting: bool = False,
) -> np.ndarray:
    """Tau of each row of ``valid`` (its broadcast shape) from the compiled pair counts.

    ``x`` and ``z`` are float64 arrays whose leading axes broadcast to ``valid``'s (un-broadcast: a
    shared row is read in place); ``valid`` marks the pairs used. ``by_sorting`` counts by sorting
    (O(n log n) a row, no epsilon), otherwise from every pair (O(n^2) a row, ``|x_i - x_j| <= epsilon``
    a tie in x).

    Examples
    --------
    >>> x = np.array([[1.0, 2.0, 3.0, 4.0]]); z = np.array([1.0, 3.0, 2.0, 4.0])
    >>> valid = np.ones((1, 4), dtype=bool)
    >>> kendall_counts(x, z, valid).round(4).tolist(), kendall_counts(x, z, valid, by_sorting=True).round(4).tolist()
    ([0.6667], [0.6667])
    """
    if by_sorting and epsilon:
        raise ValueError("the sorted count has no epsilon; count every pair")
    lead, length = valid.shape[:-1], valid.shape[-1]
    (x2, xrow), (z2, zrow) = _rows(x, lead), _rows(z, lead)
    flat = np.ascontiguousarray(valid).reshape(int(np.prod(lead, dtype=np.int64)), length)
    zorder = np.argsort(z2, axis=-1) if by_sorting else np.zeros((1, 1), dtype=np.int64)
    out = np.zeros((flat.shape[0], 6), dtype=np.int64)
    if flat.shape[0]:
        loops("rank.tau_counts_jit").row_counts(x2, xrow, z2, zrow, flat, zorder.astype(np.int64, copy=False),
                                                float(epsilon), bool(by_sorting), out)
    cmd, tx, tz, txz, n, distinct = out.T
    tot = n * (n - 1) // 2
    tau = tau_from_counts(cmd, tot, tx, tz, n, distinct if variant == "c" else None, variant, txz)
    return np.asarray(tau).reshape(lead)
