"""Property tests: random tables written to every format read back equal to the in-memory table.

Tables have random label types (str or int), random numeric and text columns, and NaNs;
``read`` of each file must equal ``from_dataframe`` of the DataFrame that was written.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from xcorrstat._io import from_dataframe, read

FORMATS = ("csv", "tsv", "jsonl", "parquet", "netcdf")
_FLOATS = st.floats(allow_nan=False, allow_infinity=False, width=64) | st.just(math.nan)


@st.composite
def tables(draw) -> pd.DataFrame:
    n_sys = draw(st.integers(1, 4))
    n_inp = draw(st.integers(1, 5))
    sys_labels = [f"s{k}" for k in range(n_sys)] if draw(st.booleans()) else list(range(10, 10 + n_sys))
    inp_labels = [f"d{k}" for k in range(n_inp)] if draw(st.booleans()) else list(range(n_inp))
    cells = [(s, i) for s in sys_labels for i in inp_labels]
    chosen = draw(st.lists(st.sampled_from(range(len(cells))), min_size=1, max_size=len(cells), unique=True))
    df = pd.DataFrame({"system": [cells[c][0] for c in chosen], "input": [cells[c][1] for c in chosen]})
    for k in range(draw(st.integers(1, 3))):
        df[f"m{k}"] = draw(st.lists(_FLOATS, min_size=len(df), max_size=len(df)))
    if draw(st.booleans()):
        df["count"] = draw(st.lists(st.integers(-1000, 1000), min_size=len(df), max_size=len(df)))
    words = st.sampled_from(["news", "chat", "t x", "é", "a,b"])
    for name, key in (("domain", "input"), ("team", "system"), ("note", None)):
        if draw(st.booleans()):
            if key is None:
                df[name] = draw(st.lists(words, min_size=len(df), max_size=len(df)))
            else:
                per = {lab: draw(words) for lab in df[key].unique()}
                df[name] = df[key].map(per)
    return df


def _write(df: pd.DataFrame, path, fmt: str) -> None:
    if fmt == "csv":
        df.to_csv(path, index=False)
    elif fmt == "tsv":
        df.to_csv(path, sep="\t", index=False)
    elif fmt == "jsonl":
        with open(path, "w", encoding="utf-8") as fh:
            for row in df.to_dict(orient="records"):
                clean = {k: (None if isinstance(v, float) and math.isnan(v) else
                             v.item() if isinstance(v, np.generic) else v) for k, v in row.items()}
                fh.write(json.dumps(clean) + "\n")
    elif fmt == "parquet":
        df.to_parquet(path, index=False)
    else:
        from_dataframe(df).to_netcdf(path)


def _text(values: np.ndarray) -> np.ndarray:
    """Text values with every missing cell as None (netCDF 3 stores a missing string as '')."""
    out = values.astype(object)
    out[pd.isna(out) | (out == "")] = None
    return out


def _check_same(got: xr.Dataset, expected: xr.Dataset) -> None:
    assert list(got.data_vars) == list(expected.data_vars)
    assert set(got.coords) == set(expected.coords)
    for name in expected.variables:
        assert got[name].dims == expected[name].dims, name
        a, b = got[name].values, expected[name].values
        if a.dtype == object or b.dtype == object:
            assert (_text(a) == _text(b)).all(), name
        else:
            np.testing.assert_array_equal(a, b, err_msg=str(name))


@pytest.mark.parametrize("fmt", FORMATS)
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(df=tables())
def test_read_equals_from_dataframe(tmp_path, fmt, df):
    if fmt == "parquet":
        pytest.importorskip("pyarrow")
    path = tmp_path / f"table.{'nc' if fmt == 'netcdf' else fmt}"
    _write(df, path, fmt)
    _check_same(read(path), from_dataframe(df))


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(df=tables())
def test_gzip_and_utf16_equal_plain(tmp_path, df):
    expected = from_dataframe(df)
    gz = tmp_path / "table.csv.gz"
    df.to_csv(gz, index=False, compression="gzip")
    _check_same(read(gz), expected)
    utf16 = tmp_path / "table16.tsv"
    df.to_csv(utf16, sep="\t", index=False, encoding="utf-16")
    _check_same(read(utf16), expected)


@settings(max_examples=10, deadline=None)
@given(df=tables())
def test_text_columns_are_coordinates_on_their_dims(df):
    ds = from_dataframe(df)
    for name in ("domain", "team"):  # functions of one label: on at most one dim (either, when cells are few)
        if name in df.columns:
            assert len(ds[name].dims) <= 1
            for _, row in df.iterrows():  # oracle: the table's own rows
                value = ds[name].sel({d: row[d] for d in ds[name].dims}).item()
                assert value == row[name]
    numeric = [c for c in df.columns if c.startswith("m") or c == "count"]
    assert list(ds.data_vars) == numeric
