"""The ``.corrstat`` accessors: one name, two roles, each method with its function's real signature."""

import importlib.util
import inspect
import pathlib

import numpy as np
import pandas as pd
import pytest
import scipy.stats
import xarray as xr

import xcorrstat
from xcorrstat._reporting import tables
from xcorrstat import ResultAccessor, ScoresAccessor
from xcorrstat import agreement, diagnostics
from xcorrstat import plot as xplot
from xcorrstat.plot._namespace import PlotMethods

from conftest import make_scores

#: The analyses of scores and the methods of a result, as issue-level vocabulary (not read from the code).
SCORES_METHODS = {
    "correlate": xcorrstat.correlate, "bootstrap": xcorrstat.bootstrap, "fisher": xcorrstat.fisher,
    "mean_ci": xcorrstat.mean_ci, "paired_difference_ci": xcorrstat.paired_difference_ci,
    "permutation_test": xcorrstat.permutation_test, "paired_bootstrap_test": xcorrstat.paired_bootstrap_test,
    "williams_test": xcorrstat.williams_test, "compare": xcorrstat.compare, "report": xcorrstat.report,
    "calibrate_ties": xcorrstat.calibrate_ties, "pairwise_accuracy": xcorrstat.pairwise_accuracy,
    "kendall_like": xcorrstat.kendall_like, "pairwise_difference_pearson": xcorrstat.pairwise_difference_pearson,
    "soft_pairwise_accuracy": xcorrstat.soft_pairwise_accuracy,
    "soft_pairwise_accuracy_test": xcorrstat.soft_pairwise_accuracy_test,
    "matrix": agreement.matrix, "jaccard": agreement.jaccard, "leaderboard": agreement.leaderboard,
    "leaderboard_agreement": agreement.leaderboard_agreement, "ci_coverage": diagnostics.ci_coverage,
    "power_analysis": diagnostics.power_analysis, "normality": diagnostics.normality,
}
RESULT_METHODS = {"tidy": xcorrstat.tidy, "ranked_frame": tables.ranked_frame, "to_latex": tables.to_latex,
                  "to_markdown": tables.to_markdown}
PLOT_METHODS = {"ci": xplot.plot_ci, "significance": xplot.plot_significance,
                "distribution": xplot.plot_distribution, "matrix": xplot.plot_matrix,
                "jaccard": xplot.plot_jaccard, "leaderboard_agreement": xplot.plot_leaderboard_agreement}
CASES = ([(ScoresAccessor, n, f) for n, f in SCORES_METHODS.items()]
         + [(ResultAccessor, n, f) for n, f in RESULT_METHODS.items()]
         + [(PlotMethods, n, f) for n, f in PLOT_METHODS.items()])


def _public(obj):
    return {n for n in dir(obj) if not n.startswith("_")}


@pytest.mark.parametrize(("cls", "name", "func"), CASES, ids=[f"{c.__name__}.{n}" for c, n, _ in CASES])
def test_method_signature_is_the_functions(cls, name, func):
    method = inspect.signature(getattr(cls, name))
    function = inspect.signature(func)
    m_params, f_params = list(method.parameters.values()), list(function.parameters.values())
    assert m_params[0].name == "self"
    assert [(p.name, p.kind, p.default, p.annotation) for p in m_params[1:]] == [
        (p.name, p.kind, p.default, p.annotation) for p in f_params[1:]], f"{cls.__name__}.{name} drifted"
    assert method.return_annotation == function.return_annotation
    assert getattr(cls, name).__doc__ == func.__doc__


def test_each_role_has_exactly_its_methods():
    assert _public(ScoresAccessor) == set(SCORES_METHODS)
    assert _public(ResultAccessor) == set(RESULT_METHODS) | {"plot"}
    assert _public(PlotMethods) == set(PLOT_METHODS)


@pytest.fixture(scope="module")
def scores():
    return make_scores(n_metrics=3, n_systems=7, n_inputs=9, seed=3)


def _system_pearson(ds, metric):
    """Pearson of per-system means with scipy: the oracle of a system-level correlation."""
    x = ds[metric].values.mean(axis=1)
    z = ds["human"].values.mean(axis=1)
    return scipy.stats.pearsonr(x, z).statistic


def test_scores_get_the_analyses_and_a_result_its_methods(scores):
    acc = scores.corrstat
    assert type(acc) is ScoresAccessor
    assert _public(acc) == set(SCORES_METHODS)
    r = acc.correlate(target="human", level="system")
    np.testing.assert_allclose(r.sel(metric="m1").item(), _system_pearson(scores, "m1"), rtol=1e-12)
    assert type(r.corrstat) is ResultAccessor
    assert _public(r.corrstat) == set(RESULT_METHODS) | {"plot"}
    frame = r.corrstat.tidy()
    np.testing.assert_allclose(frame.set_index("metric").loc["m2", "correlation"], _system_pearson(scores, "m2"),
                               rtol=1e-12)


@pytest.mark.parametrize("analysis", [
    lambda ds: ds.corrstat.correlate(target="human", level="input", method="kendall"),
    lambda ds: ds.corrstat.bootstrap(target="human", resample=xcorrstat.Bootstrap(n_resamples=20, rng=0)),
    lambda ds: ds.corrstat.fisher(target="human"),
    lambda ds: ds.corrstat.compare(target="human", test="williams"),
    lambda ds: ds.corrstat.williams_test(x="m0", y="m1", target="human"),
    lambda ds: ds.corrstat.mean_ci(n_resamples=20, rng=0),
    lambda ds: ds.corrstat.pairwise_accuracy(target="human"),
    lambda ds: ds.corrstat.normality(),
    lambda ds: ds["m0"].corrstat.matrix(over="system", along="input"),
    lambda ds: ds["m0"].corrstat.leaderboard(competitor="system", condition="input"),
], ids=["correlate", "bootstrap", "fisher", "compare", "williams_test", "mean_ci", "pairwise_accuracy",
        "normality", "matrix", "leaderboard"])
def test_every_analysis_returns_a_result(scores, analysis):
    assert type(analysis(scores).corrstat) is ResultAccessor


def test_score_data_stay_scores(scores, summeval):
    # the readers' attrs (role, level, testset ...) and a transform of scores do not make a result
    assert type(summeval.corrstat) is ScoresAccessor
    assert type(summeval["expert_relevance"].corrstat) is ScoresAccessor
    assert type((scores - scores.mean("input")).corrstat) is ScoresAccessor
    # without the attrs an analysis wrote, a result's values are plain data
    r = scores.corrstat.correlate(target="human")
    assert type(r.copy().assign_attrs(target=None).drop_attrs().corrstat) is ScoresAccessor


def test_a_dataframe_is_scores_with_to_dataset(scores):
    df = scores.to_dataframe().reset_index()
    acc = df.corrstat
    assert isinstance(acc, ScoresAccessor)
    assert _public(acc) == set(SCORES_METHODS) | {"to_dataset"}
    assert dict(acc.to_dataset().sizes) == {"system": 7, "input": 9}
    r = acc.correlate(target="human")
    np.testing.assert_allclose(r.sel(metric="m0").item(), _system_pearson(scores, "m0"), rtol=1e-12)


def test_a_result_method_on_scores_says_what_to_call(scores):
    with pytest.raises(AttributeError) as err:
        scores.corrstat.tidy()
    message = str(err.value)
    assert "\n" not in message
    assert "this Dataset holds scores" in message and "tidy is a method of a result" in message
    assert "ResultAccessor(obj).tidy()" in message
    with pytest.raises(AttributeError, match="this DataFrame is read as a table of scores.*to_latex"):
        scores.to_dataframe().reset_index().corrstat.to_latex()


def test_an_analysis_on_a_result_says_what_to_call(scores):
    r = scores.corrstat.correlate(target="human")
    with pytest.raises(AttributeError) as err:
        r.corrstat.bootstrap(target="human")
    message = str(err.value)
    assert "\n" not in message
    assert "this DataArray is the result of an analysis (attrs target='human')" in message
    assert "ScoresAccessor(result).bootstrap(...)" in message
    with pytest.raises(AttributeError, match="has no attribute 'boostrap'"):
        r.corrstat.boostrap  # noqa: B018  (a misspelt name gets Python's own message)


def test_the_classes_pick_a_role_explicitly(scores):
    # correlations of two targets, analysed as scores: which target ranks the metrics alike
    two = xr.concat([scores.corrstat.correlate(target="human"),
                     scores.assign(human=scores["m0"] + scores["human"]).corrstat.correlate(target="human")],
                    dim=pd.Index(["a", "b"], name="target_set"))
    two.attrs = {"target": "human"}
    acc = ScoresAccessor(two)
    assert type(acc) is ScoresAccessor
    board = acc.leaderboard(competitor="metric", condition="target_set")
    assert list(board["score"].sel(metric=["m0", "m1"]).values) == pytest.approx(
        two.sel(metric=["m0", "m1"]).mean("target_set").values)
    assert type(ResultAccessor(scores)) is ResultAccessor
    with pytest.raises(TypeError, match="ResultAccessor takes a Dataset or DataArray, got DataFrame"):
        ResultAccessor(pd.DataFrame({"a": [1]}))


def test_the_readme_accessor_calls_are_typed_for_mypy():
    pytest.importorskip("mypy")
    path = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "api_typing.py"
    spec = importlib.util.spec_from_file_location("api_typing", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rows = module.typing_rows()
    calls = {r["call"] for r in rows}
    assert {"ds.corrstat.correlate", "ds.corrstat.bootstrap", "ds.corrstat.compare"} <= calls
    for row in rows:
        if row["form"] in ("annotated", "built"):
            assert row["real"], row
        if row["form"] == "built" and row["call"] == "ds.corrstat.correlate":
            # the Literal typing of the options is kept
            assert "method: Literal['pearson'] | Literal['spearman'] | Literal['kendall']" in row["revealed"]
            assert row["revealed"].endswith("-> xarray.core.dataarray.DataArray")
