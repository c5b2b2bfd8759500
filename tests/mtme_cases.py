"""The mt-metrics-eval reference cases (tests/data/mtme_fixtures.json) in xcorrstat's layout.

mt-metrics-eval passes flat vectors holding one block per system,
``v[s * num_items + i]`` = system ``s`` on item ``i`` (``None`` = missing gold).
:func:`scores` turns a case's flat vectors into a Dataset with ``system`` and
``input`` dims, the layout every xcorrstat call takes.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import xarray as xr

FIXTURES = Path(__file__).parent / "data" / "mtme_fixtures.json"


def load(*functions: str, names: tuple[str, ...] = ()) -> list[dict]:
    """The cases whose ``function`` starts with one of ``functions`` (or whose name is in ``names``)."""
    cases = json.loads(FIXTURES.read_text())["fixtures"]
    return [c for c in cases if c["name"] in names or any(c["function"].startswith(f) for f in functions)]


def ids(cases: list[dict]) -> list[str]:
    return [c["name"] for c in cases]


def to_matrix(flat, num_sys: int) -> np.ndarray:
    """A flat mt-metrics-eval vector as a (system, input) float matrix; ``None`` becomes NaN."""
    values = np.array([np.nan if v is None else float(v) for v in flat], dtype=np.float64)
    if values.size % num_sys:
        raise ValueError(f"a flat vector of {values.size} scores does not split into {num_sys} systems")
    return values.reshape(num_sys, values.size // num_sys)


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
