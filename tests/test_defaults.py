"""One table of defaults (xcorrstat._significance.defaults.DEFAULTS) for the functions and the commands.

The signatures and the argparse options are checked against the table, docs/defaults.md must print
it, every difference between Python and the command line must say why, and ``compare()`` with its
defaults must give the clusters ``xcorrstat report`` prints with its own.
"""

from __future__ import annotations

import inspect
import os
import re

import numpy as np
import pytest
from conftest import make_scores

import xcorrstat
from xcorrstat._cli import _parser, main
from xcorrstat._significance.defaults import DEFAULTS, defaults_markdown
from xcorrstat.wmt import run_tasks

DOCS = os.path.join(os.path.dirname(__file__), os.pardir, "docs")


def _defaults(func):
    return {k: p.default for k, p in inspect.signature(func).parameters.items()}


@pytest.mark.parametrize("func, names", [
    (xcorrstat.compare, ["test", "alpha", "correction", "family", "alternative"]),
    (xcorrstat.report, ["test", "n_resamples", "alpha", "correction", "confidence_level", "rng"]),
    (run_tasks, ["n_resamples", "max_resamples", "alpha", "rng"]),
])
def test_signatures_take_the_tables_python_defaults(func, names):
    got = _defaults(func)
    for name in names:
        if name == "rng":
            assert got["rng"] is DEFAULTS["rng"].python, func.__name__
        else:
            assert got[name] == DEFAULTS[name].python, (func.__name__, name)


def test_the_settings_objects_take_the_tables_python_defaults():
    # compare's permute, resample, n_resamples, max_resamples, pvalue and rng are fields of its test=
    # settings; None: the function's default (both dims, and "auto" in compare and report)
    perm, boot = xcorrstat.Permutation(), xcorrstat.Bootstrap()
    for name in ("max_resamples", "pvalue"):
        assert getattr(perm, name) == getattr(boot, name) == DEFAULTS[name].python, name
    assert perm.rng is boot.rng is DEFAULTS["rng"].python
    assert perm.permute is boot.resample is perm.n_resamples is boot.n_resamples is None


def test_report_schemes_default_to_the_tables():
    ds = make_scores(n_metrics=3, n_systems=5, n_inputs=6, seed=2)
    rep = xcorrstat.report(ds, target="human", level="system", n_resamples=50, rng=0)
    assert rep.settings["ci_scheme"] == "BOOT-BOTH" == xcorrstat._resampling.schemes.bootstrap_label(
        DEFAULTS["resample"].python)
    assert rep.settings["test_scheme"] == "PERM-BOTH"
    assert DEFAULTS["permute"].python == ("system", "input")


def test_the_command_lines_defaults_come_from_the_table():
    report = _parser().parse_args(["report"])
    for name in ("n_resamples", "max_resamples", "alpha", "correction", "confidence_level", "test", "rng"):
        assert getattr(report, name) == DEFAULTS[name].cli, name
    wmt = _parser().parse_args(["wmt", "root", "--testset", "wmt23"])
    for name in ("n_resamples", "max_resamples", "alpha", "rng"):
        assert getattr(wmt, name) == DEFAULTS[name].cli, name


def test_run_tasks_tests_as_mt_metrics_eval_does():
    assert DEFAULTS["wmt_correction"].python is None and DEFAULTS["wmt_correction"].cli == "none"
    assert DEFAULTS["wmt_pvalue"].python == DEFAULTS["wmt_pvalue"].cli == "fraction"


def test_every_difference_says_why():
    for name, d in DEFAULTS.items():
        same = d.python == d.cli or (d.python is None and d.cli == "none")
        assert bool(d.why) != same, name


def test_the_docs_page_prints_the_table():
    with open(os.path.join(DOCS, "defaults.md"), encoding="utf-8") as fh:
        page = fh.read()
    assert defaults_markdown() in page
    with open(os.path.join(DOCS, "index.md"), encoding="utf-8") as fh:
        index = fh.read()
    assert re.search(r"```\{toctree\}[^`]*\ndefaults\n", index)


def _printed_clusters(out: str, level: str) -> dict[str, int]:
    block = out.split(f"{level.capitalize()} level")[1]
    rows = [line.split() for line in block.splitlines()[2:] if line.strip()]
    return {row[1]: int(row[-1]) for row in rows if row[0].isdigit()}


def test_compare_and_the_report_command_give_the_same_clusters(capsys, summeval):
    code = main(["report", "--level", "system", "--no-files", "--quiet"])
    out, _ = capsys.readouterr()
    assert code == 0
    printed = _printed_clusters(out, "system")
    with pytest.warns(xcorrstat.OpenDecisionsWarning):  # as the command warns: decisions near alpha stay open
        res = xcorrstat.compare(summeval, target="expert_relevance",
                                test=xcorrstat.Permutation(rng=DEFAULTS["rng"].cli))
    mine = res["cluster"].to_series()
    assert len(printed) == 34 and printed == {str(k): int(v) for k, v in mine.items()}
    assert mine.max() > 1


def _system_level(ds):
    means = ds.mean("input").to_dataframe().reset_index()
    return xcorrstat.from_dataframe(means, system="system", input=None)


def test_system_level_data_are_labelled_by_the_draws_made():
    flat = _system_level(make_scores(n_metrics=3, n_systems=9, n_inputs=5, seed=6))
    kw = dict(target="human", level="system")
    draws = dict(n_resamples=300, rng=1)
    perm = xcorrstat.compare(flat, test=xcorrstat.Permutation(**draws), **kw)
    assert perm.attrs["scheme"] == "PERM-SYSTEMS" and perm.attrs["permute"] == "system"
    explicit = xcorrstat.compare(flat, test=xcorrstat.Permutation("system", **draws), **kw)
    np.testing.assert_array_equal(perm["pvalue"].values, explicit["pvalue"].values)
    boot = xcorrstat.compare(flat, test=xcorrstat.Bootstrap(**draws), **kw)
    assert boot.attrs["scheme"] == "BOOT-SYSTEMS"
    np.testing.assert_array_equal(boot["pvalue"].values,
                                  xcorrstat.compare(flat, test=xcorrstat.Bootstrap("system", **draws),
                                                    **kw)["pvalue"].values)
    rep = xcorrstat.report(flat, target="human", resample=("system", "input"),
                           test=xcorrstat.Permutation("PERM-BOTH"), n_resamples=100, rng=1)
    assert rep.settings["ci_scheme"] == "BOOT-SYSTEMS" and rep.settings["test_scheme"] == "PERM-SYSTEMS"
    with pytest.raises(ValueError, match="no inputs to resample"):
        xcorrstat.compare(flat, test=xcorrstat.Permutation("input", **draws), **kw)


def test_the_cap_warning_is_exported():
    assert xcorrstat.OpenDecisionsWarning is xcorrstat._significance.auto.OpenDecisionsWarning
    assert issubclass(xcorrstat.OpenDecisionsWarning, UserWarning)
