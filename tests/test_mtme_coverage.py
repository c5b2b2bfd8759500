"""Every mt-metrics-eval reference case (tests/data/mtme_fixtures.json) is exercised by a test.

The test modules take their cases from ``mtme_cases.load`` (or ``case``) at module level and
use every case it returns (a test filters with ``load(..., where=...)``, never afterwards).
This test runs the module-level code of every test module that uses ``mtme_cases`` while
recording the names ``load`` returns, so it gives the same answer in a full run and run alone.
"""

import importlib.util
from pathlib import Path

import mtme_cases

HERE = Path(__file__)


def _modules_using_cases() -> list[Path]:
    return sorted(p for p in HERE.parent.glob("test_*.py") if p != HERE and "mtme_cases" in p.read_text())


def test_every_fixture_is_exercised():
    every = mtme_cases.all_names()
    assert len(every) == len(set(every)) == 99
    with mtme_cases.recording() as used:
        for path in _modules_using_cases():
            spec = importlib.util.spec_from_file_location(f"_mtme_coverage_{path.stem}", path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)  # module-level code only: the cases its tests run
    missing = sorted(set(every) - used)
    assert not missing, f"{len(missing)} mt-metrics-eval case(s) no test exercises: {missing}"
    assert used == set(every)
