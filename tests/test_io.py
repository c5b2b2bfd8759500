"""Tests for xcorrstat._io: from_dataframe and read."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from hypothesis import given, settings
from hypothesis import strategies as st

from xcorrstat._io import SUPPORTED_FORMATS, from_dataframe, read


@pytest.fixture
def wide() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    systems = ["S2", "S1", "S3"]
    inputs = ["d3", "d1", "d2", "d4"]
    rows = [(s, i) for s in systems for i in inputs]
    return pd.DataFrame({
        "system": [r[0] for r in rows],
        "input": [r[1] for r in rows],
        "bleu": rng.normal(size=len(rows)),
        "chrf": rng.normal(size=len(rows)),
        "human": rng.integers(1, 6, size=len(rows)),
    })


def _long(df: pd.DataFrame, keys=("system", "input")) -> pd.DataFrame:
    return df.melt(id_vars=list(keys), var_name="metric", value_name="score")


# --------------------------------------------------------------------------- wide


def test_wide_matches_to_xarray(wide):
    ds = from_dataframe(wide)
    ref = wide.set_index(["system", "input"]).to_xarray()
    assert list(ds.data_vars) == ["bleu", "chrf", "human"]
    assert ds["bleu"].dims == ("system", "input")
    assert all(ds[v].dtype == np.float64 for v in ds.data_vars)
    xr.testing.assert_equal(ds.sortby(["system", "input"]), ref.astype(np.float64))


def test_wide_keeps_first_appearance_order(wide):
    ds = from_dataframe(wide)
    assert ds["system"].values.tolist() == ["S2", "S1", "S3"]
    assert ds["input"].values.tolist() == ["d3", "d1", "d2", "d4"]
    assert all(isinstance(x, str) for x in ds["system"].values)


def test_numeric_labels_stay_numeric():
    df = pd.DataFrame({"system": [7, 7, 3, 3], "input": [10, 20, 10, 20],
                       "m": [1.0, 2.0, 3.0, 4.0]})
    ds = from_dataframe(df)
    assert ds["system"].dtype.kind == "i"
    assert ds["system"].values.tolist() == [7, 3]
    assert ds["m"].sel(system=3, input=20).item() == 4.0


def test_renamed_label_columns(wide):
    renamed = wide.rename(columns={"system": "sys", "input": "doc"})
    ds = from_dataframe(renamed, system="sys", input="doc")
    xr.testing.assert_identical(ds, from_dataframe(wide))


def test_swapped_label_columns(wide):
    swapped = wide.rename(columns={"system": "input", "input": "system"})
    ds = from_dataframe(swapped, system="input", input="system")
    xr.testing.assert_identical(ds, from_dataframe(wide))


def test_label_columns_from_index(wide):
    ds = from_dataframe(wide.set_index(["system", "input"]))
    xr.testing.assert_identical(ds, from_dataframe(wide))


def test_extra_dims():
    rows = [(lp, s, i) for lp in ["de-en", "zh-en"] for s in ["A", "B"] for i in range(3)]
    df = pd.DataFrame(rows, columns=["lp", "sys", "seg"])
    df["m"] = np.arange(len(df), dtype=float)
    ds = from_dataframe(df, system="sys", input="seg", dims=["lp"])
    assert ds["m"].dims == ("system", "input", "lp")
    assert dict(ds.sizes) == {"system": 2, "input": 3, "lp": 2}
    ref = df.set_index(["sys", "seg", "lp"]).to_xarray().rename(sys="system", seg="input")
    xr.testing.assert_equal(ds.sortby(["system", "input", "lp"]), ref)
    assert from_dataframe(df, system="sys", input="seg", dims="lp").equals(ds)


def test_missing_combinations_are_nan(wide):
    ds = from_dataframe(wide.drop(index=[0, 5]))
    assert int(ds["bleu"].isnull().sum()) == 2
    assert np.isnan(ds["chrf"].sel(system="S2", input="d3").item())
    assert np.isnan(ds["human"].sel(system="S1", input="d1").item())
    assert ds["bleu"].sel(system="S1", input="d3").item() == wide["bleu"][4]


def test_nan_scores_allowed_and_nullable_dtypes():
    df = pd.DataFrame({"system": ["A", "B"], "input": ["x", "x"],
                       "m": [np.nan, 1.0], "n": pd.array([1, None], dtype="Int64"),
                       "b": [True, False]})
    ds = from_dataframe(df)
    assert np.isnan(ds["m"].values[0, 0]) and np.isnan(ds["n"].values[1, 0])
    assert ds["b"].values.ravel().tolist() == [1.0, 0.0]
    assert all(ds[v].dtype == np.float64 for v in ds.data_vars)


# --------------------------------------------------------------------------- long


def test_long_equals_wide(wide):
    ds_long = from_dataframe(_long(wide), metric="metric", value="score")
    xr.testing.assert_identical(ds_long, from_dataframe(wide))


def test_long_with_dims_and_renames():
    rows = [(lp, s, i) for lp in ["de-en", "zh-en"] for s in ["A", "B"] for i in ["a", "b"]]
    df = pd.DataFrame(rows, columns=["lp", "sys", "seg"])
    df["m1"] = np.arange(len(df), dtype=float)
    df["m2"] = -np.arange(len(df), dtype=float)
    long = df.melt(id_vars=["lp", "sys", "seg"], var_name="name", value_name="v")
    kw = dict(system="sys", input="seg", dims=["lp"], human="m2")
    got = from_dataframe(long.sample(frac=1, random_state=1), metric="name", value="v", **kw)
    want = from_dataframe(df, **kw)
    xr.testing.assert_identical(got.sortby(["system", "input", "lp"]),
                                want.sortby(["system", "input", "lp"]))


def test_long_ignores_other_columns(wide):
    long = _long(wide).assign(note="x", rank=1.5)  # numeric: ignored; text: a coordinate
    ds = from_dataframe(long, metric="metric", value="score")
    assert ds["note"].item() == "x"
    assert ds.drop_vars("note").equals(from_dataframe(wide))


# --------------------------------------------------------------------------- roles


def test_human_roles(wide):
    ds = from_dataframe(wide, human=["human"])
    assert ds["human"].attrs["role"] == "human"
    assert ds["bleu"].attrs["role"] == "metric" and ds["chrf"].attrs["role"] == "metric"
    assert from_dataframe(wide, human="human")["human"].attrs == {"role": "human"}
    plain = from_dataframe(wide)
    assert all("role" not in plain[v].attrs for v in plain.data_vars)


def test_unknown_human(wide):
    with pytest.raises(ValueError, match="human=.*'nope'"):
        from_dataframe(wide, human=["human", "nope"])


# --------------------------------------------------------------------------- errors


def test_not_a_dataframe(wide):
    with pytest.raises(TypeError, match="df must be a pandas DataFrame.*dict"):
        from_dataframe(wide.to_dict())


@pytest.mark.parametrize("kw, arg", [
    ({"system": "sys"}, "system='sys'"),
    ({"input": "doc"}, "input='doc'"),
    ({"dims": ["lp"]}, "dims entry 'lp'"),
    ({"metric": "name", "value": "score"}, "metric='name'"),
])
def test_missing_column(wide, kw, arg):
    df = _long(wide) if "metric" in kw else wide
    with pytest.raises(ValueError, match=f"{arg}: no such column; available.*'input'"):
        from_dataframe(df, **kw)


def test_missing_value_column(wide):
    with pytest.raises(ValueError, match="value='val': no such column"):
        from_dataframe(_long(wide), metric="metric", value="val")


@pytest.mark.parametrize("kw", [{"metric": "metric"}, {"value": "score"}])
def test_metric_without_value(wide, kw):
    with pytest.raises(ValueError, match="metric= and value="):
        from_dataframe(_long(wide), **kw)


def test_duplicate_rows(wide):
    df = pd.concat([wide, wide.iloc[[5, 1]], wide.iloc[[5]]])
    n = len(wide)
    # the first repeated row is wide's row 5 (data row 6), appended as data row n + 1
    with pytest.raises(ValueError, match=rf"3 duplicate row\(s\) for \(system, input\): "
                                         rf"data row {n + 1} repeats data row 6, \('S1', 'd1'\)"):
        from_dataframe(df)


def test_duplicate_rows_long(wide):
    long = _long(wide)
    with pytest.raises(ValueError, match=rf"1 duplicate.*\(system, input, metric\): data row "
                                         rf"{len(long) + 1} repeats data row 1, \('S2', 'd3', 'bleu'\)"):
        from_dataframe(pd.concat([long, long.iloc[[0]]]), metric="metric", value="score")


def test_non_numeric_column(wide):
    df = wide.assign(comment="ok")  # a text column: a (here scalar) coordinate, not an error
    assert from_dataframe(df)["comment"].item() == "ok"
    df = wide.astype({"chrf": object})
    df.loc[4, "chrf"] = "n/a"
    with pytest.raises(TypeError, match="column 'chrf' has dtype object.*'n/a' in data row 5"):
        from_dataframe(df)
    long = _long(wide).astype({"score": str})
    with pytest.raises(TypeError, match="value='score' column has dtype"):
        from_dataframe(long, metric="metric", value="score")


def test_infinite_values(wide):
    df = wide.copy()
    df.loc[[0, 3], "chrf"] = [np.inf, -np.inf]
    with pytest.raises(ValueError, match=r"column 'chrf' has 2 infinite value\(s\) \(first in data row 1\)"):
        from_dataframe(df)


def test_empty_table(wide):
    with pytest.raises(ValueError, match="no rows"):
        from_dataframe(wide.iloc[:0])
    with pytest.raises(ValueError, match="no rows"):
        from_dataframe(pd.DataFrame())


@pytest.mark.parametrize("col, arg", [("system", "system='system'"),
                                      ("input", "input='input'")])
def test_missing_labels(wide, col, arg):
    df = wide.astype({col: object})
    df.loc[2, col] = None
    with pytest.raises(ValueError, match=f"{arg}: 1 missing label\\(s\\), first in data row 3"):
        from_dataframe(df)


def test_label_name_clashes(wide):
    with pytest.raises(ValueError, match="distinct"):
        from_dataframe(wide, system="input")
    with pytest.raises(ValueError, match="dims=.*'system'"):
        from_dataframe(wide.rename(columns={"system": "sys", "bleu": "system"}),
                       system="sys", dims=["system"])
    with pytest.raises(ValueError, match=r"\['system'\] clash"):
        from_dataframe(wide.rename(columns={"system": "sys", "bleu": "system"}),
                       system="sys")
    with pytest.raises(ValueError, match="no score columns"):
        from_dataframe(wide[["system", "input"]])


# --------------------------------------------------------------------------- property


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("abcde"), st.integers(0, 4),
                          st.floats(-1e6, 1e6) | st.just(np.nan)),
                min_size=1, max_size=25, unique_by=lambda r: r[:2]))
def test_property_wide_long_and_to_xarray(rows):
    df = pd.DataFrame(rows, columns=["system", "input", "m"])
    ds = from_dataframe(df)
    ref = df.set_index(["system", "input"]).to_xarray()
    xr.testing.assert_equal(ds.sortby(["system", "input"]), ref)
    long = df.assign(metric="m").rename(columns={"m": "v"})
    xr.testing.assert_identical(from_dataframe(long, metric="metric", value="v"), ds)


# --------------------------------------------------------------------------- read


def _write(df: pd.DataFrame, path, fmt: str) -> None:
    if fmt == "csv":
        df.to_csv(path, index=False)
    elif fmt == "tsv":
        df.to_csv(path, sep="\t", index=False)
    elif fmt == "jsonl":  # json.dumps keeps every float digit, unlike DataFrame.to_json
        text = "".join(json.dumps(r) + "\n" for r in df.to_dict(orient="records"))
        opener = gzip.open if str(path).endswith(".gz") else open
        with opener(path, "wt", encoding="utf-8") as fh:
            fh.write(text)
    elif fmt == "parquet":
        df.to_parquet(path, index=False)
    else:
        from_dataframe(df).to_netcdf(path, engine="scipy")


@pytest.mark.parametrize("name, fmt", [
    ("s.csv", "csv"), ("s.tsv", "tsv"), ("s.tab", "tsv"), ("s.jsonl", "jsonl"),
    ("s.ndjson", "jsonl"), ("s.parquet", "parquet"), ("s.pq", "parquet"),
    ("s.nc", "netcdf"), ("s.netcdf", "netcdf"), ("s.csv.gz", "csv"),
    ("s.tsv.gz", "tsv"), ("s.jsonl.gz", "jsonl"), ("S.CSV", "csv"),
])
def test_read_every_format(wide, tmp_path, name, fmt):
    if fmt == "parquet":
        pytest.importorskip("pyarrow")
    path = tmp_path / name
    _write(wide, path, fmt)
    want = from_dataframe(wide, human="human")
    got = read(path, human="human")
    xr.testing.assert_identical(got, want)
    assert all(got[v].dtype == np.float64 for v in got.data_vars)
    assert got["system"].values.tolist() == ["S2", "S1", "S3"]
    xr.testing.assert_identical(read(str(path), format=fmt, human=["human"]), want)


def test_read_format_override(wide, tmp_path):
    path = tmp_path / "scores.txt"
    wide.to_csv(path, sep="\t", index=False)
    xr.testing.assert_identical(read(path, format="tsv"), from_dataframe(wide))
    assert set(SUPPORTED_FORMATS) == {"csv", "tsv", "jsonl", "parquet", "netcdf"}


def test_read_passes_kwargs(wide, tmp_path):
    path = tmp_path / "long.csv"
    _long(wide).rename(columns={"system": "sys"}).to_csv(path, index=False)
    got = read(path, system="sys", metric="metric", value="score", human="human")
    xr.testing.assert_identical(got, from_dataframe(wide, human="human"))


def test_read_jsonl_keeps_string_labels(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text('{"system": "001", "input": "7", "m": 1}\n'
                    '{"system": "002", "input": "7", "m": null}\n')
    ds = read(path)
    assert ds["system"].values.tolist() == ["001", "002"]
    assert ds["input"].values.tolist() == ["7"]
    assert np.isnan(ds["m"].values[1, 0])


def test_read_netcdf_renames_and_validates(wide, tmp_path):
    path = tmp_path / "s.nc"
    from_dataframe(wide).rename(system="sys").to_netcdf(path, engine="scipy")
    xr.testing.assert_identical(read(path, system="sys"), from_dataframe(wide))
    with pytest.raises(ValueError, match="no 'system' dimension"):
        read(path)
    with pytest.raises(ValueError, match="metric= and value="):
        read(path, system="sys", metric="m", value="v")
    with pytest.raises(ValueError, match="dims entry 'lp'"):
        read(path, system="sys", dims=["lp"])


def test_read_netcdf_int_variables_become_float(tmp_path):
    ds = xr.Dataset({"m": (("system", "input"), np.array([[1, 2]]))},
                    coords={"system": ["A"], "input": ["x", "y"]})
    path = tmp_path / "i.nc"
    ds.to_netcdf(path, engine="scipy")
    got = read(path)
    assert got["m"].dtype == np.float64 and got["m"].values.tolist() == [[1.0, 2.0]]


def test_read_missing_file(tmp_path):
    path = tmp_path / "nope.csv"
    with pytest.raises(FileNotFoundError, match="nope.csv"):
        read(path)


def test_read_unknown_extension(tmp_path):
    path = tmp_path / "scores.xlsx"
    path.write_text("x")
    with pytest.raises(ValueError, match=r"\.xlsx.*supported.*\.csv"):
        read(path)
    with pytest.raises(ValueError, match="format='excel' is not supported.*csv"):
        read(path, format="excel")
    gz = tmp_path / "s.parquet.gz"
    gz.write_bytes(b"x")
    with pytest.raises(ValueError, match="gzip"):
        read(gz)


def test_read_empty_files(tmp_path):
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(ValueError, match="empty.*empty.csv"):
        read(empty)
    gz = tmp_path / "empty.csv.gz"
    gz.write_bytes(gzip.compress(b""))
    with pytest.raises(ValueError, match="empty.*empty.csv.gz"):
        read(gz)
    header = tmp_path / "header.csv"
    header.write_text("system,input,m\n")
    with pytest.raises(ValueError, match="no rows.*header.csv"):
        read(header)


def test_read_parquet_without_pyarrow(wide, tmp_path, monkeypatch):
    path = tmp_path / "s.parquet"
    path.write_bytes(b"PAR1")
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "pyarrow" else real(name, *a))
    with pytest.raises(ImportError, match="install pyarrow to read Parquet"):
        read(path)


def test_read_validation_errors_pass_through(wide, tmp_path):
    path = tmp_path / "dup.csv"
    pd.concat([wide, wide.iloc[[0]]]).to_csv(path, index=False)
    with pytest.raises(ValueError, match="duplicate"):
        read(path)
    with pytest.raises(ValueError, match="system='sys'"):
        read(tmp_path / "dup.csv", system="sys")
