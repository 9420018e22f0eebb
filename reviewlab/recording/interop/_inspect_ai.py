"""Inspect AI eval logs → episodes (``source="inspect"``), one per sample and epoch.

Accepted: a ``.json`` eval log and a ``.eval`` zip, told apart by the zip magic bytes. Timing
comes from the sample's ``events``: a ``model`` event opens a round, each ``tool`` event after
it is a call of that round, a last ``model`` event with no call is the final answer. A tool
event Inspect cancelled at its time limit, or one still running when the log ended, is
right-censored; any other ``error`` is ``status="error"``. ``bash`` is mapped by its command
(:func:`~reviewlab.recording.interop.classify_command`), ``text_editor`` ``view`` is a
``read_file``; other names are kept. Per-round usage makes the episode
``reviewlab.episode/2``. The mapping in full: docs/recording-format.md, "Inspect AI eval
logs".
"""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path
from typing import Any

from reviewlab.recording._schema import (
    SCHEMA_VERSION,
    SCHEMA_VERSION_2,
    Call,
    EndReason,
    Episode,
    Extent,
    Round,
)
from reviewlab.recording.capture import token_counts
from reviewlab.recording.interop._archive import member_names, read_members
from reviewlab.recording.interop._common import (
    ImportFormatError,
    classify_command,
    parse_time,
    seconds_between,
)

_ZIP_MAGIC = b"PK\x03\x04"


def import_inspect(path: str | os.PathLike[str]) -> list[Episode]:
    """Every sample (and epoch) of an Inspect log as an episode, in log order."""
    where = Path(path)
    with open(where, "rb") as handle:
        magic = handle.read(4)
    if magic == _ZIP_MAGIC:
        header, samples = _read_eval_zip(where)
    else:
        try:
            document = json.loads(where.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ImportFormatError(
                where, f"line {exc.lineno}", f"invalid JSON: {exc.msg}"
            ) from None
        if not isinstance(document, dict) or "eval" not in document:
            raise ImportFormatError(where, "file", "not an Inspect eval log (no 'eval' key)")
        header, samples = document, list(document.get("samples") or [])
    if not samples:
        raise ImportFormatError(where, "samples", "the log holds no samples")
    return [sample_episode(sample, header, path=where) for sample in samples]


def _read_eval_zip(where: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The header and samples of an ``.eval`` archive (members in any compression Inspect
    writes, zstd included: :mod:`reviewlab.recording.interop._archive`)."""
    names = member_names(where)
    header_name = "header.json" if "header.json" in names else "_journal/start.json"
    sample_names = sorted(
        (n for n in names if n.startswith("samples/") and n.endswith(".json")),
        key=_sample_order,
    )
    members = read_members(where, [header_name, *sample_names])
    try:
        header = json.loads(members[header_name])
        samples = [json.loads(members[name]) for name in sample_names]
    except json.JSONDecodeError as exc:
        raise ImportFormatError(where, "zip", f"unreadable .eval archive: {exc}") from None
    return header, samples


def _sample_order(name: str) -> tuple[int, str]:
    stem = name.rsplit("/", 1)[-1].removesuffix(".json")
    first = stem.split("_", 1)[0]
    return (int(first), stem) if first.isdigit() else (1 << 62, stem)


def sample_episode(sample: dict[str, Any], header: dict[str, Any], *, path: Path) -> Episode:
    """One Inspect sample as an episode (see the module docstring for the rules)."""
    info = header.get("eval") or {}
    task = str(info.get("task", path.stem))
    label = f"{task}:{sample.get('id')}:{sample.get('epoch', 1)}"
    events = sample.get("events")
    if not events:
        raise ImportFormatError(
            path,
            f"sample {sample.get('id')!r}",
            "no events: the log carries no call timings to import",
        )
    rounds: list[Round] = []
    first_stamp: datetime | None = None
    for index, event in enumerate(events):
        where = f"sample {sample.get('id')!r} event {index}"
        if first_stamp is None and "timestamp" in event:
            first_stamp = parse_time(event["timestamp"], path=path, where=where)
        kind = event.get("event")
        if kind == "model":
            output = event.get("output")
            tokens = token_counts(output.get("usage") if isinstance(output, dict) else None)
            rounds.append(
                Round(
                    send_sec=_span_sec(event, path, where),
                    input_tokens=tokens[0],
                    output_tokens=tokens[1],
                )
            )
        elif kind == "tool":
            if not rounds:
                rounds.append(Round(send_sec=0.0))
            rounds[-1] = rounds[-1].model_copy(
                update={"calls": [*rounds[-1].calls, _call(event, path, where)]}
            )
    if first_stamp is None:
        raise ImportFormatError(path, label, "no event carries a timestamp")
    config = info.get("config") or {}
    limit = config.get("time_limit") or config.get("working_limit")
    ended: EndReason = (
        "final_answer" if rounds and not rounds[-1].calls and not sample.get("error") else "log_end"
    )
    if sample.get("error"):
        ended = "model_error"
    meta = {
        "origin": path.name,
        "format": "inspect",
        "task": task,
        "model": str(info.get("model", "")),
        "sample_id": str(sample.get("id")),
    }
    usage = any(r.input_tokens is not None or r.output_tokens is not None for r in rounds)
    return Episode(
        schema_version=SCHEMA_VERSION_2 if usage else SCHEMA_VERSION,  # type: ignore[call-arg]
        model=str(info.get("model")) if usage and info.get("model") else None,
        id=label,
        source="inspect",
        started_at=first_stamp,
        deadline_sec=float(limit) if limit else None,
        rounds=rounds,
        end_reason=ended,
        task=_task_text(sample),
        meta=meta,
    )


def _span_sec(event: dict[str, Any], path: Path, where: str) -> float:
    if event.get("completed"):
        start = parse_time(event["timestamp"], path=path, where=where)
        return seconds_between(start, parse_time(event["completed"], path=path, where=where))
    return max(0.0, float(event.get("working_time") or 0.0))


def _call(event: dict[str, Any], path: Path, where: str) -> Call:
    error = event.get("error") or {}
    timed_out = isinstance(error, dict) and error.get("type") == "timeout"
    unfinished = not event.get("completed")
    arguments = event.get("arguments") or {}
    tool, extent = _map_tool(str(event.get("function", "")), arguments)
    result = event.get("result")
    chars = len(result) if isinstance(result, str) else len(json.dumps(result)) if result else 0
    return Call(
        tool=tool,
        args=arguments,
        duration_sec=_span_sec(event, path, where),
        # Inspect cancelled it at its limit, or the log ended while it ran: right-censored.
        completed=not (timed_out or unfinished),
        status="error" if error and not timed_out else "ok",
        result_chars=chars,
        extent=extent,
    )


def _map_tool(function: str, arguments: dict[str, Any]) -> tuple[str, Extent | None]:
    if function == "bash":  # the argument is "command" in current Inspect, "cmd" before
        return classify_command(str(arguments.get("command", arguments.get("cmd", "")))), None
    if function == "text_editor" and arguments.get("command") == "view":
        view = arguments.get("view_range")
        extent = None
        if (
            isinstance(view, list)
            and len(view) == 2
            and all(isinstance(v, int) for v in view)
            and 1 <= view[0] <= view[1]
            and arguments.get("path")
        ):
            extent = Extent(path=str(arguments["path"]), start_line=view[0], end_line=view[1])
        return "read_file", extent
    return function or "unknown", None


def _task_text(sample: dict[str, Any]) -> str:
    value = sample.get("input")
    if isinstance(value, str):
        return value
    if isinstance(value, list):  # chat messages: the first user message is the task
        for message in value:
            if isinstance(message, dict) and message.get("role") == "user":
                content = message.get("content")
                return content if isinstance(content, str) else json.dumps(content)
    return ""
