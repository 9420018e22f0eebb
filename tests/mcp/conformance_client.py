"""reviewlab's MCP client under the protocol's own conformance suite (client scenarios).

``@modelcontextprotocol/conformance`` starts a test server per scenario, runs this script with
the server URL appended to the command and the scenario in ``MCP_CONFORMANCE_SCENARIO``, and
checks what the server saw. The client is reviewlab's: :class:`~reviewlab.live.mcp.MCPServer`
over Streamable HTTP, its tools called by a review episode through the bounded executor.

* ``initialize``: the session negotiates (``server/discover``, then the ``initialize``
  handshake) and lists the tools.
* ``tools_call``: the episode calls ``add_numbers`` and must read the sum back.
* ``sse-retry``: the server closes the call's stream after a priming event; the SDK's transport
  reconnects after the ``retry`` it was told, with ``Last-Event-ID``, and the answer comes on
  the resumed stream.

Exit status 0 when the scenario's call came back as the scenario expects, else 1 (the suite
judges the wire; this judges what the episode saw).
"""

from __future__ import annotations

import os
import sys

from reviewlab.core._policy import Policy
from reviewlab.live._episode import ReviewEpisode, ScriptedModel, tool_call
from reviewlab.live.mcp import MCPServer

BOUND_SEC = 20.0
CALLS = {
    "tools_call": (tool_call("add_numbers", {"a": 2, "b": 3}, "add"), "The sum of 2 and 3 is 5"),
    "sse-retry": (tool_call("test_reconnection", {}, "retry"), "Reconnection test completed"),
}


def main(argv: list[str]) -> int:
    url, scenario = argv[-1], os.environ.get("MCP_CONFORMANCE_SCENARIO", "initialize")
    with MCPServer(url=url, read_tools={}, start_timeout_sec=BOUND_SEC) as server:
        print(f"negotiated {server.protocol_version} with {server.server_name!r}", flush=True)
        if scenario not in CALLS:
            return 0
        call, expected = CALLS[scenario]
        model = ScriptedModel([{"tool_calls": [call]}, {"content": "[]"}])
        result = ReviewEpisode(
            ".", model, policy=Policy.uniform(BOUND_SEC), registry_factory=server.registry_factory
        ).execute()
    receipt = result.usage["native_tool_receipts"][0]
    text = next(m["content"] for m in model.calls[-1]["messages"] if m.get("role") == "tool")
    print(f"{scenario}: {receipt['outcome']}: {text}", flush=True)
    return 0 if receipt["outcome"] == "executed" and expected in text else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
