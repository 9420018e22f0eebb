"""Importing OpenTelemetry traces (OTLP/JSON) as recorded episodes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import Status, StatusCode, set_span_in_context

from reviewlab.live._otlp_json import OtlpJsonFileExporter
from reviewlab.recording.capture import OFFSETS_KEY
from reviewlab.recording.interop import ImportFormatError, import_otel, read_otel

T0 = 1_764_000_000 * 1_000_000_000  # a fixed wall time, in ns
S = 1_000_000_000


def _provider(path: Path) -> TracerProvider:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OtlpJsonFileExporter(path)))
    return provider


def _span(tracer, name, start, end, attrs, parent=None, error=None):
    """One span with explicit start and end (seconds after T0); ``end=None`` leaves it open."""
    context = set_span_in_context(parent) if parent is not None else None
    span = tracer.start_span(
        name, context=context, start_time=T0 + int(start * S), attributes=attrs
    )
    if error is not None:
        span.set_attribute("error.type", error[0])
        span.set_status(Status(StatusCode.ERROR, error[1]))
    if end is not None:
        span.end(end_time=T0 + int(end * S))
    return span


def _tool(tracer, parent, name, call_id, start, end, args=None, error=None):
    attrs = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": name,
        "gen_ai.tool.call.id": call_id,
        "gen_ai.tool.call.arguments": json.dumps(args or {}),
    }
    return _span(tracer, f"execute_tool {name}", start, end, attrs, parent, error)


def _chat(tracer, parent, start, end, tokens=(100, 20)):
    attrs = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "test-model",
        "gen_ai.usage.input_tokens": tokens[0],
        "gen_ai.usage.output_tokens": tokens[1],
    }
    return _span(tracer, "chat test-model", start, end, attrs, parent)


def _acceptance_trace(path: Path) -> None:
    """Three tool calls over two model rounds; the second call ends in a timeout after 2.5 s."""
    tracer = _provider(path).get_tracer("test")
    agent = _span(
        tracer,
        "invoke_agent reviewer",
        0.0,
        None,
        {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "reviewer"},
    )
    _chat(tracer, agent, 0.0, 1.0)
    _tool(tracer, agent, "read_file", "c1", 1.0, 1.2, {"path": "a.py"})
    _tool(tracer, agent, "query_code", "c2", 1.2, 3.7, {"q": "x"}, ("TimeoutError", "timed out"))
    _chat(tracer, agent, 3.7, 4.5)
    _tool(tracer, agent, "list_files", "c3", 4.5, 4.6, {"root": "."})
    _chat(tracer, agent, 4.6, 5.0)
    agent.end(end_time=T0 + 5 * S)


def test_acceptance_sdk_trace_imports_as_one_episode_with_the_timeout_censored(tmp_path):
    """An SDK-written GenAI trace gives one episode: 2 tool rounds,
    3 calls, one censored at 2.5 s."""
    path = tmp_path / "trace.jsonl"
    _acceptance_trace(path)
    episodes = import_otel(path)
    assert len(episodes) == 1
    episode = episodes[0]
    tool_rounds = [rnd for rnd in episode.rounds if rnd.calls]
    assert len(tool_rounds) == 2
    assert [len(rnd.calls) for rnd in tool_rounds] == [2, 1]
    calls = episode.calls
    assert [c.tool for c in calls] == ["read_file", "query_code", "list_files"]
    timed_out = calls[1]
    assert timed_out.completed is False
    assert timed_out.duration_sec == pytest.approx(2.5, abs=1e-6)
    assert [c.completed for c in calls] == [True, False, True]
    assert calls[0].duration_sec == pytest.approx(0.2, abs=1e-6)
    assert calls[0].args == {"path": "a.py"}
    assert episode.end_reason == "final_answer"
    assert [rnd.send_sec for rnd in episode.rounds] == pytest.approx([1.0, 0.8, 0.4], abs=1e-6)
    assert episode.source == "otel"
    assert episode.meta["model"] == "test-model"
    assert episode.meta["input_tokens"] == "300"
    assert episode.started_at.timestamp() == pytest.approx(T0 / S)


def test_collector_lines_split_a_trace_and_a_single_document_reads_the_same(tmp_path):
    """Spans of one trace spread over several lines (batches) and the same spans as one document
    give the same episode."""
    lines = tmp_path / "lines.jsonl"
    _acceptance_trace(lines)
    documents = [json.loads(line) for line in lines.read_text().splitlines()]
    assert len(documents) == 7  # SimpleSpanProcessor: one line per span
    merged = {"resourceSpans": [block for doc in documents for block in doc["resourceSpans"]]}
    single = tmp_path / "single.json"
    single.write_text(json.dumps(merged, indent=2))
    (from_lines,) = import_otel(lines)
    (from_single,) = import_otel(single)
    assert (from_lines.meta.pop("origin"), from_single.meta.pop("origin")) == (
        "lines.jsonl",
        "single.json",
    )
    assert from_single == from_lines


def test_error_that_is_not_a_timeout_is_an_error_call_not_censored(tmp_path):
    """A tool span with an error status that does not say timeout is a completed error call."""
    path = tmp_path / "t.jsonl"
    tracer = _provider(path).get_tracer("test")
    agent = _span(tracer, "agent", 0, None, {"gen_ai.operation.name": "invoke_agent"})
    _chat(tracer, agent, 0, 1)
    _tool(tracer, agent, "read_file", "c1", 1, 1.5, error=("FileNotFoundError", "no such file"))
    _chat(tracer, agent, 1.5, 2)
    agent.end(end_time=T0 + 2 * S)
    (call,) = import_otel(path)[0].calls
    assert call.completed is True
    assert call.status == "error"
    assert call.duration_sec == pytest.approx(0.5, abs=1e-6)


def test_unended_tool_span_is_censored_at_the_last_time_the_trace_shows(tmp_path):
    """A tool span with no end is right-censored at the latest timestamp seen in its trace."""
    path = tmp_path / "t.jsonl"
    _acceptance_trace(path)
    documents = [json.loads(line) for line in path.read_text().splitlines()]
    for doc in documents:
        for span in doc["resourceSpans"][0]["scopeSpans"][0]["spans"]:
            if span["name"] == "execute_tool list_files":
                del span["endTimeUnixNano"]
    path.write_text("".join(json.dumps(doc) + "\n" for doc in documents))
    calls = import_otel(path)[0].calls
    assert calls[2].completed is False
    assert calls[2].duration_sec == pytest.approx(0.5, abs=1e-6)  # 4.5 s → 5.0 s (agent end)


def test_parallel_tool_spans_keep_their_overlap(tmp_path):
    """Two tool spans of one round that overlap keep their start offsets in the episode meta."""
    path = tmp_path / "t.jsonl"
    tracer = _provider(path).get_tracer("test")
    agent = _span(tracer, "agent", 0, None, {"gen_ai.operation.name": "invoke_agent"})
    _chat(tracer, agent, 0, 1)
    _tool(tracer, agent, "read_file", "a", 1.0, 3.0)
    _tool(tracer, agent, "search_code", "b", 1.5, 2.0)
    _chat(tracer, agent, 3, 4)
    agent.end(end_time=T0 + 4 * S)
    episode = import_otel(path)[0]
    assert [len(rnd.calls) for rnd in episode.rounds] == [2, 0]
    assert json.loads(episode.meta[OFFSETS_KEY]) == [[0.0, 0.5], []]


def test_openinference_spans_and_traces_without_agent_span(tmp_path):
    """OpenInference TOOL/LLM spans under no agent form one episode per trace."""
    path = tmp_path / "t.jsonl"
    tracer = _provider(path).get_tracer("test")
    root = _span(tracer, "chain", 0, None, {"openinference.span.kind": "CHAIN"})
    _span(tracer, "llm", 0, 1, {"openinference.span.kind": "LLM"}, root)
    _span(
        tracer,
        "tool",
        1,
        2,
        {
            "openinference.span.kind": "TOOL",
            "tool.name": "grep",
            "input.value": '{"pattern": "x"}',
            "output.value": "hello",
        },
        root,
    )
    _span(tracer, "llm", 2, 3, {"openinference.span.kind": "LLM"}, root)
    root.end(end_time=T0 + 3 * S)
    result = read_otel(path)
    (episode,) = result.episodes
    (call,) = episode.calls
    assert (call.tool, call.args, call.result_chars) == ("grep", {"pattern": "x"}, 5)
    assert episode.meta["conventions"] == "openinference"
    assert result.unplaced == {"spans of other kinds (not tool, model or agent)": 1}


def test_tool_spans_without_model_spans_get_rounds_from_their_overlap(tmp_path):
    """With no model span, overlapping tool spans share a round and a gap opens a new one."""
    path = tmp_path / "t.jsonl"
    tracer = _provider(path).get_tracer("test")
    root = _span(tracer, "request", 0, None, {})
    _tool(tracer, root, "a", "1", 0.0, 1.0)
    _tool(tracer, root, "b", "2", 0.5, 1.5)
    _tool(tracer, root, "c", "3", 2.0, 2.5)
    root.end(end_time=T0 + 3 * S)
    (episode,) = import_otel(path)
    assert [[c.tool for c in rnd.calls] for rnd in episode.rounds] == [["a", "b"], ["c"]]
    assert [rnd.send_sec for rnd in episode.rounds] == pytest.approx([0.0, 0.5])
    assert json.loads(episode.meta[OFFSETS_KEY]) == [[0.0, 0.5], [0.0]]
    assert episode.end_reason == "log_end"


def test_unplaceable_spans_are_counted_by_reason(tmp_path):
    """A tool span inside another tool span and an empty agent invocation are reported."""
    path = tmp_path / "t.jsonl"
    tracer = _provider(path).get_tracer("test")
    agent = _span(tracer, "agent", 0, None, {"gen_ai.operation.name": "invoke_agent"})
    _chat(tracer, agent, 0, 1)
    outer = _tool(tracer, agent, "outer", "1", 1, None)
    _tool(tracer, outer, "inner", "2", 1.1, 1.2)
    outer.end(end_time=T0 + 2 * S)
    agent.end(end_time=T0 + 2 * S)
    empty = _span(tracer, "agent2", 5, 6, {"gen_ai.operation.name": "invoke_agent"})
    del empty
    result = read_otel(path)
    assert [c.tool for c in result.episodes[0].calls] == ["outer"]
    assert result.unplaced == {
        "tool spans inside a tool span (part of that call)": 1,
        "agent spans with no model or tool span": 1,
    }
    assert "not placed" in result.report()


def test_bad_input_names_the_file_and_line(tmp_path):
    """Broken JSON, a foreign JSON document and binary data each raise one error naming the file."""
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"resourceSpans": []}\n{oops\n')
    with pytest.raises(ImportFormatError, match=r"broken\.jsonl: line 2: invalid JSON"):
        import_otel(broken)
    foreign = tmp_path / "foreign.json"
    foreign.write_text('{"hello": 1}')
    with pytest.raises(ImportFormatError, match=r"foreign\.json: line 1: not OTLP/JSON"):
        import_otel(foreign)
    binary = tmp_path / "blob.bin"
    binary.write_bytes(b"\x00\xff\xfe binary")
    with pytest.raises(ImportFormatError, match=r"blob\.bin: file: binary data"):
        import_otel(binary)


def test_a_trace_without_genai_spans_says_what_it_held(tmp_path):
    """A trace of HTTP spans only is refused with the count of what it held, naming the file."""
    path = tmp_path / "http.jsonl"
    tracer = _provider(path).get_tracer("test")
    _span(tracer, "GET /", 0, 1, {"http.request.method": "GET"})
    with pytest.raises(
        ImportFormatError, match=r"http\.jsonl: spans: no agent, model or tool span"
    ):
        read_otel(path)
