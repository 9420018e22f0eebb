"""Recorded episodes written as an OpenTelemetry trace (OTLP/JSON), one trace per episode.

One ``{"resourceSpans": [...]}`` line per episode, as the Collector's file exporter writes
them: an ``invoke_agent reviewlab`` root span over the episode (its fields as
``reviewlab.episode.*``), per round a ``chat`` span then its calls as ``execute_tool {tool}``
spans with the GenAI attributes and ``reviewlab.*`` ones; a censored call ends with an error
status and ``error.type = "timeout"``.

Invariants (tested): importing the file gives back the same episodes, times to the
nanosecond; trace and span ids are derived from the episode id, so the same corpus gives the
same bytes; the file is written atomically. The layout in full: docs/recording-format.md,
"OpenTelemetry traces out".
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from reviewlab.core._atomic import write_text_atomic
from reviewlab.live._otlp_json import otlp_attributes
from reviewlab.recording._schema import Call, Episode
from reviewlab.recording.capture import read_offsets

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_NS = 1_000_000_000
_STATUS_ERROR = 2
_SPAN_KIND_INTERNAL = 1


def export_otel(episodes: Iterable[Episode], path: str | os.PathLike[str]) -> int:
    """Write ``episodes`` to ``path`` as OTLP/JSON lines (atomically); returns the spans written."""
    where = Path(path)
    lines = []
    spans = 0
    for episode in episodes:
        document = episode_document(episode)
        spans += len(document["resourceSpans"][0]["scopeSpans"][0]["spans"])
        lines.append(json.dumps(document, separators=(",", ":"), ensure_ascii=False))
    write_text_atomic(where, "".join(line + "\n" for line in lines))
    return spans


def episode_document(episode: Episode) -> dict[str, Any]:
    """One episode as an OTLP/JSON document holding its trace (see the module docstring)."""
    ids = _Ids(episode.id)
    t0 = (episode.started_at - _EPOCH) // timedelta(microseconds=1) * 1000
    root = ids.next()
    offsets = read_offsets(dict(episode.meta), episode.rounds)
    spans: list[dict[str, Any]] = []
    clock = 0.0
    for number, rnd in enumerate(episode.rounds, start=1):
        send_end = clock + rnd.send_sec
        model_attrs: dict[str, Any] = {"gen_ai.operation.name": "chat", "reviewlab.round": number}
        if "model" in episode.meta:
            model_attrs["gen_ai.request.model"] = episode.meta["model"]
        if episode.model is not None:
            model_attrs["gen_ai.response.model"] = episode.model
        if rnd.input_tokens is not None:
            model_attrs["gen_ai.usage.input_tokens"] = rnd.input_tokens
        if rnd.output_tokens is not None:
            model_attrs["gen_ai.usage.output_tokens"] = rnd.output_tokens
        spans.append(
            _span(
                ids,
                root,
                f"chat {episode.meta.get('model', '')}".strip(),
                t0,
                clock,
                send_end,
                model_attrs,
            )
        )
        cursor = send_end
        round_end = send_end
        for index, call in enumerate(rnd.calls):
            start = send_end + offsets[number - 1][index] if offsets is not None else cursor
            end = start + call.duration_sec
            spans.append(_call_span(ids, root, call, t0, start, end, number, index))
            cursor = end
            round_end = max(round_end, end)
        clock = round_end
    root_attrs: dict[str, Any] = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "reviewlab",
        "reviewlab.episode.id": episode.id,
        "reviewlab.episode.source": episode.source,
        "reviewlab.episode.slot": episode.slot,
        "reviewlab.episode.task": episode.task,
        "reviewlab.episode.end_reason": episode.end_reason,
        "reviewlab.episode.deadline_sec": episode.deadline_sec,
        "reviewlab.episode.meta": json.dumps(dict(episode.meta), sort_keys=True),
    }
    spans.insert(0, _span(ids, None, "invoke_agent reviewlab", t0, 0.0, clock, root_attrs, root))
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": otlp_attributes({"service.name": "reviewlab"})},
                "scopeSpans": [{"scope": {"name": "reviewlab.export"}, "spans": spans}],
            }
        ]
    }


class _Ids:
    """Deterministic trace and span ids for one episode."""

    def __init__(self, episode_id: str) -> None:
        self.key = episode_id
        self.trace = hashlib.sha256(f"reviewlab-trace:{episode_id}".encode()).hexdigest()[:32]
        self.count = 0

    def next(self) -> str:
        self.count += 1
        return hashlib.sha256(f"{self.key}:{self.count}".encode()).hexdigest()[:16]


def _span(
    ids: _Ids,
    parent: str | None,
    name: str,
    t0: int,
    start: float,
    end: float,
    attributes: dict[str, Any],
    span_id: str | None = None,
) -> dict[str, Any]:
    record: dict[str, Any] = {
        "traceId": ids.trace,
        "spanId": span_id or ids.next(),
        "name": name,
        "kind": _SPAN_KIND_INTERNAL,
        "startTimeUnixNano": str(t0 + round(start * _NS)),
        "endTimeUnixNano": str(t0 + round(end * _NS)),
        "attributes": otlp_attributes(attributes),
        "status": {"code": 0},
    }
    if parent is not None:
        record["parentSpanId"] = parent
    return record


def _call_span(
    ids: _Ids, root: str, call: Call, t0: int, start: float, end: float, number: int, index: int
) -> dict[str, Any]:
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": call.tool,
        "gen_ai.tool.call.id": f"r{number}c{index + 1}",
        "gen_ai.tool.call.arguments": json.dumps(call.args, sort_keys=True, ensure_ascii=False),
        "reviewlab.round": number,
        "reviewlab.call.index": index,
        "reviewlab.call.completed": call.completed,
        "reviewlab.call.status": call.status,
        "reviewlab.result_chars": call.result_chars,
        "reviewlab.returned_after_sec": call.returned_after_sec,
    }
    if call.extent is not None:
        attributes["reviewlab.extent.path"] = call.extent.path
        attributes["reviewlab.extent.start_line"] = call.extent.start_line
        attributes["reviewlab.extent.end_line"] = call.extent.end_line
    if not call.completed:
        attributes["error.type"] = "timeout"
    elif call.status == "error":
        attributes["error.type"] = "tool_error"
    record = _span(ids, root, f"execute_tool {call.tool}", t0, start, end, attributes)
    if "error.type" in attributes:
        message = (
            f"right-censored: had not returned after {call.duration_sec}s"
            if not call.completed
            else "the tool failed"
        )
        record["status"] = {"code": _STATUS_ERROR, "message": message}
    return record
