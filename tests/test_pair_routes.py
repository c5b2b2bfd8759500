"""The eager routes of the pairs' permutation draws give the same bits: one block in the calling thread, the
tasks of the graph on a pool of this process's threads, and the task graph on Dask's scheduler."""

import numpy as np
import pytest
import xarray as xr

import xcorrstat
from xcorrstat._resampling import pairs


def _grid(seed=0, s=9, i=40, m=4):
    rng = np.random.default_rng(seed)
    latent = rng.normal(size=(s, i))
    data = {"human": (("system", "input"), np.round(latent + rng.normal(size=(s, i))))}
    for k in range(m):
        data[f"m{k}"] = (("system", "input"), latent + (1 + k / 4) * rng.normal(size=(s, i)))
    return xr.Dataset(data)


@pytest.mark.parametrize("level,method", [("global", "kendall"), ("input", "kendall"), ("input", "spearman")])
def test_threads_and_graph_give_the_same_bits(monkeypatch, level, method):
    grid = _grid()
    test = xcorrstat.Permutation(("system", "input"), n_resamples=70, rng=3, keep_distribution=True)
    out = {}
    for route in ("block", "threads", "graph"):
        monkeypatch.setattr(pairs, "runs_in_one_block", lambda work, route=route: route == "block")
        monkeypatch.setattr(pairs, "runs_on_threads", lambda work, route=route: route == "threads")
        with xcorrstat.set_options(batch=16):
            out[route] = xcorrstat.compare(grid, target="human", level=level, method=method, test=test)
    for route in ("threads", "graph"):
        for name in out["block"].data_vars:
            np.testing.assert_array_equal(out[route][name].values, out["block"][name].values)


def test_threads_are_taken_for_mid_sized_eager_work(monkeypatch):
    calls = []
    real = pairs._threaded_pair_blocks
    monkeypatch.setattr(pairs, "runs_in_one_block", lambda work: False)
    monkeypatch.setattr(pairs, "_threaded_pair_blocks", lambda *a, **k: calls.append(1) or real(*a, **k))
    xcorrstat.compare(_grid(), target="human", level="global", method="kendall",
                      test=xcorrstat.Permutation(("system", "input"), n_resamples=20, rng=0))
    assert calls
