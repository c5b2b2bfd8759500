"""Swap kernels for two metrics missing in different cells: the valid set of a draw is linear in its mask.

When X and Y are missing in different cells, a swap changes which cells count. Per
input, a system's cell of ``X'`` is valid with ``V_s = c_s + m_s d_s``, where
``c_s`` is 1 when X's cell and the target's are there and ``d_s`` (-1, 0 or 1) the
change when Y's cell replaces it; ``Y'`` is valid with ``c_s + d_s - m_s d_s``. So:

* **Pearson** (:func:`input_pearson_gaps`): the six sums of r over the valid cells of an
  input (count, sums of x, x**2, z, z**2, xz) are each a constant plus a linear form in
  the mask, as on complete data: one matrix product per batch gives every draw.
  Vectors found (nearly) constant by these sums are recomputed from the swapped cells
  (:func:`xcorrstat._kernels.correlation.pearson`), so exact constancy decides NaN.
* **Kendall**: the valid systems and the target-tied valid pairs are forms in the mask too
  (:class:`xcorrstat._kernels.rank.input_gaps.GapCounts`, the rank family's).

Every value equals the statistic of the explicitly swapped matrices (the tests check
this to 1e-12 against scipy and pair counting); the work stays linear in the cells.
"""

from __future__ import annotations

import numpy as np

from ..correlation import pearson
from .forms import SwapRun, linear, linear_forms, per_input_masks

__all__ = ["NEAR_CONSTANT", "exact_where_flagged", "from_sums", "input_pearson_gaps"]

#: Sums whose variance is within this fraction of their sum of squares are checked on the swapped cells.
NEAR_CONSTANT = 1e-9


def _shifted(zx: np.ndarray, zy: np.ndarray, z: np.ndarray) -> tuple[np.ndarray, ...]:
    """The valid cells of X, Y (one common shift per input) and of the target (centred), 0 elsewhere."""
    zv = ~np.isnan(z)
    vx, vy = ~np.isnan(zx) & zv, ~np.isnan(zy) & zv
    count = np.maximum(vx.sum(axis=-2) + vy.sum(axis=-2), 1)
    shift = ((np.where(vx, zx, 0.0).sum(axis=-2) + np.where(vy, zy, 0.0).sum(axis=-2)) / count)[..., None, :]
    nz = np.maximum(zv.sum(axis=-2), 1)
    zc = np.where(zv, z - (np.where(zv, z, 0.0).sum(axis=-2) / nz)[..., None, :], 0.0)
    return vx, vy, np.where(vx, zx - shift, 0.0), np.where(vy, zy - shift, 0.0), zc


def input_pearson_gaps(zx: np.ndarray, zy: np.ndarray, z: np.ndarray, min_pairs: int) -> SwapRun:
    """Per-input Pearson r of X' and Y' with Z, any missing cells: ``run(m) -> two (P, I, B) arrays``.

    zx, zy, z are (P, S, I); an input with fewer than ``max(min_pairs, 2)`` valid
    systems in a draw, or with a constant X' (Y') or target over them, is NaN.

    Examples
    --------
    >>> zx = np.array([[[1.0], [2.0], [3.0], [np.nan]]]); zy = np.array([[[np.nan], [3.0], [2.0], [1.0]]])
    >>> z = np.array([[[1.0], [2.0], [3.0], [4.0]]])
    >>> rx, ry = input_pearson_gaps(zx, zy, z, 2)(np.zeros((1, 4, 1), dtype=bool))
    >>> float(rx[0, 0, 0]), float(ry[0, 0, 0])
    (1.0, -1.0)
    """
    vx, vy, e, f, zc = _shifted(zx, zy, z)
    ze, zf = np.where(vx, zc, 0.0), np.where(vy, zc, 0.0)
    parts_x = np.stack([vx.astype(np.float64), e, e * e, ze, ze * ze, e * zc], axis=1)  # (P, 6, S, I)
    parts_y = np.stack([vy.astype(np.float64), f, f * f, zf, zf * zf, f * zc], axis=1)
    coef = linear_forms(parts_y - parts_x)
    base = parts_x.sum(axis=-2)[..., None]  # (P, 6, I, 1)
    total = base + parts_y.sum(axis=-2)[..., None]
    del parts_x, parts_y
    need = max(int(min_pairs), 2)

    def run(m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        m = np.asarray(m, dtype=bool)
        sx = base + linear(per_input_masks(m, np.float64), coef)  # (P, 6, I, B)
        rx = from_sums(*(sx[:, k] for k in range(6)), need=need)
        np.subtract(total, sx, out=sx)
        ry = from_sums(*(sx[:, k] for k in range(6)), need=need)
        for r, swap_in, keep in ((rx, zy, zx), (ry, zx, zy)):
            exact_where_flagged(r, m, swap_in, keep, z, min_pairs)
        return rx, ry

    return run


def from_sums(n: np.ndarray, sx: np.ndarray, sxx: np.ndarray, sz: np.ndarray, szz: np.ndarray, sxz: np.ndarray,
              *, need: int) -> np.ndarray:
    """Pearson's r from the sums over the valid cells (count, x, x**2, z, z**2, xz); NaN with fewer than
    ``need`` cells, and a flag (``inf``) where x or the target is nearly constant, for an exact check.

    Examples
    --------
    >>> x, z = np.array([1.0, 2.0, 4.0]), np.array([1.0, 3.0, 2.0])
    >>> sums = (np.array([v]) for v in (3.0, x.sum(), x @ x, z.sum(), z @ z, x @ z))
    >>> from_sums(*sums, need=2).round(6).tolist()
    [0.327327]
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        varx = n * sxx - sx * sx
        varz = n * szz - sz * sz
        r = np.clip((n * sxz - sx * sz) / np.sqrt(varx * varz), -1.0, 1.0)
    flagged = (varx <= NEAR_CONSTANT * n * sxx) | (varz <= NEAR_CONSTANT * n * szz)
    r[flagged] = np.inf
    r[n < need] = np.nan
    return r


def exact_where_flagged(r: np.ndarray, m: np.ndarray, swap_in: np.ndarray, keep: np.ndarray, z: np.ndarray,
                         min_pairs: int) -> None:
    """Replace the flagged values (``inf``) of r (P, I, B) by Pearson's r of the explicitly swapped cells."""
    p, i, b = np.nonzero(np.isinf(r))
    if p.size:
        cells = np.where(m[b, :, i], swap_in[p, :, i], keep[p, :, i])  # (flagged, S)
        r[p, i, b] = pearson(cells, z[p, :, i], min_pairs=min_pairs)[0]
