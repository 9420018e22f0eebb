"""The asyncio bounded executor: the thread executor's contract, plus
cancellation and idle timeouts.

Races are decided by events and by the event loop's timer order (a timer due earlier always
runs first), never by how long a sleep happened to take.
"""

from __future__ import annotations

import asyncio
import threading

import pytest

from reviewlab.core._deadline import deadline_remaining
from reviewlab.core._policy import Bound
from reviewlab.live._aio import AsyncBoundedExecutor, is_async_callable
from reviewlab.live._call_notes import current_notes
from reviewlab.live._call_results import CallStatus

# Long enough that a trivial call on a loaded 2-core machine returns inside it.
GENEROUS = 30.0


def run(coro):
    return asyncio.run(coro)


def test_an_async_tool_that_returns_inside_its_bound_is_returned():
    """A returning tool's value comes back with a duration and its bound; no ledger entry."""

    async def tool(x):
        await asyncio.sleep(0)
        return x * 2

    async def main():
        executor = AsyncBoundedExecutor()
        result = await executor.run(tool, 21, bound=GENEROUS, name="double")
        return executor, result

    executor, result = run(main())
    assert result.status is CallStatus.RETURNED and result.value == 42
    assert result.bound_sec == GENEROUS and result.bound.by == "tool_timeout"
    assert 0.0 <= result.duration_sec < GENEROUS
    assert result.notes.transport == "async"
    assert executor.ledger.snapshot()["abandoned"] == 0


def test_a_tool_exception_is_raised_not_abandoned():
    """The tool's own exception is a ``raised`` call carrying the exception."""

    async def tool():
        raise ValueError("broken tool")

    result = run(AsyncBoundedExecutor().run(tool, bound=GENEROUS))
    assert result.status is CallStatus.RAISED
    assert isinstance(result.exc, ValueError) and str(result.exc) == "broken tool"


def test_an_async_tool_is_cancelled_at_its_bound_and_stops_within_grace():
    """Past its bound the tool is abandoned and cancelled; it stops, so it is no zombie."""
    seen = {}

    async def tool():
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            seen["cancelled"] = True
            raise

    async def main():
        executor = AsyncBoundedExecutor(grace_sec=GENEROUS)
        result = await executor.run(tool, bound=0.05)
        await asyncio.sleep(0)  # let the cancelled task run its except clause
        await asyncio.sleep(0)
        return executor, result

    executor, result = run(main())
    assert result.status is CallStatus.ABANDONED
    assert result.duration_sec >= 0.05
    assert seen == {"cancelled": True}
    assert result.zombie_sec is not None and not result.zombie
    snap = executor.ledger.snapshot()
    assert (snap["abandoned"], snap["loose"], snap["cancelled"], snap["zombies"]) == (1, 0, 1, 0)


def test_a_tool_that_swallows_cancellation_becomes_a_zombie_with_its_time_to_stop():
    """Control returns at the bound anyway; past the grace period the
    call is a zombie until it stops."""
    release = asyncio.Event
    grace = 0.05

    async def main():
        gate = release()

        async def stubborn():
            while not gate.is_set():
                try:
                    await gate.wait()
                except asyncio.CancelledError:
                    continue  # swallows every cancellation
            return "late"

        executor = AsyncBoundedExecutor(grace_sec=grace)
        result = await executor.run(stubborn, bound=0.01)
        assert result.status is CallStatus.ABANDONED
        # The grace timer was armed at the abandonment, so it is due before this sleep ends.
        await asyncio.sleep(grace * 2)
        assert result.zombie and result.loose
        assert executor.ledger.snapshot()["zombies"] == 1
        gate.set()
        while result.zombie_sec is None:
            await asyncio.sleep(0.001)
        return executor, result

    executor, result = run(main())
    assert result.zombie_sec >= grace * 2
    assert result.value is None  # the late value sources nothing
    snap = executor.ledger.snapshot()
    assert (snap["loose"], snap["settled"], snap["cancelled"]) == (0, 1, 0)
    assert snap["zombie_sec"] == pytest.approx(result.zombie_sec)


def test_a_sync_tool_runs_on_a_thread_and_is_abandoned_there():
    """A sync tool is not cancellable: its thread stays loose until it returns, then settles."""
    release = threading.Event()
    entered = threading.Event()

    def blocking():
        entered.set()
        release.wait(GENEROUS)
        return "late"

    async def main():
        executor = AsyncBoundedExecutor(grace_sec=GENEROUS)
        result = await executor.run(blocking, bound=0.05)
        return executor, result

    executor, result = run(main())
    assert entered.is_set()
    assert result.status is CallStatus.ABANDONED and result.notes.transport == "thread"
    assert executor.loose == 1
    release.set()
    assert result.settled.wait(GENEROUS)
    assert executor.loose == 0 and result.zombie_sec is not None and result.value is None


def test_a_sync_tool_that_returns_inside_its_bound_is_returned():
    """The thread path delivers a prompt sync tool's value."""
    result = run(AsyncBoundedExecutor().run(lambda: "ok", bound=GENEROUS, name="sync"))
    assert result.status is CallStatus.RETURNED and result.value == "ok"


def test_the_tool_sees_a_deadline_ending_at_its_bound():
    """Inside the call, ``deadline_remaining()`` is at most the call's bound."""

    async def tool():
        return deadline_remaining()

    result = run(AsyncBoundedExecutor().run(tool, bound=GENEROUS))
    assert result.value is not None and 0 < result.value <= GENEROUS


def test_progress_resets_the_idle_timeout_until_the_tool_goes_quiet():
    """Each progress report resets the idle clock; the timeout fires
    one idle period after the last."""
    idle = 1.0
    steps = 5

    async def tool():
        notes = current_notes()
        for _ in range(steps):
            await asyncio.sleep(0.02)
            notes.progress()
        await asyncio.Event().wait()

    result = run(AsyncBoundedExecutor().run(tool, bound=GENEROUS, idle_sec=idle))
    assert result.status is CallStatus.ABANDONED
    assert result.bound.by == "idle" and result.bound.tool_timeout_sec == GENEROUS
    assert len(result.notes.progress_sec) == steps
    # Fired one idle period after the last progress, not one after dispatch.
    assert result.bound_sec >= result.notes.progress_sec[-1] + idle - 1e-6
    assert result.bound_sec > idle


def test_the_hard_bound_caps_an_idle_timeout_reset_by_steady_progress():
    """A tool that keeps reporting progress is still abandoned at its hard bound."""

    async def tool():
        notes = current_notes()
        while True:
            await asyncio.sleep(0.01)
            notes.progress()

    result = run(AsyncBoundedExecutor().run(tool, bound=0.3, idle_sec=GENEROUS / 2))
    assert result.status is CallStatus.ABANDONED
    assert result.bound.by == "tool_timeout" and result.bound_sec == 0.3


def test_a_call_is_refused_while_the_loose_cap_is_full():
    """With one loose call and a cap of one, the next call is refused before it starts."""
    started = []

    async def main():
        gate = asyncio.Event()

        async def stubborn():
            while not gate.is_set():
                try:
                    await gate.wait()
                except asyncio.CancelledError:
                    continue
            return None

        async def other():
            started.append(True)

        executor = AsyncBoundedExecutor(loose_cap=1)
        first = await executor.run(stubborn, bound=0.0)
        second = await executor.run(other, bound=GENEROUS, name="other")
        gate.set()
        return first, second, executor

    first, second, executor = run(main())
    assert first.status is CallStatus.ABANDONED
    assert second.status is CallStatus.REFUSED and "TOOL_REFUSED (other)" in second.text
    assert started == [] and executor.ledger.snapshot()["refused"] == 1


def test_cancelling_the_caller_cancels_the_tool():
    """A caller cancelled while it waits cancels the tool and re-raises."""
    seen = {}

    async def main():
        entered = asyncio.Event()

        async def tool():
            entered.set()
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                seen["tool"] = True
                raise

        caller = asyncio.ensure_future(AsyncBoundedExecutor().run(tool, bound=GENEROUS))
        await entered.wait()
        caller.cancel()
        with pytest.raises(asyncio.CancelledError):
            await caller
        await asyncio.sleep(0)

    run(main())
    assert seen == {"tool": True}


def test_bad_arguments_are_refused_with_their_name():
    """A negative cap, a NaN grace or a negative bound is one clear error naming it."""
    with pytest.raises(ValueError, match="loose_cap"):
        AsyncBoundedExecutor(loose_cap=-1)
    with pytest.raises(ValueError, match="grace_sec"):
        AsyncBoundedExecutor(grace_sec=float("nan"))

    async def tool():
        return None

    with pytest.raises(ValueError, match="bound"):
        run(AsyncBoundedExecutor().run(tool, bound=-1.0))


def test_async_callables_are_recognised():
    """Async functions, bound async methods and objects with an async ``__call__`` are async."""

    class Callable:
        async def __call__(self):
            return None

    async def fn():
        return None

    assert is_async_callable(fn) and is_async_callable(Callable())
    assert not is_async_callable(lambda: None) and not is_async_callable(None)
    assert Bound(1.0, "idle", 2.0).by == "idle"


def test_an_earlier_inherited_deadline_stays_in_force_inside_the_tool():
    """The tool's deadline only narrows: a caller's earlier deadline is what the tool sees."""
    from reviewlab.core._deadline import execution_deadline_scope, monotonic_now

    async def tool():
        return deadline_remaining()

    async def main():
        with execution_deadline_scope(monotonic_now() + 5.0):
            return await AsyncBoundedExecutor().run(tool, bound=GENEROUS)

    result = run(main())
    assert result.value is not None and 0 < result.value <= 5.0
