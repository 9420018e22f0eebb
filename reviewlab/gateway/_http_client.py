"""The gateway's HTTP client to a Streamable HTTP upstream: lean HTTP/1.1, connections kept.

The SDK's Streamable HTTP client speaks the protocol (sessions, versions, streams, cancels) over an
``httpx2.AsyncClient``; that client's default transport (httpcore and h11, both pure Python) was
the largest part of the gateway's CPU per call over HTTP (a fifth of it, measured with py-spy on
benchmarks/bench_gateway.py). For a plain ``http://`` upstream — a server on this machine or
the local network, where those milliseconds are the latency — :class:`LeanTransport` carries
the same requests over keep-alive HTTP/1.1 connections of its own, parsed by ``httptools``
(uvicorn's C parser); ``https://`` keeps httpx's transport, where the network dwarfs it.

Both keep their connections. The SDK's client closes a POST's event stream as soon as it has
read the answer, before the stream's end; a response closed early is first read to its end for
at most :data:`DRAIN_SEC` (a server ends the stream right after the answer, so the end is on its
way), and a connection whose response was read to its end goes back to the pool. One that does
not end in time, or is cancelled, or fails, is closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
from collections import deque
from collections.abc import AsyncIterator, Mapping
from typing import Any

from reviewlab.gateway._framing import complete_events, is_priming, lone_answer

DRAIN_SEC = 0.05
"""How long a response closed before its end is still read, waiting for its end."""


def upstream_http_client(headers: Mapping[str, str] | None = None) -> Any:
    """An ``httpx2.AsyncClient`` with the SDK's timeouts: :class:`LeanTransport` for
    ``http://`` URLs (when ``httptools`` is installed), httpx's own (draining early-closed POST
    streams) for ``https://``."""
    import httpx2
    from mcp.shared._httpx_utils import MCP_DEFAULT_SSE_READ_TIMEOUT, MCP_DEFAULT_TIMEOUT

    class Draining(httpx2.AsyncHTTPTransport):  # type: ignore[misc]
        async def handle_async_request(self, request: Any) -> Any:
            response = await super().handle_async_request(request)
            if request.method == "POST":
                response.stream = _drain_on_close(response.stream)
            return response

    timeout = httpx2.Timeout(MCP_DEFAULT_TIMEOUT, read=MCP_DEFAULT_SSE_READ_TIMEOUT)
    # httptools comes with the mcp extra; without it every URL takes httpx's transport
    lean = importlib.util.find_spec("httptools") is not None
    return httpx2.AsyncClient(
        transport=Draining(),
        mounts={"http://": LeanTransport()} if lean else None,
        timeout=timeout,
        headers=dict(headers) if headers else None,
    )


def _transport_base() -> type:
    import httpx2

    return httpx2.AsyncBaseTransport  # type: ignore[no-any-return]


class LeanTransport(_transport_base()):  # type: ignore[misc]
    """An ``httpx2`` transport for ``http://``: HTTP/1.1 over pooled keep-alive connections."""

    def __init__(self) -> None:
        self._idle: dict[tuple[str, int], deque[_Connection]] = {}

    async def handle_async_request(self, request: Any) -> Any:
        import httpx2

        origin = (request.url.host, request.url.port or 80)
        timeouts = request.extensions.get("timeout", {})
        body = await request.aread()
        connection = await self._connection(origin, timeouts.get("connect"))
        read = timeouts.get("read")
        try:
            connection.send(_head(request, len(body)) + body)
            status, headers = await connection.head(read)
            held, answer = b"", None
            if request.method == "POST" and status == 200 and _event_stream(headers):
                held, answer = await _first_of_stream(connection, read)
        except BaseException:
            connection.close()
            raise
        if answer is not None:  # a lone answer: handed on as the JSON body it could have been
            headers = [(n, v) for n, v in headers if n.lower() not in _REFRAMED]
            length = b"%d" % len(answer)
            headers += [(b"content-type", b"application/json"), (b"content-length", length)]
            stream = _Body(connection, self, origin, read, prefix=answer, only_prefix=True)
        else:
            stream = _Body(connection, self, origin, read, prefix=held)
        return httpx2.Response(
            status, headers=headers, stream=stream, extensions={"http_version": b"HTTP/1.1"}
        )

    async def _connection(self, origin: tuple[str, int], timeout: float | None) -> _Connection:
        idle = self._idle.get(origin)
        while idle:
            connection = idle.pop()
            if connection.reusable() and connection.quiet():
                return connection
            connection.close()
        return await _Connection.open(origin, timeout)

    def release(self, origin: tuple[str, int], connection: _Connection) -> None:
        """Take back a connection whose response was read to its end."""
        if connection.reusable():
            self._idle.setdefault(origin, deque()).append(connection)
        else:
            connection.close()

    async def aclose(self) -> None:
        for idle in self._idle.values():
            for connection in idle:
                connection.close()
        self._idle.clear()


_REFRAMED = {b"content-type", b"content-length", b"transfer-encoding"}


def _event_stream(headers: list[tuple[bytes, bytes]]) -> bool:
    """Whether a response's headers say it is an event stream."""
    return any(
        name.lower() == b"content-type" and value.lower().startswith(b"text/event-stream")
        for name, value in headers
    )


async def _first_of_stream(connection: _Connection, read: Any) -> tuple[bytes, bytes | None]:
    """Read an event stream up to its first event with data: the bytes read, and the JSON-RPC
    answer that event carries when it is a lone answer (else ``None``). The SDK resumes no POST
    for the gateway, so priming events (an id to resume from) before the answer, and the
    answer's own id, are nothing it would use."""
    held = b""
    async for chunk in connection.chunks(read):
        held += chunk
        for event in complete_events(held):
            if not is_priming(event):
                return held, lone_answer(event, ids_unused=True)
    return held, None


def _head(request: Any, length: int) -> bytes:
    """The request line and headers, with the body's length."""
    target = request.url.raw_path or b"/"
    lines = [b"%s %s HTTP/1.1" % (request.method.encode(), target)]
    host = (
        request.url.host.encode()
        if request.url.port is None
        else b"%s:%d"
        % (
            request.url.host.encode(),
            request.url.port,
        )
    )
    if "host" not in request.headers:
        lines.append(b"host: " + host)
    for name, value in request.headers.raw:
        if name.lower() not in (b"content-length", b"transfer-encoding"):
            lines.append(name + b": " + value)
    lines.append(b"content-length: %d" % length)
    return b"\r\n".join(lines) + b"\r\n\r\n"


class _Connection(asyncio.Protocol):
    """One keep-alive HTTP/1.1 connection; one response at a time, parsed as it arrives."""

    def __init__(self) -> None:
        import httptools

        self._parser_type = httptools.HttpResponseParser
        self._transport: asyncio.Transport | None = None
        self._lost = False
        self._error: Exception | None = None
        self._changed = asyncio.Event()
        self._reset()

    @classmethod
    async def open(cls, origin: tuple[str, int], timeout: float | None) -> _Connection:
        import httpx2

        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):
                _, connection = await loop.create_connection(cls, origin[0], origin[1])
        except TimeoutError:
            raise httpx2.ConnectTimeout(f"connecting to {origin[0]}:{origin[1]}") from None
        except OSError as exc:
            raise httpx2.ConnectError(f"{origin[0]}:{origin[1]}: {exc}") from exc
        return connection

    def _reset(self) -> None:
        self._parser = self._parser_type(self)
        self._status = 0
        self._headers: list[tuple[bytes, bytes]] = []
        self._headers_done = False
        self._chunks: deque[bytes] = deque()
        self._complete = False
        self._keep_alive = False

    # -- asyncio.Protocol ---------------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport
        with contextlib.suppress(OSError, AttributeError):
            import socket

            sock = transport.get_extra_info("socket")
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def data_received(self, data: bytes) -> None:
        import httptools

        try:
            self._parser.feed_data(data)
        except httptools.HttpParserError as exc:
            self._error = exc
            self.close()
        self._changed.set()

    def connection_lost(self, exc: Exception | None) -> None:
        self._lost = True
        if self._headers_done and not self._complete and self._until_close():
            self._complete = True  # a body delimited by the connection's end: this is its end
        self._changed.set()

    def _until_close(self) -> bool:
        """Whether the response's body runs to the connection's end (neither a length nor
        chunks)."""
        names = {name.lower() for name, _ in self._headers}
        return b"content-length" not in names and b"transfer-encoding" not in names

    # -- httptools callbacks ------------------------------------------------------------------
    def on_header(self, name: bytes, value: bytes) -> None:
        self._headers.append((name, value))

    def on_headers_complete(self) -> None:
        self._status = self._parser.get_status_code()
        self._headers_done = True

    def on_body(self, body: bytes) -> None:
        self._chunks.append(body)

    def on_message_complete(self) -> None:
        self._keep_alive = self._parser.should_keep_alive()  # the parser forgets it afterwards
        self._complete = True

    # -- the client's side --------------------------------------------------------------------
    def send(self, data: bytes) -> None:
        assert self._transport is not None
        self._reset()
        self._transport.write(data)

    async def _wait(self, timeout: float | None, what: str) -> None:
        """Wait for more of the response; raise when the connection failed or ``timeout`` ran
        out."""
        import httpx2

        if self._error is not None:
            raise httpx2.RemoteProtocolError(f"malformed response: {self._error}")
        if self._lost:
            raise httpx2.RemoteProtocolError(f"the server closed the connection {what}")
        self._changed.clear()
        try:
            async with asyncio.timeout(timeout):
                await self._changed.wait()
        except TimeoutError:
            raise httpx2.ReadTimeout(f"no response data within {timeout} s") from None

    async def head(self, timeout: float | None) -> tuple[int, list[tuple[bytes, bytes]]]:
        while not self._headers_done:
            await self._wait(timeout, "before its response")
        return self._status, self._headers

    async def chunks(self, timeout: float | None) -> AsyncIterator[bytes]:
        while True:
            while self._chunks:
                yield self._chunks.popleft()
            if self._complete:
                return
            await self._wait(timeout, "in the middle of its response")

    @property
    def complete(self) -> bool:
        return self._complete and not self._chunks

    def reusable(self) -> bool:
        return not self._lost and self._error is None and self._complete and self._keep_alive

    def quiet(self) -> bool:
        """Whether an idle connection has nothing waiting to be read (a server that closed it
        while it sat in the pool has sent its end, which the loop may not have seen yet)."""
        import select

        sock = self._transport.get_extra_info("socket") if self._transport else None
        if sock is None:
            return False
        try:
            readable, _, _ = select.select([sock], [], [], 0)
        except (OSError, ValueError):
            return False
        return not readable

    def close(self) -> None:
        self._lost = True
        if self._transport is not None:
            self._transport.close()


def _stream_base() -> type:
    import httpx2

    return httpx2.AsyncByteStream  # type: ignore[no-any-return]


class _Body(_stream_base()):  # type: ignore[misc]
    """A response's body; closing it returns its connection to the pool when it was read to its
    end (after reading, for at most :data:`DRAIN_SEC`, what is left)."""

    def __init__(
        self,
        connection: _Connection,
        pool: LeanTransport,
        origin: tuple[str, int],
        read: Any,
        *,
        prefix: bytes = b"",
        only_prefix: bool = False,
    ) -> None:
        self._connection = connection
        self._pool = pool
        self._origin = origin
        self._read = read
        self._prefix = prefix
        self._only_prefix = only_prefix
        self._closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        if self._prefix:
            yield self._prefix
        if self._only_prefix:
            return  # the rest (the stream's end) is read when the body is closed
        try:
            async for chunk in self._connection.chunks(self._read):
                yield chunk
        except GeneratorExit:
            raise  # the reader stopped early: aclose() decides the connection's fate
        except BaseException:
            # failed, timed out or cancelled mid-response (a cancel at the 2026 revision is
            # this very close): the connection cannot carry another response
            self._closed = True
            self._connection.close()
            raise

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        connection = self._connection
        if not connection.complete:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(DRAIN_SEC):
                    async for _ in connection.chunks(DRAIN_SEC):
                        pass
        if connection.complete:
            self._pool.release(self._origin, connection)
        else:
            connection.close()


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
