"""LangGraph's current release under OpenInference, run offline, and its trace imported.

The run: a hand-built ReAct graph (an ``agent`` node asking LangChain's
``GenericFakeChatModel``, a prebuilt ``ToolNode`` with LangGraph's node ``timeout=0.5``)
whose second tool call hangs, so LangGraph cancels the node and raises ``NodeTimeoutError``.
``openinference-instrumentation-langchain`` traces it into the OpenTelemetry SDK, which writes
OTLP/JSON lines (:class:`~reviewlab.live._otlp_json.OtlpJsonFileExporter`) and keeps the same
spans in memory: the expected figures come from those in-memory spans.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.errors import NodeTimeoutError
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode, tools_condition
from openinference.instrumentation.langchain import LangChainInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from reviewlab.live._otlp_json import OtlpJsonFileExporter
from reviewlab.recording.interop import import_auto, read_otel


class _State(TypedDict):
    messages: Annotated[list[Any], add_messages]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Any]]:
    """The OTLP/JSON file of one offline run and the SDK's own finished tool spans."""
    folder = tmp_path_factory.mktemp("langgraph")
    (folder / "a.py").write_text("print('a')\n")
    hang = asyncio.Event()

    @tool
    async def read_file(path: str) -> str:
        """Read a file of the workspace."""
        if path == "hang":
            await hang.wait()
        return (folder / path).read_text()

    model = GenericFakeChatModel(
        messages=iter(
            [
                AIMessage(
                    "", tool_calls=[{"name": "read_file", "args": {"path": "a.py"}, "id": "1"}]
                ),
                AIMessage(
                    "", tool_calls=[{"name": "read_file", "args": {"path": "hang"}, "id": "2"}]
                ),
                AIMessage("reviewed"),
            ]
        )
    )

    async def agent(state: _State) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    graph = StateGraph(_State)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode([read_file]), timeout=0.5)
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    out, memory = folder / "trace.otlp.jsonl", InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OtlpJsonFileExporter(out)))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        with pytest.raises(NodeTimeoutError, match="exceeded its run timeout of 0.500s"):
            asyncio.run(graph.compile().ainvoke({"messages": [HumanMessage("review a.py")]}))
    finally:
        instrumentor.uninstrument()
        provider.shutdown()
    tools = [
        s
        for s in memory.get_finished_spans()
        if s.attributes.get("openinference.span.kind") == "TOOL"
    ]
    return out, sorted(tools, key=lambda span: span.start_time)


def test_every_call_matches_the_sdks_spans(run: tuple[Path, list[Any]]) -> None:
    """One episode; its calls' durations equal the tool spans'; the cancelled read is censored."""
    path, spans = run
    assert [s.status.status_code.name for s in spans] == ["OK", "ERROR"]
    result = read_otel(path)
    (episode,) = result.episodes
    calls = episode.calls
    assert len(calls) == len(spans) == 2
    for call, span in zip(calls, spans, strict=True):
        assert call.tool == "read_file"
        assert call.duration_sec == pytest.approx((span.end_time - span.start_time) / 1e9, abs=1e-6)
    assert [c.completed for c in calls] == [True, False]
    assert calls[1].duration_sec >= 0.5
    assert calls[1].status == "ok"  # cancelled at LangGraph's limit: censored, not a failure
    assert [len(r.calls) for r in episode.rounds] == [1, 1]
    assert episode.end_reason == "log_end"


def test_auto_detects_the_trace(run: tuple[Path, list[Any]]) -> None:
    """``import_auto`` names the file ``otel``."""
    found, episodes = import_auto(run[0])
    assert (found, len(episodes)) == ("otel", 1)
