"""Are the scores normal enough for Fisher intervals and Williams' test? (Shapiro-Wilk report)

Deutsch, Dror & Roth (2021, Table 2) check the normality assumption behind the
Fisher transformation and Williams' test: at system level, whether the per-system
means of each score look normal; at input level, for how many inputs the scores of
the systems do not.
"""

from __future__ import annotations

import warnings
from collections.abc import Hashable, Sequence

import numpy as np
import xarray as xr

from .._schema import INPUT, METRIC, SYSTEM, as_dataset, check_finite
from .._validation import check_unit_interval
from .._warn import one_call

__all__ = ["normality"]

_MIN_N = 3  # Shapiro-Wilk needs at least three values


def _shapiro_rows(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Shapiro-Wilk W and p of each row of (R, N), over its non-missing values.

    Undefined (NaN) for a row with fewer than 3 values or with all values equal.
    Rows with the same number of values are tested in one call of scipy's vectorised
    ``shapiro`` (``axis=-1``).
    """
    from scipy import stats  # imported on use: scipy.stats takes about a second to import

    r = values.shape[0]
    w = np.full(r, np.nan)
    p = np.full(r, np.nan)
    valid = ~np.isnan(values)
    count = valid.sum(axis=-1)
    with np.errstate(invalid="ignore"):
        spread = np.nanmax(np.where(valid, values, np.nan), axis=-1, initial=-np.inf) - \
            np.nanmin(np.where(valid, values, np.nan), axis=-1, initial=np.inf)
    usable = (count >= _MIN_N) & (spread > 0)
    for n in np.unique(count[usable]):  # one vectorised call per sample size
        rows = np.flatnonzero(usable & (count == n))
        packed = np.sort(np.where(valid[rows], values[rows], np.inf), axis=-1)[:, :n]
        res = stats.shapiro(packed, axis=-1)
        w[rows], p[rows] = res.statistic, res.pvalue
    return w, p


def _normality_iv(data, metrics, alpha) -> tuple[float, xr.DataArray, list[Hashable], np.ndarray]:
    """The level, the scores stacked along ``metric``, its batch dims and its (..., S, I) values."""
    alpha = check_unit_interval(alpha, "alpha")
    ds = as_dataset(data)
    names = list(ds.data_vars) if metrics is None else list(metrics)
    if not names:
        raise ValueError("metrics must name at least one variable of the data")
    missing = [n for n in names if n not in ds.data_vars]
    if missing:
        raise ValueError(f"metrics={missing!r}: not in the data; available: {list(ds.data_vars)}")
    stacked = xr.concat([ds[n].astype(np.float64) for n in names], dim=METRIC, coords="minimal",
                        compat="override").assign_coords({METRIC: [str(n) for n in names]})
    for dim in (SYSTEM, INPUT):
        if dim not in stacked.dims:
            raise ValueError(f"data must have a {dim!r} dim, got dims {tuple(stacked.dims)}")
    batch = [d for d in stacked.dims if d not in (SYSTEM, INPUT)]
    arr = stacked.transpose(*batch, SYSTEM, INPUT).values
    check_finite(arr, "scores")
    return alpha, stacked, batch, arr


@one_call
def normality(
    data: xr.Dataset | xr.DataArray,
    *,
    metrics: Sequence[Hashable] | None = None,
    alpha: float = 0.05,
) -> xr.Dataset:
    """Shapiro-Wilk normality report of every score, at system and input level.

    Parameters
    ----------
    data : Dataset or DataArray
        Scores with ``system`` and ``input`` dims (extra dims are reported label by label).
    metrics : list of str, optional
        Scores to test; default every data variable (metrics and human scores).
    alpha : float, default 0.05
        Level at which an input's test counts as rejecting normality.

    Returns
    -------
    Dataset
        Over ``metric`` (and any extra dims): ``system_statistic`` and
        ``system_pvalue`` (the test on the per-system means over the available
        inputs), ``input_reject_share`` (the share of tested inputs whose test on the
        systems' scores rejects at ``alpha``) and ``n_inputs_tested``. A test needs at
        least 3 non-missing values that are not all equal; inputs without that are
        not tested (and a score with no tested input has a NaN share).

    Examples
    --------
    >>> import xcorrstat
    >>> ds = xcorrstat.datasets.summeval()
    >>> rep = xcorrstat.diagnostics.normality(ds, metrics=["qa_eval_f1", "expert_relevance"])
    >>> list(rep.data_vars)
    ['system_statistic', 'system_pvalue', 'input_reject_share', 'n_inputs_tested']
    """
    alpha, stacked, batch, arr = _normality_iv(data, metrics, alpha)
    lead = arr.shape[:-2]
    s, i = arr.shape[-2:]
    flat = arr.reshape(-1, s, i)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a system with no score: NaN mean
        means = np.nanmean(flat, axis=-1)  # (R, S)
    w_sys, p_sys = _shapiro_rows(means)
    per_input = np.swapaxes(flat, -1, -2).reshape(-1, s)  # (R * I, S)
    _, p_inp = _shapiro_rows(per_input)
    p_inp = p_inp.reshape(-1, i)
    tested = ~np.isnan(p_inp)
    n_tested = tested.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(n_tested > 0, (tested & (p_inp < alpha)).sum(axis=-1) / n_tested, np.nan)
    coords = {d: stacked[d] for d in batch}
    out = xr.Dataset(
        {
            "system_statistic": (batch, w_sys.reshape(lead)),
            "system_pvalue": (batch, p_sys.reshape(lead)),
            "input_reject_share": (batch, share.reshape(lead)),
            "n_inputs_tested": (batch, n_tested.reshape(lead).astype(np.int64)),
        },
        coords=coords,
    )
    out["system_pvalue"].attrs["long_name"] = "Shapiro-Wilk p-value of the per-system means"
    out["input_reject_share"].attrs["long_name"] = f"share of inputs whose Shapiro-Wilk test rejects at {alpha:g}"
    out.attrs = {"test": "Shapiro-Wilk (scipy.stats.shapiro)", "alpha": alpha,
                 "undefined": "fewer than 3 non-missing values, or all equal: not tested"}
    return out
