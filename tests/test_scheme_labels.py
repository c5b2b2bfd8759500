"""Scheme labels (BOOT-*, PERM-*) and dims are one vocabulary: report() and the CLI read both alike."""

import numpy as np
import pytest
from conftest import make_scores

import xcorrstat
from xcorrstat._cli import main


@pytest.fixture(scope="module")
def ds():
    ds = make_scores(n_metrics=3, n_systems=6, n_inputs=8, seed=11)
    ds["m0"] = (ds["human"] + 0.4 * ds["m0"]).assign_attrs(role="metric")
    return ds


@pytest.fixture(scope="module")
def scores_file(tmp_path_factory, ds):
    path = tmp_path_factory.mktemp("labels") / "scores.csv"
    ds.to_dataframe().reset_index().to_csv(path, index=False)
    return path


def _report(ds, **kwargs):
    return xcorrstat.report(ds, target="human", level=["system", "input"], n_resamples=40, rng=3, **kwargs)


def _same(a, b):
    for name in ("correlation", "low", "high", "cluster", "rank"):
        np.testing.assert_array_equal(a.intervals[name].values, b.intervals[name].values)
    for name in ("delta", "pvalue", "pvalue_corrected", "significant"):
        np.testing.assert_array_equal(a.comparisons[name].values, b.comparisons[name].values)
    assert a.settings == b.settings


@pytest.mark.parametrize(("label", "dims", "shown"), [
    ("BOOT-SYSTEMS", "system", "BOOT-SYSTEMS"),
    ("boot-inputs", ("input",), "BOOT-INPUTS"),
    ("Boot-Both", ("input", "system"), "BOOT-BOTH"),
])
def test_report_resample_label_equals_its_dims(ds, label, dims, shown):
    by_label, by_dims = _report(ds, resample=label), _report(ds, resample=dims)
    _same(by_label, by_dims)
    assert by_label.settings["ci_scheme"] == shown


@pytest.mark.parametrize(("label", "dims", "shown"), [
    ("PERM-SYSTEMS", "system", "PERM-SYSTEMS"),
    ("perm-inputs", ["input"], "PERM-INPUTS"),
    ("perm-both", ("system", "input"), "PERM-BOTH"),
    ("PERM-SYSTEM-XOR-INPUT", "system-xor-input", "PERM-SYSTEM-XOR-INPUT"),
])
def test_report_permute_label_equals_its_dims(ds, label, dims, shown):
    by_label, by_dims = _report(ds, test=xcorrstat.Permutation(label)), _report(ds, test=xcorrstat.Permutation(dims))
    _same(by_label, by_dims)
    assert by_label.settings["test_scheme"] == shown


def test_report_unknown_labels_name_the_argument(ds):
    with pytest.raises(ValueError, match=r"resample must be .*'BOOT-NOPE'"):
        _report(ds, resample="BOOT-NOPE")
    with pytest.raises(ValueError, match=r"permute must be .*'PERM-NOPE'"):
        _report(ds, test=xcorrstat.Permutation("PERM-NOPE"))


def _cli(capsys, scores_file, *options):
    code = main(["report", str(scores_file), "--target", "human", "--n-resamples", "40", "--rng", "3",
                 "--no-files", "--quiet", "--digits", "6", *options])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


@pytest.mark.parametrize(("label", "dims"), [
    (["--resample", "BOOT-SYSTEMS"], ["--resample", "system"]),
    (["--resample", "boot-inputs"], ["--resample", "input"]),
    (["--resample", "boot-both"], ["--resample", "input", "system"]),
    (["--permute", "perm-both"], ["--permute", "system", "input"]),
    (["--permute", "PERM-INPUTS"], ["--permute", "input"]),
    (["--permute", "perm-system-xor-input"], ["--permute", "system-xor-input"]),
])
def test_cli_label_equals_its_dims(capsys, scores_file, label, dims):
    assert _cli(capsys, scores_file, *label) == _cli(capsys, scores_file, *dims)


def test_cli_prints_the_labels_of_dims_and_of_labels(capsys, scores_file):
    for options in (["--resample", "system", "--permute", "input"],
                    ["--resample", "BOOT-SYSTEMS", "--permute", "perm-inputs"]):
        out = _cli(capsys, scores_file, *options)
        assert "BOOT-SYSTEMS percentile CIs" in out and "clusters from PERM-INPUTS tests" in out


@pytest.mark.parametrize(("option", "value"), [
    ("--resample", "BOOT-NOPE"), ("--permute", "PERM-NOPE"), ("--resample", "language_pair"),
    ("--permute", "system-and-input"),
])
def test_cli_unknown_label_is_a_usage_error_naming_the_option(capsys, scores_file, option, value):
    with pytest.raises(SystemExit) as exc:
        main(["report", str(scores_file), "--target", "human", "--no-files", option, value])
    err = capsys.readouterr().err
    assert exc.value.code == 2
    assert err.startswith("usage: ")
    (line,) = [ln for ln in err.splitlines() if ln.startswith("xcorrstat report: error:")]
    assert f"{option} must be" in line and repr(value) in line


def test_cli_takes_the_functions_spellings(capsys, scores_file, tmp_path):
    assert _cli(capsys, scores_file, "--rng", "7") != _cli(capsys, scores_file, "--rng", "8")  # --rng is read
    out = tmp_path / "rep"
    code = main(["report", str(scores_file), "--target", "human", "--n-resamples", "20", "--quiet",
                 "--level", "system", "--out", str(out), "--formats", "svg"])
    capsys.readouterr()
    assert code == 0
    assert sorted(p.name for p in out.iterdir() if p.suffix in (".png", ".svg", ".pdf")) == \
        ["ci.svg", "significance.svg"]
