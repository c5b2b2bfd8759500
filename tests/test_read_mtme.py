"""read_mtme: mt-metrics-eval's test-set folders read into one Dataset.

Trees are written by tests/mtme_tree.py from random arrays; the reader must give back every
number of every file (the arrays are the oracle, not the reader), NaN where a file has no score,
and a clear error naming the file and the line for a malformed file. With the mt-metrics-eval
source (its folder in the environment variable XCORRSTAT_MTME_SOURCE), its own EvalSet reads
the same tree and must agree.
"""

from __future__ import annotations

import json
import os

import numpy as np
import pandas as pd
import pytest
import scipy.stats
from mtme_source import mtme_modules
from mtme_tree import write_mtme_tree

import xcorrstat
from xcorrstat._io.mtme import is_mtme_testset, mtme_level, read_mtme

ITEM_DIM = {"seg": "input", "doc": "document", "domain": "domain_name"}
LPS = ["en-de", "zh-en"]


def _variable(name: str, level: str) -> str:
    return name if level == "seg" else f"{name}.{level}"


@pytest.fixture(scope="module")
def full(tmp_path_factory):
    """Two language pairs of different sizes, every level, text, None in the human scores."""
    root = tmp_path_factory.mktemp("mtme")
    tree = write_mtme_tree(root, "wmtx", LPS, {"en-de": 4, "zh-en": 3}, {"en-de": 23, "zh-en": 17},
                           ["BLEU", "COMET"], ["refA", "refB"], ["mqm", "wmt-raw"], np.random.default_rng(1),
                           noref_metrics=["Kiwi"], levels=("seg", "doc", "domain", "sys"), none_frac=0.2,
                           domains=("news", "social", "speech"))
    ds = read_mtme(root, "wmtx", levels=("seg", "doc", "domain", "sys"), text=True)
    return root, tree, ds


def _item_index(ds, tree, lp, level):
    if level == "seg":
        return np.arange(tree.n_segments[lp])
    labels = list(ds[ITEM_DIM[level]].values)
    items = list(dict.fromkeys(tree.docs[lp])) if level == "doc" else sorted(set(tree.domains[lp]))
    return np.array([labels.index(i) for i in items])


def test_round_trip_every_file(full):
    _, tree, ds = full
    assert sorted(ds["system"].values) == list(ds["system"].values)
    for (lp, name, level), by_sys in tree.scores.items():
        da = ds[_variable(name, level)].sel(lp=lp)
        expected = np.full(da.shape, np.nan)
        systems = list(ds["system"].values)
        for sys_name, values in by_sys.items():
            row = systems.index(sys_name)
            if level == "sys":
                expected[row] = values
            else:
                expected[row, _item_index(ds, tree, lp, level)] = values
        np.testing.assert_array_equal(da.values, expected, err_msg=f"{lp} {name} {level}")


def test_labels_coords_and_attrs(full):
    _, tree, ds = full
    assert list(ds["lp"].values) == LPS
    assert set(ds["system"].values) == set(tree.systems["en-de"]) | set(tree.systems["zh-en"])
    assert ds.sizes["input"] == 23 and list(ds["input"].values) == list(range(23))
    for lp in LPS:
        n = tree.n_segments[lp]
        assert list(ds["doc"].sel(lp=lp).values[:n]) == tree.docs[lp]
        assert list(ds["domain"].sel(lp=lp).values[:n]) == tree.domains[lp]
        assert pd.isna(ds["doc"].sel(lp=lp).values[n:]).all()
    assert dict(zip(ds["system"].values, ds["human_system"].values.tolist())) == {
        s: s == "refB" for s in ds["system"].values}
    assert ds.attrs["testset"] == "wmtx" and ds.attrs["lps"] == LPS and ds.attrs["references"] == ["refA", "refB"]
    assert ds.attrs["human_systems"] == ["refB"] and ds.attrs["n_segments"] == [23, 17]
    bleu = ds["BLEU-refA"].attrs
    assert (bleu["role"], bleu["level"], bleu["basename"], bleu["refs"], bleu["mtme_name"]) == (
        "metric", "seg", "BLEU", "refA", "BLEU-refA")
    assert bleu["files"] == [tree.files[(lp, "BLEU-refA", "seg")] for lp in LPS]
    assert ds["Kiwi-src.sys"].attrs["refs"] == "src" and ds["mqm.doc"].attrs["role"] == "human"
    assert ds["mqm.sys"].dims == ("lp", "system") and ds["mqm.domain"].dims == ("lp", "system", "domain_name")


def test_metric_lacks_its_own_reference_and_human_none_is_nan(full):
    _, tree, ds = full
    assert np.isnan(ds["BLEU-refB"].sel(system="refB")).all()
    assert not np.isnan(ds["BLEU-refA"].sel(system="refB", lp="en-de")).any()
    mqm = tree.scores[("en-de", "mqm", "seg")]["sys00"]
    assert np.isnan(mqm).any()
    np.testing.assert_array_equal(np.isnan(ds["mqm"].sel(lp="en-de", system="sys00").values[:23]), np.isnan(mqm))
    assert np.isnan(ds["mqm"].sel(lp="zh-en", system="sys03")).all()  # zh-en has 3 MT systems


def test_text(full):
    _, tree, ds = full
    lp = "zh-en"
    n = tree.n_segments[lp]
    assert list(ds["source"].sel(lp=lp).values[:n]) == [f"source {lp} {i}" for i in range(n)]
    assert list(ds["reference"].sel(lp=lp, ref="refA").values[:n]) == [f"reference refA {lp} {i}" for i in range(n)]
    assert list(ds["output"].sel(lp=lp, system="sys01").values[:n]) == [f"output sys01 {lp} {i}" for i in range(n)]
    assert pd.isna(ds["output"].sel(lp=lp, system="sys03").values).all()


def test_single_lp_and_filters(full):
    root, tree, _ = full
    ds = read_mtme(root, "wmtx", "zh-en", human="mqm", metrics=["BLEU", "Kiwi-src"], refs=["refA", "src"])
    assert "lp" not in ds.dims and ds["lp"].item() == "zh-en"
    # the default levels: segment, domain and system scores
    assert sorted(ds.data_vars) == sorted(f"{name}{level}" for name in ("mqm", "BLEU-refA", "Kiwi-src")
                                          for level in ("", ".domain", ".sys"))
    np.testing.assert_array_equal(ds["mqm.domain"].sel(system="sys02").values,
                                  tree.scores[("zh-en", "mqm", "domain")]["sys02"])
    assert int(ds["n_references"]) == len(tree.refs)
    assert ds["mqm"].dims == ("system", "input") and ds.sizes["input"] == 17
    np.testing.assert_array_equal(ds["BLEU-refA"].sel(system="sys02").values,
                                  tree.scores[("zh-en", "BLEU-refA", "seg")]["sys02"])
    only_sys = read_mtme(root, "wmtx", ["zh-en"], levels="sys", metrics=[], include_human_systems=False)
    assert sorted(only_sys.data_vars) == ["mqm.sys", "wmt-raw.sys"] and "refB" not in only_sys["system"].values
    assert only_sys.attrs["system_level"] == 1 and only_sys["mqm.sys"].dims == ("lp", "system")


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"human": "esa"}, r"human=.*'esa' names no score file"),
    ({"metrics": ["BLEU", "chrF"]}, r"metrics=.*'chrF'"),
    ({"refs": "refC"}, r"refs=.*'refC'"),
    ({"levels": "segment"}, "levels must be"),
    ({"levels": ["seg", "seg"]}, "levels must be"),
    ({"lps": []}, "lps must name"),
    ({"encoding": "no-such-codec"}, "encoding="),
])
def test_bad_arguments(full, kwargs, match):
    root, _, _ = full
    with pytest.raises(ValueError, match=match):
        read_mtme(root, "wmtx", **kwargs)


def test_bad_argument_types_and_folders(full, tmp_path):
    root, _, _ = full
    with pytest.raises(TypeError, match="text must be"):
        read_mtme(root, "wmtx", text=1)
    with pytest.raises(TypeError, match="metrics must be"):
        read_mtme(root, "wmtx", metrics=[1])
    with pytest.raises(FileNotFoundError, match="no test set folder"):
        read_mtme(root, "wmt99")
    with pytest.raises(FileNotFoundError, match="is itself a test set folder"):
        read_mtme(os.path.join(root, "wmtx"), "wmtx")
    with pytest.raises(FileNotFoundError, match="'fr-de'.*language pairs are"):
        read_mtme(root, "wmtx", ["en-de", "fr-de"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="no data for any language pair"):
        read_mtme(tmp_path, "empty")
    assert is_mtme_testset(os.path.join(root, "wmtx")) and not is_mtme_testset(root)


def test_mtme_level_feeds_the_analyses(full):
    _, tree, ds = full
    sys_ds = mtme_level(ds.sel(lp="en-de"), "sys")
    assert sys_ds.attrs["system_level"] == 1 and "BLEU-refA" in sys_ds and "mqm" in sys_ds
    r = xcorrstat.correlate(sys_ds, target="mqm", metrics=["COMET-refA"], level="system")
    scores = tree.scores
    names = [s for s in tree.systems["en-de"] if s != "refA"]
    x = [float(scores[("en-de", "COMET-refA", "sys")][s]) for s in names]
    z = [float(scores[("en-de", "mqm", "sys")][s]) for s in names]
    assert float(r.sel(metric="COMET-refA").squeeze()) == pytest.approx(scipy.stats.pearsonr(x, z)[0], abs=1e-12)
    doc = mtme_level(ds, "doc")
    assert doc["mqm"].dims == ("lp", "system", "input") and next(iter(doc.data_vars)) == "mqm"
    assert mtme_level(ds, "seg")["mqm"].identical(ds["mqm"])
    with pytest.raises(ValueError, match="no sys-level scores"):
        mtme_level(ds[["mqm"]], "sys")


# ----------------------------------------------------------------------------- ragged trees


@pytest.fixture
def small(tmp_path):
    """One language pair, 3 systems + refB, 6 segments in 2 documents; no text unless asked."""
    def make(**kwargs):
        options = {"levels": ("seg", "sys"), "n_docs": 2, "text": False}
        options.update(kwargs)
        tree = write_mtme_tree(tmp_path, "t", ["en-de"], 3, 6, ["BLEU"], ["refA", "refB"], ["mqm"],
                               np.random.default_rng(7), **options)
        return tree
    return make


def _edit(tree, rel, edit):
    path = os.path.join(tree.folder, rel)
    with open(path, encoding="utf-8") as fh:
        lines = fh.read().split("\n")[:-1]
    lines = edit(lines)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("".join(line + "\n" for line in lines))
    return rel


def _read(tree, **kwargs):
    return read_mtme(os.path.dirname(tree.folder), "t", "en-de", **kwargs)


SEG = "metric-scores/en-de/BLEU-refA.seg.score"
SYS = "metric-scores/en-de/BLEU-refA.sys.score"
HUMAN = "human-scores/en-de.mqm.seg.score"


@pytest.mark.parametrize(("rel", "edit", "where", "match"), [
    (SEG, lambda ls: ls[:3] + ls[4:], "line 5",
     r"system 'sys00' has 5 lines \(this is its last\), fewer than the 6 segments \(from 'documents/en-de.docs'\)"),
    (SEG, lambda ls: ls[:3] + [ls[3]] + ls[3:], "line 7", r"'sys00' has 7 lines \(this is its line 7\), more"),
    (SEG, lambda ls: ls[:8] + ["sys01\tabc"] + ls[9:], "line 9", "the score 'abc' is neither a number nor None"),
    (SEG, lambda ls: ls[:8] + ["sys01\t1e999"] + ls[9:], "line 9", "infinite"),
    (SEG, lambda ls: ls[:8] + [""] + ls[8:], "line 9", "blank"),
    (SEG, lambda ls: ls[:8] + ["sys01"] + ls[9:], "line 9", "too few fields"),
    (SEG, lambda ls: ls[:8] + ["sys01 1.0 2.0"] + ls[9:], "line 9", "3 fields; expected SYSTEM SCORE"),
    (SEG, lambda ls: ["sys00 1.0 2.0"] + ls[1:], "line 1", "3 fields"),
    (SEG, lambda ls: ls[:8] + ["sys01 1.0 2.0 3.0"] + ls[9:], "line 9", "4 fields"),
    (SYS, lambda ls: ls + [ls[1]], "line 5", r"system 'sys01' was already scored on line 2"),
    (HUMAN, lambda ls: ls[:-1], "line 23", r"'refB' has 5 lines \(this is its last\)"),
])
def test_malformed_file_names_file_and_line(small, rel, edit, where, match):
    tree = small()
    _edit(tree, rel, edit)
    with pytest.raises(ValueError, match=match) as info:
        _read(tree)
    assert f"{os.path.join(tree.folder, rel)!r}, {where}:" in str(info.value)


def test_none_and_nan_are_missing_in_metric_files_too(small):
    """Refused by default (test_mtme_checks.py); kept as NaN, with a note, when allowed."""
    tree = small()
    _edit(tree, SEG, lambda ls: ls[:2] + ["sys00\tNone", "sys00 nan"] + ls[4:])
    with pytest.raises(ValueError, match="line 3: system 'sys00' has no score"):
        _read(tree)
    ds = _read(tree, allow_incomplete=True)
    assert any("BLEU-refA (en-de, seg) lacks 2 scores of system 'sys00'" in n for n in ds.attrs["notes"])
    expected = tree.scores[("en-de", "BLEU-refA", "seg")]["sys00"].copy()
    expected[2:4] = np.nan
    np.testing.assert_array_equal(ds["BLEU-refA"].sel(system="sys00").values, expected)


def test_systems_are_the_union_missing_is_nan(small):
    tree = small()
    _edit(tree, SEG, lambda ls: [line for line in ls if not line.startswith("sys02")]
          + [f"newsys\t{k}.5" for k in range(6)])
    with pytest.raises(ValueError, match="system 'newsys' is not a system of en-de"):
        _read(tree)  # refused by default (test_mtme_checks.py); read as the union when allowed
    ds = _read(tree, allow_incomplete=True)
    assert "newsys" in ds["system"].values
    np.testing.assert_array_equal(ds["BLEU-refA"].sel(system="newsys").values, np.arange(6) + 0.5)
    assert np.isnan(ds["BLEU-refA"].sel(system="sys02")).all()
    assert np.isnan(ds["mqm"].sel(system="newsys")).all()
    np.testing.assert_array_equal(ds["mqm"].sel(system="sys02").values,
                                  tree.scores[("en-de", "mqm", "seg")]["sys02"])


def test_scores_only_tree_without_documents(small):
    tree = small(documents=False)
    ds = _read(tree)
    assert "doc" not in ds.coords and ds.sizes["input"] == 6
    np.testing.assert_array_equal(ds["mqm"].sel(system="refB").values, tree.scores[("en-de", "mqm", "seg")]["refB"])
    _edit(tree, SEG, lambda ls: [line for line in ls if not line.startswith("sys01")]
          + ["sys01\t1.0"] * 5)
    with pytest.raises(ValueError, match=r"'sys01' has 5 lines .*6 segments \(from '.*mqm.seg.score'"):
        _read(tree)
    write_mtme_tree(os.path.dirname(tree.folder), "u", ["en-de"], 2, 4, [], ["refA"], ["mqm"],
                    np.random.default_rng(0), levels=("doc",), documents=False, text=False)
    with pytest.raises(FileNotFoundError, match="documents/en-de.docs"):
        read_mtme(os.path.dirname(tree.folder), "u", levels="doc")


def test_layout_files_disagree_or_are_malformed(small):
    tree = small(text=True)
    _edit(tree, "sources/en-de.txt", lambda ls: ls[:-1])
    with pytest.raises(ValueError, match="sources/en-de.txt' has 5 lines but 'documents/en-de.docs' has 6"):
        _read(tree)
    _edit(tree, "sources/en-de.txt", lambda ls: ls + ["x"])
    _edit(tree, "documents/en-de.docs", lambda ls: ls[:2] + ["lonely"] + ls[3:])
    with pytest.raises(ValueError, match=r"documents/en-de.docs', line 3: expected DOMAIN DOC"):
        _read(tree)
    _edit(tree, "documents/en-de.docs", lambda ls: ls[:2] + ["news d0"] + ls[3:])
    _edit(tree, "system-outputs/en-de/sys01.txt", lambda ls: ls + ["extra"])
    with pytest.raises(ValueError, match=r"system-outputs/en-de/sys01.txt' has 7 lines, but there are 6"):
        _read(tree, text=True)
    assert _read(tree)["mqm"].sizes["input"] == 6  # text files are read only with text=True


def test_bad_names_empty_files_domains_and_encoding(small):
    tree = small(levels=("seg", "domain"))
    _edit(tree, "metric-scores/en-de/BLEU-refA.domain.score", lambda ls: ls[:1] + ["sports\tsys00\t1.0"] + ls[2:])
    with pytest.raises(ValueError, match=r"domain\.score', line 2: domain 'sports' is not in the documents file"):
        _read(tree, levels="domain")
    open(os.path.join(tree.folder, HUMAN), "w").close()
    with pytest.raises(ValueError, match=f"{HUMAN}' is empty"):
        _read(tree)
    with open(os.path.join(tree.folder, HUMAN), "wb") as fh:
        fh.write("sys\xe9 1.0\n".encode("latin-1"))
    with pytest.raises(ValueError, match="not valid utf-8 text"):
        _read(tree)
    os.remove(os.path.join(tree.folder, HUMAN))
    open(os.path.join(tree.folder, "human-scores", "en-de.mqm.score"), "w").close()
    with pytest.raises(ValueError, match="named <lp>.<name>.<level>.score"):
        _read(tree)


def test_more_malformed_trees(small):
    tree = small(levels=("seg", "domain"))
    rel = "human-scores/en-de.mqm.domain.score"
    _edit(tree, rel, lambda ls: ls + [ls[0]])
    with pytest.raises(ValueError, match=r"line 9: system 'sys00' in domain 'news' was already scored on line 1"):
        _read(tree, levels="domain")
    with open(os.path.join(tree.folder, "metric-scores", "en-de", "BLEU.seg.score"), "w") as fh:
        fh.write("sys00 1\n")
    with pytest.raises(ValueError, match=r"BLEU.seg.score': a metric score file is named <metric>-<ref>.<level>"):
        _read(tree)
    os.remove(os.path.join(tree.folder, "metric-scores", "en-de", "BLEU.seg.score"))
    os.link(os.path.join(tree.folder, HUMAN), os.path.join(tree.folder, "human-scores", "en-de.BLEU-refA.seg.score"))
    with pytest.raises(ValueError, match="would both be the variable 'BLEU-refA'"):
        _read(tree)


def test_jsonl_texts_and_missing_translations(small):
    tree = small(text=True)
    folder = tree.folder
    os.remove(os.path.join(folder, "sources", "en-de.txt"))
    with open(os.path.join(folder, "sources", "en-de.jsonl"), "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps({"source": f"jsonl source {i}"}) + "\n" for i in range(6))
    os.remove(os.path.join(folder, "system-outputs", "en-de", "sys02.txt"))
    with open(os.path.join(folder, "system-outputs", "en-de", "sys02.jsonl"), "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps({"hypothesis": f"h{i}"}) + "\n" for i in range(6))
    _edit(tree, "system-outputs/en-de/sys00.txt", lambda ls: ls[:2] + ["[No translation supplied]"] + ls[3:])
    ds = _read(tree, text=True)
    assert list(ds["source"].values) == [f"jsonl source {i}" for i in range(6)]
    assert list(ds["output"].sel(system="sys02").values) == [f"h{i}" for i in range(6)]
    out = ds["output"].sel(system="sys00").values
    assert pd.isna(out[2]) and list(out[[0, 1, 3]]) == [f"output sys00 en-de {i}" for i in (0, 1, 3)]
    assert list(ds["reference"].sel(ref="refB").values) == list(ds["output"].sel(system="refB").values)


# ------------------------------------------------------------------ mt-metrics-eval as the oracle


def _mtme_data():
    return mtme_modules("data", "meta_info")


def test_mtme_evalset_reads_the_same_scores(full):
    data, meta_info = _mtme_data()
    root, tree, ds = full
    for lp in LPS:
        info = meta_info.MetaInfo("refA", {"seg": "mqm", "sys": "mqm"}, set(), set())
        evs = data.EvalSet("wmtx", lp, read_stored_metric_scores=True, info=info, path=str(root), strict=True)
        mine = ds.sel(lp=lp)
        assert evs.sys_names == set(tree.systems[lp]) and evs.human_sys_names == {"refB"}
        assert evs.metric_names == set(tree.metrics) and evs.human_score_names == {"mqm", "wmt-raw"}
        n = len(evs.src)
        assert evs.DocsPerSeg() == list(mine["doc"].values[:n])
        assert evs.DomainsPerSeg() == list(mine["domain"].values[:n])
        items = {"seg": {"input": np.arange(n)}, "doc": {"document": list(evs.doc_names)},
                 "domain": {"domain_name": list(evs.domain_names)}, "sys": {}}
        for level, where in items.items():
            for name in sorted(evs.metric_names | evs.human_score_names):
                theirs = evs.Scores(level, name)
                for sys_name in evs.sys_names:
                    got = np.atleast_1d(mine[_variable(name, level)].sel(system=sys_name, **where).values)
                    if sys_name not in theirs:  # a metric's own reference
                        assert np.isnan(got).all()
                        continue
                    want = np.array([np.nan if v is None else v for v in theirs[sys_name]], dtype=float)
                    np.testing.assert_array_equal(got, want, err_msg=f"{lp} {name} {level} {sys_name}")
        assert np.isnan(mine["mqm"].values[:, n:]).all()
