"""MCP servers this project did not write: the npm reference servers, pinned in tests/mcp.

``@modelcontextprotocol/server-filesystem`` confines paths itself: a review episode reads and
lists a real workspace through it, and its own confinement refuses a ``..`` escape.
``@modelcontextprotocol/server-everything``'s long-running operation reports progress: an idle
timeout is reset by it, and a 1 s hard maximum abandons the operation, sends the cancel and lets
the episode go on. The servers are installed from the lockfile (``npm ci``) when missing.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import pytest

from reviewlab.core._policy import Policy, TimeoutPolicy
from reviewlab.engines._replay import replay
from reviewlab.live._episode import ReviewEpisode, ScriptedModel, tool_call
from reviewlab.live.mcp import MCPServer
from reviewlab.recording.capture import episode_from_result

PINNED = Path(__file__).resolve().parents[1] / "mcp"
MODULES = PINNED / "node_modules" / "@modelcontextprotocol"
VERDICT = "[]"
LONG_OP = "trigger-long-running-operation"
READ_ONLY = ("read_text_file", "list_directory", "list_allowed_directories")


@pytest.fixture(scope="module")
def servers_installed() -> Path:
    """The pinned reference servers, installed by ``npm ci`` from the lockfile if absent."""
    if not (MODULES / "server-filesystem").is_dir() or not (MODULES / "server-everything").is_dir():
        npm = shutil.which("npm")
        assert npm, "npm is needed to install the pinned reference MCP servers (tests/mcp)"
        subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=PINNED, check=True, timeout=600)
    return MODULES


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("reference")
    root = base / "subject"
    root.mkdir()
    (root / "pricing.py").write_text("def price(x):\n    return x * 2\n", encoding="utf-8")
    (base / "secret.txt").write_text("outside the workspace\n", encoding="utf-8")
    return root


def node(script: Path, *args: str) -> list[str]:
    return [shutil.which("node") or "node", str(script), *args]


def run(root: Path, server: MCPServer, calls, policy) -> tuple:
    model = ScriptedModel([{"tool_calls": [c]} for c in calls] + [{"content": VERDICT}])
    result = ReviewEpisode(
        root, model, policy=policy, registry_factory=server.registry_factory
    ).execute()
    texts = [m["content"] for m in model.calls[-1]["messages"] if m.get("role") == "tool"]
    return result, model, texts


def test_filesystem_server_reads_and_lists_a_real_workspace_with_credit(
    servers_installed, workspace
):
    """Reads through the reference server are credited; its confinement refuses a ``..`` escape."""
    script = servers_installed / "server-filesystem" / "dist" / "index.js"
    escape = f"{workspace}/../secret.txt"
    with MCPServer(node(script, str(workspace)), cwd=workspace, allowed_tools=READ_ONLY) as server:
        result, model, texts = run(
            workspace,
            server,
            [
                tool_call("list_directory", {"path": str(workspace)}, "l1"),
                tool_call("read_text_file", {"path": str(workspace / "pricing.py")}, "r1"),
                tool_call("read_text_file", {"path": escape}, "e1"),
            ],
            TimeoutPolicy.uniform(60.0),
        )
    offered = {schema["function"]["name"] for schema in model.calls[0]["tools"]}
    assert offered == set(READ_ONLY)  # the write tools are not offered to a reviewer
    listing, read, refused = result.usage["native_tool_receipts"]
    assert listing["outcome"] == "executed" and "[FILE] pricing.py" in texts[0]
    assert read["outcome"] == "executed" and texts[1] == "def price(x):\n    return x * 2\n"
    assert read["opened_path"] == "pricing.py"
    assert (read["start_line"], read["end_line"], read["total_lines"]) == (1, 2, 2)
    assert refused["outcome"] == "error" and "source_gap" not in refused
    assert "start_line" not in refused
    assert "access denied" in texts[2].lower() and "outside the workspace" not in texts[2]
    assert result.usage["native_end_reason"] == "final_answer"

    # The recording keeps the credited read's extent, so a replay counts its lines as the live
    # run credited them; the refused escape asked for no lines a replay could count.
    episode = episode_from_result(result, id="fs-1")
    extents = [call.extent for call in episode.calls]
    assert extents[0] is None and extents[2] is None
    assert extents[1] is not None
    assert (extents[1].path, extents[1].start_line, extents[1].end_line) == (
        str(workspace / "pricing.py"),
        1,
        2,
    )
    replayed = replay([episode], TimeoutPolicy.uniform(60.0), engine="twin")
    assert replayed.calls["requested_lines"].tolist() == [0, 2, 0]
    assert replayed.summary["coverage_loss_rate"] == 0.0


def test_everything_server_progress_resets_the_idle_timeout(servers_installed, workspace):
    """A 3 s operation reporting every 0.3 s outlives a 1 s idle timeout: progress resets it."""
    script = servers_installed / "server-everything" / "dist" / "index.js"
    policy = Policy(timeouts=TimeoutPolicy.uniform(60.0), idle_sec={LONG_OP: 1.5})
    with MCPServer(node(script, "stdio"), read_tools={}) as server:
        result, _model, texts = run(
            workspace,
            server,
            [
                tool_call(LONG_OP, {"duration": 3, "steps": 10}, "p1"),
                tool_call(LONG_OP, {"duration": 20, "steps": 2}, "q1"),
            ],
            policy,
        )
    kept, quiet = result.usage["native_tool_receipts"]
    calls = [trace for rnd in result.trace for trace in rnd.calls]
    assert kept["outcome"] == "executed" and "Long running operation completed" in texts[0]
    assert kept["duration_sec"] > 1.5 and len(calls[0].result.notes.progress_sec) == 10
    # Its first progress would come after 10 s: the idle timeout fires first.
    assert quiet["bound_by"] == "idle" and quiet["source_gap"] == "native_tool_abandoned"
    assert quiet["cancel_sent"] is True and calls[1].result.notes.progress_sec == []


def test_everything_server_long_operation_is_abandoned_at_a_1s_hard_maximum(
    servers_installed, workspace
):
    """Progress every 0.2 s keeps the idle clock fresh; the 1 s hard maximum abandons it anyway."""
    script = servers_installed / "server-everything" / "dist" / "index.js"
    policy = Policy(timeouts=TimeoutPolicy.uniform(1.0), idle_sec={LONG_OP: 0.9})
    with MCPServer(node(script, "stdio"), read_tools={}) as server:
        result, _model, texts = run(
            workspace, server, [tool_call(LONG_OP, {"duration": 10, "steps": 50})], policy
        )
    receipt = result.usage["native_tool_receipts"][0]
    assert receipt["outcome"] == "error" and receipt["source_gap"] == "native_tool_abandoned"
    assert receipt["bound_by"] == "tool_timeout" and receipt["bound_sec"] == 1.0
    assert receipt["cancel_sent"] is True
    assert texts[0].startswith("⚠️ TOOL_TIMEOUT (trigger-long-running-operation): exceeded 1.0s")
    assert result.raw_text == VERDICT and result.usage["native_end_reason"] == "final_answer"
    calls = [trace for rnd in result.trace for trace in rnd.calls]
    assert calls[0].result.notes.progress_sec  # progress came, and did not extend the maximum


@pytest.fixture()
def everything_over_http(servers_installed):
    """``server-everything`` over Streamable HTTP on a free localhost port; yields its URL."""
    import os
    import socket

    script = servers_installed / "server-everything" / "dist" / "index.js"
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        node(script, "streamableHttp"),
        env={**os.environ, "PORT": str(port)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        for line in process.stderr:  # the server says when it listens
            if "listening on port" in line:
                break
        else:
            raise AssertionError("server-everything did not start over HTTP")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(30)
        if process.stderr is not None:
            process.stderr.close()


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_everything_server_records_its_cancel_what_it_did_after_and_the_clocks(
    servers_installed, workspace, transport, request
):
    """Over stdio and Streamable HTTP: the long operation is abandoned at 1 s, the cancel goes
    out as a notification, the server keeps reporting progress after it and never answers (a
    cancelled TypeScript request is not answered), and the receipt and the recording say the
    tool timeout ended it, with every clock that applied."""
    from reviewlab.analysis._cancels import cancel_calls

    script = servers_installed / "server-everything" / "dist" / "index.js"
    opened = (
        MCPServer(node(script, "stdio"), read_tools={}, cancel_watch_sec=4.0)
        if transport == "stdio"
        else MCPServer(
            url=request.getfixturevalue("everything_over_http"),
            read_tools={},
            cancel_watch_sec=4.0,
        )
    )
    with opened as server:
        policy = Policy(timeouts=TimeoutPolicy.uniform(1.0))
        result, _model, texts = run(
            workspace, server, [tool_call(LONG_OP, {"duration": 3, "steps": 10}, "l")], policy
        )
        notes = [t for rnd in result.trace for t in rnd.calls][0].result.notes
        end = time.monotonic() + 30.0
        while len(notes.progress_sec) < 10:  # the server's own pace: every 0.3 s, for 3 s
            assert time.monotonic() < end, "the server stopped reporting progress"
            time.sleep(0.05)
        assert server.wait_watched()
    receipt = result.usage["native_tool_receipts"][0]
    assert (
        receipt["source_gap"] == "native_tool_abandoned" and receipt["ended_by"] == "tool_timeout"
    )
    assert receipt["cancel_sent"] is True and receipt["cancel_kind"] == "notification"
    assert receipt["clocks"]["tool_timeout"] == 1.0
    assert ("transport" in receipt["clocks"]) == (transport == "http")
    assert texts[0].startswith("⚠️ TOOL_TIMEOUT (trigger-long-running-operation)")
    episode = episode_from_result(result, id=f"everything-{transport}")
    call = episode.calls[0]
    assert call.ended_by == "tool_timeout" and call.cancel_sent is True
    assert call.late_result_sec is None  # a cancelled request is never answered by this server
    (verdict,) = cancel_calls([episode])["verdict"]
    assert verdict == "kept_working"  # progress kept coming after the cancel


def test_everything_server_cancels_a_task_over_streamable_http(everything_over_http, workspace):
    """Over Streamable HTTP too, a task-augmented call cancelled at 1.5 s is acknowledged
    ``cancelled`` and its states end there."""
    research = "simulate-research-query"
    policy = Policy(timeouts=TimeoutPolicy.uniform(1.5)).with_tasks(**{research: "cancel"})
    with MCPServer(url=everything_over_http, read_tools={}, cancel_watch_sec=4.0) as server:
        result, _model, texts = run(
            workspace, server, [tool_call(research, {"topic": "t"}, "t")], policy
        )
        notes = [t for rnd in result.trace for t in rnd.calls][0].result.notes
        assert server.wait_watched()
    receipt = result.usage["native_tool_receipts"][0]
    assert receipt["source_gap"] == "native_tool_abandoned"
    assert receipt["task_cancel_ack"] == "cancelled" and notes.task_states[-1] == "cancelled"
    assert texts[0].startswith(f"⚠️ TOOL_TIMEOUT ({research}): exceeded 1.5s limit.")
