"""The asyncio-native bounded executor: await a tool call at most its bound, abandon it after.

Lifecycle of one call (the same states as :class:`~reviewlab.live.executor.CallStatus`)::

    pending ──> running ──> returned   (the tool returned inside its bound)
       │           ├──────> raised     (the tool raised inside its bound)
       │           └──────> abandoned  (the hard bound or the idle timeout passed first)
       └──────────────────> refused    (never started: the loose-call cap is full)

An ``async`` tool runs as its own task; a sync tool runs on a fresh daemon
thread, exactly as the thread executor would run it. Either way the caller
awaits a single waiter future that the tool's completion or a loop timer
resolves, whichever comes first: the fate is decided once, on the loop thread
(a sync tool's thread claims its call under a lock, as in the thread executor).

Abandonment:

* an abandoned ``async`` tool is *cancelled*; control returns to the caller at
  once, whether or not the task honours the cancellation. Until the task stops
  it is *loose*. A task still running ``grace_sec`` after the abandonment is a
  *zombie* (it swallowed the cancellation or keeps working past it); when it
  finally stops, its time-to-stop is recorded (:attr:`AsyncCallResult.zombie_sec`
  and the ledger).
* an abandoned sync tool cannot be cancelled: its thread is loose until the tool
  returns, and it counts as a zombie once past the grace period, like any other.

Idle timeouts: with ``idle_sec`` the call is also abandoned once it has shown no
progress (:meth:`CallNotes.progress`) for ``idle_sec`` seconds; progress resets
that clock, the hard bound caps it. The result then says ``bound.by == "idle"``
and its ``bound_sec`` is the moment the idle timeout fired (last progress plus
``idle_sec``), so a recording censors the call exactly there.

Each call carries a :class:`CallNotes` object in its context
(:func:`current_notes`): the tool (an MCP client, say) writes progress times and
cancel facts there, and the episode copies them onto the receipt.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import inspect
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from reviewlab.core.deadline import (
    execution_deadline_scope,
    monotonic_now,
    narrow_for_rest_of_context,
)
from reviewlab.core.policy import Bound
from reviewlab.core.receipts import refused_text
from reviewlab.core.vocab import Transport
from reviewlab.live.aio_ledger import AsyncLedger
from reviewlab.live.call_notes import CallNotes, current_notes, notes_scope
from reviewlab.live.executor import CallResult, CallStatus
from reviewlab.live.loop_runner import run_coroutine

__all__ = [
    "DEFAULT_GRACE_SEC",
    "DEFAULT_LOOSE_CAP",
    "AsyncBoundedExecutor",
    "AsyncCallResult",
    "AsyncLedger",
    "CallNotes",
    "current_notes",
    "is_async_callable",
    "run_coroutine",
]

DEFAULT_LOOSE_CAP = 16
# Whether a callable is async, by function (bound methods share theirs): asked once, not per call.
_ASYNC: dict[Any, bool] = {}
DEFAULT_GRACE_SEC = 0.5
"""Seconds an abandoned call may take to stop before the ledger counts it as a zombie."""


def is_async_callable(fn: Any) -> bool:
    """Whether calling ``fn`` returns a coroutine (an ``async def`` function or callable)."""
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004 - a callable object's async __call__
    )


@dataclass(slots=True)
class AsyncCallResult(CallResult):
    """A :class:`CallResult` plus the call's notes and, once known, whether it was a zombie."""

    notes: CallNotes | None = None
    zombie: bool = False


class _Call:
    """One dispatched call: the waiter the caller awaits and the state both sides share."""

    __slots__ = (
        "claim",
        "waiter",
        "loop",
        "value",
        "exc",
        "fired_at",
        "result",
        "published",
        "grace",
        "idle_timer",
    )

    def __init__(self, loop: asyncio.AbstractEventLoop, grace: float) -> None:
        self.loop = loop
        self.waiter: asyncio.Future[str] = loop.create_future()
        # Sync tools only (set before their thread starts): `claim` is held for good by
        # whichever side decides the fate first (the tool's thread or the caller);
        # `published` tells a losing thread that its result record is ready.
        self.claim: threading.Lock | None = None
        self.published: threading.Event | None = None
        self.value: Any = None
        self.exc: BaseException | None = None
        self.fired_at = 0.0
        self.result: AsyncCallResult | None = None
        self.grace = grace
        self.idle_timer: asyncio.TimerHandle | None = None

    def wake(self, why: str) -> None:
        if not self.waiter.done():
            if why != "done":
                self.fired_at = monotonic_now()
            self.waiter.set_result(why)


async def _run_async(
    fn: Callable[..., Any],
    args: Any,
    kwargs: Any,
    deadline_at: float | None,
    notes: CallNotes,
    call: _Call,
) -> None:
    """The task of one async call: it wakes the caller itself (one loop turn fewer)."""
    notes_scope(notes)  # the task runs in its own copy of the context
    if deadline_at is not None:
        narrow_for_rest_of_context(deadline_at)
    try:
        call.value = await fn(*args, **kwargs)
    except asyncio.CancelledError as exc:
        # Our cancellation (after the abandonment) is a no-op here; a tool that cancelled
        # itself inside its bound raised.
        call.exc = exc
        call.wake("done")
        raise
    except BaseException as exc:  # noqa: BLE001 - the tool's own failure becomes a record
        call.exc = exc
    call.wake("done")


class AsyncBoundedExecutor:
    """Awaits calls, each bounded; abandons (and cancels) the ones that outlive their bound.

    ``loose_cap`` (``None``: no cap) limits how many abandoned calls may be loose
    before new calls are refused; ``grace_sec`` is how long an abandoned call may
    take to stop before it counts as a zombie. One executor may serve many
    episodes, on one event loop at a time.
    """

    def __init__(
        self,
        *,
        loose_cap: int | None = DEFAULT_LOOSE_CAP,
        grace_sec: float = DEFAULT_GRACE_SEC,
        name: str = "bounded-async",
    ) -> None:
        if loose_cap is not None and (
            isinstance(loose_cap, bool) or not isinstance(loose_cap, int) or loose_cap < 0
        ):
            raise ValueError(f"loose_cap: expected a non-negative int or None, got {loose_cap!r}")
        if (
            isinstance(grace_sec, bool)
            or not isinstance(grace_sec, int | float)
            or not (0 <= grace_sec < math.inf)
        ):
            raise ValueError(f"grace_sec: expected finite non-negative seconds, got {grace_sec!r}")
        self.loose_cap = loose_cap
        self.grace_sec = float(grace_sec)
        self.name = name
        self.ledger = AsyncLedger()

    @property
    def loose(self) -> int:
        """Abandoned calls still running now."""
        return self.ledger.loose

    async def run(
        self,
        fn: Callable[..., Any],
        *args: Any,
        bound: Bound | float | None,
        name: str = "",
        idle_sec: float | None = None,
        transport: Transport | None = None,
        **kwargs: Any,
    ) -> AsyncCallResult:
        """Run ``fn(*args, **kwargs)`` (async: as a task; sync: on a thread) and await its bound.

        ``bound`` is a :class:`Bound` or seconds; ``None`` waits forever, ``0``
        abandons the call at once unless it already returned. ``idle_sec`` adds
        an idle timeout reset by progress. Never raises for the tool's own
        exception (status ``raised``); a cancellation of the caller cancels the
        tool too and propagates.
        """
        bound_obj = bound if isinstance(bound, Bound) or bound is None else _seconds_bound(bound)
        bound_sec = None if bound_obj is None else bound_obj.sec
        name = name or getattr(fn, "__name__", "call")
        key = getattr(fn, "__func__", fn)
        is_async = _ASYNC.get(key)
        if is_async is None:
            if len(_ASYNC) > 1024:
                _ASYNC.clear()
            is_async = _ASYNC[key] = is_async_callable(fn)
        notes = CallNotes(transport or ("async" if is_async else "thread"))
        cap = self.loose_cap
        if cap is not None and self.ledger.loose >= cap:
            self.ledger._refuse()
            return AsyncCallResult(
                name,
                CallStatus.REFUSED,
                time.time(),
                0.0,
                bound_obj,
                text=refused_text(name, self.ledger.loose, cap),
                notes=notes,
            )
        loop = asyncio.get_running_loop()
        started_wall = time.time()
        notes.started = notes.last_activity = start = monotonic_now()
        real_start = loop.time()
        deadline_at = None if bound_sec is None else start + bound_sec
        call = _Call(loop, self.grace_sec)
        task: asyncio.Task[Any] | None = None
        if is_async:
            task = loop.create_task(_run_async(fn, args, kwargs, deadline_at, notes, call))
        else:
            self._start_thread(call, fn, args, kwargs, deadline_at, notes)
        hard: asyncio.TimerHandle | None = None
        if idle_sec is not None and (bound_sec is None or idle_sec < bound_sec):
            call.idle_timer = loop.call_at(
                real_start + idle_sec, self._idle_check, call, notes, idle_sec
            )
        if bound_sec is not None:
            hard = loop.call_at(real_start + bound_sec, call.wake, "hard")
        try:
            why = await call.waiter
        except asyncio.CancelledError:
            if task is not None:
                task.cancel()
            raise
        finally:
            if hard is not None:
                hard.cancel()
            if call.idle_timer is not None:
                call.idle_timer.cancel()
        claim = call.claim
        if why == "done" or (claim is not None and not claim.acquire(blocking=False)):
            # The tool finished first (a sync tool's thread claimed the call): inside its bound.
            duration = monotonic_now() - start
            if call.exc is not None:
                return AsyncCallResult(
                    name,
                    CallStatus.RAISED,
                    started_wall,
                    duration,
                    bound_obj,
                    exc=call.exc,
                    notes=notes,
                )
            return AsyncCallResult(
                name,
                CallStatus.RETURNED,
                started_wall,
                duration,
                bound_obj,
                value=call.value,
                notes=notes,
            )
        return self._abandon(call, task, why, name, started_wall, start, bound_obj, notes)

    # -- abandonment -----------------------------------------------------------
    def _idle_check(self, call: _Call, notes: CallNotes, idle_sec: float) -> None:
        """Fire the idle timeout, or re-arm it at the last progress plus ``idle_sec``."""
        loop = call.loop
        quiet = monotonic_now() - notes.last_activity
        if quiet >= idle_sec:
            call.wake("idle")
        elif not call.waiter.done():
            call.idle_timer = loop.call_at(
                loop.time() + (idle_sec - quiet), self._idle_check, call, notes, idle_sec
            )

    def _abandon(
        self,
        call: _Call,
        task: asyncio.Task[Any] | None,
        why: str,
        name: str,
        started_wall: float,
        start: float,
        bound: Bound | None,
        notes: CallNotes,
    ) -> AsyncCallResult:
        now = monotonic_now()
        if why == "idle":
            # The call's effective bound was the moment its idle timeout fired.
            tool_sec = None if bound is None else bound.tool_timeout_sec
            remaining = None if bound is None else bound.remaining_sec
            bound = Bound(max(0.0, call.fired_at - start), "idle", tool_sec, remaining)
        result = AsyncCallResult(
            name,
            CallStatus.ABANDONED,
            started_wall,
            now - start,
            bound,
            settled=threading.Event(),
            notes=notes,
        )
        call.result = result
        self.ledger._abandon()
        loop = call.loop
        loop.call_later(call.grace, self._grace_passed, result)
        if task is not None:
            task.cancel()
            task.add_done_callback(lambda _t: self._settle(result, now))
        else:
            # The thread lost the claim; it settles its own call once it returns.
            call.fired_at = now
            assert call.published is not None
            call.published.set()
        return result

    def _grace_passed(self, result: AsyncCallResult) -> None:
        if result.zombie_sec is None:
            result.zombie = True
            self.ledger._zombie()

    def _settle(self, result: AsyncCallResult, abandoned_at: float) -> None:
        stop = max(0.0, monotonic_now() - abandoned_at)
        result.zombie_sec = stop
        self.ledger._settle(stop, not result.zombie)
        if result.settled is not None:
            result.settled.set()

    # -- sync tools on threads ---------------------------------------------------
    def _start_thread(
        self,
        call: _Call,
        fn: Callable[..., Any],
        args: Any,
        kwargs: Any,
        deadline_at: float | None,
        notes: CallNotes,
    ) -> None:
        context = contextvars.copy_context()
        claim = call.claim = threading.Lock()
        published = call.published = threading.Event()

        def body() -> None:
            notes_scope(notes)
            try:
                if deadline_at is None:
                    call.value = fn(*args, **kwargs)
                else:
                    with execution_deadline_scope(deadline_at):
                        call.value = fn(*args, **kwargs)
            except BaseException as exc:  # noqa: BLE001 - the tool's own failure becomes a record
                call.exc = exc

        def work() -> None:
            context.run(body)
            if claim.acquire(blocking=False):
                # Finished before the caller gave up: wake it (the loop may be gone already).
                with contextlib.suppress(RuntimeError):
                    call.loop.call_soon_threadsafe(call.wake, "done")
                return
            # Abandoned: the caller won the claim; wait until it published the record.
            published.wait()
            result = call.result
            assert result is not None
            call.value = call.exc = None  # a late value sources nothing
            stop = max(0.0, monotonic_now() - call.fired_at)
            result.zombie_sec = stop
            self.ledger._settle(stop, not result.zombie and stop <= call.grace)
            if result.settled is not None:
                result.settled.set()

        threading.Thread(target=work, name=f"reviewlab-async-tool-{id(call)}", daemon=True).start()


def _seconds_bound(seconds: float) -> Bound:
    value = float(seconds)
    if math.isnan(value) or value < 0:
        raise ValueError(f"bound: expected non-negative seconds, got {seconds!r}")
    return Bound(value, "tool_timeout", value, None)
