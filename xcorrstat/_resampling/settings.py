"""Inference settings: how a test or an interval draws, as one object (scipy's ``PermutationMethod``).

A function that can draw in more than one way takes its scheme as one argument: ``test=`` of the
tests, ``resample=`` of the bootstrap intervals. The argument is a name or dims for the defaults,
or one of these objects for everything else. Each object holds only what its scheme uses, so a
function's signature has no option that is valid only with some test. Settings that never change a
number (``batch``, ``progress``) are :func:`xcorrstat.set_options`.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any, Literal, TypeVar, Union

import xarray as xr

from .._display import cut, did_you_mean
from .._types import PValue, Seed, Standardise, Test

__all__ = ["Bootstrap", "Permutation", "Settings", "Swap", "Williams", "as_settings", "filled", "flat", "interval_draws", "report_test", "single_test_draws", "settings_name"]

#: What a permutation draw exchanges: the two metrics' scores, or the outcomes of pairs.
Swap = Literal["scores", "pairs"]

Draws = Union[int, Literal["auto"], None]


def _check_flag(value: object, name: str) -> None:
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be True or False, got {cut(value)}")


class _Shown:
    """Settings print only the fields that differ from their defaults, as scipy's method objects do."""

    def __repr__(self) -> str:
        return _repr(self)


_D = TypeVar("_D", bound="_Drawn")
_S = TypeVar("_S", bound="Settings")


class _Drawn(_Shown):
    """What the settings of draws share: a checked ``keep_distribution`` and :meth:`from_attrs`."""

    keep_distribution: bool

    def __post_init__(self) -> None:
        _check_flag(self.keep_distribution, f"{type(self).__name__}: keep_distribution")

    @classmethod
    def from_attrs(cls: type[_D], attrs: Mapping[Hashable, Any]) -> _D:
        """The settings a result was drawn with, from its attrs (``rng`` is the seed used).

        Examples
        --------
        >>> import xcorrstat
        >>> ds = xcorrstat.datasets.summeval()[["expert_relevance", "meteor", "qa_eval_f1"]]
        >>> res = xcorrstat.permutation_test(ds, x="meteor", y="qa_eval_f1", target="expert_relevance",
        ...                                  test=xcorrstat.Permutation(n_resamples=100))
        >>> again = xcorrstat.permutation_test(ds, x="meteor", y="qa_eval_f1", target="expert_relevance",
        ...                                    test=xcorrstat.Permutation.from_attrs(res.attrs))
        >>> bool(again["pvalue"] == res["pvalue"])
        True
        """
        return _from_attrs(cls, attrs)


@dataclass(frozen=True, repr=False)
class Permutation(_Drawn):
    """Settings of a permutation test: which dims are swapped, how, and the draws.

    Parameters
    ----------
    permute : str or tuple of str, optional
        ``("system", "input")`` = PERM-BOTH (swap per cell), ``"system"`` = PERM-SYSTEMS,
        ``"input"`` = PERM-INPUTS, or ``"system-xor-input"`` (a row flip XOR a column flip); the
        labels themselves are accepted too (any case). Default PERM-BOTH (PERM-SYSTEMS on
        system-level data).
    n_resamples : int or "auto", optional
        Number of draws. ``"auto"`` (all-pairs comparisons only) draws until every corrected
        decision at ``alpha`` is settled, up to ``max_resamples``. Default: ``"auto"`` in
        :func:`~xcorrstat.compare` and :func:`~xcorrstat.report`, 1,000 in
        :func:`~xcorrstat.permutation_test`.
    rng : int, Generator, SeedSequence or None
        Seed of the draws; draw ``r`` depends on it and on ``r`` alone (``attrs["rng"]``).
    swap : {"scores", "pairs"}, default "scores"
        Swap the two metrics' scores, or (Kendall variants) the outcomes of pairs of items,
        mt-metrics-eval's test for ``epsilon`` per metric.
    standardise : {"cells", "system-means"}, default "cells"
        What is z-scored before swapping scores: every cell, or (system level, PERM-SYSTEMS)
        the per-system means, as mt-metrics-eval does.
    epsilon : float, "calibrate", mapping or DataArray, optional
        Metric-tie thresholds of the Kendall variants (``|difference| <= epsilon`` is a tie).
        ``swap="pairs"``: each metric's own; ``"calibrate"`` (the default for acc23 and 23; 0 for
        b and a) calibrates each metric once on the observed data; a number applies to every
        metric; a mapping metric -> number or a DataArray over ``metric`` (e.g.
        ``calibrate_ties(...)["epsilon"]``) gives each its own. ``swap="scores"``: None or 0
        (exact ties), or ``"calibrate"``: every draw re-calibrates both swapped metrics.
    pvalue : {"plus-one", "fraction"}, default "plus-one"
        ``(1 + k) / (1 + B)`` (a valid test, never 0) or ``k / B``.
    keep_distribution : bool, default False
        Return the draws of the statistic too.
    early_stop : float, optional
        Two-metric tests: stop once the p-value is on one side of this level with risk ``risk``.
    risk : float, optional
        Chance that ``early_stop`` or ``"auto"`` settles a decision that more draws would change:
        default 0.001 for ``early_stop``, 0.01 for ``"auto"``.
    max_resamples : int, default 20000
        The cap of ``n_resamples="auto"``.

    Examples
    --------
    >>> import xcorrstat
    >>> xcorrstat.Permutation("input", n_resamples=2000, rng=0)
    Permutation(permute='input', n_resamples=2000, rng=0)
    """

    permute: str | tuple[str, ...] | None = None
    n_resamples: Draws = None
    rng: Seed = None
    swap: Swap = "scores"
    standardise: Standardise = "cells"
    epsilon: float | str | Mapping[Hashable, float] | xr.DataArray | None = None
    pvalue: PValue = "plus-one"
    keep_distribution: bool = False
    early_stop: float | None = None
    risk: float | None = None
    max_resamples: int = 20000


@dataclass(frozen=True, repr=False)
class Bootstrap(_Drawn):
    """Settings of bootstrap draws: which dims are resampled, and the draws.

    Parameters
    ----------
    resample : str or tuple of str, optional
        Dims to resample: ``"system"`` (BOOT-SYSTEMS), ``"input"`` (BOOT-INPUTS) or both
        (BOOT-BOTH, the default; BOOT-SYSTEMS on system-level data); the labels themselves are
        accepted too (any case).
    n_resamples : int or "auto", optional
        Number of draws. ``"auto"`` (all-pairs comparisons only) draws until every corrected
        decision at ``alpha`` is settled, up to ``max_resamples``. Default: ``"auto"`` for the
        tests of :func:`~xcorrstat.compare` and :func:`~xcorrstat.report`, else 1,000.
    rng : int, Generator, SeedSequence or None
        Seed of the draws; draw ``r`` depends on it and on ``r`` alone (``attrs["rng"]``).
    pvalue : {"plus-one", "fraction"}, default "plus-one"
        Tests: ``(1 + k) / (1 + B)`` (a valid test, never 0) or ``k / B``.
    keep_distribution : bool, default False
        Return the draws of the statistic too.
    risk : float, optional
        Chance that ``"auto"`` settles a decision that more draws would change (default 0.01).
    max_resamples : int, default 20000
        The cap of ``n_resamples="auto"``.

    Examples
    --------
    >>> import xcorrstat
    >>> xcorrstat.Bootstrap("system", n_resamples=500, rng=0)
    Bootstrap(resample='system', n_resamples=500, rng=0)
    """

    resample: str | Sequence[str] | None = None
    n_resamples: Draws = None
    rng: Seed = None
    pvalue: PValue = "plus-one"
    keep_distribution: bool = False
    risk: float | None = None
    max_resamples: int = 20000


@dataclass(frozen=True, repr=False)
class Williams(_Shown):
    """Settings of Williams' test of two dependent correlations (no draws).

    Parameters
    ----------
    absolute : bool, default False
        Compare the correlations' absolute values.

    Examples
    --------
    >>> import xcorrstat
    >>> xcorrstat.Williams(absolute=True)
    Williams(absolute=True)
    """

    absolute: bool = False

    def __post_init__(self) -> None:
        _check_flag(self.absolute, "Williams: absolute")


Settings = Union[Permutation, Bootstrap, Williams]

#: The names a ``test=`` argument takes for each object's defaults.
_BY_NAME: dict[str, type] = {"permutation": Permutation, "bootstrap": Bootstrap, "williams": Williams}
_NAMES: dict[type, Test] = {Permutation: "permutation", Bootstrap: "bootstrap", Williams: "williams"}


def _from_attrs(cls: type, attrs: Mapping[Hashable, Any]) -> Any:
    """The settings a result's attrs record (the fields they name; the others at their defaults)."""
    names = {f.name for f in fields(cls)}
    kw = {str(k): v for k, v in attrs.items() if k in names}
    for key in ("resample", "permute"):
        if isinstance(kw.get(key), list):
            kw[key] = tuple(kw[key])
    if kw.get("epsilon") in ("", None):
        kw.pop("epsilon", None)
    stop = kw.pop("early_stop", "off")
    if isinstance(stop, str) and stop != "off":  # recorded as "alpha=0.05, risk=0.001"
        parts = dict(part.strip().split("=") for part in stop.split(","))
        kw["early_stop"], kw["risk"] = float(parts["alpha"]), float(parts["risk"])
    return cls(**kw)


def _repr(obj: Any) -> str:
    """Only the fields that differ from their defaults, as scipy's method objects print."""
    shown = [f"{f.name}={getattr(obj, f.name)!r}" for f in fields(obj) if not _is_default(obj, f.name)]
    return f"{type(obj).__name__}({', '.join(shown)})"


def _is_default(obj: Any, name: str) -> bool:
    value, default = getattr(obj, name), getattr(type(obj)(), name)
    if isinstance(value, (xr.DataArray, Mapping)) or isinstance(default, (xr.DataArray, Mapping)):
        return False
    return bool(value == default) and type(value) is type(default)


def as_settings(value: object, name: str, allowed: tuple[type, ...]) -> Settings:
    """A test's name or settings object -> its settings object; anything else names ``name`` and the choices.

    Examples
    --------
    >>> as_settings("williams", "test", (Permutation, Williams))
    Williams()
    """
    if isinstance(value, str) and _BY_NAME.get(value) in allowed:
        return _BY_NAME[value]()
    if isinstance(value, allowed):
        return value  # type: ignore[return-value]
    names = ", ".join([f"{_NAMES[c]!r}" for c in allowed] + [f"xcorrstat.{c.__name__}(...)" for c in allowed])
    hint = did_you_mean(value, [_NAMES[c] for c in allowed]) if isinstance(value, str) else ""
    raise ValueError(f"{name} must be one of {names}, got {cut(value)}{hint}")


def settings_name(settings: Settings) -> Test:
    """``"permutation"``, ``"bootstrap"`` or ``"williams"``."""
    return _NAMES[type(settings)]


def flat(settings: Settings, *, n_resamples: int | str = 1000, dims: object = None) -> dict[str, Any]:
    """The settings as the keywords of the functions below the public ones.

    ``n_resamples`` and ``dims`` fill the object's ``None`` defaults.

    Examples
    --------
    >>> flat(Bootstrap("input", rng=1))["resample"], flat(Bootstrap(rng=1), n_resamples="auto")["n_resamples"]
    ('input', 'auto')
    """
    out = {f.name: getattr(settings, f.name) for f in fields(settings)}
    if "n_resamples" in out and out["n_resamples"] is None:
        out["n_resamples"] = n_resamples
    for key in ("permute", "resample"):
        if key in out and out[key] is None:
            out[key] = dims if dims is not None else ("system", "input")
    return out



def filled(settings: _S, **values: Any) -> _S:
    """``settings`` with those of ``values``' fields that it has at their defaults set (the others it lacks
    are passed over): a caller's own draws for what the user left unset.

    Examples
    --------
    >>> filled(Permutation(rng=5), rng=1, n_resamples=200, resample="input")
    Permutation(n_resamples=200, rng=5)
    """
    names = {f.name for f in fields(settings)}
    return replace(settings, **{k: v for k, v in values.items() if k in names and _is_default(settings, k)})


def single_test_draws(settings: Settings) -> dict[str, Any]:
    """The keywords of a test of two metrics: a fixed number of draws (default 1,000), no cap.

    Examples
    --------
    >>> single_test_draws(Bootstrap("input", n_resamples=200))["n_resamples"]
    200
    """
    kw = flat(settings, n_resamples=1000)
    kw.pop("max_resamples", None)
    if kw.get("risk", 0) is None:
        kw.pop("risk")  # the function's own default
    elif isinstance(settings, Bootstrap):
        raise ValueError(f"{settings!r}: risk belongs to n_resamples='auto' of all-pairs comparisons")
    if kw["n_resamples"] == "auto" or settings.max_resamples != 20000:  # type: ignore[union-attr]
        raise ValueError(f"{settings!r}: n_resamples='auto' and max_resamples belong to all-pairs comparisons "
                         "(compare, report), where draws are drawn for corrected decisions; a test of two "
                         "metrics takes a number of draws (and Permutation(early_stop=...) to stop early)")
    return kw


def interval_draws(resample: object) -> dict[str, Any]:
    """The keywords of bootstrap intervals from ``resample=``: dims or a :class:`Bootstrap`.

    Examples
    --------
    >>> interval_draws("input")["resample"], interval_draws(Bootstrap(rng=3))["rng"]
    ('input', 3)
    """
    settings = resample if isinstance(resample, Bootstrap) else Bootstrap(resample=resample)  # type: ignore[arg-type]
    kw = single_test_draws(settings)
    if kw.pop("pvalue") != "plus-one":
        raise ValueError(f"resample={settings!r}: pvalue is a setting of the paired bootstrap test; "
                         "an interval has no p-value")
    return kw


def report_test(test: object) -> tuple[Test, Any, int, dict[str, Any]]:
    """A report's ``test=`` -> the test's name, its PERM dims (None: the report's default), the cap of
    ``"auto"`` and the other settings for the comparisons (only those set: None takes the report's).

    Examples
    --------
    >>> report_test(Permutation("input", rng=5))
    ('permutation', 'input', 20000, {'rng': 5})
    """
    settings = as_settings(test, "test", (Permutation, Bootstrap, Williams))
    if isinstance(settings, Williams):
        return "williams", None, 20000, {"absolute": settings.absolute}
    if isinstance(settings, Permutation) and settings.early_stop is not None:
        raise ValueError(f"test={settings!r}: early_stop stops a two-metric test; a report draws enough "
                         "for its corrected decisions with n_resamples='auto'")
    skip = {"permute", "max_resamples", "early_stop"}
    options = {f.name: getattr(settings, f.name) for f in fields(settings)
               if f.name not in skip and not _is_default(settings, f.name)}
    return settings_name(settings), getattr(settings, "permute", None), settings.max_resamples, options
