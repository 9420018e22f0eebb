"""A small MCP server over stdio whose tools misbehave on purpose, for tests and teaching.

Run it as ``python -m reviewlab.live.mcp_demo_server [ROOT]``; it serves newline-delimited
JSON-RPC 2.0 on stdin/stdout (the MCP stdio transport) and needs nothing but the standard
library, so notebooks and tests can use it without npm. Tools:

* ``read_file(path)``: the text of a file under ROOT (default: the working directory); a path
  that leaves ROOT is an error result.
* ``list_files(path=".")``: the names in a folder under ROOT, one per line.
* ``wedge()``: never answers, and ignores ``notifications/cancelled``.
* ``ignore_cancel(after_sec=0.5)``: keeps working after a cancellation and answers
  ``after_sec`` seconds after the cancellation arrived (never answers without one).
* ``honour_cancel()``: waits for a cancellation, then answers at once with a JSON-RPC error
  (code -32800), so a client sees the server stop.
* ``progress(steps=5, interval_sec=0.1, then="return")``: sends ``steps`` progress
  notifications ``interval_sec`` apart (when the request carries a progress token), then
  returns (``then="return"``) or goes silent for good (``then="wedge"``).

Each request runs on its own thread; writes to stdout are serialised by a lock. The process
exits when stdin closes.
"""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path
from typing import Any

# A script (``python -m reviewlab.live.mcp_demo_server``), not an API: it exports nothing, so
# its ``main`` and ``TOOLS`` do not shadow ``reviewlab.cli.main`` and ``recording.synth.TOOLS``.
__all__: list[str] = []

_STR = {"type": "string"}
_NUM = {"type": "number"}
TOOLS: list[dict[str, Any]] = [
    {
        "name": "read_file",
        "description": "Read a text file under the server's root.",
        "inputSchema": {"type": "object", "properties": {"path": _STR}, "required": ["path"]},
    },
    {
        "name": "list_files",
        "description": "List the names in a folder under the server's root.",
        "inputSchema": {"type": "object", "properties": {"path": _STR}},
    },
    {
        "name": "wedge",
        "description": "Never answers; ignores cancellation.",
        "inputSchema": {"type": "object", "properties": {}},
    },
    {
        "name": "ignore_cancel",
        "description": "Answers after_sec seconds after it was cancelled.",
        "inputSchema": {"type": "object", "properties": {"after_sec": _NUM}},
    },
    {
        "name": "honour_cancel",
        "description": "Waits for a cancellation, then stops with an error at once.",
        "inputSchema": {"type": "object", "properties": {}},
    },
    {
        "name": "progress",
        "description": "Sends progress notifications, then returns or goes silent.",
        "inputSchema": {
            "type": "object",
            "properties": {"steps": _NUM, "interval_sec": _NUM, "then": _STR},
        },
    },
]


class _Server:
    """The JSON-RPC loop: one thread per request, a lock around stdout."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self.out_lock = threading.Lock()
        self.cancels: dict[Any, threading.Event] = {}
        self.cancel_lock = threading.Lock()

    def send(self, message: dict[str, Any]) -> None:
        line = json.dumps(message, separators=(",", ":"))
        with self.out_lock:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()

    def cancel_event(self, request_id: Any) -> threading.Event:
        with self.cancel_lock:
            return self.cancels.setdefault(json.dumps(request_id), threading.Event())

    def serve(self) -> None:
        for raw in sys.stdin:
            if not raw.strip():
                continue
            message = json.loads(raw)
            method = message.get("method")
            if "id" not in message:
                if method == "notifications/cancelled":
                    self.cancel_event((message.get("params") or {}).get("requestId")).set()
                continue
            threading.Thread(target=self.answer, args=(message,), daemon=True).start()

    def answer(self, message: dict[str, Any]) -> None:
        request_id, method = message["id"], message.get("method")
        params = message.get("params") or {}
        if method == "initialize":
            result: dict[str, Any] = {
                "protocolVersion": params.get("protocolVersion", "2025-06-18"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "reviewlab-demo", "version": "1"},
            }
        elif method == "ping":
            result = {}
        elif method == "tools/list":
            result = {"tools": TOOLS}
        elif method == "tools/call":
            self.call(request_id, params)
            return
        else:
            self.send(
                {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": method}}
            )
            return
        self.send({"jsonrpc": "2.0", "id": request_id, "result": result})

    def call(self, request_id: Any, params: dict[str, Any]) -> None:
        name, args = params.get("name"), params.get("arguments") or {}
        token = (params.get("_meta") or {}).get("progressToken")
        cancelled = self.cancel_event(request_id)
        if name == "wedge":
            threading.Event().wait()
        if name == "honour_cancel":
            cancelled.wait()
            error = {"code": -32800, "message": "request cancelled"}
            self.send({"jsonrpc": "2.0", "id": request_id, "error": error})
            return
        if name == "ignore_cancel":
            cancelled.wait()
            threading.Event().wait(float(args.get("after_sec", 0.5)))
            self.reply(request_id, "finished anyway")
            return
        if name == "progress":
            steps = int(args.get("steps", 5))
            for step in range(1, steps + 1):
                threading.Event().wait(float(args.get("interval_sec", 0.1)))
                if token is not None:
                    notice = {"progressToken": token, "progress": step, "total": steps}
                    progress = {"jsonrpc": "2.0", "method": "notifications/progress"}
                    self.send({**progress, "params": notice})
            if args.get("then") == "wedge":
                threading.Event().wait()
            self.reply(request_id, f"done after {steps} steps")
            return
        if name in ("read_file", "list_files"):
            target = (self.root / str(args.get("path", "."))).resolve()
            if not target.is_relative_to(self.root):
                denied = f"access denied: {args.get('path')!r} is outside the root"
                self.reply(request_id, denied, True)
                return
            try:
                if name == "read_file":
                    text = target.read_text(encoding="utf-8")
                else:
                    text = "\n".join(sorted(p.name for p in target.iterdir()))
            except OSError as exc:
                self.reply(request_id, f"{type(exc).__name__}: {exc}", True)
                return
            self.reply(request_id, text)
            return
        self.reply(request_id, f"unknown tool {name!r}", True)

    def reply(self, request_id: Any, text: str, is_error: bool = False) -> None:
        result = {"content": [{"type": "text", "text": text}], "isError": is_error}
        self.send({"jsonrpc": "2.0", "id": request_id, "result": result})


def main(argv: list[str] | None = None) -> None:
    """Serve the demo tools on stdin/stdout with ``argv[0]`` (default ``.``) as the root."""
    args = sys.argv[1:] if argv is None else argv
    _Server(Path(args[0] if args else ".")).serve()


if __name__ == "__main__":
    main()
