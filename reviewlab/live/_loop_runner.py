"""Run a coroutine to its end from synchronous code, on a given loop or a loop of its own."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import Future
from typing import Any


def run_coroutine(
    make: Callable[[], Coroutine[Any, Any, Any]], *, loop: asyncio.AbstractEventLoop | None = None
) -> Any:
    """Run ``make()`` to its end from synchronous code, in a copy of the caller's context.

    With ``loop`` (running on another thread, e.g. an MCP session's) the coroutine runs
    there. Without, it runs on a new event loop on a daemon thread, which, like a loose
    worker, lives on until the tasks the coroutine left behind (abandoned tools that ignore
    their cancellation) have stopped; it is never joined. Works under a running loop too
    (a notebook), since the caller's thread only waits.
    """
    context = contextvars.copy_context()
    done: Future[Any] = Future()

    def start(target: asyncio.AbstractEventLoop) -> None:
        task = target.create_task(make(), context=context)

        def finished(task: asyncio.Task[Any]) -> None:
            if task.cancelled():
                done.set_exception(asyncio.CancelledError())
            elif task.exception() is not None:
                done.set_exception(task.exception())  # type: ignore[arg-type]
            else:
                done.set_result(task.result())

        task.add_done_callback(finished)

    if loop is not None:
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            raise RuntimeError("run_coroutine: called on the loop it would wait for; await instead")
        loop.call_soon_threadsafe(start, loop)
        return done.result()

    def host() -> None:
        own = asyncio.new_event_loop()
        try:
            start(own)
            while pending := [t for t in asyncio.all_tasks(own) if not t.done()]:
                own.run_until_complete(asyncio.wait(pending))
        finally:
            own.close()

    threading.Thread(target=host, name="reviewlab-episode-loop", daemon=True).start()
    return done.result()
