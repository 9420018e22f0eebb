"""The gateway: one MCP server in front of the upstream servers, transparent except for the bound.

Lifecycle: ``async with Gateway(...)`` opens every upstream (:mod:`._upstream`), starts the
policy file's watch, and yields; :meth:`Gateway.server` is the SDK ``Server`` a transport serves
(:mod:`._serve`). Every request a host sends is passed on as it came (the upstream's answer or
JSON-RPC error comes back as it was sent), with three exceptions: ``initialize`` is the SDK's
handshake with the upstreams' capabilities, ``tools/list`` shows the host's names, and
``tools/call`` is bounded (:mod:`._calls`). What an upstream sends on its own goes to the host
whose request is in flight there (its own stream), else to every host. Leaving the block
closes the hosts' recordings and the upstreams (a stdio server is terminated).

Host sessions: each connection (the stdio host, or one ``Mcp-Session-Id`` over HTTP) is one
:class:`~reviewlab.gateway._hosts.HostSession` (:mod:`._hosts`), recorded as one episode; the
upstreams are shared by every host session (docs/gateway.md, "Several hosts").
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from reviewlab.gateway._config import GatewayLimits, UpstreamSpec
from reviewlab.gateway._front import progress_forwarder
from reviewlab.gateway._hosts import HostSessions, recording_header
from reviewlab.gateway._metrics import GatewayMetrics
from reviewlab.gateway._policy_file import PolicyFile
from reviewlab.gateway._routes import (
    Route,
    effective_policy,
    host_names,
    shown_entry,
)
from reviewlab.gateway._upstream import Upstream
from reviewlab.live._aio import AsyncBoundedExecutor
from reviewlab.live.mcp import MCPServerError

log = logging.getLogger("reviewlab.gateway")

_LIST_METHODS = {
    "resources/list": "resources",
    "resources/templates/list": "resourceTemplates",
    "prompts/list": "prompts",
}
_CAPABILITY_OF = {
    "resources/list": "resources",
    "resources/templates/list": "resources",
    "resources/read": "resources",
    "resources/subscribe": "resources",
    "resources/unsubscribe": "resources",
    "prompts/list": "prompts",
    "prompts/get": "prompts",
    "completion/complete": "completions",
    "logging/setLevel": "logging",
}


class Gateway:
    """Fronts ``specs`` for any MCP host (see the module docstring).

    ``policy`` is the policy file (or spec) in force; ``record`` the folder of the recording
    (``None``: nothing recorded); ``record_args`` keeps the calls' arguments (default: their
    hash and size only); ``limits`` bound the calls beyond the policy (a session budget, the
    loose-call cap per upstream, the cancel watch, the grace); ``errlog`` takes the stderr of
    the stdio upstreams (default: the gateway's own). :attr:`metrics` counts what the calls
    did, for ``--metrics``.
    """

    def __init__(
        self,
        specs: Sequence[UpstreamSpec],
        *,
        policy: PolicyFile,
        record: str | Path | None = None,
        record_args: bool = False,
        limits: GatewayLimits | None = None,
        errlog: IO[str] | None = None,
    ) -> None:
        self.specs = tuple(specs)
        self.policy_file = policy
        self.record_dir = None if record is None else Path(record)
        self.record_args = record_args
        self.limits = limits if limits is not None else GatewayLimits()
        self.metrics = GatewayMetrics()
        watch = self.limits.cancel_watch_sec
        self.upstreams = {
            spec.name: Upstream(spec, self, cancel_watch_sec=watch, errlog=errlog)
            for spec in self.specs
        }
        self.executors = {
            name: AsyncBoundedExecutor(
                loose_cap=self.limits.loose_cap, grace_sec=self.limits.grace_sec, name=f"gw-{name}"
            )
            for name in self.upstreams
        }
        self.tools: dict[str, Route] = {}
        self.prompts: dict[str, Route] = {}
        self.resource_owner: dict[str, str] = {}
        self.hosts = HostSessions(
            budget_sec=self.limits.session_budget_sec,
            record_dir=self.record_dir,
            header=lambda: recording_header(self.upstreams, self.record_args, self.tools),
        )
        self.inflight: dict[str, list[Any]] = {name: [] for name in self.upstreams}
        self.asked: dict[str, tuple[str, Any]] = {}  # host-side token -> (upstream, its token)
        self._asks = itertools.count(1)
        self._stack: contextlib.AsyncExitStack | None = None
        self._policy_in_force: tuple[Any, Any] | None = None  # (policy read, with annotations)

    # -- lifecycle -------------------------------------------------------------
    async def __aenter__(self) -> Gateway:
        if self.record_dir is not None:
            # Before any call: imported lazily by the first recorded answer, the recording
            # package (about 1 s: it loads pandas) stalled every call then in flight.
            import reviewlab.recording  # noqa: F401
        stack = contextlib.AsyncExitStack()
        await stack.__aenter__()
        try:
            for upstream in self.upstreams.values():
                await upstream.open(stack)
            self._set_tools({name: up.tools for name, up in self.upstreams.items()})
            watch = asyncio.get_running_loop().create_task(self.policy_file.watch())
            stack.callback(watch.cancel)
        except BaseException:
            await stack.aclose()
            raise
        self._stack = stack
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.hosts.close_all()
        if self._stack is not None:
            stack, self._stack = self._stack, None
            with contextlib.suppress(Exception):
                await stack.aclose()

    @property
    def policy(self) -> Any:
        """The policy in force, with the upstreams' annotations laid under it (kept while the
        file's policy is the same object, so a call pays for the merge only after a reload).

        The cache holds the policy it was made from and compares it with ``is``: an ``id()``
        could be reused by a new policy once the old one is freed, and serve a stale merge."""
        current = self.policy_file.current
        cached = self._policy_in_force
        if cached is None or cached[0] is not current:
            cached = self._policy_in_force = (current, effective_policy(current, self.tools))
        return cached[1]

    def _set_tools(self, listings: Mapping[str, list[dict[str, Any]]]) -> None:
        self.tools = host_names(listings)
        self._policy_in_force = None

    # -- the SDK server ------------------------------------------------------------
    def server(self) -> Any:
        """The SDK ``Server`` the transports serve: every request goes through :meth:`handle`."""
        from mcp.server.lowlevel.server import Server

        from reviewlab.gateway._front import Front

        info = self._server_info()
        server: Any = Server(
            info.get("name", "reviewlab-gateway"),
            version=info.get("version", ""),
            instructions=self._instructions(),
        )
        server.middleware = [Front(self)]
        return server

    def capabilities(self) -> dict[str, Any]:
        """The capabilities the host is offered: the upstream's (one), or their union."""
        merged: dict[str, Any] = {}
        for upstream in self.upstreams.values():
            for key, value in upstream.capabilities.items():
                if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
                    merged[key] = {**merged[key], **value}
                else:
                    merged.setdefault(key, value)
        return merged

    def _server_info(self) -> dict[str, Any]:
        if len(self.upstreams) == 1:
            return dict(next(iter(self.upstreams.values())).server_info)
        return {"name": "reviewlab-gateway", "version": _version()}

    def _instructions(self) -> str | None:
        parts = [up.instructions for up in self.upstreams.values() if up.instructions]
        return "\n\n".join(parts) if parts else None

    # -- requests from a host ---------------------------------------------------------
    async def handle(self, ctx: Any) -> dict[str, Any]:
        """The answer to one host request (see the module docstring)."""
        from reviewlab.gateway._calls import bounded_tools_call

        method = ctx.method
        params = dict(ctx.params or {})
        if method == "tools/call":
            return await bounded_tools_call(self, ctx, params)
        if method == "tools/list":
            return await self._list_tools()
        if len(self.upstreams) == 1:
            only = next(iter(self.upstreams.values()))
            return await self.forward(only, ctx, method, params)
        return await self._route(ctx, method, params)

    async def forward(
        self, upstream: Upstream, ctx: Any, method: str, params: dict[str, Any]
    ) -> dict[str, Any]:
        """``method`` on ``upstream`` as the host sent it; its progress goes back to the host."""
        token = (params.get("_meta") or {}).get("progressToken")
        on_progress = progress_forwarder(ctx, token) if token is not None else None
        self.inflight[upstream.name].append(ctx)
        try:
            return await upstream.request(method, params, on_progress=on_progress)
        except MCPServerError as exc:
            from mcp.shared.exceptions import MCPError

            raise MCPError(-32603, f"reviewlab gateway: {exc}") from None
        finally:
            self.inflight[upstream.name].remove(ctx)

    async def _list_tools(self) -> dict[str, Any]:
        listings = {}
        for name, upstream in self.upstreams.items():
            try:
                listings[name] = await upstream._list_all(upstream.session, "tools/list", "tools")
            except Exception as exc:  # noqa: BLE001 - a dead upstream lists what it last listed
                log.warning("reviewlab gateway: upstream %r: tools/list failed (%s)", name, exc)
                listings[name] = [
                    dict(route.entry) for route in self.tools.values() if route.upstream == name
                ]
        self._set_tools(listings)
        return {"tools": [shown_entry(shown, route) for shown, route in self.tools.items()]}

    async def _route(self, ctx: Any, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """A request when several upstreams are fronted: merged, routed by name or URI."""
        from mcp.shared.exceptions import MCPError

        capability = _CAPABILITY_OF.get(method)
        serving = [
            up
            for up in self.upstreams.values()
            if capability is None or capability in up.capabilities
        ]
        if method in _LIST_METHODS:
            return await self._merged_list(ctx, method, serving)
        if method == "logging/setLevel":
            for upstream in serving:
                await self.forward(upstream, ctx, method, params)
            return {}
        if method == "prompts/get":
            route = await self._prompt_route(ctx, str(params.get("name")))
            if route is None:
                raise MCPError(-32602, f"Unknown prompt: {params.get('name')}")
            return await self.forward(
                self.upstreams[route.upstream], ctx, method, {**params, "name": route.name}
            )
        uri = params.get("uri") or (params.get("ref") or {}).get("uri")
        if (
            method == "completion/complete"
            and (params.get("ref") or {}).get("type") == "ref/prompt"
        ):
            route = await self._prompt_route(ctx, str(params["ref"].get("name")))
            if route is not None:
                ref = {**params["ref"], "name": route.name}
                served = self.upstreams[route.upstream]
                return await self.forward(served, ctx, method, {**params, "ref": ref})
        if isinstance(uri, str) and uri in self.resource_owner:
            return await self.forward(self.upstreams[self.resource_owner[uri]], ctx, method, params)
        last: Exception | None = None
        for upstream in serving:  # a URI no listing showed (a template's): the first that knows it
            try:
                return await self.forward(upstream, ctx, method, params)
            except MCPError as exc:
                last = exc
        if last is not None:
            raise last
        raise MCPError(-32601, "Method not found", method)

    async def _prompt_route(self, ctx: Any, shown: str) -> Route | None:
        """Where the prompt the host names is served; the prompts are listed first when the
        name is not known yet (a host may get a prompt it never listed, or one added since)."""
        route = self.prompts.get(shown)
        if route is None:
            serving = [up for up in self.upstreams.values() if "prompts" in up.capabilities]
            await self._merged_list(ctx, "prompts/list", serving)
            route = self.prompts.get(shown)
        return route

    async def _merged_list(self, ctx: Any, method: str, serving: list[Upstream]) -> dict[str, Any]:
        key = _LIST_METHODS[method]
        listings: dict[str, list[dict[str, Any]]] = {}
        for upstream in serving:
            items: list[dict[str, Any]] = []
            cursor = None
            while True:
                ask: dict[str, Any] = {"cursor": cursor} if cursor else {}
                page = await self.forward(upstream, ctx, method, ask)
                items.extend(page.get(key) or [])
                cursor = page.get("nextCursor")
                if not cursor:
                    break
            listings[upstream.name] = items
        if key == "prompts":
            self.prompts = host_names(listings)
            return {key: [shown_entry(shown, route) for shown, route in self.prompts.items()]}
        for name, items in listings.items():
            for item in items:
                if isinstance(item.get("uri"), str):
                    self.resource_owner.setdefault(item["uri"], name)
        return {key: [item for items in listings.values() for item in items]}

    async def host_notification(self, ctx: Any) -> None:
        """A host's notification that the upstreams must hear too: the roots changed, or the
        host's progress on a request an upstream asked it (back under the upstream's token).
        A host that offers roots has, once initialized, roots the upstreams never heard of (they
        asked when no host was there): they are told the roots changed, and ask again."""
        if ctx.method == "notifications/roots/list_changed":
            for upstream in self.upstreams.values():
                await upstream.notify(ctx.method, ctx.params)
        elif ctx.method == "notifications/initialized":
            offered = getattr(ctx.session, "client_capabilities", None)
            if offered is not None and offered.roots is not None:
                for upstream in self.upstreams.values():
                    await upstream.notify("notifications/roots/list_changed", None)
        elif ctx.method == "notifications/progress":
            params = dict(ctx.params or {})
            asked = self.asked.get(str(params.get("progressToken")))
            if asked is not None:
                name, token = asked
                await self.upstreams[name].notify(ctx.method, {**params, "progressToken": token})

    # -- what an upstream sends on its own (HostRouter) ------------------------------------
    async def upstream_request(self, upstream: str, method: str, params: dict[str, Any]) -> Any:
        """Ask the host whose request is in flight on ``upstream`` (on that request's stream),
        else the newest host connection (on its own stream).

        A progress token the upstream put in ``_meta`` is swapped for one of the gateway's own
        while the host answers (two upstreams may pick the same token), so the host's progress
        goes back to the upstream that asked (:meth:`host_notification`). A cancel from the
        upstream needs nothing here: the SDK cancels this await, which sends the host a cancel
        for the id the host knows.
        """
        meta = params.get("_meta")
        own = None
        if isinstance(meta, Mapping) and meta.get("progressToken") is not None:
            own = f"reviewlab-ask-{next(self._asks)}"
            self.asked[own] = (upstream, meta["progressToken"])
            params = {**params, "_meta": {**meta, "progressToken": own}}
        try:
            inflight = self.inflight.get(upstream) or []
            if inflight:
                outbound = inflight[-1].session._request_outbound
                return await outbound.send_raw_request(method, params, None)
            for connection in reversed(list(self.hosts)):
                if connection is not None:
                    return await connection.send_raw_request(method, params, None)
            raise RuntimeError(f"no host is connected to answer {method}")
        finally:
            if own is not None:
                self.asked.pop(own, None)

    async def upstream_notification(self, upstream: str, method: str, params: Any) -> None:
        """Tell the host whose request is in flight on ``upstream``, else every host."""
        inflight = self.inflight.get(upstream) or []
        if inflight:
            with contextlib.suppress(Exception):
                await inflight[-1].session._request_outbound.notify(method, params)
            return
        for connection in list(self.hosts):
            if connection is not None:
                await connection.notify(method, params)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("reviewlab")
    except PackageNotFoundError:
        return ""
