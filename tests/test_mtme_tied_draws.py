"""p-values of a ratio of counts: mt-metrics-eval's exact float comparison drops draws that tie the observed value.

mt-metrics-eval's ``PermutationSigDiff`` counts a draw when ``c2 - c1 >= delta`` in plain floating
point. For system-level pairwise accuracy (``agree / pairs``) a draw whose difference equals the
observed one as a fraction can come out a rounding error below it, and is not counted. The test
runs mt-metrics-eval's own ``PermutationSigDiff`` (with its ``Agreement`` as the statistic, the
accuracy of ``data.CompareMetricsWithGlobalAccuracy`` for one language pair), recovers each
draw's integer counts, and checks that (1) its p-value is its float recount of its draws, (2) the
exact count of its draws is never lower and is higher for some pairs of metrics, (3) xcorrstat's
counter (:func:`xcorrstat._resampling.pvalues.permutation_pvalue`, with a rounding tolerance) gives
the exact count on the same draws, and (4) ``compare``'s own p-value estimates the exact one
within Monte-Carlo error. Needs ``XCORRSTAT_MTME_SOURCE``.

Run as a script (``XCORRSTAT_MTME_SOURCE=... python tests/test_mtme_tied_draws.py``), it prints the
size of the effect that docs/mtme.md quotes: 10 data sets of 8, 12 and 16 systems, 4 metrics each.
"""

from __future__ import annotations

import itertools
from typing import Any, NamedTuple

import numpy as np
import pytest
import xarray as xr
from mtme_source import mtme_modules

import xcorrstat
from xcorrstat._resampling.pvalues import permutation_pvalue

K = 1000


class Pair(NamedTuple):
    delta: float  # mt-metrics-eval's observed difference
    mtme: float  # its p-value
    recount: float  # its draws counted again with its float comparison
    exact: float  # its draws counted on their integer counts
    tolerant: float  # its draws counted by xcorrstat's counter
    tied: float  # share of its draws that tie delta exactly
    ours: float  # xcorrstat's compare, its own draws
    ours_delta: float


def _scores(seed: int, n_sys: int) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    human = rng.normal(size=n_sys)
    return human, {f"m{k}": human + rng.normal(scale=0.6 + 0.2 * k, size=n_sys) for k in range(4)}


def measure(stats: Any, seed: int, n_sys: int) -> list[Pair]:
    """Every pair of metrics of one data set: mt-metrics-eval's test and xcorrstat's."""

    def accuracy(gold, metric):  # mt-metrics-eval's Agreement as a statistic
        agree, pairs = stats.Agreement(gold, metric)
        return agree / pairs, 0

    human, metrics = _scores(seed, n_sys)
    n_pairs = n_sys * (n_sys - 1) // 2
    ds = xr.Dataset({n: (("system", "input"), v[:, None]) for n, v in {**metrics, "human": human}.items()})
    ours = xcorrstat.compare(ds, target="human", level="input", method="kendall", variant="acc23", average="pairs",
                             test=xcorrstat.Permutation(("system", "input"), n_resamples=K, rng=seed,
                                                        pvalue="fraction"),
                             correction=None)
    out = []
    for a, b in itertools.combinations(metrics, 2):
        corr_a = stats.Correlation(n_sys, human.tolist(), metrics[a].tolist())
        corr_b = stats.Correlation(n_sys, human.tolist(), metrics[b].tolist())
        np.random.seed(seed)
        params = stats.PermutationSigDiffParams(block_size=K + 1)
        p_mtme, delta, _, corrs = stats.PermutationSigDiff(corr_a, corr_b, accuracy, "none", K, params)
        draws = np.array([c2 - c1 for c2, c1 in corrs])
        counts = np.array([(round(c2 * n_pairs), round(c1 * n_pairs)) for c2, c1 in corrs])
        assert np.allclose(counts / n_pairs, corrs, rtol=0, atol=1e-15)  # the draws are ratios of counts
        diff, observed = counts[:, 0] - counts[:, 1], round(delta * n_pairs)
        out.append(Pair(delta, p_mtme, float(np.mean(draws >= delta)), float(np.mean(diff >= observed)),
                        float(permutation_pvalue(draws, delta, alternative="greater", pvalue="fraction")),
                        float(np.mean(diff == observed)), float(ours["pvalue"].sel(metric=b, other_metric=a)),
                        float(ours["delta"].sel(metric=b, other_metric=a))))
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_mtme_drops_tied_draws_and_xcorrstat_counts_them(seed):
    (stats,) = mtme_modules("stats")
    pairs = measure(stats, seed, 12)
    for p in pairs:
        assert p.mtme == p.recount  # (1) its float comparison
        assert p.exact >= p.mtme  # (2)
        assert p.tolerant == p.exact  # (3)
        assert p.ours_delta == pytest.approx(p.delta, abs=1e-12)
        assert p.ours == pytest.approx(p.exact, abs=5 * np.sqrt(max(p.exact * (1 - p.exact), 1e-3) * 2 / K))  # (4)
    assert max(p.exact - p.mtme for p in pairs) > 0  # the effect is there on these data


def main() -> None:
    (stats,) = mtme_modules("stats")
    print("systems  tied draws (mean)  pairs where it drops some  p below exact: mean  max  xcorrstat == exact")
    for n_sys in (8, 12, 16):
        pairs = [p for seed in range(10) for p in measure(stats, seed, n_sys)]
        low = np.array([p.exact - p.mtme for p in pairs])
        print(f"{n_sys:7d}  {np.mean([p.tied for p in pairs]):17.3f}  {np.mean(low > 0):25.2f}  "
              f"{low.mean():17.4f}  {low.max():.3f}  {all(p.tolerant == p.exact for p in pairs)}")


if __name__ == "__main__":
    main()
