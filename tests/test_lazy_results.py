"""Lazy in, lazy out: Dask-backed scores give Dask-backed results whose values are those of the
eager call, bit for bit (same dtypes, dims and coordinates)."""

from __future__ import annotations

import dask.array as dsa
import numpy as np
import pytest

import xcorrstat

LEVELS = ["system", "input", "within_system", "global"]


def _same(eager, lazy) -> None:
    assert list(eager.variables) == list(lazy.variables)
    assert dict(eager.sizes) == dict(lazy.sizes)
    for name in eager.data_vars:
        assert isinstance(lazy[name].data, dsa.Array), name  # nothing computed yet
    computed = lazy.compute()
    for name in eager.variables:
        a, b = eager[name].values, computed[name].values
        assert a.dtype == b.dtype, name
        assert a.tobytes() == b.tobytes(), name  # bit for bit, NaN included
    assert eager.attrs == computed.attrs


@pytest.fixture(scope="module")
def scores():
    ds = xcorrstat.datasets.summeval()
    keep = ["expert_relevance", "qa_eval_f1", "rouge_1_f_score", "bleu", "bert_score_f1"]
    keep = [k for k in keep if k in ds] or list(ds.data_vars)[:5]
    ds = ds[keep]
    ds["qa_eval_f1"] = ds["qa_eval_f1"].where(ds["qa_eval_f1"] > 0.1)  # missing cells
    return ds


@pytest.mark.parametrize("level", LEVELS)
def test_pairwise_accuracy_lazy_in_lazy_out(scores, level):
    eager = xcorrstat.pairwise_accuracy(scores, target="expert_relevance", level=level)
    lazy = xcorrstat.pairwise_accuracy(scores.chunk({"system": 5}), target="expert_relevance", level=level)
    _same(eager, lazy)


@pytest.mark.parametrize("level", LEVELS)
def test_calibrate_ties_lazy_in_lazy_out(scores, level):
    eager = xcorrstat.calibrate_ties(scores, target="expert_relevance", level=level, keep_curve=True)
    lazy = xcorrstat.calibrate_ties(scores.chunk({"input": 30}), target="expert_relevance", level=level,
                                    keep_curve=True)
    _same(eager, lazy)


def test_lazy_scores_are_checked_for_infinity_when_computed(scores):
    bad = scores.copy()
    bad["bleu" if "bleu" in bad else list(bad.data_vars)[1]][0, 0] = np.inf
    lazy = xcorrstat.pairwise_accuracy(bad.chunk({"system": 5}), target="expert_relevance")
    with pytest.raises(ValueError, match="infinite"):
        lazy.compute()
