"""Options that refine some statistics only (``variant``, ``epsilon``, ``average``, ``complete_inputs``)
are refused, with the capability table's one message, where nothing they refine is computed -- in every
public function that takes them -- and accepted where something is (lists of levels or methods
included). Their defaults are accepted everywhere."""

from __future__ import annotations

import pytest

import xcorrstat
from xcorrstat import Bootstrap, Permutation
from xcorrstat._capabilities import REFINEMENTS


@pytest.fixture(scope="module")
def ds(summeval):
    return summeval[["rouge_1_f1", "meteor", "expert_relevance"]].isel(input=slice(0, 30))


T = "expert_relevance"
CALLS = {
    "correlate": lambda ds, **kw: xcorrstat.correlate(ds, target=T, **kw),
    "bootstrap": lambda ds, **kw: xcorrstat.bootstrap(ds, target=T, resample=Bootstrap("input", n_resamples=5, rng=0),
                                                      **kw),
    "fisher": lambda ds, **kw: xcorrstat.fisher(ds, target=T, **kw),
    "permutation_test": lambda ds, **kw: xcorrstat.permutation_test(
        ds, x="rouge_1_f1", y="meteor", target=T, test=Permutation(n_resamples=5, rng=0), **kw),
    "paired_bootstrap_test": lambda ds, **kw: xcorrstat.paired_bootstrap_test(
        ds, x="rouge_1_f1", y="meteor", target=T, test=Bootstrap(n_resamples=5, rng=0), **kw),
    "compare": lambda ds, **kw: xcorrstat.compare(ds, target=T, test=Permutation(n_resamples=5, rng=0), **kw),
    "agreement.matrix": lambda ds, **kw: xcorrstat.agreement.matrix(ds, **kw),
}
#: (function, option, value, a call where it refines nothing, a call where it does)
CASES = [
    ("correlate", "variant", "c", {"method": "pearson"}, {"method": ["pearson", "kendall"]}),
    ("correlate", "average", "weighted", {"level": "global"}, {"level": ["global", "input"]}),
    ("correlate", "complete_inputs", True, {"level": "input"}, {"level": "system"}),
    ("bootstrap", "variant", "c", {"method": "spearman"}, {"method": "kendall"}),
    ("bootstrap", "average", "weighted", {"level": "system"}, {"level": "within_system"}),
    ("bootstrap", "complete_inputs", True, {"level": "global"}, {"level": "system"}),
    ("fisher", "variant", "c", {"method": "pearson"}, {"method": "kendall"}),
    ("fisher", "complete_inputs", True, {"level": "input"}, {"level": "system"}),
    ("permutation_test", "variant", "a", {"method": "pearson"}, {"method": "kendall"}),
    ("permutation_test", "average", "pairs", {"level": "system"}, {"level": "input"}),
    ("paired_bootstrap_test", "variant", "c", {"method": "pearson"}, {"method": "kendall"}),
    ("compare", "variant", "c", {"method": "spearman"}, {"method": "kendall"}),
    ("compare", "average", "weighted", {"level": "global"}, {"level": "input"}),
    ("agreement.matrix", "variant", "c", {"method": "pearson", "level": "system"},
     {"method": "kendall", "level": "system"}),
    ("agreement.matrix", "complete_inputs", True, {"level": "input"}, {"level": "system"}),
]


@pytest.mark.parametrize(("function", "option", "value", "refused", "accepted"), CASES,
                         ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_refused_where_it_refines_nothing(ds, function, option, value, refused, accepted):
    ref = REFINEMENTS[option]
    with pytest.raises(ValueError, match=rf"^{function}: {option}={value!r} {ref.what}, and {ref.argument}=.* "
                                         rf"computes none; leave {option} at its default"):
        CALLS[function](ds, **refused, **{option: value})
    assert CALLS[function](ds, **accepted, **{option: value}) is not None
    assert CALLS[function](ds, **refused, **{option: ref.default}) is not None  # the default: accepted


def test_report_refuses_a_variant_without_kendall(ds, tmp_path):
    with pytest.raises(ValueError, match=r"^report: variant='c' chooses among Kendall's tau variants"):
        xcorrstat.report(ds, target=T, method="pearson", variant="c", n_resamples=5, rng=0)


def test_family_without_a_correction_is_refused(ds):
    """``family`` chooses what a correction adjusts together: with ``correction=None`` it is refused."""
    with pytest.raises(ValueError, match=r"^family='all' chooses the p-values a correction adjusts together"):
        xcorrstat.compare(ds, target=T, test="williams", correction=None, family="all")
    assert xcorrstat.compare(ds, target=T, test="williams", correction="holm", family="all") is not None
    assert xcorrstat.compare(ds, target=T, test="williams", correction=None, family="row") is not None
