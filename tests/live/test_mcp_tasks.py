"""MCP Tasks, live: a task-augmented call is bounded like any other, then cancelled or detached.

Against the pinned reference ``server-everything`` (its ``simulate-research-query`` runs as a
task through four one-second stages) and the demo server (a task it forgets at once). Bounds
are 1.5 s against 4 s of work, or 30 s against it; every other wait is on a state the server
drives (the task's end), never on a race the test decides.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from reviewlab.core._policy import Policy, PolicyError, TimeoutPolicy
from reviewlab.live._episode import ReviewEpisode, ScriptedModel, tool_call
from reviewlab.live.mcp import MCPServer, demo_server_command
from reviewlab.recording._files import EpisodeFormatError, load_episodes, save_episodes
from reviewlab.recording.capture import episode_from_result

EVERYTHING = (
    Path(__file__).resolve().parents[1]
    / "mcp"
    / "node_modules"
    / "@modelcontextprotocol"
    / "server-everything"
    / "dist"
    / "index.js"
)
RESEARCH = "simulate-research-query"


@pytest.fixture(scope="module")
def everything():
    """``server-everything`` over stdio (installed by ``npm ci --prefix tests/mcp``)."""
    assert EVERYTHING.is_file(), "run npm ci --prefix tests/mcp (make test does)"
    command = [shutil.which("node") or "node", str(EVERYTHING), "stdio"]
    with MCPServer(command, read_tools={}, cancel_watch_sec=30.0) as server:
        yield server


def run(root, server, policy, name=RESEARCH, args=None):
    model = ScriptedModel(
        [{"tool_calls": [tool_call(name, args or {"topic": "t"})]}, {"content": "[]"}]
    )
    result = ReviewEpisode(
        root, model, policy=policy, registry_factory=server.registry_factory
    ).execute()
    text = next(m["content"] for m in model.calls[-1]["messages"] if m.get("role") == "tool")
    notes = result.trace[0].calls[0].result.notes
    return result, text, notes


def wait_for(predicate, timeout=30.0):
    """Poll ``predicate`` until true (a state the server drives, not a race we decide)."""
    end = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < end, "condition never became true"
        time.sleep(0.05)


def test_a_task_that_ends_inside_its_bound_is_its_result(everything, tmp_path):
    """Polled at the server's interval, the task's result comes from ``tasks/result``."""
    policy = Policy(timeouts=TimeoutPolicy.uniform(30.0)).with_tasks(**{RESEARCH: "cancel"})
    result, text, notes = run(tmp_path, everything, policy)
    receipt = result.usage["native_tool_receipts"][0]
    assert receipt["outcome"] == "executed" and text.startswith("# Research Report: t")
    assert receipt["task_states"] == ["working", "completed"] and receipt["task_id"]
    assert receipt["ended_by"] == "returned"


def test_a_task_cancelled_at_its_bound_is_abandoned_and_the_server_says_so(everything, tmp_path):
    """At 1.5 s the call is abandoned and ``tasks/cancel`` sent; the server acknowledges, the
    states end ``cancelled``, and the recording carries them."""
    policy = Policy(timeouts=TimeoutPolicy.uniform(1.5)).with_tasks(**{RESEARCH: "cancel"})
    result, text, notes = run(tmp_path, everything, policy)
    receipt = result.usage["native_tool_receipts"][0]
    assert receipt["source_gap"] == "native_tool_abandoned" and receipt["cancel_sent"] is True
    assert receipt["cancel_kind"] == "tasks/cancel" and receipt["task_cancel_ack"] == "cancelled"
    assert text.startswith("⚠️ TOOL_TIMEOUT (simulate-research-query): exceeded 1.5s limit.")
    assert notes.task_states[0] == "working" and notes.task_states[-1] == "cancelled"
    call = episode_from_result(result, id="cancelled").calls[0]
    assert call.task_states == notes.task_states and call.ended_by == "tool_timeout"


def test_a_detached_task_runs_on_and_its_late_result_is_recorded(everything, tmp_path):
    """Detached at 1.5 s, the model is told the task runs on; the task completes on the server
    and its result is recorded as a valid result dropped (JSONL and Parquet keep the states)."""
    policy = Policy(timeouts=TimeoutPolicy.uniform(1.5)).with_tasks(**{RESEARCH: "detach"})
    result, text, notes = run(tmp_path, everything, policy)
    receipt = result.usage["native_tool_receipts"][0]
    assert receipt["source_gap"] == "native_tool_abandoned" and receipt["cancel_sent"] is False
    assert text.startswith(f"⏳ TOOL_TASK ({RESEARCH}): still running as task {notes.task_id}")
    wait_for(lambda: notes.late_result_sec is not None)
    assert notes.task_states[-1] == "completed" and notes.late_result_chars > 100
    episode = episode_from_result(result, id="detached")
    for name in ("d.jsonl", "d.parquet"):
        save_episodes([episode], tmp_path / name)
        (loaded,) = load_episodes(tmp_path / name)
        assert loaded.calls[0].task_states == notes.task_states
        assert loaded.calls[0].late_result_chars == notes.late_result_chars


def test_a_task_id_the_server_does_not_know_is_one_error_receipt(tmp_path):
    """The demo server forgets its task at once: the call is one error receipt naming the
    task, and the episode ends with its answer."""
    policy = Policy.uniform(30.0).with_tasks(forgetful_task="cancel")
    with MCPServer(demo_server_command(tmp_path)) as server:
        result, text, notes = run(tmp_path, server, policy, "forgetful_task", {})
    receipt = result.usage["native_tool_receipts"][0]
    assert receipt["outcome"] == "error" and "does not know task" in text
    assert notes.task_id in text and result.usage["native_end_reason"] == "final_answer"


def test_tasks_need_a_registry_that_runs_them(tmp_path):
    """A policy with tasks on the inspection tools is refused by name before any call."""
    policy = Policy.uniform(5.0).with_tasks(read_file="cancel")
    episode = ReviewEpisode(tmp_path, ScriptedModel([{"content": "[]"}]), policy=policy)
    with pytest.raises(PolicyError, match="tasks"):
        episode.execute()


def test_a_recorded_task_state_outside_the_vocabulary_is_an_error(tmp_path):
    """A JSONL line whose task state is not one of the protocol's names fails naming it."""
    line = (
        '{"schema":"reviewlab.episode/2","id":"x","source":"live",'
        '"started_at":"2026-11-01T00:00:00Z","rounds":[{"send_sec":1.0,"calls":[{"tool":"t",'
        '"duration_sec":1.0,"task_states":["working","exploded"]}]}]}\n'
    )
    path = tmp_path / "bad.jsonl"
    path.write_text(line, encoding="utf-8")
    with pytest.raises(EpisodeFormatError, match="task_states"):
        load_episodes(path)
