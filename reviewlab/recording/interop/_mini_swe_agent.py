"""mini-swe-agent trajectories (``*.traj.json``) → episodes (``source="mini_swe_agent"``).

Formats ``mini-swe-agent-1.1`` (releases 2.x: the reply stamped in ``extra.timestamp``, its
observations ``role == "tool"`` or ``user`` messages with ``extra.returncode``, stamped once the
step's actions ran) and ``mini-swe-agent-1`` (1.x: every message stamped). Each reply opens a
round; a call lasts from the reply's stamp to its observation's, several actions of one step
sharing their stamped total. A call the environment's timeout killed is right-censored at the
limit (``N`` of "timed out after N seconds", else ``info.config.environment.timeout``). The
mapping in full: docs/recording-format.md, "mini-swe-agent trajectories".
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

_FORMATS = ("mini-swe-agent-1", "mini-swe-agent-1.1")
_TIMED_OUT = re.compile(r"timed out after (\d+(?:\.\d+)?) seconds")
_KILLED_V1 = "timed out and has been killed"


def is_mini_swe_agent_trajectory(document: Any) -> bool:
    """True for a decoded JSON document written by mini-swe-agent's ``save``."""
    return (
        isinstance(document, dict)
        and str(document.get("trajectory_format", "")).startswith("mini-swe-agent")
        and isinstance(document.get("messages"), list)
    )


def import_mini_swe_agent(path: str | os.PathLike[str]) -> list[Episode]:
    """The run of a mini-swe-agent ``.traj.json`` file as one episode."""
    where = Path(path)
    try:
        document = json.loads(where.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise ImportFormatError(where, "file", "binary data, not a .traj.json file") from None
    except json.JSONDecodeError as exc:
        raise ImportFormatError(where, f"line {exc.lineno}", f"invalid JSON: {exc.msg}") from None
    if not is_mini_swe_agent_trajectory(document):
        raise ImportFormatError(where, "file", "not a mini-swe-agent trajectory")
    version = str(document["trajectory_format"])
    if version not in _FORMATS:
        raise ImportFormatError(
            where,
            "trajectory_format",
            f"{version!r} is not a format reviewlab reads (known: {', '.join(_FORMATS)})",
        )
    info = _object(document.get("info"))
    limit = _environment_timeout(info)
    messages = document["messages"]
    steps = _steps_v1(messages, where) if version == _FORMATS[0] else _steps(messages, where)
    if not steps:
        raise ImportFormatError(where, "messages", "no stamped model reply: nothing to time")
    rounds: list[Round] = []
    split = False
    previous: float | None = None
    for step in steps:
        asked = step.asked_at if step.asked_at is not None else previous
        send = 0.0 if asked is None else max(0.0, step.replied_at - asked)
        calls = []
        if step.observations:
            done_at = max(stamp for _, stamp in step.observations)
            durations = _durations(step, done_at, limit)
            split = split or len(step.observations) > 1
            calls = [
                _call(action, observation, duration)
                for (action, (observation, _)), duration in zip(
                    zip(step.actions, step.observations, strict=True), durations, strict=True
                )
            ]
            previous = done_at
        else:
            previous = step.replied_at
        rounds.append(Round(send_sec=send, calls=calls))
    exit_status = str(info.get("exit_status", ""))
    end_reason: EndReason = "final_answer" if exit_status == "Submitted" else "log_end"
    if end_reason == "final_answer" and rounds[-1].calls:
        rounds.append(Round())
    meta = {"origin": where.name, "format": "mini_swe_agent", "trajectory_format": version}
    if steps[0].asked_at is None:
        meta["send_sec_first"] = "unknown: the task messages carry no time stamp (0)"
    if exit_status:
        meta["exit_status"] = exit_status
    if limit is not None:
        meta["environment_timeout_sec"] = repr(limit)
    if split:
        meta["durations"] = "a step's actions are stamped together: its total is shared"
    if "mini_version" in info:
        meta["mini_version"] = str(info["mini_version"])
    return [
        Episode(
            id=where.name.removesuffix(".json").removesuffix(".traj"),
            source="mini_swe_agent",
            started_at=datetime.fromtimestamp(steps[0].replied_at - rounds[0].send_sec, tz=UTC),
            rounds=rounds,
            end_reason=end_reason,
            task=_task(messages),
            meta=meta,
        )
    ]


class _Step:
    """One model reply: when it arrived, the actions it asked for, and their observations."""

    def __init__(
        self, index: int, replied_at: float, actions: list[str], asked_at: float | None = None
    ) -> None:
        self.index = index
        self.replied_at = replied_at
        self.asked_at = asked_at
        self.actions = actions
        self.observations: list[tuple[dict[str, Any], float]] = []


def _steps(messages: list[Any], where: Path) -> list[_Step]:
    steps: list[_Step] = []
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            raise ImportFormatError(where, f"messages[{index}]", "a message is not an object")
        extra = _object(message.get("extra"))
        role = message.get("role")
        if role == "assistant":
            actions = [str(a.get("command", "")) for a in extra.get("actions") or []]
            steps.append(_Step(index, _stamp(extra.get("timestamp"), where, index), actions))
        elif (role == "tool" or (role == "user" and "returncode" in extra)) and steps:
            steps[-1].observations.append((extra, _stamp(extra.get("timestamp"), where, index)))
    for step in steps:
        if step.observations and len(step.observations) != len(step.actions):
            raise ImportFormatError(
                where,
                f"messages[{step.index}]",
                f"{len(step.actions)} action(s) but {len(step.observations)} observation(s)",
            )
    return steps


def _steps_v1(messages: list[Any], where: Path) -> list[_Step]:
    steps: list[_Step] = []
    last: float | None = None
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            raise ImportFormatError(where, f"messages[{index}]", "a message is not an object")
        role, content = message.get("role"), str(message.get("content") or "")
        if role == "assistant":
            action = message.get("action") or ""
            replied = _stamp(message.get("timestamp"), where, index)
            steps.append(_Step(index, replied, [action], asked_at=last))
        elif role == "user" and steps and not steps[-1].observations:
            killed = _KILLED_V1 in content
            if "<returncode>" in content or killed:
                code = re.search(r"<returncode>(-?\d+)</returncode>", content)
                extra = {
                    "returncode": int(code.group(1)) if code else -1,
                    "raw_output": content,
                    "exception_type": "TimeoutExpired" if killed else "",
                }
                stamp = _stamp(message.get("timestamp"), where, index)
                steps[-1].observations.append((extra, stamp))
        if message.get("timestamp") is not None:
            last = _stamp(message.get("timestamp"), where, index)
    return steps


def _durations(step: _Step, done_at: float, limit: float | None) -> list[float]:
    """Each call's seconds: a killed call its limit, the others an even share of the rest of
    the step's stamped total (the whole total for a step of one call)."""
    total = max(0.0, done_at - step.replied_at)
    limits = [
        _killed_limit(extra, limit) if _is_killed(extra) else None for extra, _ in step.observations
    ]
    if len(limits) == 1:
        return [limits[0] if limits[0] is not None else total]
    rest = max(0.0, total - sum(bound for bound in limits if bound is not None))
    share = rest / max(1, limits.count(None))
    return [bound if bound is not None else share for bound in limits]


def _is_killed(extra: dict[str, Any]) -> bool:
    text = f"{extra.get('exception_info') or ''} {extra.get('exception') or ''}"
    return extra.get("exception_type") == "TimeoutExpired" or bool(_TIMED_OUT.search(text))


def _killed_limit(extra: dict[str, Any], limit: float | None) -> float | None:
    text = f"{extra.get('exception_info') or ''} {extra.get('exception') or ''}"
    said = _TIMED_OUT.search(text)
    return float(said.group(1)) if said else limit


def _call(action: str, extra: dict[str, Any], duration: float) -> Call:
    killed = _is_killed(extra)
    code = extra.get("returncode")
    output = extra.get("raw_output")
    return Call(
        tool=classify_command(action),
        args={"command": action},
        duration_sec=duration,
        # Killed at the environment's limit: right-censored there, not an error of the tool.
        completed=not killed,
        status="error" if not killed and isinstance(code, int) and code != 0 else "ok",
        result_chars=len(output) if isinstance(output, str) else 0,
    )


def _stamp(value: Any, where: Path, index: int) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ImportFormatError(
            where, f"messages[{index}]", f"timestamp must be Unix seconds, got {value!r}"
        )
    return float(value)


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _environment_timeout(info: dict[str, Any]) -> float | None:
    environment = _object(_object(info.get("config")).get("environment"))
    value = environment.get("timeout")
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return float(value)
    return None


def _task(messages: list[Any]) -> str:
    for message in messages:
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            return content if isinstance(content, str) else json.dumps(content)
    return ""
