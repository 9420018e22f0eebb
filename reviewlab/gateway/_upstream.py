"""One upstream MCP server as the gateway's client: its session, its tools, and what it asks.

Lifecycle: ``await upstream.open(stack)`` starts the server (stdio) or connects to it (HTTP)
with the official SDK, negotiates, and lists its tools, resources, prompts and templates as
its capabilities allow; the session lives until the exit stack closes (a stdio server is then
terminated). What the server sends on its own — sampling, elicitation and roots requests, and
notifications (log messages, list changes, resource updates) — goes to the gateway's
:class:`HostRouter`, which hands it to a host. A server that dies closes the link: later calls
fail one error each, naming the server.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Awaitable, Callable, Mapping
from typing import IO, Any, Protocol, TextIO, cast

from reviewlab.gateway._config import UpstreamSpec
from reviewlab.live.mcp import MCPServerError
from reviewlab.live.mcp._call import Link


class HostRouter(Protocol):
    """Where an upstream's own requests and notifications go (the gateway's hosts)."""

    async def upstream_request(self, upstream: str, method: str, params: dict[str, Any]) -> Any:
        """Answer a request the upstream sent (sampling, elicitation, roots) through a host."""

    async def upstream_notification(self, upstream: str, method: str, params: Any) -> None:
        """Pass a notification the upstream sent on to the hosts."""


class Upstream:
    """An open client session to one upstream server (see the module docstring)."""

    def __init__(
        self,
        spec: UpstreamSpec,
        router: HostRouter,
        *,
        cancel_watch_sec: float,
        start_timeout_sec: float = 60.0,
        errlog: IO[str] | None = None,
    ) -> None:
        self.spec = spec
        self.name = spec.name
        self.router = router
        self.cancel_watch_sec = cancel_watch_sec
        self.start_timeout_sec = start_timeout_sec
        self.errlog = errlog
        self.link: Link | None = None
        self.session: Any = None
        self.tools: list[dict[str, Any]] = []
        self.capabilities: dict[str, Any] = {}
        self.server_info: dict[str, Any] = {}
        self.instructions: str | None = None
        self.protocol_version: str | None = None

    # -- lifecycle -------------------------------------------------------------
    async def open(self, stack: contextlib.AsyncExitStack) -> None:
        """Start or connect, negotiate and list the tools; the session closes with ``stack``."""
        import asyncio

        from mcp import ClientSession
        from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher

        try:
            read, write = await stack.enter_async_context(self._transport())
            dispatcher = JSONRPCDispatcher(read, write)
            session = await stack.enter_async_context(
                ClientSession(
                    dispatcher=dispatcher,
                    sampling_callback=self._ask("sampling/createMessage"),
                    elicitation_callback=self._ask("elicitation/create"),
                    list_roots_callback=self._roots,
                    message_handler=self._notified,
                )
            )
            async with asyncio.timeout(self.start_timeout_sec):
                init = await session.initialize()
                self.tools = await self._list_all(session, "tools/list", "tools")
        except Exception as exc:  # noqa: BLE001 - every failure to start is one clear line
            raise MCPServerError(
                f"upstream {self.name!r} ({self.spec.label}): could not start: {_leaf(exc)}"
            ) from None
        self.session = session
        self.protocol_version = session.protocol_version
        self.capabilities = _wire(init.capabilities)
        self.server_info = _wire(init.server_info)
        self.instructions = init.instructions
        self.link = Link(
            dispatcher,
            session,
            self.name,
            http=self.spec.url is not None,
            protocol_version=session.protocol_version,
            cancel_watch_sec=self.cancel_watch_sec,
        )
        stack.callback(self._closed)

    def _closed(self) -> None:
        self.link = None

    def _transport(self) -> contextlib.AbstractAsyncContextManager[Any]:
        if self.spec.url is not None:
            from mcp.client.streamable_http import streamable_http_client

            from reviewlab.gateway._http_client import upstream_http_client

            client = upstream_http_client(self.spec.headers)
            return streamable_http_client(self.spec.url, http_client=client)
        from mcp import StdioServerParameters
        from mcp.client.stdio import stdio_client

        params = StdioServerParameters(
            command=self.spec.command[0],
            args=list(self.spec.command[1:]),
            env={**os.environ, **self.spec.env},
            cwd=self.spec.cwd,
        )
        return stdio_client(params, errlog=cast(TextIO, self.errlog or _stderr()))

    async def _list_all(self, session: Any, method: str, key: str) -> list[dict[str, Any]]:
        """Every page of a ``*/list`` answer, as the server sent its entries."""
        items: list[dict[str, Any]] = []
        cursor = None
        while True:
            params: dict[str, Any] = {} if cursor is None else {"cursor": cursor}
            page = await self.request(method, params, session=session)
            items.extend(page.get(key) or [])
            cursor = page.get("nextCursor")
            if not cursor:
                return items

    # -- the gateway's requests --------------------------------------------------
    async def request(
        self,
        method: str,
        params: Mapping[str, Any] | None,
        *,
        on_progress: Callable[[float, float | None, str | None], Awaitable[None]] | None = None,
        session: Any = None,
    ) -> dict[str, Any]:
        """Forward one request as it came and return the server's result as it was sent.

        A JSON-RPC error from the server propagates as the SDK's ``MCPError`` (the host gets
        the same error); a closed session raises :class:`MCPServerError` naming the server.
        """
        session = session or self.session
        if session is None:
            raise MCPServerError(f"upstream {self.name!r} is closed")
        opts: dict[str, Any] = {}
        if on_progress is not None:
            opts["on_progress"] = on_progress
        data: dict[str, Any] = {"method": method, "params": dict(params or {})}
        stamp = getattr(session, "_stamp", None)
        if stamp is not None:  # the negotiated version's envelope, as send_request stamps it
            stamp(data, opts)
        dispatcher = session._dispatcher
        try:
            result = await dispatcher.send_raw_request(method, data["params"], opts)
        except Exception as exc:
            if _closed(exc):
                raise MCPServerError(f"upstream {self.name!r} closed: {exc}") from None
            raise
        return dict(result) if isinstance(result, Mapping) else {}

    async def notify(self, method: str, params: Mapping[str, Any] | None) -> None:
        """Forward one notification from a host (a closed session drops it)."""
        link = self.link
        if link is not None:
            with contextlib.suppress(Exception):
                await link.dispatcher.notify(method, dict(params) if params else None)

    # -- what the server asks ------------------------------------------------------
    def _ask(self, method: str) -> Any:
        async def forward(context: Any, params: Any) -> Any:
            raw = params.model_dump(by_alias=True, mode="json", exclude_none=True)
            return await self._answer(method, raw)

        return forward

    async def _roots(self, context: Any) -> Any:
        return await self._answer("roots/list", {})

    async def _answer(self, method: str, params: dict[str, Any]) -> Any:
        """A host's answer to the server's request, typed as the SDK's callbacks return it."""
        from mcp import types
        from mcp.shared.exceptions import MCPError

        result_type: Any = {
            "sampling/createMessage": types.CreateMessageResult,
            "elicitation/create": types.ElicitResult,
            "roots/list": types.ListRootsResult,
        }[method]
        try:
            raw = await self.router.upstream_request(self.name, method, params)
            tools_reply = isinstance(raw, Mapping) and isinstance(raw.get("content"), list)
            if method == "sampling/createMessage" and tools_reply:
                result_type = types.CreateMessageResultWithTools
            return result_type.model_validate(raw)
        except MCPError as exc:
            return exc.error
        except Exception as exc:  # noqa: BLE001 - the server gets an error answer
            return types.ErrorData(code=types.INTERNAL_ERROR, message=str(exc))

    async def _notified(self, message: Any) -> None:
        if isinstance(message, Exception):
            return  # a transport fault: the calls in flight see it on their own requests
        data = message.model_dump(by_alias=True, mode="json", exclude_none=True)
        method = data.get("method", "")
        if method == "notifications/progress":
            return  # progress of the gateway's own requests reaches their callbacks
        if method == "notifications/cancelled":
            # The SDK has cancelled the request it names (the host's answer to it), which sent
            # the host a cancel under the id the host knows; the upstream's id means nothing there.
            return
        await self.router.upstream_notification(self.name, method, data.get("params"))


def _stderr() -> IO[str]:
    """Where a stdio upstream's stderr goes: ours, or the process's own when ours is not a file
    (a test's capture, a notebook's stream)."""
    try:
        sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        return sys.__stderr__ or open(os.devnull, "w")  # noqa: SIM115 - lives as long as we do
    return sys.stderr


def _wire(model: Any) -> dict[str, Any]:
    """A model as it goes on the wire."""
    return dict(model.model_dump(by_alias=True, mode="json", exclude_none=True))


def _closed(exc: BaseException) -> bool:
    error = getattr(exc, "error", None)
    return getattr(error, "code", None) == -32000


def _leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc
