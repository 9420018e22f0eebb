"""What the gateway tests share: a servers file, an in-process gateway with an SDK host on it,
and the demo upstream (a Python MCP server that misbehaves on purpose)."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from reviewlab.gateway import Gateway, PolicyFile, load_servers
from reviewlab.live.inspection import demo_workspace
from reviewlab.live.mcp import demo_server_command


def servers_file(folder: Path, servers: dict[str, Any]) -> Path:
    """An ``mcpServers`` file in ``folder`` naming ``servers``."""
    path = folder / "servers.json"
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return path


def demo_entry(root: Path | None = None) -> dict[str, Any]:
    """The demo server over stdio, as an ``mcpServers`` entry."""
    argv = demo_server_command(root or demo_workspace())
    return {"command": argv[0], "args": argv[1:]}


@contextlib.asynccontextmanager
async def hosted(gateway: Gateway, **session: Any) -> AsyncIterator[Any]:
    """An initialized SDK ``ClientSession`` (the host) talking to ``gateway`` in this process."""
    from mcp import ClientSession
    from mcp.shared.memory import create_client_server_memory_streams

    async with gateway:
        server = gateway.server()
        async with create_client_server_memory_streams() as (client, served):
            running = asyncio.create_task(
                server.run(served[0], served[1], server.create_initialization_options())
            )
            try:
                async with ClientSession(client[0], client[1], **session) as host:
                    await host.initialize()
                    yield host
            finally:
                running.cancel()
                with contextlib.suppress(BaseException):
                    await running


def demo_gateway(tmp_path: Path, policy: str | Path = "uniform:5", **options: Any) -> Gateway:
    """A gateway over the demo server (stdio) with ``policy``, recording into ``tmp_path/rec``."""
    specs = load_servers(servers_file(tmp_path, {"demo": demo_entry()}))
    options.setdefault("record", tmp_path / "rec")
    return Gateway(specs, policy=PolicyFile(policy), **options)


def text_of(result: Any) -> str:
    """The text blocks of a ``CallToolResult``, joined."""
    return "\n".join(block.text for block in result.content if block.type == "text")
