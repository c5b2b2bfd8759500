"""Resampling engine: draws keyed by draw id, batched statistics, intervals."""
