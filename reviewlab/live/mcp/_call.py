"""One ``tools/call`` on an open session: progress, the cancel the negotiated version asks for,
late answers recorded and never credited, and one re-issue after a dropped stream.

Lifecycle: sent under an id of ours (``reviewlab-N``) with a progress token (each report goes on
the call's notes) → answered inside the bound (its text; an ``isError`` result, a JSON-RPC error
or a malformed result raise :class:`MCPToolError`) | abandoned (the cancel goes out per the
negotiated version — ``notifications/cancelled``, or the stream closed at 2026-07-28 — and the
request is still watched: an error answer is the server stopping, a valid result a valid result
dropped) | dropped (an idempotent tool is re-issued once under a new id, any other call raises
:class:`MCPStreamDropped`). docs/mcp.md, "Cancel per negotiated version" and "Dropped streams
and re-issue".
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from reviewlab.live._call_notes import CallNotes
from reviewlab.live.mcp._errors import MCPServerError, MCPStreamDropped, MCPToolError

_CONNECTION_CLOSED = -32000
_MODERN = ("2026-07-28",)


@dataclass
class Link:
    """An open session as calls see it: its dispatcher and session, the negotiated version,
    whether it runs over HTTP, and the abandoned requests still watched."""

    dispatcher: Any
    session: Any
    label: str
    http: bool
    protocol_version: str | None
    cancel_watch_sec: float
    ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    watchers: set[asyncio.Task[Any]] = field(default_factory=set)

    @property
    def cancel_kind(self) -> str:
        """How a cancel goes out: closing the request's stream at 2026-07-28 over HTTP, else the
        ``notifications/cancelled`` notification."""
        return "stream_closed" if self.http and self.protocol_version in _MODERN else "notification"

    def stamp(self, method: str, params: dict[str, Any], opts: dict[str, Any]) -> dict[str, Any]:
        """``params`` with the negotiated version's envelope and headers in ``opts``.

        The SDK's public ``send_request`` mints its own request ids; a call needs its own (to
        cancel it, and to re-issue it under a new one), so it goes through the dispatcher and
        is stamped here the way ``send_request`` stamps it.
        """
        data: dict[str, Any] = {"method": method, "params": params}
        stamp = getattr(self.session, "_stamp", None)
        if stamp is not None:
            stamp(data, opts)
        return dict(data["params"])


class _Dropped(Exception):
    """The stream closed before an answer (the SDK's transport says so on the request)."""


async def call_tool(
    link: Link | None, name: str, args: dict[str, Any], notes: CallNotes, idempotent: bool
) -> str:
    """The text of ``name(args)`` on the server (see the module docstring for its lifecycle)."""
    return result_text(await call_tool_raw(link, name, args, notes, idempotent))


@dataclass(frozen=True)
class Relayed:
    """What a proxy passes on with one call besides its name and arguments.

    ``meta`` goes into the request's ``_meta`` (the host's keys); ``on_progress(progress,
    total, message)`` is awaited on each progress report, after the notes record it.
    ``linger``: once abandoned (cancelled), the call's task stays alive until the server
    answers or its watch ends, so an executor's ledger counts it loose as long as the server
    may still be working on it. ``extra`` holds the request's other params as the host sent
    them (a task-augmented call's ``task``: the server's ``CreateTaskResult`` is then the
    answer).
    """

    meta: Mapping[str, Any] | None = None
    on_progress: Any = None
    linger: bool = False
    extra: Mapping[str, Any] | None = None


_DIRECT = Relayed()
"""A call of our own: nothing relayed."""


async def call_tool_raw(
    link: Link | None,
    name: str,
    args: dict[str, Any],
    notes: CallNotes,
    idempotent: bool,
    relayed: Relayed = _DIRECT,
) -> dict[str, Any]:
    """The ``tools/call`` result of ``name(args)`` as the server sent it (a proxy passes it on
    whole: ``isError`` results included, with what it relays in ``relayed``); a JSON-RPC error
    raises :class:`MCPToolError`.
    """
    if link is None:
        raise MCPServerError("the MCP server is closed")
    notes.protocol_version = link.protocol_version
    while True:
        try:
            return await _attempt(link, name, args, notes, relayed)
        except _Dropped as dropped:
            if idempotent and not notes.reissued:
                notes.reissued = True  # once, under a new id: the first may never have run
                continue
            why = "re-issued once, dropped again" if notes.reissued else "not re-issued: it is "
            if not notes.reissued:
                why += "not marked idempotent and may have run"
            raise MCPStreamDropped(
                f"the server closed the stream of {name!r} without an answer ({dropped}); {why}"
            ) from None


async def _attempt(
    link: Link, name: str, args: dict[str, Any], notes: CallNotes, relayed: Relayed
) -> dict[str, Any]:
    request_id = f"reviewlab-{next(link.ids)}"
    notes.request_id = request_id
    forward = relayed.on_progress

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        notes.progress()
        if forward is not None:
            await forward(progress, total, message)

    opts: dict[str, Any] = {
        "request_id": request_id,
        "on_progress": on_progress,
        "cancel_on_abandon": False,  # the cancel is ours: sent once, the answer still watched
    }
    params: dict[str, Any] = {**(relayed.extra or {}), "name": name, "arguments": args}
    if relayed.meta:
        params["_meta"] = dict(relayed.meta)
    params = link.stamp("tools/call", params, opts)
    request = asyncio.get_running_loop().create_task(
        link.dispatcher.send_raw_request("tools/call", params, opts)
    )
    settled = notes.cancel_settled = threading.Event()
    try:
        raw = await asyncio.shield(request)
    except asyncio.CancelledError:
        if not request.done():
            await _cancel(link, request_id, request, notes)
            if relayed.linger and not request.done():
                with contextlib.suppress(BaseException):  # cancelled again: stop lingering
                    await asyncio.wait({request})
        raise
    except Exception as exc:
        if _dropped(exc):
            raise _Dropped(_error_text(exc)) from None
        if _closed(exc):
            raise MCPServerError(f"MCP server {link.label!r} closed: {_error_text(exc)}") from None
        raise MCPToolError(_error_text(exc), error=getattr(exc, "error", None)) from None
    finally:
        settled.set()
    if "task" in params and isinstance(raw, Mapping) and isinstance(raw.get("task"), Mapping):
        return dict(raw)  # a task was created: its result is fetched with tasks/result
    if not isinstance(raw, Mapping) or not isinstance(raw.get("content"), list):
        shape = type(raw.get("content")).__name__ if isinstance(raw, Mapping) else "no object"
        raise MCPToolError(
            f"malformed tools/call result: 'content' is {shape}, not a list of content blocks"
        )
    return dict(raw)


async def _cancel(
    link: Link, request_id: str, request: asyncio.Task[Any], notes: CallNotes
) -> None:
    """Cancel the way the negotiated version says, then watch for a late answer."""
    params = {"requestId": request_id, "reason": "reviewlab: the call outlived its bound"}
    notes.cancelled(link.cancel_kind)
    with contextlib.suppress(Exception):  # a closed pipe: nothing more can be learnt
        # At 2026-07-28 over HTTP the SDK's transport turns this into closing the stream.
        await link.dispatcher.notify("notifications/cancelled", params)

    def finished(task: asyncio.Task[Any]) -> None:
        link.watchers.discard(task)
        if task.cancelled():
            return  # the watch ended in silence
        exc = task.exception()
        if exc is None:
            try:
                text = result_text(task.result())
            except MCPToolError:
                notes.stopped()  # an error result: the server gave up the work
                return
            notes.stopped()
            notes.late(len(text))  # a valid answer, dropped: credited to nothing
            return
        if _closed(exc) or _dropped(exc):
            return  # the session or the stream closed: that is not the server stopping
        notes.stopped()

    link.watchers.add(request)
    request.add_done_callback(finished)
    if notes.cancel_kind == "stream_closed":
        request.cancel()  # the stream is gone: no answer can come on it, nothing to watch
        return
    asyncio.get_running_loop().call_later(link.cancel_watch_sec, request.cancel)


def result_text(raw: Any) -> str:
    """The text of a ``tools/call`` result; an ``isError`` result raises :class:`MCPToolError`,
    and so does anything that is not a ``tools/call`` result (``content`` must be a list)."""
    if not isinstance(raw, Mapping) or not isinstance(raw.get("content"), list):
        shape = type(raw.get("content")).__name__ if isinstance(raw, Mapping) else "no object"
        raise MCPToolError(
            f"malformed tools/call result: 'content' is {shape}, not a list of content blocks"
        )
    parts = []
    for block in raw["content"]:
        if isinstance(block, Mapping):
            if block.get("type") == "text":
                parts.append(str(block.get("text", "")))
            else:
                parts.append(f"[{block.get('type', 'content')} block]")
    text = "\n".join(parts)
    if raw.get("isError"):
        raise MCPToolError(text)
    return text


def _code(exc: BaseException) -> Any:
    return getattr(getattr(exc, "error", None), "code", None)


def _dropped(exc: BaseException) -> bool:
    """The SDK's Streamable HTTP transport resolves a request whose stream ended unanswered
    with CONNECTION_CLOSED and a message that starts with ``SSE stream``."""
    return _code(exc) == _CONNECTION_CLOSED and _error_text(exc).startswith("SSE stream")


def _closed(exc: BaseException) -> bool:
    return _code(exc) == _CONNECTION_CLOSED and not _dropped(exc)


def _error_text(exc: BaseException) -> str:
    error = getattr(exc, "error", None)
    message = getattr(error, "message", None)
    return str(message) if message else f"{type(exc).__name__}: {exc}"
