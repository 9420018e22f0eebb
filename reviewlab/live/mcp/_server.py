"""An MCP server's session, over stdio or Streamable HTTP, with the official ``mcp`` SDK.

Lifecycle: ``with MCPServer(...)`` (or ``async with``) opens the SDK's transport
(``command=``: a process over stdio; ``url=``: Streamable HTTP), negotiates the protocol
version, lists the tools, and serves calls until the block ends; then the session closes (the
SDK stops a stdio process: stdin closed, terminate, kill; an HTTP session is deleted). With
``with`` the session lives on its own event-loop thread; with ``async with`` on the caller's
loop. Negotiation (``protocol="auto"``): ``server/discover`` for the stateless 2026-07-28
revision, the ``initialize`` handshake when the server does not speak it
(``protocol="legacy"`` goes straight to the handshake).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import threading
import time
from collections.abc import Collection, Mapping, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import IO, Any, Literal, TextIO, cast

from reviewlab.live.mcp._call import Link
from reviewlab.live.mcp._errors import MCPServerError
from reviewlab.live.mcp._extents import FILESYSTEM_READ_TOOLS, ReadExtent
from reviewlab.live.mcp._registry import MCPContext, MCPRegistry

DEFAULT_CANCEL_WATCH_SEC = 30.0
DEFAULT_START_TIMEOUT_SEC = 60.0
DEFAULT_TASK_TTL_SEC = 300.0
"""The TTL a task-augmented call asks for (the server may grant another)."""
Protocol = Literal["auto", "legacy"]


class MCPServer:
    """An MCP server whose tools a review episode may call (see the module docstring).

    Give ``command`` (a shell-style string or an argument list; stdio) or ``url`` (Streamable
    HTTP). Both give an episode the same registry (``registry_factory``). ``read_tools`` maps
    read tools to their extents (default :data:`FILESYSTEM_READ_TOOLS`); ``allowed_tools``
    (``None``: all) limits what the model is offered, e.g. to keep a read-only reviewer away
    from write tools; ``idempotent_tools`` (``None``: the episode policy's) are the tools a
    dropped stream may re-issue once. ``cancel_watch_sec`` is how long an abandoned call is
    still listened to; ``task_ttl_sec`` the TTL a task-augmented call asks for; ``errlog``
    receives a stdio server's stderr (default: discarded).
    """

    def __init__(
        self,
        command: str | Sequence[str] | None = None,
        *,
        url: str | None = None,
        cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        read_tools: Mapping[str, ReadExtent] = FILESYSTEM_READ_TOOLS,
        allowed_tools: Collection[str] | None = None,
        idempotent_tools: Collection[str] | None = None,
        protocol: Protocol = "auto",
        cancel_watch_sec: float = DEFAULT_CANCEL_WATCH_SEC,
        start_timeout_sec: float = DEFAULT_START_TIMEOUT_SEC,
        task_ttl_sec: float = DEFAULT_TASK_TTL_SEC,
        errlog: IO[str] | None = None,
    ) -> None:
        if (command is None) == (url is None):
            raise ValueError("MCPServer: give exactly one of command= (stdio) and url= (HTTP)")
        argv: list[str] = []
        if command is not None:
            argv = shlex.split(command) if isinstance(command, str) else [str(a) for a in command]
            if not argv:
                raise ValueError("command: expected a server command, got an empty one")
        if url is not None and not url.startswith(("http://", "https://")):
            raise ValueError(f"url: expected an http:// or https:// URL, got {url!r}")
        if not cancel_watch_sec >= 0:
            raise ValueError(f"cancel_watch_sec: expected seconds >= 0, got {cancel_watch_sec!r}")
        if protocol not in ("auto", "legacy"):
            raise ValueError(f"protocol: expected 'auto' or 'legacy', got {protocol!r}")
        self.argv = argv
        self.url = url
        self.label = url if url is not None else shlex.join(argv)
        self.cwd = None if cwd is None else str(cwd)
        self.env = dict(env) if env is not None else None
        self.read_tools = dict(read_tools)
        self.allowed_tools = None if allowed_tools is None else frozenset(allowed_tools)
        self.idempotent_tools = None if idempotent_tools is None else frozenset(idempotent_tools)
        self.protocol = protocol
        self.cancel_watch_sec = float(cancel_watch_sec)
        self.start_timeout_sec = float(start_timeout_sec)
        if not task_ttl_sec > 0:
            raise ValueError(f"task_ttl_sec: expected seconds > 0, got {task_ttl_sec!r}")
        self.task_ttl_sec = float(task_ttl_sec)
        self.errlog = errlog
        self.tools: list[dict[str, Any]] = []
        self.server_name = ""
        self.protocol_version: str | None = None
        self.link: Link | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stop: asyncio.Event | None = None
        self._serving: asyncio.Task[None] | None = None

    # -- lifecycle -------------------------------------------------------------
    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The event loop the session lives on (only while the server is open)."""
        if self._loop is None:
            raise RuntimeError(f"MCP server {self.label!r} is not open (use it as a context)")
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
            with contextlib.suppress(RuntimeError):  # the loop already ended (the server died)
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
            # A session that died early keeps the loop (an episode may run on it) until the
            # block ends: its calls then fail one receipt each instead of being torn down.
            assert self._stop is not None
            await self._stop.wait()

        asyncio.run(main())

    async def _serve(self, ready: asyncio.Future[None]) -> None:
        """Keep the session open until :attr:`_stop` is set; ``ready`` resolves once tools are
        listed. A server that dies later closes the link: calls then raise
        :class:`MCPServerError`, one receipt each."""
        try:
            from mcp import ClientSession
            from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher
        except ImportError:  # the optional extra is missing
            ready.set_exception(
                ImportError("MCPServer needs the 'mcp' package: pip install 'reviewlab[mcp]'")
            )
            return
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        errlog = self.errlog or open(os.devnull, "w")  # noqa: SIM115 - closed below
        try:
            async with contextlib.AsyncExitStack() as stack:
                read, write = await stack.enter_async_context(self._transport(errlog))
                dispatcher = JSONRPCDispatcher(read, write)
                session = await stack.enter_async_context(ClientSession(dispatcher=dispatcher))
                try:
                    async with asyncio.timeout(self.start_timeout_sec):
                        await self._negotiate(session)
                        listed = await self._list_tools(session)
                except Exception as exc:
                    if not ready.done():
                        ready.set_exception(
                            MCPServerError(f"MCP server {self.label!r}: could not start: {exc!r}")
                        )
                    return
                info = session.server_info
                self.server_name = info.name if info is not None else ""
                self.protocol_version = session.protocol_version
                self.tools = listed
                self.link = Link(
                    dispatcher,
                    session,
                    self.label,
                    http=self.url is not None,
                    protocol_version=session.protocol_version,
                    cancel_watch_sec=self.cancel_watch_sec,
                )
                ready.set_result(None)
                await self._stop.wait()
                for watcher in list(self.link.watchers):
                    watcher.cancel()
        except Exception as exc:
            if not ready.done():
                ready.set_exception(MCPServerError(f"MCP server {self.label!r}: {_leaf(exc)!r}"))
        finally:
            self.link = None
            if self.errlog is None:
                errlog.close()

    def _transport(self, errlog: IO[str]) -> contextlib.AbstractAsyncContextManager[Any]:
        if self.url is not None:
            from mcp.client.streamable_http import streamable_http_client

            return streamable_http_client(self.url)
        from mcp import StdioServerParameters
        from mcp.client.stdio import stdio_client

        params = StdioServerParameters(
            command=self.argv[0], args=self.argv[1:], env=self.env, cwd=self.cwd
        )
        return stdio_client(params, errlog=cast(TextIO, errlog))

    async def _negotiate(self, session: Any) -> None:
        """``server/discover`` (the 2026-07-28 revision), else the ``initialize`` handshake."""
        if self.protocol == "auto":
            from mcp.shared.exceptions import MCPError
            from pydantic import ValidationError

            try:
                await session.discover()
                return
            except (MCPError, ValidationError, RuntimeError):
                pass  # not a 2026-07-28 server: the handshake decides
        await session.initialize()

    async def _list_tools(self, session: Any) -> list[dict[str, Any]]:
        from mcp import types

        tools: list[dict[str, Any]] = []
        cursor = None
        while True:
            params = None if cursor is None else types.PaginatedRequestParams(cursor=cursor)
            page = await session.list_tools(params=params)
            for tool in page.tools:
                if self.allowed_tools is None or tool.name in self.allowed_tools:
                    tools.append(tool.model_dump(by_alias=True, mode="json", exclude_none=True))
            cursor = page.next_cursor
            if not cursor:
                return tools

    def wait_watched(self, timeout_sec: float | None = None) -> bool:
        """Block until no abandoned call is still listened to (each watch ends with a late
        answer, or in silence after ``cancel_watch_sec``), at most ``timeout_sec`` (default:
        ``cancel_watch_sec``); whether none is. A recording written after it carries every late
        answer that came."""
        link = self.link
        end = time.monotonic() + (self.cancel_watch_sec if timeout_sec is None else timeout_sec)
        while link is not None and link.watchers:
            if time.monotonic() >= end:
                return False
            time.sleep(0.02)  # polls a state the server drives; it decides no race
        return True

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


def _leaf(exc: BaseException) -> BaseException:
    """The first real error inside (nested) exception groups, which anyio task groups raise."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc
