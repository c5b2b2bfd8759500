"""Input-level Kendall variants of swapped metrics, with metric ties within epsilon, for a batch of masks.

The extension of :mod:`xcorrstat._kernels.swap` to every Kendall variant and to
epsilon ties. Within one input, a pair of systems (a, b) compares the cells
``u_a`` and ``v_b``, where u and v are X or Y depending on the swap mask. Its metric
sign ``sgn_eps(u_a - v_b)`` (0 when ``|u_a - v_b| <= eps``) and its metric-tie
indicator are therefore one of four precomputed values, selected by ``(m_a, m_b)``:
bilinear in the mask, as for tau-b. With the gold sign ``g`` and gold-tie indicator
``t`` of the pair (exact ties), summed over the valid pairs:

* ``C - D = sum g * sgn``, the metric ties ``T_m + T_gm = sum e``;
* tau-a ``= (C - D) / N``; tau-b ``= (C - D) / sqrt((N - T_g - T_gm)(N - T_m - T_gm))``;
* acc_eq ``= (C + T_gm) / N = (sum g sgn + sum (1 - t) + sum e (3t - 1)) / (2N)``,
  because a pair agrees when both signs are equal: ``(g sgn + |g||sgn|) / 2 + t e``
  with ``|sgn| = 1 - e``;
* tau_eq (``"23"``) ``= (C + T_gm - D - T_g - T_m) / N = 2 acc_eq - 1``.

So each variant's integer part is a constant + a linear + a quadratic form in the
mask. Every form is one column of an operand over the rows ``[m_s | 1 | m_a m_b
(a < b)]`` of :func:`~xcorrstat._kernels.linear.forms.mask_products`, which all pairs of
metrics share: one GEMM per input gives X' of every pair and draw, and a second,
over the first ``S + 1`` rows, Y' - X' (Y' is X' under ``1 - m``: same quadratic
part). Sums are exact in float32 for these integers. Tau-b's tie forms are kept only
for the pairs of metrics with a tie somewhere; for the others every draw has the
same denominator. A compiled loop (:mod:`xcorrstat._kernels.rank.input_swap_jit`) compares
each input's pairs of systems and sums the forms straight into the laid-out operands.

From the exact integers on, each value takes the float operations of its definition
(float64), so it is the same float whatever the blocks, the batch or the route.
:func:`input_kendall_swap_means` adds them input after input, as a sum along the inputs
of the per-input values would; it needs no clipping to [-1, 1]: every numerator is an
integer no larger than its denominator (tau-b: by Cauchy-Schwarz, and a correctly
rounded square root and quotient keep the ratio within 1). When X and Y are missing in
different cells, every draw has its own counts in the divisors: they are forms in the
mask too (:class:`~xcorrstat._kernels.rank.input_gaps.GapCounts`), and the values are formed and
added by :mod:`xcorrstat._kernels.rank.input_gaps`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from ..._types import Variant
from .._compiled import jit, loops
from .input_gaps import ACC_VARIANTS, DrawCounts, GapCounts, gap_add, gap_counts, gap_stats
from ..linear.forms import F32_EXACT, SwapRun, mask_products
from .input_sort import SortPrep, sort_counts, sort_pays, sort_prepare

__all__ = ["SWAP_KENDALL_VARIANTS", "empty_operands", "finish_forms", "input_kendall_swap",
           "input_kendall_swap_means", "means_run", "values_run"]

#: Input-level Kendall variants of the swap fast path.
SWAP_KENDALL_VARIANTS: tuple[Variant, ...] = ("a", "b", "23", "acc23")
#: Variant codes of the compiled loops.
_CODES = {v: c for c, v in enumerate(SWAP_KENDALL_VARIANTS)}
#: (pair of metrics, input, pair of systems) cells whose valid counts are formed at once (X and Y missing apart).
_PREP_CELLS = 1 << 16
#: Mask products (inputs x draws x rows) laid out at once per block of inputs: 2 MiB of float32, so that a block's
#: products outweigh its dozen NumPy calls (at 1 << 17 a block of 1,000 draws held one input: 12 metrics' tau-b
#: on 15 x 2,000 tied scores took 5.3 s, at 1 << 19 3.1 s).
_RUN_CELLS = 1 << 19

#: What a run does with a block of inputs ``blk``: ``consume(blk, ties, v, counts, whole)``, with ``ties`` tau-b's
#: metric ties of X' and Y' (inputs, B, Pt) for the pairs ``tied`` or None, ``v`` the integer parts of X' and Y'
#: (inputs, B, P), ``counts`` the draws' own counts (X and Y missing in different cells) or None, and ``whole``
#: (2, 1 + inputs, B, P) float64 room.
_Consume = Callable[[slice, "tuple[np.ndarray, np.ndarray] | None", "tuple[np.ndarray, np.ndarray]", "DrawCounts | None",
                     np.ndarray], None]


class _Forms(NamedTuple):
    """What a batch of masks needs, laid out per input: operands (I, rows, pairs) and (I, P) constants."""

    value: np.ndarray  # X''s integer part (numerator; acc_eq's agreement count): [linear | const | quadratic]
    value_diff: np.ndarray  # Y' minus X': [linear | const] (the first S + 1 rows)
    ties: np.ndarray | None  # tau-b: metric ties of X' for the pairs ``tied`` (None when there are none)
    ties_diff: np.ndarray | None
    tied: np.ndarray  # (Pt,) positions of the pairs of metrics with a metric tie somewhere
    n0: np.ndarray  # valid pairs of systems
    gold_untied: np.ndarray  # valid pairs not tied in the target
    scale: np.ndarray  # the divisor of every draw (tau-b: for the pairs without metric ties)
    undefined: np.ndarray  # (I, P) bool: undefined in every draw
    varying: np.ndarray  # positions of the pairs whose defined inputs change with the draw
    gaps: GapCounts | None  # X and Y missing in different cells: the valid counts of each draw
    need: int  # systems an input needs
    sort: SortPrep | None = None  # the sort form's inputs, sorted once (then value and value_diff are empty)


def _check(zx: ArrayLike, zy: ArrayLike, z: ArrayLike, variant: Variant,
           eps: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The three (P, S, I) float64 arrays and ``eps`` as a (P, 2, 2) array, once checked."""
    if variant not in SWAP_KENDALL_VARIANTS:
        raise ValueError(f"variant must be one of {SWAP_KENDALL_VARIANTS}, got {variant!r}")
    ax, ay, az = (np.asarray(a, dtype=np.float64) for a in (zx, zy, z))
    eps_p = np.broadcast_to(np.asarray(eps, dtype=np.float64), (ax.shape[0], 2, 2))
    if np.any(eps_p < 0) or not np.all(np.isfinite(eps_p)):
        raise ValueError("eps must be finite and >= 0")
    return ax, ay, az, eps_p


def input_kendall_swap(
    zx: ArrayLike, zy: ArrayLike, z: ArrayLike, *, min_pairs: int, variant: Variant = "b", eps: ArrayLike = 0.0
) -> SwapRun:
    """Per-input Kendall variant of X' and Y' with Z; returns ``run(m) -> two (P, I, B) arrays``.

    Parameters
    ----------
    zx, zy, z : (P, S, I) arrays
        The two metrics (missing in the same cells) and the target.
    min_pairs : int
        Inputs with fewer valid systems are undefined (NaN).
    variant : {"a", "b", "23", "acc23"}
    eps : float or (P, 2, 2) array
        Metric-tie threshold: ``eps[p, u, v]`` for a pair comparing a cell of metric
        u (0 = X, 1 = Y) with a cell of metric v. A scalar applies to all four.

    Undefined (NaN): fewer than ``max(min_pairs, 2)`` valid systems; for tau-b also
    every valid pair tied in the target or in the metric. acc_eq and tau_eq are
    defined whenever there is a pair (a metric constant on an input ties every pair).

    Examples
    --------
    >>> import numpy as np
    >>> zx = np.array([[[1.0], [2.0], [3.0]]]); zy = zx[:, ::-1]; z = zx  # P=1, S=3, I=1
    >>> run = input_kendall_swap(zx, zy, z, min_pairs=2)
    >>> rx, ry = run(np.zeros((1, 3, 1), dtype=bool))  # no swap: X' = X, Y' = Y
    >>> float(rx[0, 0, 0]), float(ry[0, 0, 0])
    (1.0, -1.0)
    """
    return values_run(_prepare(*_check(zx, zy, z, variant, eps), variant, int(min_pairs)), variant)


def values_run(forms: _Forms, variant: Variant, *, draws_last: bool = True) -> SwapRun:
    """``run(m)``: the per-input values the forms give, two (P, I, B) arrays, or (P, B, I) without
    ``draws_last`` (NaN where undefined; see :func:`input_kendall_swap`)."""
    def run(m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        m = np.asarray(m, dtype=bool)
        i, p = forms.n0.shape
        out = np.empty((2, p, i, m.shape[0]) if draws_last else (2, p, m.shape[0], i))

        def keep(blk: slice, ties: tuple[np.ndarray, np.ndarray] | None, v: tuple[np.ndarray, np.ndarray],
                 counts: DrawCounts | None, whole: np.ndarray) -> None:
            stats = whole[:, 1:]
            if counts is None:
                _block_stats(ties, v, stats, forms, blk, variant, np.nan)
            else:
                gap_stats(v, counts, stats, variant, forms.need, np.nan)
            np.clip(stats, -1.0, 1.0, out=stats)
            if draws_last:
                out[:, :, blk] = np.transpose(stats, (0, 3, 1, 2))
            else:
                out[..., blk] = np.transpose(stats, (0, 3, 2, 1))

        _run_blocks(m, forms, keep, variant)
        return out[0], out[1]

    return run


def input_kendall_swap_means(
    zx: ArrayLike, zy: ArrayLike, z: ArrayLike, *, min_pairs: int, variant: Variant = "b", eps: ArrayLike = 0.0
) -> SwapRun:
    """The input-level Kendall variant of X' and Y' (mean over the inputs defined in each draw); returns
    ``run(m) -> two (P, B) arrays``.

    The means of :func:`input_kendall_swap`'s per-input values, summed input after input
    in input order (the sums of a (P, I, B) array along the inputs), without holding
    those values: a batch keeps only a bounded block of inputs. NaN where no input is
    defined. Parameters as in :func:`input_kendall_swap`.

    Examples
    --------
    >>> import numpy as np
    >>> zx = np.array([[[1.0, 1.0], [2.0, 3.0], [3.0, 2.0]]]); zy = -zx; z = zx  # P=1, S=3, I=2
    >>> mx, my = input_kendall_swap_means(zx, zy, z, min_pairs=2)(np.zeros((1, 3, 2), dtype=bool))
    >>> float(mx[0, 0]), float(my[0, 0])
    (1.0, -1.0)
    """
    return means_run(_prepare(*_check(zx, zy, z, variant, eps), variant, int(min_pairs)), variant)


def means_run(forms: _Forms, variant: Variant) -> SwapRun:
    """``run(m)``: the means over the inputs defined in each draw of the values the forms give (see
    :func:`input_kendall_swap_means`)."""
    static_count = (~forms.undefined).sum(axis=0)  # (P,) inputs defined in every draw

    def run(m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        m = np.asarray(m, dtype=bool)
        b, p, t = m.shape[0], forms.n0.shape[1], forms.varying
        totals = np.zeros((2, b, p))
        counts = np.broadcast_to(static_count, (2, b, p)).copy()
        counts[..., t] = 0
        started = [False]

        def add(blk: slice, ties: tuple[np.ndarray, np.ndarray] | None, v: tuple[np.ndarray, np.ndarray],
                gaps: DrawCounts | None, whole: np.ndarray) -> None:
            if gaps is not None:  # every pair's count varies: ``counts`` started at 0
                gap_add(v, gaps, totals, counts, variant, forms.need)
                return
            ok = _block_stats(ties, v, whole[:, 1:], forms, blk, variant, 0.0)
            for k in (0, 1):  # sums input after input, whatever the block's shape
                _add_inputs(whole[k, 1:], totals[k], not started[0])
                if ok is not None:
                    counts[k][:, t] += ok[k].sum(axis=0)
            started[0] = True

        _run_blocks(m, forms, add, variant)
        with np.errstate(invalid="ignore", divide="ignore"):
            means = np.where(counts > 0, totals / counts, np.nan)
        return means[0].T, means[1].T

    return run


@jit
def _add_inputs(values: np.ndarray, totals: np.ndarray, first: bool) -> None:
    """``totals`` (B, P) plus the rows of ``values`` (inputs, B, P), input after input (``first``: the rows'
    sum alone). A loop, not ``np.add.reduce``: NumPy sums pairwise along a contiguous axis, as the inputs
    are when B and P are 1, and in order otherwise, so a draw's total would depend on its batch."""
    n, b, p = values.shape
    start = 0
    if first:
        for j in range(b):
            for q in range(p):
                totals[j, q] = values[0, j, q]
        start = 1
    for i in range(start, n):
        for j in range(b):
            for q in range(p):
                totals[j, q] += values[i, j, q]


def _run_blocks(m: np.ndarray, forms: _Forms, consume: _Consume, variant: Variant) -> None:
    """Evaluate a (B, S, I) batch of masks block of inputs by block, in input order, into ``consume``.

    Every block's mask products serve every pair of metrics.
    """
    b, s, i = m.shape
    rows, p = forms.value.shape[1:]
    ib = max(1, min(i, _RUN_CELLS // (b * max(rows, p))))
    if forms.sort is not None:
        _sort_blocks(m, forms, forms.sort, consume, variant)
        return
    mt = np.ascontiguousarray(np.transpose(m, (1, 2, 0)))  # (S, I, B): blocks of inputs are contiguous
    prods = np.empty((rows, ib, b), dtype=forms.value.dtype)
    vals = np.empty((2, ib, b, p), dtype=forms.value.dtype)
    whole = np.empty((2, ib + 1, b, p))
    for i0 in range(0, i, ib):
        blk = slice(i0, min(i0 + ib, i))
        n = blk.stop - i0
        a = mask_products(mt[:, blk], out=prods[:, :n])  # (n, B, rows)
        vx, vy = vals[0, :n], vals[1, :n]
        np.matmul(a, forms.value[blk], out=vx)
        np.matmul(a[..., :s + 1], forms.value_diff[blk], out=vy)
        vy += vx
        ties = None if forms.ties is None else _metric_ties(a, forms, blk)
        counts = None if forms.gaps is None else _draw_counts(a, mt, forms, blk, ties)
        consume(blk, ties, (vx, vy), counts, whole[:, :n + 1])


def _sort_blocks(m: np.ndarray, forms: _Forms, prep: SortPrep, consume: _Consume, variant: Variant) -> None:
    """:func:`_run_blocks` by the sort form: each draw's integers from one pass over each input's sorted
    systems (:mod:`~xcorrstat._kernels.rank.input_sort`), the same integers as the mask products give."""
    b, s, i = m.shape
    p = forms.n0.shape[1]
    ib = max(1, min(i, _RUN_CELLS // (b * p)))
    vals = np.empty((2, ib, b, p), dtype=forms.value.dtype)
    ties = np.empty((2, ib, b, p), dtype=forms.value.dtype) if variant == "b" and forms.tied.size else None
    whole = np.empty((2, ib + 1, b, p))
    for i0 in range(0, i, ib):
        blk = slice(i0, min(i0 + ib, i))
        n = blk.stop - i0
        vx, vy = vals[0, :n], vals[1, :n]
        block_ties = None if ties is None else (ties[0, :n], ties[1, :n])
        sort_counts(prep, m[:, :, blk], blk, _CODES[variant], vx, vy, block_ties)
        tied = None if block_ties is None else (block_ties[0][..., forms.tied], block_ties[1][..., forms.tied])
        consume(blk, tied, (vx, vy), None, whole[:, :n + 1])


def _block_stats(ties: tuple[np.ndarray, np.ndarray] | None, v: tuple[np.ndarray, np.ndarray], out: np.ndarray,
                 forms: _Forms, blk: slice, variant: Variant, fill: float) -> tuple[np.ndarray, np.ndarray] | None:
    """The variant of X' and Y' on a block of inputs into ``out`` (2, inputs, B, P), from their integer parts
    and, for tau-b, the metric ties ``ties`` of the pairs ``forms.tied`` (None when no pair has any).

    Every operation is the one of the per-input definition on exact integers, so each
    value is the same float whatever the blocks. Returns the defined masks of the tied
    pairs (tau-b), whose denominators change with the draw, or None.
    """
    scale = forms.scale[blk][:, None, :]
    undefined = forms.undefined[blk]
    for k in (0, 1):
        with np.errstate(invalid="ignore", divide="ignore"):  # undefined inputs: replaced below
            np.divide(v[k], scale, out=out[k])
        if variant == "c":  # tau-c's divisor is rounded: kept within [-1, 1], as the other kernels keep it
            np.clip(out[k], -1.0, 1.0, out=out[k])
        if variant == "23":
            out[k] *= 2.0
            out[k] -= 1.0
        if undefined.any():
            np.copyto(out[k], fill, where=undefined[:, None, :])
    if ties is None:
        return None
    t = forms.tied
    n0, gold, static_ok = forms.n0[blk], forms.gold_untied[blk], ~undefined
    ok = np.empty((2,) + ties[0].shape, dtype=np.bool_)
    for k in (0, 1):
        _tied_values(v[k], ties[k], n0, gold, static_ok, t, fill, out[k], ok[k])
    return ok[0], ok[1]


@jit
def _tied_values(v: np.ndarray, tie: np.ndarray, n0: np.ndarray, gold: np.ndarray, static_ok: np.ndarray,
                 t: np.ndarray, fill: float, out: np.ndarray, ok: np.ndarray) -> None:
    """Tau-b of the pairs ``t`` whose denominators change with the draw, on a block of inputs: ``out[i, j, t[k]]``
    ``= v / sqrt((N - T_m) (N - T_g))`` from the metric ties ``tie[i, j, k]`` (inputs, B, Pt), or ``fill`` where
    every valid pair ties in the metric or the input is undefined (``ok`` False), in float64."""
    n, b, _ = tie.shape
    for i in range(n):
        for j in range(b):
            for k in range(t.shape[0]):
                q = t[k]
                untied = n0[i, q] - np.float64(tie[i, j, k])  # pairs not tied in the metric
                good = untied > 0 and static_ok[i, q]
                ok[i, j, k] = good
                out[i, j, q] = np.float64(v[i, j, q]) / np.sqrt(untied * gold[i, q]) if good else fill


class _Operands(NamedTuple):
    """What :func:`_prepare` fills (the operands of every pair of metrics, their counts and which pairs
    tie), with the validity of X and Y and their per-draw counts when they differ (else None)."""

    value: np.ndarray  # (I, S + 1 + K, P)
    value_diff: np.ndarray  # (I, S + 1, P)
    ties: np.ndarray | None  # tau-b's tie forms, like value
    ties_diff: np.ndarray | None
    counts: np.ndarray  # (2, I, P): valid pairs, pairs tied in the target
    tied: np.ndarray  # (P,) pairs of metrics with a metric tie
    valid: np.ndarray
    valid_y: np.ndarray
    gaps: Any  # the per-draw counts' builder of :func:`.rank.input_gaps.gap_counts`, or None


def empty_operands(zx: np.ndarray, zy: np.ndarray, z: np.ndarray, variant: Variant, spread: int = 1) -> _Operands:
    """The empty operands of (P, S, I) scores, in the dtype whose sums are exact (``spread``: the largest
    weight of a pair's term, 1 for a sign)."""
    p, s, i = zx.shape
    k = s * (s - 1) // 2
    dtype = np.float32 if 16 * s * s * spread < F32_EXACT else np.float64
    valid = ~np.isnan(zx) & ~np.isnan(z)
    valid_y = ~np.isnan(zy) & ~np.isnan(z)
    gaps = None if np.array_equal(valid, valid_y) else gap_counts(p, s, i, np.dtype(dtype))
    value = np.empty((i, s + 1 + k, p), dtype=dtype)
    value_diff = np.empty((i, s + 1, p), dtype=dtype)
    # tau-b's tie forms: zeros are not written (nor resident) where an input has no metric tie
    ties = np.zeros(value.shape, dtype=dtype) if variant == "b" else None
    ties_diff = np.zeros(value_diff.shape, dtype=dtype) if variant == "b" else None
    return _Operands(value, value_diff, ties, ties_diff, np.empty((2, i, p)), np.zeros(p, dtype=bool), valid,
                     valid_y, gaps)


def _forms(o: _Operands, variant: Variant, min_pairs: int) -> _Forms:
    """The forms of filled operands (:func:`finish_forms`); with per-draw counts, nothing is undefined in every
    draw and every pair's count varies."""
    forms = finish_forms(o.value, o.value_diff, o.ties, o.ties_diff, o.tied, o.counts, o.valid, variant, min_pairs)
    if o.gaps is None:
        return forms
    return forms._replace(undefined=np.zeros_like(forms.undefined), varying=np.arange(o.tied.size),
                          gaps=o.gaps.finish())


def _prepare(zx: np.ndarray, zy: np.ndarray, z: np.ndarray, eps: np.ndarray, variant: Variant,
             min_pairs: int) -> _Forms:
    """The operands and per-input constants of every pair of metrics.

    One compiled loop over the pairs of metrics, inputs and pairs of systems sums every
    form into the operands, without temporaries beyond one input. Every value is an
    integer sum over one input's system pairs, exact in the operands' dtype.
    """
    if sort_pays(zx, zy, z, eps):
        return _sort_forms(zx, zy, z, variant, min_pairs)
    p, s, i = zx.shape
    k = s * (s - 1) // 2
    o = empty_operands(zx, zy, z, variant)
    none = np.zeros((0, 0, 0), dtype=o.value.dtype)
    loops("rank.input_swap_jit").prepare(zx, zy, z, eps, _CODES[variant], o.gaps is None, o.value, o.value_diff,
                                           none if o.ties is None else o.ties,
                                           none if o.ties_diff is None else o.ties_diff, o.counts, o.tied)
    if o.gaps is not None:  # each draw's valid counts, a bounded block of pairs and inputs at a time
        pb = max(1, min(p, _PREP_CELLS // max(k, 1)))
        ib = max(1, min(i, _PREP_CELLS // max(pb * k, 1)))
        vs, vys, zs = (_systems_last(a) for a in (o.valid, o.valid_y, z))  # (P, I, S)
        for p0 in range(0, p, pb):
            for i0 in range(0, i, ib):
                ps, ins = slice(p0, p0 + pb), slice(i0, i0 + ib)
                zt = zs[:1, ins] if zs.strides[0] == 0 else zs[ps, ins]  # one target for all pairs
                o.gaps.add(ps, ins, vs[ps, ins], vys[ps, ins], zt)
    return _forms(o, variant, min_pairs)


def _sort_forms(zx: np.ndarray, zy: np.ndarray, z: np.ndarray, variant: Variant, min_pairs: int) -> _Forms:
    """The sort form's forms: each input sorted once, the counts and divisors of :func:`finish_forms`; the pairs
    of metrics with a metric tie somewhere take tau-b's per-draw denominators, as in the pair forms."""
    p, s, i = zx.shape
    prep = sort_prepare(zx, zy, z, _CODES[variant])
    dtype = np.float32 if 16 * s * s < F32_EXACT else np.float64
    empty = np.empty((i, 0, p), dtype=dtype)
    valid = ~np.isnan(zx) & ~np.isnan(z)
    forms = finish_forms(empty, empty, None, None, np.zeros(p, dtype=bool), prep.counts, valid, variant, min_pairs)
    t = np.flatnonzero(prep.tied) if variant == "b" else forms.tied
    return forms._replace(tied=t, varying=t, sort=prep)


def _systems_last(a: np.ndarray) -> np.ndarray:
    """(P, S, I) -> (P, I, S), contiguous; an array repeated along P (a broadcast target) stays one copy."""
    if a.shape[0] > 1 and a.strides[0] == 0:
        return np.broadcast_to(np.ascontiguousarray(a[0].T), (a.shape[0],) + a[0].T.shape)
    return np.ascontiguousarray(np.transpose(a, (0, 2, 1)))


def finish_forms(value: np.ndarray, value_diff: np.ndarray, ties: np.ndarray | None, ties_diff: np.ndarray | None,
                 tied: np.ndarray, counts: np.ndarray, valid: np.ndarray, variant: Variant, min_pairs: int) -> _Forms:
    """The forms, with each variant's divisor and the inputs undefined in every draw."""
    n0, tz = counts
    gold_untied = n0 - tz
    undefined = (valid.sum(axis=-2) < max(min_pairs, 2)).T
    if variant == "a":
        scale = n0
    elif variant in ACC_VARIANTS:
        scale = 2.0 * n0
    else:  # no metric tie: N - T_m - T_gm = N in every draw
        scale = np.sqrt(n0 * gold_untied)
        undefined |= (n0 <= 0) | (gold_untied <= 0)
    t = np.flatnonzero(tied)
    if t.size == tied.size and ties is not None and ties_diff is not None:
        pass  # every pair has a metric tie: the operands as they are, not a copy beside them
    elif t.size and ties is not None and ties_diff is not None:
        ties, ties_diff = np.ascontiguousarray(ties[:, :, t]), np.ascontiguousarray(ties_diff[:, :, t])
    else:  # no denominator changes with the draw
        t, ties, ties_diff = t[:0], None, None
    return _Forms(value, value_diff, ties, ties_diff, t, n0, gold_untied, scale, undefined, t, None,
                  max(min_pairs, 2))


def _metric_ties(a: np.ndarray, forms: _Forms, blk: slice) -> tuple[np.ndarray, np.ndarray]:
    """Metric ties of X' and Y' on a block of inputs for the pairs ``forms.tied``: two (inputs, B, Pt) arrays."""
    assert forms.ties is not None and forms.ties_diff is not None
    tx = np.matmul(a, forms.ties[blk])
    ty = np.matmul(a[..., :forms.ties_diff.shape[1]], forms.ties_diff[blk])
    ty += tx
    return tx, ty


def _draw_counts(a: np.ndarray, mt: np.ndarray, forms: _Forms, blk: slice,
                 ties: tuple[np.ndarray, np.ndarray] | None) -> DrawCounts:
    """The counts of each draw on a block of inputs when X and Y are missing in different cells."""
    assert forms.gaps is not None
    valid, total, gold_tied = forms.gaps.evaluate(a[..., :mt.shape[0] + 1], mt, blk)
    return DrawCounts(valid, total, gold_tied, ties, forms.tied)
