"""The lines of a ``reviewlab.session/1`` file, as strict pydantic models, and their constants.

A header line; then per line one of: a call (``{"call": Call, "at_sec": s}``), an update of a
call already written (``{"update": index, "fields": {...}}``, only :data:`UPDATABLE_FIELDS`),
the end (``{"end": {"end_reason", "ended_sec"}}``). Seconds are finite and not negative;
unknown keys are errors. The writer and the reader both build on these, so neither restates a
rule.
"""

from __future__ import annotations

import math
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from reviewlab.core._vocab import EndReason, Source
from reviewlab.recording._schema import Call, ZonedTime
from reviewlab.recording.capture._timeline import OFFSETS_KEY

SESSION_SCHEMA: Final = "reviewlab.session/1"
SESSION_SUFFIX: Final = ".session.jsonl"
ROUNDS_NOTE: Final = "inferred from the tool calls' overlap"
"""``meta["rounds"]`` of a session's episode, as :class:`~reviewlab.recording.capture.ToolCallLog`
writes it."""
_RESERVED_META = ("rounds", OFFSETS_KEY)  # written by the reader, so a header may not hold them
_STRICT = ConfigDict(extra="forbid", frozen=True)


def seconds(name: str, value: float) -> float:
    """``value`` as float seconds, or a ``ValueError`` naming ``name`` (NaN, infinite,
    negative, not a number)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number of seconds, got {value!r}")
    if value < 0:
        raise ValueError(f"{name} must not be negative, got {value!r}")
    return float(value)


class Header(BaseModel):
    """Line 1: the session's identity; the episode's fields that no call line carries."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    schema_version: Literal["reviewlab.session/1"] = Field(alias="schema")
    """Always ``reviewlab.session/1``."""
    id: str = Field(min_length=1)
    """The session's id: the episode's id and the file's name before ``.session.jsonl``."""
    started_at: ZonedTime
    """Wall time the session started, ISO-8601 with a time zone; ``at_sec`` counts from it."""
    source: Source = "live"
    """The episode's source (a gateway writes ``live``)."""
    slot: str = ""
    """The episode's slot."""
    task: str = ""
    """The episode's task."""
    meta: dict[str, str] = Field(default_factory=dict)
    """Provenance for the episode's ``meta`` (not ``rounds`` nor the call offsets)."""

    @field_validator("meta")
    @classmethod
    def _not_reserved(cls, value: dict[str, str]) -> dict[str, str]:
        for key in _RESERVED_META:
            if key in value:
                raise ValueError(f"meta key {key!r} is the reader's (rounds are inferred)")
        return value


class CallLine(BaseModel):
    """One finished call and when it was dispatched."""

    model_config = _STRICT

    call: Call
    """The call as the recorded format has it."""
    at_sec: float
    """Seconds from the session start to the call's dispatch."""

    @field_validator("at_sec")
    @classmethod
    def _at(cls, value: float) -> float:
        return seconds("at_sec", value)


class Fields(BaseModel):
    """What an update may set: what a call learns after it was answered."""

    model_config = _STRICT

    late_result_sec: float | None = None
    late_result_chars: int | None = None
    cancel_honoured_sec: float | None = None
    returned_after_sec: float | None = None


UPDATABLE_FIELDS: Final = tuple(Fields.model_fields)
"""The call fields an update line may set."""


class UpdateLine(BaseModel):
    """Fields of the call written ``update``-th (0-based, counting call lines only)."""

    model_config = _STRICT

    update: int = Field(ge=0)
    """The 0-based index of the call, in the order the call lines were written."""
    fields: Fields
    """The fields set; the call is validated again with them."""


class End(BaseModel):
    """How and when the session ended."""

    model_config = _STRICT

    end_reason: EndReason
    """The episode's end reason."""
    ended_sec: float
    """Seconds from the session start to its end."""

    @field_validator("ended_sec")
    @classmethod
    def _ended(cls, value: float) -> float:
        return seconds("ended_sec", value)


class EndLine(BaseModel):
    """The last line of a session closed by its writer."""

    model_config = _STRICT

    end: End
    """The end."""


LINE_KINDS: Final[dict[str, type[BaseModel]]] = {
    "call": CallLine,
    "update": UpdateLine,
    "end": EndLine,
}
