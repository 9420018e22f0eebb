"""The hosts ``policy export`` writes for, each a :class:`Target` and the writer of its format.

Every writer takes a :class:`~reviewlab.analysis.export._plan.ExportPlan` and the MCP server names
the settings go under, and returns the text of the file the host reads. Formats with comments
open with one naming the policy, the target release and what the format cannot express; JSON
has none, so those lines are printed by the command instead. Keys and units were read in each
release named (docs/frameworks.md has the table and the sources).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Final

import tomli_w

from reviewlab.analysis.export._plan import ExportPlan, Target

Writer = Callable[[ExportPlan, tuple[str, ...]], str]
"""A target's writer: the plan and the MCP server names → the configuration text."""


def _comment(plan: ExportPlan, mark: str = "#") -> str:
    target = plan.target
    lines = [
        f"reviewlab policy export: policy {plan.policy.label!r} as {target.framework} "
        f"{target.version} configuration ({target.filename})",
        *plan.cannot,
    ]
    return "".join(f"{mark} {line}\n" for line in lines)


def _ms(seconds: float) -> int:
    return math.ceil(round(seconds * 1000, 6))


def _whole(seconds: float) -> int:
    return math.ceil(round(seconds, 6))


def _gateway(plan: ExportPlan, servers: tuple[str, ...]) -> str:
    return _comment(plan) + plan.policy.to_toml()


def _claude_code(plan: ExportPlan, servers: tuple[str, ...]) -> str:
    shell = plan.shell_sec if plan.shell_sec is not None else plan.other_sec
    env = {
        "BASH_DEFAULT_TIMEOUT_MS": str(_ms(shell)),
        "BASH_MAX_TIMEOUT_MS": str(_ms(shell)),
        "MCP_TOOL_TIMEOUT": str(_ms(plan.other_sec)),
    }
    return json.dumps({"env": env}, indent=2) + "\n"


def _codex(plan: ExportPlan, servers: tuple[str, ...]) -> str:
    tables = {name: {"tool_timeout_sec": plan.other_sec} for name in servers}
    return _comment(plan) + tomli_w.dumps({"mcp_servers": tables})


def _gemini(plan: ExportPlan, servers: tuple[str, ...]) -> str:
    entries = {name: {"timeout": _ms(plan.other_sec)} for name in servers}
    return json.dumps({"mcpServers": entries}, indent=2) + "\n"


def _cline(plan: ExportPlan, servers: tuple[str, ...]) -> str:
    entries = {name: {"timeout": _whole(plan.other_sec)} for name in servers}
    return json.dumps({"mcpServers": entries}, indent=2) + "\n"


def _python(plan: ExportPlan, body: list[str]) -> str:
    doc = '"""Timeouts exported by reviewlab; import the names you use."""\n\n'
    return _comment(plan) + doc + "\n".join(body) + "\n"


def _agents_sdk(plan: ExportPlan, servers: tuple[str, ...]) -> str:
    sessions = {name: plan.other_sec for name in servers}
    return _python(
        plan,
        [
            "# function_tool(timeout=...) / FunctionTool(timeout_seconds=...), per tool name",
            f"FUNCTION_TOOL_TIMEOUTS = {dict(plan.tools_sec)!r}",
            f"DEFAULT_FUNCTION_TOOL_TIMEOUT = {plan.other_sec!r}",
            "# MCPServerStdio(..., client_session_timeout_seconds=...), per server",
            f"MCP_CLIENT_SESSION_TIMEOUT_SECONDS = {sessions!r}",
        ],
    )


def _pydantic_ai(plan: ExportPlan, servers: tuple[str, ...]) -> str:
    reads = {name: plan.other_sec for name in servers}
    return _python(
        plan,
        [
            "# Tool(function, timeout=...), per tool name",
            f"TOOL_TIMEOUTS = {dict(plan.tools_sec)!r}",
            f"DEFAULT_TOOL_TIMEOUT = {plan.other_sec!r}",
            "# MCPToolset(..., read_timeout=...), per server",
            f"MCP_READ_TIMEOUTS = {reads!r}",
        ],
    )


def _langchain_mcp(plan: ExportPlan, servers: tuple[str, ...]) -> str:
    seconds = plan.other_sec
    return _python(
        plan,
        [
            "from datetime import timedelta",
            "",
            "# Merge into each MultiServerMCPClient connection of that name.",
            "STDIO_SESSION_KWARGS = {",
            *(
                f"    {name!r}: {{'read_timeout_seconds': timedelta(seconds={seconds!r})}},"
                for name in servers
            ),
            "}",
            "STREAMABLE_HTTP = {",
            *(
                f"    {name!r}: {{'timeout': timedelta(seconds={seconds!r}), "
                f"'sse_read_timeout': timedelta(seconds={seconds!r})}},"
                for name in servers
            ),
            "}",
        ],
    )


def _inspect(plan: ExportPlan, servers: tuple[str, ...]) -> str:
    shell = _whole(plan.shell_sec if plan.shell_sec is not None else plan.other_sec)
    return _python(
        plan,
        [
            "# bash(timeout=...) and python(timeout=...): whole seconds",
            f"BASH_TIMEOUT = {shell}",
            f"PYTHON_TIMEOUT = {shell}",
        ],
    )


def _mini(plan: ExportPlan, servers: tuple[str, ...]) -> str:
    return _comment(plan) + f"environment:\n  timeout: {_whole(plan.other_sec)}\n"


def _swe_agent(plan: ExportPlan, servers: tuple[str, ...]) -> str:
    lines = ["agent:", "  tools:", f"    execution_timeout: {_whole(plan.other_sec)}"]
    breaker = plan.policy.breaker
    if breaker is not None and breaker.window is None:
        lines.append(f"    max_consecutive_execution_timeouts: {breaker.consecutive}")
    return _comment(plan) + "\n".join(lines) + "\n"


_NO_SHELL = "cannot bound shell commands here; instead: the host's own bound stays"

TARGETS: Final[dict[str, tuple[Target, Writer]]] = {
    t.name: (t, w)
    for t, w in (
        (Target("gateway", "reviewlab gateway", "(exact)", "policy.toml", "exact", "own", 0.0,
                idle=True, breaker=True, abandon_text=True), _gateway),
        (Target("claude-code", "Claude Code", "2.x", ".claude/settings.json", "global", "own",
                0.001, notes=("the model may not ask past BASH_MAX_TIMEOUT_MS (set equal)",)),
         _claude_code),
        (Target("codex-cli", "OpenAI Codex CLI", "codex-rs @00302de", "~/.codex/config.toml",
                "per_server", "none", 0.0,
                notes=(f"{_NO_SHELL} (10 s unless the model asks longer)",)), _codex),
        (Target("gemini-cli", "Gemini CLI", "0.56.0", ".gemini/settings.json", "per_server",
                "none", 0.001, notes=(f"{_NO_SHELL} (300 s without output)",)), _gemini),
        (Target("cline", "Cline", "4.1.12", "cline_mcp_settings.json", "per_server", "none",
                1.0, notes=(_NO_SHELL,)), _cline),
        (Target("openai-agents-sdk", "OpenAI Agents SDK", "0.24.0", "reviewlab_timeouts.py",
                "per_tool", "shared", 0.0,
                notes=("MCP tools: one number per server (client_session_timeout_seconds)",
                       "function tools: the SDK bounds async handlers only")),
         _agents_sdk),
        (Target("pydantic-ai", "Pydantic AI", "2.78.0", "reviewlab_timeouts.py", "per_tool",
                "shared", 0.0,
                notes=("MCP tools: one number per server (read_timeout); a function tool's "
                       "timeout returns a retry prompt to the model",)), _pydantic_ai),
        (Target("langchain-mcp-adapters", "LangChain MCP adapters", "0.3.2",
                "reviewlab_timeouts.py", "per_server", "none", 0.0,
                notes=(_NO_SHELL,)), _langchain_mcp),
        (Target("inspect-ai", "Inspect AI", "0.3.285", "reviewlab_timeouts.py", "global", "own",
                1.0, notes=("cannot bound tools other than bash() and python(); instead: none "
                            "(a sample's time_limit bounds the whole sample)",)), _inspect),
        (Target("mini-swe-agent", "mini-swe-agent", "2.4.6", "mini.yaml", "global", "shared",
                1.0, shell_only=True), _mini),
        (Target("swe-agent", "SWE-agent", "1.1.0", "config.yaml", "global", "shared", 1.0,
                breaker=True, shell_only=True), _swe_agent),
    )
}  # fmt: skip
"""Each export target by name: its declaration and its writer."""
