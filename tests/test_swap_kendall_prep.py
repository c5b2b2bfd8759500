"""The compiled preparation of the swapped input-level Kendall variants, against the NumPy algorithm it
replaced: the same operands, bit for bit."""

import numpy as np
import pytest

from xcorrstat._kernels.rank import input_swap as swap_kendall
from xcorrstat._kernels.rank.input_gaps import ACC_VARIANTS
from xcorrstat._kernels.linear.forms import pair_incidence
from xcorrstat._types import Variant

_PREP_CELLS = 1 << 16
#: ``(const_x, const_y - const_x, linear parts (..., 2, S), quadratic part (..., K))`` of one form.
_Parts = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def _prepare_numpy(zx, zy, z, eps, variant, min_pairs):
    """The NumPy preparation: blocks of (pair of metrics, input, pair of systems) cells, laid out."""
    p, s, i = zx.shape
    k = s * (s - 1) // 2
    o = swap_kendall.empty_operands(zx, zy, z, variant)  # the package's empty operands, filled here by NumPy
    value, value_diff, ties, ties_diff, counts, tied, valid, valid_y, gaps = o
    dtype = value.dtype
    pb = max(1, min(p, _PREP_CELLS // max(k, 1)))
    ib = max(1, min(i, _PREP_CELLS // max(pb * k, 1)))
    idx = np.triu_indices(s, 1)
    inc = pair_incidence(s, dtype)
    xs, ys, zs, vs = (swap_kendall._systems_last(a) for a in (zx, zy, z, valid))
    vys = vs if gaps is None else swap_kendall._systems_last(valid_y)
    for p0 in range(0, p, pb):
        for i0 in range(0, i, ib):
            ps, ins = slice(p0, p0 + pb), slice(i0, i0 + ib)
            zt = zs[:1, ins] if zs.strides[0] == 0 else zs[ps, ins]
            num, tie, cnt, has_tie = _block_parts(xs[ps, ins], ys[ps, ins], zt, (vs[ps, ins], vys[ps, ins]), eps[ps],
                                                  variant, idx, inc)
            if variant in ACC_VARIANTS and gaps is None:
                num = (num[0] + cnt[0] - cnt[1],) + num[1:]
            if tie is not None and variant in ACC_VARIANTS:
                num = tuple(a + b for a, b in zip(num, tie))
            _lay_out(num, value, value_diff, ins, ps)
            if ties is not None and tie is not None:
                _lay_out(tie, ties, ties_diff, ins, ps)
            if gaps is not None:
                gaps.add(ps, ins, vs[ps, ins], vys[ps, ins], zt)
            tied[ps] |= has_tie
            counts[:, ins, ps] = np.transpose(cnt, (0, 2, 1))
    raw = (value, value_diff, ties, ties_diff, counts, tied)
    return swap_kendall._forms(o, variant, min_pairs), raw


def _block_parts(
    xt: np.ndarray, yt: np.ndarray, zt: np.ndarray, vt: tuple[np.ndarray, np.ndarray], eps: np.ndarray,
    variant: Variant,
    idx: tuple[np.ndarray, np.ndarray], inc: np.ndarray,
) -> tuple[_Parts, _Parts | None, np.ndarray, np.ndarray]:
    """Numerator parts, metric-tie parts (None without a metric tie), ``(n0, tz)`` and which pairs have a tie.

    xt, yt: (Pb, Ib, S) blocks and vt their validity (target included; one array twice when they are missing
    in the same cells), zt the same or (1, Ib, S) for a target shared by the pairs;
    the comparisons run over the system pairs ``idx`` (a < b) in int8.
    """
    a_idx, b_idx = idx
    vx, vy = vt
    ends_v = [(np.take(v, a_idx, axis=-1), np.take(v, b_idx, axis=-1)) for v in ((vx,) if vy is vx else (vx, vy))]
    w = ends_v[0][0] & ends_v[0][1]  # valid pairs of systems of X: (Pb, Ib, K)
    ends = [(np.take(src, a_idx, axis=-1), np.take(src, b_idx, axis=-1)) for src in (xt, yt)]
    with np.errstate(invalid="ignore"):
        dz = np.take(zt, a_idx, axis=-1) - np.take(zt, b_idx, axis=-1)
        g = _sign(dz, 0.0)  # the gold sign (0 for a missing target; a missing metric cell signs 0 below)
        gold_tie = w & (dz == 0)
        sg, eq = [], []
        for u, v in ((0, 0), (0, 1), (1, 0), (1, 1)):
            d = ends[u][0] - ends[v][1]
            above, below = d > eps[:, None, None, u, v], d < -eps[:, None, None, u, v]
            sg.append(above.view(np.int8) - below.view(np.int8))
            wu = w if vy is vx else ends_v[u][0] & ends_v[v][1]  # the pair's cells both valid
            eq.append(wu & ~(above | below))  # a tie within eps between valid cells
    cnt = np.stack([w.sum(axis=-1), gold_tie.sum(axis=-1)])
    num = _parts(g, sg, inc)
    has_tie = np.zeros(w.shape[0], dtype=bool)
    if variant != "a":
        has_tie = (eq[0] | eq[1] | eq[2] | eq[3]).any(axis=(1, 2))
    if not has_tie.any():
        return num, None, cnt, has_tie
    # tau-b counts the metric ties; acc_eq weighs them +2 on a gold tie and -1 otherwise (ties carry validity)
    wt = np.ones_like(g) if variant == "b" else 3 * (dz == 0).view(np.int8) - 1
    return num, _parts(wt, [e.view(np.int8) for e in eq], inc), cnt, has_tie


def _sign(d: np.ndarray, eps: float) -> np.ndarray:
    """sgn_eps(d) in int8 (0 within eps, and for NaN)."""
    return (d > eps).view(np.int8) - (d < -eps).view(np.int8)


def _parts(wgt: np.ndarray, forms: list[np.ndarray], inc: np.ndarray) -> _Parts:
    """Constant, linear and quadratic parts of ``sum wgt * f`` with ``f`` the pair form under the mask.

    ``forms`` are the four pair values ``f_uv`` (u, v: X or Y at the first and second
    system of the pair), int8 (..., K). The linear parts of X' (row 0) and of Y' - X'
    (row 1) are scattered to the systems by one product with the incidence ``inc``.
    """
    f00, f01, f10, f11 = forms
    shape = np.broadcast_shapes(wgt.shape, f00.shape)  # a target shared by the pairs: wgt (1, Ib, K)
    k = shape[-1]
    cx = (wgt * f00).sum(axis=-1, dtype=np.int64)
    cy = (wgt * f11).sum(axis=-1, dtype=np.int64)
    quad = wgt * (f00 - f01 - f10 + f11)
    lin = np.empty(shape[:-1] + (2, 2 * k), dtype=inc.dtype)
    lin[..., 0, :k] = wgt * (f10 - f00)  # X' at the first system of the pair
    lin[..., 0, k:] = wgt * (f01 - f00)  # ... at the second
    own, cross = wgt * (f00 - f11), wgt * (f01 - f10)
    lin[..., 1, :k] = own + cross  # Y' - X'
    lin[..., 1, k:] = own - cross
    lin_s = (lin.reshape(-1, 2 * k) @ inc).reshape(shape[:-1] + (2, -1))
    return cx, cy - cx, lin_s, quad


def _lay_out(parts: _Parts, value: np.ndarray, value_diff: np.ndarray, ins: slice, ps: slice) -> None:
    """Write a block's parts (pairs ``ps``, inputs ``ins``) into the operands (I, rows, P)."""
    cx, cd, lin, quad = parts
    s = lin.shape[-1]
    value[ins, :s, ps] = np.transpose(lin[..., 0, :], (1, 2, 0))
    value[ins, s, ps] = cx.T
    value[ins, s + 1:, ps] = np.transpose(quad, (1, 2, 0))
    value_diff[ins, :s, ps] = np.transpose(lin[..., 1, :], (1, 2, 0))
    value_diff[ins, s, ps] = cd.T


def _case(seed, p, s, i, *, nan, shared, eps_kind, levels):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, levels, (p, s, i)) / 2.0
    y = rng.integers(0, levels, (p, s, i)) / 2.0 + 0.25 * rng.integers(0, 2, (p, s, i))
    z = rng.integers(0, 3, (1 if shared else p, s, i)).astype(float)
    if nan == "same":
        miss = rng.random((p, s, i)) < 0.2
        x[miss] = np.nan
        y[miss] = np.nan
        z[rng.random(z.shape) < 0.1] = np.nan
    elif nan == "own":
        x[rng.random((p, s, i)) < 0.2] = np.nan
        y[rng.random((p, s, i)) < 0.2] = np.nan
        z[rng.random(z.shape) < 0.1] = np.nan
    if shared:
        z = np.broadcast_to(z, (p, s, i))
    if eps_kind == "zero":
        eps = np.zeros((p, 2, 2))
    elif eps_kind == "scalar":
        eps = np.full((p, 2, 2), 0.25)
    else:  # per pair of metrics and (u, v)
        eps = rng.choice([0.0, 0.25, 0.5], size=(p, 2, 2))
    return x, y, z, eps


def _run_both(monkeypatch, x, y, z, eps, variant, min_pairs=2):
    finish = swap_kendall.finish_forms
    seen = []

    def spy(value, value_diff, ties, ties_diff, tied, counts, *rest):
        seen.append((value, value_diff, ties, ties_diff, counts, tied))
        return finish(value, value_diff, ties, ties_diff, tied, counts, *rest)

    expected, raw_expected = _prepare_numpy(x, y, z, eps, variant, min_pairs)
    monkeypatch.setattr(swap_kendall, "finish_forms", spy)
    got = swap_kendall._prepare(x, y, z, eps, variant, min_pairs)
    monkeypatch.setattr(swap_kendall, "finish_forms", finish)
    return expected, raw_expected, got, seen[0]


def _same(a, b):
    if a is None or b is None:
        return a is None and b is None
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=True)


@pytest.mark.parametrize("variant", ["a", "b", "23", "acc23"])
@pytest.mark.parametrize("s", [2, 3, 15])
@pytest.mark.parametrize("nan", ["none", "same", "own"])
@pytest.mark.parametrize("shared", [False, True])
def test_prepare_matches_numpy(monkeypatch, variant, s, nan, shared):
    for seed, eps_kind in enumerate(["zero", "scalar", "mixed"]):
        for levels in (2, 4, 50):  # many ties ... few
            p, i = (3, 7) if s == 15 else (5, 11)
            x, y, z, eps = _case(100 * seed + levels, p, s, i, nan=nan, shared=shared, eps_kind=eps_kind,
                                 levels=levels)
            expected, raw_expected, got, raw_got = _run_both(monkeypatch, x, y, z, eps, variant)
            for name, a, b in zip(("value", "value_diff", "ties", "ties_diff", "counts", "tied"), raw_expected,
                                  raw_got):
                assert _same(a, b), name
            for name in ("value", "value_diff", "ties", "ties_diff", "tied", "n0", "gold_untied", "scale",
                         "undefined", "varying"):
                assert _same(getattr(expected, name), getattr(got, name)), name
            assert expected.need == got.need
            assert (expected.gaps is None) == (got.gaps is None) == (nan != "own")
            if expected.gaps is not None:
                for a, b in zip(expected.gaps, got.gaps):
                    if isinstance(a, tuple):
                        assert all(_same(u, v) for u, v in zip(a, b))
                    else:
                        assert _same(a, b)


@pytest.mark.parametrize("variant", ["a", "b", "23", "acc23"])
def test_prepare_matches_numpy_random(monkeypatch, variant):
    """Random shapes, several blocks of the NumPy algorithm, metric ties in some pairs of metrics only."""
    rng = np.random.default_rng(7)
    for _ in range(12):
        p, s, i = int(rng.integers(1, 40)), int(rng.choice([2, 3, 5, 15])), int(rng.integers(1, 60))
        x = rng.normal(size=(p, s, i))
        y = rng.normal(size=(p, s, i))
        coarse = rng.random(p) < 0.3  # pairs of metrics whose scores tie
        x[coarse] = np.round(x[coarse])
        y[coarse] = np.round(y[coarse] * 2) / 2
        z = np.round(rng.normal(size=(p, s, i)) * 2)
        if rng.random() < 0.5:
            miss = rng.random((p, s, i)) < 0.1
            x[miss] = y[miss] = np.nan
        if rng.random() < 0.5:
            z = np.broadcast_to(z[:1], z.shape)
        eps = rng.choice([0.0, 0.0, 0.1, 1.0], size=(p, 2, 2))
        expected, raw_expected, got, raw_got = _run_both(monkeypatch, x, y, z, eps, variant, min_pairs=3)
        for a, b in zip(raw_expected, raw_got):
            assert _same(a, b)
        assert _same(expected.tied, got.tied) and _same(expected.undefined, got.undefined)
