"""mt-metrics-eval's own modules, for the tests that use it as an oracle.

Its source is not a dependency: a test that needs it calls :func:`mtme_modules`, which skips the
test unless the environment variable ``XCORRSTAT_MTME_SOURCE`` names a checkout of
google-research/mt-metrics-eval (the folder that holds ``mt_metrics_eval/``). It is imported by
path, with empty stand-ins for ``apache_beam`` and ``dacite``, which its top-level imports name
but the statistics and the reader never use.
"""

from __future__ import annotations

import importlib
import os
import sys
import types
from typing import Any

import pytest

ENV = "XCORRSTAT_MTME_SOURCE"


def mtme_modules(*names: str) -> tuple[Any, ...]:
    """``mt_metrics_eval.<name>`` for each name, or a skip of the calling test."""
    source = os.environ.get(ENV)
    if not source or not os.path.isfile(os.path.join(source, "mt_metrics_eval", "stats.py")):
        pytest.skip(f"set {ENV} to a checkout of mt-metrics-eval to compare with its code")
    for stub in ("apache_beam", "dacite"):
        sys.modules.setdefault(stub, types.ModuleType(stub))
    if source not in sys.path:
        sys.path.insert(0, source)
    return tuple(importlib.import_module(f"mt_metrics_eval.{name}") for name in names)
