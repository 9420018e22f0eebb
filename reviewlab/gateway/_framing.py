"""A POST's answer sent as one JSON body when nothing else comes before it.

Streamable HTTP lets a server answer a request POST with an ``application/json`` body (the
answer alone) or a ``text/event-stream`` (the answer, after whatever relates to the request:
progress, log messages, an upstream's sampling or elicitation requests); a client accepts both.
The SDK's server chooses once, for the whole server, and a JSON-only server drops what relates
to a request, which a gateway must pass through.

:class:`JsonWhenAlone` decides per POST, after the fact: it holds the SDK's event stream's
headers until the first event. When that event is the answer, the host gets it as one JSON
body, which costs both ends less; when it is anything else (a notification, a request, a
keep-alive comment), the held headers and every byte after them go out unchanged. Nothing is
reordered or dropped: only the framing of a lone answer changes (docs/gateway.md, "Answers
over HTTP: JSON when alone").
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Message = MutableMapping[str, Any]
Send = Callable[[Message], Awaitable[None]]

_EVENT_STREAM = b"text/event-stream"
_DROPPED_HEADERS = {b"content-type", b"content-length", b"transfer-encoding", b"x-accel-buffering"}


class JsonWhenAlone:
    """ASGI middleware: a POST's event stream whose first event is the answer goes out as JSON."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Send) -> None:
        if scope.get("type") != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        await self.app(scope, receive, _Framing(send).send)


class _Framing:
    """One POST's response: held until its first event decides how it is framed."""

    def __init__(self, send: Send) -> None:
        self._send = send
        self._start: Message | None = None
        self._held = b""
        self._state = "undecided"  # then "stream" (pass through) or "answered" (JSON sent)

    async def send(self, message: Message) -> None:
        if self._state == "stream":
            await self._send(message)
        elif self._state == "answered":
            return  # the rest of a stream whose answer already went out as JSON: its end
        elif message["type"] == "http.response.start":
            if is_event_stream(message):
                self._start = message
            else:
                self._state = "stream"
                await self._send(message)
        elif self._start is None:
            self._state = "stream"
            await self._send(message)
        else:
            await self._body(message)

    async def _body(self, message: Message) -> None:
        self._held += message.get("body", b"")
        first = first_event(self._held)
        if first is not None:
            answer = lone_answer(first)
            if answer is not None:
                await self._answer(answer)
                return
            await self._flush(more_body=message.get("more_body", False))
        elif not message.get("more_body", False):
            await self._flush(more_body=False)

    async def _answer(self, body: bytes) -> None:
        assert self._start is not None
        headers = [
            (name, value)
            for name, value in self._start.get("headers", [])
            if name.lower() not in _DROPPED_HEADERS
        ]
        headers += [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
        self._state = "answered"
        await self._send({**self._start, "headers": headers})
        await self._send({"type": "http.response.body", "body": body, "more_body": False})

    async def _flush(self, *, more_body: bool) -> None:
        assert self._start is not None
        self._state = "stream"
        await self._send(self._start)
        await self._send({"type": "http.response.body", "body": self._held, "more_body": more_body})
        self._held = b""


def is_event_stream(start: Message) -> bool:
    """Whether a response's headers say it is an event stream."""
    for name, value in start.get("headers", []):
        if name.lower() == b"content-type":
            return bool(value.lower().startswith(_EVENT_STREAM))
    return False


def first_event(buffer: bytes) -> bytes | None:
    """The first complete event of an event stream's bytes (ended by a blank line), if any."""
    normalised = buffer.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    end = normalised.find(b"\n\n")
    return None if end < 0 else normalised[:end]


def complete_events(buffer: bytes) -> list[bytes]:
    """Every complete event of an event stream's bytes, in order (an unfinished one left out)."""
    normalised = buffer.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    return normalised.split(b"\n\n")[:-1]


def is_priming(event: bytes) -> bool:
    """Whether an event carries no data: a priming event (an id for resuming, perhaps a retry
    time) or a bare comment."""
    for line in event.split(b"\n"):
        field, _, value = line.partition(b":")
        if field == b"data" and value.strip():
            return False
    return True


def lone_answer(event: bytes, *, ids_unused: bool = False) -> bytes | None:
    """The JSON-RPC answer an event carries, or ``None`` when the event is anything else (a
    comment, a notification, a request, an event with an id or another type).

    ``ids_unused``: the reader resumes no stream, so an answer's event id, which only a resumed
    stream would need, does not make it anything else (the gateway's own upstream client).
    """
    data: list[bytes] = []
    for line in event.split(b"\n"):
        field, _, value = line.partition(b":")
        value = value[1:] if value.startswith(b" ") else value
        if field == b"data":
            data.append(value)
        elif (field == b"event" and value == b"message") or (field == b"id" and ids_unused):
            continue
        else:
            return None  # a comment (keep-alive), an event id, a retry or another event type
    if not data:
        return None
    body = b"\n".join(data)
    try:
        message = json.loads(body)
    except ValueError:
        return None
    if not isinstance(message, dict) or "method" in message or "id" not in message:
        return None
    return body if ("result" in message or "error" in message) else None
