"""The gateway's HTTP client to an upstream keeps its connection across calls: a POST's event
stream closed right after its answer (as the SDK's client closes it) is read to its end first,
so the next call reuses the connection instead of opening another."""

from __future__ import annotations

import asyncio

from reviewlab.gateway._http_client import upstream_http_client

_EVENT = b"event: message\ndata: {}\n\n"


async def _serve_counting() -> tuple[asyncio.base_events.Server, list[int]]:
    """An HTTP/1.1 server on loopback answering every request with one chunked SSE event and
    the stream's end; ``opened`` counts the TCP connections it accepted."""
    opened: list[int] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        opened.append(1)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                await reader.readexactly(length)
                writer.write(
                    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                    b"transfer-encoding: chunked\r\n\r\n"
                )
                writer.write(b"%x\r\n%s\r\n" % (len(_EVENT), _EVENT))
                await writer.drain()
                await asyncio.sleep(0.005)  # the end comes just after the answer, as it does
                writer.write(b"0\r\n\r\n")
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    return server, opened


async def _calls(client: object, url: str, calls: int) -> None:
    """``calls`` POSTs, each closed as soon as its first event is read (the SDK's way)."""
    for _ in range(calls):
        async with client.stream("POST", url, content=b"{}") as response:  # type: ignore[attr-defined]
            async for line in response.aiter_lines():
                if line.startswith("data:"):
                    break


def test_posts_closed_after_their_answer_share_one_connection():
    """Five calls closed right after their event open one connection with the gateway's client;
    a plain client (as the SDK makes it) opens one per call."""
    import httpx2

    async def run():
        server, opened = await _serve_counting()
        port = server.sockets[0].getsockname()[1]
        url = f"http://127.0.0.1:{port}/mcp"
        async with upstream_http_client() as client:
            await _calls(client, url, 5)
        ours = len(opened)
        opened.clear()
        async with httpx2.AsyncClient() as plain:
            await _calls(plain, url, 5)
        theirs = len(opened)
        server.close()
        await server.wait_closed()
        return ours, theirs

    ours, theirs = asyncio.run(run())
    assert ours == 1
    assert theirs == 5
