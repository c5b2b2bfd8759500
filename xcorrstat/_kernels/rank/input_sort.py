"""Input-level Kendall of swapped metrics by sorting: O(S log S) per input and draw.

The sort form of :mod:`xcorrstat._kernels.rank.input_swap`. Within one input, a draw's X' takes, for
each system, its X cell or its Y cell: two candidates per system, fixed before the draws. So each
input is sorted once -- its valid systems by the target (ties grouped) and the 2 S candidate cells
jointly into dense ranks (:func:`sort_prepare`) -- and each draw is one pass over the systems in
target order that picks every system's rank by the mask and counts, with a table of rank counts by
level, the pairs above and below it among the earlier target groups: ``C - D``, then the pairs tied
in the metric and those tied in both (:func:`sort_counts`). The pair forms of
:mod:`~xcorrstat._kernels.rank.input_swap` take O(S^2) per input and draw (one product per pair of
systems); these counts are the same integers, so every value that follows is the same float.

It covers exact metric ties (``eps == 0``), X and Y missing in the same cells and finite scores;
:func:`sort_pays` chooses it from the shape alone (never from a budget or a batch), so how the work
is blocked never changes a number.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from .._compiled import loops

__all__ = ["SORT_COST", "THREAD_WORK", "SortPrep", "sort_counts", "sort_pays", "sort_prepare"]

#: The cost model of :func:`sort_pays`, per input and draw: the sort form takes ``SORT_COST * P * S log2(2 S)``,
#: the pair forms ``S^2 (1 + PAIR_SHARE (P - 1))`` (their mask products serve every pair of metrics at once, and
#: each pair's product costs a fraction of laying them out). Measured: the forms break even near 30 systems for
#: one pair of metrics, near 100 for four; 200 systems take a sixth of the time.
SORT_COST = 5.0
PAIR_SHARE = 0.15
#: Work (inputs x draws x pairs of metrics x systems) of :func:`sort_counts` worth a thread (a few ms).
THREAD_WORK = 1 << 20
#: The work of one pair of systems in :func:`sort_prepare`'s differences, in those units (its four cases).
PAIR_WORK = 8


class SortPrep(NamedTuple):
    """Each input sorted once (:func:`sort_prepare`): (P, I, S) systems in target order, their joint ranks
    in X and in Y and the starts of the target groups; ``info`` (P, I, 4): valid systems, ranks,
    target-tied valid pairs, whether two systems' cells tie; Y' minus X' as forms in the mask."""

    order: np.ndarray
    rx: np.ndarray
    ry: np.ndarray
    new: np.ndarray
    info: np.ndarray
    dlin: np.ndarray  # (2, P, I, S): Y' minus X' of the numerator and of the metric ties, linear part by position
    dconst: np.ndarray  # (2, P, I): ... and its constant

    @property
    def counts(self) -> np.ndarray:
        """(2, I, P) float64: the valid pairs and the valid pairs tied in the target."""
        n = self.info[..., 0].T.astype(np.float64)
        return np.stack([n * (n - 1) / 2, self.info[..., 2].T.astype(np.float64)])

    @property
    def tied(self) -> np.ndarray:
        """(P,) bool: the pairs of metrics whose cells of two systems tie in some input."""
        return np.asarray(self.info[..., 3].any(axis=1), dtype=bool)


def sort_pays(zx: np.ndarray, zy: np.ndarray, z: np.ndarray, eps: np.ndarray) -> bool:
    """Whether (P, S, I) scores take the sort form: cheaper by the cost model (:data:`SORT_COST`, from P and S
    alone), exact metric ties, X and Y missing in the same cells, finite valid cells.

    Examples
    --------
    >>> x = np.random.default_rng(0).normal(size=(1, 40, 3))
    >>> sort_pays(x, -x, x, np.zeros((1, 2, 2))), sort_pays(x[:, :5], -x[:, :5], x[:, :5], np.zeros((1, 2, 2)))
    (True, False)
    """
    p, s, _ = zx.shape
    if s < 2 or SORT_COST * p * s * np.log2(2 * s) >= s * s * (1 + PAIR_SHARE * (p - 1)) or np.any(eps != 0):
        return False
    valid = ~np.isnan(zx) & ~np.isnan(z)
    if not np.array_equal(valid, ~np.isnan(zy) & ~np.isnan(z)):
        return False
    return bool(all(np.isfinite(a[valid]).all() for a in (zx, zy, np.broadcast_to(z, zx.shape))))


def sort_prepare(zx: np.ndarray, zy: np.ndarray, z: np.ndarray, variant_code: int) -> SortPrep:
    """Sort every input of (P, S, I) float64 scores once and form Y' minus X' (see the module docstring);
    ``variant_code`` one of :mod:`~xcorrstat._kernels.rank.input_swap`'s codes.

    Examples
    --------
    >>> x = np.array([[[3.0], [1.0], [2.0]]]); z = np.array([[[1.0], [1.0], [0.0]]])  # P=1, S=3, I=1
    >>> prep = sort_prepare(x, x + 0.5, z, 0)
    >>> prep.order[0, 0].tolist(), prep.info[0, 0].tolist()  # systems by target; 3 valid, 6 ranks, 1 tie
    ([2, 0, 1], [3, 6, 1, 0])
    """
    p, s, i = zx.shape
    shape = (p, i, s)
    order = np.empty(shape, dtype=np.int64)
    rx, ry = np.empty(shape, dtype=np.int64), np.empty(shape, dtype=np.int64)
    new = np.empty(shape, dtype=bool)
    info = np.empty((p, i, 4), dtype=np.int64)
    jit = loops("rank.input_sort_jit")
    jit.prepare(zx, zy, z, order, rx, ry, new, info)
    dlin, dconst = np.empty((2, p, i, s), dtype=np.int64), np.empty((2, p, i), dtype=np.int64)

    def differences(a: int, b: int) -> None:
        jit.differences(zx[:, :, a:b], zy[:, :, a:b], z[:, :, a:b], order[:, a:b], info[:, a:b], variant_code,
                        dlin[:, :, a:b], dconst[:, :, a:b])

    _on_runs(i, PAIR_WORK * p * i * s * s, differences)
    return SortPrep(order, rx, ry, new, info, dlin, dconst)


def sort_counts(prep: SortPrep, masks: np.ndarray, blk: slice, variant_code: int, vx: np.ndarray, vy: np.ndarray,
                ties: tuple[np.ndarray, np.ndarray] | None) -> None:
    """Each draw's integers of X' and Y' on a block of inputs: vx, vy (inputs, B, P) the numerators of
    :mod:`~xcorrstat._kernels.rank.input_swap` (``variant_code`` one of its codes), ``ties`` (two (inputs, B,
    P) arrays, tau-b) the metric-tied valid pairs; ``masks`` (B, S, inputs) bool the block's masks.

    A block of :data:`THREAD_WORK` or more (inputs x draws x pairs x systems) is split into runs of inputs
    counted on threads, one a core (the loops release the GIL), each laying out its own inputs' masks
    system by system; every count is an integer of its own input and draw, so the split never changes one.

    Examples
    --------
    >>> x = np.array([[[1.0], [2.0], [3.0]]]); prep = sort_prepare(x, -x, x, 0)
    >>> masks = np.zeros((1, 3, 1), dtype=bool); vx, vy = np.empty((1, 1, 1)), np.empty((1, 1, 1))
    >>> sort_counts(prep, masks, slice(0, 1), 0, vx, vy, None); float(vx[0, 0, 0]), float(vy[0, 0, 0])
    (3.0, -3.0)
    """
    n_blk, n_draws, p = vx.shape

    def count(a: int, b: int) -> None:
        tx, ty = (ties[0][a:b], ties[1][a:b]) if ties is not None else (np.empty((0, 0, 0)), np.empty((0, 0, 0)))
        mt = np.ascontiguousarray(np.transpose(masks[:, :, a:b], (1, 2, 0)))  # (S, inputs, B)
        loops("rank.input_sort_jit").draw_counts(mt, blk.start + a, prep.order, prep.rx, prep.ry, prep.new,
                                                   prep.info, prep.dlin, prep.dconst, variant_code, vx[a:b],
                                                   vy[a:b], tx, ty)

    _on_runs(n_blk, n_blk * n_draws * p * masks.shape[1], count)


def _on_runs(n: int, work: int, run: Callable[[int, int], None]) -> None:
    """``run(a, b)`` over runs of ``n`` inputs that cover them in order: one run a core when ``work`` is worth
    it (:data:`THREAD_WORK` a run), on threads, else one run in this thread."""
    runs = max(1, min(n, _cores(), work // THREAD_WORK))
    cuts = [n * k // runs for k in range(runs + 1)]
    if runs == 1:
        run(0, n)
        return
    with ThreadPoolExecutor(max_workers=runs) as pool:
        list(pool.map(run, cuts[:-1], cuts[1:]))


def _cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on every platform
        return os.cpu_count() or 1
