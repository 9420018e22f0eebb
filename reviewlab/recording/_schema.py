"""The recorded-episode schema ``reviewlab.episode/1`` and ``/2``: a versioned pydantic contract.

One :class:`Episode` per JSON line: a sequence of :class:`Round` objects, each one model send
(``send_sec`` long) followed by the tool calls it asked for, run in order; an episode that
ended with a final answer has a last round without calls. A :class:`Call` with
``completed=False`` is right-censored: it had not returned ``duration_sec`` after it started.
Version 2 adds per-call transport, progress, cancellation, late results, the clock that
ended the call and, for a gateway's calls, the upstream server and an argument digest
(:data:`V2_CALL_FIELDS`, :func:`args_digest`), and per-round token usage (:data:`V2_ROUND_FIELDS`).

Invariants: unknown fields and values outside the closed vocabularies are errors; version 1
files load unchanged, and a version 1 episode may not carry the version 2 fields and is written
without them, byte for byte as before. Every field: docs/recording-format.md.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from datetime import datetime
from typing import Annotated, Any, Final, Literal, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from reviewlab.core._vocab import (
    CallStatusName,
    ClockName,
    EndReason,
    Source,
    TaskState,
    Transport,
)

SchemaVersion = Literal["reviewlab.episode/1", "reviewlab.episode/2"]
"""The versions this module reads; writers of version 1 keep writing version 1."""
SCHEMA_VERSIONS: Final = get_args(SchemaVersion)
SCHEMA_VERSION: Final = "reviewlab.episode/1"
SCHEMA_VERSION_2: Final = "reviewlab.episode/2"
V2_CALL_FIELDS: Final = (
    "transport",
    "progress_sec",
    "cancel_sent",
    "cancel_honoured_sec",
    "late_result_sec",
    "late_result_chars",
    "ended_by",
    "task_states",
    "server",
    "args_sha256",
    "args_chars",
)
"""Call fields that only a version 2 episode carries."""
V2_ROUND_FIELDS: Final = ("input_tokens", "output_tokens")
"""Round fields (token usage) that only a version 2 episode carries."""
V2_EPISODE_FIELDS: Final = ("model",)
"""Episode fields that only a version 2 episode carries."""
# An episode without usage is dumped without the usage fields: its bytes stay what they were.
_USAGE_EXCLUDE: Final[dict[str, Any]] = {
    "model": True,
    "rounds": {"__all__": dict.fromkeys(V2_ROUND_FIELDS, True)},
}
# A version 1 episode is dumped without the version 2 fields: the v1 bytes stay what they were.
_V1_EXCLUDE: Final[dict[str, Any]] = {
    "model": True,
    "rounds": {
        "__all__": {
            "calls": {"__all__": dict.fromkeys(V2_CALL_FIELDS, True)},
            **dict.fromkeys(V2_ROUND_FIELDS, True),
        }
    },
}

_STRICT = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


def args_digest(args: Mapping[str, Any]) -> tuple[str, int]:
    """``(sha256 hex, characters)`` of ``args`` as canonical JSON (sorted keys, no spaces,
    UTF-8 text kept as is): what a call records in ``args_sha256`` and ``args_chars`` when
    its arguments are not kept. Equal arguments give equal digests whatever their key order."""
    text = json.dumps(args, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest(), len(text)


def _finite_non_negative(name: str, value: float | None) -> float | None:
    if value is None:
        return None
    if math.isnan(value) or math.isinf(value):
        raise ValueError(f"{name} must be a finite number of seconds, got {value!r}")
    if value < 0:
        raise ValueError(f"{name} must not be negative, got {value!r}")
    return value


def _not_a_number(value: Any, info: ValidationInfo) -> Any:
    # pydantic would read a number as Unix seconds (5 -> 1970-01-01T00:00:05Z): a recording
    # always writes ISO text, so a number here is a malformed file.
    if isinstance(value, int | float):
        raise ValueError(
            f"{info.field_name} must be an ISO date-time with a time zone, not the number {value!r}"
        )
    return value


def _zoned(value: datetime, info: ValidationInfo) -> datetime:
    if value.tzinfo is None:
        raise ValueError(f"{info.field_name} must carry a time zone")
    return value


ZonedTime = Annotated[datetime, BeforeValidator(_not_a_number), AfterValidator(_zoned)]
"""A wall time read from ISO text with a time zone (a bare number or a naive time refused)."""


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
    """Tool name as the model called it (``read_file``, ``list_files``,
    ``search_code``, ``query_code``…)."""
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
    """For a call the recording abandoned: seconds after dispatch when its
    loose worker came back, if known."""
    transport: Transport | None = None
    """(v2) How the call reached its tool: ``thread``, ``async`` or ``mcp``."""
    progress_sec: list[float] | None = None
    """(v2) Seconds after dispatch at which the tool reported progress, ascending."""
    cancel_sent: bool | None = None
    """(v2, MCP) Whether ``notifications/cancelled`` was sent when the call was abandoned."""
    cancel_honoured_sec: float | None = None
    """(v2, MCP) Seconds from the cancellation to the server's answer; ``None`` when none came."""
    late_result_sec: float | None = None
    """(v2, MCP) Seconds after the abandonment at which a valid result came anyway: a valid
    result dropped, credited to nothing; ``None`` when none came."""
    late_result_chars: int | None = Field(default=None, ge=0)
    """(v2, MCP) The size of that late result, in characters."""
    ended_by: ClockName | None = None
    """(v2) What ended the call as it ran: ``returned`` (before any clock) or the clock that
    fired first (``tool_timeout``, ``deadline``, ``idle``...); ``None``: not recorded."""
    task_states: list[TaskState] | None = None
    """(v2, MCP Tasks) The states of the call's task as seen, in order (``working``,
    ``input_required``, ``completed``, ``failed``, ``cancelled``, ``running_after_cancel``);
    ``None``: not a task."""
    server: str | None = Field(default=None, min_length=1, max_length=200)
    """(v2, gateway) The upstream MCP server that served the call, as the gateway's
    ``SERVERS.json`` names it; ``None``: not a gateway's call."""
    args_sha256: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")
    """(v2, gateway) Hex SHA-256 of the call's arguments as canonical JSON
    (:func:`args_digest`), so calls with equal arguments can be matched when ``args`` is
    not kept (``{}``); ``None``: not recorded."""
    args_chars: int | None = Field(default=None, ge=0, validate_default=True)
    """(v2, gateway) Characters of that canonical JSON; set exactly when ``args_sha256`` is."""

    @field_validator("duration_sec", "returned_after_sec", "cancel_honoured_sec", "late_result_sec")
    @classmethod
    def _seconds(cls, value: float | None, info: Any) -> float | None:
        return _finite_non_negative(info.field_name, value)

    @field_validator("progress_sec")
    @classmethod
    def _progress(cls, value: list[float] | None) -> list[float] | None:
        if value is None:
            return None
        for index, moment in enumerate(value):
            _finite_non_negative(f"progress_sec[{index}]", moment)
            if index and moment < value[index - 1]:
                raise ValueError(f"progress_sec[{index}] = {moment!r} is before the one before it")
        return value

    @field_validator("args_chars")
    @classmethod
    def _digest_whole(cls, value: int | None, info: Any) -> int | None:
        # Runs on the default too: a hash without its size (or a size without a hash) is
        # half a record. A bad args_sha256 is reported on its own and not seen here.
        if "args_sha256" not in info.data:
            return value
        if value is None and info.data["args_sha256"] is not None:
            raise ValueError("args_sha256 is set without args_chars: record both or neither")
        if value is not None and info.data["args_sha256"] is None:
            raise ValueError("args_chars is set without args_sha256: record both or neither")
        return value

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
    input_tokens: int | None = Field(default=None, ge=0)
    """(v2) Tokens the send consumed (the whole prompt, cached parts included); ``None``:
    unknown (the source did not report usage)."""
    output_tokens: int | None = Field(default=None, ge=0)
    """(v2) Tokens the model generated in its reply; ``None``: unknown."""

    @property
    def usage_known(self) -> bool:
        """Whether both token counts of this round are known (so it can be priced)."""
        return self.input_tokens is not None and self.output_tokens is not None

    @field_validator("send_sec")
    @classmethod
    def _send(cls, value: float, info: Any) -> float:
        result = _finite_non_negative(info.field_name, value)
        assert result is not None
        return result


class Episode(BaseModel):
    """One review episode: a reviewer slot answering one review request."""

    model_config = _STRICT

    schema_version: SchemaVersion = Field(default=SCHEMA_VERSION, alias="schema")
    """``reviewlab.episode/1`` or ``reviewlab.episode/2``; a file
    with another version is refused."""
    id: str = Field(min_length=1)
    """Unique id of the episode within its corpus."""
    source: Source
    """Where the episode comes from."""
    slot: str = ""
    """The reviewer slot that served it (``""`` when unknown)."""
    started_at: ZonedTime
    """Wall time the review request arrived, ISO-8601 with a time zone."""
    deadline_sec: float | None = None
    """The inherited deadline, in seconds from ``started_at``; ``None``
    when the reviewer inherited none."""
    rounds: list[Round] = Field(default_factory=list)
    """Model rounds in order."""
    end_reason: EndReason = "final_answer"
    """How the recorded episode ended."""
    task: str = ""
    """The review task text, when known."""
    meta: dict[str, str] = Field(default_factory=dict)
    """Free-form provenance (original file, model name…)."""
    model: str | None = Field(default=None, min_length=1, max_length=200)
    """(v2) The model that served the episode's rounds, as the price table names it
    (``gpt-4o-mini``, ``claude-3-5-sonnet-20241022``…); ``None``: unknown."""

    @field_validator("deadline_sec")
    @classmethod
    def _deadline(cls, value: float | None, info: Any) -> float | None:
        return _finite_non_negative(info.field_name, value)

    @field_validator("rounds")
    @classmethod
    def _fields_of_version(cls, rounds: list[Round], info: Any) -> list[Round]:
        if info.data.get("schema_version", SCHEMA_VERSION) != SCHEMA_VERSION:
            return rounds
        for number, rnd in enumerate(rounds):
            for index, call in enumerate(rnd.calls):
                for name in V2_CALL_FIELDS:
                    if getattr(call, name) is not None:
                        raise ValueError(
                            f"rounds.{number}.calls.{index}.{name} needs schema "
                            f"{SCHEMA_VERSION_2!r} (this episode is {SCHEMA_VERSION!r})"
                        )
            for name in V2_ROUND_FIELDS:
                if getattr(rnd, name) is not None:
                    raise ValueError(
                        f"rounds.{number}.{name} needs schema "
                        f"{SCHEMA_VERSION_2!r} (this episode is {SCHEMA_VERSION!r})"
                    )
        return rounds

    @field_validator("model")
    @classmethod
    def _model_of_version(cls, model: str | None, info: Any) -> str | None:
        if model is not None and info.data.get("schema_version", SCHEMA_VERSION) == SCHEMA_VERSION:
            raise ValueError(
                f"model needs schema {SCHEMA_VERSION_2!r} (this episode is {SCHEMA_VERSION!r})"
            )
        return model

    @property
    def has_usage(self) -> bool:
        """Whether the episode carries any usage field (a model name or a round's tokens)."""
        return self.model is not None or any(
            rnd.input_tokens is not None or rnd.output_tokens is not None for rnd in self.rounds
        )

    @property
    def calls(self) -> list[Call]:
        """Every call of the episode, in dispatch order."""
        return [call for rnd in self.rounds for call in rnd.calls]

    def to_json_line(self) -> str:
        """The episode as one compact JSON line (no trailing newline)."""
        if self.schema_version == SCHEMA_VERSION:
            return self.model_dump_json(by_alias=True, exclude_defaults=False, exclude=_V1_EXCLUDE)
        if not self.has_usage:
            return self.model_dump_json(
                by_alias=True, exclude_defaults=False, exclude=_USAGE_EXCLUDE
            )
        return self.model_dump_json(by_alias=True, exclude_defaults=False)
