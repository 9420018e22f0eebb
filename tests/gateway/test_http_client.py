"""The gateway's HTTP client to an upstream: requests go out whole, answers come back however
they are delimited, connections are kept across calls (a POST's event stream closed right after
its answer is read to its end first) and never reused once dead, and failures are httpx errors."""

from __future__ import annotations

import asyncio
import contextlib

from reviewlab.gateway._http_client import upstream_http_client

_EVENT = b"event: message\ndata: {}\n\n"


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

    writers: list[asyncio.StreamWriter] = []  # kept alive, so no two share an id

    async def event_then_end(writer: asyncio.StreamWriter, index: int) -> bool:
        writers.append(writer)
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
            b"transfer-encoding: chunked\r\n\r\n"
        )
        writer.write(b"%x\r\n%s\r\n" % (len(_EVENT), _EVENT))
        await writer.drain()
        await asyncio.sleep(0.005)  # the end comes just after the answer, as it does
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return True

    def connections() -> int:
        return len({id(writer) for writer in writers})

    async def run():
        server, url, _ = await _serve(event_then_end)
        async with upstream_http_client() as client:
            await _calls(client, url, 5)
        ours = connections()
        writers.clear()
        async with httpx2.AsyncClient() as plain:
            await _calls(plain, url, 5)
        theirs = connections()
        server.close()
        await server.wait_closed()
        return ours, theirs

    ours, theirs = asyncio.run(run())
    assert ours == 1
    assert theirs == 5


async def _serve(answer) -> tuple[asyncio.base_events.Server, str, list[bytes]]:
    """A loopback server that reads each request (head and body) into ``seen`` and lets
    ``answer(writer, index)`` write the response; its URL."""
    seen: list[bytes] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                seen.append(head + await reader.readexactly(length))
                if not await answer(writer, len(seen) - 1):
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    return server, f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/mcp?x=1", seen


def _run(answer, requests):
    """Run ``requests(client, url)`` against a server answering with ``answer``; the requests'
    result and what the server received."""

    async def run():
        server, url, seen = await _serve(answer)
        try:
            async with upstream_http_client({"X-Test": "yes"}) as client:
                return await requests(client, url), seen
        finally:
            server.close()

    return asyncio.run(run())


def test_a_request_goes_out_whole_and_a_length_delimited_answer_comes_back():
    """The request line keeps the path and query, the host, the client's headers and the
    body's exact length; a content-length answer is read whole."""

    async def answer(writer, index):
        body = b'{"ok": true}'
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n")
        writer.write(b"content-length: %d\r\n\r\n%s" % (len(body), body))
        await writer.drain()
        return True

    async def requests(client, url):
        response = await client.post(url, content=b'{"a": 1}')
        return response.status_code, response.json()

    (status, body), seen = _run(answer, requests)
    assert (status, body) == (200, {"ok": True})
    head, _, sent = seen[0].partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    assert lines[0] == b"POST /mcp?x=1 HTTP/1.1"
    assert b"x-test: yes" in [line.lower() for line in lines]
    assert any(line.lower().startswith(b"host: 127.0.0.1:") for line in lines)
    assert b"content-length: 8" in [line.lower() for line in lines]
    assert sent == b'{"a": 1}'


def test_an_answer_delimited_by_the_connections_end_is_read_to_it():
    """With neither a length nor chunks, the body is everything until the server closes."""

    async def answer(writer, index):
        writer.write(b"HTTP/1.1 202 Accepted\r\nconnection: close\r\n\r\naccepted")
        await writer.drain()
        return False  # close

    async def requests(client, url):
        response = await client.post(url, content=b"{}")
        return response.status_code, response.content

    (status, body), _ = _run(answer, requests)
    assert (status, body) == (202, b"accepted")


def test_a_connection_the_server_closed_while_idle_is_not_used_again():
    """The server closes after each answer although it said keep-alive: the next request goes
    out on a new connection and is answered, rather than failing on the dead one."""
    connections = []
    closed = asyncio.Event()

    async def answer(writer, index):
        connections.append(writer)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
        await writer.drain()
        writer.close()
        await writer.wait_closed()
        closed.set()
        return False

    async def requests(client, url):
        first = await client.post(url, content=b"1")
        await asyncio.wait_for(closed.wait(), 10)  # the server has closed the idle connection
        second = await client.post(url, content=b"2")
        return first.content, second.content

    (first, second), seen = _run(answer, requests)
    assert (first, second) == (b"ok", b"ok")
    assert len(seen) == 2 and len(set(map(id, connections))) == 2


def test_a_read_cancelled_mid_stream_closes_the_connection():
    """Cancelling a read in the middle of a streamed answer (the 2026 revision's cancel) closes
    the TCP connection, so the server sees the request end."""

    async def scenario():
        gone = asyncio.Event()

        async def handle(reader, writer):
            await reader.readuntil(b"\r\n\r\n")
            await reader.readexactly(2)
            writer.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n")
            writer.write(b"6\r\nevent:\r\n")
            await writer.drain()
            await reader.read()  # returns b"" once the client closed
            gone.set()

        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/mcp"
        async with upstream_http_client() as client:

            async def read_all():
                async with client.stream("POST", url, content=b"{}") as response:
                    async for _ in response.aiter_bytes():
                        pass

            task = asyncio.create_task(read_all())
            await asyncio.sleep(0.1)
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            await asyncio.wait_for(gone.wait(), 5)
        server.close()
        return gone.is_set()

    assert asyncio.run(scenario())


def test_failures_are_httpx_errors_naming_what_went_wrong():
    """A refused connection is a ConnectError, a malformed answer a RemoteProtocolError, and a
    silent server a ReadTimeout after the read timeout."""
    import httpx2

    async def garbage(writer, index):
        writer.write(b"NOT HTTP AT ALL\r\n\r\n")
        await writer.drain()
        return True

    async def silent(writer, index):
        await asyncio.sleep(5)
        return False

    async def post(client, url):
        try:
            await client.post(url, content=b"{}", timeout=httpx2.Timeout(5, read=0.2))
        except httpx2.HTTPError as exc:
            return exc
        return None

    error, _ = _run(garbage, post)
    assert isinstance(error, httpx2.RemoteProtocolError), error
    error, _ = _run(silent, post)
    assert isinstance(error, httpx2.ReadTimeout), error

    async def refused():
        async with upstream_http_client() as client:
            port = _free_port()
            return await post(client, f"http://127.0.0.1:{port}/mcp")

    error = asyncio.run(refused())
    assert isinstance(error, httpx2.ConnectError) and "127.0.0.1" in str(error)


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


_ANSWER = b'{"jsonrpc":"2.0","id":7,"result":{"content":[]}}'
_NOTICE = b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}'


def _sse_answer(events: list[bytes]):
    """A server answering each request with an event stream of ``events`` (chunked, one chunk
    each, then the stream's end)."""

    async def answer(writer, index):
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
            b"mcp-session-id: s1\r\ntransfer-encoding: chunked\r\n\r\n"
        )
        for event in events:
            writer.write(b"%x\r\n%s\r\n" % (len(event), event))
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return True

    return answer


async def _two_posts(client, url):
    """Two POSTs read whole: each one's content type and body."""
    out = []
    for _ in range(2):
        response = await client.post(url, content=b"{}")
        out.append((response.headers["content-type"], response.content))
    return out


def test_a_lone_answer_after_a_priming_event_is_handed_on_as_json_on_a_kept_connection():
    """A stream of a priming event (an id, no data) and then the answer reaches the SDK as the
    answer's JSON body; the connection carries the next call too."""
    opened = []
    events = [b"id: e1\r\nretry: 1000\r\ndata: \r\n\r\n", b"event: message\r\nid: e2\r\ndata: "]
    events[1] += _ANSWER + b"\r\n\r\n"
    inner = _sse_answer(events)

    async def answer(writer, index):
        opened.append(id(writer))
        return await inner(writer, index)

    answers, seen = _run(answer, _two_posts)
    assert answers == [("application/json", _ANSWER)] * 2
    assert len(seen) == 2 and len(set(opened)) == 1


def test_a_stream_with_anything_before_the_answer_stays_a_stream_byte_for_byte():
    """A notification before the answer: the SDK gets the event stream, every byte in order."""
    events = [b"data: " + _NOTICE + b"\n\n", b"data: " + _ANSWER + b"\n\n"]
    answers, _ = _run(_sse_answer(events), _two_posts)
    assert answers == [("text/event-stream", b"".join(events))] * 2
