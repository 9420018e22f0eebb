"""OpenHands trajectories → episodes (``source="openhands"``).

An action with its observation is a call; consecutive calls sharing one model response form a
round, whose ``send_sec`` is the time from the last event before its first action. ``read``
is a ``read_file`` with its extent (a directory: ``list_files``), ``run`` is classified by its
command (:func:`~reviewlab.recording.interop.classify_command`), other names are kept. A
``run`` that hit OpenHands' no-output timeout (``exit_code == -1``) kept running, so it is
right-censored; an action the log ended before is censored at the log's last event. Naive
time stamps are read as UTC. A round's tokens are its response's ``usage``, which makes the
episode ``reviewlab.episode/2``. The mapping in full: docs/recording-format.md, "OpenHands
trajectories".
"""

from __future__ import annotations

import json
import os
import re
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
from reviewlab.recording.interop._common import (
    ImportFormatError,
    classify_command,
    parse_time,
    seconds_between,
)

_NUMBERED = re.compile(r"^\s*(\d+)\t", re.MULTILINE)
_DIRECTORY_VIEW = "Here's the files and directories"


def import_openhands(path: str | os.PathLike[str]) -> list[Episode]:
    """Every trajectory of an OpenHands file as an episode, in file order."""
    where = Path(path)
    text = where.read_text(encoding="utf-8")
    try:
        document: Any = json.loads(text)
    except json.JSONDecodeError:
        document = None
    if isinstance(document, list):
        return [trajectory_episode(document, path=where, episode_id=where.stem)]
    if isinstance(document, dict):
        return [_from_record(document, where, 1)]
    episodes = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ImportFormatError(where, f"line {number}", f"invalid JSON: {exc.msg}") from None
        episodes.append(_from_record(record, where, number))
    if not episodes:
        raise ImportFormatError(where, "file", "no OpenHands trajectory found")
    return episodes


def _from_record(record: Any, where: Path, number: int) -> Episode:
    if not isinstance(record, dict) or not isinstance(record.get("history"), list):
        raise ImportFormatError(where, f"line {number}", "expected an object with a 'history' list")
    episode_id = str(record.get("instance_id") or f"{where.stem}-{number}")
    model = ""
    metadata = record.get("metadata")
    if isinstance(metadata, dict) and isinstance(metadata.get("llm_config"), dict):
        model = str(metadata["llm_config"].get("model", ""))
    hit_limit = bool(record.get("error"))
    return trajectory_episode(
        record["history"], path=where, episode_id=episode_id, model=model, log_end=hit_limit
    )


def trajectory_episode(
    events: list[Any], *, path: Path, episode_id: str, model: str = "", log_end: bool = False
) -> Episode:
    """One OpenHands event list as an episode (see the module docstring for the rules)."""
    if not events:
        raise ImportFormatError(path, episode_id, "empty trajectory")
    stamps: list[datetime] = []
    for index, event in enumerate(events):
        if not isinstance(event, dict) or "timestamp" not in event:
            raise ImportFormatError(path, f"{episode_id} event {index}", "event without timestamp")
        stamps.append(
            parse_time(event["timestamp"], path=path, where=f"{episode_id} event {index}")
        )
    observation_of = {
        ev["cause"]: i
        for i, ev in enumerate(events)
        if "observation" in ev and ev.get("cause") is not None
    }
    task = next(
        (
            str(ev.get("args", {}).get("content", ""))
            for ev in events
            if ev.get("action") == "message" and ev.get("source") == "user"
        ),
        "",
    )

    rounds: list[Round] = []
    calls: list[Call] = []
    send_sec = 0.0
    tokens: tuple[int | None, int | None] = (None, None)
    response_id: object = None
    end_reason: EndReason = "log_end"
    served_by = ""
    for index, event in enumerate(events):
        action = event.get("action")
        if action is None or event.get("source") != "agent":
            continue
        metadata = event.get("tool_call_metadata")
        response = (metadata.get("model_response") if isinstance(metadata, dict) else None) or {}
        if isinstance(response, dict) and isinstance(response.get("model"), str):
            served_by = served_by or response["model"]
        if action == "finish" or (action == "message" and metadata is None):
            # The model's last send produced the answer: a final round without calls.
            if calls:
                rounds.append(_round(send_sec, calls, tokens))
                calls = []
            final_tokens = token_counts(response.get("usage")) if response else (None, None)
            rounds.append(
                _round(seconds_between(stamps[index - 1], stamps[index]), [], final_tokens)
            )
            end_reason = "final_answer"
            response_id = None
            continue
        if not isinstance(metadata, dict):
            continue  # system/recall/user-side actions are not tool calls
        this_response = response.get("id")
        if response_id is None or this_response != response_id:
            if calls:
                rounds.append(_round(send_sec, calls, tokens))
                calls = []
            send_sec = seconds_between(stamps[index - 1], stamps[index]) if index else 0.0
            tokens = token_counts(response.get("usage"))
            response_id = this_response
        calls.append(
            _call(
                event,
                events,
                observation_of.get(event.get("id")),
                stamps,
                index,
                path,
                episode_id,
                str(metadata.get("function_name") or action),
            )
        )
    if calls:
        rounds.append(_round(send_sec, calls, tokens))
    if log_end:
        end_reason = "log_end"
    meta = {"origin": path.name, "format": "openhands", "timezone": "naive timestamps read as UTC"}
    if model:
        meta["model"] = model
    served = served_by or model or None
    usage = served is not None or any(r.input_tokens is not None for r in rounds)
    return Episode(
        schema_version=SCHEMA_VERSION_2 if usage else SCHEMA_VERSION,  # type: ignore[call-arg]
        model=served if usage else None,
        id=episode_id,
        source="openhands",
        started_at=stamps[0],
        rounds=rounds,
        end_reason=end_reason,
        task=task,
        meta=meta,
    )


def _round(send_sec: float, calls: list[Call], tokens: tuple[int | None, int | None]) -> Round:
    return Round(send_sec=send_sec, calls=calls, input_tokens=tokens[0], output_tokens=tokens[1])


def _call(
    event: dict[str, Any],
    events: list[Any],
    obs_index: int | None,
    stamps: list[datetime],
    index: int,
    path: Path,
    episode_id: str,
    function_name: str,
) -> Call:
    args = {k: v for k, v in (event.get("args") or {}).items() if k != "thought"}
    if obs_index is None:
        # Never observed: censored at the end of the log.
        return Call(
            tool=_tool_name(event, "", function_name),
            args=args,
            duration_sec=seconds_between(stamps[index], stamps[-1]),
            completed=False,
        )
    observation = events[obs_index]
    content = str(observation.get("content") or "")
    extras = observation.get("extras") or {}
    exit_code = (
        (extras.get("metadata") or {}).get("exit_code") if isinstance(extras, dict) else None
    )
    tool = _tool_name(event, content, function_name)
    return Call(
        tool=tool,
        args=args,
        duration_sec=seconds_between(stamps[index], stamps[obs_index]),
        # exit_code -1: OpenHands' no-output timeout handed control back; the process ran on.
        completed=not (event.get("action") == "run" and exit_code == -1),
        status="error" if observation.get("observation") == "error" else "ok",
        result_chars=len(content),
        extent=_extent(event, content) if tool == "read_file" else None,
    )


def _tool_name(event: dict[str, Any], content: str, function_name: str) -> str:
    action = event.get("action")
    if action == "read":
        return "list_files" if content.startswith(_DIRECTORY_VIEW) else "read_file"
    if action == "run":
        return classify_command(str((event.get("args") or {}).get("command", "")))
    return function_name


def _extent(event: dict[str, Any], content: str) -> Extent | None:
    args = event.get("args") or {}
    file_path = str(args.get("path", ""))
    if not file_path or event.get("action") != "read":
        return None
    view = args.get("view_range")
    if isinstance(view, list) and len(view) == 2 and all(isinstance(v, int) for v in view):
        first, last = view
        if first >= 1 and last >= first:
            return Extent(path=file_path, start_line=first, end_line=last)
    numbers = [int(m) for m in _NUMBERED.findall(content)]
    if not numbers:
        return None
    return Extent(path=file_path, start_line=max(1, min(numbers)), end_line=max(numbers))
