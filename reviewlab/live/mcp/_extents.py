"""What a read through an MCP server credits, and the commands that start the demo server.

``read_tools`` maps a server's read tools to a function ``(args, text) -> reader stamp`` (the
keys ``inspection_registry`` stamps: opened_path, first_line, end_line, total_lines...); the
episode credits those reads as it credits ``read_file``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ReadExtent = Callable[[Mapping[str, Any], str], dict[str, Any] | None]
"""Maps a read tool's arguments and result text to a reader stamp (``None``: nothing to credit)."""

_DEMO = Path(__file__).resolve().parent.parent / "_mcp_demo_server.py"


def filesystem_read_extent(args: Mapping[str, Any], text: str) -> dict[str, Any] | None:
    """The reader stamp of ``read_text_file`` / ``read_file`` of the reference filesystem server.

    A whole-file read renders lines 1..n of n; ``head=N`` renders the first lines (total
    unknown); a ``tail`` read does not say where it starts, so it is not credited.
    """
    path = args.get("path")
    if not isinstance(path, str) or not path or args.get("tail") is not None:
        return None
    lines = text.count("\n") + (1 if text and not text.endswith("\n") else 0)
    return {
        "target": path,
        "opened_path": path,
        "opened_root": "mcp",
        "first_line": 1,
        "end_line": lines,
        "total_lines": None if args.get("head") is not None else lines,
    }


FILESYSTEM_READ_TOOLS: Mapping[str, ReadExtent] = {
    "read_text_file": filesystem_read_extent,
    "read_file": filesystem_read_extent,
}
"""Read tools of ``@modelcontextprotocol/server-filesystem`` and our demo server."""


def demo_server_command(root: str | os.PathLike[str] = ".") -> list[str]:
    """The command that starts :mod:`reviewlab.live._mcp_demo_server` over stdio on ``root``.

    The server runs as a plain script (not ``-m``), so it starts without importing reviewlab.
    """
    return [sys.executable, str(_DEMO), str(root)]


@contextmanager
def demo_http_server(
    root: str | os.PathLike[str] = ".", *, modern: bool = False, start_timeout_sec: float = 60.0
) -> Iterator[str]:
    """Run the demo server over Streamable HTTP on a free localhost port; yields its URL.

    ``modern`` adds the 2026-07-28 revision (``server/discover``; a request is cancelled by
    closing its stream). The process is terminated (then killed) when the block ends.
    """
    argv = [sys.executable, str(_DEMO), str(root), "--http", "0"]
    if modern:
        argv.append("--modern")
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert process.stdout is not None
        line = _first_line(process, start_timeout_sec)
        if not line.startswith("listening on "):
            raise RuntimeError(f"the demo MCP server did not start: {line!r}")
        yield line.removeprefix("listening on ").strip()
    finally:
        process.terminate()
        try:
            process.wait(start_timeout_sec)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()


def _first_line(process: subprocess.Popen[str], timeout_sec: float) -> str:
    """The first stdout line, or an error once ``timeout_sec`` passes without one."""
    import threading

    box: list[str] = []
    reader = threading.Thread(
        target=lambda: box.append(process.stdout.readline() if process.stdout else ""),
        daemon=True,
    )
    reader.start()
    reader.join(timeout_sec)
    if not box:
        raise RuntimeError(f"the demo MCP server printed nothing in {timeout_sec}s")
    return box[0]
