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

from . import _signals  # noqa: F401  (first: in the xcorrstat command, Ctrl-C while the rest imports is one line)
from ._accessors import ResultAccessor, ScoresAccessor  # (importing them registers .corrstat)
from . import agreement, datasets, diagnostics, plot, wmt
from ._version import __version__
from ._correlation import (
    bootstrap,
    correlate,
    fisher,
    format_ci,
    mean_ci,
    paired_difference_ci,
)
from ._io import from_dataframe, mtme_level, read, read_mtme
from ._mt import (
    calibrate_ties,
    kendall_like,
    pairwise_accuracy,
    pairwise_difference_pearson,
    soft_pairwise_accuracy,
    soft_pairwise_accuracy_test,
)
from ._options import get_options, set_options
from ._reporting import Report, report
from ._resampling.settings import Bootstrap, Permutation, Williams
from ._significance import (
    OpenDecisionsWarning,
    aggregate_tasks,
    compare,
    paired_bootstrap_test,
    permutation_test,
    williams_test,
)
from ._tidy import tidy

__all__ = [
    "Bootstrap",
    "OpenDecisionsWarning",
    "Permutation",
    "Report",
    "ResultAccessor",
    "ScoresAccessor",
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
    "mean_ci",
    "mtme_level",
    "paired_bootstrap_test",
    "paired_difference_ci",
    "pairwise_accuracy",
    "pairwise_difference_pearson",
    "permutation_test",
    "plot",
    "read",
    "read_mtme",
    "report",
    "set_options",
    "soft_pairwise_accuracy",
    "soft_pairwise_accuracy_test",
    "tidy",
    "Williams",
    "williams_test",
    "wmt",
]
