"""Live calls as OpenTelemetry spans, and an OTLP/JSON file exporter for any SDK span.

Emission is on only while a tracer provider is configured (an SDK provider set
with ``opentelemetry.trace.set_tracer_provider``, or one given to
:func:`tracer_provider_scope` for a block);
without ``opentelemetry-api`` installed, or with the default no-op provider,
every function here returns at once and costs one attribute check.

Each finished live call becomes one ``execute_tool {tool}`` span, written after
the fact with the call's own start and end (so emitting never delays a call):

* GenAI attributes: ``gen_ai.operation.name = "execute_tool"``,
  ``gen_ai.tool.name``, ``gen_ai.tool.call.id``, ``gen_ai.tool.call.arguments``
  (JSON);
* reviewlab's: ``reviewlab.bound_sec`` (absent when unbounded),
  ``reviewlab.bound_by``, ``reviewlab.outcome``, ``reviewlab.source_gap``
  (``""`` when none), ``reviewlab.result_chars``;
* an abandoned call ends with an error status and ``error.type =
  "tool_timeout"`` (so an importer reads it as right-censored at its bound); a
  tool that raised, with ``error.type`` = the exception's class name.

When the loose worker of an abandoned call comes back, a
``reviewlab.loose_worker_returned {tool}`` span (abandonment → return) is
emitted with a *link* to the abandoned call's span, ``reviewlab.zombie_sec``,
and an event of the same name at the return. A daemon thread waits (blocking,
no polling) on the call's ``settled`` event for that; a worker that never
returns leaves that thread waiting, as the worker itself does.

:class:`OtlpJsonFileExporter` writes SDK spans the way the OpenTelemetry
Collector's file exporter does: one ``{"resourceSpans": [...]}`` JSON object
per line, one line per export batch, each line written whole and flushed.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import os
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from reviewlab.core.vocab import SOURCE_GAP_ABANDONED

__all__ = [
    "OtlpJsonFileExporter",
    "active_tracer",
    "call_attributes",
    "emit_call_span",
    "emit_trace_call",
    "otlp_attributes",
    "otlp_value",
    "sdk_spans_document",
    "tracer_provider_scope",
    "watch_late_return",
]

TRACER_NAME = "reviewlab"
_NS = 1_000_000_000
_TIMEOUT_TYPE = "tool_timeout"


# -- OTLP/JSON encoding (shared with the corpus exporter) ---------------------------------------
def otlp_value(value: Any) -> dict[str, Any]:
    """A Python value as an OTLP/JSON ``AnyValue`` (ints as decimal strings, as the spec says)."""
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, str):
        return {"stringValue": value}
    if isinstance(value, Mapping):
        return {"kvlistValue": {"values": otlp_attributes(value)}}
    if isinstance(value, Sequence) and not isinstance(value, bytes | bytearray):
        return {"arrayValue": {"values": [otlp_value(item) for item in value]}}
    return {"stringValue": str(value)}


def otlp_attributes(attributes: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A mapping as an OTLP/JSON attribute list (``None`` values are left out)."""
    return [
        {"key": str(key), "value": otlp_value(value)}
        for key, value in attributes.items()
        if value is not None
    ]


class OtlpJsonFileExporter:
    """An SDK span exporter writing OTLP/JSON lines to ``path`` (appended, one line per batch).

    Use with ``SimpleSpanProcessor`` or ``BatchSpanProcessor``. Thread-safe;
    after :meth:`shutdown` further batches are refused (``FAILURE``).
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._closed = False

    def export(self, spans: Sequence[Any]) -> Any:
        """Write one line holding ``spans``, grouped by resource and scope."""
        from opentelemetry.sdk.trace.export import SpanExportResult

        if self._closed:
            return SpanExportResult.FAILURE
        line = json.dumps(sdk_spans_document(spans), separators=(",", ":")) + "\n"
        with self._lock, open(self.path, "a", encoding="utf-8") as handle:
            handle.write(line)
            handle.flush()
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        """Refuse further batches (every line already written is complete)."""
        self._closed = True

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Nothing is buffered: every batch was written when it was exported."""
        return True


def sdk_spans_document(spans: Sequence[Any]) -> dict[str, Any]:
    """SDK ``ReadableSpan`` objects as one OTLP/JSON ``{"resourceSpans": [...]}`` document."""
    resources: dict[int, tuple[Any, dict[tuple[str, str], list[dict[str, Any]]]]] = {}
    for span in spans:
        resource = span.resource
        _, scopes = resources.setdefault(id(resource), (resource, {}))
        scope = span.instrumentation_scope
        key = (getattr(scope, "name", "") or "", getattr(scope, "version", "") or "")
        scopes.setdefault(key, []).append(_sdk_span(span))
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": otlp_attributes(dict(resource.attributes))},
                "scopeSpans": [
                    {"scope": {"name": name, "version": version}, "spans": encoded}
                    for (name, version), encoded in scopes.items()
                ],
            }
            for resource, scopes in resources.values()
        ]
    }


def _sdk_span(span: Any) -> dict[str, Any]:
    context = span.context
    record: dict[str, Any] = {
        "traceId": f"{context.trace_id:032x}",
        "spanId": f"{context.span_id:016x}",
        "name": span.name,
        "kind": int(span.kind.value) + 1,  # OTLP counts SPAN_KIND_UNSPECIFIED as 0
        "startTimeUnixNano": str(span.start_time or 0),
        "endTimeUnixNano": str(span.end_time or 0),
        "attributes": otlp_attributes(dict(span.attributes or {})),
        "status": {"code": int(span.status.status_code.value)},
    }
    if span.parent is not None:
        record["parentSpanId"] = f"{span.parent.span_id:016x}"
    if span.status.description:
        record["status"]["message"] = span.status.description
    if span.events:
        record["events"] = [
            {
                "timeUnixNano": str(event.timestamp),
                "name": event.name,
                "attributes": otlp_attributes(dict(event.attributes or {})),
            }
            for event in span.events
        ]
    if span.links:
        record["links"] = [
            {
                "traceId": f"{link.context.trace_id:032x}",
                "spanId": f"{link.context.span_id:016x}",
                "attributes": otlp_attributes(dict(link.attributes or {})),
            }
            for link in span.links
        ]
    return record


# -- emission -----------------------------------------------------------------------------------
_SCOPED_PROVIDER: contextvars.ContextVar[Any] = contextvars.ContextVar(
    "reviewlab_tracer_provider", default=None
)


@contextlib.contextmanager
def tracer_provider_scope(provider: Any) -> Iterator[None]:
    """Inside the block (this context and the tasks it starts) reviewlab emits to ``provider``,
    whatever the process-wide provider is."""
    token = _SCOPED_PROVIDER.set(provider)
    try:
        yield
    finally:
        _SCOPED_PROVIDER.reset(token)


def active_tracer(provider: Any = None) -> Any:
    """A tracer when a provider is given, scoped or set process-wide, else ``None`` (off)."""
    try:
        from opentelemetry import trace
    except ImportError:
        return None
    if provider is None:
        provider = _SCOPED_PROVIDER.get()
    if provider is None:
        provider = trace.get_tracer_provider()
        if isinstance(provider, trace.ProxyTracerProvider | trace.NoOpTracerProvider):
            return None
    return provider.get_tracer(TRACER_NAME)


def call_attributes(
    *,
    tool: str,
    call_id: str,
    args: Mapping[str, Any] | None,
    bound_sec: float | None,
    bound_by: str,
    outcome: str,
    source_gap: str | None,
    result_chars: int,
) -> dict[str, Any]:
    """The attributes of one call's span (GenAI conventions plus ``reviewlab.*``)."""
    return {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": tool,
        "gen_ai.tool.call.id": call_id or None,
        "gen_ai.tool.call.arguments": json.dumps(dict(args), default=str)
        if args is not None
        else None,
        "reviewlab.bound_sec": bound_sec,
        "reviewlab.bound_by": bound_by,
        "reviewlab.outcome": outcome,
        "reviewlab.source_gap": source_gap or "",
        "reviewlab.result_chars": result_chars,
    }


def emit_call_span(
    tracer: Any,
    *,
    started_wall: float,
    duration_sec: float,
    attributes: Mapping[str, Any],
    error_type: str | None = None,
    error_message: str = "",
) -> Any:
    """One ``execute_tool`` span from ``started_wall`` (epoch seconds) lasting ``duration_sec``."""
    from opentelemetry.trace import Status, StatusCode

    start_ns = int(started_wall * _NS)
    end_ns = start_ns + max(0, round(duration_sec * _NS))
    attrs = {key: value for key, value in attributes.items() if value is not None}
    if error_type is not None:
        attrs["error.type"] = error_type
    span = tracer.start_span(
        f"execute_tool {attributes.get('gen_ai.tool.name', '')}",
        start_time=start_ns,
        attributes=attrs,
    )
    if error_type is not None:
        span.set_status(Status(StatusCode.ERROR, error_message or error_type))
    span.end(end_time=end_ns)
    return span


def watch_late_return(tracer: Any, span_context: Any, result: Any, tool: str) -> None:
    """Emit the loose-worker return span for abandoned ``result`` when its worker comes back."""
    settled = getattr(result, "settled", None)
    if settled is None:
        return

    def wait() -> None:
        settled.wait()
        _emit_late(tracer, span_context, result, tool)

    if settled.is_set():
        _emit_late(tracer, span_context, result, tool)
        return
    threading.Thread(target=wait, name=f"reviewlab-otel-late-{tool}", daemon=True).start()


def _emit_late(tracer: Any, span_context: Any, result: Any, tool: str) -> None:
    from opentelemetry.trace import Link

    zombie = float(result.zombie_sec or 0.0)
    abandoned_ns = int(result.started_wall * _NS) + round(result.duration_sec * _NS)
    returned_ns = abandoned_ns + round(zombie * _NS)
    attrs = {"gen_ai.tool.name": tool, "reviewlab.zombie_sec": zombie}
    span = tracer.start_span(
        f"reviewlab.loose_worker_returned {tool}",
        start_time=abandoned_ns,
        attributes=attrs,
        links=[Link(span_context, {"reviewlab.link": "abandoned_call"})],
    )
    span.add_event("reviewlab.loose_worker_returned", attrs, timestamp=returned_ns)
    span.end(end_time=returned_ns)


def emit_trace_call(trace: Any) -> None:
    """The span of one call of a live episode (a ``CallTrace``), when tracing is on."""
    tracer = active_tracer()
    if tracer is None:
        return
    receipt, result = trace.receipt, trace.result
    outcome = str(receipt.outcome)
    gap = receipt.source_gap
    error_type = None
    if gap == SOURCE_GAP_ABANDONED:
        error_type = _TIMEOUT_TYPE
    elif result is not None and getattr(result, "exc", None) is not None:
        error_type = type(result.exc).__name__
    elif outcome != "executed":
        error_type = outcome
    started_wall = result.started_wall if result is not None else _epoch(receipt.started_at)
    span = emit_call_span(
        tracer,
        started_wall=started_wall,
        duration_sec=float(receipt.duration_sec),
        attributes=call_attributes(
            tool=trace.tool,
            call_id=trace.call_id,
            args=trace.args,
            bound_sec=receipt.bound_sec,
            bound_by=receipt.bound_by or "unbounded",
            outcome=outcome,
            source_gap=gap,
            result_chars=int(receipt.result_chars),
        ),
        error_type=error_type,
        error_message=str(receipt.error or ""),
    )
    if gap == SOURCE_GAP_ABANDONED and result is not None:
        watch_late_return(tracer, span.get_span_context(), result, trace.tool)


def _epoch(stamp: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(stamp).timestamp()
