"""The resampling and permutation schemes: one parser and one label set for every function.

A bootstrap resamples along named dims and a permutation test swaps along them; the
labels are those of Deutsch, Dror & Roth (2022):

========================  ============================  ==============================
label                     bootstrap ``resample=``       permutation ``permute=``
========================  ============================  ==============================
``BOOT-SYSTEMS``          ``"system"``
``BOOT-INPUTS``           ``"input"``
``BOOT-BOTH``             ``("system", "input")``
``PERM-SYSTEMS``                                        ``"system"`` (swap whole systems)
``PERM-INPUTS``                                         ``"input"`` (swap whole inputs)
``PERM-BOTH``                                           ``("system", "input")`` (per cell)
``PERM-SYSTEM-XOR-INPUT``                               ``"system-xor-input"`` (nlpstats' "both")
========================  ============================  ==============================

Every function takes either spelling -- dims or a label, labels in any case -- and
records the label in its result's attrs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast, get_args

from .._display import cut, did_you_mean
from .._types import Standardise, SwapUnit
from .._schema import INPUT, SYSTEM, is_system_level
from .._validation import check_choice
from .draws import canonical_dims

__all__ = [
    "BOOTSTRAP_SCHEMES", "PERMUTATION_SCHEMES", "SCHEME_DIMS", "bootstrap_label", "parse_resample",
    "parse_permute", "parse_label", "permutation_label", "STANDARDISE", "STANDARDISED", "check_standardise",
]

#: Bootstrap labels and the dims they resample.
BOOTSTRAP_SCHEMES: dict[str, tuple[str, ...]] = {
    "BOOT-SYSTEMS": (SYSTEM,), "BOOT-INPUTS": (INPUT,), "BOOT-BOTH": (SYSTEM, INPUT),
}
#: Permutation labels and the swap unit (the scheme of :func:`.draws.permutation_masks`).
PERMUTATION_SCHEMES: dict[str, SwapUnit] = {"PERM-SYSTEMS": "system", "PERM-INPUTS": "input", "PERM-BOTH": "cells",
                       "PERM-SYSTEM-XOR-INPUT": "system-xor-input"}
#: The dims each swap unit permutes along.
SCHEME_DIMS: dict[str, tuple[str, ...]] = {
    "system": (SYSTEM,), "input": (INPUT,), "cells": (SYSTEM, INPUT), "system-xor-input": (SYSTEM, INPUT),
}
_RESAMPLE_HELP = "'system', 'input' or ('system', 'input') (or a label: BOOT-SYSTEMS, BOOT-INPUTS, BOOT-BOTH)"
_PERMUTE_HELP = ("'system' (PERM-SYSTEMS), 'input' (PERM-INPUTS), ('system', 'input') (PERM-BOTH, per cell) "
                 "or 'system-xor-input' (nlpstats' 'both'), or the label in brackets")


def _upper(value: object) -> str | None:
    return value.upper() if isinstance(value, str) else None


def parse_resample(resample: object, argument: str = "resample") -> tuple[str, ...]:
    """The dims a bootstrap resamples, in canonical order, from dims or a BOOT-* label.

    Examples
    --------
    >>> parse_resample(("input", "system")), parse_resample("boot-systems")
    (('system', 'input'), ('system',))
    """
    label = _upper(resample)
    if label in BOOTSTRAP_SCHEMES:
        return BOOTSTRAP_SCHEMES[label]
    if not isinstance(resample, (str, list, tuple)):
        raise ValueError(f"{argument} must be {_RESAMPLE_HELP}, got {cut(resample)}")
    dims = (resample,) if isinstance(resample, str) else tuple(resample)
    if not dims:
        raise ValueError(f"{argument} must name at least one dim: 'system', 'input' or both")
    for d in dims:
        if d not in (SYSTEM, INPUT):
            hint = did_you_mean(d, [SYSTEM, INPUT, *BOOTSTRAP_SCHEMES]) if isinstance(d, str) else ""
            raise ValueError(f"{argument} must be {_RESAMPLE_HELP}, got {cut(resample)}"
                             f"{hint or '; resampling a batch dim such as a language pair is not supported yet'}")
    return canonical_dims(dims)


def parse_permute(permute: object, argument: str = "permute") -> SwapUnit:
    """The swap unit of a permutation test, from dims or a PERM-* label.

    Examples
    --------
    >>> parse_permute(("system", "input")), parse_permute("PERM-SYSTEMS"), parse_permute("cells")
    ('cells', 'system', 'cells')
    """
    label = _upper(permute)
    if label in PERMUTATION_SCHEMES:
        return PERMUTATION_SCHEMES[label]
    dims = (permute,) if isinstance(permute, str) else tuple(permute) if isinstance(permute, (list, tuple)) else None
    if dims in (("system-xor-input",), ("cells",)):  # the swap units, as results record them in attrs["permute"]
        return dims[0]
    if dims is not None and len(dims) == 2 and set(dims) == {SYSTEM, INPUT}:
        return "cells"
    if dims in ((SYSTEM,), (INPUT,)):
        return cast(SwapUnit, dims[0])
    typed = [d for d in dims or () if isinstance(d, str) and d not in (SYSTEM, INPUT)]
    hint = did_you_mean(typed[0], [SYSTEM, INPUT, *SCHEME_DIMS, *PERMUTATION_SCHEMES]) if typed else ""
    raise ValueError(f"{argument} must be {_PERMUTE_HELP}, got {cut(permute)}{hint}")


def bootstrap_label(dims: Sequence[str]) -> str:
    """The BOOT-* label of resampled dims (``"+"``-joined dims when the scheme has no label).

    Examples
    --------
    >>> bootstrap_label(("input", "system")), bootstrap_label("system")
    ('BOOT-BOTH', 'BOOT-SYSTEMS')
    """
    key = canonical_dims([dims] if isinstance(dims, str) else dims)
    for label, d in BOOTSTRAP_SCHEMES.items():
        if d == key:
            return label
    return "BOOT-" + "+".join(key)


def permutation_label(scheme: SwapUnit) -> str:
    """The PERM-* label of a swap unit.

    Examples
    --------
    >>> permutation_label("cells")
    'PERM-BOTH'
    """
    return {v: k for k, v in PERMUTATION_SCHEMES.items()}[scheme]


def parse_label(name: object, allowed: Sequence[str], argument: str) -> str:
    """A scheme label (or other named choice) from ``allowed``, matched case-insensitively.

    Returns the canonical spelling in ``allowed``.

    Examples
    --------
    >>> parse_label("perm-both", tuple(PERMUTATION_SCHEMES), "scheme")
    'PERM-BOTH'
    """
    for a in allowed:
        if isinstance(name, str) and name.upper() == a.upper():
            return a
    hint = did_you_mean(name, allowed) if isinstance(name, str) else ""
    raise ValueError(f"{argument} must be one of {', '.join(repr(a) for a in allowed)} "
                     f"(any case), got {cut(name)}{hint}")


#: What a permutation test z-scores before swapping (:data:`xcorrstat._types.Standardise`).
STANDARDISE: tuple[Standardise, ...] = get_args(Standardise)
#: How each choice is described in a result's attrs.
STANDARDISED = {"cells": "x and y z-scored over all their non-missing cells",
                "system-means": "x and y reduced to per-system means (over each one's present inputs), "
                                "then z-scored over the systems"}


def check_standardise(standardise: object, *, level: str, scheme: str) -> Standardise:
    """``standardise`` checked against the level and swap unit it needs.

    ``"cells"`` (Algorithm 2 of Deutsch, Dror & Roth) applies everywhere;
    ``"system-means"`` (mt-metrics-eval's system-level test) swaps whole systems'
    means, so it needs ``level="system"`` and ``permute="system"``.

    Examples
    --------
    >>> check_standardise("system-means", level="system", scheme="system")
    'system-means'
    """
    value = check_choice(standardise, STANDARDISE, "standardise")
    if value == "system-means" and (level != "system" or scheme != "system"):
        raise ValueError(
            "standardise='system-means' (mt-metrics-eval's system-level test) z-scores the per-system means and "
            f"swaps whole systems: it needs level='system' and permute='system' (PERM-SYSTEMS), got level={level!r} "
            f"and {permutation_label(scheme)}")  # type: ignore[arg-type]
    return value



def drawn_scheme(data: object, scheme: SwapUnit) -> SwapUnit:
    """The swap unit actually drawn: on system-level data PERM-BOTH swaps each system's one cell, PERM-SYSTEMS.

    Examples
    --------
    >>> drawn_scheme(None, "cells")
    'cells'
    """
    return cast(SwapUnit, SYSTEM) if scheme == "cells" and is_system_level(data) else scheme


def drawn_dims(data: object, dims: tuple[str, ...]) -> tuple[str, ...]:
    """The dims actually resampled: on system-level data BOOT-BOTH draws each system with its one input, BOOT-SYSTEMS.

    Examples
    --------
    >>> drawn_dims(None, ("system", "input"))
    ('system', 'input')
    """
    return (SYSTEM,) if set(dims) == {SYSTEM, INPUT} and is_system_level(data) else dims
