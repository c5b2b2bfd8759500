"""The rank family: Kendall's tau (every variant) and Spearman's rho, from exact integer counts --
pair counts and mid-ranks of the S values of each draw at system level, per-row inversion and tie
counts at input and global level -- by pairs or by sorting.

Its modules import nothing from this package's ``__init__``: each is imported by its own path.
"""
