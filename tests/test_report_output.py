"""Report output is all or nothing, replaces only what a report wrote, and shows labels literally."""

import hashlib
import json
import os

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import xcorrstat
from conftest import make_scores
from xcorrstat._cli import main

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
from matplotlib.figure import Figure  # noqa: E402

REPORT_PNG = ["ci.png", "comparisons.csv", "correlations.csv", "csv-metadata.json", "report.html", "report.json",
              "significance.png"]
MANIFEST = "xcorrstat-manifest.json"
WRITTEN_PNG = sorted(REPORT_PNG + [MANIFEST])
ODD = ["$\\foo$", "\x1b[31mred", "<b>bold</b>", "x" * 100]


@pytest.fixture(scope="module")
def rep():
    return xcorrstat.report(make_scores(n_metrics=3, n_systems=5, n_inputs=6, seed=1), target="human",
                            level="system", n_resamples=20, rng=0)


@pytest.fixture(scope="module")
def odd_rep():
    """A report whose metric names hold mathtext, an escape sequence, markup and 100 characters."""
    ds = make_scores(n_metrics=4, n_systems=5, n_inputs=6, seed=2)
    ds = ds.rename({f"m{k}": name for k, name in enumerate(ODD)})
    return xcorrstat.report(ds, target="human", level=["system", "input"], n_resamples=20, rng=0)


def _old_report(path):
    """A directory holding a previous report: every file says 'old', and the manifest records each."""
    path.mkdir()
    for name in REPORT_PNG:
        (path / name).write_text("old")
    old = {"size": 3, "sha256": hashlib.sha256(b"old").hexdigest()}
    (path / MANIFEST).write_text(json.dumps({"format": "xcorrstat-manifest-1",
                                             "files": {name: [old] for name in REPORT_PNG}}))
    return path


def _beside(path):
    """Every entry of path's parent other than path itself (left-over temporary folders)."""
    return sorted(p.name for p in path.parent.iterdir() if p.name != path.name)


def test_save_to_a_new_directory_leaves_nothing_beside_it(tmp_path, rep):
    out = tmp_path / "sub" / "rep"
    written = rep.save(out, formats=["png"])
    assert sorted(p.name for p in out.iterdir()) == WRITTEN_PNG
    assert sorted(os.path.basename(p) for p in written.values()) == REPORT_PNG
    assert all(os.path.dirname(p) == str(out) for p in written.values())
    assert _beside(out) == []


def test_an_empty_existing_directory_is_filled(tmp_path, rep):
    out = tmp_path / "rep"
    out.mkdir()
    rep.save(out, formats=["png"])
    assert sorted(p.name for p in out.iterdir()) == WRITTEN_PNG


def test_an_existing_report_needs_overwrite(tmp_path, rep):
    out = _old_report(tmp_path / "rep")
    with pytest.raises(FileExistsError, match=r"out='.*rep' already exists and holds a report; pass overwrite=True"):
        rep.save(out, formats=["png"])
    assert (out / "correlations.csv").read_text() == "old"
    rep.save(out, formats=["png"], overwrite=True)
    assert sorted(p.name for p in out.iterdir()) == WRITTEN_PNG
    assert (out / "correlations.csv").read_text().startswith("target,")
    assert _beside(out) == []


def test_other_files_of_the_directory_are_left_alone(tmp_path, rep):
    out = _old_report(tmp_path / "rep")
    (out / "notes.txt").write_text("mine")
    rep.save(out, formats=["png"], overwrite=True)
    assert (out / "notes.txt").read_text() == "mine" and (out / "ci.png").read_bytes()[:4] == b"\x89PNG"
    assert sorted(p.name for p in out.iterdir()) == sorted(WRITTEN_PNG + ["notes.txt"])


def test_a_file_is_refused(tmp_path, rep):
    out = tmp_path / "rep"
    out.write_text("a file")
    with pytest.raises(FileExistsError, match="out='.*rep' exists and is not a directory"):
        rep.save(out, overwrite=True)
    assert out.read_text() == "a file"


def test_a_symlink_as_destination_is_refused(tmp_path, rep):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    link = tmp_path / "rep"
    link.symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(FileExistsError, match="out='.*rep' is a symbolic link; a report is never written "
                                              "through a link"):
        rep.save(link, formats=["png"], overwrite=True)
    assert list(elsewhere.iterdir()) == []


def test_a_symlink_inside_is_refused_not_followed(tmp_path, rep):
    victim = tmp_path / "victim.png"
    victim.write_text("precious")
    out = _old_report(tmp_path / "rep")
    (out / "ci.png").unlink()
    (out / "ci.png").symlink_to(victim)
    with pytest.raises(FileExistsError, match="'.*ci.png' is a symbolic link; xcorrstat replaces only files it wrote"):
        rep.save(out, formats=["png"], overwrite=True)
    assert victim.read_text() == "precious" and (out / "ci.png").is_symlink()
    assert (out / "report.html").read_text() == "old"


def test_the_current_directory_takes_the_files_beside_others(tmp_path, rep, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "thesis.tex").write_text("mine")
    written = rep.save(".", formats=["png"])
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(WRITTEN_PNG + ["thesis.tex"])
    assert written["table (CSV)"] == os.path.join(".", "correlations.csv")


def _interrupt_second_savefig(monkeypatch, exc):
    """Figure.savefig writes a truncated figure, then raises ``exc`` on its second call."""
    calls = []
    real = Figure.savefig

    def savefig(self, fname, *args, **kwargs):
        calls.append(fname)
        if len(calls) == 2:
            fname.write(b"<svg trunc")
            raise exc
        return real(self, fname, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", savefig)
    return calls


@pytest.mark.parametrize("exc", [KeyboardInterrupt(), OSError(28, "No space left on device")])
def test_an_interrupt_or_error_while_writing_figures_leaves_the_old_report(tmp_path, rep, monkeypatch, exc):
    out = _old_report(tmp_path / "rep")
    calls = _interrupt_second_savefig(monkeypatch, exc)
    with pytest.raises(type(exc)):
        rep.save(out, formats=["png", "svg"], overwrite=True)
    assert len(calls) == 2
    assert sorted(p.name for p in out.iterdir()) == WRITTEN_PNG
    assert all((out / name).read_text() == "old" for name in REPORT_PNG)
    assert _beside(out) == []


def test_an_interrupt_on_a_new_directory_leaves_nothing(tmp_path, rep, monkeypatch):
    _interrupt_second_savefig(monkeypatch, KeyboardInterrupt())
    with pytest.raises(KeyboardInterrupt):
        rep.save(tmp_path / "rep", formats=["png", "svg"])
    assert list(tmp_path.iterdir()) == []


def test_cli_ctrl_c_while_writing_exits_130_with_one_line(tmp_path, monkeypatch, capsys):
    ds = make_scores(n_metrics=3, n_systems=5, n_inputs=6, seed=1)
    path = tmp_path / "scores.csv"
    ds.to_dataframe().reset_index().to_csv(path, index=False)
    _interrupt_second_savefig(monkeypatch, KeyboardInterrupt())
    out = tmp_path / "rep"
    code = main(["report", str(path), "--target", "human", "--n-resamples", "20", "--level", "system",
                 "--out", str(out), "--quiet"])
    err = capsys.readouterr().err
    assert code == 130
    assert err.splitlines() == [f"xcorrstat: interrupted while writing the report; nothing was written to {out}"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scores.csv"]


def _shown(text):
    """What matplotlib draws for a text: (string, parsed as mathtext?)."""
    return text._preprocess_math(text.get_text())


def test_figures_show_labels_literally(odd_rep):
    figs = odd_rep.figures()
    try:
        for fig in figs.values():
            fig.canvas.draw()  # mathtext would raise here on '$\foo$'
        ticks = [_shown(t) for t in figs["ci"].axes[0].get_yticklabels()]
        assert ("$\\foo$", False) in ticks and ("\\x1b[31mred", False) in ticks
        assert ("<b>bold</b>", False) in ticks
        long = [s for s, _ in ticks if s.startswith("xxx")]
        assert len(long) == 1 and len(long[0]) == 40  # cut to its start and end
        assert long[0].strip("x") == "..." and long[0].endswith("x" * 10)
        sig = [_shown(t) for t in figs["significance"].axes[0].get_xticklabels()]
        assert ("$\\foo$", False) in sig
    finally:
        import matplotlib.pyplot as plt

        for fig in figs.values():
            plt.close(fig)


def test_odd_labels_save_in_full(tmp_path, odd_rep):
    out = tmp_path / "rep"
    odd_rep.save(out, formats=["png", "svg"])
    assert sorted(p.name for p in out.iterdir()) == sorted(WRITTEN_PNG + ["ci.svg", "significance.svg"])
    page = (out / "report.html").read_text()
    assert "&lt;b&gt;bold&lt;/b&gt;" in page and "<b>bold" not in page
    assert "\\x1b[31mred" in page and "\x1b" not in page
    assert "$\\foo$" in page


def test_terminal_text_escapes_and_cuts_labels(odd_rep):
    text = odd_rep.to_text()
    assert "\x1b" not in text and "\\x1b[31mred" in text
    assert "$\\foo$" in text
    rows = [ln for ln in text.splitlines() if "xxxxx" in ln]
    assert len(rows) == 2  # one per level
    cut = [word for ln in rows for word in ln.split() if word.startswith("xxx")]
    assert len(cut) == 2 and all(len(w) == 40 and w.strip("x") == "..." and w.endswith("x" * 10) for w in cut)


@pytest.mark.parametrize("digits", [-1, 16, 2.5, True])
def test_to_text_digits_must_be_0_to_15(rep, digits):
    with pytest.raises(ValueError, match=f"digits must be an integer from 0 to 15, got {digits!r}"):
        rep.to_text(digits=digits)


def test_to_text_digits_0_and_6_round_as_numpy(rep):
    corr = float(rep.intervals["correlation"].sel(level="system").max())
    assert f"{corr:.6f}" in rep.to_text(digits=6)
    line = next(ln for ln in rep.to_text(digits=0).splitlines() if ln.strip().startswith("1 "))
    assert line.split()[2] == f"{np.round(corr):.0f}"


# -- real file shapes through the command line ---------------------------------------------------------

REPORT_FILES = sorted(WRITTEN_PNG + ["ci.svg", "significance.svg"])


def _wmt_style(path, *, n_systems=14, n_segments=30, seed=4):
    """A WMT-style segment file: text columns ``domain`` and ``doc`` beside numeric scores."""
    rng = np.random.default_rng(seed)
    seg = np.arange(n_segments)
    human = rng.normal(size=(n_systems, n_segments))
    frame = pd.DataFrame({
        "lp": "en-de",
        "domain": np.tile(np.array(["news", "social", "speech"])[(seg // 5) % 3], n_systems),
        "doc": np.tile([f"doc{i // 5}" for i in seg], n_systems),
        "seg_id": np.tile(seg, n_systems),
        "system": np.repeat([f"sys{s}" for s in range(n_systems)], n_segments),
        "human": human.ravel(),
    })
    for k, noise in enumerate([0.5, 1.0, 3.0]):
        frame[f"metric{k}"] = (human + noise * rng.normal(size=human.shape)).ravel()
    frame.to_csv(path, index=False)
    return frame


def test_wmt_style_file_gives_a_full_report(tmp_path, capsys):
    frame = _wmt_style(tmp_path / "wmt.csv")
    out = tmp_path / "rep"
    code = main(["report", str(tmp_path / "wmt.csv"), "--target", "human", "--n-resamples", "30",
                 "--out", str(out), "--quiet"])
    _, err = capsys.readouterr()
    assert code == 0, err
    assert sorted(p.name for p in out.iterdir()) == REPORT_FILES
    table = pd.read_csv(out / "correlations.csv")
    assert sorted(table["metric"].unique()) == ["metric0", "metric1", "metric2"]
    means = frame.groupby("system")[["human", "metric0", "metric1", "metric2"]].mean()
    system = table[table["level"] == "system"].set_index("metric")
    for m in ("metric0", "metric1", "metric2"):
        assert system.loc[m, "correlation"] == pytest.approx(stats.pearsonr(means[m], means["human"])[0],
                                                            abs=1e-6)
    per_seg = [stats.pearsonr(g["metric0"], g["human"])[0] for _, g in frame.groupby("seg_id")]
    inp = table[table["level"] == "input"].set_index("metric")
    assert inp.loc["metric0", "correlation"] == pytest.approx(np.mean(per_seg), abs=1e-6)
    assert inp.loc["metric0", "n"] == 30


def test_system_level_file_gives_a_system_level_report(tmp_path, capsys):
    rng = np.random.default_rng(5)
    frame = pd.DataFrame({"model": [f"sys{s}" for s in range(9)], "human": rng.normal(size=9)})
    frame["bleu"] = frame["human"] + rng.normal(size=9)
    frame["chrf"] = rng.normal(size=9)
    frame.to_csv(tmp_path / "sys.csv", index=False)
    out = tmp_path / "rep"
    code = main(["report", str(tmp_path / "sys.csv"), "--target", "human", "--n-resamples", "30",
                 "--out", str(out)])
    stdout, err = capsys.readouterr()
    assert code == 0, err
    assert ("system-level data (one score per system, no input column): reporting the system level with "
            "BOOT-SYSTEMS intervals and PERM-SYSTEMS tests") in err.splitlines()
    assert "System level (n = 9 systems)" in stdout and "Input level" not in stdout
    assert sorted(p.name for p in out.iterdir()) == REPORT_FILES
    table = pd.read_csv(out / "correlations.csv")
    assert list(table["level"].unique()) == ["system"]
    for m in ("bleu", "chrf"):
        assert table.set_index("metric").loc[m, "correlation"] == pytest.approx(
            stats.pearsonr(frame[m], frame["human"])[0], abs=1e-6)
    settings = json.loads((out / "report.json").read_text())["settings"]
    assert settings["ci_scheme"] == "BOOT-SYSTEMS" and settings["test_scheme"] == "PERM-SYSTEMS"


def test_input_col_none_reads_a_segment_file_as_system_level(tmp_path, capsys):
    frame = pd.DataFrame({"system": ["A", "B", "C", "D"], "doc": ["x", "y", "z", "w"],
                          "human": [1.0, 2.0, 3.0, 5.0], "m0": [2.0, 1.0, 4.0, 3.0]})
    frame.to_csv(tmp_path / "s.csv", index=False)
    code = main(["report", str(tmp_path / "s.csv"), "--target", "human", "--input-col", "none",
                 "--n-resamples", "20", "--no-files"])
    stdout, err = capsys.readouterr()
    assert code == 0, err
    assert "System level (n = 4 systems)" in stdout and "BOOT-SYSTEMS" in stdout
    row = next(ln for ln in stdout.splitlines() if " m0 " in ln).split()
    assert float(row[2]) == round(stats.pearsonr(frame["m0"], frame["human"])[0], 3)


def test_correlate_defaults_to_the_system_level_on_system_level_files(tmp_path, capsys):
    frame = pd.DataFrame({"system": list("ABCDEF"), "human": [1.0, 3.0, 2.0, 6.0, 4.0, 5.0],
                          "m0": [2.0, 1.0, 4.0, 3.0, 6.0, 5.0]})
    frame.to_csv(tmp_path / "s.csv", index=False)
    code = main(["correlate", str(tmp_path / "s.csv"), "--target", "human", "--table-format", "csv"])
    stdout, err = capsys.readouterr()
    assert code == 0, err
    lines = stdout.splitlines()
    assert lines[0] == "metric,system_pearson,system_spearman,system_kendall"
    got = [float(v) for v in lines[1].split(",")[1:]]
    x, y = frame["m0"], frame["human"]
    expected = [stats.pearsonr(x, y)[0], stats.spearmanr(x, y)[0], stats.kendalltau(x, y)[0]]
    np.testing.assert_allclose(got, expected, atol=1e-6)


def test_report_defaults_to_the_system_level_on_system_level_data():
    rng = np.random.default_rng(8)
    ds = xr.Dataset({"human": ("system", rng.normal(size=7)), "m0": ("system", rng.normal(size=7)),
                     "m1": ("system", rng.normal(size=7))}, coords={"system": [f"s{i}" for i in range(7)]})
    rep = xcorrstat.report(ds, target="human", n_resamples=20, rng=0)
    assert rep.levels == ["system"]
    assert rep.settings["ci_scheme"] == "BOOT-SYSTEMS" and rep.settings["test_scheme"] == "PERM-SYSTEMS"
    for m in ("m0", "m1"):
        assert float(rep.intervals["correlation"].sel(level="system", metric=m)) == pytest.approx(
            stats.pearsonr(ds[m].values, ds["human"].values)[0], abs=1e-12)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80), st.integers(min_value=30, max_value=60))
def test_any_label_is_drawn_as_its_printable_form(label, width):
    from matplotlib.text import Text

    from xcorrstat._display import figure_text, printable

    shown = printable(label, width)
    assert shown.isprintable() and len(shown) <= width
    if len(label) <= width and label.isprintable():
        assert shown == label
    text = Text(text=figure_text(label, width))
    assert text._preprocess_math(text.get_text()) == (shown, False)
