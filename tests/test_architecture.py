"""The package's layout: imports point down the layers, no cycles, no private names across modules,
and no function longer than a screen.

The layers, lowest first (docs/layout.md draws them). A module may import from its own layer
and the layers below it, never from a layer above.
"""

from __future__ import annotations

import ast
import pathlib
from collections import defaultdict

import pytest

import xcorrstat

ROOT = pathlib.Path(xcorrstat.__file__).parent
PACKAGE = "xcorrstat"

#: Layer of each module, by longest matching prefix.
LAYERS = [
    ("base", ["_version", "_notes", "_types", "_capabilities", "_docs", "_display", "_escape", "_signals", "_validation", "_options", "_warn"]),
    ("kernels", ["_kernels"]),
    ("data", ["_schema", "_selection", "_labelled", "_io", "_tidy", "datasets"]),
    ("resampling", ["_resampling"]),
    ("mt", ["_mt"]),
    ("correlation", ["_correlation"]),
    ("significance", ["_significance"]),
    ("agreement", ["agreement"]),
    ("diagnostics", ["diagnostics"]),
    ("wmt", ["wmt"]),
    ("plot", ["plot"]),
    ("reporting", ["_reporting"]),
    ("interfaces", ["_accessors", "_cli", "_cliscores", "_wmtcli", "__main__", ""]),
]
MAX_FUNCTION_LINES = 80


def _module_name(path: pathlib.Path) -> str:
    parts = [PACKAGE, *path.relative_to(ROOT).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_package(name: str) -> bool:
    return (ROOT.joinpath(*name.split(".")[1:]) / "__init__.py").exists()


def _is_module(name: str) -> bool:
    rel = name.split(".")[1:]
    return _is_package(name) or (bool(rel) and ROOT.joinpath(*rel).with_suffix(".py").exists())


MODULES = {_module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def _layer(module: str) -> int:
    rel = module[len(PACKAGE) + 1:] if module != PACKAGE else ""
    best, rank = -1, None
    for i, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (rel == prefix or rel.startswith(prefix + ".") or (prefix == "" and rel == "")) and len(prefix) > best:
                best, rank = len(prefix), i
    assert rank is not None, f"{module} is in no layer: add it to LAYERS (and docs/layout.md)"
    return rank


def _imports(module: str, path: pathlib.Path):
    """(imported module, imported names, line) of every import of the package, at any depth."""
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target != PACKAGE and not target.startswith(PACKAGE + "."):
                continue
            plain = []
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                if _is_module(sub):
                    yield sub, [], node.lineno  # `from pkg import submodule`
                else:
                    plain.append(alias.name)
            if plain:
                yield target, plain, node.lineno
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(PACKAGE + "."):
                    yield alias.name, [], node.lineno


EDGES = [(m, t, names, line) for m, p in MODULES.items() for t, names, line in _imports(m, p)]


def test_every_module_has_a_layer():
    for module in MODULES:
        _layer(module)


def test_imports_point_down():
    upward = [f"{m}:{line} ({LAYERS[_layer(m)][0]}) imports {t} ({LAYERS[_layer(t)][0]})"
              for m, t, _, line in EDGES if _layer(t) > _layer(m)]
    assert not upward, "imports from a higher layer:\n" + "\n".join(upward)


def test_no_import_cycles():
    graph = defaultdict(set)
    for m, t, _, _ in EDGES:
        if t != m:
            graph[m].add(t)
    state: dict[str, int] = {}
    cycles = []

    def visit(node, stack):
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append(" -> ".join(stack[stack.index(nxt):] + [nxt]))
            elif nxt not in state:
                visit(nxt, stack + [nxt])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_no_private_names_across_modules():
    private = []
    for m, t, names, line in EDGES:
        hidden = [n for n in names if n.startswith("_") and not (n.startswith("__") and n.endswith("__"))]
        if hidden and t != m:
            private.append(f"{m}:{line} imports {', '.join(hidden)} from {t}")
    assert not private, "private names imported from other modules:\n" + "\n".join(private)


def _functions():
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                body = node.body
                if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) \
                        and isinstance(body[0].value.value, str):
                    lines -= body[0].end_lineno - body[0].lineno + 1
                yield f"{module}.{node.name}:{node.lineno}", lines


def test_no_flat_twin_of_a_function():
    """The settings objects travel unchanged down to the engine: no function re-spells them as keywords
    under a second name (``*_flat``)."""
    twins = sorted(name for name, _ in _functions() if name.split(":")[0].rsplit(".", 1)[-1].endswith("_flat")
                   or name.split(":")[0].rsplit(".", 1)[-1] == "_flat")
    assert not twins, "flat twins:\n" + "\n".join(twins)


def test_no_function_is_longer_than_a_screen():
    long = sorted((f"{name} has {n} lines" for name, n in _functions() if n > MAX_FUNCTION_LINES))
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines (docstring excluded):\n" + "\n".join(long)


@pytest.mark.parametrize("name", sorted(xcorrstat.__all__))
def test_public_names_stay_importable(name):
    assert getattr(xcorrstat, name) is not None


def test_no_submodule_shadows_a_name_its_package_exports():
    """A submodule named as a name its package's ``__init__`` imports from another module would replace
    that name on the package once imported (``xcorrstat._kernels.pearson``, the function, by a
    ``pearson/`` folder)."""
    shadowed = []
    for module, path in MODULES.items():
        if path.name != "__init__.py":
            continue
        taken = {alias.asname or alias.name for node in ast.parse(path.read_text(encoding="utf-8")).body
                 if isinstance(node, ast.ImportFrom) and node.module for alias in node.names}
        children = {p.stem for p in path.parent.glob("*.py")} | {p.parent.name for p in path.parent.glob("*/__init__.py")}
        shadowed += [f"{module}.{name}" for name in sorted(taken & children)]
    assert not shadowed, "submodules named as names their package imports:\n" + "\n".join(shadowed)
