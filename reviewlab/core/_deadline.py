"""Deadline scopes held in context variables, and the one clock that scales time.

A deadline is a point in time after which nobody should wait any more. Scopes only ever
narrow: the effective deadline is the minimum of every scope in force. Execution deadlines are
absolute times on the :func:`monotonic_now` clock (:func:`execution_deadline_scope`); calendar
deadlines are ISO-8601 wall times with a time zone (:func:`calendar_scope`).
:func:`deadline_remaining` is ``None`` without a scope and ``0.0``, never negative, once the
earliest deadline has passed. Scopes live in :mod:`contextvars`, so a worker thread started
through :func:`contextvars.copy_context` sees the bound of the call it serves.

The monotonic clock is a :class:`Clock` in a context variable (:func:`clock_scope`): tests
inject one they move by hand; the real replay engine runs under a :class:`ScaledClock` on which
every wait, duration and deadline is in recorded seconds (docs/architecture.md, "Deadlines
and the clock").
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime

from reviewlab.core._errors import ParameterError


class Clock:
    """The monotonic clock in force: :meth:`now` reads it, :meth:`real_sec` turns clock seconds
    into real seconds to wait.

    ``factor`` is the real seconds one clock second lasts: 1 on the real clock and on a clock a
    test reads by hand (``Clock(read)``: the reads are the test's, the waits stay real), other
    values on a :class:`ScaledClock`. Every wait of reviewlab's executors and replay tools goes
    through :meth:`real_sec` (or :meth:`wait`/:meth:`sleep_for`), so a clock scales them all.
    """

    __slots__ = ("factor", "now")

    def __init__(self, read: Callable[[], float] = time.monotonic, factor: float = 1.0) -> None:
        if not callable(read):
            raise TypeError(f"clock: expected a callable returning seconds, got {read!r}")
        self.now: Callable[[], float] = read
        """Seconds on this clock (monotonic; an attribute, so reading it costs one call)."""
        self.factor = _check_factor(factor)

    def real_sec(self, sec: float) -> float:
        """How many real seconds ``sec`` clock seconds last (``inf`` stays ``inf``)."""
        return sec * self.factor

    def real_timeout(self, sec: float | None) -> float | None:
        """``sec`` clock seconds as a timeout for a blocking wait: ``None`` (forever) for
        ``None`` or ``inf``, else non-negative real seconds capped at ``threading.TIMEOUT_MAX``."""
        if sec is None or sec == math.inf:
            return None
        return min(max(0.0, sec * self.factor), threading.TIMEOUT_MAX)

    def wait(self, event: threading.Event, sec: float | None) -> bool:
        """Wait at most ``sec`` clock seconds (``None``/``inf``: forever) for ``event``; whether
        it is set."""
        return event.wait(self.real_timeout(sec))

    def wait_until(self, event: threading.Event, at: float) -> bool:
        """Wait for ``event`` until this clock reads ``at`` (``inf``: forever); whether it is
        set."""
        return self.wait(event, at - self.now())

    def sleep_for(self, sec: float) -> None:
        """Sleep ``sec`` clock seconds (nothing for 0 or less)."""
        timeout = self.real_timeout(sec)
        if timeout is None:
            raise ValueError(f"sleep_for: cannot sleep forever ({sec!r} s)")
        if timeout > 0:
            time.sleep(timeout)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(factor={self.factor:g})"


class ScaledClock(Clock):
    """A clock one of whose seconds lasts ``factor`` real seconds (``0.01``: a hundred times
    faster than real time), as SimPy's ``RealtimeEnvironment(factor)``.

    It starts at the real monotonic time it was made and runs ``1 / factor`` times as fast.
    Under it, a bound, a deadline scope, a hedge delay, an idle timeout or a breaker cool-down of
    ``x`` seconds waits ``x * factor`` real seconds, and every duration measured on
    :func:`monotonic_now` comes out in its own (recorded) seconds.
    """

    __slots__ = ("origin",)

    def __init__(self, factor: float) -> None:
        factor = _check_factor(factor)
        origin = self.origin = time.monotonic()
        real = time.monotonic
        scale = 1.0 / factor
        super().__init__(lambda: origin + (real() - origin) * scale, factor)


def _check_factor(factor: float) -> float:
    if (
        isinstance(factor, bool)
        or not isinstance(factor, int | float)
        or not (math.isfinite(factor) and factor > 0)
    ):
        raise ParameterError("factor", f"expected a positive finite number, got {factor!r}")
    return float(factor)


_REAL = Clock()
_clock: ContextVar[Clock] = ContextVar("reviewlab_clock", default=_REAL)
_execution: ContextVar[tuple[float, ...]] = ContextVar("reviewlab_execution_deadlines", default=())
_calendar: ContextVar[tuple[datetime, ...]] = ContextVar("reviewlab_calendar_deadlines", default=())


def monotonic_now() -> float:
    """Seconds on the monotonic clock in force (``time.monotonic`` unless injected)."""
    return _clock.get().now()


def current_clock() -> Clock:
    """The :class:`Clock` in force in this context (the real clock unless one was injected)."""
    return _clock.get()


@contextmanager
def clock_scope(clock: Clock | Callable[[], float]) -> Iterator[Clock]:
    """Make ``clock`` the monotonic clock for this context; a bare callable is read as the time
    with waits on the real clock (tests). Yields the :class:`Clock` in force."""
    if not isinstance(clock, Clock):
        if not callable(clock):
            raise TypeError(
                f"clock: expected a Clock or a callable returning seconds, got {clock!r}"
            )
        clock = Clock(clock)
    token = _clock.set(clock)
    try:
        yield clock
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
        raise ParameterError("deadline", "must not be NaN")
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
