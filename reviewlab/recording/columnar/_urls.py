"""Writing a columnar corpus to an fsspec URL (``file://``, ``memory://``, ``s3://`` ...).

Lifecycle of :func:`write_tables_url`: every file is written under a temporary name beside
the target (``.NAME.<random>.tmp``: one file, or a directory of partitions) → when the last
one is closed, an existing target is moved aside, the temporary one is moved into place, and
the old one removed. A failure before the move (a repeated id, a full disk, an interrupt)
removes the temporary files and leaves the target as it was.

On a local disk (``file://``) the move is a rename, as atomic as the local writer's. An object
store has no rename: the move copies each object, so a reader listing the target *during*
the move can see part of it; what no failure can do is leave a partial corpus where the old
one was before the move began.
"""

from __future__ import annotations

import contextlib
import posixpath
import uuid
from collections.abc import Callable, Iterable
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from reviewlab.recording._locations import url_filesystem


class _PartWriter:
    """A Parquet writer on an fsspec file: closing it closes both (Arrow leaves the file open)."""

    def __init__(self, fs: Any, path: str, schema: pa.Schema) -> None:
        self._file = fs.open(path, "wb")
        self._writer = pq.ParquetWriter(self._file, schema)

    def write_table(self, table: pa.Table) -> None:
        self._writer.write_table(table)

    def close(self) -> None:
        try:
            self._writer.close()
        finally:
            self._file.close()


def write_tables_url(
    tables: Iterable[pa.Table],
    url: str,
    *,
    rows_per_partition: int,
    checked: Callable[[pa.Table], pa.Table],
    schema: pa.Schema,
    split: Callable[..., int],
) -> int:
    """Write ``tables`` (each through ``checked``) to ``url``: one ``.parquet`` object, or a
    directory of partitions cut by ``split``; the count (see the module docstring). The
    format's ``schema`` and ``split`` (:func:`reviewlab.recording.columnar.write_partitions`)
    are passed in: that module calls this one."""
    fs, path = url_filesystem(url)
    path = path.rstrip("/")
    parent, name = posixpath.split(path)
    temp = posixpath.join(parent, f".{name}.{uuid.uuid4().hex}.tmp")
    if parent:
        fs.makedirs(parent, exist_ok=True)
    try:
        if name.endswith(".parquet"):
            count = 0
            writer = _PartWriter(fs, temp, schema)
            try:
                for table in tables:
                    writer.write_table(checked(table))
                    count += table.num_rows
            finally:
                writer.close()
            fs.mv(temp, path)
            return count
        fs.makedirs(temp, exist_ok=True)
        count = split(
            (checked(t) for t in tables),
            rows_per_partition,
            lambda part: _PartWriter(fs, posixpath.join(temp, part), schema),
        )
        _publish(fs, temp, path)
        return count
    except BaseException:
        with contextlib.suppress(FileNotFoundError, OSError):
            if fs.exists(temp):
                fs.rm(temp, recursive=True)
        raise


def _publish(fs: Any, temp: str, path: str) -> None:
    """Move the finished directory ``temp`` to ``path`` (an old one moved aside, then removed)."""
    old = None
    if fs.exists(path):
        if not fs.isdir(path):
            raise ValueError(f"{path}: exists and is not a directory")
        parent, name = posixpath.split(path)
        old = posixpath.join(parent, f".{name}.old-{uuid.uuid4().hex}")
        fs.mv(path, old, recursive=True)
    fs.mv(temp, path, recursive=True)
    if old is not None:
        with contextlib.suppress(FileNotFoundError, OSError):
            fs.rm(old, recursive=True)
