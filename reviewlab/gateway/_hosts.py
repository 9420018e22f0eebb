"""Host sessions: each connection a host opens on the gateway, with its recording and budget.

Lifecycle: a connection's first request makes its :class:`HostSession` (:meth:`HostSessions.of`);
its first recorded call opens its recording, one session file of the gateway's folder
(:meth:`HostSessions.journal_of`); the connection's end (its exit stack unwinding) closes that
recording as ``final_answer`` and forgets the session, and so does the gateway's end for the
sessions still open. Sessions are keyed by the connection object itself, which the table holds:
a new connection never finds an older one's session through a reused ``id()``.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from reviewlab.core._deadline import monotonic_now
from reviewlab.gateway._routes import Route, annotated_kind


class HostSession:
    """One host connection: its recording and, under a session budget, its deadline.

    ``connection`` is the SDK's connection (``None`` when a request came without one);
    ``deadline_at`` the monotonic time the session budget runs out (``None``: no budget);
    ``journal`` its recording once a call was recorded; ``calls`` how many calls it made.
    """

    def __init__(self, connection: Any, budget_sec: float | None) -> None:
        self.connection = connection
        self.started_wall = time.time()
        self.deadline_at = None if budget_sec is None else monotonic_now() + budget_sec
        self.journal: Any = None
        self.calls = 0


class HostSessions:
    """The gateway's open host sessions, oldest first; iterating gives their connections.

    ``budget_sec`` is every session's budget (``None``: none); ``record_dir`` the folder the
    recordings go to (``None``: nothing recorded); ``header`` makes the meta of a recording
    when it opens (the upstreams' names and tools' kinds as they are then).
    """

    def __init__(
        self,
        *,
        budget_sec: float | None,
        record_dir: Path | None,
        header: Callable[[], dict[str, str]],
    ) -> None:
        self.budget_sec = budget_sec
        self.record_dir = record_dir
        self._header = header
        self._open: dict[Any, HostSession] = {}  # connection -> its session, oldest first

    def __iter__(self) -> Iterator[Any]:
        return iter(list(self._open))

    def __len__(self) -> int:
        return len(self._open)

    def of(self, ctx: Any) -> HostSession:
        """The host session a request came on (made on its first request)."""
        connection = getattr(ctx.session, "_connection", None)
        host = self._open.get(connection)
        if host is None:
            host = self._open[connection] = HostSession(connection, self.budget_sec)
            stack = getattr(connection, "exit_stack", None)
            if stack is not None:
                stack.callback(self._gone, connection)
        return host

    def _gone(self, connection: Any) -> None:
        host = self._open.pop(connection, None)
        if host is not None:
            _close(host)

    def close_all(self) -> None:
        """Close every open session's recording (the gateway is stopping)."""
        for host in list(self._open.values()):
            _close(host)

    def journal_of(self, host: HostSession) -> Any:
        """The host session's recording, opened on its first call (``None``: not recording)."""
        if self.record_dir is None:
            return None
        if host.journal is None:
            from reviewlab.recording import SessionJournal

            host.journal = SessionJournal(
                self.record_dir, meta=self._header(), started_wall=host.started_wall
            )
        return host.journal


def _close(host: HostSession) -> None:
    journal, host.journal = host.journal, None
    if journal is not None:
        with contextlib.suppress(OSError):
            journal.close("final_answer")


def recording_header(
    servers: Iterable[str], record_args: bool, tools: Mapping[str, Route]
) -> dict[str, str]:
    """The meta of a host session's recording: who recorded it, the servers, whether the
    arguments were kept, and what the upstreams' annotations say of their tools."""
    from reviewlab.recording._annotations import kinds_meta

    kinds = {}
    idempotent = []
    for shown, route in tools.items():
        kind = annotated_kind(route.entry)
        if kind is not None:
            kinds[shown] = kind
        notes = route.entry.get("annotations") or {}
        if isinstance(notes, Mapping) and notes.get("idempotentHint") is True:
            idempotent.append(shown)
    return {
        "recorded_by": "reviewlab gateway",
        "servers": ",".join(servers),
        "args": "kept" if record_args else "sha256 and size only",
        **kinds_meta(kinds, idempotent),
    }
