"""OTLP/JSON trace files read into plain span records (the reading half of the OTel importer).

Accepted: one ``{"resourceSpans": [...]}`` object per line (the Collector's
file exporter; lines of ``resourceLogs`` / ``resourceMetrics`` are counted as
unplaced and skipped) or one such JSON document. A file that holds only other
signals (OTLP logs, e.g. GenAI log events, or metrics) has no tool call to
import: it is refused with an error naming the file and the signals it holds,
since tool calls and their durations are read from trace spans. Times are
integer nanoseconds since the epoch (``0`` or absent: unknown); ``intValue`` attributes arrive as
decimal strings, as OTLP/JSON writes them; status codes as numbers or as
``STATUS_CODE_*`` names. Broken input is an :class:`ImportFormatError` naming
the file and the line; binary data too.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reviewlab.recording.interop._common import ImportFormatError

_MODEL_OPERATIONS = frozenset({"chat", "text_completion", "generate_content"})
_STATUS_NAMES = {"STATUS_CODE_UNSET": 0, "STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}


@dataclass
class OtlpSpan:
    """One span as read from the file (times in integer nanoseconds since the epoch)."""

    trace_id: str
    span_id: str
    parent_id: str
    name: str
    start_ns: int | None
    end_ns: int | None
    attrs: dict[str, Any]
    status_code: int
    status_message: str
    events: list[dict[str, Any]]
    resource: dict[str, Any]
    line: int

    @property
    def kind(self) -> str:
        """``tool``, ``model``, ``agent`` or ``other`` (GenAI or OpenInference conventions)."""
        operation = self.attrs.get("gen_ai.operation.name")
        openinference = str(self.attrs.get("openinference.span.kind", "")).upper()
        if operation == "execute_tool" or openinference == "TOOL":
            return "tool"
        if operation in _MODEL_OPERATIONS or openinference == "LLM":
            return "model"
        if operation == "invoke_agent" or openinference == "AGENT":
            return "agent"
        return "other"


def read_spans(where: Path, unplaced: Counter[str]) -> list[OtlpSpan]:
    """Every span of the file at ``where``; lines of other signals are counted in ``unplaced``."""
    data = where.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ImportFormatError(where, "file", "binary data, not OTLP/JSON text") from None
    documents: list[tuple[int, Any]] = []
    try:
        whole = json.loads(text)
    except json.JSONDecodeError:
        whole = None
    if isinstance(whole, dict):
        documents.append((1, whole))
    else:
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                documents.append((number, json.loads(line)))
            except json.JSONDecodeError as exc:
                raise ImportFormatError(
                    where, f"line {number}", f"invalid JSON: {exc.msg}"
                ) from None
    spans: list[OtlpSpan] = []
    traces = False
    others: list[str] = []
    for number, document in documents:
        if not isinstance(document, dict):
            raise ImportFormatError(where, f"line {number}", "expected a JSON object")
        if "resourceSpans" not in document:
            other = [key for key in ("resourceLogs", "resourceMetrics") if key in document]
            if not other:
                raise ImportFormatError(
                    where, f"line {number}", "not OTLP/JSON: no 'resourceSpans' key"
                )
            unplaced[f"line(s) of {other[0]}, not spans"] += 1
            others.extend(key for key in other if key not in others)
            continue
        traces = True
        spans.extend(_document_spans(document["resourceSpans"], where, number))
    if others and not traces:
        raise ImportFormatError(where, "file", _not_traces(others))
    return spans


_SIGNALS = {"resourceLogs": "logs", "resourceMetrics": "metrics"}


def _not_traces(keys: list[str]) -> str:
    """Why a file of only other OTLP signals has nothing to import."""
    held = " and ".join(_SIGNALS[key] for key in keys)
    return (
        f"OTLP {held} ({', '.join(keys)}), not traces: there is no 'resourceSpans' to import; "
        "tool calls and their durations are read from trace spans (GenAI execute_tool spans), "
        "so export the traces signal"
    )


def _document_spans(resource_spans: Any, where: Path, number: int) -> list[OtlpSpan]:
    if not isinstance(resource_spans, list):
        raise ImportFormatError(where, f"line {number}", "'resourceSpans' must be a list")
    spans = []
    for block in resource_spans:
        if not isinstance(block, dict):
            raise ImportFormatError(
                where, f"line {number}", "a resourceSpans entry is not an object"
            )
        resource = _attributes((block.get("resource") or {}).get("attributes"), where, number)
        scopes = block.get("scopeSpans", block.get("instrumentationLibrarySpans")) or []
        for scope in scopes:
            for raw in (scope or {}).get("spans") or []:
                spans.append(_span(raw, resource, where, number))
    return spans


def _span(raw: Any, resource: dict[str, Any], where: Path, number: int) -> OtlpSpan:
    if not isinstance(raw, dict):
        raise ImportFormatError(where, f"line {number}", "a span is not an object")
    span_id = str(raw.get("spanId") or "")
    place = f"line {number} span {span_id or '?'}"
    if not span_id or not raw.get("traceId"):
        raise ImportFormatError(where, place, "span without traceId or spanId")
    status = raw.get("status") or {}
    code = status.get("code", 0)
    code = _STATUS_NAMES.get(code, 0) if isinstance(code, str) else code
    events = []
    for event in raw.get("events") or []:
        if isinstance(event, dict):
            events.append(
                {
                    "name": str(event.get("name", "")),
                    "time_ns": _nanos(event.get("timeUnixNano"), where, place),
                    "attrs": _attributes(event.get("attributes"), where, number),
                }
            )
    return OtlpSpan(
        trace_id=str(raw["traceId"]),
        span_id=span_id,
        parent_id=str(raw.get("parentSpanId") or ""),
        name=str(raw.get("name", "")),
        start_ns=_nanos(raw.get("startTimeUnixNano"), where, place),
        end_ns=_nanos(raw.get("endTimeUnixNano"), where, place),
        attrs=_attributes(raw.get("attributes"), where, number),
        status_code=int(code) if isinstance(code, int) else 0,
        status_message=str(status.get("message", "")),
        events=events,
        resource=resource,
        line=number,
    )


def _nanos(value: Any, where: Path, place: str) -> int | None:
    """A ``*UnixNano`` field (a decimal string or a number); 0 or absent means unknown."""
    if value is None or value == "" or value == 0 or value == "0":
        return None
    try:
        nanos = int(value)
    except (TypeError, ValueError):
        raise ImportFormatError(where, place, f"bad time {value!r}: expected nanoseconds") from None
    return nanos if nanos > 0 else None


def _attributes(raw: Any, where: Path, number: int) -> dict[str, Any]:
    if not raw:
        return {}
    if not isinstance(raw, list):
        raise ImportFormatError(where, f"line {number}", "attributes must be a list")
    return {
        str(item.get("key")): _any_value(item.get("value") or {})
        for item in raw
        if isinstance(item, dict)
    }


def _any_value(value: dict[str, Any]) -> Any:
    """An OTLP ``AnyValue`` as a Python value (intValue arrives as a string in JSON)."""
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        return int(value["intValue"])
    if "doubleValue" in value:
        return float(value["doubleValue"])
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "arrayValue" in value:
        return [_any_value(v) for v in (value["arrayValue"] or {}).get("values") or []]
    if "kvlistValue" in value:
        return {
            str(kv.get("key")): _any_value(kv.get("value") or {})
            for kv in (value["kvlistValue"] or {}).get("values") or []
        }
    if "bytesValue" in value:
        return value["bytesValue"]
    return None
