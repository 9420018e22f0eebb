"""Live episodes emit one execute_tool span per call when a tracer provider is configured."""

from __future__ import annotations

import threading

import pytest
from opentelemetry.sdk import trace as sdk
from opentelemetry.sdk.trace import SpanProcessor
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)

from reviewlab import ReviewEpisode, TimeoutPolicy, demo_workspace
from reviewlab.live._otel import tracer_provider_scope
from reviewlab.live._otlp_json import OtlpJsonFileExporter
from reviewlab.recording.interop import import_otel
from reviewlab.testing import ScriptedModel, tool_call, wedged_factory

WAIT = 30.0


class _LateWatcher(SpanProcessor):
    """Sets an event when a loose worker's return span ends."""

    def __init__(self) -> None:
        self.seen = threading.Event()

    def on_end(self, span) -> None:
        """Note the late-return span."""
        if span.name.startswith("reviewlab.loose_worker_returned"):
            self.seen.set()


def test_episode_calls_become_spans_and_the_late_return_links_to_the_abandoned_call(tmp_path):
    """A returned read and an abandoned (wedged) search each give a span with reviewlab's
    attributes; the wedged worker's late return is a span linked to its call; the trace file
    imports back as the calls the episode made (grouped by the caller's agent span)."""
    memory = InMemorySpanExporter()
    late = _LateWatcher()
    trace_file = tmp_path / "live.jsonl"
    provider = sdk.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    provider.add_span_processor(SimpleSpanProcessor(OtlpJsonFileExporter(trace_file)))
    provider.add_span_processor(late)
    release = threading.Event()
    model = ScriptedModel(
        [
            {
                "tool_calls": [
                    tool_call("list_files", {}, "c1"),
                    tool_call("search_code", {"pattern": "def"}, "c2"),
                ]
            },
            {"content": "[]"},
        ]
    )
    episode = ReviewEpisode(
        demo_workspace(),
        model,
        policy=TimeoutPolicy.uniform(0.2),
        registry_factory=wedged_factory("search_code", release),
    )
    agent = {"gen_ai.operation.name": "invoke_agent"}
    with (
        tracer_provider_scope(provider),
        provider.get_tracer("test").start_as_current_span("invoke_agent review", attributes=agent),
    ):
        result = episode.execute()  # the calls' spans are children of the current span
        release.set()
        assert late.seen.wait(WAIT)
    assert [r.outcome for r in result.receipts] == ["executed", "error"]
    spans = {s.name: s for s in memory.get_finished_spans()}
    listed, wedged = spans["execute_tool list_files"], spans["execute_tool search_code"]
    assert listed.attributes["gen_ai.tool.call.id"] == "c1"
    assert listed.attributes["reviewlab.outcome"] == "executed"
    assert listed.attributes["reviewlab.bound_sec"] == 0.2
    assert listed.attributes["reviewlab.bound_by"] == "tool_timeout"
    assert wedged.attributes["reviewlab.source_gap"] == "native_tool_abandoned"
    assert wedged.attributes["reviewlab.outcome"] == "error"
    returned = spans["reviewlab.loose_worker_returned search_code"]
    assert returned.links[0].context.span_id == wedged.context.span_id
    assert returned.attributes["reviewlab.zombie_sec"] >= 0.0
    (imported,) = import_otel(trace_file)
    assert [(c.tool, c.completed) for c in imported.calls] == [
        ("list_files", True),
        ("search_code", False),
    ]
    # A returned call lasts what its receipt says; an abandoned one is censored at its bound.
    listed_call, wedged_call = imported.calls
    assert listed_call.duration_sec == pytest.approx(result.receipts[0].duration_sec, abs=1e-6)
    assert wedged_call.duration_sec == 0.2


def test_no_provider_no_spans():
    """Without a configured provider an episode runs exactly as before and emits nothing."""
    memory = InMemorySpanExporter()
    provider = sdk.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    model = ScriptedModel([{"tool_calls": [tool_call("list_files", {})]}, {"content": ""}])
    ReviewEpisode(demo_workspace(), model, policy=TimeoutPolicy.uniform(5)).execute()
    assert memory.get_finished_spans() == ()
