"""A small synthetic active-learning benchmark to try the agreement analyses on."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import xarray as xr

from .._resampling.draws import seeded_generator
from .._validation import check_positive_int
from .._warn import one_call

__all__ = ["STRATEGIES", "synthetic_benchmark"]

#: Strategy names and how they weigh (informativeness, representativeness) of an item,
#: plus their skill (final accuracy) and early gain (area under the learning curve).
STRATEGIES: dict[str, tuple[float, float, float, float]] = {
    "random": (0.0, 0.0, 0.0, 0.0),
    "entropy": (1.0, 0.0, 1.0, -0.6),
    "margin": (0.9, 0.15, 1.3, -0.3),
    "coreset": (0.0, 1.0, 0.5, 1.2),
    "badge": (0.6, 0.6, 1.6, 0.5),
}


def _synthetic_benchmark_iv(strategies, n_datasets, batch_sizes, n_cycles, n_items,
                            n_missing) -> tuple[list[str], int, list[int], int, int]:
    strategies = [str(s) for s in strategies]
    unknown = [s for s in strategies if s not in STRATEGIES]
    if unknown or not strategies or len(set(strategies)) != len(strategies):
        raise ValueError(f"strategies must be distinct names from {tuple(STRATEGIES)}, got {strategies!r}")
    n_datasets = check_positive_int(n_datasets, "n_datasets")
    n_cycles = check_positive_int(n_cycles, "n_cycles")
    n_items = check_positive_int(n_items, "n_items")
    sizes = [check_positive_int(b, "batch_sizes") for b in batch_sizes]
    if not sizes or len(set(sizes)) != len(sizes):
        raise ValueError(f"batch_sizes must be distinct positive integers, got {list(batch_sizes)!r}")
    if n_cycles * max(sizes) > n_items:
        raise ValueError(f"n_items must be at least n_cycles * max(batch_sizes) = {n_cycles * max(sizes)}, "
                         f"got {n_items}")
    cells = len(strategies) * n_datasets * len(sizes)
    if isinstance(n_missing, bool) or not isinstance(n_missing, (int, np.integer)) or not 0 <= n_missing <= cells:
        raise ValueError(f"n_missing must be an integer from 0 to {cells}, got {n_missing!r}")
    return strategies, n_datasets, sizes, n_cycles, n_items


@one_call
def synthetic_benchmark(
    *,
    strategies: Sequence[str] = tuple(STRATEGIES),
    n_datasets: int = 6,
    batch_sizes: Sequence[int] = (5, 10, 20, 40),
    n_cycles: int = 4,
    n_items: int = 200,
    n_missing: int = 0,
    rng: int = 0,
) -> xr.Dataset:
    """A seeded synthetic benchmark: strategies x datasets x batch sizes x cycles x items.

    Every dataset has items with an *informativeness* and a *representativeness*
    (standard normal). A strategy prefers items by a weighted sum of the two plus
    its own noise (weights in :data:`STRATEGIES`; ``random`` is all noise), orders
    the items by preference once per (dataset, batch size), and queries the next
    ``batch_size`` items in each acquisition cycle. Strategies with similar weights
    therefore select overlapping sets.

    The final accuracy is a dataset baseline plus the strategy's skill, a
    strategy x dataset interaction, a skill x batch-size interaction and noise;
    the area under the learning curve (``auc``) adds the strategy's early gain,
    so the two measures rank the strategies similarly but not identically.

    Parameters
    ----------
    strategies : list of str
        Strategy names, each a key of :data:`STRATEGIES`.
    n_datasets : int
        Number of datasets (``d0``, ``d1``, ...).
    batch_sizes : list of int
        Items queried per cycle (the hyperparameter compared).
    n_cycles : int
        Acquisition cycles; ``n_cycles * max(batch_sizes)`` must not exceed ``n_items``.
    n_items : int
        Items in each dataset's pool.
    n_missing : int
        Cells (strategy, dataset, batch size) whose ``accuracy`` and ``auc`` are set to
        NaN (failed runs), chosen at random.
    rng : int, default 0
        Seed of the generator (``np.random.default_rng(rng)``); the same seed gives
        the same benchmark, recorded in ``attrs["rng"]``.

    Returns
    -------
    Dataset
        ``accuracy`` and ``auc`` over (strategy, dataset, batch_size), and
        ``selected`` (bool) over (strategy, dataset, batch_size, cycle, item): True
        where the strategy queried the item in that cycle.

    Examples
    --------
    >>> bench = synthetic_benchmark(rng=0)
    >>> dict(bench.sizes)
    {'strategy': 5, 'dataset': 6, 'batch_size': 4, 'cycle': 4, 'item': 200}
    >>> int(bench["selected"].sel(batch_size=10).sum(["cycle", "item"]).max())
    40
    """
    strategies, n_datasets, sizes, n_cycles, n_items = _synthetic_benchmark_iv(
        strategies, n_datasets, batch_sizes, n_cycles, n_items, n_missing)
    n_s, n_d, n_b = len(strategies), n_datasets, len(sizes)
    seed = rng
    g = seeded_generator(seed)
    weights = np.array([STRATEGIES[s] for s in strategies])  # (S, 4)
    inform, repres, skill, early = (weights[:, k] for k in range(4))

    # which items each strategy queries
    items = g.standard_normal((2, n_d, n_items))  # informativeness, representativeness
    pref = (inform[:, None, None, None] * items[0][None, :, None, :]
            + repres[:, None, None, None] * items[1][None, :, None, :]
            + 0.6 * g.standard_normal((n_s, n_d, n_b, n_items)))
    position = np.argsort(np.argsort(-pref, axis=-1), axis=-1)  # 0 = most preferred
    b = np.array(sizes)[None, None, :, None, None]
    cycle = np.arange(n_cycles)[None, None, None, :, None]
    pos = position[:, :, :, None, :]
    selected = (pos >= cycle * b) & (pos < (cycle + 1) * b)

    # how well each run does
    baseline = 0.6 + 0.3 * g.random(n_d)
    log_b = np.log(np.array(sizes, dtype=float) / min(sizes))
    accuracy = (baseline[None, :, None]
                + 0.02 * skill[:, None, None] * (1.0 - 0.15 * log_b[None, None, :])
                + 0.012 * g.standard_normal((n_s, n_d))[:, :, None]
                + 0.006 * g.standard_normal((n_s, n_d, n_b)))
    auc = accuracy - 0.08 + 0.015 * early[:, None, None] + 0.006 * g.standard_normal((n_s, n_d, n_b))
    if n_missing:
        cells = g.choice(n_s * n_d * n_b, size=n_missing, replace=False)
        accuracy.reshape(-1)[cells] = np.nan
        auc.reshape(-1)[cells] = np.nan

    dims3 = ("strategy", "dataset", "batch_size")
    ds = xr.Dataset(
        {
            "accuracy": (dims3, accuracy, {"long_name": "final accuracy"}),
            "auc": (dims3, auc, {"long_name": "area under the learning curve (mean accuracy over cycles)"}),
            "selected": (dims3 + ("cycle", "item"), selected, {"long_name": "item queried in this cycle"}),
        },
        coords={
            "strategy": strategies,
            "dataset": [f"d{k}" for k in range(n_d)],
            "batch_size": sizes,
            "cycle": np.arange(n_cycles),
            "item": np.arange(n_items),
        },
        attrs={"title": "synthetic active-learning benchmark", "rng": int(seed),
               "generator": "xcorrstat.agreement.synthetic_benchmark"},
    )
    return ds
