"""The readers' limits: what they refuse before opening a file, what they stop early, and that every
refusal is one line naming the file (and the line and column where there is one).

Findings of one report, a test each: FIFOs, devices and sparse giants as table files and as
mt-metrics-eval score files; links out of a test set folder; a gzip bomb; a header field over the
csv module's field limit; a stray quote; nested and Decimal Parquet columns; a very wide table;
an undecodable byte; a MemoryError while reading.
"""

from __future__ import annotations

import decimal
import gzip
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pandas as pd
import pytest
from mtme_tree import write_mtme_tree, write_wmt_tree
from peak_memory import PRELUDE

import xcorrstat
from xcorrstat._cli import main
from xcorrstat._io.limits import MAX_COLUMNS, ReadLimitError, ReadMemoryError
from xcorrstat._io.mtme import read_mtme

GOOD = "system,input,human,m0\n" + "".join(f"S{s},d{i},{(s * 7 + i * 3) % 5},{(s + i) % 4}\n"
                                          for s in range(3) for i in range(4))
MiB = 2**20


def error_line(capsys, *argv, code: int = 2) -> str:
    """Run the command; it must fail with exit code ``code`` and one line on stderr, returned."""
    assert main([str(a) for a in argv]) == code
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("xcorrstat: error: "), err
    return lines[0]


@pytest.fixture()
def tree(tmp_path):
    """A small mt-metrics-eval test set ``tmp_path/root/wmtx`` (one language pair, segment scores)."""
    return write_mtme_tree(tmp_path / "root", "wmtx", ["en-de"], 3, 8, ["BLEU"], ["refA"], ["mqm"],
                           np.random.default_rng(0), levels=("seg",), human_systems=False)


def _replace(path: str, make) -> None:
    os.remove(path)
    make(path)


# -- FIFOs, devices, sparse files: refused by their stat, before they are opened --------------------------

def test_fifo_as_table_file_is_refused_before_opening(tmp_path, capsys):
    path = tmp_path / "scores.csv"
    os.mkfifo(path)  # opening it for reading would block: the test would hang
    with pytest.raises(ReadLimitError, match=r"scores\.csv' is a FIFO \(named pipe\), not a regular file"):
        xcorrstat.read(path)
    assert "scores.csv' is a FIFO" in error_line(capsys, "correlate", path, "--target", "human")


def test_fifo_as_mtme_score_file_is_refused(tree):
    path = os.path.join(tree.folder, tree.files[("en-de", "BLEU-refA", "seg")])
    _replace(path, os.mkfifo)
    with pytest.raises(ReadLimitError, match=r"BLEU-refA\.seg\.score' is a FIFO"):
        read_mtme(os.path.dirname(tree.folder), "wmtx", "en-de")
    docs = os.path.join(tree.folder, "documents", "en-de.docs")
    _replace(path, lambda p: os.symlink(os.path.join(tree.folder, tree.files[("en-de", "mqm", "seg")]), p))
    _replace(docs, os.mkfifo)  # every file the reader opens, not only the score files
    with pytest.raises(ReadLimitError, match=r"en-de\.docs' is a FIFO"):
        read_mtme(os.path.dirname(tree.folder), "wmtx", "en-de")


def test_wmt_command_with_a_fifo_score_file_fails_in_one_line(tmp_path):
    wmt = write_wmt_tree(tmp_path, "wmt23", np.random.default_rng(3), k_systems=3, n_segments=12, n_docs=2,
                         lps=["en-de"])
    path = os.path.join(wmt.folder, "metric-scores", "en-de", "BLEU-refA.seg.score")
    _replace(path, os.mkfifo)
    run = subprocess.run([sys.executable, "-m", "xcorrstat", "wmt", str(tmp_path), "--testset", "wmt23",
                          "--lps", "en-de", "--n-resamples", "0", "--quiet"], capture_output=True, text=True,
                         timeout=120)  # a hang fails here instead of blocking the suite
    assert run.returncode == 2
    assert run.stderr.count("\n") == 1 and "BLEU-refA.seg.score' is a FIFO" in run.stderr, run.stderr


def test_link_to_dev_zero_is_refused_as_a_device(tmp_path, tree):
    path = tmp_path / "scores.csv"
    os.symlink("/dev/zero", path)
    with pytest.raises(ReadLimitError, match=r"scores\.csv' is a character device, not a regular file"):
        xcorrstat.read(path)
    score = os.path.join(tree.folder, tree.files[("en-de", "BLEU-refA", "seg")])
    _replace(score, lambda p: os.symlink("/dev/zero", p))
    with pytest.raises(ReadLimitError, match="is a character device"):  # allowed links still must be files
        read_mtme(os.path.dirname(tree.folder), "wmtx", "en-de", follow_links=True)


def _sparse(path, size: int) -> None:
    with open(path, "wb") as fh:
        fh.truncate(size)
    if os.stat(path).st_blocks * 512 > 64 * MiB:
        os.remove(path)
        pytest.skip("this filesystem does not keep sparse files")


def test_sparse_6gb_file_is_refused_by_its_size(tmp_path, tree, capsys):
    path = tmp_path / "scores.csv"
    _sparse(path, 6 * 2**30)
    start = time.perf_counter()
    with pytest.raises(ReadLimitError, match=r"scores\.csv': the file holds 6\.0 GiB, over the reading limit of "
                       r"1\.0 GiB \(the memory_budget option\)"):
        xcorrstat.read(path)
    assert time.perf_counter() - start < 1  # refused up front, not read
    assert "holds 6.0 GiB" in error_line(capsys, "correlate", path, "--target", "human")
    score = os.path.join(tree.folder, tree.files[("en-de", "BLEU-refA", "seg")])
    _replace(score, lambda p: _sparse(p, 6 * 2**30))
    with pytest.raises(ReadLimitError, match=r"BLEU-refA\.seg\.score': the file holds 6\.0 GiB"):
        read_mtme(os.path.dirname(tree.folder), "wmtx", "en-de")


def test_the_reading_limit_is_the_memory_budget(tmp_path):
    path = tmp_path / "scores.csv"
    path.write_text(GOOD)
    size = os.path.getsize(path)
    with xcorrstat.set_options(memory_budget=size - 1), pytest.raises(ReadLimitError, match="over the reading"):
        xcorrstat.read(path)
    with xcorrstat.set_options(memory_budget=size):
        assert xcorrstat.read(path)["m0"].sizes == {"system": 3, "input": 4}


def test_parquet_data_are_measured_before_they_are_read(tmp_path):
    pytest.importorskip("pyarrow")
    zeros = pd.DataFrame({"system": np.repeat([f"S{k}" for k in range(1000)], 100),
                          "input": np.tile(np.arange(100), 1000), "m": np.zeros(100_000)})  # 0.8 MB of scores
    path = tmp_path / "zeros.parquet"
    zeros.to_parquet(path)
    assert os.path.getsize(path) < 200_000
    with xcorrstat.set_options(memory_budget=200_000), \
            pytest.raises(ReadLimitError, match=r"zeros\.parquet': its Parquet data take .* once read, over the "
                          r"reading limit of 195\.3 KiB"):
        xcorrstat.read(path)
    assert float(xcorrstat.read(path)["m"].sum()) == 0.0


# -- links out of a test set folder ---------------------------------------------------------------------

def test_link_out_of_the_tree_is_refused_unless_allowed(tmp_path, tree, monkeypatch):
    score = os.path.join(tree.folder, tree.files[("en-de", "BLEU-refA", "seg")])
    outside = tmp_path / "elsewhere.score"
    outside.write_bytes(open(score, "rb").read())
    _replace(score, lambda p: os.symlink(outside, p))
    root = os.path.dirname(tree.folder)
    with pytest.raises(ReadLimitError, match=r"BLEU-refA\.seg\.score' is a link to .*elsewhere\.score', outside "
                       r"the test set folder .*follow_links=True"):
        read_mtme(root, "wmtx", "en-de")
    expected = tree.scores[("en-de", "BLEU-refA", "seg")]
    allowed = read_mtme(root, "wmtx", "en-de", follow_links=True)
    np.testing.assert_array_equal(allowed["BLEU-refA"].sel(system="sys01").values, expected["sys01"])
    monkeypatch.setenv("XCORRSTAT_FOLLOW_LINKS", "1")  # the command line's way
    assert read_mtme(root, "wmtx", "en-de")["BLEU-refA"].equals(allowed["BLEU-refA"])
    monkeypatch.setenv("XCORRSTAT_FOLLOW_LINKS", "maybe")
    with pytest.raises(ValueError, match="XCORRSTAT_FOLLOW_LINKS must be 0 or 1"):
        read_mtme(root, "wmtx", "en-de")


def test_wmt_command_refuses_a_link_out_of_the_tree_unless_asked(tmp_path):
    wmt = write_wmt_tree(tmp_path / "root", "wmt23", np.random.default_rng(3), k_systems=3, n_segments=12,
                         n_docs=2, lps=["en-de"])
    path = os.path.join(wmt.folder, "metric-scores", "en-de", "BLEU-refA.seg.score")
    outside = tmp_path / "BLEU.score"
    os.rename(path, outside)
    os.symlink(outside, path)
    argv = [sys.executable, "-m", "xcorrstat", "wmt", str(tmp_path / "root"), "--testset", "wmt23", "--lps", "en-de",
            "--n-resamples", "0", "--quiet"]
    refused = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1, refused.stderr
    assert "BLEU-refA.seg.score' is a link to" in refused.stderr and "--follow-links" in refused.stderr
    allowed = subprocess.run(argv + ["--follow-links"], capture_output=True, text=True, timeout=300)
    assert allowed.returncode == 0, allowed.stderr
    assert "BLEU" in allowed.stdout


def test_links_inside_the_tree_and_a_linked_tree_are_read(tmp_path, tree):
    root = os.path.dirname(tree.folder)
    score = os.path.join(tree.folder, tree.files[("en-de", "BLEU-refA", "seg")])
    os.rename(score, os.path.join(tree.folder, "kept.txt"))
    os.symlink(os.path.join(tree.folder, "kept.txt"), score)  # a link that stays in the folder
    linked = tmp_path / "links"
    linked.mkdir()
    os.symlink(tree.folder, linked / "wmtx")  # the folder itself a link: its files are inside it
    for where in (root, linked):
        ds = read_mtme(where, "wmtx", "en-de")
        np.testing.assert_array_equal(ds["BLEU-refA"].sel(system="sys00").values,
                                      tree.scores[("en-de", "BLEU-refA", "seg")]["sys00"])


# -- compressed input: refused from its trailer, or stopped as it is counted ------------------------------

def _bomb(path, mib: int, *, second_member: bool) -> None:
    """A gzip file of a header and `mib` MiB of the digit 0 (a few hundred KiB on disk)."""
    with open(path, "wb") as raw:
        with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9) as fh:
            fh.write(b"system,input,m\n")
            for _ in range(mib):
                fh.write(b"0" * MiB)
        if second_member:  # the last member's trailer now says 1 byte: only counting stops it
            raw.write(gzip.compress(b"\n"))


def test_gzip_bomb_is_refused_from_its_trailer(tmp_path):
    path = tmp_path / "bomb.csv.gz"
    _bomb(path, 256, second_member=False)
    assert os.path.getsize(path) < MiB
    with xcorrstat.set_options(memory_budget="16MiB"), \
            pytest.raises(ReadLimitError, match=r"bomb\.csv\.gz': the file is compressed and expands to 256\.0 "
                          r"MiB, over the reading limit of 16\.0 MiB"):
        xcorrstat.read(path)


BOMB_CHILD = PRELUDE + textwrap.dedent(
    """
    path = sys.argv[1]
    def run():
        try:
            with xcorrstat.set_options(memory_budget="16MiB"):
                xcorrstat.read(path)
        except ValueError as err:
            print(err)
    print(json.dumps(growth(run)))
    """)


def test_gzip_bomb_is_stopped_at_the_limit_as_it_is_counted(tmp_path):
    path = tmp_path / "bomb.csv.gz"
    _bomb(path, 256, second_member=True)
    run = subprocess.run([sys.executable, "-c", BOMB_CHILD, str(path)], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    message, peak = run.stdout.splitlines()
    assert "bomb.csv.gz': the file is compressed and expands past the reading limit of 16.0 MiB" in message
    assert int(peak) < 128 * MiB  # the 256 MiB of text were never held


# -- the text of a table: header fields, quotes, encodings ------------------------------------------------

def test_header_field_over_128_kib_names_line_and_column(tmp_path, capsys):
    path = tmp_path / "wide_name.csv"
    path.write_text("system,input," + "m" * (200 * 1024) + "\nA,1,0.5\nB,1,0.6\n")
    with pytest.raises(ValueError, match=r"wide_name\.csv', line 1, column 3: a column name of 204800 "
                       r"characters, more than the 131072"):
        xcorrstat.read(path)
    assert "wide_name.csv', line 1, column 3" in error_line(capsys, "correlate", path, "--target", "human")


def test_stray_quote_at_the_start_of_a_large_csv(tmp_path, capsys):
    path = tmp_path / "stray.csv"
    rows = "".join(f"S{i % 5},{i},0.{i}\n" for i in range(100_000))
    path.write_text('"system,input,m\n' + rows)
    assert os.path.getsize(path) > MiB
    with pytest.raises(ValueError, match=r"stray\.csv', line 1, column 1: a quote \(\"\) opens a field that is "
                       "not closed"):
        xcorrstat.read(path)
    assert "stray.csv', line 1, column 1: a quote" in error_line(capsys, "correlate", path, "--target", "m")
    later = tmp_path / "later.csv"
    later.write_text("system,input,m\n" + rows + '"A,1,2\n' + rows)
    with pytest.raises(ValueError, match=r"later\.csv', line 100002: a quote \(\"\) opens a field that is never "
                       "closed"):
        xcorrstat.read(later)


def test_a_line_with_too_many_fields_is_named(tmp_path, capsys):
    path = tmp_path / "ragged.csv"
    path.write_text("system,input,m\nA,1,0.5\n\nB,1,0.6,7\n")
    with pytest.raises(ValueError, match=r"ragged\.csv', line 4: 4 fields, but the lines before have 3$"):
        xcorrstat.read(path)
    assert "ragged.csv', line 4: 4 fields" in error_line(capsys, "correlate", path, "--target", "m")


def test_undecodable_byte_names_line_and_column(tmp_path):
    path = tmp_path / "latin.csv"
    path.write_bytes("system,input,m\nA,1,0.5\nB,2,0.5\nCé,2,0.7\n".encode("latin-1"))
    with pytest.raises(ValueError, match=r"latin\.csv' is not valid utf-8 text: line 4, column 2 holds "
                       r"b'\\xe9' \(invalid continuation byte\)"):
        xcorrstat.read(path)
    assert xcorrstat.read(path, encoding="latin-1")["m"].sel(system="Cé", input=2).item() == 0.7


# -- Parquet: nested columns named with their type, Decimal columns read as numbers ----------------------

@pytest.mark.parametrize(("values", "kind"), [([[1], [2], [3], [4]], "list<element: int64>"),
                                              ([{"a": 1}] * 4, "struct<a: int64>")])
def test_nested_parquet_column_is_named_with_its_type(tmp_path, capsys, values, kind):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    table = pa.table({"system": ["A", "A", "B", "B"], "input": ["1", "2", "1", "2"], "m": [1.0, 2, 3, 4],
                      "nested": values})
    path = tmp_path / "scores.parquet"
    pq.write_table(table, path)
    with pytest.raises(ValueError, match=rf"scores\.parquet': column 'nested' holds {kind} values"):
        xcorrstat.read(path)
    assert "column 'nested' holds" in error_line(capsys, "correlate", path, "--target", "m")
    df = table.to_pandas()  # the same column in a DataFrame: named, with its row
    with pytest.raises(TypeError, match=r"column 'nested' holds \w+ values \(first in data row 1"):
        xcorrstat.from_dataframe(df)


def test_decimal_columns_are_numbers(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    values = [decimal.Decimal("0.25"), None, decimal.Decimal("1.50"), decimal.Decimal("-2.00")]
    table = pa.table({"system": ["A", "A", "B", "B"], "input": ["1", "2", "1", "2"],
                      "m": pa.array(values, pa.decimal128(5, 2))})
    path = tmp_path / "scores.parquet"
    pq.write_table(table, path)
    ds = xcorrstat.read(path)
    assert ds["m"].dtype == np.float64
    np.testing.assert_array_equal(ds["m"].values, [[0.25, np.nan], [1.5, -2.0]])
    df = pd.DataFrame({"system": ["A", "B"], "input": ["1", "1"], "m": [decimal.Decimal("0.5"), None]})
    np.testing.assert_array_equal(xcorrstat.from_dataframe(df)["m"].values, [[0.5], [np.nan]])


# -- many columns ----------------------------------------------------------------------------------------

def test_hundred_thousand_columns_are_read_and_more_than_the_limit_refused_fast(tmp_path):
    n = 100_000
    path = tmp_path / "wide.csv"
    row = ",".join(["0.5"] * n)
    path.write_text("system,input," + ",".join(f"m{k}" for k in range(n)) + "\n"
                    + "".join(f"S{s},d{i},{row}\n" for s in range(2) for i in range(2)))
    start = time.perf_counter()
    ds = xcorrstat.read(path)
    assert time.perf_counter() - start < 120  # about 7 s on 2 cores; a million took 71 s
    assert len(ds.data_vars) == n and float(ds[f"m{n - 1}"].sum()) == 2.0
    too_many = tmp_path / "too_many.csv"
    too_many.write_text(",".join(f"m{k}" for k in range(MAX_COLUMNS + 1)) + "\n" + "1," * MAX_COLUMNS + "1\n")
    start = time.perf_counter()
    with pytest.raises(ReadLimitError, match=rf"too_many\.csv': the table has {MAX_COLUMNS + 1:,} columns, more "
                       rf"than the {MAX_COLUMNS:,}"):
        xcorrstat.read(too_many)
    assert time.perf_counter() - start < 10  # from the header, before the rows are parsed


# -- running out of memory -------------------------------------------------------------------------------

def test_memory_error_while_reading_is_one_line_with_a_hint(tmp_path, capsys, monkeypatch, tree):
    path = tmp_path / "scores.csv"
    path.write_text(GOOD)

    def no_memory(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(pd, "read_csv", no_memory)
    with pytest.raises(ReadMemoryError, match=r"scores\.csv': out of memory while reading it; .*memory_budget") \
            as info:
        xcorrstat.read(path)
    assert isinstance(info.value, MemoryError)
    line = error_line(capsys, "correlate", path, "--target", "human", code=1)  # out of memory: 1, as elsewhere
    assert "scores.csv': out of memory" in line and "memory_budget" in line
    with pytest.raises(ReadMemoryError, match=r"wmtx': out of memory while reading it"):
        read_mtme(os.path.dirname(tree.folder), "wmtx", "en-de")
