"""``xcorrstat wmt`` end to end on a test set shaped like a WMT year: read, run the year's tasks, print the table.

Writes, in a temporary folder, a test set in mt-metrics-eval's layout shaped like the year's data
(tests/mtme_tree.py ``write_wmt_tree``: its language pairs, standard references, outlier systems,
alternative references scored as systems, two unrated systems per pair, MQM-like gold with
unannotated segments, seg/domain/sys files), with ``--systems`` MT systems and ``--segments``
segments per language pair, and every primary metric and baseline of the year's roles plus
``--contrastive`` contrastive ones (WMT23: 32 ranked metrics). Then it times, each in a fresh
process, ``read_mtme`` and the command ``xcorrstat wmt ROOT --testset ... --n-resamples K`` for each
``--k``. Goals (WMT23, 2 cores): the command under 10 s with ``--n-resamples 0`` and under 2 minutes
with 1,000 draws.

    python benchmarks/bench_wmt.py [--testset wmt23] [--segments 2000] [--systems 15] [--k 0 1000]
"""

from __future__ import annotations

import argparse
import glob
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from xcorrstat._io.mtme import read_mtme
from xcorrstat.wmt import protocol, roles
from xcorrstat.wmt._protocols import protocols

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "tests"))
from mtme_tree import write_wmt_tree  # the tree writer of the tests


def _clone(path: str, new_path: str, rng: np.random.Generator) -> None:
    """A score file like ``path`` with the scores moved by noise (the last field of every line)."""
    with open(path, encoding="utf-8") as fh:
        rows = [line.rstrip("\n").split("\t") for line in fh]
    with open(new_path, "w", encoding="utf-8") as fh:
        for *labels, score in rows:
            value = "None" if score == "None" else repr(float(score) + float(rng.normal(0, 0.3)))
            fh.write("\t".join([*labels, value]) + "\n")


def add_metrics(folder: str, names: list[str], rng: np.random.Generator) -> None:
    """More metrics in every language pair, each a noisy copy of one the tree has (same references, levels)."""
    for lp_dir in sorted(glob.glob(os.path.join(folder, "metric-scores", "*"))):
        ref_based = sorted({os.path.basename(p).rsplit(".", 2)[0] for p in glob.glob(os.path.join(lp_dir, "*.score"))
                            if not p.endswith(("-src.seg.score", "-src.sys.score", "-src.domain.score"))})
        template = next(m for m in ref_based if m.rsplit("-", 1)[1].startswith("ref"))
        base, ref = template.rsplit("-", 1)
        for name in names:
            for path in glob.glob(os.path.join(lp_dir, f"{template}.*.score")):
                level = os.path.basename(path).rsplit(".", 2)[1]
                _clone(path, os.path.join(lp_dir, f"{name}-{ref}.{level}.score"), rng)


def write_tree(root: str, testset: str, systems: int, segments: int, contrastive: int) -> list[str]:
    """The tree, with every ranked metric of the test set's roles; returns its language pairs."""
    rng = np.random.default_rng(0)
    tree = write_wmt_tree(root, testset, rng, k_systems=systems, n_segments=segments)
    ranked = sorted(set().union(*(r.ranked for lp, r in roles(testset).items() if lp in tree.lps)))
    have = {name.rsplit("-", 1)[0] for lp in tree.lps for name in tree.metric_names[lp]}
    extra = [m for m in ranked if m not in have] + [f"contrastive-{k:02d}" for k in range(contrastive)]
    add_metrics(os.path.join(root, testset), extra, rng)
    return list(tree.lps)


def _run(command: list[str]) -> tuple[float, str]:
    start = time.perf_counter()
    run = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if run.returncode:
        sys.exit(run.stderr)
    return wall, run.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--testset", default="wmt23", choices=protocols(), help="task list (and its test set)")
    parser.add_argument("--segments", type=int, default=2000, help="segments per language pair")
    parser.add_argument("--systems", type=int, default=15, help="rated MT systems per language pair")
    parser.add_argument("--contrastive", type=int, default=20, help="contrastive metrics besides the ranked ones")
    parser.add_argument("--k", type=int, nargs="+", default=[0, 1000], help="draws of every task's test")
    args = parser.parse_args()
    testset = protocol(args.testset)["testset"]
    with tempfile.TemporaryDirectory() as root:
        lps = write_tree(root, testset, args.systems, args.segments, args.contrastive)
        start = time.perf_counter()
        ds = read_mtme(root, testset)
        print(f"read_mtme: {time.perf_counter() - start:.2f} s, {dict(ds.sizes)}, {len(ds.data_vars)} variables "
              f"({', '.join(lps)})")
        for k in args.k:
            command = [sys.executable, "-m", "xcorrstat", "wmt", root, "--testset", testset, "--tasks", args.testset,
                       "--n-resamples", str(k), "--quiet"]
            wall, out = _run(command)
            table = [line for line in out.splitlines() if line.strip()]
            n_metrics = sum(1 for line in table[1:] if not line.startswith(("Marks:", "Skipped")))
            print(f"xcorrstat wmt --tasks {args.testset} --n-resamples {k}: {wall:.1f} s "
                  f"({n_metrics} metrics ranked; goal < {10 if k == 0 else 120} s)")
            print("\n".join(table[:3]))


if __name__ == "__main__":
    main()
