"""All-pairs comparison: shared draws, corrections, significance clusters, Williams on data.

Every pair of ``compare()`` is checked against the two-metric test with the same
``rng`` (whose draws are themselves checked against explicit oracles in
test_permutation.py / test_paired_bootstrap.py): equal draws prove the draws are
shared by all pairs. Corrections and clusters are checked against plain textbook
implementations written out here.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as st
import xarray as xr
from conftest import make_scores
from oracles import assert_values_same

import xcorrstat
from xcorrstat._kernels.clusters import greedy_clusters
from xcorrstat._resampling.pairs import pair_permutation_draws

N = 60


def pairs_of(ds):
    names = [k for k in ds.data_vars if k != "human"]
    return [(a, b) for a in names for b in names if a != b]


def on_common_ground(ds, common_cells):
    """The data a two-metric test sees for compare(common_cells=...): with True every metric NaN where
    any metric lacks a score of a rated cell (written out here, the oracle of the common ground)."""
    if not common_cells:
        return ds
    names = [k for k in ds.data_vars if k != "human"]
    lacks = xr.concat([ds[k].isnull() for k in names], dim="m").any("m") & ds["human"].notnull()
    return ds.assign({k: ds[k].where(~lacks) for k in names})


# --------------------------------------------------------------------------- #
# shared draws: each pair equals the two-metric test with the same rng
# --------------------------------------------------------------------------- #
CASES = [
    ("system", "pearson", ("system", "input")),
    ("system", "kendall", "system"),
    ("input", "kendall", ("system", "input")),
    ("input", "spearman", "input"),
    ("global", "pearson", "system-xor-input"),
]


@pytest.mark.parametrize("common_cells", [False, True])
@pytest.mark.parametrize("level,method,permute", CASES)
def test_permutation_pairs_equal_two_metric_test(level, method, permute, common_cells):
    ds = make_scores(n_metrics=4, n_systems=6, n_inputs=7, seed=3, nan_frac=0.1, ties=True)
    res = ds.corrstat.compare(target="human", level=level, method=method,
                              test=xcorrstat.Permutation(permute, n_resamples=N, rng=11, keep_distribution=True),
                              alternative="two-sided", common_cells=common_cells)
    seen = on_common_ground(ds, common_cells)
    for a, b in pairs_of(ds):
        one = seen.corrstat.permutation_test(x=a, y=b, target="human", level=level, method=method,
                                           test=xcorrstat.Permutation(permute, n_resamples=N, rng=11,
                                                                      keep_distribution=True),
                                           alternative="two-sided")
        cell = res.sel(metric=a, other_metric=b)
        assert_values_same(cell["distribution"].values, one["distribution"].values, f"{a} vs {b}")
        assert_values_same(cell["delta"].values, one["delta"].values)
        assert_values_same(cell["pvalue"].values, one["pvalue"].values)


@pytest.mark.parametrize("alternative", ["greater", "less"])
def test_both_directions_from_one_set_of_draws(alternative):
    ds = make_scores(n_metrics=3, seed=5)
    res = ds.corrstat.compare(target="human", level="input", method="kendall",
                              test=xcorrstat.Permutation(n_resamples=N, rng=2), alternative=alternative)
    for a, b in pairs_of(ds):
        one = ds.corrstat.permutation_test(x=a, y=b, target="human", level="input", method="kendall",
                                           test=xcorrstat.Permutation(n_resamples=N, rng=2), alternative=alternative)
        assert_values_same(res["pvalue"].sel(metric=a, other_metric=b).values, one["pvalue"].values)


@pytest.mark.parametrize("common_cells", [False, True])
@pytest.mark.parametrize("resample", ["system", "input", ("system", "input")])
def test_bootstrap_pairs_equal_paired_bootstrap_test(resample, common_cells):
    ds = make_scores(n_metrics=3, seed=8, nan_frac=0.05)
    res = ds.corrstat.compare(target="human", level="system", method="spearman",
                              test=xcorrstat.Bootstrap(resample, n_resamples=N, rng=4, keep_distribution=True),
                              common_cells=common_cells)
    seen = on_common_ground(ds, common_cells)
    for a, b in pairs_of(ds):
        one = seen.corrstat.paired_bootstrap_test(x=a, y=b, target="human", level="system", method="spearman",
                                                test=xcorrstat.Bootstrap(resample, n_resamples=N, rng=4,
                                                                         keep_distribution=True))
        cell = res.sel(metric=a, other_metric=b)
        assert_values_same(cell["distribution"].values, one["distribution"].values)
        assert_values_same(cell["pvalue"].values, one["pvalue"].values)


@pytest.mark.parametrize("level", ["system", "global"])
def test_williams_pairs_equal_williams_test(level):
    ds = make_scores(n_metrics=4, seed=9)
    res = ds.corrstat.compare(target="human", test=xcorrstat.Williams(absolute=True), level=level,
                              alternative="two-sided")
    for a, b in pairs_of(ds):
        one = ds.corrstat.williams_test(x=a, y=b, target="human", level=level, alternative="two-sided",
                                        test=xcorrstat.Williams(absolute=True))
        assert_values_same(res["pvalue"].sel(metric=a, other_metric=b).values, one["pvalue"].values)


def test_pair_chunks_and_batches_do_not_change_draws():
    ds = make_scores(n_metrics=5, seed=1, nan_frac=0.1)
    x = xr.concat([ds[f"m{k}"] for k in range(5)], dim="metric")
    pi, pk = np.triu_indices(5, 1)
    kw = dict(level="input", method="kendall", variant="b", min_pairs=3, skipna=True)
    opts = dict(pairs=(pi, pk), seed=3, scheme="cells", n_resamples=70, kw=kw)
    ref = pair_permutation_draws(x, ds["human"], **opts).values
    for chunk, batch in ((1, 7), (3, 70), (10, 1)):
        got = pair_permutation_draws(x.chunk(), ds["human"], pair_chunk=chunk, batch=batch, **opts)
        assert got.chunks is not None
        np.testing.assert_array_equal(got.values, ref)


def test_dask_input_stays_lazy_and_equals_eager():
    ds = make_scores(n_metrics=3, seed=2)
    eager = ds.corrstat.compare(target="human", level="input", test=xcorrstat.Permutation(n_resamples=N, rng=1),
                                correction="holm")
    lazy = ds.chunk().corrstat.compare(target="human", level="input",
                                       test=xcorrstat.Permutation(n_resamples=N, rng=1), correction="holm")
    assert lazy["pvalue"].chunks is not None
    xr.testing.assert_allclose(lazy.compute(), eager, rtol=0, atol=1e-12)


def test_extra_dim_label_by_label():
    ds = make_scores(n_metrics=3, seed=4, extra=("lp", 2))
    both = ds.corrstat.compare(target="human", level="system", test=xcorrstat.Permutation(n_resamples=N, rng=6),
                               correction="holm")
    for lp in ds["lp"].values:
        one = ds.sel(lp=lp).corrstat.compare(target="human", level="system",
                                             test=xcorrstat.Permutation(n_resamples=N, rng=6), correction="holm")
        xr.testing.assert_allclose(both.sel(lp=lp), one, rtol=0, atol=1e-12)


# --------------------------------------------------------------------------- #
# corrections and flags, against textbook procedures written out here
# --------------------------------------------------------------------------- #
def holm(p):
    p = np.asarray(p, dtype=float)
    order = np.argsort(p)
    out = np.empty_like(p)
    running = 0.0
    for rank, k in enumerate(order):
        running = max(running, min(1.0, (p.size - rank) * p[k]))
        out[k] = running
    return out


def bonferroni(p):
    return np.minimum(1.0, np.asarray(p) * len(p))


def fdr_bh(p):
    p = np.asarray(p, dtype=float)
    order = np.argsort(p)[::-1]
    out = np.empty_like(p)
    running = 1.0
    for rank_from_top, k in enumerate(order):
        rank = p.size - rank_from_top
        running = min(running, p[k] * p.size / rank)
        out[k] = running
    return out


TEXTBOOK = {"holm": holm, "bonferroni": bonferroni, "fdr_bh": fdr_bh}


@pytest.mark.parametrize("alternative", ["greater", "two-sided"])
@pytest.mark.parametrize("family", ["row", "all"])
@pytest.mark.parametrize("correction", list(TEXTBOOK))
def test_corrections_follow_the_family(correction, family, alternative):
    ds = make_scores(n_metrics=5, seed=12)
    res = ds.corrstat.compare(target="human", level="input", test=xcorrstat.Permutation(n_resamples=N, rng=5),
                              correction=correction, family=family, alternative=alternative, alpha=0.2)
    p = res["pvalue"].values
    m = p.shape[0]
    expected = np.full_like(p, np.nan)
    if family == "row":
        for i in range(m):
            others = [k for k in range(m) if k != i]
            expected[i, others] = TEXTBOOK[correction](p[i, others])
    elif alternative == "two-sided":
        iu = np.triu_indices(m, 1)
        adj = TEXTBOOK[correction](p[iu])
        expected[iu] = adj
        expected[iu[1], iu[0]] = adj
    else:
        off = ~np.eye(m, dtype=bool)
        expected[off] = TEXTBOOK[correction](p[off])
    np.testing.assert_allclose(res["pvalue_corrected"].values, expected, rtol=0, atol=1e-15, equal_nan=True)
    np.testing.assert_array_equal(res["significant"].values, np.nan_to_num(expected, nan=1.0) <= 0.2)
    assert res.attrs["correction"] == correction and res.attrs["family"] == family


def test_no_correction_keeps_pvalues_and_diagonal_is_empty():
    ds = make_scores(n_metrics=3, seed=13)
    res = ds.corrstat.compare(target="human", test=xcorrstat.Permutation(n_resamples=N, rng=0), correction=None)
    np.testing.assert_array_equal(res["pvalue_corrected"].values, res["pvalue"].values)
    assert np.isnan(np.diag(res["pvalue"].values)).all() and not np.diag(res["significant"].values).any()
    assert res.attrs["correction"] == "none"
    r = xcorrstat.correlate(ds, target="human", level="system")
    np.testing.assert_allclose(res["delta"].values, r.values[:, None] - r.values[None, :], atol=1e-15)


# --------------------------------------------------------------------------- #
# clusters
# --------------------------------------------------------------------------- #
def clusters_oracle(r, better):
    """The greedy rule spelled out: walk down the ranking, open a cluster when a member beats the newcomer."""
    order = sorted((k for k in range(len(r)) if not np.isnan(r[k])), key=lambda k: (-r[k], k))
    out = [0] * len(r)
    current, members = 0, []
    for k in order:
        if not members or any(better[j][k] for j in members):
            current, members = current + 1, []
        members.append(k)
        out[k] = current
    return out


def test_greedy_clusters_match_rule_on_random_cases():
    rng = np.random.default_rng(0)
    for _ in range(200):
        m = int(rng.integers(1, 9))
        r = rng.normal(size=m)
        r[rng.random(m) < 0.1] = np.nan
        better = rng.random((m, m)) < 0.3
        got = greedy_clusters(r, better)
        assert got.tolist() == clusters_oracle(r, better)
        for c in set(got.tolist()) - {0}:  # no member significantly beats another member
            members = np.flatnonzero(got == c)
            assert not better[np.ix_(members, members)][np.subtract.outer(r[members], r[members]) > 0].any()


def test_clusters_of_compare_follow_its_flags():
    ds = xcorrstat.datasets.summeval()
    metrics = ["qa_eval_f1", "rouge_2_f1", "meteor", "bertscore_recall", "rouge_l_f1"]
    res = ds.corrstat.compare(target="expert_relevance", metrics=metrics, test="williams", level="system")
    expected = clusters_oracle(res["correlation"].values, res["significant"].values)
    assert res["cluster"].values.tolist() == expected
    assert res["cluster"].min() == 1


def test_greedy_clusters_bad_shapes():
    with pytest.raises(ValueError, match="correlation must be"):
        greedy_clusters([0.1, 0.2], [[True]])


# --------------------------------------------------------------------------- #
# Williams on SummEval (issue figure: p ~ .034) against the formula written out
# --------------------------------------------------------------------------- #
def test_williams_summeval_qaeval_vs_rouge2():
    ds = xcorrstat.datasets.summeval()
    res = ds.corrstat.williams_test(x="qa_eval_f1", y="rouge_2_f1", target="expert_relevance", level="system")
    df = ds[["qa_eval_f1", "rouge_2_f1", "expert_relevance"]].to_dataframe().groupby("system").mean()
    r12 = st.pearsonr(df["qa_eval_f1"], df["expert_relevance"])[0]
    r13 = st.pearsonr(df["rouge_2_f1"], df["expert_relevance"])[0]
    r23 = st.pearsonr(df["qa_eval_f1"], df["rouge_2_f1"])[0]
    n = len(df)
    det = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
    rbar = (r12 + r13) / 2
    t = (r12 - r13) * np.sqrt((n - 1) * (1 + r23) / (2 * (n - 1) / (n - 3) * det + rbar**2 * (1 - r23) ** 3))
    assert float(res["statistic"]) == pytest.approx(t, abs=1e-12)
    assert float(res["pvalue"]) == pytest.approx(st.t.sf(t, n - 3), abs=1e-12)
    assert round(float(res["pvalue"]), 3) == 0.034
    assert int(res["n"]) == 16


def test_williams_uses_units_where_all_three_are_present():
    ds = make_scores(n_metrics=2, n_systems=8, n_inputs=6, seed=21, nan_frac=0.15)
    res = ds.corrstat.williams_test(x="m0", y="m1", target="human", level="global", alternative="two-sided")
    x, y, z = (ds[k].values.ravel() for k in ("m0", "m1", "human"))
    keep = ~(np.isnan(x) | np.isnan(y) | np.isnan(z))
    assert int(res["n"]) == keep.sum()
    assert float(res["r_xy"]) == pytest.approx(st.pearsonr(x[keep], y[keep])[0], abs=1e-12)
    assert float(res["r_xz"]) == pytest.approx(st.pearsonr(x[keep], z[keep])[0], abs=1e-12)


# --------------------------------------------------------------------------- #
# bad input
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize(
    "change,error,match",
    [
        (dict(test="t-test"), ValueError, "test must be"),
        (dict(family="col"), ValueError, "family must be"),
        (dict(correction="sidak"), ValueError, "correction must be"),
        (dict(alpha=1.5), ValueError, "alpha must be"),
        (dict(metrics=["m0"]), ValueError, "at least two metrics"),
        (dict(test="williams", level="input"), ValueError, "level='input' is not supported; it supports level 'system' or 'global'"),
        (dict(test="williams", method="kendall"), ValueError, "method='kendall' is not supported"),
        (dict(target=[]), ValueError, "target must be a score name or a non-empty list"),
        (dict(test=xcorrstat.Permutation("lp", n_resamples=10, rng=0)), ValueError, "permute must be"),
        (dict(test=xcorrstat.Bootstrap("lp", n_resamples=10, rng=0)), ValueError, "resample must be"),
    ],
)
def test_bad_arguments(change, error, match):
    ds = make_scores(n_metrics=3)
    kw = dict(target="human", test=xcorrstat.Permutation(n_resamples=10, rng=0))
    kw.update(change)
    with pytest.raises(error, match=match):
        ds.corrstat.compare(**kw)


@pytest.mark.parametrize("level", ["system", "global"])
def test_williams_matrix_blocked_by_the_budget_gives_the_same_bits_and_each_pairs_test(monkeypatch, level):
    ds = make_scores(n_metrics=5, n_systems=7, n_inputs=9, seed=4, nan_frac=0.1)
    whole = ds.corrstat.compare(target="human", level=level, method="pearson", test="williams")
    from xcorrstat._significance import allpairs
    monkeypatch.setattr(allpairs, "block_elems", lambda: 1)  # one metric's row of pairs at a time
    blocked = ds.corrstat.compare(target="human", level=level, method="pearson", test="williams")
    np.testing.assert_array_equal(blocked["pvalue"].values, whole["pvalue"].values)
    full = make_scores(n_metrics=5, n_systems=7, n_inputs=9, seed=4)  # no missing cell: every pair's own ground
    blocked = full.corrstat.compare(target="human", level=level, method="pearson", test="williams")
    for a, b in [("m0", "m1"), ("m3", "m2")]:
        one = full.corrstat.williams_test(x=a, y=b, target="human", level=level, method="pearson")
        assert_values_same(blocked["pvalue"].sel(metric=a, other_metric=b).values, one["pvalue"].values)
