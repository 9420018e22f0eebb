"""MCP servers as the reviewer's tools: every call bounded, abandoned calls cancelled on the wire.

:class:`MCPServer` starts a server over stdio with the official ``mcp`` SDK (optional extra
``mcp``) and hands out a ``registry_factory`` for
``ReviewEpisode(root, model, registry_factory=server.registry_factory)``: the model sees the
server's own tools and schemas, and each call runs through the episode's bounded executor.

Lifecycle of a server: ``with MCPServer(...)`` (or ``async with``) spawns the process,
initialises the session, lists the tools, and serves calls until the block ends; then the
session closes and the SDK stops the process (stdin closed, then terminate, then kill).
With ``with`` the session lives on its own event-loop thread; with ``async with`` on the
caller's loop.

Lifecycle of one call: ``tools/call`` is sent under a request id of ours, with a progress
token; each ``notifications/progress`` is recorded on the call's
:class:`~reviewlab.live.aio.CallNotes` (it resets an idle timeout). When the executor
abandons the call (its bound passed), the client sends ``notifications/cancelled`` for that
id (``cancel_sent``) and keeps listening for up to ``cancel_watch_sec``: a response or an
error arriving in that window means the server stopped, ``cancel_honoured_sec`` after the
cancellation; silence leaves it ``None``. A late result is never delivered to anyone.

Crediting: ``read_tools`` maps the server's read tools to a function ``(args, text) -> reader
stamp`` (the keys ``inspection_registry`` stamps: opened_path, first_line, end_line,
total_lines…); the episode credits those reads as it credits ``read_file``.
:data:`FILESYSTEM_READ_TOOLS` is the mapping for ``@modelcontextprotocol/server-filesystem``.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import shlex
import sys
import threading
from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import IO, Any, TextIO, cast

from reviewlab.live.aio import CallNotes, current_notes

__all__ = [
    "FILESYSTEM_READ_TOOLS",
    "MCPContext",
    "MCPRegistry",
    "MCPServer",
    "MCPServerError",
    "MCPToolError",
    "ReadExtent",
    "demo_server_command",
    "filesystem_read_extent",
]

ReadExtent = Callable[[Mapping[str, Any], str], dict[str, Any] | None]
"""Maps a read tool's arguments and result text to a reader stamp (``None``: nothing to credit)."""

DEFAULT_CANCEL_WATCH_SEC = 30.0
DEFAULT_START_TIMEOUT_SEC = 60.0
_CONNECTION_CLOSED = -32000


class MCPServerError(RuntimeError):
    """The server could not be started, initialised or listed; the message names the command."""


class MCPToolError(RuntimeError):
    """The server answered a call with an error result (``isError``) or a JSON-RPC error."""


def filesystem_read_extent(args: Mapping[str, Any], text: str) -> dict[str, Any] | None:
    """The reader stamp of ``read_text_file`` / ``read_file`` of the reference filesystem server.

    A whole-file read renders lines 1..n of n; ``head=N`` renders the first lines (total
    unknown); a ``tail`` read does not say where it starts, so it is not credited.
    """
    path = args.get("path")
    if not isinstance(path, str) or not path or args.get("tail") is not None:
        return None
    lines = text.count("\n") + (1 if text and not text.endswith("\n") else 0)
    return {
        "target": path,
        "opened_path": path,
        "opened_root": "mcp",
        "first_line": 1,
        "end_line": lines,
        "total_lines": None if args.get("head") is not None else lines,
    }


FILESYSTEM_READ_TOOLS: Mapping[str, ReadExtent] = {
    "read_text_file": filesystem_read_extent,
    "read_file": filesystem_read_extent,
}
"""Read tools of ``@modelcontextprotocol/server-filesystem`` and our demo server."""


def demo_server_command(root: str | os.PathLike[str] = ".") -> list[str]:
    """The command that starts :mod:`reviewlab.live.mcp_demo_server` over ``root``.

    The server runs as a plain script (not ``-m``), so it starts without importing reviewlab.
    """
    script = Path(__file__).with_name("mcp_demo_server.py")
    return [sys.executable, str(script), str(root)]


class MCPContext:
    """The registry's shared context: ``last_read_view`` is stamped
    after a credited read renders."""

    def __init__(self) -> None:
        self.last_read_view: dict[str, Any] | None = None


class MCPRegistry:
    """The tools of one :class:`MCPServer` for one episode: ``await execute(name, args) -> str``.

    ``read_tools`` names the tools the episode credits as reads; ``loop`` is the event loop
    the session lives on (the episode runs there when it can).
    """

    transport = "mcp"

    def __init__(self, server: MCPServer, root: Path, ctx: MCPContext) -> None:
        self.server = server
        self.root = root
        self.ctx = ctx
        self.read_tools = frozenset(server.read_tools)

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The event loop of the server's session (calls run there)."""
        return self.server.loop

    async def execute(self, name: str, args: Mapping[str, Any]) -> str:
        """Call ``name`` on the server; an error result raises :class:`MCPToolError`."""
        notes = current_notes() or CallNotes("mcp")
        notes.transport = "mcp"
        server_loop = self.server.loop
        if asyncio.get_running_loop() is server_loop:
            text = await self.server._call(name, dict(args), notes)
        else:
            # Another loop awaits us: run on the session's loop; a cancellation crosses over.
            future = asyncio.run_coroutine_threadsafe(
                self.server._call(name, dict(args), notes), server_loop
            )
            text = await asyncio.wrap_future(future)
        extent = self.server.read_tools.get(name)
        if extent is not None:
            stamp = extent(args, text)
            if stamp is not None:
                stamp["opened_path"] = self._relative(str(stamp.get("opened_path", "")))
            self.ctx.last_read_view = stamp
        return text

    def _relative(self, path: str) -> str:
        candidate = Path(path)
        if candidate.is_absolute():
            try:
                return candidate.resolve().relative_to(self.root.resolve()).as_posix()
            except ValueError:
                return path
        return path


class MCPServer:
    """A stdio MCP server whose tools a review episode may call (see the module docstring).

    ``command`` is a shell-style string or an argument list. ``read_tools`` maps read tools
    to their extents (default :data:`FILESYSTEM_READ_TOOLS`); ``allowed_tools`` (``None``:
    all) limits what the model is offered, e.g. to keep a read-only reviewer away from write
    tools. ``errlog`` receives the server's stderr (default: discarded).
    """

    def __init__(
        self,
        command: str | Sequence[str],
        *,
        cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        read_tools: Mapping[str, ReadExtent] = FILESYSTEM_READ_TOOLS,
        allowed_tools: Collection[str] | None = None,
        cancel_watch_sec: float = DEFAULT_CANCEL_WATCH_SEC,
        start_timeout_sec: float = DEFAULT_START_TIMEOUT_SEC,
        errlog: IO[str] | None = None,
    ) -> None:
        argv = shlex.split(command) if isinstance(command, str) else [str(a) for a in command]
        if not argv:
            raise ValueError("command: expected a server command, got an empty one")
        if not cancel_watch_sec >= 0:
            raise ValueError(f"cancel_watch_sec: expected seconds >= 0, got {cancel_watch_sec!r}")
        self.argv = argv
        self.cwd = None if cwd is None else str(cwd)
        self.env = dict(env) if env is not None else None
        self.read_tools = dict(read_tools)
        self.allowed_tools = None if allowed_tools is None else frozenset(allowed_tools)
        self.cancel_watch_sec = float(cancel_watch_sec)
        self.start_timeout_sec = float(start_timeout_sec)
        self.errlog = errlog
        self.tools: list[dict[str, Any]] = []
        self.server_name = ""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stop: asyncio.Event | None = None
        self._serving: asyncio.Task[None] | None = None
        self._dispatcher: Any = None
        self._ids = itertools.count(1)
        self._watchers: set[asyncio.Task[Any]] = set()

    # -- lifecycle -------------------------------------------------------------
    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The event loop the session lives on (only while the server is open)."""
        if self._loop is None:
            raise RuntimeError(f"MCP server {self.argv[0]!r} is not open (use it as a context)")
        return self._loop

    def __enter__(self) -> MCPServer:
        started: Future[None] = Future()
        self._thread = threading.Thread(
            target=self._thread_main, args=(started,), name="reviewlab-mcp", daemon=True
        )
        self._thread.start()
        started.result()  # re-raises MCPServerError when the server failed to start
        return self

    def __exit__(self, *exc: object) -> None:
        loop, stop = self._loop, self._stop
        if loop is not None and stop is not None:
            loop.call_soon_threadsafe(stop.set)
        if self._thread is not None:
            self._thread.join(self.start_timeout_sec)
        self._loop = None

    async def __aenter__(self) -> MCPServer:
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._serving = asyncio.get_running_loop().create_task(self._serve(ready))
        await ready
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._stop is not None:
            self._stop.set()
        if self._serving is not None:
            await self._serving
        self._loop = None

    def _thread_main(self, started: Future[None]) -> None:
        async def main() -> None:
            ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            serving = asyncio.get_running_loop().create_task(self._serve(ready))
            try:
                await ready
            except BaseException as exc:
                started.set_exception(exc)
                return
            started.set_result(None)
            await serving

        asyncio.run(main())

    async def _serve(self, ready: asyncio.Future[None]) -> None:
        """Keep the session open until :attr:`_stop` is set; ``ready``
        resolves once tools are listed."""
        try:
            from mcp import ClientSession, StdioServerParameters
            from mcp.client.stdio import stdio_client
            from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher
        except ImportError:  # the optional extra is missing
            ready.set_exception(
                ImportError("MCPServer needs the 'mcp' package: pip install 'reviewlab[mcp]'")
            )
            return
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        params = StdioServerParameters(
            command=self.argv[0], args=self.argv[1:], env=self.env, cwd=self.cwd
        )
        errlog = self.errlog or open(os.devnull, "w")  # noqa: SIM115 - closed below
        label = shlex.join(self.argv)
        try:
            async with stdio_client(params, errlog=cast(TextIO, errlog)) as (read, write):
                dispatcher = JSONRPCDispatcher(read, write)
                async with ClientSession(dispatcher=dispatcher) as session:
                    try:
                        async with asyncio.timeout(self.start_timeout_sec):
                            init = await session.initialize()
                            listed = await self._list_tools(session)
                    except Exception as exc:
                        if not ready.done():
                            ready.set_exception(
                                MCPServerError(f"MCP server {label!r}: could not start: {exc!r}")
                            )
                        return
                    self._dispatcher = dispatcher
                    self.server_name = init.server_info.name if init.server_info else ""
                    self.tools = listed
                    ready.set_result(None)
                    await self._stop.wait()
                    for watcher in list(self._watchers):
                        watcher.cancel()
        except Exception as exc:
            if not ready.done():
                ready.set_exception(MCPServerError(f"MCP server {label!r}: {exc!r}"))
        finally:
            self._dispatcher = None
            if self.errlog is None:
                errlog.close()

    async def _list_tools(self, session: Any) -> list[dict[str, Any]]:
        tools: list[dict[str, Any]] = []
        cursor = None
        while True:
            from mcp import types

            params = None if cursor is None else types.PaginatedRequestParams(cursor=cursor)
            page = await session.list_tools(params=params)
            for tool in page.tools:
                if self.allowed_tools is None or tool.name in self.allowed_tools:
                    tools.append(tool.model_dump(by_alias=True, mode="json", exclude_none=True))
            cursor = page.next_cursor
            if not cursor:
                return tools

    # -- the episode's view ------------------------------------------------------
    @property
    def schemas(self) -> list[dict[str, Any]]:
        """The server's tools as OpenAI-style function schemas."""
        return [
            {
                "type": "function",
                "function": {
                    "name": tool["name"],
                    "description": tool.get("description", ""),
                    "parameters": tool.get("inputSchema") or {"type": "object", "properties": {}},
                },
            }
            for tool in self.tools
        ]

    def registry_factory(
        self, root: str | os.PathLike[str], drive_root: Any = None, task_id: str = ""
    ) -> tuple[MCPRegistry, MCPContext, list[dict[str, Any]]]:
        """``(registry, ctx, schemas)`` for one episode over ``root``
        (``ReviewEpisode``'s factory)."""
        self.loop  # noqa: B018 - raises when the server is not open
        ctx = MCPContext()
        return MCPRegistry(self, Path(root), ctx), ctx, self.schemas

    # -- one call ----------------------------------------------------------------
    async def _call(self, name: str, args: dict[str, Any], notes: CallNotes) -> str:
        """Send ``tools/call``; on cancellation send ``notifications/cancelled`` and watch."""
        dispatcher = self._dispatcher
        if dispatcher is None:
            raise MCPServerError(f"MCP server {self.argv[0]!r} is closed")
        request_id = f"reviewlab-{next(self._ids)}"
        notes.request_id = request_id

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            notes.progress()

        options = {"request_id": request_id, "on_progress": on_progress, "cancel_on_abandon": False}
        request = asyncio.get_running_loop().create_task(
            dispatcher.send_raw_request("tools/call", {"name": name, "arguments": args}, options)
        )
        settled = notes.cancel_settled = threading.Event()
        try:
            raw = await asyncio.shield(request)
        except asyncio.CancelledError:
            if not request.done():
                await self._cancel(dispatcher, request_id, request, notes)
            raise
        except Exception as exc:
            raise MCPToolError(_error_text(exc)) from None
        finally:
            settled.set()
        return _result_text(raw)

    async def _cancel(
        self, dispatcher: Any, request_id: str, request: asyncio.Task[Any], notes: CallNotes
    ) -> None:
        """Tell the server the result will be unused, then watch whether it stops."""
        params = {"requestId": request_id, "reason": "reviewlab: the call outlived its bound"}
        notes.cancelled()
        with contextlib.suppress(Exception):  # a closed pipe: nothing more can be learnt
            await dispatcher.notify("notifications/cancelled", params)

        def finished(task: asyncio.Task[Any]) -> None:
            self._watchers.discard(task)
            if task.cancelled():
                return
            exc = task.exception()
            if getattr(getattr(exc, "error", None), "code", None) == _CONNECTION_CLOSED:
                return  # the session closed: that is not the server stopping
            notes.stopped()

        self._watchers.add(request)
        request.add_done_callback(finished)
        asyncio.get_running_loop().call_later(self.cancel_watch_sec, request.cancel)


def _result_text(raw: Mapping[str, Any]) -> str:
    """The text of a ``tools/call`` result; an ``isError`` result raises :class:`MCPToolError`."""
    parts = []
    for block in raw.get("content") or []:
        if isinstance(block, Mapping):
            if block.get("type") == "text":
                parts.append(str(block.get("text", "")))
            else:
                parts.append(f"[{block.get('type', 'content')} block]")
    text = "\n".join(parts)
    if raw.get("isError"):
        raise MCPToolError(text)
    return text


def _error_text(exc: BaseException) -> str:
    error = getattr(exc, "error", None)
    message = getattr(error, "message", None)
    return str(message) if message else f"{type(exc).__name__}: {exc}"
