"""How the work runs never changes a number: every working cell of the capability table, bit for bit.

For each cell that users can reach with draws -- ``bootstrap``, ``paired_bootstrap_test``,
``permutation_test`` and ``compare`` (each test they take) at every level, method and Kendall
variant the table supports, under each scheme -- the result on complete data and on data with
missing cells is the same, every variable and the draws' ``distribution`` bit for bit, under
``memory_budget="16MiB"`` and ``"4GiB"`` and under ``set_options(batch=1)`` and ``batch=4``
(single-draw batches and a last batch of one draw). The table is the source of the cells, so a
path that joins it is covered here. A few cells run on a ``dask.distributed`` cluster of two
worker processes and give the local numbers.

The block floor (``memory.MIN_BATCH_ELEMS``) is lowered so that a batch option is honest on
small data, and the machine is taken to have two cores, as in ``tests/test_memory_budget.py``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import dask
import numpy as np
import pytest
import xarray as xr

import xcorrstat
from xcorrstat._capabilities import cells
from xcorrstat._resampling import memory as memory

distributed = pytest.importorskip("distributed")

N_RESAMPLES = 9
METRICS = ("m0", "m1", "m2")
#: (options, label): the settings each cell runs under, compared with the first.
SETTINGS: tuple[tuple[dict[str, Any], str], ...] = (
    ({"memory_budget": "4GiB"}, "4GiB"),
    ({"memory_budget": "16MiB"}, "16MiB"),
    ({"batch": 1}, "batch=1"),
    ({"batch": 4}, "batch=4"),
)
BOOT_SCHEMES = ("BOOT-BOTH", "BOOT-SYSTEMS", "BOOT-INPUTS")
PERM_SCHEMES = ("PERM-BOTH", "PERM-SYSTEMS", "PERM-INPUTS", "PERM-SYSTEM-XOR-INPUT")


def own_statistic(x: np.ndarray, z: np.ndarray) -> np.ndarray:
    """A statistic of one's own (the table's "callable" column): the covariance along the last axis."""
    return ((x - x.mean(axis=-1, keepdims=True)) * (z - z.mean(axis=-1, keepdims=True))).mean(axis=-1)


def scores(missing: bool, *, n_systems: int = 7, n_inputs: int = 30, seed: int = 5) -> xr.Dataset:
    """Three metrics (ties within each, scores on a grid) and an integer target, as human judgments are;
    with ``missing``, each variable lacks its own cells (and one system a whole input)."""
    rng = np.random.default_rng(seed)
    latent = rng.normal(size=(n_systems, n_inputs))
    dims = ("system", "input")
    data = {m: np.round(latent + rng.normal(size=latent.shape), 1) for m in METRICS}
    data["human"] = np.clip(np.round(2.5 + latent + rng.normal(scale=0.7, size=latent.shape)), 1, 5)
    if missing:
        for name, values in data.items():
            values[rng.random(values.shape) < 0.08] = np.nan
        data["m1"][2, 3] = data["human"][4, 3] = np.nan
    ds = xr.Dataset({k: (dims, v) for k, v in data.items()},
                    coords={"system": [f"S{s}" for s in range(n_systems)],
                            "input": [f"doc{i}" for i in range(n_inputs)]})
    ds["human"].attrs["role"] = "human"
    return ds


def _draws(scheme: str, permutation: bool) -> Any:
    settings = dict(n_resamples=N_RESAMPLES, rng=3, keep_distribution=True)
    return (xcorrstat.Permutation(scheme, **settings) if permutation
            else xcorrstat.Bootstrap(scheme, **settings))


#: The operations of the table that draw, and how each is called on a scheme.
CALLS: dict[str, tuple[tuple[str, ...], Callable[..., Any]]] = {
    "bootstrap": (BOOT_SCHEMES, lambda ds, s, **kw: xcorrstat.bootstrap(
        ds, target="human", metrics=list(METRICS), resample=_draws(s, False), **kw)),
    "paired_bootstrap_test": (BOOT_SCHEMES, lambda ds, s, **kw: xcorrstat.paired_bootstrap_test(
        ds, x="m0", y="m1", target="human", test=_draws(s, False), **kw)),
    "permutation_test": (PERM_SCHEMES, lambda ds, s, **kw: xcorrstat.permutation_test(
        ds, x="m0", y="m1", target="human", test=_draws(s, True), **kw)),
    "permutation_test(test=Permutation(swap='pairs'))": (PERM_SCHEMES, lambda ds, s, **kw: xcorrstat.permutation_test(
        ds, x="m0", y="m1", target="human",
        test=xcorrstat.Permutation(s, swap="pairs", n_resamples=N_RESAMPLES, rng=3, keep_distribution=True), **kw)),
    "compare": (PERM_SCHEMES, lambda ds, s, **kw: xcorrstat.compare(
        ds, target="human", metrics=list(METRICS), test=_draws(s, True), **kw)),
    "compare(test=Permutation(swap='pairs'))": (PERM_SCHEMES, lambda ds, s, **kw: xcorrstat.compare(
        ds, target="human", metrics=list(METRICS),
        test=xcorrstat.Permutation(s, swap="pairs", n_resamples=N_RESAMPLES, rng=3, keep_distribution=True), **kw)),
    "compare(test='bootstrap')": (BOOT_SCHEMES, lambda ds, s, **kw: xcorrstat.compare(
        ds, target="human", metrics=list(METRICS), test=_draws(s, False), **kw)),
}


def _cases() -> list[Any]:
    """One case per working cell and scheme; the schemes after the first (both dims) and Kendall's
    variants other than tau-b are marked slow."""
    out = []
    for operation, level, method, variant, status in cells():
        if status != "yes" or operation not in CALLS:
            continue
        for k, scheme in enumerate(CALLS[operation][0]):
            marks = [pytest.mark.slow] if k or (method == "kendall" and variant != "b") else []
            out.append(pytest.param(operation, scheme, level, method, variant, marks=marks,
                                    id=f"{operation}-{scheme}-{level}-{method}-{variant}"))
    return out


@pytest.fixture
def small_blocks(monkeypatch):
    """Two cores, and no floor under a batch: ``batch=1`` is one draw at a time even on small data."""
    monkeypatch.setattr(dask.system, "CPU_COUNT", 2)
    monkeypatch.setattr(memory, "MIN_BATCH_ELEMS", 1)


def _run(operation: str, scheme: str, ds: xr.Dataset, level: str, method: str, variant: str,
         options: dict[str, Any]) -> xr.Dataset | str:
    """The cell's result under ``options``, or the message of the ValueError it raised (a scheme the
    operation refuses is refused the same way under every setting)."""
    kw: dict[str, Any] = {"level": level, "method": own_statistic if method == "callable" else method}
    if method == "kendall":
        kw["variant"] = variant
    try:
        with xcorrstat.set_options(**options), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return CALLS[operation][1](ds, scheme, **kw)
    except ValueError as err:
        return f"ValueError: {err}"


def _assert_same_numbers(a: xr.Dataset | str, b: xr.Dataset | str, label: str) -> None:
    if isinstance(a, str) or isinstance(b, str):
        assert a == b, label
        return
    assert list(a.variables) == list(b.variables), label
    assert "distribution" in a.variables, label
    for name in a.variables:
        va, vb = np.asarray(a[name]), np.asarray(b[name])
        assert va.dtype == vb.dtype, f"{label}: {name}"
        np.testing.assert_array_equal(va, vb, err_msg=f"{label}: {name}")


@pytest.fixture(scope="module")
def datasets() -> dict[bool, xr.Dataset]:
    return {missing: scores(missing) for missing in (False, True)}


@pytest.mark.parametrize("missing", [False, True], ids=["complete", "missing"])
@pytest.mark.parametrize(("operation", "scheme", "level", "method", "variant"), _cases())
def test_every_cell_gives_the_same_bits_however_it_is_blocked(small_blocks, datasets, missing, operation, scheme,
                                                              level, method, variant):
    ds = datasets[missing]
    runs = [(label, _run(operation, scheme, ds, level, method, variant, options)) for options, label in SETTINGS]
    reference = runs[0][1]
    for label, result in runs[1:]:
        _assert_same_numbers(result, reference, f"{label} vs {runs[0][0]}")


def test_the_settings_do_give_other_blocks(small_blocks):
    """The settings compared above change the batches (on data large enough for the 16 MiB budget)."""
    ds = scores(False, n_systems=12, n_inputs=2000)
    batches = {}
    for options, label in SETTINGS:
        with xcorrstat.set_options(**options):
            batches[label] = xcorrstat.permutation_test(
                ds, x="m0", y="m1", target="human", level="global", method="pearson",
                test=xcorrstat.Permutation(n_resamples=N_RESAMPLES, rng=3)).attrs["draws_per_batch"]
    assert batches == {"4GiB": N_RESAMPLES, "16MiB": batches["16MiB"], "batch=1": 1, "batch=4": 4}
    assert batches["16MiB"] < N_RESAMPLES


#: Representative cells for the cluster: (operation, scheme, level, method, variant).
CLUSTER_CELLS = (
    ("bootstrap", "BOOT-BOTH", "input", "kendall", "b"),
    ("permutation_test", "PERM-BOTH", "global", "pearson", "b"),
    ("compare", "PERM-BOTH", "input", "kendall", "b"),
)


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as local:
        yield local


def test_two_worker_processes_give_the_local_bits(cluster, small_blocks, datasets):
    ds = datasets[True]
    local = {cell: _run(cell[0], cell[1], ds, *cell[2:], {"batch": 4}) for cell in CLUSTER_CELLS}
    with distributed.Client(cluster):
        remote = {cell: _run(cell[0], cell[1], ds, *cell[2:], {"batch": 4}) for cell in CLUSTER_CELLS}
        lazy = {cell: _run(cell[0], cell[1], ds.chunk(), *cell[2:], {"batch": 4}) for cell in CLUSTER_CELLS[:1]}
        lazy = {cell: result if isinstance(result, str) else result.compute() for cell, result in lazy.items()}
    for cell in CLUSTER_CELLS:
        assert not isinstance(local[cell], str), local[cell]
        _assert_same_numbers(remote[cell], local[cell], f"cluster vs local: {cell}")
    for cell, result in lazy.items():
        _assert_same_numbers(result, local[cell], f"chunked on the cluster vs local: {cell}")


def test_the_mask_linear_sums_of_a_draw_do_not_depend_on_its_batch():
    """:func:`~xcorrstat._kernels.linear.forms.linear` of a batch equals that of each draw alone, bit for bit,
    and the exactly rounded sums (``math.fsum``) up to their last bits, at input and global shapes."""
    import math

    from xcorrstat._kernels.linear.forms import linear, linear_forms, per_input_masks

    rng = np.random.default_rng(2)
    for p, k, s, i, b in ((2, 3, 9, 5, 37), (1, 6, 3000, 1, 33)):
        coef = rng.normal(size=(p, k, s, i)) * np.exp(rng.normal(scale=8, size=(p, k, s, i)))
        m = rng.random((b, s, i)) < 0.5
        forms = linear_forms(coef)
        whole = linear(per_input_masks(m, np.float64), forms)
        alone = np.concatenate([linear(per_input_masks(m[j:j + 1], np.float64), forms) for j in range(b)], axis=-1)
        np.testing.assert_array_equal(whole, alone)
        for q, kk, ii, j in ((0, 0, 0, 0), (p - 1, k - 1, i - 1, b - 1)):
            exact = math.fsum(coef[q, kk, m[j, :, ii], ii])
            assert abs(whole[q, kk, ii, j] - exact) <= 4 * np.spacing(np.abs(coef[q, kk, :, ii]).max())
