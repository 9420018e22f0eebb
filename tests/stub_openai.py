"""A scripted OpenAI-compatible chat-completions server on loopback, for tests.

``StubOpenAI(script)`` serves ``POST /v1/chat/completions`` (and
``/chat/completions``) from a list of scripted replies, in order, on a
``ThreadingHTTPServer`` bound to ``127.0.0.1`` on a free port. Each reply is

* a dict ``{"content": ..., "tool_calls": [...]}`` (the episode's message
  shape; ``tool_calls`` entries as built by ``tool_call``), sent back as a
  ``chat.completion`` whose ``finish_reason`` is ``tool_calls`` or ``stop``;
* a :class:`StubError` ``(status, message)``, sent as an OpenAI error body;
* a :class:`Hold` ``(event)``: the reply is held until the event is set (then a
  500), to test client timeouts without sleeping.

Every request body is kept, parsed, in ``.requests``. Once the script is spent
the server answers HTTP 500 ``script exhausted``. Use it as a context manager:
``with StubOpenAI([...]) as stub: stub.base_url``.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class StubError:
    """A scripted HTTP error reply."""

    status: int
    message: str


@dataclass(frozen=True)
class Hold:
    """A reply held until ``release`` is set, then answered with HTTP 500."""

    release: threading.Event


def completion(reply: dict[str, Any], model: str, number: int) -> dict[str, Any]:
    """A ``chat.completion`` body carrying ``reply`` as its only choice."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.get("content")}
    if reply.get("tool_calls"):
        message["tool_calls"] = reply["tool_calls"]
    return {
        "id": f"chatcmpl-stub-{number}",
        "object": "chat.completion",
        "created": 1_700_000_000 + number,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": "tool_calls" if reply.get("tool_calls") else "stop",
            }
        ],
        "usage": {
            "prompt_tokens": 10 * number,
            "completion_tokens": 5,
            "total_tokens": 10 * number + 5,
        },
    }


class StubOpenAI:
    """The stub server (see the module docstring)."""

    def __init__(self, script: list[Any]) -> None:
        self.script = list(script)
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.headers: list[dict[str, str]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        # A short poll interval keeps shutdown (and so each test's teardown) quick.
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.02},
            name="stub-openai",
            daemon=True,
        )

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def __enter__(self) -> StubOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        for item in self.script:
            if isinstance(item, Hold):
                item.release.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    def _next(self, body: dict[str, Any], path: str, headers: dict[str, str]) -> tuple[int, Any]:
        with self._lock:
            self.requests.append(body)
            self.paths.append(path)
            self.headers.append(headers)
            number = len(self.requests)
            reply = self.script.pop(0) if self.script else StubError(500, "script exhausted")
        return number, reply

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
                return

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if self.path not in ("/v1/chat/completions", "/chat/completions"):
                    self._send(
                        404, {"error": {"message": f"no route {self.path}", "type": "not_found"}}
                    )
                    return
                try:
                    body = json.loads(raw)
                except json.JSONDecodeError:
                    self._send(
                        400, {"error": {"message": "body is not JSON", "type": "invalid_request"}}
                    )
                    return
                number, reply = stub._next(body, self.path, dict(self.headers.items()))
                if isinstance(reply, Hold):
                    reply.release.wait(30)
                    reply = StubError(500, "held reply released")
                if isinstance(reply, StubError):
                    self._send(
                        reply.status,
                        {
                            "error": {
                                "message": reply.message,
                                "type": "stub_error",
                                "code": reply.status,
                            }
                        },
                    )
                    return
                self._send(200, completion(reply, str(body.get("model", "")), number))

        return Handler
