import numpy as np
import pytest
import xarray as xr

import xcorrstat


@pytest.fixture(scope="session")
def summeval() -> xr.Dataset:
    return xcorrstat.datasets.summeval()


def make_scores(*, n_metrics=4, n_systems=6, n_inputs=8, seed=0, nan_frac=0.0, ties=False, extra=None):
    """A synthetic score Dataset: metrics m0.., target `human`, optional extra batch dim."""
    rng = np.random.default_rng(seed)
    shape = (n_systems, n_inputs) if extra is None else (extra[1], n_systems, n_inputs)
    dims = ("system", "input") if extra is None else (extra[0], "system", "input")

    def draw():
        v = rng.integers(0, 4, size=shape).astype(float) if ties else rng.normal(size=shape)
        if nan_frac:
            v[rng.random(shape) < nan_frac] = np.nan
        return v

    data = {f"m{k}": (dims, draw()) for k in range(n_metrics)}
    data["human"] = (dims, draw())
    coords = {"system": [f"S{i}" for i in range(n_systems)], "input": [f"doc{j}" for j in range(n_inputs)]}
    if extra is not None:
        coords[extra[0]] = [f"{extra[0]}{k}" for k in range(extra[1])]
    ds = xr.Dataset(data, coords=coords)
    ds["human"].attrs["role"] = "human"
    return ds


def to_dataset(X, Y, Z):
    """Two metrics `mx`, `my` and the target `human` from (system, input) matrices."""
    n_sys, n_inp = X.shape
    coords = {"system": [f"sys{s}" for s in range(n_sys)], "input": [f"doc{j}" for j in range(n_inp)]}
    dims = ("system", "input")
    ds = xr.Dataset({"mx": (dims, X), "my": (dims, Y), "human": (dims, Z)}, coords=coords)
    ds["human"].attrs["role"] = "human"
    return ds


def weighted_rows(seed, rows, s, b, *, unit, no_draw=False):
    """Rows ``x``, ``z`` (rows, s) and draws ``w`` (b, s) for the row-under-draws kernels: ties (integer
    scores, half of the rows with noise), NaN in x and z, a constant row, a row with no valid unit, draw 0
    taking ``unit`` s times and nothing else, and with ``no_draw`` a draw 1 that takes nothing."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 4, (rows, s)).astype(float) + rng.normal(scale=0.3, size=(rows, s)) * (rng.random((rows, 1)) < .5)
    z = rng.integers(0, 3, (rows, s)).astype(float)
    x[rng.random(x.shape) < 0.15] = np.nan
    z[rng.random(z.shape) < 0.1] = np.nan
    x[0] = 2.0  # a constant row
    z[1, :] = np.nan  # a row with no valid unit
    w = rng.multinomial(s, np.full(s, 1.0 / s), size=b)
    w[0] = 0
    w[0, unit] = s  # one unit drawn s times
    if no_draw:
        w[1] = 0  # nothing drawn
    return x, z, w


def assert_lazy_notes_equal(lazy, eager):
    """Dask data make the same result as eager data, but for the notes that count missing cells (they
    would need a pass over the data before ``.compute()``): in their place a fixed note says what was
    done, and every other note is there and in order."""
    from xcorrstat._significance.common import LAZY_COMMON_NOTE, LAZY_OWN_NOTE, LAZY_PAIR_NOTE

    fixed = {LAZY_COMMON_NOTE, LAZY_OWN_NOTE, LAZY_PAIR_NOTE}
    notes = lazy.attrs.get("notes", ())
    assert any(note in fixed for note in notes)
    assert {note for note in notes if note not in fixed} <= set(eager.attrs.get("notes", ()))
    xr.testing.assert_identical(lazy.assign_attrs(notes=eager.attrs.get("notes", ())),
                                eager.assign_attrs(notes=eager.attrs.get("notes", ())))
