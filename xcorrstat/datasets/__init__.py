"""Real meta-evaluation data bundled with xcorrstat.

Currently one dataset, :func:`summeval`: SummEval human judgments and 34
automatic metric scores for 16 summarization systems on 100 CNN/DailyMail
test documents.
"""

from ._summeval import summeval, summeval_path

__all__ = ["summeval", "summeval_path"]
