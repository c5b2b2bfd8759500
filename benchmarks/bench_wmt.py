"""``xcorrstat wmt`` end to end on a test set shaped like a WMT year: read, run the year's tasks, print the table.

Writes, in a temporary folder, a test set in mt-metrics-eval's layout shaped like the year's data
(tests/mtme_tree.py ``write_wmt_tree``: its language pairs, standard references, outlier systems,
alternative references scored as systems, two unrated systems per pair, MQM-like gold with
unannotated segments, seg/domain/sys files), with ``--systems`` MT systems and ``--segments``
segments per language pair, and every primary metric and baseline of the year's roles plus
``--contrastive`` contrastive ones (WMT23: 32 ranked metrics). Then it times, each in a fresh
process, ``read_mtme`` and the command ``xcorrstat wmt ROOT --testset ... --n-resamples K`` for each
``--k``. Goals (WMT23, 2 cores): the command under 10 s with ``--n-resamples 0`` and under 2 minutes
with 1,000 draws. ``--on wmt23`` runs another year's list (``--testset wmt24-on-wmt23``, ``wmt25``) on the
WMT23-shaped tree instead of its own. Each line gives the command's wall and CPU time (all threads) and the
peak RSS of the largest command run so far.

    python benchmarks/bench_wmt.py [--testset wmt23] [--on wmt23] [--segments 2000] [--systems 15] [--k 0 1000]

Beside mt-metrics-eval (``--mtme-source``, a checkout of google-research/mt-metrics-eval; never the PyPI
package of that name): ``--peer`` runs, on trees that exist (``--tree TESTSET=ROOT``, or trees written as
above), each protocol of ``--protocols`` both ways, each in a fresh process: ``xcorrstat wmt`` at ``--k``
draws (the last one given, default 1,000: exactly that many per test, no early stopping), and
mt-metrics-eval's own evaluation (``tests/mtme_reference.py``: the WMT22 notebook, ``tasks.WMT23``,
``tasks.WMT24OnWMT23``; the WMT25 list as ``tasks.WMT25`` builds it, on the WMT23 tree's pairs) at 0 and
at ``--mtme-k`` draws, each bounded by ``--mtme-timeout`` seconds. mt-metrics-eval's time at 1,000 draws
is scaled linearly from those two runs: ``load + run(0) + (run(k) - run(0)) * 1000 / k``, the draws of
its tests being its only cost that grows with k (``k <= 100`` is one block of its early stopping, so
these runs draw exactly ``k`` per pair; at 1,000 it makes between 100 and 1,000 per pair: the column
``MTME@1000 if early-stopped`` scales to 100 draws, the fewest its early stopping can make). The ratio
is MTME's scaled time over xcorrstat's measured one. When its run at ``--mtme-k`` draws passes
``--mtme-timeout``, the row gives lower bounds: those draws took more than the time the limit left
after its run at 0 draws.

    python benchmarks/bench_wmt.py --peer --mtme-source PATH --tree wmt22=ROOT22 --tree wmt23=ROOT23 \\
        --protocols wmt22,wmt23,wmt24-on-wmt23,wmt25 --lps wmt22=zh-en --mtme-k 2
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import resource
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


def _run(command: list[str], timeout: float | None = None) -> tuple[float, str]:
    start = time.perf_counter()
    run = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    wall = time.perf_counter() - start
    if run.returncode:
        sys.exit(run.stderr)
    return wall, run.stdout


MTME_CHILD = """
import json, os, sys, time
sys.path.insert(0, sys.argv[1])
os.environ["XCORRSTAT_MTME_SOURCE"] = sys.argv[2]
import mtme_reference as ref
root, name, testset, lps, k = json.loads(sys.argv[3])
cpu = time.process_time()
if name == "WMT25":  # WMT25's list on another test set's pairs: its per-pair template, re-targeted
    (tasks,) = ref.mtme_modules("tasks")
    template, _ = tasks.WMT25(["en-ko_KR"], k=k)
    start = time.perf_counter()
    sets = ref.mtme_eval_sets(root, testset, lps)
    loaded = time.perf_counter()
    for lp in lps:
        for t in template:
            task = tasks.Task(testset, lp, level=t.level, corr_fcn=t.corr_fcn, human=False, avg_by=t.avg_by,
                              perm_test=t.perm_test, corr_fcn_args=t.corr_fcn_args, primary=t.primary, k=k)
            ref._run_one(lambda task=task: task.Run(eval_set_dict=sets), 0)
    out = {"load": loaded - start, "run": time.perf_counter() - loaded, "tasks": 2 * len(lps)}
else:
    ev = ref.mtme_evaluation(root, name, lps, k=k, seed=0)
    out = {"load": ev.load_seconds, "run": ev.run_seconds, "tasks": len(ev.tasks),
           "skipped": sum(t.skipped is not None for t in ev.tasks)}
out["cpu"] = time.process_time() - cpu  # single-threaded: the CPU seconds of loading and running
print(json.dumps(out))
"""

#: Our protocol -> mt-metrics-eval's name (tests/mtme_reference.py) and the test set whose tree it runs on.
PEER = {"wmt22": ("WMT22", "wmt22"), "wmt23": ("WMT23", "wmt23"), "wmt24-on-wmt23": ("WMT24OnWMT23", "wmt23"),
        "wmt25": ("WMT25", "wmt23")}


def mtme_run(source: str, root: str, name: str, testset: str, lps: list[str], k: int,
             limit: float) -> dict[str, float] | None:
    """mt-metrics-eval's evaluation in a fresh process (PYTHONHASHSEED fixed), or None past ``limit`` s."""
    tests = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "tests")
    cmd = [sys.executable, "-c", MTME_CHILD, tests, os.path.abspath(source), json.dumps([root, name, testset, lps, k])]
    try:
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=limit,
                             env={**os.environ, "PYTHONHASHSEED": "0"})
    except subprocess.TimeoutExpired:
        return None
    if run.returncode:
        sys.exit(run.stderr)
    return json.loads(run.stdout.strip().splitlines()[-1])


def _lower_bound(name: str, testset: str, lps: list[str], wall: float, zero: dict[str, float], mk: int,
                 limit: float) -> None:
    """The row of a protocol whose mt-metrics-eval run at ``mk`` draws passed ``limit`` seconds: its draws
    took more than ``limit`` minus the load and the run at 0 draws, so its time at 1,000 draws is over
    ``load + run(0) + (limit - load - run(0)) * 1000 / mk``, and the ratio over that."""
    fixed = zero["load"] + zero["run"]
    per_draw = max(0.0, limit - fixed) / mk
    full, early = fixed + per_draw * 1000, fixed + per_draw * 100
    print(f"{name:16} {testset:>6} {','.join(lps):>18} {wall:12.1f} {fixed:12.1f} {'>' + format(limit, '.0f'):>10} "
          f"{'>' + format(full, '.0f'):>10} {'>' + format(full / wall, '.0f') + 'x':>7} "
          f"{'>' + format(early, '.0f'):>27} {'>' + format(early / wall, '.0f') + 'x':>7}", flush=True)
    print(f"{'':16} MTME at {mk} draws did not end within {limit:.0f} s: the figures are lower bounds "
          f"(MTME CPU s at 0 draws: {zero['cpu']:.1f})", flush=True)


def peer(args: argparse.Namespace) -> None:
    """Each protocol beside mt-metrics-eval on the same tree: seconds at 1,000 draws and the ratio."""
    trees = dict(t.split("=", 1) for t in args.tree)
    lps_of = dict(t.split("=", 1) for t in args.lps)
    k, mk = args.k[-1], args.mtme_k
    print(f"{'protocol':16} {'tree':>6} {'lps':>18} {'xcorrstat s':>12} {'MTME load+0':>12} {f'MTME k={mk}':>10} "
          f"{'MTME@1000':>10} {'ratio':>7} {'MTME@1000 if early-stopped':>27} {'ratio':>7}")
    for name in args.protocols.split(","):
        mtme_name, testset = PEER[name]
        root = trees[testset]
        lps = lps_of.get(name, lps_of.get(testset))
        lp_list = lps.split(",") if lps else sorted(os.path.basename(p)[:-5] for p in
                                                    glob.glob(os.path.join(root, testset, "documents", "*.docs")))
        command = [sys.executable, "-m", "xcorrstat", "wmt", root, "--testset", testset, "--tasks", name,
                   "--lps", ",".join(lp_list), "--n-resamples", str(k), "--quiet"]
        cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
        try:
            wall, _ = _run(command, args.mtme_timeout)
        except subprocess.TimeoutExpired:
            print(f"{name:16} {testset:>6} {','.join(lp_list):>18}  xcorrstat over {args.mtme_timeout:.0f} s", flush=True)
            continue
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        xc_cpu = after.ru_utime + after.ru_stime - cpu.ru_utime - cpu.ru_stime
        zero = mtme_run(args.mtme_source, root, mtme_name, testset, lp_list, 0, args.mtme_timeout)
        if zero is None:
            print(f"{name:16} {testset:>6} {','.join(lp_list):>18} {wall:12.1f}  MTME at 0 draws over "
                  f"{args.mtme_timeout:.0f} s: ratio over {args.mtme_timeout / wall:.0f}x without a draw", flush=True)
            continue
        some = mtme_run(args.mtme_source, root, mtme_name, testset, lp_list, mk, args.mtme_timeout)
        if some is None:  # a lower bound: its k draws took at least what the limit left after the run at 0
            _lower_bound(name, testset, lp_list, wall, zero, mk, args.mtme_timeout)
            continue
        per_draw = max(0.0, some["run"] - zero["run"]) / mk
        fixed = zero["load"] + zero["run"]
        full, early = fixed + per_draw * 1000, fixed + per_draw * 100
        print(f"{name:16} {testset:>6} {','.join(lp_list):>18} {wall:12.1f} {fixed:12.1f} "
              f"{some['load'] + some['run']:10.1f} {full:10.0f} {full / wall:6.0f}x {early:27.0f} {early / wall:6.0f}x",
              flush=True)
        cpu_full = zero["cpu"] + max(0.0, some["cpu"] - zero["cpu"]) * 1000 / mk
        print(f"{'':16} CPU seconds (less sensitive to other load): xcorrstat {xc_cpu:.1f} (all threads), MTME "
              f"{zero['cpu']:.1f} at 0 draws, {some['cpu']:.1f} at {mk}, {cpu_full:.0f} scaled to 1000: "
              f"{cpu_full / xc_cpu:.0f}x", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--testset", default="wmt23", choices=protocols(), help="task list (and its test set)")
    parser.add_argument("--segments", type=int, default=2000, help="segments per language pair")
    parser.add_argument("--systems", type=int, default=15, help="rated MT systems per language pair")
    parser.add_argument("--contrastive", type=int, default=20, help="contrastive metrics besides the ranked ones")
    parser.add_argument("--on", help="the test set whose tree the list runs on (default the list's own; "
                        "wmt23 runs WMT24's or WMT25's list on the WMT23-shaped tree)")
    parser.add_argument("--k", type=int, nargs="+", default=[0, 1000], help="draws of every task's test")
    parser.add_argument("--peer", action="store_true", help="beside mt-metrics-eval (needs --mtme-source)")
    parser.add_argument("--mtme-source", help="folder of an mt-metrics-eval checkout (holds mt_metrics_eval/)")
    parser.add_argument("--tree", action="append", default=[], help="TESTSET=ROOT: an existing tree (--peer)")
    parser.add_argument("--protocols", default="wmt22,wmt23,wmt24-on-wmt23,wmt25", help="protocols (--peer)")
    parser.add_argument("--lps", action="append", default=[],
                        help="PROTOCOL_OR_TESTSET=LP,LP: language pairs of a protocol (--peer; default all)")
    parser.add_argument("--mtme-k", type=int, default=2, help="mt-metrics-eval's draws, scaled to 1,000 (--peer)")
    parser.add_argument("--mtme-timeout", type=float, default=1200.0, help="seconds an MTME run may take (--peer)")
    args = parser.parse_args()
    if args.peer:
        if not args.mtme_source:
            sys.exit("--peer needs --mtme-source")
        with tempfile.TemporaryDirectory() as scratch:
            for name in args.protocols.split(","):
                testset = PEER[name][1]
                if testset not in dict(t.split("=", 1) for t in args.tree):
                    write_tree(scratch, testset, args.systems, args.segments, args.contrastive)
                    args.tree.append(f"{testset}={scratch}")
            peer(args)
        return
    testset = args.on or protocol(args.testset)["testset"]
    with tempfile.TemporaryDirectory() as root:
        lps = write_tree(root, testset, args.systems, args.segments, args.contrastive)
        start = time.perf_counter()
        ds = read_mtme(root, testset)
        print(f"read_mtme: {time.perf_counter() - start:.2f} s, {dict(ds.sizes)}, {len(ds.data_vars)} variables "
              f"({', '.join(lps)})")
        for k in args.k:
            command = [sys.executable, "-m", "xcorrstat", "wmt", root, "--testset", testset, "--tasks", args.testset,
                       "--lps", ",".join(lps), "--n-resamples", str(k), "--quiet"]
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            wall, out = _run(command)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
            peak = after.ru_maxrss / 2**20  # KiB on Linux: the largest child's peak RSS so far, in GiB
            table = [line for line in out.splitlines() if line.strip()]
            n_metrics = sum(1 for line in table[1:] if not line.startswith(("Marks:", "Skipped")))
            print(f"xcorrstat wmt --testset {testset} --tasks {args.testset} --n-resamples {k}: {wall:.1f} s, "
                  f"{cpu:.1f} CPU s, peak RSS {peak:.2f} GiB ({n_metrics} metrics ranked; goal < "
                  f"{10 if k == 0 else 120} s)")
            print("\n".join(table[:3]))


if __name__ == "__main__":
    main()
