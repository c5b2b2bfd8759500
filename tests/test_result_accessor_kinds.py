"""Every kind of result's ``.corrstat`` offers exactly the methods that apply to it, and each works.

The kinds and what applies to each are written out here (issue-level vocabulary, not read from the
code); the numbers of the tables are read back from the LaTeX and Markdown text and compared with
scipy's coefficients computed here.
"""

from __future__ import annotations

import pathlib
import re

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import scipy.stats  # noqa: E402
import xarray as xr  # noqa: E402

import xcorrstat  # noqa: E402
from xcorrstat import ResultAccessor  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
METRICS = ["meteor", "rouge_2_f1", "qa_eval_f1", "bertscore_f1"]
TARGET = "expert_relevance"
ALL = {"tidy", "ranked_frame", "to_latex", "to_markdown", "plot"}
TABLES = {"ranked_frame", "to_latex", "to_markdown"}


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _two_lp(ds: xr.Dataset) -> xr.Dataset:
    """SummEval twice along a language-pair dim, the second with the metrics' order changed."""
    other = ds.assign(meteor=ds["rouge_2_f1"] * 2.0, rouge_2_f1=ds["meteor"])
    return xr.concat([ds, other], dim="lp").assign_coords(lp=["en-de", "zh-en"])


def _tasks(ds: xr.Dataset, keep: bool = False) -> xr.Dataset:
    """A compare result over two tasks (one ranked list per task)."""
    two = xr.concat([ds, ds], dim="task").assign_coords(task=["a", "b"])
    return two.corrstat.compare(target=TARGET, metrics=METRICS[:3],
                                test=xcorrstat.Permutation(n_resamples=50, rng=0, keep_distribution=keep))


#: Each kind of result, and exactly what its accessor offers.
KINDS = {
    "correlate": (lambda ds: ds.corrstat.correlate(target=TARGET, metrics=METRICS, method="kendall"), ALL),
    "correlate_levels": (lambda ds: ds.corrstat.correlate(target=TARGET, metrics=METRICS, level=["system", "input"],
                                                          method=["kendall", "pearson"]), ALL),
    "correlate_lp": (lambda ds: _two_lp(ds).corrstat.correlate(target=TARGET, metrics=METRICS), ALL),
    "bootstrap": (lambda ds: ds.corrstat.bootstrap(target=TARGET, metrics=METRICS,
                                                   resample=xcorrstat.Bootstrap(n_resamples=100, rng=0)), ALL),
    "bootstrap_lp": (lambda ds: _two_lp(ds).corrstat.bootstrap(
        target=TARGET, metrics=METRICS, resample=xcorrstat.Bootstrap(n_resamples=100, rng=0)), ALL),
    "fisher": (lambda ds: ds.corrstat.fisher(target=TARGET, metrics=METRICS, method="kendall"), ALL),
    "pairwise_difference_pearson": (lambda ds: ds.corrstat.pairwise_difference_pearson(target=TARGET, metrics=METRICS), ALL),
    "compare": (lambda ds: ds.corrstat.compare(target=TARGET, metrics=METRICS,
                                               test=xcorrstat.Permutation(n_resamples=100, rng=0)), ALL),
    "compare_tasks": (lambda ds: _tasks(ds), {"tidy", "plot"}),
    "aggregate_tasks": (lambda ds: xcorrstat.aggregate_tasks(_tasks(ds, keep=True)), ALL),
    "report_intervals": (lambda ds: xcorrstat.report(ds, target=TARGET, metrics=METRICS[:3], n_resamples=50,
                                                     rng=0).intervals, {"tidy", "plot"}),
    "report_level": (lambda ds: xcorrstat.report(ds, target=TARGET, metrics=METRICS[:3], n_resamples=50,
                                                 rng=0).intervals.sel(level="input"), ALL),
    "permutation_test": (lambda ds: ds.corrstat.permutation_test(
        x="meteor", y="rouge_2_f1", target=TARGET, test=xcorrstat.Permutation(n_resamples=100, rng=0)), {"tidy"}),
    "permutation_test_kept": (lambda ds: ds.corrstat.permutation_test(
        x="meteor", y="rouge_2_f1", target=TARGET,
        test=xcorrstat.Permutation(n_resamples=100, rng=0, keep_distribution=True)), {"tidy", "plot"}),
    "paired_bootstrap_test": (lambda ds: ds.corrstat.paired_bootstrap_test(
        x="meteor", y="rouge_2_f1", target=TARGET, test=xcorrstat.Bootstrap(n_resamples=100, rng=0)), {"tidy"}),
    "williams_test": (lambda ds: ds.corrstat.williams_test(x="meteor", y="rouge_2_f1", target=TARGET), {"tidy"}),
    "mean_ci": (lambda ds: ds.corrstat.mean_ci(metrics=METRICS, n_resamples=100, rng=0), {"tidy"}),
    "pairwise_accuracy": (lambda ds: ds.corrstat.pairwise_accuracy(target=TARGET, metrics=METRICS), {"tidy"}),
    "normality": (lambda ds: ds[METRICS].corrstat.normality(), {"tidy"}),
    "matrix": (lambda ds: ds["meteor"].corrstat.matrix(over="system", along="input"), {"tidy", "plot"}),
    "jaccard": (lambda ds: (ds["meteor"] > 0.2).corrstat.jaccard(over="system", item="input"), {"tidy", "plot"}),
    "leaderboard": (lambda ds: ds["meteor"].corrstat.leaderboard(competitor="system", condition="input"),
                    {"tidy"}),
}


@pytest.fixture(scope="module")
def results(summeval):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # left-out human-like columns, few draws
        return {name: make(summeval) for name, (make, _) in KINDS.items()}


def _public(obj) -> set[str]:
    return {n for n in dir(obj) if not n.startswith("_")}


def _call(acc: ResultAccessor, name: str):
    return getattr(acc, name)()


@pytest.mark.parametrize("kind", list(KINDS))
def test_dir_offers_exactly_what_applies_and_each_works(results, kind):
    result, expected = results[kind], KINDS[kind][1]
    acc = result.corrstat
    assert type(acc) is ResultAccessor
    assert _public(acc) == expected
    shown = repr(acc)
    assert all(name in shown for name in expected)
    assert not any(re.search(rf"\b{name}\b", shown) for name in ALL - expected), shown
    for name in expected:
        assert hasattr(acc, name)
        out = _call(acc, name)
        assert out is not None, name
        if name in ("to_latex", "to_markdown"):
            assert isinstance(out, str) and out
    for name in ALL - expected:
        assert not hasattr(acc, name)


@pytest.mark.parametrize("kind", [k for k, (_, offers) in KINDS.items() if offers != ALL])
def test_a_method_not_offered_says_what_the_result_offers(results, kind):
    acc = results[kind].corrstat
    missing = sorted(ALL - KINDS[kind][1])[0]
    with pytest.raises(AttributeError) as err:
        getattr(acc, missing)
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith(f".corrstat.{missing} does not apply to ")
    assert message.endswith("this result offers " + ", ".join(
        f"{n}()" for n in ["tidy", "ranked_frame", "to_latex", "to_markdown", "plot"] if n in KINDS[kind][1]))


def test_several_ranked_lists_say_how_to_get_one(results):
    with pytest.raises(AttributeError, match=r"select one first for its tables, e\.g\. result\.sel\(task=\.\.\.\)"):
        results["compare_tasks"].corrstat.to_latex  # noqa: B018
    assert "| Rank |" in results["compare_tasks"].sel(task="a").corrstat.to_markdown()


def test_a_misspelt_name_and_the_other_role_keep_their_messages(results):
    acc = results["williams_test"].corrstat
    with pytest.raises(AttributeError, match="has no attribute 'to_latx'"):
        acc.to_latx  # noqa: B018
    with pytest.raises(AttributeError, match="bootstrap analyses scores"):
        acc.bootstrap  # noqa: B018


def test_the_class_keeps_every_method_for_type_checkers():
    # the run-time dir() of an object is exact; the class lists every method (so mypy sees them)
    assert {n for n in vars(ResultAccessor) if not n.startswith("_")} == ALL


# --------------------------------------------------------------- the tables' numbers


def _system_kendall(ds: xr.Dataset, metric: str) -> float:
    """Kendall tau-b of per-system means with scipy: the oracle of a system-level correlation."""
    x = ds[metric].mean("input").values
    z = ds[TARGET].mean("input").values
    return float(scipy.stats.kendalltau(x, z).statistic)


def _markdown_body(text: str) -> list[list[str]]:
    rows = [[c.strip() for c in line[1:-1].split(" | ")] for line in text.splitlines() if line.startswith("|")]
    return rows[2:]


def _latex_body(text: str) -> list[list[str]]:
    lines = text.splitlines()
    body = lines[lines.index(r"\midrule") + 1: lines.index(r"\bottomrule")]
    return [[c.strip() for c in line.removesuffix(r"\\").split(" & ")] for line in body]


def test_latex_and_markdown_numbers_are_scipys_kendall(summeval, results):
    acc = results["correlate"].corrstat
    oracle = {m: _system_kendall(summeval, m) for m in METRICS}
    order = sorted(METRICS, key=lambda m: -oracle[m])
    for body, unescape in ((_latex_body(acc.to_latex(digits=6)), lambda s: s.replace(r"\_", "_")),
                           (_markdown_body(acc.to_markdown(digits=6)), lambda s: s)):
        assert [unescape(row[1]) for row in body] == order
        assert [int(row[0]) for row in body] == [1, 2, 3, 4]
        for row in body:
            assert float(row[2]) == pytest.approx(oracle[unescape(row[1])], abs=5e-7)
    frame = acc.ranked_frame()
    assert frame.columns.tolist() == ["rank", "metric", "correlation", "n"]
    np.testing.assert_allclose(frame["correlation"], [oracle[m] for m in order], rtol=1e-12)
    assert frame["n"].tolist() == [16] * 4


def test_latex_heading_escapes_and_states_what_was_computed(results):
    latex = results["bootstrap"].corrstat.to_latex()
    caption = next(line for line in latex.splitlines() if line.startswith(r"\caption{"))
    assert caption == (r"\caption{Pearson correlation with expert\_relevance, system level (n = 16 systems); "
                       r"95\% percentile bootstrap intervals (systems and inputs resampled, 100 draws, seed 0)}")
    assert r"\toprule" in latex and r"\bottomrule" in latex
    assert latex.splitlines()[5] == r"Rank & Metric & Correlation & 95\% CI \\"
    kendall = results["correlate"].corrstat.to_markdown().splitlines()[0]
    assert kendall == "**Kendall tau-b correlation with expert_relevance, system level (n = 16 systems)**"


def test_interval_tables_equal_the_result(results):
    boot = results["bootstrap"]
    frame = boot.corrstat.ranked_frame()
    assert frame.columns.tolist() == ["rank", "metric", "correlation", "n", "low", "high"]
    for row in frame.itertuples():
        one = boot.sel(metric=row.metric)
        assert (row.correlation, row.low, row.high) == (float(one["correlation"]), float(one["low"]),
                                                          float(one["high"]))
    body = _markdown_body(boot.corrstat.to_markdown(digits=4))
    for row, (_, expected) in zip(body, frame.iterrows()):
        assert row[3] == f"[{expected['low']:.4f}, {expected['high']:.4f}]"


def test_ties_share_a_rank_and_nan_comes_last_shown_as_undefined(summeval):
    ds = summeval.assign(twin=summeval["meteor"], flat=summeval["meteor"] * 0.0)
    r = ds.corrstat.correlate(target=TARGET, metrics=["flat", "rouge_2_f1", "twin", "meteor", "qa_eval_f1"],
                              method="kendall")
    frame = r.corrstat.ranked_frame()
    assert frame["metric"].tolist() == ["qa_eval_f1", "twin", "meteor", "rouge_2_f1", "flat"]
    assert frame["rank"].tolist()[:4] == [1, 2, 2, 4]
    assert frame["rank"].isna().tolist() == [False] * 4 + [True]
    assert np.isnan(frame["correlation"].iloc[-1])
    md = _markdown_body(r.corrstat.to_markdown())
    assert md[-1] == ["-", "flat", "-"]
    assert _latex_body(r.corrstat.to_latex())[-1] == ["-", "flat", "--"]


def test_extra_dims_give_a_column_per_label_ranked_by_the_first(summeval, results):
    r = results["correlate_lp"]
    frame = r.corrstat.ranked_frame()
    assert frame.columns.tolist() == ["rank", "metric", "correlation (lp = en-de)", "n (lp = en-de)",
                                      "correlation (lp = zh-en)", "n (lp = zh-en)"]
    first = r.sel(lp="en-de")
    assert frame["metric"].tolist() == [str(m) for m in first.sortby(-first)["metric"].values]
    for label in ("en-de", "zh-en"):
        np.testing.assert_array_equal(frame[f"correlation (lp = {label})"],
                                      r.sel(lp=label, metric=frame["metric"].tolist()).values)
    # the labels' order decides which one ranks the rows
    swapped = r.sel(lp=["zh-en", "en-de"]).corrstat.ranked_frame()
    second = r.sel(lp="zh-en")
    assert swapped["metric"].tolist() == [str(m) for m in second.sortby(-second)["metric"].values]
    header = [c.strip() for c in r.corrstat.to_markdown().splitlines()[2][1:-1].split(" | ")]
    assert header == ["Rank", "Metric", "lp = en-de", "lp = zh-en"]
    boot_header = [c.strip() for c in results["bootstrap_lp"].corrstat.to_markdown().splitlines()[2][1:-1]
                   .split(" | ")]
    assert boot_header == ["Rank", "Metric", "lp = en-de", "lp = en-de 95% CI", "lp = zh-en", "lp = zh-en 95% CI"]


def test_the_ranked_frame_carries_the_results_notes(results):
    r = results["correlate"].copy()
    r.attrs["notes"] = ("column 'x' read as text",)
    assert r.corrstat.ranked_frame().attrs["notes"] == ("column 'x' read as text",)


# --------------------------------------------------------------- plots


def test_plot_of_correlations_is_a_sorted_dot_chart(results):
    r = results["correlate"]
    ax = r.corrstat.plot()
    names = [t.get_text() for t in ax.get_yticklabels()]
    assert names == [str(m) for m in r.sortby(-r)["metric"].values]
    (points,) = [line for line in ax.lines if line.get_gid() == "correlation"]
    np.testing.assert_array_equal(points.get_xdata(), r.sel(metric=names).values)
    lp = results["correlate_lp"].corrstat.plot()
    assert len([line for line in lp.lines if line.get_gid() == "correlation"]) == 2
    assert [t.get_text() for t in lp.get_legend().get_texts()] == ["lp = en-de", "lp = zh-en"]


def test_plot_of_intervals_with_extra_dims_draws_a_panel_per_label(results):
    fig = results["bootstrap_lp"].corrstat.plot()
    assert [a.get_title() for a in fig.axes if a.get_title()] == ["lp = en-de", "lp = zh-en"]


# --------------------------------------------------------------- the README's example


def _readme_accessor_example() -> tuple[str, list[str]]:
    """The README's notebook block that makes ``r``, and the calls its next paragraph says ``r.corrstat`` has."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    code = next(b for b in blocks if "r = ds.corrstat.correlate(" in b)
    after = text[text.index(code) + len(code):]
    paragraph = after.split("```python", 1)[0]
    sentence = paragraph[paragraph.index("on a result"):]
    calls = re.findall(r"`(?:r\.corrstat)?\.(\w+)\(\)`", sentence.split("\n\n")[0])
    return code, calls


def test_the_readme_accessor_example_runs_as_written():
    code, calls = _readme_accessor_example()
    assert {"tidy", "to_latex", "plot"} <= set(calls)
    namespace: dict = {}
    exec(compile(code, "README.md", "exec"), namespace)  # noqa: S102
    r = namespace["r"]
    for name in calls:
        out = getattr(r.corrstat, name)()
        assert out is not None, name
    assert namespace["r"].corrstat.to_latex().startswith(r"\begin{table}")
