"""Draws enough for the decisions asked: ``n_resamples="auto"``.

A Monte-Carlo p-value from ``B`` draws is at least ``1 / (B + 1)`` (plus-one), so a
correction over a family of ``m`` comparisons can make nothing significant: Holm's
smallest corrected p-value is ``m / (B + 1)``, 51 / 1001 > .05 for a row of 52
metrics at 1,000 draws. Near ``alpha`` a decision also hangs on Monte-Carlo noise.

An ``"auto"`` run draws a first block of ``start`` draws, then doubles the draws of the
comparisons whose corrected decision is still open (about 60% more draws a look), up to
``max_resamples``. After each
look every raw p-value ``pi`` gets exact Clopper-Pearson bounds from its extreme count
``k`` of ``b`` draws, at confidence ``1 - risk / looks`` (:func:`~xcorrstat._resampling.
sequential.pvalue_bounds`, widened to hold the reported p-value). Holm, Bonferroni and
BH corrected p-values are monotone in every raw p-value, so a decision is *settled* when
the correction of all upper bounds already rejects it, or the correction of all lower
bounds already keeps it: whatever the open p-values turn out to be, it stays. A
comparison stops drawing once its decision is settled (and starts again, from its
next draw id, if another's bounds reopen it). A decision still open draws on to
``max_resamples`` (it is counted as open there).

Draws are keyed by draw id, so each comparison's p-value is exactly that of a fixed run
with its number of draws (``n_resamples_used``): a block adds draws ``n .. n + b - 1``. So a
decision left open at the cap is that of a fixed run of ``max_resamples`` draws, and a settled one
is, but for the resampling risk, that of any longer fixed run: an ``"auto"`` run gives the
clusters of a fixed run of ``max_resamples`` draws.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import xarray as xr

from .._types import Alternative, Correction, Family, PValue, Seed, SwapUnit
from .._resampling.draws import resolve_seed
from .._resampling.engine import RESAMPLE_DIM, bootstrap_draws, compute_with_progress, default_batch, progress_line
from .._resampling.pairs import PAIR_DIM, pair_permutation_draws
from .._resampling.pvalues import extreme_count
from .._resampling.sequential import pvalue_bounds
from .._schema import INPUT, METRIC, SYSTEM
from .._validation import check_draw_count
from .._warn import warn
from .decisions import OTHER, adjust_matrix
from .defaults import DEFAULTS

__all__ = ["AUTO", "OpenDecisionsWarning", "PairDraws", "auto_pair_pvalues", "check_draws", "draw_schedule",
           "auto_rerun", "open_decisions", "pvalue_floor"]

#: The value of ``n_resamples`` that asks for draws enough for the decisions.
AUTO = "auto"


class OpenDecisionsWarning(UserWarning):
    """``max_resamples`` was reached with corrected decisions at ``alpha`` still open."""


def check_draws(n_resamples: object, max_resamples: object) -> tuple[int, int | None]:
    """``(draws, cap)``: a fixed number of draws and ``None``, or for ``"auto"`` the first block and the cap.

    Examples
    --------
    >>> check_draws(500, 20000), check_draws("auto", 20000), check_draws("auto", 400)
    ((500, None), (1000, 20000), (400, 400))
    """
    if isinstance(n_resamples, str) and n_resamples == AUTO:
        cap = check_draw_count(max_resamples, "max_resamples")
        return min(int(DEFAULTS["start_resamples"].python), cap), cap
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)) or n_resamples < 1:
        raise ValueError(f"n_resamples must be a positive integer or 'auto', got {n_resamples!r}")
    return check_draw_count(n_resamples), None


def draw_schedule(start: int, cap: int) -> list[int]:
    """The draws made by each look of an ``"auto"`` run: ``start``, then about 60% more each look until ``cap``.

    Each step is a whole number of ``start`` blocks.

    Examples
    --------
    >>> draw_schedule(1000, 20000)
    [1000, 2000, 3000, 5000, 8000, 13000, 20000]
    """
    totals = [min(start, cap)]
    while totals[-1] < cap:
        step = max(1, round(0.6 * totals[-1] / start)) * start
        totals.append(min(totals[-1] + step, cap))
    return totals


def open_decisions(k: np.ndarray, b: np.ndarray, p: np.ndarray, *, correction: Correction | None, family: Family,
                   alternative: Alternative, alpha: float, risk: float, n_looks: int) -> np.ndarray:
    """True where a corrected decision at ``alpha`` of an (..., M, M) matrix is not settled yet.

    ``k`` extreme draws of ``b`` and the reported p-value ``p`` of each comparison (NaN: none).

    Examples
    --------
    >>> p = np.array([[np.nan, 1 / 1001, 31 / 1001], [600 / 1001, np.nan, 900 / 1001], [1.0, 0.5, np.nan]])
    >>> k = np.round(p * 1001 - 1)
    >>> open_decisions(k, np.full(p.shape, 1000), p, correction="holm", family="row", alternative="greater",
    ...                alpha=0.05, risk=0.001, n_looks=5).tolist()
    [[False, False, True], [False, False, False], [False, False, False]]
    """
    low, high = pvalue_bounds(k, b, p, risk=risk, n_looks=n_looks)
    with np.errstate(invalid="ignore"):
        rejected = adjust_matrix(high, correction=correction, family=family, alternative=alternative) <= alpha
        kept = adjust_matrix(low, correction=correction, family=family, alternative=alternative) > alpha
    return ~np.isnan(p) & ~rejected & ~kept


def pvalue_floor(b: np.ndarray, p: np.ndarray, *, pvalue: PValue, correction: Correction | None, family: Family,
                 alternative: Alternative) -> float:
    """The smallest corrected p-value attainable with ``b`` draws per comparison (NaN ``p``: none).

    Examples
    --------
    >>> p = np.where(np.eye(52, dtype=bool), np.nan, 0.5)
    >>> round(pvalue_floor(np.full(p.shape, 1000), p, pvalue="plus-one", correction="holm", family="row",
    ...                    alternative="greater"), 4)
    0.0509
    """
    with np.errstate(divide="ignore"):
        least = 1.0 / (1.0 + b) if pvalue == "plus-one" else np.zeros(np.shape(b))
    least = np.where(np.isnan(p), np.nan, least)
    adjusted = adjust_matrix(least, correction=correction, family=family, alternative=alternative)
    return float(np.nanmin(adjusted)) if np.isfinite(adjusted).any() else float("nan")


@dataclass(frozen=True)
class PairDraws:
    """The draws of pairs of metrics ``(pi, pk)``, ids ``first .. first + n - 1``: (..., pair, resample).

    A permutation run (``scheme``) or a paired bootstrap run (``dims``) of scores ``x``
    (metric, system, input, ...) against ``z``, with ``kw`` the level options.
    """

    x: xr.DataArray
    z: xr.DataArray
    kw: dict
    seed: int
    scheme: SwapUnit | None = None
    dims: tuple[str, ...] | None = None
    batch: int | None = None

    def __call__(self, pi: np.ndarray, pk: np.ndarray, first: int, n: int) -> xr.DataArray:
        if self.scheme is not None:
            d = pair_permutation_draws(self.x, self.z, pairs=(pi, pk), seed=self.seed, scheme=self.scheme,
                                       n_resamples=n, kw=self.kw, batch=self.batch, first=first)
            return d.transpose(..., PAIR_DIM, RESAMPLE_DIM)
        assert self.dims is not None
        used = np.unique(np.concatenate([pi, pk]))
        x = self.x.isel({METRIC: used})
        z = self.z.isel({METRIC: used}) if METRIC in self.z.dims else self.z
        kw = self.kw
        b = self.batch or default_batch(x.sizes[METRIC], x.sizes[SYSTEM], x.sizes[INPUT], kw["level"], kw["method"])
        r, _ = bootstrap_draws(x, z, seed=self.seed, resample=self.dims, n_resamples=n, batch=min(b, n),
                               complete_inputs=False, first=first, **kw)
        r = r.transpose(..., METRIC, RESAMPLE_DIM)
        lead = [d for d in r.dims if d not in (METRIC, RESAMPLE_DIM)]
        values = r.values
        d = values[..., np.searchsorted(used, pi), :] - values[..., np.searchsorted(used, pk), :]
        return xr.DataArray(d, dims=[*lead, PAIR_DIM, RESAMPLE_DIM], coords={k: r.coords[k] for k in lead if k in r.coords})


def _ordered_counts(d: np.ndarray, obs: np.ndarray, *, test: str,
                    alternative: Alternative) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Extreme counts of (i, k) and of (k, i), and defined draws, from the draws ``d`` of delta(i, k)."""
    stat = d if test == "permutation" else d - obs[..., None]  # the paired bootstrap counts centred draws
    k_ik, b = extreme_count(stat, obs, alternative)
    k_ki, _ = extreme_count(-stat, -obs, alternative)
    return k_ik, k_ki, b


def _pvalues(k: np.ndarray, b: np.ndarray, observed: np.ndarray, pvalue: PValue) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        p = (1.0 + k) / (1.0 + b) if pvalue == "plus-one" else k / b
    return np.where((b > 0) & ~np.isnan(observed), p, np.nan)


def _matrix(v_ik: np.ndarray, v_ki: np.ndarray, pi: np.ndarray, pk: np.ndarray, m: int, fill: Any) -> np.ndarray:
    """(..., P) values of the pairs (i, k) and (k, i) -> (..., M, M), ``fill`` on the diagonal."""
    out = np.full(v_ik.shape[:-1] + (m, m), fill, dtype=np.result_type(v_ik, v_ki, fill))
    out[..., pi, pk] = v_ik
    out[..., pk, pi] = v_ki
    return out


@dataclass
class _Run:
    """The state of an ``"auto"`` run over the unordered pairs ``(pi, pk)``: counts so far and draws made."""

    draw: Callable[[np.ndarray, np.ndarray, int, int], xr.DataArray]
    delta: xr.DataArray  # (..., metric, other_metric)
    test: str
    alternative: Alternative
    keep: bool
    pi: np.ndarray
    pk: np.ndarray
    made: np.ndarray  # draws made per pair
    lead: list | None = None
    obs: np.ndarray | None = None  # (..., P) observed delta(i, k)
    counts: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None  # k(i, k), k(k, i), b: (..., P)
    blocks: list | None = None  # (pairs, first, draws) kept for the distribution

    def extend(self, active: np.ndarray, total: int) -> None:
        """Draw the ``active`` pairs up to ``total`` draws, each from its own next draw id."""
        for first in np.unique(self.made[active]):
            sel = np.flatnonzero(active & (self.made == first))
            d = self.draw(self.pi[sel], self.pk[sel], int(first), total - int(first))
            if self.lead is None:
                self._start(d)
            assert self.obs is not None and self.counts is not None and self.lead is not None
            d = d.transpose(*self.lead, PAIR_DIM, RESAMPLE_DIM)
            values = (d if d.chunks is None else compute_with_progress(d, True)).values  # a task graph: its bar
            for acc, add in zip(self.counts, _ordered_counts(values, self.obs[..., sel], test=self.test,
                                                              alternative=self.alternative)):
                acc[..., sel] += add
            if self.keep:
                self.blocks = [*(self.blocks or []), (sel, int(first), values)]
            self.made[sel] = total

    def _start(self, d: xr.DataArray) -> None:
        self.lead = [dim for dim in d.dims if dim not in (PAIR_DIM, RESAMPLE_DIM)]
        delta = self.delta.transpose(*self.lead, METRIC, OTHER).values
        self.obs = delta[..., self.pi, self.pk]
        self.counts = (np.zeros(self.obs.shape, dtype=np.int64), np.zeros(self.obs.shape, dtype=np.int64),
                       np.zeros(self.obs.shape, dtype=np.int64))

    def matrices(self, pvalue: PValue) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(k, b, p)`` over (..., M, M)."""
        assert self.obs is not None and self.counts is not None
        k_ik, k_ki, b = self.counts
        m = self.delta.sizes[METRIC]
        k = _matrix(k_ik, k_ki, self.pi, self.pk, m, 0)
        bb = _matrix(b, b, self.pi, self.pk, m, 0)
        p = _matrix(_pvalues(k_ik, b, self.obs, pvalue), _pvalues(k_ki, b, -self.obs, pvalue), self.pi, self.pk, m,
                    np.nan)
        return k, bb, p

    def distribution(self) -> np.ndarray:
        """Every draw of delta (..., M, M, resample), NaN for draws a pair did not make."""
        assert self.obs is not None
        m, n = self.delta.sizes[METRIC], int(self.made.max())
        out = np.full(self.obs.shape + (n,), np.nan)
        for sel, first, values in self.blocks or []:
            out[..., sel, first:first + values.shape[-1]] = values
        mat = np.full(self.obs.shape[:-1] + (m, m, n), np.nan)
        mat[..., self.pi, self.pk, :] = out
        mat[..., self.pk, self.pi, :] = -out
        return mat


def _open_significant(still: np.ndarray, p: np.ndarray, *, correction: Correction | None, family: Family,
                      alternative: Alternative, alpha: float) -> int:
    """How many of the open decisions ``still`` the p-values ``p`` at the cap flag significant (corrected
    p-value <= ``alpha``, as :func:`~xcorrstat._significance.decisions.decide` flags them)."""
    with np.errstate(invalid="ignore"):
        flagged = adjust_matrix(p, correction=correction, family=family, alternative=alternative) <= alpha
    return int((still & flagged).sum())


def _round_line(what: str, look: int, n_looks: int, total: int, still: np.ndarray, p: np.ndarray,
                then: str = "") -> None:
    """The progress line of a look of an ``"auto"`` run (:func:`~xcorrstat._resampling.engine.progress_line`):
    the round, the draws so far, the decisions still open and, in ``then``, what the next round draws."""
    n_open, n_decisions = int(still.sum()), int((~np.isnan(p)).sum())
    progress_line(f"{what}, round {look} of at most {n_looks}: {total:,} draws so far, {n_open} of {n_decisions} "
                  f"corrected decisions still open{'; next round: ' + then if then else ''}")


def _open_message(n_open: int, alpha: float, cap: int, floor: float) -> str:
    return (f"n_resamples='auto': {n_open} corrected decision(s) at alpha={alpha:g} still open with draws capped at "
            f"max_resamples={cap} (p-values within Monte-Carlo error of their threshold; smallest attainable "
            f"corrected p-value {floor:.3g}); their flags and clusters may change with the seed: raise "
            "max_resamples to settle them")


def auto_pair_pvalues(draw: Callable[[np.ndarray, np.ndarray, int, int], xr.DataArray], delta: xr.DataArray, *,
                      test: str, alternative: Alternative, pvalue: PValue, correction: Correction | None,
                      family: Family, alpha: float, start: int, cap: int, risk: float | None = None,
                      keep_distribution: bool = False) -> tuple[xr.DataArray, xr.DataArray,
                                                                xr.DataArray | None, dict[str, Any]]:
    """P-values of every ordered pair of metrics from draws enough for the corrected decisions at ``alpha``.

    ``draw(pi, pk, first, n)`` gives the draws of delta of pairs ``(pi, pk)`` with draw ids
    ``first .. first + n - 1`` (e.g. a :class:`PairDraws`); ``delta`` is the observed delta over
    (..., metric, other_metric). The looks follow :func:`draw_schedule`; after each one the
    pairs with an open decision (:func:`open_decisions`, in any label of the extra dims) draw on.

    Returns
    -------
    pvalue : DataArray
        Over ``delta``'s dims, NaN on the diagonal; each equals the p-value of a fixed run
        with that pair's draws.
    n_resamples_used : DataArray
        Draws of each pair (metric, other_metric), 0 on the diagonal.
    distribution : DataArray or None
        With ``keep_distribution``: every draw of delta (..., metric, other_metric, resample),
        NaN beyond a pair's draws.
    attrs : dict
        ``n_resamples`` and ``n_resamples_used`` (the most draws of a pair), ``draws="auto"``,
        ``max_resamples``, ``risk``, ``pvalue_floor`` (smallest attainable corrected p-value at
        the draws used), ``n_open`` (decisions still open) and ``n_open_significant`` (how many of
        them the p-values at the cap flag significant). An :class:`OpenDecisionsWarning` says when
        ``n_open > 0``.
    """
    risk = float(DEFAULTS["risk"].python if risk is None else risk)
    m = delta.sizes[METRIC]
    pi, pk = np.triu_indices(m, 1)
    totals = draw_schedule(start, cap)
    run = _Run(draw, delta, test, alternative, keep_distribution, pi, pk, np.zeros(pi.size, dtype=np.int64))
    active = np.ones(pi.size, dtype=bool)
    settle: dict[str, Any] = dict(correction=correction, family=family, alternative=alternative, alpha=alpha,
                                  risk=risk, n_looks=len(totals))
    what = f"{test} draws"
    progress_line(f"{what} of {pi.size} metric pair(s): until every corrected decision at alpha={alpha:g} is "
                  f"settled, {totals[0]:,} to {cap:,} draws in at most {len(totals)} rounds")
    for look, total in enumerate(totals, 1):
        run.extend(active, total)
        k, b, p = run.matrices(pvalue)
        still = open_decisions(k, b, p, **settle)
        active = (still[..., pi, pk] | still[..., pk, pi]).reshape(-1, pi.size).any(axis=0)
        _round_line(what, look, len(totals), total, still, p, f"{int(active.sum())} metric pair(s) draw on to "
                    f"{totals[look]:,}" if look < len(totals) and active.any() else "")
        if not active.any():
            break
    assert run.lead is not None
    ordered = delta.transpose(*run.lead, METRIC, OTHER)
    pvalues = ordered.copy(data=p).transpose(*delta.dims)
    used = xr.DataArray(_matrix(run.made, run.made, pi, pk, m, 0), dims=(METRIC, OTHER),
                        coords={METRIC: delta[METRIC].values, OTHER: delta[OTHER].values})
    floor = pvalue_floor(b, p, pvalue=pvalue, correction=correction, family=family, alternative=alternative)
    n_open = int(still.sum())
    if n_open:
        warn(_open_message(n_open, alpha, cap, floor), OpenDecisionsWarning)
    n_open_significant = _open_significant(still, p, correction=correction, family=family,
                                           alternative=alternative, alpha=alpha)
    dist = None
    if keep_distribution:
        dist = xr.DataArray(run.distribution(), dims=[*run.lead, METRIC, OTHER, RESAMPLE_DIM],
                            coords=ordered.coords)
    n_max = int(run.made.max())
    attrs = {"n_resamples": n_max, "n_resamples_used": n_max, "draws": AUTO, "max_resamples": int(cap),
             "risk": risk, "pvalue_floor": floor, "n_open": n_open, "n_open_significant": n_open_significant}
    return pvalues, used, dist, attrs


def auto_rerun(run: Callable[[int, Any], xr.Dataset], *, n_resamples: object, max_resamples: object, rng: Seed,
               pvalue: PValue, correction: Correction | None, family: Family, alternative: Alternative,
               alpha: float) -> xr.Dataset:
    """``run(n, rng)`` with ``n_resamples`` draws, or for ``"auto"`` rerun with doubled draws until settled.

    For tests whose draws cannot be continued from a draw id: each look reruns the test
    with the draws of :func:`draw_schedule` (the first ``n`` draws of a longer run are those
    of the shorter one) and settles the decisions on the extreme counts implied by its
    p-values (``k = p (b + 1) - 1`` plus-one, ``k = p b`` fraction, ``b`` the draws made).
    Attrs as :func:`auto_pair_pvalues`'s.
    """
    n, cap = check_draws(n_resamples, max_resamples)
    if cap is None:
        return run(n, rng)
    seed = resolve_seed(rng)
    totals = draw_schedule(n, cap)
    for look, total in enumerate(totals, 1):
        res = run(total, seed)
        p = res["pvalue"].transpose(..., METRIC, OTHER).values
        b = np.full(p.shape, float(total))
        k = np.round(p * (b + 1.0) - 1.0) if pvalue == "plus-one" else np.round(p * b)
        still = open_decisions(k, b, p, correction=correction, family=family, alternative=alternative, alpha=alpha,
                               risk=float(DEFAULTS["risk"].python), n_looks=len(totals))
        _round_line("draws of all metric pairs", look, len(totals), total, still, p,
                    f"the test rerun with {totals[look]:,} draws" if still.any() and look < len(totals) else "")
        if not still.any():
            break
    floor = pvalue_floor(b, p, pvalue=pvalue, correction=correction, family=family, alternative=alternative)
    n_open = int(still.sum())
    if n_open:
        warn(_open_message(n_open, alpha, cap, floor), OpenDecisionsWarning)
    res.attrs.update({"n_resamples": total, "n_resamples_used": total, "draws": AUTO, "max_resamples": int(cap),
                      "risk": float(DEFAULTS["risk"].python), "pvalue_floor": floor, "n_open": n_open,
                      "n_open_significant": _open_significant(still, p, correction=correction, family=family,
                                                              alternative=alternative, alpha=alpha)})
    return res
