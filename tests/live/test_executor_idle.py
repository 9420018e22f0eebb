"""Idle timeouts and the clock in both executors: the thread executor's new idle timeouts, the
rule both share (ExecutorBase), and waits and durations converted by the clock in force.

Progress and time are driven by hand where an order matters: a tool moves a hand-read clock and
reports progress before the caller's first wake (a margin of a second of real time), so no
outcome depends on how fast the machine is.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from reviewlab.core._deadline import Clock, ScaledClock, clock_scope, current_clock
from reviewlab.live._aio import AsyncBoundedExecutor
from reviewlab.live._call_notes import current_notes, report_progress
from reviewlab.live._call_results import CallResult, CallStatus
from reviewlab.live._executor import BoundedExecutor

WAIT = 30.0  # generous real seconds for an event a test expects; never decides a race


def run_thread(tool: Callable[..., Any], **options: Any) -> CallResult:
    """One call through a fresh thread executor."""
    with BoundedExecutor(loose_cap=None) as executor:
        return executor.run(tool, **options)


def run_async(tool: Callable[..., Any], **options: Any) -> CallResult:
    """One call of a sync tool through a fresh asyncio executor (on a thread of its own)."""
    return asyncio.run(AsyncBoundedExecutor(loose_cap=None).run(tool, **options))


EXECUTORS = {"thread": run_thread, "asyncio": run_async}


@pytest.mark.parametrize("executor", sorted(EXECUTORS))
def test_without_progress_the_idle_timeout_fires_exactly_one_period_after_dispatch(executor):
    """No progress: abandoned by ``idle`` with ``bound_sec`` exactly ``idle_sec`` (the moment it
    fired), the hard bound kept as the tool timeout, in both executors alike."""
    release = threading.Event()
    try:
        result = EXECUTORS[executor](release.wait, bound=WAIT, idle_sec=0.05, name="slow")
    finally:
        release.set()
    assert result.status is CallStatus.ABANDONED
    assert result.bound is not None and result.bound.by == "idle"
    assert result.bound_sec == 0.05 and result.bound.tool_timeout_sec == WAIT
    assert result.notes is not None and result.notes.progress_sec == []


@pytest.mark.parametrize("executor", sorted(EXECUTORS))
def test_progress_pushes_the_idle_timeout_to_one_period_after_the_last_report(executor):
    """On a hand-read clock (a second of it lasts 0.2 real s) the tool reports progress at 1 s
    and 2 s, then goes quiet: the idle timeout (5 s) fires at exactly 2 + 5 = 7 s, not at 5."""
    now = [0.0]
    release = threading.Event()

    def tool() -> str:
        for moment in (1.0, 2.0):
            now[0] = moment
            assert report_progress()
        release.wait(WAIT)
        return "late"

    try:
        with clock_scope(Clock(lambda: now[0], factor=0.2)):
            result = EXECUTORS[executor](tool, bound=60.0, idle_sec=5.0, name="progress")
    finally:
        release.set()
    assert result.status is CallStatus.ABANDONED and result.bound is not None
    assert result.bound.by == "idle" and result.bound_sec == 7.0
    assert result.notes is not None and result.notes.progress_sec == [1.0, 2.0]


def test_the_hard_bound_caps_an_idle_timeout_held_off_by_steady_progress():
    """A sync tool reporting progress every few ms is still abandoned at its 0.3 s bound, by
    ``tool_timeout``; it settles when released."""
    release = threading.Event()

    def tool() -> None:
        while not release.wait(0.005):
            report_progress()

    with BoundedExecutor(loose_cap=None) as executor:
        result = executor.run(tool, bound=0.3, idle_sec=WAIT / 2, name="steady")
        release.set()
        assert executor.ledger.wait_settled(WAIT)
    assert result.status is CallStatus.ABANDONED and result.bound is not None
    assert result.bound.by == "tool_timeout" and result.bound_sec == 0.3
    assert result.notes is not None and len(result.notes.progress_sec) >= 1
    assert result.zombie_sec is not None and result.zombie_sec >= 0.0


def test_a_call_that_returns_inside_its_idle_timeout_is_returned():
    """A tool that answers at once is returned; an idle timeout it never reached changes
    nothing."""
    result = run_thread(lambda: "fast", bound=WAIT, idle_sec=WAIT / 2)
    assert result.status is CallStatus.RETURNED and result.value == "fast"
    assert result.bound is not None and result.bound.by == "tool_timeout"


def test_a_thread_call_keeps_its_notes_only_when_it_has_something_to_say():
    """A plain thread call carries no notes (its recording stays version 1); one that reported
    progress carries them, and the call id the caller gave is on them."""
    assert run_thread(lambda: 1, bound=WAIT).notes is None

    def tool() -> str:
        notes = current_notes()
        report_progress()
        return notes.call_id if notes is not None else ""

    result = run_thread(tool, bound=WAIT, call_id="c7")
    assert result.value == "c7" and result.notes is not None
    assert len(result.notes.progress_sec) == 1 and result.notes.transport == "thread"


def test_progress_outside_a_bounded_call_reports_nothing():
    """report_progress() outside any executor call is a no-op that says so."""
    assert report_progress() is False


def test_waits_durations_and_zombie_seconds_are_in_the_clock_seconds_in_force():
    """Under ScaledClock(0.01) a 20 s bound abandons a tool that sleeps 50 clock seconds after
    about 0.2 real s; the duration reads about 20 and the zombie about 30 clock seconds (0.3 if
    it were measured in real seconds)."""
    clock = ScaledClock(0.01)

    def tool() -> str:
        current_clock().sleep_for(50.0)
        return "late"

    with clock_scope(clock), BoundedExecutor(loose_cap=None) as executor:
        real_start = time.monotonic()
        result = executor.run(tool, bound=20.0, name="sleepy")
        waited_real = time.monotonic() - real_start
        assert result.settled is not None and result.settled.wait(WAIT)
    assert result.status is CallStatus.ABANDONED and result.bound_sec == 20.0
    assert waited_real >= 0.2 - 1e-3  # the wait never ends early
    assert 20.0 - 1e-6 <= result.duration_sec < 20.0 + 10.0  # late by at most 0.1 s real
    assert result.zombie_sec is not None and 15.0 < result.zombie_sec < 45.0
    assert executor.ledger.snapshot()["zombie_sec"] == pytest.approx(result.zombie_sec)


def test_an_idle_timeout_at_or_past_the_bound_never_fires_first():
    """``idle_sec >= bound``: the hard bound decides (``tool_timeout``)."""
    release = threading.Event()
    try:
        result = run_thread(release.wait, bound=0.05, idle_sec=0.05, name="slow")
    finally:
        release.set()
    assert result.bound is not None and result.bound.by == "tool_timeout"


@pytest.mark.parametrize("executor", sorted(EXECUTORS))
def test_an_idle_timeout_equal_to_the_bound_leaves_the_bound_to_fire(executor):
    """Idle 0.05 s under a hard bound of 0.05 s, no progress: the idle timeout can never fire
    first, so the call is abandoned by its tool timeout at 0.05 s, not reported ``idle``."""
    release = threading.Event()
    try:
        result = EXECUTORS[executor](release.wait, bound=0.05, idle_sec=0.05, name="slow")
    finally:
        release.set()
    assert result.status is CallStatus.ABANDONED
    assert result.bound is not None and result.bound.by == "tool_timeout"
    assert result.bound_sec == 0.05
