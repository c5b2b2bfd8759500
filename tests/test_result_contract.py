"""One result contract: attrs record the seed as ``rng`` and the draw settings under their parameters' names,
so a result's attrs rebuild its call (the same numbers); the command line names options as the functions do."""

import numpy as np
import pytest
import xarray as xr
from conftest import make_scores

import xcorrstat
from xcorrstat._cli import _parser as build_parser

DS = make_scores(n_metrics=3, n_systems=6, n_inputs=9, seed=3, nan_frac=0.05)
COMMON = dict(target="human", level="input", method="kendall", variant="c")


def _rebuilt_equal(a: xr.Dataset, b: xr.Dataset, names: list[str]) -> None:
    for name in names:
        np.testing.assert_array_equal(a[name].values, b[name].values)


@pytest.mark.parametrize("permute", ["system", "input", ("system", "input"), "system-xor-input"])
def test_a_permutation_test_is_rebuilt_from_its_attrs(permute):
    res = xcorrstat.permutation_test(DS, x="m0", y="m1", test=xcorrstat.Permutation(permute, n_resamples=60),
                                     **COMMON)
    assert "seed" not in res.attrs and isinstance(res.attrs["rng"], int)
    again = xcorrstat.permutation_test(DS, x="m0", y="m1", test=xcorrstat.Permutation.from_attrs(res.attrs),
                                       **COMMON)
    _rebuilt_equal(res, again, ["delta", "pvalue"])
    assert again.attrs == res.attrs


def test_early_stopping_is_rebuilt_from_its_attrs():
    test = xcorrstat.Permutation(n_resamples=400, early_stop=0.05, risk=0.01)
    res = xcorrstat.permutation_test(DS, x="m0", y="m2", test=test, **COMMON)
    rebuilt = xcorrstat.Permutation.from_attrs(res.attrs)
    assert (rebuilt.early_stop, rebuilt.risk) == (0.05, 0.01)
    again = xcorrstat.permutation_test(DS, x="m0", y="m2", test=rebuilt, **COMMON)
    _rebuilt_equal(res, again, ["pvalue", "n_resamples_used"])


@pytest.mark.parametrize("resample", ["system", "input", ("system", "input")])
def test_bootstrap_results_are_rebuilt_from_their_attrs(resample):
    res = xcorrstat.bootstrap(DS, resample=xcorrstat.Bootstrap(resample, n_resamples=50), **COMMON)
    again = xcorrstat.bootstrap(DS, resample=xcorrstat.Bootstrap.from_attrs(res.attrs), **COMMON)
    _rebuilt_equal(res, again, ["low", "high"])
    pair = xcorrstat.paired_bootstrap_test(DS, x="m0", y="m1", test=xcorrstat.Bootstrap(resample, n_resamples=50),
                                           **COMMON)
    pair_again = xcorrstat.paired_bootstrap_test(DS, x="m0", y="m1", test=xcorrstat.Bootstrap.from_attrs(pair.attrs),
                                                 **COMMON)
    _rebuilt_equal(pair, pair_again, ["pvalue", "low", "high"])


@pytest.mark.parametrize("test", [xcorrstat.Permutation("input", n_resamples=40),
                                  xcorrstat.Bootstrap("system", n_resamples=40)])
def test_compare_is_rebuilt_from_its_attrs(test):
    res = xcorrstat.compare(DS, test=test, **COMMON)
    again = xcorrstat.compare(DS, test=type(test).from_attrs(res.attrs), **COMMON)
    _rebuilt_equal(res, again, ["pvalue", "pvalue_corrected", "cluster"])


def test_every_draw_based_result_records_rng_not_seed():
    ds = xcorrstat.datasets.summeval()[["expert_relevance", "meteor", "qa_eval_f1", "rouge_2_f1"]]
    results = [
        xcorrstat.bootstrap(ds, target="expert_relevance", resample=xcorrstat.Bootstrap(n_resamples=20)),
        xcorrstat.compare(ds, target="expert_relevance", test=xcorrstat.Permutation(n_resamples=20)),
        xcorrstat.mean_ci(ds, n_resamples=20),
        xcorrstat.soft_pairwise_accuracy(ds, target="expert_relevance", n_resamples=20),
    ]
    for res in results:
        assert "seed" not in res.attrs and isinstance(res.attrs["rng"], int)
    rep = xcorrstat.report(ds, target="expert_relevance", n_resamples=20, rng=5)
    assert rep.settings["rng"] == 5 and "seed" not in rep.settings


def test_the_command_line_names_options_as_the_functions_do():
    parser = build_parser()
    args = parser.parse_args(["report", "--rng", "7", "--formats", "svg"])
    assert args.rng == 7 and args.formats == ["svg"]
    for old in (["--seed", "7"], ["--figure-format", "svg"]):
        with pytest.raises(SystemExit):
            parser.parse_args(["report", *old])


@pytest.mark.parametrize("level", ["system", "input", "within_system", "global"])
def test_one_statistic_is_the_correlation_variable_of_every_larger_result(level):
    """``correlate`` returns one statistic as a DataArray named ``correlation`` with the coordinate ``n``;
    the functions that add intervals or tests return Datasets whose ``correlation`` is that same array
    (dims, labels, ``n`` and values), extra dims included."""
    ds = make_scores(n_metrics=3, n_systems=6, n_inputs=9, seed=3, nan_frac=0.05, extra=("lp", 2))
    kw = dict(target="human", level=level, method="kendall")
    one = xcorrstat.correlate(ds, **kw)
    assert isinstance(one, xr.DataArray) and one.name == "correlation" and "n" in one.coords
    larger = [
        xcorrstat.bootstrap(ds, resample=xcorrstat.Bootstrap("input", n_resamples=20, rng=0), **kw),
        xcorrstat.compare(ds, test=xcorrstat.Permutation(n_resamples=20, rng=0), common_cells=False, **kw),
        xcorrstat.fisher(ds, **kw),
    ]
    for res in larger:
        got = res["correlation"].transpose(*one.dims)
        xr.testing.assert_equal(got.drop_attrs(), one.drop_attrs())
        xr.testing.assert_equal(got["n"], one["n"])
    # on common ground (compare's default) it is correlate's array of the data every metric scores
    names = [k for k in ds.data_vars if k != "human"]
    lacks = xr.concat([ds[k].isnull() for k in names], dim="m").any("m") & ds["human"].notnull()
    common = xcorrstat.correlate(ds.assign({k: ds[k].where(~lacks) for k in names}), **kw)
    res = xcorrstat.compare(ds, test=xcorrstat.Permutation(n_resamples=20, rng=0), **kw)
    got = res["correlation"].transpose(*common.dims)
    xr.testing.assert_equal(got.drop_attrs(), common.drop_attrs())
    xr.testing.assert_equal(got["n"], common["n"])
