"""The OpenAI-compatible model adapter and ``record_live``, against a loopback stub server."""

from __future__ import annotations

import json
import socket
import threading
from pathlib import Path

import pytest
from stub_openai import Hold, StubError, StubOpenAI

from reviewlab.live._inspection import demo_workspace, inspection_registry
from reviewlab.live._openai_model import ModelEndpointError, OpenAIChatModel
from reviewlab.recording.capture import record_live

_VERDICT = '[{"file": "inventory/stock.py", "line": 38, "finding": "reorder point uses < not <="}]'


def _call(name: str, args: dict[str, object], call_id: str = "c0") -> dict[str, object]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }


@pytest.fixture()
def stub():
    """A stub server whose script each test fills in before its first request."""
    with StubOpenAI([]) as server:
        yield server


def test_plain_answer_comes_back_as_content(stub):
    """A reply without tool calls gives content, no tool_calls, and the usage figures."""
    stub.script.append({"content": "looks fine"})
    model = OpenAIChatModel(stub.base_url, "stub-reviewer", temperature=0.0)
    reply = model.chat(messages=[{"role": "user", "content": "review"}])
    assert reply["content"] == "looks fine"
    assert "tool_calls" not in reply
    assert reply["finish_reason"] == "stop"
    assert reply["usage"]["total_tokens"] == 15
    sent = stub.requests[0]
    assert sent["model"] == "stub-reviewer" and sent["temperature"] == 0.0
    assert sent["messages"] == [{"role": "user", "content": "review"}]
    assert "tools" not in sent and "tool_choice" not in sent
    assert stub.paths == ["/v1/chat/completions"]


def test_tool_calls_are_parsed_into_the_openai_shape(stub, tmp_path):
    """Tool calls come back as id/type/function dicts with
    JSON-string arguments; schemas are sent."""
    stub.script.append(
        {
            "content": None,
            "tool_calls": [
                _call("read_file", {"path": "a.py", "start_line": 2}, "c1"),
                _call("list_files", {}, "c2"),
            ],
        }
    )
    _registry, _ctx, schemas = inspection_registry(tmp_path)
    model = OpenAIChatModel(stub.base_url, "stub-reviewer")
    reply = model.chat(
        messages=[{"role": "user", "content": "review"}], tools=schemas, tool_choice="auto"
    )
    assert reply["content"] is None
    assert reply["tool_calls"] == [
        {
            "id": "c1",
            "type": "function",
            "function": {"name": "read_file", "arguments": '{"path": "a.py", "start_line": 2}'},
        },
        {"id": "c2", "type": "function", "function": {"name": "list_files", "arguments": "{}"}},
    ]
    assert reply["finish_reason"] == "tool_calls"
    sent = stub.requests[0]
    assert [tool["function"]["name"] for tool in sent["tools"]] == [
        "read_file",
        "list_files",
        "search_code",
    ]
    assert sent["tool_choice"] == "auto"


def test_tool_messages_are_sent_back_in_wire_shape(stub):
    """The assistant turn and the tool results reach the server; local bookkeeping keys do not."""
    stub.script.append({"content": "done"})
    model = OpenAIChatModel(stub.base_url, "stub-reviewer")
    assistant = {
        "role": "assistant",
        "content": None,
        "tool_calls": [_call("read_file", {"path": "a.py"}, "c1")],
        "usage": {"total_tokens": 3},
        "finish_reason": "tool_calls",
    }
    messages = [
        {"role": "system", "content": "You review code."},
        {"role": "user", "content": "review"},
        assistant,
        {"role": "tool", "tool_call_id": "c1", "content": "a.py (lines 1-1 of 1)\n1\tx = 1\n"},
    ]
    model.chat(messages=messages, tools=None, tool_choice="auto", max_tokens=None)
    sent = stub.requests[0]["messages"]
    assert sent[2] == {"role": "assistant", "content": None, "tool_calls": assistant["tool_calls"]}
    assert sent[3] == {
        "role": "tool",
        "tool_call_id": "c1",
        "content": "a.py (lines 1-1 of 1)\n1\tx = 1\n",
    }
    assert "max_tokens" not in stub.requests[0] and "tool_choice" not in stub.requests[0]


def test_http_error_raises_naming_endpoint_status_and_model(stub):
    """An error status from the endpoint is a ModelEndpointError with the status and message."""
    stub.script.append(StubError(429, "rate limited, slow down"))
    model = OpenAIChatModel(stub.base_url, "stub-reviewer")
    with pytest.raises(ModelEndpointError, match=r"model 'stub-reviewer'.*HTTP 429.*rate limited"):
        model.chat(messages=[{"role": "user", "content": "review"}])
    assert len(stub.requests) == 1  # no silent retry


def test_unreachable_endpoint_raises():
    """A closed port is reported as unreachable, not as a hang."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    model = OpenAIChatModel(f"http://127.0.0.1:{port}/v1", "stub-reviewer", timeout=5.0)
    with pytest.raises(ModelEndpointError, match="unreachable"):
        model.chat(messages=[{"role": "user", "content": "review"}])


def test_transport_timeout_raises(stub):
    """A server that does not answer within the timeout gives a
    ModelEndpointError naming the timeout."""
    release = threading.Event()
    stub.script.append(Hold(release))
    model = OpenAIChatModel(stub.base_url, "stub-reviewer", timeout=0.3)
    try:
        with pytest.raises(ModelEndpointError, match=r"did not answer within 0\.3s"):
            model.chat(messages=[{"role": "user", "content": "review"}])
    finally:
        release.set()


def test_bad_construction_and_messages_are_refused():
    """A non-HTTP URL, an empty model name, a bad timeout and a
    role-less message are clear errors."""
    with pytest.raises(ValueError, match="base_url"):
        OpenAIChatModel("localhost:8000", "m")
    with pytest.raises(ValueError, match="model"):
        OpenAIChatModel("http://127.0.0.1:1/v1", "")
    with pytest.raises(ValueError, match="timeout"):
        OpenAIChatModel("http://127.0.0.1:1/v1", "m", timeout=0)
    model = OpenAIChatModel("http://user:secret@127.0.0.1:1/v1?x=1", "m")
    assert model.endpoint == "http://127.0.0.1:1/v1" and "secret" not in repr(model)
    with pytest.raises(ValueError, match=r"messages\[1\]"):
        model.chat(messages=[{"role": "user", "content": "a"}, {"content": "no role"}])


def test_record_live_runs_an_episode_over_the_demo_workspace_and_writes_jsonl(stub, tmp_path):
    """One live episode against the stub reads the demo workspace and lands as one recorded line."""
    from reviewlab.recording._files import load_episodes

    stub.script.extend(
        [
            {"tool_calls": [_call("list_files", {"recursive": True}, "c1")]},
            {
                "tool_calls": [
                    _call(
                        "read_file",
                        {"path": "inventory/stock.py", "start_line": 30, "end_line": 40},
                        "c2",
                    ),
                    _call("search_code", {"pattern": "BULK_THRESHOLD"}, "c3"),
                ]
            },
            {"content": _VERDICT},
        ]
    )
    out = tmp_path / "live.jsonl"
    result = record_live(
        stub.base_url,
        "stub-reviewer",
        demo_workspace(),
        "Review the reorder change.",
        out,
        episode_id="live-test-1",
    )

    assert result.raw_text == _VERDICT
    assert result.usage["native_end_reason"] == "final_answer"
    assert result.usage["native_rounds"] == 3
    receipts = result.usage["native_tool_receipts"]
    assert [(r["tool"], r["outcome"]) for r in receipts] == [
        ("list_files", "executed"),
        ("read_file", "executed"),
        ("search_code", "executed"),
    ]
    # The tool results went back to the endpoint as tool messages.
    third = stub.requests[2]["messages"]
    tool_msgs = [m for m in third if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_msgs] == ["c1", "c2", "c3"]
    assert "inventory/stock.py" in tool_msgs[0]["content"]
    assert "def needs_reorder" in tool_msgs[1]["content"]
    assert "inventory/pricing.py" in tool_msgs[2]["content"]
    assert "Review the reorder change." in json.dumps(stub.requests[0]["messages"])

    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1
    # The stub reports usage per reply: the episode records it, which needs version 2.
    assert json.loads(lines[0])["schema"] == "reviewlab.episode/2"
    (episode,) = load_episodes(out)
    assert episode.model == "stub-reviewer"
    tokens = [(r.input_tokens, r.output_tokens) for r in episode.rounds]
    assert tokens == [(10, 5), (20, 5), (30, 5)]
    assert (episode.id, episode.source, episode.slot) == ("live-test-1", "live", "live")
    assert episode.end_reason == "final_answer"
    assert episode.meta["model"] == "stub-reviewer" and episode.meta["endpoint"] == stub.base_url
    assert [len(rnd.calls) for rnd in episode.rounds] == [1, 2, 0]
    read = episode.rounds[1].calls[0]
    assert read.tool == "read_file" and read.completed and read.status == "ok"
    assert read.extent is not None and (
        read.extent.path,
        read.extent.start_line,
        read.extent.end_line,
    ) == ("inventory/stock.py", 30, 40)
    assert read.result_chars == len(tool_msgs[1]["content"])
    assert all(rnd.send_sec >= 0 for rnd in episode.rounds)


def test_record_live_model_error_is_recorded(stub, tmp_path):
    """An endpoint failure ends the episode as a model error, and the episode is still written."""
    from reviewlab.recording._files import load_episodes

    stub.script.append(StubError(503, "overloaded"))
    out = tmp_path / "failed.jsonl"
    result = record_live(stub.base_url, "stub-reviewer", demo_workspace(), None, out, slot="s1")
    assert result.usage["native_end_reason"] == "model_error"
    (episode,) = load_episodes(out)
    assert episode.end_reason == "model_error" and episode.slot == "s1"


def test_record_live_refuses_a_missing_root(tmp_path):
    """A root that is not a directory is refused before any request is sent."""
    with pytest.raises(NotADirectoryError, match="absent"):
        record_live(
            "http://127.0.0.1:1/v1", "m", tmp_path / "absent", "task", tmp_path / "out.jsonl"
        )
    assert not Path(tmp_path / "out.jsonl").exists()
