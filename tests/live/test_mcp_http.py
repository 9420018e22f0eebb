"""MCP over the official SDK's transports: stdio and Streamable HTTP give an episode one registry.

The demo server runs over stdio, over HTTP at the 2025-11-25 handshake, and over HTTP at the
stateless 2026-07-28 revision (``--modern``). Waits in these tests are on states the server
drives (a late answer arrives, a cancel is seen), never on a race the test decides; every bound
that must fire is 0.3 s against work that takes a second or forever.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from reviewlab.core._policy import Policy, TimeoutPolicy
from reviewlab.live._episode import ReviewEpisode, ScriptedModel, tool_call
from reviewlab.live.mcp import MCPServer, MCPServerError, demo_http_server, demo_server_command
from reviewlab.recording._files import load_episodes, save_episodes
from reviewlab.recording.capture import episode_from_result

GENEROUS = 30.0
SHORT = 0.3
KINDS = ("stdio", "http", "http-modern")


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("mcp-http") / "subject"
    root.mkdir()
    (root / "notes.md").write_text("one\ntwo\nthree\n", encoding="utf-8")
    return root


@pytest.fixture(scope="module", params=KINDS)
def server(request, workspace) -> Iterator[MCPServer]:
    """The demo server over one transport (module-scoped: one process per transport)."""
    if request.param == "stdio":
        with MCPServer(demo_server_command(workspace), cancel_watch_sec=GENEROUS) as running:
            yield running
        return
    with (
        demo_http_server(workspace, modern=request.param == "http-modern") as url,
        MCPServer(url=url, cancel_watch_sec=GENEROUS) as running,
    ):
        yield running


def run(workspace, server, calls, policy=None):
    model = ScriptedModel([{"tool_calls": [c]} for c in calls] + [{"content": "[]"}])
    result = ReviewEpisode(
        workspace,
        model,
        policy=policy or Policy.uniform(GENEROUS),
        registry_factory=server.registry_factory,
    ).execute()
    texts = [m["content"] for m in model.calls[-1]["messages"] if m.get("role") == "tool"]
    return result, texts


def notes(result, index=0):
    return [trace for rnd in result.trace for trace in rnd.calls][index].result.notes


def direct(server: MCPServer, name: str, args=None) -> str:
    """Call a tool outside any episode (on the session's loop), for what the server saw."""
    registry, _ctx, _schemas = server.registry_factory(".")
    future = asyncio.run_coroutine_threadsafe(registry.execute(name, args or {}), server.loop)
    return future.result(GENEROUS)


def wait_for(predicate, timeout=GENEROUS):
    """Poll ``predicate`` until true (a state the server drives, not a race we decide)."""
    end = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < end, "condition never became true"
        time.sleep(0.02)


def test_command_and_url_give_an_episode_the_same_registry(workspace):
    """Over stdio, HTTP and HTTP at 2026-07-28 the model is offered the same tools and a read
    is executed and credited the same extent."""
    seen = []
    for kind in KINDS:
        if kind == "stdio":
            with MCPServer(demo_server_command(workspace)) as running:
                result, texts = run(
                    workspace, running, [tool_call("read_file", {"path": "notes.md"})]
                )
                schemas = running.schemas
        else:
            with (
                demo_http_server(workspace, modern=kind == "http-modern") as url,
                MCPServer(url=url) as running,
            ):
                result, texts = run(
                    workspace, running, [tool_call("read_file", {"path": "notes.md"})]
                )
                schemas = running.schemas
                version = running.protocol_version
                assert version == ("2026-07-28" if kind == "http-modern" else "2025-11-25")
        receipt = result.usage["native_tool_receipts"][0]
        kept = {k: receipt[k] for k in ("outcome", "opened_path", "start_line", "end_line")}
        seen.append((schemas, texts, kept, receipt["ended_by"]))
    assert seen[0] == seen[1] == seen[2]
    assert seen[0][2] == {
        "outcome": "executed",
        "opened_path": "notes.md",
        "start_line": 1,
        "end_line": 3,
    }


def test_the_cancel_goes_out_as_the_negotiated_version_says(workspace, server):
    """At the bound the call is abandoned and cancelled: a notification over stdio and at the
    handshake, the request's stream closed at 2026-07-28; the server sees that request's cancel."""
    result, texts = run(workspace, server, [tool_call("wedge", {})], Policy.uniform(SHORT))
    receipt = result.usage["native_tool_receipts"][0]
    assert receipt["source_gap"] == "native_tool_abandoned" and receipt["cancel_sent"] is True
    modern = server.protocol_version == "2026-07-28"
    assert receipt["cancel_kind"] == ("stream_closed" if modern else "notification")
    assert texts[0].startswith("⚠️ TOOL_TIMEOUT (wedge): exceeded 0.3s limit.")
    request_id = notes(result).request_id
    wait_for(lambda: request_id in json.loads(direct(server, "seen_cancels")))


def test_a_late_valid_result_is_recorded_and_never_credited(workspace, server, tmp_path):
    """A server that answers 1 s after the cancel: the model got the timeout text, the answer is
    recorded (how late, its size) in receipts and in JSONL and Parquet recordings; at 2026-07-28
    the closed stream can carry no answer, so none is recorded."""
    call = tool_call("ignore_cancel", {"after_sec": 1.0}, "late")
    result, texts = run(workspace, server, [call], Policy.uniform(SHORT))
    assert texts[0].startswith("⚠️ TOOL_TIMEOUT (ignore_cancel)")
    late = notes(result)
    if server.protocol_version == "2026-07-28":
        assert late.late_result_sec is None and late.cancel_kind == "stream_closed"
        return
    wait_for(lambda: late.late_result_sec is not None)
    assert late.late_result_sec >= 1.0 and late.late_result_chars == len("finished anyway")
    episode = episode_from_result(result, id="late")
    recorded = episode.calls[0]
    assert (recorded.late_result_sec, recorded.late_result_chars) == (
        late.late_result_sec,
        len("finished anyway"),
    )
    assert recorded.completed is False and recorded.ended_by == "tool_timeout"
    for name in ("late.jsonl", "late.parquet"):
        save_episodes([episode], tmp_path / name)
        (loaded,) = load_episodes(tmp_path / name)
        assert loaded.calls[0].late_result_sec == recorded.late_result_sec
        assert loaded.calls[0].late_result_chars == recorded.late_result_chars
        assert loaded.calls[0].ended_by == "tool_timeout"


def test_receipts_say_which_clock_fired_and_every_clock_that_applied(workspace, server):
    """A returned call says ``returned``; an idle-abandoned one ``idle``, with the tool
    timeout, the idle timeout and the cap it had; HTTP calls list the transport's clock."""
    policy = Policy(timeouts=TimeoutPolicy.uniform(20.0), idle_sec={"progress": 1.0})
    calls = [
        tool_call("list_files", {}, "l"),
        tool_call("progress", {"steps": 2, "interval_sec": 0.05, "then": "wedge"}, "p"),
    ]
    result, _texts = run(workspace, server, calls, policy)
    listing, quiet = result.usage["native_tool_receipts"]
    assert listing["ended_by"] == "returned" and quiet["ended_by"] == "idle"
    assert quiet["clocks"]["idle"] == 1.0 and quiet["clocks"]["total_cap"] == 20.0
    assert quiet["clocks"]["tool_timeout"] == 20.0
    assert ("transport" in quiet["clocks"]) == (server.url is not None)


def test_a_dropped_stream_reissues_an_idempotent_tool_once(workspace):
    """Over HTTP a stream closed without an answer re-issues an idempotent call once under a new
    id; a side-effecting call's drop is an error receipt that says it was not re-issued."""
    policy = Policy.uniform(GENEROUS).with_idempotent("drop_once", "drop_stream")
    calls = [
        tool_call("drop_once", {"key": "a"}, "again"),
        tool_call("drop_stream", {}, "twice"),
    ]
    with demo_http_server(workspace) as url, MCPServer(url=url) as running:
        result, texts = run(workspace, running, calls, policy)
        kept, lost = result.usage["native_tool_receipts"]
        assert kept["outcome"] == "executed" and kept["reissued"] is True
        assert texts[0] == "answered on attempt 2"
        assert lost["outcome"] == "error" and "re-issued once, dropped again" in texts[1]
        side, side_texts = run(
            workspace, running, [tool_call("drop_once", {"key": "b"})], Policy.uniform(GENEROUS)
        )
    receipt = side.usage["native_tool_receipts"][0]
    assert receipt["outcome"] == "error" and "reissued" not in receipt
    assert "not re-issued" in side_texts[0] and "may have run" in side_texts[0]


def test_a_malformed_answer_is_one_error_receipt(workspace, server):
    """A result whose content is not a list is an error receipt naming the defect."""
    result, texts = run(workspace, server, [tool_call("malformed", {})])
    assert result.usage["native_tool_receipts"][0]["outcome"] == "error"
    assert "malformed tools/call result" in texts[0]
    assert result.usage["native_end_reason"] == "final_answer"


def test_an_unreachable_url_is_one_clear_error_naming_it():
    """Nothing listens on the URL: entering the server fails at once with the URL named."""
    url = "http://127.0.0.1:9/mcp"
    started = time.monotonic()
    with pytest.raises(MCPServerError, match="127.0.0.1:9"), MCPServer(url=url):
        pass
    assert time.monotonic() - started < GENEROUS


def test_a_server_that_dies_mid_episode_costs_one_receipt_per_call(workspace, tmp_path):
    """The HTTP server is killed after the first call: each later call is one error receipt,
    the episode ends with its answer, and its recording is written whole."""
    argv = [*demo_server_command(workspace), "--http", "0"]
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        url = process.stdout.readline().removeprefix("listening on ").strip()
        with MCPServer(url=url) as running:

            class Killing(ScriptedModel):
                def chat(self, **kwargs):
                    if len(self.calls) == 1:
                        process.kill()
                        process.wait()
                    return super().chat(**kwargs)

            calls = [tool_call("list_files", {}, f"c{i}") for i in range(3)]
            model = Killing([{"tool_calls": [c]} for c in calls] + [{"content": "[]"}])
            result = ReviewEpisode(
                workspace,
                model,
                policy=Policy.uniform(GENEROUS),
                registry_factory=running.registry_factory,
            ).execute()
    finally:
        process.kill()
        process.wait()
        if process.stdout is not None:
            process.stdout.close()
    outcomes = [r["outcome"] for r in result.usage["native_tool_receipts"]]
    assert outcomes == ["executed", "error", "error"]
    assert result.usage["native_end_reason"] == "final_answer"
    episode = episode_from_result(result, id="died")
    save_episodes([episode], tmp_path / "died.jsonl")
    assert [c.status for c in load_episodes(tmp_path / "died.jsonl")[0].calls] == [
        "ok",
        "error",
        "error",
    ]


def test_a_version_2_line_written_before_the_late_fields_reads_them_as_null(tmp_path):
    """A version 2 call with the twelve keys of before loads (pydantic and the Arrow fast path)
    with ``late_result_sec``, ``late_result_chars`` and ``ended_by`` null."""
    from reviewlab.recording.jsonl import jsonl_table

    call = {
        "tool": "t",
        "args": {},
        "duration_sec": 1.0,
        "completed": True,
        "status": "ok",
        "result_chars": 0,
        "extent": None,
        "returned_after_sec": None,
        "transport": "mcp",
        "progress_sec": [0.5],
        "cancel_sent": False,
        "cancel_honoured_sec": None,
    }
    line = {
        "schema": "reviewlab.episode/2",
        "id": "old",
        "source": "live",
        "slot": "",
        "started_at": "2026-11-01T00:00:00Z",
        "deadline_sec": None,
        "end_reason": "final_answer",
        "task": "",
        "meta": {},
        "rounds": [{"send_sec": 1.0, "calls": [call]}],
    }
    path = tmp_path / "old.jsonl"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    (episode,) = load_episodes(path)
    assert episode.calls[0].late_result_sec is None and episode.calls[0].ended_by is None
    row = jsonl_table(path).column("rounds").to_pylist()[0][0]["calls"][0]
    assert row["late_result_sec"] is None and row["ended_by"] is None
