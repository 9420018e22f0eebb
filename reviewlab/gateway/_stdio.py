"""The gateway's stdio transport: the host's pipes read and written on the event loop itself.

The SDK's ``stdio_server`` hands every line read, every write and every flush to a worker
thread; a proxy pays that twice per call (measured: about 27 futex calls and 0.4 ms of CPU per
``echo``, benchmarks/bench_gateway.py). Here both pipes are asyncio pipe transports, and the
messages are the SDK's (parsed and dumped exactly as its transport does). Like the SDK's, it
claims the descriptors while it serves: fd 0 reads the null device and fd 1 writes to stderr, so
stray output from a library or a child cannot corrupt the wire; both are restored on exit.
A stdin or stdout that is not a pipe or a socket (a file, a terminal) gets the SDK's transport.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import stat
from collections.abc import AsyncIterator
from typing import Any

RECEIVED_AT_KEY = "reviewlab.received_at"
"""The ASGI scope key under which the HTTP front stamps a request's arrival (monotonic)."""

_LINE_LIMIT = 1 << 26
"""The longest message line read (64 MiB), as large as any result a host accepts."""
_CHUNK = 1 << 20
"""The most read from the pipe at once."""


class Received:
    """A message's arrival on the wire (``at``, monotonic seconds), carried to its handler as
    the SDK's per-message request context: a call's bound counts from it, so a request that
    waited behind others in the gateway is still answered at its bound."""

    __slots__ = ("at",)

    def __init__(self, at: float) -> None:
        self.at = at


def received_at(ctx: Any) -> float | None:
    """When the request of ``ctx`` reached the gateway (stdio or HTTP), if the front stamped it."""
    request = getattr(ctx, "request", None)
    if isinstance(request, Received):
        return request.at
    scope = getattr(request, "scope", None)
    if isinstance(scope, dict):
        found = scope.get(RECEIVED_AT_KEY)
        return float(found) if isinstance(found, int | float) else None
    return None


def pipes_on_stdio() -> bool:
    """Whether fd 0 and fd 1 are both pipes or sockets (what a host launching us gives)."""
    try:
        modes = [os.fstat(fd).st_mode for fd in (0, 1)]
    except OSError:
        return False
    return all(stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) for mode in modes)


@contextlib.asynccontextmanager
async def host_stdio() -> AsyncIterator[tuple[Any, Any]]:
    """``(read_stream, write_stream)`` of SDK session messages over this process's stdio."""
    if not pipes_on_stdio():
        from mcp.server.stdio import stdio_server

        async with stdio_server() as streams:
            yield streams
        return
    import anyio
    import mcp_types
    from mcp.shared.message import ServerMessageMetadata, SessionMessage

    from reviewlab.core._deadline import monotonic_now

    loop = asyncio.get_running_loop()
    saved = [os.dup(0), os.dup(1)]
    wire_in = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    wire_out = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    reader = asyncio.StreamReader(limit=_LINE_LIMIT)
    read_transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(wire_in, "rb", buffering=0)
    )
    write_transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(wire_out, "wb", buffering=0)
    )
    writer = asyncio.StreamWriter(write_transport, protocol, None, loop)
    inbound, read_stream = anyio.create_memory_object_stream[Any](16)
    write_stream, outbound = anyio.create_memory_object_stream[Any](16)

    async def pump_in() -> None:
        # Whole chunks are read and every line in one is stamped with the chunk's arrival, so a
        # burst's last request counts from when it reached us, not from when its turn came.
        pending = b""
        async with inbound:
            while True:
                chunk = await reader.read(_CHUNK)
                if not chunk:
                    return  # the host closed our stdin
                arrived = ServerMessageMetadata(request_context=Received(monotonic_now()))
                *lines, pending = (pending + chunk).split(b"\n")
                if len(pending) > _LINE_LIMIT:
                    pending = b""
                    await inbound.send(ValueError(f"a message line longer than {_LINE_LIMIT}"))
                for line in lines:
                    if not line.strip():
                        continue
                    try:
                        message = mcp_types.jsonrpc_message_adapter.validate_json(
                            line, by_name=False
                        )
                    except Exception as exc:  # noqa: BLE001 - the session answers a parse error
                        await inbound.send(exc)
                        continue
                    await inbound.send(SessionMessage(message, metadata=arrived))

    async def pump_out() -> None:
        async with outbound:
            async for item in outbound:
                text = item.message.model_dump_json(by_alias=True, exclude_unset=True)
                writer.write(text.encode("utf-8") + b"\n")
                await writer.drain()

    tasks = [asyncio.create_task(pump_in()), asyncio.create_task(pump_out())]
    try:
        yield read_stream, write_stream
    finally:
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(BaseException):
                await task
        read_transport.close()
        write_transport.close()
        os.dup2(saved[0], 0)
        os.dup2(saved[1], 1)
        for fd in saved:
            os.close(fd)
