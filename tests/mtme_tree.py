"""Write a test set in mt-metrics-eval's on-disk layout from random arrays.

:func:`write_mtme_tree` builds ``<root>/<testset>/`` with the folders mt-metrics-eval reads
(``sources``, ``references``, ``system-outputs``, ``documents``, ``human-scores``,
``metric-scores``) and returns every number it wrote, so that a reader can be checked against
the arrays rather than against itself. Floats are written with ``repr`` (shortest exact form):
a correct reader gets them back bit for bit.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence

import numpy as np

LEVELS = ("seg", "doc", "domain", "sys")


@dataclasses.dataclass
class MtmeTree:
    """What :func:`write_mtme_tree` wrote.

    ``scores[(lp, name, level)]`` maps each system in the file to its scores: a vector over the
    segments (``seg``), the documents in order (``doc``) or the sorted domains (``domain``), or a
    0-d array (``sys``); NaN where the file says ``None``. ``files`` holds the same keys and the
    file's path relative to the test set folder.
    """

    folder: str
    lps: list[str]
    refs: list[str]
    systems: dict[str, list[str]]
    human_systems: list[str]
    n_segments: dict[str, int]
    docs: dict[str, list[str]]
    domains: dict[str, list[str]]
    scores: dict[tuple[str, str, str], dict[str, np.ndarray]]
    files: dict[tuple[str, str, str], str]
    humans: list[str]
    metrics: list[str]


def _per_lp(value: int | Mapping[str, int], lp: str) -> int:
    return int(value[lp]) if isinstance(value, Mapping) else int(value)


def _fmt(value: float) -> str:
    return "None" if np.isnan(value) else repr(float(value))


def _write(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)


def _block_lines(scores: dict[str, np.ndarray], level: str, domains: list[str]) -> str:
    """The file's text: one block of lines per system (``domain`` lines start with the domain)."""
    parts = []
    for sys_name, values in scores.items():
        if level == "domain":
            parts.extend(f"{dom}\t{sys_name}\t{_fmt(v)}" for dom, v in zip(domains, values.tolist()))
        else:
            prefix = sys_name + "\t"
            parts.extend(prefix + _fmt(v) for v in np.atleast_1d(values).tolist())
    return "\n".join(parts) + "\n"


def _human_values(rng: np.random.Generator, n: int, none_frac: float) -> np.ndarray:
    values = -rng.poisson(1.5, size=n).astype(np.float64) + rng.integers(0, 4, size=n) * 0.25
    if none_frac:
        values[rng.random(n) < none_frac] = np.nan
    return values


def _level_scores(rng, seg: np.ndarray, level: str, doc_of: np.ndarray, dom_of: np.ndarray,
                  n_docs: int, n_domains: int, human: bool) -> np.ndarray:
    """Scores at `level` for one system: the segment vector, or an aggregate (humans) / fresh numbers."""
    if level == "seg":
        return seg
    groups = {"doc": (doc_of, n_docs), "domain": (dom_of, n_domains), "sys": (np.zeros(seg.size, int), 1)}
    idx, n = groups[level]
    if human:
        with np.errstate(invalid="ignore"):
            out = np.array([np.nanmean(seg[idx == g]) if np.any(~np.isnan(seg[idx == g])) else np.nan
                            for g in range(n)])
    else:
        out = rng.normal(size=n)
    return out if level != "sys" else out.reshape(())


def _write_text(folder: str, lp: str, n: int, refs: Sequence[str], systems: Sequence[str]) -> None:
    _write(os.path.join(folder, "sources", f"{lp}.txt"), "".join(f"source {lp} {i}\n" for i in range(n)))
    for ref in refs:
        text = "".join(f"reference {ref} {lp} {i}\n" for i in range(n))
        _write(os.path.join(folder, "references", f"{lp}.{ref}.txt"), text)
    for sys_name in systems:
        text = "".join(f"output {sys_name} {lp} {i}\n" for i in range(n))
        if sys_name in refs:
            text = "".join(f"reference {sys_name} {lp} {i}\n" for i in range(n))
        _write(os.path.join(folder, "system-outputs", lp, f"{sys_name}.txt"), text)


def write_mtme_tree(root: str | os.PathLike[str], testset: str, lps: Sequence[str],
                    n_systems: int | Mapping[str, int], n_segments: int | Mapping[str, int],
                    metrics: Sequence[str], refs: Sequence[str], humans: Sequence[str],
                    rng: np.random.Generator, *, noref_metrics: Sequence[str] = (),
                    levels: Sequence[str] = ("seg", "sys"), human_systems: bool = True, n_docs: int = 4,
                    domains: Sequence[str] = ("news", "social"), text: bool = True, documents: bool = True,
                    none_frac: float = 0.0) -> MtmeTree:
    """Write ``<root>/<testset>`` in mt-metrics-eval's layout and return what was written.

    Each language pair gets ``n_systems`` MT systems ``sys00, sys01, ...`` and, with
    ``human_systems``, every reference but the first as a system too (``refB`` ...), as WMT
    scores its alternative references. Metric ``M`` is written as ``M-<ref>`` for every ref
    (without scores for the system that is that reference, as in mt-metrics-eval) and each of
    ``noref_metrics`` as ``M-src``; each of ``humans`` as ``<lp>.<name>.<level>.score`` with a
    fraction ``none_frac`` of ``None`` segment scores (its coarser levels are the means of its
    segment scores). Segments fall into ``n_docs`` contiguous documents, whose domains cycle
    through ``domains``. ``text`` writes sources, references and system outputs; ``documents``
    the ``documents/<lp>.docs`` file.
    """
    folder = os.path.join(os.fspath(root), testset)
    tree = MtmeTree(folder, list(lps), list(refs), {}, [], {}, {}, {}, {}, {}, list(humans), [])
    tree.human_systems = list(refs[1:]) if human_systems else []
    for lp in lps:
        n_seg = _per_lp(n_segments, lp)
        systems = [f"sys{k:02d}" for k in range(_per_lp(n_systems, lp))] + tree.human_systems
        doc_of = np.concatenate([np.full(len(b), k) for k, b in enumerate(np.array_split(np.arange(n_seg), n_docs))])
        doc_names = [f"{lp}_doc{k}" for k in range(n_docs)]
        dom_names = [domains[k % len(domains)] for k in range(n_docs)]
        sorted_domains = sorted(set(dom_names))
        dom_of = np.array([sorted_domains.index(dom_names[d]) for d in doc_of])
        tree.systems[lp], tree.n_segments[lp] = systems, n_seg
        tree.docs[lp] = [doc_names[d] for d in doc_of]
        tree.domains[lp] = [sorted_domains[d] for d in dom_of]
        if documents:
            _write(os.path.join(folder, "documents", f"{lp}.docs"),
                   "".join(f"{dom_names[d]} {doc_names[d]}\n" for d in doc_of))
        if text:
            _write_text(folder, lp, n_seg, refs, systems)
        scorers = [(h, True, systems) for h in humans]
        scorers += [(f"{m}-{ref}", False, [s for s in systems if s != ref]) for m in metrics for ref in refs]
        scorers += [(f"{m}-src", False, systems) for m in noref_metrics]
        for name, human, scored in scorers:
            segs = {s: _human_values(rng, n_seg, none_frac) if human else rng.normal(size=n_seg) for s in scored}
            for level in levels:
                values = {s: _level_scores(rng, segs[s], level, doc_of, dom_of, n_docs, len(sorted_domains), human)
                          for s in scored}
                rel = (os.path.join("human-scores", f"{lp}.{name}.{level}.score") if human
                       else os.path.join("metric-scores", lp, f"{name}.{level}.score"))
                _write(os.path.join(folder, rel), _block_lines(values, level, sorted_domains))
                tree.scores[(lp, name, level)] = values
                tree.files[(lp, name, level)] = rel
            if not human and name not in tree.metrics:
                tree.metrics.append(name)
    return tree


# ----------------------------------------------------------------------------- WMT-shaped trees
#
# :func:`write_wmt_tree` writes a test set shaped like one year of the WMT metrics task, with the
# names mt-metrics-eval's ``meta_info.DATA`` knows (test set, language pairs, standard reference,
# gold names, outlier systems, primary and baseline metrics), so that its ``data.EvalSet`` loads it
# with the real meta-info. The facts below are copies of those meta-info entries, kept as data (the
# tests that have the mt-metrics-eval source check them against it).


@dataclasses.dataclass(frozen=True)
class WmtMetric:
    """One metric of a WMT-shaped tree: its basename and its status in the year's meta-info.

    ``qe`` metrics are reference-free (written ``<name>-src``); the others are written with the
    standard reference (``<name>-refA``) and, with ``other_ref``, with every other reference too.
    """

    name: str
    status: str
    qe: bool = False
    other_ref: bool = False


@dataclasses.dataclass(frozen=True)
class WmtYear:
    """The shape of one year: language pairs, their references (standard first), gold names."""

    testset: str
    lps: tuple[str, ...]
    refs: Mapping[str, tuple[str, ...]]
    gold: Mapping[str, str]
    outliers: Mapping[str, tuple[str, ...]]
    metrics: tuple[WmtMetric, ...]
    domains: tuple[str, ...]
    extra_gold: str


def _m(spec: str, status: str) -> tuple[WmtMetric, ...]:
    """Metrics from ``"name name:qe name:ref ..."``: ``:qe`` reference-free, ``:ref`` also other refs."""
    out = []
    for item in spec.split():
        name, _, flag = item.partition(":")
        out.append(WmtMetric(name, status, qe=flag == "qe", other_ref=flag == "ref"))
    return tuple(out)


#: The four years. Metric names are real submissions and baselines of each year (basenames with
#: hyphens and dots included), plus contrastive names absent from the year's lists. WMT25's
#: meta-info keeps baselines out of its primary list (the other years include them there).
WMT_YEARS: dict[str, WmtYear] = {
    "wmt22": WmtYear(
        "wmt22", ("en-de", "en-ru", "zh-en"),
        {"en-de": ("refA", "refB"), "en-ru": ("refA", "refB"), "zh-en": ("refA", "refB")},
        {"en-de": "mqm", "en-ru": "mqm", "zh-en": "mqm"}, {"en-de": ("M2M100_1.2B-B4",)},
        _m("metricx_xxl_MQM_2020:ref COMET-22 BLEURT-20 UniTE HuaweiTSC_EE_BERTScore_0.3_With_Human "
           "UniTE-src:qe COMETKiwi:qe BLEU:ref chrF", "primary")
        + _m("metricx_xl_DA_2019 KG-BERTScore:qe", "contrastive"),
        ("conversation", "news"), "wmt-appraise"),
    "wmt23": WmtYear(
        "wmt23", ("en-de", "he-en", "zh-en"),
        {"en-de": ("refA",), "he-en": ("refB", "refA"), "zh-en": ("refA",)},
        {"en-de": "mqm", "he-en": "mqm", "zh-en": "mqm"},
        {"en-de": ("synthetic_ref",), "zh-en": ("synthetic_ref",)},
        _m("XCOMET-Ensemble:ref MetricX-23 MetricX-23-QE:qe XCOMET-QE-Ensemble:qe GEMBA-MQM:qe", "primary")
        + _m("BLEU:ref chrF COMET BLEURT-20 CometKiwi:qe", "baseline")
        + _m("MetricX-23-c XCOMET-XL:ref", "contrastive"),
        ("news", "user_review"), "da-sqm"),
    "wmt24": WmtYear(
        "wmt24", ("en-de", "en-es", "ja-zh"),
        {"en-de": ("refB", "refA"), "en-es": ("refA",), "ja-zh": ("refA",)},
        {"en-de": "mqm", "en-es": "mqm", "ja-zh": "mqm"},
        {"en-de": ("MSLC",), "en-es": ("MSLC",), "ja-zh": ("MSLC",)},
        _m("MetricX-24-Hybrid:ref MetricX-24-Hybrid-QE:qe XCOMET XCOMET-QE:qe "
           "metametrics_mt_mqm_qe_kendall.seg.s:qe", "primary")
        + _m("BLEU:ref chrF COMET-22 BLEURT-20 CometKiwi:qe", "baseline")
        + _m("MetricX-24 XCOMET-XL:qe", "contrastive"),
        ("literary", "news"), "esa"),
    "wmt25": WmtYear(
        "wmt25", ("cs-uk_UA", "en-ko_KR", "ja-zh_CN"),
        {"cs-uk_UA": ("refA",), "en-ko_KR": ("refA", "refB"), "ja-zh_CN": ("refA",)},
        {"cs-uk_UA": "esa-human1", "en-ko_KR": "mqm", "ja-zh_CN": "mqm"}, {},
        _m("MetricX-25:ref GEMBA-v2:qe comet-multi rankedCOMET SEGALE-QE:qe TASER-No-Ref:qe", "primary")
        + _m("BLEU:ref chrF COMET22 COMETKiwi22:qe BERTScore", "baseline")
        + _m("MetricX-24-Hybrid CometKiwi-XL:qe", "contrastive"),
        ("literary", "social"), "esa-human2"),
}

#: MT system names; each language pair takes its rated systems from the front, its unrated ones
#: from the back.
_SYSTEM_POOL = ("ONLINE-A", "ONLINE-B", "ONLINE-W", "GPT4-5shot", "Lan-BridgeMT", "NLLB_MBR_BLEU",
                "IOL_Research", "Unbabel-Tower70B", "CUNI-DocTransformer", "ONLINE-G", "ONLINE-M", "ONLINE-Y",
                "HW-TSC", "SKIM", "Yishu", "ANVITA", "DLUT", "GTCOM_Peccavi", "Samsung_Research_Philippines",
                "KYB", "AIRC", "ZengHuiMT")  # the last n_unrated are the unrated systems


@dataclasses.dataclass
class WmtTree(MtmeTree):
    """What :func:`write_wmt_tree` wrote (the :class:`MtmeTree` fields, plus the WMT roles).

    Per language pair: ``std_ref`` and ``lp_refs`` (standard first); ``gold`` the standard human
    score (``humans`` lists every human score written); ``mt_systems`` the rated MT systems that are
    no outliers; ``outliers``; ``human`` the references written as systems; ``unrated`` the systems
    without any human score (the first with ``None`` everywhere in the human files, those in
    ``unrated_absent`` missing from them); ``tied`` two rated MT systems with the same system-level
    standard gold (or none); ``metric_names`` the metrics' full names
    (``MetricX-23-refA``, ``CometKiwi-src``). ``metric_status`` maps each basename to
    ``"primary"``, ``"baseline"`` or ``"contrastive"`` per the year's meta-info, ``display_status``
    the same keyed by mt-metrics-eval's display name without the leading ``*``
    (``CometKiwi[noref]``). ``no_sys_metrics_lp`` / ``no_domain_metrics_lp``: the language pair
    written without system-level / domain-level metric files (None: none).
    """

    testset: str
    std_ref: dict[str, str]
    lp_refs: dict[str, list[str]]
    gold: dict[str, str]
    mt_systems: dict[str, list[str]]
    outliers: dict[str, list[str]]
    human: dict[str, list[str]]
    unrated: dict[str, list[str]]
    unrated_absent: dict[str, list[str]]
    tied: dict[str, tuple[str, ...]]
    metric_names: dict[str, list[str]]
    metric_status: dict[str, str]
    display_status: dict[str, str]
    no_sys_metrics_lp: str | None
    no_domain_metrics_lp: str | None

    def rated(self, lp: str, human: bool = False) -> list[str]:
        """The systems mt-metrics-eval scores in a task on ``lp`` (outliers out; the standard
        reference never)."""
        humans = [h for h in self.human[lp] if h != self.std_ref[lp]] if human else []
        return sorted(self.mt_systems[lp] + humans)


def wmt_year(year: int | str) -> WmtYear:
    """The :data:`WMT_YEARS` entry for ``2023``, ``23``, ``"wmt23"`` ..."""
    key = str(year).lower()
    key = key if key.startswith("wmt") else "wmt" + key[-2:]
    if key not in WMT_YEARS:
        raise ValueError(f"year must be one of {sorted(WMT_YEARS)}, got {year!r}")
    return WMT_YEARS[key]


def _mqm(rng: np.random.Generator, t: np.ndarray) -> np.ndarray:
    """MQM-like scores from latent quality: minus weighted error counts, multiples of 0.25, many 0."""
    rate = np.exp(-np.clip(t, -3, 3))
    penalty = rng.poisson(0.5 * rate) + 5.0 * rng.poisson(0.1 * rate) + 0.25 * rng.poisson(0.4 * rate)
    return -np.minimum(penalty, 25.0)


def _esa(rng: np.random.Generator, t: np.ndarray) -> np.ndarray:
    """ESA/DA-like integer scores in [0, 100] from latent quality."""
    return np.round(np.clip(72.0 + 12.0 * t + rng.normal(0, 8, t.shape), 0, 100))


def _means(values: np.ndarray, groups: np.ndarray, n: int) -> np.ndarray:
    """Mean over the non-NaN entries of each group (NaN for a group without any)."""
    out = np.full(n, np.nan)
    for g in range(n):
        v = values[groups == g]
        v = v[~np.isnan(v)]
        if v.size:
            out[g] = v.mean()
    return out


def _levels_of(seg: np.ndarray, dom_of: np.ndarray, n_dom: int, noise: float,
               rng: np.random.Generator) -> dict[str, np.ndarray]:
    """seg, domain (sorted domains) and sys vectors of one system: means of its segment scores."""
    dom = _means(seg, dom_of, n_dom)
    sys_ = _means(seg, np.zeros(seg.size, int), 1)
    if noise:
        dom = dom + rng.normal(0, noise, dom.shape)
        sys_ = sys_ + rng.normal(0, noise, sys_.shape)
    return {"seg": seg, "domain": dom, "sys": sys_.reshape(())}


@dataclasses.dataclass
class _Lp:
    """One language pair's systems and segment layout while it is written."""

    lp: str
    refs: list[str]
    systems: list[str]
    doc_of: np.ndarray
    dom_of: np.ndarray
    domains: list[str]
    latent: np.ndarray


def _lp_layout(tree: WmtTree, spec: WmtYear, lp: str, rng: np.random.Generator, k: int, n_seg: int,
               n_unrated: int, n_docs: int, std_ref_system: bool) -> _Lp:
    refs = list(spec.refs[lp])
    mt = list(_SYSTEM_POOL[:k])
    unrated = list(_SYSTEM_POOL[len(_SYSTEM_POOL) - n_unrated:]) if n_unrated else []
    if set(mt) & set(unrated):
        raise ValueError(f"k_systems + n_unrated must be at most {len(_SYSTEM_POOL)}")
    outliers = list(spec.outliers.get(lp, ()))
    human = refs if std_ref_system else refs[1:]
    systems = sorted(mt + outliers + human + unrated)
    quality = {s: rng.normal(0, 0.6) for s in mt + unrated}
    quality.update({s: -2.5 for s in outliers})
    quality.update({s: 0.8 for s in human})
    difficulty = rng.normal(0, 0.8, n_seg)
    latent = np.array([quality[s] + difficulty + rng.normal(0, 0.7, n_seg) for s in systems])
    doc_of = np.concatenate([np.full(len(b), d) for d, b in enumerate(np.array_split(np.arange(n_seg), n_docs))])
    doc_domain = [spec.domains[d % len(spec.domains)] for d in range(n_docs)]
    domains = sorted(set(doc_domain))
    dom_of = np.array([domains.index(doc_domain[d]) for d in doc_of])
    tree.lps.append(lp)
    tree.std_ref[lp], tree.lp_refs[lp], tree.gold[lp] = refs[0], refs, spec.gold[lp]
    tree.mt_systems[lp], tree.outliers[lp], tree.human[lp] = sorted(mt), outliers, human
    tree.unrated[lp], tree.unrated_absent[lp] = unrated, unrated[1:]
    tree.systems[lp], tree.n_segments[lp] = systems, n_seg
    tree.docs[lp] = [f"{lp}_doc{d}" for d in doc_of]
    tree.domains[lp] = [domains[d] for d in dom_of]
    _write(os.path.join(tree.folder, "documents", f"{lp}.docs"),
           "".join(f"{doc_domain[d]} {lp}_doc{d}\n" for d in doc_of))
    _write_text(tree.folder, lp, n_seg, refs, systems)
    return _Lp(lp, refs, systems, doc_of, dom_of, domains, latent)


def _record(tree: WmtTree, lay: _Lp, name: str, human: bool, level: str,
            values: dict[str, np.ndarray]) -> None:
    rel = (os.path.join("human-scores", f"{lay.lp}.{name}.{level}.score") if human
           else os.path.join("metric-scores", lay.lp, f"{name}.{level}.score"))
    _write(os.path.join(tree.folder, rel), _block_lines(values, level, lay.domains))
    tree.scores[(lay.lp, name, level)] = values
    tree.files[(lay.lp, name, level)] = rel


def _write_golds(tree: WmtTree, lay: _Lp, golds: Sequence[str], rng: np.random.Generator,
                 none_frac: float, scattered_none_frac: float, sys_tie: bool) -> None:
    """Each human score at seg, domain and sys; unannotated segments None for every system.

    With ``sys_tie``, the last rated MT system's standard gold is the second-last one's, its
    annotated segments shuffled: a different segment vector with the same system-level mean
    (sums of quarters or integers are exact in floating point).
    """
    n_sys, n_seg = lay.latent.shape
    tree.tied[lay.lp] = tuple(tree.mt_systems[lay.lp][-2:]) if sys_tie and len(tree.mt_systems[lay.lp]) > 1 else ()
    for name in golds:
        seg = (_esa if name.startswith(("esa", "da", "wmt")) else _mqm)(rng, lay.latent)
        seg[:, rng.random(n_seg) < none_frac] = np.nan
        if scattered_none_frac:
            seg[rng.random((n_sys, n_seg)) < scattered_none_frac] = np.nan
        if name == golds[0] and tree.tied[lay.lp]:
            src, dst = (lay.systems.index(s) for s in tree.tied[lay.lp])
            ok = ~np.isnan(seg[src])
            seg[dst] = np.nan
            seg[dst, ok] = rng.permutation(seg[src, ok])
        per_sys = {}
        for k, s in enumerate(lay.systems):
            if s in tree.unrated_absent[lay.lp]:
                continue
            row = np.full(n_seg, np.nan) if s in tree.unrated[lay.lp] else seg[k]
            per_sys[s] = _levels_of(row, lay.dom_of, len(lay.domains), 0.0, rng)
        for level in ("seg", "domain", "sys"):
            _record(tree, lay, name, True, level, {s: v[level] for s, v in per_sys.items()})
        if name not in tree.humans:
            tree.humans.append(name)


def _write_metrics(tree: WmtTree, lay: _Lp, metrics: Sequence[WmtMetric], rng: np.random.Generator,
                   seg_missing: Sequence[str]) -> None:
    """Every metric, for every reference it uses, at the levels this language pair has."""
    z = (lay.latent - lay.latent.mean()) / lay.latent.std()
    levels = ["seg", "domain", "sys"]
    if lay.lp == tree.no_sys_metrics_lp:
        levels.remove("sys")
    if lay.lp == tree.no_domain_metrics_lp:
        levels.remove("domain")
    tree.metric_names[lay.lp] = []
    for metric in metrics:
        r, offset, scale = rng.uniform(0.25, 0.8), rng.uniform(-5, 5), rng.uniform(0.1, 20)
        bias = rng.normal(0, 0.3, (len(lay.systems), 1))
        noise = rng.normal(size=z.shape)
        variants = ["src"] if metric.qe else (lay.refs if metric.other_ref else lay.refs[:1])
        for variant in variants:
            if variant != lay.refs[0]:
                noise = 0.8 * noise + 0.6 * rng.normal(size=z.shape)
            seg = offset + scale * (r * z + np.sqrt(1 - r * r) * noise + bias)
            full = f"{metric.name}-{variant}"
            per_sys = {s: _levels_of(seg[k], lay.dom_of, len(lay.domains), 0.01 * scale, rng)
                       for k, s in enumerate(lay.systems) if s != variant}
            for level in levels:
                if level == "seg" and metric.name in seg_missing:
                    continue
                _record(tree, lay, full, False, level, {s: v[level] for s, v in per_sys.items()})
            tree.metric_names[lay.lp].append(full)
            if full not in tree.metrics:
                tree.metrics.append(full)


def write_wmt_tree(root: str | os.PathLike[str], year: int | str, rng: np.random.Generator, *,
                   k_systems: int = 6, n_segments: int | Mapping[str, int] = 60,
                   lps: Sequence[str] | None = None, no_sys_metrics_lp: str | None = None,
                   no_domain_metrics_lp: str | None = None, n_unrated: int = 2, n_docs: int = 6,
                   none_frac: float = 0.15, scattered_none_frac: float = 0.0, std_ref_system: bool = False,
                   extra_gold: bool = True, seg_missing: Sequence[str] = (), sys_tie: bool = True) -> WmtTree:
    """Write ``<root>/<testset>`` shaped like one year of the WMT metrics task; return what was written.

    ``year``: 2022 ... 2025 (or ``"wmt22"`` ...), see :data:`WMT_YEARS`; ``lps`` a subset of its
    language pairs (default all three). Each language pair gets ``k_systems`` rated MT systems, the
    year's outlier systems (rated, very bad), the references other than the standard one as systems
    (outputs equal to the reference; ``std_ref_system`` adds the standard reference too) and
    ``n_unrated`` unrated systems: the first ``None`` in every human file, the others absent from
    them. Segments fall into ``n_docs`` contiguous documents alternating between the year's two
    domains. Human scores: the standard gold (MQM-like, multiples of 0.25 with many zeros, or
    ESA-like integers) and, with ``extra_gold``, another one, at seg, domain and sys (means of the
    segment scores); a fraction ``none_frac`` of the segments is unannotated (``None`` for every
    system, as in WMT's MQM subsets), ``scattered_none_frac`` adds ``None`` in random cells;
    ``sys_tie`` gives two rated systems the same system-level gold (``tied``).
    Metrics: continuous scores correlated with the latent quality behind the gold, at seg, domain
    and sys (means of the segment scores plus noise), except no sys files for
    ``no_sys_metrics_lp``, no domain files for ``no_domain_metrics_lp`` and no seg files for the
    basenames in ``seg_missing``. Every text file (sources, references, system outputs,
    documents) is written.
    """
    spec = wmt_year(year)
    lps = list(spec.lps if lps is None else lps)
    unknown = sorted(set(lps) - set(spec.lps))
    if unknown:
        raise ValueError(f"{spec.testset} has no language pairs {unknown}; it has {list(spec.lps)}")
    folder = os.path.join(os.fspath(root), spec.testset)
    display = {m.name + ("[noref]" if m.qe else ""): m.status for m in spec.metrics}
    tree = WmtTree(folder, [], sorted({r for lp in lps for r in spec.refs[lp]}), {}, [], {}, {}, {}, {}, {},
                   [], [], spec.testset, {}, {}, {}, {}, {}, {}, {}, {}, {}, {},
                   {m.name: m.status for m in spec.metrics}, display, no_sys_metrics_lp, no_domain_metrics_lp)
    for lp in lps:
        lay = _lp_layout(tree, spec, lp, rng, k_systems, _per_lp(n_segments, lp), n_unrated, n_docs,
                         std_ref_system)
        golds = [spec.gold[lp]] + ([spec.extra_gold] if extra_gold else [])
        _write_golds(tree, lay, golds, rng, none_frac, scattered_none_frac, sys_tie)
        _write_metrics(tree, lay, spec.metrics, rng, seg_missing)
    tree.human_systems = sorted({s for lp in lps for s in tree.human[lp]})
    return tree
