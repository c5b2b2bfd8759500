"""How often does a test find the better metric? Power and type-I error by simulation.

Deutsch, Dror & Roth (2021, Figure 3) compare tests by their power: take a metric,
make a worse version of it by adding noise, and count how often each test says the
original is better. Here any test of the library runs on every trial and every
amount of degradation at once: the trials and amounts are extra dims of the data,
which every test broadcasts over.

Built-in degradation: ``y = x + amount * sd(x) * e`` with ``e`` iid standard normal
per cell, drawn for trial t from ``SeedSequence(seed, spawn_key=(t, k))`` alone (k = 0
for the degraded metric, 1 for the second, exchangeable copy used for the type-I
error), and shared by every amount, so the power curves are monotone up to the
tests' own Monte-Carlo error. ``sd(x)`` is the standard deviation of all the
metric's cells.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import NamedTuple

import numpy as np
import xarray as xr

from .._display import did_you_mean
from .._docs import fill_doc
from .._options import OPTIONS
from .._types import Level, Method, Seed
from .._capabilities import check, limit_of
from .._resampling.draws import MAX_DRAW_TASKS, keyed_generator, resolve_seed
from .._resampling.engine import compute_with_progress, progress_line
from .._resampling.schemes import (
    BOOTSTRAP_SCHEMES,
    PERMUTATION_SCHEMES,
    SCHEME_DIMS,
)
from .._schema import INPUT, SYSTEM, as_dataset, check_finite
from .._resampling.settings import Bootstrap, Permutation
from .._significance.paired import paired_bootstrap_test
from .._significance.permutation import permutation_test
from .._significance.williams import williams_test
from .._validation import (
    check_batch,
    check_draw_count,
    check_positive_int,
    check_unit_interval,
)
from ._labels import parse_labels
from .._warn import one_call

__all__ = ["POWER_TESTS", "degrade", "power_analysis"]

#: The tests of :func:`power_analysis`: (function, dims it permutes or resamples), by the
#: PERM-* and BOOT-* labels of :mod:`xcorrstat._resampling.schemes` (matched in any case).
POWER_TESTS: dict[str, tuple[str, tuple[str, ...]]] = {
    **{label: ("permutation", SCHEME_DIMS[PERMUTATION_SCHEMES[label]])
       for label in ("PERM-BOTH", "PERM-SYSTEMS", "PERM-INPUTS")},
    **{label: ("bootstrap", BOOTSTRAP_SCHEMES[label]) for label in ("BOOT-BOTH", "BOOT-SYSTEMS", "BOOT-INPUTS")},
    "williams": ("williams", ()),
}

TRIAL, AMOUNT = "trial", "noise"


def _noise(seed: int, trials: Sequence[int], shape: tuple[int, int], copy: int) -> np.ndarray:
    """(T, S, I) standard normal noise; trial t's comes from SeedSequence(seed, spawn_key=(t, copy))."""
    return np.stack([keyed_generator(seed, t, copy).standard_normal(shape) for t in trials])


def _noise_amounts(noise: Sequence[float]) -> np.ndarray:
    """The amounts of the built-in degradation, as a float64 vector of finite numbers >= 0."""
    amounts = np.asarray(list(noise), dtype=np.float64)
    if amounts.ndim != 1 or amounts.size == 0 or np.any(amounts < 0) or not np.all(np.isfinite(amounts)):
        raise ValueError(f"noise must be a non-empty list of amounts >= 0, got {list(noise)!r}")
    return amounts


def _degraded(x: xr.DataArray, amounts: np.ndarray, n_trials: int, seed: int, copy: int) -> xr.DataArray:
    """``x + amount * sd(x) * e`` over (trial, noise, system, input)."""
    x = x.transpose(SYSTEM, INPUT)
    values = np.asarray(x.values, dtype=np.float64)
    sd = float(np.nanstd(values))
    e = _noise(seed, range(n_trials), values.shape, copy)  # (T, S, I)
    out = values[None, None] + amounts[None, :, None, None] * sd * e[:, None]
    coords = {TRIAL: np.arange(n_trials), AMOUNT: amounts, SYSTEM: x[SYSTEM].values, INPUT: x[INPUT].values}
    da = xr.DataArray(out, dims=(TRIAL, AMOUNT, SYSTEM, INPUT), coords=coords)
    da.attrs = {"degradation": "x + noise * sd(x) * e, e iid standard normal per cell", "rng": seed, "sd": sd}
    return da


def _degrade_iv(rng: Seed, noise: Sequence[float]) -> tuple[int, np.ndarray]:
    return resolve_seed(rng), _noise_amounts(noise)


@one_call
def degrade(x: xr.DataArray, *, noise: Sequence[float], n_trials: int, rng: Seed = None,
            copy: int = 0) -> xr.DataArray:
    """Degraded copies ``x + amount * sd(x) * e`` of a (system, input) score matrix.

    Returns a DataArray over (``trial``, ``noise``, system, input); ``e`` depends on the
    seed, the trial and ``copy`` only (the same for every amount). Missing cells stay
    missing.

    Examples
    --------
    >>> import xcorrstat
    >>> ds = xcorrstat.datasets.summeval()
    >>> y = xcorrstat.diagnostics.degrade(ds["qa_eval_f1"], noise=[0.0, 1.0], n_trials=3, rng=0)
    >>> dict(y.sizes)
    {'trial': 3, 'noise': 2, 'system': 16, 'input': 100}
    """
    seed, amounts = _degrade_iv(rng, noise)
    return _degraded(x, amounts, n_trials, seed, copy)


def _run(label, ds, *, x, y, target, level, method, n_resamples, seed, alpha):
    """The lazy decisions of one test over the trials (the draws' batch is the ``batch`` option)."""
    kind, dims = POWER_TESTS[label]
    if kind == "permutation":
        res = permutation_test(ds, x=x, y=y, target=target, level=level, method=method,
                               test=Permutation(dims, n_resamples=n_resamples, rng=seed))
    elif kind == "bootstrap":
        res = paired_bootstrap_test(ds, x=x, y=y, target=target, level=level, method=method,
                                    test=Bootstrap(dims, n_resamples=n_resamples, rng=seed))
    else:
        if limit_of("williams_test", level=level, method=method) is not None:
            return None  # not defined there: NaN
        res = williams_test(ds, x=x, y=y, target=target, level=level, method=method)
    return res["pvalue"] <= alpha


def _compute(hit):
    """The decisions of a test over the trials, computed with the progress bar of its task graph."""
    return None if hit is None else compute_with_progress(hit, True)


class _Power(NamedTuple):
    """The normalised arguments of :func:`power_analysis`."""

    sim: xr.Dataset  # metric, degraded, [copy,] target over (trial, noise, system, input)
    y: xr.DataArray  # the degraded versions
    labels: list[str]  # POWER_TESTS keys
    names: list[str]  # the tests as the result labels them
    n_resamples: int
    alpha: float
    batch: int | None
    trial_batch: int | None
    seed: int
    n_inputs: int | None
    type_one: bool
    source: str


def _user_degraded(degraded, n_trials: int) -> xr.DataArray:
    """The user's degraded versions over (trial, noise, system, input)."""
    if not isinstance(degraded, xr.DataArray) or AMOUNT not in degraded.dims:
        raise ValueError(f"degraded must be a DataArray with a {AMOUNT!r} dim (and system, input), "
                         f"got {type(degraded).__name__}")
    extra = set(degraded.dims) - {AMOUNT, TRIAL, SYSTEM, INPUT}
    if extra or not {SYSTEM, INPUT} <= set(degraded.dims):
        raise ValueError(f"degraded must have dims ({AMOUNT!r}, [{TRIAL!r},] system, input), "
                         f"got {tuple(degraded.dims)}")
    y = degraded.astype(np.float64)
    if TRIAL not in y.dims:
        y = y.expand_dims({TRIAL: n_trials})
    return y.transpose(TRIAL, AMOUNT, SYSTEM, INPUT).assign_coords({TRIAL: np.arange(y.sizes[TRIAL])})


def _simulation(x: xr.DataArray, y: xr.DataArray, y2: xr.DataArray | None, z: xr.DataArray) -> xr.Dataset:
    """The simulated data: the metric, its degraded versions, the exchangeable copy and the target."""
    data_vars = {"metric": x, "degraded": y, "target": z}
    if y2 is not None:
        data_vars["copy"] = y2
    sim = xr.Dataset(data_vars)
    for name in ("metric", "degraded", "copy"):
        if name in sim:
            sim[name].attrs = {}
    sim["target"].attrs["role"] = "human"
    return sim


def _power_analysis_iv(data: xr.Dataset | xr.DataArray, *, target: Hashable, metric: Hashable,
                       degraded: xr.DataArray | None, noise: Sequence[float], tests: Sequence[str], level: Level,
                       method: Method, n_trials: int, n_resamples: int, alpha: float, n_inputs: int | None,
                       type_one: bool, rng: Seed, batch: int | None) -> _Power:
    ds = as_dataset(data)
    for name, value in (("target", target), ("metric", metric)):
        if value not in ds.data_vars:
            raise ValueError(f"{name}={value!r} is not a variable of the data; available: {list(ds.data_vars)}"
                             f"{did_you_mean(value, ds.data_vars)}")
    check("diagnostics.power_analysis", level=level, method=method)
    labels, names = parse_labels(tests, tuple(POWER_TESTS), "tests")
    n_trials = check_positive_int(n_trials, "n_trials")
    n_resamples = check_draw_count(n_resamples, "n_resamples")
    alpha = check_unit_interval(alpha, "alpha")
    batch = check_batch(batch)
    trial_batch = OPTIONS["trial_batch"]
    seed = resolve_seed(rng)
    x = ds[metric].astype(np.float64).transpose(SYSTEM, INPUT)
    z = ds[target].astype(np.float64).transpose(SYSTEM, INPUT)
    check_finite(x.values, f"metric {metric!r}")
    if degraded is None:
        amounts = _noise_amounts(noise)
        y = _degraded(x, amounts, n_trials, seed, 0)
        y2 = _degraded(x, amounts, n_trials, seed, 1) if type_one else None
        source = "built-in: x + noise * sd(x) * e"
    else:
        y = _user_degraded(degraded, n_trials)
        y2, type_one, source = None, False, "user-supplied"
    sim = _simulation(x, y, y2, z)
    if n_inputs is not None:
        n_inputs = check_positive_int(n_inputs, "n_inputs")
        if n_inputs > sim.sizes[INPUT]:
            raise ValueError(f"n_inputs={n_inputs} is more than the {sim.sizes[INPUT]} inputs of the data")
    return _Power(sim, y, labels, names, n_resamples, alpha,
                  batch, trial_batch, seed, n_inputs, bool(type_one), source)


def _sample_inputs(sim: xr.Dataset, n_inputs: int, seed: int) -> xr.Dataset:
    """``sim`` with each trial keeping ``n_inputs`` inputs drawn without replacement (the rest missing)."""
    n_t = sim.sizes[TRIAL]
    keep = np.zeros((n_t, sim.sizes[INPUT]), dtype=bool)
    for t in range(n_t):  # each trial's sample comes from its own seed
        gen = keyed_generator(seed, t, 2)
        keep[t, gen.choice(sim.sizes[INPUT], n_inputs, replace=False)] = True
    mask = xr.DataArray(keep, dims=(TRIAL, INPUT))
    return sim.where(mask)


def _undefined(y: xr.DataArray) -> xr.DataArray:
    """NaN over the amounts: the rate of a test that does not apply."""
    return xr.full_like(y.isel({TRIAL: 0, SYSTEM: 0, INPUT: 0}, drop=True), np.nan)


def _rejection_rates(a: _Power, level: str, method: str) -> tuple[list[xr.DataArray], list[xr.DataArray], int]:
    """Per test: the share of trials rejecting metric = degraded, and degraded = copy; and the trials per task."""
    sim = a.sim if a.n_inputs is None else _sample_inputs(a.sim, a.n_inputs, a.seed)
    n_t = sim.sizes[TRIAL]
    # Dask chunks of a few trials and one amount bound each task's memory and run in parallel
    per_task = max(a.trial_batch or min(n_t, 8), -(-n_t // MAX_DRAW_TASKS))  # a bounded number of tasks
    sim = sim.chunk({TRIAL: per_task, AMOUNT: 1})
    kw = dict(target="target", level=level, method=method, n_resamples=a.n_resamples, seed=a.seed, alpha=a.alpha)
    power, type1 = [], []
    for number, label in enumerate(a.labels, 1):
        progress_line(f"power_analysis: test {number} of {len(a.labels)} ({label}), {n_t} trials"
                      + (", then the type-I error trials" if a.type_one else ""))
        hit = _compute(_run(label, sim, x="metric", y="degraded", **kw))
        power.append(hit.astype(np.float64).mean(TRIAL) if hit is not None else _undefined(a.y))
        if a.type_one:
            hit = _compute(_run(label, sim, x="degraded", y="copy", **kw))
            rate = hit.astype(np.float64).mean(TRIAL) if hit is not None else _undefined(a.y)
            type1.append(rate.where(rate[AMOUNT] > 0))
    return power, type1, per_task


def _power_result(power: list[xr.DataArray], type1: list[xr.DataArray], per_task: int, a: _Power,
                  target: Hashable, metric: Hashable, level: str, method: str) -> xr.Dataset:
    """The power (and type-I error) table over (test, noise), with every option in attrs."""
    n_t = a.sim.sizes[TRIAL]
    out = xr.Dataset({"power": xr.concat(power, dim="test", coords="minimal", compat="override")})
    out["power_se"] = np.sqrt(out["power"] * (1 - out["power"]) / n_t)
    if a.type_one:
        out["type1_error"] = xr.concat(type1, dim="test", coords="minimal", compat="override")
        out["type1_se"] = np.sqrt(out["type1_error"] * (1 - out["type1_error"]) / n_t)
    out = out.assign_coords(test=a.names).drop_vars([c for c in out.coords if c not in ("test", AMOUNT)])
    out["power"].attrs["long_name"] = f"share of trials with p <= {a.alpha:g} for metric > degraded metric"
    out.attrs = {
        "statistic": "power by simulation", "target": str(target), "metric": str(metric), "level": level,
        "method": method, "alpha": a.alpha, "n_trials": n_t, "n_resamples": a.n_resamples, "rng": a.seed,
        "trial_batch": per_task,
        "degradation": a.source, "n_inputs": a.n_inputs if a.n_inputs is not None else "all",
    }
    return out


@one_call
@fill_doc
def power_analysis(
    data: xr.Dataset | xr.DataArray,
    *,
    target: Hashable,
    metric: Hashable,
    degraded: xr.DataArray | None = None,
    noise: Sequence[float] = (0.0, 0.25, 0.5, 1.0, 2.0),
    tests: Sequence[str] = ("PERM-BOTH", "BOOT-BOTH", "williams"),
    level: Level = "system",
    method: Method = "pearson",
    n_trials: int = 100,
    n_resamples: int = 1000,
    alpha: float = 0.05,
    n_inputs: int | None = None,
    type_one: bool = True,
    rng: Seed = None,
) -> xr.Dataset:
    """Power of each test to find that a metric beats a degraded version of itself, and type-I error.

    Parameters
    ----------
    %(data)s
    target, metric : str
        The human score and the metric to degrade.
    degraded : DataArray, optional
        Your own degraded versions, over (``noise``, system, input) -- one matrix per
        amount of degradation (any labels) -- or (``trial``, ``noise``, system, input).
        Default: the built-in degradation (:func:`degrade`) at the amounts ``noise``.
    noise : sequence of float
        Amounts of the built-in degradation (multiples of the metric's sd).
    tests : sequence of str
        From the permutation tests ``"PERM-BOTH"``, ``"PERM-SYSTEMS"``,
        ``"PERM-INPUTS"``, the paired bootstrap tests ``"BOOT-BOTH"``,
        ``"BOOT-SYSTEMS"``, ``"BOOT-INPUTS"`` (the scheme labels, any case) and
        ``"williams"`` (system and global level, Pearson or Spearman only; NaN
        elsewhere). The result labels each test by its canonical spelling.
    level : {"system", "input", "global", "within_system"}, default "system"
        The level of the correlation compared.
    %(method)s
    n_trials : int, default 100
        Simulated datasets per amount.
    n_resamples : int, default 1000
        Draws of each permutation or bootstrap test.
    alpha : float, default 0.05
        A test detects the better metric when its one-sided p-value is at most alpha.
    n_inputs : int, optional
        Inputs sampled (without replacement) per trial, to study power at a smaller
        sample; default all.
    type_one : bool, default True
        Also run each test on two exchangeable degraded copies (same amount,
        independent noise), whose rejection rate estimates the type-I error.
    rng : int, Generator, SeedSequence or None
        Seed of the noise, the input samples and the tests' draws.
        :func:`xcorrstat.permutation_test`); the numbers do not depend on it.

    Returns
    -------
    Dataset
        Over (``test``, ``noise``): ``power`` (share of trials where the test finds
        ``metric`` better than its degraded version), ``power_se`` (its Monte-Carlo
        standard error) and, with ``type_one``, ``type1_error`` and ``type1_se``
        (where the two copies are exchangeable: only for amounts > 0 with the
        built-in degradation). ``.to_dataframe()`` gives the tidy table for power curves.

    Notes
    -----
    The trials and amounts are extra dims of one Dataset, so each test runs once,
    vectorised over them; its draws (keyed by draw id) are shared by all trials, while
    the data of every trial are independent.

    Examples
    --------
    >>> import xcorrstat
    >>> ds = xcorrstat.datasets.summeval()
    >>> pw = xcorrstat.diagnostics.power_analysis(ds, target="expert_relevance", metric="qa_eval_f1",
    ...                                            noise=[0.0, 1.0], tests=["PERM-BOTH"], n_trials=10,
    ...                                            n_resamples=100, rng=0)
    >>> dict(pw["power"].sizes)
    {'test': 1, 'noise': 2}
    """
    batch = OPTIONS["batch"]
    a = _power_analysis_iv(data, target=target, metric=metric, degraded=degraded, noise=noise, tests=tests,
                           level=level, method=method, n_trials=n_trials, n_resamples=n_resamples, alpha=alpha,
                           n_inputs=n_inputs, type_one=type_one, rng=rng, batch=batch)
    power, type1, per_task = _rejection_rates(a, level, method)
    return _power_result(power, type1, per_task, a, target, metric, level, method)
