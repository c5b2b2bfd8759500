"""Is one metric's correlation with the target higher than another's?

* :func:`permutation_test`: swap the two metrics along named dims (PERM-SYSTEMS/INPUTS/BOTH);
* :func:`paired_bootstrap_test`: resample both metrics' correlations with the same draws;
* :func:`williams_test`: Williams' test for dependent correlations (and Steiger, Zou);
* :func:`compare`: every pair of metrics at once, corrected p-values and significance clusters;
* :func:`aggregate_tasks`: one ranking from many tasks (language pairs, levels).

The resampling tests apply at every level of :func:`xcorrstat.correlate` (system,
input, global, within-system); Williams' test at the system and global levels.
:mod:`.auto` draws until the corrected decisions are settled (``n_resamples="auto"``);
:mod:`.defaults` is the one table of defaults of the functions and the commands.
:mod:`.decisions` holds the one chain from pair p-values to corrections, significance
flags and clusters that :func:`compare` and :func:`aggregate_tasks` share.
"""

from .allpairs import compare
from .auto import OpenDecisionsWarning
from .paired import paired_bootstrap_test
from .permutation import permutation_test
from .tasks import aggregate_tasks
from .williams import williams_test

__all__ = ["OpenDecisionsWarning", "aggregate_tasks", "compare", "paired_bootstrap_test", "permutation_test", "williams_test"]
