"""MCP tools as the reviewer's tools, against our own demo server over real stdio.

The demo server's tools misbehave deterministically: ``wedge`` never answers, ``ignore_cancel``
answers a fixed time after the cancellation arrives, ``honour_cancel`` stops the moment it
arrives, ``progress`` reports progress at a steady pace. No assertion here depends on a sleep
being short: every margin is many times the work it bounds.
"""

from __future__ import annotations

import time

import pytest

from reviewlab.core._policy import Policy, TimeoutPolicy
from reviewlab.live._episode import ReviewEpisode, ScriptedModel, tool_call
from reviewlab.live.mcp import MCPServer, MCPServerError, demo_server_command

VERDICT = '[{"file": "greeting.txt", "line": 1, "finding": "fine"}]'
GENEROUS = 30.0


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    base = tmp_path_factory.mktemp("mcp")
    root = base / "subject"
    root.mkdir()
    (root / "greeting.txt").write_text("hello native reviewer\n", encoding="utf-8")
    (root / "notes.md").write_text("one\ntwo\nthree\n", encoding="utf-8")
    (base / "secret.txt").write_text("outside the workspace\n", encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def server(workspace):
    with MCPServer(demo_server_command(workspace), cancel_watch_sec=GENEROUS) as running:
        yield running


def episode(workspace, server, calls, policy=None):
    script = [{"tool_calls": [call]} for call in calls] + [{"content": VERDICT}]
    model = ScriptedModel(script)
    result = ReviewEpisode(
        workspace,
        model,
        policy=policy or TimeoutPolicy.uniform(GENEROUS),
        registry_factory=server.registry_factory,
    ).execute()
    return result, model


def tool_texts(model):
    return [m["content"] for m in model.calls[-1]["messages"] if m.get("role") == "tool"]


def notes_of(result, index=0):
    return [trace for rnd in result.trace for trace in rnd.calls][index].result.notes


def wait_for(predicate, timeout=GENEROUS):
    """Poll ``predicate`` until true (a state the server drives, not a race we decide)."""
    end = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < end, "condition never became true"
        time.sleep(0.01)


def test_the_model_sees_the_servers_own_tools(workspace, server):
    """The schemas sent to the model are the server's tools with their input schemas."""
    result, model = episode(workspace, server, [])
    offered = {schema["function"]["name"] for schema in model.calls[0]["tools"]}
    assert offered == {
        "read_file",
        "list_files",
        "wedge",
        "ignore_cancel",
        "honour_cancel",
        "progress",
        "drop_stream",
        "drop_once",
        "malformed",
        "crash",
        "seen_cancels",
        "forgetful_task",
    }
    read = next(s for s in model.calls[0]["tools"] if s["function"]["name"] == "read_file")
    assert read["function"]["parameters"]["required"] == ["path"]
    assert result.usage["native_end_reason"] == "final_answer"


def test_reads_are_credited_through_the_read_tool_mapping(workspace, server):
    """A read through the server is executed and credited its extent; a listing is executed."""
    result, model = episode(
        workspace,
        server,
        [
            tool_call("read_file", {"path": "notes.md"}, "r1"),
            tool_call("list_files", {"path": "."}, "l1"),
        ],
    )
    read, listing = result.usage["native_tool_receipts"]
    assert read["outcome"] == "executed" and read["opened_path"] == "notes.md"
    assert (read["start_line"], read["end_line"], read["total_lines"], read["eof"]) == (
        1,
        3,
        3,
        True,
    )
    assert read["cancel_sent"] is False and read["cancel_honoured_sec"] is None
    assert listing["outcome"] == "executed" and "start_line" not in listing
    assert tool_texts(model) == ["one\ntwo\nthree\n", "greeting.txt\nnotes.md"]
    assert notes_of(result).transport == "mcp"


def test_an_escape_is_refused_by_the_server_and_reads_nothing(workspace, server):
    """A ``..`` path is the server's error result: an error receipt, no gap, no content."""
    result, model = episode(workspace, server, [tool_call("read_file", {"path": "../secret.txt"})])
    receipt = result.usage["native_tool_receipts"][0]
    assert receipt["outcome"] == "error" and "source_gap" not in receipt
    assert "start_line" not in receipt
    (text,) = tool_texts(model)
    assert "access denied" in text and "outside the workspace" not in text
    assert result.usage["native_source_gap"] == ""


def test_a_wedged_call_is_abandoned_cancelled_on_the_wire_and_the_episode_continues(
    workspace, server
):
    """At its bound the call is abandoned,
    ``notifications/cancelled`` goes out, the model goes on."""
    result, model = episode(
        workspace, server, [tool_call("wedge", {})], policy=TimeoutPolicy.uniform(0.5)
    )
    receipt = result.usage["native_tool_receipts"][0]
    assert receipt["outcome"] == "error" and receipt["source_gap"] == "native_tool_abandoned"
    assert receipt["cancel_sent"] is True and receipt["cancel_honoured_sec"] is None
    assert tool_texts(model)[0].startswith("⚠️ TOOL_TIMEOUT (wedge): exceeded 0.5s limit.")
    assert result.raw_text == VERDICT
    assert notes_of(result).request_id is not None


def test_the_time_a_server_takes_to_stop_after_the_cancel_is_recorded(workspace, server):
    """A server that answers after the cancel is seen stopping; one that honours it stops first."""
    delay = 2.0
    result, _model = episode(
        workspace,
        server,
        [
            tool_call("ignore_cancel", {"after_sec": delay}, "i1"),
            tool_call("honour_cancel", {}, "h1"),
        ],
        policy=TimeoutPolicy.uniform(0.3),
    )
    ignoring, honouring = notes_of(result, 0), notes_of(result, 1)
    assert ignoring.cancel_sent and honouring.cancel_sent
    wait_for(lambda: ignoring.cancel_honoured_sec is not None)
    wait_for(lambda: honouring.cancel_honoured_sec is not None)
    assert ignoring.cancel_honoured_sec >= delay
    assert honouring.cancel_honoured_sec < delay


def test_progress_resets_the_idle_timeout(workspace, server):
    """Progress keeps an idle-bounded call alive; once it stops, the idle timeout abandons it."""
    steps, idle = 20, 1.0
    policy = Policy(timeouts=TimeoutPolicy.uniform(GENEROUS), idle_sec={"progress": idle})
    call = tool_call("progress", {"steps": steps, "interval_sec": 0.05, "then": "wedge"})
    result, model = episode(workspace, server, [call], policy=policy)
    receipt = result.usage["native_tool_receipts"][0]
    notes = notes_of(result)
    assert receipt["bound_by"] == "idle" and receipt["source_gap"] == "native_tool_abandoned"
    assert receipt["cancel_sent"] is True
    assert len(notes.progress_sec) == steps
    assert receipt["bound_sec"] >= notes.progress_sec[-1] + idle - 1e-6
    assert tool_texts(model)[0].startswith("⚠️ TOOL_TIMEOUT (progress)")


def test_the_hard_maximum_caps_an_operation_that_keeps_reporting_progress(workspace, server):
    """Steady progress resets the idle clock but not the hard maximum, which abandons the call."""
    policy = Policy(timeouts=TimeoutPolicy.uniform(1.0), idle_sec={"progress": 0.8})
    call = tool_call("progress", {"steps": 500, "interval_sec": 0.02})
    result, _model = episode(workspace, server, [call], policy=policy)
    receipt = result.usage["native_tool_receipts"][0]
    assert receipt["bound_by"] == "tool_timeout" and receipt["bound_sec"] == 1.0
    assert receipt["source_gap"] == "native_tool_abandoned" and receipt["cancel_sent"] is True
    assert notes_of(result).progress_sec


def test_a_server_that_cannot_start_is_one_clear_error_naming_the_command(tmp_path):
    """A command that is not an MCP server fails the ``with`` with the command in the message."""
    with (
        pytest.raises(MCPServerError, match="definitely-not-an-mcp-server"),
        MCPServer(["definitely-not-an-mcp-server-xyz"], start_timeout_sec=10),
    ):
        pass


def test_a_closed_server_gives_no_registry():
    """``registry_factory`` outside the ``with`` block is an error, not a hang."""
    server = MCPServer(demo_server_command())
    with pytest.raises(RuntimeError, match="not open"):
        server.registry_factory(".")


def test_an_episode_on_another_loop_reaches_the_server_across_threads(workspace, server):
    """``await aexecute()`` on the caller's own loop: calls, cancels and progress cross over."""
    import asyncio

    policy = Policy(timeouts=TimeoutPolicy.uniform(0.5), idle_sec={"progress": 1.0})
    model = ScriptedModel(
        [
            {"tool_calls": [tool_call("read_file", {"path": "greeting.txt"}, "r")]},
            {"tool_calls": [tool_call("wedge", {}, "w")]},
            {"content": VERDICT},
        ]
    )

    async def main():
        episode = ReviewEpisode(
            workspace, model, policy=policy, registry_factory=server.registry_factory
        )
        return await episode.aexecute()

    result = asyncio.run(main())
    read, wedged = result.usage["native_tool_receipts"]
    assert read["outcome"] == "executed" and read["opened_path"] == "greeting.txt"
    assert wedged["source_gap"] == "native_tool_abandoned" and wedged["cancel_sent"] is True
    assert result.raw_text == VERDICT


def test_async_with_runs_the_session_on_the_callers_loop(workspace):
    """``async with MCPServer(...)`` keeps the session on the running loop; an episode awaits it."""
    import asyncio

    async def main():
        async with MCPServer(demo_server_command(workspace)) as running:
            assert running.loop is asyncio.get_running_loop()
            model = ScriptedModel(
                [{"tool_calls": [tool_call("list_files", {})]}, {"content": VERDICT}]
            )
            episode = ReviewEpisode(workspace, model, registry_factory=running.registry_factory)
            return await episode.aexecute(), model

    result, model = asyncio.run(main())
    assert result.usage["native_tool_receipts"][0]["outcome"] == "executed"
    assert tool_texts(model) == ["greeting.txt\nnotes.md"]


def test_execute_works_from_inside_a_running_loop(workspace, server):
    """Sync ``execute()`` called under a running loop (a notebook cell) does not deadlock."""
    import asyncio

    async def cell():
        model = ScriptedModel(
            [{"tool_calls": [tool_call("read_file", {"path": "notes.md"})]}, {"content": VERDICT}]
        )
        return ReviewEpisode(workspace, model, registry_factory=server.registry_factory).execute()

    result = asyncio.run(cell())
    assert result.usage["native_tool_receipts"][0]["outcome"] == "executed"


def test_without_the_mcp_extra_the_error_says_what_to_install(monkeypatch, workspace):
    """With the SDK missing, entering the server is one ImportError naming the extra."""
    import builtins

    real_import = builtins.__import__

    def no_mcp(name, *args, **kwargs):
        if name == "mcp" or name.startswith("mcp."):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_mcp)
    with (
        pytest.raises(ImportError, match=r"reviewlab\[mcp\]"),
        MCPServer(demo_server_command(workspace)),
    ):
        pass
