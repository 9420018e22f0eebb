"""A fast JSONL decoder: episode lines straight into the columnar table, no ``Episode`` per line.

Lifecycle: :func:`jsonl_table` reads a JSONL file (plain or gzip) a batch of lines at a time;
a line of the canonical shape :meth:`Episode.to_json_line` writes is appended to flat column
lists; any other line goes through :meth:`Episode.model_validate_json` exactly as
:func:`~reviewlab.recording._files.iter_episodes` reads it, with the same ``file:line: field``
errors. The finished table then passes the columnar checks, whose rows are mapped back to
lines.

Invariants: the table equals :func:`~reviewlab.recording.columnar.episodes_table` of the
file's episodes; the decoder accepts and refuses what the episode reader does; blank lines are
skipped but counted; the first defect raises.
"""

from __future__ import annotations

import json
import os
import re
import zlib
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from operator import itemgetter
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from reviewlab.recording._file_errors import EpisodeFormatError, field_of, open_decompressed
from reviewlab.recording._schema import SCHEMA_VERSIONS, Episode
from reviewlab.recording.columnar import (
    CALL_TYPE,
    EXTENT_TYPE,
    BadValue,
    ColumnarFormatError,
    FlatColumns,
    assemble_table,
    check_table,
    episodes_table,
    flat_columns,
)

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_US = timedelta(microseconds=1)
_EPISODE_KEYS = frozenset(
    ("schema", "id", "source", "slot", "started_at", "deadline_sec", "rounds")
    + ("end_reason", "task", "meta")
)
_EXTENT_KEYS = frozenset(EXTENT_TYPE.names)
_BATCH = 16_384
_CANONICAL_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,6})?(Z|[+-]\d\d:\d\d)\Z")
"""The time stamps pydantic writes; any other spelling goes through pydantic itself."""


class _Odd(Exception):
    """A line the fast path does not take: it goes through pydantic instead."""


_EP_GET = itemgetter(
    "schema", "id", "source", "slot", "started_at", "deadline_sec", "rounds", "end_reason"
)
_CALL_NAMES = CALL_TYPE.names
# The call shapes writers have written, each a prefix of CALL_TYPE: version 1 (8 keys),
# version 2 before the late-answer and clock fields of issue 25 (12), before the gateway's
# server and argument digest of issue 35 (16), and now (19). Absent fields read as null.
_SHAPES = {
    size: (itemgetter(*_CALL_NAMES[:size]), (None,) * (len(_CALL_NAMES) - size))
    for size in (8, 12, 16, len(_CALL_NAMES))
}
_ENCODE = json.JSONEncoder(separators=(",", ":")).encode


def _canonical_call(call: Any) -> tuple[Any, ...]:
    """The call's fields in :data:`CALL_TYPE` order, when it has
    exactly the keys a writer writes."""
    if not isinstance(call, dict):
        raise _Odd
    # With every expected key present (else KeyError), the length rules out any other key.
    shape = _SHAPES.get(len(call))
    if shape is not None:
        getter, padding = shape
        return getter(call) + padding  # type: ignore[no-any-return]
    raise _Odd


class _Columns:
    """Flat column lists of one batch of episodes, ready for :func:`assemble_table`."""

    def __init__(self) -> None:
        self.ep: list[tuple[Any, ...]] = []
        self.meta_offsets = [0]
        self.meta_keys: list[str] = []
        self.meta_values: list[str] = []
        self.round_offsets = [0]
        self.sends: list[Any] = []
        self.call_offsets = [0]
        self.calls: list[tuple[Any, ...]] = []

    def add(self, row: Any) -> None:
        """Append one canonical episode dict (raises :class:`_Odd` before touching anything)."""
        if not isinstance(row, dict) or len(row) != len(_EPISODE_KEYS):
            raise _Odd  # and a missing key is a KeyError below: either way, pydantic decides
        schema, id_, source, slot, started_text, deadline, rounds, end_reason = _EP_GET(row)
        meta = row["meta"]
        task = row["task"]
        if (
            schema not in SCHEMA_VERSIONS
            or not isinstance(started_text, str)
            or not _CANONICAL_TIME.match(started_text)
            or not isinstance(meta, dict)
            or not isinstance(rounds, list)
        ):
            raise _Odd
        started = datetime.fromisoformat(started_text)
        offset = started.utcoffset()
        if offset is None:
            raise _Odd
        sends: list[Any] = []
        sizes: list[int] = []
        calls: list[tuple[Any, ...]] = []
        for rnd in rounds:
            if not isinstance(rnd, dict) or len(rnd) != 2:
                raise _Odd
            sends.append(rnd["send_sec"])
            round_calls = rnd["calls"]
            if not isinstance(round_calls, list):
                raise _Odd
            sizes.append(len(round_calls))
            calls.extend(map(_canonical_call, round_calls))
        self.ep.append(
            (
                schema,
                id_,
                source,
                slot,
                (started - _EPOCH) // _US,
                int(offset.total_seconds()),
                deadline,
                end_reason,
                task,
            )
        )
        self.meta_keys.extend(meta)
        self.meta_values.extend(meta.values())
        self.meta_offsets.append(len(self.meta_keys))
        self.sends.extend(sends)
        self.round_offsets.append(len(self.sends))
        last = self.call_offsets[-1]
        for size in sizes:
            last += size
            self.call_offsets.append(last)
        self.calls.extend(calls)

    def table(self) -> pa.Table:
        """The batch as a table (Arrow refuses a value of the wrong type with an exception)."""
        names: tuple[str, ...] = ("schema", "id", "source", "slot", "started_at")
        names = (*names, "utc_offset_sec", "deadline_sec", "end_reason", "task")
        ep = (
            dict(zip(names, map(list, zip(*self.ep, strict=True)), strict=True))
            if self.ep
            else {name: [] for name in names}
        )
        columns = (
            dict(zip(CALL_TYPE.names, map(list, zip(*self.calls, strict=True)), strict=True))
            if self.calls
            else {name: [] for name in CALL_TYPE.names}
        )
        args = columns["args"]
        if not all(isinstance(a, dict) for a in args):
            raise _Odd
        columns["args"] = [_ENCODE(a) for a in args]
        extents = columns["extent"]
        for extent in extents:
            if extent is not None and (
                not isinstance(extent, dict)
                or extent.keys() != _EXTENT_KEYS
                or type(extent["start_line"]) is not int
                or type(extent["end_line"]) is not int
            ):
                raise _Odd
        # Arrow would truncate 1.5 to 1 in an integer column; the episode reader refuses it.
        if not all(type(chars) is int for chars in columns["result_chars"]):
            raise _Odd
        extent_array = pa.StructArray.from_arrays(
            [
                pa.array([None if e is None else e[f.name] for e in extents], f.type)
                for f in EXTENT_TYPE
            ],
            fields=list(EXTENT_TYPE),
            mask=pa.array([e is None for e in extents], pa.bool_()),
        )
        call_arrays = [
            extent_array if f.name == "extent" else pa.array(columns[f.name], f.type)
            for f in CALL_TYPE
        ]
        return assemble_table(
            ep,
            self.meta_offsets,
            self.meta_keys,
            self.meta_values,
            self.round_offsets,
            self.sends,
            self.call_offsets,
            pa.StructArray.from_arrays(call_arrays, fields=list(CALL_TYPE)),
        )


def _slow(path: Path, lines: list[tuple[int, bytes]]) -> pa.Table:
    """A batch through pydantic, line by line, as the episode reader reads it."""
    episodes = []
    for number, raw in lines:
        try:
            episode = Episode.model_validate_json(raw)
        except ValueError as exc:
            field, message = field_of(exc)  # type: ignore[arg-type]
            raise EpisodeFormatError(path, number, field, message) from None
        if "schema_version" not in episode.model_fields_set:
            raise EpisodeFormatError(path, number, "schema", "missing schema version")
        episodes.append(episode)
    return episodes_table(episodes)


def _batch_table(path: Path, lines: list[tuple[int, bytes]]) -> pa.Table:
    columns = _Columns()
    try:
        for _, raw in lines:
            columns.add(json.loads(raw))
        return columns.table()
    except (_Odd, ValueError, TypeError, KeyError, pa.ArrowInvalid, pa.ArrowTypeError):
        return _slow(path, lines)


def jsonl_batches(
    path: str | os.PathLike[str], batch_lines: int = _BATCH
) -> Iterator[tuple[np.ndarray, pa.Table, FlatColumns]]:
    """The corpus a batch of lines at a time: ``(line numbers, checked table, flat columns)``.

    Each batch passes the column checks on its own (errors name the lines); ids
    repeated across batches are the caller's to check (:func:`jsonl_table` does).
    """
    where = Path(path)
    batch: list[tuple[int, bytes]] = []
    number = 0
    yielded = False

    def finish(lines: list[tuple[int, bytes]]) -> tuple[np.ndarray, pa.Table, FlatColumns]:
        table = _batch_table(where, lines)
        line_of = np.fromiter((n for n, _ in lines), dtype=np.int64, count=len(lines))
        flat = flat_columns(table)
        problems = check_table(table, where, flat=flat)
        if problems:
            raise ColumnarFormatError(
                where,
                [
                    BadValue(int(line_of[p.row - 1]), p.episode_id, p.field, p.message)
                    for p in problems
                ],
            )
        return line_of, table, flat

    with open_decompressed(where) as stream:
        try:
            for raw in stream:
                number += 1
                if not raw.strip():
                    continue
                batch.append((number, raw))
                if len(batch) >= batch_lines:
                    yield finish(batch)
                    yielded, batch = True, []
        except (EOFError, OSError, zlib.error) as exc:
            raise EpisodeFormatError(
                where, number + 1, "<gzip>", f"damaged or truncated gzip stream ({exc})"
            ) from None
    if batch or not yielded:
        yield finish(batch)


def jsonl_table(path: str | os.PathLike[str]) -> pa.Table:
    """The checked columnar table of a JSONL corpus (see the module docstring)."""
    where = Path(path)
    tables: list[pa.Table] = []
    lines: list[np.ndarray] = []
    for line_of, table, _ in jsonl_batches(where):
        tables.append(table)
        lines.append(line_of)
    table = pa.concat_tables(tables) if len(tables) > 1 else tables[0]
    ids = table.column("id").combine_chunks()
    if len(tables) > 1 and len(pc.unique(ids)) != len(ids):  # a repeat across batches
        problems = check_table(table, where)
        line_of = np.concatenate(lines)
        raise ColumnarFormatError(
            where,
            [BadValue(int(line_of[p.row - 1]), p.episode_id, p.field, p.message) for p in problems],
        )
    return table
