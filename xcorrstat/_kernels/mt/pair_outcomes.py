"""The pair-outcome permutation test: Kendall-like statistics of hybrid pair tables, for batches of masks.

mt-metrics-eval's ``PairwisePermutationSigDiff`` (WMT23 onwards) compares two metrics
through their *pair outcomes*. Within a group (an input's systems, a system's inputs, or
all cells), every pair of items (a < b) gets from each metric a verdict: the sign of the
metric difference, 0 when ``|x_a - x_b| <= epsilon`` (each metric has its own epsilon),
and from the target a sign (0 for an exact tie). A draw is a 0/1 mask over the pairs:
where it is 1 the two metrics exchange their verdicts. Each metric's statistic is the
Kendall variant of its (hybrid) pair table per group, averaged over the groups.

Every count a variant needs is a sum over pairs of a per-pair quantity ``q_p``:

* acc_eq (``"acc23"``): ``q = [sgn_m == sgn_z]`` (concordant or tied in both);
  tau_eq (``"23"``): ``q = 2 [sgn_m == sgn_z] - 1``; both divided by the group's pairs;
* tau-a and tau-b: ``q0 = sgn_m sgn_z`` (C - D) and ``q1`` the pairs the metric does not
  tie (within epsilon for tau-b, exactly for tau-a's undefined rule).

With ``s_p = 1 - 2 w_p`` (``w`` the swap bit), the hybrid sums of x and y are
``(U_x + U_y +/- (T_x - T_y)) / 2`` with ``U = sum q`` and ``T = sum s q = U - 2 W q``.
So a batch of masks needs ``W q`` for every metric at once: each ``q`` is -1, 0 or 1, so over 64 pairs
it is two population counts of the packed swap bits and the packed pairs where ``q`` is 1 and -1
(:mod:`~xcorrstat._kernels.mt.pair_outcomes_jit`), exact integers. Each metric's observed acc_eq
(tau_eq) is computed from its groups' integer sums as ``correlate`` computes it (``sum_g /
P_g``, then the mean over the defined groups). For acc_eq and tau_eq the
group average is linear too: ``delta' = T_x - T_y`` with ``q`` weighted by ``1 / (G P_g)``;
the counts are summed per class of groups with the same pair count ``P_g`` and
weighted once, so every sum is an exact integer and the result does not depend on the metrics
computed together, the blocks or the batch. tau-a and tau-b need the per-group sums (a batched
product over groups), then the ratio per group and the mean over the defined groups.

Pairs are numbered group by group (``g * P + k``, ``k`` the row-major index of
``np.triu_indices(n, 1)``) over the full grid; a pair with a missing target score is
left out (its ``q`` is 0 and it is not counted in ``P_g``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..._types import Variant
from .._compiled import loops
from ..levels import average_defined

__all__ = [
    "LINEAR_VARIANTS", "PAIR_KEY", "PairOutcomes", "SwapBits", "chunk_plan", "hybrid_deltas", "packed_bits",
    "pair_endpoints", "pair_quantities", "prepare_pair_outcomes",
]

#: Variants whose group average is linear in the swap mask.
LINEAR_VARIANTS: tuple[Variant, ...] = ("acc23", "23")
#: Pairs per keyed stream of swap bits (a draw's bits of one key are ``PAIR_KEY / 8`` bytes).
PAIR_KEY = 1 << 13
_WORDS = PAIR_KEY // 64
#: ``bits(ids, k0, k1)``: (len(ids), k1 - k0, PAIR_KEY / 8) uint8, the swap bits (1 where the verdicts swap)
#: of pairs ``k0 * PAIR_KEY`` to ``k1 * PAIR_KEY - 1``, packed as ``np.packbits`` packs them.
SwapBits = Callable[[np.ndarray, int, int], np.ndarray]


def packed_bits(masks: np.ndarray) -> SwapBits:
    """The :data:`SwapBits` of explicit (draws, pairs) 0/1 masks over pairs 0 ... (pairs outside them: 0).

    Examples
    --------
    >>> bits = packed_bits(np.array([[1, 0, 1], [0, 0, 0]]))
    >>> bits(np.array([0, 1]), 0, 1)[:, 0, 0].tolist()  # pairs 0 to 7 of each draw, first bit first
    [160, 0]
    """
    masks = np.asarray(masks, dtype=bool)

    def bits(ids: np.ndarray, k0: int, k1: int) -> np.ndarray:
        grid = np.zeros((len(ids), (k1 - k0) * PAIR_KEY), dtype=bool)
        part = masks[np.asarray(ids), k0 * PAIR_KEY:k1 * PAIR_KEY]
        grid[:, :part.shape[1]] = part
        return np.packbits(grid, axis=1).reshape(len(ids), k1 - k0, PAIR_KEY // 8)

    return bits


def pair_endpoints(n: int, start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
    """Items ``(a, b)`` of pairs ``start..stop-1`` in the row-major order of ``np.triu_indices(n, 1)``.

    Examples
    --------
    >>> a, b = pair_endpoints(4, 2, 6)
    >>> a.tolist(), b.tolist()
    ([0, 1, 1, 2], [3, 2, 3, 3])
    """
    k = np.arange(start, stop, dtype=np.int64)
    rows = np.arange(max(n - 1, 0), dtype=np.int64)
    first = rows * n - rows * (rows + 1) // 2  # index of pair (a, a + 1)
    a = np.searchsorted(first, k, side="right") - 1
    return a, k - first[a] + a + 1


def chunk_plan(n_groups: int, per_group: int, max_pairs: int) -> list[tuple[int, int, int, int]]:
    """Blocks of pairs ``(g0, g1, k0, k1)``: whole groups g0..g1-1, or pairs k0..k1-1 of group g0.

    Examples
    --------
    >>> chunk_plan(5, 3, 7), chunk_plan(1, 10, 4)
    ([(0, 2, 0, 3), (2, 4, 0, 3), (4, 5, 0, 3)], [(0, 1, 0, 4), (0, 1, 4, 8), (0, 1, 8, 10)])
    """
    if per_group <= max_pairs:
        step = max(1, max_pairs // max(per_group, 1))
        return [(g, min(g + step, n_groups), 0, per_group) for g in range(0, n_groups, step)]
    return [(g, g + 1, k, min(k + max_pairs, per_group)) for g in range(n_groups)
            for k in range(0, per_group, max_pairs)]


def pair_quantities(x: np.ndarray, z: np.ndarray, epsilon: np.ndarray, groups: np.ndarray, a: np.ndarray,
                    b: np.ndarray, variant: Variant) -> np.ndarray:
    """Per-pair quantities ``(C, Q * M)`` float32 of M metrics (column ``i * M + m`` is quantity i): the
    NumPy form of the compiled packing the draws use (its test oracle).

    ``x`` (M, G, n) metric scores, ``z`` (G, n) target scores, ``epsilon`` (M,); pair ``p``
    compares items ``a[p]`` and ``b[p]`` of group ``groups[p]``. A pair with a missing target
    score gets 0 everywhere.

    Examples
    --------
    >>> x = np.array([[[1.0, 2.0, 2.05]]]); z = np.array([[1.0, 3.0, 3.0]])
    >>> pair_quantities(x, z, np.array([0.1]), np.zeros(3, int), np.array([0, 0, 1]), np.array([1, 2, 2]),
    ...                 "acc23").ravel().tolist()
    [1.0, 1.0, 1.0]
    """
    with np.errstate(invalid="ignore"):
        dm = x[:, groups, a] - x[:, groups, b]  # (M, C)
        dz = z[groups, a] - z[groups, b]
    valid = ~np.isnan(dz)
    sz = np.where(valid, np.sign(dz), 0.0)
    tie = np.abs(dm) <= epsilon[:, None]
    sm = np.where(tie, 0.0, np.sign(dm))
    if variant in LINEAR_VARIANTS:
        agree = (sm == sz) & valid
        parts = [agree] if variant == "acc23" else [np.where(valid, 2.0 * agree - 1.0, 0.0)]
    else:
        untied = ~tie if variant == "b" else dm != 0
        parts = [sm * sz, untied & valid]
    q = np.stack([np.asarray(p, dtype=np.float32) for p in parts])  # (Q, M, C)
    return np.ascontiguousarray(q.reshape(-1, q.shape[-1]).T)


@dataclass(frozen=True)
class PairOutcomes:
    """Everything a batch of masks needs that no mask changes (see :func:`prepare_pair_outcomes`)."""

    x: np.ndarray  # (M, G, n) metric scores
    z: np.ndarray  # (G, n) target scores
    epsilon: np.ndarray  # (M,)
    variant: Variant
    per_group: int  # P = n (n - 1) / 2 pairs of each group, missing ones included
    defined: np.ndarray  # (G,) groups whose statistic is defined for every mask (enough items, a
    #                      target that is not constant for tau-a/b)
    pairs: np.ndarray  # (G,) valid pairs of each group
    untied_z: np.ndarray  # (G,) valid pairs the target does not tie
    groups_used: np.ndarray  # (G,) class of each group (its pair count) for the linear variants, -1 unused
    weights: np.ndarray  # (K,) weight of each class: 1 / (G_defined * P_class)
    sums: np.ndarray  # (G, Q * M) sums of q over each group's valid pairs (exact integers)
    observed: np.ndarray  # (M,) each metric's statistic (NaN when no group is defined)
    n_groups: int  # groups averaged
    max_pairs: int  # pairs per block
    cached: tuple = ()  # every block in packed form (_Packed) when they fit in memory, else empty

    @property
    def n_metrics(self) -> int:
        return self.x.shape[0]

    @property
    def quantities(self) -> int:
        return 1 if self.variant in LINEAR_VARIANTS else 2


@dataclass(frozen=True)
class _Packed:
    """A block of pairs, packed: its keys ``k0 ... k1 - 1``; where each quantity is 1 and -1 (``plus``,
    ``minus``: (K, W, C) uint64, 0 outside the block); its pairs as words ``(vkey, vword)`` in order, with
    the mask ``vmask`` of the pairs of one group in each and the row ``vrow`` of their sums (a group, or a
    class of groups for the linear variants: a group never defined is left out)."""

    k0: int
    k1: int
    plus: np.ndarray
    minus: np.ndarray
    vkey: np.ndarray
    vword: np.ndarray
    vmask: np.ndarray
    vrow: np.ndarray


#: The codes of the variants in :mod:`~xcorrstat._kernels.mt.pair_outcomes_jit`.
_CODES = {"acc23": 0, "23": 1, "b": 2, "a": 3}


def _below() -> np.ndarray:
    """(65,) uint64: the mask of a word's first ``t`` pairs in packed bits (as ``np.packbits`` orders them)."""
    return np.packbits(np.arange(64)[None, :] < np.arange(65)[:, None], axis=1).view(np.uint64).reshape(65)


def _chunks(p: PairOutcomes):
    """Yield ``(chunk, start, stop)``: every block of pairs of :func:`chunk_plan` and its pairs' numbers."""
    for chunk in chunk_plan(p.x.shape[1], p.per_group, p.max_pairs):
        g0, g1, j0, j1 = chunk
        yield chunk, g0 * p.per_group + j0, (g1 - 1) * p.per_group + j1


def _pack(p: PairOutcomes, chunk: tuple[int, int, int, int], start: int, stop: int,
          sums: np.ndarray | None = None) -> _Packed:
    """The pairs ``start ... stop - 1`` of a block in packed form (their quantities set by a compiled loop);
    with ``sums`` (G, C), adds each group's sums of the quantities to it (exact integers)."""
    k0, k1 = start // PAIR_KEY, -(-stop // PAIR_KEY)
    base = k0 * PAIR_KEY
    plus = np.zeros((k1 - k0, _WORDS, p.quantities * p.n_metrics), dtype=np.uint64)
    minus = np.zeros_like(plus)
    below = _below()
    g0, g1, j0, j1 = chunk
    if stop > start:
        a0, b0 = pair_endpoints(p.x.shape[-1], j0, j0 + 1)
        loops("mt.pair_outcomes_jit").pack_pairs(p.x, p.z, p.epsilon, _CODES[p.variant], g0, int(a0[0]),
                                                 int(b0[0]), stop - start, start - base, below[1:] & ~below[:-1],
                                                 plus, minus)
    if j0 == 0 and j1 == p.per_group:
        groups = np.arange(g0, g1)
        a = groups * p.per_group - base
        b = a + p.per_group
    else:
        groups, a, b = np.array([g0]), np.array([start - base]), np.array([stop - base])
    groups, a, b = groups[b > a], a[b > a], b[b > a]
    n = ((b - 1) >> 6) - (a >> 6) + 1  # words of each group's pairs
    seg = np.repeat(np.arange(a.size), n)
    word = (a >> 6)[seg] + np.arange(seg.size) - np.repeat(np.cumsum(n) - n, n)
    mask = below[np.clip(b[seg] - 64 * word, 0, 64)] & ~below[np.clip(a[seg] - 64 * word, 0, 64)]
    key, at = word // _WORDS, word % _WORDS
    if sums is not None and seg.size:
        counts = np.empty((seg.size, plus.shape[2]), dtype=np.int64)
        loops("mt.pair_outcomes_jit").word_counts(plus, minus, key, at, mask, counts)
        sums[groups] += np.add.reduceat(counts, np.cumsum(n) - n, axis=0)
    rows = (p.groups_used[groups] if p.variant in LINEAR_VARIANTS else groups)[seg]
    used = rows >= 0  # a linear variant's groups never defined add nothing
    return _Packed(int(k0), int(k1), plus, minus, key[used], at[used], mask[used], rows[used].astype(np.int64))


def _packed_blocks(p: PairOutcomes):
    """Yield every block of pairs in packed form."""
    if p.cached:
        yield from p.cached
        return
    for chunk, start, stop in _chunks(p):
        yield _pack(p, chunk, start, stop)


def _group_scale(p: PairOutcomes) -> np.ndarray:
    """(G,) factor of each group's tau-a/b from doubled sums: 0 for a group that is never defined."""
    with np.errstate(divide="ignore"):
        if p.variant == "b":  # tau_b = (N2 / 2) / sqrt(D2 / 2) / sqrt(Dz) = N2 / sqrt(D2) / sqrt(2 Dz)
            scale = 1.0 / np.sqrt(2.0 * p.untied_z)
        else:  # tau_a = (N2 / 2) / P_g
            scale = 1.0 / (2.0 * p.pairs)
    return np.where(p.defined, scale, 0.0)


def _ratio_mean(num2: np.ndarray, untied2: np.ndarray, p: PairOutcomes, scale: np.ndarray) -> np.ndarray:
    """Mean over the defined groups of tau-a/b from doubled group sums ``num2`` (C - D) and ``untied2``
    (pairs the metric does not tie), both (..., G, B) with B >= 2; returns (..., B). ``num2`` is
    overwritten.

    ``untied2`` must be 0 for a group that is never defined (``scale`` is 0 there too). A group
    whose pairs are all metric ties has C - D = 0, so its value is 0 whatever the divisor, and it
    is left out of the count. The sum over groups runs along a middle axis, which NumPy adds in
    group order (B >= 2 keeps it off the pairwise summation of a contiguous axis): the same numbers
    whatever the other axes hold.
    """
    np.multiply(num2, scale[:, None], out=num2)
    if p.variant == "b":
        root = np.maximum(untied2, 1.0)
        np.divide(num2, np.sqrt(root, out=root), out=num2)
    count = np.count_nonzero(untied2, axis=-2)
    total = np.add.reduce(num2, axis=-2)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.clip(np.where(count > 0, total / count, np.nan), -1.0, 1.0)


def _linear_observed(sums: np.ndarray, defined: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """Each metric's acc_eq (tau_eq) from the group sums (G, M), exact integers: ``sum_g / P_g`` per defined
    group (one division of two integers), then the mean over the defined groups, as
    :func:`xcorrstat.correlate` computes it (the same numbers, bit for bit)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.where(defined[:, None], sums / pairs[:, None], np.nan)
    return average_defined(np.ascontiguousarray(r.T), axis=-1)[0]


def prepare_pair_outcomes(x: np.ndarray, z: np.ndarray, epsilon: Sequence[float] | np.ndarray, *,
                          variant: Variant, min_pairs: int = 3, max_pairs: int = 1 << 15,
                          cache_bytes: int = 1 << 27) -> PairOutcomes:
    """The pair tables' sums and each metric's observed statistic.

    Parameters
    ----------
    x : ndarray (M, G, n)
        Metric scores: G groups of n items (see :func:`xcorrstat._mt.ties.level_groups`).
        A missing metric score where the target has one is an error of the caller.
    z : ndarray (G, n)
        Target scores; NaN leaves the item out of its group.
    epsilon : array_like (M,)
        Each metric's tie threshold (>= 0).
    variant : {"acc23", "23", "b", "a"}
    min_pairs : int
        Fewest items for a group to count (its statistic is NaN with fewer).
    max_pairs : int
        Pairs per block (memory ~ max_pairs x metrics).
    cache_bytes : int
        Every block's packed pairs are kept (2 bits a quantity and a metric, and half a byte a pair of
        words' indices and masks) when they take at most this many bytes, instead of being packed again
        for every batch of draws.

    Returns
    -------
    PairOutcomes
        ``observed`` is each metric's statistic: the mean over the defined groups of the
        group's variant (acc_eq and tau_eq: groups with at least ``min_pairs`` items;
        tau-a/b also need a target that is not constant and a metric that does not tie
        every pair); NaN when no group is defined.

    Examples
    --------
    >>> x = np.array([[[1.0, 2.0, 3.0], [3.0, 2.0, 2.5]]]); z = np.array([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]])
    >>> round(float(prepare_pair_outcomes(x, z, [0.0], variant="acc23").observed[0]), 4)  # (3/3 + 1/3) / 2
    0.6667
    """
    x = np.ascontiguousarray(x, dtype=np.float64)
    z = np.ascontiguousarray(z, dtype=np.float64)
    max_pairs = int(max_pairs)  # the counts are int64: any block holds exact integers
    m, g, n = x.shape
    eps = np.asarray(epsilon, dtype=np.float64).reshape(m)
    items = (~np.isnan(z)).sum(axis=-1)
    pairs = items * (items - 1) // 2
    sz = np.sort(z, axis=-1)  # NaN last: target ties among the valid items
    with np.errstate(invalid="ignore"):
        run = np.concatenate([np.zeros((g, 1), bool), sz[:, 1:] == sz[:, :-1]], axis=-1)
    tied_z = _tied_pairs(sz, run)
    untied_z = pairs - tied_z
    defined = items >= max(int(min_pairs), 2)
    if variant not in LINEAR_VARIANTS:
        defined = defined & (untied_z > 0)
    used = np.flatnonzero(defined)
    classes, groups_used = np.unique(pairs[used], return_inverse=True)
    cls = np.full(g, -1, dtype=np.int64)
    cls[used] = groups_used
    weights = 1.0 / (used.size * classes.astype(np.float64)) if used.size else np.empty(0)
    base = PairOutcomes(x, z, eps, variant, n * (n - 1) // 2, defined, pairs, untied_z, cls, weights,
                        np.zeros((g, 0)), np.full(m, np.nan), int(used.size), int(max_pairs))
    sums = np.zeros((g, base.quantities * m))
    keep = g * base.per_group * (base.quantities * m / 4 + 0.5) <= cache_bytes
    blocks = []
    for chunk, start, stop in _chunks(base):
        packed = _pack(base, chunk, start, stop, sums)
        if keep:
            blocks.append(packed)
    if variant in LINEAR_VARIANTS:
        observed = _linear_observed(sums, defined, pairs)
    else:
        doubled = np.repeat(2.0 * sums.T[:, :, None], 2, axis=2)  # (2M, G, 2): B >= 2, see _ratio_mean
        doubled[m:, ~defined] = 0.0
        observed = _ratio_mean(doubled[:m], doubled[m:], base, _group_scale(base))[:, 0]
    return PairOutcomes(x, z, eps, variant, base.per_group, defined, pairs, untied_z, cls, weights, sums,
                        observed, int(used.size), int(max_pairs), tuple(blocks))


def _tied_pairs(sorted_z: np.ndarray, run: np.ndarray) -> np.ndarray:
    """Pairs of equal values per row of sorted values (NaN last, never equal)."""
    tied = np.zeros(sorted_z.shape[0], dtype=np.int64)
    length = np.zeros(sorted_z.shape[0], dtype=np.int64)
    for j in range(sorted_z.shape[1]):
        length = np.where(run[:, j], length + 1, 0)
        tied += length  # an item equal to the previous one ties with all of its run so far
    return tied


def _masked_sums(p: PairOutcomes, ids: np.ndarray, bits: SwapBits) -> np.ndarray:
    """``W q`` summed per class of groups (linear variants, (K, B, M)) or per group ((G, B, Q * M)):
    exact integers, as float64."""
    linear = p.variant in LINEAR_VARIANTS
    out = np.zeros((p.weights.size if linear else p.x.shape[1], p.quantities * p.n_metrics, ids.size),
                   dtype=np.int64)
    jit = loops("mt.pair_outcomes_jit")
    for blk in _packed_blocks(p):
        if blk.vkey.size:
            words = np.ascontiguousarray(bits(ids, blk.k0, blk.k1)).view(np.uint64)  # (B, K, W)
            jit.masked_counts(words, blk.vkey, blk.vword, blk.vmask, blk.vrow, blk.plus, blk.minus, out)
    return out.transpose(0, 2, 1).astype(np.float64)


def hybrid_deltas(p: PairOutcomes, ids: np.ndarray, bits: SwapBits, pi: np.ndarray, pk: np.ndarray) -> np.ndarray:
    """``delta'`` of metric pairs ``(pi, pk)`` for the draws ``ids``: (len(pi), len(ids)).

    A draw's delta is the statistic of x's hybrid table minus that of y's, where x = metric
    ``pi``, y = metric ``pk`` and the hybrid of x takes y's verdict on the pairs whose swap bit
    is 1 (and y's hybrid the other way round). NaN where no group is defined.

    Examples
    --------
    >>> x = np.array([[[1.0, 2.0, 3.0]], [[3.0, 2.0, 1.0]]]); z = np.array([[1.0, 2.0, 3.0]])
    >>> p = prepare_pair_outcomes(x, z, [0.0, 0.0], variant="acc23")
    >>> swap_all = lambda ids, k0, k1: np.full((ids.size, k1 - k0, PAIR_KEY // 8), 255, np.uint8)
    >>> hybrid_deltas(p, np.arange(1), swap_all, np.array([0]), np.array([1])).tolist()
    [[-1.0]]
    """
    ids = np.asarray(ids, dtype=np.int64)
    pi, pk = np.asarray(pi, dtype=np.int64), np.asarray(pk, dtype=np.int64)
    m = p.n_metrics
    masked = _masked_sums(p, ids, bits)
    if p.variant in LINEAR_VARIANTS:
        if not p.n_groups:
            return np.full((pi.size, ids.size), np.nan)
        # T = sum of w_g s q = sum over classes of weight x (U - 2 W q), classes in order
        t = np.zeros((ids.size, m))
        for k, w in enumerate(p.weights):
            t = t + w * (p.sums[p.groups_used == k].sum(axis=0)[None, :] - 2.0 * masked[k])
        return (t[:, pi] - t[:, pk]).T
    return _ratio_deltas(p, p.sums[:, None, :] - 2.0 * masked, pi, pk)


def _ratio_deltas(p: PairOutcomes, total: np.ndarray, pi: np.ndarray, pk: np.ndarray) -> np.ndarray:
    """tau-a/b deltas of metric pairs from the group sums of ``s q``, ``total`` (G, B, 2M).

    One pair of metrics at a time on contiguous (G, B) slices: the elementwise work, not the
    products, dominates here, and it runs fastest in place on cache-sized arrays.
    """
    m, b = p.n_metrics, total.shape[1]
    t = np.ascontiguousarray(np.moveaxis(total, 2, 0))  # (2M, G, B): one metric's sums are contiguous
    if b == 1:  # keep the sum over groups in group order (see _ratio_mean)
        t = np.concatenate([t, t], axis=2)
    u = np.ascontiguousarray(p.sums.T[:, :, None])  # (2M, G, 1)
    t[m:, ~p.defined] = 0.0  # a group never defined counts no untied pair (see _ratio_mean)
    u[m:, ~p.defined] = 0.0
    scale = _group_scale(p)
    out = np.empty((pi.size, b))
    for j, (i, k) in enumerate(zip(pi.tolist(), pk.tolist())):
        num_diff = t[i] - t[k]
        untied_diff = t[m + i] - t[m + k]
        num_both, untied_both = u[i] + u[k], u[m + i] + u[m + k]
        cx = _ratio_mean(num_both + num_diff, untied_both + untied_diff, p, scale)
        np.subtract(num_both, num_diff, out=num_diff)
        np.subtract(untied_both, untied_diff, out=untied_diff)
        out[j] = (cx - _ratio_mean(num_diff, untied_diff, p, scale))[:b]
    return out
