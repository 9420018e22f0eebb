"""OpenAI Agents SDK traces → episodes (``source="openai_agents"``), one per trace.

The SDK's tracing hands every finished trace and span to its processors, each able to say
``export()``: the dict its backend exporter uploads (``{"object": "trace.span", "id",
"trace_id", "parent_id", "started_at", "ended_at", "span_data": {"type", ...}, "error"}``).
:class:`AgentsTraceFile` is such a processor that writes those dicts as JSON Lines, and the
importer reads them back (or one ``{"data": [...]}`` upload payload).

Placement: ``function`` spans are calls; ``generation`` / ``response`` spans are model sends,
one round each; without them the SDK's ``turn`` spans (``custom``, ``sdk_span_type ==
"turn"``) are the rounds, a turn's send lasting from its start to its first call. A call whose
output is the SDK's own timeout text (``Tool 'NAME' timed out after N seconds.``) or whose error
names ``ToolTimeoutError`` (``timeout_behavior="raise_exception"``) is right-censored at its
span's length; a span that never ended is censored at the trace's last stamp. A timeout turned
into other text by a ``timeout_error_function`` cannot be told from a result.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections import defaultdict
from datetime import datetime
from pathlib import Path
from typing import Any

from reviewlab.recording._schema import (
    SCHEMA_VERSION,
    SCHEMA_VERSION_2,
    Call,
    EndReason,
    Episode,
    Round,
)
from reviewlab.recording.interop._common import ImportFormatError, parse_time, seconds_between

_TIMEOUT_TEXT = re.compile(r"^Tool '.*' timed out after \d+(\.\d+)? seconds\.$", re.DOTALL)
_MODEL_TYPES = ("generation", "response")


class AgentsTraceFile:
    """A tracing processor for the Agents SDK that writes each finished trace and span's
    ``export()`` as one JSON line of ``path`` (``agents.add_trace_processor(AgentsTraceFile(p))``).

    Lines are written whole under a lock and flushed, so a reader never sees half a line.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._file = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 (closed by shutdown)

    def on_trace_start(self, trace: Any) -> None:
        """Nothing: a trace is written when it ends."""

    def on_trace_end(self, trace: Any) -> None:
        """Write the trace's export."""
        self._write(trace.export())

    def on_span_start(self, span: Any) -> None:
        """Nothing: a span is written when it ends."""

    def on_span_end(self, span: Any) -> None:
        """Write the span's export."""
        self._write(span.export())

    def force_flush(self) -> None:
        """Flush the file."""
        with self._lock:
            self._file.flush()

    def shutdown(self) -> None:
        """Close the file."""
        with self._lock:
            self._file.close()

    def _write(self, item: dict[str, Any] | None) -> None:
        if item is None:
            return
        line = json.dumps(item, default=str) + "\n"
        with self._lock:
            if not self._file.closed:
                self._file.write(line)
                self._file.flush()


def is_openai_agents_trace(document: Any) -> bool:
    """True for one decoded record (or upload payload) of the SDK's trace export."""
    if isinstance(document, dict) and isinstance(document.get("data"), list):
        return any(is_openai_agents_trace(item) for item in document["data"][:3])
    return isinstance(document, dict) and document.get("object") in ("trace", "trace.span")


def import_openai_agents(path: str | os.PathLike[str]) -> list[Episode]:
    """Every trace of an Agents SDK export file (JSON Lines or an upload payload) as an
    episode, in start order."""
    where = Path(path)
    items = _read_items(where)
    spans: dict[str, list[dict[str, Any]]] = defaultdict(list)
    workflows: dict[str, str] = {}
    for place, item in items:
        if item.get("object") == "trace":
            workflows[str(item.get("id"))] = str(item.get("workflow_name") or "")
        elif item.get("object") == "trace.span":
            if not isinstance(item.get("span_data"), dict) or not item.get("started_at"):
                raise ImportFormatError(where, place, "a span without span_data or started_at")
            spans[str(item.get("trace_id"))].append({**item, "_place": place})
    episodes = [
        _episode(trace_id, group, workflows.get(trace_id, ""), where)
        for trace_id, group in spans.items()
        if any(s["span_data"].get("type") in ("function", *_MODEL_TYPES) for s in group)
        or any(_is_turn(s) for s in group)
    ]
    if not episodes:
        raise ImportFormatError(where, "file", "no trace with a function, model or turn span")
    return sorted(episodes, key=lambda episode: episode.started_at)


def _read_items(where: Path) -> list[tuple[str, dict[str, Any]]]:
    try:
        text = where.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ImportFormatError(where, "file", "binary data, not a JSON trace export") from None
    try:
        whole = json.loads(text)
    except json.JSONDecodeError:
        whole = None
    if isinstance(whole, dict) and isinstance(whole.get("data"), list):
        return [(f"data[{i}]", item) for i, item in enumerate(whole["data"])]
    items = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ImportFormatError(where, f"line {number}", f"invalid JSON: {exc.msg}") from None
        if not isinstance(item, dict):
            raise ImportFormatError(where, f"line {number}", "a record is not an object")
        items.append((f"line {number}", item))
    return items


def _is_turn(span: dict[str, Any]) -> bool:
    data = span["span_data"]
    inner = data.get("data") if isinstance(data.get("data"), dict) else {}
    return data.get("type") == "custom" and inner.get("sdk_span_type") == "turn"


def _episode(trace_id: str, spans: list[dict[str, Any]], workflow: str, where: Path) -> Episode:
    start = {id(s): parse_time(s["started_at"], path=where, where=s["_place"]) for s in spans}
    end = {
        id(s): parse_time(s["ended_at"], path=where, where=s["_place"])
        for s in spans
        if s.get("ended_at")
    }
    last_seen = max([*start.values(), *end.values()])
    origin = min(start.values())
    calls = sorted(
        (s for s in spans if s["span_data"].get("type") == "function"), key=lambda s: start[id(s)]
    )
    sends = [s for s in spans if s["span_data"].get("type") in _MODEL_TYPES]
    turns = sends or [s for s in spans if _is_turn(s)]
    turns.sort(key=lambda s: start[id(s)])
    owned: list[list[dict[str, Any]]] = [[] for _ in turns]
    leading: list[dict[str, Any]] = []
    for call in calls:
        index = max((i for i, t in enumerate(turns) if start[id(t)] <= start[id(call)]), default=-1)
        (owned[index] if index >= 0 else leading).append(call)
    rounds: list[Round] = []
    if leading:
        rounds.append(Round(calls=[_call(c, start, end, last_seen) for c in leading]))
    for turn, group in zip(turns, owned, strict=True):
        if sends:
            send_end = end.get(id(turn), last_seen)
        else:  # a turn: the model's reply ends where its first call starts
            send_end = min([start[id(c)] for c in group], default=end.get(id(turn), last_seen))
        tokens = _usage(turn)
        rounds.append(
            Round(
                send_sec=seconds_between(start[id(turn)], send_end),
                calls=[_call(c, start, end, last_seen) for c in group],
                input_tokens=tokens[0],
                output_tokens=tokens[1],
            )
        )
    failed = any(s.get("error") for s in spans if s["span_data"].get("type") != "function")
    ended: EndReason = "log_end" if not rounds or rounds[-1].calls or failed else "final_answer"
    usage = any(r.input_tokens is not None or r.output_tokens is not None for r in rounds)
    agents = [s["span_data"].get("name") for s in spans if s["span_data"].get("type") == "agent"]
    meta = {"origin": where.name, "format": "openai_agents", "trace_id": trace_id}
    if workflow:
        meta["workflow"] = workflow
    if agents:
        meta["agents"] = ",".join(sorted({str(a) for a in agents}))
    if not sends:
        meta["send_sec"] = "from each turn's start to its first call (no model spans)"
    return Episode(
        schema_version=SCHEMA_VERSION_2 if usage else SCHEMA_VERSION,  # type: ignore[call-arg]
        id=trace_id,
        source="openai_agents",
        started_at=origin,
        rounds=rounds,
        end_reason=ended,
        meta=meta,
    )


def _call(
    span: dict[str, Any],
    start: dict[int, datetime],
    end: dict[int, datetime],
    last_seen: datetime,
) -> Call:
    data = span["span_data"]
    output = data.get("output")
    error = span.get("error") if isinstance(span.get("error"), dict) else None
    said = f"{(error or {}).get('message', '')} {json.dumps((error or {}).get('data'))}"
    timed_out = (isinstance(output, str) and bool(_TIMEOUT_TEXT.match(output.strip()))) or (
        "ToolTimeoutError" in said or "timed out after" in said
    )
    ended = id(span) in end
    try:
        args = json.loads(data.get("input") or "{}")
    except (TypeError, json.JSONDecodeError):
        args = {"input": str(data.get("input"))}
    return Call(
        tool=str(data.get("name") or "unknown")[:200],
        args=args if isinstance(args, dict) else {"input": args},
        duration_sec=seconds_between(start[id(span)], end.get(id(span), last_seen)),
        # The SDK's timeout (or a span that never ended): right-censored at its length.
        completed=ended and not timed_out,
        status="error" if error is not None and not timed_out else "ok",
        result_chars=len(output) if isinstance(output, str) else 0,
    )


def _usage(span: dict[str, Any]) -> tuple[int | None, int | None]:
    data = span["span_data"]
    usage = data.get("usage")
    if not isinstance(usage, dict) and isinstance(data.get("data"), dict):
        usage = data["data"].get("usage")
    if not isinstance(usage, dict):
        return None, None
    tokens = (usage.get("input_tokens"), usage.get("output_tokens"))
    return tuple(t if isinstance(t, int) and t >= 0 else None for t in tokens)  # type: ignore[return-value]
