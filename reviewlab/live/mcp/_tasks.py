"""A task-augmented ``tools/call`` (2025-11-25 Tasks), bounded like any other call.

Lifecycle: created (``task: {ttl}``; a plain result means the server ran it without a task) →
polled with ``tasks/get`` at the server's ``pollInterval`` → ``completed`` (the result from
``tasks/result``) | ``failed``/``cancelled``/TTL passed/unknown task id (one error) | abandoned
at the bound, then per the policy's ``tasks`` part ``cancel`` (``tasks/cancel``, its answer
recorded) or ``detach`` (the model told the task runs on) — and in both cases still polled, so
its end, a ``running_after_cancel`` and a result delivered late are recorded. Every status seen
goes on the call's notes. docs/mcp.md, "Tasks".
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from typing import Any

from reviewlab.live._call_notes import CallNotes
from reviewlab.live.mcp._call import Link, result_text
from reviewlab.live.mcp._errors import MCPToolError

IMMEDIATE_RESPONSE_KEY = "io.modelcontextprotocol/model-immediate-response"
"""Where a ``CreateTaskResult``'s ``_meta`` carries the text a host may give the model."""
_TERMINAL = ("completed", "failed", "cancelled")
_ACK_TIMEOUT_SEC = 10.0


async def call_task(
    link: Link, name: str, args: dict[str, Any], notes: CallNotes, action: str, ttl_sec: float
) -> str:
    """The text of ``name(args)`` run as a task (see the module docstring)."""
    notes.task_action = action
    params = {"name": name, "arguments": args, "task": {"ttl": int(ttl_sec * 1000)}}
    created = await _request(link, "tools/call", params)
    task = created.get("task")
    if not isinstance(task, dict):
        return result_text(created)  # the server ran it without a task
    task_id = str(task.get("taskId", ""))
    notes.task_id = task_id
    meta = created.get("_meta") or {}
    immediate = meta.get(IMMEDIATE_RESPONSE_KEY) if isinstance(meta, dict) else None
    notes.task_immediate_response = immediate if isinstance(immediate, str) else None
    started = time.monotonic()
    settled = notes.cancel_settled = threading.Event()
    try:
        return await _poll(link, task, notes, started)
    except asyncio.CancelledError:
        if action == "cancel":
            await _cancel(link, task_id, notes)
        else:
            notes.detached()
        watcher = asyncio.get_running_loop().create_task(
            _watch(link, task, notes, started, link.cancel_watch_sec)
        )
        link.watchers.add(watcher)
        watcher.add_done_callback(link.watchers.discard)
        raise
    finally:
        settled.set()


async def _poll(link: Link, task: dict[str, Any], notes: CallNotes, started: float) -> str:
    """Poll until the task ends; its result text, or an error for any other end."""
    task_id = str(task.get("taskId", ""))
    notes.task_state(str(task.get("status", "")))
    while True:
        status = str(task.get("status", ""))
        if status == "completed":
            return result_text(await _request(link, "tasks/result", {"taskId": task_id}))
        if status in ("failed", "cancelled"):
            why = task.get("statusMessage") or status
            raise MCPToolError(f"task {task_id} of the server {status}: {why}")
        ttl_sec = _seconds(task.get("ttl"))
        if ttl_sec is not None and time.monotonic() - started >= ttl_sec:
            raise MCPToolError(f"task {task_id}: its TTL ({ttl_sec:g}s) passed while it ran")
        await asyncio.sleep(_seconds(task.get("pollInterval")) or 1.0)
        task = await _get(link, task_id)
        notes.task_state(str(task.get("status", "")))


async def _cancel(link: Link, task_id: str, notes: CallNotes) -> None:
    """Send ``tasks/cancel`` and record its answer (a status, or the error it got)."""
    notes.cancelled("tasks/cancel")
    try:
        async with asyncio.timeout(_ACK_TIMEOUT_SEC):
            answer = await _request(link, "tasks/cancel", {"taskId": task_id})
        notes.task_cancel_ack = str(answer.get("status", "acknowledged"))
        notes.task_state(notes.task_cancel_ack)
    except Exception as exc:  # acknowledged or not: the episode has moved on either way
        notes.task_cancel_ack = f"refused: {exc}"


async def _watch(
    link: Link, task: dict[str, Any], notes: CallNotes, started: float, watch_sec: float
) -> None:
    """After the abandonment: poll until the task ends, its TTL passes or the watch ends;
    record the states, and a result delivered anyway as a valid result dropped."""
    task_id = str(task.get("taskId", ""))
    end = time.monotonic() + watch_sec
    interval = _seconds(task.get("pollInterval")) or 1.0
    with contextlib.suppress(Exception):  # a closed session or a forgotten task ends the watch
        while time.monotonic() < end:
            ttl_sec = _seconds(task.get("ttl"))
            if ttl_sec is not None and time.monotonic() - started >= ttl_sec:
                return
            await asyncio.sleep(interval)
            task = await _get(link, task_id)
            status = str(task.get("status", ""))
            after_cancel = notes.task_cancel_ack is not None and status == "working"
            notes.task_state("running_after_cancel" if after_cancel else status)
            if status in _TERMINAL:
                if status == "completed":
                    raw = await _request(link, "tasks/result", {"taskId": task_id})
                    notes.late(len(result_text(raw)))
                notes.stopped()
                return


async def _get(link: Link, task_id: str) -> dict[str, Any]:
    try:
        return await _request(link, "tasks/get", {"taskId": task_id})
    except MCPToolError as exc:
        raise MCPToolError(f"the server does not know task {task_id!r} any more: {exc}") from None


async def _request(link: Link, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """One request on the session, stamped for the negotiated version; errors are
    :class:`MCPToolError` with the server's message."""
    opts: dict[str, Any] = {"request_id": f"reviewlab-{next(link.ids)}"}
    stamped = link.stamp(method, params, opts)
    try:
        raw = await link.dispatcher.send_raw_request(method, stamped, opts)
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        message = getattr(getattr(exc, "error", None), "message", None) or repr(exc)
        raise MCPToolError(str(message)) from None
    if not isinstance(raw, dict):
        raise MCPToolError(f"malformed {method} result: {raw!r}")
    return raw


def _seconds(milliseconds: Any) -> float | None:
    if isinstance(milliseconds, int | float) and not isinstance(milliseconds, bool):
        return max(0.0, float(milliseconds) / 1000.0)
    return None
