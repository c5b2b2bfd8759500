"""Level correlations on (..., system, input) arrays.

* ``system``: correlate per-system means (over the inputs where both scores are
  present) across systems;
* ``input``: correlate across systems for each input, then average the defined
  per-input correlations;
* ``global``: correlate all (system, input) cells;
* ``within_system``: correlate across inputs for each system, then average the
  defined per-system correlations (mt-metrics-eval's ``average_by="sys"``).

The two averaging levels take ``average="macro"`` (each group counts once) or
``"weighted"`` (each group weighted by its number of valid items).

Systems are on axis -2 and inputs on axis -1; all leading axes broadcast, so one
call serves every metric (and every extra batch dim) at once.
"""

from __future__ import annotations

import numpy as np

from .correlation import corr
from .scaling import centre_cells

__all__ = ["LEVELS", "CORRELATE_LEVELS", "AVERAGES", "level_correlation", "system_means", "average_defined"]

#: Levels of every call (the resampling engines implement these three)
LEVELS = ("system", "input", "global")
#: Levels of the point statistics (correlate and the kernels)
CORRELATE_LEVELS = LEVELS + ("within_system",)
AVERAGES = ("macro", "weighted")


def system_means(x, z, *, complete_inputs: bool = False):
    """Per-system means of ``x`` and ``z`` over the inputs where both are present.

    Returns ``(mean_x, mean_z)`` of shape ``(..., system)``; a system with no usable
    input has NaN means. With ``complete_inputs`` only the inputs present for every
    system are used.
    """
    x = np.asarray(x, dtype=np.float64)
    z = np.asarray(z, dtype=np.float64)
    if not complete_inputs and not (np.isnan(x).any() or np.isnan(z).any()):
        return _bounded_mean(x, None), _bounded_mean(z, None)
    x, z = np.broadcast_arrays(x, z)
    valid = ~np.isnan(x) & ~np.isnan(z)
    if complete_inputs:
        valid = valid & valid.all(axis=-2, keepdims=True)
    return _bounded_mean(x, valid), _bounded_mean(z, valid)


def value_range(a, valid):
    """``(low, high)`` of ``a`` (..., S, I) over the ``valid`` cells of each row (inf, -inf if none).

    A mean of any subset of a row's valid cells lies in this range; clipping a rounded
    mean to it keeps a row of equal scores at exactly that score.
    """
    low = np.min(a, axis=-1, where=valid, initial=np.inf)
    high = np.max(a, axis=-1, where=valid, initial=-np.inf)
    return low, high


def _bounded_mean(a, valid):
    """Mean along the last axis over ``valid`` (NaN if none), kept within the values' range.

    A rounded mean can fall outside ``[min, max]``; then it is the nearer bound, so a
    system whose scores are all equal has exactly that score as its mean (a constant
    metric stays constant, and undefined, however large its values).
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        if valid is None:
            mean, low, high = a.mean(axis=-1), a.min(axis=-1), a.max(axis=-1)
        else:
            count = valid.sum(axis=-1)
            mean = np.where(count > 0, np.sum(a, axis=-1, where=valid) / count, np.nan)
            low, high = value_range(a, valid)
    return np.where(np.isnan(mean), mean, np.clip(mean, low, high))


def average_defined(r, axis: int = -1, weights=None):
    """Mean of the non-NaN values along ``axis`` and their count (NaN, 0 if none).

    With ``weights`` (broadcast to ``r``) the mean is weighted.
    """
    r = np.asarray(r, dtype=np.float64)
    defined = ~np.isnan(r)
    count = defined.sum(axis=axis)
    w = np.ones_like(r) if weights is None else np.broadcast_to(np.asarray(weights, dtype=np.float64), r.shape)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.sum(r * w, axis=axis, where=defined) / np.sum(w, axis=axis, where=defined)
    return np.where(count > 0, mean, np.nan), count.astype(np.int64)


def level_correlation(
    x,
    z,
    *,
    level: str = "system",
    method: str = "pearson",
    variant: str = "b",
    min_pairs: int = 3,
    complete_inputs: bool = False,
    skipna: bool = True,
    epsilon: float = 0.0,
    average: str = "macro",
):
    """Correlation of ``x`` with ``z`` at a level, over arrays shaped ``(..., S, I)``.

    Parameters
    ----------
    x, z : array_like
        Scores with systems on axis -2 and inputs on axis -1; leading axes broadcast.
    level : {"system", "input", "global", "within_system"}
    method : {"pearson", "spearman", "kendall"}
    variant : {"b", "c", "a", "23", "acc23"}
        Kendall's variant (see :func:`xcorrstat.kernels.kendall`).
    min_pairs : int
        Fewest valid pairs for a defined correlation.
    complete_inputs : bool
        System level only: use only inputs present for every system.
    skipna : bool
        If False, any missing cell makes the result NaN.
    epsilon : float
        Kendall only: metric differences of at most epsilon are ties.
    average : {"macro", "weighted"}
        Input and within-system levels: every defined group counts once, or is
        weighted by its number of valid items (both scores present).

    Returns
    -------
    r : ndarray
        The level correlation over the broadcast leading shape.
    n : ndarray of int64
        Systems (system level), defined inputs (input level), defined systems
        (within-system level) or cells (global level) used.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([[1., 2], [2, 3], [3, 5]]); z = np.array([[1., 1], [2, 3], [4, 2]])
    >>> r, n = level_correlation(x, z, level="system", method="pearson")
    >>> round(float(r), 4), int(n)  # means x: 1.5, 2.5, 4; z: 1, 2.5, 3
    (0.9226, 3)
    """
    x = np.asarray(x, dtype=np.float64)
    z = np.asarray(z, dtype=np.float64)
    if x.ndim < 2 or z.ndim < 2:
        raise ValueError("x and z need a system axis (-2) and an input axis (-1)")
    if x.shape[-2:] != z.shape[-2:]:
        raise ValueError(f"x and z must share (system, input) shape, got {x.shape[-2:]} and {z.shape[-2:]}")
    if average not in AVERAGES:
        raise ValueError(f"average must be one of {AVERAGES!r}, got {average!r}")
    kw = dict(method=method, variant=variant, min_pairs=min_pairs, epsilon=epsilon)
    if level == "system":
        # Pearson's r is shift-invariant: centre first so a large offset never rounds the means
        cx, cz = (centre_cells(x), centre_cells(z)) if method == "pearson" else (x, z)
        mx, mz = system_means(cx, cz, complete_inputs=complete_inputs)
        r, n = corr(mx, mz, **kw)
    elif level in ("input", "within_system"):
        if level == "input":
            x, z = np.swapaxes(x, -1, -2), np.swapaxes(z, -1, -2)
        r_in, n_in = corr(x, z, **kw)
        r, n = average_defined(r_in, axis=-1, weights=n_in if average == "weighted" else None)
    elif level == "global":
        r, n = corr(x.reshape(x.shape[:-2] + (-1,)), z.reshape(z.shape[:-2] + (-1,)), **kw)
    else:
        raise ValueError(f"level must be one of {CORRELATE_LEVELS!r}, got {level!r}")
    if not skipna:
        missing = np.isnan(x).any(axis=(-2, -1)) | np.isnan(z).any(axis=(-2, -1))
        r = np.where(missing, np.nan, r)
    return r, n
