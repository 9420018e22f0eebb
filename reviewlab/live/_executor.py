"""The bounded executor: run a tool call on a worker thread, wait its bound, abandon it after.

Lifecycle of one call (:class:`CallStatus`): pending → running → returned | raised (inside
the bound) | abandoned (the bound passed first), or pending → refused (the loose-worker cap is
full). The fate of a running call is decided exactly once, by whichever side wins its claim
lock; a tool that finishes a hair after the bound but before the caller claimed it returned.

Invariants: a worker is never joined or killed; an abandoned worker is loose until its tool
returns, then recorded in the ledger (zombie seconds) and retired; a call that finds the cap
full is refused before any thread is touched; the tool sees a deadline ending at its bound;
waits are blocking (no polling) and converted by the clock in force at dispatch.
A call that returns inside its bound costs what a thread pool's does: one wake-up of an idle
worker (its inbox) and one timed wait of the caller (``done``), nothing else that blocks.
Idle timeouts and hedged calls (two attempts, one claim): docs/architecture.md, "The thread
executor".
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Callable
from typing import Any

from reviewlab.core._deadline import narrow_for_rest_of_context
from reviewlab.core._hedge import HedgeAdmission
from reviewlab.core._policy import Bound
from reviewlab.live._call_notes import CallNotes, notes_scope
from reviewlab.live._call_results import CallResult, LooseLedger
from reviewlab.live._executor_base import DEFAULT_LOOSE_CAP, Dispatched, ExecutorBase
from reviewlab.live._executor_workers import ToolWorker, ToolWorkers

_after_wait_timeout: Callable[[Any], None] | None = None
"""Test seam, ``None`` in use: called with the job on the caller's thread after its wait for
the bound timed out and before it tries to claim the call, so a test can let the worker
claim first and reach that branch deterministically (tests/live/test_executor.py)."""


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
        "executor",
    )

    def __init__(
        self,
        fn: Callable[..., Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        context: contextvars.Context,
        deadline_at: float | None,
        notes: CallNotes,
        executor: BoundedExecutor,
        partner: _Job | None = None,
    ) -> None:
        self.executor = executor
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
        # Runs inside a copy of the caller's context made for this attempt alone and dropped
        # after it, so the deadline narrows it for good (no scope to leave) and still nests in
        # whatever deadline the caller inherited and the clock it had in force.
        notes_scope(self.notes)
        if self.deadline_at is not None:
            narrow_for_rest_of_context(self.deadline_at)
        try:
            self.value = self.fn(*self.args, **self.kwargs)
        except BaseException as exc:  # noqa: BLE001 - the tool's own failure becomes a record
            self.exc = exc
        self.ended_at = self.notes.clock.now()

    def work(self, pool: ToolWorkers, worker: ToolWorker) -> bool:
        """Run the attempt on ``worker``; True when the worker rejoined the pool."""
        self.context.run(self.run)
        if self.claim.acquire(blocking=False):
            self.won = True
            # Finished before the caller gave up: rejoin the pool first, so the caller's next
            # call finds this worker idle, then wake the caller.
            keep = pool.rejoin(worker)
            self.done.release()
            return keep
        # Abandoned (or a hedge's loser): the caller published `result` and released our
        # handoff.
        self.handoff.acquire()
        self.executor._retire(self)
        return False


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
        self._pool = ToolWorkers("reviewlab-tool")

    # -- public ------------------------------------------------------------
    @property
    def threads_started(self) -> int:
        """ToolWorker threads started so far (reuse keeps this low)."""
        return self._pool.started

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
        if self._pool.closed:
            raise RuntimeError(f"executor {self.name!r}: run() after shutdown()")
        call = self.admit(
            name or self._name_of(fn),
            args,
            kwargs,
            bound,
            idle_sec,
            "thread",
            call_id,
            time.monotonic,
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
            self,
        )
        self._pool.dispatch(job)
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
                        self,
                        partner=job,
                    )
                    self.ledger._hedge()
                    self._pool.dispatch(second)
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
        self._pool.shutdown()

    def __enter__(self) -> BoundedExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()

    # -- loose workers ------------------------------------------------------------
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
