"""The mt-metrics-eval reference cases (tests/data/mtme_fixtures.json) in xcorrstat's layout.

mt-metrics-eval passes flat vectors holding one block per system,
``v[s * num_items + i]`` = system ``s`` on item ``i`` (``None`` = missing gold).
:func:`scores` turns a case's flat vectors into a Dataset with ``system`` and
``input`` dims, the layout every xcorrstat call takes.

Every case a test module uses comes from :func:`load` (or :func:`case`) at module level,
and every case it returns is used: tests/test_mtme_coverage.py runs the test modules'
module-level code while :func:`recording` and checks that the loaded names are all 99.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import xarray as xr

FIXTURES = Path(__file__).parent / "data" / "mtme_fixtures.json"
_RECORDERS: list[set[str]] = []


def all_names() -> list[str]:
    """The name of every case in the fixture file."""
    return [c["name"] for c in json.loads(FIXTURES.read_text())["fixtures"]]


@contextlib.contextmanager
def recording() -> Iterator[set[str]]:
    """Collect the name of every case :func:`load` returns inside the block."""
    names: set[str] = set()
    _RECORDERS.append(names)
    try:
        yield names
    finally:
        _RECORDERS.remove(names)


def load(*functions: str, names: tuple[str, ...] = (), where: Callable[[dict], bool] | None = None) -> list[dict]:
    """The cases whose ``function`` starts with one of ``functions`` (or whose name is in ``names``),
    and, with ``where``, for which ``where(case)`` holds."""
    cases = json.loads(FIXTURES.read_text())["fixtures"]
    chosen = [c for c in cases if c["name"] in names or any(c["function"].startswith(f) for f in functions)]
    chosen = [c for c in chosen if where is None or where(c)]
    for recorder in _RECORDERS:
        recorder.update(c["name"] for c in chosen)
    return chosen


def case(name: str) -> dict:
    """The one case called ``name``."""
    found = load(names=(name,))
    if len(found) != 1:
        raise KeyError(f"no fixture named {name!r}")
    return found[0]


def ids(cases: list[dict]) -> list[str]:
    return [c["name"] for c in cases]


def to_matrix(flat, num_sys: int) -> np.ndarray:
    """A flat mt-metrics-eval vector as a (system, input) float matrix; ``None`` becomes NaN."""
    values = np.array([np.nan if v is None else float(v) for v in flat], dtype=np.float64)
    if values.size % num_sys:
        raise ValueError(f"a flat vector of {values.size} scores does not split into {num_sys} systems")
    return values.reshape(num_sys, values.size // num_sys)


def from_rows(**rows) -> xr.Dataset:
    """A (system, input) Dataset from matrices whose rows are inputs (segments) and columns systems."""
    data = {k: np.array([[np.nan if v is None else float(v) for v in r] for r in m], dtype=np.float64).T
            for k, m in rows.items()}
    n_sys, n_inp = next(iter(data.values())).shape
    coords = {"system": [f"sys{s}" for s in range(n_sys)], "input": [f"item{i}" for i in range(n_inp)]}
    return xr.Dataset({k: (("system", "input"), v) for k, v in data.items()}, coords=coords)


def scores(num_sys: int, gold, **metrics) -> xr.Dataset:
    """A Dataset with the target ``human`` (from ``gold``) and one variable per metric vector."""
    z = to_matrix(gold, num_sys)
    n_sys, n_inp = z.shape
    coords = {"system": [f"sys{s}" for s in range(n_sys)], "input": [f"item{i}" for i in range(n_inp)]}
    dims = ("system", "input")
    ds = xr.Dataset({name: (dims, to_matrix(v, num_sys)) for name, v in metrics.items()}, coords=coords)
    ds["human"] = (dims, z)
    ds["human"].attrs["role"] = "human"
    return ds
