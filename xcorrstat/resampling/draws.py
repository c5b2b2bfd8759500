"""Random draws keyed by draw id.

Draws come in fixed blocks of ``DRAW_BLOCK`` consecutive ids. Block ``k`` of a run
with seed ``seed`` has its own generator,
``Generator(PCG64(SeedSequence(seed, spawn_key=(k,))))`` -- the same stream as
``SeedSequence(seed).spawn(K)[k]`` -- and draw ``r`` is row ``r % DRAW_BLOCK`` of
what that generator gives for block ``r // DRAW_BLOCK``. So a draw depends only on
``(seed, r)``, never on how draws are batched, chunked or scheduled, while one
generator serves many draws (a generator per draw would cost more than the
statistic itself on small data).

A bootstrap draw along a dim of size ``n`` is ``n`` indices drawn with replacement,
held as a count vector over the dim's labels. When several dims are resampled, a
block takes them in canonical order (``system``, ``input``, then other dims by
name): ``integers(0, n_1, (DRAW_BLOCK, n_1))``, then ``n_2``, and so on.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = [
    "resolve_seed",
    "draw_generator",
    "canonical_dims",
    "bootstrap_indices",
    "counts_from_indices",
    "bootstrap_counts",
]

_CANONICAL = ("system", "input")
DRAW_BLOCK = 256


def resolve_seed(rng) -> int:
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
        return int(np.random.SeedSequence().entropy % (2**63))
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        if rng < 0:
            raise ValueError(f"rng must be a non-negative integer seed, got {rng}")
        return int(rng)
    if isinstance(rng, np.random.SeedSequence):
        if rng.spawn_key:
            raise ValueError("rng: pass a root SeedSequence (no spawn_key) or an integer seed")
        return int(rng.entropy)
    if isinstance(rng, np.random.Generator):
        return int(rng.integers(2**63))
    raise TypeError(
        f"rng must be None, an int seed, a numpy SeedSequence or Generator, got {type(rng).__name__}"
    )


def draw_generator(seed: int, block: int) -> np.random.Generator:
    """The generator of draw block ``block`` (draws ``block * DRAW_BLOCK`` onwards)."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(int(block),))))


def canonical_dims(dims: Sequence[str]) -> tuple[str, ...]:
    """Resampled dims in the order draws take them: system, input, then the rest by name."""
    dims = tuple(dims)
    if len(set(dims)) != len(dims):
        raise ValueError(f"resample names a dim twice: {dims}")
    first = [d for d in _CANONICAL if d in dims]
    rest = sorted(str(d) for d in dims if d not in _CANONICAL)
    return tuple(first) + tuple(rest)


def bootstrap_indices(seed: int, draws, sizes: Sequence[int]) -> list[np.ndarray]:
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
    draws = np.atleast_1d(np.asarray(draws, dtype=np.int64))
    if draws.size and draws.min() < 0:
        raise ValueError("draw ids must be non-negative")
    out = [np.empty((draws.size, int(n)), dtype=np.int64) for n in sizes]
    blocks = draws // DRAW_BLOCK
    for block in np.unique(blocks):  # one generator per block of draw ids
        g = draw_generator(seed, block)
        mine = blocks == block
        rows = draws[mine] % DRAW_BLOCK
        for arr, n in zip(out, sizes):
            arr[mine] = g.integers(0, n, size=(DRAW_BLOCK, int(n)))[rows]
    return out


def counts_from_indices(indices: np.ndarray, n: int) -> np.ndarray:
    """Count vectors ``(B, n)`` from drawn indices ``(B, m)`` (``np.bincount`` per row)."""
    indices = np.asarray(indices, dtype=np.int64)
    b = indices.shape[0]
    flat = indices + (np.arange(b, dtype=np.int64) * n)[:, None]
    return np.bincount(flat.ravel(), minlength=b * n).reshape(b, n)


def bootstrap_counts(seed: int, draws, sizes: Sequence[int]) -> list[np.ndarray]:
    """Count vectors ``(len(draws), n)`` per resampled dim (canonical order)."""
    return [counts_from_indices(idx, n) for idx, n in zip(bootstrap_indices(seed, draws, sizes), sizes)]
