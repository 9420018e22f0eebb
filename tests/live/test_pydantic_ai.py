"""A real pydantic-ai Agent whose tools are wrapped by bounded_tool, with its own tracing on.

The model is pydantic-ai's ``FunctionModel`` (no network). One run yields two records of the
same calls: the episode reviewlab recorded through ``ToolCallLog``, and the OpenTelemetry trace
pydantic-ai's instrumentation wrote (OTLP/JSON via reviewlab's file exporter), read back by
``reviewlab import otel``. They must agree on the tools, the censoring and the durations.

The tools are async: pydantic-ai awaits them in its own task, so its span and reviewlab's
measurement see the same wait. (A sync tool is handed to a thread pool by pydantic-ai first; its
span then also counts that hand-off, which on a loaded machine can take several milliseconds.)
"""

from __future__ import annotations

import asyncio
import json
import threading

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from pydantic_ai import Agent
from pydantic_ai.capabilities.instrumentation import Instrumentation
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.instrumented import InstrumentationSettings

from reviewlab import TimeoutPolicy, ToolCallLog, bounded_tool, tool_timeout_text
from reviewlab.cli import main
from reviewlab.live._otlp_json import OtlpJsonFileExporter
from reviewlab.recording._files import load_episodes

TOLERANCE_SEC = 0.005
WAIT = 30.0


SCRIPT = [
    ToolCallPart("read_file", {"path": "inventory/stock.py"}, tool_call_id="t1"),
    ToolCallPart("search_code", {"pattern": "price"}, tool_call_id="t2"),
    ToolCallPart("list_files", {"root": "."}, tool_call_id="t3"),
]


def _script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """One call per round (a read, a search, a listing), then the answer.

    One call per round keeps each tool span about its own call: pydantic-ai runs the calls of
    one response concurrently, and a call's span then also holds the time the loop spent
    starting its siblings.
    """
    replies = sum(1 for message in messages if message.kind == "response")
    if replies < len(SCRIPT):
        return ModelResponse(parts=[SCRIPT[replies]])
    return ModelResponse(parts=[TextPart("no findings")])


def test_recorded_episode_and_pydantic_ai_trace_agree(tmp_path):
    """Tools, censoring and durations (within 5 ms) agree between the recording and the trace;
    the wedged search is abandoned with the standard text and censored at its bound on both."""
    trace_file = tmp_path / "trace.jsonl"
    recording = tmp_path / "recorded.jsonl"
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OtlpJsonFileExporter(trace_file)))
    policy = TimeoutPolicy.uniform(10.0).with_tools(search_code=0.1)
    gate = threading.Event()  # the search is wedged until the test releases it
    answers: dict[str, str] = {}

    async def read_file(path: str) -> str:
        """Read a file of the workspace."""
        await asyncio.sleep(0.02)
        return f"contents of {path}"

    async def search_code(pattern: str) -> str:
        """Search the workspace (wedged)."""
        await asyncio.to_thread(gate.wait, WAIT)
        return "late"

    async def list_files(root: str) -> str:
        """List a folder."""
        await asyncio.sleep(0)
        return "inventory/"

    async def scenario(log: ToolCallLog) -> None:
        tools = [
            bounded_tool(fn, policy=policy, recorder=log)
            for fn in (read_file, search_code, list_files)
        ]
        settings = InstrumentationSettings(tracer_provider=provider, include_content=True)
        agent = Agent(
            FunctionModel(_script), tools=tools, capabilities=[Instrumentation(settings=settings)]
        )
        with log.episode(task="review the inventory"):
            result = await agent.run("review the inventory")
        answers["output"] = result.output
        for message in result.all_messages():
            for part in message.parts:
                if part.part_kind == "tool-return":
                    answers[part.tool_name] = str(part.content)
        gate.set()  # let the loose search finish before the loop closes

    with ToolCallLog(recording) as log:
        asyncio.run(scenario(log))

    assert answers["output"] == "no findings"
    assert answers["search_code"] == tool_timeout_text("search_code", 0.1)
    (recorded,) = load_episodes(recording)
    out = tmp_path / "imported.jsonl"
    assert main(["import", "otel", str(trace_file), "-o", str(out)]) == 0
    (imported,) = load_episodes(out)

    assert [len(r.calls) for r in imported.rounds] == [1, 1, 1, 0]  # rounds from the chat spans
    assert imported.end_reason == "final_answer"

    def key(call):
        return call.tool, json.dumps(call.args, sort_keys=True)

    recorded_calls = sorted(recorded.calls, key=key)
    imported_calls = sorted(imported.calls, key=key)
    assert [key(c) for c in recorded_calls] == [key(c) for c in imported_calls]
    assert [c.tool for c in recorded_calls] == ["list_files", "read_file", "search_code"]
    for mine, theirs in zip(recorded_calls, imported_calls, strict=True):
        assert mine.completed == theirs.completed, mine.tool
        assert abs(mine.duration_sec - theirs.duration_sec) <= TOLERANCE_SEC, (
            mine.tool,
            mine.duration_sec,
            theirs.duration_sec,
        )
    search = next(c for c in imported_calls if c.tool == "search_code")
    assert search.completed is False and search.duration_sec == 0.1
    read = next(c for c in recorded_calls if c.tool == "read_file")
    assert read.completed and read.duration_sec >= 0.02
