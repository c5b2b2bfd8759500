"""A 0/1 marker of units (the WMT20 file's ``is_outlier``) is not ranked as a metric by default: it is
left out by its name, with a warning at the caller's line and a note, as a human judgment's name is;
named in ``metrics`` it is kept."""

from __future__ import annotations

import io
import warnings
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.stats

import xcorrstat
from xcorrstat._cli import main
from xcorrstat._notes import notes_of
from xcorrstat._schema import looks_like_flag

WMT20 = Path(__file__).parent / "data" / "wmt20_ende_sys.csv"


@pytest.fixture(scope="module")
def frame():
    return pd.read_csv(WMT20).drop(columns=["human_raw"])


def test_names_of_markers():
    assert [looks_like_flag(n) for n in ("is_outlier", "IS-REF", "has_ref", "outliers", "qa_flag", "Outlier")] \
        == [True] * 6
    assert not any(looks_like_flag(n) for n in ("bleu", "isomorph", "flagship", "COMET-QE", "outlier_rate_x", "this"))


def test_left_out_by_default_with_a_warning_at_the_callers_line(frame):
    ds = xcorrstat.from_dataframe(frame, system="system", input=None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = xcorrstat.correlate(ds, target="human", level="system", method="pearson")
    assert "is_outlier" not in r["metric"].values and r.sizes["metric"] == 28
    told = [w for w in caught if "markers of units" in str(w.message)]
    assert len(told) == 1 and told[0].filename == __file__
    assert any("'is_outlier' (named like a marker of units)" in note for note in notes_of(r))
    # the metrics' values are those of scipy on the file's columns
    np.testing.assert_allclose(float(r.sel(metric="BLEU")), scipy.stats.pearsonr(frame["BLEU"], frame["human"])[0],
                               rtol=1e-12)


def test_kept_when_named_or_marked(frame):
    ds = xcorrstat.from_dataframe(frame, system="system", input=None)
    r = xcorrstat.correlate(ds, target="human", level="system", method="pearson", metrics=["is_outlier", "BLEU"])
    np.testing.assert_allclose(float(r.sel(metric="is_outlier")),
                               scipy.stats.pearsonr(frame["is_outlier"], frame["human"])[0], rtol=1e-12)
    ds["is_outlier"].attrs["role"] = "metric"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # marked: nothing to warn about
        assert "is_outlier" in xcorrstat.correlate(ds, target="human", level="system")["metric"].values


def test_dask_data_have_the_same_metrics(frame):
    ds = xcorrstat.from_dataframe(frame, system="system", input=None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        eager = xcorrstat.correlate(ds, target="human", level="system")
        lazy = xcorrstat.correlate(ds.chunk(), target="human", level="system").compute()
    np.testing.assert_array_equal(eager["metric"].values, lazy["metric"].values)


def test_command_line_says_it_in_one_line():
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["correlate", str(WMT20), "--target", "human"])
    assert code in (0, None)
    lines = [line for line in err.getvalue().splitlines() if "markers of units" in line]
    assert len(lines) == 1 and lines[0].startswith("xcorrstat: note:") and "'is_outlier'" in lines[0]
    assert "Warning" not in err.getvalue()
    table = out.getvalue()
    assert "'is_outlier' (named like a marker of units)" in table
    assert not any(line.startswith("is_outlier ") for line in table.splitlines())
