"""What newcomers trip over: choices in any case with "did you mean", readable column lists, hints that name
options that exist, progress bars only where a person sees them, --quiet everywhere, columns named like human
judgments, one rule for label columns, clusters without a dashboard, lower-is-better metrics, and compiled
loops without a switch or a compiler at import."""

import io
import re
import warnings

import dask.array as dsa
import numpy as np
import pandas as pd
import pytest
import xarray as xr

import xcorrstat
from xcorrstat._cli import main
from xcorrstat._options import show_progress
from xcorrstat._resampling.engine import compute_with_progress
from xcorrstat._schema import looks_human
from conftest import make_scores
from mtme_tree import write_mtme_tree


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def usage_error(capsys, *argv):
    """The exit code and stderr of a command line argparse refuses."""
    with pytest.raises(SystemExit) as exc:
        main(list(argv))
    return exc.value.code, capsys.readouterr().err


def write_table(tmp_path, ds, name="scores.csv", **extra):
    df = ds.to_dataframe().reset_index().assign(**extra)
    path = tmp_path / name
    df.to_csv(path, index=False)
    return path


# -- 1. choices in any case, "did you mean" ------------------------------------------------------------------


def test_cli_choices_ignore_case(capsys):
    code, upper, err = run(capsys, "correlate", "--metrics", "meteor", "--level", "System", "--method", "Kendall",
                           "--table-format", "CSV")
    assert code == 0, err
    code, lower, _ = run(capsys, "correlate", "--metrics", "meteor", "--level", "system", "--method", "kendall",
                         "--table-format", "csv")
    assert upper == lower and upper.startswith("metric,system_kendall")


@pytest.mark.parametrize("argv, words", [
    (["correlate", "--method", "kendal"], ["argument --method: invalid choice: 'kendal'", "did you mean 'kendall'?"]),
    (["correlate", "--level", "sytem"], ["invalid choice: 'sytem'", "did you mean 'system'?"]),
    (["report", "--correction", "Holmes"], ["argument --correction", "did you mean 'holm'?"]),
    (["report", "--method", "cosine"], ["invalid choice: 'cosine'", "choose from 'pearson', 'spearman', 'kendall'"]),
])
def test_cli_near_misses_suggest(capsys, argv, words):
    code, err = usage_error(capsys, *argv)
    assert code == 2
    for word in words:
        assert word in err, err
    if "cosine" in argv:
        assert "did you mean" not in err


def test_wmt_choices_ignore_case(capsys, tmp_path):
    # the table format is accepted in capitals: the run goes on to the (missing) test set's task list
    code, _, err = run(capsys, "wmt", str(tmp_path), "--testset", "nope", "--table-format", "LaTeX")
    assert code == 2 and "no official task list" in err
    code, err = usage_error(capsys, "wmt", str(tmp_path), "--testset", "wmt23", "--table-format", "latx")
    assert code == 2 and "did you mean 'latex'?" in err


def test_python_choices_and_names_suggest():
    ds = make_scores()
    with pytest.raises(ValueError, match=r"method must be one of .*got 'Kendall'; did you mean 'kendall'\?"):
        xcorrstat.correlate(ds, target="human", method="Kendall")
    with pytest.raises(ValueError, match=r"metrics='m00' is not a score.*did you mean 'm0'"):
        xcorrstat.correlate(ds, target="human", metrics=["m00"])
    with pytest.raises(ValueError, match=r"target='Human' is not a score.*did you mean 'human'\?"):
        xcorrstat.correlate(ds, target="Human")
    df = ds.to_dataframe().reset_index()
    with pytest.raises(ValueError, match=r"system='sytem': no such column.*did you mean 'system'\?"):
        xcorrstat.from_dataframe(df, system="sytem")


def test_cli_unknown_column_suggests(capsys, tmp_path):
    path = write_table(tmp_path, make_scores())
    code, _, err = run(capsys, "correlate", str(path), "--target", "humn")
    assert code == 2 and "did you mean 'human'?" in err
    code, _, err = run(capsys, "correlate", str(path), "--target", "human", "--system-col", "System_")
    assert code == 2 and "did you mean 'system'?" in err


# -- 2. long column lists: the closest first, the count of the rest ----------------------------------------------


def test_long_column_list_shows_closest_and_count(capsys, tmp_path):
    names = [f"metric_{k:03d}" for k in range(300)]
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.normal(size=(6, 300)), columns=names).assign(system=list("abcdef"))
    ds = xcorrstat.from_dataframe(df, input=None)
    with pytest.raises(ValueError) as exc:
        xcorrstat.correlate(ds, target="metric_207 ")  # a stray space
    message = str(exc.value)
    shown = re.search(r"available: \[(.*)\] and (\d+) more \((\d+) in all\)", message)
    assert shown is not None, message
    listed = re.findall(r"'([^']*)'", shown.group(1))
    assert listed[0] == "metric_207"  # the closest first
    assert len(listed) + int(shown.group(2)) == int(shown.group(3)) == 300
    assert len(message) < 600
    path = tmp_path / "wide.csv"
    df.to_csv(path, index=False)
    code, _, err = run(capsys, "correlate", str(path), "--target", "metric_207 ")
    assert code == 2 and "'metric_207'" in err and "more (300 in all)" in err


def test_short_column_list_in_full():
    ds = make_scores()
    with pytest.raises(ValueError, match=re.escape("available: ['m0', 'm1', 'm2', 'm3', 'human']")):
        xcorrstat.correlate(ds, target="nope")


# -- 3. hints name the options of their context --------------------------------------------------------------


def test_format_hint_names_the_cli_option(capsys, tmp_path):
    path = write_table(tmp_path, make_scores(), name="scores.txt")
    code, _, err = run(capsys, "correlate", str(path), "--target", "human")
    assert code == 2 and "--file-format" in err and "format=" in err
    code, out, err = run(capsys, "correlate", str(path), "--target", "human", "--file-format", "CSV",
                         "--level", "system", "--method", "pearson", "--table-format", "csv")
    assert code == 0, err
    expected = make_scores().corrstat.correlate(target="human")
    table = pd.read_csv(io.StringIO(out), index_col="metric")["system_pearson"]
    np.testing.assert_allclose(table.loc[expected.metric.values].values, expected.values, atol=1e-6)


def test_encoding_hint_names_the_cli_option(capsys, tmp_path):
    df = make_scores().to_dataframe().reset_index()
    df["system"] = ["Système"] * 8 + list(df["system"][8:])
    path = tmp_path / "latin.csv"
    df.to_csv(path, index=False, encoding="latin-1")
    code, _, err = run(capsys, "correlate", str(path), "--target", "human")
    assert code == 2 and "--encoding" in err
    code, _, err = run(capsys, "correlate", str(path), "--target", "human", "--encoding", "latin-1")
    assert code == 0, err


# -- 4. progress bars only where a person sees them -------------------------------------------------------------


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_bar_only_on_a_terminal(capsys, monkeypatch):
    work = dsa.ones((4, 4), chunks=2).sum()
    with xcorrstat.set_options(progress="auto"):  # the default, set here so that the test holds whatever it is
        compute_with_progress(work, True)
        assert capsys.readouterr().err == ""  # captured stderr is not a terminal
        with xcorrstat.set_options(progress="always"):
            compute_with_progress(work, True)
        assert "Completed" in capsys.readouterr().err
        terminal = Terminal()
        monkeypatch.setattr("sys.stderr", terminal)
        assert show_progress(True) and not show_progress(False)
        with xcorrstat.set_options(progress="never"):
            assert not show_progress(True)
        compute_with_progress(work, True)
        assert "Completed" in terminal.getvalue()


def test_report_progress_in_a_log_only_when_forced(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr("xcorrstat._resampling.engine.SMALL_WORK", 0)  # the draws go through a task graph
    path = write_table(tmp_path, make_scores(n_metrics=2))
    argv = ["report", str(path), "--target", "human", "--no-files", "--n-resamples", "20", "--level", "system"]
    code, _, err = run(capsys, *argv)
    assert code == 0, err
    assert "Completed" not in err and "xcorrstat report:" in err
    code, _, err = run(capsys, *argv, "--progress")
    assert code == 0 and "Completed" in err


def test_progress_option_checked():
    with pytest.raises(ValueError, match="progress must be one of"):
        xcorrstat.set_options(progress="sometimes")


# -- 5. --quiet on every subcommand ---------------------------------------------------------------------------


def test_every_subcommand_takes_quiet(capsys, tmp_path):
    path = write_table(tmp_path, make_scores(), human_fluency=1.0)
    for flag in ("--quiet", "-q"):
        code, out, err = run(capsys, "correlate", str(path), "--target", "human", flag)
        assert code == 0 and err == "" and "m0" in out
        code, _, err = run(capsys, "report", str(path), "--target", "human", "--no-files", "--n-resamples", "10",
                           "--level", "system", flag)
        assert code == 0 and err == ""
        code, _, err = run(capsys, "wmt", str(tmp_path), "--testset", "nope", flag)
        assert code == 2 and "no official task list" in err  # parsed; the folder has no such test set


# -- 6. columns named like human judgments are not metrics by default ------------------------------------------


def test_looks_human():
    human = ["human", "human_fluency", "Human-Adequacy", "fluency_human", "expert_relevance", "turker_coherence",
             "annotator_1", "mqm", "MQM", "da", "esa", "wmt-z", "raw", "z", "rating", "ratings", "judgement"]
    metrics = ["bleu", "chrf", "comet-da", "comet_mqm", "ter", "rouge_1_f1", "bertscore", "humanlike", "mqm2",
               "zscore", "metricx-23"]
    assert all(looks_human(n) for n in human)
    assert not any(looks_human(n) for n in metrics)


def human_like_table():
    ds = make_scores(n_metrics=2)
    df = ds.to_dataframe().reset_index()
    rng = np.random.default_rng(3)
    return df.assign(expert_fluency=rng.normal(size=len(df)), mqm=rng.normal(size=len(df)))


def test_python_leaves_human_like_columns_out_with_a_warning():
    ds = xcorrstat.from_dataframe(human_like_table())  # no roles: only the names say what a column is
    with pytest.warns(UserWarning, match=r"left out of the metrics.*'expert_fluency', 'mqm'.*metrics=\[\.\.\.\]"):
        got = xcorrstat.correlate(ds, target="human")
    assert list(got.metric.values) == ["m0", "m1"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        named = xcorrstat.correlate(ds, target="human", metrics=["m0", "m1", "mqm"])
        assert list(named.metric.values) == ["m0", "m1", "mqm"]
        roles = xcorrstat.from_dataframe(human_like_table(), human=["human"])  # roles given: no guessing
        assert list(xcorrstat.correlate(roles, target="human").metric.values) == ["m0", "m1", "expert_fluency",
                                                                                 "mqm"]


def test_accessor_leaves_human_like_columns_out():
    with pytest.warns(UserWarning, match="look like human judgments"):
        got = human_like_table().corrstat.correlate(target="human")
    assert list(got.metric.values) == ["m0", "m1"]


def test_cli_leaves_human_like_columns_out_with_a_note(capsys, tmp_path):
    path = tmp_path / "scores.csv"
    human_like_table().to_csv(path, index=False)
    code, out, err = run(capsys, "correlate", str(path), "--target", "human", "--table-format", "csv")
    assert code == 0
    notes = [line for line in err.splitlines() if "human judgments" in line]
    assert len(notes) == 1 and notes[0].startswith("xcorrstat: note: left out of the metrics")
    assert "'expert_fluency', 'mqm'" in notes[0] and "--metrics" in notes[0]
    assert list(pd.read_csv(io.StringIO(out))["metric"]) == ["m0", "m1"]
    code, out, err = run(capsys, "correlate", str(path), "--target", "human", "--table-format", "csv",
                         "--metrics", "m0", "mqm")
    assert code == 0 and err == "" and list(pd.read_csv(io.StringIO(out))["metric"]) == ["m0", "mqm"]


# -- 7. one rule for label columns: read, the command line and df.corrstat -------------------------------------


def test_accessor_guesses_label_columns_as_read_does(tmp_path):
    ds = make_scores(seed=4)
    df = ds.to_dataframe().reset_index().rename(columns={"system": "sys", "input": "doc_id"})
    path = tmp_path / "scores.csv"
    df.to_csv(path, index=False)
    from_file = xcorrstat.read(path).corrstat.correlate(target="human", level="input")
    expected = ds.corrstat.correlate(target="human", level="input")
    for frame in (df, df.set_index(["sys", "doc_id"])):
        got = frame.corrstat.correlate(target="human", level="input")
        np.testing.assert_allclose(got.values, expected.values)
        np.testing.assert_allclose(got.values, from_file.values)


def test_accessor_system_level_and_errors_as_read():
    rng = np.random.default_rng(1)
    table = pd.DataFrame({"Model": list("abcdef"), "bleu": rng.normal(size=6), "human": rng.normal(size=6)})
    ds = table.corrstat.to_dataset()
    assert dict(ds.sizes) == {"system": 6} and ds.attrs["system_level"] == 1
    repeated = pd.concat([table, table])
    with pytest.raises(ValueError, match="no input label column found.*repeats labels"):
        repeated.corrstat.to_dataset()
    with pytest.raises(ValueError, match="no system label column found"):
        table.rename(columns={"Model": "who"}).corrstat.to_dataset()


# -- 8. a local cluster without a dashboard ---------------------------------------------------------------------


def test_documented_cluster_has_no_dashboard_port():
    distributed = pytest.importorskip("distributed")
    # the recipe of docs/scale-out.md, with threads instead of processes (fast)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None,
                                  scheduler_kwargs={"dashboard_address": "127.0.0.1:0"}) as cluster:
        server = cluster.scheduler.http_server
        assert server.port != 8787 and server.address == "127.0.0.1"
        with distributed.Client(cluster):
            ds = make_scores(n_metrics=2)
            settings = xcorrstat.Bootstrap(n_resamples=20, rng=0)
            on_cluster = ds.corrstat.bootstrap(target="human", resample=settings)
    xr.testing.assert_allclose(on_cluster, ds.corrstat.bootstrap(target="human", resample=settings))


# -- 9. metrics where lower is better -----------------------------------------------------------------------


def lower_is_better_data(ties=False):
    ds = make_scores(n_metrics=2, seed=11, ties=ties)
    ds["ter"] = -ds["m0"]
    ds["ter"].attrs["lower_is_better"] = True
    return ds


@pytest.mark.parametrize("kwargs", [
    dict(level=["system", "input", "global", "within_system"], method=["pearson", "spearman", "kendall"]),
    dict(level=["input", "global"], method="kendall", variant="c"),
    dict(level=["input", "global"], method="kendall", variant="acc23"),
    dict(level=["input", "global"], method="kendall", variant="23", epsilon=0.5),
])
def test_declared_negation_correlates_as_the_metric(kwargs):
    ds = lower_is_better_data(ties=True)
    got = xcorrstat.correlate(ds, target="human", **kwargs)
    np.testing.assert_array_equal(got.sel(metric="ter").values, got.sel(metric="m0").values)
    assert got["lower_is_better"].sel(metric="ter") and not got["lower_is_better"].sel(metric="m0")
    undeclared = ds.assign(ter=ds["ter"].copy(data=ds["ter"].values))
    undeclared["ter"].attrs = {}
    plain = xcorrstat.correlate(undeclared, target="human", **kwargs)
    assert "lower_is_better" not in plain.coords
    if "epsilon" not in kwargs and "acc23" not in kwargs.values():
        np.testing.assert_allclose(plain.sel(metric="ter").values, -plain.sel(metric="m0").values)


def test_declared_negation_tests_as_the_metric():
    ds = lower_is_better_data()
    boot = xcorrstat.bootstrap(ds, target="human", level="input", resample=xcorrstat.Bootstrap(n_resamples=50, rng=3))
    for var in ("correlation", "low", "high"):
        np.testing.assert_allclose(boot[var].sel(metric="ter"), boot[var].sel(metric="m0"))
    perm = xcorrstat.Permutation(n_resamples=50, rng=5)
    a = xcorrstat.permutation_test(ds, target="human", x="m0", y="m1", test=perm)
    b = xcorrstat.permutation_test(ds, target="human", x="ter", y="m1", test=perm)
    np.testing.assert_allclose(b["pvalue"], a["pvalue"])
    w_a = xcorrstat.williams_test(ds, target="human", x="m0", y="m1")
    w_b = xcorrstat.williams_test(ds, target="human", x="ter", y="m1")
    np.testing.assert_allclose(w_b["pvalue"], w_a["pvalue"])
    cmp = xcorrstat.compare(ds, target="human", metrics=["m0", "ter", "m1"],
                            test=xcorrstat.Permutation(n_resamples=50, rng=2))
    np.testing.assert_allclose(cmp["pvalue"].sel(metric="ter", other_metric="m1"),
                               cmp["pvalue"].sel(metric="m0", other_metric="m1"))


def test_declared_negation_pairwise_accuracy_and_ties():
    ds = lower_is_better_data(ties=True)
    for result in (xcorrstat.pairwise_accuracy(ds, target="human"),
                   xcorrstat.pairwise_accuracy(ds, target="human", level="input"),
                   xcorrstat.calibrate_ties(ds, target="human", level="input"),
                   xcorrstat.calibrate_ties(ds, target="human", level="global", variant="23")):
        assert len(result.data_vars) >= 2
        for var in result.data_vars:
            np.testing.assert_allclose(result[var].sel(metric="ter"), result[var].sel(metric="m0"))


def test_declared_target_lower_is_better():
    ds = make_scores(n_metrics=2, seed=2)
    flipped = ds.assign(errors=-ds["human"])
    flipped["errors"].attrs = {"role": "human", "lower_is_better": 1}  # 1: as a netCDF file keeps True
    got = xcorrstat.correlate(flipped, target="errors", level=["system", "input"], method=["pearson", "kendall"])
    expected = xcorrstat.correlate(ds, target="human", level=["system", "input"], method=["pearson", "kendall"])
    np.testing.assert_allclose(got.values, expected.values)


def test_cli_lower_is_better(capsys, tmp_path):
    ds = make_scores(n_metrics=2, seed=8)
    flat = ds.to_dataframe()
    path = write_table(tmp_path, ds, ter=-flat["m0"].values, errors=-flat["m1"].values)
    code, out, err = run(capsys, "correlate", str(path), "--target", "human", "--lower-is-better", "ter,errors",
                         "--table-format", "csv")
    assert code == 0, err
    table = pd.read_csv(io.StringIO(out), index_col="metric")
    np.testing.assert_allclose(table.loc["ter"].values, table.loc["m0"].values)
    np.testing.assert_allclose(table.loc["errors"].values, table.loc["m1"].values)
    code, _, err = run(capsys, "correlate", str(path), "--target", "human", "--lower-is-better", "tr")
    assert code == 2 and "--lower-is-better: 'tr' is not a score" in err and "did you mean 'ter'" in err


def test_lower_is_better_on_mtme_data(capsys, tmp_path):
    tree = write_mtme_tree(tmp_path, "wmtx", ["en-de"], {"en-de": 6}, {"en-de": 14}, ["BLEU", "COMET"], ["refA"],
                           ["mqm"], np.random.default_rng(7))
    seg = xcorrstat.mtme_level(xcorrstat.read(tree.folder), "seg")
    kw = dict(target="mqm", level=["system", "input"], method=["pearson", "spearman"])
    plain = xcorrstat.correlate(seg, **kw)
    seg["BLEU-refA"].attrs["lower_is_better"] = True
    declared = xcorrstat.correlate(seg, **kw)
    np.testing.assert_allclose(declared.sel(metric="BLEU-refA"), -plain.sel(metric="BLEU-refA"))
    np.testing.assert_array_equal(declared.sel(metric="COMET-refA"), plain.sel(metric="COMET-refA"))
    argv = ["correlate", tree.folder, "--target", "mqm", "--level", "system", "input", "--method", "pearson",
            "spearman", "--table-format", "csv"]
    outs = []
    for extra in ([], ["--lower-is-better", "BLEU-refA"]):
        code, out, err = run(capsys, *argv, *extra)
        assert code == 0, err
        outs.append(pd.read_csv(io.StringIO(out), index_col="metric").select_dtypes("number"))
    np.testing.assert_allclose(outs[1].loc["BLEU-refA"].values, -outs[0].loc["BLEU-refA"].values, atol=1e-6)
    np.testing.assert_allclose(outs[1].loc["COMET-refA"].values, outs[0].loc["COMET-refA"].values)


# -- 10. one algorithm per kernel: no switch, and no compiler until a loop runs --------------------------


def test_the_compiled_loops_have_no_switch():
    """Each kernel has one algorithm (the NumPy ones are the tests' oracles), so there is nothing to
    turn off: ``compiled`` is not an option."""
    assert "compiled" not in xcorrstat.get_options()
    with pytest.raises(ValueError, match="compiled"):
        xcorrstat.set_options(compiled=False)


def test_importing_the_package_does_not_start_numba():
    """The loops are imported and compiled on first use: a process that never runs one never loads numba."""
    import subprocess
    import sys

    code = "import sys, xcorrstat; xcorrstat.datasets.summeval(); print('numba' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
