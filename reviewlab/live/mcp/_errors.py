"""The errors an MCP server or call raises; each becomes one receipt's error text."""

from __future__ import annotations


class MCPServerError(RuntimeError):
    """The server could not be reached, started, initialised or listed, or it closed; the
    message names the command or URL."""


class MCPToolError(RuntimeError):
    """The server answered a call with an error result (``isError``), a JSON-RPC error, or a
    result that is not a ``tools/call`` result. ``error`` is the JSON-RPC error as the server
    sent it (the SDK's ``ErrorData``), when that is what it was: a proxy passes it on whole."""

    def __init__(self, message: str, *, error: object = None) -> None:
        super().__init__(message)
        self.error = error


class MCPStreamDropped(MCPToolError):
    """The server closed the call's stream without an answer; a side-effecting call is not
    re-issued, because it may have run."""
