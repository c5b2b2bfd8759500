"""WMT metrics tasks end to end: the official task lists as data, and running them.

Read a test set with :func:`xcorrstat.read_mtme`, take the task list of a year with
:func:`task_set` (or build your own :class:`Task` list), and :func:`run_tasks` ranks the
metrics of every task with significance clusters and averages the ranks over the tasks.
"""

from .run import GOLD, run_tasks, task_scores
from .specs import STATISTICS, TASK_SETS, Task, task_set

__all__ = ["GOLD", "STATISTICS", "TASK_SETS", "Task", "run_tasks", "task_scores", "task_set"]
