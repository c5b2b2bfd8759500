"""The system and input counts of bootstrap draws at global level, checked once for every statistic.

A global-level bootstrap draw is given as a count per system (``w``, (B, S)) and a count per
input (``c``, (B, I)), either left out for a dim that is not resampled: the form the Pearson and
Spearman kernels (:mod:`xcorrstat._kernels.linear.global_corr`) and the Kendall kernels
(:mod:`xcorrstat._kernels.rank.global_counts`) read, with the same checks and messages.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

__all__ = ["count_columns", "draw_counts"]


def _counts(a: ArrayLike | None, size: int, name: str, what: str) -> np.ndarray | None:
    """Count vectors (B, size) of non-negative integers, or None."""
    if a is None:
        return None
    out = np.asarray(a)
    if out.ndim != 2 or out.shape[1] != size:
        raise ValueError(f"{name} must be (draws, {size}): one count per {what[:-1]}, got shape {out.shape}")
    whole = out.dtype.kind in "iub" or np.all(out == np.round(out))  # integer dtypes need no rounding test
    if out.size and (out.min() < 0 or not whole):
        raise ValueError(f"{name} must hold non-negative integer counts of the {what}")
    return out.astype(np.int64, copy=False)


def draw_counts(w: ArrayLike | None, c: ArrayLike | None, n_systems: int, n_inputs: int,
                caller: str) -> tuple[np.ndarray | None, np.ndarray | None, int]:
    """The system counts ``w`` and input counts ``c`` of B draws as int64 (None where not given), and B.

    ``caller`` names the function in the message when neither is given.

    Raises
    ------
    ValueError
        If a count matrix is not (B, S) or (B, I), holds a negative or fractional count, both
        are None, or the two have different numbers of rows.

    Examples
    --------
    >>> w, c, b = draw_counts([[2, 0, 1]], None, 3, 4, "f")
    >>> w.tolist(), c, b
    ([[2, 0, 1]], None, 1)
    """
    wa, ca = _counts(w, n_systems, "w", "systems"), _counts(c, n_inputs, "c", "inputs")
    if wa is None and ca is None:
        raise ValueError(f"{caller} needs w (system counts) or c (input counts)")
    if wa is not None and ca is not None and wa.shape[0] != ca.shape[0]:
        raise ValueError(f"w and c must have one row per draw each, got {wa.shape[0]} and {ca.shape[0]} rows")
    b = wa.shape[0] if wa is not None else ca.shape[0] if ca is not None else 0
    return wa, ca, b


def count_columns(counts: np.ndarray | None, b: int, size: int, dtype: DTypeLike) -> np.ndarray:
    """Counts (B, size) of :func:`draw_counts` as a contiguous (size, B) of ``dtype``; ones where None
    (a dim that is not resampled: every label once).

    Examples
    --------
    >>> count_columns(None, 2, 3, np.int64).tolist()
    [[1, 1], [1, 1], [1, 1]]
    """
    if counts is None:
        return np.ones((size, b), dtype=dtype)
    return np.ascontiguousarray(counts.T, dtype=dtype)  # one pass: transposed and converted together
