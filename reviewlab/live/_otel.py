"""Live calls as OpenTelemetry spans: ``execute_tool`` per call, a linked span per late return.

Emission is on only while a tracer provider is configured (process-wide, or
:func:`tracer_provider_scope`); otherwise every function returns at once. Each finished call
becomes one ``execute_tool {tool}`` span written after the fact (GenAI attributes and
``reviewlab.*``; an abandoned call ends with ``error.type = "tool_timeout"``, so an importer
reads it as censored at its bound). When an abandoned call's loose worker comes back, a
``reviewlab.loose_worker_returned`` span linked to it records the zombie seconds.
:class:`~reviewlab.live._otlp_json.OtlpJsonFileExporter` writes spans as OTLP/JSON lines for
``reviewlab import otel``. The attributes: docs/architecture.md, "Live spans".
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import threading
import weakref
from collections.abc import Iterator, Mapping
from typing import Any

from reviewlab.core._vocab import OUTCOME_EXECUTED, SOURCE_GAP_ABANDONED

TRACER_NAME = "reviewlab"
_NS = 1_000_000_000
_TIMEOUT_TYPE = "tool_timeout"


_UNKNOWN: Any = object()
_TRACE_API: Any = _UNKNOWN
_TRACERS: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
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


def _trace_api() -> Any:
    """The ``opentelemetry.trace`` module, or ``None`` without the API (looked up once)."""
    global _TRACE_API
    if _TRACE_API is _UNKNOWN:
        try:
            from opentelemetry import trace
        except ImportError:
            trace = None  # type: ignore[assignment]
        _TRACE_API = trace
    return _TRACE_API


def active_tracer(provider: Any = None) -> Any:
    """A tracer when a provider is given, scoped or set process-wide, else ``None`` (off).

    Cheap when off: without the API it is one global read; with the default no-op
    provider one context-variable read and one type check.
    """
    trace = _trace_api()
    if trace is None:
        return None
    if provider is None:
        provider = _SCOPED_PROVIDER.get()
    if provider is None:
        provider = trace.get_tracer_provider()
        if type(provider) in (trace.ProxyTracerProvider, trace.NoOpTracerProvider):
            return None
    try:
        return _TRACERS[provider]
    except (KeyError, TypeError):
        tracer = provider.get_tracer(TRACER_NAME)
        with contextlib.suppress(TypeError):  # a provider that cannot be weakly referenced
            _TRACERS[provider] = tracer
        return tracer


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
    elif outcome != OUTCOME_EXECUTED:
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
