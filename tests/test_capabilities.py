"""The capability table: the support probe equals it, its messages, and the cells it newly supports.

The probe (benchmarks/api_support.py) calls every operation on every level x method x Kendall
variant; each cell must work where the table says so and be refused with the table's one message
elsewhere. The cells that the table opened (within-system level in report, ci_coverage,
power_analysis and agreement.matrix; every Kendall variant in agreement.matrix) are checked against
scipy and brute-force pair counts.
"""

import importlib.util
import itertools
import pathlib
import re
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

import xcorrstat
from conftest import make_scores
from xcorrstat._capabilities import OPERATIONS, cells, check, check_levels, choices, limit_of, support_table

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def _api_support():
    spec = importlib.util.spec_from_file_location("api_support", BENCHMARKS / "api_support.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_probe_equals_the_table():
    result = _api_support().probe(systems=6, inputs=6, n_resamples=3, n_trials=1)
    assert len(result) == len(OPERATIONS) * 4 * 8  # 7 coefficient/variant columns and a function of one's own
    assert not (result["outcome"] == "error").any(), result[result["outcome"] == "error"]
    disagree = result[~result["agrees"]]
    assert disagree.empty, disagree[["operation", "level", "method", "variant", "outcome", "message"]]
    works = {tuple(r) for r in result.loc[result["outcome"] == "works", ["operation", "level", "method", "variant"]]
             .itertuples(index=False)}
    table = {c[:4] for c in cells() if c[-1] == "yes"}
    assert works == table
    refused = result[result["outcome"] == "refused"]
    assert (refused["message"] == refused["expected"]).all()


def test_the_issue_counts():
    # out of 32 level x coefficient cells (the 28 of the coefficients and 4 of a function of one's own): only
    # the Williams and Fisher limits (and the global-level draws of the distinct-pair variants) remain
    counts = {}
    for op, *_, status in cells():
        counts[op] = counts.get(op, 0) + (status == "yes")
    assert counts["correlate"] == 32 and counts["permutation_test"] == 32 and counts["agreement.matrix"] == 28
    assert counts["bootstrap"] == 29 and counts["report"] == 29 and counts["paired_bootstrap_test"] == 29
    assert counts["fisher"] == 16 and counts["williams_test"] == 4
    assert counts["diagnostics.power_analysis"] == 12  # 4 levels x 3 coefficients: it has no variant argument


def test_refusal_names_argument_value_supported_values_and_reason():
    with pytest.raises(ValueError) as err:
        check("williams_test", level="within_system", method="pearson")
    text = str(err.value)
    assert text.startswith("williams_test: level='within_system' is not supported; it supports level "
                           "'system' or 'global': Williams' test")
    assert "permutation_test" in text
    with pytest.raises(ValueError, match=r"^fisher: variant='acc23' is not supported with method='kendall'; "
                                         r"it supports variant 'b' or 'c': Fisher's z"):
        xcorrstat.fisher(make_scores(), target="human", method="kendall", variant="acc23")


def test_variant_is_kendalls_only_and_typos_are_refused_with_the_choices():
    check("fisher", level="system", method="pearson", variant="acc23")  # ignored for Pearson
    with pytest.raises(ValueError, match=r"^level must be one of .*got 'sytem'; did you mean 'system'\?"):
        check("correlate", level="sytem")
    with pytest.raises(ValueError, match="level must be one of .* got an empty list"):
        check_levels("report", [])
    with pytest.raises(ValueError, match="level names a level twice"):
        check_levels("bootstrap", ["input", "input"])
    assert limit_of("calibrate_ties", level="global", variant="23") is None


def test_docs_table_and_cli_choices_are_the_table():
    header, rows, notes = support_table()
    statuses = [c[-1] for c in cells()]
    flat = [cell for row in rows for cell in row[2:]]
    assert [s == "yes" for s in statuses] == [c == "yes" for c in flat]
    assert [s == "n/a" for s in statuses] == [c == "-" for c in flat]
    assert all(c.startswith("no (") for s, c in zip(statuses, flat) if s == "no")
    assert len(notes) == len({limit.reason for op in OPERATIONS.values() for limit in op.limits})
    from xcorrstat._cli import _parser

    sub = next(a for a in _parser()._actions if a.dest == "command").choices
    for command in ("correlate", "report"):
        got = {a.dest: tuple(a.choices) for a in sub[command]._actions if a.dest in ("level", "method", "variant")}
        assert got == {arg: choices(command, arg) for arg in ("level", "method", "variant")}
    assert "within_system" in got["level"]


def test_the_levels_page_shows_the_table():
    from xcorrstat._capabilities import support_text

    page = (pathlib.Path(__file__).parents[1] / "docs" / "levels.md").read_text(encoding="utf-8")
    assert "```text\n" + support_text().rstrip("\n") + "\n```" in page


# --- the newly supported cells, against scipy ---------------------------------------------------------

def _scipy(method, a, b):
    return {"pearson": stats.pearsonr, "spearman": stats.spearmanr, "kendall": stats.kendalltau}[method](a, b)[0]


def _tau_a(a, b):
    """Kendall's tau-a by brute force over all pairs: (concordant - discordant) / (n (n - 1) / 2)."""
    n = len(a)
    s = sum(np.sign(a[i] - a[j]) * np.sign(b[i] - b[j]) for i, j in itertools.combinations(range(n), 2))
    return s / (n * (n - 1) / 2)


@pytest.mark.parametrize("method", ["pearson", "spearman", "kendall"])
def test_matrix_within_system_is_the_mean_of_per_system_correlations(method):
    ds = make_scores(n_metrics=3, n_systems=5, n_inputs=9, seed=3)
    got = xcorrstat.agreement.matrix(ds, level="within_system", method=method, metrics=["m0", "m1", "m2"])
    for a, b in itertools.permutations(["m0", "m1", "m2"], 2):
        want = np.mean([_scipy(method, ds[a].values[s], ds[b].values[s]) for s in range(5)])
        assert float(got.sel(metric=a, other_metric=b)) == pytest.approx(want, abs=1e-12)


def test_matrix_kendall_tau_a_at_system_level_is_brute_force():
    ds = make_scores(n_metrics=2, n_systems=7, n_inputs=5, seed=8)
    ds["m1"] = ds["m1"].round(0)  # ties between system means
    got = xcorrstat.agreement.matrix(ds, level="system", method="kendall", variant="a", metrics=["m0", "m1"])
    want = _tau_a(ds["m0"].mean("input").values, ds["m1"].mean("input").values)
    assert float(got.sel(metric="m0", other_metric="m1")) == pytest.approx(want, abs=1e-12)


def test_report_within_system_correlation_is_the_scipy_mean():
    ds = make_scores(n_metrics=2, n_systems=5, n_inputs=10, seed=2)
    rep = xcorrstat.report(ds, target="human", level=["system", "within_system"], method="spearman",
                           n_resamples=30, rng=1)
    for m in ("m0", "m1"):
        want = np.mean([stats.spearmanr(ds[m].values[s], ds["human"].values[s])[0] for s in range(5)])
        got = rep.intervals["correlation"].sel(level="within_system", metric=m)
        assert float(got) == pytest.approx(want, abs=1e-12)
        boot = xcorrstat.bootstrap(ds, target="human", level="within_system", method="spearman",
                                   resample=xcorrstat.Bootstrap(n_resamples=30, rng=1), metrics=["m0", "m1"])
        assert float(rep.intervals["low"].sel(level="within_system", metric=m)) == pytest.approx(
            float(boot["low"].sel(metric=m)), abs=1e-12)


def test_cli_report_within_system_prints_the_scipy_mean(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    from xcorrstat._cli import main

    ds = make_scores(n_metrics=2, n_systems=5, n_inputs=10, seed=6)
    path = tmp_path / "scores.csv"
    ds.to_dataframe().reset_index().to_csv(path, index=False)
    code = main(["report", str(path), "--target", "human", "--level", "within_system", "--n-resamples", "20",
                 "--rng", "1", "--out", str(tmp_path / "rep"), "--quiet"])
    out = capsys.readouterr().out
    assert code == 0
    assert "Within-system level (n = 5 systems)" in out
    rows = {line.split()[1]: float(line.split()[2]) for line in out.splitlines()
            if re.match(r"^\s+\d+\s+m\d\s", line)}
    assert sorted(rows) == ["m0", "m1"]
    for m in ("m0", "m1"):
        want = np.mean([stats.pearsonr(ds[m].values[s], ds["human"].values[s])[0] for s in range(5)])
        assert rows[m] == pytest.approx(want, abs=5e-4)  # printed with 3 decimals
