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
from reviewlab.live._inspection import demo_workspace
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
async def hosted(gateway: Gateway, *before: Any, **session: Any) -> AsyncIterator[Any]:
    """An initialized SDK ``ClientSession`` (the host) talking to ``gateway`` in this process;
    ``before`` are server middlewares run ahead of the gateway's own."""
    from mcp import ClientSession
    from mcp.shared.memory import create_client_server_memory_streams

    async with gateway:
        server = gateway.server()
        server.middleware[:0] = list(before)
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


def free_port() -> int:
    """A loopback port nobody listens on (now)."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class GatewayProcess:
    """``reviewlab gateway`` as a user runs it: a subprocess, over HTTP unless ``stdio``; the
    block waits for its 'serving' line and, at its end, stops it if it still runs."""

    def __init__(self, folder: Path, *options: str, stdio: bool = False) -> None:
        import subprocess
        import sys

        self.folder = folder
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        config = servers_file(folder, {"demo": demo_entry()})
        argv = [sys.executable, "-m", "reviewlab", "gateway", "--config", str(config), *options]
        if not stdio:
            argv += ["--listen", f"127.0.0.1:{self.port}"]
        self.process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE if stdio else subprocess.DEVNULL,
            stdout=subprocess.PIPE if stdio else subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.log: list[str] = []

    def __enter__(self) -> GatewayProcess:
        import time

        assert self.process.stderr is not None
        end = time.monotonic() + 120
        while time.monotonic() < end:
            line = self.process.stderr.readline()
            if not line:
                raise RuntimeError(f"the gateway exited: {''.join(self.log)}")
            self.log.append(line)
            if "serving" in line:
                return self
        raise RuntimeError("the gateway did not start within 120 s")

    def __exit__(self, *exc: object) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(30)

    def children(self) -> list[int]:
        """The gateway's child processes (its stdio upstreams)."""
        return children_of(self.process.pid)

    def rest_of_log(self) -> str:
        """What the gateway wrote to stderr after its 'serving' line (once it has exited)."""
        assert self.process.stderr is not None
        return "".join(self.log) + self.process.stderr.read()


def children_of(pid: int) -> list[int]:
    """The live child processes of ``pid`` (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[1].split()
            if int(fields[1]) == pid and fields[0] != "Z":
                found.append(int(entry.name))
    return found


def running(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie waiting to be reaped is not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@contextlib.asynccontextmanager
async def http_host(url: str, token: str | None = None) -> AsyncIterator[Any]:
    """An initialized SDK ``ClientSession`` connected to ``url`` over Streamable HTTP."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    headers = {"Authorization": f"Bearer {token}"} if token else None
    client = create_mcp_http_client(headers=headers)
    async with (
        streamable_http_client(url, http_client=client) as (read, write),
        ClientSession(read, write) as host,
    ):
        await host.initialize()
        yield host
