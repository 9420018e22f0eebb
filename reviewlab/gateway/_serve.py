"""Serving a gateway: over stdio (a host launches it) or Streamable HTTP (a host connects).

Lifecycle: :func:`run_gateway` opens the :class:`~reviewlab.gateway._gateway.Gateway` (its
upstreams started, its policy watched), serves until the host closes stdio, the process gets
SIGTERM, SIGINT or SIGHUP, the process that started it dies, or the HTTP server stops; then it
closes every host session's recording and the upstreams (stdio servers terminated), so nothing
is left behind.

Safe by default over HTTP: loopback unless told otherwise, and a non-loopback address only with
a bearer token (``--token-file``); the SDK's DNS-rebinding protection checks ``Host`` and
``Origin`` (allowed: the address it listens on, and on loopback ``localhost``/``127.0.0.1``/
``[::1]``); ``/metrics`` serves the Prometheus text, and takes the token too when there is one.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import ipaddress
import logging
import signal
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from reviewlab.gateway._gateway import Gateway

log = logging.getLogger("reviewlab.gateway")

_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


@dataclass(frozen=True)
class Listen:
    """Where the HTTP front listens, and the token it asks for (``None``: none)."""

    host: str = "127.0.0.1"
    port: int = 8765
    token: str | None = None

    def __post_init__(self) -> None:
        if not is_loopback(self.host) and not self.token:
            raise ValueError(
                f"--listen {self.host}:{self.port}: a non-loopback address needs a bearer "
                "token (--token-file)"
            )

    @property
    def url(self) -> str:
        """The MCP endpoint a host connects to."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/mcp"


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine only (``localhost``, 127.0.0.0/8, ``::1``)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


async def run_gateway(
    gateway: Gateway,
    *,
    listen: Listen | None = None,
    metrics_listen: tuple[str, int] | None = None,
    ready: Callable[[str], None] | None = None,
) -> None:
    """Serve ``gateway`` until the host leaves or a stop signal comes (see the module docstring).

    ``ready(where)`` is called once the gateway serves (``where``: ``stdio`` or the URL).
    """
    loop = asyncio.get_running_loop()
    main = asyncio.current_task()
    assert main is not None
    installed = []
    for sig in _SIGNALS:
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(sig, main.cancel)
            installed.append(sig)
    orphaned = asyncio.get_running_loop().create_task(_watch_parent(main.cancel))
    try:
        async with gateway:
            gateway.metrics.watch_loose(
                {name: _loose_of(ex) for name, ex in gateway.executors.items()}
            )
            servers = []
            if metrics_listen is not None:
                servers.append(_metrics_server(gateway, *metrics_listen))
            if listen is None:
                await _serve_stdio(gateway, servers, ready)
            else:
                await _serve_http(gateway, listen, servers, ready)
    except asyncio.CancelledError:
        if main.cancelling() == 0:
            raise
        # a stop signal: the gateway's block has closed the recordings and the upstreams
    finally:
        orphaned.cancel()
        for sig in installed:
            loop.remove_signal_handler(sig)


async def _watch_parent(stop: Callable[[], Any], poll_sec: float = 0.25) -> None:
    """Stop (as a stop signal does) once the process that started the gateway is gone: it
    was re-parented. A gateway already running under init is not watched."""
    import os

    original = os.getppid()
    if original == 1:
        return
    while True:
        await asyncio.sleep(poll_sec)
        if os.getppid() != original:
            stop()
            return


def _loose_of(executor: Any) -> Callable[[], int]:
    return lambda: int(executor.ledger.loose)


async def _serve_stdio(gateway: Gateway, extra: list[Any], ready: Any) -> None:
    from reviewlab.gateway._stdio import host_stdio

    server = gateway.server()
    async with host_stdio() as (read, write):
        tasks = [asyncio.create_task(s.serve()) for s in extra]
        if ready is not None:
            ready("stdio")
        try:
            await server.run(read, write, server.create_initialization_options())
        finally:
            for s in extra:
                s.should_exit = True
            for task in tasks:
                with contextlib.suppress(BaseException):
                    await task


async def _serve_http(gateway: Gateway, listen: Listen, extra: list[Any], ready: Any) -> None:
    from mcp.server.transport_security import TransportSecuritySettings
    from starlette.responses import Response
    from starlette.routing import Route

    async def metrics(request: Any) -> Any:
        from reviewlab.gateway._metrics import METRICS_CONTENT_TYPE

        return Response(gateway.metrics.render(), media_type=METRICS_CONTENT_TYPE)

    if is_loopback(listen.host):
        hosts = ["127.0.0.1:*", "localhost:*", "[::1]:*"]
        origins = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]
    else:
        hosts = [f"{listen.host}:*"]
        origins = [f"http://{listen.host}:*", f"https://{listen.host}:*"]
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )
    app = gateway.server().streamable_http_app(
        host=listen.host,
        transport_security=security,
        custom_starlette_routes=[Route("/metrics", metrics)],
    )
    from reviewlab.gateway._framing import JsonWhenAlone

    framed = JsonWhenAlone(app)
    asgi: Any = Stamped(framed if listen.token is None else BearerToken(framed, listen.token))
    http = _uvicorn(asgi, listen.host, listen.port)
    tasks = [asyncio.create_task(s.serve()) for s in extra]
    serving = asyncio.create_task(http.serve())
    try:
        while not http.started:
            if serving.done():
                serving.result()  # the port is taken: its error, at once
                raise OSError(f"cannot listen on {listen.host}:{listen.port}")
            await asyncio.sleep(0.02)
        if ready is not None:
            ready(listen.url)
        await serving
    finally:
        http.should_exit = True
        for s in extra:
            s.should_exit = True
        for task in (serving, *tasks):
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(task, 5.0)


class Stamped:
    """ASGI middleware: stamps each request's arrival in its scope (a call's bound counts
    from it: :func:`~reviewlab.gateway._stdio.received_at`)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        from reviewlab.core._deadline import monotonic_now
        from reviewlab.gateway._stdio import RECEIVED_AT_KEY

        if scope.get("type") == "http":
            scope[RECEIVED_AT_KEY] = monotonic_now()
        await self.app(scope, receive, send)


class BearerToken:
    """ASGI middleware: every HTTP request must carry ``Authorization: Bearer <token>``."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope.get("type") == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"text/plain"),
                            (b"www-authenticate", b'Bearer realm="reviewlab-gateway"'),
                        ],
                    }
                )
                body = b"missing or wrong bearer token\n"
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def _metrics_server(gateway: Gateway, host: str, port: int) -> Any:
    """A small HTTP server for ``/metrics`` alone (``--metrics HOST:PORT``)."""
    from starlette.applications import Starlette
    from starlette.responses import Response
    from starlette.routing import Route

    from reviewlab.gateway._metrics import METRICS_CONTENT_TYPE

    async def metrics(request: Any) -> Any:
        return Response(gateway.metrics.render(), media_type=METRICS_CONTENT_TYPE)

    return _uvicorn(Starlette(routes=[Route("/metrics", metrics)]), host, port)


def _uvicorn(app: Any, host: str, port: int) -> Any:
    """A uvicorn server that leaves the signals to :func:`run_gateway` (which stops it)."""
    import uvicorn

    class Quiet(uvicorn.Server):
        def capture_signals(self) -> Any:
            return contextlib.nullcontext()

    return Quiet(uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on"))
