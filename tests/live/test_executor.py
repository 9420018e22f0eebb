"""BoundedExecutor: calls run on reused workers, are waited for their bound, and abandoned after."""

from __future__ import annotations

import contextvars
import threading
import time
from datetime import datetime

import pytest

from reviewlab.core._deadline import (
    clock_scope,
    deadline_remaining,
    execution_deadline_scope,
    monotonic_now,
)
from reviewlab.core._policy import Bound
from reviewlab.core._receipts import refused_text
from reviewlab.live import _executor as executor_module
from reviewlab.live._call_results import CallStatus
from reviewlab.live._executor import BoundedExecutor

WAIT = 10.0  # generous upper limit for events that must happen; never decides a race


class Wedge:
    """A tool that blocks until released, and says when it started and when it returned."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()
        self.returned = threading.Event()

    def __call__(self, value: str = "late") -> str:
        self.entered.set()
        self.release.wait(WAIT * 3)
        self.returned.set()
        return value


@pytest.fixture()
def executor():
    with BoundedExecutor(loose_cap=None) as ex:
        yield ex


def test_a_call_that_returns_inside_its_bound_is_returned_with_its_value(executor):
    """A fast call comes back `returned` with its value, an ISO start stamp and a float duration."""
    result = executor.run(lambda a, b=0: a + b, 2, b=3, bound=5.0, name="add")

    assert result.status is CallStatus.RETURNED and result.returned
    assert result.value == 5 and result.exc is None
    assert result.name == "add" and result.bound_sec == 5.0
    assert datetime.fromisoformat(result.started_at).tzinfo is not None
    assert isinstance(result.duration_sec, float) and 0.0 <= result.duration_sec < 5.0
    assert executor.ledger.snapshot()["abandoned"] == 0


def test_the_tools_own_exception_is_raised_not_abandoned(executor):
    """A tool's exception inside its bound is the `raised` outcome; nothing is loose."""

    def broken() -> None:
        raise KeyError("no such file")

    result = executor.run(broken, bound=5.0)

    assert result.status is CallStatus.RAISED
    assert isinstance(result.exc, KeyError)
    assert executor.loose == 0


def test_workers_are_reused_while_they_behave(executor):
    """Sequential calls (returned or raised) reuse one worker thread."""
    for index in range(50):
        executor.run(lambda i=index: i, bound=5.0)
        executor.run(int, "not a number", bound=5.0)  # raises ValueError inside the tool
    assert executor.threads_started == 1


def test_a_call_that_outlives_its_bound_is_abandoned_and_its_worker_retired(executor):
    """The bound passes first: `abandoned`, one loose worker, and the
    next call gets a fresh thread."""
    wedge = Wedge()
    executor.run(int, bound=5.0)  # start the pool's first worker
    sent_at = monotonic_now()
    result = executor.run(wedge, bound=0.05, name="read_file")
    back_at = monotonic_now()

    assert result.status is CallStatus.ABANDONED and result.loose
    assert result.value is None and result.zombie_sec is None
    assert result.duration_sec >= 0.05
    assert executor.loose == 1 and executor.ledger.peak == 1

    # The wedged worker is out of the pool: the next call cannot reuse it.
    assert executor.run(int, bound=5.0).returned
    assert executor.threads_started == 2

    released_at = monotonic_now()  # control came back before this; the tool returns after it
    wedge.release.set()
    assert result.settled is not None and result.settled.wait(WAIT)
    assert executor.ledger.wait_settled(WAIT)
    # The late value is dropped; only the zombie time is recorded.
    assert result.status is CallStatus.ABANDONED and result.value is None
    assert result.zombie_sec is not None
    assert released_at - back_at <= result.zombie_sec <= monotonic_now() - sent_at
    snapshot = executor.ledger.snapshot()
    assert snapshot["loose"] == 0 and snapshot["settled"] == 1 and snapshot["peak"] == 1
    assert snapshot["zombie_sec"] == pytest.approx(result.zombie_sec)


def test_zombie_seconds_measure_the_time_past_the_abandonment():
    """Zombie time runs on the monotonic clock from abandonment to the tool's return."""
    now = [100.0]
    wedge = Wedge()
    with clock_scope(lambda: now[0]), BoundedExecutor(loose_cap=None) as ex:

        def tool() -> str:
            wedge()
            now[0] += 7.5  # the tool "ran" 7.5 s on the injected clock after abandonment
            return "late"

        result = ex.run(tool, bound=0.01)
        assert result.status is CallStatus.ABANDONED
        wedge.release.set()
        assert ex.ledger.wait_settled(WAIT)
    assert result.zombie_sec == pytest.approx(7.5)
    assert ex.ledger.zombie_sec == pytest.approx(7.5)


def test_a_bound_of_zero_abandons_at_once(executor):
    """A bound of 0 (deadline already passed) abandons a running call immediately."""
    wedge = Wedge()
    result = executor.run(wedge, bound=Bound(0.0, "deadline", 600.0, 0.0))

    assert result.status is CallStatus.ABANDONED
    assert result.bound_sec == 0.0 and result.bound is not None and result.bound.by == "deadline"
    wedge.release.set()
    assert executor.ledger.wait_settled(WAIT)


def test_an_unbounded_call_waits_for_the_tool_however_long(executor, monkeypatch):
    """`Bound.sec is None` (the pre-fix policy) waits for the tool, a million clock seconds on."""
    clock = [0.0]
    order: list[str] = []
    timed_out: list[object] = []
    monkeypatch.setattr(executor_module, "_after_wait_timeout", timed_out.append)
    wedge = Wedge()

    def tool() -> str:
        value = wedge("slow")
        order.append("tool returned")
        return value

    def later() -> None:  # the tool returns only once the injected clock moved far on
        assert wedge.entered.wait(WAIT)
        clock[0] += 1e6
        wedge.release.set()

    helper = threading.Thread(target=later)
    helper.start()
    with clock_scope(lambda: clock[0]):
        result = executor.run(tool, bound=Bound(None, "unbounded", None))
    order.append("caller back")
    helper.join(WAIT)
    assert order == ["tool returned", "caller back"]
    assert result.status is CallStatus.RETURNED and result.value == "slow"
    assert result.duration_sec == pytest.approx(1e6)
    assert timed_out == [] and executor.loose == 0


def test_a_tool_the_worker_claims_as_the_wait_times_out_is_returned_not_abandoned(
    executor, monkeypatch
):
    """The wait times out, but the worker claims the call first: returned, nothing abandoned."""
    wedge = Wedge()
    seen: list[object] = []

    def worker_claims_first(job) -> None:
        seen.append(job)
        wedge.release.set()
        assert wedge.returned.wait(WAIT)
        give_up = time.monotonic() + WAIT  # the worker claims right after the tool returns
        while not job.claim.locked():
            assert time.monotonic() < give_up, "the worker never claimed its finished call"
            time.sleep(0.001)

    monkeypatch.setattr(executor_module, "_after_wait_timeout", worker_claims_first)
    result = executor.run(wedge, "just in time", bound=0.01)
    assert len(seen) == 1, "the caller's wait did not time out"
    assert result.status is CallStatus.RETURNED and result.value == "just in time"
    assert result.zombie_sec is None and not result.loose
    assert executor.ledger.snapshot()["abandoned"] == 0 and executor.loose == 0
    # The worker rejoined the pool before waking the caller: the next call reuses it.
    monkeypatch.setattr(executor_module, "_after_wait_timeout", None)
    assert executor.run(lambda: 1, bound=WAIT).value == 1
    assert executor.threads_started == 1


def test_when_the_caller_claims_first_the_call_is_abandoned(executor, monkeypatch):
    """The wait times out and the caller claims before the tool ends: abandoned, worker loose."""
    wedge = Wedge()
    seen: list[object] = []
    monkeypatch.setattr(executor_module, "_after_wait_timeout", seen.append)
    result = executor.run(wedge, bound=0.01)
    assert len(seen) == 1 and result.status is CallStatus.ABANDONED and executor.loose == 1
    wedge.release.set()
    assert executor.ledger.wait_settled(WAIT) and result.zombie_sec is not None


def test_the_worker_inherits_a_deadline_ending_at_its_bound():
    """Inside the worker, deadline_remaining() is the bound (on the injected clock)."""
    with clock_scope(lambda: 1000.0), BoundedExecutor() as ex:
        assert ex.run(deadline_remaining, bound=5.0).value == 5.0
        # An earlier inherited deadline stays in force: scopes only narrow.
        with execution_deadline_scope(1002.0):
            assert ex.run(deadline_remaining, bound=5.0).value == 2.0
        assert ex.run(deadline_remaining, bound=None).value is None


def test_the_worker_sees_the_callers_context_variables(executor):
    """Context variables set by the caller are visible to the tool (a copied context)."""
    var: contextvars.ContextVar[str] = contextvars.ContextVar("who", default="nobody")
    token = var.set("episode-7")
    try:
        assert executor.run(var.get, bound=5.0).value == "episode-7"
    finally:
        var.reset(token)
    assert executor.run(var.get, bound=5.0).value == "nobody"


def test_the_loose_cap_refuses_calls_without_starting_threads():
    """With `loose_cap` loose workers, a call is refused with the host
    text and no thread is started."""
    wedges = [Wedge(), Wedge()]
    with BoundedExecutor(loose_cap=2) as ex:
        for wedge in wedges:
            assert ex.run(wedge, bound=0.01).status is CallStatus.ABANDONED
        started = ex.threads_started
        ran = threading.Event()
        refused = ex.run(ran.set, bound=5.0, name="read_file")

        assert refused.status is CallStatus.REFUSED
        assert refused.text == refused_text("read_file", 2, 2)
        assert refused.bound_sec == 5.0 and refused.duration_sec == 0.0
        assert not ran.is_set() and ex.threads_started == started
        assert ex.ledger.refused == 1

        for wedge in wedges:
            wedge.release.set()
        assert ex.ledger.wait_settled(WAIT)
        assert ex.run(ran.set, bound=5.0).returned and ran.is_set()


def test_a_cap_of_zero_refuses_every_call():
    """`loose_cap=0` refuses before anything runs."""
    with BoundedExecutor(loose_cap=0) as ex:
        assert ex.run(int, bound=1.0).status is CallStatus.REFUSED
        assert ex.threads_started == 0


def test_peak_counts_loose_workers_at_once(executor):
    """The ledger's peak is the most workers loose at the same time."""
    wedges = [Wedge() for _ in range(3)]
    results = [executor.run(wedge, bound=0.01) for wedge in wedges]
    assert executor.loose == 3 and executor.ledger.peak == 3
    for wedge in wedges:
        wedge.release.set()
    assert executor.ledger.wait_settled(WAIT)
    assert all(result.zombie_sec is not None for result in results)
    assert executor.ledger.peak == 3 and executor.loose == 0


def test_shutdown_lets_idle_workers_exit_and_refuses_new_calls():
    """After shutdown, idle workers end and `run` raises naming the executor."""
    before = set(threading.enumerate())
    ex = BoundedExecutor(name="short-lived")
    ex.run(int, bound=1.0)
    workers = [
        t for t in set(threading.enumerate()) - before if t.name.startswith("reviewlab-tool-")
    ]
    assert len(workers) == 1
    ex.shutdown()
    with pytest.raises(RuntimeError, match="short-lived"):
        ex.run(int, bound=1.0)
    workers[0].join(WAIT)
    assert not workers[0].is_alive()


def test_bad_arguments_are_refused_with_the_field_named():
    """A negative cap or bound is an error naming the parameter."""
    with pytest.raises(ValueError, match="loose_cap"):
        BoundedExecutor(loose_cap=-1)
    with BoundedExecutor() as ex, pytest.raises(ValueError, match="bound"):
        ex.run(int, bound=-1.0)


def test_durations_are_on_the_injected_monotonic_clock():
    """duration_sec is measured on monotonic_now(), so an injected clock drives it."""
    ticks = iter([10.0, 10.0, 12.5, 12.5, 12.5])
    with BoundedExecutor() as ex, clock_scope(lambda: next(ticks, 12.5)):
        result = ex.run(int, bound=None)
    assert result.duration_sec == pytest.approx(2.5)
    assert monotonic_now() > 0


def test_an_abandoned_tool_is_told_on_its_notes_and_a_returned_one_is_not(executor):
    """A tool can watch ``current_notes().abandoned`` to stop early: the executor sets it when
    it abandons the call (with the moment, after the bound), never for a call that returned."""
    from reviewlab.live._call_notes import current_notes

    seen: dict[str, object] = {}

    def cooperative() -> str:
        notes = current_notes()
        assert notes is not None
        seen["notes"] = notes
        told = notes.abandoned.wait(WAIT)  # stops as soon as it is told
        seen["told"] = told
        return "stopped"

    result = executor.run(cooperative, bound=0.05, name="read_file")
    assert result.status is CallStatus.ABANDONED
    assert result.settled is not None and result.settled.wait(WAIT)
    notes = seen["notes"]
    assert seen["told"] is True
    assert notes.abandoned_sec is not None and notes.abandoned_sec >= 0.05  # type: ignore[attr-defined]
    # It stopped once told, long before its own WAIT: its zombie time is short.
    assert result.zombie_sec is not None and result.zombie_sec < WAIT / 2

    def quick() -> str:
        seen["quick"] = current_notes()
        return "ok"

    assert executor.run(quick, bound=5.0).returned
    quick_notes = seen["quick"]
    assert not quick_notes.abandoned.is_set() and quick_notes.abandoned_sec is None  # type: ignore[attr-defined]
