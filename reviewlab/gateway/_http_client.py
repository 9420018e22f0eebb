"""The gateway's HTTP client to a Streamable HTTP upstream: the SDK's, keeping its connections.

The SDK's client closes a POST's event stream as soon as the stream carried the answer, before
the stream's own end has been read; the connection then cannot go back to its pool, and every
call opens a new TCP connection (measured: one connect, one accept and two closes per ``echo``,
benchmarks/bench_gateway.py). Here a POST's event stream, when closed, first reads what is left
of it for at most :data:`DRAIN_SEC` (a server ends the stream right after the answer, so this
is the terminating chunk already on its way); read to its end, the connection is reused.
A stream that does not end in that time is closed as before.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping
from typing import Any

__all__ = ["DRAIN_SEC", "upstream_http_client"]

DRAIN_SEC = 0.05
"""How long a closed POST event stream is still read, waiting for its end."""


def upstream_http_client(headers: Mapping[str, str] | None = None) -> Any:
    """An ``httpx2.AsyncClient`` with the SDK's timeouts whose POST streams drain on close."""
    import httpx2
    from mcp.shared._httpx_utils import MCP_DEFAULT_SSE_READ_TIMEOUT, MCP_DEFAULT_TIMEOUT

    class Draining(httpx2.AsyncHTTPTransport):  # type: ignore[misc]
        async def handle_async_request(self, request: Any) -> Any:
            response = await super().handle_async_request(request)
            if request.method == "POST":
                response.stream = _drain_on_close(response.stream)
            return response

    timeout = httpx2.Timeout(MCP_DEFAULT_TIMEOUT, read=MCP_DEFAULT_SSE_READ_TIMEOUT)
    return httpx2.AsyncClient(
        transport=Draining(), timeout=timeout, headers=dict(headers) if headers else None
    )


def _drain_on_close(inner: Any) -> Any:
    """``inner`` (a response byte stream) wrapped so that closing it first reads, briefly, what
    is left of it."""
    import httpx2

    class DrainOnClose(httpx2.AsyncByteStream):  # type: ignore[misc]
        def __init__(self) -> None:
            self._parts: AsyncIterator[bytes] | None = None

        async def __aiter__(self) -> AsyncIterator[bytes]:
            self._parts = inner.__aiter__()
            async for part in self._parts:
                yield part

        async def aclose(self) -> None:
            parts = self._parts
            if parts is not None:
                with contextlib.suppress(Exception, asyncio.TimeoutError):
                    async with asyncio.timeout(DRAIN_SEC):
                        async for _ in parts:
                            pass
            await inner.aclose()

    return DrainOnClose()
