"""The all-pairs input-level permutation kernels on the missing-cell patterns of real MQM tables.

Real WMT tables (an MQM target, many metrics) have patterns a table with cells missing at random
lacks: inputs where the target takes one value over the systems it rates (no error in any
output), inputs where it takes one value except in a cell that some metrics miss (a system only
some metrics score), the target missing where the metrics are present, metrics missing in cells
of their own, and whole inputs missing for one metric. Checked, for Pearson and Kendall:

1. every pair's draws equal those of the explicitly swapped z-scored matrices
   (``tests/test_permutation.oracle_distribution``) to 1e-12, and the compiled Pearson loop
   equals its NumPy oracle (``tests/test_swap_allpairs_input.numpy_allpairs``) bit for bit;
2. the Pearson loop decides the draws of those patterns itself: no value is sent back to be
   recomputed from the swapped cells, however many pairs and draws (the work stays linear);
3. ``compare`` gives the same draws, bit for bit, at budgets of 16 MiB and 4 GiB and at any
   batch size;
4. an input-level Pearson ``compare`` on such a target stays within its memory budget (peak RSS
   in a fresh interpreter, as in ``test_missing_memory.py``).
"""

from __future__ import annotations

import sys
import textwrap

import numpy as np
import pytest
import xarray as xr
from oracles import assert_values_same
from peak_memory import PRELUDE, child_result
from test_permutation import oracle_distribution, zscore
from test_swap_allpairs_input import numpy_allpairs

import xcorrstat
from xcorrstat._kernels.linear import allpairs as swap_allpairs_input
from xcorrstat._kernels.linear.allpairs import prepare_allpairs_input
from xcorrstat._resampling.draws import permutation_masks

MiB = 2**20


def mqm_like(seed: int, m: int = 5, s: int = 8, i: int = 14) -> tuple[np.ndarray, np.ndarray]:
    """Metrics (m, s, i) and an MQM-like target (s, i) with the patterns of the module docstring."""
    rng = np.random.default_rng(seed)
    latent = rng.normal(size=(s, i))
    z = -np.clip(np.round(1.0 - latent + rng.normal(scale=0.5, size=(s, i))), 0, None)
    x = np.stack([latent + rng.normal(scale=0.5 + 0.2 * k, size=(s, i)) for k in range(m)])
    z[rng.random((s, i)) < 0.2] = np.nan  # the target missing where the metrics are present
    z[-1] = np.where(rng.random(i) < 0.5, np.nan, z[-1])  # a system rated on half the inputs
    z[:, 0] = 0.0  # one value over every system
    z[:3, 1], z[3:, 1] = np.nan, -2.0  # one value over the systems rated
    z[:, 2], z[-1, 2] = 0.0, -1.0  # one value except in the last system's cell ...
    x[1:3, -1, 2] = np.nan  # ... which two metrics miss: over their cells the target is constant
    x[1, -1, :] = np.nan  # a metric missing a whole system
    x[2, :, 5] = np.nan  # a whole input missing for one metric
    x[3][rng.random((s, i)) < 0.15] = np.nan  # metrics missing in cells of their own
    x[4][rng.random((s, i)) < 0.15] = np.nan
    x[0, :, 6] = 0.5  # a metric constant on an input
    return x, z


def all_pairs(m: int) -> tuple[np.ndarray, np.ndarray]:
    pi, pk = np.triu_indices(m, 1)
    return np.concatenate([pi, pk]), np.concatenate([pk, pi])


@pytest.mark.parametrize("seed", [0, 1])
def test_pearson_on_mqm_patterns_equals_the_explicit_swap(seed):
    x, z = mqm_like(seed)
    masks = permutation_masks(seed + 3, range(100), *z.shape, "cells")
    pairs = all_pairs(x.shape[0])
    zx = np.stack([zscore(a) for a in x])
    out = prepare_allpairs_input(zx, z, pairs, level="input", min_pairs=3)(masks)
    np.testing.assert_array_equal(out, numpy_allpairs(zx, z, pairs, level="input", min_pairs=3)(masks))
    out, masks = out[:, :12], masks[:12]  # the oracle's scipy calls on the first draws
    for p, (i, k) in enumerate(zip(*pairs)):
        expected = oracle_distribution(x[i], x[k], z, masks, "input", "pearson", "b", min_pairs=3)
        assert_values_same(out[p], expected, f"seed {seed} pair {i}-{k}")


def test_constant_target_patterns_send_nothing_back(monkeypatch):
    """Draws on inputs where the target (or X') is exactly constant are decided in the compiled loop."""
    x, z = mqm_like(2, m=6)
    masks = permutation_masks(5, range(200), *z.shape, "cells")
    zx = np.stack([zscore(a) for a in x])
    sent: list[int] = []
    exact = swap_allpairs_input._InputOperands._exact

    def counted(self, m, which, i, b, q):
        sent.append(int(np.asarray(i).size))
        return exact(self, m, which, i, b, q)

    monkeypatch.setattr(swap_allpairs_input._InputOperands, "_exact", counted)
    deltas = prepare_allpairs_input(zx, z, all_pairs(6), level="input", min_pairs=3)
    first = deltas(masks)
    assert sum(sent) == 0, sent
    # the values those inputs would have given are NaN: dropping the inputs leaves the draws as they are
    # (to 1e-12: the target's centring over all its cells changes with them)
    keep = np.ones(z.shape[1], dtype=bool)
    keep[[0, 1]] = False  # inputs where the target is constant over every cell it has
    trimmed = prepare_allpairs_input(zx[:, :, keep], z[:, keep], all_pairs(6), level="input", min_pairs=3)
    assert_values_same(trimmed(masks[:, :, keep]), first, "without the inputs of a constant target")


def _dataset(x: np.ndarray, z: np.ndarray) -> xr.Dataset:
    data = {f"m{k}": (("system", "input"), x[k]) for k in range(x.shape[0])}
    data["human"] = (("system", "input"), z)
    return xr.Dataset(data)


@pytest.mark.parametrize("method", ["pearson", "kendall"])
def test_compare_on_mqm_patterns_is_the_same_at_any_budget_and_batch(method):
    x, z = mqm_like(4, s=7, i=60)
    ds = _dataset(x, z)
    test = xcorrstat.Permutation(n_resamples=300, rng=9, keep_distribution=True)
    runs = {}
    for budget, batch in (("16MiB", None), ("4GiB", None), ("4GiB", 7), ("16MiB", 64)):
        with xcorrstat.set_options(memory_budget=budget, batch=batch):
            runs[budget, batch] = xcorrstat.compare(ds, target="human", common_cells=False, level="input", method=method, test=test)
    first = runs["16MiB", None]
    for key, run in runs.items():
        np.testing.assert_array_equal(run["distribution"].values, first["distribution"].values, err_msg=str(key))
        np.testing.assert_array_equal(run["pvalue"].values, first["pvalue"].values, err_msg=str(key))
    masks = permutation_masks(9, np.arange(5), *z.shape, "cells")
    for a, b in ((0, 1), (2, 3), (1, 2)):
        expected = oracle_distribution(x[a], x[b], z, masks, "input", method, "b", min_pairs=3)
        got = first["distribution"].sel(metric=f"m{a}", other_metric=f"m{b}").values[:5]
        assert_values_same(got, expected, f"{method} m{a} vs m{b}")


PEAK_CHILD = PRELUDE + textwrap.dedent(
    """
    rng = np.random.default_rng(2)
    latent = rng.normal(size=(14, 400))
    data = {f"m{k:02d}": (("system", "input"), latent + rng.normal(size=latent.shape)) for k in range(12)}
    errors = np.clip(np.round(2.0 - latent + rng.normal(scale=0.8, size=latent.shape)), 0, None)
    errors[:, rng.choice(400, size=40, replace=False)] = 0.0  # inputs without an error in any output
    mqm = -errors
    mqm[rng.random(mqm.shape) < 0.3] = np.nan
    data["human"] = (("system", "input"), mqm)
    ds = xr.Dataset(data)
    ds["m00"][3, 5] = np.nan  # one missing cell: the kernel of missing cells
    run = lambda n: xcorrstat.compare(ds, target="human", common_cells=False, level="input",
                                      test=xcorrstat.Permutation(n_resamples=n, rng=0))
    with xcorrstat.set_options(memory_budget=int(sys.argv[1])):
        run(20)  # imports, compiled loops, threads and their heaps
        print(json.dumps({"growth": growth(lambda: run(1000))}))
    """
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the peak RSS of /proc/self/status")
def test_input_pearson_compare_with_a_constant_target_stays_within_the_budget():
    """Inputs where the target is constant made every pair's draws there values to recompute, kept per batch."""
    budget = 64 * MiB
    growth = child_result(PEAK_CHILD, budget)["growth"]
    assert growth <= budget + 64 * MiB, growth / MiB
