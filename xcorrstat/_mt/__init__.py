"""MT meta-evaluation statistics as WMT and mt-metrics-eval compute them.

* :func:`pairwise_accuracy`, :func:`kendall_like`: agreement of system (or item) pairs;
* :func:`soft_pairwise_accuracy`: WMT24's soft pairwise accuracy, and
  :func:`soft_pairwise_accuracy_test`: its permutation test between metrics;
* :func:`pairwise_differences`, :func:`pairwise_difference_pearson`: Pearson of pairwise differences;
* :func:`calibrate_ties`: the tie threshold (epsilon) that maximises tau with ties.
"""

from .pairwise import (
    kendall_like,
    pairwise_accuracy,
    pairwise_difference_pearson,
    pairwise_differences,
)
from .softpairwise import soft_pairwise_accuracy
from .spatest import soft_pairwise_accuracy_test
from .ties import calibrate_ties

__all__ = ["calibrate_ties", "kendall_like", "pairwise_accuracy", "pairwise_difference_pearson",
           "pairwise_differences", "soft_pairwise_accuracy", "soft_pairwise_accuracy_test"]
