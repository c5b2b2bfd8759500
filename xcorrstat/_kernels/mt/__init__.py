"""The MT statistics of mt-metrics-eval: pairwise accuracy and its counts, soft pairwise accuracy,
the pair-outcome permutation test, and tie calibration (one sweep per metric and its count-weighted
form for bootstrap draws).

Its modules import nothing from this package's ``__init__``: each is imported by its own path.
"""
