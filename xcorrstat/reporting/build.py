"""The paper table in one call: correlations with CIs and significance clusters per level.

:func:`report` runs, for each level, a bootstrap confidence interval for every metric
(:func:`xcorrstat.bootstrap`) and the all-pairs test (:func:`xcorrstat.compare`), and
returns a :class:`Report` holding both, ranked. The ``xcorrstat report`` command is
this function plus :meth:`Report.save`.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import IO, Any, Literal

import numpy as np
import pandas as pd
import xarray as xr

from ..compare import compare
from ..kernels import LEVELS
from ..resampling.bootstrap import bootstrap
from ..resampling.draws import resolve_seed
from ..tidy import tidy
from ..validation import check_choice

__all__ = ["Report", "report"]

_UNITS = {"system": "systems", "input": "inputs", "global": "cells"}
_SCHEMES = {("system",): "SYSTEMS", ("input",): "INPUTS", ("input", "system"): "BOTH"}


def _scheme(dims: Sequence[str], test: str) -> str:
    key = tuple(sorted([dims] if isinstance(dims, str) else dims))
    return f"{test}-{_SCHEMES.get(key, '+'.join(key))}"


def _ranks(corr: np.ndarray) -> np.ndarray:
    """1 = highest correlation; NaN last (rank 0 marks undefined)."""
    order = np.argsort(np.where(np.isnan(corr), np.inf, -corr), kind="stable")
    ranks = np.empty(corr.shape, dtype=np.int64)
    ranks[order] = np.arange(1, corr.size + 1)
    return np.where(np.isnan(corr), 0, ranks)


@dataclass
class Report:
    """Correlations with confidence intervals and significance clusters, per level.

    Attributes
    ----------
    intervals : Dataset
        Over (``level``, ``metric``): ``correlation``, ``low``, ``high``, ``n``,
        ``cluster`` (1 = top significance cluster, 0 = undefined) and ``rank``.
    comparisons : Dataset
        The :func:`xcorrstat.compare` results stacked over ``level``: ``delta``,
        ``pvalue``, ``pvalue_corrected``, ``significant`` over (``level``, ``metric``,
        ``other_metric``), with ``correlation`` and ``cluster`` over (``level``, ``metric``).
    settings : dict
        Every option the report was made with.
    """

    intervals: xr.Dataset
    comparisons: xr.Dataset
    settings: dict = field(default_factory=dict)

    @property
    def levels(self) -> list[str]:
        return [str(v) for v in self.intervals["level"].values]

    def table(self) -> pd.DataFrame:
        """The ranked table: one row per (level, metric), best first within each level."""
        frame = tidy(self.intervals)
        frame["level"] = pd.Categorical(frame["level"], categories=self.levels, ordered=True)
        frame["_undefined"] = frame["rank"] == 0
        frame = frame.sort_values(["level", "_undefined", "rank"]).drop(columns="_undefined")
        frame["level"] = frame["level"].astype(str)
        return frame.reset_index(drop=True)

    def pairs(self) -> pd.DataFrame:
        """Every ordered pair's test, one row per (level, metric, other_metric)."""
        return tidy(self.comparisons)

    def to_text(self, *, digits: int = 3) -> str:
        """The ranked tables as plain text, one block per level."""
        table = self.table()
        blocks = [self._heading()]
        for lev in self.levels:
            sub = table[table["level"] == lev]
            n = int(sub["n"].max()) if len(sub) else 0
            blocks.append(f"\n{lev.capitalize()} level (n = {n} {_UNITS.get(lev, 'units')})")
            width = max([len("metric"), *(len(str(m)) for m in sub["metric"])])
            lines = [f"{'rank':>4}  {'metric':<{width}}  {'r':>{digits + 3}}  {'CI':^{2 * digits + 10}}  cluster"]
            for row in sub.itertuples():
                rank = str(row.rank) if row.rank else "-"
                ci = f"[{row.low:.{digits}f}, {row.high:.{digits}f}]"
                cluster = str(row.cluster) if row.cluster else "-"
                lines.append(f"{rank:>4}  {str(row.metric):<{width}}  {row.correlation:>{digits + 3}.{digits}f}  "
                             f"{ci:^{2 * digits + 10}}  {cluster:>7}")
            blocks.append("\n".join(lines))
        return "\n".join(blocks) + "\n"

    def _heading(self) -> str:
        s = self.settings
        correction = s["correction"] or "no correction"
        where = f"{s['source']}; " if s["source"] else ""
        return (f"{s['method'].capitalize()} correlation with {s['target']!r} ({where}"
                f"{self.intervals.sizes['metric']} metrics)\n"
                f"{s['confidence_level']:.0%} {s['ci_scheme']} percentile CIs, {s['n_resamples']} resamples; "
                f"clusters from {s['test_scheme']} tests ({correction}, alpha = {s['alpha']:g}); seed {s['seed']}")

    def __repr__(self) -> str:
        return self.to_text()

    def _repr_html_(self) -> str:
        from .html import tables_html

        return tables_html(self)

    def figures(self) -> dict[str, Any]:
        """The two figures: ``"ci"`` (forest plot, levels side by side) and ``"significance"``."""
        from ..plot.agreement import _pyplot
        from ..plot.significance import plot_ci, plot_significance

        plt = _pyplot()
        ci = self.intervals[["correlation", "low", "high"]]
        ci.attrs = dict(self.intervals.attrs)
        fig_ci = plot_ci(ci)
        if not hasattr(fig_ci, "savefig"):  # a single level gives an Axes
            fig_ci = fig_ci.figure
        m = self.intervals.sizes["metric"]
        side = 2.4 + 0.26 * m
        n_lev = len(self.levels)
        fig_sig, axes = plt.subplots(1, n_lev, figsize=(n_lev * (side + 1.0), side), squeeze=False,
                                     layout="constrained")
        for ax, lev in zip(axes[0], self.levels):
            sub = self.comparisons.sel(level=lev)
            sub.attrs = dict(self.comparisons.attrs, level=lev)
            plot_significance(sub, ax=ax)
        return {"ci": fig_ci, "significance": fig_sig}

    def save(self, out: str, *, formats: Sequence[str] = ("png", "svg"), dpi: int = 150) -> dict[str, str]:
        """Write the table (CSV, JSON), the pairs (CSV), both figures and an HTML page to directory ``out``.

        Returns a dict from what was written to its file name.
        """
        from .files import write_all

        return write_all(self, out, formats=formats, dpi=dpi)


def report(
    data: xr.Dataset | xr.DataArray,
    *,
    target: Hashable,
    metrics: Sequence[Hashable] | None = None,
    level: str | Sequence[str] = ("system", "input"),
    method: Literal["pearson", "spearman", "kendall"] = "pearson",
    variant: Literal["b", "c", "a", "23", "acc23"] = "b",
    resample: str | Sequence[str] = ("system", "input"),
    test: Literal["permutation", "bootstrap", "williams"] = "permutation",
    permute: str | Sequence[str] = ("system", "input"),
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    alpha: float = 0.05,
    correction: Literal["bonferroni", "holm", "fdr_bh"] | None = "holm",
    rng: int | np.random.Generator | np.random.SeedSequence | None = None,
    progress: bool = False,
    log: IO[str] | None = None,
    source: str = "",
) -> Report:
    """Every metric's correlation with a CI and its significance cluster, for each level.

    For each level: a bootstrap CI per metric (``resample``, default BOOT-BOTH) and
    the all-pairs test (``test``/``permute``, default PERM-BOTH) whose significant
    pairs, after ``correction``, give greedy significance clusters.

    Parameters
    ----------
    data : Dataset or DataArray
        Scores with ``system`` and ``input`` dims.
    target : str
        Human score.
    metrics : list of str, optional
        Default every non-human variable.
    level : str or list of str, default ("system", "input")
    method : {"pearson", "spearman", "kendall"}, default "pearson"
    variant : {"b", "c", "a", "23", "acc23"}
        Kendall's variant (tau-a, tau_eq and acc_eq: system and input level only).
    resample : str or tuple, default ("system", "input")
        Dims the bootstrap resamples (BOOT-BOTH by default).
    test : {"permutation", "bootstrap", "williams"}, default "permutation"
    permute : str or tuple, default ("system", "input")
        Dims the permutation test swaps along (PERM-BOTH by default).
    n_resamples : int, default 1000
        Bootstrap resamples and permutation draws.
    confidence_level, alpha : float
    correction : {"bonferroni", "holm", "fdr_bh"} or None, default "holm"
        Multiple-testing correction of each metric's row of comparisons.
    rng : int, Generator, SeedSequence or None
        Seed; the report records the seed it used.
    progress : bool, default False
        Progress bars on stderr while computing.
    log : file, optional
        Where to write one status line per step (e.g. ``sys.stderr``).
    source : str
        Where the data came from (shown in headings).

    Returns
    -------
    Report

    Examples
    --------
    >>> import xcorrstat
    >>> ds = xcorrstat.datasets.summeval()
    >>> rep = xcorrstat.report(ds, target="expert_relevance", metrics=["qa_eval_f1", "rouge_2_f1", "meteor"],
    ...                        n_resamples=200, rng=0)
    >>> rep.table()[["level", "metric", "rank", "cluster"]].iloc[0].tolist()
    ['system', 'qa_eval_f1', 1, 1]
    """
    levels = [level] if isinstance(level, str) else list(level)
    if not levels:
        raise ValueError(f"level must be one of {LEVELS} or a list of them, got an empty list")
    for lev in levels:
        check_choice(lev, LEVELS, "level")
    seed = resolve_seed(rng)
    boots, comps = [], []
    for lev in levels:
        if log is not None:
            print(f"{lev} level: bootstrap CIs ({n_resamples} resamples)", file=log, flush=True)
        b = bootstrap(data, target=target, metrics=metrics, level=lev, method=method, variant=variant,
                      resample=resample, n_resamples=n_resamples, confidence_level=confidence_level,
                      rng=seed, progress=progress)
        if log is not None:
            print(f"{lev} level: {test} tests of all metric pairs", file=log, flush=True)
        c = compare(data, target=target, metrics=metrics, level=lev, method=method, variant=variant,
                    test=test, permute=permute, resample=resample, n_resamples=n_resamples, rng=seed,
                    correction=correction, alpha=alpha, progress=progress)
        b = b.drop_vars([v for v in ("distribution",) if v in b]).assign(cluster=c["cluster"])
        b["rank"] = ("metric", _ranks(np.asarray(b["correlation"].values, dtype=np.float64)))
        boots.append(b.expand_dims(level=[lev]))
        comps.append(c.expand_dims(level=[lev]))
    intervals = xr.concat(boots, dim="level", coords="different", compat="equals")
    comparisons = xr.concat(comps, dim="level", coords="different", compat="equals")
    intervals.attrs = {k: v for k, v in boots[0].attrs.items() if k != "level"}
    comparisons.attrs = {k: v for k, v in comps[0].attrs.items() if k != "level"}
    settings = {
        "source": source, "target": str(target), "levels": levels, "method": method,
        "variant": variant if method == "kendall" else "",
        "resample": intervals.attrs.get("resample"), "ci_scheme": _scheme(resample, "BOOT"),
        "test": test, "test_scheme": _scheme(permute, "PERM") if test == "permutation" else test,
        "n_resamples": int(n_resamples), "confidence_level": float(confidence_level), "alpha": float(alpha),
        "correction": correction, "seed": seed,
    }
    return Report(intervals=intervals, comparisons=comparisons, settings=settings)
