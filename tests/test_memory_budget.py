"""``set_options(memory_budget=...)``: the one budget every resampling path sizes its blocks from.

A smaller budget gives smaller blocks (fewer draws per batch, fewer metrics or pairs per task)
and the same numbers bit for bit, since every draw is made from its id. The peak memory of a
bootstrap and of an all-pairs permutation test is measured in a fresh interpreter
(``resource.getrusage``): within the budget, it does not grow with the draws or the pairs.
"""

from __future__ import annotations

import sys
import textwrap

import dask
import numpy as np
import pytest
import xarray as xr
from peak_memory import PRELUDE, child_result

import xcorrstat
from xcorrstat._resampling import memory as memory

from conftest import make_scores

MiB = 2**20


@pytest.mark.parametrize(("given", "expected"), [
    ("512MiB", 512 * 1024**2), ("2GB", 2 * 1000**3), ("1.5 GiB", 3 * 2**29), ("64kib", 64 * 1024),
    ("100", 100), (4096, 4096), (np.int64(3 * 1024**3), 3 * 1024**3), (" 7 b ", 7), ("1TiB", 1024**4),
])
def test_memory_budget_takes_bytes_or_a_size_with_a_unit(given, expected):
    before = xcorrstat.get_options()["memory_budget"]
    with xcorrstat.set_options(memory_budget=given):
        assert xcorrstat.get_options()["memory_budget"] == expected
    assert xcorrstat.get_options()["memory_budget"] == before == 2**30


@pytest.mark.parametrize("bad", [0, -5, True, 1.5, None, "", "lots", "12 XB", "0.1B", "GiB", "-1MiB", [1]])
def test_memory_budget_rejects_what_is_not_a_size(bad):
    with pytest.raises(ValueError, match="memory_budget must be a positive integer"):
        xcorrstat.set_options(memory_budget=bad)
    assert xcorrstat.get_options()["memory_budget"] == 2**30


def test_a_bad_option_leaves_every_option_unchanged():
    before = xcorrstat.get_options()
    with pytest.raises(ValueError, match="min_pairs"):
        xcorrstat.set_options(memory_budget="2GiB", min_pairs=1)
    assert xcorrstat.get_options() == before
    assert before["min_pairs"] == 3 and before["memory_budget"] == 2**30


def test_block_is_the_budget_shared_by_the_cores_with_a_safety_factor(monkeypatch):
    monkeypatch.setattr(dask.system, "CPU_COUNT", 4)
    with xcorrstat.set_options(memory_budget="16GiB"):
        assert memory.block_elems() == 16 * 2**30 // (8 * 2 * 4)  # float64 values, safety factor 2, 4 cores
        assert memory.process_elems() == 16 * 2**30 // (8 * 2)
    with xcorrstat.set_options(memory_budget="1MiB"):  # never below the floor of a batch
        assert memory.block_elems() == memory.MIN_BATCH_ELEMS


def test_one_memory_plan_sizes_every_resampling_block():
    """Only the plan (``_resampling/memory.py``) reads the budget; the engine and the pair route take
    their block sizes from it instead of a formula of their own."""
    import pathlib

    from xcorrstat._resampling import engine, pairs

    folder = pathlib.Path(memory.__file__).parent
    readers = sorted(p.name for p in folder.glob("*.py") if '"memory_budget"' in p.read_text(encoding="utf-8"))
    assert readers == ["memory.py"]
    assert engine.block_elems is memory.block_elems and engine.draw_elems is memory.draw_elems
    assert pairs.pair_block_plan is memory.pair_block_plan and pairs.default_pair_chunk is memory.default_pair_chunk
    for module in (engine, pairs):
        source = pathlib.Path(module.__file__).read_text(encoding="utf-8")
        assert "// max(per_draw" not in source and "process_elems()" not in source  # no budget arithmetic


def _values(ds: xr.Dataset) -> dict:
    return {name: np.asarray(v) for name, v in ds.variables.items()}


def _assert_same_numbers(a: xr.Dataset, b: xr.Dataset) -> None:
    va, vb = _values(a), _values(b)
    assert va.keys() == vb.keys()
    for name in va:
        np.testing.assert_array_equal(va[name], vb[name], err_msg=str(name))
        assert va[name].dtype == vb[name].dtype


@pytest.fixture
def two_cores(monkeypatch):
    """Block sizes as on a 2-core machine, so that the budgets below do give other blocks."""
    monkeypatch.setattr(dask.system, "CPU_COUNT", 2)


@pytest.mark.parametrize("backend", ["eager", "dask"])
def test_a_smaller_budget_gives_smaller_batches_and_the_same_bootstrap(two_cores, backend):
    ds = make_scores(n_metrics=4, n_systems=8, n_inputs=2000, seed=3)
    ds = ds.chunk() if backend == "dask" else ds
    kw = dict(target="human", level="input", method="kendall",
              resample=xcorrstat.Bootstrap(("system", "input"), n_resamples=200, rng=5, keep_distribution=True))
    runs = {}
    for budget in ("16MiB", "256MiB", "4GiB"):
        with xcorrstat.set_options(memory_budget=budget):
            runs[budget] = xcorrstat.bootstrap(ds, **kw).compute()
    batches = [runs[b].attrs["draws_per_batch"] for b in ("16MiB", "256MiB", "4GiB")]
    assert batches[0] < batches[1] <= batches[2]
    _assert_same_numbers(runs["16MiB"], runs["4GiB"])
    _assert_same_numbers(runs["256MiB"], runs["4GiB"])


@pytest.mark.parametrize("backend", ["eager", "dask"])
def test_a_smaller_budget_gives_smaller_pair_blocks_and_the_same_compare(two_cores, backend):
    ds = make_scores(n_metrics=5, n_systems=8, n_inputs=1500, seed=4)
    ds = ds.chunk() if backend == "dask" else ds
    kw = dict(target="human", level="input", method="kendall",
              test=xcorrstat.Permutation(("system", "input"), n_resamples=100, rng=6, keep_distribution=True))
    plan = {"level": "input", "method": "kendall"}
    runs, blocks = {}, {}
    for budget in ("16MiB", "4GiB"):
        with xcorrstat.set_options(memory_budget=budget):
            runs[budget] = xcorrstat.compare(ds, **kw).compute()
            blocks[budget] = memory.pair_block_plan(1225, 15, 2000, 1, plan)  # 50 metrics, WMT-sized
    assert blocks["16MiB"][0] < blocks["4GiB"][0]  # fewer pairs per task
    assert blocks["16MiB"][2] < blocks["4GiB"][2]  # and fewer temporaries for a batch
    _assert_same_numbers(runs["16MiB"], runs["4GiB"])


def test_a_smaller_budget_gives_the_same_permutation_test_and_mean_ci(two_cores):
    ds = make_scores(n_metrics=2, n_systems=12, n_inputs=2000, seed=7)
    perm, means = {}, {}
    for budget in ("16MiB", "4GiB"):
        with xcorrstat.set_options(memory_budget=budget):
            perm[budget] = xcorrstat.permutation_test(ds, x="m0", y="m1", target="human", level="global",
                                                      test=xcorrstat.Permutation(n_resamples=300, rng=8,
                                                                                 keep_distribution=True))
            means[budget] = xcorrstat.mean_ci(ds, metrics=["m0", "m1"], n_resamples=300, rng=9,
                                              keep_distribution=True)
    assert perm["16MiB"].attrs["draws_per_batch"] < perm["4GiB"].attrs["draws_per_batch"]
    _assert_same_numbers(perm["16MiB"], perm["4GiB"])
    _assert_same_numbers(means["16MiB"], means["4GiB"])


PEAK_CHILD = PRELUDE + textwrap.dedent(
    """

    def scores(n_metrics, n_systems, n_inputs, seed):
        rng = np.random.default_rng(seed)
        latent = rng.normal(size=(n_systems, n_inputs))
        ds = xr.Dataset({f"m{k:02d}": (("system", "input"), latent + rng.normal(size=latent.shape))
                         for k in range(n_metrics)})
        ds["human"] = (("system", "input"), latent + rng.normal(size=latent.shape))
        return ds

    def boot(ds, n):
        return lambda: xcorrstat.bootstrap(ds, target="human", level="input", method="kendall",
                                           resample=xcorrstat.Bootstrap(("system", "input"), n_resamples=n, rng=0))

    def compare(ds, m, n):
        return lambda: xcorrstat.compare(ds, target="human", metrics=[f"m{k:02d}" for k in range(m)],
                                         level="input", method="kendall",
                                         test=xcorrstat.Permutation(("system", "input"), n_resamples=n, rng=0))

    boot_data, pair_data = scores(8, 10, 2000, 0), scores(16, 10, 800, 1)
    boot(scores(2, 10, 40, 2), 20)()  # numba and its compiled loops loaded (a fixed cost, not the draws')
    compare(scores(3, 10, 40, 3), 3, 20)()
    start = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux reports KiB
    out = {}
    with xcorrstat.set_options(memory_budget=int(sys.argv[1])):
        boot(boot_data, 40)()  # every module imported, the threads and their heaps started
        compare(pair_data, 3, 40)()
        for n in (130, 300):  # both run as task graphs (more than SMALL_WORK cells x draws)
            out[f"bootstrap, {n} draws"] = growth(boot(boot_data, n))
        for m, n in ((8, 64), (16, 64), (16, 128)):
            out[f"compare, {m * (m - 1) // 2} pairs, {n} draws"] = growth(compare(pair_data, m, n))
        small_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    out["default budget"] = growth(boot(boot_data, 300))  # 1 GiB
    out["process peak over the start, small budget"] = small_peak - start
    print(json.dumps(out))
    """
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the peak RSS of /proc/self/status")
def test_peak_memory_stays_within_the_budget_whatever_the_draws_and_pairs():
    budget = 64 * MiB
    growth = child_result(PEAK_CHILD, budget)
    default = growth.pop("default budget")
    process = growth.pop("process peak over the start, small budget")
    # each run's peak RSS over the RSS before it: within the budget plus a fixed allowance (the
    # floor of a batch, the swap masks of a block of draw ids, the allocator's slack) ...
    assert max(growth.values()) <= budget + 48 * MiB, growth
    assert process <= budget + 96 * MiB, (process, growth)  # resource.getrusage's peak, the threads' heaps included
    # ... however many draws and pairs: 130 -> 300 draws, 28 -> 120 pairs and 64 -> 128 draws stay flat
    boot, pair = list(growth.values())[:2], list(growth.values())[2:]
    assert boot[1] - boot[0] <= 24 * MiB and pair[2] - pair[0] <= 24 * MiB, growth
    # the budget is what bounds it: the default budget lets the same bootstrap take far more
    assert default >= max(growth.values()) + budget, (default, growth)
