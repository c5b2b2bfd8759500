"""Reports: the ranked table of every metric's correlation, CI and significance cluster, with figures."""

from .build import Report, report
from .tables import ranked_frame, to_latex, to_markdown

__all__ = ["Report", "ranked_frame", "report", "to_latex", "to_markdown"]
