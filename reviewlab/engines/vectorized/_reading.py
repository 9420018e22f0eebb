"""Reading a corpus's columns for the compiler: checked tables and batches, arguments on demand.

Lifecycle: :func:`parquet_batches` yields a Parquet corpus's checked batches (the next one
decoded on a second thread, or taken from :mod:`reviewlab.engines._prefetch`), and
:func:`corpus_table` a whole checked table of any other source; :class:`ArgsColumn` reads the
calls' arguments again from the file when a custom policy first asks; the memory a compile
frees goes back to the system once (:func:`return_freed_memory`).

Invariants: every bad value is an error naming file, row, episode and field; ids are unique
across a directory's partitions; at most one batch is read ahead. docs/architecture.md,
"Compiling from columns".
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeAlias

import pyarrow as pa
import pyarrow.compute as pc

from reviewlab.engines._prefetch import take
from reviewlab.recording._schema import Episode
from reviewlab.recording.columnar import (
    ColumnarFormatError,
    FlatColumns,
    check_table,
    conform,
    flat_columns,
    repeated_id_error,
)

JSONL_BATCH_LINES = 8192
"""Lines per batch when compiling a JSONL corpus (each is a Python object until gathered)."""

CorpusSource: TypeAlias = str | os.PathLike[str] | pa.Table | Sequence[Episode]


class ArgsColumn(Sequence[Any]):
    """Every call's arguments, decoded when first needed (only custom policy objects read them).

    ``load`` returns the arguments' JSON texts in corpus order; for a corpus on disk
    it reads them again from the file, so a compiled corpus holds no argument text.
    """

    def __init__(self, size: int, load: Callable[[], list[str]]) -> None:
        self._size = size
        self._load: Callable[[], list[str]] | None = load
        self._decoded: list[Any] | None = None
        self._lock = threading.Lock()  # a sweep's threads may all ask first

    def __getstate__(self) -> dict[str, Any]:
        """Picklable (a Dask worker may hand a compiled partition to another): the lock stays."""
        state = dict(self.__dict__)
        del state["_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def _all(self) -> list[Any]:
        decoded = self._decoded
        if decoded is None:
            with self._lock:
                if self._decoded is None:
                    assert self._load is not None
                    self._decoded = [json.loads(text) for text in self._load()]
                    self._load = None
                decoded = self._decoded
        return decoded

    def __len__(self) -> int:
        return self._size

    def __getitem__(self, index: Any) -> Any:
        return self._all()[index]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._all())


def corpus_table(source: CorpusSource) -> tuple[pa.Table, FlatColumns]:
    """The checked Arrow table of a corpus path, table or episode list, and its flat columns.

    Every bad value is an error naming file, row, episode and field; ids are unique
    across the partitions of a directory (checked on all ids at once).
    """
    from reviewlab.recording.columnar import episodes_table

    if isinstance(source, str | os.PathLike):
        path = Path(source)
        if path.suffix == ".parquet" or path.is_dir():
            return _parquet_table(path)
        from reviewlab.recording.jsonl import jsonl_table

        table = jsonl_table(path)
        return table, flat_columns(table)
    where = Path("<table>")
    table = conform(where, source if isinstance(source, pa.Table) else episodes_table(source))
    flat = flat_columns(table)
    problems = check_table(table, where, flat=flat)
    if problems:
        raise ColumnarFormatError(where, problems)
    return table, flat


def _parquet_table(path: Path) -> tuple[pa.Table, FlatColumns]:
    from reviewlab.recording.columnar._read import _open, partition_paths

    parts = partition_paths(path)
    tables = []
    for part in parts:
        table = conform(part, _open(part).read())
        flat = flat_columns(table)
        problems = check_table(table, part, flat=flat)
        if problems:
            raise ColumnarFormatError(part, problems)
        tables.append(table)
    if len(tables) == 1:
        return tables[0], flat
    combined = pa.concat_tables(tables)
    ids = combined.column("id").combine_chunks()
    if len(pc.unique(ids)) != len(ids):  # a repeat across partitions: name the later one
        seen: dict[str, tuple[Path, int]] = {}
        for part, table in zip(parts, tables, strict=True):
            for row, episode_id in enumerate(table.column("id").to_pylist(), start=1):
                first = seen.setdefault(episode_id, (part, row))
                if first != (part, row):
                    raise repeated_id_error(part, row, episode_id, first[0], first[1])
    del tables
    return combined, flat_columns(combined)


def return_freed_memory() -> None:
    """Give freed memory back to the system: Arrow's pool keeps the pages of freed buffers, and
    glibc's heap the holes left by the many batch-sized arrays a compile frees, both counted in
    the process's resident size until returned. (Only where glibc is the allocator.)"""
    pa.default_memory_pool().release_unused()
    if _TRIM is not None:
        _TRIM(0)


def _malloc_trim() -> Any:
    try:
        import ctypes

        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc (macOS, Windows, musl): nothing to trim
        return None


_TRIM = _malloc_trim()


def parquet_args(path: Path | str, rows: int) -> list[str]:
    """Every call's argument text of a Parquet corpus, read again from its file."""
    return [t for _, _, f in parquet_batches(path, rows) for t in argument_texts(f)]


def jsonl_args(path: Path, rows: int) -> list[str]:
    """Every call's argument text of a JSONL corpus, read again from its file."""
    from reviewlab.recording.jsonl import jsonl_batches

    return [t for _, _, f in jsonl_batches(path, rows) for t in argument_texts(f)]


def argument_texts(flat: FlatColumns) -> list[str]:
    """Every call's argument text of one batch's flat columns."""
    return list(flat.calls["args"].to_pylist())


def parquet_batches(path: Path | str, rows: int) -> Iterator[tuple[Path, int, FlatColumns]]:
    """Each partition's checked batches: ``(file, first row, flat columns)``."""
    from reviewlab.recording.columnar._read import _open, partition_paths

    for part in partition_paths(path):
        handle = _open(part)  # the version and layout checked, whoever decodes the batches
        first_row = 1
        prefetched = take(part, rows)  # decoded while the caller was importing (_prefetch)
        batches = (
            prefetched
            if prefetched is not None
            else _read_ahead(handle.iter_batches(batch_size=rows))
        )
        for batch in batches:
            table = conform(part, pa.Table.from_batches([batch]))
            flat = flat_columns(table)
            problems = check_table(table, part, first_row=first_row, flat=flat)
            if problems:
                raise ColumnarFormatError(part, problems)
            yield part, first_row, flat
            first_row += table.num_rows
            # Freed, not given back: the next batch, of the same size, reuses the pages (giving
            # them back after every batch made each batch fault them in again).
            del table, flat, batch


def _read_ahead(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """The batches, each next one decoded in a thread while the caller checks and gathers the
    current one (Arrow decodes without the GIL: the two overlap on a second core). At most one
    batch is read ahead."""
    with ThreadPoolExecutor(1, thread_name_prefix="reviewlab-read") as pool:
        ahead = pool.submit(next, batches, None)
        while True:
            batch = ahead.result()
            if batch is None:
                return
            ahead = pool.submit(next, batches, None)
            yield batch
            del batch
