"""Deadline scopes: None without a scope, the minimum rule, no floor, 0.0
once passed, worker inheritance."""

from __future__ import annotations

import contextvars
import math
import threading
import time
from datetime import UTC, datetime, timedelta

import pytest

from reviewlab.core._deadline import (
    Clock,
    ScaledClock,
    calendar_scope,
    clock_scope,
    current_clock,
    deadline_remaining,
    execution_deadline_scope,
    monotonic_now,
    parse_wall_time,
    remaining_until,
)


@pytest.fixture()
def clock():
    """A monotonic clock the test moves by hand."""
    now = [1000.0]
    with clock_scope(lambda: now[0]):
        yield now


def test_no_scope_means_no_deadline():
    """Without any scope deadline_remaining() is None."""
    assert deadline_remaining() is None


def test_an_execution_scope_counts_down_on_the_monotonic_clock(clock):
    """Remaining time is the deadline minus monotonic_now(), exactly, on the injected clock."""
    with execution_deadline_scope(1010.0):
        assert deadline_remaining() == 10.0
        clock[0] = 1007.5
        assert deadline_remaining() == 2.5
    assert deadline_remaining() is None  # the scope is restored on exit


def test_nested_scopes_only_narrow(clock):
    """The effective deadline is the minimum over the scopes in force; an
    inner later one widens nothing."""
    with execution_deadline_scope(1010.0):
        with execution_deadline_scope(1100.0):
            assert deadline_remaining() == 10.0
        with execution_deadline_scope(1003.0):
            assert deadline_remaining() == 3.0
        assert deadline_remaining() == 10.0


def test_a_passed_deadline_gives_zero_and_there_is_no_floor(clock):
    """0.0 (never negative) once passed; a deadline 1 ms away gives 1 ms, not a minimum."""
    with execution_deadline_scope(999.0):
        assert deadline_remaining() == 0.0
    with execution_deadline_scope(1000.001):
        assert deadline_remaining() == pytest.approx(0.001)


def test_none_adds_nothing_and_infinity_narrows_nothing(clock):
    """`None` pushes no scope; `inf` is a scope that never passes."""
    with execution_deadline_scope(None):
        assert deadline_remaining() is None
    with execution_deadline_scope(math.inf):
        assert deadline_remaining() == math.inf


def test_bad_deadlines_are_rejected_naming_the_parameter():
    """NaN and non-numbers are errors that name `deadline`."""
    with pytest.raises(ValueError, match="deadline"), execution_deadline_scope(math.nan):
        pass
    with pytest.raises(TypeError, match="deadline"), execution_deadline_scope(True):  # type: ignore[arg-type]
        pass
    with pytest.raises(TypeError, match="deadline"), execution_deadline_scope("soon"):  # type: ignore[arg-type]
        pass


def test_calendar_scopes_count_down_on_the_wall_clock():
    """A calendar deadline is an ISO wall time with a zone;
    remaining is measured against UTC now."""
    soon = (datetime.now(UTC) + timedelta(seconds=100)).isoformat()
    with calendar_scope(soon):
        remaining = deadline_remaining()
        assert remaining is not None and 90.0 < remaining <= 100.0
    past = (datetime.now(UTC) - timedelta(seconds=5)).isoformat()
    with calendar_scope(past):
        assert deadline_remaining() == 0.0
    with calendar_scope(""), calendar_scope(None):
        assert deadline_remaining() is None


def test_the_minimum_spans_both_clocks(clock):
    """With a calendar and an execution scope, the earlier of the two decides."""
    far = (datetime.now(UTC) + timedelta(hours=1)).isoformat()
    with calendar_scope(far), execution_deadline_scope(1004.0):
        assert deadline_remaining() == 4.0
    near = (datetime.now(UTC) - timedelta(seconds=1)).isoformat()
    with calendar_scope(near), execution_deadline_scope(1004.0):
        assert deadline_remaining() == 0.0


def test_calendar_times_need_a_zone_and_must_parse():
    """A wall time without a time zone, or not ISO at all, is refused naming the value."""
    with pytest.raises(ValueError, match="time zone"), calendar_scope("2030-01-01T00:00:00"):
        pass
    with pytest.raises(ValueError, match="not an ISO-8601"), calendar_scope("tomorrow"):
        pass
    assert parse_wall_time("2030-01-01T00:00:00Z").tzinfo is not None


def test_a_worker_started_with_the_copied_context_inherits_the_scopes(clock):
    """Scopes live in context variables: a thread run through copy_context()
    sees them, a bare one does not."""
    seen: dict[str, float | None] = {}
    with execution_deadline_scope(1020.0):
        context = contextvars.copy_context()
        inheriting = threading.Thread(
            target=context.run, args=(lambda: seen.__setitem__("copied", deadline_remaining()),)
        )
        bare = threading.Thread(target=lambda: seen.__setitem__("bare", deadline_remaining()))
        inheriting.start()
        bare.start()
        inheriting.join(10)
        bare.join(10)
    assert seen == {"copied": 20.0, "bare": None}


def test_clock_scope_injects_and_restores_the_clock():
    """monotonic_now() follows the injected clock inside the block
    only; a non-callable is refused."""
    with clock_scope(lambda: 42.0):
        assert monotonic_now() == 42.0
    assert monotonic_now() != 42.0
    with pytest.raises(TypeError, match="clock"), clock_scope(42.0):  # type: ignore[arg-type]
        pass


def test_remaining_until_is_never_negative():
    """remaining_until: None without a deadline, the difference, or 0.0 once passed."""
    assert remaining_until(None, 5.0) is None
    assert remaining_until(8.0, 5.0) == 3.0
    assert remaining_until(2.0, 5.0) == 0.0


def test_a_clock_converts_its_seconds_into_real_waits():
    """Clock(read, factor): reads are the callable's, a wait of x clock seconds is x * factor
    real seconds; forever (None, inf) stays forever and a past moment waits 0."""
    clock = Clock(lambda: 7.0, factor=0.01)
    assert clock.now() == 7.0 and clock.real_sec(10.0) == pytest.approx(0.1)
    assert clock.real_timeout(None) is None and clock.real_timeout(math.inf) is None
    assert clock.real_timeout(-3.0) == 0.0
    assert clock.real_timeout(1e300) == threading.TIMEOUT_MAX
    done = threading.Event()
    done.set()
    assert clock.wait(done, 1e6) and clock.wait_until(done, 1e9)
    with pytest.raises(ValueError, match="forever"):
        clock.sleep_for(math.inf)


@pytest.mark.parametrize("bad", [0, -1.0, math.nan, math.inf, "2", True])
def test_a_bad_clock_factor_is_refused_by_name(bad):
    """A factor that is not a positive finite number is refused, naming ``factor``."""
    with pytest.raises(ValueError, match="factor"):
        ScaledClock(bad)
    with pytest.raises(ValueError, match="factor"):
        Clock(lambda: 0.0, factor=bad)


def test_a_scaled_clock_runs_faster_than_real_time_and_waits_less():
    """ScaledClock(0.01): a 20-second clock sleep takes about 0.2 real seconds and the clock
    reads about 20 seconds more afterwards (never less: a sleep does not end early)."""
    clock = ScaledClock(0.01)
    # Each clock reading is bracketed by two real ones, so the check holds however the
    # readings interleave with the scheduler (a gap between them is magnified 100 times).
    real_0, before, real_1 = time.monotonic(), clock.now(), time.monotonic()
    clock.sleep_for(20.0)
    real_2, after, real_3 = time.monotonic(), clock.now(), time.monotonic()
    assert real_2 - real_1 >= 0.2 - 1e-3
    assert (real_2 - real_1) / 0.01 - 1e-6 <= after - before <= (real_3 - real_0) / 0.01 + 1e-6
    assert real_3 - real_0 < 10.0  # generous: a loaded machine may wake it late


def test_deadline_scopes_count_in_the_clock_seconds_in_force():
    """Under a scaled clock a deadline scope and deadline_remaining() are in the clock's own
    seconds: 50 s left reads 50 s (not 0.5), on a clock read by hand."""
    now = [100.0]
    with clock_scope(Clock(lambda: now[0], factor=0.01)) as clock:
        assert current_clock() is clock
        with execution_deadline_scope(150.0):
            assert deadline_remaining() == 50.0
            now[0] = 149.0
            assert deadline_remaining() == 1.0
    assert current_clock() is not clock and current_clock().factor == 1.0


def test_a_worker_thread_inherits_the_clock_through_its_copied_context():
    """A thread started in a copy of the context reads the same clock object; a bare one the
    real clock."""
    clock = ScaledClock(0.5)
    seen = {}
    with clock_scope(clock):
        context = contextvars.copy_context()
    copied = threading.Thread(
        target=lambda: context.run(lambda: seen.setdefault("c", current_clock()))
    )
    bare = threading.Thread(target=lambda: seen.setdefault("b", current_clock()))
    copied.start()
    bare.start()
    copied.join(10)
    bare.join(10)
    assert seen["c"] is clock and seen["b"].factor == 1.0
