"""Method validation on your own data: CI coverage, power and type-I error, normality.

Which interval and which test should you trust on *your* annotations? Deutsch, Dror &
Roth (2021) answer it with two simulations and a normality check; here each is one call.
"""

from ._coverage import ci_coverage
from ._normality import normality
from ._power import degrade, power_analysis

__all__ = ["ci_coverage", "degrade", "normality", "power_analysis"]
