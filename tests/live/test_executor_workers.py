"""The worker pool both executors share: idle workers are reused, a worker whose call was
abandoned never runs another call, and no worker waits for work after shutdown.

Races are decided by events, never by how long a sleep happened to take.
"""

from __future__ import annotations

import asyncio
import gc
import threading
import weakref

from reviewlab.core._deadline import clock_scope, deadline_remaining
from reviewlab.live._aio import AsyncBoundedExecutor
from reviewlab.live._call_results import CallStatus
from reviewlab.live._executor import BoundedExecutor
from reviewlab.live._executor_workers import MAX_IDLE, ToolWorker, ToolWorkers

WAIT = 10.0  # generous upper limit for events that must happen; never decides a race


class _Once:
    """A job that records the thread it ran on and keeps its worker only if told to."""

    def __init__(self, keep: bool) -> None:
        self.keep = keep
        self.ran = threading.Event()
        self.thread: threading.Thread | None = None
        self.kept: bool | None = None

    def work(self, pool: ToolWorkers, worker: ToolWorker) -> bool:
        self.thread = threading.current_thread()
        self.kept = pool.rejoin(worker) if self.keep else False
        self.ran.set()
        return self.kept


def test_a_kept_worker_runs_the_next_job_and_a_dropped_one_exits():
    """A job that rejoins the pool leaves its thread for the next job; one that does not ends it."""
    pool = ToolWorkers("test-pool")
    first, second, third = _Once(keep=True), _Once(keep=False), _Once(keep=True)
    for job in (first, second, third):
        pool.dispatch(job)
        assert job.ran.wait(WAIT)
        if job is second:
            assert job.thread is not None
            job.thread.join(WAIT)
            assert not job.thread.is_alive()
    assert first.thread is second.thread
    assert third.thread is not second.thread
    assert pool.started == 2 and third.thread is not None and third.thread.name == "test-pool-2"
    pool.shutdown()
    third.thread.join(WAIT)
    assert not third.thread.is_alive()


def test_a_closed_pool_takes_no_worker_back_and_keeps_at_most_max_idle():
    """After shutdown a worker cannot rejoin, and a full pool of idle workers turns one away."""
    pool = ToolWorkers("test-pool")
    idle = [ToolWorker(pool, n) for n in range(MAX_IDLE)]
    assert all(pool.rejoin(worker) for worker in idle)
    assert not pool.rejoin(ToolWorker(pool, MAX_IDLE + 1))
    pool.shutdown()
    assert all(worker.inbox.get_nowait() is None for worker in idle)
    assert not pool.rejoin(ToolWorker(pool, MAX_IDLE + 2))


def test_sync_tools_on_the_asyncio_executor_reuse_one_worker():
    """Sequential sync calls that return inside their bound run on one reused worker thread."""

    async def main():
        executor = AsyncBoundedExecutor(loose_cap=None)
        results = [await executor.run(threading.get_ident, bound=WAIT) for _ in range(20)]
        return executor, results

    executor, results = asyncio.run(main())
    assert all(result.status is CallStatus.RETURNED for result in results)
    assert len({result.value for result in results}) == 1
    assert executor.threads_started == 1


def test_an_abandoned_sync_tools_worker_is_never_reused_and_its_late_value_is_dropped():
    """A sync tool that wedges on a reused worker is abandoned; its thread runs no other call,
    before or after it returns, and what it returns late is credited to nothing."""
    entered = threading.Event()
    release = threading.Event()

    def wedge() -> int:
        entered.set()
        release.wait(WAIT)
        return threading.get_ident()

    async def main():
        executor = AsyncBoundedExecutor(loose_cap=None, grace_sec=WAIT)
        fast = (await executor.run(threading.get_ident, bound=WAIT)).value
        result = await executor.run(wedge, bound=0.05, name="wedge")
        loose = [(await executor.run(threading.get_ident, bound=WAIT)).value for _ in range(3)]
        release.set()
        assert result.settled is not None
        settled = await asyncio.to_thread(result.settled.wait, WAIT)
        after = [(await executor.run(threading.get_ident, bound=WAIT)).value for _ in range(3)]
        return executor, fast, result, loose, settled, after

    executor, fast, result, loose, settled, after = asyncio.run(main())
    assert entered.is_set() and settled
    assert result.status is CallStatus.ABANDONED
    assert result.value is None and result.exc is None
    assert fast not in loose and fast not in after
    assert executor.threads_started == 2
    assert executor.ledger.snapshot()["loose"] == 0


def test_a_reused_async_executor_worker_sees_only_its_current_calls_deadline():
    """A sync tool's deadline is its own call's bound, also on a worker that ran a shorter one."""

    def probe():
        return deadline_remaining(), threading.get_ident()

    async def main():
        executor = AsyncBoundedExecutor(loose_cap=None)
        with clock_scope(lambda: 100.0):
            first = await executor.run(probe, bound=1.0)
            second = await executor.run(probe, bound=5.0)
        return first.value, second.value

    first, second = asyncio.run(main())
    assert first[1] == second[1]
    assert first[0] == 1.0 and second[0] == 5.0


def test_idle_workers_exit_once_their_asyncio_executor_is_dropped():
    """An asyncio executor nobody holds any more lets its idle workers exit (no thread leak)."""
    threads: list[threading.Thread] = []

    def remember() -> None:
        threads.append(threading.current_thread())

    async def main():
        executor = AsyncBoundedExecutor(loose_cap=None)
        await executor.run(remember, bound=WAIT)

    asyncio.run(main())
    gc.collect()
    assert len(threads) == 1
    threads[0].join(WAIT)
    assert not threads[0].is_alive()


def test_an_idle_worker_keeps_nothing_of_its_last_call():
    """Once the caller drops a result, nothing of its value is left alive on the idle worker."""

    class Value:
        pass

    with BoundedExecutor(loose_cap=None) as executor:
        result = executor.run(Value, bound=WAIT)
        assert result.returned
        ref = weakref.ref(result.value)
        del result
        gc.collect()
        assert ref() is None
        assert executor.run(int, bound=WAIT).returned  # the worker is still there, idle
        assert executor.threads_started == 1
