"""The reader of session files: one file as an episode, a folder as a corpus.

A file is read as it stands: the text after its last newline is a line still being written (or
whose writer died) and is left out; every other defect is an ``EpisodeFormatError`` naming the
file, the line and the field, or with ``on_error="skip"`` one ``SkippedLine``. Rounds are
inferred from the calls' overlap, as :class:`~reviewlab.recording.capture.ToolCallLog` does.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

from pydantic import BaseModel, ValidationError

from reviewlab.core._vocab import ON_ERROR_MODES, OnError
from reviewlab.recording._file_errors import JSON_FIELD, EpisodeFormatError, SkippedLine, field_of
from reviewlab.recording._schema import SCHEMA_VERSION_2, Call, Episode, Round
from reviewlab.recording.capture._timeline import TimedCall, inferred_rounds, offsets_meta
from reviewlab.recording.journal._lines import (
    LINE_KINDS,
    ROUNDS_NOTE,
    SESSION_SCHEMA,
    SESSION_SUFFIX,
    CallLine,
    End,
    EndLine,
    Header,
    UpdateLine,
)


def is_session_folder(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a directory holding at least one ``*.session.jsonl`` file."""
    where = Path(path)
    return where.is_dir() and bool(session_paths(where))


def session_paths(folder: str | os.PathLike[str]) -> list[Path]:
    """The session files of ``folder``, sorted by file name (hidden files left out)."""
    return sorted(
        p
        for p in Path(folder).iterdir()
        if p.name.endswith(SESSION_SUFFIX) and not p.name.startswith(".") and p.is_file()
    )


def iter_sessions(
    folder: str | os.PathLike[str],
    *,
    on_error: OnError = "raise",
    skipped: list[SkippedLine] | None = None,
) -> Iterator[Episode]:
    """The episodes of a session folder, one per file in file-name order. With
    ``on_error="skip"`` a file that cannot be read at all (its header) is one ``SkippedLine``,
    and each record names its file in the message."""
    _check_mode(on_error, skipped)
    for path in session_paths(folder):
        mine: list[SkippedLine] = []
        try:
            episode = read_session(path, on_error=on_error, skipped=mine)
        except EpisodeFormatError as exc:
            if on_error == "raise":
                raise
            mine.append(SkippedLine(exc.line, exc.field, exc.message))
            episode = None
        assert skipped is not None or not mine
        for bad in mine:
            assert skipped is not None
            skipped.append(SkippedLine(bad.line, bad.field, f"{path.name}: {bad.message}"))
        if episode is not None:
            yield episode


def read_session(
    path: str | os.PathLike[str],
    *,
    on_error: OnError = "raise",
    skipped: list[SkippedLine] | None = None,
) -> Episode:
    """The episode a session file holds as it stands (the lifecycle: the package docstring).

    A header that cannot be read raises even with ``on_error="skip"``: without it there is no
    episode. Other defective lines are skipped (each recorded in ``skipped``); an update of a
    skipped call is skipped too.
    """
    _check_mode(on_error, skipped)
    where = Path(path)
    data = where.read_bytes()
    lines = data.split(b"\n")
    lines.pop()  # the text after the last newline: a line still being written, or nothing
    if not lines:
        raise EpisodeFormatError(where, 1, "schema", "no header line (an empty session file)")

    def refuse(number: int, field: str, message: str) -> None:
        if on_error == "raise":
            raise EpisodeFormatError(where, number, field, message)
        assert skipped is not None
        skipped.append(SkippedLine(number, field, message))

    header = _read_header(where, lines[0])
    calls: list[tuple[Call, float] | None] = []
    end: End | None = None
    unsure: int | None = None  # a skipped line of unknown kind: call indices after it are unsure
    for number, raw in enumerate(lines[1:], start=2):
        if not raw.strip():
            continue
        if end is not None:
            refuse(number, JSON_FIELD, "a line after the session's end line")
            continue
        try:
            parsed = _parse_line(raw)
        except _LineError as exc:
            refuse(number, exc.field, exc.message)
            if exc.kind == "call":
                calls.append(None)  # the writer counted it: later updates keep their index
            elif exc.kind is None and unsure is None:
                unsure = number
            continue
        if isinstance(parsed, CallLine):
            calls.append((parsed.call, parsed.at_sec))
        elif isinstance(parsed, EndLine):
            end = parsed.end
        elif unsure is not None:
            refuse(number, "update", f"the call it updates is unknown after line {unsure}")
        else:
            problem = _apply(calls, parsed)
            if problem is not None:
                refuse(number, *problem)
    return _episode(header, [c for c in calls if c is not None], end)


def _check_mode(on_error: str, skipped: list[SkippedLine] | None) -> None:
    if on_error not in ON_ERROR_MODES:
        raise ValueError(f"on_error must be 'raise' or 'skip', got {on_error!r}")
    if on_error == "skip" and skipped is None:
        raise ValueError("on_error='skip' needs a list to report skipped lines into (skipped=[])")


def _read_header(where: Path, raw: bytes) -> Header:
    try:
        header = Header.model_validate_json(raw)
    except ValidationError as exc:
        field, message = field_of(exc)
        if field == "schema":
            message = _schema_message(raw)
        raise EpisodeFormatError(where, 1, field, message) from None
    if where.name != f"{header.id}{SESSION_SUFFIX}":
        raise EpisodeFormatError(
            where, 1, "id", f"the header's id {header.id!r} is not the file's name"
        )
    return header


def _schema_message(raw: bytes) -> str:
    """What the first line holds instead of a session header, by name."""
    try:
        found = json.loads(raw).get("schema")
    except (ValueError, AttributeError):
        found = None
    if found is None:
        return f"missing schema (expected {SESSION_SCHEMA!r} on the first line)"
    return f"unsupported schema {found!r} (expected {SESSION_SCHEMA!r})"


def _parse_line(raw: bytes) -> BaseModel:
    """A call, update or end line (its kind by its key), validated; else :class:`_LineError`."""
    try:
        document = json.loads(raw)
    except ValueError as exc:
        raise _LineError(None, JSON_FIELD, f"not JSON ({exc})") from None
    if not isinstance(document, dict):
        raise _LineError(None, JSON_FIELD, "expected a JSON object")
    kinds = [name for name in LINE_KINDS if name in document]
    if len(kinds) != 1:
        keys = ", ".join(map(repr, document)) or "none"
        raise _LineError(
            None, JSON_FIELD, f"expected one of the keys call, update, end; got {keys}"
        )
    try:
        return LINE_KINDS[kinds[0]].model_validate(document)
    except ValidationError as exc:
        raise _LineError(kinds[0], *field_of(exc)) from None


class _LineError(ValueError):
    """A line that is not a valid call, update or end line; ``kind`` when it is known."""

    def __init__(self, kind: str | None, field: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.field = field
        self.message = message


def _apply(calls: list[tuple[Call, float] | None], line: BaseModel) -> tuple[str, str] | None:
    """Fold an update line into its call; ``(field, message)`` when it cannot be."""
    assert isinstance(line, UpdateLine)
    index = line.update
    if index >= len(calls):
        return "update", f"no call {index} (calls so far: {len(calls)})"
    entry = calls[index]
    if entry is None:
        return "update", f"call {index} was skipped, so its update is too"
    call, at_sec = entry
    given = line.fields.model_dump(exclude_unset=True)
    try:
        updated = Call.model_validate({**call.model_dump(), **given})
    except ValidationError as exc:
        field, message = field_of(exc)
        return f"fields.{field}", message
    calls[index] = (updated, at_sec)
    return None


def _episode(header: Header, calls: list[tuple[Call, float]], end: End | None) -> Episode:
    """The session as an episode: rounds by overlap; with an end line, a last round up to it."""
    timed = [TimedCall(call, at, at + call.duration_sec) for call, at in calls]
    rounds, offsets = inferred_rounds(timed, 0.0)
    if end is not None:
        last_end = max((t.end_sec for t in timed), default=0.0)
        rounds.append(Round(send_sec=max(0.0, end.ended_sec - last_end)))
        offsets.append([])
    return Episode(
        schema=SCHEMA_VERSION_2,
        id=header.id,
        source=header.source,
        slot=header.slot,
        started_at=header.started_at,
        rounds=rounds,
        end_reason=end.end_reason if end is not None else "log_end",
        task=header.task,
        meta={**header.meta, "rounds": ROUNDS_NOTE, **offsets_meta(rounds, offsets)},
    )
