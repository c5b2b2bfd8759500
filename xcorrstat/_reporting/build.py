"""The paper table in one call: correlations with CIs and significance clusters per level.

:func:`report` runs, for each level, a bootstrap confidence interval for every metric
(:func:`xcorrstat.bootstrap`) and the all-pairs test (:func:`xcorrstat.compare`), and
returns a :class:`Report` holding both, ranked. The ``xcorrstat report`` command is
this function plus :meth:`Report.save`.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np
import pandas as pd
import xarray as xr

from .._display import LABEL_WIDTH
from .._escape import distinct_labels
from .._docs import fill_doc
from .._kernels.custom import own_name
from .._resampling.settings import (
    Bootstrap,
    Permutation,
    Settings,
    Williams,
    as_settings,
    filled,
    report_test,
    settings_name,
)

from .._capabilities import check_levels, check_refinements
from .._types import Correction, Levels, Seed, Statistic, Test, Variant
from .._correlation.confidence import bootstrap
from .._resampling.draws import resolve_seed
from .._resampling.engine import progress_line
from .._resampling.schemes import (
    bootstrap_label,
    drawn_dims,
    drawn_scheme,
    parse_permute,
    parse_resample,
    permutation_label,
)
from .._notes import add_notes, notes_of
from .._schema import is_system_level, scores_notes
from .._significance.common import common_ground
from .._significance.allpairs import compare
from .._significance.auto import check_draws
from .._significance.defaults import DEFAULTS
from .._tidy import tidy
from .facts import FACTS, UNITS, header_text, report_facts
from .tables import check_digits, label_text, report_groups, to_latex, to_markdown
from .._warn import one_call

__all__ = ["PHASES", "Report", "report"]

#: The report's phases (each level's intervals, then its tests) are logged here at level INFO; the command
#: line prints them on stderr unless ``--quiet``.
PHASES = logging.getLogger("xcorrstat.report")


def _phase(message: str, *args: object) -> None:
    """A phase of the report: logged on :data:`PHASES` when it listens at level INFO (the command line's
    status lines, or a logging set up by the user), else a progress line (a notebook, a terminal)."""
    if PHASES.isEnabledFor(logging.INFO):
        PHASES.info(message, *args)
    else:
        progress_line(message % args)


def _ranks(corr: np.ndarray) -> np.ndarray:
    """1 = highest correlation; equal correlations share the better rank (1, 1, 3: no order of the
    data's columns ranks one of them above the other); rank 0 marks undefined."""
    key = np.where(np.isnan(corr), -np.inf, corr)
    ranks = 1 + (key[None, :] > key[:, None]).sum(axis=1)
    return np.where(np.isnan(corr), 0, ranks).astype(np.int64)


def _single_metric_comparison(boot: xr.Dataset, *, test: str, correction: str | None,
                              alpha: float) -> xr.Dataset:
    """What :func:`compare` would give for one metric: no pair, cluster 1 (0 if undefined), per label."""
    corr = boot["correlation"]
    names = boot["metric"].values
    pair = ("metric", "other_metric")
    # the pairs over the extra dims of the correlation (none for one ranked list)
    labels = xr.zeros_like(corr.isel(metric=0, drop=True)).reset_coords(drop=True)
    nan = xr.DataArray(np.full((len(names), len(names)), np.nan), dims=pair,
                       coords={"metric": names, "other_metric": names}).broadcast_like(labels)
    return xr.Dataset(
        {"correlation": corr, "cluster": xr.where(np.isnan(corr), 0, 1).astype(np.int64),
         "delta": xr.zeros_like(nan), "pvalue": nan, "pvalue_corrected": nan.copy(),
         "significant": xr.zeros_like(nan, dtype=bool)},
        attrs=dict(boot.attrs, test=test, correction=correction or "none", alpha=alpha),
    )


def _rank_labels(corr: xr.DataArray) -> xr.DataArray:
    """:func:`_ranks` within each label of the dims besides ``metric`` (one ranked list per label)."""
    ranks = xr.apply_ufunc(_ranks, corr.astype(np.float64).reset_coords(drop=True), input_core_dims=[["metric"]],
                           output_core_dims=[["metric"]], vectorize=True)
    return ranks.transpose(*corr.dims)


def _sorted_by_label(frame: pd.DataFrame, result: xr.Dataset, levels: list[str], extra: Sequence[Hashable],
                     then: Sequence[str] = ()) -> pd.DataFrame:
    """Rows label by label of the extra dims (in the data's order), level by level, then by ``then``
    (its ``_`` columns dropped after); the extra dims' columns just before ``metric``."""
    keys = {f"_label{k}": pd.Index(result[dim].values).get_indexer(frame[dim]) for k, dim in enumerate(extra)}
    keys["_level"] = pd.Index(levels).get_indexer(frame["level"])
    frame = frame.assign(**keys).sort_values([*keys, *then], kind="stable")
    frame = frame.drop(columns=[*keys, *(c for c in then if c.startswith("_"))])
    rest = [c for c in frame.columns if c not in extra]
    at = rest.index("metric")
    return frame[[*rest[:at], *extra, *rest[at:]]].reset_index(drop=True)


def _level_lines(names: list[str], sub: pd.DataFrame, digits: int, *, per_metric_n: bool) -> list[str]:
    """The lines of one ranked table: rank, metric, r, CI, cluster (and n when it differs by metric)."""
    width = max([len("metric"), *(len(m) for m in names)])
    n_width = max(len("n"), *(len(str(int(n))) for n in sub["n"])) if per_metric_n else 0
    n_head = f"  {'n':>{n_width}}" if per_metric_n else ""
    lines = [f"{'rank':>4}  {'metric':<{width}}  {'r':>{digits + 3}}  {'CI':^{2 * digits + 10}}  cluster{n_head}"]
    for name, row in zip(names, sub.itertuples()):
        rank = str(row.rank) if row.rank else "-"
        ci = f"[{row.low:.{digits}f}, {row.high:.{digits}f}]"
        cluster = str(row.cluster) if row.cluster else "-"
        n = f"  {int(row.n):>{n_width}}" if per_metric_n else ""
        lines.append(f"{rank:>4}  {name:<{width}}  {row.correlation:>{digits + 3}.{digits}f}  "
                     f"{ci:^{2 * digits + 10}}  {cluster:>7}{n}")
    return lines


@dataclass
class Report:
    """Correlations with confidence intervals and significance clusters, per level.

    Data with extra dims (a language pair ``lp``, a domain ...) give one ranked list per
    level and label: every variable below then also has those dims.

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
    settings: dict[str, Any] = field(default_factory=dict)

    @property
    def notes(self) -> tuple[str, ...]:
        """What the data or the analyses changed, dropped or left out, one line each (see
        :mod:`xcorrstat._notes`): the notes of the data, then the report's own."""
        return tuple(self.settings.get("notes", ()))

    @property
    def attrs(self) -> dict[str, Any]:
        """The attrs of the ranked table (:attr:`intervals`), where :func:`notes_of` reads the notes."""
        return self.intervals.attrs

    @property
    def levels(self) -> list[str]:
        return [str(v) for v in self.intervals["level"].values]

    @property
    def extra_dims(self) -> list[Hashable]:
        """The dims besides ``level`` and ``metric`` (e.g. ``["lp"]``): one ranked list per label."""
        return [d for d in self.intervals["correlation"].dims if d not in ("level", "metric")]

    def table(self) -> pd.DataFrame:
        """The ranked table: one row per (level, metric), best first within each level.

        With extra dims, one row per (label, level, metric), with a column per extra
        dim: label by label (in the data's order), level by level within a label.
        """
        frame = tidy(self.intervals)
        frame["_undefined"] = frame["rank"] == 0
        frame = _sorted_by_label(frame, self.intervals, self.levels, self.extra_dims, then=("_undefined", "rank"))
        frame.attrs.update({"notes": self.notes, FACTS: self.facts()})
        return frame

    def pairs(self) -> pd.DataFrame:
        """Every ordered pair's test, one row per (level, metric, other_metric) (and label of extra dims)."""
        frame = tidy(self.comparisons)
        if self.extra_dims:
            frame = _sorted_by_label(frame, self.comparisons, self.levels, self.extra_dims)
        frame.attrs.update({"notes": self.notes, FACTS: self.facts()})
        return frame

    def facts(self) -> dict[str, Any]:
        """What the heading, the page, the JSON and the tables' ``attrs["facts"]`` state: the draws of each
        phase, the decisions left open, the notes, the seed, the version and the data's sizes, as plain
        data (see :func:`~xcorrstat._reporting.facts.report_facts`)."""
        return report_facts(self)

    def to_text(self, *, digits: int = 3) -> str:
        """The ranked tables as plain text, one block per level (per label and level with extra dims).

        Labels are shown literally: control characters are escaped, and labels longer
        than 40 characters are cut to their start and end, distinct from each other
        (see :func:`~xcorrstat._escape.distinct_labels`).
        """
        digits = check_digits(digits)
        blocks = [header_text(self)]
        metrics = [str(m) for m in self.intervals["metric"].values]
        label = dict(zip(metrics, distinct_labels(metrics, LABEL_WIDTH)))
        for lev, labels, sub in report_groups(self):
            ns = [int(n) for n in sub["n"]] or [0]
            where = f", {label_text(labels)}" if labels else ""
            units = UNITS.get(lev, "units")
            n_text = f"{ns[0]} {units}" if min(ns) == max(ns) else f"{min(ns)} to {max(ns)} {units}: column n"
            blocks.append(f"\n{lev.replace('_', '-').capitalize()} level{where} (n = {n_text})")
            names = [label[str(m)] for m in sub["metric"]]
            blocks.append("\n".join(_level_lines(names, sub, digits, per_metric_n=min(ns) != max(ns))))
        return "\n".join(blocks) + "\n"

    def to_latex(self, *, digits: int = 3) -> str:
        """The ranked tables as LaTeX, one ``table`` per level and label (see :func:`~xcorrstat.to_latex`)."""
        return to_latex(self, digits=digits)

    def to_markdown(self, *, digits: int = 3) -> str:
        """The ranked tables as Markdown, one per level and label (see :func:`~xcorrstat.to_markdown`)."""
        return to_markdown(self, digits=digits)

    def __repr__(self) -> str:
        return self.to_text()

    def _repr_html_(self) -> str:
        from .html import tables_html

        return tables_html(self)

    def figures(self) -> dict[str, Any]:
        """The two figures: ``"ci"`` and ``"significance"``, each with one panel per level.

        ``"ci"`` is the forest plot, levels side by side, each panel listing the metrics
        by its own level's significance cluster (shaded bands) and correlation;
        ``"significance"`` the pairwise significance matrices, levels one under another.
        With extra dims, one panel per label and level: the forest plot has a row of
        panels per label, the matrices go label by label. Both are sized from the
        number of metrics and the length of their names.
        """
        from ..plot._forest import plot_ci
        from ..plot._significance import plot_significance

        by = self.extra_dims
        fig_ci = plot_ci(self.intervals[["correlation", "low", "high", "cluster", "rank"]], by=by)
        return {"ci": fig_ci, "significance": plot_significance(self.comparisons, by=by)}

    def save(self, out: str | os.PathLike[str], *, formats: Sequence[str] = ("png", "svg"), dpi: int = 150,
             overwrite: bool = False) -> dict[str, str]:
        """Write the table (CSV, JSON), the pairs (CSV), both figures and an HTML page to directory ``out``.

        All or nothing: the files are drawn in memory, written each to a temporary file
        in ``out`` and renamed into place when every one is written, with a manifest
        (``xcorrstat-manifest.json``) listing them; an error or an interrupt (Ctrl-C)
        leaves an earlier report as it was (see :func:`~xcorrstat._reporting.files.write_all`).

        Parameters
        ----------
        out : str or path
            A missing folder or a folder. Its other files are left alone; a name the
            report writes that is taken by anything but an unchanged file of an earlier
            report's manifest, or an earlier report without ``overwrite=True``, is a
            ``FileExistsError``, as are a symbolic link and a file.
        formats : sequence of {"png", "svg", "pdf"}, default ("png", "svg")
            Figure formats.
        dpi : int, default 150
            Resolution of the PNG figures.
        overwrite : bool, default False
            Replace a previous report in ``out``.

        Returns
        -------
        dict
            From what was written to its path.
        """
        from .files import write_all

        return write_all(self, out, formats=formats, dpi=dpi, overwrite=overwrite)


def _report_iv(data: xr.Dataset | xr.DataArray, level: Levels | None, resample: str | Sequence[str] | None,
               test: Test, permute: str | Sequence[str] | None,
               rng: Seed, method: Statistic, variant: Variant) -> tuple[list[str], tuple[str, ...], str | None, int]:
    """Levels, resampled dims, PERM-* label (permutation tests only) and seed of a report."""
    default = ("system",) if is_system_level(data) else ("system", "input")
    chosen = default if level is None else level
    levels: list[str] = list(check_levels("report", chosen, method=method, variant=variant))
    check_refinements("report", level=levels, method=method, variant=variant)
    # on system-level data the one input goes with its system: BOOT-SYSTEMS and PERM-SYSTEMS draws
    dims = drawn_dims(data, parse_resample(default if resample is None else resample))
    permute_label = None
    if test == "permutation":  # the other tests never swap: their permute is not used
        permute_label = permutation_label(drawn_scheme(data, parse_permute(default if permute is None else permute)))
    return levels, dims, permute_label, resolve_seed(rng)


def _report_level(data: xr.Dataset | xr.DataArray, options: dict[str, Any], *, test: Settings,
                  confidence_level: float, alpha: float, correction: Correction | None,
                  common_cells: bool = True) -> tuple[xr.Dataset, xr.Dataset]:
    """The bootstrap CIs (with cluster and rank) and the all-pairs test ``test`` of one level (``options``:
    the statistic, and the intervals' ``resample``)."""
    lev, resample = options["level"], options.pop("resample")
    _phase("%s level: bootstrap CIs (%s resamples)", lev, resample.n_resamples)
    b = bootstrap(data, confidence_level=confidence_level, resample=resample, **options)
    name = settings_name(test)
    _phase("%s level: %s tests of all metric pairs", lev, name)
    if b.sizes["metric"] < 2:  # nothing to compare: one cluster, no pairs
        c = _single_metric_comparison(b, test=name, correction=correction, alpha=alpha)
    else:
        c = compare(data, test=test, correction=correction, alpha=alpha, common_cells=common_cells, **options)
    b = b.drop_vars([v for v in ("distribution",) if v in b]).assign(cluster=c["cluster"])
    b["rank"] = _rank_labels(b["correlation"])
    return b.expand_dims(level=[lev]), c.expand_dims(level=[lev])


def _drawn(comps: list[xr.Dataset], levels: list[str], cap: int | None) -> dict[str, Any]:
    """Settings of the tests' draws: ``draws`` ("auto" or the number), ``max_resamples``, and per level
    ``n_resamples_used`` (the most draws of a pair), ``n_open``, ``n_open_significant`` and ``pvalue_floor``."""
    drawn = [(lev, c.attrs) for lev, c in zip(levels, comps) if "n_resamples" in c.attrs]
    return {
        "draws": "auto" if cap is not None else (int(drawn[0][1]["n_resamples"]) if drawn else None),
        "max_resamples": cap,
        "n_resamples_used": {lev: int(a.get("n_resamples_used", a["n_resamples"])) for lev, a in drawn},
        "n_open": {lev: int(a.get("n_open", 0)) for lev, a in drawn},
        "n_open_significant": {lev: int(a.get("n_open_significant", 0)) for lev, a in drawn},
        "pvalue_floor": {lev: float(a["pvalue_floor"]) for lev, a in drawn if "pvalue_floor" in a},
    }


def _data_sizes(data: xr.Dataset | xr.DataArray, intervals: xr.Dataset) -> dict[str, int]:
    """The sizes of the data's systems, inputs and extra dims (``data.sizes`` without ``metric``)."""
    extra = [d for d in intervals["correlation"].dims if d not in ("level", "metric")]
    return {str(d): int(data.sizes[d]) for d in ("system", "input", *extra) if d in data.sizes}


def _stack_levels(parts: list[xr.Dataset]) -> xr.Dataset:
    """The per-level results along ``level``, with the first one's attrs (without its level)."""
    stacked = xr.concat(parts, dim="level", coords="different", compat="equals")
    stacked.attrs = {k: v for k, v in parts[0].attrs.items() if k != "level"}
    return stacked


@one_call
@fill_doc
def report(
    data: xr.Dataset | xr.DataArray,
    *,
    target: Hashable,
    metrics: Sequence[Hashable] | None = None,
    level: Levels | None = None,
    method: Statistic = "pearson",
    variant: Variant = "b",
    resample: str | Sequence[str] | None = None,
    test: Test | Settings = "permutation",
    n_resamples: int | Literal["auto"] = DEFAULTS["n_resamples"].python,
    confidence_level: float = DEFAULTS["confidence_level"].python,
    alpha: float = DEFAULTS["alpha"].python,
    correction: Correction | None = DEFAULTS["correction"].python,
    rng: Seed = None,
    common_cells: bool = True,
) -> Report:
    """Every metric's correlation with a CI and its significance cluster, for each level.

    For each level: a bootstrap CI per metric (``resample``, default BOOT-BOTH) and
    the all-pairs test (``test``/``permute``, default PERM-BOTH) whose significant
    pairs, after ``correction``, give greedy significance clusters. Data with extra
    dims (a language pair ``lp`` ...) give one ranked list per level and label, each
    equal to the report of that label (``data.sel(lp=...)``) with the same seed.

    Parameters
    ----------
    %(data)s
    %(target)s
    %(metrics)s
    level : {"system", "input", "global", "within_system"} or list of them, optional
        Default ("system", "input"); "system" for system-level data (a ``system``
        dim and no ``input`` dim).
    %(method)s
        A report ranks a function of one's own as it ranks a correlation, largest first:
        for a statistic where smaller is better, give its negative.
    %(variant)s
        In a report, tau-a, tau_eq and acc_eq are defined at system and input level only.
    test : "permutation", "bootstrap", "williams", Permutation, Bootstrap or Williams
        Test of each metric pair (:func:`xcorrstat.compare`). A name stands for its default
        settings: PERM-BOTH ("system", "input"; PERM-SYSTEMS for system-level data), BOOT-BOTH
        with the intervals' ``resample``, ``Williams(absolute=False)``. A setting an object
        leaves at ``None`` (``n_resamples``, ``rng``) takes the report's.
    resample : str or tuple of str, optional
        Dims the bootstrap resamples, or their label (any case): default
        ("system", "input") (BOOT-BOTH); "system" (BOOT-SYSTEMS) for system-level data.
    n_resamples : int or "auto", default "auto"
        Bootstrap resamples and permutation draws. ``"auto"``: the intervals take 1,000
        resamples and the tests draws enough for their corrected decisions, up to
        the test's ``max_resamples`` (``n_resamples="auto"`` of :func:`xcorrstat.compare`); the
        heading states the draws used.
    %(confidence_level)s
    alpha : float, default 0.05
        Significance level of the tests.
    correction : {"bonferroni", "holm", "fdr_bh"} or None, default "holm"
        Multiple-testing correction of each metric's row of comparisons.
    %(rng)s
    %(common_cells)s
        In a report the intervals, the ranks and the tests all stand on that common ground.

    Returns
    -------
    Report
        Its settings name the schemes by label: ``ci_scheme`` (BOOT-*) and
        ``test_scheme`` (PERM-*, or the test), and hold ``notes`` (:attr:`Report.notes`).

    Examples
    --------
    >>> import xcorrstat
    >>> ds = xcorrstat.datasets.summeval()
    >>> rep = xcorrstat.report(ds, target="expert_relevance", metrics=["qa_eval_f1", "rouge_2_f1", "meteor"],
    ...                        n_resamples=200, rng=0)
    >>> best = rep.table().iloc[0]
    >>> best["level"], best["metric"], int(best["rank"]), int(best["cluster"])
    ('system', 'qa_eval_f1', 1, 1)
    >>> rep.settings["ci_scheme"], rep.settings["test_scheme"]
    ('BOOT-BOTH', 'PERM-BOTH')
    """
    name, permute, cap, _ = report_test(test)  # checked: the draws a report's test may set
    levels, dims, permute_label, seed = _report_iv(data, level, resample, name, permute, rng, method, variant)
    n_boot, auto_cap = check_draws(n_resamples, cap)
    intervals_draws = Bootstrap(dims, n_resamples=n_boot, rng=seed)
    drawn = filled(as_settings(test, "test", (Permutation, Bootstrap, Williams)), n_resamples=n_resamples,
                   max_resamples=auto_cap or DEFAULTS["max_resamples"].python, rng=seed, resample=dims)
    if isinstance(drawn, Permutation):  # the report's scheme (PERM-SYSTEMS on system-level data)
        drawn = replace(drawn, permute=permute_label)
    notes = scores_notes(data, target, metrics)
    data, ground = common_ground(data, target=target, metrics=metrics, common_cells=common_cells)
    notes = (*notes, *([ground] if ground else []))
    boots, comps = [], []
    for lev in levels:
        options = {"target": target, "metrics": metrics, "level": lev, "method": method, "variant": variant,
                   "resample": intervals_draws}
        b, c = _report_level(data, options, test=drawn, confidence_level=confidence_level, alpha=alpha,
                             correction=correction, common_cells=common_cells)
        boots.append(b)
        comps.append(c)
    intervals, comparisons = _stack_levels(boots), _stack_levels(comps)
    settings = {
        "source": "", "target": str(target), "levels": levels, "method": own_name(method),
        "variant": variant if method == "kendall" else "",
        "resample": intervals.attrs.get("resample"), "ci_scheme": bootstrap_label(dims),
        "test": name, "test_scheme": permute_label or name,
        "n_resamples": n_boot, "confidence_level": float(confidence_level), "alpha": float(alpha),
        "correction": correction, "rng": seed, **_drawn(comps, levels, auto_cap),
        "common_cells": bool(common_cells), "sizes": _data_sizes(data, intervals),
    }
    for part in (intervals, comparisons):
        add_notes(part.attrs, *notes)
    settings["notes"] = notes_of(intervals)
    return Report(intervals=intervals, comparisons=comparisons, settings=settings)
