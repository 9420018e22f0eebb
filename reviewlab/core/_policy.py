"""The policy: one frozen value whose parts every engine, executor and command reads by name.

A :class:`Policy` holds ``timeouts`` (a :class:`~reviewlab.core._timeouts.TimeoutPolicy` or any
custom rule with ``timeout_for``), ``narrowing``, ``idle_sec`` (per tool), ``hedges`` (per
tool), ``breaker``, the ``idempotent_tools`` a hedge may run twice, a ``name``, and the
``tool_kinds`` (read-only or side-effecting, :mod:`reviewlab.core._kinds`) the tuner obeys. Nothing
wraps it and nothing strips it: a consumer that cannot honour a part refuses it by name
(:meth:`Policy.refuse`). :meth:`Policy.of` is the one conversion from what callers passed
before (a bare timeout rule, a separate narrowing). :func:`resolve_bound` is the bound of one
call (docs/semantics.md, "The bound").
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import tomli_w

from reviewlab.core._atomic import write_text_atomic
from reviewlab.core._breaker import BreakerRule
from reviewlab.core._caps import TYPESCRIPT_SDK_TIMEOUT_SEC, check_cap_rule
from reviewlab.core._deadline import deadline_remaining
from reviewlab.core._display import RichDisplay
from reviewlab.core._errors import ParameterError
from reviewlab.core._hedge import HedgeRule
from reviewlab.core._kinds import DEFAULT_TOOL_KINDS, kind_of, kinds_table
from reviewlab.core._learned import LearnedTimeouts
from reviewlab.core._narrowing import (
    Bound,
    Narrowing,
    PolicyError,
    check_seconds,
)
from reviewlab.core._policy_document import IDEMPOTENT_TOOLS, document_of, parts_of
from reviewlab.core._rules import SupportsTimeoutFor, timeout_at
from reviewlab.core._tables import hedge_table, idle_table, task_table, tool_list
from reviewlab.core._timeouts import TimeoutPolicy
from reviewlab.core._vocab import CapRule, TaskAction, ToolKind

PRE_FIX_LABEL = "pre-fix (unbounded)"
"""The one spelling of the pre-fix policy's label (:attr:`Policy.label`)."""

POLICY_PARTS = ("timeouts", "narrowing", "idle_sec", "hedges", "breaker", "cap_rule", "tasks")
"""The parts an engine must honour or refuse by name (the conformance suite walks them)."""

_UNSET: Any = object()


@dataclass(frozen=True)
class Policy(RichDisplay, display="policy"):
    """A timeout policy: every part an engine reads, by name (docs/semantics.md, "The policy").

    * ``timeouts``: the per-tool timeout rule (default :meth:`TimeoutPolicy.ouroboros`).
    * ``narrowing``: how the inherited deadline narrows it (default ``inherit``).
    * ``idle_sec``: tool -> seconds without progress after which a call is abandoned.
    * ``hedges``: tool -> :class:`~reviewlab.core._hedge.HedgeRule` (idempotent tools only).
    * ``breaker``: a :class:`~reviewlab.core._breaker.BreakerRule`, or ``None``.
    * ``idempotent_tools``: the tools a hedge may run twice.
    * ``name``: the label in tables (empty: derived from the parts, :attr:`label`).
    * ``tool_kinds``: tool -> ``read_only`` | ``side_effect``, laid over
      :data:`~reviewlab.core._kinds.DEFAULT_TOOL_KINDS` (no engine reads it; the tuner does).
    * ``cap_rule``: how the bound holds while a call reports progress (``hard``: a true total
      cap; ``checked_on_progress``: the TypeScript SDK's, :mod:`reviewlab.core._caps`).
    * ``tasks``: tool -> ``cancel`` | ``detach``: the tools an MCP host calls as tasks, and
      what it does with one at its bound (docs/mcp.md, "Tasks").
    """

    timeouts: Any = field(default_factory=TimeoutPolicy.ouroboros)
    narrowing: Narrowing = field(default_factory=Narrowing)
    idle_sec: Mapping[str, float] = field(default_factory=dict)
    hedges: Mapping[str, HedgeRule] = field(default_factory=dict)
    breaker: BreakerRule | None = None
    idempotent_tools: tuple[str, ...] = IDEMPOTENT_TOOLS
    name: str = ""
    tool_kinds: Mapping[str, ToolKind] = field(default_factory=lambda: DEFAULT_TOOL_KINDS)
    cap_rule: CapRule = "hard"
    tasks: Mapping[str, TaskAction] = field(default_factory=dict)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        if isinstance(self.timeouts, Policy):
            raise PolicyError("timeouts", "expected a timeout rule, got a Policy (use Policy.of)")
        if not callable(getattr(self.timeouts, "timeout_for", None)):
            raise PolicyError(
                "timeouts",
                "expected a TimeoutPolicy or an object with "
                f"timeout_for(tools, tool_name, tool_args=None), got {self.timeouts!r}",
            )
        if not isinstance(self.narrowing, Narrowing):
            raise PolicyError("narrowing", f"expected a Narrowing, got {self.narrowing!r}")
        set_(self, "idle_sec", idle_table(self.idle_sec))
        set_(self, "idempotent_tools", tool_list("idempotent_tools", self.idempotent_tools))
        set_(self, "hedges", hedge_table(self.hedges, self.idempotent_tools))
        if isinstance(self.breaker, Mapping):
            set_(self, "breaker", BreakerRule.from_dict(self.breaker, where="breaker"))
        elif self.breaker is not None and not isinstance(self.breaker, BreakerRule):
            raise PolicyError("breaker", f"expected a breaker rule (a table), got {self.breaker!r}")
        if not isinstance(self.name, str):
            raise PolicyError("name", f"expected a string, got {self.name!r}")
        set_(self, "tool_kinds", kinds_table(self.tool_kinds))
        try:
            check_cap_rule(self.cap_rule)
        except ParameterError as exc:
            raise PolicyError(exc.parameter, exc.reason) from None
        set_(self, "tasks", task_table(self.tasks))

    def __hash__(self) -> int:
        timeouts = self.timeouts
        if isinstance(timeouts, TimeoutPolicy):
            key: Any = hash(timeouts)
        else:  # a learned rule is a value; any other rule is itself
            key = hash(timeouts) if isinstance(timeouts, LearnedTimeouts) else id(timeouts)
        return hash(
            (
                key,
                self.narrowing,
                tuple(self.idle_sec.items()),
                tuple(self.hedges.items()),
                self.breaker,
                self.idempotent_tools,
                self.name,
                tuple(self.tool_kinds.items()),
                self.cap_rule,
                tuple(self.tasks.items()),
            )
        )

    # -- the one conversion ----------------------------------------------
    @classmethod
    def of(
        cls, policy: Policy | SupportsTimeoutFor | None = None, narrowing: Narrowing | None = None
    ) -> Policy:
        """``policy`` as a :class:`Policy`: itself, or a bare timeout rule (``None``: ouroboros)
        with ``narrowing``. A separate ``narrowing`` that contradicts a Policy's is refused."""
        if isinstance(policy, Policy):
            if narrowing is not None and narrowing != policy.narrowing:
                raise PolicyError(
                    "narrowing",
                    f"given twice ({narrowing.label} and the policy's "
                    f"{policy.narrowing.label}); pass policy.replace(narrowing=...)",
                )
            return policy
        if narrowing is not None and not isinstance(narrowing, Narrowing):
            raise PolicyError("narrowing", f"expected a Narrowing, got {narrowing!r}")
        timeouts = TimeoutPolicy.ouroboros() if policy is None else policy
        return cls(timeouts=timeouts, narrowing=narrowing or Narrowing())

    def replace(self, **parts: Any) -> Policy:
        """A copy with some parts replaced (unknown names are errors)."""
        known = {f.name for f in fields(self)}
        unknown = sorted(set(parts) - known)
        if unknown:
            raise PolicyError(
                ", ".join(unknown), f"unknown policy part(s); known: {', '.join(sorted(known))}"
            )
        return replace(self, **parts)

    # -- presets ---------------------------------------------------------
    @classmethod
    def ouroboros(cls) -> Policy:
        """The reference system's resolution (:meth:`TimeoutPolicy.ouroboros`), ``inherit``."""
        return cls(timeouts=TimeoutPolicy.ouroboros())

    @classmethod
    def unbounded(cls) -> Policy:
        """The pre-fix behaviour: no call is bounded (:meth:`Narrowing.unbounded`)."""
        return cls(timeouts=TimeoutPolicy.ouroboros(), narrowing=Narrowing.unbounded())

    @classmethod
    def uniform(cls, seconds: float) -> Policy:
        """Every tool gets ``seconds`` (:meth:`TimeoutPolicy.uniform`), ``inherit``."""
        return cls(timeouts=TimeoutPolicy.uniform(seconds))

    @classmethod
    def typescript_sdk(
        cls,
        tools: Iterable[str],
        *,
        timeout_sec: float = TYPESCRIPT_SDK_TIMEOUT_SEC,
        max_total_sec: float | None = None,
    ) -> Policy:
        """The MCP TypeScript SDK's request clocks for ``tools`` (:mod:`reviewlab.core._caps`):
        ``timeout`` reset on progress, ``maxTotalTimeout`` (``max_total_sec``; ``None``: the
        timeout) checked only when progress arrives; no inherited deadline (narrowing
        ``none``)."""
        cap = timeout_sec if max_total_sec is None else max_total_sec
        return cls(
            timeouts=TimeoutPolicy.uniform(cap),
            narrowing=Narrowing("none"),
            idle_sec=dict.fromkeys(sorted(set(tools)), timeout_sec),
            cap_rule="checked_on_progress",
            name=f"mcp-typescript-sdk({timeout_sec:g}s reset on progress, cap {cap:g}s)",
        )

    # -- building --------------------------------------------------------
    def with_tool_timeouts(self, **tools_sec: float) -> Policy:
        """A copy whose ``timeouts`` give these tools exactly these seconds
        (:meth:`TimeoutPolicy.with_tool_timeouts`; the timeouts must be a TimeoutPolicy)."""
        if not isinstance(self.timeouts, TimeoutPolicy):
            raise PolicyError(
                "timeouts", f"a custom rule ({type(self.timeouts).__name__}) has no per-tool table"
            )
        return self.replace(timeouts=self.timeouts.with_tool_timeouts(None, **tools_sec))

    def with_idle(self, **idle_sec: float) -> Policy:
        """A copy with idle timeouts for some tools (seconds without progress)."""
        return self.replace(idle_sec={**self.idle_sec, **idle_sec})

    def with_tasks(self, **actions: TaskAction) -> Policy:
        """A copy that calls some tools as MCP tasks, each ``cancel`` or ``detach`` at its
        bound."""
        return self.replace(tasks={**self.tasks, **actions})

    def with_idempotent(self, *tools: str) -> Policy:
        """A copy in which ``tools`` are marked idempotent too (so they may be hedged)."""
        return self.replace(idempotent_tools=(*self.idempotent_tools, *tools))

    def with_kinds(self, **kinds: ToolKind) -> Policy:
        """A copy in which some tools have the given kinds (``read_only`` or ``side_effect``)."""
        return self.replace(tool_kinds={**self.tool_kinds, **kinds})

    def kind_of(self, tool_name: str) -> str:
        """``tool_name``'s kind: ``read_only``, ``side_effect``, or ``unknown`` (not in the
        table; the tuner treats it as side-effecting)."""
        return kind_of(self.tool_kinds, tool_name)

    def with_hedge(self, tool: str, *, after_sec: float, max_share: float = 0.05) -> Policy:
        """A copy that hedges ``tool`` after ``after_sec`` on at most ``max_share`` of its
        calls; ``tool`` must be idempotent (:meth:`with_idempotent`)."""
        return self.replace(hedges={**self.hedges, tool: HedgeRule(after_sec, max_share)})

    def with_breaker(
        self,
        consecutive: int = 3,
        *,
        window: int | None = None,
        cooldown_rounds: int | None = _UNSET,
        cooldown_sec: float | None = None,
        scope: str = "episode",
    ) -> Policy:
        """A copy with a breaker; ``cooldown_rounds`` defaults to 2, or to ``None`` when
        ``cooldown_sec`` is given."""
        if cooldown_rounds is _UNSET:
            cooldown_rounds = None if cooldown_sec is not None else 2
        try:
            rule = BreakerRule(consecutive, window, cooldown_rounds, cooldown_sec, scope)  # type: ignore[arg-type]
        except PolicyError as exc:
            raise exc.within("breaker") from None
        return self.replace(breaker=rule)

    # -- reading ---------------------------------------------------------
    @property
    def label(self) -> str:
        """The one label of this policy in tables, charts and the CLI."""
        if self.narrowing.mode == "unbounded":
            return PRE_FIX_LABEL
        if self.name:
            return self.name
        base = getattr(self.timeouts, "name", None) or type(self.timeouts).__name__
        parts = [str(base)]
        if self.narrowing != Narrowing():
            parts.append(self.narrowing.label)
        if self.idle_sec:
            parts.append("idle(" + ",".join(f"{t}={s:g}s" for t, s in self.idle_sec.items()) + ")")
        for tool, rule in self.hedges.items():
            parts.append(f"hedge({tool}@{rule.after_sec:g}s,{rule.max_share:g})")
        if self.breaker is not None:
            parts.append(f"breaker({self.breaker.label})")
        if self.cap_rule != "hard":
            parts.append(f"cap({self.cap_rule})")
        if self.tasks:
            parts.append("tasks(" + ",".join(f"{t}={a}" for t, a in self.tasks.items()) + ")")
        return "+".join(parts)

    @property
    def parts_in_use(self) -> tuple[str, ...]:
        """The optional parts this policy sets (``idle_sec``, ``hedges``, ``breaker``,
        ``cap_rule`` other than ``hard``)."""
        return tuple(
            part
            for part, on in (
                ("idle_sec", bool(self.idle_sec)),
                ("hedges", bool(self.hedges)),
                ("breaker", self.breaker is not None),
                ("cap_rule", self.cap_rule != "hard"),
                ("tasks", bool(self.tasks)),
            )
            if on
        )

    def refuse(self, consumer: str, *parts: str) -> None:
        """A :class:`PolicyError` naming ``consumer`` and the first of ``parts`` this policy
        sets: the way a consumer that cannot honour a part says so instead of ignoring it."""
        for part in parts:
            if part in self.parts_in_use:
                raise PolicyError(
                    consumer,
                    f"the policy's {part} cannot be honoured here "
                    f"(policy {self.label!r}); {_WHERE.get(part, '')}".rstrip("; "),
                )

    def idle_for(self, tool_name: str) -> float | None:
        """The idle timeout of ``tool_name``'s calls, or ``None``."""
        return self.idle_sec.get(tool_name)

    def timeout_for(
        self,
        tools: Any,
        tool_name: str,
        tool_args: Mapping[str, Any] | None = None,
        *,
        remaining_sec: float | None = _UNSET,
    ) -> float:
        """The ``timeouts`` part's answer for one call (before narrowing)."""
        remaining = deadline_remaining() if remaining_sec is _UNSET else remaining_sec
        return timeout_at(self.timeouts, tools, tool_name, tool_args, remaining)

    def bound(
        self,
        tools: Any,
        tool_name: str,
        tool_args: Mapping[str, Any] | None = None,
        *,
        remaining_sec: float | None = _UNSET,
    ) -> Bound:
        """The bound of one dispatched call (:func:`resolve_bound`)."""
        return resolve_bound(self, tools, tool_name, tool_args, remaining_sec=remaining_sec)

    # -- serialisation ---------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The TOML document: ``[policy]``, ``[narrowing]``, ``[idle]``, ``[hedges.TOOL]``,
        ``[breaker]``, ``[kinds]`` (parts at their "off" value omitted; ``[kinds]`` lists only
        the entries that differ from the defaults: ``core._policy_document``)."""
        return document_of(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, where: str = "policy file") -> Policy:
        """A policy from :meth:`to_dict`'s document; a document with none of the tables is read
        as a bare ``[policy]`` table. Errors name ``where`` and the field."""
        parts = parts_of(data, where=where)
        try:
            return cls(**parts)
        except PolicyError as exc:
            raise PolicyError(where, str(exc)) from None

    def to_toml(self) -> str:
        """The policy as a TOML document (:meth:`to_dict`)."""
        return tomli_w.dumps(self.to_dict())

    @classmethod
    def from_toml(cls, text: str, *, where: str = "policy TOML") -> Policy:
        """A policy from TOML text; an error names ``where`` and the field."""
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise PolicyError(where, f"not valid TOML: {exc}") from None
        return cls.from_dict(data, where=where)

    @classmethod
    def load(cls, path: str | Path) -> Policy:
        """Read a TOML policy file; every error names the file."""
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise PolicyError(str(path), "no such policy file") from None
        except UnicodeDecodeError as exc:
            raise PolicyError(
                str(path), f"not UTF-8 text ({exc.reason} at byte {exc.start})"
            ) from None
        return cls.from_toml(text, where=str(path))

    @classmethod
    def parse(cls, spec: str | os.PathLike[str]) -> Policy:
        """The policy ``spec`` names: ``ouroboros | unbounded | uniform:SEC | PRESET | FILE.toml``
        (:mod:`reviewlab.core._presets`, or :meth:`load`); else a ``ValueError`` naming it."""
        from reviewlab.core._presets import named_parts, unknown_spec

        if isinstance(spec, os.PathLike):
            return cls.load(Path(spec))
        text = str(spec).strip()
        parts = named_parts(text)
        if parts is not None:
            return cls(**parts)
        if text.endswith(".toml") or Path(text).is_file():
            return cls.load(text)
        raise unknown_spec(text)

    def save(self, path: str | Path) -> None:
        """Write the policy as a TOML file that :meth:`load` reads back (atomically)."""
        write_text_atomic(path, self.to_toml())


_WHERE = {
    "breaker": "a breaker is replayed by reviewlab.replay (the rewrite fixed point)",
    "hedges": "hedges need an engine that starts second attempts",
    "idle_sec": "idle timeouts need progress reports",
    "tasks": "tasks run live through an MCP server (MCPServer); no replay engine replays them",
    "cap_rule": "the twin replays another SDK's cap rule; reviewlab's executors and the other "
    "engines hold the bound as a true total cap",
}


def resolve_bound(
    policy: Policy | SupportsTimeoutFor | None,
    tools: Any,
    tool_name: str,
    tool_args: Mapping[str, Any] | None = None,
    *,
    narrowing: Narrowing | None = None,
    remaining_sec: float | None = _UNSET,
) -> Bound:
    """The bound of one dispatched call: the ``timeouts`` part resolved once for THIS registry
    and arguments, narrowed by the time left before the inherited deadline.

    ``policy`` is anything :meth:`Policy.of` takes (``narrowing`` with a bare rule).
    ``remaining_sec`` defaults to :func:`deadline_remaining` on the current clock; the twin
    passes the remaining time on its virtual clock.
    """
    spine = (
        policy if isinstance(policy, Policy) and narrowing is None else Policy.of(policy, narrowing)
    )
    remaining = deadline_remaining() if remaining_sec is _UNSET else remaining_sec
    if spine.narrowing.mode == "unbounded":
        return Bound(None, "unbounded", None, remaining)
    raw = timeout_at(spine.timeouts, tools, tool_name, tool_args, remaining)
    tool_sec = check_seconds(f"timeout_for({tool_name!r})", raw, allow_zero=True)
    return spine.narrowing.narrow(tool_sec, remaining)
