"""What the MCP demo server's tools do, whatever carries the messages (stdio or HTTP).

:data:`TOOLS` is the ``tools/list`` answer: ``read_file`` and ``list_files`` under the root,
and the tools that misbehave on purpose (``wedge``, ``ignore_cancel``, ``honour_cancel``,
``progress``, ``drop_stream``, ``drop_once``, ``malformed``, ``forgetful_task``, ``crash``,
``seen_cancels``). :class:`DemoTools` runs one ``tools/call`` (``send`` writes each message it
produces; :class:`Drop` asks the transport to close the stream unanswered), answers the other
requests, and hears cancellations. Standard library only, like the server script
(:mod:`reviewlab.live._mcp_demo_server`) that imports it by its folder. What each tool does:
docs/architecture.md, "The MCP demo server".
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

# Imported by a script, not an API: it exports nothing, so its ``TOOLS`` does not shadow
# ``recording.synth.TOOLS``.

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


class Drop(Exception):
    """The tool asks for its request's stream to be closed without an answer."""


class DemoTools:
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
        """Run one ``tools/call``; raises :class:`Drop` when the stream must close unanswered."""
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
            raise Drop
        if name == "drop_once":
            key = str(args.get("key", ""))
            with self.lock:
                attempt = self.attempts[key] = self.attempts.get(key, 0) + 1
            if attempt == 1:
                raise Drop
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
