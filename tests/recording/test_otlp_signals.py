"""OTLP/JSON files that start with (or only hold) another signal than traces: lines of
``resourceLogs`` before the spans are skipped and counted, and a file of logs or metrics only is
refused with an error naming the file and what it holds (reviewlab/recording/interop)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reviewlab.recording.interop import ImportFormatError, detect_format, import_auto, read_otel

T0 = 1_764_000_000 * 1_000_000_000  # a fixed wall time, in ns
S = 1_000_000_000
TRACE = "5b8efff798038103d269b633813fc60c"


def _attrs(**values: str) -> list[dict[str, object]]:
    return [
        {"key": key.replace("__", "."), "value": {"stringValue": v}} for key, v in values.items()
    ]


def _span(span_id: str, parent: str, start: float, end: float, **attrs: str) -> dict[str, object]:
    return {
        "traceId": TRACE,
        "spanId": span_id,
        "parentSpanId": parent,
        "name": attrs.get("gen_ai__operation__name", ""),
        "startTimeUnixNano": str(T0 + int(start * S)),
        "endTimeUnixNano": str(T0 + int(end * S)),
        "attributes": _attrs(**attrs),
    }


def _spans_line() -> dict[str, object]:
    """One agent invocation: a chat, a read_file call of 0.5 s, a second chat."""
    spans = [
        _span("a000000000000001", "", 0.0, 2.0, gen_ai__operation__name="invoke_agent"),
        _span("c000000000000001", "a000000000000001", 0.0, 1.0, gen_ai__operation__name="chat"),
        _span(
            "e000000000000001",
            "a000000000000001",
            1.0,
            1.5,
            gen_ai__operation__name="execute_tool",
            gen_ai__tool__name="read_file",
            gen_ai__tool__call__arguments='{"path": "a.py"}',
        ),
        _span("c000000000000002", "a000000000000001", 1.5, 2.0, gen_ai__operation__name="chat"),
    ]
    return {"resourceSpans": [{"resource": {}, "scopeSpans": [{"spans": spans}]}]}


def _logs_line() -> dict[str, object]:
    """A GenAI log event (gen_ai.choice) as the Collector's file exporter writes logs."""
    record = {
        "timeUnixNano": str(T0 + S),
        "eventName": "gen_ai.choice",
        "traceId": TRACE,
        "spanId": "c000000000000001",
        "attributes": _attrs(gen_ai__system="openai"),
        "body": {"kvlistValue": {"values": [{"key": "index", "value": {"intValue": "0"}}]}},
    }
    return {"resourceLogs": [{"resource": {}, "scopeLogs": [{"logRecords": [record]}]}]}


def _metrics_line() -> dict[str, object]:
    return {"resourceMetrics": [{"resource": {}, "scopeMetrics": [{"metrics": []}]}]}


def _write(path: Path, *documents: dict[str, object]) -> Path:
    path.write_text("".join(json.dumps(document) + "\n" for document in documents))
    return path


def test_a_file_that_starts_with_logs_still_imports_its_spans(tmp_path):
    """Log lines first, then spans (one Collector file for all signals): detected as otel, the
    spans imported, the log lines counted as not placed."""
    path = _write(tmp_path / "all.jsonl", _logs_line(), _logs_line(), _spans_line())
    assert detect_format(path) == "otel"
    found, (episode,) = import_auto(path)
    assert found == "otel"
    assert [(call.tool, call.args, call.completed) for call in episode.calls] == [
        ("read_file", {"path": "a.py"}, True)
    ]
    assert episode.calls[0].duration_sec == pytest.approx(0.5)
    assert read_otel(path).unplaced == {"line(s) of resourceLogs, not spans": 2}


@pytest.mark.parametrize(
    ("documents", "held"),
    [
        ([_logs_line()], "OTLP logs (resourceLogs), not traces"),
        ([_logs_line(), _logs_line()], "OTLP logs (resourceLogs), not traces"),
        ([_metrics_line()], "OTLP metrics (resourceMetrics), not traces"),
        ([_logs_line(), _metrics_line()], "OTLP logs and metrics (resourceLogs, resourceMetrics)"),
    ],
    ids=["one-log-line", "log-lines", "metrics", "logs-and-metrics"],
)
def test_a_file_of_other_signals_only_is_refused_naming_the_file(tmp_path, documents, held):
    """Logs or metrics without spans: one ImportFormatError naming the file and the signals,
    saying that tool calls come from trace spans."""
    path = _write(tmp_path / "events.jsonl", *documents)
    assert detect_format(path) == "otel"
    with pytest.raises(ImportFormatError) as caught:
        import_auto(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: file: {held}")
    assert "execute_tool spans" in message


def test_a_single_logs_document_is_refused_like_a_logs_line(tmp_path):
    """The same refusal for a whole-file JSON document (pretty-printed) whose top key is
    resourceLogs."""
    path = tmp_path / "events.json"
    path.write_text(json.dumps(_logs_line(), indent=2))
    with pytest.raises(ImportFormatError, match=r"events\.json: file: OTLP logs \(resourceLogs\)"):
        read_otel(path)
