"""Readers never change the data quietly: each case is a one-line error naming the file and the column,
line or labels, or a note (``attrs["notes"]``, a UserWarning, a note line on stderr) naming them.

The cases of issue 37, item 3, on the command line and in Python, and the labels' rule: labels are
compared as given (whitespace, invisible characters, Unicode normalisation and type differences are
refused, never merged or split silently).
"""

import json
import warnings

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from xcorrstat import correlate, from_dataframe, read
from xcorrstat._cli import main
from xcorrstat._notes import notes_of


def _frame():
    """6 systems x 10 inputs with a human score and three metrics."""
    rng = np.random.default_rng(0)
    rows = []
    for s in range(6):
        for i in range(10):
            h = s + rng.normal()
            rows.append({"system": f"s{s}", "input": f"i{i}", "human": h, "m1": h + rng.normal(),
                         "m2": h + 2 * rng.normal(), "ter": -h + rng.normal()})
    return pd.DataFrame(rows)


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def error_line(err):
    lines = [ln for ln in err.splitlines() if ln.startswith("xcorrstat: error:")]
    assert len(lines) == 1, err
    return lines[0]


def quiet_read(path, **kwargs):
    """read(path), its notes, and the messages of the UserWarnings it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ds = read(path, **kwargs)
    return ds, notes_of(ds), [str(w.message) for w in caught if w.category is UserWarning]


# -- a column of decimal commas --------------------------------------------------------------------------

def test_decimal_comma_column_is_an_error_naming_column_and_line(tmp_path, capsys):
    df = _frame()
    df["mc"] = df["m1"].map(lambda v: f"{v:.3f}".replace(".", ","))
    path = tmp_path / "comma.csv"
    df.to_csv(path, index=False)
    code, out, err = run(capsys, "correlate", path, "--target", "human", "--level", "system")
    line = error_line(err)
    assert code == 2 and out == ""
    assert "comma.csv" in line and "column 'mc'" in line and "decimal comma" in line and "line 2" in line
    with pytest.raises(ValueError, match=r"comma\.csv.*column 'mc' holds numbers written with a decimal comma"):
        read(path)
    with pytest.raises(ValueError, match=r"column 'mc' .*decimal comma .*data row 1"):
        from_dataframe(df)


def test_decimal_comma_in_a_long_tables_value_column_is_named(tmp_path):
    long = _frame().melt(id_vars=["system", "input"], var_name="name", value_name="score")
    long["score"] = long["score"].map(lambda v: f"{v:.3f}".replace(".", ","))
    with pytest.raises(TypeError, match="decimal comma"):
        from_dataframe(long, metric="name", value="score")


def test_text_columns_with_commas_stay_text():
    df = _frame().assign(domain=lambda d: np.where(d["input"] < "i5", "news, politics", "chat"))
    ds = from_dataframe(df)
    assert "domain" in ds.coords and "domain" not in ds.data_vars


# -- rows with too few fields ----------------------------------------------------------------------------

def test_truncated_last_line_is_an_error_naming_the_line(tmp_path, capsys):
    path = tmp_path / "trunc.csv"
    _frame().to_csv(path, index=False)
    lines = path.read_text().rstrip("\n").split("\n")
    lines[-1] = ",".join(lines[-1].split(",")[:3])
    path.write_text("\n".join(lines) + "\n")
    code, _, err = run(capsys, "correlate", path, "--target", "human", "--level", "system")
    line = error_line(err)
    assert code == 2 and "trunc.csv" in line and "line 61" in line and "3 fields" in line and "6" in line
    with pytest.raises(ValueError, match=r"trunc\.csv', line 61: 3 fields, but the header names 6"):
        read(path)


def test_short_line_in_a_gzip_tsv_is_named(tmp_path):
    import gzip
    path = tmp_path / "s.tsv.gz"
    with gzip.open(path, "wt") as fh:
        fh.write("system\tinput\thuman\tm1\ns1\ti1\t1\t2\ns1\ti2\t2\ns2\ti1\t3\t1\n")
    with pytest.raises(ValueError, match=r"line 3: 3 fields, but the header names 4"):
        read(path)


def test_empty_fields_and_blank_lines_are_not_short_lines(tmp_path):
    path = tmp_path / "ok.csv"
    path.write_text('system,input,human,m1\ns1,i1,1,\n\ns1,i2,2,3\n   \ns2,i1,3,\ns2,i2,"4",5\n')
    ds, notes, said = quiet_read(path)
    assert ds["m1"].isnull().sum() == 2 and notes == () and said == []


def test_quoted_newlines_do_not_hide_a_short_line(tmp_path):
    path = tmp_path / "q.csv"
    path.write_text('system,input,note,m1\ns1,i1,"two\nlines",1\ns1,i2,x\ns2,i1,y,3\n')
    with pytest.raises(ValueError, match=r"line 4: 3 fields, but the header names 4"):
        read(path)


# -- labels compared as given ----------------------------------------------------------------------------

@pytest.mark.parametrize(("spelling", "kind"), [
    ("s1 ", "whitespace"), (" s1", "whitespace"), ("s1\u00a0", "whitespace"), ("s\u200b1", "invisible"),
    ("\ufeffs1", "invisible"), ("s\u20601", "invisible")])
def test_labels_that_differ_only_in_whitespace_or_invisible_characters_are_refused(spelling, kind):
    df = _frame()
    df.loc[(df["system"] == "s1") & df["input"].isin(["i0", "i1", "i2"]), "system"] = spelling
    with pytest.raises(ValueError, match=rf"system labels .* differ only in {kind}.*data row \d+ and data row \d+"):
        from_dataframe(df)


def test_labels_that_differ_only_in_unicode_normalisation_are_refused():
    df = pd.DataFrame({"system": ["caf\u00e9", "cafe\u0301", "x", "x"], "input": ["a", "b", "a", "b"],
                       "human": [1.0, 2, 3, 4], "m": [1.0, 2, 3, 5]})
    with pytest.raises(ValueError, match=r"'caf\\xe9' and 'cafe\\u0301' differ only in Unicode normalisation"):
        from_dataframe(df)


def test_whitespace_labels_in_a_file_are_refused_on_the_command_line(tmp_path, capsys):
    df = _frame()
    df.loc[(df["system"] == "s1") & df["input"].isin(["i0", "i1", "i2"]), "system"] = "s1 "
    path = tmp_path / "ws.csv"
    df.to_csv(path, index=False)
    code, out, err = run(capsys, "correlate", path, "--target", "human", "--level", "system")
    line = error_line(err)
    assert code == 2 and out == ""
    assert "ws.csv" in line and "'s1'" in line and "'s1 '" in line and "whitespace" in line and "line 12" in line


def test_input_labels_that_differ_in_whitespace_are_refused_with_their_column():
    df = _frame().rename(columns={"input": "doc"})
    df.loc[0, "doc"] = "i0\t"
    with pytest.raises(ValueError, match=r"input labels \(column 'doc'\) 'i0\\t' and 'i0' differ only in whitespace"):
        from_dataframe(df, input="doc")


def test_a_label_with_whitespace_and_no_twin_is_kept_with_a_note():
    df = _frame()
    df.loc[df["system"] == "s1", "system"] = "s1 "
    with pytest.warns(UserWarning, match="system labels kept as given"):
        ds = from_dataframe(df)
    assert "s1 " in list(ds["system"].values)
    assert notes_of(ds) == ("system labels kept as given, with surrounding or repeated whitespace or invisible "
                            "characters: 1 of 6, ['s1 ']",)


def test_jsonl_labels_3_and_string_3_are_refused(tmp_path, capsys):
    path = tmp_path / "types.jsonl"
    with open(path, "w") as fh:
        for row in _frame().to_dict("records"):
            row["input"] = int(row["input"][1:])
            if row["system"] == "s2":
                row["input"] = str(row["input"])
            fh.write(json.dumps(row) + "\n")
    code, _, err = run(capsys, "correlate", path, "--target", "human", "--level", "system")
    line = error_line(err)
    assert code == 2 and "types.jsonl" in line and "input labels 0 and '0' differ only in type (int and str)" in line
    assert "line 21" in line
    with pytest.raises(ValueError, match=r"input labels 0 and '0' differ only in type"):
        read(path)


def test_labels_of_mixed_types_without_twins_are_kept_with_a_note(tmp_path):
    path = tmp_path / "mixed.jsonl"
    rows = [{"system": s, "input": i, "human": float(k), "m": float(k % 3)}
            for k, (s, i) in enumerate((s, i) for s in ("a", "b") for i in (1, 2, "x"))]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    ds, notes, said = quiet_read(path)
    assert list(ds["input"].values) == [1, 2, "x"]
    assert notes == (f"{str(path)!r}: input labels mix types (int, str), kept as given",) and said == list(notes)


def test_score_names_of_a_long_table_are_compared_as_given():
    long = _frame().melt(id_vars=["system", "input"], var_name="name", value_name="score")
    long.loc[long["name"] == "m2", "name"] = "m1 "
    long = long[~((long["name"] == "m1 ") & (long["input"] == "i0"))]
    long.loc[(long["name"] == "m1 ") & (long["input"] == "i1"), "name"] = "m1"
    long = long.drop_duplicates(["system", "input", "name"])
    with pytest.raises(ValueError, match=r"score names \(column 'name'\) 'm1' and 'm1 ' differ only in whitespace"):
        from_dataframe(long, metric="name", value="score")


def test_netcdf_labels_are_compared_as_given(tmp_path):
    ds = from_dataframe(_frame())
    ds = ds.assign_coords(system=["s0", "s1", "s1 ", "s3", "s4", "s5"])
    path = tmp_path / "ws.nc"
    ds.to_netcdf(path)
    with pytest.raises(ValueError, match=r"ws\.nc'.*system labels 's1' and 's1 ' differ only in whitespace"):
        read(path)


# -- columns without a name ------------------------------------------------------------------------------

def test_index_column_of_to_csv_is_left_out_with_a_note(tmp_path, capsys):
    df = _frame()
    path = tmp_path / "index.csv"
    df.to_csv(path)  # index=True: a first column without a name
    ds, notes, said = quiet_read(path)
    assert "Unnamed: 0" not in ds.data_vars and sorted(ds.data_vars) == ["human", "m1", "m2", "ter"]
    assert len(notes) == 1 and "index.csv" in notes[0] and "column 1 ('Unnamed: 0': no name in the header)" in notes[0]
    assert "row index" in notes[0] and "left out" in notes[0] and said == list(notes)
    code, out, err = run(capsys, "correlate", path, "--target", "human", "--level", "system")
    assert code == 0 and _not_a_metric("Unnamed", out) and "3 metrics" in out
    assert "xcorrstat: note:" in err and "row index" in err and "column 1" in err
    with pytest.warns(UserWarning, match="row index"):
        assert "Unnamed: 0" not in from_dataframe(pd.read_csv(path)).data_vars


def test_index_column_of_a_filtered_frame_is_an_index_too(tmp_path):
    path = tmp_path / "index.csv"
    _frame().sample(frac=1.0, random_state=0).to_csv(path)
    ds, notes, _ = quiet_read(path)
    assert "Unnamed: 0" not in ds.data_vars and "row index" in notes[0]


def test_trailing_comma_column_is_left_out_with_a_note(tmp_path, capsys):
    path = tmp_path / "trail.csv"
    _frame().to_csv(path, index=False)
    path.write_text("".join(line + ",\n" for line in path.read_text().splitlines()))
    ds, notes, _ = quiet_read(path)
    assert sorted(ds.data_vars) == ["human", "m1", "m2", "ter"]
    assert len(notes) == 1 and "column 7 ('Unnamed: 6': no name in the header) has no values" in notes[0]
    code, out, err = run(capsys, "correlate", path, "--target", "human", "--level", "system")
    assert code == 0 and _not_a_metric("Unnamed", out) and "has no values" in err


def test_index_and_trailing_comma_together(tmp_path):
    path = tmp_path / "both.csv"
    _frame().to_csv(path)
    path.write_text("".join(line + ",\n" for line in path.read_text().splitlines()))
    ds, notes, _ = quiet_read(path)
    assert sorted(ds.data_vars) == ["human", "m1", "m2", "ter"] and len(notes) == 2


def test_trailing_comma_in_the_header_only(tmp_path):
    path = tmp_path / "head.csv"
    _frame().to_csv(path, index=False)
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0] + ","] + lines[1:]) + "\n")
    ds, notes, _ = quiet_read(path)
    assert sorted(ds.data_vars) == ["human", "m1", "m2", "ter"] and "has no values" in notes[0]


def test_unnamed_column_with_values_is_an_error(tmp_path):
    df = _frame()
    path = tmp_path / "unnamed.csv"
    df.rename(columns={"m2": ""}).to_csv(path, index=False)
    with pytest.raises(ValueError, match=r"unnamed\.csv.*column 5 \('Unnamed: 4': no name in the header\) holds "
                                         "values: give it a name"):
        read(path)


def test_trailing_comma_on_data_lines_only(tmp_path, capsys):
    """pandas would take the first fields as an index and shift every name by one."""
    path = tmp_path / "data.csv"
    _frame().to_csv(path, index=False)
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0]] + [ln + "," for ln in lines[1:]]) + "\n")
    ds, notes, _ = quiet_read(path)
    expected = from_dataframe(pd.read_csv(path, index_col=False))
    xr.testing.assert_identical(ds.drop_attrs(), expected.drop_attrs())
    assert list(ds["system"].values) == [f"s{s}" for s in range(6)]
    assert len(notes) == 1 and "7 fields, the header 6" in notes[0] and "left out" in notes[0]
    path.write_text("\n".join([lines[0]] + [ln + ",9" for ln in lines[1:]]) + "\n")
    code, _, err = run(capsys, "correlate", path, "--target", "human", "--level", "system")
    assert code == 2 and "line 2: 7 fields, but the header (line 1) names 6" in error_line(err)


# -- netCDF variables left out ---------------------------------------------------------------------------

def test_netcdf_text_and_system_only_variables_are_noted(tmp_path, capsys):
    ds = from_dataframe(_frame())
    ds["sysonly"] = ds["m1"].mean("input")
    ds["label"] = (("system", "input"), np.full(ds["m1"].shape, "a", dtype=object))
    path = tmp_path / "x.nc"
    ds.to_netcdf(path)
    back, notes, said = quiet_read(path)
    assert said == list(notes) and len(notes) == 2
    assert "x.nc" in notes[0] and "variable 'label' holds text" in notes[0] and "coordinate" in notes[0]
    assert "variable 'sysonly' lies along ('system',), without 'input'" in notes[1] and "leave it out" in notes[1]
    assert list(correlate(back, target="human", level="system")["metric"].values) == ["m1", "m2", "ter"]
    code, _, err = run(capsys, "correlate", path, "--target", "human", "--level", "system")
    assert code == 0 and "variable 'sysonly'" in err and "variable 'label'" in err


def test_plain_files_have_no_notes(tmp_path):
    path = tmp_path / "plain.csv"
    _frame().to_csv(path, index=False)
    assert quiet_read(path)[1:] == ((), [])
    ds = from_dataframe(_frame())
    ds.to_netcdf(tmp_path / "plain.nc")
    assert quiet_read(tmp_path / "plain.nc")[1:] == ((), [])


# -- --lower-is-better and names with commas -------------------------------------------------------------

@pytest.fixture()
def comma_names(tmp_path):
    df = _frame()
    df["TER,v2"], df["TER"], df["v2"] = df["ter"], df["ter"], df["m1"]
    path = tmp_path / "lib.csv"
    df.to_csv(path, index=False)
    return path


def _flipped(capsys, path, *names):
    code, out, err = run(capsys, "correlate", path, "--target", "human", "--level", "system", "--method",
                         "pearson", "--table-format", "csv", "--lower-is-better", *names)
    assert code == 0, err
    table = pd.read_csv(pd.io.common.StringIO(out), index_col="metric").iloc[:, 0]
    return table, err


def test_lower_is_better_takes_a_name_with_a_comma_as_that_name(comma_names, capsys):
    table, err = _flipped(capsys, comma_names, "TER,v2")
    assert table["TER,v2"] == pytest.approx(-table["ter"]) and table["TER"] == pytest.approx(table["ter"])
    assert table["v2"] == pytest.approx(table["m1"])
    assert "xcorrstat: note: --lower-is-better 'TER,v2' read as the score of that name, not as the scores " \
           "['TER', 'v2']" in err and "--lower-is-better TER v2" in err


def test_lower_is_better_separate_words_and_a_comma_list(comma_names, tmp_path, capsys):
    table, err = _flipped(capsys, comma_names, "TER", "v2")
    assert table["TER"] == pytest.approx(-table["ter"]) and table["v2"] == pytest.approx(-table["m1"])
    assert table["TER,v2"] == pytest.approx(table["ter"]) and "note" not in err
    df = pd.read_csv(comma_names).drop(columns="TER,v2")
    df.to_csv(tmp_path / "two.csv", index=False)
    table, err = _flipped(capsys, tmp_path / "two.csv", "TER,v2")
    assert table["TER"] == pytest.approx(-table["ter"]) and table["v2"] == pytest.approx(-table["m1"])
    assert "note" not in err


@pytest.mark.parametrize("block", [2, 7, 64, 1 << 24])
def test_short_lines_by_blocks_agree_with_the_csv_module(tmp_path, monkeypatch, block):
    """The NumPy count of fields, for any block size, finds the line the csv module finds."""
    from xcorrstat._io import fields

    monkeypatch.setattr(fields, "_BLOCK", block)
    rng = np.random.default_rng(block)
    for trial in range(25):
        lines = ["a,b,c,d"]
        for _ in range(int(rng.integers(1, 12))):
            kind = rng.random()
            if kind < 0.1:
                lines.append("" if rng.random() < 0.5 else "  ")
            else:
                width = 4 if kind < 0.8 else int(rng.integers(1, 4))
                lines.append(",".join(str(int(v)) if rng.random() < 0.8 else "" for v in rng.integers(0, 99, width)))
        end = "\r\n" if trial % 3 == 0 else "\n"
        text = end.join(lines) + ("" if trial % 4 == 0 else end)
        path = tmp_path / f"t{trial}.csv"
        path.write_bytes(text.encode())
        expected = fields._by_csv(str(path), False, "utf-8", ",", 4)
        assert fields._by_blocks(str(path), False, ord(","), 4) == expected, text
        assert fields.short_line(str(path), False, "utf-8", ",", 4) == expected


def _not_a_metric(name, out):
    """``name`` is in no line of the printed table: only in the notes of its heading (the note travels)."""
    return all(name not in line for line in out.splitlines() if not line.startswith("note:"))

