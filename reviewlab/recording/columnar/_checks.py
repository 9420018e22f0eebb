"""Vectorized checks of a columnar corpus, and its flat per-episode, per-round, per-call columns.

Lifecycle: :func:`conform` makes a table read from Parquet match
:data:`~reviewlab.recording.columnar.ARROW_SCHEMA` (a bad column is one error naming it);
:func:`flat_columns` flattens its nested lists once; :func:`check_table` runs every rule of
:mod:`reviewlab.recording._schema` as array operations and returns one :class:`BadValue` per
bad value (row, episode id, dotted field as the JSONL reader names it). No Python object per
row, except the messages of the bad values found.

Invariants: the rules are the schema's (closed vocabularies, seconds finite and non-negative,
extents ordered, ids non-empty and unique: :mod:`reviewlab.recording._ids`); a null where the
schema has a value is a bad value; ``args`` must look like a JSON object; the usage columns
are null in a version 1 episode.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from reviewlab.core._vocab import (
    CALL_STATUSES,
    CLOCK_NAMES,
    END_REASONS,
    SOURCES,
    TASK_STATES,
    TRANSPORTS,
)
from reviewlab.recording._file_errors import EpisodeFormatError
from reviewlab.recording._ids import duplicate_id
from reviewlab.recording._schema import SCHEMA_VERSION, SCHEMA_VERSIONS, V2_CALL_FIELDS
from reviewlab.recording.columnar._arrays import (
    json_object_shaped,
    matches,
    not_in,
    null_mask,
    numbers,
    text_lengths,
)
from reviewlab.recording.columnar._flat import FlatColumns, flat_columns

_SHOWN = 20  # bad values spelled out in an error message; all are kept in ``problems``


@dataclass(frozen=True)
class BadValue:
    """One value of a columnar file that breaks the schema."""

    row: int
    """1-based row (episode) in its file."""
    episode_id: str
    """The id of that row (``"<null>"`` when the id itself is missing)."""
    field: str
    """Dotted path of the value (``rounds.0.calls.1.duration_sec``)."""
    message: str
    """What is wrong with it."""


class ColumnarFormatError(EpisodeFormatError):
    """Bad values in a columnar file: every one is in ``problems``;
    the first is ``line``/``field``."""

    def __init__(self, path: str | Path, problems: list[BadValue]) -> None:
        self.problems = list(problems)
        first = self.problems[0]
        lines = [
            f"row {p.row} (episode {p.episode_id!r}): {p.field}: {p.message}" for p in problems
        ]
        more = len(lines) - _SHOWN
        text = "; ".join(lines[:_SHOWN]) + (f"; and {more} more" if more > 0 else "")
        super().__init__(path, first.row, first.field, f"{len(lines)} bad value(s): {text}")
        self.episode_id = first.episode_id

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.path, self.problems))


def repeated_id_error(
    path: str | Path, row: int, episode_id: str, first_path: str | Path, first_row: int
) -> ColumnarFormatError:
    """The error for an id that repeats one of an earlier file or batch: at its later row, naming
    where the first one stood (the rule and its words: :mod:`reviewlab.recording._ids`)."""
    first = duplicate_id(episode_id, f"row {first_row} of {first_path}")
    return ColumnarFormatError(path, [BadValue(row, episode_id, "id", first)])


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


def _seconds(values: pa.Array, optional: bool) -> list[tuple[np.ndarray, str]]:
    """(mask, message) pairs for a seconds column: null (unless optional), non-finite, negative."""
    null = null_mask(values)
    checks = [(null & (not optional), "must be a number of seconds, got null")]
    if values.null_count == len(values):  # no number to check
        return checks
    x = numbers(values, np.nan).astype(float)
    checks.append((~null & ~np.isfinite(x), "must be a finite number of seconds"))
    with np.errstate(invalid="ignore"):
        checks.append((~null & (x < 0), "must not be negative"))
    return checks


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
    ids_text = _Text(flat.ids, "<null>")
    found = _Found()
    schema_text = _check_episodes(table, flat.ids, path, first_row, seen, found.report)
    _check_rounds(flat, found.report)
    rows, where = flat.call_episode, _call_field(flat)
    _check_calls(flat, rows, where, found.report)
    _check_v2(flat, schema_text, rows, where, found.report)
    _check_usage(table, flat, schema_text, found.report)
    _check_extents(flat, rows, where, found.report)
    found.items.sort(key=lambda item: item[0])
    assert table.num_rows == len(ids_text)
    return [BadValue(first_row + r, str(ids_text[r]), f, m) for r, f, m in found.items]


class _Found:
    """The bad values found so far, as (row index, field, message), in the order reported."""

    def __init__(self) -> None:
        self.items: list[tuple[int, str, str]] = []

    def report(self, mask: np.ndarray, rows: np.ndarray | None, field: Any, message: Any) -> None:
        """Record every position of ``mask``: its episode row (``rows[k]``, or ``k`` itself), and
        its field and message (each a text, or a function of ``k``)."""
        for k in np.flatnonzero(mask):
            row = int(k if rows is None else rows[k])
            self.items.append(
                (
                    row,
                    field(k) if callable(field) else field,
                    message(k) if callable(message) else message,
                )
            )


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
) -> _Text:
    """The per-episode columns (id, vocabularies, schema, times, rounds, meta); returns the
    schema column as text, which the version checks of the calls and usage read."""
    id_null = null_mask(ids)
    id_empty = ~id_null & (text_lengths(ids, 1) == 0)
    report(id_null | id_empty, None, "id", "must be a non-empty string")
    _check_unique(ids, id_null | id_empty, path, first_row, seen, report)
    for name, allowed in (("source", SOURCES), ("end_reason", END_REASONS)):
        column = table.column(name).combine_chunks()
        values = _Text(column)
        report(
            not_in(column, allowed),
            None,
            name,
            lambda k, v=values, a=allowed: f"{v[k]!r} is not one of {', '.join(a)}",
        )
    schema = table.column("schema").combine_chunks()
    schema_text = _Text(schema)
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
    for mask, message in _seconds(values, optional=True):
        report(mask, None, "deadline_sec", _with_value(message, values))


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
    for mask, message in _seconds(send, optional=False):
        report(
            mask,
            flat.round_episode,
            lambda k: f"rounds.{rp[k]}.send_sec",
            _with_value(message, send),
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
        for mask, message in _seconds(values, optional=name == "returned_after_sec"):
            report(mask, rows, where(name), _with_value(message, values))
    completed = null_mask(calls["completed"])
    report(completed, rows, where("completed"), "must be true or false, got null")
    status = calls["status"]
    status_text = _Text(status)
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


class _Text:
    """A string column read one value at a time, for the messages of the bad values only."""

    def __init__(self, values: pa.Array | pa.ChunkedArray, null: str | None = None) -> None:
        self.values = values
        self.null = null

    def __len__(self) -> int:
        return len(self.values)

    def __getitem__(self, index: Any) -> Any:
        value = self.values[int(index)].as_py()
        return self.null if value is None else value

    def equals(self, text: str) -> np.ndarray:
        """Where the column holds ``text`` (False where null)."""
        return numbers(pc.equal(self.values, text), False).astype(bool)


def _rank(parent: np.ndarray) -> np.ndarray:
    """Each value's 0-based position among the values of its parent (``parent`` sorted)."""
    return np.arange(parent.size) - np.searchsorted(parent, parent, side="left")


def _with_value(message: str, values: pa.Array) -> Any:
    if message.endswith("null"):
        return message
    return lambda k: f"{message}, got {values[int(k)].as_py()!r}"


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


def _check_v2(flat: FlatColumns, schema: _Text, rows: np.ndarray, where: Any, report: Any) -> None:
    """The version 2 call fields: their values, and their absence from version 1 episodes."""
    calls = flat.calls
    transport = calls["transport"]
    text = _Text(transport)
    report(
        ~null_mask(transport) & not_in(transport, TRANSPORTS),
        rows,
        where("transport"),
        lambda k: f"{text[k]!r} is not one of {', '.join(TRANSPORTS)}",
    )
    for name in ("cancel_honoured_sec", "late_result_sec"):
        seconds = calls[name]
        for mask, message in _seconds(seconds, optional=True):
            report(mask, rows, where(name), _with_value(message, seconds))
    chars = calls["late_result_chars"]
    report(
        _negative(chars),
        rows,
        where("late_result_chars"),
        _with_value("must not be negative", chars),
    )
    ended = calls["ended_by"]
    ended_text = _Text(ended)
    report(
        ~null_mask(ended) & not_in(ended, CLOCK_NAMES),
        rows,
        where("ended_by"),
        lambda k: f"{ended_text[k]!r} is not one of {', '.join(CLOCK_NAMES)}",
    )
    _check_task_states(calls["task_states"], rows, where, report)
    _check_progress(calls["progress_sec"], rows, where, report)
    _check_gateway(calls, rows, where, report)
    v1 = schema.equals(SCHEMA_VERSION)[rows]
    for name in V2_CALL_FIELDS:
        report(
            v1 & ~null_mask(calls[name]),
            rows,
            where(name),
            f"needs schema 'reviewlab.episode/2' (this episode is {SCHEMA_VERSION!r})",
        )


def _negative(values: pa.Array) -> np.ndarray:
    """Where a value is present and below zero."""
    if values.null_count == len(values):
        return np.zeros(len(values), dtype=bool)
    return ~null_mask(values) & (numbers(values, 0) < 0)


def _check_task_states(states: pa.Array, rows: np.ndarray, where: Any, report: Any) -> None:
    """Each call's task states: every one in the vocabulary."""
    bounds = np.asarray(states.offsets.to_numpy(), dtype=np.intp)
    if bounds[-1] == bounds[0]:  # no state recorded
        return
    owner_of = np.repeat(np.arange(len(states)), np.diff(bounds))
    values = states.values.slice(int(bounds[0]), len(owner_of))
    value_text = _Text(values)
    report(
        not_in(values, TASK_STATES),
        rows[owner_of],
        lambda k: where("task_states")(owner_of[k]),
        lambda k: f"{value_text[k]!r} is not one of {', '.join(TASK_STATES)}",
    )


def _check_progress(progress: pa.Array, rows: np.ndarray, where: Any, report: Any) -> None:
    """Each call's progress times: finite seconds >= 0, none before the one before it."""
    offsets = np.asarray(progress.offsets.to_numpy(), dtype=np.intp)
    if offsets[-1] == offsets[0]:  # no progress recorded
        return
    moments = numbers(progress.values.slice(offsets[0], offsets[-1] - offsets[0]), np.nan)
    owner = np.repeat(np.arange(len(progress)), np.diff(offsets))
    position = _rank(owner)
    with np.errstate(invalid="ignore"):
        bad = ~np.isfinite(moments) | (moments < 0)
        earlier = np.zeros(moments.size, dtype=bool)
        earlier[1:] = (position[1:] > 0) & (moments[1:] < moments[:-1])
    report(
        bad | earlier,
        rows[owner],
        lambda k: f"{where('progress_sec')(owner[k])}.{position[k]}",
        lambda k: (
            f"must be finite seconds >= 0 and not before the one before it, got {moments[k]!r}"
        ),
    )


def _check_gateway(calls: dict[str, pa.Array], rows: np.ndarray, where: Any, report: Any) -> None:
    """The gateway's call fields: a server name of 1 to 200 characters, a digest of 64 lower
    hex digits with its size (>= 0), both or neither."""
    server = calls["server"]
    server_len = text_lengths(server, 1)
    report(
        ~null_mask(server) & ((server_len < 1) | (server_len > 200)),
        rows,
        where("server"),
        "must be a string of 1 to 200 characters, or null",
    )
    digest = calls["args_sha256"]
    hexed = matches(digest, r"^[0-9a-f]{64}$")
    report(
        ~hexed, rows, where("args_sha256"), "must be 64 lowercase hex digits (a SHA-256), or null"
    )
    chars = calls["args_chars"]
    report(
        _negative(chars),
        rows,
        where("args_chars"),
        _with_value("must not be negative", chars),
    )
    no_digest, no_chars = null_mask(digest), null_mask(chars)
    report(
        ~no_digest & no_chars,
        rows,
        where("args_chars"),
        "args_sha256 is set without args_chars: record both or neither",
    )
    report(
        no_digest & ~no_chars,
        rows,
        where("args_chars"),
        "args_chars is set without args_sha256: record both or neither",
    )


def _check_usage(table: pa.Table, flat: FlatColumns, schema: _Text, report: Any) -> None:
    """The version 2 usage columns: the model name, one token entry per round, counts >= 0."""
    v1 = schema.equals(SCHEMA_VERSION)
    model = table.column("model").combine_chunks()
    model_len = text_lengths(model, 1)
    present = ~null_mask(model)
    report(
        present & ((model_len < 1) | (model_len > 200)),
        None,
        "model",
        "must be a string of 1 to 200 characters, or null",
    )
    report(
        v1 & present,
        None,
        "model",
        f"needs schema 'reviewlab.episode/2' (this episode is {SCHEMA_VERSION!r})",
    )
    tokens = table.column("round_tokens").combine_chunks()
    if isinstance(tokens, pa.ChunkedArray):  # an empty table
        tokens = pa.array([], tokens.type)
    has = ~null_mask(tokens)
    report(
        v1 & has,
        None,
        "round_tokens",
        f"needs schema 'reviewlab.episode/2' (this episode is {SCHEMA_VERSION!r})",
    )
    count = numbers(pc.list_value_length(tokens), 0).astype(np.intp)
    report(
        has & (count != flat.n_rounds),
        None,
        "round_tokens",
        lambda k: f"has {count[k]} entries for {flat.n_rounds[k]} rounds",
    )
    entries = pc.list_flatten(tokens)
    owner = np.asarray(pc.list_parent_indices(tokens).to_numpy(), dtype=np.intp)
    position = _rank(owner)
    for name, values in zip(("input_tokens", "output_tokens"), entries.flatten(), strict=True):
        tokens_of = numbers(values, 0)
        report(
            ~null_mask(values) & (tokens_of < 0),
            owner,
            lambda k, n=name: f"rounds.{position[k]}.{n}",
            lambda k, v=tokens_of: f"must be an integer >= 0, got {int(v[k])}",
        )
