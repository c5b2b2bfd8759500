"""Random draws keyed by draw id.

Draws come in fixed blocks of ``DRAW_BLOCK`` consecutive ids. Block ``k`` of a run
with seed ``seed`` has its own generator,
``Generator(PCG64(SeedSequence(seed, spawn_key=(k,))))`` -- the same stream as
``SeedSequence(seed).spawn(K)[k]`` -- and draw ``r`` is row ``r % DRAW_BLOCK`` of
what that generator gives for block ``r // DRAW_BLOCK``. So a draw depends only on
``(seed, r)``, never on how draws are batched, chunked or scheduled, while one
generator serves many draws (a generator per draw would cost more than the
statistic itself on small data).

How draws are grouped for work never changes them: :func:`batched_draws` makes a
block's samples once and slices them for consecutive small batches, and
:func:`draws_per_task` bounds a run to ``MAX_DRAW_TASKS`` blocks of draws. So the
first k draws of an n-draw run are the draws of a k-draw run.

A bootstrap draw along a dim of size ``n`` is ``n`` indices drawn with replacement,
held as a count vector over the dim's labels. When several dims are resampled, a
block takes them in canonical order (``system``, ``input``, then other dims by
name): ``integers(0, n_1, (DRAW_BLOCK, n_1))``, then ``n_2``, and so on.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence

import numpy as np
from numpy.typing import ArrayLike

from .._types import Seed, SwapUnit

__all__ = [
    "resolve_seed",
    "draw_generator",
    "canonical_dims",
    "bootstrap_indices",
    "counts_from_indices",
    "bootstrap_counts",
    "BlockMemo",
    "coin",
    "permutation_masks",
    "PERMUTE_SCHEMES",
    "MAX_DRAW_TASKS",
    "draws_per_task",
    "batched_draws",
    "fill_draws",
    "keyed_generator",
    "seeded_generator",
]

_CANONICAL = ("system", "input")
DRAW_BLOCK = 256
#: Most tasks a run's draws are split into, whatever ``batch`` says (see :func:`draws_per_task`).
MAX_DRAW_TASKS = 256

#: What a block's generator samples: ``(shape, sample)`` with ``sample(generator, (DRAW_BLOCK, *shape))``.
Sampler = tuple[tuple[int, ...], Callable[[np.random.Generator, tuple[int, ...]], np.ndarray]]
#: The arrays of a batch of draw ids, one row per draw (what :func:`batched_draws` slices).
MakeDraws = Callable[[np.ndarray], Sequence[np.ndarray]]


def resolve_seed(rng: Seed) -> int:
    """The integer seed a run uses, recorded in result attrs.

    ``None`` draws fresh entropy; an ``int`` is used as is; a ``SeedSequence``
    gives its entropy (it must not be a spawned child); a ``Generator`` gives
    ``rng.integers(2**63)`` (advancing it).

    Examples
    --------
    >>> resolve_seed(42)
    42
    """
    if rng is None:
        return int(np.random.SeedSequence().entropy) % (2**63)  # type: ignore[arg-type]  # fresh entropy is an int
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        if rng < 0:
            raise ValueError(f"rng must be a non-negative integer seed, got {rng}")
        return int(rng)
    if isinstance(rng, np.random.SeedSequence):
        if rng.spawn_key:
            raise ValueError("rng: pass a root SeedSequence (no spawn_key) or an integer seed")
        return int(rng.entropy)  # type: ignore[arg-type]  # a root sequence's entropy is an int
    if isinstance(rng, np.random.Generator):
        return int(rng.integers(2**63))
    raise TypeError(
        f"rng must be None, an int seed, a numpy SeedSequence or Generator, got {type(rng).__name__}"
    )


def keyed_generator(seed: int, *key: int) -> np.random.Generator:
    """The generator of stream ``key`` of a run: ``PCG64(SeedSequence(seed, spawn_key=key))``.

    Every keyed stream of the package (blocks of draw ids, coverage and power
    trials) comes from here, so a stream depends on the seed and its key alone.

    Examples
    --------
    >>> bool(keyed_generator(1, 3).random() == np.random.default_rng(np.random.SeedSequence(1).spawn(4)[3]).random())
    True
    """
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=tuple(int(k) for k in key))))


def seeded_generator(seed: Seed) -> np.random.Generator:
    """``np.random.default_rng(seed)``: the one stream of code that must match another library's draws."""
    return np.random.default_rng(seed)


def draw_generator(seed: int, block: int) -> np.random.Generator:
    """The generator of draw block ``block`` (draws ``block * DRAW_BLOCK`` onwards)."""
    return keyed_generator(seed, block)


def canonical_dims(dims: Sequence[str]) -> tuple[str, ...]:
    """Resampled dims in the order draws take them: system, input, then the rest by name.

    Examples
    --------
    >>> canonical_dims(["input", "lp", "system"])
    ('system', 'input', 'lp')
    """
    dims = tuple(dims)
    if len(set(dims)) != len(dims):
        raise ValueError(f"resample names a dim twice: {dims}")
    first = [d for d in _CANONICAL if d in dims]
    rest = sorted(str(d) for d in dims if d not in _CANONICAL)
    return tuple(first) + tuple(rest)


def bootstrap_indices(seed: int, draws: ArrayLike, sizes: Sequence[int]) -> list[np.ndarray]:
    """Indices drawn with replacement, one ``(len(draws), n)`` array per size.

    ``sizes`` are the lengths of the resampled dims in canonical order. These are
    the indices a test uses to expand a resample explicitly.

    Examples
    --------
    >>> sys_idx, inp_idx = bootstrap_indices(0, [3, 700], [16, 100])
    >>> sys_idx.shape, inp_idx.shape
    ((2, 16), (2, 100))
    >>> bool((bootstrap_indices(0, [700], [16, 100])[1] == inp_idx[1]).all())
    True
    """

    def indices(n: int) -> Sampler:
        return (n,), lambda g, shape: g.integers(0, n, size=shape)

    return _blocked_draws(seed, draws, [indices(int(n)) for n in sizes])


PERMUTE_SCHEMES = ("system", "input", "cells", "system-xor-input")


def permutation_masks(seed: int, draws: ArrayLike, n_systems: int, n_inputs: int, scheme: SwapUnit, *,
                      memo: BlockMemo | None = None) -> np.ndarray:
    """Swap masks ``(len(draws), S, I)`` of bools: True where X and Y swap in that draw.

    ``scheme``: ``"system"`` flips whole system rows (PERM-SYSTEMS), ``"input"`` whole
    input columns (PERM-INPUTS), ``"cells"`` every (system, input) cell independently
    (PERM-BOTH), ``"system-xor-input"`` a row flip XOR a column flip. Each flip is a
    fair coin. These are the masks a test uses to swap explicitly. ``memo``: a :class:`BlockMemo` that
    calls with the same arguments but ``draws`` share, so a block of draw ids two batches cut is drawn once.

    Examples
    --------
    >>> m = permutation_masks(0, [0, 1], 3, 4, "system")
    >>> m.shape, bool((m == m[:, :, :1]).all())
    ((2, 3, 4), True)
    """

    if scheme == "cells":
        (m,) = _blocked_draws(seed, draws, [((n_systems, n_inputs), coin)], memo)
        return m
    if scheme == "system":
        (rows,) = _blocked_draws(seed, draws, [((n_systems,), coin)], memo)
        return np.repeat(rows[:, :, None], n_inputs, axis=2)
    if scheme == "input":
        (cols,) = _blocked_draws(seed, draws, [((n_inputs,), coin)], memo)
        return np.repeat(cols[:, None, :], n_systems, axis=1)
    if scheme == "system-xor-input":
        rows, cols = _blocked_draws(seed, draws, [((n_systems,), coin), ((n_inputs,), coin)], memo)
        return rows[:, :, None] ^ cols[:, None, :]
    raise ValueError(f"scheme must be one of {PERMUTE_SCHEMES!r}, got {scheme!r}")


def coin(g: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Fair coins: ``g.integers(0, 2, size=shape, dtype=np.int8).astype(bool)``, bit for bit, faster.

    NumPy draws each int8 in [0, 2) from one byte of its 32-bit stream (low byte first) as that
    byte's top bit, and takes its 32-bit words low half first from the 64-bit outputs: on a
    little-endian machine the coins are the top bits of the bytes of ``random_raw``. The
    generator is left in the state ``integers`` leaves (a half-used 64-bit output is kept
    for the next 32-bit draw); any other case takes ``integers`` itself.

    Examples
    --------
    >>> a, b = keyed_generator(3, 0), keyed_generator(3, 0)
    >>> bool((coin(a, (5, 7)) == b.integers(0, 2, size=(5, 7), dtype=np.int8).astype(bool)).all())
    True
    >>> bool(a.random() == b.random())
    True
    """
    n = int(np.prod(shape))
    bits = g.bit_generator
    state = bits.state
    if n == 0 or sys.byteorder != "little" or state.get("bit_generator") != "PCG64" or state.get("has_uint32"):
        return g.integers(0, 2, size=shape, dtype=np.int8).astype(bool)
    words = -(-n // 4)  # 32-bit words integers() takes, four coins each
    raw = bits.random_raw(-(-words // 2))
    if words % 2:  # integers() keeps the high half of the last output for the next 32-bit draw
        bits.state = {**bits.state, "has_uint32": 1, "uinteger": int(raw[-1] >> np.uint64(32))}
    octets = raw.view(np.uint8)
    np.greater_equal(octets, 128, out=octets.view(bool))  # in place: a new array's pages cost more than the coins
    return octets[:n].view(bool).reshape(shape)


class BlockMemo:
    """The samples of the last block of draw ids one caller drew (see :func:`permutation_masks`): batches of
    consecutive draw ids that cut a block draw it once. The samples depend on the seed and the block alone,
    so a memo never changes one; one memo serves one seed and one set of samplers."""

    def __init__(self) -> None:
        self.block = -1
        self.values: list[np.ndarray] = []


def _blocked_draws(seed: int, draws: ArrayLike, samplers: Sequence[Sampler],
                   memo: BlockMemo | None = None) -> list[np.ndarray]:
    """Rows ``draws`` of per-block samples: one generator per block of ``DRAW_BLOCK`` draw ids.

    ``samplers`` is a list of ``(shape, sample)`` with ``sample(generator, (DRAW_BLOCK, *shape))``;
    a block's generator serves them in order. A run of consecutive ids is copied as one slice.
    """
    draws = np.atleast_1d(np.asarray(draws, dtype=np.int64))
    if draws.size and draws.min() < 0:
        raise ValueError("draw ids must be non-negative")
    out: list[np.ndarray | None] = [None] * len(samplers)
    blocks = draws // DRAW_BLOCK
    for block in np.unique(blocks):  # one generator per block of draw ids
        if memo is not None and memo.block == block:
            made = memo.values
        else:
            g = draw_generator(seed, block)
            made = [sample(g, (DRAW_BLOCK, *shape)) for shape, sample in samplers]
            if memo is not None:
                for values in made:  # shared by later calls: read-only
                    values.flags.writeable = False
                memo.block, memo.values = int(block), made
        where = np.flatnonzero(blocks == block)
        rows = draws[where] % DRAW_BLOCK
        runs = where[-1] - where[0] == where.size - 1 and bool((np.diff(rows) == 1).all())
        if runs and where.size == draws.size:  # consecutive ids of one block: its rows as they are
            return [values[rows[0]:rows[-1] + 1] for values in made]
        for k, ((shape, _), values) in enumerate(zip(samplers, made)):
            target = out[k]
            if target is None:
                target = out[k] = np.empty((draws.size, *shape), dtype=values.dtype)
            if runs:  # consecutive ids in consecutive places
                target[where[0]:where[-1] + 1] = values[rows[0]:rows[-1] + 1]
            else:
                target[where] = values[rows]
    return [o if o is not None else np.empty((0, *shape)) for o, (shape, _) in zip(out, samplers)]


def counts_from_indices(indices: ArrayLike, n: int) -> np.ndarray:
    """Count vectors ``(B, n)`` from drawn indices ``(B, m)`` (``np.bincount`` per row).

    Examples
    --------
    >>> counts_from_indices(np.array([[0, 0, 2], [1, 2, 2]]), 3).tolist()
    [[2, 0, 1], [0, 1, 2]]
    """
    indices = np.asarray(indices, dtype=np.int64)
    b = indices.shape[0]
    flat = indices + (np.arange(b, dtype=np.int64) * n)[:, None]
    return np.bincount(flat.ravel(), minlength=b * n).reshape(b, n)


def bootstrap_counts(seed: int, draws: ArrayLike, sizes: Sequence[int]) -> list[np.ndarray]:
    """Count vectors ``(len(draws), n)`` per resampled dim (canonical order)."""
    return [counts_from_indices(idx, n) for idx, n in zip(bootstrap_indices(seed, draws, sizes), sizes)]


def draws_per_task(n_resamples: int, batch: int) -> int:
    """Draws one task computes: ``batch``, raised so a run has at most ``MAX_DRAW_TASKS`` tasks.

    Inside a task the draws are still computed ``batch`` at a time; the numbers do
    not depend on either value (draws are keyed by draw id).

    Examples
    --------
    >>> draws_per_task(1000, 100), draws_per_task(10**7, 1)
    (100, 39063)
    """
    return int(max(batch, -(-int(n_resamples) // MAX_DRAW_TASKS), 1))


def batched_draws(ids: ArrayLike, batch: int, make: MakeDraws) -> Iterator[tuple[int, int, list[np.ndarray]]]:
    """Yield ``(start, stop, values)`` for consecutive batches of ``batch`` draw ids.

    ``values`` is ``make(ids[start:stop])`` (a list of arrays, one row per draw),
    but ``make`` is called once per group of at least ``DRAW_BLOCK`` ids and the
    group's rows are sliced: small batches then cost one generator per block of
    draw ids, not one per batch. Rows depend only on the draw ids, so the values
    are those of ``make`` on each batch, bit for bit.

    Examples
    --------
    >>> [(start, stop, v.tolist()) for start, stop, (v,) in batched_draws(np.arange(5), 2, lambda ids: [ids * 10])]
    [(0, 2, [0, 10]), (2, 4, [20, 30]), (4, 5, [40])]
    """
    ids = np.asarray(ids).reshape(-1)
    group = batch * -(-DRAW_BLOCK // batch)
    for g0 in range(0, ids.size, group):
        g1 = min(g0 + group, ids.size)
        values = make(ids[g0:g1])
        for start in range(g0, g1, batch):
            stop = min(start + batch, g1)
            yield start, stop, [v[start - g0 : stop - g0] for v in values]


def fill_draws(
    out: np.ndarray,
    ids: ArrayLike,
    batch: int,
    make: MakeDraws,
    compute: Callable[..., ArrayLike],
    *,
    axis: int = -1,
    after: Callable[[int, int], object] | None = None,
) -> np.ndarray:
    """The one loop over batches of draws: ``out`` along ``axis`` gets ``compute(*values)`` of each batch.

    ``values`` are ``make``'s arrays for the batch's draw ids (see :func:`batched_draws`).
    ``after(start, stop)``, if given, runs after each batch; a true result ends the
    loop (sequential stopping). Returns ``out``.

    Examples
    --------
    >>> out = fill_draws(np.empty((2, 5)), np.arange(5), 2, lambda ids: [ids[:, None] * [1, 10]],
    ...                  lambda v: v.T)
    >>> out[1].tolist()
    [0.0, 10.0, 20.0, 30.0, 40.0]
    """
    index: list[slice] = [slice(None)] * out.ndim
    for start, stop, values in batched_draws(ids, batch, make):
        index[axis] = slice(start, stop)
        out[tuple(index)] = compute(*values)
        if after is not None and after(start, stop):
            break
    return out

