"""Agreement analyses on any labelled dim: correlation matrices, Jaccard of selected sets, leaderboards.

The questions benchmark studies ask of themselves -- do two settings of a
hyperparameter give the same results, do two strategies pick the same items, do
two evaluation choices rank the competitors the same way -- as calls on labelled
data:

* :func:`matrix`: Pearson/Spearman/Kendall correlations between every pair of
  labels of a dim (or, with ``level=``, between the scores of a score Dataset);
* :func:`jaccard`: pairwise Jaccard similarity of sets held as boolean masks;
* :func:`leaderboard` and :func:`leaderboard_agreement`: leaderboards of
  competitors over conditions and Kendall tau-b between them, with bootstrap
  intervals over the conditions;
* :func:`synthetic_benchmark`: a small seeded benchmark to try them on.

Results compare a dim with its copy ``f"other_{dim}"``.
"""

from ._corrmatrix import matrix
from ._ranking import leaderboard, leaderboard_agreement
from ._selection import jaccard
from ._synthetic import synthetic_benchmark

__all__ = ["jaccard", "leaderboard", "leaderboard_agreement", "matrix", "synthetic_benchmark"]
