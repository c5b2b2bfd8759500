"""The public API is drawn at the package boundary: the top-level names and five namespaces.

Every other module is private (a ``_`` name somewhere in its path), docs/api.md documents exactly
the public names, and the surface stays small enough to learn at once (at most 60 names).
"""

from __future__ import annotations

import importlib
import pathlib
import re

import pytest

import xcorrstat

ROOT = pathlib.Path(xcorrstat.__file__).parent
NAMESPACES = ("plot", "wmt", "diagnostics", "agreement", "datasets")
MAX_PUBLIC_NAMES = 60


def public_names() -> list[str]:
    """Every public name: ``xcorrstat.__all__`` (dunders aside) and each namespace's ``__all__``."""
    names = [n for n in xcorrstat.__all__ if not n.startswith("__")]
    for space in NAMESPACES:
        names += [f"{space}.{n}" for n in importlib.import_module(f"xcorrstat.{space}").__all__]
    return names


def test_the_namespaces_are_the_public_modules():
    public_modules = {"xcorrstat", "xcorrstat.__main__", *(f"xcorrstat.{s}" for s in NAMESPACES)}
    exposed = []
    for path in ROOT.rglob("*.py"):
        parts = ["xcorrstat", *path.relative_to(ROOT).with_suffix("").parts]
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        if name not in public_modules and not any(p.startswith("_") and not p.startswith("__") for p in parts):
            exposed.append(name)
    assert not exposed, f"modules outside the public namespaces without a private name: {sorted(exposed)}"
    assert set(NAMESPACES) <= set(xcorrstat.__all__)


def test_every_public_name_resolves_and_is_counted():
    names = public_names()
    assert len(names) == len(set(names))
    for dotted in names:
        obj = xcorrstat
        for part in dotted.split("."):
            obj = getattr(obj, part)
    assert len(names) <= MAX_PUBLIC_NAMES, f"{len(names)} public names"


@pytest.mark.parametrize("space", NAMESPACES)
def test_a_namespace_holds_no_other_public_attribute(space):
    """What a namespace shows beyond its ``__all__`` is private (``_`` names) or one of its modules."""
    module = importlib.import_module(f"xcorrstat.{space}")
    extra = [n for n in vars(module) if not n.startswith("_") and n not in module.__all__
             and n not in {"annotations", "TYPE_CHECKING", "sys", "resources", "pd", "xr", "np"}]
    assert not extra, f"xcorrstat.{space} shows {extra} outside its __all__"


def test_the_api_page_lists_exactly_the_public_names():
    text = (ROOT.parent / "docs" / "api.md").read_text(encoding="utf-8")
    blocks = re.findall(r"\.\. autosummary::\n(?:   :[^\n]*\n)*\n((?:   \S[^\n]*\n)+)", text)
    listed = [line.strip() for block in blocks for line in block.splitlines()]
    documented = [n for n in listed if not n.startswith(("Dataset.", "DataArray.", "DataFrame."))]
    assert sorted(documented) == sorted(n for n in public_names() if n not in NAMESPACES)


def test_the_glance_page_names_every_public_name():
    text = (ROOT.parent / "docs" / "glance.md").read_text(encoding="utf-8")
    missing = [n for n in public_names() if f"`{n.rsplit('.', 1)[-1]}`" not in text
               and f"`xcorrstat.{n}" not in text]
    assert not missing, f"docs/glance.md does not name {missing}"
