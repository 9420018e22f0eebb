"""MCP servers as the reviewer's tools: every call bounded, abandoned calls cancelled on the wire.

:class:`MCPServer` opens a server with the official ``mcp`` SDK (optional extra ``mcp``) over
stdio (``command=``) or Streamable HTTP (``url=``) and hands out a ``registry_factory`` for
``ReviewEpisode(root, model, registry_factory=server.registry_factory)``: the model sees the
server's own tools and schemas, and each call runs through the episode's bounded executor.
A session's lifecycle is in :mod:`._server`, a call's (progress, the cancel per negotiated
version, late answers, re-issue after a dropped stream) in :mod:`._call`; docs/mcp.md tells
the why.
"""

from reviewlab.live.mcp._call import result_text
from reviewlab.live.mcp._errors import MCPServerError, MCPStreamDropped, MCPToolError
from reviewlab.live.mcp._extents import (
    FILESYSTEM_READ_TOOLS,
    ReadExtent,
    demo_http_server,
    demo_server_command,
    filesystem_read_extent,
)
from reviewlab.live.mcp._registry import MCPContext, MCPRegistry
from reviewlab.live.mcp._server import (
    DEFAULT_CANCEL_WATCH_SEC,
    DEFAULT_START_TIMEOUT_SEC,
    MCPServer,
)

__all__ = [
    "DEFAULT_CANCEL_WATCH_SEC",
    "DEFAULT_START_TIMEOUT_SEC",
    "FILESYSTEM_READ_TOOLS",
    "MCPContext",
    "MCPRegistry",
    "MCPServer",
    "MCPServerError",
    "MCPStreamDropped",
    "MCPToolError",
    "ReadExtent",
    "demo_http_server",
    "demo_server_command",
    "filesystem_read_extent",
    "result_text",
]
