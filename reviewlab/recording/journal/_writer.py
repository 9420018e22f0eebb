"""The writer of a session file: :class:`SessionJournal` (the lifecycle: the package docstring).

Each line is one ``os.write`` of the whole line, under a lock, to a file opened with
``O_APPEND``: a reader sees whole lines and at most one partial last line. The file appears
under its name only with its whole header (written to a hidden sibling opened ``O_EXCL``, then
hard-linked to the name, which must be new). No fsync per call: a line survives the writer's
death (it is in the kernel's cache), not the machine's; ``close`` fsyncs.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import threading
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType

from reviewlab.core._vocab import END_REASONS, EndReason
from reviewlab.recording._schema import Call
from reviewlab.recording.journal._lines import (
    SESSION_SCHEMA,
    SESSION_SUFFIX,
    UPDATABLE_FIELDS,
    Header,
    seconds,
)


class SessionJournal:
    """The append-only file of one host session (the lifecycle: the package docstring).

    ``folder`` is made if needed; ``id`` names the file (default
    ``session-<UTC time>-<random hex>``); ``meta`` goes into the header; ``started_wall`` is
    the session's start on the wall clock (``time.time()``; default now). Thread-safe.
    """

    def __init__(
        self,
        folder: str | os.PathLike[str],
        *,
        id: str | None = None,
        meta: Mapping[str, str] | None = None,
        started_wall: float | None = None,
    ) -> None:
        now_wall = time.time()
        started = now_wall if started_wall is None else seconds("started_wall", started_wall)
        self.id = id if id is not None else _fresh_id(now_wall)
        _check_id(self.id)
        header = Header(
            schema=SESSION_SCHEMA,
            id=self.id,
            started_at=datetime.fromtimestamp(started, UTC),
            meta=dict(meta or {}),
        )
        # The session's start on the monotonic clock, so ended_sec does not jump with the wall.
        self._started_mono = time.monotonic() - max(0.0, now_wall - started)
        self._lock = threading.Lock()
        self._calls = 0
        self._closed = False
        directory = Path(folder)
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / f"{self.id}{SESSION_SUFFIX}"
        self._fd = _create_with_header(self.path, header.model_dump_json(by_alias=True))

    def elapsed_sec(self) -> float:
        """Seconds since the session start (monotonic): what ``at_sec`` is measured in."""
        return time.monotonic() - self._started_mono

    def call(self, call: Call, *, at_sec: float) -> int:
        """Append one finished call dispatched ``at_sec`` after the session start; its index."""
        if not isinstance(call, Call):
            raise TypeError(f"call: expected a recorded Call, got {type(call).__name__}")
        at = seconds("at_sec", at_sec)
        line = f'{{"call":{call.model_dump_json(by_alias=True)},"at_sec":{json.dumps(at)}}}\n'
        with self._lock:
            self._writable()
            _write_all(self._fd, line.encode("utf-8"))
            index = self._calls
            self._calls += 1
        return index

    def update(self, index: int, **fields: float | int | None) -> None:
        """Append what call ``index`` learnt after it was written (:data:`UPDATABLE_FIELDS`).

        A ``None`` value is a fact not learnt: it is left out and never clears what an earlier
        update set; when every value is ``None`` nothing is written (the index is still checked).
        """
        unknown = sorted(set(fields) - set(UPDATABLE_FIELDS))
        if unknown:
            raise ValueError(
                f"update: {', '.join(unknown)} cannot be updated "
                f"(only {', '.join(UPDATABLE_FIELDS)})"
            )
        if not fields:
            raise ValueError("update: give at least one field")
        learnt = {name: value for name, value in fields.items() if value is not None}
        for name, value in learnt.items():
            if name.endswith("_sec"):
                seconds(name, value)
            elif isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{name} must be an integer >= 0, got {value!r}")
        with self._lock:
            self._writable()
            if (
                isinstance(index, bool)
                or not isinstance(index, int)
                or not 0 <= index < self._calls
            ):
                raise ValueError(f"update: no call {index!r} (calls written: {self._calls})")
            if learnt:
                body = json.dumps({"update": index, "fields": learnt}, separators=(",", ":"))
                _write_all(self._fd, (body + "\n").encode("utf-8"))

    def close(self, end_reason: EndReason = "final_answer") -> None:
        """Write the end line and close the file (fsynced); a second call does nothing."""
        if end_reason not in END_REASONS:
            raise ValueError(
                f"end_reason: expected one of {', '.join(END_REASONS)}, got {end_reason!r}"
            )
        with self._lock:
            if self._closed:
                return
            self._closed = True
            end = {"end": {"end_reason": end_reason, "ended_sec": self.elapsed_sec()}}
            try:
                _write_all(self._fd, (json.dumps(end, separators=(",", ":")) + "\n").encode())
                os.fsync(self._fd)
            finally:
                os.close(self._fd)

    def __enter__(self) -> SessionJournal:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close("final_answer" if kind is None else "log_end")

    def _writable(self) -> None:
        if self._closed:
            raise ValueError(f"{self.path}: the session journal is closed")


def _fresh_id(now_wall: float) -> str:
    stamp = datetime.fromtimestamp(now_wall, UTC).strftime("%Y%m%dT%H%M%S%fZ")
    return f"session-{stamp}-{secrets.token_hex(4)}"


def _check_id(id: str) -> None:
    if not isinstance(id, str) or not id or id.startswith(".") or "/" in id or "\\" in id:
        raise ValueError(f"id: expected a file name (no '/', not starting with '.'), got {id!r}")
    if "\x00" in id or id != id.strip():
        raise ValueError(f"id: expected a file name without NUL or edge blanks, got {id!r}")


def _create_with_header(path: Path, header: str) -> int:
    """The session file, opened for appending, that appears under ``path`` with its whole
    header: written to a hidden sibling (O_EXCL), then linked to its name (which must be new;
    on a filesystem without hard links, renamed there after checking that it is)."""
    hidden = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(hidden, flags, 0o666)
    taken = FileExistsError(17, "a session of this id is already recorded here", str(path))
    try:
        _write_all(fd, (header + "\n").encode("utf-8"))
        try:
            os.link(hidden, path)
        except FileExistsError:
            raise taken from None
        except OSError:  # no hard links here (some network or FUSE filesystems)
            if os.path.lexists(path):
                raise taken from None
            os.rename(hidden, path)
    except BaseException:
        os.close(fd)
        raise
    finally:
        with contextlib.suppress(FileNotFoundError):  # gone when it was renamed
            os.unlink(hidden)
    return fd


def _write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` (one ``os.write`` for a line, unless the kernel takes less)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
