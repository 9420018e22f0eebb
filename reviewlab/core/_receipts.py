"""Receipts and host texts: what every engine says about a call.

A call is *pending* until dispatched, then *running* on a worker, and then
exactly one of *returned* (inside its bound), *raised* (the tool's own
exception, inside its bound), *abandoned* (its bound passed first), *refused*
(never started: the loose-worker cap was full, the arguments were bad or the
tool is not available) or *withheld* (never started: the tool's breaker is open after
repeated abandonments, :mod:`reviewlab.core._breaker`). Each call
gets exactly one :class:`ToolReceipt`.

The rules that decide a call's fate and what it is credited live in
:mod:`reviewlab.core._crediting`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from reviewlab.core._vocab import (
    OUTCOME_ERROR,
    OUTCOME_EXECUTED,
    OUTCOME_REFUSED,
    OUTCOME_WITHHELD,
    SOURCE_GAP_ABANDONED,
)


class Outcome(StrEnum):
    """What became of a call, as the receipt records it."""

    EXECUTED = OUTCOME_EXECUTED
    ERROR = OUTCOME_ERROR
    REFUSED = OUTCOME_REFUSED
    WITHHELD = OUTCOME_WITHHELD


def tool_timeout_text(name: str, bound_sec: float, reset_msg: str = "") -> str:
    """The standard host text for an abandoned call; the bound is printed with ``str(float)``."""
    tail = "" if reset_msg else " about the issue"
    return (
        f"⚠️ TOOL_TIMEOUT ({name}): exceeded {float(bound_sec)}s limit. The tool is still running "
        f"in background but control is returned to you. {reset_msg}Try a different approach or "
        f"inform the user{tail}."
    )


def arg_error_text(message: str) -> str:
    """Host text for arguments that are not a JSON object."""
    return f"⚠️ TOOL_ARG_ERROR: {message}"


def unavailable_text(name: str) -> str:
    """Host text for a tool the read-only inspection episode does not offer."""
    return f"⚠️ tool {name[:200]!r} is not available in this read-only inspection episode"


def exception_text(exc: BaseException) -> str:
    """Host text for a tool's own exception."""
    return f"⚠️ {type(exc).__name__}: {exc}"


def refused_text(name: str, loose: int, cap: int) -> str:
    """Host text for a call refused because too many abandoned workers are still loose."""
    return (
        f"⚠️ TOOL_REFUSED ({name}): {loose} abandoned tool worker(s) are still running (cap {cap}); "
        f"the call was not started. Finish with the evidence you have, or try again later."
    )


def task_detached_text(name: str, bound_sec: float, task_id: str, immediate: str | None) -> str:
    """Host text for a task detached at its bound: the server's immediate-response text when it
    gave one, else ours; the task runs on, its result does not come back in this episode."""
    head = (
        f"⏳ TOOL_TASK ({name}): still running as task {task_id} past its {float(bound_sec)}s limit"
    )
    if immediate:
        return f"{head}. The server says: {immediate}"
    return f"{head}; its result will not come back here. Continue with the evidence you have."


def withheld_text(name: str, consecutive: int, cooldown: str) -> str:
    """Host text for a call the breaker withheld: the tool was abandoned ``consecutive`` times
    and is withheld for ``cooldown`` (e.g. ``2 model round(s)`` or ``30.0s``)."""
    return (
        f"⚠️ TOOL_WITHHELD ({name}): the tool timed out {consecutive} time(s) and is withheld "
        f"for {cooldown}; the call was not started. Continue with the evidence you have, use "
        f"another tool, or name the gap."
    )


def wall_stamp() -> str:
    """The current wall time as ISO-8601 with a time zone (UTC)."""
    return datetime.now(UTC).isoformat()


@dataclass(kw_only=True)
class ToolReceipt:
    """One call's record, built with keywords only.

    ``outcome`` and ``source_gap`` never change once the episode published the receipt; only
    ``delivered`` flips (to True when the model's next send carried the call's result).
    """

    round: int
    tool: str
    outcome: Outcome
    started_at: str
    duration_sec: float
    bound_sec: float | None
    bound_by: str
    result_chars: int = 0
    call_id: str = ""
    source_gap: str | None = None
    delivered: bool = False
    error: str | None = None
    args_summary: dict[str, str] = field(default_factory=dict)
    extent: dict[str, Any] | None = None
    cancel_sent: bool | None = None
    """MCP calls: whether ``notifications/cancelled`` was sent (``None``: not an MCP call)."""
    cancel_honoured_sec: float | None = None
    """MCP calls: seconds from the cancellation to the server's answer; ``None`` when none came."""
    cancel_kind: str | None = None
    """MCP calls: how the cancel went out (``notification`` or ``stream_closed``)."""
    late_result_sec: float | None = None
    """MCP calls: seconds after the abandonment at which a valid result came anyway (a valid
    result dropped: credited to nothing); ``None`` when none came."""
    late_result_chars: int | None = None
    """MCP calls: the size of that late result, in characters."""
    reissued: bool | None = None
    """MCP calls: the call was re-issued once under a new id after its stream dropped."""
    ended_by: str | None = None
    """What ended the call: ``returned``, or the clock that fired first
    (:func:`~reviewlab.core._clocks.ended_by`); ``None`` for a call that never ran."""
    clocks: dict[str, float] | None = None
    """Every clock that applied, by name, in seconds after dispatch
    (:func:`~reviewlab.core._clocks.call_clocks`)."""
    task_id: str | None = None
    """MCP task-augmented calls: the server's task id."""
    task_action: str | None = None
    """MCP task-augmented calls: ``cancel`` or ``detach`` at the bound (the policy's)."""
    task_states: list[str] | None = None
    """MCP task-augmented calls: the task's states as seen, in order
    (:data:`~reviewlab.core._vocab.TASK_STATES`)."""
    task_cancel_ack: str | None = None
    """MCP task-augmented calls: what ``tasks/cancel`` answered (a status, or ``refused: ...``)."""

    @property
    def abandoned(self) -> bool:
        """True when the call outlived its bound (``source_gap`` is ``native_tool_abandoned``)."""
        return self.source_gap == SOURCE_GAP_ABANDONED

    def to_dict(self) -> dict[str, Any]:
        """The usage-dict form: optional fields appear only when
        set; extent fields are flattened."""
        data = asdict(self)
        data["outcome"] = str(self.outcome)
        extent = data.pop("extent")
        summary = data.pop("args_summary")
        for key in ("source_gap", "error", "cancel_sent"):
            if data[key] is None:
                del data[key]
        if self.cancel_sent is None:
            del data["cancel_honoured_sec"]
        for key in (
            "cancel_kind",
            "late_result_sec",
            "late_result_chars",
            "ended_by",
            "clocks",
            "task_id",
            "task_action",
            "task_states",
            "task_cancel_ack",
        ):
            if data[key] is None:
                del data[key]
        if not self.reissued:
            del data["reissued"]
        data.update(summary)
        if extent:
            data.update(extent)
        return data
