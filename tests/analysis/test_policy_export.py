"""``policy export``: each target's file holds the hand-computed numbers and loads in its host.

The policy: default 30 s, ``read_file`` 5 s, ``search_code`` 20 s, ``run_command`` 120 s, an
idle bound of 10 s on ``run_command``, a breaker after 3 in a row. By the rule (the maximum of
the covered tools' timeouts, rounded up to the host's unit): tools other than the shell 30 s,
the shell 120 s, one number for everything 120 s. Where a host has a config reader in Python
(mini-swe-agent) the file is read by it; where the settings are code (Agents SDK, Pydantic AI,
Inspect) the exported names build the framework's own objects.
"""

from __future__ import annotations

import json
import tomllib
from datetime import timedelta
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

from reviewlab import TimeoutPolicy
from reviewlab.analysis.export import EXPORT_TARGETS, export_policy, host_policy
from reviewlab.cli import main
from reviewlab.core._breaker import BreakerRule
from reviewlab.core._policy import Policy

POLICY = Policy(
    timeouts=TimeoutPolicy(
        default_sec=30.0, tools_sec={"read_file": 5.0, "search_code": 20.0, "run_command": 120.0}
    ),
    idle_sec={"run_command": 10.0},
    breaker=BreakerRule(consecutive=3, cooldown_rounds=2),
    name="tuned",
)


def _module(text: str) -> dict[str, Any]:
    """The names an exported Python file defines."""
    names: dict[str, Any] = {}
    exec(compile(text, "reviewlab_timeouts.py", "exec"), names)
    return names


def test_the_gateway_gets_the_policy_exactly(tmp_path: Path) -> None:
    """The gateway's own policy reader loads the file as the very policy; nothing is lost."""
    from reviewlab.gateway import PolicyFile

    result = export_policy(POLICY, "gateway")
    path = tmp_path / "policy.toml"
    path.write_text(result.text)
    assert PolicyFile(path).current == POLICY  # the file the gateway reads, read its way
    assert result.cannot == ()


def test_claude_code_gets_one_mcp_number_and_a_shell_number() -> None:
    """settings.json env: Bash 120 000 ms (default and max), MCP tools 30 000 ms, as strings."""
    env = json.loads(export_policy(POLICY, "claude-code").text)["env"]
    assert env == {
        "BASH_DEFAULT_TIMEOUT_MS": "120000",
        "BASH_MAX_TIMEOUT_MS": "120000",
        "MCP_TOOL_TIMEOUT": "30000",
    }


def test_codex_gets_a_table_per_server() -> None:
    """config.toml: ``[mcp_servers.NAME] tool_timeout_sec = 30.0`` for each server named."""
    result = export_policy(POLICY, "codex-cli", servers=("files", "search"))
    document = tomllib.loads(result.text)
    assert document == {
        "mcp_servers": {"files": {"tool_timeout_sec": 30.0}, "search": {"tool_timeout_sec": 30.0}}
    }
    assert any(line.startswith("cannot bound shell commands") for line in result.cannot)


@pytest.mark.parametrize(("target", "value"), [("gemini-cli", 30000), ("cline", 30)])
def test_json_hosts_get_a_timeout_per_server(target: str, value: int) -> None:
    """Gemini CLI in milliseconds, Cline in whole seconds, under ``mcpServers.NAME``."""
    document = json.loads(export_policy(POLICY, target, servers=("files",)).text)
    assert document == {"mcpServers": {"files": {"timeout": value}}}


def test_mini_swe_agent_reads_its_file_with_its_own_reader(tmp_path: Path) -> None:
    """mini-swe-agent's config reader and its LocalEnvironment take timeout 120."""
    from minisweagent.config import get_config_from_spec
    from minisweagent.environments.local import LocalEnvironmentConfig

    path = tmp_path / "mini.yaml"
    path.write_text(export_policy(POLICY, "mini-swe-agent").text)
    config = get_config_from_spec(path)
    assert LocalEnvironmentConfig(**config["environment"]).timeout == 120


def test_swe_agent_gets_the_timeout_and_its_breaker() -> None:
    """config.yaml: execution_timeout 120 and max_consecutive_execution_timeouts 3."""
    result = export_policy(POLICY, "swe-agent")
    tools = yaml.safe_load(result.text)["agent"]["tools"]
    assert tools == {"execution_timeout": 120, "max_consecutive_execution_timeouts": 3}
    assert any("cool-down" in line for line in result.cannot)


def test_the_agents_sdk_builds_its_tools_and_servers_from_the_export() -> None:
    """Each exported number is accepted by function_tool(timeout=) and MCPServerStdio."""
    from agents import function_tool
    from agents.mcp import MCPServerStdio

    names = _module(export_policy(POLICY, "openai-agents-sdk", servers=("files",)).text)
    assert names["FUNCTION_TOOL_TIMEOUTS"] == {
        "read_file": 5.0,
        "run_command": 120.0,
        "search_code": 20.0,
    }

    async def read_file(path: str) -> str:  # the SDK bounds async tools only
        """Read a file."""
        return path

    built = function_tool(read_file, timeout=names["FUNCTION_TOOL_TIMEOUTS"]["read_file"])
    assert built.timeout_seconds == 5.0
    seconds = names["MCP_CLIENT_SESSION_TIMEOUT_SECONDS"]["files"]
    server = MCPServerStdio(params={"command": "true"}, client_session_timeout_seconds=seconds)
    assert server.client_session_timeout_seconds == 30.0


def test_pydantic_ai_builds_its_tools_from_the_export() -> None:
    """Pydantic AI's Tool takes each exported per-tool timeout."""
    from pydantic_ai import Tool

    names = _module(export_policy(POLICY, "pydantic-ai").text)

    def search_code(query: str) -> str:
        """Search the code."""
        return query

    tool = Tool(search_code, timeout=names["TOOL_TIMEOUTS"]["search_code"])
    assert tool.timeout == 20.0
    assert names["DEFAULT_TOOL_TIMEOUT"] == 30.0


def test_inspect_builds_its_bash_tool_from_the_export() -> None:
    """Inspect's bash() and python() take the whole-second shell timeout, 120."""
    from inspect_ai.tool import bash, python

    names = _module(export_policy(POLICY, "inspect-ai").text)
    assert (names["BASH_TIMEOUT"], names["PYTHON_TIMEOUT"]) == (120, 120)
    bash(timeout=names["BASH_TIMEOUT"])
    python(timeout=names["PYTHON_TIMEOUT"])


def test_langchain_adapters_get_timedeltas_per_server() -> None:
    """The session and HTTP settings are 30 s timedeltas under the server's name."""
    names = _module(export_policy(POLICY, "langchain-mcp-adapters", servers=("files",)).text)
    assert names["STDIO_SESSION_KWARGS"] == {
        "files": {"read_timeout_seconds": timedelta(seconds=30)}
    }
    assert names["STREAMABLE_HTTP"]["files"]["timeout"] == timedelta(seconds=30)


@pytest.mark.parametrize("target", [t for t in EXPORT_TARGETS if t != "gateway"])
def test_every_other_target_names_what_it_loses(target: str) -> None:
    """Narrowing and the abandonment text are lost everywhere but the gateway, by name."""
    cannot = export_policy(POLICY, target).cannot
    assert any("narrowing by the inherited deadline" in line for line in cannot)
    assert any("TOOL_TIMEOUT abandonment text" in line for line in cannot)
    assert any("idle timeouts" in line for line in cannot)


def test_rounding_up_never_shortens_a_bound() -> None:
    """0.2501 s is 251 ms for Claude Code and 1 s for Cline and mini-swe-agent."""
    policy = Policy.of(TimeoutPolicy.uniform(0.2501))
    env = json.loads(export_policy(policy, "claude-code").text)["env"]
    assert env["MCP_TOOL_TIMEOUT"] == "251"
    assert json.loads(export_policy(policy, "cline").text)["mcpServers"]["tools"]["timeout"] == 1
    assert yaml.safe_load(export_policy(policy, "mini-swe-agent").text) == {
        "environment": {"timeout": 1}
    }


def test_the_host_policy_is_what_the_host_enforces() -> None:
    """As Codex: tools 30 s, shell commands Codex's own 10 s, no narrowing, no idle, no breaker."""
    host = host_policy(POLICY, "codex-cli")
    assert host.timeouts.timeout_for(None, "read_file") == 30.0
    assert host.timeouts.timeout_for(None, "run_command") == 10.0
    assert host.narrowing.mode == "none"
    assert (dict(host.idle_sec), host.breaker) == ({}, None)
    assert host_policy(POLICY, "gateway") == POLICY


def test_a_custom_rule_is_refused_by_name() -> None:
    """A policy whose timeouts are a function of the call has no numbers to export."""

    class Rule:
        def timeout_for(self, tools: Any, name: str, args: Any = None) -> float:
            return 1.0

    with pytest.raises(ValueError, match="custom rule"):
        export_policy(Policy(timeouts=Rule()), "cline")


def test_the_cli_writes_the_file_and_lists_the_losses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``-o`` gets the file; each lost part is one printed line; a bad target is exit 2."""
    source = tmp_path / "tuned.toml"
    POLICY.save(source)
    out = tmp_path / "cline_mcp_settings.json"
    assert main(["policy", "export", str(source), "--to", "cline", "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert json.loads(out.read_text()) == {"mcpServers": {"tools": {"timeout": 30}}}
    assert "cline: cannot express idle timeouts; instead: the hard bound alone" in printed
    assert main(["policy", "export", str(source), "--to", "vscode"]) == 2
    assert "invalid choice: 'vscode'" in capsys.readouterr().err


def test_presets_score_replays_the_hosts_approximation_beside_the_policy(tmp_path: Path) -> None:
    """A 50 s command runs under the policy's 60 s but Codex keeps its own 10 s: 0 % vs 100 %."""
    from reviewlab.recording import save_episodes
    from reviewlab.testing._builders import call, episode

    corpus = tmp_path / "c.jsonl"
    save_episodes([episode("e1", [[call("run_command", 50.0)]])], corpus)
    policy = tmp_path / "p.toml"
    Policy(timeouts=TimeoutPolicy(default_sec=30.0, tools_sec={"run_command": 60.0})).save(policy)
    out = tmp_path / "scores.csv"
    argv = ["presets", "score", str(corpus), "--no-recommend", "--preset", "cline"]
    argv += ["--policy", str(policy), "--export", "codex-cli", "-o", str(out)]
    assert main(argv) == 0
    rates = pd.read_csv(out).set_index("preset")["abandoned_call_rate"]
    assert rates[f"your {policy}"] == 0.0
    assert rates[f"your {policy} as codex-cli"] == 1.0
    assert rates["reviewlab ouroboros as codex-cli"] == 1.0
