"""Deadline scopes held in context variables.

A deadline is a point in time after which nobody should wait any more. Scopes
only ever *narrow*: every scope in force is remembered, and the effective
deadline is the minimum of all of them. Two clocks are kept apart:

* execution deadlines are absolute times on the :func:`monotonic_now` clock
  (``deadline_at`` values), pushed by :func:`execution_deadline_scope`;
* calendar deadlines are ISO-8601 wall times with a time zone, pushed by
  :func:`calendar_scope`.

:func:`deadline_remaining` answers ``None`` when no scope is in force and
``0.0`` (never a negative number) once the earliest deadline has passed. There
is no floor: a deadline 1 ms away gives 0.001.

Scopes live in :mod:`contextvars`, so a worker thread started through
:func:`contextvars.copy_context` inherits them; that is how a tool worker sees
the bound of the call it serves.

The monotonic clock is injectable (:func:`clock_scope`) so that tests and
simulations can drive time without sleeping.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime

__all__ = [
    "calendar_scope",
    "clock_scope",
    "deadline_remaining",
    "execution_deadline_scope",
    "monotonic_now",
    "narrow_for_rest_of_context",
    "parse_wall_time",
    "remaining_until",
]

Clock = Callable[[], float]

_clock: ContextVar[Clock] = ContextVar("reviewlab_clock", default=time.monotonic)
_execution: ContextVar[tuple[float, ...]] = ContextVar("reviewlab_execution_deadlines", default=())
_calendar: ContextVar[tuple[datetime, ...]] = ContextVar("reviewlab_calendar_deadlines", default=())


def monotonic_now() -> float:
    """Seconds on the monotonic clock in force (``time.monotonic`` unless injected)."""
    return _clock.get()()


@contextmanager
def clock_scope(clock: Clock) -> Iterator[None]:
    """Make ``clock`` the monotonic clock for this context (tests, simulations)."""
    if not callable(clock):
        raise TypeError(f"clock: expected a callable returning seconds, got {clock!r}")
    token = _clock.set(clock)
    try:
        yield
    finally:
        _clock.reset(token)


def remaining_until(deadline_at: float | None, now: float) -> float | None:
    """Seconds from ``now`` to ``deadline_at``: ``None`` without a deadline, never negative."""
    if deadline_at is None:
        return None
    return max(0.0, deadline_at - now)


def _check_deadline(deadline_at: float) -> float:
    if isinstance(deadline_at, bool) or not isinstance(deadline_at, int | float):
        raise TypeError(f"deadline: expected seconds on the monotonic clock, got {deadline_at!r}")
    value = float(deadline_at)
    if math.isnan(value):
        raise ValueError("deadline: must not be NaN")
    return value


@contextmanager
def execution_deadline_scope(deadline: float | None) -> Iterator[None]:
    """Narrow the execution deadline to ``deadline`` (on :func:`monotonic_now`) inside the block.

    ``None`` adds nothing. ``math.inf`` is allowed and narrows nothing. An
    enclosing, earlier deadline stays in force: scopes can only narrow.
    """
    if deadline is None:
        yield
        return
    value = _check_deadline(deadline)
    token = _execution.set((*_execution.get(), value))
    try:
        yield
    finally:
        _execution.reset(token)


def narrow_for_rest_of_context(deadline: float) -> None:
    """Narrow the execution deadline to ``deadline`` for the rest of the current context.

    For code that runs in a context of its own that is thrown away afterwards (an asyncio
    task's copy, a worker's copied context): there is no scope to leave, so this skips the
    cost of a context manager on a hot path. Scopes still only narrow.
    """
    value = _check_deadline(deadline)
    _execution.set((*_execution.get(), value))


def parse_wall_time(iso: str) -> datetime:
    """Parse an ISO-8601 wall time that carries a time zone, or raise naming the value."""
    try:
        stamp = datetime.fromisoformat(iso)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"calendar deadline: not an ISO-8601 time: {iso!r}") from exc
    if stamp.tzinfo is None:
        raise ValueError(f"calendar deadline: {iso!r} has no time zone (add +00:00 or Z)")
    return stamp


@contextmanager
def calendar_scope(deadline_iso: str | None) -> Iterator[None]:
    """Narrow the deadline to the wall time ``deadline_iso`` inside the block.

    An empty string or ``None`` adds nothing; an unparsable time or one without
    a time zone raises :class:`ValueError` naming it.
    """
    if not deadline_iso:
        yield
        return
    stamp = parse_wall_time(deadline_iso)
    token = _calendar.set((*_calendar.get(), stamp))
    try:
        yield
    finally:
        _calendar.reset(token)


def deadline_remaining() -> float | None:
    """Seconds left before the earliest deadline in force; ``None`` with
    no scope, ``0.0`` once passed."""
    execution = _execution.get()
    calendar = _calendar.get()
    if not execution and not calendar:
        return None
    candidates: list[float] = []
    if execution:
        candidates.append(max(0.0, min(execution) - monotonic_now()))
    if calendar:
        wall_now = datetime.now(UTC)
        candidates.append(max(0.0, (min(calendar) - wall_now).total_seconds()))
    return min(candidates)
