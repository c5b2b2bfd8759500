"""Reports: the ranked table of every metric's correlation, CI and significance cluster, with figures."""

from .build import Report, report

__all__ = ["Report", "report"]
