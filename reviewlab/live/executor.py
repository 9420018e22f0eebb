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

Waiting is a blocking ``Lock.acquire(timeout=bound)`` (the primitive under
``Condition.wait``): control returns as soon as the bound passes, with no polling.

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
import math
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from queue import SimpleQueue
from typing import Any

from reviewlab.core.deadline import execution_deadline_scope, monotonic_now
from reviewlab.core.hedge import HedgeAdmission, HedgeRule
from reviewlab.core.policy import Bound
from reviewlab.core.receipts import refused_text

__all__ = ["DEFAULT_LOOSE_CAP", "BoundedExecutor", "CallResult", "CallStatus", "LooseLedger"]

DEFAULT_LOOSE_CAP = 16
# Idle workers kept beyond this number exit instead of waiting for more work.
_MAX_IDLE = 64


_after_wait_timeout: Callable[[Any], None] | None = None
"""Test seam, ``None`` in use: called with the job on the caller's thread after its wait for
the bound timed out and before it tries to claim the call, so a test can let the worker
claim first and reach that branch deterministically (tests/test_executor.py)."""


class CallStatus(StrEnum):
    """Where a call is in its lifecycle (see the module docstring)."""

    PENDING = "pending"
    RUNNING = "running"
    RETURNED = "returned"
    RAISED = "raised"
    ABANDONED = "abandoned"
    REFUSED = "refused"


@dataclass(slots=True)
class CallResult:
    """The fate of one call, as its caller sees it when control returns.

    ``started_wall`` is the dispatch wall time in seconds since the epoch
    (:attr:`started_at` is its ISO form). ``duration_sec`` is measured on
    :func:`monotonic_now` from dispatch to the
    moment control came back (for an abandoned call: about its bound).
    ``zombie_sec`` stays ``None`` until an abandoned call's loose worker returns;
    then it holds how long the worker ran past the abandonment.

    A hedged call (``hedged``: its second attempt started) answers with attempt
    ``winner`` (1 or 2; 0 when abandoned). ``zombie_sec`` is then attempt 1's
    loose time and ``second_zombie_sec`` attempt 2's, each filled when that
    attempt came back (and only if it was loose). ``loose_workers`` counts its
    workers still loose; ``settled`` is set when it drops to 0.
    """

    name: str
    status: CallStatus
    started_wall: float
    duration_sec: float
    bound: Bound | None
    value: Any = None
    exc: BaseException | None = None
    text: str = ""
    zombie_sec: float | None = None
    settled: threading.Event | None = field(default=None, repr=False)
    hedged: bool = False
    winner: int = 1
    second_zombie_sec: float | None = None
    loose_workers: int = 0

    @property
    def started_at(self) -> str:
        """Dispatch wall time, ISO-8601 with a time zone (formatted on demand: it is costly)."""
        return datetime.fromtimestamp(self.started_wall, UTC).isoformat()

    @property
    def bound_sec(self) -> float | None:
        """The bound in seconds; ``None`` when the call had none (the pre-fix policy, a refusal)."""
        return None if self.bound is None else self.bound.sec

    @property
    def returned(self) -> bool:
        """True when the tool returned a value inside its bound (the only creditable fate)."""
        return self.status is CallStatus.RETURNED

    @property
    def loose(self) -> bool:
        """True while a worker of this call runs on after control returned (abandoned, or the
        losing attempt of a hedged call)."""
        if self.loose_workers > 0:
            return True
        return self.status is CallStatus.ABANDONED and self.zombie_sec is None and not self.hedged


class LooseLedger:
    """Counts loose workers still running: now, peak, and zombie seconds once they return.

    A loose worker is an abandoned call's worker (``abandoned`` counts the calls)
    or the losing attempt of a hedged call (``hedge_losers``); ``hedges`` counts
    second attempts started.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self.loose = 0
        self.peak = 0
        self.abandoned = 0
        self.settled = 0
        self.zombie_sec = 0.0
        self.refused = 0
        self.hedges = 0
        self.hedge_losers = 0

    def _abandon(self, workers: int = 1) -> None:
        with self._cond:
            self.loose += workers
            self.abandoned += 1
            self.peak = max(self.peak, self.loose)

    def _lose(self) -> None:
        with self._cond:
            self.loose += 1
            self.hedge_losers += 1
            self.peak = max(self.peak, self.loose)

    def _hedge(self) -> None:
        with self._cond:
            self.hedges += 1

    def _settle(self, zombie_sec: float) -> None:
        with self._cond:
            self.loose -= 1
            self.settled += 1
            self.zombie_sec += zombie_sec
            self._cond.notify_all()

    def _refuse(self) -> None:
        with self._cond:
            self.refused += 1

    def wait_settled(self, timeout: float | None = None) -> bool:
        """Block until no worker is loose (or ``timeout`` seconds pass); True when none is."""
        with self._cond:
            return self._cond.wait_for(lambda: self.loose == 0, timeout)

    def snapshot(self) -> dict[str, float | int]:
        """The ledger's counters as a dict."""
        with self._cond:
            return {
                "loose": self.loose,
                "peak": self.peak,
                "abandoned": self.abandoned,
                "settled": self.settled,
                "zombie_sec": self.zombie_sec,
                "refused": self.refused,
                "hedges": self.hedges,
                "hedge_losers": self.hedge_losers,
            }


class _Job:
    """One attempt handed to a worker; ``claim`` decides its fate, ``done`` wakes the caller.

    The two attempts of a hedged call share ``claim`` and ``done``; each has its own
    ``handoff``, released by the caller once it has published the attempt's
    ``result`` (a plain call's ``handoff`` is its ``done``).
    """

    __slots__ = (
        "fn",
        "args",
        "kwargs",
        "context",
        "deadline_at",
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
        partner: _Job | None = None,
    ) -> None:
        self.fn = fn
        self.args = args
        self.kwargs = kwargs
        self.context = context
        self.deadline_at = deadline_at
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
        # deadline the caller inherited and the monotonic clock it had in force.
        try:
            if self.deadline_at is None:
                self.value = self.fn(*self.args, **self.kwargs)
            else:
                with execution_deadline_scope(self.deadline_at):
                    self.value = self.fn(*self.args, **self.kwargs)
        except BaseException as exc:  # noqa: BLE001 - the tool's own failure becomes a record
            self.exc = exc
        self.ended_at = monotonic_now()


class _Worker:
    __slots__ = ("inbox", "thread")

    def __init__(self, executor: BoundedExecutor, number: int) -> None:
        self.inbox: SimpleQueue[_Job | None] = SimpleQueue()
        self.thread = threading.Thread(
            target=executor._work, args=(self,), name=f"reviewlab-tool-{number}", daemon=True
        )


class BoundedExecutor:
    """Runs calls on reused worker threads, each bounded; abandons the ones that outlive it.

    ``loose_cap`` (``None``: no cap) limits how many abandoned workers may be
    loose before new calls are refused. Use one executor per process or per
    batch of episodes; :meth:`shutdown` lets idle workers exit (loose ones exit
    on their own when their tool returns).
    """

    def __init__(
        self,
        *,
        loose_cap: int | None = DEFAULT_LOOSE_CAP,
        name: str = "bounded",
        hedging: HedgeAdmission | None = None,
    ) -> None:
        if loose_cap is not None and (
            isinstance(loose_cap, bool) or not isinstance(loose_cap, int) or loose_cap < 0
        ):
            raise ValueError(f"loose_cap: expected a non-negative int or None, got {loose_cap!r}")
        self.loose_cap = loose_cap
        self.name = name
        self.hedging = hedging
        """Which calls may hedge (module docstring); ``None``: none does."""
        self.ledger = LooseLedger()
        self._idle: deque[_Worker] = deque()
        self._spawned = 0
        self._spawn_lock = threading.Lock()
        self._closed = False

    # -- public ------------------------------------------------------------
    @property
    def loose(self) -> int:
        """Abandoned workers still running now."""
        return self.ledger.loose

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
        **kwargs: Any,
    ) -> CallResult:
        """Run ``fn(*args, **kwargs)`` on a worker and wait at most its bound.

        ``bound`` is a :class:`Bound` or seconds; ``None`` (or ``Bound.sec is
        None``) waits forever, ``0`` abandons the call at once unless it already
        returned. Never raises for the tool's own exception (status ``raised``).
        """
        if self._closed:
            raise RuntimeError(f"executor {self.name!r}: run() after shutdown()")
        bound_obj = bound if isinstance(bound, Bound) or bound is None else _seconds_bound(bound)
        bound_sec = None if bound_obj is None else bound_obj.sec
        name = name or getattr(fn, "__name__", "call")
        cap = self.loose_cap
        if cap is not None and self.ledger.loose >= cap:
            self.ledger._refuse()
            return CallResult(
                name,
                CallStatus.REFUSED,
                time.time(),
                0.0,
                bound_obj,
                text=refused_text(name, self.ledger.loose, cap),
            )

        started_wall = time.time()
        start = monotonic_now()
        # The wait itself runs on the real clock even when a test injected another one.
        real_start = time.monotonic()
        job = _Job(
            fn,
            args,
            kwargs,
            contextvars.copy_context(),
            None if bound_sec is None else start + bound_sec,
        )
        self._dispatch(job)
        hedging = self.hedging
        if hedging is not None:
            rule = hedging.rule_for(name)
            if rule is not None:
                hedging.note_call(name, args, kwargs)
                if bound_sec is None or bound_sec > rule.after_sec:
                    return self._run_hedged(
                        job, rule, name, bound_obj, bound_sec, started_wall, start, real_start
                    )
        done = job.done
        if bound_sec is None:
            done.acquire()
        elif not done.acquire(timeout=_wait_left(bound_sec, real_start)):
            if _after_wait_timeout is not None:  # test seam: see _after_wait_timeout
                _after_wait_timeout(job)
            if job.claim.acquire(blocking=False):
                # The bound passed and the worker had not finished: abandon it.
                job.abandoned_at = now = monotonic_now()
                result = CallResult(
                    name,
                    CallStatus.ABANDONED,
                    started_wall,
                    now - start,
                    bound_obj,
                    settled=threading.Event(),
                    loose_workers=1,
                )
                job.result = result
                self.ledger._abandon()
                # Hand the worker its result record: it waits on `done` before retiring.
                done.release()
                return result
            # The worker claimed the call while our wait timed out; it releases `done` next.
            done.acquire()
        duration = monotonic_now() - start
        if job.exc is not None:
            return CallResult(
                name, CallStatus.RAISED, started_wall, duration, bound_obj, exc=job.exc
            )
        return CallResult(
            name, CallStatus.RETURNED, started_wall, duration, bound_obj, value=job.value
        )

    def _run_hedged(
        self,
        job: _Job,
        rule: HedgeRule,
        name: str,
        bound_obj: Bound | None,
        bound_sec: float | None,
        started_wall: float,
        start: float,
        real_start: float,
    ) -> CallResult:
        """Wait ``after_sec`` on attempt 1, maybe start attempt 2, then wait the bound on both."""
        done = job.done
        second: _Job | None = None
        if not done.acquire(timeout=_wait_left(rule.after_sec, real_start)):
            hedging = self.hedging
            assert hedging is not None
            if hedging.admit(name, job.args, job.kwargs):
                second = _Job(
                    job.fn,
                    job.args,
                    job.kwargs,
                    contextvars.copy_context(),
                    job.deadline_at,
                    partner=job,
                )
                self.ledger._hedge()
                self._dispatch(second)
            if bound_sec is None:
                done.acquire()
            elif not done.acquire(timeout=_wait_left(bound_sec, real_start)):
                if _after_wait_timeout is not None:  # test seam: see _after_wait_timeout
                    _after_wait_timeout(job)
                if job.claim.acquire(blocking=False):
                    now = monotonic_now()
                    attempts = [job] if second is None else [job, second]
                    result = CallResult(
                        name,
                        CallStatus.ABANDONED,
                        started_wall,
                        now - start,
                        bound_obj,
                        settled=threading.Event(),
                        hedged=second is not None,
                        winner=0,
                        loose_workers=len(attempts),
                    )
                    self.ledger._abandon(len(attempts))
                    for attempt in attempts:
                        attempt.abandoned_at = now
                        attempt.result = result
                        attempt.handoff.release()
                    return result
                done.acquire()  # an attempt claimed the call while our wait timed out
        duration = monotonic_now() - start
        winner = job if second is None or job.won else second
        loser = None if second is None else (second if winner is job else job)
        result = CallResult(
            name,
            CallStatus.RAISED if winner.exc is not None else CallStatus.RETURNED,
            started_wall,
            duration,
            bound_obj,
            value=winner.value,
            exc=winner.exc,
            hedged=second is not None,
            winner=winner.attempt,
        )
        if loser is not None:
            result.settled = threading.Event()
            result.loose_workers = 1
            self.ledger._lose()
            loser.abandoned_at = monotonic_now()
            loser.result = result
            loser.handoff.release()
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
        # Zombie time: from the moment control returned to the caller to the tool's return.
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


def _wait_left(bound_sec: float, real_start: float) -> float:
    """Seconds still to wait so that the wait ends ``bound_sec`` after ``real_start``
    (dispatching, e.g. starting a fresh thread, eats into the bound, not past it)."""
    left = bound_sec - (time.monotonic() - real_start)
    return min(max(0.0, left), threading.TIMEOUT_MAX)


def _seconds_bound(seconds: float) -> Bound:
    value = float(seconds)
    if math.isnan(value) or value < 0:
        raise ValueError(f"bound: expected non-negative seconds, got {seconds!r}")
    return Bound(value, "tool_timeout", value, None)
