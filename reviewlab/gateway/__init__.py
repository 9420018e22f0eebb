"""The gateway: reviewlab between any MCP host and its servers, bounding, recording, re-tuning.

``reviewlab gateway --config SERVERS.json --policy POLICY.toml --record DIR`` is an MCP server
(stdio, or Streamable HTTP with ``--listen``) fronting the upstream servers of a desktop host's
``mcpServers`` file: every request passes through as it came, and each ``tools/call`` is
bounded by the policy in force (re-read when its file changes), abandoned at its bound with the
standard text, and written to ``DIR`` as one ``reviewlab.episode/2`` episode per host session,
which every corpus-reading command takes. docs/gateway.md tells the whole story.
"""

from reviewlab.gateway._calls import DEADLINE_META_KEY
from reviewlab.gateway._check import CheckReport, ToolCheck, check_gateway
from reviewlab.gateway._config import (
    GatewayConfigError,
    GatewayLimits,
    UpstreamSpec,
    load_servers,
    parse_servers,
)
from reviewlab.gateway._gateway import Gateway
from reviewlab.gateway._policy_file import PolicyFile
from reviewlab.gateway._routes import SEPARATOR, annotated_kind
from reviewlab.gateway._serve import Listen, run_gateway

__all__ = [
    "DEADLINE_META_KEY",
    "SEPARATOR",
    "CheckReport",
    "Gateway",
    "GatewayConfigError",
    "GatewayLimits",
    "Listen",
    "PolicyFile",
    "ToolCheck",
    "UpstreamSpec",
    "annotated_kind",
    "check_gateway",
    "load_servers",
    "parse_servers",
    "run_gateway",
]
