"""Williams' test on labelled data: is one metric's correlation with the target higher than another's?

The two correlations share the target, so they are dependent and overlap; Williams'
t (and Steiger's Z, Zou's interval) account for the correlation between the two
metrics. They need one correlation over ``n`` units, so they apply at the system
level (per-system means, ``n`` systems) and the global level (``n`` cells), not to
the input-level average of per-input correlations nor to the within-system average
of per-system correlations (the permutation and paired bootstrap tests apply there).

All three correlations use the same units: those where x, y and the target are all
present (at system level, the means are over the inputs where all three are present).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Literal

import numpy as np
import xarray as xr
from numpy.typing import ArrayLike

from .._notes import add_notes
from .._docs import fill_doc
from .._resampling.settings import Williams, as_settings
from .._types import Alternative, Level, Method
from .._kernels import corr, system_means
from .._kernels.correlation import same_cells
from .._kernels.dependent import steiger_z, williams, zou_ci
from .._kernels.scaling import centre_cells
from .._resampling.pvalues import ALTERNATIVES
from .._capabilities import check
from .._schema import INPUT, METRIC, SYSTEM, check_finite
from .._selection import split_scores
from .._validation import check_choice, check_confidence_level
from .common import pair_notes
from .._warn import one_call

__all__ = ["dependent_correlations", "williams_test"]

def dependent_correlations(x: ArrayLike, y: ArrayLike, z: ArrayLike, *, level: Level,
                           method: Method) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(r_xz, r_yz, r_xy, n)`` over the units where x, y and z are all present; x, y, z (..., S, I)."""
    x, y, z = (np.asarray(a, dtype=np.float64) for a in (x, y, z))
    missing = [np.isnan(a) for a in (x, y, z)]
    invalid = missing[0] | missing[1] | missing[2]
    if level == "system" or not same_cells(missing, invalid):
        x, y, z = (np.where(invalid, np.nan, a) for a in np.broadcast_arrays(x, y, z))
    # else every operand misses the same cells: kept un-broadcast, so each is ranked once, not once per pair
    if level == "system":
        if method == "pearson":  # exact scaling and offset removal: no offset rounds the means
            x, y, z = centre_cells(x), centre_cells(y), centre_cells(z)
        (mx, mz), (my, _) = system_means(x, z), system_means(y, z)
    else:
        mx, my, mz = (a.reshape(a.shape[:-2] + (-1,)) for a in (x, y, z))
    r_xz, n = corr(mx, mz, method=method, min_pairs=4)
    r_yz, _ = corr(my, mz, method=method, min_pairs=4)
    r_xy, _ = corr(mx, my, method=method, min_pairs=4)
    r_xz, r_yz, r_xy, n = np.broadcast_arrays(r_xz, r_yz, r_xy, n)
    return r_xz.copy(), r_yz.copy(), r_xy.copy(), n.copy()


def _williams_kernel(x, y, z, *, level, method, alternative, absolute, confidence_level):
    check_finite(x, "x scores")
    check_finite(y, "y scores")
    check_finite(z, "target scores")
    r_xz, r_yz, r_xy, n = dependent_correlations(x, y, z, level=level, method=method)
    if absolute:  # strength of association whatever its sign, in all three statistics
        r_xz, r_yz, r_xy = np.abs(r_xz), np.abs(r_yz), np.abs(r_xy)
    t, p = williams(r_xz, r_yz, r_xy, n, alternative=alternative)
    zs, pz = steiger_z(r_xz, r_yz, r_xy, n, alternative=alternative)
    low, high = zou_ci(r_xz, r_yz, r_xy, n, confidence_level=confidence_level)
    return tuple(np.asarray(v, dtype=np.float64) for v in (r_xz, r_yz, r_xy, t, p, zs, pz, low, high)) + (
        np.asarray(n, dtype=np.int64),
    )


def _williams_test_iv(data, x, y, target, level, method, alternative, confidence_level):
    """Validated arguments of :func:`williams_test`: ``(xs, ys, z, confidence_level)``."""
    check("williams_test", level=level, method=method)
    check_choice(alternative, ALTERNATIVES, "alternative")
    confidence_level = check_confidence_level(confidence_level)
    if x == y:
        raise ValueError(f"x and y must be two different metrics, got x=y={x!r}")
    if not isinstance(target, str):
        raise TypeError(f"target must be one score name, got {target!r}")
    scores, z, _ = split_scores(data, target=target, metrics=[x, y], level=level)
    xs, ys = scores.isel({METRIC: 0}, drop=True), scores.isel({METRIC: 1}, drop=True)
    return xs, ys, z, confidence_level


def _williams_attrs(x, y, target, level, method, alternative, absolute, confidence_level) -> dict:
    return {
        "test": "williams", "x": str(x), "y": str(y), "target": str(target), "level": level, "method": method,
        "alternative": alternative, "absolute": int(bool(absolute)), "confidence_level": confidence_level,
        "units": "systems (means over inputs where x, y and the target are present)" if level == "system"
        else "cells where x, y and the target are present",
    }


@one_call
@fill_doc
def williams_test(
    data: xr.Dataset | xr.DataArray,
    *,
    x: Hashable,
    y: Hashable,
    target: Hashable,
    level: Level = "system",
    method: Method = "pearson",
    test: Williams | Literal["williams"] = "williams",
    alternative: Alternative = "greater",
    confidence_level: float = 0.95,
) -> xr.Dataset:
    """Williams' t test (with Steiger's Z and Zou's interval) of ``r(x, target) - r(y, target)``.

    Parameters
    ----------
    %(data)s
    x, y : str
        The two metrics; H1 for ``"greater"``: x correlates more strongly with the target.
    %(target)s
    level : {"system", "global"}
        Per-system means (n = systems) or all cells (n = cells). The input and
        within-system levels average correlations, which have no ``n``: they raise
        a ValueError (use :func:`permutation_test` or :func:`paired_bootstrap_test`).
    method : {"pearson", "spearman"}
        Spearman applies the same tests to rank correlations (an approximation).
    alternative : {"greater", "less", "two-sided"}
        The direction fixed in advance; two-sided doubles the one-tailed p-value.
    test : Williams, default Williams()
        ``Williams(absolute=True)`` compares ``|r|`` (the WMT convention) instead of signed r
        (R ``psych::r.test``).
    confidence_level : float
        Of Zou's (2007) interval for the difference.

    Returns
    -------
    Dataset
        ``delta`` (r_xz - r_yz), ``r_xz``, ``r_yz``, ``r_xy``, ``statistic`` (Williams' t,
        df = n - 3), ``pvalue``, ``steiger_z``, ``steiger_pvalue``, ``low``/``high``
        (Zou's interval) and coordinate ``n``; NaN where a correlation is undefined or
        n < 4.

    Examples
    --------
    >>> import xcorrstat
    >>> ds = xcorrstat.datasets.summeval()
    >>> res = xcorrstat.williams_test(ds, x="qa_eval_f1", y="rouge_2_f1", target="expert_relevance")
    >>> round(float(res["pvalue"]), 3)
    0.034
    """
    absolute = as_settings(test, "test", (Williams,)).absolute  # type: ignore[union-attr]
    xs, ys, z, confidence_level = _williams_test_iv(data, x, y, target, level, method, alternative,
                                                    confidence_level)
    if any(v.chunks is not None for v in (xs, ys, z)):
        xs, ys, z = (v.chunk({SYSTEM: -1, INPUT: -1}) for v in (xs, ys, z))
    names = ("r_xz", "r_yz", "r_xy", "statistic", "pvalue", "steiger_z", "steiger_pvalue", "low", "high", "n")
    outs = xr.apply_ufunc(
        _williams_kernel, xs, ys, z,
        input_core_dims=[[SYSTEM, INPUT]] * 3,
        output_core_dims=[[]] * len(names),
        dask="parallelized",
        output_dtypes=[np.float64] * (len(names) - 1) + [np.int64],
        kwargs=dict(level=level, method=method, alternative=alternative, absolute=bool(absolute),
                    confidence_level=confidence_level),
    )
    out = xr.Dataset(dict(zip(names[:-1], outs[:-1]))).assign_coords(n=outs[-1])
    out["delta"] = out["r_xz"] - out["r_yz"]
    out = out[["delta", *names[:-1]]]
    out.attrs = _williams_attrs(x, y, target, level, method, alternative, absolute, confidence_level)
    add_notes(out.attrs, *pair_notes(data, x=x, y=y, target=target))
    out["statistic"].attrs["long_name"] = "Williams' t (df = n - 3)"
    out["low"].attrs["long_name"] = "lower bound of Zou's interval for r_xz - r_yz"
    out["high"].attrs["long_name"] = "upper bound of Zou's interval for r_xz - r_yz"
    return out
