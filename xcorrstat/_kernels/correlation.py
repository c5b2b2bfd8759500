"""Correlation kernels along the last axis, with pairwise deletion of missing values.

Every function here is pure NumPy: ``x`` and ``z`` hold the paired observations
along their last axis and broadcast over all leading axes, so a whole block of
metrics (and inputs, language pairs, ...) is correlated in one call.

Missing-value and undefined-statistic rule (the only one used in the package):

* a pair ``i`` is *valid* when neither ``x[..., i]`` nor ``z[..., i]`` is NaN;
* ``n`` is the number of valid pairs and is always returned;
* the statistic is NaN when ``n < min_pairs`` or when ``x`` or ``z`` is constant
  over the valid pairs; otherwise it is the textbook statistic on the valid
  pairs (Pearson's r, Spearman's rho with mid-ranks, Kendall's tau-b or tau-c).

Numerical range: Pearson's sums are formed after an exact power-of-two scaling of each
vector and a corrected two-pass centring (:mod:`xcorrstat._kernels.scaling`), so scores
of order 1e200 or 1e-300, or shifted by 1e6, give the same r; rank statistics compare
values only and are exact at any magnitude.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .custom import is_own, own_rows
from .._docs import fill_doc
from .._capabilities import METHODS, VARIANTS
from .._types import Method, Variant
from .scaling import rescaled_where_unsafe
from .rank.tau_counts import kendall_counts

__all__ = [
    "constant_over_valid",
    "corr",
    "kendall",
    "pearson",
    "same_cells",
    "spearman",
]

#: With epsilon > 0 the pair kernel is used up to this length (its cost grows with n^2)
EPSILON_MAX_N = 8192

# Vectors up to this length count every pair, O(n^2) (fast for systems); longer ones sort and
# merge-count, O(n log n) (inputs, cells).
PAIRWISE_MAX_N = 96


def _prepare(x: ArrayLike, z: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """``x`` and ``z`` as C-contiguous float64 arrays with an observations axis of the same length.

    Contiguous, because NumPy's sums along a strided axis round differently: a transposed view
    and its copy must give the same floats.
    """
    ax = np.ascontiguousarray(x, dtype=np.float64)
    az = np.ascontiguousarray(z, dtype=np.float64)
    if ax.ndim == 0 or az.ndim == 0:
        raise ValueError("x and z must have at least one axis (the observations axis)")
    if ax.shape[-1] != az.shape[-1]:
        raise ValueError(
            f"x and z must have the same length along the last axis, got {ax.shape[-1]} and {az.shape[-1]}"
        )
    return ax, az


def constant_over_valid(a: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """True where ``a`` takes a single value over the valid pairs (or has none), along the last axis.

    Examples
    --------
    >>> a = np.array([[1.0, 1.0, 5.0], [2.0, 3.0, 4.0]])
    >>> constant_over_valid(a, np.array([True, True, False])).tolist()
    [True, False]
    """
    lo = np.min(a, axis=-1, where=valid, initial=np.inf)
    hi = np.max(a, axis=-1, where=valid, initial=-np.inf)
    return ~(lo < hi)


def _undefined(x: np.ndarray, z: np.ndarray, valid: np.ndarray, n: np.ndarray, min_pairs: int) -> np.ndarray:
    """Too few valid pairs, or ``x`` or ``z`` constant over them."""
    return (n < max(int(min_pairs), 2)) | constant_over_valid(x, valid) | constant_over_valid(z, valid)


def _deviations(a: np.ndarray, valid: np.ndarray, nn: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Deviations from the mean over the valid values (0 elsewhere), and their mean (the mean's rounding error)."""
    d = np.where(valid, a - (np.sum(a, axis=-1, where=valid) / nn)[..., None], 0.0)
    return d, np.sum(d, axis=-1) / nn


def _pearson_valid(
    x: np.ndarray, z: np.ndarray, valid: np.ndarray, n: np.ndarray, undefined: np.ndarray | None = None
) -> np.ndarray:
    """Pearson r of the valid pairs; the caller masks undefined cases.

    Each vector is centred before the sums of products, and the sums are corrected for
    the rounding error of the means (corrected two-pass), so a large offset costs nothing;
    rows whose squares overflow or underflow are computed again after an exact
    power-of-two scaling (:func:`.scaling.rescaled_where_unsafe`).
    """
    return np.clip(rescaled_where_unsafe(_pearson_sums, x, z, valid, n, skip=undefined), -1.0, 1.0)


def _pearson_sums(
    x: np.ndarray, z: np.ndarray, valid: np.ndarray, n: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """r, sxx, szz of the valid pairs, centred before the sums of products."""
    with np.errstate(invalid="ignore", divide="ignore", over="ignore", under="ignore"):
        nn = np.where(n > 0, n, 1)
        (dx, cx), (dz, cz) = _deviations(x, valid, nn), _deviations(z, valid, nn)
        sxx = np.einsum("...i,...i->...", dx, dx) - nn * cx * cx
        szz = np.einsum("...i,...i->...", dz, dz) - nn * cz * cz
        sxz = np.einsum("...i,...i->...", dx, dz) - nn * cx * cz
        return sxz / np.sqrt(sxx * szz), sxx, szz


def _finish(r: np.ndarray, undefined: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``r`` with NaN where undefined, and ``n`` as int64."""
    r = np.where(undefined, np.nan, r)
    return r, np.asarray(n, dtype=np.int64)


def pearson(x: ArrayLike, z: ArrayLike, *, min_pairs: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """Pearson's r along the last axis with pairwise deletion; returns ``(r, n)``.

    Examples
    --------
    >>> r, n = pearson([1.0, 2.0, 3.0, 4.0], [1.0, 3.0, 2.0, np.nan])
    >>> round(float(r), 4), int(n)
    (0.5, 3)
    """
    ax, az = np.broadcast_arrays(*_prepare(x, z))
    valid = ~np.isnan(ax) & ~np.isnan(az)
    n = valid.sum(axis=-1)
    undefined = _undefined(ax, az, valid, n, min_pairs)
    return _finish(_pearson_valid(ax, az, valid, n, undefined), undefined, n)


def _midranks(a: np.ndarray, valid: np.ndarray | None) -> np.ndarray:
    """Mid-ranks along the last axis (of the valid entries only, NaN elsewhere, when ``valid`` is given)."""
    from scipy.stats import rankdata  # imported on use: scipy.stats takes about a second to import

    if valid is None:
        return rankdata(a, axis=-1)
    return rankdata(np.where(valid, a, np.nan), axis=-1, nan_policy="omit")


def same_cells(cells: list[np.ndarray], union: np.ndarray) -> bool:
    """Whether every operand's cells (boolean masks that broadcast to ``union``, the operands' cells
    combined) are ``union`` itself: then each operand keeps its un-broadcast shape, and whatever is
    done per row of it (ranking) is done once, not once per row of the broadcast result.

    Examples
    --------
    >>> gaps = np.array([[False, True]])
    >>> same_cells([gaps, np.broadcast_to(gaps, (3, 2))], np.broadcast_to(gaps, (3, 2)))
    True
    """
    return all(np.array_equal(np.broadcast_to(c, union.shape), union) for c in cells)


def spearman(x: ArrayLike, z: ArrayLike, *, min_pairs: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """Spearman's rho (Pearson's r of mid-ranks of the valid pairs); returns ``(rho, n)``.

    Examples
    --------
    >>> rho, n = spearman([1.0, 2.0, 3.0, 40.0], [1.0, 3.0, 2.0, 4.0])
    >>> round(float(rho), 4), int(n)
    (0.8, 4)
    """
    ax, az = _prepare(x, z)
    complete = not (np.isnan(ax).any() or np.isnan(az).any())
    if complete:
        # rank each operand on its own (un-broadcast) shape: z is shared by all metrics
        rx, rz = np.broadcast_arrays(_midranks(ax, None), _midranks(az, None))
        ax, az = np.broadcast_arrays(ax, az)
        valid = np.ones(ax.shape, dtype=bool)
    else:
        own = (~np.isnan(ax), ~np.isnan(az))
        bx, bz = np.broadcast_arrays(ax, az)
        valid = ~np.isnan(bx) & ~np.isnan(bz)
        if same_cells(list(own), valid):
            # every operand misses the same cells: its rows' ranks are its own, ranked on its un-broadcast shape
            rx, rz = np.broadcast_arrays(_midranks(ax, own[0]), _midranks(az, own[1]))
        else:
            rx, rz = _midranks(bx, valid), _midranks(bz, valid)
        ax, az = bx, bz
    n = valid.sum(axis=-1)
    undefined = _undefined(ax, az, valid, n, min_pairs)
    return _finish(_pearson_valid(rx, rz, valid, n, undefined), undefined, n)


def kendall(
    x: ArrayLike, z: ArrayLike, *, variant: Variant = "b", min_pairs: int = 3, epsilon: float = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """A Kendall variant along the last axis; returns ``(tau, n)``.

    ``variant``: ``"b"``, ``"c"``, ``"a"`` ((C - D) / N), ``"23"`` (tau_eq) or ``"acc23"``
    (acc_eq, pairwise accuracy with ties). ``epsilon`` makes a pair whose x values
    differ by at most epsilon a tie in x (the metric); z ties need exact equality.
    Short vectors (systems) count every pair, long ones (inputs, cells) sort and
    merge-count: one compiled loop a row (:mod:`.rank.tau_counts`), exact integer counts
    the same as the NumPy forms' (:func:`.rank.tau.kendall_pairwise`, :func:`.rank.tau.kendall_sorted`).

    Undefined (NaN): fewer than ``min_pairs`` valid pairs; for a, b and c also a
    constant x or z (for b, also every pair tied in x within epsilon). tau_eq and
    acc_eq count ties as agreement or disagreement, so they stay defined for a
    constant vector.

    Examples
    --------
    >>> x, z = [1.0, 2.0, 3.0, 4.0], [1.0, 3.0, 2.0, 4.0]
    >>> round(float(kendall(x, z)[0]), 4), round(float(kendall(x, z, variant="acc23")[0]), 4)
    (0.6667, 0.8333)
    """
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS!r} for Kendall, got {variant!r}")
    epsilon = float(epsilon)
    if not np.isfinite(epsilon) or epsilon < 0:
        raise ValueError(f"epsilon must be a finite number >= 0, got {epsilon!r}")
    if epsilon > 0 and variant == "c":
        raise ValueError("epsilon > 0 is not defined for tau-c (its m counts distinct values); use another variant")
    ax, az = _prepare(x, z)
    length = ax.shape[-1]
    if epsilon > 0 and length > EPSILON_MAX_N:
        raise ValueError(f"epsilon > 0 compares every pair of a vector; {length} values per correlation is more "
                         f"than {EPSILON_MAX_N} (use the input or system level)")
    rx, rz = ax, az  # un-broadcast: the compiled count reads a shared row in place
    ax, az = np.broadcast_arrays(ax, az)
    valid = ~np.isnan(ax) & ~np.isnan(az)
    n = valid.sum(axis=-1)
    tau = kendall_counts(rx, rz, valid, variant=variant, epsilon=epsilon,
                         by_sorting=length > PAIRWISE_MAX_N and not epsilon)
    if variant in ("23", "acc23"):
        undefined = (n < max(int(min_pairs), 2))
    else:
        undefined = _undefined(ax, az, valid, n, min_pairs)
        if variant == "b" and epsilon > 0:
            with np.errstate(invalid="ignore"):
                undefined = undefined | np.isnan(tau)  # every pair tied within epsilon
    return _finish(np.clip(tau, -1.0, 1.0), undefined, n)


@fill_doc
def corr(
    x: ArrayLike,
    z: ArrayLike,
    *,
    method: Method = "pearson",
    variant: Variant = "b",
    min_pairs: int = 3,
    epsilon: float = 0.0,
) -> tuple[np.ndarray, np.ndarray]:
    """Correlate ``x`` with ``z`` along the last axis, broadcasting leading axes.

    Parameters
    ----------
    x, z : array_like
        Paired observations on the last axis; leading axes broadcast.
    %(method)s
    %(variant)s
        Ignored by the other methods; see :func:`kendall`.
    min_pairs : int
        Fewest valid pairs for a defined statistic (default 3).
    epsilon : float, default 0
        Kendall only: metric (x) differences of at most epsilon are ties.

    Returns
    -------
    r : ndarray of float64
        The statistic; NaN where undefined (see module docstring).
    n : ndarray of int64
        Number of valid pairs.

    Examples
    --------
    >>> import numpy as np
    >>> r, n = corr(np.array([[1., 2, 3, 4], [1, 1, 1, 1]]), np.array([1., 3, 2, 4]),
    ...             method="kendall")
    >>> np.round(r, 3).tolist(), n.tolist()
    ([0.667, nan], [4, 4])
    """
    if is_own(method):
        return own_rows(method, x, z, min_pairs=min_pairs)  # type: ignore[arg-type]
    if epsilon and method != "kendall":
        raise ValueError(f"epsilon applies to Kendall's variants only, got method={method!r}")
    if method == "pearson":
        return pearson(x, z, min_pairs=min_pairs)
    if method == "spearman":
        return spearman(x, z, min_pairs=min_pairs)
    if method == "kendall":
        return kendall(x, z, variant=variant, min_pairs=min_pairs, epsilon=epsilon)
    raise ValueError(f"method must be one of {METHODS!r}, got {method!r}")
