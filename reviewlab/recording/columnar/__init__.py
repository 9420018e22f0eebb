"""The columnar corpus: episodes as Parquet, one file or a directory of partitions.

Written by :func:`write_columnar` (atomically, deterministic bytes), read back by
:func:`iter_columnar` and :func:`iter_tables`, checked column by column by
:func:`check_table` (one :class:`ColumnarFormatError` lists every bad value with file,
row, episode id and dotted field), and flattened once by :func:`flat_columns` for the
vectorized engine. The layout and its versioning: docs/recording-format.md, "The
columnar form (Parquet)". Internals: ``_write`` (schema, tables, partitions), ``_read``,
``_checks`` and ``_checks_v2``, ``_bad_values`` (the error), ``_flat``, ``_urls`` (fsspec
targets).
"""

from typing import TYPE_CHECKING

from reviewlab.core._lazy import lazy_names

if TYPE_CHECKING:
    from reviewlab.recording.columnar._bad_values import (
        BadValue,
        ColumnarFormatError,
        repeated_id_error,
    )
    from reviewlab.recording.columnar._checks import check_table, conform
    from reviewlab.recording.columnar._flat import FlatColumns, flat_columns
    from reviewlab.recording.columnar._read import (
        iter_columnar,
        iter_tables,
        partition_paths,
        read_table,
    )
    from reviewlab.recording.columnar._write import (
        ARROW_SCHEMA,
        CALL_TYPE,
        EXTENT_TYPE,
        LAYOUT,
        OPTIONAL_COLUMNS,
        PARTITION_ROWS,
        assemble_table,
        episodes_table,
        unique_ids,
        write_columnar,
        write_partitions,
        write_tables,
    )

_HOMES = {
    "ARROW_SCHEMA": "reviewlab.recording.columnar._write",
    "BadValue": "reviewlab.recording.columnar._bad_values",
    "CALL_TYPE": "reviewlab.recording.columnar._write",
    "ColumnarFormatError": "reviewlab.recording.columnar._bad_values",
    "EXTENT_TYPE": "reviewlab.recording.columnar._write",
    "FlatColumns": "reviewlab.recording.columnar._flat",
    "LAYOUT": "reviewlab.recording.columnar._write",
    "OPTIONAL_COLUMNS": "reviewlab.recording.columnar._write",
    "PARTITION_ROWS": "reviewlab.recording.columnar._write",
    "assemble_table": "reviewlab.recording.columnar._write",
    "check_table": "reviewlab.recording.columnar._checks",
    "conform": "reviewlab.recording.columnar._checks",
    "episodes_table": "reviewlab.recording.columnar._write",
    "flat_columns": "reviewlab.recording.columnar._flat",
    "iter_columnar": "reviewlab.recording.columnar._read",
    "iter_tables": "reviewlab.recording.columnar._read",
    "partition_paths": "reviewlab.recording.columnar._read",
    "read_table": "reviewlab.recording.columnar._read",
    "repeated_id_error": "reviewlab.recording.columnar._bad_values",
    "unique_ids": "reviewlab.recording.columnar._write",
    "write_columnar": "reviewlab.recording.columnar._write",
    "write_partitions": "reviewlab.recording.columnar._write",
    "write_tables": "reviewlab.recording.columnar._write",
}
"""Where each public name lives: imported on first use, so importing
``reviewlab.recording.columnar`` loads only what is asked for."""

__all__ = [
    "ARROW_SCHEMA",
    "CALL_TYPE",
    "EXTENT_TYPE",
    "LAYOUT",
    "OPTIONAL_COLUMNS",
    "PARTITION_ROWS",
    "BadValue",
    "ColumnarFormatError",
    "FlatColumns",
    "assemble_table",
    "check_table",
    "conform",
    "episodes_table",
    "flat_columns",
    "iter_columnar",
    "iter_tables",
    "partition_paths",
    "read_table",
    "repeated_id_error",
    "unique_ids",
    "write_columnar",
    "write_partitions",
    "write_tables",
]

__getattr__, __dir__ = lazy_names(__name__, _HOMES)
