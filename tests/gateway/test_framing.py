"""A POST's lone answer goes out as JSON; anything before it keeps the event stream, unchanged."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from gateway_kit import GatewayProcess

from reviewlab.gateway._framing import JsonWhenAlone

ANSWER = {"jsonrpc": "2.0", "id": 7, "result": {"content": [{"type": "text", "text": "hi"}]}}
NOTICE = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 1}}
SSE_START = {
    "type": "http.response.start",
    "status": 200,
    "headers": [
        (b"content-type", b"text/event-stream; charset=utf-8"),
        (b"mcp-session-id", b"abc"),
        (b"cache-control", b"no-cache"),
    ],
}


def event(message: dict[str, Any], *, extra: bytes = b"") -> bytes:
    """One event of an event stream, as the SDK writes it (CRLF line ends)."""
    return extra + b"event: message\r\ndata: " + json.dumps(message).encode() + b"\r\n\r\n"


def body(data: bytes, more: bool = True) -> dict[str, Any]:
    return {"type": "http.response.body", "body": data, "more_body": more}


def run(messages: list[dict[str, Any]], method: str = "POST") -> list[dict[str, Any]]:
    """What a client receives when an app sends ``messages`` through the middleware."""
    sent: list[dict[str, Any]] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        for message in messages:
            await send(message)

    async def collect(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(JsonWhenAlone(app)({"type": "http", "method": method}, None, collect))
    return sent


def header(start: dict[str, Any], name: bytes) -> bytes | None:
    values = [v for k, v in start["headers"] if k.lower() == name]
    assert len(values) <= 1, f"{name!r} sent {len(values)} times"
    return values[0] if values else None


def test_a_lone_answer_goes_out_as_one_json_body_with_the_session_header():
    """An event stream whose first event is the answer: application/json, its exact length, the
    session id kept, the stream's end swallowed."""
    sent = run([SSE_START, body(event(ANSWER)), body(b"", more=False)])
    assert [m["type"] for m in sent] == ["http.response.start", "http.response.body"]
    start, only = sent
    assert header(start, b"content-type") == b"application/json"
    assert header(start, b"mcp-session-id") == b"abc"
    assert json.loads(only["body"]) == ANSWER
    assert header(start, b"content-length") == str(len(only["body"])).encode()
    assert only["more_body"] is False


def test_an_answer_split_across_chunks_is_still_sent_whole():
    """The answer's event arriving in two writes is joined before it is judged."""
    whole = event(ANSWER)
    sent = run([SSE_START, body(whole[:20]), body(whole[20:]), body(b"", more=False)])
    assert header(sent[0], b"content-type") == b"application/json"
    assert json.loads(sent[1]["body"]) == ANSWER


@pytest.mark.parametrize(
    "first",
    [
        pytest.param(event(NOTICE), id="a notification"),
        pytest.param(
            event({"jsonrpc": "2.0", "id": 1, "method": "sampling/createMessage"}),
            id="a request to the host",
        ),
        pytest.param(b": ping\r\n\r\n", id="a keep-alive comment"),
        pytest.param(event(ANSWER, extra=b"id: 5\r\n"), id="an answer with an event id"),
    ],
)
def test_anything_else_first_keeps_the_stream_byte_for_byte(first):
    """A first event that is not a bare answer: the held headers and every byte go out as the
    app wrote them, in order."""
    chunks = [first, event(ANSWER)]
    sent = run([SSE_START, *(body(c) for c in chunks), body(b"", more=False)])
    assert sent[0] == SSE_START
    assert b"".join(m.get("body", b"") for m in sent[1:]) == b"".join(chunks)
    assert sent[-1]["more_body"] is False


def test_a_stream_that_ends_before_an_event_is_complete_is_flushed_as_written():
    """An unfinished event at the stream's end is passed on, not dropped."""
    sent = run([SSE_START, body(b"event: message\r\ndata: {", more=False)])
    assert sent[0] == SSE_START
    assert sent[1]["body"] == b"event: message\r\ndata: {"


def test_json_answers_and_other_methods_pass_untouched():
    """A JSON answer (202s, errors) and a GET's stream are not the middleware's business."""
    json_start = {**SSE_START, "headers": [(b"content-type", b"application/json")]}
    plain = [json_start, body(b"{}", more=False)]
    assert run(plain) == plain
    stream = [SSE_START, body(event(ANSWER)), body(b"", more=False)]
    assert run(stream, method="GET") == stream


def test_through_the_gateway_a_plain_call_is_json_and_a_progress_call_streams(tmp_path: Path):
    """Over HTTP, ``list_files`` comes back as JSON; ``progress`` with a token comes back as an
    event stream with its two progress reports before the answer."""
    import httpx

    with GatewayProcess(tmp_path, "--policy", "uniform:30") as gateway:
        accept = {"accept": "application/json, text/event-stream"}
        with httpx.Client(timeout=30) as client:
            hello = {"protocolVersion": "2025-06-18", "capabilities": {}}
            hello["clientInfo"] = {"name": "test", "version": "1"}
            first = client.post(
                gateway.url,
                headers=accept,
                json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
            )
            session = {
                **accept,
                "mcp-session-id": first.headers["mcp-session-id"],
                "mcp-protocol-version": "2025-06-18",
            }
            client.post(
                gateway.url,
                headers=session,
                json={"jsonrpc": "2.0", "method": "notifications/initialized"},
            )
            plain = client.post(
                gateway.url,
                headers=session,
                json={
                    "jsonrpc": "2.0",
                    "id": 2,
                    "method": "tools/call",
                    "params": {"name": "list_files", "arguments": {}},
                },
            )
            progress = client.post(
                gateway.url,
                headers=session,
                json={
                    "jsonrpc": "2.0",
                    "id": 3,
                    "method": "tools/call",
                    "params": {
                        "name": "progress",
                        "arguments": {"steps": 2, "interval_sec": 0.01, "then": "return"},
                        "_meta": {"progressToken": "t"},
                    },
                },
            )
    assert plain.headers["content-type"] == "application/json"
    assert plain.json()["id"] == 2 and "result" in plain.json()
    assert progress.headers["content-type"].startswith("text/event-stream")
    data = [
        json.loads(line[len("data:") :])
        for line in progress.text.splitlines()
        if line.startswith("data:")
    ]
    methods = [m.get("method") for m in data]
    assert methods == ["notifications/progress", "notifications/progress", None]
    assert data[-1]["id"] == 3
