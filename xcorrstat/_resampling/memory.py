"""The memory plan: how many float64 temporaries a task and a batch of draws may hold.

Every resampling route sizes its blocks here, from one budget and one set of estimates:

* the budget: ``set_options(memory_budget=...)`` (1 GiB by default), shared by the tasks that run
  at once (:func:`block_elems`, a task's share; :func:`process_elems`, the whole budget, for work
  that runs in the calling thread without a task graph);
* the estimates: a bootstrap draw's temporaries per metric (:func:`draw_elems`), a permutation draw's
  per pair of metrics and what a task keeps per pair whatever its batch (:func:`pair_block_plan`),
  a draw of the all-pairs route (:func:`allpairs_per_draw`), a block of explicitly swapped matrices
  (:func:`materialised_steps`);
* the batches: the draws whose temporaries fit (:func:`draws_within`), raised to the floor
  ``MIN_BATCH_ELEMS`` under which one draw at a time would cost more in overhead than in arithmetic
  (:func:`raised_batch`), for each route (:func:`default_batch`, :func:`pair_batch`,
  :func:`allpairs_batch`).

A plan only decides how many draws, metrics or pairs are computed together: every draw is made
from its id, so no plan changes a number.
"""

from __future__ import annotations

from typing import Any

from .._types import Level, Method, Statistic
from .._kernels.custom import is_own
from .._kernels.linear.forms import F32_EXACT
from .._kernels.mt.swap_ties import SWAP_PAIR_BYTES
from .._kernels.rank.sorted_counts import sorted_form
from .._kernels.rank.untied_forms import FORM_SYSTEMS
from .._kernels.swap import input_by_groups
from .._options import OPTIONS
from .draws import DRAW_BLOCK
from .workers import cpu_count, parallelism

__all__ = [
    "FLOAT_BYTES",
    "GLOBAL_DRAW_TEMPS",
    "MATERIALISED_TEMPS",
    "MEMORY_SAFETY",
    "MIN_BATCH_ELEMS",
    "SORTED_SYSTEM_TEMPS",
    "CALIBRATION_PAIR_ELEMS",
    "allpairs_batch",
    "allpairs_per_draw",
    "calibration_metrics",
    "block_elems",
    "default_batch",
    "default_pair_chunk",
    "draw_elems",
    "draws_within",
    "materialised_steps",
    "metric_step",
    "min_batch",
    "pair_batch",
    "pair_block_plan",
    "pair_fixed",
    "pair_step",
    "process_elems",
    "raised_batch",
    "swap_calibration_batch",
]

#: Bytes of one float64 temporary.
FLOAT_BYTES = 8
#: The block estimates count a batch's main float64 temporaries; NumPy's intermediates and the
#: allocator's slack come on top, so a task is sized for ``1 / MEMORY_SAFETY`` of its share of the budget.
MEMORY_SAFETY = 2
#: float64 temporaries a batch of draws may always use (``batch`` is raised to fill them).
MIN_BATCH_ELEMS = 1_000_000
#: float64 temporaries per metric, system and draw of a system-level draw over many systems (the sorting
#: form, :func:`xcorrstat._kernels.rank.sorted_counts.sorted_form`): the draw's exact mean parts and means,
#: weights and validity, mid-ranks and the weighted Pearson's centred copies.
SORTED_SYSTEM_TEMPS = 40
#: float64 temporaries per cell, row and draw of a batch of explicitly swapped matrices (both swapped
#: matrices, the level kernels' copies and sorts).
MATERIALISED_TEMPS = 12

#: float64 temporaries per metric of one global-level draw: the weighted routes (sums over the
#: cells, Kendall's counts) keep a few values per draw, whatever the number of cells
GLOBAL_DRAW_TEMPS = 16


def block_elems() -> int:
    """float64 temporaries one task of draws may hold: the one block-size policy of every resampling path.

    ``set_options(memory_budget=...)`` (1 GiB by default) is shared by the tasks that run at
    once, one per core of this machine, and divided by ``MEMORY_SAFETY`` (2) for what the
    estimates leave out: ``memory_budget / (2 x 8 bytes x cores)`` values, at least
    ``MIN_BATCH_ELEMS``. On 2 cores the default gives 2**25 values (256 MiB) a task.

    Examples
    --------
    >>> from xcorrstat import set_options
    >>> with set_options(memory_budget="64MiB"):
    ...     small = block_elems()
    >>> small < block_elems()
    True
    """
    share = OPTIONS["memory_budget"] // (FLOAT_BYTES * MEMORY_SAFETY * cpu_count())
    return int(max(share, MIN_BATCH_ELEMS))


def process_elems() -> int:
    """float64 temporaries of the whole ``memory_budget`` (all cores' shares): what a computation
    that runs in the calling thread alone, without a task graph, may hold.

    Examples
    --------
    >>> process_elems() >= block_elems()
    True
    """
    return block_elems() * cpu_count()


def draws_within(budget: int, per_draw: int) -> int:
    """Draws (1 to 1,000) whose float64 temporaries, ``per_draw`` elements each, fit in ``budget``.

    Examples
    --------
    >>> draws_within(1000, 300), draws_within(10, 300)
    (3, 1)
    """
    return int(max(1, min(1000, budget // max(per_draw, 1))))


def raised_batch(batch: int, per_draw: int, n_resamples: int) -> int:
    """``batch`` raised to the draws that fit in ``MIN_BATCH_ELEMS``, and at most ``n_resamples``.

    Examples
    --------
    >>> raised_batch(1, 100, 50), raised_batch(1, 10**7, 50)
    (50, 1)
    """
    return int(min(max(batch, draws_within(MIN_BATCH_ELEMS, per_draw)), n_resamples))


# -- bootstrap draws of a level correlation (the engine's blocks of metrics x draws) -------------------------


def draw_elems(n_metrics: int, n_systems: int, n_inputs: int, level: Level, method: Statistic,
               calibrate: bool = False) -> int:
    """Estimated float64 temporaries of one bootstrap draw of ``n_metrics`` metrics.

    The estimate counts pair arrays at system level (a few arrays of the systems over many systems,
    :data:`SORTED_SYSTEM_TEMPS`), per-input sums (Pearson, Kendall) or per-input
    weighted ranks (Spearman) at input level (rank statistics of long rows: a few values per row
    and the draw's counts), the draw's weights and per-metric sums at global
    level (:data:`GLOBAL_DRAW_TEMPS`);
    with ``calibrate``, a few values per group at input level (the compiled sweep) and every pair's
    weights at system level (each draw's means calibrated on their own).

    Examples
    --------
    >>> draw_elems(1, 10, 100, "input", "kendall")
    1310
    """
    s, i = n_systems, n_inputs
    if is_own(method):  # a function of one's own: expanded resamples of x and z, and its own temporaries
        if level == "system":  # the drawn systems' means only
            return n_metrics * s * 12 + i + s
        return n_metrics * s * i * 6 + i + s
    if level == "within_system":  # input level with the dims' roles swapped
        level, s, i = "input", n_inputs, n_systems
    if calibrate:  # input level: a few values per group (the sweep's pair table is the metric's, not the draw's)
        return n_metrics * (8 * i if level == "input" else 8 * s * (s - 1) // 2) + i + s
    if level == "system":
        if sorted_form(s):  # the draw's means, weights, ranks and sorts: linear in the systems
            return n_metrics * SORTED_SYSTEM_TEMPS * s + i + s
        return n_metrics * (4 * s * s + 2 * s) + i
    if level == "input":
        if method == "spearman" or (method != "pearson" and sorted_form(s)):  # rows sorted once: a few values a row
            return n_metrics * i * 12 + 6 * s + i
        return n_metrics * i * 12 + i + s  # Pearson and Kendall draw by draw, a few values per row
    # global level: the draw's counts and a few sums per metric (the cells are found once per block)
    return n_metrics * GLOBAL_DRAW_TEMPS + i + s


def default_batch(n_metrics: int, n_systems: int, n_inputs: int, level: Level, method: Statistic,
                  calibrate: bool = False, *, budget: int | None = None) -> int:
    """Draws per batch (and per task) so one task's temporaries stay within ``budget`` float64 values
    (default :func:`block_elems`: the task's share of ``memory_budget``), by :func:`draw_elems`.

    Examples
    --------
    >>> default_batch(10, 20, 100, "system", "pearson")
    1000
    """
    budget = block_elems() if budget is None else budget
    return draws_within(budget, draw_elems(n_metrics, n_systems, n_inputs, level, method, calibrate))


def min_batch(n_metrics: int, n_systems: int, n_inputs: int, level: Level, method: Statistic,
              calibrate: bool = False) -> int:
    """The draws a batch always holds: those whose temporaries fit in ``MIN_BATCH_ELEMS`` (the floor of
    :func:`raised_batch`, for the engine's blocks of metrics).

    Examples
    --------
    >>> min_batch(10, 20, 100, "system", "pearson")
    60
    """
    return default_batch(n_metrics, n_systems, n_inputs, level, method, calibrate, budget=MIN_BATCH_ELEMS)


def metric_step(n_metrics: int, metric_chunk: int, batch: int, per_draw: int) -> int:
    """Metrics computed together by eager work in the calling thread: all of them when a batch of their
    draws (``per_draw`` temporaries each) fits in the whole budget (:func:`process_elems`), else
    ``metric_chunk`` (a task's share).

    Examples
    --------
    >>> metric_step(52, 13, 10, 1000), metric_step(52, 13, 1000, 10**6)
    (52, 13)
    """
    return n_metrics if batch * per_draw <= process_elems() else metric_chunk


#: float64-sized values per pair of the sorted pair table that re-calibrating epsilon in every draw builds
#: (its distance, outcomes, group, items and order, and what sorting them takes).
CALIBRATION_PAIR_ELEMS = 9


def calibration_metrics(n_metrics: int, n_systems: int, n_inputs: int, level: str, *, whole: bool = False) -> int:
    """Metrics whose sorted pair tables (re-calibrating epsilon in every bootstrap draw) a task holds within
    its share of the budget (:func:`block_elems`; ``whole``: the whole budget, :func:`process_elems`, for
    work in the calling thread): each metric's table has every pair of every group's items.

    Raises
    ------
    ValueError
        When one metric's table alone is over the whole ``memory_budget`` (:func:`process_elems`).

    Examples
    --------
    >>> calibration_metrics(52, 15, 2000, "input") >= 1
    True
    """
    # system level: no table, but every draw's own means compared pair by pair (8 values a pair, one draw)
    groups, items = {"system": (1, n_systems), "input": (n_inputs, n_systems)}.get(level, (n_systems, n_inputs))
    per_metric = groups * (items * (items - 1) // 2) * (8 if level == "system" else CALIBRATION_PAIR_ELEMS)
    if per_metric > process_elems():
        need = per_metric * 8 / 2**30
        what = f"the pairs of {items:,} system means" if level == "system" else \
            f"each metric's {groups:,} groups of {items:,} items"
        raise ValueError(f"epsilon='calibrate' re-calibrates every draw on {what} ({need:.1f} GiB of pairs per "
                         f"metric), over memory_budget: raise memory_budget, give epsilon a number, or calibrate once "
                         f"(xcorrstat.calibrate_ties)")
    if level == "system":  # no table to hold
        return n_metrics
    return int(max(1, min(n_metrics, (process_elems() if whole else block_elems()) // per_metric)))


def swap_calibration_batch(n_groups: int, n_items: int, n_resamples: int, batch: int | None) -> int:
    """Draws a task computes at once in the score test that re-calibrates both swapped metrics in every
    permutation draw (:mod:`xcorrstat._kernels.mt.swap_ties`): a few values per group and draw, within the
    task's share of the budget (:func:`block_elems`), at most ``batch`` and :data:`.draws.DRAW_BLOCK`.

    Raises
    ------
    ValueError
        When the sorted table of the pairs (four pairings of every pair of cells of every group) is over the
        whole ``memory_budget`` (:func:`process_elems`).

    Examples
    --------
    >>> swap_calibration_batch(2000, 15, 1000, None) >= 1
    True
    """
    entries = 4 * n_groups * (n_items * (n_items - 1) // 2)
    if entries * SWAP_PAIR_BYTES > process_elems() * FLOAT_BYTES:
        need = entries * SWAP_PAIR_BYTES / 2**30
        raise ValueError(f"epsilon='calibrate' re-calibrates both metrics in every draw on {n_groups:,} groups of "
                         f"{n_items:,} items ({need:.1f} GiB of pairs), over memory_budget: raise memory_budget, "
                         f"give epsilon a number, or calibrate once (xcorrstat.calibrate_ties)")
    per_draw = 8 * max(n_groups, 1)  # each group's counts and value, of both metrics
    return int(max(1, min(DRAW_BLOCK, batch or DRAW_BLOCK, block_elems() // per_draw, n_resamples)))


# -- permutation draws of pairs of metrics --------------------------------------------------------------------


def default_pair_chunk(n_pairs: int) -> int:
    """Pairs per task: about four tasks per core (or per worker thread of a cluster), at most 64 pairs."""
    return max(1, min(64, -(-n_pairs // (4 * parallelism()))))


def _sorted_global_kendall(kw: dict[str, Any]) -> bool:
    """Whether the pairs take the global-level Kendall swap kernel (one sorted table per pair, or per pair
    and system at within-system level; counts per draw)."""
    return kw["level"] in ("global", "within_system") and kw["method"] == "kendall" and not kw.get("epsilon")


def _input_tables(s: int, kw: dict[str, Any]) -> bool:
    """Whether input-level Kendall pairs may take one sorted table per input (the within-system kernels of the
    transposed matrices: tau-c, the averages but ``"macro"``, many systems)."""
    return bool(kw["level"] == "input" and kw["method"] == "kendall" and not kw.get("epsilon") and input_by_groups(
        (1, s, 1), method="kendall", variant=kw.get("variant", "b"), average=kw.get("average", "macro")))


def _per_pair_draw(s: int, i: int, level: Level, method: Method) -> int:
    """Rough float64 temporaries per pair and draw."""
    if method == "spearman" and level != "system":  # the forms' or the walk's few sums per draw; masks per batch
        return 8
    if level == "input":
        if method == "kendall":  # a draw keeps its swapped means per input; the mask part is per batch
            return 8
        return i * (24 if method == "pearson" else 8 * s)
    if level == "system":
        return 8 * s if method == "pearson" else 6 * s * i
    if level == "within_system":
        if method == "pearson":  # the input level's sums per system (the transposed matrices), per draw
            return 32 * s
        return 6 * s * i  # the swapped matrices are built (other methods, epsilon)
    return 16 if method == "pearson" else 6 * s * i


def _per_pair_fixed(s: int, i: int, level: Level, method: Method, variant: str = "b") -> int:
    """Rough float64 elements a task keeps per pair whatever the batch: the kernel's precomputed operands.

    Input-level Kendall (and Spearman over few systems) keeps, per pair and input, its column of the
    value operand over the ``S + 1 + S(S-1)/2`` rows of the mask products, the ``S + 1`` rows of the difference
    operand and a few constants (tau-b's tie operands beside them, as large; with metrics missing in
    different cells, three forms over the ``S + 1`` rows ``[m_s | 1]`` and a constant), in the dtype whose sums
    are exact (float32 below 2**24: :data:`~xcorrstat._kernels.linear.forms.F32_EXACT`). Its (S, S) pair
    comparisons are built a bounded block at a time inside the kernel, so they do not count here; the batch's
    mask products, shared by the task's pairs, count per draw. Measured (15 x 2,000, tied scores): tau-a keeps
    143,000 elements a pair (214,000 at its peak while built), tau-b 282,000 (352,000); counted 210,000 and
    396,000 (the plan leaves a pair's build up to twice what it keeps).
    """
    if level == "input" and (method == "kendall" or (method == "spearman" and s <= FORM_SYSTEMS)):
        spread = 2 * s if method == "spearman" else 1  # the largest term: doubled mid-rank differences
        itemsize = 4 if 16 * s * s * spread < F32_EXACT else 8
        rows = (s * (s - 1) // 2 + 5 * s + 6) * (2 if method == "kendall" and variant == "b" else 1)
        return i * (-(-rows * itemsize // 8) + 12)
    if level == "within_system" and method == "pearson":  # the mask-linear terms of every cell
        return 12 * s * i
    return 0


def pair_fixed(s: int, i: int, kw: dict[str, Any]) -> int:
    """What a task keeps per pair whatever the batch; the global-level Kendall kernel's sorted table included.

    Examples
    --------
    >>> pair_fixed(15, 100, {"level": "global", "method": "kendall"})
    9000
    """
    if _sorted_global_kendall(kw):  # the pair's table of its 2 S I scores in order, with their ranks and weights
        return 6 * s * i
    variant = kw.get("variant", "b")
    if not _input_tables(s, kw):
        return _per_pair_fixed(s, i, kw["level"], kw["method"], variant)
    # one sorted table per input, beside tau-a's forms where tau-c's divisor is fixed (input_tau_c)
    split = variant == "c" and kw.get("average", "macro") == "macro" and s <= FORM_SYSTEMS
    return 6 * s * i + (_per_pair_fixed(s, i, "input", "kendall", "a") if split else 0)


def pair_block_plan(n_pairs: int, s: int, i: int, n_lead: int, kw: dict[str, Any],
                    pair_chunk: int | None = None) -> tuple[int, int, int]:
    """``(pair_chunk, per_draw, budget)``: pairs per task, a batch's float64 temporaries per draw, and
    the temporaries left to a batch once the task's precomputed operands are counted.

    A task holds ``pair_chunk x (fixed + batch x per-draw)`` elements per label of the leading
    dims; by default (:func:`default_pair_chunk`) the pairs' fixed part takes at most half of
    :func:`block_elems`, so one task stays within the block budget whatever the number of pairs.

    Examples
    --------
    >>> from xcorrstat import set_options
    >>> kw = {"level": "input", "method": "kendall"}
    >>> with set_options(memory_budget="16MiB"):
    ...     small = pair_block_plan(1225, 15, 2000, 1, kw)
    >>> small[0] <= pair_block_plan(1225, 15, 2000, 1, kw)[0]
    True
    """
    fixed = n_lead * pair_fixed(s, i, kw)
    budget = block_elems()
    if pair_chunk is None:
        pair_chunk = default_pair_chunk(n_pairs)
        if fixed:
            pair_chunk = max(1, min(pair_chunk, budget // (2 * fixed)))
    per_draw = pair_chunk * n_lead * _per_pair_draw(s, i, kw["level"], kw["method"])
    masks_per_batch = kw["level"] == "input" and kw["method"] == "kendall"
    if masks_per_batch or (kw["method"] == "spearman" and kw["level"] != "system"):
        per_draw += n_lead * s * i // 4  # the batch's masks and mask products, shared by the task's pairs
        if _input_tables(s, kw):  # a few values and counts per pair and input (measured: 8.0 per pair, input and draw)
            per_draw += n_lead * 10 * i * pair_chunk
    elif _sorted_global_kendall(kw) and kw["level"] == "within_system":  # the masks and a copy of them by
        per_draw = n_lead * (s * i // 4 + 24 * s * pair_chunk)  # system, and a few counts per pair and system
    elif _sorted_global_kendall(kw):  # a draw is the batch's mask (shared) and a few counts per pair: the
        per_draw = n_lead * (s * i // 8 + 16 * pair_chunk)  # kernel's lanes are a fixed block of 32 draws
    elif kw["level"] == "within_system" and kw["method"] == "pearson":  # the batch's masks as numbers
        per_draw += n_lead * 2 * s * i
    return pair_chunk, per_draw, max(budget - pair_chunk * fixed, per_draw)


def pair_batch(batch: int | None, per_draw: int, budget: int, n_resamples: int) -> int:
    """Draws per batch of a block of pairs: ``batch``, or those that fit in ``budget`` (what
    :func:`pair_block_plan` leaves), raised to the floor (:func:`raised_batch`).

    Examples
    --------
    >>> pair_batch(None, 1000, 50_000, 1000), pair_batch(7, 10**6, 50_000, 1000)
    (1000, 7)
    """
    return raised_batch(draws_within(budget, per_draw) if batch is None else batch, per_draw, n_resamples)


def pair_step(n_pairs: int, pair_chunk: int, fixed: int, batch: int, per_draw: int) -> int:
    """Pairs computed together by eager work in the calling thread: all of them if their fixed parts
    (``fixed`` per pair) and a batch's draws (``per_draw`` per ``pair_chunk`` pairs) fit in the whole
    budget (:func:`process_elems`), else ``pair_chunk``.

    Examples
    --------
    >>> pair_step(10, 2, 100, 50, 1000), pair_step(10**6, 2, 10**6, 50, 1000)
    (10, 2)
    """
    fits = n_pairs * (fixed + batch * per_draw // pair_chunk) <= process_elems()
    return n_pairs if fits else pair_chunk


def allpairs_per_draw(s: int, i: int, m: int, general: bool = False, level: Level = "system") -> int:
    """Rough float64 temporaries per draw of the all-pairs route (labels are computed one at a time).

    The masks (one byte a cell), one system's masks as floats, the (S, 3 x metrics) part
    sums and their (S, metrics) total, and a pair block's swapped means (the block size
    adapts to the batch: a few S per draw at least). The ``general`` kernel (any method,
    missing cells) also keeps per metric a count and three target parts, and a few (S, metrics)
    arrays of them; its pair blocks are bounded by ``SYSTEM_BLOCK_ELEMS`` whatever the batch.

    Examples
    --------
    >>> allpairs_per_draw(15, 2000, 52)
    9740
    """
    if level != "system":  # input/global Pearson: the masks, a block's swapped sums, each pair's running mean
        return s * i // 8 + 6 * m + 6 * m * m  # (its temporaries are bounded by the kernel's own block size)
    if general:
        return s * i // 8 + i + (14 * m + 8) * s
    return s * i // 8 + i + 5 * s * m + 6 * s


def allpairs_batch(batch: int | None, per_draw: int, n_resamples: int) -> int:
    """Draws per batch of the all-pairs route: ``batch``, or those that fit in :func:`block_elems` but at
    most one block of draw ids (``DRAW_BLOCK``: several tasks even for 1,000 draws), raised to the floor.

    Examples
    --------
    >>> allpairs_batch(None, 9740, 1000), allpairs_batch(3, 9740, 1000)
    (256, 102)
    """
    if batch is None:
        batch = min(draws_within(block_elems(), per_draw), DRAW_BLOCK)
    return raised_batch(batch, per_draw, n_resamples)


# -- statistics of explicitly swapped matrices -------------------------------------------------------------------


def materialised_steps(rows: int, cells: int) -> tuple[int, int]:
    """``(rows, draws)`` of explicitly swapped matrices built at a time: within :func:`block_elems`, at
    ``MATERIALISED_TEMPS`` temporaries per cell, row and draw.

    Examples
    --------
    >>> from xcorrstat import set_options
    >>> with set_options(memory_budget="16MiB"):
    ...     materialised_steps(10, 10**6)
    (1, 1)
    """
    row_step = max(1, min(rows, block_elems() // (MATERIALISED_TEMPS * cells)))
    draw_step = max(1, block_elems() // (MATERIALISED_TEMPS * cells * row_step))
    return row_step, draw_step
