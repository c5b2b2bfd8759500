"""The linear family (Pearson's r): statistics whose sums are linear in the draw vector (a bootstrap
draw's counts, a permutation draw's swap mask), so a batch of draws is a few matrix products.

Its modules import nothing from this package's ``__init__``: each is imported by its own path.
"""
