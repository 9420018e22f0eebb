"""SWE-agent trajectories (``.traj``) → episodes (``source="swe_agent"``), one per file.

Each step of the ``trajectory`` is one round of one call lasting its ``execution_time``. What
the file does not hold shows in the episode: no time stamps (``started_at`` is the Unix epoch,
``meta`` says so), no send times (every ``send_sec`` is 0), no usage per response (the run's
totals kept in ``meta``, never spread over rounds). A step without ``execution_time`` is an
:class:`ImportFormatError`, never a made-up duration. File commands map to ``read_file`` or
``search_code``, other named commands keep their name, shell commands are classified
(:func:`~reviewlab.recording.interop.classify_command`); a step SWE-agent cancelled for taking
too long is right-censored. The mapping in full: docs/recording-format.md, "SWE-agent
trajectories".
"""

from __future__ import annotations

import json
import math
import os
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from reviewlab.recording._schema import Call, EndReason, Episode, Round
from reviewlab.recording.interop._common import ImportFormatError, classify_command

_READ = {"open", "goto", "scroll_up", "scroll_down"}
_SEARCH = {"find_file", "search_dir", "search_file"}
_NAMED = {"edit", "create", "submit", "str_replace_editor", "insert", "undo_edit"}
# SWE-agent's message when it cancelled a command at its time limit.
_CANCELLED = re.compile(r"cancell?ed because it took more than \d+(\.\d+)? seconds")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def is_swe_agent_trajectory(document: Any) -> bool:
    """True for a decoded JSON document shaped like a SWE-agent ``.traj``."""
    if not isinstance(document, dict) or not isinstance(document.get("trajectory"), list):
        return False
    steps = document["trajectory"]
    return all(isinstance(step, dict) and "action" in step for step in steps[:3])


def import_swe_agent(path: str | os.PathLike[str]) -> list[Episode]:
    """The trajectory of a SWE-agent ``.traj`` file as one episode."""
    where = Path(path)
    try:
        document = json.loads(where.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise ImportFormatError(where, "file", "binary data, not a .traj JSON file") from None
    except json.JSONDecodeError as exc:
        raise ImportFormatError(where, f"line {exc.lineno}", f"invalid JSON: {exc.msg}") from None
    if not is_swe_agent_trajectory(document):
        raise ImportFormatError(where, "file", "not a SWE-agent trajectory (no 'trajectory' list)")
    steps = document["trajectory"]
    if not steps:
        raise ImportFormatError(where, "trajectory", "empty trajectory")
    rounds = [Round(calls=[_call(step, index, where)]) for index, step in enumerate(steps)]
    info = document.get("info") if isinstance(document.get("info"), dict) else {}
    exit_status = str(info.get("exit_status", ""))
    end_reason: EndReason = "final_answer" if exit_status == "submitted" else "log_end"
    if end_reason == "final_answer":
        rounds.append(Round())  # the reply that submitted ends the episode
    meta = {
        "origin": where.name,
        "format": "swe_agent",
        "started_at": "unknown: the trajectory has no timestamps",
        "send_sec": "unknown: the trajectory has no model timings (0)",
    }
    if exit_status:
        meta["exit_status"] = exit_status
    stats = info.get("model_stats")
    if isinstance(stats, dict):
        for key in ("api_calls", "tokens_sent", "tokens_received", "instance_cost"):
            if key in stats:
                meta[key] = str(stats[key])
    model = _model_name(document)
    if model:
        meta["model"] = model
    return [
        Episode(
            id=where.name.removesuffix(".traj"),
            source="swe_agent",
            started_at=_EPOCH,
            rounds=rounds,
            end_reason=end_reason,
            task=_task(document),
            meta=meta,
        )
    ]


def _call(step: Any, index: int, where: Path) -> Call:
    place = f"trajectory step {index}"
    if not isinstance(step, dict):
        raise ImportFormatError(where, place, "a step is not an object")
    raw = step.get("execution_time")
    if raw is None:
        raise ImportFormatError(where, place, "no execution_time: the step carries no timing")
    try:
        duration = float(raw)
    except (TypeError, ValueError):
        raise ImportFormatError(where, place, f"execution_time {raw!r} is not a number") from None
    if not math.isfinite(duration) or duration < 0:
        raise ImportFormatError(where, place, f"execution_time {raw!r} is not valid seconds")
    action = str(step.get("action", ""))
    observation = str(step.get("observation") or "")
    return Call(
        tool=_tool(action),
        args={"command": action},
        duration_sec=duration,
        completed=not _CANCELLED.search(observation[:2000]),
        result_chars=len(observation),
    )


def _tool(action: str) -> str:
    words = action.strip().split(maxsplit=1)
    head = words[0] if words else ""
    if head in _READ:
        return "read_file"
    if head in _SEARCH:
        return "search_code"
    if head in _NAMED:
        return head
    return classify_command(action)


def _model_name(document: dict[str, Any]) -> str:
    config = document.get("replay_config")
    if isinstance(config, str):
        try:
            config = json.loads(config)
        except json.JSONDecodeError:
            return ""
    agent = config.get("agent") if isinstance(config, dict) else None
    model = agent.get("model") if isinstance(agent, dict) else None
    name = model.get("name") if isinstance(model, dict) else None
    return name if isinstance(name, str) else ""


def _task(document: dict[str, Any]) -> str:
    for message in document.get("history") or []:
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            return content if isinstance(content, str) else json.dumps(content)
    return ""
