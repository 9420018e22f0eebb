"""Per-tool timeouts: how long THIS tool, with THESE arguments, on THIS registry may run.

:class:`TimeoutPolicy` is the ``timeouts`` part of a :class:`~reviewlab.core._policy.Policy`
(the table with its floor, argument overrides and deadline clamp; docs/semantics.md,
"The bound"). Any object with ``timeout_for(tools, tool_name, tool_args=None)`` may take its
place (:class:`~reviewlab.core._rules.SupportsTimeoutFor`); one that also says how its
timeouts vary (:class:`~reviewlab.core._rules.ClockAwarePolicy`) is resolved once per distinct
argument key by the replays.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from reviewlab.core._deadline import deadline_remaining
from reviewlab.core._narrowing import CLAMP_JITTER_SEC, PolicyError
from reviewlab.core._narrowing import check_seconds as _seconds

# Facts from the reference system (reference/ouroboros-semantics.md §1).
_OUROBOROS_GLOBAL_SEC = 600.0
# What a key of ``tools_sec`` must look like: an OpenAI function name, dots allowed (MCP).
_TOOL_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")
_OUROBOROS_UNKNOWN_SEC = 360.0
_OUROBOROS_TABLE = {"query_code": 120.0}
_OUROBOROS_OVERRIDE_TOOLS = ("run_command", "run_script")
_OUROBOROS_OVERRIDE_CEILING_SEC = 1800.0
_OUROBOROS_SETTLEMENT_MARGIN_SEC = 30.0
_OUROBOROS_CLAMP_TOOLS = (
    "web_search",
    "browse_page",
    "browser_action",
    "youtube_transcript",
    "wait_task",
    "wait_tasks",
    "plan_task",
    "task_acceptance_review",
    "analyze_screenshot",
    "vlm_query",
    "await_messages",
)
_OUROBOROS_CLAMP_RESERVE_SEC = 120.0

_UNSET: Any = object()


_PRESETS: dict[type, Any] = {}
""":meth:`TimeoutPolicy.ouroboros` by class, made once (engines ask for it on every replay)."""


def _tool_names(field_name: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, list | tuple):
        raise PolicyError(field_name, f"expected a list of tool names, got {value!r}")
    for index, name in enumerate(value):
        if not isinstance(name, str) or not name:
            raise PolicyError(f"{field_name}[{index}]", f"expected a tool name, got {name!r}")
    return tuple(value)


def check_tool_name(field_name: str, tool: Any) -> str:
    """``tool`` if it looks like a tool name, else a :class:`PolicyError` naming ``field_name``."""
    if not isinstance(tool, str) or not _TOOL_NAME.fullmatch(tool):
        # A policy may name tools a registry lacks (it is shared across registries),
        # but each name must at least look like a tool name, so a typo'd table shows.
        raise PolicyError(
            field_name, f"{tool!r} is not a tool name (1-64 letters, digits, '_', '-' or '.')"
        )
    return tool


def _override_arg(tool_args: Mapping[str, Any] | None) -> Any:
    """The raw argument override of a call: ``timeout_sec``, alias ``timeout`` (``None`` when
    absent)."""
    args = tool_args if isinstance(tool_args, Mapping) else {}
    return args.get("timeout_sec", args.get("timeout"))


@dataclass(frozen=True)
class TimeoutPolicy:
    """Per-tool timeouts, resolved per dispatched call.

    Resolution of ``timeout_for(tools, name, args)``:

    1. ``p`` = ``tools_sec[name]``, else the timeout the registry declares for
       ``name`` (``tools.declared_timeouts[name]`` when the registry has one),
       else ``default_sec``.
    2. ``base = max(floor_sec, p)`` when a floor is set, else ``p``.
    3. For tools in ``override_tools`` whose arguments carry a positive int
       ``timeout_sec`` (alias ``timeout``): ``min(max(base, override),
       override_ceiling_sec) + settlement_margin_sec``; the clamp is skipped.
    4. For tools in ``clamp_tools`` with time remaining ``rem > 0``: ``w = rem
       - clamp_reserve_sec``; ``base`` if ``w >= base`` else the whole seconds
       of ``max(1, min(base, w))``, where a window less than
       :data:`CLAMP_JITTER_SEC` short of a whole second counts as that second
       (``floor(x + CLAMP_JITTER_SEC)``). The reference truncates with
       ``int()``; on a real clock the time left is always a few microseconds
       to milliseconds short of the round figure a plan or a simulation sees,
       and plain truncation then costs a whole second of bound (a deadline of
       8 s with a 2 s reserve gave 5 s in the twin and 4 s for real). With the
       jitter allowance every engine gets 5 s.
    5. Otherwise ``base``.

    Hedges, the breaker, idle timeouts and the narrowing are the other parts of a
    :class:`~reviewlab.core._policy.Policy`; this class is only its ``timeouts``.
    """

    default_sec: float = _OUROBOROS_UNKNOWN_SEC
    tools_sec: Mapping[str, float] = field(default_factory=dict)
    floor_sec: float | None = None
    override_tools: tuple[str, ...] = ()
    override_ceiling_sec: float = _OUROBOROS_OVERRIDE_CEILING_SEC
    settlement_margin_sec: float = _OUROBOROS_SETTLEMENT_MARGIN_SEC
    clamp_tools: tuple[str, ...] = ()
    clamp_reserve_sec: float = _OUROBOROS_CLAMP_RESERVE_SEC
    name: str = "custom"

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "default_sec", _seconds("default_sec", self.default_sec))
        if not isinstance(self.tools_sec, Mapping):
            raise PolicyError(
                "tools_sec", f"expected a table of tool name -> seconds, got {self.tools_sec!r}"
            )
        table = {}
        for tool, seconds in self.tools_sec.items():
            table[check_tool_name("tools_sec", tool)] = _seconds(f"tools_sec.{tool}", seconds)
        set_(self, "tools_sec", MappingProxyType(dict(sorted(table.items()))))
        if self.floor_sec is not None:
            set_(self, "floor_sec", _seconds("floor_sec", self.floor_sec))
        set_(self, "override_tools", _tool_names("override_tools", self.override_tools))
        set_(
            self,
            "override_ceiling_sec",
            _seconds("override_ceiling_sec", self.override_ceiling_sec),
        )
        set_(
            self,
            "settlement_margin_sec",
            _seconds("settlement_margin_sec", self.settlement_margin_sec, allow_zero=True),
        )
        set_(self, "clamp_tools", _tool_names("clamp_tools", self.clamp_tools))
        set_(
            self,
            "clamp_reserve_sec",
            _seconds("clamp_reserve_sec", self.clamp_reserve_sec, allow_zero=True),
        )
        if not isinstance(self.name, str):
            raise PolicyError("name", f"expected a string, got {self.name!r}")

    def __hash__(self) -> int:
        return hash(json.dumps(self.to_dict(), sort_keys=True))

    # -- presets ---------------------------------------------------------
    @classmethod
    def ouroboros(cls) -> TimeoutPolicy:
        """The reference system's resolution: 600 s floor, ``query_code`` 120 s, unknown 360 s,
        ``run_command``/``run_script`` overrides capped at 1800 s + 30 s, the clamp list with a 120
        s reserve. (A policy is immutable: the same object is handed out again.)"""
        made = _PRESETS.get(cls)
        if made is not None:
            return made
        made = _PRESETS[cls] = cls(
            default_sec=_OUROBOROS_UNKNOWN_SEC,
            tools_sec=dict(_OUROBOROS_TABLE),
            floor_sec=_OUROBOROS_GLOBAL_SEC,
            override_tools=_OUROBOROS_OVERRIDE_TOOLS,
            override_ceiling_sec=_OUROBOROS_OVERRIDE_CEILING_SEC,
            settlement_margin_sec=_OUROBOROS_SETTLEMENT_MARGIN_SEC,
            clamp_tools=_OUROBOROS_CLAMP_TOOLS,
            clamp_reserve_sec=_OUROBOROS_CLAMP_RESERVE_SEC,
            name="ouroboros",
        )
        return made

    @classmethod
    def uniform(cls, seconds: float) -> TimeoutPolicy:
        """Every tool gets ``seconds``, with no floor, override or clamp."""
        value = _seconds("seconds", seconds)
        return cls(default_sec=value, name=f"uniform-{value:g}s")

    def with_tools(self, name: str | None = None, **tools_sec: float) -> TimeoutPolicy:
        """A copy with some per-tool timeouts replaced."""
        table = {**self.tools_sec, **tools_sec}
        return TimeoutPolicy(**{**self._fields(), "tools_sec": table, "name": name or self.name})

    def with_tool_timeouts(self, name: str | None = None, **tools_sec: float) -> TimeoutPolicy:
        """A copy in which the given tools get exactly these timeouts, not raised by the floor.

        The floor is folded into ``default_sec`` and the existing table (each
        becomes its own :meth:`base_for`), so every tool not named keeps the
        timeout it had on a registry without declared timeouts.
        """
        fields = self._fields()
        fields["tools_sec"] = {
            **{tool: self.base_for(None, tool) for tool in self.tools_sec},
            **tools_sec,
        }
        fields["default_sec"] = self.default_base_sec()
        fields["floor_sec"] = None
        fields["name"] = name or self.name
        return TimeoutPolicy(**fields)

    def scaled(self, factor: float, name: str | None = None) -> TimeoutPolicy:
        """A copy with the default, the floor and every per-tool timeout multiplied by
        ``factor``."""
        factor = _seconds("factor", factor)
        fields = self._fields()
        fields["default_sec"] = self.default_sec * factor
        fields["tools_sec"] = {tool: sec * factor for tool, sec in self.tools_sec.items()}
        if self.floor_sec is not None:
            fields["floor_sec"] = self.floor_sec * factor
        fields["name"] = name or f"{self.name}x{factor:g}"
        return TimeoutPolicy(**fields)

    # -- resolution ------------------------------------------------------
    def base_for(self, tools: Any, tool_name: str) -> float:
        """Steps 1–2: the per-tool value with the floor applied."""
        if tool_name in self.tools_sec:
            per_tool = self.tools_sec[tool_name]
        else:
            declared = getattr(tools, "declared_timeouts", None)
            value = declared.get(tool_name) if isinstance(declared, Mapping) else None
            per_tool = float(value) if value is not None else self.default_sec
        return max(self.floor_sec, per_tool) if self.floor_sec is not None else per_tool

    def timeout_for(
        self,
        tools: Any,
        tool_name: str,
        tool_args: Mapping[str, Any] | None = None,
        *,
        remaining_sec: float | None = _UNSET,
    ) -> float:
        """Seconds THIS tool may run with THESE arguments on THIS registry (see the class
        docstring).

        ``remaining_sec`` is the time left before the inherited deadline; by
        default it is read from :func:`deadline_remaining`.
        """
        base = self.base_for(tools, tool_name)
        overridden = self._override_sec(base, tool_name, tool_args)
        if overridden is not None:
            return overridden
        if tool_name in self.clamp_tools:
            rem = deadline_remaining() if remaining_sec is _UNSET else remaining_sec
            return self.clamp(base, rem)
        return base

    def _override_sec(
        self, base: float, tool_name: str, tool_args: Mapping[str, Any] | None
    ) -> float | None:
        """Step 3: the argument override, or ``None`` when it does not apply to this call."""
        if tool_name not in self.override_tools:
            return None
        override = _override_arg(tool_args)
        if isinstance(override, int) and not isinstance(override, bool) and override > 0:
            return (
                min(max(base, float(override)), self.override_ceiling_sec)
                + self.settlement_margin_sec
            )
        return None

    def default_base_sec(self) -> float:
        """Steps 1–2 for a tool neither in the table nor declared by the registry."""
        floor = self.floor_sec
        return max(floor, self.default_sec) if floor is not None else self.default_sec

    def reads_args(self, tool_name: str) -> bool:
        """Whether a call's arguments can change this tool's timeout (step 3's tools only)."""
        return tool_name in self.override_tools

    def reads_clock(
        self, tools: Any, tool_name: str, tool_args: Mapping[str, Any] | None = None
    ) -> bool:
        """Whether step 4 (the deadline clamp) applies to this call: its timeout depends on the
        time left."""
        if tool_name not in self.clamp_tools:
            return False
        return self._override_sec(self.base_for(tools, tool_name), tool_name, tool_args) is None

    def clamp(self, base_sec: float, remaining_sec: float | None) -> float:
        """Step 4 for one call: ``base_sec`` clamped to the time left minus
        ``clamp_reserve_sec``."""
        if remaining_sec is None or remaining_sec <= 0:
            return base_sec
        window = remaining_sec - self.clamp_reserve_sec
        if window >= base_sec:
            return base_sec
        return float(math.floor(max(1.0, min(base_sec, window)) + CLAMP_JITTER_SEC))

    def clamp_array(self, base_sec: np.ndarray, remaining_sec: np.ndarray) -> np.ndarray:
        """:meth:`clamp` element-wise; a NaN in ``remaining_sec`` stands for ``None`` (no
        deadline)."""
        base = np.asarray(base_sec, dtype=float)
        rem = np.asarray(remaining_sec, dtype=float)
        window = rem - self.clamp_reserve_sec
        # NaN compares False everywhere (silently), so "no deadline" keeps the base like rem <= 0
        # does.
        cut = (rem > 0) & ~(window >= base)
        clamped = np.floor(np.maximum(1.0, np.minimum(base, window)) + CLAMP_JITTER_SEC)
        return np.where(cut, clamped, base)

    @staticmethod
    def args_key(tool_args: Mapping[str, Any] | None) -> tuple[Any, ...]:
        """The part of a call's arguments :meth:`timeout_for` reads: calls of one tool with equal
        keys
        resolve to the same timeout (replay engines resolve once per distinct key)."""
        value = _override_arg(tool_args)
        try:
            hash(value)
        except TypeError:
            value = repr(value)
        return (type(value).__name__, value)

    # -- serialisation ---------------------------------------------------
    def _fields(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "default_sec": self.default_sec,
            "tools_sec": dict(self.tools_sec),
            "floor_sec": self.floor_sec,
            "override_tools": list(self.override_tools),
            "override_ceiling_sec": self.override_ceiling_sec,
            "settlement_margin_sec": self.settlement_margin_sec,
            "clamp_tools": list(self.clamp_tools),
            "clamp_reserve_sec": self.clamp_reserve_sec,
        }

    def to_dict(self) -> dict[str, Any]:
        """A plain dict (JSON/TOML-ready); an unset ``floor_sec`` is omitted."""
        fields = self._fields()
        if fields["floor_sec"] is None:
            del fields["floor_sec"]
        return fields

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, where: str = "policy") -> TimeoutPolicy:
        """Build from :meth:`to_dict` output; unknown keys are errors naming ``where``."""
        if not isinstance(data, Mapping):
            raise PolicyError(where, f"expected a table, got {data!r}")
        known = set(cls()._fields())
        unknown = sorted(set(data) - known)
        if unknown:
            raise PolicyError(
                where, f"unknown field(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}"
            )
        try:
            return cls(**dict(data))
        except PolicyError as exc:
            raise exc.within(where) from None
