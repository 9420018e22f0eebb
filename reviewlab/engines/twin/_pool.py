"""Reviewer slots, a bounded worker-thread pool with zombies, and per-slot timelines.

:class:`SlotPool`: ``N`` slots serve review requests first come, first served; a request's
inherited deadline keeps running from its arrival while it queues. :class:`WorkerPool`: ``K``
threads shared by every slot; a call's bound clock starts at dispatch, not when it gets a
thread, so starvation shows up as abandonments; a call still queued at its bound never runs,
an abandoned call that got a thread keeps it as a zombie until it returns.
:class:`SlotTimeline`: per slot, ``busy``, ``silent`` and ``idle`` intervals tiling
``[0, horizon)``.

Invariant: ties are broken by SimPy's event counter, so runs are deterministic. In full:
docs/architecture.md, "The twin's pools".
"""

from __future__ import annotations

import math
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

import pandas as pd
import simpy

from reviewlab.core._crediting import abandons

SLOT_TIMELINE_COLUMNS = ("slot_id", "state", "start_sec", "end_sec", "episode_id")


@dataclass(frozen=True)
class PoolShape:
    """What a twin run simulates around its episodes: ``slots`` reviewer slots (``None``: every
    episode at once), ``workers`` threads shared by every call (``None``: a thread per call),
    and how requests arrive (``arrivals``: ``"recorded"`` or ``"poisson"`` at ``arrival_rate``
    per second). The default is no pool: the episodes are independent."""

    slots: int | None = None
    workers: int | None = None
    arrivals: str | None = None
    arrival_rate: float | None = None


class SlotPool:
    """``N`` reviewer slots; :meth:`acquire` yields a free slot id, :meth:`release` returns it."""

    def __init__(self, env: simpy.Environment, count: int) -> None:
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise ValueError(f"slots: expected a positive number of reviewer slots, got {count!r}")
        self.ids = [f"slot-{i}" for i in range(count)]
        self._free = simpy.Store(env)
        self._free.items.extend(self.ids)

    def acquire(self) -> simpy.Event:
        """An event whose value is the granted slot id."""
        return self._free.get()

    def release(self, slot_id: str) -> None:
        """Give ``slot_id`` back to the pool (the next queued request gets it)."""
        self._free.put(slot_id)


class WorkerPool:
    """``K`` worker threads; zombies (abandoned calls still running) keep theirs (see the module
    docstring)."""

    def __init__(self, env: simpy.Environment, count: int) -> None:
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise ValueError(
                f"workers: expected a positive number of worker threads, got {count!r}"
            )
        self.count = count
        self._threads = simpy.Resource(env, capacity=count)
        self.withdrawn = 0
        """Calls abandoned while still queued for a thread (they never ran)."""
        self.held_forever = 0
        """Threads held by wedged zombies that never return."""

    @property
    def busy(self) -> int:
        """Threads in use now, zombies included."""
        return self._threads.count

    def run_call(
        self, env: simpy.Environment, duration_sec: float, completed: bool, bound_sec: float | None
    ) -> Generator[simpy.Event, Any, tuple[float, bool, float]]:
        """Dispatch one call at ``env.now``; returns ``(wait_sec, abandoned, zombie_sec)`` once the
        caller resumes."""
        dispatched = env.now
        request = self._threads.request()
        if not request.triggered:
            if bound_sec is None:
                yield request
            else:
                yield request | env.timeout(bound_sec)
                if not request.triggered:
                    request.cancel()
                    self.withdrawn += 1
                    return bound_sec, True, 0.0
        queued = env.now - dispatched
        seen = queued + duration_sec
        if bound_sec is None:
            if not completed:
                # Pre-fix and a call that never returns: its thread and its caller wait forever.
                self.held_forever += 1
                return math.inf, False, 0.0
            # Pre-fix: wait however long the call takes.
            if duration_sec:
                yield env.timeout(duration_sec)
            self._threads.release(request)
            return env.now - dispatched, False, 0.0
        if not abandons(seen, completed, bound_sec):
            if duration_sec:
                yield env.timeout(duration_sec)
            self._threads.release(request)
            return env.now - dispatched, False, 0.0
        # Abandoned while running: the caller resumes at the bound, the thread stays with the
        # zombie.
        if completed:
            zombie = seen - bound_sec
            returns = env.timeout(duration_sec)

            def release(_event: simpy.Event) -> None:
                self._threads.release(request)

            returns.callbacks.append(release)
        else:
            zombie = math.inf
            self.held_forever += 1
        left = bound_sec - queued
        if left > 0:
            yield env.timeout(left)
        return bound_sec, True, zombie


class SlotTimeline:
    """Per-slot ``busy`` / ``silent`` intervals as they happen, ``idle`` filled in by
    :meth:`frame`."""

    def __init__(self, slot_ids: list[str]) -> None:
        self.slot_ids = list(slot_ids)
        self._intervals: list[tuple[str, str, float, float, str]] = []

    def add(
        self, slot_id: str, state: str, start_sec: float, end_sec: float, episode_id: str
    ) -> None:
        """Record that ``slot_id`` was ``state`` from ``start_sec`` to ``end_sec`` (empty:
        dropped)."""
        if end_sec > start_sec:
            self._intervals.append((slot_id, state, start_sec, end_sec, episode_id))

    def frame(self, horizon_sec: float) -> pd.DataFrame:
        """All intervals, idle gaps included, sorted by slot then start (columns
        :data:`SLOT_TIMELINE_COLUMNS`)."""
        by_slot: dict[str, list[tuple[str, str, float, float, str]]] = {
            s: [] for s in self.slot_ids
        }
        for interval in self._intervals:
            by_slot[interval[0]].append(interval)
        rows: list[tuple[str, str, float, float, str]] = []
        for slot_id in self.slot_ids:
            cursor = 0.0
            for interval in sorted(by_slot[slot_id], key=lambda iv: iv[2]):
                if interval[2] > cursor:
                    rows.append((slot_id, "idle", cursor, interval[2], ""))
                rows.append(interval)
                cursor = max(cursor, interval[3])
            if horizon_sec > cursor:
                rows.append((slot_id, "idle", cursor, horizon_sec, ""))
        return pd.DataFrame(rows, columns=list(SLOT_TIMELINE_COLUMNS)).astype(
            {"start_sec": float, "end_sec": float}
        )
