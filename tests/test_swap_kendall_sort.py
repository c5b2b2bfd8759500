"""The sort form of the swapped input-level Kendall kernel against its pair forms: the same integers, the
same floats, for every variant, with ties (target, metric, both), missing cells and many pairs of metrics."""

import numpy as np
import pytest
from test_swap_kendall import _oracle

from xcorrstat._kernels.rank import input_sort as swap_kendall_sort, input_swap as swap_kendall
from xcorrstat._kernels.rank.input_swap import input_kendall_swap, input_kendall_swap_means

VARIANTS = ["a", "b", "23", "acc23"]


def _scores(seed, p, s, i, kind):
    rng = np.random.default_rng(seed)
    if kind == "continuous":
        x, y, z = (rng.normal(size=(p, s, i)) for _ in range(3))
    else:  # few levels: ties in the target, in the metric, between X and Y, and in both
        x = rng.integers(0, 5, (p, s, i)) / 2.0
        y = rng.integers(0, 5, (p, s, i)) / 2.0 + 0.25 * rng.integers(0, 2, (p, s, i))
        z = rng.integers(0, 3, (p, s, i)).astype(float)
    if kind == "missing":
        miss = rng.random((p, s, i)) < 0.25
        miss[:, :, 0] = True  # an input with no valid system
        miss[:, 2:, 1] = True  # one with two
        x[miss] = np.nan
        y[miss] = np.nan
        z[rng.random((p, s, i)) < 0.1] = np.nan
    masks = rng.random((11, s, i)) < 0.5
    masks[0] = False
    masks[1] = True
    return x, y, z, masks


def _forced(monkeypatch, sort):
    monkeypatch.setattr(swap_kendall_sort, "SORT_COST", 0.0 if sort else np.inf)


def _integers(x, y, z, masks, variant):
    """What the blocks hand on: the integer parts of X' and Y' and tau-b's metric ties, block by block."""
    forms = swap_kendall._prepare(*swap_kendall._check(x, y, z, variant, 0.0), variant, 2)
    seen = []

    def keep(blk, ties, v, counts, whole):
        assert counts is None
        seen.append((np.array(v[0]), np.array(v[1])) + (() if ties is None else (np.array(ties[0]),
                                                                                   np.array(ties[1]))))

    swap_kendall._run_blocks(masks, forms, keep, variant)
    return forms, [np.concatenate(parts) for parts in zip(*seen)]


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("kind", ["continuous", "ties", "missing"])
def test_same_integers_as_the_pair_form(monkeypatch, variant, kind):
    x, y, z, masks = _scores(1, 3, 30, 7, kind)
    _forced(monkeypatch, False)
    pair_forms, pair = _integers(x, y, z, masks, variant)
    _forced(monkeypatch, True)
    sort_forms, sort = _integers(x, y, z, masks, variant)
    assert pair_forms.sort is None and sort_forms.sort is not None
    np.testing.assert_array_equal(sort_forms.tied, pair_forms.tied)
    np.testing.assert_array_equal(sort_forms.n0, pair_forms.n0)
    np.testing.assert_array_equal(sort_forms.gold_untied, pair_forms.gold_untied)
    np.testing.assert_array_equal(sort_forms.undefined, pair_forms.undefined)
    assert len(sort) == len(pair)
    for got, expected in zip(sort, pair):
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("kind", ["continuous", "ties", "missing"])
def test_same_values_bit_for_bit(monkeypatch, variant, kind):
    x, y, z, masks = _scores(2, 2, 26, 6, kind)
    z = np.broadcast_to(z[:1], z.shape)  # one target shared by the pairs of metrics
    out = {}
    for sort in (False, True):
        _forced(monkeypatch, sort)
        per_input = input_kendall_swap(x, y, z, min_pairs=3, variant=variant)(masks)
        means = input_kendall_swap_means(x, y, z, min_pairs=3, variant=variant)(masks)
        out[sort] = per_input + means
    for got, expected in zip(out[True], out[False]):
        np.testing.assert_array_equal(got, expected)
    expected = _oracle(x[0], y[0], z[0], masks, np.zeros((2, 2)), variant, 3)
    np.testing.assert_allclose(out[True][0][0], expected[0], atol=1e-12, equal_nan=True)
    np.testing.assert_allclose(out[True][1][0], expected[1], atol=1e-12, equal_nan=True)


def test_the_shape_chooses(monkeypatch):
    x, y, z, _ = _scores(3, 1, 40, 3, "continuous")
    eps = np.zeros((1, 2, 2))
    assert swap_kendall_sort.sort_pays(x, y, z, eps)
    assert not swap_kendall_sort.sort_pays(x[:, :10], y[:, :10], z[:, :10], eps)  # few systems: pair form
    many = np.broadcast_to(x, (6,) + x.shape[1:])
    assert not swap_kendall_sort.sort_pays(many, many, many, np.zeros((6, 2, 2)))  # many pairs share the products
    assert not swap_kendall_sort.sort_pays(x, y, z, eps + 0.1)  # ties within epsilon
    y_gap = y.copy()
    y_gap[0, 0, 0] = np.nan
    assert not swap_kendall_sort.sort_pays(x, y_gap, z, eps)  # X and Y missing in different cells
    x_inf = x.copy()
    x_inf[0, 0, 0] = np.inf
    assert not swap_kendall_sort.sort_pays(x_inf, y, z, eps)


def test_draws_do_not_depend_on_the_batch(monkeypatch):
    _forced(monkeypatch, True)
    x, y, z, masks = _scores(4, 1, 30, 5, "ties")
    run = input_kendall_swap_means(x, y, z, min_pairs=2, variant="b")
    whole = run(masks)
    parts = [run(masks[k:k + 3]) for k in range(0, len(masks), 3)]
    for which in (0, 1):
        np.testing.assert_array_equal(whole[which], np.concatenate([p[which] for p in parts], axis=-1))


@pytest.mark.parametrize("s", [33, 100, 300])  # ranks in 2, 4 and 10 words (past SCAN_WORDS: the table of words)
def test_plain_inputs_by_bitmap_words(monkeypatch, s):
    """Inputs without ties take the bitmap lanes; more than one lane block of draws, a partial one, and an
    input with ties beside them: the same integers as the pair form."""
    rng = np.random.default_rng(s)
    x, y, z = (rng.normal(size=(2, s, 4)) for _ in range(3))
    x[:, :, 3] = np.round(x[:, :, 3])  # one input with ties: the draw-by-draw count
    masks = rng.random((70, s, 4)) < 0.5
    _forced(monkeypatch, False)
    _, pair = _integers(x, y, z, masks, "b")
    _forced(monkeypatch, True)
    forms, sort = _integers(x, y, z, masks, "b")
    assert forms.sort is not None
    assert (forms.sort.info[:, :3, 1] == 2 * s).all() and (forms.sort.info[:, 3, 1] < 2 * s).all()
    assert len(sort) == len(pair)
    for got, expected in zip(sort, pair):
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("s", [255, 256])  # ranks in 8 words: the packed counts of every word at their largest
def test_packed_word_counts_at_their_largest(monkeypatch, s):
    """Metrics in the target's order (and reversed): every system's rank is above (below) all the earlier
    ones, so the count of a word's byte reaches the number of systems before it; the same integers as the
    pair form, with masks all 0, all 1 and random."""
    z = np.arange(s, dtype=np.float64)
    x = np.stack([2 * z, -2 * z, 2 * z[::-1]], axis=-1)[None]  # (1, S, 3)
    y = np.stack([2 * z + 1, -2 * z - 1, 2 * z + 1], axis=-1)[None]
    target = np.broadcast_to(z[None, :, None], x.shape).copy()
    masks = np.random.default_rng(s).random((70, s, 3)) < 0.5
    masks[:2] = False
    masks[2:4] = True
    _forced(monkeypatch, False)
    _, pair = _integers(x, y, target, masks, "b")
    _forced(monkeypatch, True)
    forms, sort = _integers(x, y, target, masks, "b")
    assert forms.sort is not None and (forms.sort.info[..., 1] == 2 * s).all()
    for got, expected in zip(sort, pair):
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("kind", ["continuous", "ties"])
def test_threads_never_change_a_count(monkeypatch, kind):
    """Runs of inputs counted on threads give every count of one run."""
    _forced(monkeypatch, True)
    x, y, z, masks = _scores(5, 2, 40, 9, kind)
    out = {}
    for work in (1, 1 << 62):  # a thread for every run of inputs / one run
        monkeypatch.setattr(swap_kendall_sort, "THREAD_WORK", work)
        monkeypatch.setattr(swap_kendall_sort, "_cores", lambda: 3)
        out[work] = _integers(x, y, z, masks, "b")[1]
    for got, expected in zip(out[1], out[1 << 62]):
        np.testing.assert_array_equal(got, expected)
