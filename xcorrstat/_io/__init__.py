"""Scores in and out: tables (CSV, TSV, JSON Lines, Parquet, netCDF) to labelled Datasets."""

from .tables import (
    LABEL_GUESSES,
    SUPPORTED_FORMATS,
    from_dataframe,
    guess_label_columns,
    read,
)
from .mtme import MTME_LEVELS, is_mtme_testset, mtme_level, read_mtme

__all__ = ["LABEL_GUESSES", "MTME_LEVELS", "SUPPORTED_FORMATS", "from_dataframe", "guess_label_columns",
           "is_mtme_testset", "mtme_level", "read", "read_mtme"]
