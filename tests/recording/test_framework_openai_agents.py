"""The OpenAI Agents SDK's current release, run offline, and the trace it exported imported.

The run: an ``Agent`` whose model is a scripted ``agents.models.interface.Model`` (no API, no
key) asking for ``read_file`` on a real file, then a ``read_file`` that hangs past the SDK's
own ``timeout=0.5`` beside one that returns, then answering. The SDK's tracing hands every
span to :class:`~reviewlab.recording.interop.AgentsTraceFile`; expected figures come from
the SDK's own span objects, collected by a second processor.
"""

from __future__ import annotations

import asyncio
import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from agents import Agent, ModelResponse, Runner, Usage, function_tool, set_trace_processors
from agents.models.interface import Model
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

from reviewlab.recording.interop import AgentsTraceFile, import_auto, import_openai_agents

_HANG = asyncio.Event()  # never set: the hanging read waits on it


class _Scripted(Model):
    """A model that answers from a list of output items, one list per turn."""

    def __init__(self, turns: list[list[Any]]) -> None:
        self.turns = turns

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        usage = Usage(requests=1, input_tokens=7, output_tokens=2, total_tokens=9)
        return ModelResponse(output=self.turns.pop(0), usage=usage, response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("the test never streams")


class _Spans:
    """A second processor that keeps the SDK's function spans as objects."""

    def __init__(self) -> None:
        self.functions: list[Any] = []

    def on_trace_start(self, trace: Any) -> None: ...
    def on_trace_end(self, trace: Any) -> None: ...
    def on_span_start(self, span: Any) -> None: ...
    def on_span_end(self, span: Any) -> None:
        if span.span_data.type == "function":
            self.functions.append(span)

    def shutdown(self) -> None: ...
    def force_flush(self) -> None: ...


def _call(path: str, call_id: str) -> ResponseFunctionToolCall:
    return ResponseFunctionToolCall(
        type="function_call",
        name="read_file",
        arguments=json.dumps({"path": path}),
        call_id=call_id,
        id=call_id,
        status="completed",
    )


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Any]]:
    """The export file of one offline run and the SDK's own function spans."""
    folder = tmp_path_factory.mktemp("agents")
    (folder / "a.py").write_text("print('a')\n")

    @function_tool(timeout=0.5)
    async def read_file(path: str) -> str:
        """Read a file of the workspace."""
        if path == "hang":
            await _HANG.wait()
        return (folder / path).read_text()

    out = folder / "run.agents.jsonl"
    writer, kept = AgentsTraceFile(out), _Spans()
    set_trace_processors([writer, kept])
    answer = ResponseOutputMessage(
        id="m",
        type="message",
        role="assistant",
        status="completed",
        content=[ResponseOutputText(type="output_text", text="reviewed", annotations=[])],
    )
    script = [[_call("a.py", "c1")], [_call("hang", "c2"), _call("a.py", "c3")], [answer]]
    try:
        agent = Agent(name="reviewer", tools=[read_file], model=_Scripted(script))
        result = Runner.run_sync(agent, "review a.py")
    finally:
        set_trace_processors([])
        writer.shutdown()
    assert result.final_output == "reviewed"
    return out, kept.functions


def test_every_call_matches_the_sdks_spans(run: tuple[Path, list[Any]]) -> None:
    """Calls, durations and censoring equal the SDK's function spans; the hung read censored."""
    path, spans = run
    (episode,) = import_openai_agents(path)
    expected = sorted(spans, key=lambda span: span.started_at)
    assert [json.loads(s.span_data.input)["path"] for s in expected] == ["a.py", "hang", "a.py"]
    calls = episode.calls
    assert [c.args["path"] for c in calls] == ["a.py", "hang", "a.py"]
    for call, span in zip(calls, expected, strict=True):
        seconds = (
            datetime.fromisoformat(span.ended_at) - datetime.fromisoformat(span.started_at)
        ).total_seconds()
        assert call.duration_sec == pytest.approx(seconds, abs=1e-6)
        timed_out = span.span_data.output == "Tool 'read_file' timed out after 0.5 seconds."
        assert call.completed is not timed_out
    assert [c.completed for c in calls] == [True, False, True]
    assert calls[1].duration_sec >= 0.5
    assert [len(r.calls) for r in episode.rounds] == [1, 2, 0]
    assert [r.input_tokens for r in episode.rounds] == [7, 7, 7]
    assert episode.end_reason == "final_answer"


def test_auto_detects_the_export(run: tuple[Path, list[Any]]) -> None:
    """``import_auto`` names the format ``openai_agents``."""
    found, episodes = import_auto(run[0])
    assert (found, len(episodes)) == ("openai_agents", 1)


def test_the_upload_payload_reads_as_the_lines(run: tuple[Path, list[Any]], tmp_path: Path) -> None:
    """The backend exporter's ``{"data": [...]}`` payload gives the same episode."""
    items = [json.loads(line) for line in run[0].read_text().splitlines()]
    payload = tmp_path / "payload.json"
    payload.write_text(json.dumps({"data": items}))
    (ours,), (theirs,) = import_openai_agents(payload), import_openai_agents(run[0])
    assert ours.rounds == theirs.rounds
    assert (ours.id, ours.started_at) == (theirs.id, theirs.started_at)


def _span(span_id: str, start: str, end: str | None, data: dict[str, Any], **more: Any) -> str:
    """One exported span line of trace ``t1`` (times are seconds past 12:00:00 UTC)."""
    stamp = "2026-01-01T12:00:{}+00:00"
    item = {
        "object": "trace.span",
        "id": span_id,
        "trace_id": "t1",
        "parent_id": None,
        "started_at": stamp.format(start),
        "ended_at": stamp.format(end) if end is not None else None,
        "span_data": data,
        "error": None,
        **more,
    }
    return json.dumps(item)


def test_model_spans_are_the_rounds_and_both_timeout_shapes_are_censored(tmp_path: Path) -> None:
    """Two generation spans (2 s and 1 s, 100/5 and 120/7 tokens) are the rounds; a call with
    the raise_exception error and one that never ended are censored, the latter at the last
    stamp (12:00:09)."""
    raised = {
        "message": "Error running tool",
        "data": {"tool_name": "grep", "error": "Tool 'grep' timed out after 3 seconds."},
    }
    lines = [
        _span(
            "g1",
            "00",
            "02",
            {"type": "generation", "usage": {"input_tokens": 100, "output_tokens": 5}},
        ),
        _span(
            "f1",
            "02",
            "05",
            {"type": "function", "name": "grep", "input": "{}", "output": None},
            error=raised,
        ),
        _span(
            "f2",
            "02.5",
            None,
            {"type": "function", "name": "read", "input": '{"p": 1}', "output": None},
        ),
        _span(
            "g2",
            "08",
            "09",
            {"type": "generation", "usage": {"input_tokens": 120, "output_tokens": 7}},
        ),
    ]
    path = tmp_path / "hand.agents.jsonl"
    path.write_text("\n".join(lines) + "\n")
    (episode,) = import_openai_agents(path)
    first, last = episode.rounds
    assert (first.send_sec, first.input_tokens, first.output_tokens) == (2.0, 100, 5)
    assert [(c.tool, c.duration_sec, c.completed, c.status) for c in first.calls] == [
        ("grep", 3.0, False, "ok"),
        ("read", 6.5, False, "ok"),
    ]
    assert (last.send_sec, last.calls, last.output_tokens) == (1.0, [], 7)
    assert episode.end_reason == "final_answer"
