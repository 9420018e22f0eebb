"""One OpenTelemetry tool span → one recorded :class:`~reviewlab.recording._schema.Call`.

A span that timed out (its error type, status or exception says so), that a framework
cancelled (``CancelledError``: LangGraph cancels the tools of a node at the node's timeout),
that reviewlab marked abandoned, or that never ended is right-censored; another error is
``status="error"``. Arguments come from the GenAI, OpenInference or reviewlab attributes.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any, cast

from reviewlab.core._vocab import CALL_STATUSES, SOURCE_GAP_ABANDONED, CallStatusName
from reviewlab.recording._schema import Call, Extent
from reviewlab.recording.interop._otlp import OtlpSpan

_TIMEOUT = re.compile(r"time[ _-]?out|timed[ _-]?out|deadline[ _-]?exceeded", re.IGNORECASE)
_STATUS_ERROR = 2
_NS = 1_000_000_000


def span_call(span: OtlpSpan, observed_ns: int, where: Path) -> Call:
    """The call ``span`` records; ``observed_ns``: the trace's last stamp (where a span that
    never ended is censored)."""
    attrs = span.attrs
    assert span.start_ns is not None
    tool = _tool_name(span)
    ended = span.end_ns is not None
    end_ns = span.end_ns if span.end_ns is not None else max(observed_ns, span.start_ns)
    duration = (end_ns - span.start_ns) / _NS
    failed = span.status_code == _STATUS_ERROR
    # A reviewlab-bounded call that was abandoned is censored whatever the framework's status says.
    abandoned = attrs.get("reviewlab.source_gap") == SOURCE_GAP_ABANDONED
    # Timed out, or cancelled (a framework stopping it at an enclosing timeout): censored.
    timed_out = abandoned or (failed and (_says_timeout(span) or _says_cancelled(span)))
    bound = attrs.get("reviewlab.bound_sec")
    if abandoned and isinstance(bound, int | float) and 0 <= bound < duration:
        # As reviewlab records its own abandoned calls: censored at the bound (the span also
        # holds the scheduler's lateness in noticing it).
        duration = float(bound)
    completed = attrs.get("reviewlab.call.completed")
    if not isinstance(completed, bool):
        completed = ended and not timed_out
    saved_status = attrs.get("reviewlab.call.status")
    status: CallStatusName = "error" if failed and not timed_out else "ok"
    if saved_status in CALL_STATUSES:
        status = cast(CallStatusName, saved_status)
    result = attrs.get(
        "gen_ai.tool.call.result", attrs.get("tool_response", attrs.get("output.value"))
    )
    chars = attrs.get("reviewlab.result_chars")
    if not isinstance(chars, int):
        chars = len(result) if isinstance(result, str) else 0
    returned_after = attrs.get("reviewlab.returned_after_sec")
    return Call(
        tool=tool[:200],
        args=_arguments(attrs),
        duration_sec=duration,
        completed=completed,
        status=status,
        result_chars=max(0, chars),
        extent=_extent(attrs),
        returned_after_sec=float(returned_after)
        if isinstance(returned_after, int | float) and math.isfinite(returned_after)
        else None,
    )


def _tool_name(span: OtlpSpan) -> str:
    for key in ("gen_ai.tool.name", "tool.name"):
        value = span.attrs.get(key)
        if isinstance(value, str) and value:
            return value
    name = span.name.strip()
    if name.startswith("execute_tool "):
        name = name.removeprefix("execute_tool ").strip()
    return name or "unknown"


def _says_timeout(span: OtlpSpan) -> bool:
    texts = [str(span.attrs.get("error.type", "")), span.status_message]
    for event in span.events:
        if event["name"] == "exception":
            texts.append(str(event["attrs"].get("exception.type", "")))
            texts.append(str(event["attrs"].get("exception.message", "")))
    return any(_TIMEOUT.search(text) for text in texts if text)


def _says_cancelled(span: OtlpSpan) -> bool:
    texts = [span.status_message.split("(", 1)[0]]
    for event in span.events:
        if event["name"] == "exception":
            texts.append(str(event["attrs"].get("exception.type", "")))
    return any(text.strip().endswith("CancelledError") for text in texts)


def _arguments(attrs: dict[str, Any]) -> dict[str, Any]:
    for key in ("gen_ai.tool.call.arguments", "tool_arguments", "input.value"):
        value = attrs.get(key)
        if isinstance(value, dict):
            return value
        decoded = json_dict(value)
        if decoded is not None:
            return decoded
    raw = attrs.get("input.value")
    # OpenInference's LangChain tools record a one-argument input as its bare text.
    return {"input": raw} if isinstance(raw, str) and raw else {}


def json_dict(value: Any) -> dict[str, Any] | None:
    """``value`` decoded when it is a string holding a JSON object, else ``None``."""
    if not isinstance(value, str):
        return None
    try:
        decoded = json.loads(value)
    except json.JSONDecodeError:
        return None
    return decoded if isinstance(decoded, dict) else None


def _extent(attrs: dict[str, Any]) -> Extent | None:
    path = attrs.get("reviewlab.extent.path")
    start = attrs.get("reviewlab.extent.start_line")
    end = attrs.get("reviewlab.extent.end_line")
    if isinstance(path, str) and isinstance(start, int) and isinstance(end, int):
        return Extent(path=path, start_line=start, end_line=end)
    return None
