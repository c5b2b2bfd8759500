"""The size of xcorrstat's public API, measured: names, parameters per function, support, typing.

Prints

1. the public names (the top-level ``__all__`` without dunders, the five namespaces and their
   ``__all__``) and their count;
2. the parameters of every public function (the accessor methods have the same ones): the
   largest, the median, and every function over the limit;
3. the support probe of ``api_support.py`` (every level x method x variant x operation), when
   that script is beside this one;
4. what mypy --strict sees of the README's accessor calls (``api_typing.py``), when that script
   is beside this one.

Usage::

    python benchmarks/api_surface.py [--skip-probe] [--skip-typing]

Exit code 0 when every figure is within its goal (at most 60 names; at most 15 parameters per
function, median at most 7; the probe equal to the capability table; real signatures for mypy),
1 otherwise.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import statistics
import sys
from pathlib import Path

NAMESPACES = ("plot", "wmt", "diagnostics", "agreement", "datasets")
GOALS = {"names": 60, "max_params": 15, "median_params": 7}


def public_objects() -> dict[str, object]:
    import xcorrstat

    found: dict[str, object] = {n: getattr(xcorrstat, n) for n in xcorrstat.__all__ if not n.startswith("__")}
    for space in NAMESPACES:
        module = importlib.import_module(f"xcorrstat.{space}")
        found.update({f"{space}.{n}": getattr(module, n) for n in module.__all__})
    return found


def parameter_counts(objects: dict[str, object]) -> dict[str, int]:
    """Parameters of each public function (a class counts by its constructor, without ``self``)."""
    counts = {}
    for name, obj in objects.items():
        if inspect.ismodule(obj) or (inspect.isclass(obj) and issubclass(obj, Warning)):
            continue
        if callable(obj):
            try:
                counts[name] = len(inspect.signature(obj).parameters)
            except (TypeError, ValueError):
                continue
    return counts


def _optional(script: str):
    here = Path(__file__).parent
    if not (here / f"{script}.py").exists():
        return None
    sys.path.insert(0, str(here))
    return importlib.import_module(script)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-probe", action="store_true", help="leave out the support probe")
    parser.add_argument("--skip-typing", action="store_true", help="leave out the mypy --strict check")
    args = parser.parse_args(argv)
    ok = True

    objects = public_objects()
    print(f"public names: {len(objects)} (goal <= {GOALS['names']})")
    print("  " + ", ".join(objects))
    ok &= len(objects) <= GOALS["names"]

    counts = parameter_counts(objects)
    largest, median = max(counts.values()), statistics.median(counts.values())
    print(f"parameters per public function: max {largest} (goal <= {GOALS['max_params']}), "
          f"median {median:g} (goal <= {GOALS['median_params']}), over {len(counts)} functions")
    for name, k in sorted(counts.items(), key=lambda kv: -kv[1]):
        if k > GOALS["max_params"]:
            print(f"  over the limit: {name} ({k})")
    ok &= largest <= GOALS["max_params"] and median <= GOALS["median_params"]

    support = None if args.skip_probe else _optional("api_support")
    if support is not None:
        ok &= bool(support.main([]) == 0)
    typing_check = None if args.skip_typing else _optional("api_typing")
    if typing_check is not None:
        rows = typing_check.typing_rows()
        print("mypy --strict on the README's accessor calls (real signature / calls):")
        for form in typing_check.FORMS:
            mine = [r for r in rows if r["form"] == form]
            print(f"  {form}: {sum(r['real'] for r in mine)} / {len(mine)}")
        typed = [r for r in rows if r["form"] != typing_check.FORMS[0]]
        ok &= bool(typed) and all(r["real"] for r in typed)
    print("all goals met" if ok else "some goal not met")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
