"""What a type checker sees of the README's accessor calls: real signatures, or ``Any``.

Reads the accessor calls of README.md (``ds.corrstat.NAME`` and the ``.NAME`` shorthands that
follow one), writes a small file that reaches each method three ways, and runs
``python -m mypy --strict`` on it with ``reveal_type`` of each:

- ``plain``: ``ds.corrstat.NAME``, as the README writes it (xarray types ``ds.corrstat`` as
  ``Any``: no type checker can see through it);
- ``annotated``: ``sc: xcorrstat.ScoresAccessor = ds.corrstat`` then ``sc.NAME``;
- ``built``: ``xcorrstat.ScoresAccessor(ds).NAME``.

The file also misspells an option value (``method="kendal"``) once in each form: only a
form whose signature the checker sees reports it. A revealed type is the real signature when it is a ``def`` naming every keyword parameter of
the function behind the method and not returning ``Any`` (unless the function returns a pandas
object and pandas' stubs are not installed); ``def (*Any, **Any) -> Any`` and ``Any`` are not. :func:`typing_rows` returns one row per (call, form); run as a script it prints
them and a summary line per form.

    python benchmarks/api_typing.py
"""

from __future__ import annotations

import inspect
import os
import pathlib
import re
import subprocess
import sys
import tempfile
from typing import Any

import xcorrstat
from xcorrstat._accessors.results import RESULTS
from xcorrstat._accessors.scores import SCORES

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"
FORMS = ("plain", "annotated", "built")
FUNCTIONS = {f.__name__: f for f in (*SCORES, *RESULTS)}
#: A misspelt option value in each form: a type checker that sees the signature reports it.
MISSPELT = ("ds.corrstat.correlate(target='expert_relevance', method='kendal')  # plain",
            "sc_ds.correlate(target='expert_relevance', method='kendal')  # annotated",
            "xcorrstat.ScoresAccessor(ds).correlate(target='expert_relevance', method='kendal')  # built")


def readme_calls(text: str) -> list[tuple[str, str]]:
    """(object, method) of each accessor call in the README's code, in order, once each.

    ``ds.corrstat.matrix``, ``.jaccard``: a ``.NAME`` shorthand in an inline code span after
    an accessor call on the same paragraph names a method of the same object.
    """
    found: dict[tuple[str, str], None] = {}
    for paragraph in re.split(r"\n\s*\n", text):
        obj = None
        for m in re.finditer(r"(\w+)\.corrstat\.(\w+)|`\.(\w+)", paragraph):
            if m.group(1):
                obj = m.group(1)
                found[obj, m.group(2)] = None
            elif obj is not None:
                found[obj, m.group(3)] = None
    return [(obj, name) for obj, name in found if name in FUNCTIONS]


def _program(calls: list[tuple[str, str]]) -> tuple[str, list[tuple[str, str, str]]]:
    """The checked file, and (call, form, object) of each reveal_type in it, in order."""
    lines = ["import xcorrstat", "", "ds = xcorrstat.datasets.summeval()", "df = ds.to_dataframe()",
             "res = xcorrstat.compare(ds, target='expert_relevance')",
             "rc: xcorrstat.ResultAccessor = res.corrstat"]
    lines += ["sc_ds: xcorrstat.ScoresAccessor = ds.corrstat", "sc_df: xcorrstat.ScoresAccessor = df.corrstat"]
    lines += ["", *MISSPELT, ""]
    reveals = []
    for obj, name in calls:
        result = name not in {f.__name__ for f in SCORES}
        obj = obj if obj in ("ds", "df") else "ds"  # the README's other names are scores of the same data
        plain = f"{'res' if result else obj}.corrstat.{name}"
        annotated = f"{'rc' if result else 'sc_' + obj}.{name}"
        built = f"xcorrstat.{'ResultAccessor(res)' if result else 'ScoresAccessor(' + obj + ')'}.{name}"
        for form, expr in zip(FORMS, (plain, annotated, built)):
            lines.append(f"reveal_type({expr})")
            reveals.append((f"{plain}", form, expr))
    return "\n".join(lines) + "\n", reveals


def _is_real(revealed: str, name: str) -> bool:
    """Whether a revealed type is the real signature of the function ``name`` (minus ``data``)."""
    signature = inspect.signature(FUNCTIONS[name])
    params = list(signature.parameters)[1:]
    # pandas without its stubs package has no types: a DataFrame return is Any, as in the function
    any_return = revealed.endswith("-> Any") and not str(signature.return_annotation).startswith("pd.")
    if not revealed.startswith("def (") or "*Any" in revealed or any_return:
        return False
    return all(re.search(rf"\b{re.escape(p)}: ", revealed) for p in params)


def typing_rows(readme: pathlib.Path = README) -> list[dict[str, Any]]:
    """One row per README accessor call and form: ``call``, ``form``, ``expression``, ``revealed``, ``real``."""
    calls = readme_calls(readme.read_text(encoding="utf-8"))
    source, reveals = _program(calls)
    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp, "readme_calls.py")
        path.write_text(source, encoding="utf-8")
        env = {**os.environ, "MYPY_CACHE_DIR": str(pathlib.Path(tmp, ".mypy_cache"))}
        root = pathlib.Path(xcorrstat.__file__).resolve().parents[1]
        if "site-packages" not in root.parts:  # a source checkout (editable installs use an import hook mypy cannot follow)
            env["MYPYPATH"] = str(root)
        out = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-error-summary", "--hide-error-context",
                              "--follow-imports=silent", str(path)],
                             capture_output=True, text=True, cwd=tmp, env=env).stdout
    revealed = {int(m.group(1)): m.group(2) for m in re.finditer(r":(\d+): note: Revealed type is \"(.*)\"", out)}
    errors = {int(m.group(1)) for m in re.finditer(r":(\d+): error: ", out)}
    first = source.count("\n", 0, source.index("reveal_type(")) + 1
    rows = []
    for i, (call, form, expr) in enumerate(reveals):
        text = revealed.get(first + i, "(no reveal: " + out.strip()[-200:] + ")")
        name = expr.rsplit(".", 1)[1]
        rows.append({"call": call, "form": form, "expression": expr, "revealed": text, "real": _is_real(text, name)})
    lines = source.splitlines()
    for line in MISSPELT:
        rows.append({"call": "correlate(method='kendal')", "form": line.rsplit("# ", 1)[1], "expression": line,
                     "revealed": "error reported" if lines.index(line) + 1 in errors else "no error",
                     "real": lines.index(line) + 1 in errors})
    return rows


def main() -> None:
    rows = typing_rows()
    print(f"xcorrstat {xcorrstat.__version__}: mypy --strict on the README's accessor calls")
    for row in rows:
        short = row["revealed"] if len(row["revealed"]) <= 70 else row["revealed"][:67] + "..."
        expr = row["expression"].split("  #")[0]
        expr = expr if len(expr) <= 50 else expr[:47] + "..."
        print(f"{'real' if row['real'] else 'NOT ':4}  {row['form']:9}  {expr:50}  {short}")
    for form in FORMS:
        sub = [r for r in rows if r["form"] == form and not r["call"].endswith("'kendal')")]
        caught = [r["real"] for r in rows if r["form"] == form and r["call"].endswith("'kendal')")]
        print(f"{form}: {sum(r['real'] for r in sub)} of {len(sub)} calls show their real signature; "
              f"method='kendal' {'reported' if all(caught) else 'not reported'}")


if __name__ == "__main__":
    main()
