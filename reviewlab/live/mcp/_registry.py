"""The tools of one MCP server for one episode: ``await registry.execute(name, args) -> str``."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from reviewlab.core._policy_document import IDEMPOTENT_TOOLS
from reviewlab.live._call_notes import CallNotes, current_notes
from reviewlab.live.mcp._call import call_tool
from reviewlab.live.mcp._tasks import call_task


class MCPContext:
    """The registry's shared context: ``last_read_view`` is stamped
    after a credited read renders."""

    def __init__(self) -> None:
        self.last_read_view: dict[str, Any] | None = None


class MCPRegistry:
    """The tools of one :class:`~reviewlab.live.mcp.MCPServer` for one episode:
    ``await execute(name, args) -> str``.

    ``read_tools`` names the tools the episode credits as reads; ``loop`` is the event loop
    the session lives on (the episode runs there when it can). The tools a dropped stream may
    re-issue are the server's ``idempotent_tools`` when it was given some, else the episode
    policy's (:meth:`bind_policy`), else :data:`~reviewlab.core._policy_document.IDEMPOTENT_TOOLS`.
    """

    transport = "mcp"
    runs_tasks = True
    """Task-augmented calls (the policy's ``tasks`` part) run here (:mod:`._tasks`)."""
    HTTP_READ_TIMEOUT_SEC = 300.0
    """The SDK's Streamable HTTP read timeout (``MCP_DEFAULT_SSE_READ_TIMEOUT``): a stream
    silent this long ends, and its call with it (a transport clock on every HTTP call)."""

    def __init__(self, server: Any, root: Path, ctx: MCPContext) -> None:
        self.server = server
        self.root = root
        self.ctx = ctx
        self.read_tools = frozenset(server.read_tools)
        self.idempotent_tools = (
            frozenset(server.idempotent_tools)
            if server.idempotent_tools is not None
            else frozenset(IDEMPOTENT_TOOLS)
        )
        self.task_actions: dict[str, str] = {}
        # A tool whose server requires tasks runs as one even when the policy names none.
        self.task_required = frozenset(
            tool["name"]
            for tool in server.tools
            if (tool.get("execution") or {}).get("taskSupport") == "required"
        )

    @property
    def transport_timeout_sec(self) -> float | None:
        """The transport's own clock on a call (HTTP: the read timeout; stdio: none)."""
        return self.HTTP_READ_TIMEOUT_SEC if self.server.url is not None else None

    def bind_policy(self, policy: Any) -> None:
        """Take the episode policy's idempotent tools (unless the server named its own) and its
        ``tasks`` part (which tools run as tasks, cancelled or detached at the bound)."""
        if self.server.idempotent_tools is None:
            self.idempotent_tools = frozenset(getattr(policy, "idempotent_tools", ()))
        self.task_actions = dict(getattr(policy, "tasks", {}))

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The event loop of the server's session (calls run there)."""
        return self.server.loop

    async def execute(self, name: str, args: Mapping[str, Any]) -> str:
        """Call ``name`` on the server; an error result raises
        :class:`~reviewlab.live.mcp.MCPToolError`."""
        notes = current_notes() or CallNotes("mcp")
        notes.transport = "mcp"
        action = self.task_actions.get(name) or ("cancel" if name in self.task_required else None)
        link = self.server.link
        if action is not None and link is not None:
            call = call_task(link, name, dict(args), notes, action, self.server.task_ttl_sec)
        else:
            call = call_tool(link, name, dict(args), notes, name in self.idempotent_tools)
        if asyncio.get_running_loop() is self.server.loop:
            text = await call
        else:
            # Another loop awaits us: run on the session's loop; a cancellation crosses over.
            future = asyncio.run_coroutine_threadsafe(call, self.server.loop)
            text = await asyncio.wrap_future(future)
        extent = self.server.read_tools.get(name)
        if extent is not None:
            stamp = extent(args, text)
            if stamp is not None:
                stamp["opened_path"] = self._relative(str(stamp.get("opened_path", "")))
            self.ctx.last_read_view = stamp
        return text

    def _relative(self, path: str) -> str:
        candidate = Path(path)
        if candidate.is_absolute():
            try:
                return candidate.resolve().relative_to(self.root.resolve()).as_posix()
            except ValueError:
                return path
        return path
