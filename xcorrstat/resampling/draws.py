"""Random draws keyed by draw id.

Draw ``r`` of a run with seed ``seed`` comes from its own generator,
``Generator(PCG64(SeedSequence(seed, spawn_key=(r,))))`` -- the same stream as
``SeedSequence(seed).spawn(R)[r]`` -- so a draw does not depend on how draws are
batched, chunked or scheduled. A bootstrap draw along a dim of size ``n`` is
``n`` indices drawn with replacement, held as a count vector over the dim's labels;
when several dims are resampled, each draw takes them in canonical order
(``system``, ``input``, then other dims by name).
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


def draw_generator(seed: int, draw: int) -> np.random.Generator:
    """The generator of draw ``draw``."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(int(draw),))))


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
    """
    draws = np.atleast_1d(np.asarray(draws, dtype=np.int64))
    out = [np.empty((draws.size, int(n)), dtype=np.int64) for n in sizes]
    for k, r in enumerate(draws):  # one generator per draw id: cheap next to the statistic
        g = draw_generator(seed, r)
        for arr, n in zip(out, sizes):
            arr[k] = g.integers(0, n, size=n)
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
