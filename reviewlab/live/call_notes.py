"""What a running tool call reports about itself: progress times and cancellation facts.

Lifecycle: the executor creates one :class:`CallNotes` per dispatched call and puts it in the
call's context before the tool starts; the tool (an MCP client, say) finds it with
:func:`current_notes` and records progress and cancellation on it, also after the caller
abandoned the call; the episode copies what is known onto the receipt and the recording.
Writes are single attribute stores or list appends, so a tool's thread or another loop may
write while the caller's loop reads.
"""

from __future__ import annotations

import contextvars
import threading
from dataclasses import dataclass, field

from reviewlab.core.deadline import monotonic_now
from reviewlab.core.vocab import Transport

__all__ = ["CallNotes", "current_notes", "notes_scope"]

_NOTES: contextvars.ContextVar[CallNotes | None] = contextvars.ContextVar(
    "reviewlab_call_notes", default=None
)


@dataclass(slots=True)
class CallNotes:
    """What a tool reports about one call while it runs (progress, cancellation).

    ``started`` is the dispatch time on :func:`monotonic_now`; ``progress_sec``
    lists the seconds after dispatch at which progress was reported;
    ``cancel_sent`` says a cancellation was sent to a remote server and
    ``cancel_honoured_sec`` how long after it the server stopped (a response or
    an error arrived), ``None`` while nothing came.
    """

    transport: Transport
    started: float = 0.0
    progress_sec: list[float] = field(default_factory=list)
    cancel_sent: bool = False
    cancel_sent_sec: float | None = None
    cancel_honoured_sec: float | None = None
    request_id: str | None = None
    cancel_settled: threading.Event | None = None
    """Set by a remote-call tool once the call's cancellation, if any, has been sent (or the
    call ended without one): what is known about ``cancel_sent`` is final from then on."""
    last_activity: float = 0.0

    def progress(self) -> None:
        """Record progress now; it resets the call's idle timeout (thread-safe: one store each)."""
        now = monotonic_now()
        self.progress_sec.append(max(0.0, now - self.started))
        self.last_activity = now

    def cancelled(self) -> None:
        """Record that a cancellation was sent to the server now."""
        self.cancel_sent = True
        self.cancel_sent_sec = max(0.0, monotonic_now() - self.started)

    def stopped(self) -> None:
        """Record that the server answered (result or error) after the cancellation."""
        if self.cancel_sent and self.cancel_honoured_sec is None:
            sent = self.cancel_sent_sec or 0.0
            self.cancel_honoured_sec = max(0.0, monotonic_now() - self.started - sent)


def current_notes() -> CallNotes | None:
    """The notes of the call this code runs for (``None`` outside a bounded call)."""
    return _NOTES.get()


def notes_scope(notes: CallNotes) -> None:
    """Make ``notes`` the current call's notes in this context (a task's or a thread's own copy)."""
    _NOTES.set(notes)
