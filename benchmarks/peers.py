"""The peers the benchmarks run beside xcorrstat: nlpstats in a virtual environment of its own, and
mt-metrics-eval imported from a checkout of its source (it is not on PyPI; the package of that name
there is an unrelated project and must not be installed)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import types
import venv


def baseline_python(path: str | None) -> str:
    """A Python with nlpstats 0.0.1: ``path`` if given, else a new virtual environment made for it."""
    if path:
        return path
    env_dir = os.path.join(tempfile.mkdtemp(prefix="xcorrstat-bench-"), "venv")
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = os.path.join(env_dir, "bin", "python")
    subprocess.run([python, "-m", "pip", "install", "--quiet", "nlpstats==0.0.1"], check=True)
    return python


def load_mtme(source: str) -> types.SimpleNamespace:
    """mt-metrics-eval's ``data``, ``stats`` and ``tau_optimization`` (as ``tau``), imported from ``source``."""
    root = os.path.abspath(os.path.expanduser(source))
    if not os.path.isfile(os.path.join(root, "mt_metrics_eval", "stats.py")):
        raise SystemExit(f"--mtme-source: no mt_metrics_eval/stats.py under {source!r}")
    for stub in ("apache_beam", "dacite"):  # imported at the top of data.py / ratings.py, unused here
        sys.modules.setdefault(stub, types.ModuleType(stub))
    sys.path.insert(0, root)
    from mt_metrics_eval import data, stats, tau_optimization

    if not os.path.abspath(stats.__file__).startswith(root):
        raise SystemExit("mt_metrics_eval was imported from elsewhere than --mtme-source")
    return types.SimpleNamespace(data=data, stats=stats, tau=tau_optimization)
