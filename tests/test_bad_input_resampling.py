"""Bad arguments to the resampling API: each is refused with its exception type and a
message that names the argument (and says what was expected)."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr
from conftest import make_scores

import xcorrstat
from xcorrstat.agreement import leaderboard_agreement
from xcorrstat.diagnostics import ci_coverage, power_analysis
from xcorrstat._validation import check_batch

DS = make_scores(n_metrics=3, n_systems=5, n_inputs=6, seed=3)
BASE = dict(target="human")
DRAWS = dict(n_resamples=10, rng=0)
PAIR = dict(x="m0", y="m1", **BASE)
# the keywords each settings object takes (the rest stay flat in the call)
PERMUTATION_KEYS = ("permute", "n_resamples", "rng", "swap", "standardise", "epsilon", "pvalue",
                    "keep_distribution", "early_stop", "risk", "max_resamples")
BOOTSTRAP_KEYS = ("resample", "n_resamples", "rng", "pvalue", "keep_distribution", "risk", "max_resamples")
INTERVAL_KEYS = ("resample", "n_resamples", "rng", "keep_distribution")


def _settings(cls, keys, kw):
    return cls(**{**DRAWS, **{k: kw.pop(k) for k in keys if k in kw}})


def boot(**kw):
    kw = {**BASE, **kw}
    return xcorrstat.bootstrap(DS, resample=_settings(xcorrstat.Bootstrap, INTERVAL_KEYS, kw), **kw)


def perm(**kw):
    kw = {**PAIR, **kw}
    return xcorrstat.permutation_test(DS, test=_settings(xcorrstat.Permutation, PERMUTATION_KEYS, kw), **kw)


def paired(**kw):
    kw = {**PAIR, **kw}
    return xcorrstat.paired_bootstrap_test(DS, test=_settings(xcorrstat.Bootstrap, BOOTSTRAP_KEYS, kw), **kw)


def cmp(test="permutation", **kw):
    kw = {**BASE, **kw}
    if test == "permutation":
        test = _settings(xcorrstat.Permutation, PERMUTATION_KEYS, kw)
    elif test == "bootstrap":
        test = _settings(xcorrstat.Bootstrap, BOOTSTRAP_KEYS, kw)
    return xcorrstat.compare(DS, test=test, **kw)


def board(**kw):
    da = xr.DataArray(np.arange(24.0).reshape(2, 3, 4), dims=("setting", "strategy", "dataset"))
    return leaderboard_agreement(da, competitor="strategy", condition="dataset", between="setting",
                                 **{"n_resamples": 10, "rng": 0, **kw})


def batched(b, call):
    """batch is set_options(batch=...): how the work runs, never a parameter."""
    with xcorrstat.set_options(batch=b):
        return call()


BATCH_WORDS = "batch must be a positive integer"
BAD_BATCHES = [0, -5, 1.5, True, "7", np.float64(3.0)]
BATCH_CALLS = {
    "bootstrap": lambda b: batched(b, lambda: boot()),
    "permutation_test": lambda b: batched(b, lambda: perm()),
    "paired_bootstrap_test": lambda b: batched(b, lambda: paired()),
    "compare-permutation": lambda b: batched(b, lambda: cmp()),
    "compare-bootstrap": lambda b: batched(b, lambda: cmp("bootstrap")),
    "compare-williams": lambda b: batched(b, lambda: cmp("williams")),
    "mean_ci": lambda b: batched(b, lambda: xcorrstat.mean_ci(DS, n_resamples=10)),
    "paired_difference_ci": lambda b: batched(b, lambda: xcorrstat.paired_difference_ci(
        DS, system_a="S0", system_b="S1", n_resamples=10)),
    "leaderboard_agreement": lambda b: batched(b, lambda: board()),
    "power_analysis": lambda b: batched(b, lambda: power_analysis(DS, target="human", metric="m0", n_trials=2,
                                                                  n_resamples=10)),
}


@pytest.mark.parametrize("value", BAD_BATCHES, ids=repr)
@pytest.mark.parametrize("name", list(BATCH_CALLS))
def test_every_resampling_function_refuses_a_bad_batch(name, value):
    with pytest.raises(ValueError, match=BATCH_WORDS) as info:
        BATCH_CALLS[name](value)
    assert repr(value)[:20] in str(info.value)


def test_a_huge_bad_batch_is_cut_in_the_message():
    with pytest.raises(ValueError, match=BATCH_WORDS) as info:
        check_batch("x" * 10_000)
    assert len(str(info.value)) < 200 and str(info.value).endswith("...")


@pytest.mark.parametrize("call, error, words", [
    # n_resamples, confidence level
    (lambda: boot(n_resamples=0), ValueError, "n_resamples must be a positive integer, got 0"),
    (lambda: boot(n_resamples=1.5), ValueError, "n_resamples must be a positive integer, got 1.5"),
    (lambda: perm(n_resamples=True), ValueError, "n_resamples must be a positive integer, got True"),
    (lambda: cmp(n_resamples=-1), ValueError, "n_resamples must be a positive integer or 'auto', got -1"),
    (lambda: boot(confidence_level=95), ValueError, "confidence_level must be a number strictly between 0 and 1"),
    (lambda: paired(confidence_level=1), ValueError, "confidence_level must be a number strictly between"),
    (lambda: xcorrstat.mean_ci(DS, n_resamples=10, confidence_level=0), ValueError, "confidence_level must be"),
    # rng
    (lambda: boot(rng=-1), ValueError, "rng must be a non-negative integer seed, got -1"),
    (lambda: boot(rng="0"), TypeError, "rng must be None, an int seed, a numpy SeedSequence or Generator, got str"),
    (lambda: perm(rng=1.5), TypeError, "rng must be None, an int seed.*got float"),
    (lambda: cmp(rng=True), TypeError, "rng must be None.*got bool"),
    (lambda: boot(rng=np.random.SeedSequence(0).spawn(1)[0]), ValueError, "rng: pass a root SeedSequence"),
    # resample / permute spellings
    (lambda: boot(resample="lp"), ValueError, "resample must be 'system', 'input' or"),
    (lambda: boot(resample=()), ValueError, "resample must name at least one dim"),
    (lambda: boot(resample=("system", "system")), ValueError, "resample names a dim twice"),
    (lambda: paired(resample=3), ValueError, "resample must be 'system', 'input' or .*got 3"),
    (lambda: perm(permute="cell"), ValueError, "permute must be 'system' \\(PERM-SYSTEMS\\)"),
    (lambda: cmp(permute=("system", "lp")), ValueError, "permute must be"),
    # level / method / variant / ci / average choices
    (lambda: boot(level="segment"), ValueError, "level must be one of .*got 'segment'"),
    (lambda: boot(level=[]), ValueError, "level must be one of .* or a list of them, got an empty list"),
    (lambda: boot(level=["system", "system"]), ValueError, "level names a level twice"),
    (lambda: boot(level=["system", "doc"]), ValueError, "level must be one of .*got 'doc'"),
    (lambda: perm(level="document"), ValueError, "level must be one of"),
    (lambda: boot(method="cosine"), ValueError, "method must be one of .*got 'cosine'"),
    (lambda: boot(method="kendall", variant="z"), ValueError, "variant must be one of .*Kendall's variant"),
    (lambda: boot(ci="normal"), ValueError, "ci must be one of .*got 'normal'"),
    (lambda: boot(ci="bca"), ValueError, "ci='bca' needs exactly one resampled dim"),
    (lambda: boot(average="micro"), ValueError, "average must be one of"),
    (lambda: boot(min_pairs=1), ValueError, "min_pairs must be an integer >= 2, got 1"),
    (lambda: boot(epsilon="auto"), ValueError, "epsilon must be a number >= 0 or 'calibrate', got 'auto'"),
    (lambda: boot(epsilon="calibrate"), ValueError,
     r"bootstrap\(epsilon='calibrate'\): method='pearson' is not supported.*tie calibration"),
    (lambda: boot(epsilon=-0.1, method="kendall"), ValueError, "epsilon must be a finite number >= 0"),
    # alternative / pvalue / early stopping
    (lambda: perm(alternative="bigger"), ValueError, "alternative must be one of .*got 'bigger'"),
    (lambda: paired(alternative="two_sided"), ValueError, "alternative must be one of"),
    (lambda: cmp(alternative=None), ValueError, "alternative must be one of"),
    (lambda: perm(pvalue="exact"), ValueError, "pvalue must be one of .*got 'exact'"),
    (lambda: perm(early_stop=0), ValueError, "early_stop must be a number strictly between 0 and 1 \\(or None: off\\)"),
    (lambda: perm(early_stop=1.5), ValueError, "early_stop must be a number strictly between 0 and 1"),
    (lambda: perm(early_stop=True), ValueError, "early_stop must be a number"),
    (lambda: perm(early_stop=0.05, risk=0), ValueError, "risk must be a number strictly between 0 and 1, got 0"),
    # metric and target names
    (lambda: perm(x="m0", y="m0"), ValueError, "x and y must be two different metrics, got x=y='m0'"),
    (lambda: paired(x="m2", y="m2"), ValueError, "x and y must be two different metrics"),
    (lambda: perm(x="zz"), ValueError, "x='zz' is not a score in the data"),
    (lambda: paired(y="zz"), ValueError, "y='zz' is not a score in the data"),
    (lambda: perm(x=["m0"]), TypeError, "x must be one score name, got \\['m0'\\]"),
    (lambda: paired(x=["m0"]), TypeError, "x must be one score name"),
    (lambda: perm(target=["human"]), TypeError, "target must be one score name"),
    (lambda: boot(target="nope"), ValueError, "target='nope' is not a score in the data"),
    (lambda: boot(metrics=["nope"]), ValueError, "metrics='nope' is not a score in the data"),
    (lambda: cmp(metrics=["m0"]), ValueError, "metrics must name at least two metrics to compare, got \\['m0'\\]"),
    (lambda: cmp(target=[]), ValueError, "target must be a score name or a non-empty list"),
    (lambda: cmp(target=["human", "human"]), ValueError, "target names a score twice"),
    (lambda: cmp(target=["human", 3]), ValueError, "target must be a score name or a non-empty list"),
    # compare options
    (lambda: cmp(test="williams", level="input"), ValueError,
     r"compare\(test='williams'\): level='input' is not supported; it supports level 'system' or 'global'"),
    (lambda: cmp(test="wilcoxon"), ValueError, "test must be one of .*got 'wilcoxon'"),
    (lambda: cmp(correction="sidak"), ValueError, "correction must be one of .* or None, got 'sidak'"),
    (lambda: cmp(family="pairs"), ValueError, "family must be one of"),
    (lambda: cmp(alpha=0), ValueError, "alpha must be a number strictly between 0 and 1"),
    (lambda: paired(skipna="yes"), TypeError, "skipna must be True or False"),
    # mean-score intervals
    (lambda: xcorrstat.mean_ci(DS, n_resamples=10, dim="doc"), ValueError, "dim='doc' is not a dim of the data"),
    (lambda: xcorrstat.paired_difference_ci(DS, system_a="S0", system_b="S0", n_resamples=10), ValueError,
     "system_a and system_b must differ"),
    (lambda: xcorrstat.paired_difference_ci(DS, system_a="S0", system_b="S9", n_resamples=10), ValueError,
     "system_b='S9' is not a system in the data"),
    # diagnostics
    (lambda: xcorrstat.set_options(trial_batch=0), ValueError,
     "set_options: trial_batch must be a positive integer \\(trials per task\\)"),
    (lambda: ci_coverage(DS, target="human", metrics="m0", n_trials=0), ValueError,
     "n_trials must be a positive integer, got 0"),
    (lambda: ci_coverage(DS, target="human", metrics="m0", methods=["jackknife"]), ValueError,
     "methods must be one of .*got 'jackknife'"),
    (lambda: ci_coverage(DS, target="human", metrics="m0", level=[]), ValueError, "level must be one of"),
    (lambda: power_analysis(DS, target="human", metric="m0", tests=["t-test"]), ValueError,
     "tests must be one of .*got 't-test'"),
    (lambda: power_analysis(DS, target="human", metric="zz"), ValueError, "metric='zz' is not a variable"),
    (lambda: power_analysis(DS, target="human", metric="m0", trial_batch=2), TypeError,
     "unexpected keyword argument 'trial_batch'"),
    (lambda: power_analysis(DS, target="human", metric="m0", n_inputs=99), ValueError,
     "n_inputs=99 is more than the 6 inputs"),
    (lambda: xcorrstat.aggregate_tasks(DS), ValueError,
     "result must come from compare\\(..., keep_distribution=True\\)"),
    (lambda: board(n_resamples=0), ValueError, "n_resamples must be a positive integer"),
], ids=lambda v: None)
def test_bad_argument_is_named(call, error, words):
    with pytest.raises(error, match=words):
        call()
