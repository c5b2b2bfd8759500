"""Same results: every public function of xcorrstat, bit for bit, in the working tree and in an earlier commit.

A change that only moves code around (a new module layout, helpers merged or split) must
not change a single number. This script checks that on the bundled SummEval data:

1. it checks out ``--baseline`` (default ``HEAD``) into a temporary ``git worktree``;
2. it runs the same list of cases twice, each time in a fresh Python process: once with the
   baseline tree first on ``PYTHONPATH`` and once with the working tree this script lives in
   (each process checks that ``xcorrstat`` was imported from the tree it was meant to use);
3. each run stores ``{case name: result}`` in a pickle, and the results are compared.

The cases call the public API only, the part a reorganisation of the internal modules must
keep: the names in ``xcorrstat.__all__``; the exports of ``xcorrstat.agreement``,
``xcorrstat.diagnostics`` and the NumPy kernels (``xcorrstat._kernels``, once public: see
``MOVED``); the ``.corrstat`` accessors on Dataset,
DataArray and DataFrame; and the command line, through ``xcorrstat._cli.main([...])`` with its
output captured. Every public function is called at least once, most of them with several
option combinations (levels, methods, Kendall variants, resampled dims, interval methods,
permutation schemes, corrections ...), with fixed seeds, a subset of the metrics and few draws.
The kernels are called on small NumPy arrays drawn with a fixed seed.

How results are compared:

* xarray objects: every variable and coordinate bit for bit
  (``np.array_equal(a, b, equal_nan=True)`` on the raw arrays, and the same dtype), dims,
  sizes, variable order and names; attrs are compared separately and reported in their own
  column (an attr difference does not fail the run);
* pandas objects: the values of every column (``.to_numpy()``), dtypes, index and columns;
* dicts, tuples, named tuples and dataclasses (the report): field by field;
* floats: bit for bit (``np.float64(x).tobytes()``); strings and other scalars exactly;
* a case that raises records the exception type and message: both trees must raise the same
  error. Warnings raised by a case are recorded and reported beside the attrs (a newer tree may
  warn about an earlier spelling of an option the cases use); they do not fail the run.

The cases are written for the settings objects: ``test=xcorrstat.Permutation(...)`` (or
``Bootstrap``, ``Williams``), ``bootstrap(..., resample=xcorrstat.Bootstrap(...))`` and
``with xcorrstat.set_options(batch=...)``. A tree from before them (its functions took
``permute=``, ``n_resamples=``, ``rng=``, ``batch=`` ... as keywords) gets stand-ins for the
objects and its functions and accessor methods take them back as those keywords
(``FLAT_SETTINGS``, ``_restore_flat``), so the same calls run on either side of that change.

A case whose public names are missing in one tree (comparing with an older commit) runs in
the other tree only; it is listed as "only in baseline" / "only in current" and does not fail
the run.

Usage::

    python benchmarks/same_results.py [--baseline REV] [--quick]

``--quick`` halves the number of draws and trials. The table has one line per case: its name,
the number of arrays compared, "identical" or the largest absolute difference and where, and
whether the attrs are the same. Exit code 0 when every case gives identical values in both
trees, 1 when some case differs, 2 when a tree could not be run.
"""

from __future__ import annotations

import argparse
import inspect
import math
import os
import pickle
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

N_RESAMPLES = 400  # draws of the resampling cases; --quick halves them
N_TRIALS = 40  # trials of the method-validation cases; --quick halves them

# ---------------------------------------------------------------------------------------------
# Capture (runs in a child process, against one tree)
# ---------------------------------------------------------------------------------------------

_RESULT_KEYS = {"result", "data_vars", "items", "fields", "values", "__attrs__", "columns_data"}


def _key(name) -> str:
    """A stable string key for a label (variable names may be any hashable)."""
    return name if isinstance(name, str) else f"{type(name).__name__}:{name!r}"


def canon(obj):
    """``obj`` as plain data (dicts, lists, NumPy arrays, scalars) that pickles without xcorrstat.

    Nothing refers to a class or module of the package, so the parent can load and compare
    the results of any tree, and a class that moved to another module compares equal.
    """
    import dataclasses

    import numpy as np
    import pandas as pd
    import xarray as xr

    if isinstance(obj, xr.Dataset):
        return {
            "__type__": "Dataset",
            "sizes": {_key(k): int(v) for k, v in obj.sizes.items()},
            "order": [_key(n) for n in obj.data_vars],
            "data_vars": {_key(n): _canon_variable(v) for n, v in obj.data_vars.items()},
            "coords": {_key(n): _canon_variable(v) for n, v in obj.coords.items()},
            "__attrs__": canon(dict(obj.attrs)),
        }
    if isinstance(obj, xr.DataArray):
        name = "(unnamed)" if obj.name is None else _key(obj.name)
        return {
            "__type__": "DataArray",
            "name": name,
            "data_vars": {name: _canon_variable(obj)},
            "coords": {_key(n): _canon_variable(v) for n, v in obj.coords.items()},
        }
    if isinstance(obj, pd.DataFrame):
        return {
            "__type__": "DataFrame",
            "columns": canon(obj.columns),
            "index": canon(obj.index),
            "dtypes": [str(d) for d in obj.dtypes],
            "columns_data": {
                f"{i}:{_key(c)}": _array(obj.iloc[:, i].to_numpy()) for i, c in enumerate(obj.columns)
            },
            "__attrs__": canon(dict(obj.attrs)),
        }
    if isinstance(obj, pd.Series):
        return {
            "__type__": "Series",
            "name": _key(obj.name),
            "dtype": str(obj.dtype),
            "index": canon(obj.index),
            "values": _array(obj.to_numpy()),
        }
    if isinstance(obj, pd.Index):
        return {
            "__type__": "Index",
            "names": [_key(n) for n in obj.names],
            "dtype": str(obj.dtype),
            "level_values": [_array(obj.get_level_values(i).to_numpy()) for i in range(obj.nlevels)],
        }
    if isinstance(obj, np.ndarray):
        return _array(obj)
    if isinstance(obj, np.generic):
        return np.asarray(obj)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {
            "__type__": f"dataclass {type(obj).__name__}",
            "fields": {f.name: canon(getattr(obj, f.name)) for f in dataclasses.fields(obj)},
        }
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):  # named tuple
        return {"__type__": f"namedtuple {type(obj).__name__}",
                "fields": {f: canon(getattr(obj, f)) for f in obj._fields}}
    if isinstance(obj, dict):
        return {"__type__": "dict", "items": {_key(k): canon(v) for k, v in obj.items()}}
    if isinstance(obj, (list, tuple)):
        return {"__type__": type(obj).__name__, "items": [canon(v) for v in obj]}
    if isinstance(obj, (set, frozenset)):
        return {"__type__": type(obj).__name__, "items": sorted(repr(v) for v in obj)}
    if obj is None or isinstance(obj, (bool, int, float, complex, str, bytes)):
        return obj
    if isinstance(obj, os.PathLike):
        return {"__type__": "path", "name": Path(obj).name}
    return {"__type__": "other", "type": type(obj).__name__, "repr": repr(obj)}


def _canon_variable(v):
    return {
        "__type__": "Variable",
        "dims": [_key(d) for d in v.dims],
        "values": _array(v.values),
        "__attrs__": canon(dict(v.attrs)),
    }


def _array(a):
    import numpy as np

    a = np.asarray(a)
    if a.dtype.kind == "O":  # entries may be anything: make them plain too
        out = np.empty(a.shape, dtype=object)
        for idx, v in np.ndenumerate(a):
            out[idx] = v if v is None or isinstance(v, (str, bytes, bool, int, float)) else canon(v)
        return out
    return np.array(a, copy=True)


def _lookup(root, dotted: str):
    obj = root
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


def build_cases(scratch: Path, quick: bool):
    """The list of ``(name, needs, thunk)``; ``needs`` are public names the case calls."""
    import numpy as np
    import pandas as pd
    import xarray as xr

    import xcorrstat as xcs

    n = N_RESAMPLES // 2 if quick else N_RESAMPLES
    n_trials = N_TRIALS // 2 if quick else N_TRIALS
    cases: list[tuple[str, tuple[str, ...], object]] = []

    def add(name, needs, fn):
        cases.append((name, tuple([needs] if isinstance(needs, str) else needs), fn))

    def batched(size, fn):
        """``fn()`` with ``set_options(batch=size)`` (the draws computed together; never the numbers)."""
        def run():
            with xcs.set_options(batch=size):
                return fn()
        return run

    def fisher_as_before(res):
        """fisher's result as an earlier tree gave it: the interval's n as the coordinate ``n`` (it is now
        the variable ``sample_size``, and ``n`` counts units as correlate's does)."""
        if "sample_size" in res.data_vars:
            res = res.assign_coords(n=res["sample_size"].variable).drop_vars("sample_size")
        return res

    def ties_as_before(res):
        """calibrate_ties' result as an earlier tree gave it: ``n`` a variable after ``correlation`` (it is now
        the coordinate of ``correlation``, as in every other result)."""
        if "n" in res.coords and "n" not in res.data_vars:
            res = res.reset_coords("n")
            res = res[["epsilon", "correlation", "n", *[v for v in res.data_vars if v not in ("epsilon", "correlation", "n")]]]
        return res

    def trials(size, func, *args, **kw):
        """``func(*args, **kw)`` with ``size`` trials per task: the ``trial_batch`` option, or the parameter
        of a tree from before it was an option (never the numbers)."""
        if "trial_batch" in inspect.signature(func).parameters:
            return func(*args, trial_batch=size, **kw)
        with xcs.set_options(trial_batch=size):
            return func(*args, **kw)

    T, T2 = "expert_relevance", "expert_coherence"
    METRICS = ["rouge_1_f1", "rouge_2_f1", "bertscore_f1", "qa_eval_f1", "meteor"]
    X, Y = "qa_eval_f1", "rouge_2_f1"

    full = xcs.datasets.summeval()
    ds = full[[T, T2, *METRICS]]
    da = ds.to_array("metric")  # (metric, system, input), the DataArray form of the scores
    frame = ds.to_dataframe().reset_index()  # wide table with system and input columns

    # the same scores with 4% of the cells missing (fixed seed)
    rng = np.random.default_rng(20240601)
    holes = ds.copy()
    for name in [T, *METRICS]:
        mask = rng.random(ds[name].shape) < 0.04
        holes[name] = ds[name].where(~mask)

    # two tasks: the data and a noisier copy of its metrics
    noisy = ds.copy()
    for name in METRICS:
        sd = float(ds[name].std())
        noisy[name] = ds[name] + 0.5 * sd * xr.DataArray(rng.normal(size=ds[name].shape), dims=ds[name].dims)
        noisy[name].attrs = dict(ds[name].attrs)
    tasks = xr.concat([ds, noisy], dim="task").assign_coords(task=["a", "b"])

    # ---------------------------------------------------------------- the package itself
    add("package/__version__", "__version__", lambda: xcs.__version__)
    add("package/__all__", "__all__", lambda: sorted(xcs.__all__))
    add("datasets/summeval", "datasets.summeval", lambda: xcs.datasets.summeval())
    add("datasets/SUMMEVAL_HUMAN", "datasets.SUMMEVAL_HUMAN", lambda: xcs.datasets.SUMMEVAL_HUMAN)

    def summeval_file():
        import hashlib

        p = xcs.datasets.summeval_path()
        return {"name": p.name, "sha256": hashlib.sha256(p.read_bytes()).hexdigest()}

    add("datasets/summeval_path", "datasets.summeval_path", summeval_file)
    add("options/get_options", "get_options", lambda: xcs.get_options())

    def options_block():
        with xcs.set_options(min_pairs=60):
            inside = xcs.get_options()
            r = xcs.correlate(holes, target=T, level="input", method="kendall", metrics=METRICS)
        return {"inside": inside, "after": xcs.get_options(), "correlation": r}

    add("options/set_options-with", ("set_options", "get_options", "correlate"), options_block)

    def options_global():
        before = xcs.get_options()["min_pairs"]
        xcs.set_options(min_pairs=90)
        try:
            r = xcs.correlate(holes, target=T, level="input", method="pearson", metrics=METRICS)
            inside = xcs.get_options()
        finally:
            xcs.set_options(min_pairs=before)
        return {"inside": inside, "correlation": r}

    add("options/set_options-global", ("set_options", "get_options", "correlate"), options_global)

    # ---------------------------------------------------------------- correlate
    for level in ("system", "input", "global", "within_system"):
        for method in ("pearson", "spearman", "kendall"):
            add(f"correlate/{level}/{method}", "correlate",
                lambda level=level, method=method: xcs.correlate(ds, target=T, level=level, method=method))
    for variant in ("b", "c", "a", "23", "acc23"):
        for level in ("system", "input", "global"):
            add(f"correlate/{level}/kendall-{variant}", "correlate",
                lambda variant=variant, level=level: xcs.correlate(
                    ds, target=T, level=level, method="kendall", variant=variant, metrics=METRICS))
    add("correlate/lists", "correlate", lambda: xcs.correlate(
        ds, target=[T, T2], level=["system", "input", "global", "within_system"],
        method=["pearson", "spearman", "kendall"], metrics=METRICS))
    add("correlate/input/kendall-acc23-epsilon", "correlate", lambda: xcs.correlate(
        ds, target=T, level="input", method="kendall", variant="acc23", epsilon=0.02, metrics=METRICS))
    add("correlate/within_system/kendall-23-epsilon", "correlate", lambda: xcs.correlate(
        ds, target=T, level="within_system", method="kendall", variant="23", epsilon=0.01, metrics=METRICS))
    for level in ("input", "within_system"):
        add(f"correlate/{level}/weighted", "correlate", lambda level=level: xcs.correlate(
            holes, target=T, level=level, method="spearman", average="weighted", metrics=METRICS))
    for level in ("system", "input", "global"):
        add(f"correlate/{level}/missing-cells", "correlate", lambda level=level: xcs.correlate(
            holes, target=T, level=level, method=["pearson", "kendall"], metrics=METRICS))
    add("correlate/system/complete_inputs", "correlate", lambda: xcs.correlate(
        holes, target=T, level="system", complete_inputs=True, metrics=METRICS))
    add("correlate/input/skipna-false", "correlate", lambda: xcs.correlate(
        holes, target=T, level="input", skipna=False, metrics=METRICS))
    add("correlate/input/min_pairs", "correlate", lambda: xcs.correlate(
        holes, target=T, level="input", method="kendall", min_pairs=15, metrics=METRICS))
    add("correlate/task-dim", "correlate", lambda: xcs.correlate(
        tasks, target=T, level=["system", "input"], metrics=METRICS))
    add("correlate/lazy-dask", "correlate", lambda: xcs.correlate(
        ds.chunk({"input": 25}), target=T, level=["system", "input", "global"], method="spearman",
        metrics=METRICS).compute())
    add("correlate/all-metrics", "correlate", lambda: xcs.correlate(
        full, target=T, level=["system", "input"], method="kendall"))
    add("accessor/Dataset.correlate", "correlate", lambda: ds.corrstat.correlate(
        target=T, level="input", method="kendall"))
    add("accessor/DataArray.correlate", "correlate", lambda: da.corrstat.correlate(
        target=T, level=["system", "global"], method="pearson", metrics=METRICS))
    add("accessor/DataFrame.correlate", "correlate", lambda: frame.corrstat.correlate(
        target=T, level=["system", "input"], method="spearman", metrics=METRICS))
    add("accessor/DataFrame.to_dataset", "from_dataframe", lambda: frame.corrstat.to_dataset(human=[T, T2]))

    # ---------------------------------------------------------------- bootstrap and fisher
    for resample in ("system", "input", "both"):
        dims = ("system", "input") if resample == "both" else resample
        for level, method in (("system", "pearson"), ("input", "kendall"), ("global", "spearman")):
            add(f"bootstrap/{level}/{method}/resample-{resample}", ("bootstrap", "Bootstrap"),
                lambda dims=dims, level=level, method=method: xcs.bootstrap(
                    ds, target=T, level=level, method=method, metrics=METRICS,
                    resample=xcs.Bootstrap(dims, n_resamples=n, rng=0)))
    for ci in ("percentile", "basic", "bca"):
        for resample in ("system", "input"):
            add(f"bootstrap/system/ci-{ci}/resample-{resample}", ("bootstrap", "Bootstrap"),
                lambda ci=ci, resample=resample: xcs.bootstrap(
                    ds, target=T, level="system", method="kendall", metrics=METRICS,
                    resample=xcs.Bootstrap(resample, n_resamples=n, rng=1), ci=ci, confidence_level=0.9))
    add("bootstrap/within_system/kendall", ("bootstrap", "Bootstrap"), lambda: xcs.bootstrap(
        ds, target=T, level="within_system", method="kendall", metrics=METRICS,
        resample=xcs.Bootstrap(n_resamples=n, rng=2)))
    add("bootstrap/levels-list/keep_distribution", ("bootstrap", "Bootstrap"), lambda: xcs.bootstrap(
        ds, target=[T, T2], level=["system", "input"], method="pearson", metrics=METRICS,
        resample=xcs.Bootstrap(n_resamples=n, rng=3, keep_distribution=True)))
    add("bootstrap/input/kendall-acc23-calibrate", ("bootstrap", "Bootstrap"), lambda: xcs.bootstrap(
        ds, target=T, level="input", method="kendall", variant="acc23", epsilon="calibrate",
        metrics=METRICS[:3], resample=xcs.Bootstrap("input", n_resamples=max(n // 4, 50), rng=4)))
    add("bootstrap/system/kendall-c-batch7", ("bootstrap", "Bootstrap", "set_options"), batched(7, lambda: xcs.bootstrap(
        ds, target=T, level="system", method="kendall", variant="c", metrics=METRICS,
        resample=xcs.Bootstrap(n_resamples=n // 2, rng=5))))
    add("bootstrap/input/missing-cells-weighted", ("bootstrap", "Bootstrap"), lambda: xcs.bootstrap(
        holes, target=T, level="input", method="spearman", average="weighted", metrics=METRICS,
        resample=xcs.Bootstrap(n_resamples=n, rng=6)))
    add("bootstrap/lazy-dask", ("bootstrap", "Bootstrap"), lambda: xcs.bootstrap(
        ds.chunk({"input": 50}), target=T, level="system", metrics=METRICS,
        resample=xcs.Bootstrap(n_resamples=n, rng=7)).compute())
    add("bootstrap/seed-sequence", ("bootstrap", "Bootstrap"), lambda: xcs.bootstrap(
        ds, target=T, level="system", metrics=METRICS,
        resample=xcs.Bootstrap(n_resamples=n // 2, rng=np.random.SeedSequence(12345))))
    add("accessor/DataArray.bootstrap", ("bootstrap", "Bootstrap"), lambda: da.corrstat.bootstrap(
        target=T, level="input", method="pearson", metrics=METRICS,
        resample=xcs.Bootstrap("system", n_resamples=n, rng=8)))
    add("accessor/DataFrame.bootstrap", ("bootstrap", "Bootstrap"), lambda: frame.corrstat.bootstrap(
        target=T, level="system", method="kendall", metrics=METRICS, resample=xcs.Bootstrap(n_resamples=n, rng=9)))
    add("error/bootstrap-bca-two-dims", ("bootstrap", "Bootstrap"), lambda: xcs.bootstrap(
        ds, target=T, level="system", metrics=METRICS, ci="bca", resample=xcs.Bootstrap(n_resamples=50, rng=0)))
    for level in ("system", "input", "global"):
        for method, variant in (("pearson", "b"), ("spearman", "b"), ("kendall", "b"), ("kendall", "c")):
            add(f"fisher/{level}/{method}-{variant}", "fisher",
                lambda level=level, method=method, variant=variant: fisher_as_before(xcs.fisher(
                    ds, target=T, level=level, method=method, variant=variant, metrics=METRICS)))
    add("fisher/missing-cells-confidence", "fisher", lambda: fisher_as_before(xcs.fisher(
        holes, target=[T, T2], level="system", metrics=METRICS, confidence_level=0.8, complete_inputs=True)))
    add("accessor/Dataset.fisher", "fisher", lambda: fisher_as_before(ds.corrstat.fisher(target=T, level="input")))

    # ---------------------------------------------------------------- mean scores
    add("mean_ci/default", "mean_ci", lambda: xcs.mean_ci(ds, n_resamples=4 * n, rng=0))
    add("mean_ci/keep_distribution", ("mean_ci", "set_options"), batched(33, lambda: xcs.mean_ci(
        ds, metrics=X, n_resamples=n, rng=1, keep_distribution=True, confidence_level=0.9)))
    add("mean_ci/missing-cells", "mean_ci", lambda: xcs.mean_ci(holes, metrics=METRICS, n_resamples=n, rng=2))
    add("mean_ci/missing-cells-skipna-false", "mean_ci", lambda: xcs.mean_ci(
        holes, metrics=METRICS, n_resamples=n, rng=2, skipna=False))
    add("mean_ci/dim-system", "mean_ci", lambda: xcs.mean_ci(ds, metrics=METRICS, dim="system", n_resamples=n, rng=3))
    add("paired_difference_ci/default", "paired_difference_ci", lambda: xcs.paired_difference_ci(
        ds, system_a="M11", system_b="M0", n_resamples=4 * n, rng=0))
    add("paired_difference_ci/keep_distribution", "paired_difference_ci", lambda: xcs.paired_difference_ci(
        holes, system_a="M1", system_b="M5", metrics=METRICS, n_resamples=n, rng=1,
        keep_distribution=True, confidence_level=0.8))
    add("format_ci/mean_ci", ("format_ci", "mean_ci"), lambda: xcs.format_ci(
        xcs.mean_ci(ds, metrics=METRICS, n_resamples=n, rng=0)))
    add("format_ci/paired_difference_ci-scaled", ("format_ci", "paired_difference_ci"), lambda: xcs.format_ci(
        xcs.paired_difference_ci(ds, system_a="M11", system_b="M0", metrics=METRICS, n_resamples=n, rng=0),
        digits=3, scale=100))
    add("format_ci/missing-values", "format_ci", lambda: xcs.format_ci(xr.Dataset(
        {"mean": ("metric", [0.8202, np.nan]), "low": ("metric", [0.8101, np.nan]),
         "high": ("metric", [0.83, np.nan])}, coords={"metric": ["acc", "f1"]}), digits=1, scale=100))
    add("accessor/Dataset.mean_ci", "mean_ci", lambda: ds.corrstat.mean_ci(metrics=METRICS, n_resamples=n, rng=5))
    add("accessor/DataFrame.paired_difference_ci", "paired_difference_ci", lambda: frame.corrstat.paired_difference_ci(
        system_a="M2", system_b="M8", metrics=METRICS, n_resamples=n, rng=6))

    # ---------------------------------------------------------------- two-metric tests
    for permute in ("system", "input", "both", "system-xor-input"):
        dims = ("system", "input") if permute == "both" else permute
        for level, method in (("system", "pearson"), ("input", "kendall"), ("global", "spearman")):
            add(f"permutation_test/{level}/{method}/permute-{permute}", ("permutation_test", "Permutation"),
                lambda dims=dims, level=level, method=method: xcs.permutation_test(
                    ds, x=X, y=Y, target=T, level=level, method=method,
                    test=xcs.Permutation(dims, n_resamples=n, rng=0)))
    for alternative in ("less", "two-sided"):
        add(f"permutation_test/system/alternative-{alternative}-fraction", ("permutation_test", "Permutation"),
            lambda alternative=alternative: xcs.permutation_test(
                ds, x=X, y=Y, target=T, level="system", method="kendall", alternative=alternative,
                test=xcs.Permutation(pvalue="fraction", n_resamples=n, rng=1)))
    add("permutation_test/early_stop", ("permutation_test", "Permutation", "set_options"),
        batched(50, lambda: xcs.permutation_test(
            ds, x=X, y="meteor", target=T, level="system",
            test=xcs.Permutation(n_resamples=4 * n, rng=2, early_stop=0.05, risk=0.01))))
    add("permutation_test/keep_distribution-acc23", ("permutation_test", "Permutation", "set_options"),
        batched(13, lambda: xcs.permutation_test(
            ds, x=X, y=Y, target=T, level="input", method="kendall", variant="acc23",
            test=xcs.Permutation(n_resamples=n, rng=3, keep_distribution=True))))
    for level in ("input", "within_system", "global"):  # the pair-outcome test: calibrated and given epsilons
        add(f"permutation_test/pairs-{level}-acc23", ("permutation_test", "Permutation"),
            lambda level=level: xcs.permutation_test(
                ds, x=X, y=Y, target=T, level=level, method="kendall", variant="acc23",
                test=xcs.Permutation(swap="pairs", n_resamples=n, rng=6, keep_distribution=True)))
        add(f"permutation_test/pairs-{level}-b", ("permutation_test", "Permutation"),
            lambda level=level: xcs.permutation_test(
                ds, x=X, y=Y, target=T, level=level, method="kendall", variant="b",
                test=xcs.Permutation(swap="pairs", epsilon={X: 0.01, Y: 0.02}, n_resamples=n, rng=7,
                                     keep_distribution=True)))
    add("compare/pairs-input-23", ("compare", "Permutation"), lambda: xcs.compare(
        ds, target=T, metrics=[X, Y, "meteor"], level="input", method="kendall", variant="23",
        test=xcs.Permutation(swap="pairs", n_resamples=n, rng=8)))
    add("permutation_test/missing-cells", ("permutation_test", "Permutation"), lambda: xcs.permutation_test(
        holes, x=X, y=Y, target=T, level="input", method="pearson", test=xcs.Permutation(n_resamples=n, rng=4),
        min_pairs=5))
    add("accessor/DataArray.permutation_test", ("permutation_test", "Permutation"),
        lambda: da.corrstat.permutation_test(x="bertscore_f1", y="rouge_1_f1", target=T, level="system",
                                             test=xcs.Permutation(n_resamples=n, rng=5)))
    for resample in ("system", "input", "both"):
        dims = ("system", "input") if resample == "both" else resample
        for level, method in (("system", "kendall"), ("input", "pearson")):
            add(f"paired_bootstrap_test/{level}/{method}/resample-{resample}", ("paired_bootstrap_test", "Bootstrap"),
                lambda dims=dims, level=level, method=method: xcs.paired_bootstrap_test(
                    ds, x=X, y=Y, target=T, level=level, method=method,
                    test=xcs.Bootstrap(dims, n_resamples=n, rng=0)))
    add("paired_bootstrap_test/global/two-sided-fraction-keep", ("paired_bootstrap_test", "Bootstrap"),
        lambda: xcs.paired_bootstrap_test(
            ds, x=X, y="meteor", target=T, level="global", method="spearman", alternative="two-sided",
            confidence_level=0.9,
            test=xcs.Bootstrap(pvalue="fraction", n_resamples=n, rng=1, keep_distribution=True)))
    add("paired_bootstrap_test/less-missing-cells", ("paired_bootstrap_test", "Bootstrap", "set_options"),
        batched(11, lambda: xcs.paired_bootstrap_test(
            holes, x=X, y=Y, target=T, level="input", method="kendall", variant="c", alternative="less",
            test=xcs.Bootstrap(n_resamples=n, rng=2))))
    add("accessor/DataFrame.paired_bootstrap_test", ("paired_bootstrap_test", "Bootstrap"),
        lambda: frame.corrstat.paired_bootstrap_test(
            x=X, y=Y, target=T, level="system", test=xcs.Bootstrap(n_resamples=n, rng=3)))
    for level in ("system", "global"):
        for method in ("pearson", "spearman"):
            for alternative in ("greater", "two-sided"):
                add(f"williams_test/{level}/{method}/{alternative}", "williams_test",
                    lambda level=level, method=method, alternative=alternative: xcs.williams_test(
                        ds, x=X, y=Y, target=T, level=level, method=method, alternative=alternative))
    add("williams_test/absolute-less", ("williams_test", "Williams"), lambda: xcs.williams_test(
        holes, x="meteor", y=X, target=T2, test=xcs.Williams(absolute=True), alternative="less",
        confidence_level=0.9))
    add("error/williams_test-input-level", "williams_test", lambda: xcs.williams_test(
        ds, x=X, y=Y, target=T, level="input"))
    add("accessor/Dataset.williams_test", "williams_test", lambda: ds.corrstat.williams_test(
        x=X, y=Y, target=T))

    # ---------------------------------------------------------------- all pairs
    for test, level, method in (("permutation", "system", "pearson"), ("permutation", "input", "kendall"),
                                ("bootstrap", "system", "kendall"), ("bootstrap", "input", "pearson"),
                                ("williams", "system", "pearson"), ("williams", "global", "spearman")):
        settings = {"permutation": "Permutation", "bootstrap": "Bootstrap", "williams": "Williams"}[test]
        add(f"compare/{test}/{level}/{method}", ("compare", settings),
            lambda settings=settings, level=level, method=method: xcs.compare(
                ds, target=T, metrics=METRICS, level=level, method=method,
                test=(xcs.Williams() if settings == "Williams"
                      else getattr(xcs, settings)(n_resamples=n, rng=0))))
    for correction in ("bonferroni", "holm", "fdr_bh"):
        for family in ("row", "all"):
            add(f"compare/correction-{correction}/family-{family}", ("compare", "Permutation"),
                lambda correction=correction, family=family: xcs.compare(
                    ds, target=T, metrics=METRICS, level="system", method="kendall",
                    correction=correction, family=family, test=xcs.Permutation(n_resamples=n, rng=1), alpha=0.1))
    add("compare/permute-system-two-sided", ("compare", "Permutation"), lambda: xcs.compare(
        ds, target=T, metrics=METRICS, test=xcs.Permutation("system", n_resamples=n, rng=2),
        alternative="two-sided", correction="holm"))
    add("compare/bootstrap-resample-input-fraction", ("compare", "Bootstrap", "set_options"),
        batched(9, lambda: xcs.compare(
            ds, target=T, metrics=METRICS, test=xcs.Bootstrap("input", pvalue="fraction", n_resamples=n, rng=3),
            alternative="less")))
    add("compare/williams-absolute", ("compare", "Williams"), lambda: xcs.compare(
        ds, target=[T, T2], metrics=METRICS, test=xcs.Williams(absolute=True), correction="bonferroni"))
    add("compare/targets-keep_distribution", ("compare", "Permutation"), lambda: xcs.compare(
        ds, target=[T, T2], metrics=METRICS[:3], level="input", method="kendall", variant="acc23",
        test=xcs.Permutation(n_resamples=n // 2, rng=4, keep_distribution=True)))
    add("compare/missing-cells", ("compare", "Permutation"), lambda: xcs.compare(
        holes, target=T, metrics=METRICS, level="input", method="spearman",
        test=xcs.Permutation(n_resamples=n, rng=5), min_pairs=5))
    add("accessor/Dataset.compare", ("compare", "Permutation"), lambda: ds.corrstat.compare(
        target=T, level="system", test=xcs.Permutation(n_resamples=n // 2, rng=6), correction="holm"))

    def aggregated(**kwargs):
        res = xcs.compare(tasks, target=T, metrics=METRICS, level="system", method="kendall",
                          test=xcs.Permutation(n_resamples=n, rng=7, keep_distribution=True), correction="holm")
        return xcs.aggregate_tasks(res, **kwargs)

    add("aggregate_tasks/permutation", ("aggregate_tasks", "compare", "Permutation"), lambda: aggregated())
    add("aggregate_tasks/weights-alpha", ("aggregate_tasks", "compare", "Permutation"),
        lambda: aggregated(weights={"a": 2.0, "b": 1.0}, alpha=0.1))
    add("aggregate_tasks/bootstrap", ("aggregate_tasks", "compare", "Bootstrap"), lambda: xcs.aggregate_tasks(
        xcs.compare(tasks, target=T, metrics=METRICS, level="input",
                    test=xcs.Bootstrap(n_resamples=n // 2, rng=8, keep_distribution=True)),
        weights=xr.DataArray([0.25, 0.75], dims="task", coords={"task": ["a", "b"]})))

    # ---------------------------------------------------------------- ties and pairwise statistics
    for level in ("input", "within_system", "global", "system"):
        add(f"calibrate_ties/{level}", "calibrate_ties", lambda level=level: ties_as_before(xcs.calibrate_ties(
            ds, target=T, metrics=METRICS, level=level)))
    add("calibrate_ties/23-keep_curve", "calibrate_ties", lambda: ties_as_before(xcs.calibrate_ties(
        ds, target=T, metrics=METRICS[:2], level="input", variant="23", keep_curve=True)))
    add("calibrate_ties/sample_rate", "calibrate_ties", lambda: ties_as_before(xcs.calibrate_ties(
        ds, target=T, metrics=METRICS, sample_rate=0.5, rng=0)))
    add("calibrate_ties/sample_rate-RandomState", "calibrate_ties", lambda: ties_as_before(xcs.calibrate_ties(
        holes, target=T, metrics=[X], sample_rate=0.3, rng=np.random.RandomState(123))))
    add("calibrate_ties/task-dim", "calibrate_ties", lambda: ties_as_before(xcs.calibrate_ties(
        tasks, target=T, metrics=METRICS[:2], level="within_system")))
    for level in ("system", "input", "within_system", "global"):
        add(f"pairwise_accuracy/{level}", "pairwise_accuracy", lambda level=level: xcs.pairwise_accuracy(
            holes, target=T, metrics=METRICS, level=level))
    add("pairwise_accuracy/pool-task", "pairwise_accuracy", lambda: xcs.pairwise_accuracy(
        tasks, target=T, metrics=METRICS, level="system", pool="task"))
    add("pairwise_accuracy/per-task", "pairwise_accuracy", lambda: xcs.pairwise_accuracy(
        tasks, target=T, metrics=METRICS, level="input"))
    for level, threshold in (("input", 1.0), ("system", 0.1), ("global", 1.0), ("within_system", 0.5)):
        add(f"kendall_like/{level}", "kendall_like", lambda level=level, threshold=threshold: xcs.kendall_like(
            ds, target=T, metrics=METRICS, level=level, threshold=threshold))
    add("kendall_like/default-threshold", "kendall_like", lambda: xcs.kendall_like(ds, target=T, metrics=METRICS))
    add("kendall_like/pool-task", "kendall_like", lambda: xcs.kendall_like(
        tasks, target=T, metrics=METRICS, threshold=0.5, pool="task"))
    add("soft_pairwise_accuracy/by-id", "soft_pairwise_accuracy", lambda: xcs.soft_pairwise_accuracy(
        ds, target=T, metrics=METRICS, n_resamples=n, rng=0))
    add("soft_pairwise_accuracy/by-id-missing-cells", "soft_pairwise_accuracy",
        lambda: xcs.soft_pairwise_accuracy(holes, target=T, metrics=METRICS, n_resamples=n, rng=1))
    add("soft_pairwise_accuracy/mt-metrics-eval", "soft_pairwise_accuracy", lambda: xcs.soft_pairwise_accuracy(
        ds, target=T, metrics=METRICS, n_resamples=n, draws="mt-metrics-eval"))
    add("soft_pairwise_accuracy/mt-metrics-eval-seed", "soft_pairwise_accuracy",
        lambda: xcs.soft_pairwise_accuracy(holes, target=T2, metrics=METRICS, n_resamples=n, rng=7,
                                           draws="mt-metrics-eval"))
    for level in ("input", "system", "global", "within_system"):
        add(f"pairwise_difference_pearson/{level}", "pairwise_difference_pearson",
            lambda level=level: xcs.pairwise_difference_pearson(ds, target=T, metrics=METRICS, level=level))
    add("pairwise_difference_pearson/pool-task", "pairwise_difference_pearson",
        lambda: xcs.pairwise_difference_pearson(tasks, target=T, metrics=METRICS, pool="task"))
    add("pairwise_differences/Dataset", "pairwise_differences", lambda: xcs.pairwise_differences(
        ds[[T, X]].isel(input=slice(0, 10))))
    add("pairwise_differences/DataArray-epsilon", "pairwise_differences", lambda: xcs.pairwise_differences(
        holes[X].isel(input=slice(0, 20)), epsilon=0.01))
    add("pairwise_differences/dim-input", "pairwise_differences", lambda: xcs.pairwise_differences(
        ds[Y].isel(system=slice(0, 3), input=slice(0, 12)), dim="input", epsilon=0.5))
    add("accessor/Dataset.pairwise_accuracy", "pairwise_accuracy", lambda: ds.corrstat.pairwise_accuracy(
        target=T, metrics=METRICS, level="input"))
    add("accessor/DataFrame.kendall_like", "kendall_like", lambda: frame.corrstat.kendall_like(
        target=T, metrics=METRICS, threshold=1.0))
    add("accessor/DataArray.soft_pairwise_accuracy", "soft_pairwise_accuracy",
        lambda: da.corrstat.soft_pairwise_accuracy(target=T, metrics=METRICS, n_resamples=n // 2, rng=2))
    add("accessor/Dataset.calibrate_ties", "calibrate_ties", lambda: ties_as_before(ds.corrstat.calibrate_ties(
        target=T, metrics=METRICS[:2], level="system")))
    add("accessor/Dataset.pairwise_difference_pearson", "pairwise_difference_pearson",
        lambda: ds.corrstat.pairwise_difference_pearson(target=T, metrics=METRICS))
    add("accessor/DataArray.pairwise_differences", "pairwise_differences",
        lambda: ds[X].isel(input=slice(0, 5)).corrstat.pairwise_differences())

    # ---------------------------------------------------------------- tidy tables and reports
    add("tidy/correlate", ("tidy", "correlate"), lambda: xcs.tidy(xcs.correlate(
        ds, target=[T, T2], level=["system", "input"], method=["pearson", "kendall"], metrics=METRICS)))
    add("tidy/bootstrap-distribution", ("tidy", "bootstrap", "Bootstrap"), lambda: xcs.tidy(xcs.bootstrap(
        ds, target=T, level="system", metrics=METRICS,
        resample=xcs.Bootstrap(n_resamples=50, rng=0, keep_distribution=True)), distribution=True))
    add("tidy/fisher-attrs", ("tidy", "fisher"), lambda: xcs.tidy(
        fisher_as_before(xcs.fisher(ds, target=T, metrics=METRICS)), attrs=("target", "method")))
    add("tidy/compare", ("tidy", "compare", "Permutation"), lambda: xcs.tidy(xcs.compare(
        ds, target=T, metrics=METRICS, test=xcs.Permutation(n_resamples=n // 2, rng=0), correction="holm")))
    add("tidy/williams_test", ("tidy", "williams_test"), lambda: xcs.tidy(
        xcs.williams_test(ds, x=X, y=Y, target=T)))
    add("tidy/permutation_test", ("tidy", "permutation_test", "Permutation"), lambda: xcs.tidy(
        xcs.permutation_test(ds, x=X, y=Y, target=T, test=xcs.Permutation(n_resamples=n // 2, rng=0))))
    add("tidy/mean_ci", ("tidy", "mean_ci"), lambda: xcs.tidy(
        xcs.mean_ci(ds, metrics=METRICS[:2], n_resamples=n // 2, rng=0)))
    add("accessor/Dataset.tidy", ("tidy", "paired_bootstrap_test", "Bootstrap"), lambda: xcs.paired_bootstrap_test(
        ds, x=X, y=Y, target=T, test=xcs.Bootstrap(n_resamples=n // 2, rng=0)).corrstat.tidy())

    def report_tables(rep):
        out = {"intervals": rep.intervals, "comparisons": rep.comparisons, "settings": rep.settings,
               "table": rep.table(), "pairs": rep.pairs(), "text": rep.to_text(),
               "text-digits": rep.to_text(digits=5)}
        if hasattr(rep, "levels"):
            out["levels"] = rep.levels
        return out

    add("report/default-levels", "report", lambda: report_tables(xcs.report(
        ds, target=T, metrics=METRICS, n_resamples=n // 2, rng=0)))
    add("report/kendall-bootstrap-test", "report", lambda: report_tables(xcs.report(
        ds, target=T, metrics=METRICS, level=["system", "input", "global"], method="kendall",
        test="bootstrap", resample="input", n_resamples=n // 2, rng=1, correction="fdr_bh",
        confidence_level=0.9, alpha=0.1)))
    add("report/williams-no-correction", "report", lambda: report_tables(xcs.report(
        ds, target=T2, metrics=METRICS, level="system", test="williams",
        resample="system", correction=None, n_resamples=n // 2, rng=2)))
    add("report/acc23-permute-input", ("report", "Permutation"), lambda: report_tables(xcs.report(
        ds, target=T, metrics=METRICS[:3], level=["system", "input"], method="kendall", variant="acc23",
        test=xcs.Permutation("input"), n_resamples=n // 4, rng=3)))
    add("report/system-level-data", ("report", "from_dataframe"), lambda: report_tables(xcs.report(
        xcs.from_dataframe(frame.groupby("system", sort=False)[[T, *METRICS]].mean().reset_index(),
                           system="system", input=None),
        target=T, metrics=METRICS, n_resamples=n // 2, rng=4)))

    def rebuilt_report():
        made = xcs.report(ds, target=T, metrics=METRICS[:3], level="system", n_resamples=n // 4, rng=5)
        return report_tables(xcs.Report(made.intervals.copy(), made.comparisons.copy(), dict(made.settings)))

    add("report/Report-constructed", ("report", "Report"), rebuilt_report)
    add("accessor/DataFrame.report", "report", lambda: report_tables(frame.corrstat.report(
        target=T, metrics=METRICS, level="system", n_resamples=n // 4, rng=6)))

    # ---------------------------------------------------------------- building Datasets
    add("from_dataframe/wide", "from_dataframe", lambda: xcs.from_dataframe(frame, human=[T, T2]))
    add("from_dataframe/renamed-columns", "from_dataframe", lambda: xcs.from_dataframe(
        frame.rename(columns={"system": "sys", "input": "doc"}), system="sys", input="doc", human=T))
    long = frame.melt(id_vars=["system", "input"], var_name="name", value_name="score")
    add("from_dataframe/long", "from_dataframe", lambda: xcs.from_dataframe(
        long, metric="name", value="score", human=[T, T2]))
    add("from_dataframe/dims-task", "from_dataframe", lambda: xcs.from_dataframe(
        tasks.to_dataframe().reset_index(), dims=["task"], human=T))
    add("from_dataframe/system-level", "from_dataframe", lambda: xcs.from_dataframe(
        frame.groupby("system", sort=False)[[T, *METRICS]].mean().reset_index(), input=None))
    add("from_dataframe/text-column", "from_dataframe", lambda: xcs.from_dataframe(
        frame.assign(domain=np.where(frame["input"].str.len() % 2 == 0, "even", "odd")), human=T))
    add("error/from_dataframe-duplicate-rows", "from_dataframe", lambda: xcs.from_dataframe(
        pd.concat([frame.iloc[:3], frame.iloc[:1]])))
    add("error/from_dataframe-missing-column", "from_dataframe", lambda: xcs.from_dataframe(
        frame, system="nope"))

    def read_case(filename, writer, **kwargs):
        def run():
            path = scratch / filename
            if path.exists():
                path.unlink()
            writer(path)
            return xcs.read(path, **kwargs)
        return run

    wide = frame[["system", "input", T, T2, *METRICS]]
    add("read/csv", "read", read_case("scores.csv", lambda p: wide.to_csv(p, index=False), human=[T, T2]))
    add("read/csv.gz", "read", read_case("scores.csv.gz", lambda p: wide.to_csv(p, index=False)))
    add("read/tsv", "read", read_case("scores.tsv", lambda p: wide.rename(
        columns={"system": "model", "input": "doc_id"}).to_csv(p, sep="\t", index=False)))
    add("read/jsonl", "read", read_case("scores.jsonl", lambda p: wide.to_json(
        p, orient="records", lines=True, double_precision=15), human=T))
    add("read/parquet", "read", read_case("scores.parquet", lambda p: wide.to_parquet(p, index=False)))
    add("read/netcdf", "read", read_case("scores.nc", lambda p: ds.to_netcdf(p), human=[T, T2]))
    add("read/long-csv", "read", read_case("long.csv", lambda p: long.to_csv(p, index=False),
                                           metric="name", value="score"))
    add("read/system-level-csv", "read", read_case("systems.csv", lambda p: frame.groupby(
        "system", sort=False)[[T, *METRICS]].mean().reset_index().to_csv(p, index=False)))
    add("read/utf-16", "read", read_case("utf16.csv", lambda p: wide.iloc[:200].to_csv(
        p, index=False, encoding="utf-16"), encoding="utf-16"))
    add("error/read-missing-file", "read", lambda: xcs.read(scratch / "does-not-exist.csv"))
    add("error/read-bad-format", "read", read_case("bad.txt", lambda p: p.write_text("a,b\n1,2\n"), format="xlsx"))

    # ---------------------------------------------------------------- agreement analyses
    agr_names = ("agreement.synthetic_benchmark",)
    bench = None

    def get_bench():
        nonlocal bench
        if bench is None:
            bench = xcs.agreement.synthetic_benchmark(rng=0)
        return bench

    add("agreement/synthetic_benchmark", agr_names, lambda: xcs.agreement.synthetic_benchmark(rng=0))
    add("agreement/synthetic_benchmark-options", agr_names, lambda: xcs.agreement.synthetic_benchmark(
        strategies=["random", "entropy", "coreset"], n_datasets=4, batch_sizes=[5, 10], n_cycles=3,
        n_items=60, n_missing=3, rng=7))
    add("agreement/constants", ("agreement.STRATEGIES", "agreement.MISSING_RULES"), lambda: {
        "STRATEGIES": xcs.agreement.STRATEGIES, "MISSING_RULES": xcs.agreement.MISSING_RULES})
    add("agreement/pair_dim", "agreement.pair_dim", lambda: xcs.agreement.pair_dim("batch_size"))
    for method, variant in (("pearson", "b"), ("spearman", "b"), ("kendall", "b"), ("kendall", "c")):
        add(f"agreement/matrix/{method}-{variant}", ("agreement.matrix", *agr_names),
            lambda method=method, variant=variant: xcs.agreement.matrix(
                get_bench(), var="accuracy", over="batch_size", along=("dataset", "strategy"),
                method=method, variant=variant))
    add("agreement/matrix/batch-dim", ("agreement.matrix", *agr_names), lambda: xcs.agreement.matrix(
        get_bench(), var="auc", over="strategy", along="dataset", min_pairs=4))
    for level in ("system", "input", "global"):
        add(f"agreement/matrix/level-{level}", "agreement.matrix",
            lambda level=level: xcs.agreement.matrix(ds, level=level, method="kendall"))
    picked = "metrics" if "metrics" in inspect.signature(xcs.agreement.matrix).parameters else "scores"  # renamed
    add("agreement/matrix/level-scores-missing", "agreement.matrix", lambda: xcs.agreement.matrix(
        holes, level="system", complete_inputs=True, **{picked: [T, *METRICS[:3]]}))
    add("agreement/jaccard/union-cycle", ("agreement.jaccard", *agr_names), lambda: xcs.agreement.jaccard(
        get_bench(), var="selected", over="strategy", item="item", union="cycle"))
    add("agreement/jaccard/distance-kept-dim", ("agreement.jaccard", *agr_names),
        lambda: xcs.agreement.jaccard(get_bench(), var="selected", over="strategy", item="item",
                                      union="cycle", along="dataset", distance=True))
    add("agreement/jaccard/per-cycle-empty-nan", ("agreement.jaccard", *agr_names),
        lambda: xcs.agreement.jaccard(get_bench()["selected"].isel(cycle=0), over="batch_size",
                                      item="item", empty=np.nan))
    add("agreement/jaccard_kernel", "agreement.jaccard_kernel", lambda: xcs.agreement.jaccard_kernel(
        [[1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 0, 0], [1, np.nan, 0, 1]], empty=0.5))
    add("agreement/jaccard_kernel-random", "agreement.jaccard_kernel", lambda: xcs.agreement.jaccard_kernel(
        np.random.default_rng(3).random((2, 5, 40)) < 0.3))
    add("agreement/leaderboard", ("agreement.leaderboard", *agr_names), lambda: xcs.agreement.leaderboard(
        get_bench(), var="accuracy", competitor="strategy", condition="dataset"))
    add("agreement/leaderboard/rank-lower-better", ("agreement.leaderboard", *agr_names),
        lambda: xcs.agreement.leaderboard(get_bench(), var=["accuracy", "auc"], competitor="strategy",
                                          condition="dataset", rank=True, higher_is_better=False))
    add("agreement/leaderboard/missing-available", ("agreement.leaderboard", *agr_names),
        lambda: xcs.agreement.leaderboard(
            xcs.agreement.synthetic_benchmark(n_missing=8, rng=2), var="accuracy", competitor="strategy",
            condition="dataset", missing="available", rank=True))
    add("agreement/leaderboard_agreement", ("agreement.leaderboard_agreement", *agr_names),
        lambda: xcs.agreement.leaderboard_agreement(
            get_bench(), var="accuracy", competitor="strategy", condition="dataset", between="batch_size",
            n_resamples=n, rng=0))
    add("agreement/leaderboard_agreement/variables-keep", ("agreement.leaderboard_agreement", *agr_names),
        batched(17, lambda: xcs.agreement.leaderboard_agreement(
            get_bench(), var=["accuracy", "auc"], competitor="strategy", condition="dataset", rank=True,
            n_resamples=n // 2, rng=1, keep_distribution=True, confidence_level=0.9)))
    add("agreement/leaderboard_agreement/point-only-missing", ("agreement.leaderboard_agreement", *agr_names),
        lambda: xcs.agreement.leaderboard_agreement(
            xcs.agreement.synthetic_benchmark(n_missing=8, rng=2), var="accuracy", competitor="strategy",
            condition="dataset", between="batch_size", missing="available", n_resamples=None, min_pairs=4))
    add("accessor/Dataset.matrix", "agreement.matrix", lambda: ds.corrstat.matrix(level="input", method="spearman"))
    add("accessor/Dataset.jaccard", ("agreement.jaccard", *agr_names), lambda: get_bench().corrstat.jaccard(
        var="selected", over="strategy", item="item", union="cycle", distance=True))
    add("accessor/Dataset.leaderboard", ("agreement.leaderboard", *agr_names),
        lambda: get_bench().corrstat.leaderboard(var="auc", competitor="strategy", condition="dataset"))
    add("accessor/DataArray.leaderboard_agreement", ("agreement.leaderboard_agreement", *agr_names),
        lambda: get_bench()["accuracy"].corrstat.leaderboard_agreement(
            competitor="strategy", condition="dataset", between="batch_size", n_resamples=n // 2, rng=2))

    # ---------------------------------------------------------------- method validation
    add("diagnostics/constants", ("diagnostics.CI_METHODS", "diagnostics.POWER_TESTS"), lambda: {
        "CI_METHODS": xcs.diagnostics.CI_METHODS, "POWER_TESTS": xcs.diagnostics.POWER_TESTS})
    add("diagnostics/ci_coverage", "diagnostics.ci_coverage", lambda: xcs.diagnostics.ci_coverage(
        ds, target=T, metrics=X, n_trials=n_trials, n_resamples=n // 2, rng=0))
    add("diagnostics/ci_coverage/kendall-global", "diagnostics.ci_coverage", lambda: trials(
        7, xcs.diagnostics.ci_coverage, ds, target=T, metrics=[X, Y], level=["system", "global"], method="kendall",
        variant="c", methods=["fisher", "BOOT-INPUTS"], n_trials=n_trials // 2, n_resamples=n // 4, rng=1,
        confidence_level=0.9))
    add("diagnostics/power_analysis", "diagnostics.power_analysis", lambda: xcs.diagnostics.power_analysis(
        ds, target=T, metric=X, noise=[0.0, 1.0], tests=["perm-both", "boot-both", "williams"],
        n_trials=n_trials // 4, n_resamples=n // 4, rng=0))
    add("diagnostics/power_analysis/input-kendall", ("diagnostics.power_analysis", "set_options"),
        batched(10, lambda: trials(
            2, xcs.diagnostics.power_analysis, ds, target=T, metric=Y, noise=[0.5, 2.0],
            tests=["perm-systems", "perm-inputs", "boot-inputs", "boot-systems", "williams"],
            level="input", method="kendall", n_trials=n_trials // 8, n_resamples=n // 8, rng=1,
            n_inputs=40, type_one=False, alpha=0.1)))
    add("diagnostics/power_analysis/degraded", ("diagnostics.power_analysis", "diagnostics.degrade"),
        lambda: xcs.diagnostics.power_analysis(
            ds, target=T, metric=X, degraded=xcs.diagnostics.degrade(ds[X], noise=[0.25, 1.5], n_trials=3, rng=5),
            tests=["perm-both", "williams"], n_resamples=n // 8, rng=2))
    def normality(data, names=None, func=None, **kw):
        """normality() (or ``func``, its accessor method) of ``names`` over ``metric`` (an earlier tree took
        ``variables=`` and named the dim ``variable``)."""
        func = func or xcs.diagnostics.normality
        if names is not None:
            kw["metrics" if "metrics" in inspect.signature(func).parameters else "variables"] = names
        out = func(data, **kw) if func is xcs.diagnostics.normality else func(**kw)
        return out.rename({"variable": "metric"}) if "variable" in out.dims else out

    add("diagnostics/normality", "diagnostics.normality", lambda: normality(ds))
    add("diagnostics/normality/missing-alpha", "diagnostics.normality", lambda: normality(holes, [T, X], alpha=0.1))
    add("diagnostics/normality/task-dim", "diagnostics.normality", lambda: normality(tasks, METRICS[:2]))
    add("diagnostics/degrade", "diagnostics.degrade", lambda: xcs.diagnostics.degrade(
        ds[X], noise=[0.0, 0.5, 1.0], n_trials=3, rng=0))
    add("diagnostics/degrade/copy-missing", "diagnostics.degrade", lambda: xcs.diagnostics.degrade(
        holes[Y], noise=[2.0], n_trials=2, rng=np.random.SeedSequence(9), copy=1))
    add("accessor/Dataset.normality", "diagnostics.normality", lambda: normality(ds, [T], ds.corrstat.normality))
    add("accessor/DataFrame.ci_coverage", "diagnostics.ci_coverage", lambda: frame.corrstat.ci_coverage(
        target=T, metrics=Y, level="system", methods=["fisher", "BOOT-BOTH"], n_trials=n_trials // 4,
        n_resamples=n // 4, rng=3))
    add("accessor/DataArray.power_analysis", "diagnostics.power_analysis", lambda: da.corrstat.power_analysis(
        target=T, metric=Y, noise=[1.0], tests=["boot-both"], n_trials=n_trials // 8, n_resamples=n // 8, rng=4))

    # ---------------------------------------------------------------- NumPy kernels
    kr = np.random.default_rng(7)
    kx = kr.normal(size=(5, 30))
    kx[0, :4] = np.nan  # missing pairs
    kx[1] = np.round(kx[1], 1)  # ties
    kx[2] = 1.5  # constant
    kx[3, ::3] = kx[3, 1::3]  # more ties
    kz = np.round(kr.normal(size=30), 1)
    long_x, long_z = kr.normal(size=(2, 1500)), np.round(kr.normal(size=1500), 1)  # the merge-count kernel
    sx = kr.normal(size=(3, 9, 14))
    sz = sx[0] + kr.normal(size=(9, 14))
    sx[1, 2, :5] = np.nan
    sz[4, 7] = np.nan
    p = kr.random((4, 7)) ** 2
    p[1, 3] = np.nan
    add("kernels/constants", ("kernels.ALTERNATIVES", "kernels.CORRECTIONS", "kernels.LEVELS",
                              "kernels.METHODS", "kernels.VARIANTS"),
        lambda: {k: getattr(xcs.kernels, k) for k in ("ALTERNATIVES", "CORRECTIONS", "LEVELS", "METHODS", "VARIANTS")})
    for method in ("pearson", "spearman", "kendall"):
        add(f"kernels/corr/{method}", "kernels.corr", lambda method=method: xcs.kernels.corr(kx, kz, method=method))
        add(f"kernels/corr/{method}-long", "kernels.corr",
            lambda method=method: xcs.kernels.corr(long_x, long_z, method=method))
    for variant in ("b", "c", "a", "23", "acc23"):
        add(f"kernels/kendall/{variant}", "kernels.kendall",
            lambda variant=variant: xcs.kernels.kendall(kx, kz, variant=variant))
        add(f"kernels/kendall/{variant}-long" + ("" if variant == "c" else "-epsilon"), "kernels.kendall",
            lambda variant=variant: xcs.kernels.kendall(
                long_x, long_z, variant=variant, epsilon=0.0 if variant == "c" else 0.05))
    add("error/kernels-kendall-c-epsilon", "kernels.kendall",
        lambda: xcs.kernels.kendall(kx, kz, variant="c", epsilon=0.1))
    add("kernels/corr/kendall-epsilon-min_pairs", "kernels.corr", lambda: xcs.kernels.corr(
        kx, kz, method="kendall", variant="acc23", epsilon=0.2, min_pairs=28))
    add("kernels/pearson", "kernels.pearson", lambda: xcs.kernels.pearson(kx, kz, min_pairs=27))
    add("kernels/spearman", "kernels.spearman", lambda: xcs.kernels.spearman(kx, kz))
    add("kernels/pearson-tiny-scale", "kernels.pearson", lambda: xcs.kernels.pearson(kx * 1e-300, kz))
    for level in ("system", "input", "global", "within_system"):
        for method in ("pearson", "spearman", "kendall"):
            add(f"kernels/level_correlation/{level}/{method}", "kernels.level_correlation",
                lambda level=level, method=method: xcs.kernels.level_correlation(sx, sz, level=level, method=method))
    add("kernels/level_correlation/options", "kernels.level_correlation", lambda: xcs.kernels.level_correlation(
        sx, sz, level="input", method="kendall", variant="acc23", epsilon=0.1, average="weighted", min_pairs=4))
    add("kernels/level_correlation/complete-skipna", "kernels.level_correlation", lambda: {
        "complete_inputs": xcs.kernels.level_correlation(sx, sz, level="system", complete_inputs=True),
        "skipna": xcs.kernels.level_correlation(sx, sz, level="global", skipna=False)})
    add("kernels/system_means", "kernels.system_means", lambda: {
        "all": xcs.kernels.system_means(sx, sz), "complete": xcs.kernels.system_means(sx, sz, complete_inputs=True)})
    add("kernels/average_defined", "kernels.average_defined", lambda: {
        "plain": xcs.kernels.average_defined(np.where(kx > 1, np.nan, kx)),
        "weighted": xcs.kernels.average_defined(np.where(kx > 1, np.nan, kx), axis=0,
                                                weights=np.arange(1.0, 6.0)[:, None])})
    for method in ("bonferroni", "holm", "fdr_bh"):
        add(f"kernels/adjust_pvalues/{method}", "kernels.adjust_pvalues", lambda method=method: {
            "last": xcs.kernels.adjust_pvalues(p, method=method),
            "axis0": xcs.kernels.adjust_pvalues(p, method=method, axis=0)})
        add(f"kernels/reject/{method}", "kernels.reject", lambda method=method: xcs.kernels.reject(
            p, alpha=0.1, method=method))
    r_jk, r_jh, r_kh = kr.uniform(-0.9, 0.9, size=(3, 12))
    nn = np.array([4, 5, 10, 16, 30, 100, 1600, 3, 50, 8, 12, 20])
    for alternative in ("two-sided", "greater", "less"):
        add(f"kernels/williams/{alternative}", "kernels.williams", lambda alternative=alternative:
            xcs.kernels.williams(r_jk, r_jh, r_kh, nn, alternative=alternative))
        add(f"kernels/steiger_z/{alternative}", "kernels.steiger_z", lambda alternative=alternative:
            xcs.kernels.steiger_z(r_jk, r_jh, r_kh, nn, alternative=alternative))
    add("kernels/williams/absolute-broadcast", "kernels.williams", lambda: xcs.kernels.williams(
        r_jk[:, None], r_jh[None, :], 0.3, 40, alternative="two-sided", absolute=True))
    add("kernels/zou_ci", "kernels.zou_ci", lambda: xcs.kernels.zou_ci(r_jk, r_jh, r_kh, nn))
    add("kernels/zou_ci/confidence", "kernels.zou_ci", lambda: xcs.kernels.zou_ci(
        0.396, 0.179, 0.088, 66, confidence_level=0.9))
    add("kernels/result-types", ("kernels.DependentTest", "kernels.Interval"), lambda: {
        "DependentTest": xcs.kernels.DependentTest(np.array([1.0]), np.array([0.5])),
        "Interval": xcs.kernels.Interval(np.array([-1.0]), np.array([2.0]))})

    # ---------------------------------------------------------------- command line
    def cli(*argv):
        def run():
            import contextlib
            import io

            main = _cli_module().main
            args = list(argv)
            if args[:1] == ["correlate"] and "--table-format" in args and not _takes(main, "--table-format"):
                k = args.index("--table-format")  # an earlier tree's correlate spelled it --format table|csv|json
                args[k:k + 2] = ["--format", {"text": "table"}.get(args[k + 1], args[k + 1])]
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    code = main(args)
                except SystemExit as stop:  # argparse: --help, --version and usage errors
                    code = stop.code
            return {"exit": code, "stdout": out.getvalue(), "stderr": err.getvalue()}
        return run

    def _takes(main, option):
        """Whether this tree's ``correlate`` command has ``option`` (its usage line names it)."""
        import contextlib
        import io

        text = io.StringIO()
        with contextlib.redirect_stdout(text), contextlib.suppress(SystemExit):
            main(["correlate", "--help"])
        return option in text.getvalue()

    csv_path = scratch / "cli-scores.csv"
    wide.to_csv(csv_path, index=False)
    add("cli/correlate-bundled", "cli", cli("correlate"))
    add("cli/correlate-kendall-csv", "cli", cli(
        "correlate", "--method", "kendall", "--variant", "acc23", "--epsilon", "0.01", "--level", "input",
        "within_system", "--metrics", *METRICS, "--table-format", "csv"))
    add("cli/correlate-json-weighted", "cli", cli(
        "correlate", "--target", T2, "--method", "pearson", "spearman", "--average", "weighted",
        "--level", "input", "--metrics", *METRICS, "--table-format", "json", "--digits", "6"))
    add("cli/correlate-file", "cli", cli(
        "correlate", str(csv_path), "--target", T, "--human", T2, "--digits", "5"))
    add("cli/correlate-file-columns", "cli", cli(
        "correlate", str(csv_path), "--target", T, "--metrics", X, Y, "--system-col", "system",
        "--input-col", "input", "--method", "kendall", "--variant", "c"))
    add("cli/report-no-files", "cli", cli(
        "report", "--metrics", *METRICS, "--n-resamples", str(n // 2), "--no-files", "--quiet"))
    add("cli/report-options", "cli", cli(
        "report", str(csv_path), "--target", T, "--metrics", *METRICS, "--level", "system", "global",
        "--method", "kendall", "--test", "bootstrap", "--resample", "input", "--correction", "none",
        "--confidence-level", "0.9", "--alpha", "0.1", "--rng", "3", "--n-resamples", str(n // 4),
        "--no-files", "--quiet", "--digits", "4"))
    add("cli/report-williams", "cli", cli(
        "report", "--metrics", *METRICS, "--level", "system", "--test", "williams", "--permute", "system",
        "--n-resamples", str(n // 4), "--no-files", "--quiet"))
    add("cli/version", "cli", cli("--version"))
    add("cli/help", "cli", cli("--help"))
    add("cli/correlate-help", "cli", cli("correlate", "--help"))
    add("cli/error-unknown-target", "cli", cli("correlate", "--target", "no_such_score"))
    add("cli/error-missing-file", "cli", cli("correlate", str(scratch / "missing.csv"), "--target", T))
    add("cli/error-bad-choice", "cli", cli("correlate", "--level", "corpus"))
    return cases


def _uncovered(xcorrstat, named: set[str]) -> list[str]:
    """Public functions and classes of this tree that no case calls (plots are left out on purpose)."""
    import inspect

    public = [n for n in xcorrstat.__all__ if not inspect.ismodule(getattr(xcorrstat, n))]
    for sub in ("agreement", "diagnostics", "kernels"):
        module = getattr(xcorrstat, sub, None)
        public += [f"{sub}.{n}" for n in getattr(module, "__all__", ())]
    return [n for n in public if n not in named]


#: Names the cases call that left the public surface when the internals became private modules:
#: where each lives now. A tree without the old name gets it back as an attribute for the run, so
#: the cases compare the same functions across that change.
MOVED = {
    "kernels": ("xcorrstat._kernels", None),
    "pairwise_differences": ("xcorrstat._mt.pairwise", "pairwise_differences"),
    "agreement.STRATEGIES": ("xcorrstat.agreement._synthetic", "STRATEGIES"),
    "agreement.MISSING_RULES": ("xcorrstat.agreement._ranking", "MISSING_RULES"),
    "agreement.pair_dim": ("xcorrstat._labelled", "pair_dim"),
    "agreement.jaccard_kernel": ("xcorrstat.agreement._selection", "jaccard_kernel"),
    "diagnostics.CI_METHODS": ("xcorrstat.diagnostics._coverage", "CI_METHODS"),
    "diagnostics.POWER_TESTS": ("xcorrstat.diagnostics._power", "POWER_TESTS"),
    "datasets.SUMMEVAL_HUMAN": ("xcorrstat.datasets._summeval", "SUMMEVAL_HUMAN"),
}


def _cli_module():
    """The command line's module: ``xcorrstat._cli``, or ``xcorrstat.cli`` in a tree from before the change."""
    import importlib

    try:
        return importlib.import_module("xcorrstat._cli")
    except ImportError:
        return importlib.import_module("xcorrstat.cli")


def _restore_moved(xcorrstat) -> None:
    """Give a tree whose internals are private the old public names the cases call (see MOVED)."""
    import importlib

    for dotted, (module, attr) in MOVED.items():
        *parents, name = dotted.split(".")
        owner = _lookup(xcorrstat, ".".join(parents)) if parents else xcorrstat
        if hasattr(owner, name):
            continue
        try:
            found = importlib.import_module(module)
        except ImportError:
            continue
        setattr(owner, name, found if attr is None else getattr(found, attr))


#: The settings objects the cases pass as ``test=`` (and ``resample=`` of ``bootstrap``): each
#: one's test name (the ``test=`` string of a tree from before them) and fields, first field first.
FLAT_SETTINGS = {
    "Permutation": ("permutation", ("permute", "n_resamples", "rng", "swap", "standardise", "epsilon", "pvalue",
                                    "keep_distribution", "early_stop", "risk", "max_resamples")),
    "Bootstrap": ("bootstrap", ("resample", "n_resamples", "rng", "pvalue", "keep_distribution", "risk",
                                "max_resamples")),
    "Williams": ("williams", ("absolute",)),
}

#: Options of ``set_options`` that a tree from before the settings objects took as a keyword of
#: each resampling function instead; while such an option is set, the shim passes it on.
FLAT_OPTIONS = ("batch",)
_FLAT_SET: dict = {}


class _StandIn:
    """A tree from before the settings objects: what ``xcorrstat.Permutation(...)`` (etc.) builds there."""

    kind = ""
    fields: tuple[str, ...] = ()

    def __init__(self, *args, **kwargs) -> None:
        if len(args) > 1:
            raise TypeError(f"{type(self).__name__} takes one positional argument")
        values = dict(zip(self.fields, args))
        unknown = set(kwargs) - set(self.fields)
        if unknown:
            raise TypeError(f"{type(self).__name__} has no field {sorted(unknown)[0]!r}")
        values.update(kwargs)
        self.given = {k: v for k, v in values.items() if v is not None}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self.given.items())})"


def _flatten(name: str, params, kwargs: dict) -> dict:
    """The keywords of a call written for the settings objects, as a tree from before them takes them.

    ``test=Permutation(P, n_resamples=N, ...)`` becomes ``test="permutation", permute=P,
    n_resamples=N, ...`` (no ``test=`` for a function without it: ``permutation_test``, ...),
    ``bootstrap(resample=Bootstrap(D, ...))`` becomes ``resample=D, ...``, and the options of
    ``set_options`` in FLAT_OPTIONS become keywords of the functions that take them. A field
    the tree's function does not take is an error, as the call could not be written there.
    """
    kwargs = dict(kwargs)
    for key in ("test", "resample"):
        settings = kwargs.get(key)
        if not isinstance(settings, _StandIn):
            continue
        del kwargs[key]
        if key == "test" and "test" in params:
            kwargs["test"] = settings.kind
        for field, value in settings.given.items():
            if field not in params:
                raise TypeError(f"{name}() of this tree takes no {field}= (from {settings!r})")
            if field in kwargs and kwargs[field] is not value:
                raise TypeError(f"{name}(): {field}= given twice (flat and in {settings!r})")
            kwargs[field] = value
    for option, value in _FLAT_SET.items():
        if option in params and option not in kwargs:
            kwargs[option] = value
    return kwargs


def _shimmed(fn, name: str):
    import functools
    import inspect

    params = inspect.signature(fn).parameters

    @functools.wraps(fn)
    def call(*args, **kwargs):
        return fn(*args, **_flatten(name, params, kwargs))

    call.__flat_shim__ = True
    return call


def _shim_old_trees(xcorrstat) -> None:
    """Let the cases, written for the settings objects (``test=xcorrstat.Permutation(...)``,
    ``resample=xcorrstat.Bootstrap(...)``, ``set_options(batch=...)``), run on a tree from before
    them: stand-in classes for the objects, the public functions and accessor methods wrapped to
    take them back as the flat keywords of that tree (see FLAT_SETTINGS, FLAT_OPTIONS), and
    ``set_options`` keeping the options it does not know for those functions. A tree that has
    ``xcorrstat.Permutation`` runs as it is."""
    import inspect

    import pandas as pd
    import xarray as xr

    if hasattr(xcorrstat, "Permutation"):
        return
    for cls_name, (kind, fields) in FLAT_SETTINGS.items():
        setattr(xcorrstat, cls_name, type(cls_name, (_StandIn,), {"kind": kind, "fields": fields}))

    def takes_flat(fn) -> bool:  # every function with a signature: williams_test(test=Williams(...)) has no test=
        try:
            inspect.signature(fn)
        except (TypeError, ValueError):
            return False
        return True

    for module in (xcorrstat, getattr(xcorrstat, "agreement", None), getattr(xcorrstat, "diagnostics", None)):
        for attr in getattr(module, "__all__", ()):
            fn = getattr(module, attr, None)
            if inspect.isfunction(fn) and takes_flat(fn):
                setattr(module, attr, _shimmed(fn, attr))
    for obj in (xr.Dataset(), xr.DataArray([0.0]), pd.DataFrame()):
        try:
            cls = type(obj.corrstat)
        except Exception:  # noqa: BLE001 -- no accessor for this type in that tree
            continue
        for attr in dir(cls):
            fn = getattr(cls, attr, None)
            if attr.startswith("_") or not inspect.isfunction(fn) or getattr(fn, "__flat_shim__", False):
                continue
            if takes_flat(fn):
                setattr(cls, attr, _shimmed(fn, attr))

    original = xcorrstat.set_options

    class set_options:  # noqa: N801 -- stands in for the tree's set_options (a class there too)
        def __init__(self, **kwargs) -> None:
            self._before = dict(_FLAT_SET)
            _FLAT_SET.update({k: kwargs.pop(k) for k in FLAT_OPTIONS if k in kwargs})
            self._inner = original(**kwargs) if kwargs else None

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            _FLAT_SET.clear()
            _FLAT_SET.update(self._before)
            if self._inner is not None:
                return self._inner.__exit__(*exc)
            return None

    xcorrstat.set_options = set_options


def capture(out: Path, tree: Path, scratch: Path, quick: bool) -> int:
    """Run every case against the xcorrstat of ``tree`` and pickle the plain results to ``out``."""
    import warnings

    import xcorrstat

    _restore_moved(xcorrstat)
    _shim_old_trees(xcorrstat)

    where = Path(xcorrstat.__file__).resolve()
    if not where.is_relative_to(tree.resolve()):
        print(f"same_results: xcorrstat was imported from {where}, not from the tree {tree}", file=sys.stderr)
        return 3
    scratch.mkdir(parents=True, exist_ok=True)

    results, seconds, skipped = {}, {}, []
    cases = build_cases(scratch, quick)
    t_all = time.perf_counter()
    for name, needs, fn in cases:
        missing = []
        for dotted in needs:
            try:
                if dotted == "cli":
                    _cli_module()
                else:
                    _lookup(xcorrstat, dotted)
            except (AttributeError, ImportError):
                missing.append(dotted)
        if missing:
            skipped.append((name, missing))
            continue
        t0 = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                value = canon(fn())
            except Exception as err:  # noqa: BLE001 -- the error is part of the result
                value = {"__type__": "raised", "type": type(err).__name__, "message": str(err)}
        seen = []
        for w in caught:
            item = [w.category.__name__, str(w.message)]
            if item not in seen:
                seen.append(item)
        results[name] = {"__type__": "case", "result": value, "warnings": seen}
        seconds[name] = time.perf_counter() - t0
        print(f"  {seconds[name]:6.2f}s  {name}", file=sys.stderr, flush=True)
    payload = {"cases": results, "seconds": seconds, "skipped": skipped,
               "uncovered": _uncovered(xcorrstat, {d for _, needs, _ in cases for d in needs}),
               "total_seconds": time.perf_counter() - t_all}
    with open(out, "wb") as fh:
        pickle.dump(payload, fh, protocol=pickle.HIGHEST_PROTOCOL)
    return 0


# ---------------------------------------------------------------------------------------------
# Comparison (runs in the parent: NumPy only)
# ---------------------------------------------------------------------------------------------


class Tally:
    """What the comparison of one case found."""

    def __init__(self) -> None:
        self.arrays = 0
        self.diffs: list[tuple[str, str, float | None]] = []  # (where, what, max abs diff)
        self.attr_keys: list[str] = []
        self.bit_notes: list[str] = []  # equal by value, not by bits (signed zeros, NaN payloads)

    def differ(self, path, in_attrs: bool, what: str, maxabs: float | None = None) -> None:
        where = _display(path)
        if in_attrs:
            if where not in self.attr_keys:
                self.attr_keys.append(where)
        else:
            self.diffs.append((where, what, maxabs))


def _display(path) -> str:
    return ".".join(str(p) for p in path if p not in _RESULT_KEYS) or "(value)"


def _float_bits(x) -> bytes:
    import numpy as np

    return np.float64(x).tobytes()


def _entries_equal(x, y) -> bool:
    """Entries of object arrays: floats equal by value (NaN equal to NaN), as in the numeric arrays."""
    import numpy as np

    if type(x) is not type(y):
        return False
    if isinstance(x, float):
        return x == y or (math.isnan(x) and math.isnan(y))
    if isinstance(x, (dict, np.ndarray)):
        t = Tally()
        _compare(x, y, [], t, False)
        return not t.diffs and not t.attr_keys
    return bool(x == y)


def _max_abs(a, b) -> float | None:
    import numpy as np

    if a.shape != b.shape or a.dtype.kind not in "biuf" or b.dtype.kind not in "biuf":
        return None
    fa, fb = a.astype(np.float64), b.astype(np.float64)
    nan_a, nan_b = np.isnan(fa), np.isnan(fb)
    if (nan_a != nan_b).any():
        return float("inf")
    with np.errstate(invalid="ignore"):
        d = np.where((fa == fb) | nan_a, 0.0, np.abs(fa - fb))
    return float(d.max()) if d.size else 0.0


def _compare_arrays(a, b, path, t: Tally, in_attrs: bool) -> None:
    import numpy as np

    if not in_attrs:
        t.arrays += 1
    if a.shape != b.shape:
        return t.differ(path, in_attrs, f"shape {a.shape} vs {b.shape}")
    kind = a.dtype.kind
    if a.dtype != b.dtype:
        return t.differ(path, in_attrs, f"dtype {a.dtype} vs {b.dtype}", _max_abs(a, b))
    if kind in "fcmM":
        same = np.array_equal(a, b, equal_nan=True)
    elif kind == "O":
        same = all(_entries_equal(x, y) for x, y in zip(a.ravel().tolist(), b.ravel().tolist(), strict=True))
    else:
        same = np.array_equal(a, b)
    if not same:
        maxabs = _max_abs(a, b)
        what = "values" if maxabs is not None else "entries"
        return t.differ(path, in_attrs, what, maxabs)
    if kind in "fc" and np.ascontiguousarray(a).tobytes() != np.ascontiguousarray(b).tobytes():
        t.bit_notes.append(_display(path))


def _compare(a, b, path, t: Tally, in_attrs: bool) -> None:
    import numpy as np

    if isinstance(a, dict) and isinstance(b, dict):
        ta, tb = a.get("__type__"), b.get("__type__")
        if ta != tb:
            return t.differ(path, in_attrs, f"{ta} vs {tb}")
        for k in list(a) + [k for k in b if k not in a]:
            if k == "__type__":
                continue
            if k not in b or k not in a:
                t.differ(path + [k], in_attrs, "only in baseline" if k in a else "only in current")
                continue
            _compare(a[k], b[k], path + [k], t, in_attrs or k == "__attrs__")
        return
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return t.differ(path, in_attrs, f"length {len(a)} vs {len(b)}")
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _compare(x, y, path + [f"[{i}]"], t, in_attrs)
        return
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return _compare_arrays(a, b, path, t, in_attrs)
    if isinstance(a, float) and isinstance(b, float):
        if not in_attrs:
            t.arrays += 1
        if _float_bits(a) != _float_bits(b):
            t.differ(path, in_attrs, "value", abs(a - b) if not (math.isnan(a) or math.isnan(b)) else float("inf"))
        return
    if type(a) is not type(b) or a != b:
        t.differ(path, in_attrs, f"{_short(a)} vs {_short(b)}")


def _short(v, width: int = 40) -> str:
    s = repr(v)
    return s if len(s) <= width else s[: width - 3] + "..."


def compare_case(a, b) -> tuple[int, str, bool, str]:
    """``(arrays compared, values column, values identical, attrs column)`` of one case."""
    ra, rb = a["result"], b["result"]
    raised_a = isinstance(ra, dict) and ra.get("__type__") == "raised"
    raised_b = isinstance(rb, dict) and rb.get("__type__") == "raised"
    warn_same = a["warnings"] == b["warnings"]
    if raised_a or raised_b:
        if raised_a and raised_b and ra == rb:
            text = f"same error ({ra['type']})"
            ok = True
        elif raised_a and raised_b:
            text = f"errors differ: {ra['type']}: {_short(ra['message'])} vs {rb['type']}: {_short(rb['message'])}"
            ok = False
        else:
            r = ra if raised_a else rb
            text = f"only the {'baseline' if raised_a else 'current'} tree raises {r['type']}: {_short(r['message'])}"
            ok = False
        return 0, text, ok, "attrs same" + ("" if warn_same else "; warnings differ")
    t = Tally()
    _compare(ra, rb, [], t, False)
    if not t.diffs:
        text = "identical"
        if t.bit_notes:
            text += f" (by value; bits of signed zeros or NaNs differ in {', '.join(t.bit_notes[:3])})"
        ok = True
    else:
        numeric = [d for d in t.diffs if d[2] is not None]
        other = [d for d in t.diffs if d[2] is None]
        where, what, maxabs = max(numeric, key=lambda d: d[2]) if numeric else other[0]
        if maxabs:  # the numbers differ
            text = f"max abs diff {maxabs:.3g} in {where}" + ("" if what in ("values", "value") else f" ({what})")
        else:  # the same numbers, but a dtype, shape, label or structure differs
            text = f"differs: {where}: {what}"
        rest = len(t.diffs) - 1
        if rest:
            text += f" (+{rest} more)"
        ok = False
    attrs = "attrs same" if not t.attr_keys else "attrs differ: " + ", ".join(t.attr_keys)
    if not warn_same:  # e.g. a FutureWarning for an option's earlier spelling: reported, not a value difference
        attrs += "; warnings differ"
    return t.arrays, text, ok, attrs


# ---------------------------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------------------------


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed:\n{done.stderr.strip()}")
    return done.stdout.strip()


def _run_capture(label: str, tree: Path, out: Path, scratch: Path, quick: bool) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(tree) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PYTHONHASHSEED"] = "0"  # the same set and dict orders in both runs
    env.setdefault("MPLBACKEND", "Agg")
    cmd = [sys.executable, str(Path(__file__).resolve()), "--capture", str(out), "--tree", str(tree),
           "--scratch", str(scratch)] + (["--quick"] if quick else [])
    print(f"[{label}] running the cases against {tree.name} ...", file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    done = subprocess.run(cmd, env=env, cwd=str(scratch), check=False)
    if done.returncode != 0 or not out.exists():
        raise RuntimeError(f"the {label} run failed (exit code {done.returncode})")
    with open(out, "rb") as fh:
        payload = pickle.load(fh)
    payload["wall_seconds"] = time.perf_counter() - t0
    print(f"[{label}] {len(payload['cases'])} cases in {payload['wall_seconds']:.1f} s", file=sys.stderr, flush=True)
    return payload


#: Names the API renamed on purpose (attrs and settings keys, and the second copy of a compared dim,
#: ``f"{dim}_2"`` before ``f"other_{dim}"``): the baseline's results are read with the current names.
RENAMED_KEYS = {"seed": "rng", "spa_seed": "spa_rng"}
_PAIR_DIM = re.compile(r"^([a-z][a-z_]*?)_2$")
#: Cases whose values changed on purpose, not numbers: shown with the reason, not counted as differing.
CHANGED_ON_PURPOSE = {
    "package/__all__": "the public names changed: Permutation, Bootstrap, Williams in; ranked_frame, "
                       "to_latex, to_markdown on the result accessor",
    "agreement/pair_dim": "the second copy of a compared dim is other_{dim}, as compare's other_metric",
    "options/get_options": "options: batch and trial_batch are options, compiled is gone",
    "options/set_options-with": "options: batch and trial_batch are options, compiled is gone",
    "options/set_options-global": "options: batch and trial_batch are options, compiled is gone",
    "paired_bootstrap_test/less-missing-cells": "tau-c of input-level draws counts the distinct values exactly "
                                                "(the earlier float sums of 1/group size were fractional and "
                                                "depended on the batch)",
    "cli/correlate-help": "correlate's printed table is --table-format, as report's and wmt's",
    "cli/error-bad-choice": "correlate's usage line names --table-format",
    "pairwise_difference_pearson/global": "pair sums added one batch row at a time in a fixed layout, eager and "
                                          "lazy alike (the order of a float sum)",
    "pairwise_difference_pearson/system": "pair sums added one batch row at a time in a fixed layout, eager and "
                                          "lazy alike (the order of a float sum)",
}


def _pair_name(name):
    match = _PAIR_DIM.match(name) if isinstance(name, str) else None
    return f"other_{match.group(1)}" if match else name


def _renamed(obj, parent: str = ""):
    """A baseline result with the current names (``RENAMED_KEYS``, pair dims)."""
    if isinstance(obj, dict):
        out = {}
        for key, value in obj.items():
            new = RENAMED_KEYS.get(key, key)
            if parent in ("sizes", "coords"):
                new = _pair_name(new)
            out[new] = _renamed(value, key)
        return out
    if isinstance(obj, list):
        if parent == "dims":
            return [_pair_name(v) for v in obj]
        return [_renamed(v) for v in obj]
    return obj


def report(base: dict, cur: dict, base_label: str) -> int:
    bc, cc = {k: _renamed(v) for k, v in base["cases"].items()}, cur["cases"]
    names = list(bc) + [k for k in cc if k not in bc]
    rows = []
    n_cases = n_arrays = n_differ = n_attrs = 0
    for name in names:
        if name not in cc:
            rows.append((name, "", "only in baseline", ""))
            continue
        if name not in bc:
            rows.append((name, "", "only in current", ""))
            continue
        arrays, text, ok, attrs = compare_case(bc[name], cc[name])
        if not ok and name in CHANGED_ON_PURPOSE:
            text, ok = f"changed on purpose ({text}): {CHANGED_ON_PURPOSE[name]}", True
        n_cases += 1
        n_arrays += arrays
        n_differ += not ok
        n_attrs += attrs != "attrs same"
        rows.append((name, str(arrays), text, attrs))
    w0 = max(len("case"), *(len(r[0]) for r in rows))
    w2 = min(max(len("values"), *(len(r[2]) for r in rows)), 70)
    print(f"{'case':<{w0}}  {'arrays':>6}  {'values':<{w2}}  attrs")
    print(f"{'-' * w0}  {'-' * 6}  {'-' * w2}  {'-' * 5}")
    for name, arrays, text, attrs in rows:
        print(f"{name:<{w0}}  {arrays:>6}  {text:<{w2}}  {attrs}".rstrip())
    print()
    for label, payload in (("baseline", base), ("current", cur)):
        for name, missing in payload.get("skipped", []):
            print(f"not run in the {label} tree (missing public names: {', '.join(missing)}): {name}")
    for label, payload in (("baseline", base), ("current", cur)):
        if payload.get("uncovered"):
            print(f"public names no case calls in the {label} tree: {', '.join(payload['uncovered'])}")
    only_base = sum(1 for k in bc if k not in cc)
    only_cur = sum(1 for k in cc if k not in bc)
    extra = "".join([f", {only_base} only in baseline" if only_base else "",
                     f", {only_cur} only in current" if only_cur else ""])
    print(f"baseline {base_label}: {base['wall_seconds']:.1f} s; current working tree: {cur['wall_seconds']:.1f} s")
    if n_differ:
        print(f"{n_cases} cases, {n_arrays} arrays: {n_differ} cases differ (attrs differ in {n_attrs} cases){extra}")
        return 1
    print(f"{n_cases} cases, {n_arrays} arrays: all bit-identical (attrs differ in {n_attrs} cases){extra}")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description="Check that every public function of xcorrstat gives bit-identical results in the "
                    "working tree and in an earlier commit, on the bundled data.")
    parser.add_argument("--baseline", default="HEAD", help="commit to compare with (default HEAD)")
    parser.add_argument("--quick", action="store_true", help="half the draws and trials")
    parser.add_argument("--capture", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--tree", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--scratch", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.capture is not None:  # child: one tree
        return capture(args.capture, args.tree, args.scratch, args.quick)

    here = Path(__file__).resolve().parent
    try:
        current = Path(_git(here, "rev-parse", "--show-toplevel")).resolve()
        commit = _git(current, "rev-parse", "--verify", f"{args.baseline}^{{commit}}")
    except RuntimeError as err:
        print(f"same_results: {err}", file=sys.stderr)
        return 2
    base_label = f"{args.baseline} ({commit[:10]})"

    # a termination request unwinds like Ctrl-C, so the temporary worktree is removed
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    tmp = Path(tempfile.mkdtemp(prefix="xcorrstat-same-results-"))
    baseline_tree = tmp / "baseline"
    added = False
    try:
        _git(current, "worktree", "add", "--detach", str(baseline_tree), commit)
        added = True
        scratch = tmp / "scratch"
        scratch.mkdir()
        t0 = time.perf_counter()
        base = _run_capture("baseline", baseline_tree, tmp / "baseline.pkl", scratch, args.quick)
        cur = _run_capture("current", current, tmp / "current.pkl", scratch, args.quick)
        code = report(base, cur, base_label)
        print(f"total {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        return code
    except RuntimeError as err:
        print(f"same_results: {err}", file=sys.stderr)
        return 2
    finally:
        if added or baseline_tree.exists():
            subprocess.run(["git", "-C", str(current), "worktree", "remove", "--force", str(baseline_tree)],
                           capture_output=True, check=False)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
