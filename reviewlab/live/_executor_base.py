"""What the thread and the asyncio executor share: everything about a call that does not wait.

One :class:`ExecutorBase` under :class:`~reviewlab.live._executor.BoundedExecutor` and
:class:`~reviewlab.live._aio.AsyncBoundedExecutor` (httpx's ``BaseClient`` under ``Client`` and
``AsyncClient``): the terms of a call (:func:`call_terms`: its bound and idle timeout, resolved
once), admission (:meth:`ExecutorBase.admit`: refused when the loose-worker cap is full, else a
:class:`Dispatched` record), the moments a wait ends (the hard bound, the idle timeout
re-armed by progress, the hedge delay) and hedge admission. The results they make
(:class:`~reviewlab.live._call_results.CallResult`, the
:class:`~reviewlab.live._call_results.LooseLedger`) are :mod:`reviewlab.live._call_results`.

Invariant: every moment is read on the :class:`~reviewlab.core._deadline.Clock` in force when
the call was dispatched and every wait is converted by it, so under a
:class:`~reviewlab.core._deadline.ScaledClock` every time is in recorded seconds.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from reviewlab.core._deadline import Clock, current_clock
from reviewlab.core._hedge import HedgeAdmission, HedgeRule
from reviewlab.core._policy import Bound, Policy, resolve_bound
from reviewlab.core._receipts import refused_text
from reviewlab.core._vocab import Transport
from reviewlab.live._call_notes import CallNotes, asking_for
from reviewlab.live._call_results import CallResult, CallStatus, LooseLedger

DEFAULT_LOOSE_CAP = 16


@dataclass(frozen=True, slots=True)
class CallTerms:
    """What one call is dispatched with, read from the policy once: its bound and its idle
    timeout (``None``: none; never set for an unbounded call)."""

    bound: Bound
    idle_sec: float | None


def call_terms(
    policy: Policy, tools: Any, tool_name: str, tool_args: Mapping[str, Any] | None
) -> CallTerms:
    """The terms of one dispatched call: its bound (:func:`~reviewlab.core._policy.resolve_bound`
    on the inherited deadline now) and the policy's idle timeout for the tool."""
    bound = resolve_bound(policy, tools, tool_name, tool_args)
    # An idle timeout only ever shortens a bounded wait (the pre-fix policy has none).
    return CallTerms(bound, policy.idle_for(tool_name) if bound.bounded else None)


def as_bound(bound: Bound | float | None) -> Bound | None:
    """A :class:`Bound` from a bound or seconds (``None``: unbounded); bad seconds are errors."""
    if bound is None or isinstance(bound, Bound):
        return bound
    value = float(bound)
    if math.isnan(value) or value < 0:
        raise ValueError(f"bound: expected non-negative seconds, got {bound!r}")
    return Bound(value, "tool_timeout", value, None)


class Dispatched:
    """One admitted call: its terms, its notes, and the moments its wait may end.

    Times are seconds after dispatch on the call's :attr:`clock`; :meth:`real_at` turns one
    into the real time (on the executor's real timer: ``time.monotonic`` or the loop's time)
    at which a wait for it ends.
    """

    __slots__ = (
        "bound",
        "bound_sec",
        "clock",
        "factor",
        "hedge",
        "idle_mark",
        "idle_sec",
        "keep_notes",
        "name",
        "notes",
        "real_start",
        "start",
        "started_wall",
    )

    def __init__(
        self,
        name: str,
        bound: Bound | None,
        idle_sec: float | None,
        hedge: HedgeRule | None,
        notes: CallNotes,
        clock: Clock,
        real_now: Callable[[], float],
        keep_notes: bool = False,
    ) -> None:
        self.name = name
        self.keep_notes = keep_notes
        self.bound = bound
        bound_sec = self.bound_sec = None if bound is None else bound.sec
        # An idle timeout at or past the hard bound never fires first.
        self.idle_sec = (
            idle_sec
            if idle_sec is not None and (bound_sec is None or idle_sec < bound_sec)
            else None
        )
        self.hedge = hedge
        self.notes = notes
        self.clock = clock
        self.factor = clock.factor
        self.started_wall = time.time()
        self.start = notes.started = notes.last_activity = clock.now()
        self.real_start = real_now()
        self.idle_mark = self.start

    def real_at(self, sec: float) -> float:
        """The real time at which ``sec`` clock seconds after dispatch have passed."""
        return self.real_start + sec * self.factor

    def idle_due(self) -> float:
        """When the idle timeout fires if no progress comes first (seconds after dispatch);
        remembers the progress it was computed from (:meth:`idle_quiet`)."""
        assert self.idle_sec is not None
        mark = self.idle_mark = self.notes.last_activity
        return mark - self.start + self.idle_sec

    def idle_quiet(self) -> bool:
        """Whether no progress came since :meth:`idle_due` was last computed: the idle timeout
        fires now (else it is re-armed)."""
        return self.notes.last_activity == self.idle_mark

    def elapsed(self) -> float:
        """Seconds since dispatch on the call's clock."""
        return self.clock.now() - self.start

    def finished(
        self,
        result_type: type[CallResult],
        value: Any,
        exc: BaseException | None,
        hedged: bool = False,
        winner: int = 1,
    ) -> CallResult:
        """The result of a call that returned or raised inside its bound (``winner``: the
        attempt that answered a hedged call)."""
        # Positional: this runs once per call, on the executors' hot path.
        return result_type(
            self.name,
            CallStatus.RAISED if exc is not None else CallStatus.RETURNED,
            self.started_wall,
            self.clock.now() - self.start,
            self.bound,
            None if exc is not None else value,
            exc,
            "",
            None,
            None,
            hedged,
            winner,
            None,
            0,
            self.kept_notes(),
            self.start,
        )

    def abandoned(
        self, result_type: type[CallResult], why: str, workers: int, **extra: Any
    ) -> CallResult:
        """The result of a call abandoned by ``why`` (``"hard"``: its bound, ``"idle"``: its idle
        timeout) with ``workers`` attempts left loose; the tool is told on its notes."""
        self.notes.abandon()
        bound = self.bound
        if why == "idle":
            # The effective bound is the moment the idle timeout fired: last progress + idle_sec.
            assert self.idle_sec is not None
            fired = max(0.0, self.idle_mark - self.start + self.idle_sec)
            tool_sec = None if bound is None else bound.tool_timeout_sec
            remaining = None if bound is None else bound.remaining_sec
            bound = Bound(fired, "idle", tool_sec, remaining)
        return result_type(
            self.name,
            CallStatus.ABANDONED,
            self.started_wall,
            self.elapsed(),
            bound,
            settled=threading.Event(),
            loose_workers=workers,
            notes=self.kept_notes(),
            started_sec=self.start,
            **extra,
        )

    def kept_notes(self) -> CallNotes | None:
        """The notes a result keeps: always on the asyncio path; on the thread path those of a
        call with an idle timeout or one that reported progress (a recording then carries
        them), else none."""
        notes = self.notes
        if self.keep_notes or notes.progress_sec or self.idle_sec is not None:
            return notes
        return None


class ExecutorBase:
    """The executors' shared half: the loose-worker cap, the ledger, admission and hedging.

    ``loose_cap`` (``None``: no cap) limits how many loose workers may run before new calls
    are refused; ``hedging`` says which calls may start a second attempt (``None``: none).
    """

    ledger: LooseLedger
    keeps_notes = False
    """Whether every result carries its call's notes (the asyncio executor's do)."""
    result_type: ClassVar[type[CallResult]] = CallResult
    """The record a call's result is (the asyncio executor's: :class:`AsyncCallResult`)."""

    def __init__(
        self,
        *,
        loose_cap: int | None,
        name: str,
        hedging: HedgeAdmission | None,
        ledger: LooseLedger,
    ) -> None:
        if loose_cap is not None and (
            isinstance(loose_cap, bool) or not isinstance(loose_cap, int) or loose_cap < 0
        ):
            raise ValueError(f"loose_cap: expected a non-negative int or None, got {loose_cap!r}")
        self.loose_cap = loose_cap
        self.name = name
        self.hedging = hedging
        """Which calls may hedge (a :class:`~reviewlab.core._hedge.HedgeAdmission`); ``None``:
        none."""
        self.ledger = ledger

    @property
    def loose(self) -> int:
        """Loose workers still running now."""
        return self.ledger.loose

    @staticmethod
    def _name_of(fn: Callable[..., Any]) -> str:
        """The name a call of ``fn`` goes by when ``run`` is given none: the function's own."""
        return getattr(fn, "__name__", "call")

    def admit(
        self,
        name: str,
        args: tuple[Any, ...],
        kwargs: Mapping[str, Any],
        bound: Bound | float | None,
        idle_sec: float | None,
        transport: Transport,
        call_id: str,
        real_now: Callable[[], float],
    ) -> Dispatched | CallResult:
        """A :class:`Dispatched` call of the tool ``name`` (:meth:`_name_of` when unnamed), or the
        :attr:`result_type` of its refusal (the loose-worker cap is full: never started). The
        hedge admission is told of every dispatched call of a hedged tool; the call may hedge
        only if its bound leaves time for it. The admission is asked with the call's notes
        current (:func:`~reviewlab.live._call_notes.asking_for`)."""
        bound_obj = bound if bound is None or type(bound) is Bound else as_bound(bound)
        cap = self.loose_cap
        if cap is not None and self.ledger.loose >= cap:
            self.ledger._refuse()
            return self.result_type(
                name,
                CallStatus.REFUSED,
                time.time(),
                0.0,
                bound_obj,
                text=refused_text(name, self.ledger.loose, cap),
                notes=CallNotes(transport, call_id=call_id) if self.keeps_notes else None,
            )
        clock = current_clock()
        notes = CallNotes(transport, call_id=call_id, clock=clock)
        hedge = None
        hedging = self.hedging
        if hedging is not None:
            rule = hedging.rule_for(name)
            if rule is not None:
                with asking_for(notes):
                    hedging.note_call(name, args, kwargs)
                bound_sec = None if bound_obj is None else bound_obj.sec
                if bound_sec is None or bound_sec > rule.after_sec:
                    hedge = rule
        return Dispatched(
            name, bound_obj, idle_sec, hedge, notes, clock, real_now, self.keeps_notes
        )

    def admit_hedge(
        self, call: Dispatched, args: tuple[Any, ...], kwargs: Mapping[str, Any]
    ) -> bool:
        """The call went its hedge delay unanswered and is still waited on: may it hedge now?"""
        hedging = self.hedging
        if hedging is None:
            return False
        with asking_for(call.notes):
            return hedging.admit(call.name, args, kwargs)
