"""BoundedExecutor's fast path: a call that returns inside its bound is one handoff and one wait,
and taking it weakens none of the guarantees (no wedged worker reused, no late value credited)."""

from __future__ import annotations

import threading

import pytest

from reviewlab.core._deadline import clock_scope, deadline_remaining
from reviewlab.live._call_notes import CallNotes, current_notes
from reviewlab.live._call_results import CallStatus
from reviewlab.live._executor import BoundedExecutor

WAIT = 10.0  # generous upper limit for events that must happen; never decides a race


@pytest.fixture()
def executor():
    with BoundedExecutor(loose_cap=None) as ex:
        yield ex


def test_fast_calls_reuse_one_worker_thread(executor):
    """Fifty calls that return inside their bound all run on the same worker thread."""
    idents = {executor.run(threading.get_ident, bound=5.0).value for _ in range(50)}
    assert len(idents) == 1
    assert threading.get_ident() not in idents
    assert executor.threads_started == 1


def test_a_worker_that_wedges_after_fast_calls_is_never_reused(executor):
    """A worker that served fast calls and then wedges is abandoned and never runs another call,
    before or after its tool returns."""
    fast = executor.run(threading.get_ident, bound=5.0).value
    entered = threading.Event()
    release = threading.Event()

    def wedge() -> int:
        entered.set()
        release.wait(WAIT)
        return threading.get_ident()

    result = executor.run(wedge, bound=0.05, name="wedge")
    assert entered.wait(WAIT)  # the worker runs the tool even if the bound passed before it began
    assert result.status is CallStatus.ABANDONED
    while_loose = {executor.run(threading.get_ident, bound=5.0).value for _ in range(5)}
    assert fast not in while_loose
    release.set()
    assert result.settled is not None and result.settled.wait(WAIT)
    after = {executor.run(threading.get_ident, bound=5.0).value for _ in range(5)}
    assert fast not in after
    assert executor.threads_started == 2
    assert executor.ledger.snapshot()["loose"] == 0


def test_a_value_returned_after_the_abandonment_is_never_credited(executor):
    """The tool returns its value once the caller has abandoned it: the result keeps no value, and
    the next call on the executor gets its own value, not the late one."""
    release = threading.Event()

    def late() -> str:
        release.wait(WAIT)
        return "late"

    result = executor.run(late, bound=0.02, name="late")
    assert result.status is CallStatus.ABANDONED and result.value is None
    release.set()
    assert result.settled is not None and result.settled.wait(WAIT)
    assert result.value is None and result.exc is None
    assert result.zombie_sec is not None and result.zombie_sec >= 0.0
    nxt = executor.run(lambda: "own", bound=5.0)
    assert nxt.returned and nxt.value == "own"


def test_a_reused_worker_sees_only_its_current_calls_deadline(executor):
    """The worker narrows the deadline in a context made for one call: the next call on the same
    worker sees its own, longer bound, and the caller's context is never narrowed."""
    with clock_scope(lambda: 100.0):
        first = executor.run(lambda: (deadline_remaining(), threading.get_ident()), bound=1.0)
        second = executor.run(lambda: (deadline_remaining(), threading.get_ident()), bound=5.0)
        assert deadline_remaining() is None
    assert first.value[1] == second.value[1]  # the same worker thread
    assert first.value[0] == pytest.approx(1.0)
    assert second.value[0] == pytest.approx(5.0)


def test_a_call_that_returns_makes_no_abandonment_event(executor):
    """The abandonment event is not on the fast path: a call that returned never made one,
    an abandoned call's tool and its caller share the one that was made."""
    seen: list[CallNotes] = []

    def quick() -> str:
        notes = current_notes()
        assert notes is not None
        seen.append(notes)
        return "ok"

    assert executor.run(quick, bound=5.0).returned
    assert seen[0]._abandoned is None

    release = threading.Event()
    watched: list[threading.Event] = []

    def watcher() -> None:
        notes = current_notes()
        assert notes is not None
        watched.append(notes.abandoned)
        release.wait(WAIT)

    result = executor.run(watcher, bound=0.02)
    assert result.status is CallStatus.ABANDONED
    release.set()
    assert result.settled is not None and result.settled.wait(WAIT)
    assert watched[0].is_set()


def test_threads_racing_for_the_abandonment_event_get_the_same_one():
    """Many threads asking a fresh call's notes for its event at once all get one event, so
    setting it tells every one of them."""
    notes = CallNotes("thread")
    start = threading.Barrier(8)
    got: list[threading.Event] = []
    lock = threading.Lock()

    def ask() -> None:
        start.wait(WAIT)
        event = notes.abandoned
        with lock:
            got.append(event)

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT)
    assert len(got) == 8
    assert all(event is got[0] for event in got)
    notes.abandon()
    assert all(event.is_set() for event in got)
