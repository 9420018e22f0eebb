"""A small MCP server whose tools misbehave on purpose, over stdio or Streamable HTTP.

Run it as ``python _mcp_demo_server.py [ROOT]`` for stdio, or ``python _mcp_demo_server.py ROOT
--http PORT [--modern]`` for Streamable HTTP on ``127.0.0.1:PORT/mcp`` (the first stdout line
says ``listening on URL``). It needs only the standard library, so notebooks and tests use it
without npm. Over HTTP it speaks the 2025-11-25 handshake, and with ``--modern`` the stateless
2026-07-28 revision.

Tools: ``read_file``, ``list_files``, and the misbehaving ones — ``wedge``, ``ignore_cancel``,
``honour_cancel``, ``progress``, ``drop_stream``, ``drop_once``, ``malformed``,
``forgetful_task``, ``seen_cancels`` — are :mod:`reviewlab.live._mcp_demo_tools`; this module is
their transports. Each request runs on its own thread. What each tool does:
docs/architecture.md, "The MCP demo server".
"""

from __future__ import annotations

import json
import select
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

if __package__:  # imported as reviewlab.live._mcp_demo_server
    from reviewlab.live._mcp_demo_tools import MODERN_VERSION, DemoTools, Drop
else:  # run as a script by its path: its folder is sys.path[0], and reviewlab is not imported
    from _mcp_demo_tools import (  # type: ignore[import-not-found,no-redef]
        MODERN_VERSION,
        DemoTools,
        Drop,
    )

# A script (``python _mcp_demo_server.py``), not an API: it exports nothing, so its ``main``
# does not shadow ``reviewlab.cli.main``.


# -- stdio -----------------------------------------------------------------------------
class _Stdio:
    """The stdio loop: one thread per request, a lock around stdout."""

    def __init__(self, tools: DemoTools) -> None:
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
        except Drop:
            error = {"code": -32603, "message": "a stdio server cannot drop a stream"}
            self.send({"jsonrpc": "2.0", "id": message["id"], "error": error})


# -- Streamable HTTP ---------------------------------------------------------------------
class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    tools: DemoTools
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
        except Drop:
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
    tools = DemoTools(Path(args[0] if args else "."))
    if port is None:
        _Stdio(tools).serve()
        return
    server = _HTTPServer(("127.0.0.1", port), _Handler)
    server.tools, server.modern = tools, modern
    print(f"listening on http://127.0.0.1:{server.server_address[1]}/mcp", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
