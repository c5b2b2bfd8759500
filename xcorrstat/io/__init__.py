"""Scores in and out: tables (CSV, TSV, JSON Lines, Parquet, netCDF) to labelled Datasets."""

from .tables import (
    LABEL_GUESSES,
    SUPPORTED_FORMATS,
    from_dataframe,
    guess_label_columns,
    read,
)

__all__ = ["LABEL_GUESSES", "SUPPORTED_FORMATS", "from_dataframe", "guess_label_columns", "read"]
