"""A small MCP server whose tools misbehave on purpose, over stdio or Streamable HTTP.

Run it as ``python _mcp_demo_server.py [ROOT]`` for stdio, or ``python _mcp_demo_server.py ROOT
--http PORT [--modern]`` for Streamable HTTP on ``127.0.0.1:PORT/mcp`` (the first stdout line
says ``listening on URL``). It needs only the standard library, so notebooks and tests use it
without npm. Over HTTP it speaks the 2025-11-25 handshake, and with ``--modern`` the stateless
2026-07-28 revision.

Tools: ``read_file``, ``list_files``, and the misbehaving ones — ``wedge``, ``ignore_cancel``,
``honour_cancel``, ``progress``, ``drop_stream``, ``drop_once``, ``malformed``,
``forgetful_task``, ``seen_cancels``. Each request runs on its own thread. What each tool does:
docs/architecture.md, "The MCP demo server".
"""

from __future__ import annotations

import json
import os
import select
import socket
import sys
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

# A script (``python _mcp_demo_server.py``), not an API: it exports nothing, so its ``main``
# and ``TOOLS`` do not shadow ``reviewlab.cli.main`` and ``recording.synth.TOOLS``.

_STR = {"type": "string"}
_NUM = {"type": "number"}
_NONE: dict[str, Any] = {"type": "object", "properties": {}}
TOOLS: list[dict[str, Any]] = [
    {
        "name": "read_file",
        "description": "Read a text file under the server's root.",
        "inputSchema": {"type": "object", "properties": {"path": _STR}, "required": ["path"]},
        "annotations": {"readOnlyHint": True, "idempotentHint": True},
    },
    {
        "name": "list_files",
        "description": "List the names in a folder under the server's root.",
        "inputSchema": {"type": "object", "properties": {"path": _STR}},
        "annotations": {"readOnlyHint": True, "idempotentHint": True},
    },
    {"name": "wedge", "description": "Never answers; ignores cancellation.", "inputSchema": _NONE},
    {
        "name": "ignore_cancel",
        "description": "Answers after_sec seconds after it was cancelled.",
        "inputSchema": {"type": "object", "properties": {"after_sec": _NUM}},
    },
    {
        "name": "honour_cancel",
        "description": "Waits for a cancellation, then stops with an error at once.",
        "inputSchema": _NONE,
    },
    {
        "name": "progress",
        "description": "Sends progress notifications, then returns or goes silent.",
        "inputSchema": {
            "type": "object",
            "properties": {"steps": _NUM, "interval_sec": _NUM, "then": _STR},
        },
    },
    {
        "name": "drop_stream",
        "description": "Closes the request's stream without answering (HTTP).",
        "inputSchema": _NONE,
    },
    {
        "name": "drop_once",
        "description": "The first call per key closes its stream unanswered; later ones answer.",
        "inputSchema": {"type": "object", "properties": {"key": _STR}, "required": ["key"]},
    },
    {"name": "malformed", "description": "Answers with a malformed result.", "inputSchema": _NONE},
    {
        "name": "forgetful_task",
        "description": "Runs as a task the server forgets at once (tasks/get: unknown task).",
        "inputSchema": _NONE,
        "execution": {"taskSupport": "optional"},
    },
    {
        "name": "crash",
        "description": "The server process exits in the middle of the call (a crashing server).",
        "inputSchema": _NONE,
        "annotations": {"readOnlyHint": False, "destructiveHint": True},
    },
    {
        "name": "seen_cancels",
        "description": "The request ids whose cancel reached the server, as a JSON list.",
        "inputSchema": _NONE,
    },
]
HANDSHAKE_VERSION = "2025-11-25"
MODERN_VERSION = "2026-07-28"
Send = Callable[[dict[str, Any]], None]


class _Drop(Exception):
    """The tool asks for its request's stream to be closed without an answer."""


class _Tools:
    """The tool logic, whatever carries the messages: ``send`` writes one message for a call."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self.cancels: dict[str, threading.Event] = {}
        self.attempts: dict[str, int] = {}
        self.lock = threading.Lock()

    def cancel_event(self, request_id: Any) -> threading.Event:
        with self.lock:
            return self.cancels.setdefault(json.dumps(request_id), threading.Event())

    def call(self, request_id: Any, params: dict[str, Any], send: Send, extra: dict) -> None:
        """Run one ``tools/call``; raises :class:`_Drop` when the stream must close unanswered."""
        name, args = params.get("name"), params.get("arguments") or {}
        token = (params.get("_meta") or {}).get("progressToken")
        cancelled = self.cancel_event(request_id)

        def reply(text: str, is_error: bool = False) -> None:
            result = {"content": [{"type": "text", "text": text}], "isError": is_error, **extra}
            send({"jsonrpc": "2.0", "id": request_id, "result": result})

        if name == "wedge":
            threading.Event().wait()
        if name == "honour_cancel":
            cancelled.wait()
            error = {"code": -32800, "message": "request cancelled"}
            send({"jsonrpc": "2.0", "id": request_id, "error": error})
            return
        if name == "ignore_cancel":
            cancelled.wait()
            threading.Event().wait(float(args.get("after_sec", 0.5)))
            reply("finished anyway")
            return
        if name == "progress":
            steps = int(args.get("steps", 5))
            for step in range(1, steps + 1):
                threading.Event().wait(float(args.get("interval_sec", 0.1)))
                if token is not None:
                    notice = {"progressToken": token, "progress": step, "total": steps}
                    send({"jsonrpc": "2.0", "method": "notifications/progress", "params": notice})
            if args.get("then") == "wedge":
                threading.Event().wait()
            reply(f"done after {steps} steps")
            return
        if name == "drop_stream":
            raise _Drop
        if name == "drop_once":
            key = str(args.get("key", ""))
            with self.lock:
                attempt = self.attempts[key] = self.attempts.get(key, 0) + 1
            if attempt == 1:
                raise _Drop
            reply(f"answered on attempt {attempt}")
            return
        if name == "forgetful_task":
            now = "2026-01-01T00:00:00Z"
            task = {
                "taskId": f"forgotten-{request_id}",
                "status": "working",
                "ttl": 60000,
                "pollInterval": 50,
                "createdAt": now,
                "lastUpdatedAt": now,
            }
            send({"jsonrpc": "2.0", "id": request_id, "result": {"task": task, **extra}})
            return
        if name == "seen_cancels":
            with self.lock:
                seen = [json.loads(key) for key, event in self.cancels.items() if event.is_set()]
            reply(json.dumps(sorted(seen, key=str)))
            return
        if name == "crash":
            threading.Event().wait(0.05)
            os._exit(3)
        if name == "malformed":
            send({"jsonrpc": "2.0", "id": request_id, "result": {"content": "not a list"}})
            return
        if name in ("read_file", "list_files"):
            target = (self.root / str(args.get("path", "."))).resolve()
            if not target.is_relative_to(self.root):
                reply(f"access denied: {args.get('path')!r} is outside the root", True)
                return
            try:
                if name == "read_file":
                    text = target.read_text(encoding="utf-8")
                else:
                    text = "\n".join(sorted(p.name for p in target.iterdir()))
            except OSError as exc:
                reply(f"{type(exc).__name__}: {exc}", True)
                return
            reply(text)
            return
        reply(f"unknown tool {name!r}", True)

    def answer(self, message: dict[str, Any], modern: bool) -> dict[str, Any]:
        """The result or error of a request other than ``tools/call``."""
        request_id, method = message["id"], message.get("method")
        params = message.get("params") or {}
        extra = {"resultType": "complete", "ttlMs": 0, "cacheScope": "private"} if modern else {}
        if method == "initialize":
            asked = params.get("protocolVersion", HANDSHAKE_VERSION)
            result: dict[str, Any] = {
                "protocolVersion": asked if asked <= HANDSHAKE_VERSION else HANDSHAKE_VERSION,
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "reviewlab-demo", "version": "1"},
            }
        elif method == "server/discover" and modern:
            result = {
                "supportedVersions": [MODERN_VERSION],
                "capabilities": {"tools": {}},
                "_meta": {
                    "io.modelcontextprotocol/serverInfo": {"name": "reviewlab-demo", "version": "1"}
                },
                **extra,
            }
        elif method in ("tasks/get", "tasks/result", "tasks/cancel"):
            error = {"code": -32602, "message": "Failed to retrieve task: Task not found"}
            return {"jsonrpc": "2.0", "id": request_id, "error": error}
        elif method == "ping":
            result = {}
        elif method == "tools/list":
            result = {"tools": TOOLS, **extra}
        else:
            error = {"code": -32601, "message": f"method not found: {method}"}
            return {"jsonrpc": "2.0", "id": request_id, "error": error}
        return {"jsonrpc": "2.0", "id": request_id, "result": result}

    def notified(self, message: dict[str, Any]) -> None:
        if message.get("method") == "notifications/cancelled":
            self.cancel_event((message.get("params") or {}).get("requestId")).set()


# -- stdio -----------------------------------------------------------------------------
class _Stdio:
    """The stdio loop: one thread per request, a lock around stdout."""

    def __init__(self, tools: _Tools) -> None:
        self.tools = tools
        self.out_lock = threading.Lock()

    def send(self, message: dict[str, Any]) -> None:
        line = json.dumps(message, separators=(",", ":"))
        with self.out_lock:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()

    def serve(self) -> None:
        for raw in sys.stdin:
            if not raw.strip():
                continue
            message = json.loads(raw)
            if "id" not in message:
                self.tools.notified(message)
                continue
            if "method" not in message:
                continue  # a response to nothing we asked
            threading.Thread(target=self.handle, args=(message,), daemon=True).start()

    def handle(self, message: dict[str, Any]) -> None:
        if message.get("method") != "tools/call":
            self.send(self.tools.answer(message, modern=False))
            return
        try:
            self.tools.call(message["id"], message.get("params") or {}, self.send, {})
        except _Drop:
            error = {"code": -32603, "message": "a stdio server cannot drop a stream"}
            self.send({"jsonrpc": "2.0", "id": message["id"], "error": error})


# -- Streamable HTTP ---------------------------------------------------------------------
class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    tools: _Tools
    modern: bool


class _Handler(BaseHTTPRequestHandler):
    """One HTTP request: JSON answers, an SSE stream per ``tools/call``; the connection closes
    after each request (HTTP/1.0), so a stream ends when its response does."""

    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
        pass

    def _json(self, status: int, body: dict[str, Any] | None, session: bool = False) -> None:
        data = b"" if body is None else json.dumps(body).encode()
        self.send_response(status)
        if body is not None:
            self.send_header("Content-Type", "application/json")
        if session:
            self.send_header("Mcp-Session-Id", "reviewlab-demo-session")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self._json(405, None)  # no server-initiated stream

    def do_DELETE(self) -> None:  # noqa: N802
        self._json(200, None)

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        try:
            message = json.loads(self.rfile.read(length))
        except ValueError:
            self._json(
                400,
                {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}},
            )
            return
        tools = self.server.tools
        if "id" not in message or "method" not in message:
            tools.notified(message)
            self._json(202, None)
            return
        method = message.get("method")
        modern = self.server.modern and (
            self.headers.get("Mcp-Protocol-Version") == MODERN_VERSION
            or method == "server/discover"
        )
        if method != "tools/call":
            self._json(200, tools.answer(message, modern), session=method == "initialize")
            return
        self._stream(message, modern)

    def _stream(self, message: dict[str, Any], modern: bool) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        self.wfile.flush()
        lock, done = threading.Lock(), threading.Event()
        cancelled = self.server.tools.cancel_event(message["id"])
        if modern:  # closing the stream is the cancel: watch the socket for the client's close
            threading.Thread(
                target=_watch_close, args=(self.connection, done, cancelled), daemon=True
            ).start()

        def send(event: dict[str, Any]) -> None:
            data = f"event: message\ndata: {json.dumps(event)}\n\n".encode()
            with lock:
                try:
                    self.wfile.write(data)
                    self.wfile.flush()
                except OSError:
                    cancelled.set()  # the client is gone

        extra = {"resultType": "complete"} if modern else {}
        try:
            self.server.tools.call(message["id"], message.get("params") or {}, send, extra)
        except _Drop:
            pass  # the handler returns: the connection closes with no answer on it
        finally:
            done.set()


def _watch_close(conn: socket.socket, done: threading.Event, cancelled: threading.Event) -> None:
    """Set ``cancelled`` when the client closes the connection before ``done``."""
    while not done.is_set():
        readable, _, _ = select.select([conn], [], [], 0.05)
        if readable and not done.is_set():
            try:
                if conn.recv(1, socket.MSG_PEEK) == b"":
                    cancelled.set()
                    return
            except OSError:
                cancelled.set()
                return


def main(argv: list[str] | None = None) -> None:
    """Serve the demo tools over stdio, or over HTTP with ``--http PORT`` (``--modern`` adds the
    2026-07-28 revision); the first argument is the root (default ``.``)."""
    args = list(sys.argv[1:] if argv is None else argv)
    modern = "--modern" in args
    if modern:
        args.remove("--modern")
    port = None
    if "--http" in args:
        at = args.index("--http")
        port = int(args[at + 1])
        del args[at : at + 2]
    tools = _Tools(Path(args[0] if args else "."))
    if port is None:
        _Stdio(tools).serve()
        return
    server = _HTTPServer(("127.0.0.1", port), _Handler)
    server.tools, server.modern = tools, modern
    print(f"listening on http://127.0.0.1:{server.server_address[1]}/mcp", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
