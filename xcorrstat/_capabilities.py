"""What every operation supports: one table of levels, methods and Kendall variants.

Each public operation that takes ``level=``, ``method=`` or ``variant=`` checks them here, with
:func:`check`, so a cell of the table either works or is refused with the one message the table
derives from its limit (the argument, the value, what is supported and why). The docs' support
table (:func:`support_table`) and the command line's choices (:data:`LEVELS`, :data:`METHODS`,
:data:`VARIANTS`) come from the same data.

The limits are essential ones -- Williams' test (one product-moment correlation over n units),
Fisher's z (a sampling variance known only for some coefficients), tie calibration (defined for the
variants that count ties as agreement), the pair-outcome test (Kendall's counts of pair outcomes) --
and two that are not, each saying so in its reason: global-level bootstrap draws of the variants
that count pairs of distinct units, and re-calibrated permutation draws at system level.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import NamedTuple, get_args

from ._display import cut, did_you_mean
from ._types import OWN, Level, Method, Variant, is_own

__all__ = [
    "COLUMNS", "LEVELS", "METHODS", "OPERATIONS", "REFINEMENTS", "VARIANTS", "Limit", "Operation", "Refinement", "cells",
    "check", "check_levels", "check_refinements", "choices", "support_text",
    "limit_of", "message", "support_table",
]

#: Every level, every correlation coefficient and every Kendall variant, in the order of ``_types``.
LEVELS: tuple[Level, ...] = get_args(Level)
METHODS: tuple[Method, ...] = get_args(Method)
VARIANTS: tuple[Variant, ...] = get_args(Variant)
_VOCABULARY: dict[str, tuple[str, ...]] = {"level": LEVELS, "method": METHODS, "variant": VARIANTS}


class Limit(NamedTuple):
    """``argument`` must be one of ``supported`` whenever every ``(name, value)`` of ``when`` holds."""

    argument: str
    supported: tuple[str, ...]
    reason: str
    when: tuple[tuple[str, str], ...] = ()


class Operation(NamedTuple):
    """A public call: the arguments of the three it takes, the values it fixes, and its limits."""

    name: str
    arguments: tuple[str, ...]
    limits: tuple[Limit, ...] = ()
    fixed: tuple[tuple[str, str], ...] = ()  # e.g. calibrate_ties is Kendall's: (("method", "kendall"),)


_KENDALL = (("method", "kendall"),)
_PRODUCT_MOMENT = ("pearson", "spearman")

WILLIAMS = (
    Limit("level", ("system", "global"),
          "Williams' test compares two dependent correlations over the same n units; at input and "
          "within-system level the value is an average of per-group correlations, not one correlation "
          "over n units (use permutation_test or paired_bootstrap_test)"),
    Limit("method", _PRODUCT_MOMENT,
          "Williams' test is defined for Pearson-type (product-moment) correlations of overlapping "
          "dependent pairs; Spearman's rho is Pearson's r on ranks, Kendall's tau has another sampling "
          "variance (use permutation_test or paired_bootstrap_test)"),
)
FISHER = (
    Limit("variant", ("b", "c"),
          "Fisher's z interval needs the coefficient's sampling variance: for Kendall's tau that of "
          "Fieller, Hartley and Pearson (1957), used for tau-b and tau-c; none is established for tau-a, "
          "tau_eq ('23') or acc_eq ('acc23'), which count ties otherwise (use bootstrap)", _KENDALL),
)
GLOBAL_DRAWS = (
    Limit("variant", ("b", "c"),
          "under resampling, tau-a, tau_eq ('23') and acc_eq ('acc23') count only the pairs of copies of "
          "distinct units; the draws count them so at system, input and within-system level, but the "
          "global level's bootstrap kernel counts every pair of cells (not implemented there yet: resample "
          "at another level, or use permutation_test)",
          (("level", "global"), *_KENDALL)),
)
_TIES = ("tie calibration chooses the metric-tie threshold of acc_eq ('acc23') and tau_eq ('23'), the "
         "Kendall variants that count tied pairs as agreement (Deutsch et al., 2023)")
CALIBRATE = (
    Limit("method", ("kendall",), _TIES),
    Limit("variant", ("23", "acc23"), _TIES, _KENDALL),
)
_GROUPS = ("input", "within_system", "global")
PAIRS = (
    Limit("level", _GROUPS,
          "swap='pairs' swaps the outcomes of pairs of items within groups (each input's systems, each "
          "system's inputs, or all cells); at system level the items are per-system means, not cells whose "
          "pair outcomes a draw can swap (use Permutation(swap='scores'))"),
    Limit("method", ("kendall",),
          "swap='pairs' swaps pair outcomes (concordant, discordant, tied), the counts of Kendall's "
          "variants; Pearson's and Spearman's coefficients depend on the scores themselves (use Permutation(swap='scores'))"),
    Limit("variant", ("b", "a", "23", "acc23"),
          "tau-c's denominator counts the distinct values of the scores, not pair outcomes, so swapping "
          "outcomes does not define it", _KENDALL),
)
SWAP_CALIBRATE = (
    Limit("level", _GROUPS,
          "a permutation draw re-calibrates the tie threshold over the pair groups of the input, "
          "within-system and global levels (mt-metrics-eval's average_by 'item', 'sys' and 'none'); at "
          "system level this is not implemented (bootstrap(epsilon='calibrate') re-calibrates there)"),
    *CALIBRATE,
)

_BY_NAME = ("the {what} is known for the coefficients by name only; a function of one's own "
            "(method=callable) has none")
OWN_FISHER = Limit("method", METHODS, _BY_NAME.format(what="sampling variance behind Fisher's z interval") +
                   " (use bootstrap)")
OWN_POWER = Limit("method", METHODS, "power_analysis compares the tests of the coefficients by name, Williams' "
                  "test among them; a function of one's own (method=callable) has no Williams' test (run "
                  "permutation_test or paired_bootstrap_test on degraded scores)")
OWN_MATRIX = Limit("method", METHODS, "agreement.matrix correlates scores with each other by a coefficient's "
                   "name; a function of one's own (method=callable) is a statistic of a metric against the "
                   "target (use correlate)")

_ALL = ("level", "method", "variant")
#: The operations and their limits, in the order of the docs' table.
OPERATIONS: dict[str, Operation] = {op.name: op for op in (
    Operation("correlate", _ALL),
    Operation("bootstrap", _ALL, GLOBAL_DRAWS),
    Operation("bootstrap(epsilon='calibrate')", _ALL, CALIBRATE + GLOBAL_DRAWS),
    Operation("fisher", _ALL, (OWN_FISHER, *FISHER)),
    Operation("permutation_test", _ALL),
    Operation("permutation_test(test=Permutation(swap='pairs'))", _ALL, PAIRS),
    Operation("permutation_test(test=Permutation(epsilon='calibrate'))", _ALL, SWAP_CALIBRATE),
    Operation("paired_bootstrap_test", _ALL, GLOBAL_DRAWS),
    Operation("williams_test", ("level", "method"), WILLIAMS),
    Operation("compare", _ALL),
    Operation("compare(test=Permutation(swap='pairs'))", _ALL, PAIRS),
    Operation("compare(test='bootstrap')", _ALL, GLOBAL_DRAWS),
    Operation("compare(test='williams')", _ALL, WILLIAMS),
    Operation("report", _ALL, GLOBAL_DRAWS),
    Operation("diagnostics.ci_coverage", _ALL, (OWN_FISHER, *FISHER)),
    Operation("diagnostics.power_analysis", ("level", "method"), (OWN_POWER,), fixed=(("variant", "b"),)),
    Operation("agreement.matrix", _ALL, (OWN_MATRIX,)),
    Operation("calibrate_ties", ("level", "variant"), CALIBRATE, fixed=_KENDALL),
)}


def _vocabulary(name: str, value: object) -> str:
    if name == "method" and is_own(value):
        return OWN  # a function of one's own: the table's column "callable"
    allowed = _VOCABULARY[name]
    if isinstance(value, str) and value in allowed:
        return value
    hint = did_you_mean(value, allowed) if isinstance(value, str) else ""
    note = " (Kendall's variant)" if name == "variant" else ""
    raise ValueError(f"{name} must be one of {allowed!r}{note}, got {cut(value)}{hint}")


def _holds(limit: Limit, values: dict[str, str]) -> bool:
    return all(values.get(name) == value for name, value in limit.when)


def limit_of(operation: str, *, level: str | None = None, method: str | None = None,
             variant: str | None = None) -> Limit | None:
    """The first limit of ``operation`` that refuses these values, or None when they are supported.

    Examples
    --------
    >>> limit_of("williams_test", level="input", method="pearson").argument
    'level'
    >>> limit_of("correlate", level="within_system", method="kendall", variant="acc23") is None
    True
    """
    op = OPERATIONS[operation]
    values = {k: v for k, v in (("level", level), ("method", method), ("variant", variant)) if v is not None}
    values.update(op.fixed)
    if values.get("method", "kendall") != "kendall":
        values.pop("variant", None)  # a variant is Kendall's: other coefficients ignore it
    for limit in op.limits:
        value = values.get(limit.argument)
        if value is not None and _holds(limit, values) and value not in limit.supported:
            return limit
    return None


def _spell(values: Sequence[str]) -> str:
    quoted = [repr(v) for v in values]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]


def message(operation: str, limit: Limit, value: str) -> str:
    """The one message refusing ``value`` of ``limit.argument`` in ``operation``.

    Examples
    --------
    >>> message("fisher", FISHER[0], "a").split(";")[0]
    "fisher: variant='a' is not supported with method='kendall'"
    """
    when = " and ".join(f"{k}={v!r}" for k, v in limit.when)
    context = f" with {when}" if when else ""
    return (f"{operation}: {limit.argument}={value!r} is not supported{context}; it supports "
            f"{limit.argument} {_spell(limit.supported)}: {limit.reason}")


def check(operation: str, *, level: object = None, method: object = None, variant: object = None) -> None:
    """Refuse, with the table's one message, values of ``level``, ``method`` or ``variant``
    that ``operation`` does not support (None: not checked).

    A value outside the vocabulary (a typo) is refused first, with the choices and a near miss.

    Raises
    ------
    ValueError
        Naming the argument, the value, what is supported and why.

    Examples
    --------
    >>> check("bootstrap", level="within_system", method="kendall", variant="acc23")
    >>> check("williams_test", level="system", method="kendall")
    Traceback (most recent call last):
    ...
    ValueError: williams_test: method='kendall' is not supported; it supports method 'pearson' or ...
    """
    given = {"level": level, "method": method, "variant": variant}
    values = {name: _vocabulary(name, value) for name, value in given.items() if value is not None}
    limit = limit_of(operation, **values)
    if limit is not None:
        raise ValueError(message(operation, limit, values[limit.argument]))


class Refinement(NamedTuple):
    """An option that refines some statistics only: it applies where ``argument`` is one of ``applies``."""

    argument: str
    applies: tuple[str, ...]
    default: object
    what: str


#: The options that refine a statistic rather than choose it. Each applies to some levels or some
#: coefficients only; set away from its default where nothing it refines is computed, it is refused
#: (:func:`check_refinements`) rather than ignored.
REFINEMENTS: dict[str, Refinement] = {
    "variant": Refinement("method", ("kendall",), "b", "chooses among Kendall's tau variants"),
    "epsilon": Refinement("method", ("kendall",), 0.0, "is the metric-tie threshold of Kendall's pair counts"),
    "average": Refinement("level", ("input", "within_system"), "macro",
                          "averages the per-group correlations of the input and within-system levels"),
    "complete_inputs": Refinement("level", ("system",), False,
                                  "chooses the inputs behind the per-system means of the system level"),
}


def _listed(value: object) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str) or is_own(value):
        return [OWN if is_own(value) else str(value)]
    return [OWN if is_own(v) else str(v) for v in value]  # type: ignore[attr-defined]


def _is_default(value: object, default: object) -> bool:
    if isinstance(default, bool) or isinstance(value, (bool, str)):
        return value is None or value == default
    try:
        return value is None or bool(float(value) == default)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False  # e.g. thresholds per metric: set


def check_refinements(operation: str, *, level: object, method: object, **options: object) -> None:
    """Refuse an option of :data:`REFINEMENTS` set away from its default where nothing it refines is
    computed: ``variant`` or ``epsilon`` without Kendall's tau, ``average`` without an input or
    within-system level, ``complete_inputs`` without the system level. ``level`` and ``method``
    may be lists (an option applies when it refines one of them); None is not checked.

    Raises
    ------
    ValueError
        Naming the option, its value, what it refines and what was asked for.

    Examples
    --------
    >>> check_refinements("correlate", level=["system", "input"], method="pearson", average="weighted")
    >>> check_refinements("correlate", level="system", method="pearson", variant="c")
    Traceback (most recent call last):
    ...
    ValueError: correlate: variant='c' chooses among Kendall's tau variants, and method='pearson' ...
    """
    asked = {"level": _listed(level), "method": _listed(method)}
    for name, value in options.items():
        ref = REFINEMENTS[name]
        if _is_default(value, ref.default) or not asked[ref.argument] or set(asked[ref.argument]) & set(ref.applies):
            continue
        shown = asked[ref.argument]
        given = repr(shown[0]) if len(shown) == 1 else repr(shown)
        raise ValueError(f"{operation}: {name}={cut(value)} {ref.what}, and {ref.argument}={given} computes none; "
                         f"leave {name} at its default {ref.default!r}, or ask for {ref.argument} {_spell(ref.applies)}")


def check_levels(operation: str, level: object, *, method: object = None, variant: object = None) -> list[Level]:
    """``level`` (one level or a non-empty list of distinct levels) as a list, each checked as :func:`check`.

    Examples
    --------
    >>> check_levels("report", ["system", "within_system"], method="pearson")
    ['system', 'within_system']
    """
    if isinstance(level, str):
        levels: list[object] = [level]
    else:
        try:
            levels = list(level)  # type: ignore[call-overload]
        except TypeError:
            raise ValueError(f"level must be one of {LEVELS!r} or a list of them, got {cut(level)}") from None
    if not levels:
        raise ValueError(f"level must be one of {LEVELS!r} or a list of them, got an empty list")
    if len(set(map(str, levels))) != len(levels):
        raise ValueError(f"level names a level twice: {levels!r}")
    for lev in levels:
        check(operation, level=lev, method=method, variant=variant)
    return levels  # type: ignore[return-value]  # each checked above


#: The columns of the support table: each coefficient, Kendall's once per variant.
COLUMNS: tuple[tuple[str, Variant], ...] = (
    ("pearson", "b"), ("spearman", "b"), *(("kendall", v) for v in VARIANTS), (OWN, "b"))


def cells() -> Iterator[tuple[str, Level, str, Variant, str]]:
    """Every ``(operation, level, method, variant, status)``: status "yes", "no" or "n/a" (an
    argument the operation does not take, e.g. ``variant`` of ``power_analysis``, which uses tau-b).

    Examples
    --------
    >>> sum(1 for c in cells() if c[0] == "correlate" and c[-1] == "yes")
    32
    """
    for name, op in OPERATIONS.items():
        fixed = dict(op.fixed)
        for level in LEVELS:
            for method, variant in COLUMNS:
                off = (fixed.get("method", method) != method
                       or (method == "kendall" and fixed.get("variant", variant) != variant))
                if off:
                    yield name, level, method, variant, "n/a"
                    continue
                limit = limit_of(name, level=level, method=method, variant=variant)
                yield name, level, method, variant, "yes" if limit is None else "no"


def support_table() -> tuple[list[str], list[list[str]], list[str]]:
    """``(header, rows, notes)`` of the docs' table: one row per operation and level, one column per
    coefficient (Kendall's per variant); a refused cell names its note, the limit's reason.

    Examples
    --------
    >>> header, rows, notes = support_table()
    >>> header[:4], rows[0][:4]
    (['operation', 'level', 'pearson', 'spearman'], ['correlate', 'system', 'yes', 'yes'])
    """
    header = ["operation", "level", *(m if m != "kendall" else f"kendall {v}" for m, v in COLUMNS)]
    notes: list[str] = []
    rows: dict[tuple[str, str], list[str]] = {}
    for name, level, method, variant, status in cells():
        text = {"yes": "yes", "n/a": "-"}.get(status, "")
        if status == "no":
            limit = limit_of(name, level=level, method=method, variant=variant)
            assert limit is not None
            if limit.reason not in notes:
                notes.append(limit.reason)
            text = f"no ({notes.index(limit.reason) + 1})"
        rows.setdefault((name, level), [name, level]).append(text)
    return header, list(rows.values()), notes


def choices(operation: str, argument: str) -> tuple[str, ...]:
    """The values of ``argument`` that ``operation`` supports in at least one cell: the command line's
    choices (a combination outside the table is then refused by :func:`check`, with its reason).

    Examples
    --------
    >>> choices("williams_test", "level")
    ('system', 'global')
    >>> choices("report", "level")
    ('system', 'input', 'global', 'within_system')
    """
    index = {"level": 1, "method": 2, "variant": 3}[argument]
    supported = {cell[index] for cell in cells() if cell[0] == operation and cell[-1] == "yes"}
    return tuple(v for v in _VOCABULARY[argument] if v in supported)


def support_text(width: int = 100) -> str:
    """The support table as aligned text, then its numbered notes (the reasons of the refusals).

    Examples
    --------
    >>> support_text().splitlines()[2].split()
    ['correlate', 'system', 'yes', 'yes', 'yes', 'yes', 'yes', 'yes', 'yes', 'yes']
    """
    import textwrap

    header, rows, notes = support_table()
    widths = [max(len(r[k]) for r in [header, *rows]) for k in range(len(header))]
    lines = []
    for k, row in enumerate([header, *rows]):
        if k > 1 and row[0] == rows[k - 2][0]:
            row = ["", *row[1:]]  # the operation once, on its first level
        lines.append("  ".join(cell.ljust(w) if j < 2 else cell.rjust(w) for j, (cell, w) in
                               enumerate(zip(row, widths))).rstrip())
        if k == 0:
            lines.append("-" * len(lines[0]))
    lines.append("")
    lines.append("yes: supported; -: not an argument of the operation (power_analysis uses tau-b; calibrate_ties "
                 "is Kendall's)")
    for k, note in enumerate(notes, 1):
        lines.append(textwrap.fill(f"({k}) {note}", width, subsequent_indent="    "))
    return "\n".join(lines)
