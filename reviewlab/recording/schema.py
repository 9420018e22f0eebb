"""The recorded-episode schema ``reviewlab.episode/1``: a versioned pydantic contract.

One :class:`Episode` per JSON line. An episode is a sequence of :class:`Round`
objects; a round is one model send (``send_sec`` long) followed by the tool
calls that send asked for, run in order. The last round of an episode that
ended with a final answer has no calls.

A :class:`Call` with ``completed=False`` is right-censored: it had not returned
``duration_sec`` after it started (a wedge, a kill, or the end of the log).
Unknown fields and values outside the closed vocabularies are errors.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from reviewlab.core.vocab import (
    CALL_STATUSES,
    END_REASONS,
    SOURCES,
    CallStatusName,
    EndReason,
    Source,
)

__all__ = [
    "CALL_STATUSES",
    "END_REASONS",
    "SCHEMA_VERSION",
    "SOURCES",
    "Call",
    "EndReason",
    "Episode",
    "Extent",
    "Round",
]

SCHEMA_VERSION: Final = "reviewlab.episode/1"

_STRICT = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


def _finite_non_negative(name: str, value: float | None) -> float | None:
    if value is None:
        return None
    if math.isnan(value) or math.isinf(value):
        raise ValueError(f"{name} must be a finite number of seconds, got {value!r}")
    if value < 0:
        raise ValueError(f"{name} must not be negative, got {value!r}")
    return value


class Extent(BaseModel):
    """The lines a ``read_file`` call asked for (1-based, inclusive)."""

    model_config = _STRICT

    path: str = Field(min_length=1)
    """Workspace-relative path of the file read."""
    start_line: int = Field(ge=1)
    """First line asked for."""
    end_line: int = Field(ge=1)
    """Last line asked for (inclusive); at least ``start_line``."""

    @model_validator(mode="after")
    def _ordered(self) -> Extent:
        if self.end_line < self.start_line:
            raise ValueError(f"end_line {self.end_line} is before start_line {self.start_line}")
        return self

    @property
    def lines(self) -> int:
        """How many lines the extent covers."""
        return self.end_line - self.start_line + 1


class Call(BaseModel):
    """One tool call as it really ran."""

    model_config = _STRICT

    tool: str = Field(min_length=1, max_length=200)
    """Tool name as the model called it (``read_file``, ``list_files``, ``search_code``, ``query_code``…)."""
    args: dict[str, Any] = Field(default_factory=dict)
    """The call's arguments, as decoded from the model's JSON."""
    duration_sec: float
    """Seconds from dispatch to return; for a censored call, how long it was seen running."""
    completed: bool = True
    """False: the call had not returned after ``duration_sec`` (right-censored)."""
    status: CallStatusName = "ok"
    """``error`` when the tool raised its own exception (inside its run, not a timeout)."""
    result_chars: int = Field(default=0, ge=0)
    """Characters of the result sent back to the model (0 when unknown or none)."""
    extent: Extent | None = None
    """For reads, the line extent the call asked for."""
    returned_after_sec: float | None = None
    """For a call the recording abandoned: seconds after dispatch when its loose worker came back, if known."""

    @field_validator("duration_sec", "returned_after_sec")
    @classmethod
    def _seconds(cls, value: float | None, info: Any) -> float | None:
        return _finite_non_negative(info.field_name, value)

    @property
    def requested_lines(self) -> int:
        """Lines this call asked to read (0 for calls without an extent)."""
        return self.extent.lines if self.extent is not None else 0


class Round(BaseModel):
    """One model send and the tool calls it asked for."""

    model_config = _STRICT

    send_sec: float = 0.0
    """Seconds the model send took (request to response)."""
    calls: list[Call] = Field(default_factory=list)
    """Tool calls of this round, run in order after the send returned."""

    @field_validator("send_sec")
    @classmethod
    def _send(cls, value: float, info: Any) -> float:
        result = _finite_non_negative(info.field_name, value)
        assert result is not None
        return result


class Episode(BaseModel):
    """One review episode: a reviewer slot answering one review request."""

    model_config = _STRICT

    schema_version: Literal["reviewlab.episode/1"] = Field(default=SCHEMA_VERSION, alias="schema")
    """Always ``reviewlab.episode/1``; a file with another version is refused."""
    id: str = Field(min_length=1)
    """Unique id of the episode within its corpus."""
    source: Source
    """Where the episode comes from."""
    slot: str = ""
    """The reviewer slot that served it (``""`` when unknown)."""
    started_at: datetime
    """Wall time the review request arrived, ISO-8601 with a time zone."""
    deadline_sec: float | None = None
    """The inherited deadline, in seconds from ``started_at``; ``None`` when the reviewer inherited none."""
    rounds: list[Round] = Field(default_factory=list)
    """Model rounds in order."""
    end_reason: EndReason = "final_answer"
    """How the recorded episode ended."""
    task: str = ""
    """The review task text, when known."""
    meta: dict[str, str] = Field(default_factory=dict)
    """Free-form provenance (original file, model name…)."""

    @field_validator("started_at")
    @classmethod
    def _aware(cls, value: datetime) -> datetime:
        if value.tzinfo is None:
            raise ValueError("started_at must carry a time zone")
        return value

    @field_validator("deadline_sec")
    @classmethod
    def _deadline(cls, value: float | None, info: Any) -> float | None:
        return _finite_non_negative(info.field_name, value)

    @property
    def calls(self) -> list[Call]:
        """Every call of the episode, in dispatch order."""
        return [call for rnd in self.rounds for call in rnd.calls]

    def to_json_line(self) -> str:
        """The episode as one compact JSON line (no trailing newline)."""
        return self.model_dump_json(by_alias=True, exclude_defaults=False)
