"""Independent oracles shared by the oracle tests.

Everything here is written with plain Python loops, NumPy and ``scipy.stats``
only; nothing from xcorrstat is imported, so the tests compare the package
against a separate implementation of its rules.

Missing-value rule of every correlation: pair ``i`` is valid iff both values
are non-NaN; ``n`` is the number of valid pairs (always reported); the
correlation is NaN when fewer than ``min_pairs`` (and fewer than two) valid
pairs remain or when either side is constant over them, otherwise it is the
scipy statistic on the valid pairs.

Levels of a score matrix shaped ``(S, I)`` (systems x inputs), where a cell is
valid iff both scores are non-NaN:

* ``system``: per-system means over the valid cells (with ``complete_inputs``:
  only over inputs valid for every system), then one correlation across the
  systems (systems without a valid cell drop out);
* ``input``: one correlation across systems per input, averaged over the
  inputs where it is defined; ``n`` counts those inputs;
* ``global``: one correlation over all valid cells.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from hypothesis import HealthCheck, settings
from scipy import stats

ATOL = 1e-12

LEVELS = ["system", "input", "global"]
METHOD_VARIANTS = [
    ("pearson", "b"),
    ("spearman", "b"),
    ("kendall", "b"),
    ("kendall", "c"),
]
MV_IDS = ["pearson", "spearman", "kendall-b", "kendall-c"]


def hypothesis_settings(max_examples):
    """Hypothesis settings for oracle and property tests.

    ``max_examples`` examples, no deadline, and no health check failure for
    slow tests or large generated data.
    """
    return settings(
        max_examples=max_examples,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


def scipy_statistic(a, b, method, variant):
    """The scipy statistic on two clean 1-D samples (warnings silenced).

    ``method`` is ``"pearson"``, ``"spearman"`` or ``"kendall"``; ``variant``
    (``"b"`` or ``"c"``) is the Kendall variant and is ignored otherwise.
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if method == "pearson":
            res = stats.pearsonr(a, b)
        elif method == "spearman":
            res = stats.spearmanr(a, b)
        elif method == "kendall":
            res = stats.kendalltau(a, b, variant=variant)
        else:  # pragma: no cover - guard against typos in the tests
            raise AssertionError(method)
    return float(res.statistic)


def oracle_corr(xs, zs, method, variant, min_pairs=3):
    """Correlation of two 1-D sequences after pairwise deletion of NaNs.

    Returns ``(r, n)``: the statistic (NaN by the missing-value rule) and the
    number of valid pairs.
    """
    a, b = [], []
    for xv, zv in zip(xs, zs):
        if not (math.isnan(xv) or math.isnan(zv)):
            a.append(float(xv))
            b.append(float(zv))
    n = len(a)
    if n < max(min_pairs, 2):
        return math.nan, n
    if all(v == a[0] for v in a) or all(v == b[0] for v in b):
        return math.nan, n
    return scipy_statistic(a, b, method, variant), n


def oracle_level(x, z, level, method, variant, *, min_pairs=3, complete_inputs=False, average="macro"):
    """Level correlation of one ``(S, I)`` score matrix against another, by explicit loops.

    Returns ``(r, n)``: ``n`` is the number of valid pairs of the correlation
    (systems, or cells at the global level), or at the input level the number
    of inputs whose correlation is defined. System means are exactly rounded
    (:func:`math.fsum`), so ties between them do not depend on summation order.
    """
    n_sys, n_inp = x.shape

    def ok(s, j):
        return not (math.isnan(x[s, j]) or math.isnan(z[s, j]))

    if level == "system":
        usable = [j for j in range(n_inp) if not complete_inputs or all(ok(s, j) for s in range(n_sys))]
        mx, mz = [], []
        for s in range(n_sys):
            cols = [j for j in usable if ok(s, j)]
            if cols:
                mx.append(math.fsum(x[s, j] for j in cols) / len(cols))
                mz.append(math.fsum(z[s, j] for j in cols) / len(cols))
            else:
                mx.append(math.nan)
                mz.append(math.nan)
        return oracle_corr(mx, mz, method, variant, min_pairs)
    if level in ("input", "within_system"):
        # input level: each input's systems; within-system level: each system's inputs
        rows = [(x[:, j], z[:, j]) for j in range(n_inp)] if level == "input" else list(zip(x, z))
        defined = []
        for rx, rz in rows:
            r, _ = oracle_corr(rx, rz, method, variant, min_pairs)
            if not math.isnan(r):
                size = sum(not (math.isnan(a) or math.isnan(b)) for a, b in zip(rx, rz))
                defined.append((r, size if average == "weighted" else 1))
        if not defined:
            return math.nan, 0
        return sum(r * k for r, k in defined) / sum(k for _, k in defined), len(defined)
    if level == "global":
        xs = [x[s, j] for s in range(n_sys) for j in range(n_inp)]
        zs = [z[s, j] for s in range(n_sys) for j in range(n_inp)]
        return oracle_corr(xs, zs, method, variant, min_pairs)
    raise AssertionError(level)  # pragma: no cover


def broadcast_oracle(func, x, z, core_ndim, *args, **kwargs):
    """Apply a 1-D or 2-D oracle to every slice of the broadcast inputs.

    ``x`` and ``z`` are broadcast against each other; ``func(x_slice, z_slice,
    *args, **kwargs)`` is called for every index of the leading shape (all but
    the last ``core_ndim`` axes) and must return ``(r, n)``. Returns float64
    ``r`` and int64 ``n`` arrays of the leading shape.
    """
    xb, zb = np.broadcast_arrays(np.asarray(x, dtype=np.float64), np.asarray(z, dtype=np.float64))
    lead = xb.shape[: xb.ndim - core_ndim]
    r = np.full(lead, np.nan, dtype=np.float64)
    n = np.zeros(lead, dtype=np.int64)
    for idx in np.ndindex(*lead):
        r[idx], n[idx] = func(xb[idx], zb[idx], *args, **kwargs)
    return r, n


def assert_same(actual, expected):
    """Assert that a kernel's ``(r, n)`` equals the oracle's ``(r, n)``.

    Same shapes, float64 ``r`` and int64 ``n``, equal counts, NaN in the same
    places, and ``r`` equal within :data:`ATOL`.
    """
    r, n = (np.asarray(a) for a in actual)
    r_exp, n_exp = expected
    assert r.shape == r_exp.shape, (r.shape, r_exp.shape)
    assert n.shape == n_exp.shape, (n.shape, n_exp.shape)
    assert r.dtype == np.float64, r.dtype
    assert n.dtype == np.int64, n.dtype
    np.testing.assert_array_equal(n, n_exp, err_msg="counts differ")
    np.testing.assert_array_equal(np.isnan(r), np.isnan(r_exp), err_msg="NaN positions differ")
    np.testing.assert_allclose(r, r_exp, rtol=0, atol=ATOL)


def assert_values_same(actual, expected, what=""):
    """Assert equal shapes, NaN in the same places, and values equal within :data:`ATOL`."""
    actual = np.asarray(actual, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    assert actual.shape == expected.shape, what
    np.testing.assert_array_equal(np.isnan(actual), np.isnan(expected), err_msg=f"NaN positions {what}")
    np.testing.assert_allclose(actual, expected, rtol=0, atol=ATOL, equal_nan=True, err_msg=what)


# --------------------------------------------------------------------------- #
# Kendall variants by counting pairs
# --------------------------------------------------------------------------- #
def kendall_counts(pairs):
    """(C, D, T_g, T_m, T_gm) of an iterable of (metric difference, gold difference, metric epsilon)."""
    counts = dict(c=0, d=0, tg=0, tm=0, tgm=0)
    for dm, dg, eps in pairs:
        metric_tie, gold_tie = abs(dm) <= eps, dg == 0
        if metric_tie and gold_tie:
            counts["tgm"] += 1
        elif gold_tie:
            counts["tg"] += 1
        elif metric_tie:
            counts["tm"] += 1
        elif math.copysign(1, dm) == math.copysign(1, dg):
            counts["c"] += 1
        else:
            counts["d"] += 1
    return counts["c"], counts["d"], counts["tg"], counts["tm"], counts["tgm"]


def kendall_from_counts(c, d, tg, tm, tgm, variant):
    """tau-a, tau-b, tau_eq ("23") or acc_eq ("acc23") from pair counts (NaN where tau-b is 0/0)."""
    n = c + d + tg + tm + tgm
    if variant == "a":
        return (c - d) / n
    if variant == "b":
        den = (n - tg - tgm) * (n - tm - tgm)
        return math.nan if den <= 0 else (c - d) / math.sqrt(den)
    if variant == "acc23":
        return (c + tgm) / n
    return (c + tgm - d - tg - tm) / n


def exact_integer_scores(rng, shape, nan_frac):
    """Integer scores 0..6 (NaN where missing) with mean exactly 3 and std exactly 2.

    Values -3..3 over the non-missing cells are drawn until they sum to 0 and
    their squares sum to 4 x (number of cells); 3 is then added.
    """
    out = np.full(shape, np.nan)
    present = rng.random(shape) >= nan_frac if nan_frac else np.ones(shape, dtype=bool)
    n = int(present.sum())
    while True:
        cand = rng.integers(-3, 4, size=(20_000, n))
        ok = (cand.sum(axis=1) == 0) & ((cand**2).sum(axis=1) == 4 * n)
        if ok.any():
            out[present] = cand[np.argmax(ok)] + 3.0
            return out


def integer_scores(rng, shape, nan_frac):
    v = rng.integers(0, 4, size=shape).astype(float)
    if nan_frac:
        v[rng.random(shape) < nan_frac] = np.nan
    return v
