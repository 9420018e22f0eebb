"""The gateway's face to a host: an SDK ``Server`` middleware through which every message passes.

The SDK keeps what it must own — the transport, the ``initialize`` handshake (the gateway lays
the upstreams' capabilities on its answer), ``ping``, and the cancellation a host's
``notifications/cancelled`` applies to the request it names — and the middleware hands every
other request to :meth:`Gateway.handle <reviewlab.gateway._gateway.Gateway.handle>` with its
params as they came, so nothing the SDK would not model is lost on the way.
"""

from __future__ import annotations

import contextlib
import logging
from typing import Any

log = logging.getLogger("reviewlab.gateway")

_SDK_OWNED = frozenset({"initialize", "ping", "server/discover"})


class Front:
    """The middleware (``Server.middleware = [Front(gateway)]``)."""

    def __init__(self, gateway: Any) -> None:
        self.gateway = gateway

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        if ctx.request_id is None:  # a notification: the SDK applies it, the upstreams may hear it
            await self.gateway.host_notification(ctx)
            return await call_next(ctx)
        self.gateway.hosts.of(ctx)
        if ctx.method in _SDK_OWNED:
            result = await call_next(ctx)
            if ctx.method == "initialize" and isinstance(result, dict):
                result = {**result, "capabilities": self.gateway.capabilities()}
            return result
        try:
            return await self.gateway.handle(ctx)
        except Exception as exc:
            from mcp.shared.exceptions import MCPError

            if isinstance(exc, MCPError):
                raise  # an upstream's or the host's own error, passed on as it is
            log.exception("reviewlab gateway: %s failed inside the gateway", ctx.method)
            raise MCPError(-32603, f"reviewlab gateway: internal error: {exc!r}") from None


def progress_forwarder(ctx: Any, token: Any) -> Any:
    """An ``on_progress`` that reports to the host under its own token until it is answered."""

    async def forward(progress: float, total: float | None, message: str | None) -> None:
        if getattr(forward, "answered", False):
            return  # the host's request is answered: progress for it would be a protocol error
        with contextlib.suppress(Exception):
            await ctx.session.send_progress_notification(
                token, progress, total, message, related_request_id=ctx.request_id
            )

    return forward
