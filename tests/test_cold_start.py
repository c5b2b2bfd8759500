"""A fresh process after the first loads the compiled loops from numba's cache: it compiles nothing.

Each run is a new Python process with ``NUMBA_CACHE_DIR`` set to a folder of the test's: the
first compiles the loops of Kendall permutation tests and bootstrap intervals at the input,
global and system levels and writes them there; the second makes the same calls and must find
every loop in the cache (numba's dispatcher statistics: no cache miss, some cache hits).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from xcorrstat._kernels import _compiled

WORKLOAD = r"""
import gc, json, sys
import numpy as np, xarray as xr
import xcorrstat
imported = {name: name in sys.modules for name in ("scipy.stats", "distributed", "numba")}
rng = np.random.default_rng(0)
vals = rng.normal(size=(3, 5, 12))
vals[1, 0, 3] = np.nan
ds = xr.DataArray(vals, dims=("metric", "system", "input"),
                  coords={"metric": ["h", "a", "b"]}).to_dataset(dim="metric")
for level in ("input", "global", "system"):
    xcorrstat.permutation_test(ds, target="h", x="a", y="b", level=level, method="kendall",
                               test=xcorrstat.Permutation(("system", "input"), n_resamples=9, rng=1))
    xcorrstat.bootstrap(ds, target="h", level=level, method="kendall",
                        resample=xcorrstat.Bootstrap(("system", "input"), n_resamples=9, rng=1))
from numba.core.registry import CPUDispatcher
ours = [d for d in gc.get_objects() if isinstance(d, CPUDispatcher) and d.py_func.__module__.startswith("xcorrstat.")]
print(json.dumps({"hits": sum(sum(d.stats.cache_hits.values()) for d in ours),
                  "misses": sum(sum(d.stats.cache_misses.values()) for d in ours),
                  "distributed_after": "distributed" in sys.modules, "imported": imported}))
"""


def _run(cache: str) -> dict:
    env = {**os.environ, "NUMBA_CACHE_DIR": cache}
    root = os.path.dirname(os.path.dirname(os.path.abspath(_compiled.__file__)))  # the package tested
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(root), env.get("PYTHONPATH", "")])
    out = subprocess.run([sys.executable, "-c", WORKLOAD], capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_a_second_fresh_process_compiles_nothing(tmp_path):
    first = _run(str(tmp_path))
    assert first["misses"] > 0  # compiled (the folder was empty) ...
    assert any(tmp_path.rglob("*.nbi"))  # ... and written to the cache
    second = _run(str(tmp_path))
    assert second["misses"] == 0, second
    assert second["hits"] > 0
    # the fixed costs of a fresh process: neither imported before the loops run, nor only to look
    assert second["imported"] == {"scipy.stats": False, "distributed": False, "numba": False}
    assert second["distributed_after"] is False


def test_numbas_own_cache_folder_is_kept_when_writable():
    import numba

    before = numba.config.CACHE_DIR
    assert _compiled.choose_cache(numba, writable=lambda folder: True) is None
    assert numba.config.CACHE_DIR == before


def test_a_cache_folder_is_made_when_none_is_writable(monkeypatch, tmp_path):
    """A read-only install whose user has no writable cache folder: numba would refuse to load the
    loops ("no locator available"); they are cached in a private folder under the temporary folder."""
    import numba

    monkeypatch.setattr(numba.config, "CACHE_DIR", "")
    monkeypatch.setenv("NUMBA_CACHE_DIR", "")
    monkeypatch.setattr(_compiled.tempfile, "tempdir", str(tmp_path))
    folder = _compiled.choose_cache(numba, writable=lambda folder: folder.startswith(str(tmp_path)))
    assert folder is not None and folder.startswith(str(tmp_path))
    assert numba.config.CACHE_DIR == folder == os.environ["NUMBA_CACHE_DIR"]
    if hasattr(os, "getuid"):
        assert os.stat(folder).st_mode & 0o077 == 0  # this user's alone
