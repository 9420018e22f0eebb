"""OpenTelemetry traces (OTLP/JSON) → episodes (``source="otel"``).

Accepted: the Collector's file exporter output (one ``resourceSpans`` object per line, other
signals counted and skipped) or one such document; every span is read before any episode is
built. Tool calls, model sends and agent invocations are told by the GenAI semantic
conventions or OpenInference; one episode per agent invocation, each model span opening a
round (else rounds inferred from the calls' overlap). A tool span that timed out, that
reviewlab marked abandoned, or that never ended is right-censored. A file written by
``reviewlab export otel`` imports as the episodes it was written from.

Invariant: nothing is dropped silently: spans that are not placed are counted by reason in
:attr:`OtelImport.unplaced`. The span mapping in full: docs/recording-format.md,
"OpenTelemetry traces in".
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, cast

from reviewlab.core._vocab import (
    END_REASONS,
    SOURCES,
    EndReason,
    Source,
)
from reviewlab.recording._schema import (
    SCHEMA_VERSION,
    SCHEMA_VERSION_2,
    Episode,
    Round,
)
from reviewlab.recording.capture import TimedCall, inferred_rounds, offsets_meta
from reviewlab.recording.interop._common import ImportFormatError
from reviewlab.recording.interop._otel_calls import json_dict, span_call
from reviewlab.recording.interop._otlp import OtlpSpan, read_spans

_STATUS_ERROR = 2
_NS = 1_000_000_000
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass
class OtelImport:
    """What :func:`read_otel` made of a file: the episodes and the spans it did not place."""

    episodes: list[Episode]
    unplaced: Counter[str] = field(default_factory=Counter)
    spans: int = 0

    def report(self) -> str:
        """One line: spans read, episodes built and the unplaced spans counted by reason."""
        calls = sum(len(episode.calls) for episode in self.episodes)
        text = f"{self.spans} span(s) → {len(self.episodes)} episode(s), {calls} call(s)"
        if self.unplaced:
            reasons = "; ".join(
                f"{count} {reason}" for reason, count in sorted(self.unplaced.items())
            )
            text += f"; not placed: {reasons}"
        return text


def import_otel(path: str | os.PathLike[str]) -> list[Episode]:
    """Every episode of an OTLP/JSON trace file (see the module docstring)."""
    return read_otel(path).episodes


def read_otel(path: str | os.PathLike[str]) -> OtelImport:
    """The episodes of an OTLP/JSON trace file and the count of spans not placed, by reason."""
    where = Path(path)
    unplaced: Counter[str] = Counter()
    spans = read_spans(where, unplaced)
    if not spans and not unplaced:
        raise ImportFormatError(where, "file", "no spans found")
    episodes = _episodes(spans, where, unplaced)
    result = OtelImport(episodes, unplaced, len(spans))
    if not episodes:
        # Not one tool or model span: say what the file held instead of an empty import.
        raise ImportFormatError(where, "spans", f"no agent, model or tool span: {result.report()}")
    return result


# -- placing -------------------------------------------------------------------------------
@dataclass
class _Group:
    """The spans of one episode: its agent span (if any), model spans and tool spans."""

    trace_id: str
    agent: OtlpSpan | None
    models: list[OtlpSpan] = field(default_factory=list)
    tools: list[OtlpSpan] = field(default_factory=list)


def _episodes(spans: list[OtlpSpan], where: Path, unplaced: Counter[str]) -> list[Episode]:
    by_id = {(span.trace_id, span.span_id): span for span in spans}
    observed: dict[str, int] = {}
    for span in spans:
        for stamp in (span.start_ns, span.end_ns, *(e["time_ns"] for e in span.events)):
            if stamp is not None:
                observed[span.trace_id] = max(observed.get(span.trace_id, 0), stamp)
    groups: dict[tuple[str, str], _Group] = {}
    for span in spans:
        kind = span.kind
        if kind == "agent":
            groups.setdefault((span.trace_id, span.span_id), _Group(span.trace_id, span))
            continue
        if kind == "other":
            unplaced["spans of other kinds (not tool, model or agent)"] += 1
            continue
        if span.start_ns is None:
            unplaced[f"{kind} spans without a start time"] += 1
            continue
        if span.end_ns is not None and span.end_ns < span.start_ns:
            unplaced[f"{kind} spans ending before they start"] += 1
            continue
        owner, inside_tool = _owner(span, by_id)
        if inside_tool:
            unplaced[f"{kind} spans inside a tool span (part of that call)"] += 1
            continue
        key = (span.trace_id, owner.span_id if owner is not None else "")
        group = groups.setdefault(key, _Group(span.trace_id, owner))
        (group.tools if kind == "tool" else group.models).append(span)
    _merge_tool_less_agents(groups)
    episodes = []
    for group in groups.values():
        if not group.tools and not group.models:
            unplaced["agent spans with no model or tool span"] += 1
            continue
        episode = _episode(group, observed[group.trace_id], where, unplaced)
        if episode is not None:
            episodes.append(episode)
    episodes.sort(key=lambda episode: episode.started_at)
    return episodes


def _merge_tool_less_agents(groups: dict[tuple[str, str], _Group]) -> None:
    """Fold agent spans that hold no call into their trace's agent-less group, when that group
    holds the calls: LangGraph's ``agent`` node is an AGENT span per model step, while its tool
    node runs beside it, so the trace (not the node) is the agent invocation."""
    for (trace_id, owner), loose in list(groups.items()):
        if owner or not loose.tools:
            continue
        for key, group in list(groups.items()):
            if key[0] == trace_id and key[1] and not group.tools:
                loose.models.extend(group.models)
                del groups[key]


def _owner(span: OtlpSpan, by_id: dict[tuple[str, str], OtlpSpan]) -> tuple[OtlpSpan | None, bool]:
    """The nearest agent ancestor of ``span`` and whether a tool span lies between them."""
    seen = {span.span_id}
    parent_id = span.parent_id
    while parent_id and parent_id not in seen:
        seen.add(parent_id)
        parent = by_id.get((span.trace_id, parent_id))
        if parent is None:
            return None, False
        kind = parent.kind
        if kind == "agent":
            return parent, False
        if kind == "tool":
            return None, True
        parent_id = parent.parent_id
    return None, False


def _episode(
    group: _Group, observed_ns: int, where: Path, unplaced: Counter[str]
) -> Episode | None:
    agent = group.agent
    stamps = [s.start_ns for s in (*group.models, *group.tools) if s.start_ns is not None]
    if agent is not None and agent.start_ns is not None:
        stamps.append(agent.start_ns)
    origin_ns = min(stamps)
    calls = []
    tools = sorted(group.tools, key=_tool_order)
    for span in tools:
        call = span_call(span, observed_ns, where)
        start = ((span.start_ns or 0) - origin_ns) / _NS
        calls.append(TimedCall(call, start, start + call.duration_sec))
    models = sorted(group.models, key=lambda s: (s.start_ns or 0, s.span_id))
    if models:
        rounds, offsets = _model_rounds(models, tools, calls, origin_ns, observed_ns)
    else:
        rounds, offsets = inferred_rounds(calls, 0.0)
    root = agent.attrs if agent is not None else {}
    meta = _meta(group, where)
    meta.update(offsets_meta(rounds, offsets))
    saved_meta = json_dict(root.get("reviewlab.episode.meta"))
    end_reason = _end_reason(group, models, rounds, root)
    source = root.get("reviewlab.episode.source")
    span_id = f":{agent.span_id}" if agent is not None else ""
    deadline = root.get("reviewlab.episode.deadline_sec")
    usage = any(r.input_tokens is not None or r.output_tokens is not None for r in rounds)
    return Episode(
        schema_version=SCHEMA_VERSION_2 if usage else SCHEMA_VERSION,  # type: ignore[call-arg]
        model=_model_name(group) if usage else None,
        id=str(root.get("reviewlab.episode.id") or f"{group.trace_id}{span_id}"),
        source=cast(Source, source) if source in SOURCES else "otel",
        slot=str(root.get("reviewlab.episode.slot", "")),
        started_at=_EPOCH + timedelta(microseconds=origin_ns // 1000),
        deadline_sec=float(deadline) if isinstance(deadline, int | float) else None,
        rounds=rounds,
        end_reason=end_reason,
        task=str(root.get("reviewlab.episode.task", "")),
        meta=saved_meta if saved_meta is not None else meta,
    )


def _tool_order(span: OtlpSpan) -> tuple[int, int, str]:
    """Start order; calls starting together keep the order an export gave them."""
    index = span.attrs.get("reviewlab.call.index")
    return (span.start_ns or 0, index if isinstance(index, int) else 0, span.span_id)


def _model_rounds(
    models: list[OtlpSpan],
    tools: list[OtlpSpan],
    calls: list[TimedCall],
    origin_ns: int,
    observed_ns: int,
) -> tuple[list[Round], list[list[float]]]:
    starts = [((m.start_ns or origin_ns) - origin_ns) / _NS for m in models]
    ends = [((m.end_ns or observed_ns) - origin_ns) / _NS for m in models]
    owned: list[list[TimedCall]] = [[] for _ in models]
    leading: list[TimedCall] = []
    # A file written by `reviewlab export otel` numbers its rounds: that settles ties
    # (zero-length sends and calls) that times alone cannot.
    numbered = {m.attrs.get("reviewlab.round"): i for i, m in enumerate(models)}
    by_number = len(numbered) == len(models) and all(isinstance(number, int) for number in numbered)
    for span, timed in zip(tools, calls, strict=True):
        number = span.attrs.get("reviewlab.round")
        if by_number and number in numbered:
            owned[numbered[number]].append(timed)
            continue
        index = max((i for i, start in enumerate(starts) if start <= timed.start_sec), default=-1)
        (owned[index] if index >= 0 else leading).append(timed)
    rounds: list[Round] = []
    offsets: list[list[float]] = []
    if leading:
        rounds.append(Round(send_sec=0.0, calls=[t.call for t in leading]))
        offsets.append([t.start_sec - leading[0].start_sec for t in leading])
    for model, start, end, group in zip(models, starts, ends, owned, strict=True):
        tokens = _span_tokens(model)
        rounds.append(
            Round(
                send_sec=max(0.0, end - start),
                calls=[t.call for t in group],
                input_tokens=tokens["input_tokens"],
                output_tokens=tokens["output_tokens"],
            )
        )
        offsets.append([max(0.0, t.start_sec - end) for t in group])
    return rounds, offsets


def _end_reason(
    group: _Group, models: list[OtlpSpan], rounds: list[Round], root: dict[str, Any]
) -> EndReason:
    saved = root.get("reviewlab.episode.end_reason")
    if saved in END_REASONS:
        return cast(EndReason, saved)
    if rounds and rounds[-1].calls:
        return "log_end"  # the trace ends after tool calls: no final model answer seen
    last = models[-1] if models else None
    if last is not None and last.status_code == _STATUS_ERROR:
        return "model_error"
    if last is not None and last.end_ns is None:
        return "log_end"
    return "final_answer"


def _meta(group: _Group, where: Path) -> dict[str, str]:
    meta = {"origin": where.name, "format": "otel", "trace_id": group.trace_id}
    spans = [*group.models, *group.tools] + ([group.agent] if group.agent else [])
    conventions = sorted(
        {
            "gen_ai" if "gen_ai.operation.name" in s.attrs else "openinference"
            for s in spans
            if "gen_ai.operation.name" in s.attrs or "openinference.span.kind" in s.attrs
        }
    )
    meta["conventions"] = ",".join(conventions)
    for span in spans:
        service = span.resource.get("service.name")
        if isinstance(service, str) and service:
            meta["service"] = service
            break
    if group.agent is not None:
        name = group.agent.attrs.get("gen_ai.agent.name", group.agent.name)
        meta["agent"] = str(name)
    model = _model_name(group)
    if model:
        meta["model"] = model
    tokens = {"input_tokens": 0, "output_tokens": 0}
    seen = False
    for span in group.models:
        for ours, value in _span_tokens(span).items():
            if value is not None:
                tokens[ours] += value
                seen = True
    if seen:
        meta.update({key: str(value) for key, value in tokens.items()})
    return meta


def _model_name(group: _Group) -> str:
    """The model the group's model spans name (the first that names one), or ``""``."""
    for span in group.models:
        model = span.attrs.get(
            "gen_ai.response.model",
            span.attrs.get("gen_ai.request.model", span.attrs.get("llm.model_name")),
        )
        if isinstance(model, str) and model:
            return model
    return ""


_TOKEN_KEYS = {
    "input_tokens": (
        "gen_ai.usage.input_tokens",
        "gen_ai.usage.prompt_tokens",  # the older names
        "llm.token_count.prompt",
    ),
    "output_tokens": (
        "gen_ai.usage.output_tokens",
        "gen_ai.usage.completion_tokens",
        "llm.token_count.completion",
    ),
}


def _span_tokens(span: OtlpSpan) -> dict[str, int | None]:
    """A model span's token counts (``None``: the span does not report that count)."""
    counts: dict[str, int | None] = {}
    for ours, keys in _TOKEN_KEYS.items():
        counts[ours] = None
        for key in keys:
            value = span.attrs.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                counts[ours] = value
                break
    return counts
