"""WMT metrics tasks end to end: each test set's roles and each year's task list as data, and
running them.

Read a test set with :func:`xcorrstat.read_mtme`, take the task list of a year with
:func:`task_set` (or build your own :class:`Task` list), and :func:`run_tasks` ranks the
metrics of every task with significance clusters and averages the ranks over the tasks.
:func:`roles` gives each language pair's standard reference and human scores, outlier systems,
primary metrics and baselines; :func:`protocol` a year's task list as a dict to edit.
"""

from ._protocols import protocol, task_set
from ._roles import roles
from ._run import TaskSkippedWarning, run_tasks
from ._specs import Task

__all__ = ["Task", "TaskSkippedWarning", "protocol", "roles", "run_tasks", "task_set"]
