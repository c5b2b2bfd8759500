"""Published values on the bundled SummEval data (SacreROUGE documentation tables)."""

import pytest

# metric: (system r, rho, tau), (input r, rho, tau) -- Kendall tau-b, two decimals
PUBLISHED = {
    "bertscore_recall": ((0.84, 0.91, 0.75), (0.37, 0.35, 0.27)),
    "qa_eval_f1": ((0.82, 0.91, 0.77), (0.30, 0.29, 0.22)),
    "rouge_2_recall": ((0.65, 0.78, 0.57), (0.26, 0.23, 0.18)),
}
METHODS = ("pearson", "spearman", "kendall")


@pytest.mark.parametrize("level_index,level", [(0, "system"), (1, "input")])
def test_summeval_published_values(summeval, level_index, level):
    r = summeval.corrstat.correlate(target="expert_relevance", level=level, method=list(METHODS))
    for metric, values in PUBLISHED.items():
        for method, expected in zip(METHODS, values[level_index]):
            got = float(r.sel(metric=metric, coefficient=method))
            assert round(got, 2) == pytest.approx(expected, abs=1e-9), (metric, level, method, got)


def test_summeval_all_34_metrics(summeval):
    r = summeval.corrstat.correlate(
        target="expert_relevance", level=["system", "input", "global"], method=list(METHODS)
    )
    assert r.sizes == {"level": 3, "coefficient": 3, "metric": 34}
    assert "expert_coherence" not in r["metric"].values
    assert int(r["n"].sel(level="system").max()) == 16
    assert int(r["n"].sel(level="input").min()) >= 90
    assert int(r["n"].sel(level="global").min()) == 1600
    assert bool(r.notnull().all())
