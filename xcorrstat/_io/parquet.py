"""Reading a Parquet score table: its schema checked before its data are read.

Helper of :func:`xcorrstat._io.read`. A column of nested values (lists, structs, maps) is
neither a score nor a label and is refused by name and type; the data's size once read, as the
file's metadata give it (its uncompressed size, and at least 8 bytes a cell), must be within the
reading limit (:func:`~xcorrstat._io.limits.read_limit`).
Decimal columns are read as numbers (:func:`~xcorrstat._io.columns.score_array` turns them to float64).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from .._display import cut
from .limits import check_columns, check_data_size

__all__ = ["read_parquet"]


def _check_schema(path: str, schema: Any) -> None:
    """Refuse a column of nested values, naming it and its Parquet type."""
    import pyarrow as pa

    for field in schema:
        kind = field.type.value_type if pa.types.is_dictionary(field.type) else field.type
        if pa.types.is_nested(kind):
            raise ValueError(f"{path!r}: column {cut(field.name)} holds {kind} values (nested: lists, structs or "
                             "maps); a score column holds numbers and a label column text or numbers: flatten "
                             "it or leave it out")


def read_parquet(path: str) -> pd.DataFrame:
    """The table of a Parquet file, after its schema and its size are checked."""
    import pyarrow.parquet as pq

    meta = pq.read_metadata(path)
    check_columns(path, meta.num_columns)
    _check_schema(path, meta.schema.to_arrow_schema())
    encoded = sum(meta.row_group(k).total_byte_size for k in range(meta.num_row_groups))
    check_data_size(path, max(encoded, 8 * meta.num_rows * meta.num_columns), "Parquet data")
    return pd.read_parquet(path, engine="pyarrow")
