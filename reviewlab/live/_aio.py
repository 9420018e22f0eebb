"""The asyncio-native bounded executor: await a tool call at most its bound, abandon it after.

Lifecycle of one call (the states of :class:`~reviewlab.live._call_results.CallStatus`): pending →
running → returned | raised | abandoned (the hard bound or the idle timeout passed first), or
pending → refused (the loose-call cap is full). An ``async`` tool runs as its own task, a sync
tool on a reused worker thread; the caller awaits one waiter future that the tool's completion
or a loop timer resolves, so the fate is decided once, on the loop thread.

Invariants: an abandoned ``async`` tool is cancelled and control returns at once; until it
stops it is loose, past ``grace_sec`` a zombie whose time-to-stop is recorded; an abandoned
sync tool is loose until it returns, and its thread is never reused. Only the waits are this
executor's own: admission, terms and results are
:class:`~reviewlab.live._executor_base.ExecutorBase`'s; it does not hedge (a hedging policy is
refused by name). In full: docs/architecture.md, "The asyncio executor".
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import inspect
import math
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from reviewlab.core._deadline import narrow_for_rest_of_context
from reviewlab.core._policy import Bound
from reviewlab.live._aio_ledger import AsyncLedger
from reviewlab.live._call_notes import CallNotes, notes_scope
from reviewlab.live._call_results import CallResult
from reviewlab.live._executor_base import DEFAULT_LOOSE_CAP, Dispatched, ExecutorBase
from reviewlab.live._executor_workers import ToolWorker, ToolWorkers

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
    """A :class:`CallResult` plus, once known, whether the abandoned call was a zombie."""

    zombie: bool = False


class _Waiter:
    """What the caller awaits for one call, and the state both sides share."""

    __slots__ = (
        "claim",
        "waiter",
        "loop",
        "value",
        "exc",
        "abandoned_at",
        "result",
        "published",
        "idle_timer",
    )

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.waiter: asyncio.Future[str] = loop.create_future()
        # Sync tools only (set before their thread starts): `claim` is held for good by
        # whichever side decides the fate first (the tool's thread or the caller);
        # `published` (held until then) tells a losing thread that its result record is ready.
        self.claim: threading.Lock | None = None
        self.published: threading.Lock | None = None
        self.value: Any = None
        self.exc: BaseException | None = None
        self.abandoned_at = 0.0
        self.result: AsyncCallResult | None = None
        self.idle_timer: asyncio.TimerHandle | None = None

    def wake(self, why: str) -> None:
        if not self.waiter.done():
            self.waiter.set_result(why)


async def _run_async(
    fn: Callable[..., Any],
    args: Any,
    kwargs: Any,
    deadline_at: float | None,
    notes: CallNotes,
    waiter: _Waiter,
) -> None:
    """The task of one async call: it wakes the caller itself (one loop turn fewer)."""
    notes_scope(notes)  # the task runs in its own copy of the context
    if deadline_at is not None:
        narrow_for_rest_of_context(deadline_at)
    try:
        waiter.value = await fn(*args, **kwargs)
    except asyncio.CancelledError as exc:
        # Our cancellation (after the abandonment) is a no-op here; a tool that cancelled
        # itself inside its bound raised.
        waiter.exc = exc
        waiter.wake("done")
        raise
    except BaseException as exc:  # noqa: BLE001 - the tool's own failure becomes a record
        waiter.exc = exc
    waiter.wake("done")


class AsyncBoundedExecutor(ExecutorBase):
    """Awaits calls, each bounded; abandons (and cancels) the ones that outlive their bound.

    ``loose_cap`` (``None``: no cap) limits how many abandoned calls may be loose
    before new calls are refused; ``grace_sec`` is how long an abandoned call may
    take to stop before it counts as a zombie. One executor may serve many
    episodes, on one event loop at a time.
    """

    ledger: AsyncLedger
    keeps_notes = True
    result_type = AsyncCallResult

    def __init__(
        self,
        *,
        loose_cap: int | None = DEFAULT_LOOSE_CAP,
        grace_sec: float = DEFAULT_GRACE_SEC,
        name: str = "bounded-async",
    ) -> None:
        super().__init__(loose_cap=loose_cap, name=name, hedging=None, ledger=AsyncLedger())
        if (
            isinstance(grace_sec, bool)
            or not isinstance(grace_sec, int | float)
            or not (0 <= grace_sec < math.inf)
        ):
            raise ValueError(f"grace_sec: expected finite non-negative seconds, got {grace_sec!r}")
        self.grace_sec = float(grace_sec)
        self._pool = ToolWorkers("reviewlab-async-tool")
        # Idle workers hold the pool, never the executor: once it is dropped, they exit.
        weakref.finalize(self, self._pool.shutdown)

    @property
    def threads_started(self) -> int:
        """ToolWorker threads started so far for sync tools (reuse keeps this low)."""
        return self._pool.started

    async def run(
        self,
        fn: Callable[..., Any],
        *args: Any,
        bound: Bound | float | None,
        name: str = "",
        idle_sec: float | None = None,
        transport: Any = None,
        call_id: str = "",
        **kwargs: Any,
    ) -> AsyncCallResult:
        """Run ``fn(*args, **kwargs)`` (async: as a task; sync: on a thread) and await its bound.

        ``bound`` is a :class:`Bound` or seconds; ``None`` waits forever, ``0``
        abandons the call at once unless it already returned. ``idle_sec`` adds
        an idle timeout reset by progress; ``call_id`` goes on the call's notes. Never raises
        for the tool's own
        exception (status ``raised``); a cancellation of the caller cancels the
        tool too and propagates.
        """
        key = getattr(fn, "__func__", fn)
        is_async = _ASYNC.get(key)
        if is_async is None:
            if len(_ASYNC) > 1024:
                _ASYNC.clear()
            is_async = _ASYNC[key] = is_async_callable(fn)
        loop = asyncio.get_running_loop()
        call = self.admit(
            name or self._name_of(fn),
            args,
            kwargs,
            bound,
            idle_sec,
            transport or ("async" if is_async else "thread"),
            call_id,
            loop.time,
        )
        if isinstance(call, CallResult):
            assert isinstance(call, AsyncCallResult)
            return call  # refused: never started
        bound_sec = call.bound_sec
        deadline_at = None if bound_sec is None else call.start + bound_sec
        waiter = _Waiter(loop)
        task: asyncio.Task[Any] | None = None
        if is_async:
            task = loop.create_task(_run_async(fn, args, kwargs, deadline_at, call.notes, waiter))
        else:
            waiter.claim = threading.Lock()
            published = waiter.published = threading.Lock()
            published.acquire()
            self._pool.dispatch(
                _ThreadCall(
                    fn, args, kwargs, contextvars.copy_context(), deadline_at, call, waiter, self
                )
            )
        hard: asyncio.TimerHandle | None = None
        if call.idle_sec is not None:
            waiter.idle_timer = loop.call_at(
                call.real_at(call.idle_due()), self._idle_check, waiter, call
            )
        if bound_sec is not None:
            hard = loop.call_at(call.real_at(bound_sec), waiter.wake, "hard")
        try:
            why = await waiter.waiter
        except asyncio.CancelledError:
            if task is not None:
                task.cancel()
            raise
        finally:
            if hard is not None:
                hard.cancel()
            if waiter.idle_timer is not None:
                waiter.idle_timer.cancel()
        claim = waiter.claim
        if why == "done" or (claim is not None and not claim.acquire(blocking=False)):
            # The tool finished first (a sync tool's thread claimed the call): inside its bound.
            result = call.finished(AsyncCallResult, waiter.value, waiter.exc)
            assert isinstance(result, AsyncCallResult)
            return result
        return self._abandon(waiter, call, task, why)

    # -- abandonment -----------------------------------------------------------
    def _idle_check(self, waiter: _Waiter, call: Dispatched) -> None:
        """Fire the idle timeout, or re-arm it from the last progress."""
        if call.idle_quiet():
            waiter.wake("idle")
        elif not waiter.waiter.done():
            waiter.idle_timer = waiter.loop.call_at(
                call.real_at(call.idle_due()), self._idle_check, waiter, call
            )

    def _abandon(
        self, waiter: _Waiter, call: Dispatched, task: asyncio.Task[Any] | None, why: str
    ) -> AsyncCallResult:
        result = call.abandoned(AsyncCallResult, why, 0)
        assert isinstance(result, AsyncCallResult)
        clock = call.clock
        now = waiter.abandoned_at = clock.now()
        waiter.result = result
        self.ledger._abandon()
        waiter.loop.call_later(clock.real_sec(self.grace_sec), self._grace_passed, result)
        if task is not None:
            task.cancel()
            task.add_done_callback(lambda _t: self._settle(result, max(0.0, clock.now() - now)))
        else:
            # The thread lost the claim; it settles its own call once it returns.
            assert waiter.published is not None
            waiter.published.release()
        return result

    def _grace_passed(self, result: AsyncCallResult) -> None:
        if result.zombie_sec is None:
            result.zombie = True
            self.ledger._zombie()

    def _settle(self, result: AsyncCallResult, stop_sec: float) -> None:
        """The abandoned call stopped ``stop_sec`` after its abandonment (on its clock)."""
        result.zombie_sec = stop_sec
        self.ledger._settle(stop_sec, not result.zombie and stop_sec <= self.grace_sec)
        if result.settled is not None:
            result.settled.set()


class _ThreadCall:
    """A sync tool's call on a worker thread: whichever side takes the waiter's ``claim`` first
    decides its fate (the worker: returned or raised; the caller: abandoned)."""

    __slots__ = ("fn", "args", "kwargs", "context", "deadline_at", "call", "waiter", "executor")

    def __init__(
        self,
        fn: Callable[..., Any],
        args: Any,
        kwargs: Any,
        context: contextvars.Context,
        deadline_at: float | None,
        call: Dispatched,
        waiter: _Waiter,
        executor: AsyncBoundedExecutor,
    ) -> None:
        self.fn = fn
        self.args = args
        self.kwargs = kwargs
        self.context = context
        self.deadline_at = deadline_at
        self.call = call
        self.waiter = waiter
        self.executor = executor

    def run(self) -> None:
        # In a copy of the caller's context made for this call alone: narrowed for good.
        notes_scope(self.call.notes)
        if self.deadline_at is not None:
            narrow_for_rest_of_context(self.deadline_at)
        try:
            self.waiter.value = self.fn(*self.args, **self.kwargs)
        except BaseException as exc:  # noqa: BLE001 - the tool's own failure becomes a record
            self.waiter.exc = exc

    def work(self, pool: ToolWorkers, worker: ToolWorker) -> bool:
        """Run the tool on ``worker``; True when the worker rejoined the pool."""
        self.context.run(self.run)
        waiter = self.waiter
        assert waiter.claim is not None and waiter.published is not None
        if waiter.claim.acquire(blocking=False):
            # Finished before the caller gave up: rejoin the pool first, then wake the caller
            # (the loop may be gone already).
            keep = pool.rejoin(worker)
            with contextlib.suppress(RuntimeError):
                waiter.loop.call_soon_threadsafe(waiter.wake, "done")
            return keep
        # Abandoned: the caller won the claim; wait until it published the record.
        waiter.published.acquire()
        result = waiter.result
        assert result is not None
        waiter.value = waiter.exc = None  # a late value sources nothing
        self.executor._settle(result, max(0.0, self.call.clock.now() - waiter.abandoned_at))
        return False
