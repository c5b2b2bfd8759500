"""xcorrstat: meta-evaluation of automatic metrics against human judgments.

Labelled (xarray) and vectorised: every metric is correlated with a human target
at the system, input or global level in one call, eagerly or lazily with Dask.

Examples
--------
>>> import xcorrstat
>>> ds = xcorrstat.datasets.summeval()
>>> r = ds.corrstat.correlate(target="expert_relevance", level="system", method="kendall")
>>> round(float(r.sel(metric="bertscore_recall")), 2)
0.75
"""

from . import agreement, datasets, diagnostics, kernels, plot
from . import accessors as _accessors  # noqa: F401  (registers .corrstat)
from ._version import __version__
from .compare import compare
from .correlate import correlate
from .io import from_dataframe, read
from .options import get_options, set_options
from .resampling.bootstrap import bootstrap, fisher
from .resampling.meanscore import format_ci, mean_ci, paired_difference_ci
from .resampling.paired import paired_bootstrap_test
from .resampling.permutation import permutation_test
from .reporting import Report, report
from .pairwise import kendall_like, pairwise_accuracy, pairwise_difference_pearson, pairwise_differences
from .softpairwise import soft_pairwise_accuracy
from .tasks import aggregate_tasks
from .ties import calibrate_ties
from .tidy import tidy
from .williams import williams_test

__all__ = [
    "__version__",
    "aggregate_tasks",
    "agreement",
    "bootstrap",
    "calibrate_ties",
    "compare",
    "correlate",
    "datasets",
    "diagnostics",
    "fisher",
    "format_ci",
    "from_dataframe",
    "get_options",
    "kendall_like",
    "kernels",
    "mean_ci",
    "paired_bootstrap_test",
    "paired_difference_ci",
    "pairwise_accuracy",
    "pairwise_difference_pearson",
    "pairwise_differences",
    "permutation_test",
    "plot",
    "read",
    "Report",
    "report",
    "set_options",
    "soft_pairwise_accuracy",
    "tidy",
    "williams_test",
]
