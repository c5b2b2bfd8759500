"""Bad input to reading and the data model: each error names the argument, the file and the line."""

from __future__ import annotations

import gzip
import re

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import xcorrstat
from xcorrstat._io import from_dataframe, guess_label_columns, read

CSV = "system,input,bleu,human\nA,d1,0.1,1\nA,d2,0.4,2\nB,d1,0.3,3\nB,d2,0.2,4\n"


@pytest.fixture
def wide() -> pd.DataFrame:
    return pd.DataFrame({"system": ["A", "A", "B", "B"], "input": ["d1", "d2", "d1", "d2"],
                         "bleu": [0.1, 0.4, 0.3, 0.2], "human": [1.0, 2.0, 3.0, 4.0]})


def _file(tmp_path, name: str, text: str | bytes):
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def _raises(exc, *words, call):
    """`call()` raises `exc` whose message holds every word (literal text)."""
    with pytest.raises(exc) as info:
        call()
    message = str(info.value)
    for word in words:
        assert word in message, f"{word!r} not in {message!r}"
    return message


# --------------------------------------------------------------------------- files


def test_missing_file(tmp_path):
    _raises(FileNotFoundError, "no such file", "nope.csv", call=lambda: read(tmp_path / "nope.csv"))


def test_folder_instead_of_file(tmp_path):
    _raises(IsADirectoryError, "is a folder", str(tmp_path), call=lambda: read(tmp_path))


def test_path_of_wrong_type():
    _raises(TypeError, "path must be a str", "int", call=lambda: read(3))


def test_empty_file(tmp_path):
    path = _file(tmp_path, "empty.csv", "")
    _raises(ValueError, "file is empty", "empty.csv", call=lambda: read(path))


def test_header_only(tmp_path):
    path = _file(tmp_path, "header.csv", "system,input,bleu\n")
    _raises(ValueError, "no rows", "header.csv", call=lambda: read(path))


def test_unknown_extension(tmp_path):
    path = _file(tmp_path, "scores.xlsx", CSV)
    _raises(ValueError, "cannot tell the format", "scores.xlsx", "format=", call=lambda: read(path))


def test_unknown_format_argument(tmp_path):
    path = _file(tmp_path, "scores.csv", CSV)
    _raises(ValueError, "format='excel' is not supported", call=lambda: read(path, format="excel"))


def test_gzip_of_parquet_refused(tmp_path):
    path = _file(tmp_path, "scores.parquet.gz", b"\x1f\x8b")
    _raises(ValueError, "scores.parquet.gz", "gzip compression is supported only for", call=lambda: read(path))


def test_corrupt_gzip(tmp_path):
    path = _file(tmp_path, "bad.csv.gz", b"this is not gzip data at all")
    _raises(ValueError, "bad.csv.gz", "corrupt or truncated gzip", call=lambda: read(path))


def test_truncated_gzip(tmp_path):
    data = gzip.compress((CSV * 200).encode())
    path = _file(tmp_path, "cut.csv.gz", data[: len(data) // 2])
    _raises(ValueError, "cut.csv.gz", "corrupt or truncated gzip", call=lambda: read(path))


def test_utf16_with_bom_is_read(tmp_path):
    path = _file(tmp_path, "utf16.csv", CSV.encode("utf-16"))
    assert read(path)["bleu"].sel(system="B", input="d1").item() == 0.3  # oracle: the CSV text above


def test_utf8_bom_is_read(tmp_path):
    path = _file(tmp_path, "bom.csv", b"\xef\xbb\xbf" + CSV.encode())
    assert list(read(path).data_vars) == ["bleu", "human"]


def test_utf16_without_bom(tmp_path):
    path = _file(tmp_path, "nobom.csv", CSV.encode("utf-16-le"))
    _raises(ValueError, "nobom.csv", "UTF-16", "encoding=", call=lambda: read(path))
    assert read(path, encoding="utf-16-le")["human"].sel(system="A", input="d2").item() == 2.0


def test_latin1_read_as_utf8(tmp_path):
    path = _file(tmp_path, "latin.csv", "system,input,bleu,human\nCaf\xe9,d1,0.1,1\n".encode("latin-1"))
    _raises(ValueError, "latin.csv", "is not valid utf-8 text", "encoding=", call=lambda: read(path))
    assert list(read(path, encoding="latin-1")["system"].values) == ["Caf\xe9"]


def test_unknown_encoding(tmp_path):
    path = _file(tmp_path, "scores.csv", CSV)
    _raises(ValueError, "encoding='klingon' is not a known text encoding", "scores.csv",
            call=lambda: read(path, encoding="klingon"))


def test_malformed_jsonl_names_line(tmp_path):
    text = '{"system": "A", "input": "d1", "bleu": 0.1}\n{"system": "B", "input": "d1", bleu: 0.3}\n'
    path = _file(tmp_path, "bad.jsonl", text)
    _raises(ValueError, "bad.jsonl", "line 2", "not valid JSON", call=lambda: read(path))


def test_jsonl_line_not_an_object(tmp_path):
    text = '{"system": "A", "input": "d1", "bleu": 0.1}\n[1, 2, 3]\n'
    path = _file(tmp_path, "list.jsonl", text)
    _raises(ValueError, "list.jsonl", "line 2", "expected a JSON object", call=lambda: read(path))


def test_csv_named_netcdf(tmp_path):
    path = _file(tmp_path, "scores.nc", CSV)
    _raises(ValueError, "scores.nc", "is not a readable netCDF file", "format='csv'", call=lambda: read(path))
    assert read(path, format="csv")["bleu"].sizes == {"system": 2, "input": 2}


def test_csv_named_parquet(tmp_path):
    pytest.importorskip("pyarrow")
    path = _file(tmp_path, "scores.parquet", CSV)
    _raises(ValueError, "scores.parquet", "is not a readable Parquet file", "format='csv'", call=lambda: read(path))


def test_netcdf_without_system_dim(tmp_path):
    path = tmp_path / "odd.nc"
    xr.Dataset({"bleu": (("model", "item"), np.zeros((2, 2)))}).to_netcdf(path)
    _raises(ValueError, "odd.nc", "no 'system' dimension", "model", call=lambda: read(path))


def test_netcdf_only_text_variables(tmp_path):
    path = tmp_path / "text.nc"
    xr.Dataset({"note": (("system", "input"), np.array([["a", "b"], ["c", "d"]], dtype=object))}).to_netcdf(path)
    _raises(ValueError, "text.nc", "no numeric data variables", "'note'", call=lambda: read(path))


def test_duplicate_column_names_in_csv(tmp_path):
    path = _file(tmp_path, "dup.csv", "system,input,bleu,bleu,human\nA,d1,1,2,3\nB,d1,2,3,4\n")
    _raises(ValueError, "dup.csv", "line 1", "column name 'bleu' appears twice", "columns 3 and 4",
            call=lambda: read(path))


def test_duplicate_column_names_in_tsv_gz(tmp_path):
    path = _file(tmp_path, "dup.tsv.gz", gzip.compress(b"system\tinput\tx\tx\nA\td1\t1\t2\n"))
    _raises(ValueError, "dup.tsv.gz", "column name 'x' appears twice", call=lambda: read(path))


def test_duplicate_column_names_in_dataframe(wide):
    df = pd.concat([wide, wide[["bleu"]]], axis=1)
    _raises(ValueError, "column name 'bleu' appears 2 times", "columns 3, 5", call=lambda: from_dataframe(df))


def test_non_numeric_entry_names_file_and_line(tmp_path):
    path = _file(tmp_path, "na.csv", "system,input,bleu\nA,d1,0.1\nA,d2,0.2\nB,d1,oops\nB,d2,0.4\n")
    _raises(TypeError, "na.csv", "column 'bleu'", "'oops' in data row 3 (line 4)", call=lambda: read(path))


def test_non_numeric_entry_in_jsonl_names_line(tmp_path):
    rows = ['{"system": "A", "input": "d1", "bleu": 0.1}', '{"system": "A", "input": "d2", "bleu": 0.2}',
            '{"system": "B", "input": "d1", "bleu": "oops"}']
    path = _file(tmp_path, "bad.jsonl", "\n".join(rows) + "\n")
    _raises(TypeError, "bad.jsonl", "'oops' in data row 3 (line 3)", call=lambda: read(path))


def test_long_cell_is_cut(tmp_path):
    huge = "x" * 1_000_000
    path = _file(tmp_path, "huge.csv", f"system,input,bleu\nA,d1,1\nA,d2,2\nB,d1,{huge}\n")
    message = _raises(TypeError, "huge.csv", "column 'bleu'", "...", call=lambda: read(path))
    assert len(message) < 400


def test_long_column_name_is_cut(wide):
    df = wide.rename(columns={"bleu": "b" * 100_000})
    message = _raises(ValueError, "metrics=", "is not a score", "...",
                      call=lambda: xcorrstat.correlate(from_dataframe(df), target="human", metrics=["z" * 10**5]))
    assert len(message) < 1000


def test_duplicate_rows_name_file_and_lines(tmp_path):
    path = _file(tmp_path, "rep.csv", "system,input,bleu\nA,d1,1\nB,d1,2\nA,d1,3\n")
    _raises(ValueError, "rep.csv", "data row 3 (line 4) repeats data row 1 (line 2)", call=lambda: read(path))


def test_missing_label_names_line(tmp_path):
    path = _file(tmp_path, "nolabel.csv", "system,input,bleu\nA,d1,1\n,d2,2\n")
    _raises(ValueError, "nolabel.csv", "system='system'", "missing label", "data row 2 (line 3)",
            call=lambda: read(path))


def test_missing_named_column(tmp_path):
    path = _file(tmp_path, "scores.csv", CSV)
    _raises(ValueError, "scores.csv", "system='model'", "no such column", call=lambda: read(path, system="model"))


def test_no_system_column_guessed(tmp_path):
    path = _file(tmp_path, "nosys.csv", "who,input,bleu\nA,d1,1\n")
    _raises(ValueError, "nosys.csv", "no system label column found", "--system-col", call=lambda: read(path))


def test_repeated_systems_without_input_column(tmp_path):
    path = _file(tmp_path, "seg.csv", "system,seg,bleu\nA,1,1\nA,2,2\nB,1,3\n")
    _raises(ValueError, "seg.csv", "no input label column found", "repeats labels", "input=...",
            call=lambda: read(path))


def test_infinite_score_names_line(tmp_path):
    path = _file(tmp_path, "inf.csv", "system,input,bleu\nA,d1,1\nB,d1,inf\n")
    _raises(ValueError, "inf.csv", "column 'bleu'", "infinite", "data row 2 (line 3)", call=lambda: read(path))


def test_human_names_a_text_column(wide):
    df = wide.assign(domain=["news", "chat", "news", "chat"])
    _raises(ValueError, "human='domain'", "holds text", "coordinate along ('input',)",
            call=lambda: from_dataframe(df, human="domain"))


def test_text_column_with_reserved_name_is_left_out(wide):
    with pytest.warns(UserWarning, match="column 'metric' holds text and was left out: its name is reserved"):
        ds = from_dataframe(wide.assign(metric=["a", "b", "c", "d"]))
    assert "metric" not in ds.variables and list(ds.data_vars) == ["bleu", "human"]


def test_long_table_text_column_varying_within_a_cell_is_left_out(wide):
    long = wide.melt(id_vars=["system", "input"], var_name="name", value_name="score")
    long["who"] = [f"annotator{k}" for k in range(len(long))]
    with pytest.warns(UserWarning, match=r"column 'who' holds text and was left out: it is not a function of "
                                         r"the labels \(system, input\)"):
        ds = from_dataframe(long, metric="name", value="score")
    assert "who" not in ds.variables


def test_half_numeric_column_is_text_with_a_warning(wide):
    df = wide.assign(grade=["1", "2", "good", "bad"])
    with pytest.warns(UserWarning, match=r"column 'grade' holds text \(2 of 4 entries are numbers\): kept as a "
                                         r"coordinate along \('system', 'input'\)"):
        ds = from_dataframe(df)
    assert list(ds.data_vars) == ["bleu", "human"]


def test_encoding_for_a_binary_format(tmp_path):
    path = tmp_path / "scores.nc"
    xr.Dataset({"bleu": (("system", "input"), np.zeros((2, 2)))}).to_netcdf(path)
    _raises(ValueError, "encoding='latin-1' applies to CSV, TSV and JSON Lines", "scores.nc",
            call=lambda: read(path, encoding="latin-1"))


def test_text_column_on_fewest_dims(wide):
    ds = from_dataframe(wide.assign(team=["x", "x", "y", "y"], item=["p", "q", "r", "s"]))
    assert ds["team"].dims == ("system",) and list(ds["team"].values) == ["x", "y"]
    assert ds["item"].dims == ("system", "input") and ds["item"].sel(system="B", input="d1").item() == "r"


# --------------------------------------------------------------------------- from_dataframe / accessor


def test_not_a_dataframe():
    _raises(TypeError, "df must be a pandas DataFrame", "dict", call=lambda: from_dataframe({"a": [1]}))


def test_no_rows(wide):
    _raises(ValueError, "df has no rows", call=lambda: from_dataframe(wide.iloc[:0]))


def test_only_text_columns(wide):
    df = wide[["system", "input"]].assign(note=["a", "b", "c", "d"])
    _raises(ValueError, "no score columns", "text columns ['note']", call=lambda: from_dataframe(df))


def test_accessor_missing_system_column(wide):
    _raises(ValueError, "no system label column found", "'who'", "system=...",
            call=lambda: wide.rename(columns={"system": "who"}).corrstat.correlate(target="human"))


def test_accessor_text_metric(wide):
    df = wide.assign(domain=["news", "chat", "news", "chat"])
    _raises(ValueError, "metrics='domain'", "label column", "coordinate along ('input',)",
            call=lambda: df.corrstat.correlate(target="human", metrics="domain"))


def test_guess_label_columns_none_found():
    _raises(ValueError, "no input label column found", "--input-col",
            call=lambda: guess_label_columns(["system", "bleu"]))


# --------------------------------------------------------------------------- split_scores based calls


def _ds(wide):
    return from_dataframe(wide.assign(chrf=[0.5, 0.1, 0.2, 0.9]))


def test_target_among_metrics(wide):
    _raises(ValueError, "metrics=['bleu', 'human']", "includes the target 'human'",
            call=lambda: xcorrstat.correlate(_ds(wide), target="human", metrics=["bleu", "human"]))


def test_target_is_text(wide):
    ds = from_dataframe(wide.assign(domain=["news", "chat", "news", "chat"]))
    _raises(ValueError, "target='domain'", "label column", "not a score",
            call=lambda: xcorrstat.correlate(ds, target="domain"))


def test_unknown_target(wide):
    _raises(ValueError, "target='nope'", "not a score in the data", "available",
            call=lambda: xcorrstat.correlate(_ds(wide), target="nope"))


def test_empty_metric_list(wide):
    _raises(ValueError, "metrics must name at least one variable",
            call=lambda: xcorrstat.correlate(_ds(wide), target="human", metrics=[]))


def test_duplicate_metric_names(wide):
    _raises(ValueError, "metrics has duplicate names", "'bleu'",
            call=lambda: xcorrstat.correlate(_ds(wide), target="human", metrics=["bleu", "bleu"]))


@pytest.mark.parametrize("dim", ["system", "input"])
def test_zero_labels_on_a_dim(wide, dim):
    ds = _ds(wide).isel({dim: slice(0, 0)})
    _raises(ValueError, f"the {dim!r} dim is empty", call=lambda: xcorrstat.correlate(ds, target="human"))


def test_misnamed_input_dim(wide):
    ds = _ds(wide).rename({"input": "segment"})
    _raises(ValueError, "missing the 'input' dim", "segment", "system-level",
            call=lambda: xcorrstat.correlate(ds, target="human"))


def test_dataarray_without_metric_dim(wide):
    _raises(ValueError, "needs a 'metric' dim", call=lambda: xcorrstat.correlate(_ds(wide)["bleu"], target="human"))


def test_infinite_score_in_dataset(wide):
    ds = _ds(wide)
    ds["bleu"][0, 0] = np.inf
    _raises(ValueError, "metrics='bleu'", "infinite", call=lambda: xcorrstat.correlate(ds, target="human"))


def test_duplicate_system_labels_in_dataset(wide):
    ds = _ds(wide).assign_coords(system=["A", "A"])
    _raises(ValueError, "duplicate 'system' labels", "'A'", call=lambda: xcorrstat.correlate(ds, target="human"))


def test_system_level_data_refuses_input_level(wide):
    ds = from_dataframe(wide.groupby("system", as_index=False)[["bleu", "human"]].mean(), input=None)
    for level in ("input", "global"):
        message = _raises(ValueError, f"level={level!r}", "system-level scores only", "use level='system'",
                          call=lambda level=level: xcorrstat.correlate(ds, target="human", level=level))
        assert re.search(r"no 'input' dim", message)


# --------------------------------------------------------------------------- real-file shapes


def test_wmt_style_file_with_text_columns(tmp_path):
    rng = np.random.default_rng(5)
    n_sys, n_seg = 4, 12
    df = pd.DataFrame({"system": np.repeat([f"sys{k}" for k in range(n_sys)], n_seg),
                       "domain": np.tile(np.repeat(["news", "chat", "speech"], 4), n_sys),
                       "doc": np.tile(np.repeat([f"doc{k}" for k in range(6)], 2), n_sys),
                       "seg_id": np.tile(np.arange(n_seg), n_sys),
                       "human": rng.normal(size=n_sys * n_seg), "bleu": rng.normal(size=n_sys * n_seg)})
    path = tmp_path / "wmt.tsv"
    df.to_csv(path, sep="\t", index=False)
    ds = read(path)  # seg_id, not doc, is the input; domain and doc lie along it
    assert ds["bleu"].sizes == {"system": n_sys, "input": n_seg}
    assert ds["domain"].dims == ("input",) and ds["doc"].dims == ("input",)
    assert list(ds["domain"].values[:5]) == ["news"] * 4 + ["chat"]
    r = xcorrstat.correlate(ds, target="human", metrics=["bleu"], level="global", method="pearson")
    from scipy import stats

    assert r.item() == pytest.approx(stats.pearsonr(df["bleu"], df["human"])[0], rel=1e-12)


def test_netcdf_text_variable_becomes_coordinate(tmp_path):
    path = tmp_path / "mixed.nc"
    xr.Dataset({"bleu": (("system", "input"), np.arange(4.0).reshape(2, 2)),
                "domain": (("input",), np.array(["news", "chat"], dtype=object))},
               coords={"system": ["A", "B"], "input": ["d1", "d2"]}).to_netcdf(path)
    ds = read(path)
    assert list(ds.data_vars) == ["bleu"] and list(ds["domain"].values) == ["news", "chat"]
