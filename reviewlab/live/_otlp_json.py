"""OTLP/JSON, the JSON form of OpenTelemetry's protocol: encoding, and a file exporter.

:class:`OtlpJsonFileExporter` writes SDK spans the way the OpenTelemetry
Collector's file exporter does: one ``{"resourceSpans": [...]}`` JSON object per
line, one line per export batch, each line written whole and flushed (a reader
never sees half a line; a crash loses at most the batch being written). Trace
and span ids are lower-case hex, times decimal-string nanoseconds, ``intValue``
attributes decimal strings, span kinds and status codes numbers, as the OTLP/JSON
mapping says. :func:`otlp_attributes` is shared with the corpus exporter
(:mod:`reviewlab.recording.interop`). Nothing here imports OpenTelemetry at
module import: the SDK is an optional extra.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any


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
