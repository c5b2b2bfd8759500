"""Tests for the bundled SummEval dataset."""

from __future__ import annotations

import gzip

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from xcorrstat.datasets import summeval, summeval_path
from xcorrstat.datasets._summeval import SUMMEVAL_HUMAN
from xcorrstat._io import read


@pytest.fixture(scope="module")
def ds() -> xr.Dataset:
    return summeval()


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    with summeval_path().open("rb") as fh:
        return pd.read_csv(fh, compression="gzip")


def test_shape_and_labels(ds):
    assert dict(ds.sizes) == {"system": 16, "input": 100}
    assert ds["system"].values.tolist()[:3] == ["M0", "M1", "M10"]
    assert {"M0", "M23"} <= set(ds["system"].values.tolist())
    assert all(isinstance(x, str) for x in ds["input"].values)
    assert len(ds.data_vars) == 42


def test_roles(ds):
    humans = [v for v in ds.data_vars if ds[v].attrs["role"] == "human"]
    metrics = [v for v in ds.data_vars if ds[v].attrs["role"] == "metric"]
    assert tuple(humans) == SUMMEVAL_HUMAN
    assert len(SUMMEVAL_HUMAN) == 8 and len(metrics) == 34
    assert {"rouge_2_recall", "bertscore_recall", "qa_eval_f1", "bewte_f1"} <= set(metrics)
    assert all(h.startswith(("expert_", "turker_")) for h in humans)


def test_values_complete_and_float(ds):
    for name, var in ds.data_vars.items():
        assert var.dims == ("system", "input")
        assert var.dtype == np.float64
        assert not var.isnull().any(), name
    human = ds[list(SUMMEVAL_HUMAN)].to_array()
    assert float(human.min()) >= 1 and float(human.max()) <= 5


def test_values_equal_bundled_csv(ds, table):
    assert table.shape == (1600, 44)
    assert list(ds.data_vars) == [c for c in table.columns if c not in ("system", "input")]
    indexed = table.set_index(["system", "input"])
    for name in ds.data_vars:
        flat = ds[name].to_series()
        np.testing.assert_array_equal(flat.to_numpy(), indexed.loc[flat.index, name].to_numpy())


def test_read_path_gives_same_dataset(ds):
    path = summeval_path()
    assert path.name == "summeval.csv.gz"
    got = read(path, human=SUMMEVAL_HUMAN)
    xr.testing.assert_equal(got, ds)
    assert got["expert_relevance"].attrs["role"] == "human"


def test_fresh_dataset_each_call(ds):
    first = summeval()
    first["rouge_1_f1"][:] = 0.0
    first.attrs["title"] = "changed"
    first["expert_relevance"].attrs["role"] = "metric"
    second = summeval()
    assert float(second["rouge_1_f1"].max()) > 0
    assert second.attrs["title"] == ds.attrs["title"] != "changed"
    assert second["expert_relevance"].attrs["role"] == "human"


def test_attribution_in_attrs(ds):
    for key in ("title", "source", "references", "license"):
        assert ds.attrs[key]
    refs = ds.attrs["references"]
    assert "Fabbri" in refs and "SummEval: Re-evaluating Summarization Evaluation" in refs
    assert "Deutsch" in refs and "Resampling Methods" in refs and "cite both" in refs
    assert "Yale-LILY/SummEval" in ds.attrs["source"]
    assert "CogComp/stat-analysis-experiments" in ds.attrs["source"]
    assert "MIT" in ds.attrs["license"] and "Apache-2.0" in ds.attrs["license"]


def test_attribution_in_docstring():
    doc = summeval.__doc__
    for text in ("Fabbri et al., 2021", "Deutsch", "TACL", "MIT", "Apache-2.0",
                 "Yale-LILY/SummEval", "CogComp/stat-analysis-experiments", "cite both",
                 "expert_", "turker_", "BERTScore", "ROUGE"):
        assert text in doc, text


def test_bundled_file_is_reproducible_gzip():
    data = summeval_path().read_bytes()
    assert data[:2] == b"\x1f\x8b"
    assert data[4:8] == b"\x00\x00\x00\x00"  # mtime 0
    assert gzip.decompress(data).startswith(b"system,input,expert_relevance,")
