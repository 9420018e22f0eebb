"""What a running tool call reports about itself: progress times and cancellation facts.

Lifecycle: the executor (thread or asyncio) creates one :class:`CallNotes` per dispatched call
and puts it in the call's context before the tool starts; the tool finds it with
:func:`current_notes` and records progress and cancellation on it, also after the caller
abandoned the call; the episode copies what is known onto the receipt and the recording.
A sync or async tool reports progress with :func:`report_progress` (a no-op outside a bounded
call), an MCP client on each ``notifications/progress``; progress resets the call's idle
timeout in either executor. Times are read on the clock in force when the call was dispatched
(:attr:`CallNotes.clock`), whichever thread or loop reports.
Writes are single attribute stores or list appends, so a tool's thread or another loop may
write while the caller's loop reads.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from reviewlab.core._deadline import Clock, current_clock
from reviewlab.core._receipts import ToolReceipt
from reviewlab.core._vocab import Transport

# Guards the first use of a call's `abandoned` event, which the tool and the executor race to.
_EVENT_MADE = threading.Lock()

_NOTES: contextvars.ContextVar[CallNotes | None] = contextvars.ContextVar(
    "reviewlab_call_notes", default=None
)


@dataclass(slots=True)
class CallNotes:
    """What a tool reports about one call while it runs (progress, cancellation).

    ``call_id`` is the model's id of the tool call when the caller gave one (the round loop
    does). ``started`` is the dispatch time on :attr:`clock` (the clock in force when the call was
    dispatched, :func:`~reviewlab.core._deadline.current_clock`); ``progress_sec``
    lists the seconds after dispatch at which progress was reported;
    ``cancel_sent`` says a cancellation was sent to a remote server and
    ``cancel_honoured_sec`` how long after it the server stopped (a response or
    an error arrived), ``None`` while nothing came. ``cancel_kind`` says how the cancel went
    out (``notification``: ``notifications/cancelled``; ``stream_closed``: the request's stream
    was closed, the 2026-07-28 Streamable HTTP cancel). A valid result that arrived after the
    abandonment is recorded, never credited: ``late_result_sec`` (seconds after the
    abandonment) and ``late_result_chars``. ``reissued`` says the call was sent again under a
    new id after its stream dropped (idempotent tools only); ``protocol_version`` is the
    version the session negotiated. A task-augmented call (MCP Tasks) records its
    ``task_action`` (``cancel`` or ``detach`` at the bound), ``task_id``, the ``task_states``
    seen in order, the server's ``task_immediate_response`` text and what ``tasks/cancel`` got
    (``task_cancel_ack``).
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
    call_id: str = ""
    cancel_kind: str | None = None
    late_result_sec: float | None = None
    late_result_chars: int | None = None
    reissued: bool = False
    protocol_version: str | None = None
    task_action: str | None = None
    task_id: str | None = None
    task_states: list[str] = field(default_factory=list)
    task_immediate_response: str | None = None
    task_detached: bool = False
    task_cancel_ack: str | None = None
    detached_sec: float | None = None
    abandoned_sec: float | None = None
    """When the executor abandoned the call (seconds after dispatch; ``None``: it did not)."""
    clock: Clock = field(default_factory=current_clock, repr=False)
    _abandoned: threading.Event | None = field(default=None, init=False, repr=False)

    @property
    def abandoned(self) -> threading.Event:
        """Set when the executor abandons the call: a tool that can stop early may watch it (the
        real replay engine stops a call whose server was recorded honouring a cancel).

        Made on first use, under a lock so that the tool and the executor always share one
        (most calls return inside their bound and never need it: it is not on their path)."""
        event = self._abandoned
        if event is None:
            with _EVENT_MADE:
                event = self._abandoned
                if event is None:
                    event = self._abandoned = threading.Event()
        return event

    def progress(self) -> None:
        """Record progress now; it resets the call's idle timeout (thread-safe: one store each)."""
        now = self.clock.now()
        self.progress_sec.append(max(0.0, now - self.started))
        self.last_activity = now

    def cancelled(self, kind: str = "notification") -> None:
        """Record that a cancellation was sent to the server now (``kind``: how)."""
        self.cancel_sent = True
        self.cancel_kind = kind
        self.cancel_sent_sec = max(0.0, self.clock.now() - self.started)

    def stopped(self) -> None:
        """Record that the server answered (result or error) after the cancellation."""
        if self.cancel_sent and self.cancel_honoured_sec is None:
            sent = self.cancel_sent_sec or 0.0
            self.cancel_honoured_sec = max(0.0, self.clock.now() - self.started - sent)

    def abandon(self) -> None:
        """Record that the executor abandoned the call now; tell the tool (:attr:`abandoned`)."""
        if self.abandoned_sec is None:
            self.abandoned_sec = max(0.0, self.clock.now() - self.started)
        self.abandoned.set()

    def detached(self) -> None:
        """Record that the call's task was detached (not cancelled) now."""
        self.task_detached = True
        self.detached_sec = max(0.0, self.clock.now() - self.started)

    def task_state(self, status: str) -> None:
        """Record a task status seen now (a repeat of the last one is not recorded twice)."""
        if status and (not self.task_states or self.task_states[-1] != status):
            self.task_states.append(status)

    def late(self, result_chars: int) -> None:
        """Record a valid result that arrived after the abandonment (credited to nothing)."""
        if self.late_result_sec is None:
            # How late: from the cancel, or from the detachment of a task that was not cancelled.
            sent = self.cancel_sent_sec if self.cancel_sent_sec is not None else self.detached_sec
            sent = sent or 0.0
            self.late_result_sec = max(0.0, self.clock.now() - self.started - sent)
            self.late_result_chars = result_chars


def current_notes() -> CallNotes | None:
    """The notes of the call this code runs for (``None`` outside a bounded call)."""
    return _NOTES.get()


def notes_scope(notes: CallNotes) -> None:
    """Make ``notes`` the current call's notes in this context (a task's or a thread's own copy)."""
    _NOTES.set(notes)


@contextmanager
def asking_for(notes: CallNotes) -> Iterator[None]:
    """Make ``notes`` current in the caller's context for the block: what an executor does
    while it asks something about the call (a hedge admission), so :func:`current_notes`
    answers with the call being decided."""
    token = _NOTES.set(notes)
    try:
        yield
    finally:
        _NOTES.reset(token)


def report_progress() -> bool:
    """Report progress for the bounded call this code runs for (it resets the call's idle
    timeout); whether there was such a call. For tools run by either executor."""
    notes = _NOTES.get()
    if notes is None:
        return False
    notes.progress()
    return True


def notes_onto_receipt(notes: CallNotes, receipt: ToolReceipt) -> None:
    """Copy what is known of a remote call's cancel and late answer onto its receipt (the one
    place the episode does it, when it ends)."""
    receipt.cancel_sent = notes.cancel_sent
    receipt.cancel_honoured_sec = notes.cancel_honoured_sec
    receipt.cancel_kind = notes.cancel_kind
    receipt.late_result_sec = notes.late_result_sec
    receipt.late_result_chars = notes.late_result_chars
    receipt.reissued = notes.reissued
    if notes.task_id is not None:
        receipt.task_id = notes.task_id
        receipt.task_action = notes.task_action
        receipt.task_states = list(notes.task_states)
        receipt.task_cancel_ack = notes.task_cancel_ack
