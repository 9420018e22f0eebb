"""The bounded executor: run a tool call on a worker thread, wait its bound, abandon it after.

Lifecycle of one call (:class:`CallStatus`)::

    pending ──> running ──> returned   (the tool returned inside its bound)
       │           ├──────> raised     (the tool raised inside its bound)
       │           └──────> abandoned  (the bound passed first)
       └──────────────────> refused    (never started: the loose-worker cap is full)

*pending* and *running* are transient: :meth:`BoundedExecutor.run` only ever
hands back a call in one of the four final states. The fate of a running call is
decided exactly once, by whichever side wins the call's *claim* lock: the worker
when the tool finishes (returned or raised), the caller when its wait times out
(abandoned). A tool that finishes a hair after the bound but before the caller
claimed it counts as returned, so nothing it produced is ever both delivered and
abandoned.

Invariants:

* A worker is never joined and never killed (Python cannot kill a thread). An
  abandoned worker is a *loose worker* until its tool returns; whatever it
  returns then is recorded in the ledger (zombie seconds) and credited to
  nothing: the :class:`CallResult` the caller got never changes, except for
  :attr:`CallResult.zombie_sec`, filled in when the loose worker comes back.
* Workers are reused while they behave. An abandoned worker is retired: when it
  finally returns it exits instead of rejoining the pool, so a wedged tool costs
  one thread, never a pool slot.
* With a loose-worker cap, a call that finds ``loose >= cap`` is refused before
  any thread is touched. Calls already running when the cap is reached may still
  be abandoned, so the peak can exceed the cap by at most the calls in flight.
* The worker runs in a copy of the caller's context, inside
  ``execution_deadline_scope(monotonic_now() + bound)``: the tool sees a deadline
  that ends at its own bound (and any earlier one the caller inherited).
* Workers are daemon threads, so a wedged tool never blocks interpreter exit.

Waiting is a blocking ``Lock.acquire(timeout=...)`` (the primitive under
``Condition.wait``): control returns as soon as the bound passes, with no polling. The waits
are this executor's only own part: admission, refusal, the terms of a call, hedge admission
and the results are :class:`~reviewlab.live.executor_base.ExecutorBase`'s, shared with the
asyncio executor. Every wait is converted by the clock in force at dispatch, so under a
:class:`~reviewlab.core.deadline.ScaledClock` all times are in its seconds.

Idle timeouts (``idle_sec=``): the worker runs with the call's
:class:`~reviewlab.live.call_notes.CallNotes` in its context; a tool that calls
:func:`~reviewlab.live.call_notes.report_progress` resets the idle clock. The caller wakes
when the idle timeout would fire, and abandons the call (``bound.by == "idle"``, ``bound_sec``
the last progress plus ``idle_sec``) unless progress came meanwhile, in which case it waits
again; the hard bound caps it.

Hedged calls (``hedging=``, a :class:`~reviewlab.core.hedge.HedgeAdmission`): a
call of a tool with a hedge rule whose bound leaves time for it (unbounded, or
``bound > after_sec``) is first waited on for ``after_sec``. If it has not
answered by then and the admission object agrees, a second attempt of the same
call starts on another worker (same arguments, same deadline scope). Both
attempts share one claim lock and one ``done`` lock: the first to finish claims
the call and its value (or exception) is the answer; the other is a *loose
worker* in the ledger from that moment until it returns (``hedge_losers``), and
is retired like an abandoned one. If neither answers by the bound, the call is
abandoned and both attempts are loose. :class:`CallResult` says ``hedged``,
which attempt answered (``winner``), and each attempt's zombie seconds once it
came back; ``settled`` is set when all its loose workers are back.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
import time
from collections import deque
from collections.abc import Callable
from queue import SimpleQueue
from typing import Any

from reviewlab.core.deadline import execution_deadline_scope
from reviewlab.core.hedge import HedgeAdmission
from reviewlab.core.policy import Bound
from reviewlab.live.call_notes import CallNotes, notes_scope
from reviewlab.live.executor_base import (
    DEFAULT_LOOSE_CAP,
    CallResult,
    CallStatus,
    Dispatched,
    ExecutorBase,
    LooseLedger,
)

__all__ = ["DEFAULT_LOOSE_CAP", "BoundedExecutor", "CallResult", "CallStatus", "LooseLedger"]

# Idle workers kept beyond this number exit instead of waiting for more work.
_MAX_IDLE = 64


_after_wait_timeout: Callable[[Any], None] | None = None
"""Test seam, ``None`` in use: called with the job on the caller's thread after its wait for
the bound timed out and before it tries to claim the call, so a test can let the worker
claim first and reach that branch deterministically (tests/test_executor.py)."""


class _Job:
    """One attempt handed to a worker; ``claim`` decides its fate, ``done`` wakes the caller.

    The two attempts of a hedged call share ``claim``, ``done`` and their notes; each has its
    own ``handoff``, released by the caller once it has published the attempt's ``result``
    (a plain call's ``handoff`` is its ``done``). Times are on the call's clock.
    """

    __slots__ = (
        "fn",
        "args",
        "kwargs",
        "context",
        "deadline_at",
        "notes",
        "claim",
        "done",
        "handoff",
        "attempt",
        "won",
        "value",
        "exc",
        "ended_at",
        "abandoned_at",
        "result",
    )

    def __init__(
        self,
        fn: Callable[..., Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        context: contextvars.Context,
        deadline_at: float | None,
        notes: CallNotes,
        partner: _Job | None = None,
    ) -> None:
        self.fn = fn
        self.args = args
        self.kwargs = kwargs
        self.context = context
        self.deadline_at = deadline_at
        self.notes = notes
        if partner is None:
            self.claim = threading.Lock()
            self.done = threading.Lock()
            self.done.acquire()  # released by the worker once the call is decided as finished
            self.handoff = self.done
            self.attempt = 1
        else:
            self.claim = partner.claim
            self.done = partner.done
            self.handoff = threading.Lock()
            self.handoff.acquire()
            self.attempt = 2
        self.won = False
        self.value: Any = None
        self.exc: BaseException | None = None
        self.ended_at = 0.0
        self.abandoned_at = 0.0
        self.result: CallResult | None = None

    def run(self) -> None:
        # Runs inside the caller's copied context, so the scope below nests in whatever
        # deadline the caller inherited and the clock it had in force.
        notes_scope(self.notes)
        try:
            if self.deadline_at is None:
                self.value = self.fn(*self.args, **self.kwargs)
            else:
                with execution_deadline_scope(self.deadline_at):
                    self.value = self.fn(*self.args, **self.kwargs)
        except BaseException as exc:  # noqa: BLE001 - the tool's own failure becomes a record
            self.exc = exc
        self.ended_at = self.notes.clock.now()


class _Worker:
    __slots__ = ("inbox", "thread")

    def __init__(self, executor: BoundedExecutor, number: int) -> None:
        self.inbox: SimpleQueue[_Job | None] = SimpleQueue()
        self.thread = threading.Thread(
            target=executor._work, args=(self,), name=f"reviewlab-tool-{number}", daemon=True
        )


class BoundedExecutor(ExecutorBase):
    """Runs calls on reused worker threads, each bounded; abandons the ones that outlive it.

    ``loose_cap`` (``None``: no cap) limits how many abandoned workers may be
    loose before new calls are refused; ``hedging`` says which calls may start a second
    attempt. Use one executor per process or per batch of episodes; :meth:`shutdown` lets
    idle workers exit (loose ones exit on their own when their tool returns).
    """

    def __init__(
        self,
        *,
        loose_cap: int | None = DEFAULT_LOOSE_CAP,
        name: str = "bounded",
        hedging: HedgeAdmission | None = None,
    ) -> None:
        super().__init__(loose_cap=loose_cap, name=name, hedging=hedging, ledger=LooseLedger())
        self._idle: deque[_Worker] = deque()
        self._spawned = 0
        self._spawn_lock = threading.Lock()
        self._closed = False

    # -- public ------------------------------------------------------------
    @property
    def threads_started(self) -> int:
        """Worker threads started so far (reuse keeps this low)."""
        return self._spawned

    def run(
        self,
        fn: Callable[..., Any],
        *args: Any,
        bound: Bound | float | None,
        name: str = "",
        idle_sec: float | None = None,
        call_id: str = "",
        **kwargs: Any,
    ) -> CallResult:
        """Run ``fn(*args, **kwargs)`` on a worker and wait at most its bound.

        ``bound`` is a :class:`Bound` or seconds; ``None`` (or ``Bound.sec is
        None``) waits forever, ``0`` abandons the call at once unless it already
        returned. ``idle_sec`` adds an idle timeout reset by the tool's progress reports.
        ``call_id`` (the model's id of the call) goes on the call's notes. Never raises for
        the tool's own exception (status ``raised``).
        """
        if self._closed:
            raise RuntimeError(f"executor {self.name!r}: run() after shutdown()")
        call = self.admit(
            fn, args, kwargs, bound, name, idle_sec, "thread", call_id, time.monotonic
        )
        if isinstance(call, CallResult):
            return call  # refused: never started
        bound_sec = call.bound_sec
        job = _Job(
            fn,
            args,
            kwargs,
            contextvars.copy_context(),
            None if bound_sec is None else call.start + bound_sec,
            call.notes,
        )
        self._dispatch(job)
        if call.hedge is not None or call.idle_sec is not None:
            return self._watch(call, job)
        # The plain call: one wait for the bound.
        done = job.done
        if bound_sec is None:
            done.acquire()
        elif not done.acquire(timeout=_left(call, bound_sec)):
            result = self._abandon(call, job, None, "hard")
            if result is not None:
                return result
            # The worker claimed the call while our wait timed out; it releases `done` next.
            done.acquire()
        return call.finished(CallResult, job.value, job.exc)

    def _watch(self, call: Dispatched, job: _Job) -> CallResult:
        """Wait on a call with a hedge delay or an idle timeout: whichever of the hedge, the idle
        timeout and the hard bound comes next ends each wait, until the call is decided."""
        done = job.done
        second: _Job | None = None
        hedge_at = None if call.hedge is None else call.hedge.after_sec
        while True:
            # The next moment (seconds after dispatch) something must be decided; on a tie the
            # hard bound comes first, then the hedge, then the idle timeout.
            due: list[tuple[float, str]] = []
            if call.bound_sec is not None:
                due.append((call.bound_sec, "hard"))
            if hedge_at is not None:
                due.append((hedge_at, "hedge"))
            if call.idle_sec is not None:
                due.append((call.idle_due(), "idle"))
            if not due:
                done.acquire()
                break
            at, why = min(due)
            if done.acquire(timeout=_left(call, at)):
                break
            if why == "hedge":
                hedge_at = None
                if self.admit_hedge(call, job.args, job.kwargs):
                    second = _Job(
                        job.fn,
                        job.args,
                        job.kwargs,
                        contextvars.copy_context(),
                        job.deadline_at,
                        job.notes,
                        partner=job,
                    )
                    self.ledger._hedge()
                    self._dispatch(second)
                continue
            if why == "idle" and not call.idle_quiet():
                continue  # progress came while we waited: re-arm from it
            result = self._abandon(call, job, second, why)
            if result is not None:
                return result
            done.acquire()  # an attempt claimed the call while our wait timed out
            break
        winner = job if second is None or job.won else second
        loser = None if second is None else (second if winner is job else job)
        result = call.finished(
            CallResult, winner.value, winner.exc, hedged=second is not None, winner=winner.attempt
        )
        if loser is not None:
            result.settled = threading.Event()
            result.loose_workers = 1
            self.ledger._lose()
            loser.abandoned_at = call.clock.now()
            loser.result = result
            loser.handoff.release()
        return result

    def _abandon(
        self, call: Dispatched, job: _Job, second: _Job | None, why: str
    ) -> CallResult | None:
        """Abandon the call if the caller wins its claim (``None``: an attempt finished first).

        Every attempt still running becomes a loose worker; each is handed the result record
        and retires when its tool returns (it waits on its ``handoff`` for the record)."""
        if _after_wait_timeout is not None:  # test seam: see _after_wait_timeout
            _after_wait_timeout(job)
        if not job.claim.acquire(blocking=False):
            return None
        attempts = [job] if second is None else [job, second]
        result = call.abandoned(
            CallResult,
            why,
            len(attempts),
            hedged=second is not None,
            winner=0 if second is not None else 1,
        )
        self.ledger._abandon(len(attempts))
        now = call.clock.now()
        for attempt in attempts:
            attempt.abandoned_at = now
            attempt.result = result
            attempt.handoff.release()
        return result

    def shutdown(self) -> None:
        """Let idle workers exit; running and loose workers exit when their call ends."""
        self._closed = True
        while True:
            try:
                worker = self._idle.pop()
            except IndexError:
                return
            worker.inbox.put(None)

    def __enter__(self) -> BoundedExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()

    # -- workers -------------------------------------------------------------
    def _dispatch(self, job: _Job) -> None:
        try:
            worker = self._idle.pop()
        except IndexError:
            with self._spawn_lock:
                self._spawned += 1
                worker = _Worker(self, self._spawned)
            worker.inbox.put(job)
            worker.thread.start()
            return
        worker.inbox.put(job)

    def _work(self, worker: _Worker) -> None:
        inbox = worker.inbox
        while True:
            job = inbox.get()
            if job is None:
                return
            job.context.run(job.run)
            if job.claim.acquire(blocking=False):
                job.won = True
                # Finished before the caller gave up: rejoin the pool first, so the
                # caller's next call finds this worker idle, then wake the caller.
                keep = not self._closed and len(self._idle) < _MAX_IDLE
                if keep:
                    self._idle.append(worker)
                    if self._closed:
                        # shutdown() may have drained the pool just before we rejoined it.
                        with contextlib.suppress(
                            ValueError
                        ):  # else it popped us and queued our stop
                            self._idle.remove(worker)
                            keep = False
                job.done.release()
                if not keep:
                    return
                continue
            # Abandoned (or a hedge's loser): the caller published `result` and released our
            # handoff.
            job.handoff.acquire()
            self._retire(job)
            return

    def _retire(self, job: _Job) -> None:
        result = job.result
        assert result is not None
        # Zombie time: from the moment control returned to the caller to the tool's return,
        # both on the call's clock.
        zombie = max(0.0, job.ended_at - job.abandoned_at)
        with self.ledger._cond:
            # Two attempts of one call may retire at once: their result is updated under the lock.
            if job.attempt == 1:
                result.zombie_sec = zombie
            else:
                result.second_zombie_sec = zombie
            result.loose_workers = max(0, result.loose_workers - 1)
            all_back = result.loose_workers == 0
        self.ledger._settle(zombie)
        if result.settled is not None and all_back:
            result.settled.set()
        # The late value and exception are dropped here: they source nothing.
        job.value = job.exc = None


def _left(call: Dispatched, sec: float) -> float:
    """Real seconds still to wait so that the wait ends ``sec`` clock seconds after dispatch
    (dispatching, e.g. starting a fresh thread, eats into the bound, not past it)."""
    left = call.real_start + sec * call.factor - time.monotonic()
    return min(max(0.0, left), threading.TIMEOUT_MAX)
