"""Columnar episode files: the episode schema as Parquet, one file or a directory of partitions.

One Parquet row per episode, in corpus order, with nested lists for its rounds and calls
(:data:`ARROW_SCHEMA`), so one file is one self-contained corpus and flat columns come without
copying. A path ending in ``.parquet`` is one file; any other path a directory of
``part-NNNNN.parquet`` files, each valid on its own. Reading lives in ``_read``, the checks in
``_checks``; this module holds the format and the writers.

Invariants: the file metadata ``reviewlab.schema`` and ``reviewlab.layout`` version the
columns (a file without them is refused); each row keeps its own episode schema, so a version
1 episode comes back as version 1 and a JSONL round trip gives the same bytes; ids are unique
across the corpus; writing is atomic (a file renamed into place, a directory likewise). The
columns and the versioning: docs/recording-format.md, "The columnar form (Parquet)" and "The
columnar layout".
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from reviewlab.recording._ids import duplicate_id
from reviewlab.recording._locations import is_url
from reviewlab.recording._schema import SCHEMA_VERSION_2, Episode

SCHEMA_KEY = b"reviewlab.schema"
LAYOUT_KEY = b"reviewlab.layout"
LAYOUT = "nested/1"
FILE_SCHEMA = SCHEMA_VERSION_2
"""The newest episode schema the columns can hold: written in every file's metadata."""
PARTITION_ROWS = 250_000
"""Default episodes per partition file when writing a directory."""
_BATCH = 8192

EXTENT_TYPE = pa.struct(
    [("path", pa.string()), ("start_line", pa.int64()), ("end_line", pa.int64())]
)
CALL_TYPE = pa.struct(
    [
        ("tool", pa.string()),
        ("args", pa.string()),
        ("duration_sec", pa.float64()),
        ("completed", pa.bool_()),
        ("status", pa.string()),
        ("result_chars", pa.int64()),
        ("extent", EXTENT_TYPE),
        ("returned_after_sec", pa.float64()),
        ("transport", pa.string()),
        ("progress_sec", pa.list_(pa.float64())),
        ("cancel_sent", pa.bool_()),
        ("cancel_honoured_sec", pa.float64()),
        ("late_result_sec", pa.float64()),
        ("late_result_chars", pa.int64()),
        ("ended_by", pa.string()),
        ("task_states", pa.list_(pa.string())),
        ("server", pa.string()),
        ("args_sha256", pa.string()),
        ("args_chars", pa.int64()),
    ]
)
ROUND_TYPE = pa.struct([("send_sec", pa.float64()), ("calls", pa.list_(CALL_TYPE))])
TOKENS_TYPE = pa.struct([("input_tokens", pa.int64()), ("output_tokens", pa.int64())])
ARROW_SCHEMA = pa.schema(
    [
        ("schema", pa.string()),
        ("id", pa.string()),
        ("source", pa.string()),
        ("slot", pa.string()),
        ("started_at", pa.timestamp("us", tz="UTC")),
        ("utc_offset_sec", pa.int32()),
        ("deadline_sec", pa.float64()),
        ("rounds", pa.list_(ROUND_TYPE)),
        ("end_reason", pa.string()),
        ("task", pa.string()),
        ("meta", pa.map_(pa.string(), pa.string())),
        ("model", pa.string()),
        ("round_tokens", pa.list_(TOKENS_TYPE)),
    ],
    metadata={SCHEMA_KEY: FILE_SCHEMA.encode(), LAYOUT_KEY: LAYOUT.encode()},
)
"""The Arrow schema of a columnar corpus (with its version metadata)."""
OPTIONAL_COLUMNS = ("model", "round_tokens")
"""Columns a file written before token usage existed lacks; they read as nulls."""

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


# -- writing ------------------------------------------------------------------------------


def episodes_table(episodes: Iterable[Episode]) -> pa.Table:
    """The episodes as one Arrow table of :data:`ARROW_SCHEMA` (corpus order)."""
    ep: dict[str, list[Any]] = {name: [] for name in ARROW_SCHEMA.names}
    meta_keys: list[str] = []
    meta_values: list[str] = []
    meta_offsets = [0]
    round_offsets = [0]
    sends: list[float] = []
    call_offsets = [0]
    calls: dict[str, list[Any]] = {name: [] for name in CALL_TYPE.names}
    extents: tuple[list[Any], list[Any], list[Any]] = ([], [], [])
    no_extent: list[bool] = []
    for episode in episodes:
        started = episode.started_at
        offset = started.utcoffset() or timedelta(0)
        ep["schema"].append(episode.schema_version)
        ep["id"].append(episode.id)
        ep["source"].append(episode.source)
        ep["slot"].append(episode.slot)
        ep["started_at"].append(round((started - _EPOCH) / timedelta(microseconds=1)))
        ep["utc_offset_sec"].append(int(offset.total_seconds()))
        ep["deadline_sec"].append(episode.deadline_sec)
        ep["end_reason"].append(episode.end_reason)
        ep["task"].append(episode.task)
        ep["model"].append(episode.model)
        ep["round_tokens"].append(
            [
                {"input_tokens": r.input_tokens, "output_tokens": r.output_tokens}
                for r in episode.rounds
            ]
            if any(
                r.input_tokens is not None or r.output_tokens is not None for r in episode.rounds
            )
            else None
        )
        meta_keys.extend(episode.meta)
        meta_values.extend(episode.meta.values())
        meta_offsets.append(len(meta_keys))
        for rnd in episode.rounds:
            sends.append(rnd.send_sec)
            for call in rnd.calls:
                calls["tool"].append(call.tool)
                calls["args"].append(json.dumps(call.args, separators=(",", ":")))
                calls["duration_sec"].append(call.duration_sec)
                calls["completed"].append(call.completed)
                calls["status"].append(call.status)
                calls["result_chars"].append(call.result_chars)
                calls["returned_after_sec"].append(call.returned_after_sec)
                calls["transport"].append(call.transport)
                calls["progress_sec"].append(call.progress_sec)
                calls["cancel_sent"].append(call.cancel_sent)
                calls["cancel_honoured_sec"].append(call.cancel_honoured_sec)
                calls["late_result_sec"].append(call.late_result_sec)
                calls["late_result_chars"].append(call.late_result_chars)
                calls["ended_by"].append(call.ended_by)
                calls["task_states"].append(call.task_states)
                calls["server"].append(call.server)
                calls["args_sha256"].append(call.args_sha256)
                calls["args_chars"].append(call.args_chars)
                extent = call.extent
                no_extent.append(extent is None)
                extents[0].append(None if extent is None else extent.path)
                extents[1].append(None if extent is None else extent.start_line)
                extents[2].append(None if extent is None else extent.end_line)
            call_offsets.append(len(calls["tool"]))
        round_offsets.append(len(sends))
    extent_array = pa.StructArray.from_arrays(
        [pa.array(extents[0], pa.string()), pa.array(extents[1], pa.int64())]
        + [pa.array(extents[2], pa.int64())],
        fields=list(EXTENT_TYPE),
        mask=pa.array(no_extent, pa.bool_()),
    )
    call_arrays = [
        extent_array if f.name == "extent" else pa.array(calls[f.name], f.type) for f in CALL_TYPE
    ]
    call_array = pa.StructArray.from_arrays(call_arrays, fields=list(CALL_TYPE))
    return assemble_table(
        ep, meta_offsets, meta_keys, meta_values, round_offsets, sends, call_offsets, call_array
    )


def assemble_table(
    ep: dict[str, Any],
    meta_offsets: Any,
    meta_keys: Any,
    meta_values: Any,
    round_offsets: Any,
    sends: Any,
    call_offsets: Any,
    call_array: pa.StructArray,
) -> pa.Table:
    """Nest flat episode, round and call columns (with their offsets) into one table.

    An :data:`OPTIONAL_COLUMNS` column missing from ``ep`` is all nulls (usage unknown).
    """
    calls_list = pa.ListArray.from_arrays(pa.array(call_offsets, pa.int32()), call_array)
    round_array = pa.StructArray.from_arrays(
        [pa.array(sends, pa.float64()), calls_list], fields=list(ROUND_TYPE)
    )
    columns: dict[str, pa.Array] = {}
    for f in ARROW_SCHEMA:
        if f.name == "rounds":
            columns[f.name] = pa.ListArray.from_arrays(
                pa.array(round_offsets, pa.int32()), round_array
            )
        elif f.name == "meta":
            columns[f.name] = pa.MapArray.from_arrays(
                pa.array(meta_offsets, pa.int32()),
                pa.array(meta_keys, pa.string()),
                pa.array(meta_values, pa.string()),
            )
        elif f.name in OPTIONAL_COLUMNS and f.name not in ep:
            columns[f.name] = pa.nulls(len(ep["id"]), f.type)
        else:
            value = ep[f.name]
            columns[f.name] = value if isinstance(value, pa.Array) else pa.array(value, f.type)
    return pa.Table.from_pydict(columns, schema=ARROW_SCHEMA)


def _batches(episodes: Iterable[Episode], size: int) -> Iterator[pa.Table]:
    batch: list[Episode] = []
    for episode in episodes:
        batch.append(episode)
        if len(batch) >= size:
            yield episodes_table(batch)
            batch = []
    if batch or size == 0:
        yield episodes_table(batch)


def write_columnar(
    episodes: Iterable[Episode],
    path: str | os.PathLike[str],
    *,
    rows_per_partition: int = PARTITION_ROWS,
) -> int:
    """Write ``episodes`` (any iterable, consumed once) to ``path`` atomically; return the count.

    A ``.parquet`` path is one file; any other path becomes a directory of
    partitions of at most ``rows_per_partition`` episodes. A repeated id raises
    :class:`ValueError` and leaves the destination untouched.
    """
    return write_tables(_batches(episodes, _BATCH), path, rows_per_partition=rows_per_partition)


def write_tables(
    tables: Iterable[pa.Table],
    path: str | os.PathLike[str],
    *,
    rows_per_partition: int = PARTITION_ROWS,
) -> int:
    """Write tables of :data:`ARROW_SCHEMA` (one row group each)
    atomically to ``path``; the count.

    ``path`` may be an fsspec URL (:mod:`reviewlab.recording._locations`): the files are
    written under a temporary name beside it and moved into place when every one is
    written (:mod:`reviewlab.recording.columnar._urls`)."""
    if rows_per_partition < 1:
        raise ValueError(f"rows_per_partition must be at least 1, got {rows_per_partition!r}")
    if is_url(path):
        from reviewlab.recording.columnar._urls import write_tables_url

        return write_tables_url(
            tables,
            str(path),
            rows_per_partition=rows_per_partition,
            checked=unique_ids(path),
            schema=ARROW_SCHEMA,
            split=write_partitions,
        )
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    checked = unique_ids(target)
    if target.suffix == ".parquet":
        fd, temp = tempfile.mkstemp(dir=directory, prefix=f".{target.name}.", suffix=".tmp")
        os.close(fd)
        try:
            count = _write_file(Path(temp), (checked(t) for t in tables))
            _publish_file(Path(temp), target)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp)
            raise
        return count
    temp_dir = Path(tempfile.mkdtemp(dir=directory, prefix=f".{target.name}.", suffix=".tmp"))
    try:
        count = write_partitions(
            (checked(t) for t in tables),
            rows_per_partition,
            lambda name: pq.ParquetWriter(temp_dir / name, ARROW_SCHEMA),
        )
        _publish_dir(temp_dir, target)
    except BaseException:
        shutil.rmtree(temp_dir, ignore_errors=True)
        raise
    return count


def unique_ids(target: str | os.PathLike[str]) -> Callable[[pa.Table], pa.Table]:
    """A check each table passes on its way to ``target``: its ids unseen so far (else a
    ``ValueError`` naming the id), its metadata the format's."""
    seen: set[str] = set()

    def checked(table: pa.Table) -> pa.Table:
        ids = table.column("id").to_pylist()
        fresh = set(ids)
        if len(fresh) != len(ids) or not seen.isdisjoint(fresh):
            repeated = next(i for n, i in enumerate(ids) if i in seen or i in ids[:n])
            raise ValueError(f"{target}: {duplicate_id(repeated)}")
        seen.update(fresh)
        return table.replace_schema_metadata(ARROW_SCHEMA.metadata)

    return checked


def write_partitions(
    tables: Iterable[pa.Table],
    rows_per_partition: int,
    open_part: Callable[[str], pq.ParquetWriter],
) -> int:
    """Split ``tables`` into ``part-NNNNN.parquet`` files of at most ``rows_per_partition``
    rows, each opened by ``open_part(name)`` and closed when full; the count. An empty
    corpus is one empty partition."""
    count = 0
    part = 0
    writer: pq.ParquetWriter | None = None
    in_part = 0
    for table in tables:
        start = 0
        while start < table.num_rows or (table.num_rows == 0 and writer is None):
            if writer is None:
                writer = open_part(f"part-{part:05d}.parquet")
            take = min(rows_per_partition - in_part, table.num_rows - start)
            writer.write_table(table.slice(start, take))
            start += take
            in_part += take
            count += take
            if in_part >= rows_per_partition or table.num_rows == 0:
                writer.close()
                writer, in_part, part = None, 0, part + 1
            if table.num_rows == 0:
                break
    if writer is not None:
        writer.close()
    if part == 0 and writer is None and count == 0:
        empty = open_part("part-00000.parquet")
        empty.write_table(ARROW_SCHEMA.empty_table())
        empty.close()
    return count


def _write_file(temp: Path, tables: Iterable[pa.Table]) -> int:
    count = 0
    with pq.ParquetWriter(temp, ARROW_SCHEMA) as writer:
        for table in tables:
            writer.write_table(table)
            count += table.num_rows
    with open(temp, "rb+") as handle:
        os.fsync(handle.fileno())
    return count


def _publish_file(temp: Path, target: Path) -> None:
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(temp, 0o666 & ~umask)
    os.replace(temp, target)


def _publish_dir(temp_dir: Path, target: Path) -> None:
    """Rename the finished directory into place (an old one is moved aside first, then removed)."""
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(temp_dir, 0o777 & ~umask)
    if target.exists() and not target.is_dir():
        raise ValueError(f"{target}: exists and is not a directory")
    old = None
    if target.exists():
        old = target.with_name(f".{target.name}.old-{os.getpid()}")
        os.replace(target, old)
    os.replace(temp_dir, target)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
