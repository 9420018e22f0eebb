"""What a bounded call comes back as: its status, its result, and the ledger of loose workers.

A call is pending → running → returned | raised | abandoned, or pending → refused (never
started): :class:`CallStatus`. :class:`CallResult` is its fate as the caller sees it when
control returns (an abandoned call's ``zombie_sec`` is filled later, when its loose worker
comes back, and its ``settled`` event set). :class:`LooseLedger` counts the workers still loose
(abandoned calls' and hedge losers'), their peak and their zombie seconds. The executors
(:mod:`reviewlab.live._executor_base` and the two above it) make these; every layer above
reads them.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from reviewlab.core._policy import Bound
from reviewlab.live._call_notes import CallNotes


class CallStatus(StrEnum):
    """Where a call is in its lifecycle: pending -> running -> returned | raised | abandoned, or
    pending -> refused (never started)."""

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
    (:attr:`started_at` is its ISO form); ``started_sec`` the dispatch time on the call's
    clock. ``duration_sec`` is measured on that clock from dispatch to the moment control came
    back (for an abandoned call: about its bound). ``zombie_sec`` stays ``None`` until an
    abandoned call's loose worker returns; then it holds how long the worker ran past the
    abandonment (on the same clock).

    A hedged call (``hedged``: its second attempt started) answers with attempt
    ``winner`` (1 or 2; 0 when abandoned). ``zombie_sec`` is then attempt 1's
    loose time and ``second_zombie_sec`` attempt 2's, each filled when that
    attempt came back (and only if it was loose). ``loose_workers`` counts its
    workers still loose; ``settled`` is set when it drops to 0.

    ``notes`` are what the tool reported (progress, cancellation): always on the asyncio
    path; on the thread path when the call had an idle timeout or reported progress.
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
    notes: CallNotes | None = field(default=None, repr=False)
    started_sec: float = math.nan

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
    second attempts started. Thread-safe.
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
        """Block until no worker is loose (or ``timeout`` real seconds pass); True when none is."""
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
