"""Reused worker threads for both executors: a call wakes one idle worker, a wedged one is retired.

Lifecycle of a worker: started on demand -> idle (in the pool) <-> running one job -> gone.
After its tool has run, the job decides (:meth:`ToolJob.work`): it claimed its call inside the
bound, rejoins the pool (:meth:`ToolWorkers.rejoin`, *before* it wakes its caller, so the
caller's next call finds the worker idle) and the worker waits for the next job; or its
caller abandoned it, and the worker exits once the job has settled its call.

Invariants: a worker whose call was abandoned never runs another job; dispatching a job to an
idle worker is one put into its inbox, the only cross-thread wake-up on the way in; after
:meth:`ToolWorkers.shutdown` no worker waits for work (idle ones are told to stop, running
ones exit when their job ends). Workers are daemon threads, never joined or killed.
"""

from __future__ import annotations

import contextlib
import threading
from collections import deque
from queue import SimpleQueue
from typing import Protocol

# Idle workers kept beyond this number exit instead of waiting for more work.
MAX_IDLE = 64


class ToolJob(Protocol):
    """One call handed to a worker thread."""

    def work(self, pool: ToolWorkers, worker: ToolWorker) -> bool:
        """Run the call on this worker; True when the worker rejoined ``pool`` (it was kept)."""
        ...


class ToolWorker:
    """One worker thread and the inbox it waits on for its next job (``None``: stop)."""

    __slots__ = ("inbox", "thread")

    def __init__(self, pool: ToolWorkers, number: int) -> None:
        self.inbox: SimpleQueue[ToolJob | None] = SimpleQueue()
        self.thread = threading.Thread(
            target=pool._work, args=(self,), name=f"{pool.prefix}-{number}", daemon=True
        )


class ToolWorkers:
    """Idle worker threads, reused last-in first-out; a new one is started when none is idle.

    ``prefix`` names the threads (``prefix-1``, ``prefix-2``, ...).
    """

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.closed = False
        self.started = 0
        """Worker threads started so far (reuse keeps this low)."""
        self._idle: deque[ToolWorker] = deque()
        self._spawn_lock = threading.Lock()

    def dispatch(self, job: ToolJob) -> None:
        """Hand ``job`` to an idle worker, or to a new one when none is idle."""
        try:
            worker = self._idle.pop()
        except IndexError:
            with self._spawn_lock:
                self.started += 1
                worker = ToolWorker(self, self.started)
            worker.inbox.put(job)
            worker.thread.start()
            return
        worker.inbox.put(job)

    def rejoin(self, worker: ToolWorker) -> bool:
        """Put a worker whose job claimed its call back in the pool; False when it should exit
        instead (the pool is shut down or holds enough idle workers)."""
        if self.closed or len(self._idle) >= MAX_IDLE:
            return False
        self._idle.append(worker)
        if self.closed:
            # shutdown() may have drained the pool just before we rejoined it; else it popped
            # us and queued our stop, which we read next.
            with contextlib.suppress(ValueError):
                self._idle.remove(worker)
                return False
        return True

    def shutdown(self) -> None:
        """Tell idle workers to exit; running and loose ones exit when their job ends."""
        self.closed = True
        while True:
            try:
                worker = self._idle.pop()
            except IndexError:
                return
            worker.inbox.put(None)

    def _work(self, worker: ToolWorker) -> None:
        get = worker.inbox.get
        # The job lives only in _run's frame: an idle worker holds nothing of its last call
        # (its value, its executor), so a dropped asyncio executor can be collected.
        while self._run(get(), worker):
            pass

    def _run(self, job: ToolJob | None, worker: ToolWorker) -> bool:
        return job is not None and job.work(self, worker)
