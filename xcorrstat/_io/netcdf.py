"""Reading a netCDF score file: its dims named as the analyses name them, its scores checked.

Helper of :func:`xcorrstat._io.read`. Text variables become coordinates and variables without the
``(system, input)`` dims (a system-only variable in a segment-level file) are kept but are no scores
the analyses use: both are named in a note (:mod:`xcorrstat._notes`). Labels of the ``system`` and
``input`` dims that differ only in whitespace, invisible characters, Unicode normalisation or type
are refused (:func:`~xcorrstat._io.checks.check_spellings`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import xarray as xr

from .._display import cut, did_you_mean
from .._schema import SYSTEM_LEVEL_ATTR
from .checks import check_spellings
from .columns import is_score_dtype, name_seq, score_array, set_roles
from .limits import ReadLimitError, check_data_size

__all__ = ["read_netcdf"]

_DIMS = ("system", "input")


def _renamed(ds: xr.Dataset, path: str, system: str, input: str | None,
             dims: Sequence[str]) -> tuple[xr.Dataset, bool]:
    """The dataset with its label dims named ``system`` and ``input``, and whether it is system-level."""
    rename = {old: new for old, new in zip((system, input), _DIMS)
              if old is not None and old != new and old in ds.dims}
    ds = ds.rename(rename)
    system_level = input is None or set(ds.dims) == {"system"}
    wanted = (("system", system, "system"),) if system_level else (("system", system, "system"),
                                                                   ("input", input, "input"))
    for arg, old, dim in wanted:
        if dim not in ds.dims:
            raise ValueError(f"{path!r}: the netCDF dataset has no {dim!r} dimension "
                             f"({arg}={old!r}); its dims are {list(ds.dims)}{did_you_mean(old, list(ds.dims))}")
    for d in name_seq(dims, "dims"):
        if d not in ds.dims:
            raise ValueError(f"{path!r}: dims entry {d!r} is not a dimension of the "
                             f"dataset; its dims are {list(ds.dims)}{did_you_mean(d, list(ds.dims))}")
    return ds, system_level


def _notes(ds: xr.Dataset, text: list[Any], system_level: bool) -> list[str]:
    """Notes on the text variables kept as coordinates, the variables off the label dims and the labels."""
    notes = [f"variable {cut(k)} holds text ({ds.variables[k].dtype}): kept as a coordinate, not a score"
             for k in text]
    needed = ("system",) if system_level else _DIMS
    for name, var in ds.data_vars.items():
        missing = [d for d in needed if d not in var.dims]
        if missing:
            notes.append(f"variable {cut(name)} lies along {tuple(map(str, var.dims))}, without "
                         f"{', '.join(map(repr, missing))}: kept, but not a score the analyses use (they leave it "
                         "out of the metrics)")
    for dim in needed:
        if dim in ds.indexes:
            notes += check_spellings(ds[dim].values, f"{dim} labels")
    return notes


def _from_netcdf(ds: xr.Dataset, path: str, *, system: str = "system",
                 input: str | None = "input", metric: str | None = None,
                 value: str | None = None, dims: Sequence[str] = (),
                 human: Sequence[str] | str | None = None) -> tuple[xr.Dataset, list[str]]:
    if metric is not None or value is not None:
        raise ValueError(f"{path!r}: metric= and value= describe long tables and do "
                         "not apply to netCDF files")
    ds, system_level = _renamed(ds, path, system, input, dims)
    text = [k for k in ds.data_vars if not is_score_dtype(ds.variables[k].dtype)]
    ds = ds.set_coords(text)
    if not ds.data_vars:
        raise ValueError(f"{path!r}: the netCDF dataset has no numeric data variables"
                         + (f" (text variables {cut(text, 200)} were kept as coordinates)" if text else ""))
    for name in list(ds.data_vars):
        var = ds.variables[name]
        ds[name] = var.copy(data=score_array(var.values, var.dtype, f"variable {cut(name)}"))
    if system_level:
        if "input" in ds.dims:
            raise ValueError(f"{path!r}: input=False reads system-level scores, but the dataset has an 'input' "
                             f"dim; its dims are {list(ds.dims)}")
        ds.attrs[SYSTEM_LEVEL_ATTR] = 1
    return set_roles(ds, human), _notes(ds, text, system_level)


def read_netcdf(path: str, kwargs: dict[str, Any]) -> tuple[xr.Dataset, list[str]]:
    """The scores of a netCDF file (``kwargs`` as :func:`xcorrstat._io.read` takes them), and the notes
    on what was kept as a coordinate or left out of the scores."""
    try:
        with xr.open_dataset(path) as lazy:
            check_data_size(path, int(lazy.nbytes), "netCDF variables")  # compressed ones expand
            ds = lazy.load()
    except ReadLimitError:
        raise
    except (OSError, ValueError, TypeError, KeyError, RuntimeError) as err:  # netCDF backends vary
        raise ValueError(f"{path!r} is not a readable netCDF file ({cut(str(err))}); if it is a table, "
                         "pass format='csv' (or 'tsv', 'jsonl', 'parquet'; --file-format on the command "
                         "line)") from None
    kwargs = {k: v for k, v in kwargs.items() if not (k in _DIMS and v is None)}
    if kwargs.get("input") is False:
        kwargs["input"] = None
    return _from_netcdf(ds, path, **kwargs)
