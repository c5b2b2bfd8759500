"""The normality report equals scipy.stats.shapiro, score by score and input by input."""

import numpy as np
import pytest
from scipy import stats

import xcorrstat
from conftest import make_scores
from xcorrstat.diagnostics import normality


def _oracle(values, alpha):
    """Per-system means and per-input tests with plain loops and scipy.stats.shapiro."""
    s, i = values.shape
    means = [np.mean(values[k][~np.isnan(values[k])]) for k in range(s) if (~np.isnan(values[k])).any()]
    means = np.array(means)
    sys_res = stats.shapiro(means) if len(means) >= 3 and np.ptp(means) > 0 else None
    rejects, tested = 0, 0
    for j in range(i):
        col = values[:, j][~np.isnan(values[:, j])]
        if len(col) < 3 or np.ptp(col) == 0:
            continue
        tested += 1
        rejects += stats.shapiro(col).pvalue < alpha
    return sys_res, (rejects / tested if tested else np.nan), tested


def test_summeval_equals_scipy(summeval):
    names = ["qa_eval_f1", "rouge_2_f1", "bertscore_f1", "expert_relevance", "expert_coherence"]
    rep = normality(summeval, metrics=names, alpha=0.05)
    for name in names:
        sys_res, share, tested = _oracle(summeval[name].values, 0.05)
        got = rep.sel(metric=name)
        assert float(got["system_statistic"]) == pytest.approx(sys_res.statistic, abs=1e-12)
        assert float(got["system_pvalue"]) == pytest.approx(sys_res.pvalue, abs=1e-12)
        assert float(got["input_reject_share"]) == pytest.approx(share, abs=1e-12)
        assert int(got["n_inputs_tested"]) == tested


def test_missing_cells_ties_and_extra_dims():
    ds = make_scores(n_metrics=2, n_systems=7, n_inputs=12, seed=5, nan_frac=0.25, ties=True, extra=("lp", 2))
    rep = normality(ds, alpha=0.1)
    assert set(rep.dims) == {"metric", "lp"}
    for lp in ds["lp"].values:
        for name in ("m0", "m1", "human"):
            sys_res, share, tested = _oracle(ds[name].sel(lp=lp).values, 0.1)
            got = rep.sel(metric=name, lp=lp)
            if sys_res is None:
                assert np.isnan(float(got["system_pvalue"]))
            else:
                assert float(got["system_pvalue"]) == pytest.approx(sys_res.pvalue, abs=1e-12)
            np.testing.assert_allclose(float(got["input_reject_share"]), share, atol=1e-12)
            assert int(got["n_inputs_tested"]) == tested


def test_untestable_inputs_are_not_tested():
    ds = make_scores(n_metrics=1, n_systems=5, n_inputs=4, seed=0)
    ds["m0"][:, 0] = 1.0  # constant input
    ds["m0"][2:, 1] = np.nan  # two values left
    rep = normality(ds, metrics=["m0"])
    assert int(rep["n_inputs_tested"].sel(metric="m0")) == 2


def test_bad_arguments(summeval):
    with pytest.raises(ValueError, match=r"metrics=\['nope'\]: not in the data"):
        normality(summeval, metrics=["nope"])
    with pytest.raises(ValueError, match="alpha"):
        normality(summeval, alpha=1.5)
    assert "normality" in dir(xcorrstat.diagnostics)
