"""Vectorized checks of a columnar corpus: its columns against the schema, then every value.

Lifecycle: :func:`conform` makes a table read from Parquet match
:data:`~reviewlab.recording.columnar.ARROW_SCHEMA` (a bad column is one error naming it);
:func:`check_table` runs every rule of :mod:`reviewlab.recording._schema` as array
operations over the flat columns (:func:`~reviewlab.recording.columnar.flat_columns`) and
returns one :class:`~reviewlab.recording.columnar.BadValue` per bad value (row, episode id,
dotted field as the JSONL reader names it). Here: the episode, round and version 1 call
checks; the version 2 fields: :mod:`reviewlab.recording.columnar._checks_v2`.

Invariants: the rules are the schema's (closed vocabularies, seconds finite and non-negative,
extents ordered, ids non-empty and unique: :mod:`reviewlab.recording._ids`); a null where the
schema has a value is a bad value; ``args`` must look like a JSON object. No Python object
per row, except the messages of the bad values found.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from reviewlab.core._vocab import CALL_STATUSES, END_REASONS, SOURCES
from reviewlab.recording._file_errors import EpisodeFormatError
from reviewlab.recording._ids import duplicate_id
from reviewlab.recording._schema import SCHEMA_VERSIONS
from reviewlab.recording.columnar._arrays import (
    json_object_shaped,
    not_in,
    null_mask,
    numbers,
    text_lengths,
)
from reviewlab.recording.columnar._bad_values import (
    BadValue,
    Found,
    Text,
    seconds_rules,
    with_value,
)
from reviewlab.recording.columnar._checks_v2 import check_usage, check_v2
from reviewlab.recording.columnar._flat import FlatColumns, flat_columns


def conform(path: Path, table: pa.Table) -> pa.Table:
    """``table`` with exactly the columns and types of the schema, or an error naming the column."""
    from reviewlab.recording.columnar._write import ARROW_SCHEMA, OPTIONAL_COLUMNS

    names = table.column_names
    for name in names:
        if name not in ARROW_SCHEMA.names:
            raise EpisodeFormatError(path, 0, name, "unknown column")
    columns = []
    for expected in ARROW_SCHEMA:
        if expected.name not in names and expected.name in OPTIONAL_COLUMNS:
            # Written before token usage existed: every value is unknown.
            columns.append(pa.chunked_array([pa.nulls(table.num_rows, expected.type)]))
            continue
        if expected.name not in names:
            raise EpisodeFormatError(path, 0, expected.name, "missing column")
        column = table.column(expected.name)
        if column.type != expected.type:
            try:
                column = column.cast(expected.type)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
                raise EpisodeFormatError(
                    path, 0, expected.name, f"expected {expected.type}, got {column.type} ({exc})"
                ) from None
        columns.append(column)
    return pa.Table.from_arrays(columns, schema=ARROW_SCHEMA)


def check_table(
    table: pa.Table,
    path: Path,
    *,
    first_row: int = 1,
    seen: dict[str, tuple[Path, int]] | None = None,
    flat: FlatColumns | None = None,
) -> list[BadValue]:
    """Every bad value of a conformed ``table`` (rows numbered from ``first_row``), row order.

    ``seen`` (id → (file, row)) extends the uniqueness check across tables and
    is updated with this table's ids.
    """
    flat = flat or flat_columns(table)
    ids_text = Text(flat.ids, "<null>")
    found = Found()
    schema_text = _check_episodes(table, flat.ids, path, first_row, seen, found.report)
    _check_rounds(flat, found.report)
    rows, where = flat.call_episode, _call_field(flat)
    _check_calls(flat, rows, where, found.report)
    check_v2(flat, schema_text, rows, where, found.report)
    check_usage(table, flat, schema_text, found.report)
    _check_extents(flat, rows, where, found.report)
    found.items.sort(key=lambda item: item[0])
    assert table.num_rows == len(ids_text)
    return [BadValue(first_row + r, str(ids_text[r]), f, m) for r, f, m in found.items]


def _call_field(flat: FlatColumns) -> Any:
    """``where(name)``: the dotted path of field ``name`` of the k-th call, as a function of k."""
    rp, cp, cr = flat.round_position, flat.call_position, flat.call_round

    def where(name: str) -> Any:
        return lambda k: f"rounds.{rp[cr[k]]}.calls.{cp[k]}.{name}"

    return where


def _check_episodes(
    table: pa.Table,
    ids: pa.Array,
    path: Path,
    first_row: int,
    seen: dict[str, tuple[Path, int]] | None,
    report: Any,
) -> Text:
    """The per-episode columns (id, vocabularies, schema, times, rounds, meta); returns the
    schema column as text, which the version checks of the calls and usage read."""
    id_null = null_mask(ids)
    id_empty = ~id_null & (text_lengths(ids, 1) == 0)
    report(id_null | id_empty, None, "id", "must be a non-empty string")
    _check_unique(ids, id_null | id_empty, path, first_row, seen, report)
    for name, allowed in (("source", SOURCES), ("end_reason", END_REASONS)):
        column = table.column(name).combine_chunks()
        values = Text(column)
        report(
            not_in(column, allowed),
            None,
            name,
            lambda k, v=values, a=allowed: f"{v[k]!r} is not one of {', '.join(a)}",
        )
    schema = table.column("schema").combine_chunks()
    schema_text = Text(schema)
    report(
        not_in(schema, SCHEMA_VERSIONS),
        None,
        "schema",
        lambda k: (
            f"unsupported schema version {schema_text[k]!r} "
            f"(expected one of {', '.join(map(repr, SCHEMA_VERSIONS))})"
        ),
    )
    for name in ("slot", "task"):
        report(null_mask(table.column(name)), None, name, "must be a string, got null")
    _check_times(table, report)
    report(null_mask(table.column("rounds")), None, "rounds", "must be a list, got null")
    _check_meta(table.column("meta").combine_chunks(), report)
    return schema_text


def _check_times(table: pa.Table, report: Any) -> None:
    """An episode's start (a time with a zone) and its optional deadline in seconds."""
    report(null_mask(table.column("started_at")), None, "started_at", "must be a time, got null")
    offset = table.column("utc_offset_sec").combine_chunks()
    off = numbers(offset, 0)
    report(
        null_mask(offset) | (np.abs(off) >= 86400),
        None,
        "started_at",
        "must carry a time zone (utc_offset_sec null or beyond a day)",
    )
    values = table.column("deadline_sec").combine_chunks()
    for mask, message in seconds_rules(values, optional=True):
        report(mask, None, "deadline_sec", with_value(message, values))


def _check_meta(meta: pa.Array, report: Any) -> None:
    """An episode's meta: a map (not null) whose values are strings (not null)."""
    report(null_mask(meta), None, "meta", "must be a map of strings, got null")
    if len(meta):
        offsets = np.asarray(meta.offsets.to_numpy(), dtype=np.intp)  # items are not sliced
        meta_items = meta.items.slice(offsets[0], offsets[-1] - offsets[0])
        meta_parent = np.repeat(np.arange(len(meta)), np.diff(offsets))
        report(null_mask(meta_items), meta_parent, "meta", "values must be strings, got null")


def _check_rounds(flat: FlatColumns, report: Any) -> None:
    """Each round's send time: seconds, finite, non-negative."""
    rp = flat.round_position
    send = flat.rounds["send_sec"]
    for mask, message in seconds_rules(send, optional=False):
        report(
            mask,
            flat.round_episode,
            lambda k: f"rounds.{rp[k]}.send_sec",
            with_value(message, send),
        )


def _check_calls(flat: FlatColumns, rows: np.ndarray, where: Any, report: Any) -> None:
    """The version 1 call fields: tool, args, durations, completed, status, result size."""
    calls = flat.calls
    tool = calls["tool"]
    tool_len = text_lengths(tool, 0)
    report(
        null_mask(tool) | (tool_len < 1) | (tool_len > 200),
        rows,
        where("tool"),
        "must be a string of 1 to 200 characters",
    )
    args = calls["args"]
    report(
        ~json_object_shaped(args),
        rows,
        where("args"),
        "must be the JSON text of an object",
    )
    for name in ("duration_sec", "returned_after_sec"):
        values = calls[name]
        for mask, message in seconds_rules(values, optional=name == "returned_after_sec"):
            report(mask, rows, where(name), with_value(message, values))
    completed = null_mask(calls["completed"])
    report(completed, rows, where("completed"), "must be true or false, got null")
    status = calls["status"]
    status_text = Text(status)
    report(
        not_in(status, CALL_STATUSES),
        rows,
        where("status"),
        lambda k: f"{status_text[k]!r} is not one of {', '.join(CALL_STATUSES)}",
    )
    chars = calls["result_chars"]
    report(
        null_mask(chars) | (numbers(chars, 0) < 0),
        rows,
        where("result_chars"),
        "must be an integer >= 0",
    )


def _check_extents(flat: FlatColumns, rows: np.ndarray, where: Any, report: Any) -> None:
    """A call's extent, when it has one: a path, and lines from 1 with the end not before the
    start."""
    has = flat.has_extent
    ext = flat.extent
    path_len = text_lengths(ext["path"], 0)
    report(
        has & (null_mask(ext["path"]) | (path_len < 1)),
        rows,
        where("extent.path"),
        "must be a non-empty string",
    )
    start = numbers(ext["start_line"], 0)
    end = numbers(ext["end_line"], 0)
    report(has & (start < 1), rows, where("extent.start_line"), "must be an integer >= 1")
    report(has & (end < 1), rows, where("extent.end_line"), "must be an integer >= 1")
    report(
        has & (start >= 1) & (end >= 1) & (end < start),
        rows,
        where("extent"),
        lambda k: f"end_line {end[k]} is before start_line {start[k]}",
    )


def _check_unique(
    ids: pa.Array,
    missing: np.ndarray,
    path: Path,
    first_row: int,
    seen: dict[str, tuple[Path, int]] | None,
    report: Any,
) -> None:
    """Report every id that repeats an earlier row (of this table, or of the ``seen`` ones).

    Without ``seen`` (one table on its own) Arrow finds the repeats and Python
    touches only those; with it (a stream of batches) each id is looked up and
    added, which the streaming readers' small batches afford.
    """
    first: dict[int, str] = {}
    repeats = np.zeros(len(ids), dtype=bool)
    if seen is None:
        if len(pc.unique(ids)) == len(ids):
            return
        codes = np.asarray(pc.dictionary_encode(ids).indices.to_numpy(zero_copy_only=False))
        _, first_at = np.unique(codes, return_index=True)
        again = np.ones(codes.size, dtype=bool)
        again[first_at] = False
        for hit in np.flatnonzero(again & ~missing).tolist():
            row = first_row + int(first_at[codes[hit]])
            repeats[hit] = True
            first[hit] = duplicate_id(ids[hit].as_py(), f"row {row}")
    else:
        for k, episode_id in enumerate(ids.to_pylist()):
            if missing[k]:
                continue
            previous = seen.setdefault(episode_id, (path, first_row + k))
            if previous != (path, first_row + k):
                place = "" if previous[0] == path else f" of {previous[0]}"
                repeats[k] = True
                first[k] = duplicate_id(episode_id, f"row {previous[1]}{place}")
    report(repeats, None, "id", lambda k: first[int(k)])
