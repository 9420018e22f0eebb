"""The gateway's face to a host: an SDK ``Server`` middleware through which every message passes.

The SDK keeps what it must own — the transport, the ``initialize`` handshake (the gateway lays
the upstreams' capabilities on its answer), ``ping``, and the cancellation a host's
``notifications/cancelled`` applies to the request it names — and the middleware hands every
other request to :meth:`Gateway.handle <reviewlab.gateway._gateway.Gateway.handle>` with its
params as they came, so nothing the SDK would not model is lost on the way.
"""

from __future__ import annotations

import logging
from typing import Any

__all__ = [
    "Front",
]


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
        self.gateway.host_of(ctx)
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
